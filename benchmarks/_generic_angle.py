"""The AngleBasedMSVM primal solved by a generic conic solver (cvxpy + Clarabel).

This is the generic baseline of section 2 of ``run_angle_benchmarks.py``: the reinforced
angle-based MSVM of seed 004 (section 1.1) written as a QP, in the representer form
f_q(x_i) = b_q + K_i' v_q, ||h_q||^2 = v_q' K v_q (q = 1..k-1):

    minimize   1/2 sum_q v_q' K v_q + C sum_i w_i ( g xi_{i,y_i} + (1 - g) sum_{j != y_i} xi_ij )
    subject to xi >= 0,
               xi_{i,y_i} >= (k - 1) - G_{i,y_i},   xi_ij >= 1 + G_ij   (j != y_i),
               G = (K V + 1 b') W,

over V (n x (k-1)), free intercepts b (k-1) and the hinge slacks xi (n x k), with
g = reinforcement and W = ``msvm.angle.simplex_vertices(k)`` ((k-1) x k, the class vertices as
columns). There is no sum-to-zero constraint: the k decision values <f(x_i), W_j> sum to zero
by the geometry of the simplex.

As in ``_generic.py``, V enters only through U = R V with R = K^{1/2} the symmetric PSD square
root of K (eigenvalues clipped at zero): K V = R U and v_q' K v_q = ||u_q||^2, so the penalty
1/2 sum_q v_q' K v_q = 1/2 ||R V||_F^2 is the identity quadratic form 1/2 ||U||_F^2 (strictly
convex) instead of the numerically singular K. The QP handed to the solver is therefore

    minimize 1/2 ||U||_F^2 + C sum_ij weight_ij xi_ij   s.t. the hinge constraints on
             G = (R U + 1 b') W,

and V = R^+ U if wanted (not formed here: nothing below needs it).

By default the functions at the training points get their own variable F (n x (k-1)) with the
equality F = R U + 1 b' (``aux_decision=True``), as in ``_generic_margin.py``: the dense R then
appears once (n (k-1) rows of n nonzeros) instead of in each of the n k hinge rows, where every
decision value G_ij = sum_q F_iq W_qj mixes k - 1 dense rows of R. Both forms are the same QP;
the auxiliary one gives Clarabel a much smaller problem (on the benchmark data at n = 1000: 18 s
against 211 s for the literal form), so it is the conservative (faster) baseline.
"""

import time

import numpy as np

from _generic import psd_sqrt, reinforced_loss


def angle_objective(penalty, G, y, C, reinforcement, sample_weight=None):
    """penalty + C sum_i w_i loss_i with the reinforced hinge loss of the decision values G.

    G (n x k) holds <f(x_i), W_j>; the loss is the one of ``_generic.reinforced_loss``:
    g [(k-1) - G_{i,y_i}]_+ + (1 - g) sum_{j != y_i} [1 + G_ij]_+.
    """
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
    return float(penalty) + C * float(w @ reinforced_loss(G, y, reinforcement))


def fit_generic_angle(K, y, C, reinforcement=0.5, sample_weight=None, k=None,
                      aux_decision=True, verbose=False, **solver_options):
    """Solve the AngleBasedMSVM primal with cvxpy + Clarabel.

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
    aux_decision : bool, default=True
        Give the functions f at the training points their own variable F (see the module
        docstring).
    verbose : bool, default=False
        Print the solver log.
    **solver_options
        Passed to ``cvxpy.Problem.solve`` (Clarabel settings such as ``tol_gap_rel``).

    Returns
    -------
    result : dict
        ``U`` (n x (k-1), = R V), ``b`` (k-1), ``decision`` (G = (R U + 1 b') W at the
        training points, n x k), ``penalty`` (1/2 ||U||_F^2), ``objective`` (recomputed in
        NumPy from ``penalty`` and ``decision``), ``solver_objective`` (cvxpy's value),
        ``status``, ``time`` (the whole cvxpy call: canonicalization and solve),
        ``sqrt_time`` (the square root of K), ``solve_time`` (Clarabel's own time) and
        ``n_iter``.
    """
    import cvxpy as cp

    from msvm.angle import simplex_vertices

    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    n = len(y)
    k = int(y.max()) + 1 if k is None else int(k)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    W = simplex_vertices(k)                                  # (k-1) x k

    start = time.perf_counter()
    R = psd_sqrt(K)
    sqrt_time = time.perf_counter() - start

    own = np.zeros((n, k))
    own[np.arange(n), y] = 1.0
    # Loss weights per slack: C w_i g on the own class, C w_i (1 - g) on the others.
    weights = C * w[:, None] * (reinforcement * own + (1.0 - reinforcement) * (1.0 - own))
    # xi_ij >= s_ij G_ij + c_ij with (s, c) = (-1, k - 1) on the own class, (+1, 1) otherwise.
    sign = 1.0 - 2.0 * own
    const = (k - 1.0) * own + (1.0 - own)

    U = cp.Variable((n, k - 1))
    b = cp.Variable(k - 1)
    xi = cp.Variable((n, k), nonneg=True)
    affine = R @ U + np.ones((n, 1)) @ cp.reshape(b, (1, k - 1), order="C")   # f at the x_i
    if aux_decision:
        F = cp.Variable((n, k - 1))
        constraints = [F == affine]
    else:
        F, constraints = affine, []
    G = F @ W
    objective = 0.5 * cp.sum_squares(U) + cp.sum(cp.multiply(weights, xi))
    constraints.append(xi >= cp.multiply(sign, G) + const)
    problem = cp.Problem(cp.Minimize(objective), constraints)

    start = time.perf_counter()
    problem.solve(solver=cp.CLARABEL, verbose=verbose, **solver_options)
    elapsed = time.perf_counter() - start

    U_val = np.asarray(U.value)
    b_val = np.asarray(b.value)
    G_val = (R @ U_val + b_val) @ W
    penalty = 0.5 * float(np.sum(U_val ** 2))
    stats = problem.solver_stats
    return {
        "U": U_val,
        "b": b_val,
        "decision": G_val,
        "penalty": penalty,
        "objective": angle_objective(penalty, G_val, y, C, reinforcement, w),
        "solver_objective": float(problem.value),
        "status": problem.status,
        "time": elapsed,
        "sqrt_time": sqrt_time,
        "solve_time": getattr(stats, "solve_time", None),
        "n_iter": getattr(stats, "num_iters", None),
    }
