"""The row cache's page faults (issue 24 items 1 and 4; run_per_class_speed.py --pages).

Fresh child processes, alternating between the row store's three settings: 'plain' (every
store malloc'd in 4 KB pages: main 38cd666's behaviour, msvm._core._rows._huge_store(0)),
'huge' (a store of 16 MB or more mapped in 2 MB pages, madvise(MADV_HUGEPAGE):
_row_store.h) and 'glibc' (plain, with GLIBC_TUNABLES=glibc.malloc.hugetlb=1: every malloc'd
mapping and the heap in transparent huge pages, no code change).  Each child fits, one BLAS
thread, on pendigits (RBF C = 10, gamma = 1/16) SVC and each model twice (the first fit of
the process, then a second one in the same process), or one ReinforcedMSVM fit on
make_classification (d = 20, k = 5, C = 1) of n samples; for each fit its CPU time
(time.process_time) and minor page faults (ru_minflt), and the transparent huge pages the
whole machine faulted in and its direct compactions meanwhile (/proc/vmstat thp_fault_alloc,
compact_stall: other processes' too).
"""

import json
import os
import subprocess
import sys

import numpy as np

MODES = ("plain", "huge", "glibc")
PENDIGITS_MODELS = ("WestonWatkinsMSVM", "WeightedRobustMSVM(truncation=None)",
                    "ReinforcedMSVM")

CHILD = """
import json, resource, sys, time, warnings
import numpy as np
from threadpoolctl import threadpool_limits
from msvm._core import _rows
mode, what = sys.argv[1], sys.argv[2]
if mode != "huge":
    _rows._huge_store(0)
warnings.simplefilter("ignore")

def vmstat():
    keys = ("thp_fault_alloc", "compact_stall")
    with open("/proc/vmstat") as fh:
        found = dict(line.split() for line in fh if line.split()[0] in keys)
    return np.array([int(found.get(k, 0)) for k in keys])

def measure(fit):
    f0, v0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, vmstat(), \
        time.process_time()
    est = fit()
    t = time.process_time() - t0
    thp, stalls = (int(v) for v in vmstat() - v0)
    return {"cpu_s": t, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0,
            "thp": thp, "compact_stall": stalls,
            "objective": float(getattr(est, "objective_", 0.0))}

out = {}
with threadpool_limits(1):
    if what == "pendigits":
        from sklearn.svm import SVC
        from benchmarks.run_per_class_speed import _models, _pendigits_train
        X, y = _pendigits_train()
        makers = _models()
        for name in sys.argv[3:]:
            if name == "SVC":
                fit = lambda: SVC(C=10.0, gamma=1 / 16).fit(X, y)
            else:
                fit = lambda: makers[name](C=10.0, gamma=1 / 16, random_state=0).fit(X, y)
            out[name] = [measure(fit) for _ in range(2)]
    else:
        from sklearn.datasets import make_classification
        from msvm import ReinforcedMSVM
        n = int(what)
        X, y = make_classification(n_samples=n, n_features=20, n_informative=10,
                                   n_classes=5, random_state=0)
        X = (X - X.mean(0)) / X.std(0)
        out["ReinforcedMSVM"] = [measure(lambda: ReinforcedMSVM(C=1.0, random_state=0)
                                         .fit(X, y))]
print(json.dumps(out))
"""


def _child(mode, what, models=()):
    """One fresh process's fits (see CHILD) in a store mode."""
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    if mode == "glibc":
        env["GLIBC_TUNABLES"] = "glibc.malloc.hugetlb=1"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    res = subprocess.run([sys.executable, "-c", CHILD, mode, str(what), *models], env=env,
                         capture_output=True, text=True, check=True, cwd=root)
    return json.loads(res.stdout.splitlines()[-1])


def pages(rounds, sizes=(), modes=MODES, with_pendigits=True):
    """`rounds` rounds of one child per mode (in turn) on pendigits and on each size; the
    fits of every child kept (mode -> dataset -> model -> list over rounds of [first,
    second])."""
    out = {m: {} for m in modes}
    datasets = ([("pendigits", ("SVC",) + PENDIGITS_MODELS)] if with_pendigits else []) \
        + [(n, ()) for n in sizes]
    for what, models in datasets:
        for r in range(rounds):
            for mode in modes if r % 2 == 0 else modes[::-1]:
                fits = _child(mode, what, models)
                for name, pair in fits.items():
                    out[mode].setdefault(str(what), {}).setdefault(name, []).append(pair)
                print(mode, what, {k: [round(f["cpu_s"], 4) for f in v]
                                   for k, v in fits.items()}, flush=True)
    return out


def in_process(rounds):
    """Pendigits in this process: SVC, then each model with the store 'plain' and 'huge'
    in turn, `rounds` times (CPU s and minor faults of every fit)."""
    import resource
    import time
    import warnings

    from sklearn.svm import SVC

    from benchmarks.run_per_class_speed import _models, _pendigits_train
    from msvm._core import _rows
    X, y = _pendigits_train()
    makers = _models()
    old = _rows._huge_store()
    out = {"plain": {}, "huge": {}}
    fits = {"SVC": lambda: SVC(C=10.0, gamma=1 / 16).fit(X, y)}
    fits.update({name: (lambda m=makers[name]: m(C=10.0, gamma=1 / 16, random_state=0)
                        .fit(X, y)) for name in PENDIGITS_MODELS})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(rounds):
            for name, fit in fits.items():
                for mode in ("plain", "huge") if r % 2 == 0 else ("huge", "plain"):
                    _rows._huge_store(0 if mode == "plain" else old)
                    f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, \
                        time.process_time()
                    fit()
                    t = time.process_time() - t0
                    f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
                    out[mode].setdefault("pendigits", {}).setdefault(name, []).append(
                        [{"cpu_s": t, "faults": f}])
            print("in process, round", r, flush=True)
    _rows._huge_store(old)
    return out


def _median(runs, i, key):
    vals = [r[i][key] for r in runs if len(r) > i]
    return float(np.median(vals)) if vals else None


def render_pages(pg):
    """Markdown of a pages run: medians over the rounds, first and second fit of a
    process, CPU s (x SVC's median in the same mode) and minor faults."""
    lines = []
    modes = list(pg["fits"])
    rounds = pg["rounds"]
    for what in pg["fits"][modes[0]]:
        head = "pendigits (RBF C = 10, gamma = 1/16)" if what == "pendigits" else \
            f"make_classification n = {int(what):,} (ReinforcedMSVM, C = 1)"
        how = (f"medians of {rounds} fits per mode in one process, alternating" if
               pg.get("in_process") else
               f"medians of {rounds} fresh processes per mode, alternating")
        lines += [f"{head}: {how}.", ""]
        cols = ["model", "fit"] + [f"{m} {c}" for m in modes for c in ("cpu_s", "faults")]
        if what == "pendigits":
            cols += [f"{m} x_svc" for m in modes]
        rows = []
        for name in pg["fits"][modes[0]][what]:
            for i, fit in enumerate(("any",) if pg.get("in_process") else
                                    ("first", "second")):
                if _median(pg["fits"][modes[0]][what][name], i, "cpu_s") is None:
                    continue
                row = [name, fit]
                for m in modes:
                    runs = pg["fits"][m][what][name]
                    row += [f"{_median(runs, i, 'cpu_s'):.4f}",
                            f"{_median(runs, i, 'faults'):.0f}"]
                if what == "pendigits":
                    for m in modes:
                        svc = _median(pg["fits"][m][what]["SVC"], 1, "cpu_s")
                        row.append(f"{_median(pg['fits'][m][what][name], i, 'cpu_s') / svc:.2f}")
                rows.append(row)
        from benchmarks.harness import markdown_table
        lines += [markdown_table(cols, rows), ""]
    return lines
