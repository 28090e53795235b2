"""The cluster (DC-SVM) start of the exact-kernel per-class-hinge fits: with and without.

    python -m benchmarks.run_cluster_start                          # pendigits + 10k-40k
    python -m benchmarks.run_cluster_start --scaling 10000 20000 40000 80000
    python -m benchmarks.run_cluster_start --render-only

(from the repository root)

Every fit twice in one process, once with the plan's cluster start forced off and once on
(``_plan_overrides``, msvm/_cluster_start.py), and SVC in the same run, one BLAS thread, CPU
time (time.process_time):

- make_classification (d = 20, k = 5, n_informative = 10, standardized), ReinforcedMSVM,
  RBF C = 1 (gamma 'scale'), SVC at the same gamma; clusters of 4,000 samples (the default);
- pendigits (msvm.datasets.load_pendigits, stratified 70/30, StandardScaler), RBF C = 10,
  gamma = 1/16: ReinforcedMSVM, Lee-Lin-Wahba (reinforcement=0), AngleBasedMSVM; clusters
  of 2,000 samples (4 clusters; the default size would make 2).

For each fit: CPU time, epochs (n_iter_), SMO steps and kernel rows computed by the global
solve (its verbose report), objective_, duality_gap_ and converged_.  The machine may be
shared with other work: read CPU times and the ratios of one run.  Results go to
benchmarks/results/cluster_start.md and .json (rewritten after every size).
"""

import argparse
import contextlib
import io
import json
import os
import re
import time
import warnings

import numpy as np

from benchmarks.harness import RESULTS, git_commit, machine_info, markdown_table, write_json

SMO_LINE = re.compile(r"\[msvm\] smo: steps (\d+), .*kernel rows computed (\d+)")
# measured once while building the start (not rerun by this script): CPU time of one fit each,
# one BLAS thread, the machine shared (load 9-14 on 2 cores)
TRIED = """## Tried on the way (not rerun by this script)

- Where the time goes (make_classification, ReinforcedMSVM, C = 1, cProfile in CPU time):
  n = 20,000: k-means 0.09 s, 5 cluster solves 1.26 s, the start's scores 1.2 s (float32),
  global solve 3.97 s (the plain fit: 5.97 s); n = 40,000: k-means 0.12 s, 10 cluster solves
  3.1 s, scores 4.5 s (float32), global solve 22.8 s (plain 30.0 s, 125,024 kernel rows;
  from the start 91,703).
- Why the global solve saves only a third: its augmented-Lagrangian rounds, n = 10,000
  (SMO steps per round, plain -> started): 43,335 -> 17,529 in the first round (tolerance
  0.1), then 8,766 -> 9,018, 8,238 -> 9,484 and 44 -> 100.  The start replaces the first
  round; the later rounds (violation 1e-2 to 1e-3) cost the same from either point.  With
  gamma = 1/20 on 20 standardized features the RBF kernel couples the clusters strongly
  (typical entries exp(-2)), so the concatenation is a coarse point of the global problem.
- The scores of the start (K U over its support, 80 % of the samples at C = 1) added row by
  row through the core's score update: 1.2 s at n = 10,000, against 0.27 s as blocked BLAS
  products (kept, in float32 blocks where the cache is float32, summed in float64; float64
  blocks cost 1.5x).
- Cluster solve tolerance 1e-3 / 1e-2 (kept) / 1e-1 at n = 20,000: global SMO steps 68,611 /
  69,606 / 66,498, the cluster solves 1.08-1.3 s: no gain either way.
- Cluster size at n = 20,000 (2,000 / 4,000 (kept) / 10,000 samples): 6.80 / 6.48 / 7.14 s
  against 5.97 s plain; 3-4 epochs each.
- Scaling the concatenated start by the t in [0, 1] minimizing the dual objective along it
  (a cheap line search on the scores): the minimizer was t >= 1 in every case (the start
  undershoots, it does not overshoot), so it was dropped.
- Pendigits (the table above): 2-15 % fewer epochs, never less CPU time: the long tail of
  these fits (57-135 epochs) is not spent where the start helps.
- Earlier runs at n = 40,000 (same code but float64 blocks for the scores): 28.19 and
  29.55 s started against 29.96-30.40 s plain: the start breaks even at 40,000, and the plan
  makes it from 60,000 samples (between that and the 0.73x measured at 80,000).
"""

MD = os.path.join(RESULTS, "cluster_start.md")
JSON = os.path.join(RESULTS, "cluster_start.json")


def _cpu(fn):
    t = time.process_time()
    fn()
    return time.process_time() - t


def _fit(est, X, y, start, cluster_size=None):
    """One fit with the cluster start forced on or off; its CPU time and counters."""
    est._plan_overrides = {"cluster_start": start}
    if cluster_size:
        est._plan_overrides["cluster_size"] = cluster_size
    buf = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(buf):
        warnings.simplefilter("always")
        cpu = _cpu(lambda: est.fit(X, y))
    counts = [m.groups() for m in SMO_LINE.finditer(buf.getvalue())]
    return {"start": start, "cpu_s": cpu, "epochs": int(est.n_iter_),
            "smo_steps": sum(int(c[0]) for c in counts),
            "rows_computed": sum(int(c[1]) for c in counts),
            "objective": float(est.objective_), "duality_gap": float(est.duality_gap_),
            "converged": bool(est.converged_), "clusters": est.solver_plan_.clusters,
            "gamma": float(est.gamma_),
            "warnings": len(caught)}


def _pair(make, X, y, cluster_size=None):
    off = _fit(make(), X, y, "off")
    on = _fit(make(), X, y, "on", cluster_size)
    on["x_off"] = on["cpu_s"] / off["cpu_s"]
    on["objective_rel_diff"] = abs(on["objective"] - off["objective"]) / abs(off["objective"])
    return off, on


def scaling(n):
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    from msvm import ReinforcedMSVM
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5,
                               random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    off, on = _pair(lambda: ReinforcedMSVM(C=1.0, random_state=0, verbose=2), X, y)
    svc = _cpu(lambda: SVC(C=1.0, gamma=off["gamma"]).fit(X, y))
    for r in (off, on):
        r.update(n=n, svc_s=svc, x_svc=r["cpu_s"] / svc)
    print(n, off, on, flush=True)
    return {"n": n, "svc_s": svc, "off": off, "on": on}


def pendigits():
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    from msvm import AngleBasedMSVM, ReinforcedMSVM
    from msvm.datasets import load_pendigits
    X, y = load_pendigits(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    Xtr = StandardScaler().fit(Xtr).transform(Xtr)
    svc = min(_cpu(lambda: SVC(C=10, gamma=1 / 16).fit(Xtr, ytr)) for _ in range(2))
    models = {
        "ReinforcedMSVM": lambda: ReinforcedMSVM(C=10, gamma=1 / 16, random_state=0,
                                                 verbose=2),
        "LLW (reinforcement=0)": lambda: ReinforcedMSVM(reinforcement=0.0, C=10,
                                                        gamma=1 / 16, random_state=0,
                                                        verbose=2),
        "AngleBasedMSVM": lambda: AngleBasedMSVM(C=10, gamma=1 / 16, random_state=0,
                                                 verbose=2),
    }
    rows = []
    for name, make in models.items():
        off, on = _pair(make, Xtr, ytr, cluster_size=2000)
        for r in (off, on):
            r.update(model=name, x_svc=r["cpu_s"] / svc)
        rows += [off, on]
        print(name, off, on, flush=True)
    return {"svc_s": svc, "rows": rows}


def _exponents(sizes):
    if len(sizes) < 2:
        return {}
    ln = np.log([s["n"] for s in sizes])
    fit = lambda v: float(np.polyfit(ln, np.log(v), 1)[0])  # noqa: E731
    return {"off": fit([s["off"]["cpu_s"] for s in sizes]),
            "on": fit([s["on"]["cpu_s"] for s in sizes]),
            "svc": fit([s["svc_s"] for s in sizes])}


def _render(run):
    cols = ["start", "cpu_s", "x_svc", "epochs", "smo_steps", "rows_computed", "clusters",
            "objective", "duality_gap", "converged"]
    fmt = {"cpu_s": "{:.2f}", "x_svc": "{:.2f}", "objective": "{:.6f}",
           "duality_gap": "{:.3g}"}
    cell = lambda r, c: fmt.get(c, "{}").format(r[c])  # noqa: E731
    lines = ["# Cluster (DC-SVM) start of the exact-kernel per-class-hinge fits", "",
             "Generated by `python -m benchmarks.run_cluster_start`.  One process, one BLAS "
             "thread, CPU time (time.process_time); the machine was shared with five other "
             "engineers' work on 2 cores (load average at the start below), so read the "
             "ratios within one run.  `off`: the plain fit from zero; `on`: the same fit "
             "started from its dual solved on k-means clusters (msvm/_cluster_start.py); "
             "the CPU time of `on` includes k-means, the cluster solves and the start's "
             "scores.  SMO steps and kernel rows are the global solve's.", "",
             f"Commit {run['commit']}, load average {run['load']:.1f} at the start.", ""]
    pd = run.get("pendigits")
    if pd:
        lines += [f"## Pendigits (7,694 x 16, k = 10), RBF C = 10, gamma = 1/16, clusters of "
                  f"2,000; SVC {pd['svc_s']:.3f} s", "",
                  markdown_table(["model"] + cols, [[r["model"]] + [cell(r, c) for c in cols]
                                                    for r in pd["rows"]]), ""]
    sizes = run.get("scaling", [])
    if sizes:
        lines += ["## make_classification (d = 20, k = 5, C = 1), ReinforcedMSVM against SVC, "
                  "clusters of 4,000", "",
                  markdown_table(["n", "svc_s"] + cols,
                                 [[s["n"], f"{s['svc_s']:.2f}"] + [cell(s[w], c) for c in cols]
                                  for s in sizes for w in ("off", "on")]), ""]
        ex = _exponents(sizes)
        if ex:
            lines += [f"Fitted exponents (CPU time against n): off {ex['off']:.2f}, on "
                      f"{ex['on']:.2f}, SVC {ex['svc']:.2f}.", ""]
    return "\n".join(lines) + "\n" + TRIED


def _write(run):
    write_json(JSON, run)
    with open(MD, "w") as fh:
        fh.write(_render(run) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scaling", type=int, nargs="*", default=[10000, 20000, 40000])
    parser.add_argument("--no-pendigits", action="store_true")
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the .md from the .json without fitting")
    args = parser.parse_args(argv)
    if args.render_only:
        with open(JSON) as fh:
            _write(json.load(fh))
        return
    from threadpoolctl import threadpool_limits
    run = {"commit": git_commit(), "load": os.getloadavg()[0], "machine": machine_info()}
    with threadpool_limits(1):
        if not args.no_pendigits:
            run["pendigits"] = pendigits()
            _write(run)
        run["scaling"] = []
        for n in args.scaling:
            run["scaling"].append(scaling(n))
            run["exponents"] = _exponents(run["scaling"])
            _write(run)


if __name__ == "__main__":
    main()
