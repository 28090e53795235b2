"""The ReinforcedMSVM primal solved by a generic conic solver (cvxpy + Clarabel).

This is the baseline of benchmark (a): the textbook way to fit the model when no dedicated solver
exists. It solves exactly the problem of ``docs/models.md`` in the representer form of seed 002
(3.2), f_j(x_i) = b_j + K_i' v_j and ||h_j||^2 = v_j' K v_j:

    minimize   1/2 sum_j v_j' K v_j + C sum_i w_i ( g xi_{i,y_i} + (1 - g) sum_{j != y_i} xi_ij )
    subject to xi >= 0,
               xi_{i,y_i} >= (k - 1) - f_{y_i}(x_i),   xi_ij >= 1 + f_j(x_i)  (j != y_i),
               F = 1 b' + K V,  sum_j b_j = 0,  K sum_j v_j = 0,

over V (n x k), b (k) and the hinge slacks xi (n x k), with g = reinforcement.

With R = K^{1/2} the symmetric PSD square root of K (eigenvalues clipped at zero), V enters only
through U = R V: K V = R U, v_j' K v_j = ||u_j||^2 and K sum_j v_j = 0 iff sum_j u_j = 0. The QP
handed to the solver is therefore

    minimize 1/2 ||U||_F^2 + C sum_ij weight_ij xi_ij   s.t. the hinge constraints on F = 1 b' + R U,
             sum_j b_j = 0, U 1 = 0,

a strictly convex QP in U. (Written literally in V, the quadratic form K is singular for any
numerically low-rank kernel, V is not unique, and Clarabel stops with a NumericalError at the
first iteration; U = R V removes exactly that null space and nothing else.) V is recovered as
R^+ U.
"""

import time

import numpy as np


def psd_sqrt(K):
    """Symmetric PSD square root of a symmetric matrix (negative eigenvalues clipped to 0)."""
    s, Q = np.linalg.eigh((K + K.T) / 2.0)
    return (Q * np.sqrt(np.clip(s, 0.0, None))) @ Q.T


def reinforced_loss(F, y, reinforcement):
    """Per-sample reinforced hinge loss of decision values F (n x k), labels y in 0..k-1."""
    n, k = F.shape
    own = np.zeros((n, k), dtype=bool)
    own[np.arange(n), y] = True
    reinforced = np.maximum((k - 1) - F[own], 0.0)
    others = np.where(own, 0.0, np.maximum(1.0 + F, 0.0)).sum(axis=1)
    return reinforcement * reinforced + (1.0 - reinforcement) * others


def reinforced_objective(K, V, b, y, C, reinforcement, sample_weight=None):
    """The models.md objective of f = K V + b: 1/2 sum_j v_j' K v_j + C sum_i w_i loss_i."""
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    KV = K @ V
    penalty = 0.5 * float(np.sum(V * KV))
    return penalty + C * float(w @ reinforced_loss(KV + b, y, reinforcement))


def fit_generic(K, y, C, reinforcement=0.5, sample_weight=None, k=None, verbose=False,
                **solver_options):
    """Solve the ReinforcedMSVM primal with cvxpy + Clarabel.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Training Gram matrix (symmetric PSD).
    y : ndarray of shape (n,)
        Labels encoded as 0..k-1.
    C : float
        Loss weight.
    reinforcement : float, default=0.5
        The mixing weight g of the reinforced hinge loss.
    sample_weight : ndarray of shape (n,), default=None
        Nonnegative sample weights (default 1).
    k : int, default=None
        Number of classes (default ``y.max() + 1``).
    verbose : bool, default=False
        Print the solver log.
    **solver_options
        Passed to ``cvxpy.Problem.solve`` (Clarabel settings such as ``tol_gap_rel``).

    Returns
    -------
    result : dict
        ``V`` (n x k), ``U`` = R V, ``b`` (k), ``decision`` (F at the training points),
        ``objective`` (recomputed in NumPy from U and b),
        ``solver_objective`` (cvxpy's value), ``status``, ``time`` (wall-clock seconds for
        the whole cvxpy call: canonicalization and solve; the square root is timed apart in
        ``sqrt_time``) and ``solve_time`` (Clarabel's own time).
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    n = len(y)
    k = int(y.max()) + 1 if k is None else int(k)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

    start = time.perf_counter()
    R = psd_sqrt(K)
    sqrt_time = time.perf_counter() - start

    own = np.zeros((n, k))
    own[np.arange(n), y] = 1.0
    # Loss weights per slack: C w_i g on the own class, C w_i (1 - g) on the others.
    weights = C * w[:, None] * (reinforcement * own + (1.0 - reinforcement) * (1.0 - own))
    # xi_ij >= s_ij * f_ij + c_ij with (s, c) = (-1, k - 1) on the own class, (+1, 1) otherwise.
    sign = 1.0 - 2.0 * own
    const = (k - 1.0) * own + (1.0 - own)

    U = cp.Variable((n, k))
    b = cp.Variable(k)
    xi = cp.Variable((n, k), nonneg=True)
    F = R @ U + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
    objective = 0.5 * cp.sum_squares(U) + cp.sum(cp.multiply(weights, xi))
    constraints = [xi >= cp.multiply(sign, F) + const,
                   cp.sum(b) == 0,
                   cp.sum(U, axis=1) == 0]
    problem = cp.Problem(cp.Minimize(objective), constraints)

    start = time.perf_counter()
    problem.solve(solver=cp.CLARABEL, verbose=verbose, **solver_options)
    elapsed = time.perf_counter() - start

    U_val = np.asarray(U.value)
    V_val = np.linalg.lstsq(R, U_val, rcond=None)[0]   # V = R^+ U
    b_val = np.asarray(b.value)
    F_val = R @ U_val + b_val
    obj = 0.5 * float(np.sum(U_val ** 2)) + C * float(w @ reinforced_loss(F_val, y,
                                                                           reinforcement))
    stats = problem.solver_stats
    return {
        "V": V_val,
        "U": U_val,
        "b": b_val,
        "decision": F_val,
        "objective": obj,
        "solver_objective": float(problem.value),
        "status": problem.status,
        "time": elapsed,
        "sqrt_time": sqrt_time,
        "solve_time": getattr(stats, "solve_time", None),
        "n_iter": getattr(stats, "num_iters", None),
    }
