"""The smoothed-primal start's Newton steps a stage (``msvm._primal.NEWTON_MAX_ITER``).

    python -m benchmarks.newton_cap [--repeat 2] [--cap 60] [--only NAME,...]
    python -m benchmarks.newton_cap --render      # the section again from the JSON

(from the repository root).  Every case is fitted in one process, alternating the arms
'main' (``msvm._primal.NEWTON_MAX_ITER = 150``: every stage of the smoothed-primal
continuation stops at 150 Newton steps) and 'long' (``NEWTON_MAX_ITER = 1000``, set on the
module for the fit; no Dask fit here, the only other reader); reported per arm: the least
CPU time (``time.process_time``) of ``--repeat`` runs (one run where a fit takes over 5 s),
whether the fit converged, its ``n_iter_`` summed, its objective, and the continuation's
Newton solves that stopped at the stage cap without reaching their tolerance.  A fit is
ended after ``--cap`` CPU seconds (an ITIMER_PROF alarm; the cell says "capped").  Writes
benchmarks/results/newton_cap.json and the section "Round 18, later: the Newton cap" of
benchmarks/results/precision_floor.md.  Timings are measured and reported, never asserted.
"""

import argparse
import contextlib
import json
import os
import signal
import subprocess
import time
import warnings
from datetime import datetime, timezone

import numpy as np

from benchmarks.harness import markdown_table, module_settings

RESULTS = os.path.join(os.path.dirname(__file__), "results")
JSON = os.path.join(RESULTS, "newton_cap.json")
REPORT = os.path.join(RESULTS, "precision_floor.md")
TITLE = "## Round 18, later: the Newton cap"
ARMS = ("main", "long")


# ------------------------------------------------------------------------------ cases
def blobs(n):
    """make_blobs of the convergence matrix: 3 overlapping classes in d = 3."""
    from sklearn.datasets import make_blobs

    return make_blobs(n_samples=n, centers=3, n_features=3, cluster_std=2.0, random_state=0)


def classification(n, d, k):
    """make_classification with k classes in d features (random_state 0)."""
    from sklearn.datasets import make_classification

    return make_classification(n_samples=n, n_features=d, n_informative=min(d, 10),
                               n_classes=k, n_clusters_per_class=1, random_state=0)


def cases():
    """[(name, make estimator, X, y)] of the measured fits."""
    from msvm import ReinforcedMSVM, RobustMSVM, WeightedRobustMSVM

    Xb, yb = blobs(3000)
    Xc, yc = classification(5000, 20, 5)
    Xr, yr = classification(20000, 20, 5)
    return [
        ("RobustMSVM linear blobs n=3000 C=1e8",
         lambda: RobustMSVM(C=1e8, kernel="linear"), Xb, yb),
        ("RobustMSVM precomputed blobs n=3000 C=1e8",
         lambda: RobustMSVM(C=1e8, kernel="precomputed"), Xb @ Xb.T, yb),
        ("RobustMSVM linear blobs n=3000 C=1e6",
         lambda: RobustMSVM(C=1e6, kernel="linear"), Xb, yb),
        ("WeightedRobustMSVM(auto) linear n=5000 d=20 k=5 C=1",
         lambda: WeightedRobustMSVM(C=1.0, kernel="linear"), Xc, yc),
        ("WeightedRobustMSVM(auto) linear n=5000 d=20 k=5 C=1e4",
         lambda: WeightedRobustMSVM(C=1e4, kernel="linear"), Xc, yc),
        ("ReinforcedMSVM linear n=20000 d=20 k=5 C=1e3",
         lambda: ReinforcedMSVM(C=1e3, kernel="linear"), Xr, yr),
    ]


# ------------------------------------------------------------------------------ one fit
@contextlib.contextmanager
def cpu_cap(seconds):
    """Raise TimeoutError in the block after ``seconds`` of process CPU time."""
    def alarm(signum, frame):
        raise TimeoutError

    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


@contextlib.contextmanager
def counted_newton():
    """Count the continuation's Newton solves and those that stopped at the stage cap
    without reaching their tolerance; yields a dict."""
    from msvm import _primal

    counts = {"solves": 0, "at_cap": 0, "most_steps": 0}
    original = _primal.SmoothedPrimal.newton

    def newton(self, V, b, gtol, max_steps=_primal.NEWTON_MAX_ITER, **kwargs):
        out = original(self, V, b, gtol, max_steps, **kwargs)
        counts["solves"] += 1
        counts["most_steps"] = max(counts["most_steps"], self.steps)
        if not self.reached and self.steps >= max_steps:
            counts["at_cap"] += 1
        return out

    _primal.SmoothedPrimal.newton = newton
    try:
        yield counts
    finally:
        _primal.SmoothedPrimal.newton = original


def fit_once(make, X, y, arm, cap):
    """One fit in ``arm``: a dict of its CPU time, state, epochs, objective, Newton counts."""
    from msvm import _primal

    est = make()
    cap_steps = 1000 if arm == "long" else 150
    with module_settings((_primal, "NEWTON_MAX_ITER", cap_steps)), counted_newton() as nc, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        try:
            with cpu_cap(cap):
                est.fit(X, y)
        except TimeoutError:
            return {"state": "capped", "cpu": time.process_time() - start, **nc}
        cpu = time.process_time() - start
    warned = any(issubclass(w.category, Warning) and "Converge" in w.category.__name__
                 for w in caught)
    objective = getattr(est, "objective_", None)
    return {"state": "ok" if getattr(est, "converged_", not warned) else "max_iter",
            "warned": warned, "cpu": cpu, "epochs": int(np.sum(est.n_iter_)),
            "objective": None if objective is None else float(objective), **nc}


def run_case(name, make, X, y, repeat, cap):
    """Both arms of a case, alternating; a repeat only while every fit is under 5 s."""
    runs = {arm: [] for arm in ARMS}
    for r in range(repeat):
        for arm in (ARMS if r % 2 == 0 else ARMS[::-1]):
            runs[arm].append(fit_once(make, X, y, arm, cap))
            print(name, arm, runs[arm][-1], flush=True)
        if any(run["cpu"] > 5.0 or run["state"] == "capped" for arm in ARMS
               for run in runs[arm]):
            break
    return {"case": name, "runs": runs}


# ------------------------------------------------------------------------------ report
def _cell(runs):
    best = min(runs, key=lambda run: run["cpu"])
    if best["state"] == "capped":
        return f"capped ({best['cpu']:.1f} s)", best
    times = ", ".join(f"{run['cpu']:.2f}" for run in runs)
    return f"{best['state']} {times} s / n_iter_ {best['epochs']} / {best['at_cap']} at cap", best


def _relative(a, b):
    if a is None or b is None:
        return "-"
    return f"{(b - a) / max(abs(a), 1e-300):+.1e}"


def render(data):
    """The section's Markdown from the JSON."""
    rows = []
    for case in data["cases"]:
        main, best_main = _cell(case["runs"]["main"])
        long, best_long = _cell(case["runs"]["long"])
        ratio = (f"{best_long['cpu'] / best_main['cpu']:.2f}x"
                 if "capped" not in (best_main["state"], best_long["state"]) else "-")
        rows.append([case["case"], main, long, ratio,
                     _relative(best_main.get("objective"), best_long.get("objective")),
                     f"{best_main['most_steps']} / {best_long['most_steps']}"])
    table = markdown_table(["fit", "main (cap 150): state CPU s / n_iter_ summed / solves at cap",
                            "long (cap 1000)", "long / main CPU", "objective long vs main",
                            "most Newton steps in a solve main / long"], rows)
    return "\n".join([TITLE, "", data["preamble"], "", table, "", data.get("notes", ""), ""])


def write_section(text):
    """Replace (or append) the section in precision_floor.md."""
    with open(REPORT) as f:
        report = f.read()
    if TITLE in report:
        head, tail = report.split(TITLE, 1)
        rest = tail.split("\n## ", 1)
        report = head + text + ("\n## " + rest[1] if len(rest) > 1 else "")
    else:
        report = report.rstrip("\n") + "\n\n\n" + text
    with open(REPORT, "w") as f:
        f.write(report)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cap", type=int, default=60)
    parser.add_argument("--only", default="")
    parser.add_argument("--render", action="store_true")
    args = parser.parse_args()
    if args.render:
        with open(JSON) as f:
            write_section(render(json.load(f)))
        return
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = os.getloadavg()
    results = []
    for name, make, X, y in cases():
        if args.only and not any(part in name for part in args.only.split(",")):
            continue
        results.append(run_case(name, make, X, y, args.repeat, args.cap))
    load_end = os.getloadavg()
    preamble = (f"`python -m benchmarks.newton_cap` (commit {commit}, "
                f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, load "
                f"{load[0]:.1f} -> {load_end[0]:.1f}; 2 cores shared).  One process, arms "
                f"alternating: 'main' is main c309987 (each stage of the smoothed-primal "
                f"continuation stops at `msvm._primal.NEWTON_MAX_ITER` = 150 Newton steps), "
                f"'long' is the same code with NEWTON_MAX_ITER = 1000 set on the module.  CPU "
                f"seconds (`time.process_time`), every run listed, least of {args.repeat} "
                f"where every fit is under 5 s, else one; a fit is ended after {args.cap} s "
                f"CPU ('capped').  'at cap': the fit's Newton solves that stopped at the "
                f"stage cap without reaching their tolerance.")
    data = {"preamble": preamble, "cases": results}
    if os.path.exists(JSON):
        with open(JSON) as f:
            data["notes"] = json.load(f).get("notes", "")
    with open(JSON, "w") as f:
        json.dump(data, f, indent=1)
    write_section(render(data))


if __name__ == "__main__":
    main()
