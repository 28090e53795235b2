"""The models' primal problems solved by a generic conic solver (cvxpy + Clarabel).

Two uses, one parametrization. In the representer form f_j(x_i) = b_j + (K V)_ij with the
penalty 1/2 sum_j v_j' K v_j, V enters only through Z = R V for a square root K = R' R
(`oracle.linalg`): K V = R' Z and v_j' K v_j = ||z_j||^2, so the QP handed to the solver has the
identity as its quadratic form instead of the numerically singular K, and V is recovered from Z.
Sum-to-zero models add sum_j b_j = 0 and Z 1 = 0 (h_j summing to zero). The exact objectives
are those of ``docs/models.md``.

- The test oracles (`primal_fit`, `reference_fit`) solve to tight tolerances (1e-10) over the
  range of K (`oracle.linalg.range_factor`) and return the expansion V, the intercepts and the
  decision values at the training points; `primal_fit` takes any loss written as a cvxpy
  expression of the decision values (`cvx_ww_loss`, `cvx_weighted_loss`, `cvx_robust_loss`,
  `cvx_angle_loss`), `reference_fit` is the reinforced MSVM with one slack per hinge and can
  return the hinges' multipliers.
- The benchmark baselines (`fit_generic`, `fit_generic_angle`, `fit_generic_margin`) are the
  textbook way to fit a model when no dedicated solver exists: the full symmetric square root
  (`oracle.linalg.psd_sqrt`), an explicit slack per hinge, the solver's default tolerances, and
  the time of the square root and of the cvxpy call (canonicalization and solve) measured. By
  default the angle-based and the weighted baselines give the decision values at the training
  points their own variable (``aux_decision=True``): the dense R then appears once instead of
  in every hinge row, which gives Clarabel a much smaller problem (n = 1000, angle-based:
  18 s against 211 s), so the baselines are the conservative (faster) choice.
"""

import time

import numpy as np

from .linalg import psd_sqrt, range_factor
from .losses import loss_weights, penalty, reinforced_loss, vertices, weighted_losses

C_TOL = 1e-10   # the tolerances of the test oracles' solves


def _functions(L, m, aux_decision=False):
    """cvxpy variables Z (r x m) and b (m), and the m functions at the n training points.

    F = L Z + 1 b' for the (n, r) factor L of K = L L' (R' for `range_factor`'s R, the
    symmetric square root itself for `psd_sqrt`), or, with ``aux_decision``, a variable F and
    the constraint tying it to that expression. Returns (Z, b, F, constraints).
    """
    import cvxpy as cp

    n = L.shape[0]
    Z = cp.Variable((L.shape[1], m))
    b = cp.Variable(m)
    affine = L @ Z + np.ones((n, 1)) @ cp.reshape(b, (1, m), order="C")
    if not aux_decision:
        return Z, b, affine, []
    F = cp.Variable((n, m))
    return Z, b, F, [F == affine]


def _solve(objective, constraints, check=True, **options):
    """Minimize with Clarabel; returns (problem, wall seconds of the cvxpy call)."""
    import cvxpy as cp

    problem = cp.Problem(cp.Minimize(objective), constraints)
    start = time.perf_counter()
    problem.solve(solver=cp.CLARABEL, **options)
    elapsed = time.perf_counter() - start
    if check and problem.status != cp.OPTIMAL:
        raise RuntimeError(f"reference solver status {problem.status}")
    return problem, elapsed


# --------------------------------------------------------------------------------------------
# Test oracles
# --------------------------------------------------------------------------------------------
def _primal(K, k, loss, sum_to_zero=True, intercept=True, **options):
    """Solve 1/2 sum_j ||h_j||^2 + loss over k functions; loss(F) -> (expr, constraints).

    Returns (V, b, F, problem) with V row-centred and b centred exactly when sum-to-zero.
    """
    import cvxpy as cp

    K = 0.5 * (np.asarray(K, dtype=np.float64) + np.asarray(K, dtype=np.float64).T)
    R, Q, lam = range_factor(K)
    Z, b, F, _ = _functions(R.T, k)
    cons = [cp.sum(Z, axis=1) == 0, cp.sum(b) == 0] if sum_to_zero else []
    if not intercept:
        cons.append(b == 0)
    expr, loss_cons = loss(F)
    settings = dict(tol_gap_abs=C_TOL, tol_gap_rel=C_TOL, tol_feas=C_TOL, max_iter=500)
    settings.update(options)
    problem, _ = _solve(0.5 * cp.sum_squares(Z) + expr, cons + loss_cons, **settings)
    V = Q @ (np.asarray(Z.value) / np.sqrt(lam)[:, None])
    bv = np.asarray(b.value)
    if sum_to_zero:
        V = V - V.mean(axis=1, keepdims=True)
        bv = bv - bv.mean()
    return V, bv, K @ V + bv, problem


def primal_fit(K, k, loss_expr, sum_to_zero=True, intercept=True):
    """Minimize 1/2 sum_j ||h_j||^2 + loss_expr(F) over k functions with cvxpy + Clarabel.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of the training inputs.
    k : int
        Number of functions (k classes; k - 1 for the angle-based models).
    loss_expr : callable
        The loss as a cvxpy expression of the decision values F (n, k), e.g. `cvx_ww_loss`.
    sum_to_zero : bool, default=True
        Impose sum_j f_j = 0 (sum_j h_j = 0 and sum_j b_j = 0).
    intercept : bool, default=True
        Free intercepts b; False fixes b = 0.

    Returns
    -------
    V : ndarray of shape (n, k)
        Expansion coefficients, h_j(x) = sum_i V[i, j] K(x_i, x) (rows centred when
        sum-to-zero).
    b : ndarray of shape (k,)
        Intercepts (centred when sum-to-zero).
    F : ndarray of shape (n, k)
        Decision values at the training points, K V + b.
    """
    V, b, F, _ = _primal(K, k, lambda F: (loss_expr(F), []), sum_to_zero, intercept)
    return V, b, F


def reference_fit(K, y, w, C, g, k=None, tol=1e-10, return_dual=False):
    """Solve the ReinforcedMSVM primal over (V, b) with cvxpy + Clarabel.

    One slack per hinge with a positive weight (zero-weight hinges do not enter the objective).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix of the training inputs.
    y : ndarray of shape (n,)
        Integer labels in 0..k-1.
    w : ndarray of shape (n,)
        Nonnegative sample weights.
    C, g : float
        The C and reinforcement of the model.
    k : int, default=None
        Number of classes (default: max(y) + 1).
    tol : float, default=1e-10
        The solver's gap and feasibility tolerances.
    return_dual : bool, default=False
        Also return the multipliers of the hinge constraints.

    Returns
    -------
    objective : float
        The objective evaluated in NumPy at the returned feasible point (V row-centred and b
        centred exactly, so the value is an upper bound of the optimum up to rounding).
    V : ndarray of shape (n, k)
        Expansion coefficients, h_j(x) = sum_i V[i, j] K(x_i, x); rows sum to 0.
    b : ndarray of shape (k,)
        Intercepts, summing to 0.
    F : ndarray of shape (n, k)
        Decision values on the training points, K V + b.
    alpha : ndarray of shape (n, k), only with return_dual=True
        The multipliers of the hinge constraints (alpha[i, j] for hinge j of sample i), read
        from the solver's constraint duals.
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    n = K.shape[0]
    if k is None:
        k = int(y.max()) + 1
    U = loss_weights(y, k, w, C, g)
    own = np.zeros((n, k))
    own[np.arange(n), y] = 1.0
    U_own = (U * own).sum(axis=1)
    U_other = U * (1.0 - own)
    own_idx = np.flatnonzero(U_own > 0)
    own_pos = own_idx * k + y[own_idx]
    oth_pos = np.flatnonzero(U_other.ravel() > 0)
    hinges = {}

    def loss(F):
        Fflat = cp.vec(F, order="C")  # Fflat[i * k + j] = F[i, j]
        terms, cons = [], []
        if len(own_pos):
            xi = cp.Variable(len(own_pos))
            terms.append(U_own[own_idx] @ xi)
            hinges["own"] = xi >= (k - 1) - Fflat[own_pos]
            cons += [xi >= 0, hinges["own"]]
        if len(oth_pos):
            eta = cp.Variable(len(oth_pos))
            terms.append(U_other.ravel()[oth_pos] @ eta)
            hinges["other"] = eta >= 1 + Fflat[oth_pos]
            cons += [eta >= 0, hinges["other"]]
        return sum(terms[1:], terms[0]) if terms else 0.0, cons

    K = 0.5 * (K + K.T)
    V, b, F, _ = _primal(K, k, loss, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol,
                         tol_ktratio=1e-8)
    obj = float(penalty(V, K)) + C * reinforced_loss(F, y, w, g)
    if not return_dual:
        return obj, V, b, F
    alpha = np.zeros(n * k)
    if "own" in hinges:
        alpha[own_pos] = hinges["own"].dual_value
    if "other" in hinges:
        alpha[oth_pos] = hinges["other"].dual_value
    return obj, V, b, F, alpha.reshape(n, k)


def cvx_ww_loss(y, w, C):
    """C sum_i w_i sum_{j != y_i} [1 - F[i, y_i] + F[i, j]]_+ as a cvxpy loss of F."""
    import cvxpy as cp

    def loss(F):
        n, k = F.shape
        terms = []
        for i in range(n):
            for j in range(k):
                if j != y[i] and w[i] > 0:
                    terms.append(C * w[i] * cp.pos(1 - F[i, y[i]] + F[i, j]))
        return cp.sum(cp.hstack(terms))
    return loss


def cvx_weighted_loss(y, w, C, U, beta=None, jstar=None, s=None):
    """C sum_i w_i sum_j U[y_i, j] [1 - g_j(F_i)]_+ as a cvxpy loss of F.

    With ``beta`` (and ``jstar``, ``s`` from `oracle.losses.weighted_beta`), minus the DC
    linearization beta_ij (s - F_ij + F_ij*): a DC step's convex loss.
    """
    import cvxpy as cp

    def loss(F):
        n, k = F.shape
        terms = []
        for i in range(n):
            for j in range(k):
                c = C * w[i] * U[y[i], j]
                if c <= 0:
                    continue
                hinge = cp.max(cp.hstack([1 - F[i, j] + F[i, jp] for jp in range(k) if jp != j]))
                term = cp.pos(hinge)
                if beta is not None and beta[i, j]:
                    term = term - (s - F[i, j] + F[i, jstar[i, j]])
                terms.append(c * term)
        return cp.sum(cp.hstack(terms))
    return loss


def cvx_robust_loss(y, w, C, beta, s):
    """C sum_i w_i sum_{j != y_i} ([1 + F_ij]_+ - beta_ij (F_ij - s)) as a cvxpy loss of F.

    ``beta=None`` gives the untruncated Lee-Lin-Wahba hinge.
    """
    import cvxpy as cp

    def loss(F):
        n, k = F.shape
        terms = []
        for i in range(n):
            for j in range(k):
                if j == y[i] or w[i] <= 0:
                    continue
                term = cp.pos(1 + F[i, j])
                if beta is not None and beta[i, j]:
                    term = term - (F[i, j] - s)
                terms.append(C * w[i] * term)
        return cp.sum(cp.hstack(terms))
    return loss


def cvx_angle_loss(y, w, C, g, k):
    """C sum_i w_i [g [(k-1) - <f, W_y>]_+ + (1-g) sum_{j != y} [1 + <f, W_j>]_+] on f (n, k-1).

    W = `oracle.losses.vertices(k)`; fit with ``primal_fit(K, k - 1, ..., sum_to_zero=False)``.
    """
    import cvxpy as cp

    W = vertices(k)

    def loss(F):
        G = F @ W
        n = G.shape[0]
        terms = []
        for i in range(n):
            if w[i] <= 0:
                continue
            t = g * cp.pos((k - 1) - G[i, y[i]])
            for j in range(k):
                if j != y[i]:
                    t = t + (1 - g) * cp.pos(1 + G[i, j])
            terms.append(C * w[i] * t)
        return cp.sum(cp.hstack(terms))
    return loss


# --------------------------------------------------------------------------------------------
# Benchmark baselines
# --------------------------------------------------------------------------------------------
def _baseline_setup(K, y, sample_weight, k):
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    n = len(y)
    k = int(y.max()) + 1 if k is None else int(k)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    start = time.perf_counter()
    R = psd_sqrt(K)
    return K, y, n, k, w, R, time.perf_counter() - start


def _baseline_result(problem, elapsed, sqrt_time, **values):
    stats = problem.solver_stats
    values.update(solver_objective=float(problem.value), status=problem.status, time=elapsed,
                  sqrt_time=sqrt_time, solve_time=getattr(stats, "solve_time", None),
                  n_iter=getattr(stats, "num_iters", None))
    return values


def _reinforced_baseline(K, y, C, g, sample_weight, k, angle, aux_decision, verbose, options):
    """The reinforced hinge over k functions (sum-to-zero) or k - 1 angle-based functions."""
    import cvxpy as cp

    K, y, n, k, w, R, sqrt_time = _baseline_setup(K, y, sample_weight, k)
    own = np.zeros((n, k))
    own[np.arange(n), y] = 1.0
    # loss weights per slack: C w_i g on the own class, C w_i (1 - g) on the others; the hinge
    # xi_ij >= s_ij G_ij + c_ij with (s, c) = (-1, k - 1) on the own class, (+1, 1) otherwise
    weights = C * w[:, None] * (g * own + (1.0 - g) * (1.0 - own))
    sign = 1.0 - 2.0 * own
    const = (k - 1.0) * own + (1.0 - own)
    m = k - 1 if angle else k
    Z, b, F, constraints = _functions(R, m, aux_decision)
    xi = cp.Variable((n, k), nonneg=True)
    G = F @ vertices(k) if angle else F
    constraints.append(xi >= cp.multiply(sign, G) + const)
    if not angle:
        constraints += [cp.sum(b) == 0, cp.sum(Z, axis=1) == 0]
    problem, elapsed = _solve(0.5 * cp.sum_squares(Z) + cp.sum(cp.multiply(weights, xi)),
                              constraints, check=False, verbose=verbose, **options)
    Zv, bv = np.asarray(Z.value), np.asarray(b.value)
    Fv = R @ Zv + bv
    decision = Fv @ vertices(k) if angle else Fv
    pen = 0.5 * float(np.sum(Zv ** 2))
    return R, Zv, bv, decision, pen + C * reinforced_loss(decision, y, w, g), pen, problem, \
        elapsed, sqrt_time


def fit_generic(K, y, C, reinforcement=0.5, sample_weight=None, k=None, verbose=False,
                **solver_options):
    """Solve the ReinforcedMSVM primal with cvxpy + Clarabel (the benchmarks' baseline).

    minimize 1/2 ||U||_F^2 + C sum_ij weight_ij xi_ij subject to the hinge constraints on
    F = R U + 1 b', xi >= 0, sum_j b_j = 0, U 1 = 0, with R the symmetric PSD square root of K
    and V = R^+ U.

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
        ``objective`` (recomputed in NumPy from U and b), ``solver_objective`` (cvxpy's
        value), ``status``, ``time`` (wall-clock seconds of the whole cvxpy call:
        canonicalization and solve; the square root is timed apart in ``sqrt_time``),
        ``solve_time`` (Clarabel's own time) and ``n_iter``.
    """
    R, U, b, F, obj, _, problem, elapsed, sqrt_time = _reinforced_baseline(
        K, y, C, reinforcement, sample_weight, k, False, False, verbose, solver_options)
    return _baseline_result(problem, elapsed, sqrt_time, V=np.linalg.lstsq(R, U, rcond=None)[0],
                            U=U, b=b, decision=F, objective=obj)


def fit_generic_angle(K, y, C, reinforcement=0.5, sample_weight=None, k=None,
                      aux_decision=True, verbose=False, **solver_options):
    """Solve the AngleBasedMSVM primal with cvxpy + Clarabel (the benchmarks' baseline).

    minimize 1/2 ||U||_F^2 + C sum_ij weight_ij xi_ij subject to the reinforced hinge
    constraints on G = (R U + 1 b') W, xi >= 0, with U n x (k-1), free intercepts b (k-1), W the
    simplex vertices (`oracle.losses.vertices`) and R the symmetric PSD square root of K. No
    sum-to-zero constraint: the k values <f(x_i), W_j> sum to zero by the simplex geometry.

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
        Give the functions f at the training points their own variable (see the module
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
        ``status``, ``time`` (the whole cvxpy call), ``sqrt_time`` (the square root of K),
        ``solve_time`` (Clarabel's own time) and ``n_iter``.
    """
    _, U, b, G, obj, pen, problem, elapsed, sqrt_time = _reinforced_baseline(
        K, y, C, reinforcement, sample_weight, k, True, aux_decision, verbose, solver_options)
    return _baseline_result(problem, elapsed, sqrt_time, U=U, b=b, decision=G, penalty=pen,
                            objective=obj)


def fit_generic_margin(K, y, C, utility, sample_weight=None, k=None, aux_decision=True,
                       verbose=False, **solver_options):
    """Solve the convex weighted MSVM primal with cvxpy + Clarabel (the benchmarks' baseline).

    WeightedRobustMSVM with truncation=None: minimize 1/2 ||U||_F^2 + C sum_i w_i sum_j
    U[y_i, j] xi_ij subject to xi_ij >= 0 and xi_ij >= 1 - (f_j(x_i) - f_j'(x_i)) for every
    j' != j, with one slack for each pair (i, j) of positive utility, F = R U + 1 b',
    sum_j b_j = 0, U 1 = 0 and R the symmetric PSD square root of K.

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
        Give the decision values their own variable (see the module docstring).
    verbose : bool, default=False
        Print the solver log.
    **solver_options
        Passed to ``cvxpy.Problem.solve`` (Clarabel settings such as ``tol_gap_rel``).

    Returns
    -------
    result : dict
        ``U`` (= R V), ``b``, ``decision`` (F = R U + 1 b' at the training points),
        ``penalty`` (1/2 ||U||_F^2), ``objective`` (recomputed in NumPy from ``penalty`` and
        ``decision``), ``solver_objective`` (cvxpy's value), ``status``, ``time`` (the whole
        cvxpy call), ``sqrt_time`` (the square root of K), ``solve_time`` (Clarabel's own
        time), ``n_iter``, ``n_slacks`` and ``n_hinge_rows``.
    """
    import cvxpy as cp

    K, y, n, k, w, R, sqrt_time = _baseline_setup(K, y, sample_weight, k)
    utility = np.asarray(utility, dtype=np.float64)
    Z, b, F, constraints = _functions(R, k, aux_decision)
    constraints = [cp.sum(b) == 0, cp.sum(Z, axis=1) == 0] + constraints
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
    problem, elapsed = _solve(0.5 * cp.sum_squares(Z) + cp.sum(cp.hstack(loss_terms)),
                              constraints, check=False, verbose=verbose, **solver_options)
    Zv, bv = np.asarray(Z.value), np.asarray(b.value)
    Fv = R @ Zv + bv
    pen = 0.5 * float(np.sum(Zv ** 2))
    obj = pen + C * float(np.dot(w, weighted_losses(Fv, y, utility)))
    return _baseline_result(problem, elapsed, sqrt_time, U=Zv, b=bv, decision=Fv, penalty=pen,
                            objective=obj, n_slacks=n_slacks, n_hinge_rows=n_rows)
