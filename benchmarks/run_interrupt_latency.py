"""Ctrl-C latency: a real SIGINT sent from another process to a child running a fit.

    python -m benchmarks.run_interrupt_latency               # every case, ~5-8 min
    python -m benchmarks.run_interrupt_latency --delays 0.5 --cases dask-gc-callback
    python -m benchmarks.run_interrupt_latency --render   # the .md again from the .json

(from the repository root)

Each run starts a child process that builds its data (and, for ``dask-cluster``, a
LocalCluster of two worker processes), prints ``fitting`` and fits.  The parent waits one
of ``--delays`` (0.3, 0.7, 1.1 s: one run each) after that line, reads the child's CPU
time (/proc, clock ticks of 10 ms), notes the time and sends SIGINT, as a terminal's
Ctrl-C does.  The child notes the time and its CPU time where KeyboardInterrupt reaches
it; the latency is the difference, in wall time (the machine is shared: load in the
table) and in the child's CPU time.  A child that finishes its fit instead reports "lost"
(the Ctrl-C did not stop the fit).

"before" is the fit with ``msvm._core._signals.KEEP_CTRL_C = False`` (main 5c4386a's
behaviour: fits keep Python's SIGINT handler, and a KeyboardInterrupt swallowed by Python
code is lost), "after" the default; the two alternate, run by run.  The case
``dask-gc-callback`` adds a garbage collector callback that runs 5 ms of Python per
collection in the main thread (as distributed's scheduler adds one to
a LocalCluster's client process, shorter): a Ctrl-C that arrives while it runs is handled
inside it, where Python swallows the KeyboardInterrupt.  Results go to
benchmarks/results/interrupt_latency.md and .json.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from benchmarks.harness import git_commit, markdown_table, to_json

RESULTS = os.path.join(os.path.dirname(__file__), "results")

SETUP = {
    "kernel": ("from msvm import ReinforcedMSVM\n"
               "X, y = make_classification(8000, 20, n_informative=10, n_classes=5, "
               "random_state=0)\n"
               "est = ReinforcedMSVM(kernel='rbf', C=100)\n"),
    "linear": ("from msvm import ReinforcedMSVM\n"
               "X, y = make_classification(40000, 40, n_informative=20, n_classes=6, "
               "random_state=0)\n"
               "est = ReinforcedMSVM(kernel='linear', C=100)\n"),
    "dc": ("from msvm import RobustMSVM\n"
           "X, y = make_classification(4000, 10, n_informative=6, n_classes=4, "
           "random_state=0)\n"
           "est = RobustMSVM(kernel='rbf', C=100)\n"),
    "probability": ("from msvm import ReinforcedMSVM\n"
                    "X, y = make_classification(3000, 10, n_informative=6, n_classes=4, "
                    "random_state=0)\n"
                    "est = ReinforcedMSVM(kernel='rbf', C=10, probability=True)\n"),
    "tuning": ("from msvm import ReinforcedMSVM\n"
               "from msvm.model_selection import TuningSetSearch, lambda_grid\n"
               "X, y = make_classification(6000, 20, n_informative=10, n_classes=4, "
               "random_state=0)\n"
               "est = TuningSetSearch(ReinforcedMSVM(kernel='rbf'), "
               "lambdas=lambda_grid(-16, 0))\n"),
    "dask-local": ("import numpy as np, dask.array as da\n"
                   "from msvm import WestonWatkinsMSVM\n"
                   "X, y = make_classification(400, 6, n_informative=4, n_redundant=0, "
                   "n_classes=3, random_state=2)\n"
                   "X, y = da.from_array(np.tile(X, (120, 1)), chunks=2000), np.tile(y, 120)\n"
                   "est = WestonWatkinsMSVM(kernel='linear', tol=1e-8)\n"),
}
SETUP["dask-cluster"] = SETUP["dask-local"] + (
    "import distributed\n"
    "cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,"
    " memory_limit='1GiB', dashboard_address=None)\n"
    "client = distributed.Client(cluster)\n")
SETUP["dask-gc-callback"] = SETUP["dask-local"] + textwrap.dedent("""
    import gc, threading
    def busy_callback(phase, info):
        if threading.current_thread() is threading.main_thread():
            end = time.perf_counter() + 0.005
            while time.perf_counter() < end:
                pass
    gc.callbacks.append(busy_callback)
    """)

CHILD = """
import signal, sys, time, warnings
# a terminal process's SIGINT state: a child inherits ignored and blocked signals (a shell's
# background job ignores SIGINT)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
from sklearn.datasets import make_classification
import msvm._core._signals as signals
signals.KEEP_CTRL_C = {keep}
sys.unraisablehook = lambda u: print("swallowed", type(u.exc_value).__name__, flush=True)
{setup}
warnings.simplefilter("ignore")
print("fitting", flush=True)
start = time.perf_counter()
try:
    est.fit(X, y)
except KeyboardInterrupt:
    print(f"interrupted {{time.time():.6f}} {{time.process_time():.4f}}", flush=True)
else:
    print(f"finished {{time.perf_counter() - start:.1f}}", flush=True)
"""


def child_cpu(pid):
    """The child's CPU time (user + system, s) from /proc, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(case, keep, delay):
    """(wall latency, CPU latency, swallowed count, outcome) of one child's interrupted fit."""
    script = CHILD.format(keep=keep, setup=SETUP[case])
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("fitting"):
            break
    time.sleep(delay)
    cpu_sent = child_cpu(proc.pid)
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=900)
    lines += out.splitlines()
    swallowed = sum(line.startswith("swallowed KeyboardInterrupt") for line in lines)
    for line in lines:
        if line.startswith("interrupted"):
            at, cpu = map(float, line.split()[1:])
            return at - sent, cpu - cpu_sent, swallowed, "KeyboardInterrupt"
        if line.startswith("finished"):
            return None, None, swallowed, f"lost (fit ended after {line.split()[1]} s)"
    return None, None, swallowed, "no answer"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=list(SETUP))
    parser.add_argument("--delays", nargs="+", type=float, default=[0.3, 0.7, 1.1],
                        help="seconds from 'fitting' to SIGINT, one run each")
    parser.add_argument("--before-cases", nargs="+",
                        default=["dask-local", "dask-cluster", "dask-gc-callback"],
                        help="cases also run with KEEP_CTRL_C off (before)")
    parser.add_argument("--render", action="store_true",
                        help="write the .md from the .json of the last run")
    args = parser.parse_args(argv)
    if args.render:
        with open(os.path.join(RESULTS, "interrupt_latency.json")) as f:
            saved = json.load(f)
        write(saved["runs"], saved["header"])
        return
    runs = []
    for case in args.cases:
        modes = ["before", "after"] if case in args.before_cases else ["after"]
        for delay in args.delays:
            for mode in modes:
                load = os.getloadavg()[0]
                wall, cpu, swallowed, outcome = one_run(case, mode == "after", delay)
                runs.append(dict(case=case, mode=mode, delay=delay, load=load, wall=wall,
                                 cpu=cpu, swallowed=swallowed, outcome=outcome))
                print(runs[-1], flush=True)
    header = dict(commit=git_commit(), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                  command=" ".join(["python -m benchmarks.run_interrupt_latency", *sys.argv[1:]]))
    write(runs, header)


def ms(v):
    return "-" if v is None else f"{1e3 * v:.0f}"


def summary(runs):
    """Per case and mode: runs, Ctrl-Cs lost, median and largest wall latency (ms)."""
    rows = []
    for key in dict.fromkeys((r["case"], r["mode"]) for r in runs):
        group = [r for r in runs if (r["case"], r["mode"]) == key]
        walls = sorted(r["wall"] for r in group if r["wall"] is not None)
        median = walls[len(walls) // 2] if walls else None
        rows.append([*key, len(group), len(group) - len(walls), ms(median),
                     ms(walls[-1] if walls else None)])
    return markdown_table(["case", "mode", "runs", "lost", "median wall ms", "max wall ms"],
                          rows)


def write(runs, header):
    rows = [[r["case"], r["mode"], r["delay"], f"{r['load']:.1f}", ms(r["wall"]),
             ms(r["cpu"]), r["swallowed"], r["outcome"]] for r in runs]
    table = markdown_table(["case", "mode", "delay s", "load", "wall ms", "CPU ms",
                            "KeyboardInterrupts swallowed", "outcome"], rows)
    text = (f"# Ctrl-C latency (real SIGINT from another process)\n\n"
            f"Commit {header['commit']}, {header['date']}, `{header['command']}`, "
            f"load (1-minute average) in the table: a machine shared with other work.\n"
            f"SIGINT sent `delay` s after the child starts its fit; latency = time from "
            f"the signal to KeyboardInterrupt in the child (wall, and the child's CPU time, "
            f"10 ms ticks).  before = `KEEP_CTRL_C = False` (main 5c4386a's behaviour), "
            f"after = this commit; alternating runs.  See the script's docstring.\n\n"
            f"{summary(runs)}\n\nEvery run:\n\n{table}\n")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "interrupt_latency.md"), "w") as f:
        f.write(text)
    with open(os.path.join(RESULTS, "interrupt_latency.json"), "w") as f:
        f.write(to_json(dict(header=header, runs=runs)))


if __name__ == "__main__":
    main()
