"""Cost of the intercept step: the exact breakpoint search against the LP (HiGHS).

    python -m benchmarks.run_intercept_benchmarks            # n = 2k and 20k, k = 3 and 5
    python -m benchmarks.run_intercept_benchmarks --quick    # n = 500 and 1000 (seconds)

(from the repository root)

For each n and k: make_classification data (20 features, 10 informative, standardized), the
linear kernel at C = 1 and the default tol, fitted with ``intercept_solver='exact'`` (the
default) and ``'linprog'``:

- ReinforcedMSVM (every loss term involves one class: the exact search applies) and
  WestonWatkinsMSVM (pairwise terms: the default takes the solver's KKT multipliers): CPU time
  of the whole fit with each option, the relative difference of the objectives and the largest
  difference of the intercepts;
- the intercept step alone for ReinforcedMSVM, on the fitted functions h: the breakpoint search
  (``msvm._intercept.exact_intercepts``) against the LP (``lp_intercepts``), CPU time of each.

Writes benchmarks/results/intercepts.md and .json (quick_intercepts.* with --quick).  CPU times
(time.process_time), since the machine may be shared; one fit per cell.
"""

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.preprocessing import StandardScaler

from benchmarks.harness import fmt, git_commit, machine_info, markdown_table, write_json
from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm._intercept import exact_intercepts, lp_intercepts

RESULTS = Path(__file__).resolve().parent / "results"
MODELS = {"ReinforcedMSVM": ReinforcedMSVM, "WestonWatkinsMSVM": WestonWatkinsMSVM}


def _data(n, k):
    X, y = make_classification(n_samples=n, n_features=20, n_informative=10, n_redundant=0,
                               n_classes=k, random_state=0)
    return StandardScaler().fit_transform(X), y


def _cpu_fit(est, X, y):
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return time.process_time() - start, est


def _step_alone(est, X, y):
    """CPU s of the exact search and of the LP on the fitted ReinforcedMSVM's h."""
    k = len(est.classes_)
    codes = np.searchsorted(est.classes_, y).astype(np.int32)
    problem = est._dual_problem(codes, k, est.C * np.ones(len(y)))
    H = est.decision_function(X) - est.intercept_          # h at the training points
    start = time.process_time()
    b_exact = exact_intercepts(problem, H, b0=est.intercept_)
    t_exact = time.process_time() - start
    start = time.process_time()
    b_lp, _ = lp_intercepts(problem, H)
    t_lp = time.process_time() - start
    return t_exact, t_lp, float(np.abs(b_lp - b_lp.mean() - b_exact).max())


def run(sizes, ks):
    rows = []
    for n in sizes:
        for k in ks:
            X, y = _data(n, k)
            for name, cls in MODELS.items():
                t_exact, exact = _cpu_fit(cls(kernel="linear"), X, y)
                t_lp, lp = _cpu_fit(cls(kernel="linear", intercept_solver="linprog"), X, y)
                row = {"model": name, "n": n, "k": k, "fit_exact": t_exact, "fit_linprog": t_lp,
                       "objective_rel_diff": (lp.objective_ - exact.objective_)
                       / abs(exact.objective_),
                       "intercept_max_diff": float(np.abs(lp.intercept_
                                                          - exact.intercept_).max())}
                if name == "ReinforcedMSVM":
                    row["step_exact"], row["step_linprog"], row["step_b_diff"] = \
                        _step_alone(exact, X, y)
                rows.append(row)
                print(row, flush=True)
    return rows


def render(rows, quick):
    table = [[r["model"], r["n"], r["k"], fmt(r["fit_exact"], ".2f"),
              fmt(r["fit_linprog"], ".2f"), fmt(r["fit_linprog"] / r["fit_exact"], ".2f"),
              fmt(r.get("step_exact"), ".4f"), fmt(r.get("step_linprog"), ".3f"),
              fmt(r["objective_rel_diff"], ".1e"), fmt(r["intercept_max_diff"], ".1e")]
             for r in rows]
    header = ["model", "n", "k", "fit CPU s, exact", "fit CPU s, linprog", "ratio",
              "step CPU s, exact", "step CPU s, linprog", "objective rel. diff (lp - exact)",
              "max abs(b_lp - b_exact)"]
    info = machine_info()
    return (
        "# The intercept step: exact breakpoint search against the LP (HiGHS)\n\n"
        "Written by `python -m benchmarks.run_intercept_benchmarks"
        f"{' --quick' if quick else ''}` (commit {git_commit()}), on "
        f"{info.get('cpu', '?')} ({info.get('logical_cpus', '?')} logical CPUs, shared with "
        "other work: CPU times, one fit per cell).\n\n"
        "make_classification data (20 features, 10 informative, standardized), linear kernel, "
        "C = 1, default tol; `intercept_solver='exact'` (the default) against `'linprog'`. "
        "ReinforcedMSVM: every loss term involves one class, so the default is the exact "
        "breakpoint search; the step columns time the search and the LP alone on the same "
        "fitted h. WestonWatkinsMSVM: pairwise terms, so the default takes the solver's KKT "
        "multipliers and the LP is the only exact step.\n\n"
        + markdown_table(header, table) + "\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    sizes = (500, 1000) if args.quick else (2000, 20000)
    rows = run(sizes, (3, 5))
    stem = "quick_intercepts" if args.quick else "intercepts"
    (RESULTS / f"{stem}.md").write_text(render(rows, args.quick), encoding="utf-8")
    write_json(RESULTS / f"{stem}.json", {"quick": args.quick, "rows": rows,
                                          "machine": machine_info(), "git": git_commit()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
