"""Where "exact at any C" stands: one (model, kernel, n, C) matrix of fits (issue 23 item 1).

Run from the repository root, under ``nice``:
``nice -n 10 python -m benchmarks.run_convergence_matrix [--cells small,large]
[--n 5,30] [--models A,B] [--cap 120] [--dry]``.

Every cell is one fit at the defaults (tol, max_iter) on make_blobs (3 classes, d = 3,
cluster_std = 2.0 so the classes overlap, random_state 0; n = 5 has 2 classes), run in a
worker process with one BLAS thread; a fit still running after ``--cap`` wall seconds is
ended with its worker (the cell says "capped") and a new worker takes the next cell.  Per
cell: ``converged_``, ``stop_reason_`` and the first ConvergenceWarning's text, CPU seconds
of the fit (``time.process_time`` in the worker), ``n_iter_`` and, for n <= 300 and the
convex models, the relative gap of ``objective_`` to the optimum of the independent
reference (``oracle``: cvxpy + Clarabel on the primal, as tests/test_objective_accuracy.py
computes it; "ref failed" where the reference does not solve).  For the DC fits
(RobustMSVM, AdaptiveWeightedSVM) ``converged_`` is True only when the outer loop stopped
on its rule and every convex step converged (``stop_reason_`` names the loop's stop, or
else the last convex step that stopped early); there is no global reference for them.

The small cells (models x kernels x C x n in SMALL_N) and the large ones (rbf, n in
LARGE_N, C in LARGE_C) are merged into benchmarks/results/convergence_matrix.json by key,
so the two can be run (or rerun) separately; the Markdown page is written from the JSON.
"""

import argparse
import multiprocessing
import os
import time
import warnings
from collections import Counter, defaultdict

import numpy as np

from benchmarks.harness import RESULTS, git_commit, markdown_table, write_json

MD_PATH, JSON_PATH = RESULTS / "convergence_matrix.md", RESULTS / "convergence_matrix.json"
# the before/after refits of compare_cells, and the reference gaps of reference_pass (files of
# their own: they may run beside the matrix)
COMPARE_PATH = RESULTS / "convergence_matrix_compare.json"
REFS_PATH = RESULTS / "convergence_matrix_refs.json"
MODELS = ("ReinforcedMSVM", "LLW", "WestonWatkinsMSVM", "AngleBasedMSVM",
          "WeightedRobustMSVM", "AdaptiveWeightedSVM", "RobustMSVM")
DC_MODELS = ("AdaptiveWeightedSVM", "RobustMSVM")
KERNELS = ("linear", "rbf", "poly", "precomputed")
C_GRID = (1e-4, 1e-2, 1.0, 1e2, 1e4, 1e6, 1e8)
SMALL_N = (5, 30, 300, 3000)
LARGE_N = (10_000, 30_000)
LARGE_C = (1.0, 1e2, 1e4)
# up to this n the cell is compared with the reference optimum, which gets this many wall
# seconds after the fit
REFERENCE_MAX_N = 300
REFERENCE_CAP = 900.0
# the utility matrix of WeightedRobustMSVM (rows: true class), for k = 3 and k = 2
UTILITY = {3: np.array([[1.0, 0.3, 0.1], [0.2, 1.0, 0.4], [0.3, 0.1, 1.0]]),
           2: np.array([[1.0, 0.3], [0.2, 1.0]])}


# --------------------------------------------------------------------------- one cell
def cell_data(n):
    """(X, y, k) of a cell: make_blobs, 3 overlapping classes in d = 3 (2 classes at n = 5)."""
    from sklearn.datasets import make_blobs

    k = 2 if n <= 5 else 3
    X, y = make_blobs(n_samples=n, centers=k, n_features=3, cluster_std=2.0, random_state=0)
    return X, y, k


def make_estimator(model, C, kernel, k):
    """The estimator of a cell (kernel 'precomputed' takes the linear Gram matrix)."""
    from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                      WeightedRobustMSVM, WestonWatkinsMSVM)

    common = dict(C=C, kernel=kernel, degree=2)
    if model == "LLW":
        return ReinforcedMSVM(reinforcement=0.0, **common)
    if model == "WeightedRobustMSVM":
        return WeightedRobustMSVM(utility=UTILITY[k], truncation=None, **common)
    return {"ReinforcedMSVM": ReinforcedMSVM, "WestonWatkinsMSVM": WestonWatkinsMSVM,
            "AngleBasedMSVM": AngleBasedMSVM, "AdaptiveWeightedSVM": AdaptiveWeightedSVM,
            "RobustMSVM": RobustMSVM}[model](**common)


def reference_optimum(model, est, X, y, k, C, kernel):
    """The optimum of the cell's convex problem from the independent reference."""
    from oracle import (cvx_angle_loss, cvx_weighted_loss, cvx_ww_loss, kernel_matrix,
                        penalty, primal_fit, reference_fit, reinforced_loss, vertices,
                        weighted_loss, ww_loss)

    n = len(y)
    w = np.ones(n)
    if kernel in ("linear", "precomputed"):
        K = X @ X.T
    else:
        K = kernel_matrix(X, X, kernel, gamma=est.gamma_, degree=est.degree, coef0=est.coef0)
    if model in ("ReinforcedMSVM", "LLW"):
        return reference_fit(K, y, w, C, est.reinforcement, k=k)[0]
    if model == "WestonWatkinsMSVM":
        V, b, F = primal_fit(K, k, cvx_ww_loss(y, w, C))
        return penalty(V, K) + C * ww_loss(F, y, w)
    if model == "WeightedRobustMSVM":
        U = UTILITY[k]
        V, b, F = primal_fit(K, k, cvx_weighted_loss(y, w, C, U))
        return penalty(V, K) + C * weighted_loss(F, y, w, U, None)
    V, b, F = primal_fit(K, k - 1, cvx_angle_loss(y, w, C, est.reinforcement, k),
                         sum_to_zero=False)
    return penalty(V, K) + C * reinforced_loss(F @ vertices(k), y, w, est.reinforcement)


def fit_cell(cell, before=False):
    """Fit one cell: (what the matrix records, the fitted estimator).  ``before``: with main
    5c4386a's finishing-step budget (msvm._finish.SETTLE_FRESH off)."""
    from sklearn.exceptions import ConvergenceWarning

    import msvm._finish

    msvm._finish.SETTLE_FRESH = not before
    model, kernel, n, C = cell
    X, y, k = cell_data(n)
    est = make_estimator(model, C, kernel, k)
    data = X @ X.T if kernel == "precomputed" else X
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cpu = time.process_time()
        est.fit(data, y)
        cpu = time.process_time() - cpu
    conv = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    res = {"converged": bool(est.converged_), "stop_reason": str(est.stop_reason_),
           "warnings": len(conv), "warning": conv[0][:300] if conv else "",
           "cpu": cpu, "n_iter": int(est.n_iter_), "objective": float(est.objective_),
           "duality_gap": float(getattr(est, "duality_gap_", np.nan)),
           "kkt_residual": float(getattr(est, "kkt_residual_", np.nan)),
           "plan": str(getattr(est, "solver_plan_", ""))[:200]}
    return res, est


def reference_gap(cell, est):
    """The cell's reference optimum and the relative gap of ``est.objective_`` to it, or
    the reference's error."""
    model, kernel, n, C = cell
    X, y, k = cell_data(n)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            optimum = float(reference_optimum(model, est, X, y, k, C, kernel))
    except Exception as exc:                       # the reference itself did not solve
        return {"ref_error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    return {"optimum": optimum,
            "rel_gap": (est.objective_ - optimum) / max(abs(optimum), 1e-12)}


def wants_reference(cell, ref_max_n, before, reference):
    """Whether the cell is compared with the reference: n up to ``ref_max_n``, a convex
    model, and the branch's fit (``before`` only with ``reference``)."""
    return cell[2] <= ref_max_n and cell[0] not in DC_MODELS and (reference or not before)


def _worker(conn):
    """Fit the cells sent on ``conn`` one after another: each fit's result, then (where
    asked) its reference gap as a second message."""
    while True:
        job = conn.recv()
        if job is None:
            return
        cell, before, with_reference = job
        try:
            res, est = fit_cell(cell, before)
        except Exception as exc:                   # a fit that raised: recorded, not fatal
            conn.send({"error": f"{type(exc).__name__}: {str(exc)[:300]}"})
            continue
        conn.send(res)
        if with_reference:
            conn.send(reference_gap(cell, est))


class Worker:
    """A spawned worker process (one BLAS thread) that fits cells; restarted after a cap."""

    def __init__(self):
        os.environ.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        self.alive = True

    def cpu(self):
        """CPU seconds the worker has used (user + system)."""
        import psutil

        times = psutil.Process(self.proc.pid).cpu_times()
        return times.user + times.system

    def fit(self, cell, cap, ref_max_n, before=False, reference=False):
        """The cell's result, or {'capped': True, 'cpu': CPU seconds used by then} after
        ``cap`` wall seconds (the worker is then ended: ``alive`` False).  The reference,
        where the cell wants one, gets REFERENCE_CAP wall seconds of its own."""
        start, cpu = time.perf_counter(), self.cpu()
        with_reference = wants_reference(cell, ref_max_n, before, reference)
        self.conn.send((cell, before, with_reference))
        if self.conn.poll(cap):
            res = self.conn.recv()
        else:
            res = {"capped": True, "cpu": self.cpu() - cpu}
            self.close(kill=True)
        res["wall"] = time.perf_counter() - start
        if with_reference and self.alive and "error" not in res:
            if self.conn.poll(REFERENCE_CAP):
                res.update(self.conn.recv())
            else:
                res["ref_error"] = f"the reference took more than {REFERENCE_CAP:.0f} s"
                self.close(kill=True)
        return res

    def close(self, kill=False):
        if kill:
            self.proc.kill()
        else:
            self.conn.send(None)
        self.proc.join()
        self.alive = False


# --------------------------------------------------------------------------- the matrix
def small_cells(ns, models):
    return [(m, kern, n, C) for n in ns for m in models for kern in KERNELS for C in C_GRID]


def large_cells(ns, models):
    return [(m, "rbf", n, C) for n in ns for m in models for C in LARGE_C]


def key(cell):
    model, kernel, n, C = cell
    return f"{model}|{kernel}|{n}|{C:g}"


def compare_cells(data, cap, ref_max_n):
    """Refit, alternating main's finishing-step budget ('before') and this branch's, every
    recorded cell whose fit the change can move: a model without group caps whose solve
    reached a budget stop (n_iter_ above FINISH_AFTER = 100 epochs, where the finishing step
    is tried), and every RobustMSVM cell from n = 300 (its convex steps, n_iter_ counts
    them).  The cell keeps the branch's result, its 'before' the other."""
    todo = [c for c in data["cells"].values()
            if c["model"] not in ("WeightedRobustMSVM", "AdaptiveWeightedSVM")
            and not c.get("skipped") and "before" not in c
            and (c.get("capped") or c.get("n_iter", 0) > 100
                 or (c["model"] == "RobustMSVM" and c["n"] >= 300))]
    compared = _load(COMPARE_PATH, {})
    todo = [c for c in todo if key((c["model"], c["kernel"], c["n"], c["C"])) not in compared]
    worker = Worker()
    for c in todo:
        cell = (c["model"], c["kernel"], c["n"], c["C"])
        both = {}
        for before in (True, False):
            res = worker.fit(cell, cap, ref_max_n, before)
            if not worker.alive:
                worker = Worker()
            both[before] = res
        compared[key(cell)] = {"model": cell[0], "kernel": cell[1], "n": cell[2],
                               "C": cell[3], **both[False], "before": both[True]}
        print(key(cell), _status(both[True]), "->", _status(both[False]), flush=True)
        write_json(COMPARE_PATH, compared)
    worker.close()


def reference_pass(data, cells, cap, ref_max_n):
    """Refit the recorded ``cells`` as the matrix did (main's budget) with the reference, and
    keep their optimum and gap in REFS_PATH (merged into the cells by `write_reports`)."""
    refs = _load(REFS_PATH, {})
    worker = Worker()
    for cell in cells:
        if key(cell) in refs:
            continue
        res = worker.fit(cell, cap, ref_max_n, True, True)
        if not worker.alive:
            worker = Worker()
        refs[key(cell)] = {f: res[f] for f in ("objective", "optimum", "rel_gap", "ref_error")
                           if f in res}
        print(key(cell), refs[key(cell)], flush=True)
        write_json(REFS_PATH, refs)
    worker.close()


def _with_reference(cell, refs):
    """A matrix cell with the reference gap of the reference pass, where its fit gave the
    same objective."""
    ref = refs.get(key((cell["model"], cell["kernel"], cell["n"], cell["C"])))
    if ref is None or _has_reference(cell) or ref.get("objective") != cell.get("objective"):
        return cell
    return {**cell, **{f: v for f, v in ref.items() if f != "objective"}}


def _has_reference(c):
    return "rel_gap" in c or "ref_error" in c or c.get("capped") or c.get("skipped")


def _load(path, empty):
    import json

    return json.loads(path.read_text()) if path.exists() else empty


def load_results():
    return _load(JSON_PATH, {"runs": [], "cells": {}})


def run_matrix(cells, cap, data, ref_max_n, stop_at=None, before=False, skip_after_cap=True):
    """Fit every cell (a worker per cap); write the JSON and Markdown after each n.  From
    ``stop_at`` (a time.time()) on the cells left are recorded as not run."""
    worker = Worker()
    capped_families = set()
    for cell in cells:
        model, kernel, n, C = cell
        family = (model, kernel, n)
        if stop_at is not None and time.time() > stop_at:
            res = {"skipped": "not run: the run's time ran out"}
        elif skip_after_cap and family in capped_families:
            res = {"skipped": "a smaller C of this row was capped"}
        else:
            res = worker.fit(cell, cap, ref_max_n, before)
            if res.get("capped"):
                capped_families.add(family)
            if not worker.alive:
                worker = Worker()
        data["cells"][key(cell)] = {"model": model, "kernel": kernel, "n": n, "C": C, **res}
        print(key(cell), _status(data["cells"][key(cell)]), f"{res.get('cpu', 0):.2f}s",
              flush=True)
        write_json(JSON_PATH, data)
    worker.close()
    write_reports(data)


# --------------------------------------------------------------------------- the report
def _status(c):
    """A cell's one-word state: ok, capped, skipped, error or its stop reason."""
    if c.get("capped"):
        return "capped"
    if c.get("skipped"):
        return "not run" if "time" in c["skipped"] else "skipped"
    if c.get("error"):
        return "error"
    if not c["converged"]:
        return c["stop_reason"]
    gap = c.get("rel_gap")
    if gap is not None and gap > 1e-3:
        return "inexact"
    return "ok"


def _cell_text(c):
    """The Markdown of a cell: state, CPU s, n_iter, relative gap."""
    state = _status(c)
    if state == "capped":
        return f"**capped** ({c['cpu']:.0f} s CPU)" if "cpu" in c else "**capped**"
    if state in ("skipped", "not run", "error"):
        return state
    text = f"{'ok' if state == 'ok' else '**' + state + '**'} {c['cpu']:.2g}s/{c['n_iter']}"
    if "rel_gap" in c:
        text += f" {c['rel_gap']:.0e}"
    elif "ref_error" in c:
        text += " ref-fail"
    return text


def summary_lines(cells):
    """How many cells converge, and the failing ones grouped by (model, kernel, state)."""
    states = Counter(_status(c) for c in cells)
    lines = [f"{len(cells)} cells: " + ", ".join(f"{v} {k}" for k, v in states.most_common())
             + ".", ""]
    groups = defaultdict(list)
    for c in cells:
        s = _status(c)
        if s != "ok":
            groups[(s, c["model"], c["kernel"])].append(f"n={c['n']} C={c['C']:g}")
    if groups:
        rows = [[s, m, k, len(v), "; ".join(v)] for (s, m, k), v in sorted(groups.items())]
        lines += [markdown_table(["state", "model", "kernel", "cells", "where"], rows), ""]
    return lines


def tables(cells):
    """One table per (n): rows model x kernel, columns C."""
    lines = []
    for n in sorted({c["n"] for c in cells}):
        these = [c for c in cells if c["n"] == n]
        Cs = sorted({c["C"] for c in these})
        by = {(c["model"], c["kernel"], c["C"]): c for c in these}
        rows = []
        for m in MODELS:
            for kern in KERNELS:
                if any((m, kern, C) in by for C in Cs):
                    rows.append([m, kern] + [_cell_text(by[(m, kern, C)])
                                             if (m, kern, C) in by else "" for C in Cs])
        lines += [f"### n = {n}", "",
                  markdown_table(["model", "kernel"] + [f"C={C:g}" for C in Cs], rows), ""]
    return lines


def compare_lines(compared):
    """The before/after table of the refitted cells."""
    rows = []
    for c in sorted(compared.values(), key=lambda c: (c["n"], MODELS.index(c["model"]),
                                                      KERNELS.index(c["kernel"]), c["C"])):
        b = c["before"]
        rows.append([c["model"], c["kernel"], c["n"], f"{c['C']:g}", _cell_text(b),
                     _cell_text(c), b.get("kkt_residual", ""), c.get("kkt_residual", "")])
    changed = sum(_status(c["before"]) != _status(c) for c in compared.values())
    return [f"{len(compared)} cells refitted, {changed} changed state.", "",
            markdown_table(["model", "kernel", "n", "C", "before (main's budget)",
                            "after", "kkt before", "kkt after"], rows), ""]


def write_reports(data):
    """Write the JSON and the Markdown page from ``data`` (and the compared cells)."""
    write_json(JSON_PATH, data)
    compared = _load(COMPARE_PATH, {})
    refs = _load(REFS_PATH, {})
    main_cells = [_with_reference(c, refs) for c in data["cells"].values()]
    cells = list({**{key((c["model"], c["kernel"], c["n"], c["C"])): c for c in main_cells},
                  **compared}.values())
    runs = "; ".join(f"{r['part']} at {r['commit']}, {r['date']}, load {r['load']}"
                     for r in data["runs"])
    lines = ["# Convergence matrix: where exact at any C stands (issue 23 item 1)", "",
             "Generated by `nice -n 10 python -m benchmarks.run_convergence_matrix`; raw "
             "numbers in `convergence_matrix.json`.", "", f"Runs: {runs}.", "",
             __doc__.split("\n\n", 1)[1].split("\n\n")[0].replace("\n", " "), "",
             "A cell reads `state cpu_s/n_iter gap`: state 'ok' (converged_ True and, where "
             "measured, objective_ within 1e-3 of the reference optimum), a stop reason "
             "(converged_ False), 'inexact' (converged but more than 1e-3 above the "
             "optimum), 'capped' (the fit still ran at the wall-clock cap) or 'skipped' (a "
             "smaller C of the row was capped); CPU seconds of the fit; `n_iter_` (epochs or "
             "Newton steps of a convex fit, convex solves of a DC fit); the relative gap "
             "(objective_ - optimum) / optimum for n <= 300 (negative: below the "
             "reference's own 1e-10 accuracy), 'ref-fail' where the reference did not "
             "solve.", "", "## Summary", "", "### This branch (main's matrix with the "
             "refitted cells of the next section)", ""]
    lines += summary_lines(cells)
    lines += ["### main 5c4386a", ""] + summary_lines(main_cells)
    lines += data.get("notes", [])
    if compared:
        lines += ["## The fix: the fresh finishing steps get the settling budget", "",
                  data.get("compare_note", ""), ""] + compare_lines(compared)
    lines += ["## The matrix", ""] + tables(cells)
    MD_PATH.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", default="small", help="small, large or small,large")
    parser.add_argument("--n", default=None, help="comma-separated n (default: the part's)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--cap", type=float, default=120.0)
    parser.add_argument("--rerun", action="store_true", help="refit cells already recorded")
    parser.add_argument("--refs", action="store_true",
                        help="refit the recorded cells up to --ref-max-n that have no "
                             "reference gap yet, with it (a second pass after the fits)")
    parser.add_argument("--ref-max-n", type=int, default=REFERENCE_MAX_N)
    parser.add_argument("--before", action="store_true",
                        help="fit with main's finishing-step budget (SETTLE_FRESH off)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="record the cells left after this many minutes as not run")
    parser.add_argument("--compare", action="store_true",
                        help="refit the cells the finishing-step change can move, main's "
                             "budget and this branch's alternating (compare_cells)")
    args = parser.parse_args()
    models = args.models.split(",")
    data = load_results()
    if args.compare:
        data["runs"].append({"part": "compare (before/after)", "commit": git_commit(),
                             "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             "load": f"{os.getloadavg()[0]:.1f}", "cap_s": args.cap})
        compare_cells(data, args.cap, args.ref_max_n)
        return
    for part in args.cells.split(","):
        ns = [int(v) for v in args.n.split(",")] if args.n else \
            (SMALL_N if part == "small" else LARGE_N)
        cells = small_cells(ns, models) if part == "small" else large_cells(ns, models)
        if args.refs:
            reference_pass(data, [c for c in cells if c[2] <= args.ref_max_n
                                  and c[0] not in DC_MODELS and key(c) in data["cells"]
                                  and not _has_reference(data["cells"][key(c)])],
                           args.cap, args.ref_max_n)
            continue
        if not args.rerun:
            cells = [c for c in cells if key(c) not in data["cells"]]
        data["runs"].append({"part": f"{part} n={','.join(map(str, ns))}",
                             "commit": git_commit(),
                             "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             "load": f"{os.getloadavg()[0]:.1f}", "cap_s": args.cap})
        run_matrix(cells, args.cap, data, args.ref_max_n,
                   time.time() + 60 * args.minutes if args.minutes else None, args.before)


if __name__ == "__main__":
    main()
