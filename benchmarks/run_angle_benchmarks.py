"""Benchmarks of msvm's angle-based models: AngleBasedMSVM and TargetedLocalMSVM (TLAMSVM).

    python -m benchmarks.run_angle_benchmarks                # everything (about 25 minutes)
    python -m benchmarks.run_angle_benchmarks --only 1,2     # some sections
    python -m benchmarks.run_angle_benchmarks --quick        # tiny smoke run (seconds)

(from the repository root)

1. Cost of a TLAMSVM grid point against one global AngleBasedMSVM fit, side by side in one
   process, on the Kang, Lin and Zhang (2019) simulations S1 (n = 1000, k = 3) and S2
   (n = 1500, k = 5), linear
   and RBF kernel (gamma = 'scale' on the non-target columns, resolved once), n_grid = 20,
   C = 1: total TLAMSVM fit time, time per grid point (total / n_grid), the AngleBasedMSVM fit
   time on the non-target columns with the same C and kernel, their ratio, and the solver
   passes per grid point against the global fit's n_iter_ (target: time per grid point at most
   0.5x one global fit, thanks to the warm starts along the grid).
2. AngleBasedMSVM against the same primal written as a QP for cvxpy + Clarabel
   (oracle.primal.fit_generic_angle) at n = 500, 1000, 2000 on the Liu and Yuan (2011) example 4.1.1
   data, RBF kernel, gamma = 'median' resolved once, C = 1 / (n lambda) with lambda = 1e-3,
   reinforcement 0.5, msvm tol = 1e-6: fit-time ratio and relative objective difference, both
   objectives recomputed here in NumPy from the fitted decision values (target: at least 200x
   faster at n = 2000 with |rel. diff| <= 1e-6). The generic solve runs in a spawned child
   process and is abandoned after --generic-timeout seconds.
3. Test macro F1 of TLAMSVM against AngleBasedMSVM (the paper's RAMSVM, given U as an ordinary
   feature) on S1 and S2, linear kernel, over R repetitions (R = 10; 2 with --quick): training
   data with random_state = rep, a test set of the same size with random_state = 1000 + rep, C
   (and TLAMSVM's bandwidth among multiples of the Silverman rule) chosen by 5-fold
   GridSearchCV on the training set (scoring 'f1_macro'). Reported as mean and standard error;
   the paper (Kang, Lin and Zhang 2019, tables 1 and 2) has TLAMSVM ahead. No target.

The full run writes benchmarks/results/angle.md and benchmarks/results/angle.json (with --only,
the sections run replace those in the existing JSON and the report is re-rendered); --quick
writes quick_angle.md and quick_angle.json there instead. Timings are wall-clock
(time.perf_counter); in section 1 fits faster than 20 s are repeated 5 times, in section 2
3 times, and the median is reported. Targets are reported as met or NOT met, never asserted.
"""

import argparse
import sys
import time
from collections import Counter

import numpy as np

from benchmarks.harness import (FAST_SECONDS, REPEATS, RESULTS, fmt, markdown_table,
                                recording_scorer, run_in_child, run_sections, timed_fit,
                                watch_fits)
from oracle import fit_generic_angle, rbf_kernel, reinforced_loss

SEED = 0
LAMBDA = 1e-3              # section 2: C = 1 / (n * LAMBDA), the papers' scaling
N_GRID = 20                # TLAMSVM grid points (the estimator's default)
GRID_REPEATS = 5           # section 1: millisecond fits, so more repeats than REPEATS
REF_TOL = 1e-7             # section 1: untimed reference fits run to this tolerance ...
REF_MAX_ITER = 100_000     # ... with this many epochs at most
GRID_TARGET = 0.5          # section 1: time per grid point <= 0.5 x one global fit
SPEEDUP_TARGET = 200.0     # section 2: at least 200x faster than the generic solver ...
REL_TARGET = 1e-6          # ... at |relative objective difference| <= 1e-6 ...
GENERIC_TARGET_N = 2000    # ... at n = 2000
CV_FOLDS = 5
BANDWIDTH_MULTIPLES = (0.5, 1.0, 2.0)   # section 3: x the Silverman rule on the training U
# Section 3 C grids. S2 with the linear kernel on its raw (unscaled) features gets slow at
# C = 10 (AngleBasedMSVM ~ 11 s and 8,000+ epochs, a TLAMSVM fit 20-90 s with grid points at
# max_iter), which would take the full run to hours: its grid is shrunk to {0.1, 1}.
C_GRIDS = {"S1": (0.1, 1.0, 10.0), "S2": (0.1, 1.0)}
QUICK_SIZES = {"S1": 200, "S2": 300}    # --quick: training (and test) sizes of S1 and S2


def _fit_notes(watch, label=""):
    """'<label>not converged (<stop reason>)' per unconverged fit of a `FitWatch`, and
    '<label><Category>: <message>' per other warning."""
    notes = [f"{label}not converged ({reason})"
             for reason, count in watch.unconverged().items() for _ in range(count)]
    return notes + [f"{label}{w.category.__name__}: {w.message}"
                    for w in watch.other_warnings()]


# --------------------------------------------------------------------------- 1. grid cost
def bench_grid(quick):
    from msvm import AngleBasedMSVM, TargetedLocalMSVM
    from msvm.datasets import make_targeted_example

    rows = []
    for scenario in ("S1", "S2"):
        X, y = make_targeted_example(QUICK_SIZES[scenario] if quick else None,
                                     scenario=scenario, random_state=SEED)
        Z = X[:, 1:]                                        # the non-target columns
        gamma = 1.0 / (Z.shape[1] * Z.var())                # gamma='scale', resolved once
        for kernel in ("linear", "rbf"):
            g = gamma if kernel == "rbf" else "scale"       # unused by the linear kernel
            t_tl, runs_tl, tl, warns_tl = timed_fit(
                lambda: TargetedLocalMSVM(C=1.0, target=0, n_grid=N_GRID, kernel=kernel,
                                          gamma=g, random_state=SEED), X, y, GRID_REPEATS)
            t_an, runs_an, an, warns_an = timed_fit(
                lambda: AngleBasedMSVM(C=1.0, kernel=kernel, gamma=g, random_state=SEED),
                Z, y, GRID_REPEATS)
            # accuracy of what was timed: the same fits run to REF_TOL (untimed)
            with watch_fits() as watch:
                tl_ref = watch.add(TargetedLocalMSVM(
                    C=1.0, target=0, n_grid=N_GRID, kernel=kernel, gamma=g, tol=REF_TOL,
                    max_iter=REF_MAX_ITER, random_state=SEED).fit(X, y))
                an_ref = watch.add(AngleBasedMSVM(
                    C=1.0, kernel=kernel, gamma=g, tol=REF_TOL, max_iter=REF_MAX_ITER,
                    random_state=SEED).fit(Z, y))
            warns_ref = sorted(set(_fit_notes(watch, f"reference fit (tol={REF_TOL:g}): ")))
            gaps = (tl.objectives_ - tl_ref.objectives_) / np.abs(tl_ref.objectives_)
            passes = np.asarray(tl.n_iter_, dtype=int)
            per_grid = t_tl / N_GRID
            row = {
                "scenario": scenario, "kernel": kernel, "n": len(y), "k": int(y.max()) + 1,
                "n_features": Z.shape[1], "C": 1.0,
                "gamma": gamma if kernel == "rbf" else None, "n_grid": N_GRID,
                "bandwidth": float(tl.bandwidth_),
                "tl_time": t_tl, "tl_runs": runs_tl, "tl_time_per_grid": per_grid,
                "tl_passes": passes.tolist(), "tl_mean_passes": float(passes.mean()),
                "tl_first_passes": int(passes[0]),
                "tl_mean_warm_passes": float(passes[1:].mean()) if len(passes) > 1 else None,
                "tl_max_passes": int(passes.max()),
                "tl_max_kkt_residual": float(np.max(tl.kkt_residuals_)),
                "angle_time": t_an, "angle_runs": runs_an, "angle_n_iter": int(an.n_iter_),
                "angle_kkt_residual": float(an.kkt_residual_),
                "angle_n_support": int(an.support_.size),
                "ratio": per_grid / t_an,
                "passes_ratio": float(passes.mean()) / max(int(an.n_iter_), 1),
                "tl_objectives": tl.objectives_.tolist(),
                "tl_ref_objectives": tl_ref.objectives_.tolist(),
                "tl_ref_passes": np.asarray(tl_ref.n_iter_, dtype=int).tolist(),
                "tl_objective_gaps": gaps.tolist(),
                "tl_max_objective_gap": float(gaps.max()),
                "tl_max_gap_grid_index": int(gaps.argmax()),
                "angle_objective": float(an.objective_),
                "angle_ref_objective": float(an_ref.objective_),
                "angle_objective_gap": float((an.objective_ - an_ref.objective_)
                                             / abs(an_ref.objective_)),
                "warnings": warns_tl + warns_an + warns_ref,
            }
            rows.append(row)
            print(f"  1: {scenario} {kernel}: TLAMSVM {t_tl:.3f} s ({per_grid:.4f} s per grid "
                  f"point, {row['tl_mean_passes']:.1f} passes), AngleBasedMSVM {t_an:.4f} s "
                  f"({row['angle_n_iter']} epochs), ratio {row['ratio']:.3f}", flush=True)
    return {"rows": rows}


def render_grid(section):
    rows = []
    for r in section["rows"]:
        warm = "-" if r["tl_mean_warm_passes"] is None else f"{r['tl_mean_warm_passes']:.1f}"
        rows.append([
            r["scenario"], r["kernel"], r["n"], r["k"], fmt(r["gamma"], ".4g"),
            fmt(r["bandwidth"], ".4g"),
            fmt(r["tl_time"], ".3f") + f" ({r['tl_runs']})", fmt(r["tl_time_per_grid"], ".4f"),
            fmt(r["angle_time"], ".4f") + f" ({r['angle_runs']})", f"**{r['ratio']:.3f}**",
            "met" if r["ratio"] <= GRID_TARGET else "NOT met",
            f"{r['tl_mean_passes']:.1f} ({r['tl_first_passes']} / {warm} / "
            f"{r['tl_max_passes']})",
            r["angle_n_iter"], fmt(r["passes_ratio"], ".2f"),
            fmt(r["tl_max_kkt_residual"], ".2e") + " / " + fmt(r["angle_kkt_residual"], ".2e"),
            f"{r['tl_max_objective_gap']:.1e} (grid point {r['tl_max_gap_grid_index']}) / "
            f"{r['angle_objective_gap']:.1e}"])
    header = ["data", "kernel", "n", "k", "gamma", "bandwidth h", "TLAMSVM fit s (runs)",
              "s per grid point", "AngleBasedMSVM fit s (runs)",
              "ratio per grid point / global", f"target <= {GRID_TARGET:g}x",
              "TLAMSVM passes per grid point: mean (first / mean of the rest / max)",
              "global epochs (n_iter_)", "mean passes / global epochs",
              "max KKT res. TLAMSVM / global",
              f"rel. objective gap to a tol={REF_TOL:g} fit: TLAMSVM max over the grid / global"]
    met = [r for r in section["rows"] if r["ratio"] <= GRID_TARGET]
    worst = max(section["rows"], key=lambda r: r["ratio"])
    text = [markdown_table(header, rows), "",
            f"Target (time per grid point <= {GRID_TARGET:g} x one AngleBasedMSVM fit): met in "
            f"{len(met)} of {len(section['rows'])} configurations; largest ratio "
            f"**{worst['ratio']:.3f}** ({worst['scenario']}, {worst['kernel']}): "
            f"{'met' if len(met) == len(section['rows']) else 'NOT met'} overall.",
            "",
            "Per-grid-point solver passes (`n_iter_`: epochs of n coordinate steps, at "
            "least 1):", ""]
    for r in section["rows"]:
        text.append(f"- {r['scenario']}, {r['kernel']}: [{', '.join(map(str, r['tl_passes']))}]")
    text += ["", f"Relative objective gap of every TLAMSVM grid fit (tol=1e-3, as timed) to the "
             f"same fit run to tol={REF_TOL:g}:", ""]
    for r in section["rows"]:
        text.append(f"- {r['scenario']}, {r['kernel']}: ["
                    + ", ".join(f"{v:.1e}" for v in r["tl_objective_gaps"]) + "]")
    return "\n".join(text)


# --------------------------------------------------------------------------- 2. generic QP
def _penalty(est, gamma):
    """1/2 sum_q a_q' K_sv a_q from dual_coef_ ((k-1) x n_SV) and the RBF kernel on the SVs."""
    K_sv = rbf_kernel(est.support_vectors_, est.support_vectors_, gamma)
    return 0.5 * float(np.einsum("qs,st,qt->", est.dual_coef_, K_sv, est.dual_coef_))


def _generic_child(X, y, gamma, C, out):
    """Child process: Gram matrix, then the cvxpy + Clarabel solve; results on ``out``."""
    K = rbf_kernel(X, X, gamma)
    try:
        res = fit_generic_angle(K, y, C, reinforcement=0.5)
    except Exception as exc:   # report a solver failure instead of hanging the parent
        out.put({"error": f"{type(exc).__name__}: {exc}"})
        return
    out.put({key: res[key] for key in ("decision", "penalty", "objective", "solver_objective",
                                       "status", "time", "sqrt_time", "solve_time", "n_iter")})


def run_generic(X, y, gamma, C, timeout):
    """fit_generic_angle in a spawned child, abandoned (terminated) after ``timeout`` s."""
    return run_in_child(_generic_child, (X, y, gamma, C), timeout)


def bench_generic(ns, max_generic_n, timeout):
    from msvm import AngleBasedMSVM
    from msvm.datasets import make_reinforced_example
    from msvm.model_selection import median_gamma

    rows = []
    for n in ns:
        X, y = make_reinforced_example(n, example="4.1.1", random_state=SEED)
        C = 1.0 / (n * LAMBDA)
        gamma = median_gamma(X, y)
        t, runs, est, warns = timed_fit(
            lambda: AngleBasedMSVM(C=C, reinforcement=0.5, kernel="rbf", gamma=gamma,
                                   tol=1e-6, random_state=SEED), X, y)
        G = est.decision_values(X)
        obj = _penalty(est, gamma) + C * reinforced_loss(G, y, None, 0.5)
        row = {"n": n, "C": C, "gamma": gamma, "msvm_time": t, "msvm_runs": runs,
               "msvm_objective_": float(est.objective_), "msvm_objective": obj,
               "msvm_n_iter": int(est.n_iter_), "msvm_kkt_residual": float(est.kkt_residual_),
               "msvm_n_support": int(est.support_.size), "warnings": warns, "generic": None}
        if n <= max_generic_n:
            g = run_generic(X, y, gamma, C, timeout)
            Gg = g.pop("decision", None)
            row["generic"] = g
            if "error" not in g:
                g["total_time"] = g["sqrt_time"] + g["time"]
                row["speedup"] = g["total_time"] / t
                row["rel_objective_diff"] = (obj - g["objective"]) / abs(g["objective"])
                row["max_abs_decision_diff"] = float(np.abs(G - Gg).max())
        rows.append(row)
        gen = row["generic"]
        gtxt = ("not run" if gen is None else gen.get("error")
                or f"{gen['total_time']:.1f} s ({gen['status']})")
        rel = row.get("rel_objective_diff")
        print(f"  2: n={n}: msvm {t:.4f} s ({row['msvm_n_iter']} epochs), generic {gtxt}"
              + ("" if rel is None else f", speed-up {row['speedup']:.0f}x, rel. diff "
                 f"{rel:.2e}"), flush=True)
    return {"rows": rows, "timeout": timeout}


def render_generic(section):
    rows = []
    for r in section["rows"]:
        g = r["generic"]
        if g is None:
            gtime, gobj, gstat = "not run", "-", "-"
        elif "error" in g:
            gtime = f"> {g['wall_time']:.0f}" if g.get("timed_out") else "-"
            gobj, gstat = "-", g["error"]
        else:
            gtime, gobj = fmt(g["total_time"], ".1f"), fmt(g["objective"], ".12g")
            gstat = f"{g['status']} ({g['n_iter']} it.)"
        speed = f"**{r['speedup']:.0f}x**" if "speedup" in r else "-"
        rows.append([r["n"], fmt(r["C"], ".4g"), fmt(r["gamma"], ".4g"),
                     fmt(r["msvm_time"], ".4f") + f" ({r['msvm_runs']})", r["msvm_n_iter"],
                     fmt(r["msvm_kkt_residual"], ".1e"), gtime, speed,
                     fmt(r["msvm_objective"], ".12g"), gobj,
                     fmt(r.get("rel_objective_diff"), ".2e"),
                     fmt(r.get("max_abs_decision_diff"), ".1e"), r["msvm_n_support"], gstat])
    header = ["n", "C", "gamma", "msvm fit s (runs)", "msvm epochs", "msvm KKT res.",
              "generic s", "speed-up", "msvm objective", "generic objective", "rel. diff",
              "max abs decision diff", "msvm SVs", "generic status"]
    text = [markdown_table(header, rows), ""]
    solved = [r for r in section["rows"] if "speedup" in r]
    top = [r for r in section["rows"] if r["n"] == GENERIC_TARGET_N]
    if not top:
        text.append(f"Target (n = {GENERIC_TARGET_N}): not measured in this run.")
    elif "speedup" not in top[0]:
        err = (top[0]["generic"] or {}).get("error", "not run")
        text.append(f"Target (n = {GENERIC_TARGET_N}): the generic solver gave no result "
                    f"({err}); not measured.")
    else:
        r = top[0]
        fast = r["speedup"] >= SPEEDUP_TARGET
        close = abs(r["rel_objective_diff"]) <= REL_TARGET
        text.append(f"At n = {GENERIC_TARGET_N}: speed-up **{r['speedup']:.0f}x** "
                    f"(>= {SPEEDUP_TARGET:g}x: {'met' if fast else 'NOT met'}), |rel. diff| "
                    f"**{abs(r['rel_objective_diff']):.1e}** (<= {REL_TARGET:g}: "
                    f"{'met' if close else 'NOT met'}); target "
                    f"{'met' if fast and close else 'NOT met'}.")
    if solved:
        worst = max(abs(r["rel_objective_diff"]) for r in solved)
        text.append(f"Largest |rel. diff| over all n: {worst:.1e}.")
    check = max(abs(r["msvm_objective_"] - r["msvm_objective"]) / abs(r["msvm_objective"])
                for r in section["rows"])
    text += ["", f"Check: msvm's `objective_` agrees with the objective recomputed here from "
             f"`dual_coef_` and `decision_values` to {check:.1e} (relative)."]
    return "\n".join(text)


# --------------------------------------------------------------------------- 3. macro F1
def _cv_fit(search, X, y):
    """Fit a GridSearchCV (n_jobs=1: in-process, scored by `recording_scorer`); returns the
    time and one note per fit that did not converge and per other warning (`_fit_notes`)."""
    scoring = search.scoring
    with watch_fits() as watch:
        search.set_params(scoring=recording_scorer(scoring, watch))
        start = time.perf_counter()
        search.fit(X, y)
        elapsed = time.perf_counter() - start
        watch.add(search.best_estimator_)
    search.set_params(scoring=scoring)
    name = type(search.estimator).__name__
    return elapsed, _fit_notes(watch, f"{name}: ")


def bench_accuracy(reps, quick):
    from sklearn.metrics import f1_score
    from sklearn.model_selection import GridSearchCV

    from msvm import AngleBasedMSVM, TargetedLocalMSVM
    from msvm.datasets import make_targeted_example
    from msvm.targeted import bandwidth_rule

    scenarios = {}
    for scenario in ("S1", "S2"):
        n = QUICK_SIZES[scenario] if quick else None
        C_grid = list(C_GRIDS[scenario])
        rows, warn_counts = [], Counter()
        for rep in range(reps):
            X, y = make_targeted_example(n, scenario=scenario, random_state=rep)
            X_test, y_test = make_targeted_example(len(y), scenario=scenario,
                                                   random_state=1000 + rep)
            rule = bandwidth_rule(X[:, 0], "silverman")
            tl_search = GridSearchCV(
                TargetedLocalMSVM(target=0, n_grid=N_GRID, kernel="linear", random_state=SEED),
                {"C": C_grid, "bandwidth": [m * rule for m in BANDWIDTH_MULTIPLES]},
                cv=CV_FOLDS, scoring="f1_macro", n_jobs=1)
            an_search = GridSearchCV(
                AngleBasedMSVM(kernel="linear", random_state=SEED), {"C": C_grid},
                cv=CV_FOLDS, scoring="f1_macro", n_jobs=1)
            t_tl, w_tl = _cv_fit(tl_search, X, y)
            t_an, w_an = _cv_fit(an_search, X, y)
            warn_counts.update(w_tl + w_an)
            f1_tl = float(f1_score(y_test, tl_search.predict(X_test), average="macro"))
            f1_an = float(f1_score(y_test, an_search.predict(X_test), average="macro"))
            best_tl = tl_search.best_params_
            row = {"rep": rep, "n_train": len(y), "n_test": len(y_test),
                   "silverman": float(rule),
                   "tl_f1": f1_tl, "angle_f1": f1_an,
                   "tl_best_C": float(best_tl["C"]),
                   "tl_best_bandwidth": float(best_tl["bandwidth"]),
                   "tl_best_multiple": float(best_tl["bandwidth"] / rule),
                   "angle_best_C": float(an_search.best_params_["C"]),
                   "tl_cv_f1": float(tl_search.best_score_),
                   "angle_cv_f1": float(an_search.best_score_),
                   "tl_search_time": t_tl, "angle_search_time": t_an,
                   "tl_refit_max_passes": int(np.max(tl_search.best_estimator_.n_iter_)),
                   "angle_refit_n_iter": int(an_search.best_estimator_.n_iter_),
                   "n_warnings": len(w_tl) + len(w_an)}
            rows.append(row)
            print(f"  3: {scenario} rep {rep}: macro F1 TLAMSVM {f1_tl:.4f} (C={best_tl['C']:g}, "
                  f"h={row['tl_best_multiple']:g}x rule; {t_tl:.1f} s), AngleBasedMSVM "
                  f"{f1_an:.4f} (C={row['angle_best_C']:g}; {t_an:.1f} s), "
                  f"{row['n_warnings']} unconverged fits or warnings", flush=True)
        tl = np.array([r["tl_f1"] for r in rows])
        an = np.array([r["angle_f1"] for r in rows])
        diff = tl - an
        def se(v):
            return float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else None

        scenarios[scenario] = {
            "rows": rows, "C_grid": C_grid, "bandwidth_multiples": list(BANDWIDTH_MULTIPLES),
            "tl_mean": float(tl.mean()), "tl_se": se(tl),
            "angle_mean": float(an.mean()), "angle_se": se(an),
            "diff_mean": float(diff.mean()), "diff_se": se(diff),
            "tl_wins": int(np.sum(diff > 0)), "ties": int(np.sum(diff == 0)),
            "warning_counts": dict(warn_counts),
        }
    return {"reps": reps, "cv_folds": CV_FOLDS, "scenarios": scenarios}


def render_accuracy(section):
    rows, verdicts, choices = [], [], []
    for name, s in section["scenarios"].items():
        R = len(s["rows"])
        def pm(m, e):
            return f"{m:.4f}" + ("" if e is None else f" ± {e:.4f}")

        rows.append([name, R, s["rows"][0]["n_train"],
                     "{" + ", ".join(f"{c:g}" for c in s["C_grid"]) + "}",
                     pm(s["tl_mean"], s["tl_se"]), pm(s["angle_mean"], s["angle_se"]),
                     "**" + pm(s["diff_mean"], s["diff_se"]) + "**", f"{s['tl_wins']} / {R}",
                     f"{sum(r['tl_search_time'] for r in s['rows']):.0f} / "
                     f"{sum(r['angle_search_time'] for r in s['rows']):.0f}"])
        ahead = s["diff_mean"] > 0
        clear = s["diff_se"] is not None and s["diff_mean"] > 2 * s["diff_se"]
        verdicts.append(
            f"- {name}: TLAMSVM is {'ahead' if ahead else 'NOT ahead'} of AngleBasedMSVM by "
            f"{s['diff_mean']:+.4f} macro F1"
            + ("" if s["diff_se"] is None else
               f" (paired s.e. {s['diff_se']:.4f}; "
               f"{'more' if clear else 'not more'} than 2 s.e.)")
            + f": {'the same direction as' if ahead else 'unlike'} the paper.")
        tl_pick = Counter(f"C={r['tl_best_C']:g}, h={r['tl_best_multiple']:g}x"
                          for r in s["rows"])
        an_pick = Counter(f"C={r['angle_best_C']:g}" for r in s["rows"])
        choices.append(f"- {name}: TLAMSVM " + ", ".join(f"{k} ({v})" for k, v in
                                                        sorted(tl_pick.items()))
                       + "; AngleBasedMSVM " + ", ".join(f"{k} ({v})" for k, v in
                                                         sorted(an_pick.items())) + ".")
    header = ["data", "reps", "n (train = test)", "C grid", "TLAMSVM macro F1 (mean ± s.e.)",
              "AngleBasedMSVM macro F1 (mean ± s.e.)", "difference TLAMSVM - Angle (paired)",
              "reps TLAMSVM ahead", "CV search s TLAMSVM / Angle (all reps)"]
    text = [markdown_table(header, rows), "", "Against the paper (TLAMSVM better than RAMSVM "
            "in Kang, Lin and Zhang (2019) tables 1 and 2):", ""] + verdicts + [
            "", "Parameters chosen by cross-validation (number of repetitions):", ""] + choices
    per_rep = []
    for name, s in section["scenarios"].items():
        for r in s["rows"]:
            per_rep.append([name, r["rep"], fmt(r["tl_f1"], ".4f"), fmt(r["angle_f1"], ".4f"),
                            fmt(r["tl_cv_f1"], ".4f"), fmt(r["angle_cv_f1"], ".4f"),
                            f"{r['tl_best_C']:g}", f"{r['tl_best_multiple']:g}x = "
                            f"{r['tl_best_bandwidth']:.4g}", f"{r['angle_best_C']:g}",
                            r["n_warnings"]])
    text += ["", "Per repetition:", "", markdown_table(
        ["data", "rep", "test F1 TLAMSVM", "test F1 Angle", "CV F1 TLAMSVM", "CV F1 Angle",
         "TLAMSVM C", "TLAMSVM h", "Angle C", "unconverged fits or warnings"], per_rep)]
    return "\n".join(text)


# --------------------------------------------------------------------------- report
SETUPS = {
    "1": ("1. TLAMSVM cost per grid point against one AngleBasedMSVM fit",
          "Kang, Lin and Zhang (2019) simulations `make_targeted_example(scenario='S1' or 'S2', "
          "random_state=0)` (S1: n = 1000, k = 3, 2 features + U; S2: n = 1500, k = 5, 6 "
          "features + U; U is column 0). TargetedLocalMSVM(C=1, reinforcement=0.5, target=0, "
          "smoother='epanechnikov', bandwidth='silverman', n_grid=20, tol=1e-3, "
          "random_state=0) on all columns against AngleBasedMSVM(C=1, reinforcement=0.5, "
          "tol=1e-3, random_state=0) on the non-target columns, linear kernel and RBF kernel "
          "with gamma = 'scale' resolved once on the non-target columns "
          "(1 / (n_features * X.var())) and the same float passed to both. Fits faster than "
          f"{FAST_SECONDS:g} s are repeated {GRID_REPEATS} times and the median is reported. "
          "Time per grid point = TLAMSVM fit time / n_grid (everything in the TLAMSVM fit, "
          "bandwidth and kernel setup included); ratio = time per grid point / AngleBasedMSVM "
          "fit time. The two problems are not identical: each grid fit weighs sample i by "
          "C K_h(U_i - u0) (these weights sum to about C n at an interior u0, since U is "
          "uniform on (0, 1)) and penalizes its intercept (a constant feature; K + 1 for the "
          "RBF kernel), while the global fit has weights C and free intercepts. Passes: "
          "TLAMSVM's `n_iter_` per grid point (the first grid point starts cold, every other "
          "from its neighbour's dual solution) against the global fit's `n_iter_` (epochs). "
          "Both models go through the compiled SMO path here (for the linear kernel too, as "
          "n <= 2000), whose epochs are ceil(coordinate steps / n) with n all training "
          "samples: a grid fit whose few nonzero-weight samples need fewer than n steps "
          "reports 1 even when it moved. Accuracy of what was timed: both models are refitted "
          "(untimed) with tol=1e-7, max_iter=100000, and the relative gap (objective at "
          "tol=1e-3 - objective at tol=1e-7) / objective at tol=1e-7 is reported, per grid "
          "point for TLAMSVM (`objectives_`) and for the global fit (`objective_`). "
          "TLAMSVM without warm starts is not timed: the public API has no switch for it. "
          f"Target: time per grid point <= {GRID_TARGET:g} x the global fit time."),
    "2": ("2. AngleBasedMSVM against a generic QP solver (cvxpy + Clarabel)",
          "Liu and Yuan (2011) example 4.1.1 data "
          "(`make_reinforced_example(n, '4.1.1', random_state=0)`, "
          "k = 3, 2 features), RBF kernel with gamma = 'median' "
          "(`msvm.model_selection.median_gamma`: 1 / (2 sigma^2), sigma the median "
          "between-class pairwise distance) resolved once and "
          "the same float passed to both solvers, reinforcement = 0.5, C = 1 / (n lambda) with "
          "lambda = 1e-3. msvm: AngleBasedMSVM(tol=1e-6, max_iter=10000, random_state=0), "
          f"repeated {REPEATS} times when faster than {FAST_SECONDS:g} s (median). Generic: "
          "the primal of Kang, Lin and Zhang (2019) as a QP for cvxpy + Clarabel "
          "(default tolerances; "
          "`oracle.primal.fit_generic_angle`): f = K V + 1 b' with V n x (k-1) and free "
          "intercepts b, f at the training points as an auxiliary variable F = K V + 1 b', "
          "decision values G = F W with W the simplex vertices, one hinge slack "
          "per (i, j), no sum-to-zero constraint; the penalty 1/2 sum_q v_q' K v_q = "
          "1/2 ||R V||^2 with R the symmetric PSD square root of K, solved in U = R V (the same "
          "problem; it makes the quadratic form the identity instead of the numerically "
          "singular K). It runs in a spawned child process; its time is the square root plus "
          "the cvxpy call (canonicalization and solve), not the Gram matrix. Clarabel may use "
          "several threads, msvm uses one. Both objectives are recomputed here in NumPy with "
          "one formula from the decision values at the training points (msvm: "
          "`decision_values(X)`, penalty 0.5 sum_q a_q' K_sv a_q from `dual_coef_` and the "
          "kernel on `support_vectors_`; generic: G = (R U + 1 b') W, penalty 0.5 ||U||^2). "
          "Speed-up = generic time / msvm time; rel. diff = (msvm - generic) / generic. "
          f"Target: >= {SPEEDUP_TARGET:g}x at n = {GENERIC_TARGET_N} with |rel. diff| <= "
          f"{REL_TARGET:g}."),
    "3": ("3. Macro F1: TLAMSVM against AngleBasedMSVM (RAMSVM) on S1 and S2",
          "For each repetition rep = 0..R-1: training data `make_targeted_example(scenario=..., "
          "random_state=rep)` (S1: n = 1000, S2: n = 1500) and a test set of the same size "
          "with random_state = 1000 + rep. Linear kernel, reinforcement 0.5, tol 1e-3, "
          "random_state=0 for both. TargetedLocalMSVM(target=0, n_grid=20, "
          "smoother='epanechnikov') gets X with the U column and tunes C and the bandwidth "
          "h in {0.5, 1, 2} x the Silverman rule (0.9 min(sd, IQR/1.34) n^(-1/5) of the "
          "training U, computed once per repetition on the whole training set); "
          "AngleBasedMSVM (the paper's RAMSVM) gets all columns, U as an ordinary feature, and "
          f"tunes C. Both by {CV_FOLDS}-fold `GridSearchCV(scoring='f1_macro')` (stratified "
          "folds, no shuffling) on the training set and refitted on all of it; test macro F1 is "
          "`f1_score(average='macro')`. C grid: {0.1, 1, 10} for S1; **shrunk to {0.1, 1} for "
          "S2** to keep the full run under about 30 minutes (with the linear kernel on S2's "
          "raw, unscaled features a C = 10 fit takes 11 s for AngleBasedMSVM and 20-90 s for "
          "TLAMSVM, with grid points at max_iter). No features are standardized. Mean ± "
          "standard error (std / sqrt(R)) over the repetitions; the difference is paired by "
          "repetition."),
}
RENDER = {"1": render_grid, "2": render_generic, "3": render_accuracy}


def _section_warnings(section):
    """(message, count or None) pairs of the warnings recorded in a section."""
    plain = set()
    for row in section.get("rows", []):
        plain.update(row.get("warnings", []))
    counts = Counter()
    for s in section.get("scenarios", {}).values():
        counts.update(s.get("warning_counts", {}))
    return sorted(plain), counts


def render_report(data):
    m = data["machine"]
    lines = ["# msvm angle-based MSVM benchmark results", "",
             "Generated by `python -m benchmarks.run_angle_benchmarks"
             + (" --quick" if data.get("quick") else "") + "`; the raw numbers are in "
             + f"`{data['json_name']}`. Each model runs side by side with its baseline in one "
             "process (the generic solver of section 2 in a child process). Timings are "
             "wall-clock (`time.perf_counter`); `runs` is the number of timed fits whose "
             "median is reported.", "",
             "## Machine", "",
             markdown_table(["item", "value"], [[k, v] for k, v in m.items()]), ""]
    if data.get("quick"):
        lines += ["**Quick smoke run**: tiny sizes (S1 n = 200, S2 n = 300; section 2 at "
                  "n = 100, 200; 2 repetitions); the numbers say nothing about performance "
                  "or accuracy.", ""]
    for name in sorted(data["benchmarks"]):
        section = data["benchmarks"][name]
        title, setup = SETUPS[name]
        lines += [f"## {title}", "", setup, "", RENDER[name](section), ""]
        if section.get("date") and section["date"] != m["date"]:
            lines += [f"(Run on {section['date']}.)", ""]
        if section.get("wall_time") is not None:
            lines += [f"Section wall time: {section['wall_time']:.0f} s.", ""]
        plain, counts = _section_warnings(section)
        if plain or counts:
            lines += ["Fits that did not converge, and warnings raised during these fits:", ""]
            lines += [f"- {w}" for w in plain]
            lines += [f"- {w} ({c} times)" for w, c in sorted(counts.items())] + [""]
        else:
            lines += ["Every fit converged and no warning was raised during these fits.", ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="1,2,3",
                        help="comma-separated subset of the sections 1, 2, 3")
    parser.add_argument("--quick", action="store_true",
                        help="tiny smoke run; writes quick_angle.md / quick_angle.json")
    parser.add_argument("--reps", type=int, default=None,
                        help="repetitions of section 3 (default 10; 2 with --quick)")
    parser.add_argument("--max-generic-n", type=int, default=2000,
                        help="largest n solved by the generic QP solver in section 2")
    parser.add_argument("--generic-timeout", type=float, default=900.0,
                        help="seconds after which a generic solve is abandoned")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(RENDER)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {sorted(RENDER)}")
    reps = args.reps if args.reps is not None else (2 if args.quick else 10)

    md_path = RESULTS / ("quick_angle.md" if args.quick else "angle.md")
    json_path = RESULTS / ("quick_angle.json" if args.quick else "angle.json")

    runners = {
        "1": lambda: bench_grid(args.quick),
        "2": lambda: bench_generic([100, 200] if args.quick else [500, 1000, 2000],
                                   args.max_generic_n, args.generic_timeout),
        "3": lambda: bench_accuracy(reps, args.quick),
    }
    run_sections(only, runners, SETUPS, RENDER, render_report, md_path, json_path, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
