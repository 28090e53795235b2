"""The intercept step as a linear program (scipy.optimize.linprog, HiGHS).

With the functions h fixed, the intercepts minimize the loss part of the primal.  In terms of a
DualProblem, each variable v (box [lo_v, hi_v]) stands for the convex piecewise-linear term
max_{alpha in box} alpha * z_v with z_v = a_v + <d_v, h(x_i) + b>, and a group g adds the cap
sum alpha <= cap_g; by LP duality the loss is

    min  sum_v (hi_v t_v - lo_v s_v) + sum_g cap_g eta_g
    s.t. t_v - s_v + eta_{g(v)} = a_v + <d_v, H_i + b>,   t, s, eta >= 0,   sum_j b_j = 0,

an LP in (b, t, s, eta).  By default (``intercept_solver='exact'``) the fitted models take b from
the breakpoint search of :func:`exact_intercepts` where every loss term involves one class slot
and the intercepts sum to zero, and from the KKT multipliers of the solved dual otherwise;
``intercept_solver='linprog'`` solves this LP instead (:func:`fitted_intercepts`), for every
model.  It is generic, not fast (benchmarks/results/intercepts.md).
"""

import math

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ._core._intercepts import plain_slot_search
from ._core._problem import slot_breakpoints

INTERCEPT_SOLVERS = ("exact", "linprog")
# The exact search tests every remaining candidate of the common slope at once (one
# (candidates, k) array) once at most this many remain (``_first_reaching``).
BLOCK_CANDIDATES = 4096
# The bisection of the common shift runs on Python floats below this many slots, where NumPy
# sums a row of k values one after another from 0 (above, in blocks of 8: NumPy's loop).
SCALAR_SHIFT_SLOTS = 8
# The search after the sort runs compiled where its sums are the plain ones (fewer than
# SCALAR_SHIFT_SLOTS slots, finite slopes and KKT estimate: ``msvm._core._intercepts``), the
# same bits; False: the Python search always (tests, benchmarks).
COMPILED_SEARCH = True


def fitted_intercepts(problem, H, b0, solver="exact"):
    """The intercepts of the fitted function, by the estimator's ``intercept_solver``.

    Parameters
    ----------
    problem : DualProblem
        The model's dual description.
    H : ndarray of shape (n_samples, k)
        h(x_i) in class-slot coordinates, without intercepts.
    b0 : ndarray of shape (k,)
        The solver's KKT estimate (``-mu``): the tie-break of the exact search, and the
        intercepts kept when the loss has no finite minimizer in b.
    solver : {'exact', 'linprog'}, default='exact'
        'exact': the breakpoint search (:func:`exact_intercepts`; the problem needs
        single-slot directions and sum-to-zero intercepts).  'linprog': the LP of the module
        docstring by HiGHS (:func:`lp_intercepts`), for any problem; the rounding residue of
        the sum (at HiGHS's feasibility tolerance) is removed by a common shift.  A problem
        without free intercepts (``equality=False``: they are penalized) keeps ``b0``.

    Returns
    -------
    b : ndarray of shape (k,)
        Optimal intercepts in class-slot coordinates.
    """
    if not problem.equality:
        return b0            # penalized intercepts (a constant feature in h): no intercept step
    try:
        if solver == "linprog":
            b = lp_intercepts(problem, H)[0]
            return b - b.mean()
        return exact_intercepts(problem, H, b0=b0)
    except RuntimeError:
        return b0            # the loss is flat to infinity in some b_j: keep the KKT estimate


def lp_intercepts(problem, H):
    """Optimal intercepts b (k,) for slot-space function values H (n, k) at the training points.

    Parameters
    ----------
    problem : DualProblem
        The model's dual description (boxes, caps, directions, offsets).
    H : ndarray of shape (n_samples, k)
        h(x_i) in class-slot coordinates, without intercepts.

    Returns
    -------
    b : ndarray of shape (k,)
        Intercepts minimizing the loss, summing to zero when ``problem.equality``.
    loss : float
        The minimal loss value.
    """
    k = problem.k
    nv = problem.n_vars
    ng = len(problem.cap)
    D = problem.directions()                                  # nv x k
    rows = problem.sample_of_var()
    offset = problem.expand("lin") + np.einsum("vj,vj->v", D, H[rows])  # z_v without b
    # variables: [b (k) | t (nv) | s (nv) | eta (ng)]
    lo, hi = problem.expanded_bounds()
    cost = np.concatenate([np.zeros(k), hi, -lo, problem.cap])
    eye = sparse.identity(nv, format="csr")
    group = problem.expand("group")
    grouped = np.flatnonzero(group >= 0)
    G = sparse.csr_matrix((np.ones(len(grouped)), (grouped, group[grouped])),
                          shape=(nv, ng))
    A = sparse.hstack([-sparse.csr_matrix(D), eye, -eye, G], format="csr")
    rhs = offset
    if problem.equality:
        sum_row = sparse.csr_matrix(np.concatenate([np.ones(k), np.zeros(2 * nv + ng)]))
        A = sparse.vstack([A, sum_row], format="csr")
        rhs = np.append(rhs, 0.0)
    bounds = [(None, None)] * k + [(0, None)] * (2 * nv + ng)
    res = linprog(cost, A_eq=A, b_eq=rhs, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"intercept LP failed: {res.message}")
    return res.x[:k], float(res.fun)


def _slot_breakpoints(problem, H):
    """Per slot: sorted breakpoints t, cumulative slopes cum (len m + 1) of the slot's loss.

    The breakpoints come from one compiled pass over the variables (``slot_breakpoints``:
    the memory beyond the result is O(k), not a per-variable expansion of every attribute)."""
    out = []
    ts, rises, bases = slot_breakpoints(problem, np.ascontiguousarray(H, dtype=np.float64))
    for j, base in enumerate(bases):
        # each slot's unsorted arrays are released once sorted: the breakpoints of all slots
        # are held once, not twice
        t_all, rise = ts[j], rises[j]
        ts[j] = rises[j] = None
        # an unstable sort (7x faster than the stable one at 100k breakpoints): the order of
        # tied breakpoints changes only the rounding of the slopes between them
        order = np.argsort(t_all)
        t_all = t_all[order]
        cum = np.empty(len(order) + 1)
        cum[0] = 0.0
        np.cumsum(rise[order], out=cum[1:])
        del order, rise
        cum += base
        out.append((t_all, cum))
    return out


def _first_reaching(slots, lam_min, lam_max, reaches, reaches_all=None):
    """The smallest slope value in [lam_min, lam_max] (over every slot's cum) at which the
    nondecreasing test ``reaches`` holds, or the largest such value if none does; None when
    there is none.  A selection over the k sorted arrays: the union of candidates is never
    built (it has n k entries) until at most 256 remain, which a binary search settles; or,
    with ``reaches_all`` (the test at an array of candidates at once), until at most
    ``BLOCK_CANDIDATES`` remain, all tested at once: the first that reaches is the one the
    binary search finds, the test being nondecreasing (the same value, bit for bit)."""
    cums = [cum for _, cum in slots]
    lo = [int(np.searchsorted(c, lam_min, side="left")) for c in cums]
    hi = [int(np.searchsorted(c, lam_max, side="right")) for c in cums]
    failed = None                         # the largest candidate known not to reach
    block = 256 if reaches_all is None else BLOCK_CANDIDATES
    while True:
        sizes = [h - low for low, h in zip(lo, hi)]
        if sum(sizes) <= block:
            cands = np.unique(np.concatenate([c[low:h] for c, low, h in zip(cums, lo, hi)]))
            if len(cands) == 0:
                return failed
            if reaches_all is not None:
                hit = reaches_all(cands)
                return cands[int(np.argmax(hit))] if hit.any() else cands[-1]
            a, b = 0, len(cands) - 1
            while a < b:
                mid = (a + b) // 2
                if reaches(cands[mid]):
                    b = mid
                else:
                    a = mid + 1
            return cands[a]
        j = int(np.argmax(sizes))
        pivot = cums[j][(lo[j] + hi[j]) // 2]
        if reaches(pivot):
            hi = [int(np.searchsorted(c, pivot, side="right")) for c in cums]
        else:
            failed = pivot
            lo = [max(low, int(np.searchsorted(c, pivot, side="right")))
                  for c, low in zip(cums, lo)]


def _largest_minimizer_sums(slots, lams):
    """``_interval_sums(slots, lam)[1].sum()`` at each of ``lams`` (sorted, all in
    [max_j cum_j[0], min_j cum_j[-1]], where the clip of ``_interval_sums`` does nothing):
    one (len(lams), k) array summed along its rows, as the sum of one row of k values is
    formed (the same additions in the same order, so the same bits)."""
    largest = np.empty((len(lams), len(slots)))
    for j, (t, cum) in enumerate(slots):
        r = np.searchsorted(cum, lams, side="right") - 1
        ext = np.concatenate([t, [np.inf]])       # r == len(t): the slope never ends
        largest[:, j] = np.where(r < 0, -np.inf, ext[np.maximum(r, 0)])
    return largest.sum(axis=1)


def _interval_sums(slots, lam):
    """Per slot the interval [b_min, b_max] of minimizers of phi_j(b) - lam b."""
    lo = np.empty(len(slots))
    hi = np.empty(len(slots))
    for j, (t, cum) in enumerate(slots):
        m = len(t)
        lam_j = min(max(lam, cum[0]), cum[-1])     # lam is feasible up to rounding
        r = int(np.searchsorted(cum, lam_j, side="left"))
        lo[j] = -np.inf if r == 0 else (np.inf if r > m else t[r - 1])
        r = int(np.searchsorted(cum, lam_j, side="right")) - 1
        hi[j] = -np.inf if r < 0 else (np.inf if r == m else t[r])
    return lo, hi


def exact_intercepts(problem, H, b0=None):
    """Exact intercepts for a problem whose variables each touch one class slot.

    With h fixed, the loss is sum_j phi_j(b_j), each phi_j convex and piecewise linear in
    the one intercept b_j; minimizing it subject to sum_j b_j = 0 means finding a common
    subgradient lam with 0 in sum_j argmin_b (phi_j(b) - lam b).  The candidate values of lam
    are the slopes of the phi_j, so a binary search over their sorted union, each step a
    per-slot binary search, solves it exactly in O(n k log(n k)).  Where the minimizers form
    intervals, the intercepts closest to ``b0`` (the solver's KKT estimate) in the sense of a
    common shift are returned.

    Parameters
    ----------
    problem : DualProblem
        Single-slot directions (``slot2 == -1``) and ``equality=True``.
    H : ndarray of shape (n_samples, k)
        h(x_i) in class-slot coordinates, without intercepts.
    b0 : ndarray of shape (k,), default=None
        Preferred intercepts when the optimum is not unique.

    Returns
    -------
    b : ndarray of shape (k,)
        Optimal intercepts, summing to zero.
    """
    if problem.has_pairs or not problem.equality:
        raise ValueError("exact_intercepts needs single-slot directions and unpenalized, "
                         "sum-to-zero intercepts; use lp_intercepts")
    return slot_intercepts_from_breakpoints(_slot_breakpoints(problem, H), b0)


def slot_intercepts_from_breakpoints(slots, b0=None):
    """The search of :func:`exact_intercepts` on the per-slot breakpoints ``slots`` (a list
    of k (sorted t, cumulative slopes) pairs, as ``_slot_breakpoints`` makes them; a chunked
    fit merges them from its chunks, msvm/_dask.py).  Returns the intercepts (k,).

    With ``COMPILED_SEARCH``, below ``SCALAR_SHIFT_SLOTS`` slots, the search runs compiled
    (``msvm._core._intercepts.plain_slot_search``: the same comparisons and sums in the same
    order, the same bits; about 5 us instead of 90 to 200 us at 400 samples and k = 3,
    where it was the largest Python part of a probability refit) and falls back to this one
    where a slope or b0 is not finite or there is no candidate."""
    k = len(slots)
    if COMPILED_SEARCH and k < SCALAR_SHIFT_SLOTS:
        start = np.zeros(k) if b0 is None else np.ascontiguousarray(b0, dtype=np.float64)
        b = plain_slot_search(slots, start)
        if b is not None:
            return b
    lam_min = max(cum[0] for _, cum in slots)
    lam_max = min(cum[-1] for _, cum in slots)
    scale = max(1.0, max(_largest_abs(cum) for _, cum in slots))
    if lam_min > lam_max and lam_min - lam_max <= 1e-12 * scale:
        lam = 0.5 * (lam_min + lam_max)        # equal up to rounding: the one candidate
    else:
        # smallest candidate whose largest minimizer sum reaches 0
        lam = _first_reaching(slots, lam_min, lam_max,
                              lambda value: _interval_sums(slots, value)[1].sum() >= 0.0,
                              lambda values: _largest_minimizer_sums(slots, values) >= 0.0)
    if lam is None:
        raise RuntimeError("intercept step: the loss is unbounded below in b")
    bmin, bmax = _interval_sums(slots, lam)
    # pick b in the box [bmin, bmax] with sum 0, a common shift of b0 clipped to the box
    b0 = np.zeros(k) if b0 is None else np.asarray(b0, dtype=np.float64)
    span = 2.0 * (_largest_finite_bound(b0, bmin, bmax) + 1.0)
    a, c = _shift_bisection(b0, bmin, bmax, span)
    b = np.clip(b0 + 0.5 * (a + c), bmin, bmax)
    if not np.all(np.isfinite(b)):
        raise RuntimeError("intercept step: no finite optimal intercepts")
    # remove the last rounding residue of the sum on a slot with room
    free = np.flatnonzero((b > bmin) & (b < bmax))
    j = free[0] if len(free) else int(np.argmax(bmax - bmin))
    b[j] -= b.sum()
    return b


def _largest_abs(cum):
    """``np.abs(cum).max()`` of a nondecreasing ``cum`` (a slot's cumulative slopes): the
    larger |end|, NaN when it holds a NaN (then its last entry is one), as NumPy gives it,
    without two passes over the array (k of them per search)."""
    first, last = float(cum[0]), float(cum[-1])
    if first != first or last != last:
        return math.nan
    return max(abs(first), abs(last))


def _largest_finite_bound(b0, bmin, bmax):
    """The largest |value| of the finite entries of bmin and bmax and of all of b0 (NaN if
    b0 holds one): a maximum, the same in any order; on Python floats below
    ``SCALAR_SHIFT_SLOTS`` slots (three small NumPy reductions cost more there)."""
    if len(b0) >= SCALAR_SHIFT_SLOTS:
        finite = np.concatenate([bmin[np.isfinite(bmin)], bmax[np.isfinite(bmax)], b0])
        return np.abs(finite).max()
    sizes = [abs(v) for v in (*bmin.tolist(), *bmax.tolist()) if math.isfinite(v)]
    sizes += [abs(v) for v in b0.tolist()]
    return math.nan if any(v != v for v in sizes) else max(sizes)


def _shift_bisection(b0, bmin, bmax, span):
    """The final bracket (a, c) of the bisection for the common shift theta in
    [-2 span, 2 span] at which ``sum_j clip(b0_j + theta, bmin_j, bmax_j)`` reaches 0 (at
    most 200 halvings, stopped once no float lies between a and c).

    Below ``SCALAR_SHIFT_SLOTS`` slots the sums are formed on Python floats, one after
    another from 0, as NumPy sums so few values: the same comparisons, the same bracket, at
    a fifth of the cost of three NumPy calls per halving (50 to 60 halvings a search)."""
    if len(b0) < SCALAR_SHIFT_SLOTS:
        terms = list(zip(b0.tolist(), bmin.tolist(), bmax.tolist()))

        def total(theta):
            acc = 0.0
            for start, low, high in terms:
                value = start + theta
                acc += high if value > high else (low if value < low else value)
            return acc
    else:
        def total(theta):
            # np.clip without its Python overhead (bmin <= bmax): the same values
            return np.minimum(np.maximum(b0 + theta, bmin), bmax).sum()
    a, c = -2.0 * span, 2.0 * span
    for _ in range(200):
        theta = 0.5 * (a + c)
        if theta == a or theta == c:
            # no float between a and c: every further step would leave 0.5 (a + c) at theta
            break
        if total(theta) < 0.0:
            a = theta
        else:
            c = theta
    return a, c
