"""Products of a tall matrix (one row per sample) with a small slot-space matrix.

A fit ends with a handful of products such as ``U @ P`` (n x k times k x k, P = I - 11^T/k)
and ``H @ T.T`` (T the model's output map).  Through ``@`` NumPy hands them to a threaded
BLAS; OpenBLAS's worker threads then spin for a while after each call, so every fit burned
the other core for about 0.1 s (a third of the CPU time of a pendigits fit, counted in CPU
time and taken from whatever else runs).  These products are O(n k^2) with k small, so
NumPy's own loops (einsum, a row mean) compute them at the same order of cost and with no
thread pool involved.
"""

import numpy as np


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
