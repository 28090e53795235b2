"""The fitted function of one solved dual, at the training points, in as few (n, k) arrays as
possible.

A solve leaves the dual variables alpha and the multipliers mu of the equalities; the fit
needs the slot coefficients V (h_slot(x) = sum_i K(x, x_i) V_i), the intercepts, the decision
values at the training points, the penalty and the duality gap.  Each (n, k) array is
computed in place where its input is no longer needed, by the named steps below: with the
identity output map at most two are alive at once (the slot sums, which become V, and the
scores, which become the centred function h and then the decision values).

With a Gram matrix from outside the core ('precomputed', a callable kernel) the decision
values are formed from the fitted coefficients exactly as prediction forms them
(:func:`gram_times`), not from the solver's scores K U: the entries of such a matrix may span
any range, and -kappa (K U) P and K (-kappa U P) then round apart (arbitrarily at
K = 1e300 + O(1)), so that ``objective_`` and ``intercept_`` would describe a function other
than the one ``dual_coef_`` and ``intercept_`` predict with.  Explicit features (the linear
kernel, approximate kernels) likewise form the decision values from the fitted weights, X
(-kappa W P) with W = X^T U (:func:`explicit_snapshot`), as prediction does from ``coef_``:
centring the (d, k) weights instead of the (n, k) scores X W keeps a column of X at 1e10 next
to one at 1e-300 from cancelling digits of the objective.
"""

from dataclasses import dataclass

import numpy as np

from ._core._level_loop import level_tail
from ._core._solver import primal_dual
from ._intercept import fitted_intercepts
from ._products import centered_slots, chunk_rows, feature_weights, rows_times, times_small
from ._validation import check_finite_objective


def support_rows(V, support):
    """``V[support]`` for sorted, distinct row indices, in V's memory when that is no waste.

    When the support holds at least half the rows (at a small C nearly all), its rows are
    moved to the front of V in place and the first ``len(support)`` rows of V returned (a
    view: no second (n, k) array at the end of a large fit; at most twice the memory of the
    result is kept).  Otherwise the copy ``V[support]``.  V is overwritten in the first case.
    """
    m = len(support)
    if 2 * m < len(V):
        return V[support]
    # support[j] >= j: a block of rows gathered (a temporary copy) before it is written only
    # overwrites rows that no later block reads
    step = max(1, 2 ** 16 // max(1, V.shape[1]))
    for start in range(0, m, step):
        rows = support[start:start + step]
        V[start:start + len(rows)] = V[rows]
    return V[:m]


@dataclass
class _Solution:
    """One solved dual and the fitted function it gives, at the training points."""

    problem: object
    alpha: np.ndarray
    mu: np.ndarray
    n_iter: int
    resid: float
    V: np.ndarray            # h_slot(x) = sum_i K(x, x_i) V_i
    W: object                # d x k slot weights (linear kernel) or None
    intercept: np.ndarray    # in output coordinates
    G: np.ndarray            # decision values at the training points
    penalty: float           # 1/2 sum_j ||h_j||^2
    gap: float = np.nan      # duality-gap certificate at the fitted intercepts



def slot_weights(X, src, U):
    """W = X^T U (d x k), the slot-space weights of an explicit-feature fit (a new array).

    The row source of explicit features keeps W itself when it has it (``src.weights``);
    otherwise U holds the slot sums of the solution.
    """
    return np.array(src.weights if src.weights is not None else X.T @ U)


def training_scores(X, W, src):
    """The scores F = K U at the training points (a new C-contiguous (n, k) array)."""
    return rows_times(X, W) if W is not None else np.array(src.scores, order="C")


def centre_and_scale_in_place(A, kappa):
    """``-kappa A P`` (P = I - 11^T/k) in A's memory: the slot functions h of scores F, or the
    coefficients V of slot sums U."""
    A -= A.mean(axis=1, keepdims=True)
    A *= -kappa
    return A


def output_map(model, k):
    """The model's output map T (n_outputs, k) and whether it is the identity."""
    T = model._output_map(k)
    return T, T.shape == (k, k) and np.array_equal(T, np.eye(k))


def intercept_solver(model, problem):
    """Which intercept step the fitted function gets, or None (the KKT estimate -mu kept):
    the exact search where every loss term involves one slot, the LP
    (``intercept_solver='linprog'``) for any model with free intercepts."""
    solver = getattr(model, "intercept_solver", "exact")
    if problem.equality and (solver == "linprog" or not problem.has_pairs):
        return solver
    return None


def slot_intercepts(model, problem, H, mu):
    """The slot intercepts of the slot functions H (n, k): the intercept step's, else -mu."""
    solver = intercept_solver(model, problem)
    return -mu if solver is None else fitted_intercepts(problem, H, -mu, solver)


def exact_intercepts_in_place(problem, F, b0, solver="exact"):
    """(h, b): h = -kappa F P in F's memory, and the exact slot intercepts b given h.

    The exact intercepts are the KKT multipliers -mu of the dual (``b0``) made exact by the
    per-slot breakpoint search, where every loss term involves one slot, or by the LP of
    msvm._intercept (``solver='linprog'``, the estimator's ``intercept_solver``); when the
    loss is flat to infinity in some b_j ``b0`` is kept (:func:`fitted_intercepts`).
    """
    H = centre_and_scale_in_place(F, problem.kappa)
    return H, fitted_intercepts(problem, H, b0, solver)


def duality_gap(problem, alpha, F, b_slot):
    """The duality-gap certificate of alpha at the scores F and the slot intercepts b_slot."""
    return primal_dual(problem, alpha, F, np.ascontiguousarray(b_slot, dtype=np.float64))[1]


def slot_penalty(V, H):
    """1/2 sum_j ||h_j||^2 = 1/2 sum_ij V_ij h_j(x_i), without an (n, k) temporary."""
    with np.errstate(over="ignore", invalid="ignore"):
        return 0.5 * float(np.einsum("ij,ij->", V, H))


def feature_penalty(W, kappa, T):
    """1/2 sum_j ||h_j||^2 of an explicit-feature fit from its weights W = X^T U (d, k): the
    squared norm of ``coef_``, a sum of squares of d k terms that cannot cancel."""
    with np.errstate(over="ignore", invalid="ignore"):
        B = feature_weights(W, kappa, T)
        return 0.5 * float(np.sum(B * B))


def output_penalty(V, T, H_out):
    """1/2 sum_j ||h_j||^2 of the output functions h_out = h T^T at the training points."""
    with np.errstate(over="ignore", invalid="ignore"):
        return 0.5 * float(np.sum(times_small(V, T.T) * H_out))


def gram_times(K, coef, support):
    """``K[:, support] @ coef`` (n, coef.shape[1]), formed as prediction forms decision
    values from a precomputed Gram matrix (``BaseMSVM._fitted_functions``): the same blocks of
    rows, the same column gather and the same product, so the same rounding.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The training Gram matrix.
    coef : ndarray of shape (len(support), c)
        C-contiguous coefficients of the support samples (``dual_coef_.T``).
    support : ndarray of int
        Sorted sample indices of the support.

    Returns
    -------
    ndarray of shape (n, c)
    """
    out = np.empty((K.shape[0], coef.shape[1]))
    step = chunk_rows(len(support))
    for start in range(0, K.shape[0], step):
        out[start:start + step] = K[start:start + step][:, support] @ coef
    return out


def gram_snapshot(model, K, src, problem, alpha, mu, n_iter, resid):
    """:func:`snapshot` for a Gram matrix K held by the source: the decision values at the
    training points are K V + b (V = -kappa U P), formed by :func:`gram_times` from the
    coefficients the fitted estimator keeps; the intercepts are exact for them.

    The duality gap stays the certificate of alpha at the source's scores K U (recomputed
    from scratch at the end of the solve, ``DualSequence._refresh_scores``).
    """
    T, identity = output_map(model, problem.k)
    support = np.flatnonzero(problem.support_mask(alpha))
    V = centre_and_scale_in_place(problem.slot_sums(alpha), problem.kappa)
    coef = np.ascontiguousarray(V[support])
    H = gram_times(K, coef, support)         # the slot functions h at the training points
    b_slot = slot_intercepts(model, problem, H, mu)
    gap = duality_gap(problem, alpha, training_scores(None, None, src), b_slot)
    intercept = T @ b_slot
    if identity:
        penalty = slot_penalty(V, H)
    else:
        # the output functions from the output coefficients, as prediction forms them
        H = gram_times(K, times_small(coef, T.T), support)
        penalty = output_penalty(V, T, H)
    del coef
    f_train = np.add(H, intercept, out=H)
    del H
    check_finite_objective(model, penalty, "the penalty 1/2 sum_j ||h_j||^2")
    return _Solution(
        problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter, resid=resid,
        V=V, W=None, intercept=intercept, G=model._decision_from_output(f_train),
        penalty=max(0.0, penalty), gap=gap)


def explicit_snapshot(model, X, src, problem, alpha, mu, n_iter, resid):
    """:func:`snapshot` for explicit features X: the slot functions at the training points are
    X Wh with the centred weights Wh = -kappa W P (d, k), the decision values X (Wh T^T) + b
    as prediction forms them from ``coef_``; the exact intercepts are those of X Wh.  At most
    two (n, k) arrays are alive at once besides the slot sums U (kept when the source holds no
    weights).
    """
    T, identity = output_map(model, problem.k)
    U = problem.slot_sums(alpha) if src.weights is None else None
    W = slot_weights(X, src, U)
    Wh = -problem.kappa * centered_slots(W)
    H = rows_times(X, np.ascontiguousarray(Wh))      # the slot functions h at the points
    b_slot = slot_intercepts(model, problem, H, mu)
    gap = duality_gap(problem, alpha, training_scores(X, W, src), b_slot)
    if not identity:
        H = rows_times(X, np.ascontiguousarray(times_small(Wh, T.T)))   # output functions
    V = centre_and_scale_in_place(problem.slot_sums(alpha) if U is None else U, problem.kappa)
    del U
    penalty = feature_penalty(W, problem.kappa, T)
    f_train = np.add(H, T @ b_slot, out=H)
    del H
    check_finite_objective(model, penalty, "the penalty 1/2 sum_j ||h_j||^2")
    return _Solution(
        problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter, resid=resid,
        V=V, W=W, intercept=T @ b_slot, G=model._decision_from_output(f_train),
        penalty=max(0.0, penalty), gap=gap)


def snapshot(model, X, src, problem, alpha, mu, n_iter, resid):
    """The fitted functions of one solved dual, at the training points (a :class:`_Solution`).

    ``model`` supplies ``_output_map``, ``_explicit_features`` and ``_decision_from_output``.
    ``alpha`` is kept without a copy: the sequence never writes into the alpha of a solve
    once that solve has returned (see ``DualSequence.solve``).  Explicit features and Gram
    matrices from outside the core go to :func:`explicit_snapshot` and :func:`gram_snapshot`.
    Kernel rows computed in the core: the slot sums U (they become V) come first, or else
    after the exact intercept search, which then runs with one (n, k) array fewer alive; in
    that search the scores are formed again after it (the row source still holds them)
    rather than kept.
    """
    if model._explicit_features():
        return explicit_snapshot(model, X, src, problem, alpha, mu, n_iter, resid)
    K = getattr(src, "gram", None)
    if K is not None:
        return gram_snapshot(model, K, src, problem, alpha, mu, n_iter, resid)
    T, identity = output_map(model, problem.k)
    solver = intercept_solver(model, problem)
    # a fit read only through its decision function (a calibration fold's refit):
    # neither the duality gap nor the penalty (``BaseMSVM._decision_only``)
    lean = getattr(model, "_decision_only", lambda: False)()
    U = None if problem.equality and not problem.has_pairs else problem.slot_sums(alpha)
    if solver is not None:
        H, b_slot = exact_intercepts_in_place(problem, training_scores(None, None, src), -mu,
                                              solver)
        gap = np.nan if lean else duality_gap(problem, alpha, training_scores(None, None, src),
                                              b_slot)
    else:
        b_slot = -mu
        H = training_scores(None, None, src)
        gap = np.nan if lean else duality_gap(problem, alpha, H, b_slot)   # before h in place
        H = centre_and_scale_in_place(H, problem.kappa)
    intercept = T @ b_slot
    # h_slot(x) = sum_i K(x, x_i) V_i with V = -kappa U P: U centred in place
    V = centre_and_scale_in_place(problem.slot_sums(alpha) if U is None else U, problem.kappa)
    del U
    if identity:
        # T = I: the output functions are the slot functions
        penalty = np.nan if lean else slot_penalty(V, H)
    else:
        H = times_small(H, T.T)            # the output functions; the slot functions freed
        penalty = np.nan if lean else output_penalty(V, T, H)
    f_train = np.add(H, intercept, out=H)  # the decision values, in H's memory
    del H
    if not lean:
        check_finite_objective(model, penalty, "the penalty 1/2 sum_j ||h_j||^2")
    return _Solution(
        problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter, resid=resid,
        V=V, W=None, intercept=intercept, G=model._decision_from_output(f_train),
        # a squared norm: a negative value can only be rounding (NaN: not computed)
        penalty=penalty if lean else max(0.0, penalty),
        gap=gap)


def tail_intercepts(problem, alpha, src, b0, solver, is_label):
    """A solve's exact intercepts, slot coefficients V, support and settled test by the
    compiled level tail (msvm/_core/_level_loop.pyx ``level_tail``: the values of the Python
    steps, bit for bit), the intercepts by the Python step where the compiled one leaves them
    (b0 itself where ``solver`` is None); for kernel rows computed in the core."""
    b_slot, V, support, settled = level_tail(problem, alpha, src.scores, b0, solver == "exact",
                                             is_label)
    if b_slot is None:
        b_slot = b0 if solver is None else exact_intercepts_in_place(
            problem, training_scores(None, None, src), b0, solver)[1]
    return b_slot, V, support, settled


def level_solution(model, src, problem, alpha, mu, n_iter, resid):
    """The fitted function of a probability chain's level (msvm/_level_chain.py), lean: the
    slot coefficients V and the intercepts of :func:`snapshot` (the same values), without
    the decision values at the training points, the penalty and the duality gap, which
    nothing reads of a level (``G``, ``penalty`` and ``gap`` are None, NaN and NaN).  For
    kernel rows computed in the core."""
    solver = intercept_solver(model, problem)
    if solver is not None:
        b_slot = exact_intercepts_in_place(problem, training_scores(None, None, src), -mu,
                                           solver)[1]
    else:
        b_slot = -mu
    V = centre_and_scale_in_place(problem.slot_sums(alpha), problem.kappa)
    return _Solution(problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter, resid=resid,
                     V=V, W=None, intercept=model._output_map(problem.k) @ b_slot, G=None,
                     penalty=np.nan)
