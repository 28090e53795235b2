"""The start of a large-C kernel fit from the smoothed primal on a factor of its kernel.

Design: the dual of every model depends on the data only through the kernel matrix K.  Where
K has a small numerical rank r, a pivoted Cholesky factor K = L L^T + E (L of n x r, E below
``FACTOR_RTOL`` max K_ii on the diagonal; msvm._finish_groups._Factor, grown from the row
source's kernel rows) makes the dual of the explicit-feature problem on the features L
(rows of L, the linear kernel) the kernel dual with K replaced by L L^T.  That problem is
solved by the smoothed-primal Newton start (msvm/_primal.py), which converges in a few
dozen Newton steps at any C, where the kernel solver's epochs grow with C; its dual point
is the START of the exact solve on the true K (DualSequence.solve), which then certifies
or polishes it.  The fit's answer is always the exact solve's, whatever E: the factor only
has to be good enough to make a good start.

Cost and give-up: the factor takes at most ``factor_rank_cap`` pivots (r kernel rows of n
values each, and O(n r^2) flops), chosen so that the primal start's Newton system of
(r + 1) k unknowns stays dense and small (``msvm._plan.PRIMAL_MAX_UNKNOWNS``); where that
rank does not bring the residual below ``FACTOR_RTOL`` (an RBF kernel of small width) the
factor is dropped (unless cut short for the approximate start below) and the solve runs as
without the route (the same values: only the rows read into the row cache differ).  The
factor is found once per row source and kept by the sequence for its later solves (a DC
step's shifted dual starts from the factor's primal at the step's warm start,
W = L^T U(alpha)).  Whether a solve tries the route is the plan's rule
(msvm._plan.SolvePlan.starts_from_factor).

A kernel of moderate numerical rank (RBF) starts from the same factor cut short (round 18):
where the exact factor gives up, the first r of its pivots make the start, r the fewest
whose residual diagonal is below ``START_RTOL`` max K_ii, and only where r is within
:func:`start_rank_budget` (the start's Newton steps, about n r^2 k flops each, against the
epochs, about n^2 k each, that a solve from zero spends before its finishing step); past
that budget the route gives up as before.  The start is then far from the optimum of the
true kernel, but its free pattern is nearly right, and the exact solve from it is cheaper
than from zero.  Measured (benchmarks/results/kernel_factor.md, "Round 18"): make_blobs
n = 3,000 RBF (ranks 31-60), C = 1e4 .. 1e8, four models, 1.2-5x less CPU time; on
pendigits (16 dimensions, gamma 1/32) no rank up to 149 brings the residual below 0.1 and
every such start cost more epochs than zero, which the rule turns away by the residual.
"""

import numpy as np

from ._finish_groups import _Factor
from ._plan import FACTOR_SPEEDUP, PRIMAL_MAX_UNKNOWNS
from ._primal import primal_start
from ._thread_pools import one_blas_thread

# The factor's stopping rule: every residual diagonal entry K_ii - ||L_i||^2 at most
# FACTOR_RTOL times the largest K_ii.  A low-rank kernel given exactly (a precomputed linear
# Gram matrix, a polynomial kernel of low degree in few dimensions) reaches it at its rank
# (its residual is rounding, about 1e-16 of max K_ii); a smooth kernel at a moderate rank.
FACTOR_RTOL = 1e-10
# The largest rank tried (also at most PRIMAL_MAX_UNKNOWNS / k - 1, the dense Newton
# system of the start, and the samples).
FACTOR_MAX_RANK = 300
# ... and at most this many bytes of L (n r doubles): 200,000 samples keep 167 columns.
FACTOR_MAX_BYTES = 256 * 2 ** 20
# Round 18, the approximate start: where the factor above gives up, its first r pivots make
# the start if their residual diagonal is at most START_RTOL max K_ii (make_blobs RBF: r = 30
# to 70; pendigits' RBF, whose starts all lost, keeps 0.10 at its cap of 149) and r is
# within the rank budget of ``start_rank_budget``.  False: round 17's rule (give up).
APPROXIMATE_START = True
START_RTOL = 2e-2
# the budget: the start's Newton steps (START_NEWTON_STEPS of about n r^2 k flops, at
# msvm._plan.FACTOR_SPEEDUP times an epoch's rate) may cost START_EPOCHS epochs of
# n^2 k flops (half the epochs a solve from zero runs before its finishing step)
START_EPOCHS = 50
START_NEWTON_STEPS = 40


def source_columns(src, samples):
    """Kernel columns K[:, samples] (n, len(samples)) read as rows of the symmetric row
    source ``src`` (also msvm._sequence.DualSequence._kernel_columns on kernel rows)."""
    return np.stack([src.kernel_row(int(i)) for i in samples], axis=1)


class _RowColumns:
    """The row source's kernel columns as the factor's ``cols`` (:func:`source_columns`)."""

    def __init__(self, src):
        self.src = src

    def block(self, samples):
        """K[:, samples] (n, len(samples))."""
        return source_columns(self.src, samples)


def factor_rank_cap(n, k):
    """The most pivots the factor of a kernel on n samples with k class slots may take:
    ``FACTOR_MAX_RANK``, at most the samples, the rank whose (r + 1) k unknowns keep the
    start's Newton system within ``PRIMAL_MAX_UNKNOWNS`` and the columns that
    ``FACTOR_MAX_BYTES`` hold."""
    return max(0, min(FACTOR_MAX_RANK, n, PRIMAL_MAX_UNKNOWNS // max(k, 1) - 1,
                      FACTOR_MAX_BYTES // (8 * max(n, 1))))


def start_rank_budget(n, k):
    """The largest rank of an approximate start on n samples: the rank r whose
    ``START_NEWTON_STEPS`` Newton steps of n r^2 k flops (at ``FACTOR_SPEEDUP`` times the
    rate of an epoch) cost ``START_EPOCHS`` epochs of n^2 k flops, r = sqrt(START_EPOCHS
    FACTOR_SPEEDUP n / START_NEWTON_STEPS): 106 at n = 3,000, 33 at n = 300 (at most
    ``factor_rank_cap(n, k)``)."""
    r = int(np.sqrt(START_EPOCHS * FACTOR_SPEEDUP * max(n, 1) / START_NEWTON_STEPS))
    return min(r, factor_rank_cap(n, k))


def residual_after_pivots(L, resid):
    """The largest residual diagonal entry K_ii - ||L_i[:r]||^2 after each number of pivots
    r = 1 .. L.shape[1], from the pivoted factor L and its final residual ``resid``: before
    pivot j the largest residual is the pivot's own, L[p_j, j]^2, and every other entry of
    column j is at most that (the residual is positive semidefinite), so it is the column's
    largest square."""
    largest = np.max(L * L, axis=0) if L.shape[1] else np.zeros(0)
    return np.append(largest[1:], float(np.max(resid, initial=0.0)))


def approximate_rank(L, resid, diag, k):
    """The rank of the approximate start from the pivoted factor L that gave up: the fewest
    pivots whose residual is at most ``START_RTOL`` max K_ii, or 0 (no start) where that
    takes more than ``start_rank_budget`` pivots or ``APPROXIMATE_START`` is off."""
    if not APPROXIMATE_START or L.shape[1] == 0:
        return 0
    small = residual_after_pivots(L, resid) <= START_RTOL * float(np.max(diag))
    budget = start_rank_budget(len(diag), k)
    r = int(np.argmax(small)) + 1 if np.any(small) else 0
    return r if 0 < r <= budget else 0


def kernel_factor(src, k):
    """The pivoted Cholesky factor L (n, r) of the row source's kernel, its residual
    diagonal below ``FACTOR_RTOL`` max K_ii; where that takes more than
    ``factor_rank_cap(n, k)`` pivots, the first ``approximate_rank`` of them (the
    approximate start), or None where there are none (or the kernel is not positive
    semidefinite on its rows).  L is C-contiguous (the primal start's features)."""
    diag = np.asarray(src.diagonal(), dtype=np.float64)
    if not len(diag) or not np.all(np.isfinite(diag)) or float(diag.max()) <= 0.0:
        return None
    factor = _Factor(_RowColumns(src), diag, rtol=FACTOR_RTOL)
    with one_blas_thread():
        L = factor.rows(np.arange(len(diag)), max_rank=factor_rank_cap(len(diag), k))
    if L is None and factor.too_wide:
        L = factor.L[:, :approximate_rank(factor.L, factor.resid, diag, k)]
    if L is None or L.shape[1] == 0 or not np.all(np.isfinite(L)):
        return None
    return np.ascontiguousarray(L)


def factor_start(problem, L, alpha, mu, tol, max_steps):
    """The dual start (alpha, mu) of ``problem`` from the smoothed primal on the features L
    (msvm._primal.primal_start), from the weights W = L^T U(alpha) of the current ``alpha``
    (zero for a fit from zero; a DC step's warm start otherwise), written into ``alpha``;
    None, ``alpha`` untouched, where the start fails or is not finite (bounds so extreme
    that its Newton systems overflow: a sample weight of 1e300), so that the solve goes on
    as without the route.  BLAS runs on one thread, as on explicit features
    (msvm._sequence.DualSequence._blas_threads: a kernel solve keeps the caller's setting,
    and a threaded OpenBLAS waiting for a busy core made a rank-53 start at n = 1,000 cost
    60 s CPU instead of 0.2 s under a load of 10)."""
    W = L.T @ problem.slot_sums(alpha)
    diag = np.einsum("ij,ij->i", L, L)
    try:
        with np.errstate(all="ignore"), one_blas_thread():
            start, mu_start = primal_start(problem, L, W, mu, tol, diag, max_steps)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError):
        return None
    if not (np.all(np.isfinite(start)) and np.all(np.isfinite(mu_start))):
        return None
    alpha[:] = start
    return alpha, mu_start
