# Design
# ======
# Dense products of the linear path that a BLAS does poorly: F = X V with V narrow (d x k, k
# the class slots).  dgemm packs all of X into panels for each product, which for k of about
# 10 costs as much as the arithmetic; _dense_times.h reads X once, a block of rows at a time
# transposed into a small buffer (the Newton start of msvm/_primal.py forms one such product
# per step).  The Python layer chooses it (msvm/_approx.py: rows_times) for a C-contiguous
# float64 X of at most 64 columns (wider blocks leave L1, where dgemm is faster) and narrow
# V, and BLAS otherwise.

import numpy as np
from libc.stdlib cimport malloc, free


cdef extern from "_dense_times.h":
    enum: MSVM_TIMES_ROWS
    void msvm_rows_times(const double* X, Py_ssize_t n, Py_ssize_t d, const double* V,
                         Py_ssize_t k, double* F, double* T) noexcept nogil


def rows_times(const double[:, ::1] X, const double[:, ::1] V):
    """X @ V (n x k, float64) for a C-contiguous X (n x d) and V (d x k)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = V.shape[1]
    if V.shape[0] != d:
        raise ValueError(f"X has {d} columns but V has {V.shape[0]} rows")
    F = np.empty((n, k))
    cdef double[:, ::1] f = F
    cdef double* T
    if n == 0 or k == 0:
        return F
    if d == 0:
        F[...] = 0.0
        return F
    T = <double*> malloc(d * MSVM_TIMES_ROWS * sizeof(double))
    if T == NULL:
        raise MemoryError("cannot allocate the block buffer of rows_times")
    with nogil:
        msvm_rows_times(&X[0, 0], n, d, &V[0, 0], k, &f[0, 0], T)
    free(T)
    return F
