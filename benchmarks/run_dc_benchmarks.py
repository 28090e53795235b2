"""Benchmarks of msvm's DC (truncated-loss) models and of the convex weighted MSVM.

    python -m benchmarks.run_dc_benchmarks                  # everything (about 15 minutes)
    python -m benchmarks.run_dc_benchmarks --only 1b,1c     # some sections
    python -m benchmarks.run_dc_benchmarks --quick          # tiny smoke run (seconds)

(from the repository root)

1. Cost of a full DC fit against one convex fit of the same model (truncation=None), in one
   process, side by side: DC steps, fit times and their ratio, objectives, support vectors
   (target: DC fit time at most 3x the convex fit time, thanks to warm starts).
   1a. RobustMSVM(truncation=1.0) on pendigits, RBF kernel, C = 10, gamma = 'scale' resolved
       once; also the test accuracy of both.
   1b. RobustMSVM(truncation=1.0) on the Wu and Liu (2007) unit-disc data (make_disc_example,
       contamination 0.1) at n = 1000 and 4000, RBF kernel, gamma = 'median' resolved once,
       C = 1 / (n lambda) with lambda = 1e-3.
   1c. WeightedRobustMSVM(truncation='auto', identity utility) on the same disc data.
2. The convex weighted MSVM WeightedRobustMSVM(truncation=None) with a non-identity utility
   against the same primal written as a QP for cvxpy + Clarabel
   (oracle.primal.fit_generic_margin) at n = 500, 1000, 2000 on the disc data: fit-time ratio,
   relative objective difference (both objectives recomputed here in NumPy from the fitted
   decision values) and the largest decision-value difference (target: at least 100x faster
   at |rel. diff| <= 1e-6, n = 2000).
   The generic solve runs in a child process and is abandoned after --generic-timeout seconds.
3. The DC fits on pendigits solve by solve, in CPU time with one BLAS thread (issue 24's
   target: the whole DC fit at most 3x its first convex step): RobustMSVM at the default
   truncation (k - 1)/2 and at 1.0, WeightedRobustMSVM(truncation='auto') and
   AdaptiveWeightedSVM (both schemes), RBF, C = 10, gamma = 1/16; each solve's epochs, CPU
   time and tolerance, the whole fit against its first solve and against the convex fit at
   tol (truncation=None) and SVC, measured in the same run; for the two DC models also the
   fit with the untruncated start solved to tol (the behaviour before the loose start).

The full run writes benchmarks/results/dc.md and benchmarks/results/dc.json (with --only, the
sections run replace those in the existing JSON and the report is re-rendered); --quick writes
quick_dc.md and quick_dc.json there instead. Timings are wall-clock (time.perf_counter); fits
faster than 20 s are repeated 3 times and the median is reported. Targets are reported as met
or NOT met, never asserted.
"""

import argparse
import contextlib
import sys
import time
import warnings

import numpy as np

from threadpoolctl import threadpool_limits

from benchmarks.harness import (FAST_SECONDS, REPEATS, RESULTS, fmt, markdown_table,
                                pendigits_split, run_in_child, run_sections, timed_fit)
from oracle import fit_generic_margin, rbf_kernel, robust_loss, weighted_loss

LAMBDA = 1e-3            # disc data: C = 1 / (n * LAMBDA), the papers' scaling
SEED = 0
CONTAMINATION = 0.1
TEST_SIZE = 10000        # clean disc test set (contamination 0, random_state 1)
DC_TARGET = 3.0          # DC fit time <= 3 x convex fit time
SPEEDUP_TARGET = 100.0   # section 2: at least 100x faster than the generic solver at n = 2000
REL_TARGET = 1e-6        # ... at |relative objective difference| <= 1e-6
GENERIC_TARGET_N = 2000


# --------------------------------------------------------------------------- objectives
def _penalty(est):
    """1/2 sum_j a_j' K_sv a_j from dual_coef_ and the RBF kernel on support_vectors_."""
    K_sv = rbf_kernel(est.support_vectors_, est.support_vectors_, est.gamma_)
    return 0.5 * float(np.einsum("js,st,jt->", est.dual_coef_, K_sv, est.dual_coef_))


def robust_objective(est, X, y, s):
    """RobustMSVM objective (models.md), truncation s (None: LLW hinge), recomputed in NumPy."""
    return _penalty(est) + est.C * robust_loss(est.decision_values(X), y, np.ones(len(y)), s)


def weighted_objective(est, X, y, utility, s):
    """WeightedRobustMSVM objective (models.md), truncation s (None: convex), in NumPy."""
    return _penalty(est) + est.C * weighted_loss(est.decision_values(X), y, np.ones(len(y)),
                                                 utility, s)


# --------------------------------------------------------------------------- 1. DC vs convex
def _dc_row(name, make_dc, make_convex, X, y, objective, X_test=None, y_test=None,
            y_clean=None, extra=None):
    """Fit the DC model and its convex counterpart side by side; one result row."""
    t_dc, runs_dc, dc, warns_dc = timed_fit(make_dc, X, y)
    t_cv, runs_cv, cv, warns_cv = timed_fit(make_convex, X, y)
    hist = np.asarray(dc.dc_objectives_, dtype=float)
    rises = np.diff(hist)
    s = getattr(dc, "truncation_", dc.truncation)   # WeightedRobustMSVM resolves 'auto'
    row = {
        "name": name, "n": len(y), "C": dc.C, "gamma": dc.gamma_, "truncation": s,
        "dc_time": t_dc, "dc_runs": runs_dc, "dc_n_iter": int(dc.n_iter_),
        "dc_steps": len(hist) - 1, "dc_solver_epochs": int(dc.n_solver_iter_),
        "dc_objective": float(dc.objective_), "dc_objectives": hist.tolist(),
        "dc_objective_recomputed": objective(dc, X, y, s),
        "dc_max_rise": float(rises.max()) if rises.size else 0.0,
        "dc_n_truncated": int(np.sum(dc.truncated_)),
        "dc_n_support": int(dc.support_.size), "dc_kkt_residual": float(dc.kkt_residual_),
        "convex_time": t_cv, "convex_runs": runs_cv, "convex_n_iter": int(cv.n_iter_),
        "convex_solver_epochs": int(cv.n_solver_iter_),
        "convex_objective": float(cv.objective_),
        "convex_objective_recomputed": objective(cv, X, y, None),
        "convex_truncated_objective": objective(cv, X, y, s),
        "convex_n_support": int(cv.support_.size),
        "convex_kkt_residual": float(cv.kkt_residual_),
        "time_ratio": t_dc / t_cv,
        "warnings": warns_dc + warns_cv,
    }
    if X_test is not None:
        row["dc_test_accuracy"] = float(dc.score(X_test, y_test))
        row["convex_test_accuracy"] = float(cv.score(X_test, y_test))
    if y_clean is not None:
        row["dc_train_clean_accuracy"] = float(dc.score(X, y_clean))
        row["convex_train_clean_accuracy"] = float(cv.score(X, y_clean))
    row.update(extra or {})
    print(f"  {name}: n={row['n']}: DC {t_dc:.3f} s ({row['dc_steps']} steps), convex "
          f"{t_cv:.3f} s, ratio {row['time_ratio']:.2f}", flush=True)
    return row


def bench_pendigits(quick):
    from msvm import RobustMSVM

    X_train, X_test, y_train, y_test = pendigits_split(quick)
    C = 10.0
    gamma = 1.0 / (X_train.shape[1] * X_train.var())   # gamma='scale', resolved once

    def make(truncation):
        return lambda: RobustMSVM(C=C, truncation=truncation, kernel="rbf", gamma=gamma,
                                  random_state=SEED)

    row = _dc_row("RobustMSVM, pendigits", make(1.0), make(None), X_train, y_train,
                  robust_objective, X_test, y_test)
    row["n_test"] = len(y_test)
    return {"rows": [row]}


def _disc_data(n, quick):
    from msvm.datasets import make_disc_example

    X, y, y_clean = make_disc_example(n, contamination=CONTAMINATION, random_state=SEED)
    X_test, _, y_test = make_disc_example(TEST_SIZE // 10 if quick else TEST_SIZE,
                                          contamination=0.0, random_state=1)
    from msvm.model_selection import median_gamma

    return X, y, y_clean, X_test, y_test, 1.0 / (n * LAMBDA), median_gamma(X, y)


def bench_disc_robust(ns, quick):
    from msvm import RobustMSVM

    rows = []
    for n in ns:
        X, y, y_clean, X_test, y_test, C, gamma = _disc_data(n, quick)

        def make(truncation):
            return lambda: RobustMSVM(C=C, truncation=truncation, kernel="rbf", gamma=gamma,
                                      random_state=SEED)

        rows.append(_dc_row("RobustMSVM, disc", make(1.0), make(None), X, y,
                            robust_objective, X_test, y_test, y_clean))
    return {"rows": rows}


def bench_disc_weighted(ns, quick):
    from msvm import WeightedRobustMSVM

    rows = []
    for n in ns:
        X, y, y_clean, X_test, y_test, C, gamma = _disc_data(n, quick)

        def make(truncation):
            return lambda: WeightedRobustMSVM(C=C, truncation=truncation, kernel="rbf",
                                              gamma=gamma, random_state=SEED)

        rows.append(_dc_row("WeightedRobustMSVM, disc", make("auto"), make(None), X, y,
                            lambda est, X_, y_, s: weighted_objective(est, X_, y_, np.eye(3), s),
                            X_test, y_test, y_clean))
    return {"rows": rows}


def render_dc(section):
    timing, quality = [], []
    for r in section["rows"]:
        acc = clean = "-"
        if "dc_test_accuracy" in r:
            acc = f"{r['dc_test_accuracy']:.4f} / {r['convex_test_accuracy']:.4f}"
        if "dc_train_clean_accuracy" in r:
            clean = (f"{r['dc_train_clean_accuracy']:.4f} / "
                     f"{r['convex_train_clean_accuracy']:.4f}")
        timing.append([
            r["name"], r["n"], fmt(r["C"], ".4g"), fmt(r["gamma"], ".4g"),
            fmt(r["truncation"], ".4g"), f"{r['dc_steps']} ({r['dc_n_iter']})",
            f"{r['dc_solver_epochs']} / {r['convex_solver_epochs']}",
            fmt(r["dc_time"], ".3f") + f" ({r['dc_runs']})",
            fmt(r["convex_time"], ".3f") + f" ({r['convex_runs']})",
            f"**{r['time_ratio']:.2f}**",
            "met" if r["time_ratio"] <= DC_TARGET else "NOT met"])
        quality.append([
            r["name"], r["n"], fmt(r["dc_objective"], ".8g"),
            fmt(r["convex_truncated_objective"], ".8g"), fmt(r["convex_objective"], ".8g"),
            f"{r['dc_n_support']} / {r['convex_n_support']}", r["dc_n_truncated"],
            fmt(r["dc_kkt_residual"], ".1e") + " / " + fmt(r["convex_kkt_residual"], ".1e"),
            acc, clean])
    text = [markdown_table(
        ["model, data", "n", "C", "gamma", "s", "DC steps (n_iter_)",
         "solver epochs DC / convex", "DC fit s (runs)", "convex fit s (runs)",
         "time ratio DC / convex", f"target <= {DC_TARGET:g}x"], timing), "",
        markdown_table(
        ["model, data", "n", "DC objective_ (truncated loss)",
         "truncated objective at the convex fit", "convex objective_ (untruncated loss)",
         "support vectors DC / convex", "truncated samples (DC)", "KKT res. DC / convex",
         "test accuracy DC / convex", "accuracy on clean training labels DC / convex"],
        quality), ""]
    for r in section["rows"]:
        hist = ", ".join(f"{v:.8g}" for v in r["dc_objectives"])
        rise = (f" **The objective rose between DC steps** (largest rise "
                f"{r['dc_max_rise']:.3g})." if r["dc_max_rise"] > 0 else
                " Non-increasing.")
        text.append(f"- {r['name']}, n = {r['n']}: `dc_objectives_` = [{hist}].{rise}")
    check = max(max(abs(r["dc_objective"] - r["dc_objective_recomputed"])
                    / abs(r["dc_objective_recomputed"]),
                    abs(r["convex_objective"] - r["convex_objective_recomputed"])
                    / abs(r["convex_objective_recomputed"])) for r in section["rows"])
    start = max(abs(r["dc_objectives"][0] - r["convex_truncated_objective"])
                / abs(r["convex_truncated_objective"]) for r in section["rows"])
    text += ["", f"Checks: `objective_` of both fits agrees with the objective recomputed here "
             f"from `dual_coef_` and `decision_values` to {check:.1e} (relative); "
             f"`dc_objectives_[0]` is within {start:.1e} (relative) of the truncated "
             f"objective of the separate convex fit (the DC algorithm's untruncated start is "
             f"solved to tol 1e-2 only, the convex fit to tol; the kernel rows are cached in "
             f"float32, hence the agreement of `objective_` to about 1e-8 only)."]
    return "\n".join(text)


# --------------------------------------------------------------------------- 2. generic QP
def _generic_child(X, y, gamma, C, utility, out):
    """Child process: Gram matrix, then the cvxpy + Clarabel solve; results on ``out``."""
    K = rbf_kernel(X, X, gamma)
    try:
        res = fit_generic_margin(K, y, C, utility)
    except Exception as exc:   # report a solver failure instead of hanging the parent
        out.put({"error": f"{type(exc).__name__}: {exc}"})
        return
    out.put({key: res[key] for key in ("decision", "penalty", "objective", "solver_objective",
                                       "status", "time", "sqrt_time", "solve_time", "n_iter",
                                       "n_slacks", "n_hinge_rows")})


def run_generic(X, y, gamma, C, utility, timeout):
    """fit_generic_margin in a spawned child, abandoned (terminated) after ``timeout`` s."""
    return run_in_child(_generic_child, (X, y, gamma, C, utility), timeout)


def _msvm_weighted_row(X, y, C, gamma, utility, max_iter):
    from msvm import WeightedRobustMSVM

    t, runs, est, warns = timed_fit(
        lambda: WeightedRobustMSVM(C=C, utility=utility, truncation=None, kernel="rbf",
                                   gamma=gamma, tol=1e-6, max_iter=max_iter,
                                   random_state=SEED), X, y)
    F = est.decision_values(X)
    obj = _penalty(est) + C * weighted_loss(F, y, np.ones(len(y)), utility, None)
    return {"max_iter": max_iter, "time": t, "runs": runs, "objective_": float(est.objective_),
            "objective": obj, "epochs": int(est.n_solver_iter_),
            "kkt_residual": float(est.kkt_residual_), "n_support": int(est.support_.size),
            "warnings": warns}, F


def bench_generic(ns, max_generic_n, timeout):
    from msvm.datasets import make_disc_example, utility_matrix
    from msvm.model_selection import median_gamma

    utility = utility_matrix(2, 0.4)
    rows = []
    for n in ns:
        X, y, _ = make_disc_example(n, contamination=CONTAMINATION, random_state=SEED)
        C = 1.0 / (n * LAMBDA)
        gamma = median_gamma(X, y)
        row = {"n": n, "C": C, "gamma": gamma, "utility": utility.tolist(), "msvm": []}
        decisions = []
        for max_iter in (10000,):
            r, F = _msvm_weighted_row(X, y, C, gamma, utility, max_iter)
            row["msvm"].append(r)
            decisions.append(F)
        row["generic"] = None
        if n <= max_generic_n:
            g = run_generic(X, y, gamma, C, utility, timeout)
            Fg = g.pop("decision", None)
            row["generic"] = g
            if "error" not in g:
                g["total_time"] = g["sqrt_time"] + g["time"]
                for r, F in zip(row["msvm"], decisions):
                    r["speedup"] = g["total_time"] / r["time"]
                    r["rel_objective_diff"] = (r["objective"] - g["objective"]) / abs(
                        g["objective"])
                    r["max_abs_decision_diff"] = float(np.abs(F - Fg).max())
        rows.append(row)
        gen = row["generic"]
        gtxt = ("not run" if gen is None else gen.get("error")
                or f"{gen['total_time']:.1f} s ({gen['status']})")
        print(f"  2: n={n}: msvm " + ", ".join(
            f"max_iter={r['max_iter']}: {r['time']:.3f} s" for r in row["msvm"])
            + f"; generic {gtxt}", flush=True)
    return {"rows": rows, "timeout": timeout}


def render_generic(section):
    rows = []
    for row in section["rows"]:
        g = row["generic"]
        if g is None:
            gtime, gobj, gstat = "not run", "-", "-"
        elif "error" in g:
            gtime, gobj, gstat = f"> {g['wall_time']:.0f}" if g.get("timed_out") else "-", \
                "-", g["error"]
        else:
            gtime, gobj, gstat = fmt(g["total_time"], ".1f"), fmt(g["objective"], ".12g"), \
                f"{g['status']} ({g['n_iter']} it.)"
        for r in row["msvm"]:
            speed = f"**{r['speedup']:.0f}x**" if "speedup" in r else "-"
            rows.append([row["n"], fmt(row["C"], ".4g"), fmt(row["gamma"], ".4g"),
                         f"{r['max_iter']:,}", fmt(r["time"], ".3f") + f" ({r['runs']})",
                         r["epochs"], fmt(r["kkt_residual"], ".1e"), gtime, speed,
                         fmt(r["objective"], ".12g"), gobj,
                         fmt(r.get("rel_objective_diff"), ".2e"),
                         fmt(r.get("max_abs_decision_diff"), ".1e"), r["n_support"], gstat])
    header = ["n", "C", "gamma", "msvm max_iter", "msvm fit s (runs)", "msvm epochs",
              "msvm KKT res.", "generic s", "speed-up", "msvm objective", "generic objective",
              "rel. diff", "max abs f diff", "msvm SVs", "generic status"]
    text = [markdown_table(header, rows), ""]
    top = [row for row in section["rows"] if row["n"] == GENERIC_TARGET_N]
    if not top:
        text.append(f"Target (n = {GENERIC_TARGET_N}): not measured in this run.")
    else:
        row = top[0]
        for r in row["msvm"]:
            if "speedup" not in r:
                g = row["generic"] or {}
                text.append(f"- msvm max_iter = {r['max_iter']:,}: generic solver gave no "
                            f"result ({g.get('error', 'not run')}); target not measured.")
                continue
            fast = r["speedup"] >= SPEEDUP_TARGET
            close = abs(r["rel_objective_diff"]) <= REL_TARGET
            text.append(
                f"- msvm max_iter = {r['max_iter']:,} at n = {GENERIC_TARGET_N}: speed-up "
                f"**{r['speedup']:.0f}x** (>= {SPEEDUP_TARGET:g}x: {'met' if fast else 'NOT met'})"
                f", |rel. diff| **{abs(r['rel_objective_diff']):.1e}** (<= {REL_TARGET:g}: "
                f"{'met' if close else 'NOT met'}); target "
                f"{'met' if fast and close else 'NOT met'}.")
    check = max(abs(r["objective_"] - r["objective"]) / abs(r["objective"])
                for row in section["rows"] for r in row["msvm"])
    text += ["", f"Check: msvm's `objective_` agrees with the objective recomputed here to "
             f"{check:.1e} (relative)."]
    return "\n".join(text)


# --------------------------------------------------------------------------- 3. step by step
@contextlib.contextmanager
def _recorded_solves():
    """Record every convex solve of the fits inside: (CPU seconds, epochs, tol, KKT resid.)."""
    from msvm import _sequence

    solves, solve = [], _sequence.DualSequence.solve

    def recording(self, problem, alpha0, mu0, tol=None, **kwargs):
        start = time.process_time()
        sol = solve(self, problem, alpha0, mu0, tol, **kwargs)
        solves.append({"cpu": time.process_time() - start, "epochs": int(sol.n_iter),
                       "tol": self.tol if tol is None else float(tol),
                       "resid": float(sol.resid)})
        return sol

    _sequence.DualSequence.solve = recording
    try:
        yield solves
    finally:
        _sequence.DualSequence.solve = solve


@contextlib.contextmanager
def _exact_start():
    """The DC fits as before the loose start: the untruncated dual solved to tol."""
    from msvm import _base

    start = _base.BaseMSVM._start
    _base.BaseMSVM._start = lambda self, sequence, problem, tol=None: start(self, sequence,
                                                                            problem)
    try:
        yield
    finally:
        _base.BaseMSVM._start = start


def _cpu_fit(est, X, y, X_test, y_test, exact_start=False):
    """One fit's CPU time, its solves and figures (one BLAS thread)."""
    with warnings.catch_warnings(record=True) as caught, _recorded_solves() as solves:
        warnings.simplefilter("always")
        with threadpool_limits(1), (_exact_start() if exact_start else contextlib.nullcontext()):
            start = time.process_time()
            est.fit(X, y)
            cpu = time.process_time() - start
    return {"cpu": cpu, "solves": solves, "objective": float(est.objective_),
            "test_accuracy": float(est.score(X_test, y_test)), "stop": est.stop_reason_,
            "n_truncated": int(np.sum(getattr(est, "truncated_", np.zeros(0)))),
            "warnings": sorted({f"{type(est).__name__}: {w.category.__name__}: {w.message}"
                                for w in caught})}


def bench_steps(quick):
    from sklearn.svm import SVC

    from msvm import AdaptiveWeightedSVM, RobustMSVM, WeightedRobustMSVM

    X, X_test, y, y_test = pendigits_split(quick)
    common = dict(C=10.0, kernel="rbf", gamma=1.0 / 16, random_state=SEED)
    with threadpool_limits(1):
        start = time.process_time()
        SVC(C=10.0, gamma=1.0 / 16).fit(X, y)
        svc = time.process_time() - start
    convex = {"RobustMSVM": _cpu_fit(RobustMSVM(truncation=None, **common), X, y, X_test,
                                     y_test),
              "WeightedRobustMSVM": _cpu_fit(WeightedRobustMSVM(truncation=None, **common), X, y,
                                             X_test, y_test)}
    cases = [("RobustMSVM()", RobustMSVM(**common), "RobustMSVM"),
             ("RobustMSVM(truncation=1.0)", RobustMSVM(truncation=1.0, **common), "RobustMSVM"),
             ("WeightedRobustMSVM()", WeightedRobustMSVM(**common), "WeightedRobustMSVM"),
             ("AdaptiveWeightedSVM(scheme='iterative')",
              AdaptiveWeightedSVM(scheme="iterative", **common), "WeightedRobustMSVM"),
             ("AdaptiveWeightedSVM()", AdaptiveWeightedSVM(**common), "WeightedRobustMSVM")]
    rows = []
    for name, est, base in cases:
        variants = [("loose (now)", False)]
        if "Robust" in name:
            variants.append(("exact (before)", True))
        for variant, exact in variants:
            row = _cpu_fit(est, X, y, X_test, y_test, exact_start=exact)
            row.update(name=name, variant=variant, svc_cpu=svc, convex=base,
                       convex_cpu=convex[base]["cpu"])
            rows.append(row)
            print(f"  {name} ({variant}): {row['cpu']:.2f} s CPU, first solve "
                  f"{row['solves'][0]['cpu']:.2f} s, convex fit {row['convex_cpu']:.2f} s",
                  flush=True)
    return {"rows": rows, "svc_cpu": svc, "convex": convex, "n": len(y)}


def render_steps(section):
    rows, solves = [], []
    for r in section["rows"]:
        first = r["solves"][0]["cpu"]
        rows.append([r["name"], r["variant"], len(r["solves"]),
                     sum(s["epochs"] for s in r["solves"]), f"{r['cpu']:.2f}", f"{first:.2f}",
                     f"**{r['cpu'] / first:.2f}**", f"**{r['cpu'] / r['convex_cpu']:.2f}**",
                     f"{r['cpu'] / r['svc_cpu']:.1f}", f"{r['objective']:.8g}",
                     f"{r['test_accuracy']:.4f}", r["n_truncated"], r["stop"]])
        solves.append(f"- {r['name']} ({r['variant']}): " + "; ".join(
            f"{s['epochs']} epochs {s['cpu']:.2f} s at tol {s['tol']:g}" for s in r["solves"]))
    convex = "; ".join(f"{name}(truncation=None): {c['cpu']:.2f} s, {c['solves'][0]['epochs']} "
                       f"epochs, objective {c['objective']:.8g}, test accuracy "
                       f"{c['test_accuracy']:.4f}" for name, c in section["convex"].items())
    return "\n".join([
        markdown_table(["model", "untruncated start", "solves", "epochs", "fit CPU s",
                        "first solve s", "fit / first solve", "fit / convex fit at tol",
                        "fit / SVC", "objective_", "test accuracy", "truncated", "stop"], rows),
        "", f"SVC(C=10, gamma=1/16): {section['svc_cpu']:.2f} s CPU. Convex fits at tol (the "
        f"'convex fit' column): {convex}.", "", "Each solve (epochs, CPU time, tol):", "",
        *solves])


# --------------------------------------------------------------------------- report
SETUPS = {
    "1a": ("1a. DC fit against one convex fit: RobustMSVM on pendigits",
           "Pendigits (bundled), standardized (scaler fitted on the training part), stratified "
           "70/30 split with random_state=0 (`benchmarks.harness.pendigits_split`). "
           "RobustMSVM(C=10, truncation=1.0, kernel='rbf', gamma='scale' resolved once as "
           "1 / (n_features * X_train.var()), tol=1e-3, dc_tol=1e-6, max_dc_iter=100, "
           "random_state=0) against the same model with truncation=None (the untruncated "
           "Lee-Lin-Wahba MSVM, one convex solve)."),
    "1b": ("1b. DC fit against one convex fit: RobustMSVM on the disc example",
           "`make_disc_example(n, contamination=0.1, random_state=0)` (Wu and Liu 2007, k = 3), "
           "RBF "
           "kernel with gamma = 'median' resolved once "
           "(`msvm.model_selection.median_gamma(X, y)`), "
           "C = 1 / (n lambda) with lambda = 1e-3, tol=1e-3, random_state=0; "
           "truncation=1.0 against truncation=None. Test accuracy: a clean "
           "(contamination 0) disc sample of 10000 points drawn with random_state=1."),
    "1c": ("1c. DC fit against one convex fit: WeightedRobustMSVM on the disc example",
           "Same data, gamma and C as 1b. WeightedRobustMSVM(utility=None (identity), "
           "truncation='auto' (s = -1/(k-1) = -0.5), tol=1e-3, random_state=0) against "
           "WeightedRobustMSVM(truncation=None)."),
    "2": ("2. Convex weighted MSVM against a generic QP solver (cvxpy + Clarabel)",
          "Disc data `make_disc_example(n, contamination=0.1, random_state=0)` (chosen over the "
          "Liu and Yuan (2011) data to stay on the data of section 1), RBF kernel, "
          "gamma = 'median' "
          "resolved once, C = 1 / (n lambda) with lambda = 1e-3, utility "
          "`utility_matrix(2, 0.4)` = [[1, 0.4, 0.4], [0, 1, 0], [0, 0, 1]] (rows: true "
          "class). msvm: WeightedRobustMSVM(truncation=None, tol=1e-6, random_state=0) with the "
          "default max_iter=10000. "
          "Generic: the same primal as a QP for cvxpy + Clarabel (default tolerances; "
          "`oracle.primal.fit_generic_margin`: U = R V with R the PSD square root of K, b with "
          "sum zero, U 1 = 0, decision values F = R U + 1 b' as an auxiliary variable, one "
          "slack per (i, j) with U[y_i, j] > 0 and k - 1 hinge rows per slack), in a spawned "
          "child process; its time is the square root plus the cvxpy call (canonicalization "
          "and solve), not the Gram matrix. Clarabel may use several threads, msvm uses one. "
          "Both objectives are recomputed here in NumPy with one formula from the decision "
          "values at the training points (msvm: `decision_values(X)`, penalty "
          "0.5 sum_j a_j' K_sv a_j from `dual_coef_`; generic: F = R U + 1 b', penalty "
          "0.5 ||U||^2). Speed-up = generic time / msvm time; rel. diff = (msvm - generic) / "
          "generic. Target: >= 100x at n = 2000 with |rel. diff| <= 1e-6."),
    "3": ("3. The DC fits on pendigits solve by solve (CPU time, one BLAS thread)",
          "Pendigits (bundled), standardized, stratified 70/30 split with random_state=0 "
          "(`benchmarks.harness.pendigits_split`); every model with C=10, kernel='rbf', "
          "gamma=1/16, random_state=0 and its defaults otherwise (tol=1e-3; RobustMSVM's "
          "truncation 'auto' = (k - 1)/2 = 4.5, WeightedRobustMSVM's -1/(k - 1)). CPU time "
          "(`time.process_time`), one fit each, under `threadpool_limits(1)`; the machine was "
          "shared with other jobs, so read the ratios, which are measured in the same run. "
          "'fit / first solve': the whole fit against its own first convex solve; 'fit / "
          "convex fit at tol': against a separate fit of the convex model (truncation=None; "
          "for AdaptiveWeightedSVM WeightedRobustMSVM(truncation=None), its first fit's "
          "problem) solved to tol. 'untruncated start': 'loose (now)' solves the DC "
          "algorithm's untruncated start to tol 1e-2 (msvm/_dc.py); 'exact (before)' is the "
          "same fit with that start solved to tol (BaseMSVM._start patched), as before. "
          "Target (issue 24): the whole DC fit at most 3x its first convex step."),
}
RENDER = {"1a": render_dc, "1b": render_dc, "1c": render_dc, "2": render_generic,
          "3": render_steps}


def render_report(data):
    m = data["machine"]
    lines = ["# msvm DC and weighted-MSVM benchmark results", "",
             "Generated by `python -m benchmarks.run_dc_benchmarks"
             + (" --quick" if data.get("quick") else "") + "`; the raw numbers are in "
             + f"`{data['json_name']}`. Each model runs side by side with its baseline in one "
             f"process. Fits faster than {FAST_SECONDS:g} s are repeated {REPEATS} times and "
             "the median is reported (`runs`); timings are wall-clock "
             "(`time.perf_counter`). DC steps = len(`dc_objectives_`) - 1; `n_iter_` is "
             "shown in parentheses as the estimator reports it.", "",
             "## Machine", "",
             markdown_table(["item", "value"], [[k, v] for k, v in m.items()]), ""]
    if data.get("quick"):
        lines += ["**Quick smoke run**: tiny sizes; the numbers say nothing about "
                  "performance.", ""]
    for name in sorted(data["benchmarks"]):
        section = data["benchmarks"][name]
        title, setup = SETUPS[name]
        lines += [f"## {title}", "", setup, "", RENDER[name](section), ""]
        if section.get("date") and section["date"] != m["date"]:
            lines += [f"(Run on {section['date']}.)", ""]
        warns = set()
        for row in section["rows"]:
            warns.update(row.get("warnings", []))
            for r in row.get("msvm", []):
                warns.update(r.get("warnings", []))
        if warns:
            lines += ["Fits that did not converge, and warnings raised during these fits:", ""]
            lines += [f"- {w}" for w in sorted(warns)] + [""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="1a,1b,1c,2,3",
                        help="comma-separated subset of the sections 1a, 1b, 1c, 2, 3")
    parser.add_argument("--quick", action="store_true",
                        help="tiny smoke run; writes quick_dc.md / quick_dc.json")
    parser.add_argument("--max-generic-n", type=int, default=2000,
                        help="largest n solved by the generic QP solver in section 2")
    parser.add_argument("--generic-timeout", type=float, default=900.0,
                        help="seconds after which a generic solve is abandoned")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(RENDER)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {sorted(RENDER)}")

    md_path = RESULTS / ("quick_dc.md" if args.quick else "dc.md")
    json_path = RESULTS / ("quick_dc.json" if args.quick else "dc.json")

    disc_ns = [200, 400] if args.quick else [1000, 4000]
    runners = {
        "1a": lambda: bench_pendigits(args.quick),
        "1b": lambda: bench_disc_robust(disc_ns, args.quick),
        "1c": lambda: bench_disc_weighted(disc_ns, args.quick),
        "3": lambda: bench_steps(args.quick),
        "2": lambda: bench_generic([100, 200] if args.quick else [500, 1000, 2000],
                                   args.max_generic_n, args.generic_timeout),
    }
    run_sections(only, runners, SETUPS, RENDER, render_report, md_path, json_path, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
