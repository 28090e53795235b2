"""Products of tall matrices (one row per sample): with the class-slot matrices, in row chunks.

Two kinds of product run over every training sample in a fit.

* Tall times narrow: ``X @ W`` and ``X^T U`` for the explicit features X (float64 or float32,
  dense or CSR) and the slot-space weights W (d x k) or slot sums U (n x k).  A float32 X is
  multiplied in chunks of rows (``CHUNK_ENTRIES`` entries per block), so it is never converted
  to float64 as a whole; a C-contiguous float64 X of few columns times a narrow W goes through
  the compiled product of ``msvm._core._dense``.
* Tall times small: a fit ends with a handful of products such as ``U @ P`` (n x k times
  k x k, P = I - 11^T/k) and ``H @ T.T`` (T the model's output map).  Through ``@`` NumPy
  hands them to a threaded BLAS; OpenBLAS's worker threads then spin for a while after each
  call, so every fit burned the other core for about 0.1 s (a third of the CPU time of a
  pendigits fit, counted in CPU time and taken from whatever else runs).  These products are
  O(n k^2) with k small, so NumPy's own loops (einsum, a row mean) compute them at the same
  order of cost and with no thread pool involved.

A chunk of Nystroem features in a chunked fit (msvm/_dask_passes.py) is a factored tall
matrix, ``FactoredRows``: phi(X_c) = K(X_c, L) N, K the kernel against the m landmarks and N
the (m, n_components) normalization.  Every pass needs only phi W = K (N W) and
phi^T U = N^T (K^T U) for narrow W and U, so phi is never formed: a row costs its kernel
values (m d flops and m exponentials for the RBF kernel) and two products of m k, where
forming phi costs m n_components more (at d = 20, m = 1000: about 27 of the map's 37 us
per row, one BLAS thread).  ``rows_times`` and ``transposed_times`` take it like an array.
"""

import numpy as np
import scipy.sparse as sp

from ._core._dense import rows_times as dense_rows_times

# Rows of a tall block are computed in chunks of at most this many entries (16 MB in
# float64: the kernel block, its product and their temporaries stay near 50 MB, small
# beside the float32 features of a million samples, while each block still has thousands
# of rows for BLAS).
CHUNK_ENTRIES = 2 ** 21
# X @ W with W at most NARROW wide (the class slots) and a dense float64 X of at most
# NARROW_FEATURES columns uses the compiled product (msvm._core._dense), which reads X once
# where dgemm packs all of it into panels for every product; with more columns dgemm is
# faster (benchmarks/results/tuned_constants.md).
NARROW = 32
NARROW_FEATURES = 64


def chunk_rows(width):
    """Rows per chunk so that a block of ``width`` columns (a feature or prediction Gram
    block) holds at most CHUNK_ENTRIES."""
    return max(1, CHUNK_ENTRIES // max(1, width))


def rows_times(X, W):
    """X @ W in float64 for a float64 or float32 X (chunks of rows: a float32 X is never
    converted to float64 as a whole).  A C-contiguous float64 X of at most NARROW_FEATURES
    columns times a narrow W (at most NARROW columns: the class slots) goes through the
    compiled product of ``msvm._core._dense``, which reads X once instead of packing it as
    dgemm does."""
    if sp.issparse(X):
        return np.asarray(X @ W)
    if isinstance(X, FactoredRows):
        return X.times(W)
    if X.dtype == np.float64:
        if (X.flags.c_contiguous and W.ndim == 2 and W.shape[1] <= NARROW
                and X.shape[1] <= NARROW_FEATURES):
            return dense_rows_times(X, np.ascontiguousarray(W, dtype=np.float64))
        return np.asarray(X @ W)
    out = np.empty((X.shape[0], W.shape[1]))
    step = chunk_rows(X.shape[1])
    for start in range(0, X.shape[0], step):
        out[start:start + step] = X[start:start + step].astype(np.float64) @ W
    return out


def transposed_times(X, U):
    """X^T U in float64 for a float64 or float32 X (chunks of rows, as in `rows_times`)."""
    if isinstance(X, FactoredRows):
        return X.transposed_times(U)
    if X.dtype == np.float64 or sp.issparse(X):
        return np.asarray(X.T @ U)
    out = np.zeros((X.shape[1], U.shape[1]))
    step = chunk_rows(X.shape[1])
    for start in range(0, X.shape[0], step):
        out += X[start:start + step].astype(np.float64).T @ U[start:start + step]
    return out


def centered_slots(A):
    """``A @ P`` with P = I - 11^T/k: every row minus its mean (A: (n, k))."""
    A = np.asarray(A, dtype=np.float64)
    return A - A.mean(axis=1, keepdims=True)


def times_small(A, B):
    """``A @ B`` for a tall A (n, k) and a small B (k, m), without a threaded BLAS call."""
    return np.einsum("ij,jk->ik", A, B)


def weighted_sum(w, values):
    """``w @ values`` for two vectors, without a threaded BLAS call."""
    return float(np.einsum("i,i->", w, values))


def feature_weights(W, kappa, T):
    """``T @ (-kappa P W^T)``: the weights (n_outputs, d) of the fitted functions from the
    slot-space weights W = X^T U (d, k)."""
    return times_small(-kappa * centered_slots(W), T.T).T


class FactoredRows:
    """The Nystroem features phi(X) = K(X, L) N of a chunk of inputs X, never formed whole
    (see the module note): products with narrow matrices go through the kernel values, in
    blocks of rows of at most CHUNK_ENTRIES kernel values (float64: rounding K to float32
    would be amplified by N's large entries, up to lambda_min^{-1/2}); rows asked for by
    index are mapped (float32, as persisted features are).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The chunk's inputs (float64).
    fmap : NystroemMap
        The fitted map (``kernel_block`` and ``normalization``).
    """

    dtype = np.dtype(np.float32)       # the dtype of the features it stands for
    ndim = 2

    def __init__(self, X, fmap):
        self.inputs, self.fmap = X, fmap
        self.shape = (X.shape[0], fmap.n_components_)

    def __len__(self):
        return self.shape[0]

    def blocks(self):
        """(rows, K(X[rows], L)) over the chunk's rows, in order."""
        step = chunk_rows(max(self.fmap.normalization.shape[0], self.inputs.shape[1]))
        for start in range(0, self.shape[0], step):
            rows = slice(start, min(start + step, self.shape[0]))
            yield rows, self.fmap.pass_block(self.inputs[rows])

    def inner(self, W):
        """N W: the (m, q) factor that the kernel values multiply."""
        return self.fmap.normalization @ np.asarray(W, dtype=np.float64)

    def outer(self, A):
        """N^T A for A = K^T U (m, q)."""
        return self.fmap.normalization.T @ A

    def times(self, W):
        """phi(X) W = K (N W), float64 (n, q)."""
        NW = self.inner(W)
        out = np.empty((self.shape[0], NW.shape[1]))
        for rows, K in self.blocks():
            np.matmul(K, NW, out=out[rows])
        return out

    def transposed_times(self, U):
        """phi(X)^T U = N^T (K^T U), float64 (n_components, q)."""
        A = np.zeros((self.fmap.normalization.shape[0], U.shape[1]))
        for rows, K in self.blocks():
            A += K.T @ U[rows]
        return self.outer(A)

    def __getitem__(self, rows):
        """phi of the rows ``rows`` (an index array or a slice), float32."""
        return self.fmap.transform(self.inputs[rows], dtype=np.float32)

    def features(self):
        """phi(X) formed (float32, as persisted features)."""
        return self.fmap.transform(self.inputs, dtype=np.float32)

    def max_sqnorm(self):
        """The largest squared norm of a feature row (of the float32 features)."""
        top = 0.0
        for _, Z in self.fmap.blocks(self.inputs):
            Z = Z.astype(np.float32).astype(np.float64)
            top = max(top, float(np.max(np.einsum("ij,ij->i", Z, Z), initial=0.0)))
        return top
