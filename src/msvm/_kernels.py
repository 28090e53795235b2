"""Kernel layer: gamma heuristics, Gram matrices for prediction, and the solver's row source."""

import numbers

import numpy as np
from scipy.linalg import cholesky, eigh
from scipy.sparse.linalg import ArpackNoConvergence, eigsh

import scipy.sparse as sp
from sklearn.metrics.pairwise import euclidean_distances

from ._core import _rows
from ._plan import CACHE_DTYPES, cache_rows, row_kind
from ._thread_pools import one_blas_thread

KERNELS = ("linear", "poly", "rbf", "precomputed")

# Largest training set for which the 'median' heuristic uses every pair; above it, a fixed
# random subsample of this many points (stratified by chance, seeded) estimates the median.
MEDIAN_MAX_SAMPLES = 2000

# Positive semidefiniteness is tested on the whole training Gram matrix up to this many
# samples; above it, on the principal submatrix of PSD_SUBSAMPLE seeded random samples (a
# principal submatrix of a PSD matrix is PSD, so an indefinite one proves the kernel
# indefinite; a PSD one is evidence, not proof).  A Gram matrix given at fit (precomputed or
# from a callable) is also tested on every 2 x 2 principal submatrix (see check_gram).  At
# 2000 samples the factorization takes about 0.3 s and 32 MB.
PSD_MAX_SAMPLES = 2000
PSD_SUBSAMPLE = 2000
# A Gram matrix is checked in square blocks of this many rows and columns (2 MB each), so
# that the check needs no n x n temporary and Ctrl-C is handled between blocks.
GRAM_BLOCK = 512
# Relative ridge of the PSD tests: K + PSD_RIDGE * max|K| * I must be positive definite.
PSD_RIDGE = 1e-8


def between_class_gamma(X, y, quantile=0.5, random_state=0):
    """gamma = 1 / (2 sigma^2), sigma a quantile of the between-class pairwise distances.

    The heuristic of Brown et al. (2000) used by the papers: Liu and Yuan (2011) takes the
    median (``quantile=0.5``); Wu and Liu (2007) tunes sigma among the first quartile, the
    median and the third quartile.  Distances are Euclidean, between training points of
    different classes.  For more than ``MEDIAN_MAX_SAMPLES`` points the quantile is taken over
    a seeded random subsample.
    """
    if not isinstance(quantile, numbers.Real) or not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be a number in [0, 1]; got {quantile!r}")
    X = X.astype(np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.shape[0] > MEDIAN_MAX_SAMPLES:
        idx = np.random.default_rng(random_state).choice(X.shape[0], MEDIAN_MAX_SAMPLES,
                                                         replace=False)
        X, y = X[idx], y[idx]
    with np.errstate(over="ignore", invalid="ignore"):
        D2 = squared_distances(X, X)
    between = y[:, None] != y[None, :]
    d = np.sqrt(D2[np.triu(between, 1)])
    if d.size == 0:
        raise ValueError("gamma='median' needs at least two classes in the training data")
    sigma = float(np.quantile(d, quantile))
    if sigma <= 0.0:
        raise ValueError(
            f"the {quantile:g} quantile of the between-class distances of X is zero (samples "
            f"of different classes coincide), so the heuristic gamma = 1 / (2 sigma^2) is "
            f"infinite: give gamma as a positive float, or check X for constant or duplicated "
            f"rows")
    return 1.0 / (2.0 * sigma * sigma)


def median_gamma(X, y, random_state=0):
    """gamma = 1 / (2 sigma^2), sigma the median between-class pairwise Euclidean distance.

    The heuristic of Brown et al. (2000) used by the papers (Liu and Yuan 2011 section 4.1.2); the
    ``gamma='median'`` option of every estimator.  See :func:`between_class_gamma`.
    """
    return between_class_gamma(X, y, 0.5, random_state)


# The range of double precision: a squared norm above DOUBLE_MAX is infinite, one below TINY
# has lost its leading digits (subnormal) or is zero.
DOUBLE_MAX = float(np.finfo(np.float64).max)
TINY = float(np.finfo(np.float64).tiny)
# Rows per block of :func:`largest_sqnorm` (a shifted block is a temporary copy).
_NORM_BLOCK_ENTRIES = 2 ** 20


def kernel_overflow_message(top):
    """The text of the refusal of an X whose squared norms overflow (the exact path's, in
    ``msvm._core._rows``: the approximate paths refuse the same X with the same words)."""
    return (f"the kernel overflows double precision on X: squared norms of the samples reach "
            f"{top:.3g}, so kernel values are infinite or NaN. Rescale X (e.g. with "
            f"sklearn.preprocessing.StandardScaler) before fitting.")


def largest_sqnorm(X, center=None):
    """max_i ||x_i - center||^2 over the rows of X (inf where it overflows; 0 for no rows).

    Dense X is read in blocks of rows (a shifted block is the only temporary); sparse X is
    never shifted.  Overflow gives inf, not a warning.
    """
    if X.shape[0] == 0:
        return 0.0
    width = X.nnz / X.shape[0] if sp.issparse(X) else X.shape[1]     # entries per row
    top, step = 0.0, max(1, int(_NORM_BLOCK_ENTRIES // max(1.0, width)))
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for start in range(0, X.shape[0], step):
            block = X[start:start + step]
            if center is not None and not sp.issparse(X):
                block = block - center
            top = max(top, float(np.max(_row_sqnorms(block))))
    return top if np.isfinite(top) else float("inf")


def check_kernel_scale(X, kernel, center=None, large=True):
    """Refuse an X whose scale a named kernel cannot represent in double precision.

    ``large``: squared norms of the samples (shifted by ``center``) that overflow, the
    exact path's refusal (:func:`kernel_overflow_message`).  Always: squared norms that
    underflow (below the smallest normal double) although X is not all zero: every inner
    product and distance is then 0 or subnormal, every kernel value the same, and the fit
    would silently be a constant classifier.  'precomputed' and callable kernels are not
    checked here (their Gram matrices are).
    """
    if callable(kernel) or kernel not in ("linear", "poly", "rbf"):
        return
    top = largest_sqnorm(X, center)
    if large and not top <= DOUBLE_MAX:
        raise ValueError(kernel_overflow_message(top))
    if top < TINY and _largest_abs(X) > 0.0:
        raise ValueError(
            f"the kernel underflows double precision on X: squared norms of the samples "
            f"underflow to {top:.3g} (largest |X| = {_largest_abs(X):.3g}), so every kernel value "
            f"is the same and the fit cannot tell the samples apart. Rescale X (e.g. with "
            f"sklearn.preprocessing.StandardScaler) before fitting.")


def is_constant(X):
    """Whether every row of X is the same (dense or sparse; True for fewer than 2 rows)."""
    if X.shape[0] < 2:
        return True
    if sp.issparse(X):
        if X.nnz == 0:
            return True
        return bool(np.all(dense(X.max(axis=0)) == dense(X.min(axis=0))))
    return bool(np.all(X == X[:1]))


def resolve_gamma(gamma, kernel, X, y):
    """Return the float kernel coefficient (None where the kernel has none).

    An X whose squared norms underflow double precision is refused first, for every named
    kernel (see :func:`check_kernel_scale`).  A heuristic that does not give a finite
    positive value on X (its variance or distances overflow or underflow double precision)
    raises a ValueError naming the remedy.
    """
    if not callable(kernel):
        check_kernel_scale(X, kernel, large=False)
    if kernel not in ("rbf", "poly"):
        return None
    value = _heuristic_gamma(gamma, X, y)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(
            f"gamma={gamma!r} gives {value!r} on this X (largest |X| = "
            f"{_largest_abs(X):.3g}): X's scale is outside what double "
            f"precision can handle. Rescale X (e.g. with sklearn.preprocessing.StandardScaler) "
            f"or give gamma as a positive float.")
    return value


def _heuristic_gamma(gamma, X, y):
    d = X.shape[1]
    if isinstance(gamma, str):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            if gamma == "scale":
                var = _variance(X)
                if not np.isfinite(var) or (var < TINY and not is_constant(X)):
                    return 0.0      # overflowed, or underflowed on a non-constant X
                return 1.0 / (d * var) if var > 0 else 1.0
            if gamma == "auto":
                return 1.0 / d
            if gamma == "median":
                return median_gamma(X, y)
        raise ValueError(f"gamma must be 'scale', 'auto', 'median' or a positive float; "
                         f"got {gamma!r}")
    if not isinstance(gamma, numbers.Real) or not gamma > 0:
        raise ValueError(f"gamma must be 'scale', 'auto', 'median' or a positive float; "
                         f"got {gamma!r}")
    return float(gamma)


def _largest_abs(X):
    """max |X_ij| (0 for an empty X), dense or sparse."""
    if sp.issparse(X):
        return float(abs(X).max()) if X.nnz else 0.0
    return float(np.max(np.abs(X))) if X.size else 0.0


def _variance(X):
    """The variance of all entries of X (the 'scale' heuristic), dense or sparse."""
    if sp.issparse(X):
        return float(X.multiply(X).mean() - X.mean() ** 2)
    return X.var()


def dense(M):
    """M as a NumPy array (a sparse product such as A @ B.T densified)."""
    return M.toarray() if sp.issparse(M) else np.asarray(M)


def _row_sqnorms(A):
    return (np.asarray(A.multiply(A).sum(axis=1)).ravel() if sp.issparse(A)
            else np.einsum("ij,ij->i", A, A))


def kernel_matrix(A, B, kernel, gamma=None, degree=3, coef0=0.0):
    """Gram matrix K(A, B) for a named kernel or a callable (A, B dense or sparse).

    'poly' does scikit-learn's ``polynomial_kernel`` operations in place (not the function:
    it refuses degree 0, a constant kernel msvm takes); 'rbf' is exp(-gamma D2) with D2 from
    :func:`squared_distances` (scikit-learn's ``euclidean_distances`` after a shift that
    keeps it exact under a large common offset), exponentiated in place.
    """
    if callable(kernel):
        return np.asarray(dense(kernel(A, B)), dtype=np.float64)
    if kernel == "linear":
        return dense(A @ B.T)
    if kernel == "poly":
        K = np.asarray(dense(A @ B.T), dtype=np.float64)    # a new array: changed in place
        K *= gamma
        K += coef0
        K **= degree
        return K
    if kernel == "rbf":
        K = squared_distances(A, B)
        K *= -gamma
        return np.exp(K, out=K)
    raise ValueError(f"unknown kernel {kernel!r}")


# squared_distances recomputes an entry from the differences when it is below this fraction
# of ||a||^2 + ||b||^2 (it has then lost more than half of its digits to cancellation), in
# blocks of at most this many entries of the differences
_CANCELLATION = 1e-8
_REFINE_BLOCK = 2 ** 20
# squared_distances forms -2 a^T b + ||a||^2 + ||b||^2 itself for dense float64 inputs (the
# same operations and bits as scikit-learn's euclidean_distances, without its input checks);
# False: every input through euclidean_distances (the old path, kept for comparison)
FAST_DISTANCES = True


def typical_point(X):
    """The coordinate-wise median of the rows of X: a shift that leaves distances unchanged.

    Subtracted before ||a||^2 + ||b||^2 - 2 a^T b is formed, it removes an offset the samples
    share (a column of 1e8 with an O(1) spread, or a constant column 1e300: exactly, since it
    is one of the values or the mean of two equal ones) without letting an outlying sample
    (one row of 1e150) blow up the others, as a mean or a single sample would.
    """
    return np.median(X, axis=0)


def squared_distances(A, B):
    """||a - b||^2 for every row a of A and b of B (shape (len(A), len(B))).

    scikit-learn's ``euclidean_distances(A, B, squared=True)``: -2 a^T b + ||a||^2 + ||b||^2
    (one matrix product, in place; formed here for dense float64 blocks, the same operations
    and bits: :func:`_expanded_distances`), after shifting both by B's coordinate-wise median (see
    :func:`typical_point`): without the shift a common offset of 1e8 cancels every digit
    (scikit-learn's own result is then 61 % off).  The formula still loses the digits of a
    small distance between large vectors: a point and itself gets rounding noise instead of
    0, and exp(-gamma * noise) is far from 1 for a large gamma.  Entries small enough to
    have lost half their digits (at most ``_CANCELLATION (||a||^2 + ||b||^2)``) are
    recomputed from the differences, so duplicates are exactly 0.  Sparse A and B are not
    shifted (that would densify them).
    """
    if A.shape[0] == 0 or B.shape[0] == 0:
        return np.zeros((A.shape[0], B.shape[0]))
    if not (sp.issparse(A) or sp.issparse(B)):
        center = typical_point(B)
        with np.errstate(over="ignore", invalid="ignore"):
            A, B = A - center, B - center
    na, nb = _row_sqnorms(A), _row_sqnorms(B)
    if not (np.all(np.isfinite(na)) and np.all(np.isfinite(nb))):
        return _with_overflowing_rows(A, B, na, nb)
    with np.errstate(over="ignore", invalid="ignore"):
        D2 = _expanded_distances(A, B, na, nb)
    # candidates under a bound on the whole block (one comparison per entry), then the exact
    # per-entry test on those only
    rows, cols = np.nonzero(D2 <= _CANCELLATION * (np.max(na) + np.max(nb)))
    keep = D2[rows, cols] <= _CANCELLATION * (na[rows] + nb[cols])
    rows, cols = rows[keep], cols[keep]
    D2[rows, cols] = _pair_distances(A, B, rows, cols)
    return D2


def _expanded_distances(A, B, na, nb):
    """||a||^2 + ||b||^2 - 2 a^T b for every pair, negatives clipped to 0: scikit-learn's
    ``euclidean_distances(A, B, squared=True)`` with the norms given.  For dense float64
    A and B (every shifted pair) its operations are done here in its order, on the same
    arrays, so the same bits, without its input checks (0.7 of its 0.8 ms at 134 x 266
    points); other inputs (sparse, float32) go through it.  ``FAST_DISTANCES = False``
    sends every input through it."""
    if not (FAST_DISTANCES and _plain_float64(A) and _plain_float64(B)):
        return euclidean_distances(A, B, squared=True, X_norm_squared=na[:, None],
                                   Y_norm_squared=nb[None, :])
    D2 = -2 * (A @ B.T)
    D2 += na[:, None]
    D2 += nb[None, :]
    return np.maximum(D2, 0.0, out=D2)


def _plain_float64(M):
    """Whether M is a dense float64 NumPy array (not a subclass or a sparse matrix)."""
    return type(M) is np.ndarray and M.dtype == np.float64 and M.ndim == 2


def _pair_distances(A, B, rows, cols):
    """||A[rows[p]] - B[cols[p]]||^2 for every pair p, from the differences (exact where the
    expanded formula loses digits), in blocks of at most ``_REFINE_BLOCK`` entries of the
    differences."""
    out = np.empty(len(rows))
    step = max(1, _REFINE_BLOCK // max(1, A.shape[1]))
    for start in range(0, len(rows), step):
        r, c = rows[start:start + step], cols[start:start + step]
        out[start:start + step] = _row_sqnorms(A[r] - B[c])
    return out


class LandmarkRBF:
    """exp(-gamma ||x - l||^2) of rows x against fixed rows L (a Nystroem map's landmarks):
    the values of ``kernel_matrix(X, L, 'rbf', gamma)`` to rounding, with what depends on L
    alone done once.

    ``kernel_matrix`` computes every block as :func:`squared_distances` does: the median of
    L, the shifted copies of both sides, scikit-learn's validation of both, the norms, the
    product, four passes over the block (the two norms added, the clipping at zero, the
    scaling by -gamma), then a scan of every entry for digits lost to cancellation, and the
    exponential.  For a chunked fit's mapped passes (msvm._products.FactoredRows: a block of
    kernel values per block of rows, in every pass) the shift by L's median and the
    landmarks' side are kept, and the exponent -gamma (||x||^2 + ||l||^2 - 2 x^T l) is one
    BLAS product of the shifted rows extended by [1, ||x||^2] with the landmarks' rows
    [2 gamma l, -gamma ||l||^2, -gamma]; the exponential follows in place: no other pass
    over the block.  The guard against cancellation recomputes from the differences the
    entries that ``squared_distances`` recomputes (an exponent at most -gamma
    ``_CANCELLATION`` (||x||^2 + ||l||^2) in size: half the digits lost) but finds them
    without a scan: such an entry's exact distance is at most about that bound, and
    (||x|| - ||l||)^2 <= ||x - l||^2, so only the landmarks whose norm lies within
    sqrt(2 (_CANCELLATION + 4 (d + 2) eps) (||x||^2 + max ||l||^2)) of ||x|| can hold one
    (the norms sorted once; twice the bound covers the rounding of the product and of the
    norms).  Every entry whose distance rounds below zero is among them, so no clipping pass
    is needed.  Where that window holds many landmarks (landmarks of nearly equal norms) the
    block is scanned as there; rows whose exponents could overflow, and sparse rows, go
    through ``kernel_matrix``.

    Parameters
    ----------
    landmarks : ndarray of shape (m, n_features)
        Dense rows.
    gamma : float
        The RBF kernel's coefficient.
    """

    def __init__(self, landmarks, gamma):
        L = np.asarray(landmarks, dtype=np.float64)
        self.landmarks, self.gamma = L, float(gamma)
        m, d = L.shape
        self.center = typical_point(L) if m else np.zeros(d)
        with np.errstate(over="ignore", invalid="ignore"):
            self.shifted = L - self.center
            self.norms = _row_sqnorms(self.shifted)
            self.top = float(np.max(self.norms, initial=0.0))
            # the landmarks' side of the exponent's product
            R = np.empty((m, d + 2))
            np.multiply(self.shifted, 2.0 * self.gamma, out=R[:, :d])
            R[:, d] = -self.gamma * self.norms
            R[:, d + 1] = -self.gamma
        self.usable = bool(m and np.all(np.isfinite(R)) and self._safe(self.top))
        if self.usable:
            self.right = np.ascontiguousarray(R.T)
            roots = np.sqrt(self.norms)
            self.order = np.argsort(roots, kind="stable")
            self.sorted_roots = roots[self.order]
            eps = float(np.finfo(np.float64).eps)
            self.window = 2.0 * (_CANCELLATION + 4.0 * (d + 2) * eps)

    def _safe(self, sqnorm):
        """Whether exponents of rows of squared norm at most ``sqnorm`` cannot overflow."""
        return 8.0 * max(self.gamma, 1.0) * (sqnorm + self.top) <= DOUBLE_MAX

    def __call__(self, X):
        """K(X, landmarks), float64 (len(X), m)."""
        if not self.usable or sp.issparse(X):
            return kernel_matrix(X, self.landmarks, "rbf", self.gamma)
        n, d = X.shape
        left = np.empty((n, d + 2))
        with np.errstate(over="ignore", invalid="ignore"):
            A = np.subtract(X, self.center, out=left[:, :d])
            na = _row_sqnorms(A)
        if not (np.all(np.isfinite(na)) and self._safe(np.max(na, initial=0.0))):
            return kernel_matrix(X, self.landmarks, "rbf", self.gamma)
        left[:, d] = 1.0
        left[:, d + 1] = na
        E = left @ self.right
        self._refine(E, A, na)
        return np.exp(E, out=E)

    def _refine(self, E, A, na):
        """Recompute from the differences the exponents of E whose distances lost half
        their digits (those ``squared_distances`` recomputes), found through the norms."""
        nb, scale = self.norms, -self.gamma
        half = np.sqrt(self.window * (na + self.top))
        roots = np.sqrt(na)
        lo = np.searchsorted(self.sorted_roots, roots - half, side="left")
        hi = np.searchsorted(self.sorted_roots, roots + half, side="right")
        counts = hi - lo
        total = int(np.sum(counts))
        if total == 0:
            return
        if total > E.size // 8:
            # many landmarks of nearly equal norms: the scan of squared_distances
            rows, cols = np.nonzero(E >= scale * _CANCELLATION * (np.max(na) + self.top))
        else:
            rows = np.repeat(np.arange(len(na)), counts)
            offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
            cols = self.order[np.repeat(lo, counts) + offsets]
        keep = E[rows, cols] >= scale * _CANCELLATION * (na[rows] + nb[cols])
        rows, cols = rows[keep], cols[keep]
        E[rows, cols] = scale * _pair_distances(A, self.shifted, rows, cols)


def _with_overflowing_rows(A, B, na, nb):
    """:func:`squared_distances` where some rows' squared norms overflow (inf): their
    distances are inf (beyond double precision), the others computed as usual.  The callers
    refuse what cannot be represented with their own message (a heuristic gamma of 0 or inf,
    the kernel's overflow check), rather than scikit-learn's refusal of the infinite norms,
    which names neither the cause nor the remedy."""
    D2 = np.full((A.shape[0], B.shape[0]), np.inf)
    ia, ib = np.flatnonzero(np.isfinite(na)), np.flatnonzero(np.isfinite(nb))
    if len(ia) and len(ib):
        D2[np.ix_(ia, ib)] = squared_distances(A[ia], B[ib])
    return D2


def check_callable_kernel(kernel, X, name="callable kernel"):
    """Check at fit that a callable ``kernel(A, B)`` returns the len(A) x len(B) Gram matrix.

    The training Gram matrix ``kernel(X, X)`` is square whatever the callable does with its
    second argument, so a kernel that ignores B (``lambda A, B: A @ A.T``) would only fail at
    predict.  It is called here on a rectangular pair: 2 rows against 3 (rows of X, repeated
    when X has fewer), and must return shape (2, 3).
    """
    X = X if sp.issparse(X) else np.asarray(X)
    n = X.shape[0]
    if n == 0:
        return
    A, B = X[np.arange(2) % n], X[np.arange(3) % n]
    K = dense(kernel(A, B))
    if K.shape != (2, 3):
        raise ValueError(f"{name} must return the Gram matrix between the rows of its two "
                         f"arguments: kernel(A, B) with A of 2 rows and B of 3 rows returned "
                         f"shape {K.shape}, expected (2, 3)")


def check_gram(K, name="precomputed kernel"):
    """Validate a training Gram matrix: square, finite, symmetric and positive semidefinite.

    The dual is a convex QP only for a PSD kernel, so an indefinite one is refused rather than
    solved to a meaningless point (see :func:`check_psd`).  The matrix is read once, in
    blocks of ``GRAM_BLOCK`` rows and columns (no n x n temporary; Ctrl-C is handled between
    blocks): finite entries, symmetry (as ``np.allclose(K, K.T, rtol=1e-8, atol=1e-10 *
    max(1, max|diag K|))``) and every 2 x 2 principal minor, K_ij^2 <= (K_ii + r)(K_jj + r)
    with the ridge r of :func:`check_psd`.  Then :func:`check_psd` factors the whole matrix
    or a random principal submatrix.
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square n x n matrix at fit; got shape {K.shape}")
    n = len(K)
    diag = np.diagonal(K).copy()
    if not np.all(np.isfinite(diag)):
        raise ValueError(f"{name} contains NaN or infinity")
    largest = float(np.max(np.abs(diag))) if n else 0.0
    atol = 1e-10 * max(1.0, largest)
    ridge = PSD_RIDGE * max(largest, np.finfo(np.float64).tiny)
    finite = n == 0 or bool(np.isfinite(K.sum()))     # else find the entry, block by block
    minor = None            # the first 2 x 2 principal submatrix found indefinite
    for i0 in range(0, n, GRAM_BLOCK):
        for j0 in range(i0, n, GRAM_BLOCK):
            minor = minor or _check_gram_blocks(K, diag, i0, j0, atol, ridge, name, finite)
    check_psd(lambda idx: K[np.ix_(idx, idx)], n, name)
    if minor is not None:
        i, j = minor
        low = smallest_eigenvalue(K[np.ix_([i, j], [i, j])])
        raise ValueError(
            f"{name} is not positive semidefinite on the training data: its 2 x 2 principal "
            f"submatrix of samples {i} and {j} has smallest eigenvalue {low:.3g} (|K_ij| "
            f"exceeds sqrt(K_ii K_jj)), so the dual would not be convex and the fit "
            f"meaningless.")
    return np.ascontiguousarray(K)


def _check_gram_blocks(K, diag, i0, j0, atol, ridge, name, finite=False):
    """Check the blocks (i0, j0) and (j0, i0) of a Gram matrix (see :func:`check_gram`).

    Returns the (i, j) of a 2 x 2 principal minor below -ridge or None; raises on a
    non-finite entry or an asymmetric pair (``finite``: K is known to be finite).
    """
    A = K[i0:i0 + GRAM_BLOCK, j0:j0 + GRAM_BLOCK]
    B = K[j0:j0 + GRAM_BLOCK, i0:i0 + GRAM_BLOCK].T
    if not (finite or (np.all(np.isfinite(A)) and np.all(np.isfinite(B)))):
        raise ValueError(f"{name} contains NaN or infinity")
    if not np.array_equal(A, B):         # exactly symmetric blocks (the usual case) pass
        diff = np.abs(A - B)
        if not np.all(diff <= atol + 1e-8 * np.minimum(np.abs(A), np.abs(B))):
            raise ValueError(f"{name} must be symmetric")
    di, dj = diag[i0:i0 + A.shape[0]] + ridge, diag[j0:j0 + A.shape[1]] + ridge
    with np.errstate(over="ignore", under="ignore"):
        # K_ij^2 <= (K_ii + r)(K_jj + r), in |K_ij| / sqrt(.) form (no overflow near 1e308)
        bound = np.multiply.outer(np.sqrt(np.maximum(di, 0.0)) * (1.0 + 1e-12),
                                  np.sqrt(np.maximum(dj, 0.0)))
        bound = np.abs(A, out=np.empty_like(bound)) > bound
    hits = np.argwhere(bound) if bound.any() else ()
    return None if len(hits) == 0 else (i0 + int(hits[0][0]), j0 + int(hits[0][1]))


def check_psd(gram_block, n, name, remedy=""):
    """Refuse a kernel whose training Gram matrix is not positive semidefinite.

    ``gram_block(idx)`` returns the Gram matrix of the training samples ``idx`` (a new
    array: it is factored in place).  The test is a Cholesky factorization of K / s +
    ``PSD_RIDGE`` I, s the largest |entry| of the tested block, of the whole matrix up to
    ``PSD_MAX_SAMPLES`` samples, of a seeded random ``PSD_SUBSAMPLE``-sample principal
    submatrix above that.
    On failure the smallest eigenvalue is reported.
    """
    if n == 0:
        return
    idx = np.arange(n)
    if n > PSD_MAX_SAMPLES:
        idx = np.sort(np.random.default_rng(0).choice(n, PSD_SUBSAMPLE, replace=False))
    K = np.asarray(gram_block(idx), dtype=np.float64)     # a new array (see above)
    # factor K / scale: no overflow near 1e308 (max|K| without an |K| temporary)
    scale = max(float(K.max()), -float(K.min())) or 1.0
    K /= scale
    K.flat[::len(K) + 1] += PSD_RIDGE
    try:
        # K is symmetric: its transpose is the same matrix in Fortran order, which LAPACK
        # factors in place (a C-ordered K would be copied)
        # one BLAS thread: 0.11 s CPU for 2000 samples where two threads took 1-2.8 s CPU
        # and 2-5.6 s wall (a call Ctrl-C cannot stop) with the other core busy
        with one_blas_thread():
            cholesky(K.T, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        del K
        low = scale * smallest_eigenvalue(np.asarray(gram_block(idx), dtype=np.float64) / scale)
        where = ("" if len(idx) == n else
                 f" (tested on {len(idx)} of the {n} training samples)")
        raise ValueError(
            f"{name} is not positive semidefinite on the training data: its Gram matrix has "
            f"smallest eigenvalue {low:.3g}{where}, so the dual would not be convex and the "
            f"fit meaningless.{remedy}") from None


def smallest_eigenvalue(K):
    """The smallest eigenvalue of a symmetric matrix, by Lanczos iteration (scipy's eigsh:
    matrix-vector products, 0.2 s for 2000 x 2000 where a dense eigh takes 4-7 s), with a
    fixed start for reproducible messages; dense eigh for tiny matrices or no convergence."""
    if len(K) < 20:
        return float(eigh(K, eigvals_only=True, subset_by_index=[0, 0])[0])
    try:
        return float(eigsh(K, k=1, which="SA", tol=1e-10, v0=np.ones(len(K)),
                           return_eigenvectors=False)[0])
    except ArpackNoConvergence:
        return float(eigh(K, eigvals_only=True, subset_by_index=[0, 0])[0])


def check_kernel_psd(X, kernel, gamma=None, degree=3, coef0=0.0, shift=0.0):
    """Refuse a named kernel that is indefinite on X: 'poly' with a negative coef0.

    'linear', 'rbf' and 'poly' with coef0 >= 0 are positive semidefinite for every X (sums
    and products of PSD kernels); (gamma <x, x'> + coef0)^degree with coef0 < 0 is indefinite
    on most data, so its training Gram matrix is tested as a precomputed one is.
    """
    if kernel != "poly" or coef0 >= 0 or degree == 0:
        return
    check_psd(lambda idx: kernel_matrix(X[idx], X[idx], "poly", gamma, degree, coef0) + shift,
              X.shape[0], f"the 'poly' kernel with coef0={coef0:g}",
              " Use coef0 >= 0 (the kernel is then positive semidefinite for any data).")


def make_row_source(X, kernel, k, gamma=None, degree=3, coef0=0.0, cache_size=200.0,
                    shift=0.0, cache_dtype="float64", rows=None):
    """RowSource for the training inputs (X is the Gram matrix for 'precomputed').

    X may be dense or a scipy.sparse matrix (kept sparse: CSR rows).  ``shift`` is added to
    every entry of a computed 'rbf' or 'poly' kernel (a penalized intercept as a constant
    feature); for 'linear' and 'precomputed' the caller appends a constant column or adds it
    to the Gram matrix instead.  ``cache_dtype`` is the storage of cached kernel rows
    ('float32' holds twice as many rows in ``cache_size`` MB).  ``rows`` is the row source a
    :class:`msvm._plan.SolvePlan` chose; None applies its rule (:func:`msvm._plan.row_kind`).
    """
    if cache_dtype not in CACHE_DTYPES:
        raise ValueError(f"cache_dtype must be 'float64' or 'float32'; got {cache_dtype!r}")
    n = X.shape[0]
    if kernel == "precomputed":
        return _rows.make_row_source("precomputed", k, K=X)
    check_kernel_psd(X, kernel, gamma, degree, coef0, shift)
    capacity = cache_rows(cache_size, cache_dtype, n)
    if rows is None:
        rows = row_kind(kernel, n, cache_size, cache_dtype)
    if kernel == "linear":
        if rows == "linear rows":
            if not sp.issparse(X):
                X = np.ascontiguousarray(X, dtype=np.float64)      # kernel rows: float64 X
            return _rows.make_row_source("linear-rows", k, X=X, capacity=n,
                                         cache_dtype=cache_dtype)
        return _rows.make_row_source("linear", k, X=X)
    if kernel == "rbf" and n and not sp.issparse(X):
        # the RBF kernel depends on differences only: shifting X by a typical point keeps the
        # row source's ||x||^2 + ||x'||^2 - 2 x^T x' from cancelling every digit when the
        # samples share a large offset (a column of 1e8 with an O(1) spread).  Sparse X is
        # not shifted (that would densify it).
        with np.errstate(over="ignore", invalid="ignore"):
            X = np.ascontiguousarray(X - typical_point(X))
    return _rows.make_row_source(kernel, k, X=X, gamma=gamma, degree=int(degree),
                                 coef0=float(coef0), shift=float(shift),
                                 capacity=max(2, capacity), cache_dtype=cache_dtype)
