"""probability=True on Dask input against the in-memory estimate (issues 25 and 26).

Run from the repository root: ``python -m benchmarks.run_dask_probability --only CASE[,CASE]``
(each case is measured in this process and merged into the results; ``--list`` names the
cases).  Writes ``benchmarks/results/dask_probability.md`` and ``dask_probability.json``.

For each case (an estimator, n, the chunking, the path): the in-memory fit with
``probability=True`` at the default tol, the same fit on a dask array of the same rows
(synchronous scheduler: every pass in this process, so CPU time is the whole cost), and the
in-memory fit whose weighted refits are solved to the estimator's own tol
(``REFIT_TOL_FACTOR`` = 1: the estimate the loose refits approximate).  Reported: the largest
and the mean absolute difference of ``predict_proba`` on the training rows, Dask against in
memory and each against the accurately refitted estimate; the chosen C factors; whether the
argmax of the Dask probabilities is ``predict``; CPU time of each fit.  The machine is shared
with other work: CPU times are the measure, and they are inflated by the load.
"""

import argparse
import json
import pathlib
import time
import warnings

import numpy as np

from benchmarks.harness import git_commit, markdown_table, write_json

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MD_PATH, JSON_PATH = RESULTS / "dask_probability.md", RESULTS / "dask_probability.json"
CASES = {
    f"{short}-{n}-{path}-g{grid}": dict(name=name, n=n, chunks=chunks, path=path, grid=grid)
    for short, name in (("ang", "AngleBasedMSVM"), ("rei", "ReinforcedMSVM"),
                        ("tgt", "TargetedLocalMSVM"))
    for n, chunks, path, grid in ((120, 4, "linear", 4), (120, 4, "linear", 8),
                                  (20_000, 4, "linear", 4), (20_000, 4, "nystroem", 4))
}
PATHS = {"linear": dict(kernel="linear"),
         "nystroem": dict(kernel="rbf", kernel_approximation="nystroem", n_components=100,
                          random_state=0)}


def _fit(make, X, y):
    start = time.process_time()
    est = make().fit(X, y)
    return est, time.process_time() - start


def run_case(case):
    """The measurements of one case (a dict)."""
    import dask
    import dask.array as da
    from sklearn.datasets import make_classification

    import msvm
    import msvm._probability as probability
    X, y = make_classification(case["n"], 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=1)
    params = dict(probability=True, probability_grid=case["grid"], **PATHS[case["path"]])
    if case["name"] == "TargetedLocalMSVM":
        params["n_grid"] = 4

    def make():
        return getattr(msvm, case["name"])(**params)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref, cpu_mem = _fit(make, X, y)
        Xd = da.from_array(X, chunks=(-(-case["n"] // case["chunks"]), X.shape[1]))
        with dask.config.set(scheduler="synchronous"):
            est, cpu_dask = _fit(make, Xd, y)
            P = est.predict_proba(Xd).compute()
            # the chunked chains refitted at every level (before round 10)
            probability.SETTLED_CHAINS = False
            try:
                every, cpu_every = _fit(make, Xd, y)
                P_every = every.predict_proba(Xd).compute()
            finally:
                probability.SETTLED_CHAINS = True
        keep = probability.REFIT_TOL_FACTOR
        probability.REFIT_TOL_FACTOR = 1.0
        try:
            exact, cpu_exact = _fit(make, X, y)
        finally:
            probability.REFIT_TOL_FACTOR = keep
    R, E = ref.predict_proba(X), exact.predict_proba(X)
    return dict(
        case, max_dask_mem=float(np.abs(P - R).max()), mean_dask_mem=float(np.abs(P - R).mean()),
        max_dask_exact=float(np.abs(P - E).max()), max_mem_exact=float(np.abs(R - E).max()),
        factor_mem=ref.probability_C_factor_, factor_dask=est.probability_C_factor_,
        factor_exact=exact.probability_C_factor_,
        argmax_is_predict=bool(np.array_equal(est.classes_[P.argmax(axis=1)],
                                              est.predict(X))),
        cpu_mem=cpu_mem, cpu_dask=cpu_dask, cpu_exact=cpu_exact,
        fits=int(est.n_probability_fits_), fits_every=int(every.n_probability_fits_),
        cpu_every=cpu_every, max_settled_every=float(np.abs(P - P_every).max()))


def render(results):
    """The Markdown report of the merged results."""
    header = ["case", "estimator", "n", "chunks", "path", "grid", "max |Dask - mem|",
              "mean", "max |Dask - exact|", "max |mem - exact|", "C factor mem/Dask/exact",
              "argmax = predict", "CPU mem (s)", "CPU Dask (s)", "CPU Dask / mem",
              "Dask fits (every level)", "CPU Dask, every level (s)",
              "max |settled - every level|"]
    rows = [[key, r["name"], r["n"], r["chunks"], r["path"], r["grid"],
             f"{r['max_dask_mem']:.3f}", f"{r['mean_dask_mem']:.4f}",
             f"{r['max_dask_exact']:.3f}", f"{r['max_mem_exact']:.3f}",
             f"{r['factor_mem']:g}/{r['factor_dask']:g}/{r['factor_exact']:g}",
             r["argmax_is_predict"], f"{r['cpu_mem']:.2f}", f"{r['cpu_dask']:.1f}",
             f"{r['cpu_dask'] / max(r['cpu_mem'], 1e-9):.0f}x", *_settled_columns(r)]
            for key, r in sorted(results.items())]
    return "\n".join([
        "# probability=True on Dask input against the in-memory estimate",
        "",
        "`python -m benchmarks.run_dask_probability --only CASE` (benchmarks/"
        "run_dask_probability.py). make_classification(n, 5 features, 4 informative, "
        "3 classes, random_state=1), default tol (1e-3, the weighted refits at 0.3), "
        "TargetedLocalMSVM with n_grid=4; Dask: rows in equal chunks, synchronous scheduler. "
        "'exact': the in-memory estimate with the weighted refits solved to tol "
        "(REFIT_TOL_FACTOR = 1). Differences are of predict_proba on the training rows. "
        "CPU times on a shared machine (load 10-20 during the runs): the ratios are "
        "indicative.",
        "",
        "The chunked chains stop where their fit is settled since round 10 "
        "(msvm._dask_probability.settled: no variable of the up-weighted class at a bound "
        "that grows with its weight, and the duality gap plus the growth of that class's "
        "loss within tol down to the smallest level), as the in-memory chains do; the last "
        "three columns compare the same run with every level refitted (rows without them "
        "predate it).",
        "",
        markdown_table(header, rows),
        ""])


def _settled_columns(r):
    """Fits (settled / every level), CPU with every level refitted, and the largest
    difference of the probabilities: blank for results from before they were measured."""
    if "fits_every" not in r:
        return ["", "", ""]
    return [f"{r['fits']} / {r['fits_every']}", f"{r['cpu_every']:.1f}",
            f"{r['max_settled_every']:.4f}"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated cases")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return
    for key in filter(None, args.only.split(",")):
        result = dict(run_case(CASES[key]), git=git_commit())
        print(key, json.dumps(result), flush=True)
        # read again: another run may have merged its cases meanwhile
        results = json.loads(JSON_PATH.read_text())["results"] if JSON_PATH.exists() else {}
        results[key] = result
        write_json(JSON_PATH, {"results": results})
        MD_PATH.write_text(render(results))


if __name__ == "__main__":
    main()
