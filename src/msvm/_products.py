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
