# Design
# ======
# The dual point of a solve: alpha (one entry per dual variable) and the multiplier mu of the
# equalities P c = 0 are the caller's arrays, updated in place; DualState derives the class
# sums c = sum_v alpha_v d_v, the group sums and the gradient shift s = mu + rho P c from them
# once, and the inner solvers keep them current with `move_sums` (_state.pxd).

from libc.stdlib cimport malloc, free


cdef class DualState:

    def __cinit__(self):
        self.buf = NULL

    def __init__(self, ProblemArrays pa, double[::1] alpha, double[::1] mu, double rho):
        cdef const Prob* p = &pa.p
        cdef int k = p.k, v, j, ngroups = pa.cap.shape[0]
        cdef double a
        if alpha.shape[0] != p.nv:
            raise ValueError("problem arrays and alpha disagree in length")
        if mu.shape[0] != k:
            raise ValueError("mu must have one entry per class slot")
        self.buf = <double*> malloc((3 * k + ngroups + 1) * sizeof(double))
        if self.buf == NULL:
            raise MemoryError()
        self.alpha_view = alpha
        self.mu_view = mu
        self.st.alpha = &alpha[0] if p.nv else NULL
        self.st.c = self.buf
        self.st.s = self.buf + k
        self.st.gsum = self.buf + 2 * k
        self.st.mu = &mu[0]
        self.st.rho = rho if p.equality else 0.0
        for j in range(k):
            self.st.c[j] = 0.0
            self.st.s[j] = 0.0
        for j in range(ngroups):
            self.st.gsum[j] = 0.0
        self.scale = 0.0
        for v in range(p.nv):
            self.scale = max(self.scale, fabs(v_hi(p, v)), fabs(v_lo(p, v)))
            a = alpha[v]
            if a != 0.0:
                move_sums(p, &self.st, v, a)
        # move_sums also moved s; the driver sets s at the start of every round
        for j in range(k):
            self.st.s[j] = 0.0
        if self.scale <= 0.0:
            self.scale = 1.0

    def __dealloc__(self):
        free(self.buf)
