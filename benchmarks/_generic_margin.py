"""The convex weighted MSVM (WeightedRobustMSVM with truncation=None) solved by cvxpy + Clarabel.

This is the generic baseline of section 2 of ``run_dc_benchmarks.py``: the utility-weighted
generalized-functional-margin MSVM of docs/models.md (seed 000, eq. (7)) written as a QP, in the
representer form f_j(x_i) = b_j + K_i' v_j, ||h_j||^2 = v_j' K v_j:

    minimize   1/2 sum_j v_j' K v_j + C sum_i w_i sum_j U[y_i, j] xi_ij
    subject to xi_ij >= 0,   xi_ij >= 1 - (f_j(x_i) - f_j'(x_i))   for every j' != j,
               F = 1 b' + K V,   sum_j b_j = 0,   K V 1 = 0   (sum-to-zero h),

with one slack xi_ij for each pair (i, j) whose utility U[y_i, j] is positive (a pair with zero
utility carries no loss and gets no slack). At the optimum xi_ij = [1 - g_j(f(x_i))]_+ with
g_j(f) = min_{j' != j} (f_j - f_j').

As in ``_generic.py``, V enters through U = R V with R = K^{1/2} the symmetric PSD square root
(eigenvalues clipped at zero): K V = R U, v_j' K v_j = ||u_j||^2, and K V 1 = 0 iff U 1 = 0. This
makes the quadratic form the identity (strictly convex in U) instead of a numerically singular K.

By default the decision values get their own variable F with the equality F = R U + 1 b'
(``aux_decision=True``): every hinge constraint then touches three entries of F and one slack,
and the dense R appears once (n k rows of n nonzeros) rather than in each of the
sum_j |{i: U[y_i, j] > 0}| (k - 1) hinge rows. Both forms are the same QP; the auxiliary one
gives Clarabel a smaller problem, so it is the conservative (faster) baseline.
"""

import time

import numpy as np

from _generic import psd_sqrt


def margins(F):
    """Generalized functional margins g_j(F) = F_j - max_{j' != j} F_j', shape (n, k)."""
    F = np.asarray(F, dtype=np.float64)
    n, k = F.shape
    out = np.empty_like(F)
    for j in range(k):
        others = np.delete(F, j, axis=1)
        out[:, j] = F[:, j] - others.max(axis=1)
    return out


def weighted_margin_loss(F, y, utility):
    """Per-sample loss sum_j U[y_i, j] [1 - g_j(F_i)]_+ of decision values F (n x k)."""
    utility = np.asarray(utility, dtype=np.float64)
    return np.sum(utility[y] * np.maximum(1.0 - margins(F), 0.0), axis=1)


def weighted_margin_objective(penalty, F, y, utility, C, sample_weight=None):
    """The models.md objective: penalty + C sum_i w_i sum_j U[y_i, j] [1 - g_j(f(x_i))]_+."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    return float(penalty) + C * float(w @ weighted_margin_loss(F, y, utility))


def fit_generic_margin(K, y, C, utility, sample_weight=None, k=None, aux_decision=True,
                       verbose=False, **solver_options):
    """Solve the convex weighted MSVM primal with cvxpy + Clarabel.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Training Gram matrix (symmetric PSD).
    y : ndarray of shape (n,)
        Labels encoded as 0..k-1.
    C : float
        Loss weight.
    utility : ndarray of shape (k, k)
        Nonnegative utility matrix (row = true class, column = predicted class).
    sample_weight : ndarray of shape (n,), default=None
        Nonnegative sample weights (default 1).
    k : int, default=None
        Number of classes (default ``y.max() + 1``).
    aux_decision : bool, default=True
        Give the decision values their own variable F (see the module docstring).
    verbose : bool, default=False
        Print the solver log.
    **solver_options
        Passed to ``cvxpy.Problem.solve`` (Clarabel settings such as ``tol_gap_rel``).

    Returns
    -------
    result : dict
        ``U`` (= R V; V = R^+ U is not formed), ``b``, ``decision`` (F = R U + 1 b' at the
        training points), ``penalty`` (1/2 ||U||_F^2 = 1/2 sum_j v_j' K v_j), ``objective`` (recomputed
        in NumPy from ``penalty`` and ``decision``), ``solver_objective`` (cvxpy's value),
        ``status``, ``time`` (the whole cvxpy call: canonicalization and solve),
        ``sqrt_time`` (the square root of K), ``solve_time`` (Clarabel's own time), ``n_iter``,
        ``n_slacks`` and ``n_hinge_rows``.
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    utility = np.asarray(utility, dtype=np.float64)
    n = len(y)
    k = int(y.max()) + 1 if k is None else int(k)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

    start = time.perf_counter()
    R = psd_sqrt(K)
    sqrt_time = time.perf_counter() - start

    U = cp.Variable((n, k))
    b = cp.Variable(k)
    affine = R @ U + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
    constraints = [cp.sum(b) == 0, cp.sum(U, axis=1) == 0]
    if aux_decision:
        F = cp.Variable((n, k))
        constraints.append(F == affine)
    else:
        F = affine

    loss_terms = []
    n_slacks = n_rows = 0
    for j in range(k):
        rows = np.flatnonzero(utility[y, j] > 0)       # pairs (i, j) that carry a loss
        if rows.size == 0:
            continue
        xi = cp.Variable(rows.size, nonneg=True)
        n_slacks += rows.size
        Fj = F[:, j][rows]
        for jp in range(k):
            if jp == j:
                continue
            constraints.append(xi >= 1.0 - (Fj - F[:, jp][rows]))
            n_rows += rows.size
        loss_terms.append(cp.sum(cp.multiply(C * w[rows] * utility[y[rows], j], xi)))
    objective = 0.5 * cp.sum_squares(U) + cp.sum(cp.hstack(loss_terms))
    problem = cp.Problem(cp.Minimize(objective), constraints)

    start = time.perf_counter()
    problem.solve(solver=cp.CLARABEL, verbose=verbose, **solver_options)
    elapsed = time.perf_counter() - start

    U_val = np.asarray(U.value)
    b_val = np.asarray(b.value)
    F_val = R @ U_val + b_val
    penalty = 0.5 * float(np.sum(U_val ** 2))
    stats = problem.solver_stats
    return {
        "U": U_val,
        "b": b_val,
        "decision": F_val,
        "penalty": penalty,
        "objective": weighted_margin_objective(penalty, F_val, y, utility, C, w),
        "solver_objective": float(problem.value),
        "status": problem.status,
        "time": elapsed,
        "sqrt_time": sqrt_time,
        "solve_time": getattr(stats, "solve_time", None),
        "n_iter": getattr(stats, "num_iters", None),
        "n_slacks": n_slacks,
        "n_hinge_rows": n_rows,
    }
