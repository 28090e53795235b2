"""The grouped margin dual's SMO epochs against WestonWatkinsMSVM's (issue 23, round 13).

Run from the repository root:
``python -m benchmarks.run_grouped_smo_cost [--epochs-only | --fits-only] [--repeats 3]``.

Epochs: make_blobs(4,000, 3 features, 3 classes, cluster_std = 2, random_state = 0), RBF
gamma='scale', max_iter = 100 epochs (a ConvergenceWarning, ignored), C = 1e4 and 1e6:
WeightedRobustMSVM(truncation=None) and AdaptiveWeightedSVM with the Newton step's block
products over the samples that take part (msvm._core._smo._sparse_hmul(True), 'sparse') and
over the whole block ('dense', main 05e27d6's), alternating in the same process, best of
``--repeats``; WestonWatkinsMSVM on the same data for scale.  Written to
benchmarks/results/grouped_smo_cost.md / .json.

Fits: the same data at n = 1,000 and 4,000, C = 1e4 and 1e6, default tol and max_iter, both
grouped models, 'sparse' and 'dense' alternating, one fit each, recorded in
benchmarks/results/rbf_large_c.json under the tags 'r13-smo' and 'r13-smo-before' (the
section "Round 13: the grouped SMO's epoch cost" of run_rbf_large_c.py).  CPU time, one BLAS
thread; the machine may be shared: compare within a row.
"""

import argparse
import json
import pathlib
import time
import warnings

from benchmarks.harness import git_commit, markdown_table, write_json
from benchmarks.run_rbf_large_c import _record, measure

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MD_PATH, JSON_PATH = RESULTS / "grouped_smo_cost.md", RESULTS / "grouped_smo_cost.json"
EPOCH_MODELS = ("WeightedRobustMSVM", "AdaptiveWeightedSVM", "WestonWatkinsMSVM")
GROUPED = ("WeightedRobustMSVM", "AdaptiveWeightedSVM")


def _with_products(sparse, run):
    """``run()`` with the SMO's Newton-step products sparse or dense."""
    from msvm._core import _smo
    old = _smo._sparse_hmul(sparse)
    try:
        return run()
    finally:
        _smo._sparse_hmul(old)


def epoch_fit(name, C, n=4000, epochs=100):
    """CPU s, epochs and objective of ``epochs`` SMO epochs of one model."""
    import msvm
    from sklearn.datasets import make_blobs
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits
    X, y = make_blobs(n, 3, centers=3, cluster_std=2.0, random_state=0)
    extra = dict(truncation=None) if name == "WeightedRobustMSVM" else {}
    est = getattr(msvm, name)(kernel="rbf", C=C, max_iter=epochs, **extra)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.process_time()
        est.fit(X, y)
        cpu = time.process_time() - start
    return dict(cpu=cpu, epochs=int(est.n_iter_), objective=float(est.objective_))


def run_epochs(repeats):
    """Best-of-``repeats`` CPU of 100 epochs, per model, C and product."""
    best = {}
    for C in (1e4, 1e6):
        for _ in range(repeats):
            for name in EPOCH_MODELS:
                modes = ("dense", "sparse") if name in GROUPED else ("sparse",)
                for mode in modes:
                    m = _with_products(mode == "sparse", lambda: epoch_fit(name, C))
                    print(C, name, mode, m, flush=True)
                    key = (C, name, mode)
                    if key not in best or m["cpu"] < best[key]["cpu"]:
                        best[key] = m
    return best


def render_epochs(best, commit, repeats):
    """The page: the 100-epoch table."""
    rows = []
    for (C, name, mode), m in sorted(best.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                                    kv[0][2])):
        products = mode if name in GROUPED else "(no Newton step)"
        rows.append([f"{C:g}", name, products, f"{m['cpu']:.2f}", m["epochs"],
                     f"{m['objective']:.10g}"])
    return "\n".join([
        "# The grouped SMO's epoch cost (issue 23, round 13)",
        "",
        "`python -m benchmarks.run_grouped_smo_cost --epochs-only` "
        "(benchmarks/run_grouped_smo_cost.py). make_blobs(4,000, 3 features, 3 classes, "
        "cluster_std = 2, random_state = 0), RBF gamma='scale', max_iter = 100 epochs "
        "(n_iter_: the grouped models' solves, each stopped at 100 epochs), one "
        "BLAS thread, CPU time of the fit, best of "
        f"{repeats}, alternating in the same process; commit {commit}. 'dense': the grouped "
        "Newton step's block products over the whole q x q block (main 05e27d6), 'sparse': "
        "over the samples holding a free variable and those where the direction is nonzero "
        "(SPARSE_HMUL). The diagnosis is in rbf_large_c.md, \"Round 13: the grouped SMO's "
        "epoch cost\".",
        "",
        markdown_table(["C", "model", "products", "CPU s", "n_iter_", "objective"], rows),
        ""])


def pendigits_fit(C=10.0, gamma=1 / 16):
    """CPU s, n_iter_ and objective of WeightedRobustMSVM(truncation=None) on pendigits
    (harness.pendigits_split: stratified 70/30, standardized), RBF, one BLAS thread."""
    import msvm
    from threadpoolctl import threadpool_limits

    from benchmarks.harness import pendigits_split
    X, _, y, _ = pendigits_split(False)
    est = msvm.WeightedRobustMSVM(kernel="rbf", C=C, gamma=gamma, truncation=None)
    with threadpool_limits(1), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        est.fit(X, y)
        cpu = time.process_time() - start
    return dict(cpu=cpu, epochs=int(est.n_iter_), objective=float(est.objective_),
                converged=bool(est.converged_), warnings=len(caught))


def run_pendigits(repeats):
    """Pendigits, sparse and dense alternating, every run."""
    runs = []
    for _ in range(repeats):
        for mode in ("dense", "sparse"):
            m = _with_products(mode == "sparse", pendigits_fit)
            print("pendigits", mode, m, flush=True)
            runs.append(dict(products=mode, **m))
    return runs


def render_all(data):
    """The page from the JSON file: the 100-epoch table, then pendigits where measured."""
    best = {(r["C"], r["model"], r["products"]): r for r in data["results"]}
    text = render_epochs(best, data["commit"], data["repeats"])
    if "pendigits" in data:
        rows = [[r["products"], f"{r['cpu']:.2f}", r["converged"], r["epochs"],
                 f"{r['objective']:.10g}"] for r in data["pendigits"]["runs"]]
        text += "\n".join([
            "", "## Pendigits", "",
            "`python -m benchmarks.run_grouped_smo_cost --pendigits`: "
            "WeightedRobustMSVM(truncation=None), RBF C = 10, gamma = 1/16, default tol and "
            "max_iter, stratified 70/30 split, standardized, one BLAS thread, CPU time, "
            f"every run in its order (alternating); commit {data['pendigits']['commit']}.",
            "", markdown_table(["products", "CPU s", "converged", "n_iter_", "objective"],
                               rows), ""])
    return text


def run_fits(commit):
    """Full fits, sparse and dense alternating, recorded in rbf_large_c.json."""
    for n in (1000, 4000):
        for C in (1e4, 1e6):
            for name in GROUPED:
                for tag, sparse in (("r13-smo", True), ("r13-smo-before", False)):
                    m = dict(_with_products(sparse, lambda: measure(n, C, name)), git=commit)
                    print(n, C, name, tag, m, flush=True)
                    _record(n, C, name, tag, m)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs-only", action="store_true")
    parser.add_argument("--fits-only", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pendigits", action="store_true",
                        help="only pendigits WeightedRobustMSVM(truncation=None), C = 10, "
                             "sparse and dense alternating, ``--repeats`` each, appended "
                             "to grouped_smo_cost.md / .json")
    args = parser.parse_args(argv)
    commit = git_commit()
    if args.pendigits:
        runs = run_pendigits(args.repeats)
        data = json.loads(JSON_PATH.read_text())
        data["pendigits"] = dict(commit=commit, runs=runs)
        write_json(JSON_PATH, data)
        MD_PATH.write_text(render_all(data))
        return
    if not args.fits_only:
        best = run_epochs(args.repeats)
        data = dict(json.loads(JSON_PATH.read_text()) if JSON_PATH.exists() else {},
                    commit=commit, repeats=args.repeats, results=[
                        dict(C=C, model=name, products=mode, **m)
                        for (C, name, mode), m in best.items()])
        write_json(JSON_PATH, data)
        MD_PATH.write_text(render_all(data))
    if not args.epochs_only:
        run_fits(commit)


if __name__ == "__main__":
    main()
