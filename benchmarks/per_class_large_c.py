"""Where the pendigits ReinforcedMSVM fit at C = 256, gamma = 1/32 spends its epochs (issues
23 and 24, round 10), for ``python -m benchmarks.run_per_class_speed --r10``.

Measured in one process, one BLAS thread, CPU time (the machine may be shared):

* the fit with a trace of the solver's budget stops (msvm/_sequence.py: FINISH_AFTER epochs,
  then doubling): CPU so far, free variables and their samples, and the iterate at the first
  stop where the finishing step is tried;
* that iterate against the converged solution: variables whose state (at a bound, free)
  differs, relative distance, objective gap; the numerical rank of the kernel among its
  free samples (eigenvalues, relative to the largest) and per class slot, which bounds the
  room of null-space moves (the crossover of branch largec); the exact step on its face
  (the bordered system of the free variables with the equalities, proximally regularized
  by sigma x the largest diagonal entry, then clipped to the box); accelerated projected
  gradient (FISTA) on the subproblem of every variable of the free samples; and
  primal-dual active-set steps on the free variables and those near them;
* the fit with the working set forced to 512, 1,024 and 2,048 samples;
* the tuning run's fits at gamma = 1/32 (TuningSetSearch, 15 C, path_tol None, the
  50/50 split of benchmarks/run_tuning_benchmarks.py section 5).
"""

import time

import numpy as np
import scipy.linalg

from benchmarks.harness import markdown_table


def traced_fit(make, X, y):
    """Fit ``make()`` with the budget stops traced: (estimator, CPU s, stops, problem,
    iterate at the first finishing call, converged alpha).  Each stop where the finishing
    step is tried: CPU s since the fit began, free variables, their samples."""
    import msvm._sequence as seq
    stops, kept = [], {}
    finish, refresh = seq.finish_dual, seq.DualSequence._refresh_scores
    start = [0.0]

    def traced_finish(problem, alpha, *args, **kwargs):
        lo, hi = problem.expanded_bounds()
        free = (alpha > lo) & (alpha < hi)
        stops.append((time.process_time() - start[0], int(free.sum()),
                      int(len(np.unique(problem.sample_of_var()[free])))))
        kept.setdefault("iterate", np.array(alpha))
        return finish(problem, alpha, *args, **kwargs)

    def traced_refresh(self, problem, alpha, finished=0):
        kept["problem"], kept["final"] = problem, np.array(alpha)
        return refresh(self, problem, alpha, finished)

    seq.finish_dual, seq.DualSequence._refresh_scores = traced_finish, traced_refresh
    try:
        est = make()
        start[0] = time.process_time()
        est.fit(X, y)
        cpu = time.process_time() - start[0]
    finally:
        seq.finish_dual, seq.DualSequence._refresh_scores = finish, refresh
    return est, cpu, stops, kept.get("problem"), kept.get("iterate"), kept.get("final")


class _Dual:
    """The dual of a per-class-hinge problem on a dense kernel matrix: objective, gradient."""

    def __init__(self, problem, K):
        from msvm._finish import _Layout
        self.p, self.K, self.lay = problem, K, _Layout(problem)

    def gradient(self, alpha):
        return self.lay.gradient(self.K @ self.p.slot_sums(alpha))

    def objective(self, alpha):
        z = self.gradient(alpha)
        return 0.5 * float(alpha @ (z + self.lay.lin)) - float(self.lay.lin @ alpha)


def _states(lay, alpha):
    return np.where(alpha <= lay.lo, 0, np.where(alpha >= lay.hi, 2, 1))


def compare_iterate(dual, alpha, final):
    """The iterate against the converged solution, and kernel ranks among its free samples."""
    lay = dual.lay
    s, sf = _states(lay, alpha), _states(lay, final)
    free = s == 1
    samples = np.unique(lay.sample[free])
    w = np.linalg.eigvalsh(dual.K[np.ix_(samples, samples)])[::-1]
    per_slot = []
    for q in range(lay.k):
        sq = lay.sample[free & (lay.slot1 == q)]
        wq = np.linalg.eigvalsh(dual.K[np.ix_(sq, sq)])
        per_slot.append((int(len(sq)), int((wq > 1e-6 * w[0]).sum())))
    return {"free": int(free.sum()), "samples": int(len(samples)),
            "free_final": int((sf == 1).sum()), "state_differs": int((s != sf).sum()),
            "free_to_bound": int(((s == 1) & (sf != 1)).sum()),
            "bound_to_free": int(((s != 1) & (sf == 1)).sum()),
            "distance": float(np.linalg.norm(alpha - final) / np.linalg.norm(final)),
            "objective_gap": dual.objective(alpha) - dual.objective(final),
            "ranks": {f"{r:g}": int((w > r * w[0]).sum()) for r in (1e-4, 1e-6, 1e-8, 1e-10)},
            # relative to the largest diagonal entry (1 for RBF), the pivoted factor's rule
            "rank_diag_1e-6": int((w > 1e-6 * dual.K.diagonal().max()).sum()),
            "per_slot_free_rank_1e-6": per_slot}


def face_steps(dual, alpha, final, sigmas=(1e-1, 1e-3, 1e-6)):
    """The exact step on the iterate's face (free variables, the equalities kept), with the
    proximal weight sigma x the largest diagonal entry, clipped to the box: per sigma its CPU
    s, the step's largest entry, how far it leaves the box, and the clipped point's objective
    gap and relative distance to the converged solution."""
    from msvm._finish import _slot_basis
    lay, k = dual.lay, dual.p.k
    E = _slot_basis(k)
    z = dual.gradient(alpha)
    free = np.flatnonzero(_states(lay, alpha) == 1)
    S, P, sg = lay.sample[free], lay.slot1[free], lay.coef1[free]
    M = np.eye(k) - 1.0 / k
    Q = lay.kappa * dual.K[np.ix_(S, S)] * M[np.ix_(P, P)] * np.outer(sg, sg)
    A = lay.directions(free) @ E
    rhs = np.concatenate([-z[free], -(E.T @ dual.p.class_sums(alpha))])
    of, out = dual.objective(final), []
    for sigma in sigmas:
        t = time.process_time()
        H = Q + sigma * Q.diagonal().max() * np.eye(len(free))
        step = scipy.linalg.solve(np.block([[H, A], [A.T, np.zeros((k - 1, k - 1))]]), rhs,
                                  assume_a="sym")[:len(free)]
        cpu = time.process_time() - t
        x = alpha.copy()
        x[free] += step
        over = float(np.maximum(x[free] - lay.hi[free], lay.lo[free] - x[free]).max())
        x = np.clip(x, lay.lo, lay.hi)
        out.append({"sigma": sigma, "cpu_s": cpu, "largest": float(np.abs(step).max()),
                    "outside": over, "objective_gap": dual.objective(x) - of,
                    "distance": float(np.linalg.norm(x - final) / np.linalg.norm(final))})
    return out


def _candidates(dual, alpha, margin):
    """The free variables and, on their samples, those at a bound whose reduced gradient (the
    least-squares shift of the free ones) is within ``margin`` of zero."""
    from msvm._finish import _slot_basis
    lay = dual.lay
    z, free = dual.gradient(alpha), _states(lay, alpha) == 1
    A = lay.directions(np.arange(len(alpha))) @ _slot_basis(lay.k)
    r = z + A @ np.linalg.lstsq(A[free], -z[free], rcond=None)[0]
    on = np.zeros(dual.p.n_samples, dtype=bool)
    on[lay.sample[free]] = True
    return np.flatnonzero(free | (on[lay.sample] & (np.abs(r) < margin))), z, A


def pdas(dual, alpha, final, sigma=1e-9, margin=0.05, iters=8):
    """Primal-dual active-set steps (Hintermueller, Ito and Kunisch 2002) on the candidates
    (`_candidates`), the rest fixed: each step solves the face of its free guess exactly
    (Cholesky of Q_II + sigma x the largest diagonal entry, the equalities by their Schur
    complement), then frees the bounded variables whose reduced gradient points inward and
    bounds the free ones outside the box.  Per step: CPU s, free guess, how far the face
    solution leaves the box, state changes, the clipped point's objective gap and distance."""
    lay, k = dual.lay, dual.p.k
    V, z, A_all = _candidates(dual, alpha, margin)
    S, P, sg = lay.sample[V], lay.slot1[V], lay.coef1[V]
    M = np.eye(k) - 1.0 / k
    Q = lay.kappa * dual.K[np.ix_(S, S)] * M[np.ix_(P, P)] * np.outer(sg, sg)
    A, lo, hi, x = A_all[V], lay.lo[V], lay.hi[V], alpha[V].copy()
    g, beq, reg = z[V] - Q @ x, A.T @ x, sigma * Q.diagonal().max()
    state = np.where(x <= lo, 0, np.where(x >= hi, 2, 1))
    of, out, t0 = dual.objective(final), [], time.process_time()
    for _ in range(iters):
        inner, xb = state == 1, np.where(state == 0, lo, hi)[state != 1]
        c = scipy.linalg.cho_factor(Q[np.ix_(inner, inner)] + reg * np.eye(inner.sum()),
                                    check_finite=False)
        rhs = reg * x[inner] - g[inner] - Q[np.ix_(inner, ~inner)] @ xb
        sol = scipy.linalg.cho_solve(c, np.column_stack([A[inner], rhs]), check_finite=False)
        Y, y0 = sol[:, :k - 1], sol[:, k - 1]
        t = np.linalg.solve(A[inner].T @ Y, A[inner].T @ y0 - beq + A[~inner].T @ xb)
        xn = x.copy()
        xn[inner], xn[~inner] = y0 - Y @ t, xb
        lam = Q @ xn + g + A @ t
        new = state.copy()
        new[inner & (xn < lo)], new[inner & (xn > hi)] = 0, 2
        new[((state == 0) & (lam < 0)) | ((state == 2) & (lam > 0))] = 1
        x = np.clip(xn, lo, hi)
        full = alpha.copy()
        full[V] = x
        out.append({"cpu_s": time.process_time() - t0, "free": int(inner.sum()),
                    "outside": float(np.maximum(xn - hi, lo - xn).max()),
                    "changes": int((new != state).sum()),
                    "objective_gap": dual.objective(full) - of,
                    "distance": float(np.linalg.norm(full - final) / np.linalg.norm(final))})
        state = new
        if not out[-1]["changes"]:
            break
    return {"candidates": int(len(V)), "sigma": sigma, "margin": margin, "steps": out}


def _slot_projection(sg, sl, lo, hi, sums, k):
    """Projection onto the box with every class slot's sum of sg * x kept (bisection on one
    shift per slot)."""
    def project(y):
        a, b = np.full(k, -1e4), np.full(k, 1e4)
        for _ in range(60):
            t = 0.5 * (a + b)
            big = np.bincount(sl, weights=sg * np.clip(y + sg * t[sl], lo, hi),
                              minlength=k) > sums
            b, a = np.where(big, t, b), np.where(big, a, t)
        return np.clip(y + sg * (0.5 * (a + b))[sl], lo, hi)
    return project


def fista(dual, alpha, final, iters=200):
    """Accelerated projected gradient on every variable of the iterate's free samples (the
    others fixed; each class slot's sum kept), step 1 / L with L the largest eigenvalue of
    that block of the Hessian (power iteration): (L, [(iteration, CPU s, pair violation,
    objective gap)])."""
    lay, k, p = dual.lay, dual.p.k, dual.p
    S = np.unique(lay.sample[_states(lay, alpha) == 1])
    where = np.full(p.n_samples, -1)
    where[S] = np.arange(len(S))
    V = np.flatnonzero(where[lay.sample] >= 0)
    si, sl, sg = where[lay.sample[V]], lay.slot1[V], lay.coef1[V]
    KSS, F0 = dual.K[np.ix_(S, S)], (dual.K @ p.slot_sums(alpha))[S]

    def hess(dx, base):
        U = np.zeros((len(S), k))
        np.add.at(U, (si, sl), sg * dx)
        F = base + KSS @ U
        return sg * (lay.kappa * (F - F.mean(axis=1, keepdims=True)))[si, sl]

    v = np.random.default_rng(0).standard_normal(len(V))
    for _ in range(30):
        w = hess(v, 0.0)
        L, v = np.linalg.norm(w) / np.linalg.norm(v), w / np.linalg.norm(w)
    lo, hi = lay.lo[V], lay.hi[V]
    project = _slot_projection(sg, sl, lo, hi, np.bincount(sl, weights=sg * alpha[V],
                                                           minlength=k), k)
    x, y, tk, trace, t0 = alpha[V].copy(), alpha[V].copy(), 1.0, [], time.process_time()
    of = dual.objective(final)
    for i in range(iters + 1):
        if i % 100 == 0:
            g, full = sg * (hess(x - alpha[V], F0) - lay.lin[V]), alpha.copy()
            full[V] = x
            up = np.where(sg > 0, x < hi, x > lo)
            down = np.where(sg > 0, x > lo, x < hi)
            viol = max(g[(sl == q) & down].max(initial=-np.inf)
                       - g[(sl == q) & up].min(initial=np.inf) for q in range(k))
            trace.append((i, time.process_time() - t0, float(viol),
                          dual.objective(full) - of))
        xn = project(y - (hess(y - alpha[V], F0) - lay.lin[V]) / L)
        tn = 0.5 * (1 + np.sqrt(1 + 4 * tk * tk))
        y, x, tk = xn + (tk - 1) / tn * (xn - x), xn, tn
    return float(L), trace


def working_sets(make, X, y, sizes=(512, 1024, 2048)):
    """The C = 256 fit with the working set forced to each size (plan override): CPU s,
    epochs, SMO steps, blocks, objective, converged."""
    from benchmarks.run_per_class_speed import _msvm_fit
    rows = []
    for q in sizes:
        est = make()
        est._plan_overrides = {"working_set": int(q)}
        fit = _msvm_fit(est, X, y)
        fit["working_set"] = int(q)
        rows.append(fit)
        print(fit, flush=True)
    return rows


def tuning_fits(gamma=1 / 32):
    """The tuning run of benchmarks/run_tuning_benchmarks.py section 5 at one gamma
    (TuningSetSearch of ReinforcedMSVM, 15 C, path_tol None): its CPU s and the record of
    every fit (C, CPU s of the fit and the previous fit's scoring, epochs, finishing steps,
    converged)."""
    from sklearn.model_selection import train_test_split
    from threadpoolctl import threadpool_limits

    from benchmarks.harness import pendigits_split
    from benchmarks.run_tuning_benchmarks import MODELS, SEED, _grid_scorer, _tol_search
    X, X_test, y, y_test = pendigits_split(False, seed=SEED)
    fit, tune = train_test_split(np.arange(len(y)), test_size=0.5, random_state=SEED,
                                 stratify=y)
    Cs = 2.0 ** np.arange(-4, 11)
    records = []
    with threadpool_limits(limits=1, user_api="blas"):
        run = _tol_search(MODELS["ReinforcedMSVM"], 1.0 / (len(fit) * Cs), X[fit], y[fit],
                          X[tune], y[tune], X_test, y_test, None,
                          param_grid={"gamma": [gamma]}, scoring=_grid_scorer(records))
    return {"cpu": run["cpu"], "gamma": gamma, "records": records}


def render_r10(r10):
    """The measured part of the r10 section (markdown lines)."""
    lines = []
    fit = r10.get("fit")
    if fit:
        lines += [f"Budget stops of the C = 256 fit where the finishing step is tried (CPU s "
                  f"since the fit began, free variables, their samples; it returns None at "
                  f"each): {', '.join(f'{t:.2f} s / {m:,} / {s:,}' for t, m, s in fit['stops'])}.",
                  ""]
    cmp_ = r10.get("iterate")
    if cmp_:
        ranks = ", ".join(f"{key}: {val:,}" for key, val in cmp_["ranks"].items())
        slots = ", ".join(f"{m}/{r}" for m, r in cmp_["per_slot_free_rank_1e-6"])
        lines += [f"The iterate at the first finishing call ({cmp_['free']:,} free variables on "
                  f"{cmp_['samples']:,} samples) against the converged solution "
                  f"({cmp_['free_final']:,} free): {cmp_['state_differs']:,} variables in "
                  f"another state ({cmp_['free_to_bound']:,} free there but at a bound in the "
                  f"end, {cmp_['bound_to_free']:,} the other way), relative distance "
                  f"{cmp_['distance']:.4f}, objective gap {cmp_['objective_gap']:.2f} (of "
                  f"{abs(r10['objective']):,.0f}).  Kernel rank among its free samples, "
                  f"eigenvalues above a fraction of the largest: {ranks}; per class slot, free "
                  f"variables / rank at 1e-6: {slots}; eigenvalues above 1e-6 of the largest "
                  f"diagonal entry (the crossover's factor rule): "
                  f"{cmp_.get('rank_diag_1e-6', '-')}.", ""]
    if r10.get("face"):
        cols = ["sigma", "cpu_s", "largest", "outside", "objective_gap", "distance"]
        lines += ["Exact face step from that iterate (clipped to the box):", "",
                  markdown_table(cols, [[f"{row[c]:.4g}" for c in cols]
                                        for row in r10["face"]]), ""]
    if r10.get("fista"):
        L, trace = r10["fista"]
        steps = "; ".join(f"{i}: {t:.1f} s, violation {v:.3e}, gap {g:.2f}"
                          for i, t, v, g in trace)
        lines += [f"FISTA on every variable of the free samples (L = {L:.1f}): {steps}.", ""]
    if r10.get("pdas"):
        pd = r10["pdas"]
        cols = ["cpu_s", "free", "outside", "changes", "objective_gap", "distance"]
        lines += [f"Primal-dual active-set steps from that iterate ({pd['candidates']:,} "
                  f"candidate variables, sigma {pd['sigma']:g}):", "",
                  markdown_table(["step"] + cols, [[i] + [f"{row[c]:.4g}" for c in cols]
                                                   for i, row in enumerate(pd["steps"])]), ""]
    if r10.get("working_sets"):
        cols = ["working_set", "cpu_s", "epochs", "smo_steps", "blocks", "objective",
                "converged"]
        lines += ["The C = 256 fit with the working set forced (plan override; 512 is the "
                  "plan's choice here):", "",
                  markdown_table(cols, [[f"{r[c]:.3f}" if c == "cpu_s" else r[c] for c in cols]
                                        for r in r10["working_sets"]]), ""]
    return lines


def render_tuning(tuning, label):
    """One line of the tuning fits at gamma = 1/32."""
    fits = ", ".join(f"C {r['C']:g}: {r['cpu']:.2f} s / {r['epochs']} ep"
                     for r in tuning["records"])
    return [f"{label}: TuningSetSearch at gamma = {tuning['gamma']:g} only, {tuning['cpu']:.1f} s "
            f"CPU; per fit (CPU of the fit and the previous fit's scoring / epochs): {fits}.", ""]


# what the run "r10-large-c" says and what was tried on the way
R10 = """## r10: per-class hinges at the C a tuning run selects (issues 23, 24; nothing kept)

Pendigits ReinforcedMSVM, C = 256, gamma = 1/32 (the run "r10-large-c" above: main's solver,
one BLAS thread, CPU time, the machine shared with three other engineers' work, load 12 at
the start): 12.9 s, 457 epochs, 3.51 M SMO steps, 1,506 blocks, against SVC's 0.127 s
(101x).  The budget stops fall at 100, 200 and 400 epochs; the finishing step is tried at
the last two (the free set shrank) and returns None (above MAX_FREE).  Rerun with `python -m
benchmarks.run_per_class_speed --tag r10-large-c --large-c --scaling 10000 --r10`.

Where the epochs go.  At 200 epochs (5.9 s of the traced fit's 13.3 s) the dual objective is
within 69 of 507,148 (1.4e-4 relative) and only 499 of the 76,940 variables are in another
state than at the optimum (397 free there that end at a bound, 102 the other way), but the
free values are 9.8 % off in relative distance (at 400 epochs, checked once by hand: 46
states, 1.5 %). So at this C the last 257 epochs (7.4 s, 56 % of the fit) settle the values
on a nearly right face, the KKT residual from 4.9e-2 to 1e-3, unlike C = 10 where the late
epochs find the bounds (r5). The face is ill conditioned but not of low rank: the kernel
among its 2,776 free samples has 246 / 1,211 / 2,526 / 2,776 eigenvalues above 1e-4 / 1e-6 /
1e-8 / 1e-10 of its largest (1,194), and per class slot the free variables hardly exceed the
rank at 1e-6 (852 / 570, 407 / 381, ... above).

Tried from that iterate (benchmarks/per_class_large_c.py; none kept):

1. A low-rank factor at 1e-8 for the face (Woodbury on G G^T + sigma I): the free samples'
   rank there is 2,526, so G has r k = 25,260 columns against 5,566 free variables: its
   Woodbury system is larger than the dense face system itself.  Not built; the dense
   system stands for it (2.).
2. The exact step on the face (the bordered system of the 5,566 free variables with the
   equalities, 2.1-2.5 s a symmetric factorization here), proximally regularized: at sigma =
   0.1 x the largest diagonal entry it barely moves (objective gap 69.4 -> 67.6); at 1e-3
   it leaves the box by up to 8.9 (bounds 0 and 128) and the clipped point's gap is 946;
   at 1e-6 by 607 (gap 2.9e6).  The 499 wrong states are enough: the face's small
   eigenvalues turn them into steps far outside the box (the r5 CG route's and the
   largefree branch's finding at n = 5,000), and one factorization costs a fifth of the fit.
3. The crossover of branch largec (b7d75ce, its module loaded as it is, CROSS_RTOL 1e-6) at
   the 200-epoch stop, the SMO after it: its pivoted factor of the free samples' kernel took
   rank 2,775 of 2,776 (its rule: 1e-6 of the largest diagonal entry, 1, where the
   eigenvalue counts above are relative to the largest eigenvalue), 24,984 constraint rows
   against 5,566 free variables: no room, no move, 69 s CPU spent in the factor (a Python
   loop over the pivots).  With k = 10 classes a free sample carries about 2 free variables
   and (k - 1) constraint rows per factor column: null-space moves exist only where the
   free set exceeds (k - 1) r, as at LLW n = 10,000 with k = 3 (item 2 below).
4. Accelerated projected gradient (FISTA) on every variable of the free samples (27,760,
   the others fixed, each slot's sum kept): the Hessian's largest eigenvalue is 1,194
   against unit diagonal entries, and 200 iterations (5.4 s) take the pair violation from
   6.5e-2 to 2.4e-2 and the gap from 69.4 to 68.9, where the SMO's next 200 epochs (4.4 s)
   reach 6.4e-3: a first-order method over the face does not compete with the SMO's
   per-variable curvature.
5. Primal-dual active-set steps (a semismooth Newton method; Hintermueller, Ito and Kunisch
   2002) on 7,366 candidates (the free variables and, on their samples, those at a bound
   with a reduced gradient within 0.05), the face of each step's free guess (about 5,200
   variables) solved by a Cholesky factor and the equalities' Schur complement (about 1.8 s
   a step here; table above): the state changes fall from 641 to about 30 in 8 steps and
   the distance to the optimum from 10.9 to 2.3 %, but the face solutions still leave the
   box by tens (bounds 0 and 128) and the clipped points stay far above the iterate's
   objective (gap 69 at the start): 8 steps (14.4 s) already cost more than the whole fit.
6. Larger working sets (plan override; not tried at this C before: r6 tried 256 and 384):
   1,024 samples cut the epochs from 457 to 296 (543 blocks) at about the same CPU (12.4 s
   against 13.0 s; 12.1 s against 12.1 s in an earlier run), 2,048 to 263 epochs (100
   blocks) at 16.0 s: the local SMO's O(q)
   passes per step take back what the fewer epochs save.

What a 2x would need: the remaining error is spread over the whole free face (along each of
the 2,526 eigen-directions above 1e-8 of the largest, an error of alpha of the size of its
bound, 128, moves the gradient by more than tol; the 1,919 of them below 1e-5 are where
coordinate steps are slow), so a method must resolve the face with the box's states
still changing, at less than half the SMO's cost of 7 s: the semismooth Newton steps of 5.
need one dense face system (1.8 s) per step and more than 8 steps, and an interior-point
method as many systems or more.  Nothing here reaches that bound; the cost-rule fits
(pendigits C = 10, make_classification 10k C = 1, the fingerprint's 38 fits) are main's.

Item 2 (LLW, i.e. ReinforcedMSVM(reinforcement=0), make_blobs n = 10,000, d = 5, 3 classes,
RBF gamma='scale', C = 1e5): the brief's other route, the crossover of branch largec
followed by the SMO instead of its proximal route, measured once (largec's module at
b7d75ce loaded by a /tmp script in place of the finishing step before the solver's last
run, not kept; shared machine, load 7-13): the solver reached its last run at 127 s CPU
with 12,429 free variables, the crossover took them to 3,703 in 99 s CPU (largec's record:
114 s), and the SMO's last 3,600 epochs from there stopped at max_iter: 290.6 s CPU in all,
KKT residual 4.82, relative duality gap 0.825, objective_ 1,442,373,169 (main: max_iter
after 192 s, KKT residual 4.4, objective_ 1,309,141,543).  The crossover's vertex lowers
the dual objective (largec: -1.510e8 -> -1.834e8) but the SMO does not settle the face it
leaves, so the fit ends further from its optimum than main's; with item 1 not met, item 2
was not pursued further.

Tuning (issue 24 item 1, section 5 of tuning.md, gamma = 1/32 only, 15 C, path_tol None;
the line "Tuning fits" above): 28.6 s CPU for the 15 fits; C = 128-1024 take 3.2 / 4.5 /
5.9 / 8.2 s and 402 / 636 / 884 / 1,234 epochs (before = after: no solver change; section
5's run on the three gammas had 432 / 647 / 896 / 1,291 epochs at an older main).
"""
