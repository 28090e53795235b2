"""Benchmarks of msvm, run side by side with their baselines in one process, reported as ratios.

    python -m benchmarks.run_benchmarks                    # everything (about 20-25 minutes)
    python -m benchmarks.run_benchmarks --only b,c         # some benchmarks
    python -m benchmarks.run_benchmarks --quick            # tiny smoke run (seconds)

(from the repository root, which holds the benchmarks and oracle packages)

a. ReinforcedMSVM against the same primal solved by a generic QP solver (cvxpy + Clarabel,
   oracle.primal.fit_generic) on the Liu and Yuan (2011) example 4.1.1 data: fit-time ratio and
   relative objective difference.
b. pendigits, RBF kernel, against sklearn.svm.SVC: fit-time ratio and test accuracy.
c. pendigits, linear kernel, against LinearSVC(multi_class='crammer_singer').
d. Scaling of the RBF fit time with n, and the peak memory of a fit at the largest n.

The full run writes benchmarks/results/README.md and benchmarks/results/results.json (with
--only, the sections run replace those in the existing JSON and the README is re-rendered);
--quick writes quick.md and quick.json there instead. Timings are measured with
time.perf_counter (benchmarks.harness), never asserted: the targets are reported as met or not
met.
"""

import argparse
import resource
import sys

import numpy as np

from benchmarks.harness import (FAST_SECONDS, REPEATS, RESULTS, fmt, markdown_table,
                                pendigits_split, run_in_child, run_sections, timed_fit)
from oracle import fit_generic, rbf_kernel, reinforced_loss

LAMBDA = 1e-3            # benchmarks a and d: C = 1 / (n * LAMBDA), the paper's scaling
SEED = 0


def median_gamma(X, y):
    """gamma = 1 / (2 sigma^2), sigma the median between-class distance (the library's)."""
    from msvm.model_selection import median_gamma as library_median_gamma

    return library_median_gamma(X, y)


def rbf_gram(X, gamma):
    """The RBF Gram matrix of X (the oracle's kernel, independent of msvm)."""
    return rbf_kernel(X, X, gamma)


# --------------------------------------------------------------------------- a. generic QP
def bench_generic(ns, max_generic_n):
    from msvm import ReinforcedMSVM
    from msvm.datasets import make_reinforced_example

    rows = []
    for n in ns:
        X, y = make_reinforced_example(n, example="4.1.1", random_state=SEED)
        C = 1.0 / (n * LAMBDA)
        gamma = median_gamma(X, y)
        t_msvm, runs, est, warns = timed_fit(
            lambda: ReinforcedMSVM(C=C, kernel="rbf", gamma=gamma, tol=1e-6,
                                   random_state=SEED), X, y)
        # objective_ re-derived here from dual_coef_ and decision_function, as a check.
        K_sv = rbf_gram(est.support_vectors_, gamma)
        penalty = 0.5 * float(np.einsum("js,st,jt->", est.dual_coef_, K_sv, est.dual_coef_))
        F = est.decision_function(X)
        recomputed = penalty + C * reinforced_loss(F, y, None, 0.5)
        row = {"n": n, "C": C, "gamma": gamma, "msvm_time": t_msvm, "msvm_runs": runs,
               "msvm_objective": est.objective_, "msvm_objective_recomputed": recomputed,
               "msvm_n_iter": est.n_iter_, "msvm_kkt_residual": est.kkt_residual_,
               "msvm_warnings": warns, "generic_time": None, "generic_objective": None,
               "generic_status": None, "speedup": None, "rel_objective_diff": None,
               "max_abs_decision_diff": None}
        if n <= max_generic_n:
            K = rbf_gram(X, gamma)
            ref = fit_generic(K, y, C, reinforcement=0.5)
            t_generic = ref["sqrt_time"] + ref["time"]
            row.update(generic_time=t_generic, generic_objective=ref["objective"],
                       generic_status=ref["status"], generic_solver_iter=ref["n_iter"],
                       speedup=t_generic / t_msvm,
                       rel_objective_diff=(est.objective_ - ref["objective"])
                       / abs(ref["objective"]),
                       max_abs_decision_diff=float(np.abs(F - ref["decision"]).max()))
        rows.append(row)
        print_progress(row)
    return {"rows": rows}


def render_generic(section):
    rows = []
    for r in section["rows"]:
        rows.append([r["n"], fmt(r["C"], ".4g"), fmt(r["gamma"], ".4g"),
                     fmt(r["msvm_time"], ".3f") + f" ({r['msvm_runs']})",
                     fmt(r["generic_time"], ".1f"), fmt(r["speedup"], ".0f") + "x"
                     if r["speedup"] is not None else "-",
                     fmt(r["msvm_objective"], ".10g"), fmt(r["generic_objective"], ".10g"),
                     fmt(r["rel_objective_diff"], ".2e"),
                     fmt(r["max_abs_decision_diff"], ".1e"),
                     r["msvm_n_iter"], fmt(r["msvm_kkt_residual"], ".1e")])
    header = ["n", "C", "gamma", "msvm fit s (runs)", "generic s", "speed-up",
              "msvm objective_", "generic objective", "rel. diff", "max abs f diff",
              "msvm epochs", "msvm KKT res."]
    text = [markdown_table(header, rows), ""]
    solved = [r for r in section["rows"] if r["speedup"] is not None]
    if solved:
        top = max(solved, key=lambda r: r["n"])
        worst = max(abs(r["rel_objective_diff"]) for r in solved)
        verdict = ("not measured" if top["n"] != 2000
                   else "met" if top["speedup"] >= 200 else "NOT met")
        text.append(f"At n = {top['n']}: speed-up **{top['speedup']:.0f}x** (target >= 200x "
                    f"at n = 2000: {verdict}). Largest "
                    f"|rel. diff| **{worst:.1e}** (target <= 1e-6: "
                    f"{'met' if worst <= 1e-6 else 'NOT met'}). Generic solver status: "
                    + ", ".join(sorted({str(r['generic_status']) for r in solved})) + ".")
    check = max(abs(r["msvm_objective"] - r["msvm_objective_recomputed"])
                / abs(r["msvm_objective_recomputed"]) for r in section["rows"])
    text.append(f"Check: `objective_` agrees with the objective recomputed here from "
                f"`dual_coef_` and `decision_function` to {check:.1e} (relative).")
    return "\n".join(text)


# --------------------------------------------------------------------------- b. SVC
def bench_svc(quick):
    from sklearn.svm import SVC

    from msvm import ReinforcedMSVM

    X_train, X_test, y_train, y_test = pendigits_split(quick)
    C = 10.0
    gamma = 1.0 / (X_train.shape[1] * X_train.var())   # gamma='scale', resolved once
    t_svc, runs_svc, svc, warns_svc = timed_fit(lambda: SVC(C=C, kernel="rbf", gamma=gamma),
                                                X_train, y_train)
    t_msvm, runs_msvm, est, warns_msvm = timed_fit(
        lambda: ReinforcedMSVM(C=C, kernel="rbf", gamma=gamma, random_state=SEED),
        X_train, y_train)
    acc_svc, acc_msvm = svc.score(X_test, y_test), est.score(X_test, y_test)
    return {"n_train": len(y_train), "n_test": len(y_test), "C": C, "gamma": gamma,
            "svc_time": t_svc, "svc_runs": runs_svc, "svc_accuracy": acc_svc,
            "svc_n_support": int(svc.support_.size),
            "msvm_time": t_msvm, "msvm_runs": runs_msvm, "msvm_accuracy": acc_msvm,
            "msvm_n_support": int(est.support_.size), "msvm_n_iter": est.n_iter_,
            "msvm_kkt_residual": est.kkt_residual_, "time_ratio": t_msvm / t_svc,
            "accuracy_diff_points": 100.0 * (acc_msvm - acc_svc),
            "warnings": warns_svc + warns_msvm}


def render_svc(s):
    rows = [["sklearn SVC (one-vs-one, libsvm)", fmt(s["svc_time"], ".3f"), s["svc_runs"],
             fmt(s["svc_accuracy"], ".4f"), s["svc_n_support"], "-", "-"],
            ["ReinforcedMSVM", fmt(s["msvm_time"], ".3f"), s["msvm_runs"],
             fmt(s["msvm_accuracy"], ".4f"), s["msvm_n_support"], s["msvm_n_iter"],
             fmt(s["msvm_kkt_residual"], ".1e")]]
    table = markdown_table(["model", "fit time (s)", "runs", "test accuracy", "support vectors",
                            "epochs", "KKT res."], rows)
    return (f"{table}\n\nTime ratio ReinforcedMSVM / SVC: **{s['time_ratio']:.2f}** "
            f"(target <= 10: {'met' if s['time_ratio'] <= 10 else 'NOT met'}). "
            f"Accuracy difference: **{s['accuracy_diff_points']:+.2f} points** (target >= -0.5: "
            f"{'met' if s['accuracy_diff_points'] >= -0.5 else 'NOT met'}).")


# --------------------------------------------------------------------------- c. LinearSVC
def bench_linear(quick):
    from sklearn.svm import LinearSVC

    from msvm import ReinforcedMSVM

    X_train, X_test, y_train, y_test = pendigits_split(quick)
    C = 0.1
    t_lin, runs_lin, lin, warns_lin = timed_fit(
        lambda: LinearSVC(multi_class="crammer_singer", C=C, dual=True, max_iter=5000),
        X_train, y_train)
    t_msvm, runs_msvm, est, warns_msvm = timed_fit(
        lambda: ReinforcedMSVM(C=C, kernel="linear", random_state=SEED), X_train, y_train)
    acc_lin, acc_msvm = lin.score(X_test, y_test), est.score(X_test, y_test)
    return {"n_train": len(y_train), "n_test": len(y_test), "C": C,
            "linearsvc_time": t_lin, "linearsvc_runs": runs_lin, "linearsvc_accuracy": acc_lin,
            "linearsvc_n_iter": int(np.max(lin.n_iter_)),
            "msvm_time": t_msvm, "msvm_runs": runs_msvm, "msvm_accuracy": acc_msvm,
            "msvm_n_iter": est.n_iter_, "msvm_kkt_residual": est.kkt_residual_,
            "time_ratio": t_msvm / t_lin,
            "accuracy_diff_points": 100.0 * (acc_msvm - acc_lin),
            "warnings": warns_lin + warns_msvm}


def render_linear(s):
    rows = [["LinearSVC (crammer_singer, dual)", fmt(s["linearsvc_time"], ".3f"),
             s["linearsvc_runs"], fmt(s["linearsvc_accuracy"], ".4f"), s["linearsvc_n_iter"],
             "-"],
            ["ReinforcedMSVM (linear)", fmt(s["msvm_time"], ".3f"), s["msvm_runs"],
             fmt(s["msvm_accuracy"], ".4f"), s["msvm_n_iter"],
             fmt(s["msvm_kkt_residual"], ".1e")]]
    table = markdown_table(["model", "fit time (s)", "runs", "test accuracy", "iterations",
                            "KKT res."], rows)
    return (f"{table}\n\nTime ratio ReinforcedMSVM / LinearSVC: **{s['time_ratio']:.2f}** "
            f"(target <= 2: {'met' if s['time_ratio'] <= 2 else 'NOT met'}). "
            f"Accuracy difference: {s['accuracy_diff_points']:+.2f} points (different losses: "
            f"reported, no target).")


# --------------------------------------------------------------------------- d. scaling
def _scaling_data(n):
    from msvm.datasets import make_reinforced_example

    X, y = make_reinforced_example(n, example="4.1.1", random_state=SEED)
    m = min(n, 2000)   # the points are i.i.d., so the first 2000 are a random subsample
    return X, y, 1.0 / (n * LAMBDA), median_gamma(X[:m], y[:m])


def _proc_status_bytes(field):
    """A memory field of /proc/self/status (VmRSS, VmHWM) in bytes, or None off Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _reset_peak_rss():
    """Reset this process's RSS high-water mark (Linux: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _memory_child(n, cache_size, queue):
    """Run in a fresh (spawned) process: peak RSS increase and traced peak of one fit.

    On Linux the RSS high-water mark is reset just before the fit, so VmHWM after the fit minus
    VmRSS before it is the fit's peak increase. Elsewhere the growth of ru_maxrss across the
    fit is used, which misses a fit whose peak stays below the process's earlier peak.
    """
    import tracemalloc

    from msvm import ReinforcedMSVM

    X, y, C, gamma = _scaling_data(n)
    make = lambda: ReinforcedMSVM(C=C, kernel="rbf", gamma=gamma, cache_size=cache_size,  # noqa
                                  random_state=SEED)
    make().fit(X[:200], y[:200])            # warm up imports and lazy initialisation
    unit = 1 if sys.platform == "darwin" else 1024   # ru_maxrss: bytes on macOS, KiB on Linux
    reset = _reset_peak_rss()
    rss_before = _proc_status_bytes("VmRSS")
    maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
    make().fit(X, y)
    maxrss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
    hwm_after = _proc_status_bytes("VmHWM")
    tracemalloc.start()
    make().fit(X, y)
    traced_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if reset and rss_before is not None and hwm_after is not None:
        method, increase = "VmHWM reset before the fit", hwm_after - rss_before
    else:
        method, increase = "growth of ru_maxrss", maxrss_after - maxrss_before
    queue.put({"method": method, "rss_before": rss_before, "vmhwm_after": hwm_after,
               "maxrss_before": maxrss_before, "maxrss_after": maxrss_after,
               "rss_increase": increase, "traced_peak": traced_peak})


def bench_scaling(ns, cache_size=200):
    from msvm import ReinforcedMSVM

    rows = []
    for n in ns:
        X, y, C, gamma = _scaling_data(n)
        t, runs, est, warns = timed_fit(
            lambda: ReinforcedMSVM(C=C, kernel="rbf", gamma=gamma, cache_size=cache_size,
                                   random_state=SEED), X, y)
        rows.append({"n": n, "C": C, "gamma": gamma, "time": t, "runs": runs,
                     "n_iter": est.n_iter_, "kkt_residual": est.kkt_residual_,
                     "n_support": int(est.support_.size), "warnings": warns})
        print(f"  d: n={n}: {t:.3f} s ({runs} runs)", flush=True)
    slope = float(np.polyfit(np.log([r["n"] for r in rows]),
                             np.log([r["time"] for r in rows]), 1)[0]) if len(rows) > 1 else None

    n_max = max(ns)
    mem = run_in_child(_memory_child, (n_max, cache_size))
    mem.update(n=n_max, cache_size_mb=cache_size, gram_bytes=8 * n_max ** 2)
    return {"rows": rows, "exponent": slope, "memory": mem}


def render_scaling(s):
    rows = [[r["n"], fmt(r["C"], ".4g"), fmt(r["gamma"], ".4g"), fmt(r["time"], ".3f"),
             r["runs"], r["n_iter"], r["n_support"], fmt(r["kkt_residual"], ".1e")]
            for r in s["rows"]]
    table = markdown_table(["n", "C", "gamma", "fit time (s)", "runs", "epochs",
                            "support vectors", "KKT res."], rows)
    m = s["memory"]
    mib = 2.0 ** 20
    exponent = "-" if s["exponent"] is None else f"{s['exponent']:.2f}"
    mem_table = markdown_table(
        ["n", "cache_size", "peak RSS increase of the fit", "tracemalloc peak (NumPy/Python)",
         "n x n float64 matrix (8 n^2)"],
        [[m["n"], f"{m['cache_size_mb']} MB", f"{m['rss_increase'] / mib:.1f} MiB",
          f"{m['traced_peak'] / mib:.1f} MiB", f"{m['gram_bytes'] / mib:.1f} MiB"]])
    ratio = m["rss_increase"] / m["gram_bytes"]
    bound = f" ({m['method']})"
    return (f"{table}\n\nFitted log-log exponent (fit time ~ n^p): **p = {exponent}**.\n\n"
            f"{mem_table}\n\nThe peak RSS increase{bound} is {100 * ratio:.1f}% of the size "
            f"of one n x n float64 matrix.")


# --------------------------------------------------------------------------- report
SETUPS = {
    "a": ("a. Against a generic QP solver (cvxpy + Clarabel)",
          "Liu and Yuan (2011) example 4.1.1 data "
          "(`make_reinforced_example(n, '4.1.1', random_state=0)`, "
          "k = 3), RBF kernel with gamma = 'median' (1 / (2 sigma^2), sigma the median "
          "between-class pairwise distance) resolved once on the training data and the same "
          "float passed to both solvers, reinforcement = 0.5, C = 1 / (n lambda) with "
          "**lambda = 1e-3**. ReinforcedMSVM(tol=1e-6, random_state=0) against the same primal "
          "written as a QP for cvxpy + Clarabel (default tolerances 1e-8; "
          "`oracle.primal.fit_generic`: variables V, b and the hinge slacks, penalty through the "
          "PSD square root of K). The generic time includes the square root and cvxpy's "
          "canonicalization but not the Gram matrix; Clarabel may use several threads, msvm "
          "uses one. Speed-up = generic time / msvm time; rel. diff = (msvm objective_ - "
          "generic objective) / generic objective (objective of docs/models.md, recomputed "
          "in NumPy for the generic solution); max abs f diff compares decision values at the "
          "training points. Targets: speed-up >= 200x at n = 2000, |rel. diff| <= 1e-6."),
    "b": ("b. pendigits, RBF kernel, against sklearn.svm.SVC",
          "Pendigits (bundled), standardized (scaler fitted on the training part), stratified "
          "70/30 split with random_state=0. C = 10, gamma = 'scale' resolved once "
          "(1 / (n_features * X_train.var())) and the same float passed to both. "
          "ReinforcedMSVM(tol=1e-3 default, random_state=0) against SVC (libsvm, one-vs-one, "
          "tol=1e-3). Targets: at most 10x SVC's fit time, accuracy at least SVC's - 0.5 "
          "points."),
    "c": ("c. pendigits, linear kernel, against LinearSVC (Crammer-Singer)",
          "Same split. ReinforcedMSVM(kernel='linear', C=0.1, random_state=0) against "
          "LinearSVC(multi_class='crammer_singer', C=0.1, dual=True, max_iter=5000). Target: "
          "at most 2x LinearSVC's fit time."),
    "d": ("d. Scaling and memory",
          "RBF fit time of ReinforcedMSVM(cache_size=200, tol=1e-3, random_state=0) on seed "
          "002 example 4.1.1 data (k = 3; not pendigits), C = 1 / (n lambda) with "
          "lambda = 1e-3, gamma = 'median' resolved on the first min(n, 2000) points. The "
          "exponent p is the least-squares slope of log(time) on log(n). Memory: one fit at the "
          "largest n in a fresh process started with multiprocessing 'spawn', after a small "
          "warm-up fit. Peak RSS increase: the process's RSS high-water mark is reset "
          "(`/proc/self/clear_refs`) just before the fit, and the increase is VmHWM after the "
          "fit minus VmRSS before it (everything, including the compiled solver's kernel-row "
          "cache). resource.getrusage's ru_maxrss is kept in the JSON, but it is a lifetime "
          "high-water mark that the reset does not clear, so it already holds the import-time "
          "peak. The tracemalloc peak (of a second fit) covers the NumPy and Python "
          "allocations only. With cache_size = 200 MB the solver may keep up to 200 MB of "
          "kernel rows."),
}
RENDER = {"a": render_generic, "b": render_svc, "c": render_linear, "d": render_scaling}


def print_progress(r):
    """One progress line of benchmark a."""
    speed = "-" if r["speedup"] is None else f"{r['speedup']:.0f}x"
    rel = "-" if r["rel_objective_diff"] is None else f"{r['rel_objective_diff']:.2e}"
    gen = "-" if r["generic_time"] is None else f"{r['generic_time']:.1f} s"
    print(f"  a: n={r['n']}: msvm {r['msvm_time']:.3f} s, generic {gen}, speed-up {speed}, "
          f"rel. objective diff {rel}", flush=True)


def render_report(data):
    m = data["machine"]
    lines = ["# msvm benchmark results", "",
             "Generated by `python -m benchmarks.run_benchmarks"
             + (" --quick" if data.get("quick") else "") + "`; the raw numbers are in "
             + f"`{data['json_name']}`. Each benchmark runs msvm and its baseline side by side "
             "in one process. Fits faster than "
             f"{FAST_SECONDS:g} s are repeated {REPEATS} times and the median is reported "
             "(`runs`); timings are wall-clock (`time.perf_counter`).", "",
             "## Machine", "",
             markdown_table(["item", "value"], [[k, v] for k, v in m.items()]), ""]
    if data.get("quick"):
        lines += ["**Quick smoke run**: tiny sizes (pendigits: a 1000-sample training subset); "
                  "the numbers say nothing about performance.", ""]
    for name in sorted(data["benchmarks"]):
        section = data["benchmarks"][name]
        title, setup = SETUPS[name]
        lines += [f"## {title}", "", setup, "", RENDER[name](section), ""]
        if section.get("date") and section["date"] != m["date"]:
            lines += [f"(Run on {section['date']}.)", ""]
        warns = sorted(set(section.get("warnings", [])
                           + [w for r in section.get("rows", [])
                              for w in r.get("warnings", []) + r.get("msvm_warnings", [])]))
        if warns:
            lines += ["Fits that did not converge, and warnings raised during these fits:", ""]
            lines += [f"- {w}" for w in warns] + [""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="a,b,c,d",
                        help="comma-separated subset of the benchmarks a, b, c, d")
    parser.add_argument("--quick", action="store_true",
                        help="tiny smoke run; writes quick.md / quick.json")
    parser.add_argument("--max-generic-n", type=int, default=2000,
                        help="largest n solved by the generic QP solver in benchmark a")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(RENDER)
    if unknown:
        parser.error(f"unknown benchmarks {sorted(unknown)}; choose from a, b, c, d")

    md_path = RESULTS / ("quick.md" if args.quick else "README.md")
    json_path = RESULTS / ("quick.json" if args.quick else "results.json")
    runners = {
        "a": lambda: bench_generic([100, 200] if args.quick else [500, 1000, 2000],
                                   args.max_generic_n),
        "b": lambda: bench_svc(args.quick),
        "c": lambda: bench_linear(args.quick),
        "d": lambda: bench_scaling([250, 500, 1000] if args.quick
                                   else [1000, 2000, 4000, 8000]),
    }
    run_sections(only, runners, SETUPS, RENDER, render_report, md_path, json_path, args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
