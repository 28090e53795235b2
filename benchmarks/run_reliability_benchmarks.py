"""What the reliability guarantees cost: signal checks, the duality-gap rule, interrupt latency.

    python -m benchmarks.run_reliability_benchmarks
    python -m benchmarks.run_reliability_benchmarks --baseline-python OLD/bin/python

(from the repository root)

1. Signal checks: the solver re-takes the GIL every 2^24 units of work to run Python's signal
   handlers.  The same fits with the checks on and off (msvm._core._solver.signal_checks_off),
   alternated in one process; CPU time (the machine may be shared), median of the pairs; and,
   since whole-fit timings scatter by more than the checks cost, the number of checks a fit
   makes times the measured time of one check (msvm._core._solver.signal_check_stats).
2. Duality-gap rule: on the same fits, the certificate's final relative value, the epochs, and
   what one evaluation of the certificate costs against the whole fit (it is evaluated only
   when the KKT rule is met: once or twice per fit here).
3. Interrupt latency: SIGINT sent 3 s into ReinforcedMSVM (RBF, make_classification with
   n = 20,000, d = 20, k = 5, C = 1; the reliability issue's case, 45 s before), in a child
   process; time from the signal to the child's exit with KeyboardInterrupt.
4. With --baseline-python (the interpreter of an older msvm build): the pendigits RBF fit in
   child processes of both builds, alternated, CPU time of each child: the cost of all
   solver changes together (gap rule, checks, termination accounting, SMO steps).
5. Gram-matrix validation (``--sections gram``, with --baseline-python for the previous
   build): a precomputed RBF Gram matrix of n = 8,000 samples (0.51 GB) in a child process
   of each build: CPU and wall time of ``msvm._kernels.check_gram`` and of a fit with
   ``max_iter=1`` against one pass over K (``K.sum()``), the peak memory they allocate above
   K (tracemalloc), and the Ctrl-C latency during validation (SIGINT sent from a thread
   0.2-1.4 s into back-to-back validations; time to the KeyboardInterrupt).

Pendigits is standardized and split 70/30 (stratified, seed 0) as in `python -m msvm demo`;
RBF with gamma = 1/16 and C = 10 as in benchmarks.run_benchmarks section b.  Results go to
benchmarks/results/reliability.md and reliability.json.  Timings are reported, never asserted.
"""

import argparse
import contextlib
import datetime
import json
import os
import platform
import resource
import signal
import statistics
import subprocess
import sys
import textwrap
import time

import numpy as np

from benchmarks.harness import RESULTS, cpu_fit, git_commit, write_json

PAIRS = 3

PENDIGITS_FIT = textwrap.dedent("""
    import json, sys, time, warnings
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    from msvm import ReinforcedMSVM
    from msvm.datasets import load_pendigits
    X, y = load_pendigits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    sc = StandardScaler().fit(Xtr)
    Xtr = sc.transform(Xtr)
    est = ReinforcedMSVM(C=10.0, gamma=1 / 16, kernel="rbf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.process_time()
        est.fit(Xtr, ytr)
        cpu = time.process_time() - t0
    print(json.dumps({"cpu": cpu, "n_iter": int(est.n_iter_),
                      "objective": float(est.objective_)}))
""")

INTERRUPTED_FIT = textwrap.dedent("""
    from sklearn.datasets import make_classification
    from msvm import ReinforcedMSVM
    X, y = make_classification(n_samples=20000, n_features=20, n_informative=10,
                               n_classes=5, random_state=0)
    print("fitting", flush=True)
    ReinforcedMSVM(kernel="rbf", C=1.0).fit(X, y)
    print("finished", flush=True)
""")


GRAM_CHILD = textwrap.dedent("""
    import json, signal, sys, threading, time, tracemalloc, warnings
    import numpy as np
    from msvm import ReinforcedMSVM
    from msvm._kernels import check_gram
    n = int(sys.argv[1])
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 10))
    y = np.arange(n) % 3
    sq = np.einsum("ij,ij->i", X, X)
    K = X @ X.T
    K *= -2.0
    K += sq[:, None]
    K += sq[None, :]
    np.maximum(K, 0.0, out=K)
    K *= -0.05
    np.exp(K, out=K)
    K = (K + K.T) / 2       # exactly symmetric
    out = {"n": n, "gram_gb": K.nbytes / 1e9}
    t = time.process_time(); w = time.perf_counter(); K.sum()
    out["one_pass"] = {"cpu": time.process_time() - t, "wall": time.perf_counter() - w}
    calls = {"check_gram": lambda: check_gram(K),
             "fit_max_iter_1": lambda: ReinforcedMSVM(kernel="precomputed",
                                                      max_iter=1).fit(K, y)}
    for what, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t, w = time.process_time(), time.perf_counter()
            call()
            row = {"cpu": time.process_time() - t, "wall": time.perf_counter() - w}
            tracemalloc.start()
            call()
            row["peak_gb"] = tracemalloc.get_traced_memory()[1] / 1e9
            tracemalloc.stop()
        out[what] = row
    latencies = []
    for delay in (0.2, 0.5, 0.9, 1.4):
        sent = []
        def kick(delay=delay, main=threading.main_thread().ident):
            time.sleep(delay)
            sent.append(time.perf_counter())
            signal.pthread_kill(main, signal.SIGINT)
        thread = threading.Thread(target=kick)
        thread.start()
        try:
            while True:
                check_gram(K)
        except KeyboardInterrupt:
            latencies.append(time.perf_counter() - sent[0])
        thread.join()
    out["sigint_latency"] = latencies
    print(json.dumps(out))
""")
GRAM_N = 8000


def gram_section(baseline_python=None):
    """Section 5: the Gram-matrix validation of this build (and of the previous one)."""
    builds = [("this one", sys.executable)]
    if baseline_python:
        builds.insert(0, ("previous", baseline_python))
    rows = []
    for name, python in builds:
        out = subprocess.run([python, "-c", GRAM_CHILD, str(GRAM_N)], capture_output=True,
                             text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        row["build"] = name
        rows.append(row)
        print(f"[gram] {name}: check_gram {row['check_gram']['cpu']:.2f} s CPU, peak "
              f"{row['check_gram']['peak_gb']:.3f} GB; SIGINT latency "
              f"{max(row['sigint_latency']):.3f} s", flush=True)
    return rows


def render_gram(rows):
    """The markdown of section 5."""
    lines = ["", "## Gram-matrix validation (precomputed and callable kernels)", "",
             f"A precomputed RBF Gram matrix of n = {rows[0]['n']:,} samples "
             f"({rows[0]['gram_gb']:.2f} GB), in a child process of each build.  CPU (wall) "
             "seconds; peak = memory allocated above K during the call (tracemalloc); "
             "Ctrl-C = SIGINT sent from a thread 0.2, 0.5, 0.9, 1.4 s into back-to-back "
             "validations, seconds to the KeyboardInterrupt.  The machine is shared (load "
             "about 8 on 2 cores): wall times are inflated.", "",
             "| build | one pass over K | check_gram | its peak (GB) | fit, max_iter=1 | "
             "its peak (GB) | Ctrl-C latency, max (all) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lat = r["sigint_latency"]
        lines.append(
            f"| {r['build']} | {r['one_pass']['cpu']:.2f} ({r['one_pass']['wall']:.2f}) | "
            f"{r['check_gram']['cpu']:.2f} ({r['check_gram']['wall']:.2f}) | "
            f"{r['check_gram']['peak_gb']:.3f} | {r['fit_max_iter_1']['cpu']:.2f} "
            f"({r['fit_max_iter_1']['wall']:.2f}) | {r['fit_max_iter_1']['peak_gb']:.3f} | "
            f"{max(lat):.3f} ({', '.join(f'{x:.3f}' for x in lat)}) |")
    lines += ["", "Targets: Ctrl-C within 1 s; max_iter=1 within 1 s plus one pass over K; "
              "peak at most 0.25x the Gram matrix above it."]
    return lines


def pendigits():
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from msvm.datasets import load_pendigits

    X, y = load_pendigits(return_X_y=True)
    Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    return StandardScaler().fit(Xtr).transform(Xtr), ytr


def signal_and_gap_section(fits):
    from msvm._core._solver import primal_dual, signal_check_stats, signal_checks_off

    _, per_check = signal_check_stats(200000)

    rows = []
    for name, make, X, y in fits:
        on, off = [], []
        for _ in range(PAIRS):
            for enabled, store in ((True, on), (False, off)):
                with contextlib.nullcontext() if enabled else signal_checks_off():
                    before = signal_check_stats()[0]
                    cpu, est = cpu_fit(make, X, y)
                    if enabled:
                        checks = signal_check_stats()[0] - before
                store.append(cpu)
        # one evaluation of the certificate at the final point, as the solver makes it
        problem = est._dual_problem(np.unique(y, return_inverse=True)[1].astype(np.int32),
                                    len(est.classes_), est.C * np.ones(len(y)))
        alpha = _alpha_vector(est, problem)
        F = _scores(est, X, problem, alpha)
        start = time.process_time()
        for _ in range(5):
            primal_dual(problem, alpha, F, np.zeros(problem.k))
        eval_seconds = (time.process_time() - start) / 5
        ratios = [a / b for a, b in zip(on, off)]
        rows.append({
            "fit": name, "cpu_checks_on": statistics.median(on),
            "cpu_checks_off": statistics.median(off),
            "ratio_on_off": statistics.median(ratios), "ratios": ratios,
            "checks_per_fit": int(checks), "seconds_per_check": per_check,
            "checks_share": checks * per_check / statistics.median(on),
            "n_iter": int(est.n_iter_), "kkt_residual": float(est.kkt_residual_),
            "relative_gap": float(est.duality_gap_ / est.objective_),
            "gap_eval_seconds": eval_seconds,
            "gap_eval_share": None if eval_seconds is None else
            eval_seconds / statistics.median(on)})
        print(f"[signals] {name}: on {rows[-1]['cpu_checks_on']:.3f} s, off "
              f"{rows[-1]['cpu_checks_off']:.3f} s, ratio {rows[-1]['ratio_on_off']:.4f}, "
              f"{checks} checks x {per_check * 1e6:.2f} us = "
              f"{100 * rows[-1]['checks_share']:.4f} % of the fit; "
              f"gap {rows[-1]['relative_gap']:.2e}, one evaluation "
              f"{eval_seconds if eval_seconds is None else round(eval_seconds, 4)} s", flush=True)
    return rows


def _alpha_vector(est, problem):
    """The fitted dual variables in the problem's variable order (from alpha_)."""
    A = np.asarray(est.alpha_)
    rows = problem.sample_of_var()
    if A.ndim == 2:
        return np.ascontiguousarray(A[rows, problem.expand("slot1")])
    return np.ascontiguousarray(A[rows, problem.expand("slot2"), problem.expand("slot1")])


def _scores(est, X, problem, alpha):
    from msvm._kernels import kernel_matrix

    U = problem.slot_sums(alpha)
    K = kernel_matrix(X, X, est.kernel, est.gamma_, est.degree, est.coef0)
    return np.ascontiguousarray(K @ U)


def interrupt_section(repeats=3):
    rows = []
    for _ in range(repeats):
        proc = subprocess.Popen([sys.executable, "-c", INTERRUPTED_FIT], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "fitting"
        time.sleep(3.0)
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=600)
        latency = time.perf_counter() - sent
        rows.append({"latency": latency, "keyboard_interrupt": "KeyboardInterrupt" in err})
        print(f"[interrupt] exit {latency:.3f} s after SIGINT "
              f"(KeyboardInterrupt: {rows[-1]['keyboard_interrupt']})", flush=True)
    return {"rows": rows, "median_latency": statistics.median(r["latency"] for r in rows)}


def child_fit(python):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([python, "-c", PENDIGITS_FIT], capture_output=True, text=True,
                         check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(out.strip().splitlines()[-1])
    result["process_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def baseline_section(baseline_python):
    old, new = [], []
    for _ in range(PAIRS):
        old.append(child_fit(baseline_python))
        new.append(child_fit(sys.executable))
        print(f"[baseline] fit cpu old {old[-1]['cpu']:.2f} s ({old[-1]['n_iter']} epochs), "
              f"new {new[-1]['cpu']:.2f} s ({new[-1]['n_iter']} epochs)", flush=True)
    ratios = [b["cpu"] / a["cpu"] for a, b in zip(old, new)]
    return {"old": old, "new": new, "ratio_new_old": statistics.median(ratios),
            "ratios": ratios,
            "objective_rel_diff": abs(new[0]["objective"] - old[0]["objective"])
            / old[0]["objective"]}


def render(report):
    lines = ["# Reliability: what the guarantees cost", "",
             f"Run {report['date']} on {report['machine']} (msvm at {report['git']}); CPU "
             f"times, medians of {PAIRS} alternated pairs.  Produced by "
             "`python -m benchmarks.run_reliability_benchmarks"
             + (" --baseline-python ..." if "baseline" in report else "") + "`.", "",
             "## Signal checks and the duality-gap rule", "",
             "| fit | CPU, checks on (s) | CPU, checks off (s) | on / off | checks per fit | "
             "their share (checks x one check's time) | epochs | final relative gap | one gap "
             "evaluation (s) | share of the fit |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["signals"]:
        ev = "-" if r["gap_eval_seconds"] is None else f"{r['gap_eval_seconds']:.4f}"
        share = "-" if r["gap_eval_share"] is None else f"{100 * r['gap_eval_share']:.2f} %"
        lines.append(f"| {r['fit']} | {r['cpu_checks_on']:.3f} | {r['cpu_checks_off']:.3f} | "
                     f"{r['ratio_on_off']:.4f} | {r['checks_per_fit']} | "
                     f"{100 * r['checks_share']:.4f} % | {r['n_iter']} | "
                     f"{r['relative_gap']:.2e} | {ev} | {share} |")
    lines += ["", f"One signal check (re-taking the GIL, running the handlers) takes "
              f"{report['signals'][0]['seconds_per_check'] * 1e6:.2f} us here.  Target for the "
              "checks: under 1 % of a fit.  The on / off timings of whole fits scatter by a few "
              "per cent on this shared machine, in both directions, so the share is computed from "
              "the count of checks a fit makes and the measured time of one check.  The gap is "
              "evaluated only when the KKT rule is met; its share is per evaluation.", "",
              "## Interrupt latency", "",
              "SIGINT 3 s into ReinforcedMSVM (RBF, n = 20,000, d = 20, k = 5, C = 1): the "
              "child exits with KeyboardInterrupt after "
              + ", ".join(f"{r['latency']:.3f}" for r in report["interrupt"]["rows"])
              + f" s (median {report['interrupt']['median_latency']:.3f} s; before the "
              "signal checks: 45 s, when the solve ended).  Target: within 1 s."]
    if "baseline" in report:
        b = report["baseline"]
        lines += ["", "## Against the previous build", "",
                  "pendigits RBF (C = 10, gamma = 1/16), ReinforcedMSVM, in child processes "
                  "of both builds, alternated:", "",
                  "| build | fit CPU (s), median | epochs |", "|---|---|---|",
                  f"| previous | {statistics.median(r['cpu'] for r in b['old']):.2f} | "
                  f"{b['old'][0]['n_iter']} |",
                  f"| this one | {statistics.median(r['cpu'] for r in b['new']):.2f} | "
                  f"{b['new'][0]['n_iter']} |", "",
                  f"Ratio this / previous: {b['ratio_new_old']:.3f} (pairs: "
                  + ", ".join(f"{x:.3f}" for x in b["ratios"])
                  + f"); objectives differ by {b['objective_rel_diff']:.1e} (relative)."]
    if "gram" in report:
        lines += render_gram(report["gram"])
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-python", help="interpreter of an older msvm build")
    parser.add_argument("--sections", default="all", choices=("all", "gram"),
                        help="'gram': run section 5 only and update it in the saved report")
    args = parser.parse_args(argv)
    if args.sections == "gram":
        report = json.loads((RESULTS / "reliability.json").read_text())
        report["gram"] = gram_section(args.baseline_python)
        write_json(RESULTS / "reliability.json", report, indent=1)
        (RESULTS / "reliability.md").write_text(render(report))
        print(render(report))
        return
    from msvm import ReinforcedMSVM, WestonWatkinsMSVM
    from sklearn.datasets import make_classification

    X, y = pendigits()
    Xl, yl = make_classification(n_samples=10000, n_features=50, n_informative=20,
                                 n_classes=10, random_state=0)
    fits = [
        ("pendigits RBF, ReinforcedMSVM (kernel SMO)",
         lambda: ReinforcedMSVM(C=10.0, gamma=1 / 16, random_state=0), X, y),
        ("pendigits RBF, WestonWatkinsMSVM (kernel SMO)",
         lambda: WestonWatkinsMSVM(C=10.0, gamma=1 / 16, random_state=0), X, y),
        ("n=10k d=50 k=10 linear, ReinforcedMSVM C=0.01 (coordinate descent)",
         lambda: ReinforcedMSVM(C=0.01, kernel="linear", random_state=0), Xl, yl),
    ]
    import msvm

    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{platform.machine()}, {os.cpu_count()} logical CPUs",
              "msvm": msvm.__version__,
              "git": git_commit()}
    report["signals"] = signal_and_gap_section(fits)
    report["interrupt"] = interrupt_section()
    if args.baseline_python:
        report["baseline"] = baseline_section(args.baseline_python)
    report["gram"] = gram_section(args.baseline_python)
    write_json(RESULTS / "reliability.json", report, indent=1)
    (RESULTS / "reliability.md").write_text(render(report))
    print(render(report))


if __name__ == "__main__":
    main()
