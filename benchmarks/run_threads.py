"""The kernel solver's threads (``n_threads``, issue 24 item 2): wall and CPU time, 1 and 2.

    python -m benchmarks.run_threads                 # the three cases below, ~2-3 min idle
    python -m benchmarks.run_threads --repeats 3     # more alternations (the best is kept)
    python -m benchmarks.run_threads --full-40k      # the n = 40k fit to convergence (long)

(from the repository root)

Cases, each fitted with ``n_threads=1`` and ``n_threads=2`` alternately in one process, one
BLAS thread:

* pendigits (msvm.datasets, stratified 70/30 split, random_state=0, StandardScaler; 7,494
  training samples, 10 classes), RBF C = 10, gamma = 1/16: ReinforcedMSVM and
  WestonWatkinsMSVM, to convergence;
* make_classification n = 40,000, d = 20, 5 classes (n_informative=10, random_state=0),
  RBF gamma='scale', C = 1, ReinforcedMSVM (200 MB float32 row cache: rows are recomputed):
  its first ``--budget`` epochs (max_iter; the ConvergenceWarning is expected), the same
  work with 1 and 2 threads because the iterates do not depend on the threads (checked).

For each fit: wall time (time.perf_counter), CPU time of the process (time.process_time,
all its threads), CPU time of the calling thread (time.thread_time: with 2 threads, the
part of the work the worker did not take) and the 1-minute load average when it started;
per case the best of the repeats and the ratios 2 threads / 1 thread of wall and CPU time;
"identical" says whether dual_coef_, intercept_ and objective_ are the same to the last
bit.  The targets: wall at most 0.6x, CPU at most 1.1x.  On a machine shared with other
work (the load column: more runnable threads than cores), the second thread waits for a
core and the wall ratio says little; rerun it idle.  Results go to
benchmarks/results/threads.md and .json.
"""

import argparse
import os
import time
import warnings

import numpy as np

from benchmarks.harness import RESULTS, machine_info, markdown_table, pendigits_split, write_json


# measured once with perf on this branch (not rerun by this script)
NOTES = """What bounds the gain (perf, pendigits ReinforcedMSVM, 2 threads, shared machine): the
working set's own SMO steps (its variables, bucket extremes and pair steps: _smo.pyx) are
about 29 % of the solver's CPU time and run on the calling thread; the rest (kernel rows,
kernel block, score updates, scans) is split.  So the calling thread keeps at least about
0.29 + 0.71 / 2 = 0.65 of the 1-thread time there: the 0.6 target on pendigits needs the
block solve itself to be cheaper or parallel.  At n = 40k, where kernel rows dominate, the
calling thread keeps about half.  WestonWatkinsMSVM's problems have group caps, whose scan
runs on one thread (its updates and rows are split)."""


def _load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def _cases(budget, full_40k):
    from sklearn.datasets import make_classification

    from msvm import ReinforcedMSVM, WestonWatkinsMSVM

    X, _, y, _ = pendigits_split(False)
    Xc, yc = make_classification(n_samples=40000, n_features=20, n_informative=10,
                                 n_classes=5, random_state=0)
    big = {} if full_40k else {"max_iter": budget}
    label = "to convergence" if full_40k else f"first {budget} epochs"
    return [
        ("pendigits ReinforcedMSVM", X, y,
         lambda t: ReinforcedMSVM(C=10.0, gamma=1 / 16, n_threads=t)),
        ("pendigits WestonWatkinsMSVM", X, y,
         lambda t: WestonWatkinsMSVM(C=10.0, gamma=1 / 16, n_threads=t)),
        (f"make_classification n=40k ReinforcedMSVM ({label})", Xc, yc,
         lambda t: ReinforcedMSVM(C=1.0, n_threads=t, **big)),
    ]


def _fit(make, threads, X, y):
    est = make(threads)
    load = _load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        est.fit(X, y)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        own = time.thread_time() - own
    return {"threads": threads, "wall": wall, "cpu": cpu, "own": own, "load": load,
            "epochs": int(est.n_iter_)}, est


def _same(a, b):
    return bool(np.array_equal(a.dual_coef_, b.dual_coef_)
                and np.array_equal(a.intercept_, b.intercept_)
                and a.objective_ == b.objective_)


def run(repeats, budget, full_40k):
    from threadpoolctl import threadpool_limits

    out = []
    with threadpool_limits(1, user_api="blas"):
        for name, X, y, make in _cases(budget, full_40k):
            runs, fits = [], {}
            for _ in range(repeats):
                for threads in (1, 2):
                    record, fits[threads] = _fit(make, threads, X, y)
                    runs.append(record)
                    print(f"{name}: {threads} thread(s) wall {record['wall']:.2f} s, "
                          f"CPU {record['cpu']:.2f} s (calling thread {record['own']:.2f} s), "
                          f"load {record['load']}", flush=True)
            best = {t: min((r for r in runs if r["threads"] == t), key=lambda r: r["wall"])
                    for t in (1, 2)}
            out.append({"case": name, "n": len(y), "runs": runs, "best": best,
                        "identical": _same(fits[1], fits[2]),
                        "wall_ratio": best[2]["wall"] / best[1]["wall"],
                        "cpu_ratio": best[2]["cpu"] / best[1]["cpu"],
                        "own_ratio": best[2]["own"] / best[1]["cpu"]})
    return out


def render(cases, info):
    rows = [[c["case"], c["best"][1]["epochs"], f"{c['best'][1]['wall']:.2f}",
             f"{c['best'][2]['wall']:.2f}", f"{c['wall_ratio']:.2f}",
             f"{c['best'][1]['cpu']:.2f}", f"{c['best'][2]['cpu']:.2f}",
             f"{c['cpu_ratio']:.2f}", f"{c['best'][2]['own']:.2f}", f"{c['own_ratio']:.2f}",
             f"{c['best'][1]['load']:.1f} / {c['best'][2]['load']:.1f}"
             if c['best'][1]['load'] is not None else "-",
             "yes" if c["identical"] else "NO"] for c in cases]
    table = markdown_table(["case", "epochs", "wall 1 (s)", "wall 2 (s)", "wall 2/1",
                            "CPU 1 (s)", "CPU 2 (s)", "CPU 2/1", "calling thread 2 (s)",
                            "calling thread 2 / CPU 1", "load at start (1 / 2)",
                            "identical"], rows)
    runs = markdown_table(
        ["case", "threads", "wall (s)", "CPU (s)", "calling thread (s)", "load"],
        [[c["case"], r["threads"], f"{r['wall']:.2f}", f"{r['cpu']:.2f}", f"{r['own']:.2f}",
          "-" if r["load"] is None else f"{r['load']:.1f}"] for c in cases for r in c["runs"]])
    return (f"# The kernel solver's threads (n_threads = 1 and 2)\n\n"
            f"Written by `python -m benchmarks.run_threads` ({__doc__.split(chr(10))[0]}); "
            f"see the script's docstring for the cases.\n\n"
            f"Machine: {info['cpu']}, {info['logical_cpus']} logical CPUs, msvm "
            f"{info['msvm']} ({info['git']}), {info['date']}.  The load average is that of "
            f"the whole machine when each fit started: above the number of cores, other "
            f"processes compete for them and the wall-time ratio says little.\n\n"
            f"Best of the repeats (least wall time) per thread count; targets: wall 2/1 at "
            f"most 0.6, CPU 2/1 at most 1.1.  \"Calling thread\": the CPU time of the thread "
            f"that runs the fit (time.thread_time), the rest of the CPU time being the "
            f"worker's; with 2 threads it is the fit's critical path, so on an idle machine "
            f"the wall time with 2 threads is about that (plus waits for the worker), and "
            f"\"calling thread 2 / CPU 1\" estimates the idle wall-time ratio (under load "
            f"the worker runs late and takes fewer parts, so the estimate errs high).\n\n"
            f"{table}\n\n{NOTES}\n\n## Every fit\n\n{runs}\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2,
                        help="alternations of 1 and 2 threads per case (default 2)")
    parser.add_argument("--budget", type=int, default=2,
                        help="epochs (max_iter) of the n = 40k fit (default 2)")
    parser.add_argument("--full-40k", action="store_true",
                        help="fit the n = 40k case to convergence instead")
    args = parser.parse_args(argv)
    info = machine_info()
    cases = run(args.repeats, args.budget, args.full_40k)
    data = {"machine": info, "cases": cases}
    write_json(RESULTS / "threads.json", data)
    (RESULTS / "threads.md").write_text(render(cases, info))
    print(render(cases, info))


if __name__ == "__main__":
    main()
