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
factor is dropped and the solve runs as without the route (the same values: only the rows
read into the row cache differ).  The factor is found once per row source and kept by the
sequence for its later solves (a DC step's shifted dual starts from the factor's primal at
the step's warm start, W = L^T U(alpha)).  Whether a solve tries the route is the plan's
rule (msvm._plan.SolvePlan.starts_from_factor).
"""

import numpy as np

from ._finish_groups import _Factor
from ._plan import PRIMAL_MAX_UNKNOWNS
from ._primal import primal_start

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


def kernel_factor(src, k):
    """The pivoted Cholesky factor L (n, r) of the row source's kernel, its residual
    diagonal below ``FACTOR_RTOL`` max K_ii, or None where that takes more than
    ``factor_rank_cap(n, k)`` pivots (or the kernel is not positive semidefinite on its
    rows).  L is C-contiguous (the primal start's features)."""
    diag = np.asarray(src.diagonal(), dtype=np.float64)
    if not len(diag) or not np.all(np.isfinite(diag)) or float(diag.max()) <= 0.0:
        return None
    factor = _Factor(_RowColumns(src), diag, rtol=FACTOR_RTOL)
    L = factor.rows(np.arange(len(diag)), max_rank=factor_rank_cap(len(diag), k))
    if L is None or L.shape[1] == 0 or not np.all(np.isfinite(L)):
        return None
    return np.ascontiguousarray(L)


def factor_start(problem, L, alpha, mu, tol, max_steps):
    """The dual start (alpha, mu) of ``problem`` from the smoothed primal on the features L
    (msvm._primal.primal_start), from the weights W = L^T U(alpha) of the current ``alpha``
    (zero for a fit from zero; a DC step's warm start otherwise), written into ``alpha``;
    None, ``alpha`` untouched, where the start fails or is not finite (bounds so extreme
    that its Newton systems overflow: a sample weight of 1e300), so that the solve goes on
    as without the route."""
    W = L.T @ problem.slot_sums(alpha)
    diag = np.einsum("ij,ij->i", L, L)
    try:
        with np.errstate(all="ignore"):
            start, mu_start = primal_start(problem, L, W, mu, tol, diag, max_steps)
    except (ValueError, ArithmeticError, np.linalg.LinAlgError):
        return None
    if not (np.all(np.isfinite(start)) and np.all(np.isfinite(mu_start))):
        return None
    alpha[:] = start
    return alpha, mu_start
