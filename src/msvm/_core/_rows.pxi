# Row source: where the solver gets the current scores of one sample and how it applies a change.
#
# The solver works with the matrix of unnormalised scores F = K U (n x k), where U[i] is the
# slot-space sum of sample i's dual variables times their directions.  A RowSource hides how F
# is held:
#
# * SRC_LINEAR: the weight matrix W = X^T U (d x k) is kept explicitly; F[i] = x_i^T W costs
#   O(d k) and an update of sample i costs O(d k).  No kernel row is ever formed.
# * SRC_PRECOMPUTED: F is kept explicitly and kernel rows are rows of a Gram matrix the caller
#   holds (a user's precomputed kernel).
# * SRC_RBF / SRC_POLY / SRC_LINKERNEL (linear kernel rows, for small n where the greedy
#   kernel solver converges far faster than coordinate descent): F is kept explicitly; kernel rows are computed on demand from X into an
#   LRU cache of at most `capacity` rows of float64 (the caller sizes it from cache_size), so
#   fitting never holds an n x n matrix beyond that bound.
#
# The computed kinds (rbf, poly) can add a constant `shift` to every kernel entry (K + shift):
# that is how a penalised intercept (a constant feature) is expressed.  For a precomputed Gram
# matrix the caller adds it; for the linear source it appends a constant column.

from libc.math cimport exp, fabs, sqrt
from libc.stdlib cimport malloc, free

cdef enum:
    SRC_LINEAR = 0
    SRC_PRECOMPUTED = 1
    SRC_RBF = 2
    SRC_POLY = 3
    SRC_LINKERNEL = 4


cdef class RowSource:
    """Kernel-row provider and score holder for the dual solver (see the module Design note)."""

    cdef readonly int kind, n, d, k, degree
    cdef readonly double gamma, coef0, shift
    cdef const double[:, ::1] X
    cdef const double[:, ::1] K
    cdef double[::1] sqnorm
    cdef double[::1] kdiag
    cdef double[:, ::1] F
    cdef double[:, ::1] W
    # LRU cache of kernel rows (kernel kinds computed on demand)
    cdef double* buf
    cdef readonly Py_ssize_t capacity
    cdef int* slot_of
    cdef int* row_of
    cdef int* prv
    cdef int* nxt
    cdef int head, tail, used
    cdef readonly long long n_computed, n_requests
    # work units (about one multiply-add each) of fetching one kernel row, and of one
    # coordinate-descent visit or score update of a sample: the solver's signal-check meter
    cdef readonly long long row_cost, visit_cost

    def __cinit__(self):
        self.buf = NULL
        self.slot_of = NULL
        self.row_of = NULL
        self.prv = NULL
        self.nxt = NULL

    def __init__(self, str kind, int k, X=None, K=None, double gamma=1.0, double coef0=0.0,
                 int degree=3, double shift=0.0, Py_ssize_t capacity=0):
        cdef Py_ssize_t i, f
        cdef double acc
        self.k = k
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.shift = shift
        self.n_computed = 0
        self.n_requests = 0
        if kind == "linear":
            self.kind = SRC_LINEAR
        elif kind == "precomputed":
            self.kind = SRC_PRECOMPUTED
        elif kind == "rbf":
            self.kind = SRC_RBF
        elif kind == "poly":
            self.kind = SRC_POLY
        elif kind == "linear-rows":
            self.kind = SRC_LINKERNEL
        else:
            raise ValueError(f"unknown row source kind {kind!r}")
        if shift != 0.0 and (self.kind == SRC_PRECOMPUTED or self.kind == SRC_LINEAR):
            raise ValueError("shift applies to computed kernels only; add it to the Gram matrix "
                             "or append a constant column instead")
        if self.kind == SRC_PRECOMPUTED:
            self.K = K
            self.n = K.shape[0]
            self.d = 0
        else:
            self.X = X
            self.n = X.shape[0]
            self.d = X.shape[1]
        self.sqnorm = _zeros(self.n)
        self.kdiag = _zeros(self.n)
        for i in range(self.n):
            if self.kind == SRC_PRECOMPUTED:
                self.kdiag[i] = self.K[i, i]
                continue
            acc = 0.0
            for f in range(self.d):
                acc += self.X[i, f] * self.X[i, f]
            self.sqnorm[i] = acc
            if self.kind == SRC_LINEAR or self.kind == SRC_LINKERNEL:
                self.kdiag[i] = acc + shift
            elif self.kind == SRC_RBF:
                self.kdiag[i] = 1.0 + shift
            else:
                self.kdiag[i] = _ipow(gamma * acc + coef0, degree) + shift
        self._check_finite()
        if self.kind == SRC_LINEAR:
            self.W = _zeros2(self.d, k)
            self.row_cost = 0
            self.visit_cost = 2 * <long long> (self.d + 1) * k
        else:
            self.F = _zeros2(self.n, k)
            self.row_cost = <long long> self.n * (self.d + 1)
            self.visit_cost = <long long> self.n * (k + 1)
        if self.kind == SRC_RBF or self.kind == SRC_POLY or self.kind == SRC_LINKERNEL:
            if capacity < 2:
                capacity = 2
            if capacity > self.n:
                capacity = self.n
            self.capacity = capacity
            self.buf = <double*> malloc(capacity * self.n * sizeof(double))
            self.slot_of = <int*> malloc(self.n * sizeof(int))
            self.row_of = <int*> malloc(capacity * sizeof(int))
            self.prv = <int*> malloc(capacity * sizeof(int))
            self.nxt = <int*> malloc(capacity * sizeof(int))
            if (self.buf == NULL or self.slot_of == NULL or self.row_of == NULL
                    or self.prv == NULL or self.nxt == NULL):
                raise MemoryError("cannot allocate the kernel row cache; lower cache_size")
            for i in range(self.n):
                self.slot_of[i] = -1
            self.head = -1
            self.tail = -1
            self.used = 0
        else:
            self.capacity = 0

    def _check_finite(self):
        """Refuse inputs whose kernel values overflow double precision (X too large).

        By Cauchy-Schwarz every kernel entry is bounded through the squared norms: |x^T x'|
        <= max ||x||^2, ||x - x'||^2 <= 4 max ||x||^2, |(gamma x^T x' + coef0)^degree| <=
        (gamma max ||x||^2 + |coef0|)^degree, so checking these bounds once (O(n d)) keeps
        NaN and infinity out of every kernel row the solver will compute.
        """
        cdef Py_ssize_t i
        cdef double top = 0.0, bound
        for i in range(self.n):
            if not (fabs(self.kdiag[i]) <= 1.7e308 and self.sqnorm[i] <= 1.7e308):
                top = INFINITY
                break
            if self.sqnorm[i] > top:
                top = self.sqnorm[i]
            if fabs(self.kdiag[i]) > top:
                top = fabs(self.kdiag[i])
        if self.kind == SRC_RBF:
            bound = 4.0 * top
        elif self.kind == SRC_POLY:
            bound = _ipow(self.gamma * top + fabs(self.coef0), self.degree) + fabs(self.shift)
        else:
            bound = top + fabs(self.shift)
        if not bound <= 1.7e308:
            raise ValueError(
                f"the kernel overflows double precision on X: squared norms of the samples "
                f"reach {top:.3g}, so kernel values are infinite or NaN. Rescale X (e.g. with "
                f"sklearn.preprocessing.StandardScaler) before fitting.")

    def __dealloc__(self):
        free(self.buf)
        free(self.slot_of)
        free(self.row_of)
        free(self.prv)
        free(self.nxt)

    @property
    def scores(self):
        """F = K U (n x k) for kernel sources; None for the linear source (use `weights`)."""
        return None if self.kind == SRC_LINEAR else self.F.base

    def diagonal(self):
        """Kernel diagonal K(x_i, x_i) (with the shift) as a NumPy array."""
        return self.kdiag.base.copy()

    @property
    def weights(self):
        """W = X^T U (d x k) for the linear source; None otherwise."""
        return self.W.base if self.kind == SRC_LINEAR else None

    # ------------------------------------------------------------------ nogil helpers
    cdef inline double diag(self, int i) noexcept nogil:
        return self.kdiag[i]

    cdef void get_scores(self, int i, double* out) noexcept nogil:
        cdef int j, f
        cdef double xf
        if self.kind == SRC_LINEAR:
            for j in range(self.k):
                out[j] = 0.0
            for f in range(self.d):
                xf = self.X[i, f]
                if xf != 0.0:
                    for j in range(self.k):
                        out[j] += xf * self.W[f, j]
        else:
            for j in range(self.k):
                out[j] = self.F[i, j]

    cdef void apply(self, int i, const double* du) noexcept nogil:
        """U[i] += du: update W (linear) or every F row with kernel row i."""
        cdef int j, f, r, nz = 0
        cdef int js[64]
        cdef double dv[64]
        cdef const double* row
        cdef double xf, kr, d0
        cdef int j0
        for j in range(self.k):
            if du[j] != 0.0:
                if nz < 64:
                    js[nz] = j
                    dv[nz] = du[j]
                nz += 1
        if nz == 0:
            return
        if self.kind == SRC_LINEAR:
            for f in range(self.d):
                xf = self.X[i, f]
                if xf != 0.0:
                    for j in range(self.k):
                        if du[j] != 0.0:
                            self.W[f, j] += xf * du[j]
            return
        row = self.row(i)
        if nz == 1:
            j0 = js[0]
            d0 = dv[0]
            for r in range(self.n):
                self.F[r, j0] += row[r] * d0
        elif nz <= 64:
            for r in range(self.n):
                kr = row[r]
                for j in range(nz):
                    self.F[r, js[j]] += kr * dv[j]
        else:
            for r in range(self.n):
                kr = row[r]
                for j in range(self.k):
                    self.F[r, j] += kr * du[j]

    cdef const double* row(self, int i) noexcept nogil:
        """Kernel row i (length n), from the Gram matrix or the LRU cache."""
        cdef int s
        self.n_requests += 1
        if self.kind == SRC_PRECOMPUTED:
            return &self.K[i, 0]
        s = self.slot_of[i]
        if s >= 0:
            self._touch(s)
            return self.buf + <Py_ssize_t> s * self.n
        if self.used < self.capacity:
            s = self.used
            self.used += 1
        else:
            s = self.tail
            self._unlink(s)
            self.slot_of[self.row_of[s]] = -1
        self.row_of[s] = i
        self.slot_of[i] = s
        self._push_front(s)
        self._compute(i, self.buf + <Py_ssize_t> s * self.n)
        self.n_computed += 1
        return self.buf + <Py_ssize_t> s * self.n

    cdef void _compute(self, int i, double* out) noexcept nogil:
        cdef int r, f
        cdef double acc
        cdef int d = self.d
        cdef const double* xi = &self.X[i, 0]
        cdef const double* xr
        for r in range(self.n):
            xr = &self.X[r, 0]
            acc = 0.0
            for f in range(d):
                acc += xi[f] * xr[f]
            if self.kind == SRC_LINKERNEL:
                out[r] = acc + self.shift
            elif self.kind == SRC_RBF:
                acc = self.sqnorm[i] + self.sqnorm[r] - 2.0 * acc
                if acc < 0.0:
                    acc = 0.0
                out[r] = exp(-self.gamma * acc) + self.shift
            else:
                out[r] = _ipow(self.gamma * acc + self.coef0, self.degree) + self.shift

    cdef inline void _unlink(self, int s) noexcept nogil:
        if self.prv[s] >= 0:
            self.nxt[self.prv[s]] = self.nxt[s]
        else:
            self.head = self.nxt[s]
        if self.nxt[s] >= 0:
            self.prv[self.nxt[s]] = self.prv[s]
        else:
            self.tail = self.prv[s]

    cdef inline void _push_front(self, int s) noexcept nogil:
        self.prv[s] = -1
        self.nxt[s] = self.head
        if self.head >= 0:
            self.prv[self.head] = s
        self.head = s
        if self.tail < 0:
            self.tail = s

    cdef inline void _touch(self, int s) noexcept nogil:
        if self.head != s:
            self._unlink(s)
            self._push_front(s)

    cdef void reset_scores(self) noexcept nogil:
        cdef int r, j
        if self.kind == SRC_LINEAR:
            for r in range(self.d):
                for j in range(self.k):
                    self.W[r, j] = 0.0
        else:
            for r in range(self.n):
                for j in range(self.k):
                    self.F[r, j] = 0.0


cdef inline double _ipow(double base, int e) noexcept nogil:
    cdef double out = 1.0
    while e > 0:
        if e & 1:
            out *= base
        base *= base
        e >>= 1
    return out


cdef double[::1] _zeros(Py_ssize_t n):
    import numpy as np
    return np.zeros(n, dtype=np.float64)


cdef double[:, ::1] _zeros2(Py_ssize_t n, Py_ssize_t m):
    import numpy as np
    return np.zeros((n, m), dtype=np.float64)
