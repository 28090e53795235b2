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

Round 14 (``--r14 [--r14-parts epochs fits pendigits]``): the grouped blocks' vectorized
passes (msvm._core._smo._grouped_vector(True), 'vector') against main 10578f8's plain loops
(the switch off, 'plain'), alternating in the same process: the 100-epoch table above (best
of ``--repeats``), full fits at n = 1,000 and 4,000, C = 1e4, 1e6 and 1e8 (one each), and
pendigits RBF C = 10, gamma = 1/16 (SVC, WestonWatkinsMSVM and
WeightedRobustMSVM(truncation=None) plain and vector, every run of ``--repeats``).  Written
to the "Round 14" sections of grouped_smo_cost.md / .json.
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


def _with_switch(switch, value, run):
    """``run()`` with the msvm._core._smo switch ``switch`` (a function name) at ``value``."""
    from msvm._core import _smo
    old = getattr(_smo, switch)(value)
    try:
        return run()
    finally:
        getattr(_smo, switch)(old)


def _with_products(sparse, run):
    """``run()`` with the SMO's Newton-step products sparse or dense."""
    return _with_switch("_sparse_hmul", sparse, run)


def _with_vector(vector, run):
    """``run()`` with the grouped blocks' vectorized passes on or off (main's loops)."""
    return _with_switch("_grouped_vector", vector, run)


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


def _best_epochs(repeats, modes, run_with):
    """Best-of-``repeats`` CPU of 100 epochs per (C, model, mode), the modes alternating:
    ``run_with(mode, run)`` runs ``run`` in that mode; the models without a Newton step
    (WestonWatkinsMSVM) in the last mode only."""
    best = {}
    for C in (1e4, 1e6):
        for _ in range(repeats):
            for name in EPOCH_MODELS:
                for mode in (modes if name in GROUPED else modes[-1:]):
                    m = run_with(mode, lambda: epoch_fit(name, C))
                    print(C, name, mode, m, flush=True)
                    key = (C, name, mode)
                    if key not in best or m["cpu"] < best[key]["cpu"]:
                        best[key] = m
    return best


def run_epochs(repeats):
    """Best-of-``repeats`` CPU of 100 epochs, per model, C and product."""
    return _best_epochs(repeats, ("dense", "sparse"),
                        lambda mode, run: _with_products(mode == "sparse", run))


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


def pendigits_fit(C=10.0, gamma=1 / 16, model="WeightedRobustMSVM"):
    """CPU s, n_iter_ and objective of WeightedRobustMSVM(truncation=None) (or ``model``) on
    pendigits (harness.pendigits_split: stratified 70/30, standardized), RBF, one BLAS
    thread."""
    import msvm
    from threadpoolctl import threadpool_limits

    from benchmarks.harness import pendigits_split
    X, _, y, _ = pendigits_split(False)
    extra = dict(truncation=None) if model == "WeightedRobustMSVM" else {}
    est = getattr(msvm, model)(kernel="rbf", C=C, gamma=gamma, **extra)
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
    if "r14" in data:
        text += render_r14(data["r14"])
    return text


def run_r14_epochs(repeats):
    """Best-of-``repeats`` CPU of 100 epochs, plain and vector alternating."""
    best = _best_epochs(repeats, ("plain", "vector"),
                        lambda mode, run: _with_vector(mode == "vector", run))
    return {f"{C:g}|{name}|{mode}": m for (C, name, mode), m in best.items()}


def run_r14_fits():
    """Full fits at n = 1,000 / 4,000, C = 1e4 / 1e6 / 1e8, plain and vector alternating
    (not n = 4,000 at C = 1e8: its first fit, plain, ran over 5 CPU minutes and was
    stopped)."""
    fits = {}
    for n, C in ((1000, 1e4), (1000, 1e6), (1000, 1e8), (4000, 1e4), (4000, 1e6)):
        for name in GROUPED:
            for mode in ("plain", "vector"):
                m = _with_vector(mode == "vector", lambda: measure(n, C, name))
                print("r14", n, C, name, mode, m, flush=True)
                fits[f"{n}|{C:g}|{name}|{mode}"] = m
    return fits


def svc_pendigits_fit(C=10.0, gamma=1 / 16):
    """CPU s of SVC on the pendigits split of pendigits_fit (one BLAS thread)."""
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from benchmarks.harness import pendigits_split
    X, _, y, _ = pendigits_split(False)
    with threadpool_limits(1):
        start = time.process_time()
        SVC(C=C, gamma=gamma).fit(X, y)
        return dict(cpu=time.process_time() - start)


def run_r14_pendigits(repeats):
    """SVC, WestonWatkinsMSVM and WeightedRobustMSVM(truncation=None) plain and vector,
    alternating, every run."""
    runs = []
    for _ in range(repeats):
        for model, mode in (("SVC", "-"), ("WestonWatkinsMSVM", "vector"),
                            ("WeightedRobustMSVM", "plain"),
                            ("WeightedRobustMSVM", "vector")):
            if model == "SVC":
                m = svc_pendigits_fit()
            else:
                m = _with_vector(mode == "vector", lambda: pendigits_fit(model=model))
            print("r14 pendigits", model, mode, m, flush=True)
            runs.append(dict(model=model, mode=mode, **m))
    return runs


def _median(values):
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else 0.5 * (values[mid - 1] + values[mid])


# measured once by hand (perf record -F 4000 over 40 fits in one process, less a run without
# fits; one BLAS thread; load 4-7 on 2 cores, perf's own cost included, so read shares):
# where the pendigits fits and the grouped epochs go.  Not rerun by this script.
PROFILE_R14 = """### Where the time goes (round 14 profile)

Pendigits RBF C = 10, gamma = 1/16 (SVC 0.095-0.098 s CPU in the same runs), ms per fit
from `perf record` over 40 fits less a process that loads the data and fits nothing
(perf's overhead included: the totals read 10-15 % above the unprofiled fits), commit
fd68390's build, 'plain' and 'vector' by the switch in the same build:

| part | WestonWatkinsMSVM | WeightedRobustMSVM plain | WeightedRobustMSVM vector |
|---|---|---|---|
| total in the compiled solver and around it | 153 | 180 | 163 |
| global scans (_scan_part; grouped: _sample_violation) | 19.5 | 30.2 | 29.8 |
| the block's passes, steps, Newton steps and group pairs | 22.3 | 43.5 | 29.2 |
| working-set loading (_block_variables, _settled_variable, _load_block) | 5.8 | 6.3 | 6.8 |
| score updates F += K[:, B] dU (_rows: msvm_group_axpy32, axpys) | 29.8 | 29.7 | 27.7 |
| kernel rows (_rows: rbf_row32, dots_rows) and the block K_BB (gather) | 34.1 | 33.5 | 33.3 |
| the OS kernel (mostly page faults on the fresh row cache, note 1) | 25.3 | 22.3 | 22.3 |
| NumPy, Python and the rest (note 2) | 16.1 | 13.6 | 13.3 |

Notes: 1. about 9,000 4 KB pages for the 1,146-1,200 float32 rows of 7,694 computed.  2.
cProfile, vector: the fit 0.164 s, its compiled solve 0.143 s.

Per fit: WestonWatkinsMSVM 5 epochs, 33,101 SMO steps, 82 blocks, 15 full scans, 1,146 kernel
rows; WeightedRobustMSVM(truncation=None) 5 epochs, 32,715 steps, 87 blocks, 16 full scans,
1,200 rows (the same with either switch).  The grouped model's extra cost over
Weston-Watkins was its block passes (43.5 against 22.3 ms: group rooms and fullness looked
up per variable and per group every round) and its scans (30 against 19.5 ms: the group
caps' rooms and the full groups' pair conditions per sample); the vectorized passes take
the first to 29.2 ms, the second is left (a scan rewritten with every invariant in a local, as
_flat_violation's, each z computed once, measured no faster: two runs of 10 alternating
fits, medians 0.162 / 0.159 -> 0.163 / 0.157 s; its cost is reading each visited sample's
10 score slots, about 330k sample visits a fit).  What remains is mostly common to both
models and outside this file: kernel rows and the block (33-34 ms), the score updates
(28-30 ms), the row cache's page faults (22-25 ms) and 13-16 ms around the solve.  Both
models are below the floor (kernel once + one K V pass, 0.41 s) already: 1x SVC needs
about 35 ms (Weston-Watkins) and 60 ms (grouped) less per fit, not reachable through the
SMO's own loops (_smo.pyx is 48 and 67 ms of it).  The row cache's pages: with glibc's
transparent huge pages for large allocations (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, no
code change; THP in 'madvise' mode here), three rounds of two processes alternating, 5
fits of each model a process, medians per round: WestonWatkinsMSVM 0.130 / 0.128 / 0.131 ->
0.107 / 0.108 / 0.105 s, WeightedRobustMSVM(truncation=None) (vector) 0.158 / 0.155 / 0.161
-> 0.132 / 0.138 / 0.131 s, SVC 0.097 / 0.093 / 0.095 -> 0.097 / 0.093 / 0.093 s (1.10-1.16x
and 1.36-1.49x SVC), but the first fit of each process 0.18-0.20 s for WestonWatkinsMSVM
(0.13 s without): a madvise(MADV_HUGEPAGE) on the row cache's store (msvm/_core/_rows.pyx,
not this round's file) is the largest single per-fit cost found, left for its owner.

100 epochs, make_blobs n = 4,000, C = 1e6 (WeightedRobustMSVM(truncation=None)), ms per fit:
main's loops 2,150 (the Newton step's products _hmul 1,260, the pair passes and group
loops about 800: _partner 290, _bucket_extremes 200, _group_steps 115, _group_violation
115); after the products over the gathered free block 970 (products 98, group rooms
gathered per pass 157, _group_steps 115, _group_violation 115, bucket_z 94, partner gains
64); after the group rooms kept per block 840; after the full groups found from the
block's group list 640 (WestonWatkinsMSVM 410-430).

Tried and not kept: the group rooms and masks in one pass gathering cap[g] - gsum[g] for
every variable (branch-free, vectorized with gathers): 100 epochs 0.97 -> 1.13 s (slower);
the block's group list walked by a per-group method call with group_full per group:
0.83 -> 1.04 s (slower; the kept version keeps a fullness flag per block group); the Newton
schedule at 2,048 multiply-adds a local step instead of 8,192 (products now about 13x
cheaper), full fits: n = 1,000 C = 1e8 WeightedRobustMSVM 2.29 -> 4.54 s,
AdaptiveWeightedSVM 3.35 -> 5.71 s, n = 4,000 C = 1e4 WeightedRobustMSVM 8.73 -> 5.58 s,
n = 1,000 C = 1e4 0.51 -> 0.45 s (moves the iterates; objectives within 3.4e-7; not kept:
C = 1e8 slower, as in round 13).
"""


def render_r14(r14):
    """The round 14 sections: 100 epochs, full fits, pendigits."""
    head = (f"commit {r14['commit']}, {r14['date']}, load average {r14['load']} at the start; "
            "'plain': the grouped blocks' plain loops (msvm._core._smo._grouped_vector(False), "
            "main 10578f8's), 'vector': the vectorized passes (_group_block.h), the group "
            "rooms and fullness kept per block (_sync_group) and the Newton step's products "
            "over the gathered free block; every value the same, so the same iterates. CPU "
            "time, one BLAS thread, alternating in one process.")
    out = ["", "## Round 14: the grouped blocks' vectorized passes", "",
           "`python -m benchmarks.run_grouped_smo_cost --r14`; " + head, "",
           PROFILE_R14.rstrip()]
    if "epochs" in r14:
        rows = []
        for key, m in sorted(r14["epochs"].items()):
            C, name, mode = key.split("|")
            rows.append([C, name, mode, f"{m['cpu']:.2f}", m["epochs"],
                         f"{m['objective']:.10g}"])
        out += ["", f"100 epochs (make_blobs n = 4,000 as above), best of {r14['repeats']}:",
                "", markdown_table(["C", "model", "passes", "CPU s", "n_iter_", "objective"],
                                   rows)]
    if "fits" in r14:
        rows = []
        for key in r14["fits"]:
            n, C, name, mode = key.split("|")
            if mode != "plain":
                continue
            a, b = r14["fits"][key], r14["fits"][f"{n}|{C}|{name}|vector"]
            rel = abs(a["objective"] - b["objective"]) / max(abs(a["objective"]), 1e-300)
            rows.append([n, C, name, f"{a['cpu']:.2f}", f"{b['cpu']:.2f}",
                         f"{b['cpu'] / a['cpu']:.2f}", f"{a['converged']}/{b['converged']}",
                         f"{a['epochs']}/{b['epochs']}", f"{b['objective']:.10g}",
                         f"{rel:.1e}"])
        out += ["", "Full fits (make_blobs as above, default tol and max_iter), one each:", "",
                markdown_table(["n", "C", "model", "plain CPU s", "vector CPU s", "ratio",
                                "converged", "n_iter_", "objective", "rel. diff"], rows)]
    if "pendigits" in r14:
        runs = r14["pendigits"]
        svc = _median([r["cpu"] for r in runs if r["model"] == "SVC"])
        rows = []
        for model, mode in (("SVC", "-"), ("WestonWatkinsMSVM", "vector"),
                            ("WeightedRobustMSVM", "plain"), ("WeightedRobustMSVM", "vector")):
            mine = [r for r in runs if r["model"] == model and r["mode"] == mode]
            cpus = [r["cpu"] for r in mine]
            med = _median(cpus)
            rows.append([model + ("(truncation=None)" if model == "WeightedRobustMSVM" else ""),
                         mode, f"{med:.4f}", f"{min(cpus):.4f}", f"{med / svc:.2f}",
                         mine[0].get("epochs", "-"),
                         f"{mine[0]['objective']:.10g}" if "objective" in mine[0] else "-"])
        out += ["", f"Pendigits (stratified 70/30, standardized, RBF C = 10, gamma = 1/16), "
                f"median and best of {len(runs) // 4} alternating runs; x SVC: medians:", "",
                markdown_table(["model", "passes", "median CPU s", "best CPU s", "x SVC",
                                "n_iter_", "objective"], rows)]
    return "\n".join(out + [""])


def run_r14(parts, repeats, commit):
    """The round 14 measurements (``parts`` of epochs, fits, pendigits) into the JSON file
    and the page."""
    import datetime
    import os
    data = json.loads(JSON_PATH.read_text())
    r14 = dict(data.get("r14", {}), commit=commit, repeats=repeats,
               date=datetime.date.today().isoformat(), load=f"{os.getloadavg()[0]:.1f}")
    if "epochs" in parts:
        r14["epochs"] = run_r14_epochs(repeats)
    if "fits" in parts:
        r14["fits"] = run_r14_fits()
    if "pendigits" in parts:
        r14["pendigits"] = run_r14_pendigits(max(repeats, 5))
    data["r14"] = r14
    write_json(JSON_PATH, data)
    MD_PATH.write_text(render_all(data))


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
    parser.add_argument("--r14", action="store_true",
                        help="round 14: the grouped blocks' vectorized passes against "
                             "main's plain loops (sections 'Round 14')")
    parser.add_argument("--r14-parts", nargs="*", default=["epochs", "fits", "pendigits"],
                        choices=["epochs", "fits", "pendigits"])
    parser.add_argument("--render-only", action="store_true",
                        help="rewrite the .md from the .json without fitting")
    args = parser.parse_args(argv)
    if args.render_only:
        MD_PATH.write_text(render_all(json.loads(JSON_PATH.read_text())))
        return
    commit = git_commit()
    if args.r14:
        run_r14(args.r14_parts, args.repeats, commit)
        return
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
