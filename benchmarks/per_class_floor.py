"""Round 15: WestonWatkinsMSVM and WeightedRobustMSVM(truncation=None) against SVC on
pendigits (issue 24 items 1 and 4; run_per_class_speed.py --r15).

Two builds of behaviour in one build, switched at run time (SWITCHES): 'main' (every round-15
change off: main 080c064's behaviour, the same values) and 'r15' (the defaults).  Measured:

* fresh: `rounds` rounds of one child process per mode (alternating, the order reversed
  every other round), each fitting on pendigits (RBF C = 10, gamma = 1/16, one BLAS thread)
  SVC and each model twice (the first fit of the process, then a second one in it): CPU
  time (time.process_time) and minor page faults (ru_minflt) of every fit;
* in_process: pendigits in this process, every model's fits in the two modes in turn,
  SVC's between, `rounds` times;
* checks: make_classification n = 20,000 (ReinforcedMSVM, C = 1) in fresh children per
  mode, the grouped dual at n = 4,000, C = 1e4 (run_rbf_large_c's make_blobs,
  WeightedRobustMSVM(truncation=None)) in this process, modes alternating, the peak
  resident memory of a child fitting each pendigits model once (VmHWM, reset just before
  the fit) and Ctrl-C latency (children alternating: SIGINT 3 s into a 20,000-sample fit,
  the wall time until KeyboardInterrupt reaches the child's Python code).
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time
import warnings

import numpy as np

MODES = ("main", "r15")
PENDIGITS = ("WestonWatkinsMSVM", "WeightedRobustMSVM(truncation=None)", "ReinforcedMSVM")


def set_mode(mode):
    """The round-15 switches off ('main': main 080c064's behaviour) or at their defaults
    ('r15'); every setting gives the same values."""
    from msvm._core import _rows, _smo
    main = mode == "main"
    _rows._store_reuse(0 if main else 64 << 20, 0 if main else 2 << 20)
    _smo._grouped_scan(not main)
    _rows._mirror_tile(0 if main else 16)
    _rows._tiles(update_tile=1024 if main else 0)
    _rows._update_group(4 if main else 8)


def build_child(*models):
    """A fresh process's pendigits fits (each model twice, SVC first) with the msvm it
    imports (build_fresh: another build's), its printed JSON the last line, with the path
    of the msvm imported."""
    import msvm
    from threadpoolctl import threadpool_limits
    warnings.simplefilter("ignore")
    out = {"msvm": os.path.dirname(msvm.__file__)}
    with threadpool_limits(1):
        for name in models:
            fit = pendigits_fit(name)
            out[name] = [measure(fit) for _ in range(2)]
    print(json.dumps(out), flush=True)


# a child fitting with this build, or (MSVM_BASE_SITE set) with the msvm of the directory
# first on PYTHONPATH: the editable install's finder (which maps msvm to this worktree
# whatever the path) taken out first
BUILD_CHILD = ("import os, sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in "
               "type(f).__module__ or not os.environ.get('MSVM_BASE_SITE')]; "
               "from benchmarks.per_class_floor import build_child; build_child(*sys.argv[1:])")


def build_fresh(rounds, base_site, models=("SVC",) + PENDIGITS):
    """{'base': ..., 'this': ...} -> model -> list over rounds of [first, second fit]: fresh
    children alternating (the order reversed every other round) between the msvm installed
    in ``base_site`` (pip install --target of another commit) and this build."""
    root, env = _env()
    envs = {"base": dict(env, PYTHONPATH=base_site + os.pathsep + env["PYTHONPATH"],
                         MSVM_BASE_SITE="1"),
            "this": env}
    out = {m: {} for m in envs}
    for r in range(rounds):
        for which in _order(r, tuple(envs)):
            res = subprocess.run([sys.executable, "-c", BUILD_CHILD, *models],
                                 env=envs[which], capture_output=True, text=True, check=True,
                                 cwd=root)
            fits = json.loads(res.stdout.splitlines()[-1])
            out.setdefault("msvm", {})[which] = fits.pop("msvm")
            for name, pair in fits.items():
                out[which].setdefault(name, []).append(pair)
        print("builds, round", r, flush=True)
    return out


R16_MODES = ("r15", "r16")


def set_r16_mode(mode):
    """The round-16 switches off ('r15': main 5c4386a's behaviour) or at their defaults
    ('r16'); every setting gives the same values."""
    from msvm._core import _smo
    _smo._grouped_scan_fused(mode != "r15")
    _smo._grouped_pick(mode != "r15")


def pendigits_fit(name):
    """A fit on the pendigits training split (RBF C = 10, gamma = 1/16) of SVC or a model of
    run_per_class_speed._models(): a function returning the fitted estimator."""
    from sklearn.svm import SVC

    from benchmarks.run_per_class_speed import _models, _pendigits_train
    X, y = _pendigits_train()
    if name == "SVC":
        return lambda: SVC(C=10.0, gamma=1 / 16).fit(X, y)
    make = _models()[name]
    return lambda: make(C=10.0, gamma=1 / 16, random_state=0).fit(X, y)


def classification(n):
    """make_classification (d = 20, 10 informative, k = 5, random_state 0), standardized."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5,
                               random_state=0)
    return (X - X.mean(0)) / X.std(0), y


def measure(fit):
    """CPU time and minor page faults of fit(), and its estimator's objective."""
    f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
    est = fit()
    t = time.process_time() - t0
    return {"cpu_s": t, "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0,
            "objective": float(getattr(est, "objective_", 0.0))}


def _peak_rss_mb(reset=False):
    """This process's peak resident memory (VmHWM, MB), reset to the current one first when
    asked (/proc/self/clear_refs 5: Linux 4.0 on)."""
    if reset:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024


def child(mode, what, *models):
    """A fresh process's work in a mode (its printed JSON is the last line): 'pendigits'
    (each model fitted twice), 'memory:NAME' (one fit: the peak resident memory above the
    memory at its start), 'interrupt' (a 20,000-sample ReinforcedMSVM fit, SIGINT from the
    parent: the monotonic clock when KeyboardInterrupt reached Python) or n (one
    ReinforcedMSVM fit of make_classification n)."""
    from threadpoolctl import threadpool_limits
    set_mode(mode)
    warnings.simplefilter("ignore")
    out = {}
    with threadpool_limits(1):
        if what == "pendigits":
            for name in models:
                fit = pendigits_fit(name)
                out[name] = [measure(fit) for _ in range(2)]
        elif what.startswith("memory:"):
            name = what.split(":", 1)[1]
            fit = pendigits_fit(name)
            start = _peak_rss_mb(reset=True)
            fit()
            out[name] = {"start_mb": start, "peak_mb": _peak_rss_mb()}
        elif what == "interrupt":
            from msvm import ReinforcedMSVM
            X, y = classification(20_000)
            print("fitting", flush=True)
            try:
                ReinforcedMSVM(C=1.0, random_state=0).fit(X, y)
                out["caught"] = None
            except KeyboardInterrupt:
                out["caught"] = time.monotonic()
        else:
            from msvm import ReinforcedMSVM
            X, y = classification(int(what))
            out["ReinforcedMSVM"] = [measure(lambda: ReinforcedMSVM(C=1.0, random_state=0)
                                             .fit(X, y))]
    print(json.dumps(out), flush=True)


CHILD = "import sys; from benchmarks.per_class_floor import child; child(*sys.argv[1:])"


def _env():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return root, env


def _child(mode, what, models=()):
    """One fresh process's fits (CHILD) in a mode."""
    root, env = _env()
    res = subprocess.run([sys.executable, "-c", CHILD, mode, str(what), *models], env=env,
                         capture_output=True, text=True, check=True, cwd=root)
    return json.loads(res.stdout.splitlines()[-1])


def _order(r, modes=MODES):
    return modes if r % 2 == 0 else modes[::-1]


def fresh(rounds, models=("SVC",) + PENDIGITS):
    """mode -> model -> list over rounds of [first fit, second fit] (fresh children)."""
    out = {m: {} for m in MODES}
    for r in range(rounds):
        for mode in _order(r):
            for name, pair in _child(mode, "pendigits", models).items():
                out[mode].setdefault(name, []).append(pair)
        print("fresh, round", r, flush=True)
    return out


def in_process(rounds, models=PENDIGITS, modes=MODES, setter=set_mode):
    """mode -> model -> list over rounds of [fit] (this process; SVC's fits between): the
    modes in turn (each set by ``setter``), the order reversed every other round; the last
    mode set at the end."""
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_limits

    from benchmarks.run_per_class_speed import _models, _pendigits_train
    X, y = _pendigits_train()
    makers = _models()
    fits = {"SVC": lambda: SVC(C=10.0, gamma=1 / 16).fit(X, y)}
    fits.update({name: (lambda m=makers[name]: m(C=10.0, gamma=1 / 16, random_state=0)
                        .fit(X, y)) for name in models})
    out = {m: {} for m in modes}
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(rounds):
            for name, fit in fits.items():
                for mode in _order(r, modes):
                    setter(mode)
                    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
                    t0 = time.process_time()
                    est = fit()
                    t = time.process_time() - t0
                    f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
                    out[mode].setdefault(name, []).append(
                        [{"cpu_s": t, "faults": f,
                          "objective": float(getattr(est, "objective_", 0.0))}])
            print("in process, round", r, flush=True)
    setter(modes[-1])
    return out


def checks(rounds, large_n=20_000, grouped_n=4_000, grouped_C=1e4):
    """The n = large_n fits (fresh children per mode), the grouped dual at grouped_n and
    grouped_C (this process, modes alternating), each pendigits model's peak memory (one
    child per mode and model) and the Ctrl-C latency (`rounds` children per mode)."""
    from benchmarks.run_rbf_large_c import measure
    out = {"large_n": large_n, "grouped_n": grouped_n, "grouped_C": grouped_C,
           "large": {m: [] for m in MODES}, "grouped": {m: [] for m in MODES},
           "memory": {m: {} for m in MODES}}
    for r in range(rounds):
        for mode in _order(r):
            out["large"][mode].append(_child(mode, large_n)["ReinforcedMSVM"][0])
        print("checks large, round", r, flush=True)
    for r in range(rounds):
        for mode in _order(r):
            set_mode(mode)
            out["grouped"][mode].append(measure(grouped_n, grouped_C, "WeightedRobustMSVM"))
        print("checks grouped, round", r, flush=True)
    set_mode("r15")
    for name in PENDIGITS:
        for mode in MODES:
            out["memory"][mode][name] = _child(mode, "memory:" + name)[name]
    out["latency"], out["latency_after"] = latency(rounds), 1.5
    return out


def latency(rounds, after=1.5):
    """Ctrl-C latency per mode (children alternating): SIGINT `after` s into a 20,000-sample
    ReinforcedMSVM fit (one BLAS thread: 3.1-3.8 s of CPU), and the wall time (monotonic
    clock) until KeyboardInterrupt reached the child's Python code (None: the fit ended
    first)."""
    root, env = _env()
    out = {m: [] for m in MODES}
    for r in range(rounds):
        for mode in _order(r):
            proc = subprocess.Popen([sys.executable, "-c", CHILD, mode, "interrupt"], env=env,
                                    cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            assert proc.stdout.readline().strip() == "fitting"
            time.sleep(after)
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            stdout, _ = proc.communicate(timeout=600)
            caught = json.loads(stdout.strip().splitlines()[-1])["caught"]
            out[mode].append(None if caught is None else caught - sent)
        print("latency, round", r, out, flush=True)
    return out


def _med(vals):
    vals = [v for v in vals if v is not None]
    return float(np.median(vals)) if vals else float("nan")


def render(r15, modes=MODES):
    """Markdown of an --r15 run's tables (an --r16 run's: modes R16_MODES)."""
    from benchmarks.harness import markdown_table
    lines = []
    a, b = modes
    for kind in ("fresh", "in_process"):
        fits = r15.get(kind)
        if not fits:
            continue
        rounds = len(fits[a]["SVC"])
        how = (f"medians of {rounds} fresh processes per mode, alternating; 'first' is the "
               "first fit of a process, 'second' the next one" if kind == "fresh" else
               f"medians of {rounds} rounds in one process, every model's fits in the two "
               "modes in turn, SVC's between")
        lines += [f"Pendigits (RBF C = 10, gamma = 1/16), {how}.  x_svc: against SVC's median "
                  "in the same mode (its second fit in fresh processes).", ""]
        cols = ["model", "fit", f"{a} cpu_s", f"{b} cpu_s", f"{b} / {a}", f"{a} x_svc",
                f"{b} x_svc", f"{a} faults", f"{b} faults", "objectives equal"]
        rows = []
        which = ("first", "second") if kind == "fresh" else ("any",)
        for name in fits[a]:
            for i, label in enumerate(which):
                cpu = {m: _med([p[i]["cpu_s"] for p in fits[m][name] if len(p) > i])
                       for m in modes}
                flt = {m: _med([p[i]["faults"] for p in fits[m][name] if len(p) > i])
                       for m in modes}
                svc = {m: _med([p[len(p) - 1]["cpu_s"] for p in fits[m]["SVC"]])
                       for m in modes}
                objs = {p[i]["objective"] for m in modes for p in fits[m][name] if len(p) > i}
                rows.append([name, label, f"{cpu[a]:.4f}", f"{cpu[b]:.4f}",
                             f"{cpu[b] / cpu[a]:.3f}", f"{cpu[a] / svc[a]:.2f}",
                             f"{cpu[b] / svc[b]:.2f}", f"{flt[a]:.0f}",
                             f"{flt[b]:.0f}", "yes" if len(objs) == 1 else "NO"])
        lines += [markdown_table(cols, rows), ""]
    ch = r15.get("checks")
    if ch:
        large = {m: _med([f["cpu_s"] for f in ch["large"][m]]) for m in MODES}
        grouped = {m: _med([f["cpu"] for f in ch["grouped"][m]]) for m in MODES}
        same = len({f["objective"] for m in MODES for f in ch["large"][m]}) == 1 and \
            len({f["objective"] for m in MODES for f in ch["grouped"][m]}) == 1
        lines += [f"Checks (medians of {len(ch['large']['main'])} per mode, alternating): "
                  f"make_classification n = {ch['large_n']:,} ReinforcedMSVM (fresh "
                  f"children) main {large['main']:.3f} s, r15 {large['r15']:.3f} s; the "
                  f"grouped dual at n = {ch['grouped_n']:,}, C = {ch['grouped_C']:g} "
                  f"(WeightedRobustMSVM(truncation=None), make_blobs, this process) main "
                  f"{grouped['main']:.3f} s, r15 {grouped['r15']:.3f} s; objectives "
                  f"{'equal' if same else 'NOT equal'} between the modes.", ""]
        cols = ["model", "main start MB", "main peak MB", "r15 start MB", "r15 peak MB"]
        rows = [[name] + [f"{ch['memory'][m][name][k]:.1f}" for m in MODES
                          for k in ("start_mb", "peak_mb")] for name in ch["memory"]["main"]]
        lines += ["Peak resident memory of a child fitting one pendigits model once (VmHWM "
                  "reset just before the fit: 'start' the memory then, 'peak' the fit's "
                  "peak):", "", markdown_table(cols, rows), ""]
        if "latency" in ch:
            lat = {m: ", ".join("ended first" if v is None else f"{v:.4f}"
                                for v in ch["latency"][m]) for m in MODES}
            lines += [f"Ctrl-C (SIGINT {ch.get('latency_after', 3.0):g} s into a 20,000-sample "
                      f"ReinforcedMSVM fit, wall time "
                      f"until KeyboardInterrupt reached the child's Python code, children "
                      f"alternating): main {lat['main']} s; r15 {lat['r15']} s.", ""]
    return lines


R15_TEXT = """## r15: the Weston-Watkins-type models against SVC (issue 24 items 1, 4)

Where main 080c064 stood (perf over 40 pendigits fits in one process, the fits only): the
score updates (msvm_group_axpy32) a fifth of a WestonWatkinsMSVM fit, the scans (its flat
scan; WRM's grouped _sample_violation) 15-17 %, the kernel rows 14 %, the gather of the
working sets' kernel blocks 10 % (a third of it the mirror of the upper triangle, read
column-wise), the store's 8,611 page faults 20-25 ms, Python around the solve about 10 ms
(WW; 12 ms WRM: validation, the row source's median shift 1.7 ms, the snapshot 2 ms).
Built (every change exact: fingerprint 38 of 38 identical after each; each behind a
switch that per_class_floor.set_mode turns off for 'main'):

1. The spare row store (_row_store.h, _rows._store_reuse(spare_max)): a released store is
   kept, its first 64 MB resident (the rest of what it touched given back, MADV_DONTNEED),
   and handed to the next store of at most its size and kind; every row is written before
   it is read, so its old contents do not matter.  A process's later fits fault in no
   store page (WW 8,611 -> 0 faults a fit in one process).  Cost: up to 64 MB stay
   resident in the process between fits (_rows._drop_spare_store() releases them).
2. Populating ahead (_rows._store_reuse(populate=2 MB)): a store in 4 KB pages is faulted
   in 2 MB at a time (MADV_POPULATE_WRITE) as its rows are claimed: one call instead of
   512 faults (the first fit of a process: WW 0.1454 -> 0.1185 s together with 3-6).
3. The grouped scan (_smo._grouped_scan, _grouped_violation): each variable's z formed
   once and kept for its full group's pair test, each group's fullness tested once, the
   loop's invariants (S[i] / k was divided for every variable) in locals: WRM 0.1428 ->
   0.1386 s (21 alternating rounds).
4. The kernel block's mirror in 16 x 16 tiles (_rows._mirror_tile): WW 0.1112 -> 0.1066 s
   (tiles of 32 / 64: 0.1086 / 0.1101).
5. Score updates in one pass (UPDATE_TILE 0; 1024 was main's wherever the cache cannot hold
   every row, and pendigits' 200 MB hold 6,814 of its 7,694 float32 rows): faster at every
   size measured, WW 0.1083 -> 0.1036 s, WRM 0.1361 -> 0.1318 s, ReinforcedMSVM pendigits
   2.25 -> 2.05 s, make_classification n = 10,000 / 20,000 / 40,000 / 80,000 0.787 / 3.52
   / 13.7 / 68.5 -> 0.754 / 3.13 / 12.5 / 66.5 s (medians of 11, 3, 3, 3, 2 and one pair).
6. Score updates take up to 8 terms per pass over a target (_rows._update_group; 4 was
   main's; each entry's terms still added one at a time in the samples' order):
   ReinforcedMSVM pendigits 1.846 -> 1.759 s, n = 10,000 0.675 -> 0.650 s, WW 0.1006 ->
   0.0986 s, WRM unchanged.

Result (table r15-pendigits above, load 4.7; r15-final-pendigits the usual table): in one
process WestonWatkinsMSVM 1.40x -> 1.04x SVC and WeightedRobustMSVM(truncation=None) 1.73x
-> 1.33x; in fresh processes 1.47x -> 1.20x (first fit) and 1.44x -> 1.08x (second), WRM
1.83x -> 1.41x / 1.40x.  The 1x targets are missed: WW by 4-8 % where the store is warm
(in one process, or a process's second fit) and by 20 % in a process's first fit (its
9,652 faults, 8,600 of them the store's, now populated, and the first touches of
everything else); WRM by a third (its grouped scan is still 17 % of the fit, its score
update 19 %).  Nothing else lost: ReinforcedMSVM pendigits 2.38 -> 1.94 s, n = 20,000 3.74
-> 3.33 s, the grouped dual at n = 4,000, C = 1e4 6.05 -> 5.99 s, every objective the
same; a pendigits fit's peak memory +1 MB (the 2 MB populated ahead: WW 275.1 -> 276.1
MB); Ctrl-C reaches Python within 2-34 ms of SIGINT in both modes.

Tried and not kept: the gather of a float32 block through a cloned loop for AVX2 / AVX-512
gathers (GCC emulates them with scalar loads on this target: WW 0.1035 -> 0.1025 s, noise);
a cheaper exact median shift of the row source (np.sort per column 2.8 ms, a transposed
partition 1.5 ms, against np.median's 1.7 ms: introselect's branches on fresh data cost
90 us a column).  Left alone: WestonWatkinsMSVM's flat scan (_scan_part, 15 % of its fit,
the per-class scan of another engineer's files this round), the kernel rows' dot products
and exponentials (at their floor for the same values: 0.8 and 0.85 ns a value).
"""


R16_TEXT = """## r16: the SMO without its overlapped loop; WRM's grouped scan (issue 24)

Main 5c4386a.  Removed, exact (fingerprint 38 of 38 identical): round 15's overlapped block
loop (BLOCK_PIPELINE, off by default and measured slower; branch blockthreads keeps it) and
everything only it used.  Folded, exact: the two process-wide block-loop profiles into one
(_smo._profile: the phases' wall / CPU, the counts, the load's parts).

WeightedRobustMSVM(truncation=None) on pendigits (RBF C = 10, gamma = 1/16, one thread):
perf over 30 fits in one process (main 5c4386a, load 5-6): the grouped scan
(SMOSolver._sample_violation with _grouped_violation inlined) 14 % of all samples and the
score update (msvm_group_axpy32) 11.5 %, with the process's imports in the samples: about
19 % and 15 % of the fits.  _smo._profile per fit (the calling thread's CPU, medians of 6
alternating fits, load 6): scan 29.0 ms, load (rows, kernel block, scores, variables)
38.8 ms, local SMO 27.2 ms, update 25.3 ms of a 135 ms fit (97 scans, 16 full, 87 blocks,
9,520 changed samples updated); Python around the solve about 20 ms (cProfile).

Built (exact, behind _smo._grouped_scan_fused, 'r15' in the table r16-in-process above):
the grouped scan in one pass over a sample's variables (_grouped_violation_fused): each
group's fullness and room cap - gsum formed once when the pass enters it (round 15 formed the
room again in every variable's _room_up / _room_down), a full group's pair extremes kept
in locals and closed when the pass leaves it (round 15 kept every variable's gradient and
alpha in buffers and ran group_pair in a second pass, which read every bound again).  The
scan 29.0 -> 25.9 ms a fit; the fit 0.1371 -> 0.1330 s (9 rounds, in the table), 1.36x ->
1.32x SVC; WestonWatkinsMSVM and ReinforcedMSVM, whose scans are flat, unchanged (0.1032 /
0.1039 s, 1.91 / 1.94 s: noise at load 5-7).  Then (exact, _smo._grouped_pick, both
switches off for 'r15' in table r16-in-process-b): the working set's variables of a
grouped problem picked per group (_grouped_block_variables: each group's fullness and room
formed once, the loop invariants in locals, as _flat_block_variables does without groups;
round 15 ran _settled_variable for every variable): the load phase 37.9 -> 36.1 ms a fit
(medians of 8 alternating fits, load 10), the fit with both 0.1371 -> 0.1327 s (9 rounds,
load 10).

Against main 5c4386a built apart (table r16-builds above: fresh processes alternating, 5
each, load 11-12 with the test suite running): WRM 0.1361 -> 0.1267 s (1.40x -> 1.30x SVC,
a process's second fit), WestonWatkinsMSVM 0.1050 -> 0.1028 s, ReinforcedMSVM 1.910 ->
1.864 s (first fits 1.906 -> 1.955 s: noise at that load); every objective the same.

Target (issue 24 item 1: WRM(truncation=None) at most 1x SVC) missed: 1.30-1.37x.  What is left
is spread over four phases of similar size (scan 26, load 39, local SMO 27, update 26 ms;
SVC's whole fit 101 ms), none of which an exact change of one loop brings down by the 32 ms
missing.  The score update is at its floor for its values (every changed sample's kernel
row read once per nonzero slot, eight terms a pass, each entry's terms added one at a time
in the samples' order); making it cheaper means fewer changed samples or terms, which moves
the iterates.
"""
