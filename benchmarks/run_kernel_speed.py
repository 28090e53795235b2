"""Large-C kernel fits whose free set is large (issue 23 item 1), in one process.

    python -m benchmarks.run_kernel_speed                 # the n = 2,000 cases
    python -m benchmarks.run_kernel_speed --n 2000 5000   # more sizes
    python -m benchmarks.run_kernel_speed --C 1e3 1e5     # other C
    python -m benchmarks.run_kernel_speed --n 5000 --output kernel_speed_5000  # other files
    python -m benchmarks.run_kernel_speed --output NAME --note "..."  # a line in the .md
    python -m benchmarks.run_kernel_speed --output NAME --note "..." --rewrite  # .md from .json

(from the repository root)

make_blobs(n, centers=3, n_features=5, cluster_std=4, random_state=0), RBF kernel,
gamma='scale', default tol and max_iter: ReinforcedMSVM, AngleBasedMSVM and (``--models``)
LLW, i.e. ReinforcedMSVM(reinforcement=0).  For each fit:
CPU time (time.process_time), converged_, epochs (n_iter_), exact finishing steps taken
(solver_plan_), objective_ and kkt_residual_, and the free-set trace: the number of free
variables at each budget stop of the solver, marked * where the finishing step was tried,
+ where it returned a point, L before the solver's last run, and the finishing step's CPU
seconds in parentheses where it took at least 0.5 s (read by wrapping
``msvm._sequence._finish_due`` and ``finish_dual`` for the fit: instrumentation only).  The
machine may be shared with other work: read CPU times, not wall times.  Results go to
benchmarks/results/kernel_speed.md and .json (or the --output name), rewritten after every
fit.
"""

import argparse
import contextlib
import json
import os
import time
import warnings

from benchmarks.harness import RESULTS, git_commit, machine_info, markdown_table, write_json


# measured on the code before this round's changes of the finishing step (not rerun here)
BEFORE = ("Before (commit 2a71e0c, same machine and session, default max_iter): "
          "ReinforcedMSVM n = 2000, C = 1e5 stopped at max_iter (10,000 epochs, 32.9 s CPU, "
          "KKT residual 0.283, objective 56,901,405).\n\n"
          "Before the held-column score updates, the no-re-release rule and the shrinking-"
          "free-set schedule of the finishing step (commit e49d7b2, load 5-7, default "
          "max_iter): ReinforcedMSVM n = 2000, C = 1e5 converged in 34.85 s CPU (3,201 "
          "epochs, 6 finishing attempts of which 5 thrown away: 21.9 s of finishing); "
          "AngleBasedMSVM stopped at max_iter (10,000 epochs, 68.3 s, KKT residual 0.0249, "
          "objective 52,217,792).\n\n")


@contextlib.contextmanager
def _free_set_trace():
    """A list that receives one entry per budget stop of the fit's solver (see the module
    docstring)."""
    from msvm import _sequence
    trace = []
    due_before, finish_before = _sequence._finish_due, _sequence.finish_dual

    def due(problem, alpha, free_before, last):
        free, go = due_before(problem, alpha, free_before, last)
        trace.append(f"{free}{'L' if last else ''}")
        return free, go

    def finish(*args, **kwargs):
        cpu = time.process_time()
        found = finish_before(*args, **kwargs)
        cpu = time.process_time() - cpu
        trace[-1] += ("*+" if found is not None else "*") + (f"({cpu:.0f}s)" if cpu >= 0.5
                                                            else "")
        return found

    _sequence._finish_due, _sequence.finish_dual = due, finish
    try:
        yield trace
    finally:
        _sequence._finish_due, _sequence.finish_dual = due_before, finish_before


def _fit(model, n, C):
    from sklearn.datasets import make_blobs

    from msvm import AngleBasedMSVM, ReinforcedMSVM
    X, y = make_blobs(n_samples=n, centers=3, n_features=5, cluster_std=4.0, random_state=0)
    est = {"ReinforcedMSVM": ReinforcedMSVM, "AngleBasedMSVM": AngleBasedMSVM,
           "LLW": lambda **kw: ReinforcedMSVM(reinforcement=0.0, **kw)}[model](
        C=C, kernel="rbf", gamma="scale")
    cpu = time.process_time()
    with warnings.catch_warnings(record=True) as caught, _free_set_trace() as trace:
        warnings.simplefilter("always")
        est.fit(X, y)
    cpu = time.process_time() - cpu
    finishing = sum(step.finishing_steps for step in est.solver_plan_.steps)
    return {"model": model, "n": n, "C": C, "cpu_s": round(cpu, 2),
            "converged": bool(est.converged_), "epochs": int(est.n_iter_),
            "finishing_steps": int(finishing), "objective": float(est.objective_),
            "kkt_residual": float(est.kkt_residual_), "warnings": len(caught),
            "free_sets": " ".join(trace)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[2000])
    parser.add_argument("--C", type=float, nargs="+", default=[1e5])
    parser.add_argument("--models", nargs="+", default=["ReinforcedMSVM", "AngleBasedMSVM"])
    parser.add_argument("--output", default="kernel_speed",
                        help="name of the result files in benchmarks/results (.md, .json)")
    parser.add_argument("--note", default="", help="a sentence for the .md (what was run)")
    parser.add_argument("--rewrite", action="store_true",
                        help="only rewrite the .md from the .json of --output, with --note")
    args = parser.parse_args(argv)
    if args.rewrite:
        with open(os.path.join(RESULTS, args.output + ".json")) as fh:
            saved = json.load(fh)
        saved["info"]["note"] = args.note
        _write(args.output, saved["rows"], saved["info"])
        return
    rows = []
    # the commit of the code the fits import, read before the first fit (a later commit
    # during a long run would otherwise label the results)
    info = {"commit": git_commit(), "machine": machine_info(),
            "load_at_start": os.getloadavg()[0], "note": args.note}
    for n in args.n:
        for C in args.C:
            for model in args.models:
                rows.append(_fit(model, n, C))
                print(rows[-1], flush=True)
                _write(args.output, rows, info)


def _write(output, rows, info):
    """Write the results so far (.json and .md)."""
    load = info["load_at_start"]
    write_json(os.path.join(RESULTS, output + ".json"), {"info": info, "rows": rows})
    cols = ["model", "n", "C", "cpu_s", "converged", "epochs", "finishing_steps", "objective",
            "kkt_residual", "warnings", "free_sets"]
    text = ("# Large-C RBF fits with large free sets (issue 23 item 1)\n\n"
            f"Commit {info['commit']}, load average {load:.1f} at the start (the machine was "
            "shared: CPU times).  free_sets: free variables at each budget stop of the "
            "solver (* finishing step tried, + it returned a point, L before the last run, "
            "(CPU s of the finishing step))."
            "\n\n" + (info["note"] + "\n\n" if info.get("note") else "")
            + (BEFORE if output == "kernel_speed" else "")
            + markdown_table(cols, [[r.get(c, "") for c in cols] for r in rows]) + "\n")
    with open(os.path.join(RESULTS, output + ".md"), "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
