"""The row cache's page faults (issue 24 items 1 and 4; run_per_class_speed.py --pages).

Fresh child processes, alternating between the row store's three settings: 'plain' (every
store malloc'd in 4 KB pages: main 38cd666's behaviour and the default below 20,000
samples, msvm._core._rows._huge_store(0)), 'huge' (a store of HUGE_MIN = 16 MB or more
mapped in 2 MB pages whatever n, madvise(MADV_HUGEPAGE): _row_store.h) and 'glibc' (plain, with
GLIBC_TUNABLES=glibc.malloc.hugetlb=1: every malloc'd mapping and the heap in transparent
huge pages, no code change).  Each child fits, one BLAS thread, on pendigits (RBF C = 10,
gamma = 1/16) SVC and each model twice (the first fit of the process, then a second one in
the same process), or one ReinforcedMSVM fit on
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
HUGE_MIN = 16 << 20
PENDIGITS_MODELS = ("WestonWatkinsMSVM", "WeightedRobustMSVM(truncation=None)",
                    "ReinforcedMSVM")

CHILD = """
import json, resource, sys, time, warnings
import numpy as np
from threadpoolctl import threadpool_limits
from msvm._core import _rows
mode, what = sys.argv[1], sys.argv[2]
_rows._huge_store(16 << 20, 0) if mode == "huge" else _rows._huge_store(0)
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
        from benchmarks.per_class_floor import pendigits_fit
        for name in sys.argv[3:]:
            fit = pendigits_fit(name)
            out[name] = [measure(fit) for _ in range(2)]
    else:
        from benchmarks.per_class_floor import classification
        from msvm import ReinforcedMSVM
        X, y = classification(int(what))
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
    old = _rows._huge_store(min_samples=0)
    out = {"plain": {}, "huge": {}}
    fits = {"SVC": lambda: SVC(C=10.0, gamma=1 / 16).fit(X, y)}
    fits.update({name: (lambda m=makers[name]: m(C=10.0, gamma=1 / 16, random_state=0)
                        .fit(X, y)) for name in PENDIGITS_MODELS})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(rounds):
            for name, fit in fits.items():
                for mode in ("plain", "huge") if r % 2 == 0 else ("huge", "plain"):
                    _rows._huge_store(0 if mode == "plain" else HUGE_MIN)
                    f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, \
                        time.process_time()
                    fit()
                    t = time.process_time() - t0
                    f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
                    out[mode].setdefault("pendigits", {}).setdefault(name, []).append(
                        [{"cpu_s": t, "faults": f}])
            print("in process, round", r, flush=True)
    _rows._huge_store(*old)
    return out


def _median(runs, i, key):
    vals = [r[i][key] for r in runs if len(r) > i]
    return float(np.median(vals)) if vals else None


def render_pages(pg):
    """Markdown of a pages run: medians over the rounds, first and second fit of a
    process, CPU s (x SVC's median in the same mode) and minor faults."""
    lines = []
    modes = list(pg["fits"])
    last = 0 if pg.get("in_process") else 1     # SVC's fits (the second in a child)
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
                        svc = _median(pg["fits"][m][what]["SVC"], last, "cpu_s")
                        row.append(f"{_median(pg['fits'][m][what][name], i, 'cpu_s') / svc:.2f}")
                rows.append(row)
        from benchmarks.harness import markdown_table
        lines += [markdown_table(cols, rows), ""]
    return lines


R14_PAGES = """## r14-pages: the row store in 2 MB pages (issue 24 items 1, 4; kept from n = 20,000)

Main 38cd666's row store is one malloc of capacity x n values (200 MB on pendigits), mapped
by glibc in 4 KB pages and faulted in as rows are claimed from its start.  Per fit
(ru_minflt, fresh processes): WestonWatkinsMSVM 10,544 minor faults, of which 8,611 the
store's (1,146 rows of 7,694 float32 values, 35 MB), WeightedRobustMSVM(truncation=None)
~12,000 (9,017), ReinforcedMSVM ~36,000 (34,406: 141 MB), make_classification n = 20,000
(ReinforcedMSVM) 54,661.  Touching 40 MB costs 18.5-19.5 ms in 4 KB pages (26-39 ms the
first time in a process), 2.5-3.5 ms in 2 MB pages, 13 ms in 4 KB pages populated 2 MB at a
time (madvise MADV_POPULATE_WRITE).

Built: _row_store.h (msvm_store_alloc / msvm_store_free): a store of at least
_rows._huge_store() bytes (16 MB) and samples (20,000) is an anonymous mapping aligned to 2 MB
and marked
madvise(MADV_HUGEPAGE), released by munmap; malloc below it and off Linux.  This machine's
transparent huge pages: enabled [madvise], defrag [madvise] (so only madvised mappings get
them, with direct compaction on a fault if needed; under "always" glibc's mapping of the
store would get them without the madvise, under "never" the madvise does nothing and the
store gets 4 KB pages).  Every fit's values are the same (fingerprint 38 of 38 identical);
store faults per fit 8,611 -> 17 (WestonWatkinsMSVM), 34,406 -> 68 (ReinforcedMSVM).

What it measured (tables r14-pages-fresh, r14-pages-in-process, r14-pages-80k above;
medians of 5, CPU s, load 5-7): in fresh processes, the second fit of a process gains
(WestonWatkinsMSVM 0.147 -> 0.121 s, 1.49x -> 1.24x SVC; WRM 0.174 -> 0.149 s, 1.77x ->
1.52x; ReinforcedMSVM 2.36 -> 2.14 s; n = 20,000 3.67 -> 3.47 s), but the first fit of
WestonWatkinsMSVM does not (0.139 -> 0.148 s: 2 of 5 fits at 0.187 and 0.221 s).  In one
process, plain and 2 MB stores alternating with the other models' fits between,
WestonWatkinsMSVM lost (median 0.136 -> 0.159 s: 3 of 5 fits at 0.159-0.192 s), WRM gained
(0.163 -> 0.141 s), ReinforcedMSVM 2.18 -> 2.24 s (noise).  Peak memory of a 40,000-sample
fit: 459.4 MB (4 KB pages) and 459.3 MB (2 MB pages).

Why the slow fits (and why the glibc tunable's first fit rose, 0.13 -> 0.17-0.21 s here
too): not compaction (/proc/vmstat compact_stall unchanged through them; 2,640 free order-10
blocks) and not more faults (17 huge faults in the slow fits as in the fast ones).  This
machine is a virtual machine whose virtio balloon does free page reporting at order 9
(/sys/module/page_reporting/parameters/page_reporting_order): free blocks of 2 MB and more
are reported to the host, which discards them, so a huge page taken from one is faulted in
again by the host, 4 KB at a time, inside the guest's fault (CPU time of the process).  A
40 MB touch in 2 MB pages took 89.7 ms once in 8 fresh processes (2.5-19 ms otherwise).  A
fit that frees its huge pages and fits again at once gets them back warm (the second fits
above); a pause or other work between (the in-process alternation) lets them be reported.
The 4 KB pages mostly come from the guest's low-order free lists, which stay backed.  With
the glibc tunable the same happens to the whole heap as well (perf: clear_page_erms 5.5 %
of the process against 1.0 % with the store mapping, half of it under glibc's sysmalloc:
the heap grown in 2 MB pages zeroed whole), and in every process's first fit.

So on pendigits the gain does not hold up on this machine: a third of the fits with 2 MB
stores lost 50-100 ms where the others gained 20-25 ms (on bare metal, or where free memory
is not reported to a host, the warm numbers above are the expected ones).  At large n, where
the store is touched whole and its rows read again and again, 2 MB pages won in every fit
measured, by more than the faults alone (fewer TLB misses, presumably): n = 20,000 3.67 ->
3.47 s (medians of 5 fresh processes), n = 80,000 71.5, 70.3, 71.1 -> 66.3, 67.1, 68.6 s
(three alternating pairs; tables r14-pages-80k and r14-pages-80k-b).  Kept: the mapping for
stores of 16 MB or more of 20,000 samples or more (HUGE_STORE_MIN, HUGE_STORE_SAMPLES; 4 KB
pages below, as main), its tests (tests/test_row_store.py: the settings give bit-identical
fits; the default's threshold; the mapping is released) and --huge-store / --plain-store /
--pages / --pages-in-process of run_per_class_speed.py.  Sizes between 7,694 and 20,000 were
not measured: the threshold lies somewhere there.
Not tried for lack of time: populating the store 2 MB at a time in 4 KB pages as rows are
claimed (MADV_POPULATE_WRITE: a third of the fault cost saved, ~5 ms of a pendigits fit,
from warm pages).
"""
