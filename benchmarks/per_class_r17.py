"""Round 17 (issue 24 item 1): the per-class-hinge kernel fits at the C a tuning run selects.

Called by ``python -m benchmarks.run_per_class_speed --r17-profile`` (the profile of one fit)
and ``--r17-compare ROUNDS`` (round 17's switches off and on, alternating in one process).

The profile: pendigits (standardized, the 70 % training split), ReinforcedMSVM at C = 256,
gamma = 1/32, one BLAS thread, with the solver's traces on (msvm._core._alm._round_trace:
every augmented-Lagrangian round with its violation, equality residual, rho and relative
duality gap; msvm._core._smo._profile: the block loop's phases and counts, _profile_scans:
every scan's violation and candidates, _profile_visits: how often each sample was in a
working set).  The traces cost CPU of their own (one gap pass a round, a list entry a scan),
so the profiled fit's CPU time is not a measurement of the solver; the comparison's fits run
with the traces off.
"""

import time

import numpy as np

N_PENDIGITS = 7694


def _switches():
    """Round 17's switches: name -> (setter, main's value, round 17's value)."""
    from msvm._core import _smo
    return {"boost_by_active": (_smo._boost_by_active, False, True)}


def set_mode(mode):
    """Every round-17 switch to main's values ('main') or round 17's ('r17')."""
    for setter, main, r17 in _switches().values():
        setter(main if mode == "main" else r17)


def _fit(make, X, y, **params):
    from threadpoolctl import threadpool_limits
    est = make(**params)
    with threadpool_limits(1):
        t = time.process_time()
        est.fit(X, y)
        cpu = time.process_time() - t
    return est, cpu


def _epochs_of_scans(scans, n):
    """The scans' cumulative epochs across the fit's solves (each solve counts from 0)."""
    out, offset, last = [], 0, -1
    for steps, viol, cand, full in scans:
        if steps < last:
            offset += last
        last = steps
        out.append(((offset + steps) / n, viol, cand, bool(full)))
    return out


def _rounds_table(rounds, n, tol):
    """The traced rounds with cumulative epochs, and where the KKT rule and the gap were
    first met."""
    import re
    rows, offset, last_solve, last_steps = [], 0, None, 0
    first_kkt = first_gap = None
    for r in rounds:
        m = re.search(r"steps (\d+), blocks (\d+)", r["progress"])
        steps, blocks = int(m.group(1)), int(m.group(2))
        if r["solve"] != last_solve and last_solve is not None:
            offset += last_steps
        last_solve, last_steps = r["solve"], steps
        row = {"solve": r["solve"], "epochs": (offset + steps) / n, "blocks": blocks,
               "eps_in": r["eps_in"], "kkt_tol": r["kkt_tol"], "violation": r["violation"],
               "equality": r["equality"], "rho": r["rho"], "gap": r["gap"],
               "rows_computed": r["rows_computed"]}
        if first_kkt is None and r["violation"] <= tol and r["equality"] <= tol:
            first_kkt = row["epochs"]
        if first_gap is None and r["gap"] <= tol:
            first_gap = row["epochs"]
        rows.append(row)
    return rows, first_kkt, first_gap


def profile(C=256.0, gamma=1 / 32, model="ReinforcedMSVM"):
    """One traced fit (see the module's docstring); a dict for the report."""
    from benchmarks.run_per_class_speed import _models, _pendigits_train
    from msvm._core import _alm, _smo
    from msvm._kernels import cache_rows
    X, y = _pendigits_train()
    n = X.shape[0]
    make = _models()[model]
    _alm._round_trace(True)
    _smo._profile(True)
    _smo._profile_visits()
    _smo._profile_scans()
    try:
        est, cpu = _fit(make, X, y, C=C, gamma=gamma, random_state=0)
    finally:
        rounds = _alm._round_trace(False)
        prof = _smo._profile(False)
        scans = _smo._profile_scans()
        visits = np.array(_smo._profile_visits())
    rows, first_kkt, first_gap = _rounds_table(rounds, n, est.tol)
    curve = _epochs_of_scans(scans, n)
    # the violation and candidates every 10 epochs (the first scan past each mark)
    marks, at = [], 0.0
    for ep, viol, cand, full in curve:
        if ep >= at:
            marks.append({"epochs": ep, "violation": viol, "candidates": cand, "full": full})
            at = 10.0 * (int(ep // 10) + 1)
    seen = visits[visits > 0] if visits.size else visits
    plan = est.solver_plan_
    dtype = "float32" if "float32" in str(plan) else "float64"
    out = {"model": model, "C": C, "gamma": gamma, "n": n, "cpu_s_traced": cpu,
           "epochs": int(est.n_iter_), "objective": float(est.objective_),
           "converged": bool(est.converged_), "plan": str(plan), "tol": est.tol,
           "rounds": rows, "first_kkt_epochs": first_kkt, "first_gap_epochs": first_gap,
           "phases_cpu": {k: prof[k][1] for k in _smo.PROFILE_PHASES},
           "counts": {k: int(prof[k]) for k in _smo.PROFILE_COUNTS},
           "load_parts": {k: prof[k] for k in _smo.PROFILE_LOAD_PARTS},
           "visits": {"distinct": int(seen.size), "median": float(np.median(seen)),
                      "p90": float(np.percentile(seen, 90)), "max": int(seen.max())},
           "cache_dtype": dtype,
           "cache_rows": cache_rows(est.cache_size, dtype, n), "curve": marks}
    # the cache's precision and size: the same fit with float32 rows, and with float64 rows
    # in a cache that holds more than half the rows (the working set 256 either way)
    out["cache_variants"] = []
    for params in ({"cache_dtype": "float32"}, {"cache_size": 260}):
        est, cpu = _fit(make, X, y, C=C, gamma=gamma, random_state=0, **params)
        out["cache_variants"].append({"params": params, "cpu_s": cpu,
                                      "epochs": int(est.n_iter_),
                                      "objective": float(est.objective_),
                                      "plan": str(est.solver_plan_)})
    est, cpu = _fit(make, X, y, C=C, gamma=gamma, random_state=0)
    out["cpu_s_untraced"] = cpu
    return out


def compare(rounds, cases, modes=("main", "r17")):
    """Each (model, C, gamma) of ``cases`` fitted once per mode per round, the modes
    alternating (every switch of this round set per mode: set_mode), one BLAS thread, CPU
    time; SVC's fit at the case's C and gamma once per round between.  The fits' rows."""
    from sklearn.svm import SVC

    from benchmarks.run_per_class_speed import _models, _pendigits_train
    from msvm._core import _smo
    X, y = _pendigits_train()
    models = _models()
    fits = []
    try:
        for r in range(rounds):
            for model, C, gamma in cases:
                svc = _fit(lambda **kw: SVC(**kw), X, y, C=C, gamma=gamma)[1]
                for mode in (modes if r % 2 == 0 else modes[::-1]):
                    set_mode(mode)
                    _smo._profile(True)
                    est, cpu = _fit(models[model], X, y, C=C, gamma=gamma, random_state=0)
                    prof = _smo._profile(False)
                    fits.append({"round": r, "model": model, "C": C, "gamma": gamma,
                                 "mode": mode, "cpu_s": cpu, "svc_s": svc,
                                 "epochs": int(est.n_iter_), "blocks": int(prof["blocks"]),
                                 "steps": int(prof["steps"]),
                                 "objective": float(est.objective_),
                                 "converged": bool(est.converged_)})
                    print(fits[-1], flush=True)
    finally:
        set_mode("r17")
    return fits


def _fmt(x, spec):
    return "" if x is None else format(x, spec)


def render_profile(pr):
    """The profile's part of the report: lines of markdown."""
    lines = [f"Profile: pendigits {pr['model']}, C = {pr['C']:g}, gamma = {pr['gamma']:g}, "
             f"one fit with the traces on ({pr['cpu_s_traced']:.2f} s CPU traced, "
             f"{pr['cpu_s_untraced']:.2f} s untraced, {pr['epochs']} epochs, objective "
             f"{pr['objective']:.6f}, converged {pr['converged']}); plan: {pr['plan']}.", "",
             "Augmented-Lagrangian rounds (cumulative epochs at the round's end; a new "
             "solve after each budget stop of the finishing schedule):", ""]
    cols = ["solve", "epochs", "blocks", "eps_in", "kkt_tol", "violation", "equality", "rho",
            "gap", "rows_computed"]
    body = [[r["solve"], f"{r['epochs']:.1f}", r["blocks"], f"{r['eps_in']:.1e}",
             f"{r['kkt_tol']:.1e}", f"{r['violation']:.3e}", f"{r['equality']:.3e}",
             f"{r['rho']:g}", f"{r['gap']:.3e}", r["rows_computed"]] for r in pr["rounds"]]
    from benchmarks.harness import markdown_table
    lines += [markdown_table(cols, body), ""]
    lines += [f"The KKT rule (violation and equality within tol = {pr['tol']:g}) first met at "
              f"{_fmt(pr['first_kkt_epochs'], '.1f')} epochs; the relative gap first within "
              f"tol at a round's end at {_fmt(pr['first_gap_epochs'], '.1f')} epochs.", ""]
    ph = pr["phases_cpu"]
    total = sum(ph.values())
    lines += ["Block loop, CPU of the calling thread: " + ", ".join(
        f"{k} {v:.2f} s ({100 * v / total:.0f} %)" for k, v in ph.items()) + "; load parts: "
        + ", ".join(f"{k[6:]} {v:.2f} s" for k, v in pr["load_parts"].items()) + ".", ""]
    c = pr["counts"]
    lines += [f"Counts: {c['blocks']:,} blocks of {c['block samples'] / c['blocks']:.0f} "
              f"samples and {c['block variables'] / c['blocks']:.0f} variables, "
              f"{c['steps']:,} local steps ({c['pair steps']:,} pair steps, "
              f"{c['pair steps to a bound']:,} of them to a bound; {c['single steps']:,} "
              f"single steps) in {c['local rounds']:,} local rounds, {c['scans']:,} scans "
              f"({c['full scans']} full), {c['changed samples']:,} changed samples.", ""]
    v = pr["visits"]
    lines += [f"Working-set churn: {v['distinct']:,} distinct samples ever in a block; each "
              f"in a median {v['median']:.0f} blocks (90th percentile {v['p90']:.0f}, most "
              f"{v['max']}); {c['block samples kept']:,} of the {c['block samples']:,} block "
              f"samples ({100 * c['block samples kept'] / c['block samples']:.0f} %) were in "
              f"the previous block too.", ""]
    lines += [f"Row cache: {pr['cache_dtype']} rows, {pr['cache_rows']:,} of {pr['n']:,} "
              f"held; rows computed (last round above) against the distinct samples ever in "
              f"a block.  The same fit, untraced, with other caches:", ""]
    cols = ["params", "cpu_s", "epochs", "objective", "plan"]
    lines += [markdown_table(cols, [[str(r["params"]), f"{r['cpu_s']:.2f}", r["epochs"],
                                     f"{r['objective']:.6f}", r["plan"]]
                                    for r in pr["cache_variants"]]), ""]
    lines += ["Violation (the scan's largest; partial scans see the unsettled samples only) "
              "and candidates above the round's eps, about every 10 epochs:", ""]
    cols = ["epochs", "violation", "candidates", "full"]
    lines += [markdown_table(cols, [[f"{m['epochs']:.1f}", f"{m['violation']:.3e}",
                                     m["candidates"], m["full"]] for m in pr["curve"]]), ""]
    return lines


def render_compare(fits):
    """Least CPU per (case, mode), with epochs, blocks and objective: lines of markdown."""
    from benchmarks.harness import markdown_table
    cases = []
    for f in fits:
        key = (f["model"], f["C"], f["gamma"])
        if key not in cases:
            cases.append(key)
    cols = ["model", "C", "mode", "cpu_s (least)", "cpu_s (all)", "x_svc", "epochs",
            "blocks", "objective", "converged"]
    body = []
    for key in cases:
        svc = min(f["svc_s"] for f in fits if (f["model"], f["C"], f["gamma"]) == key)
        for mode in ("main", "r17"):
            mine = [f for f in fits if (f["model"], f["C"], f["gamma"]) == key
                    and f["mode"] == mode]
            if not mine:
                continue
            best = min(mine, key=lambda f: f["cpu_s"])
            body.append([key[0], f"{key[1]:g}", mode, f"{best['cpu_s']:.2f}",
                         " / ".join(f"{f['cpu_s']:.2f}" for f in mine),
                         f"{best['cpu_s'] / svc:.1f}", best["epochs"], best["blocks"],
                         f"{best['objective']:.6f}", best["converged"]])
    return [markdown_table(cols, body), ""]
