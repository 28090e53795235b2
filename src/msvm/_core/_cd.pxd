cimport cython

from ._alm cimport InnerSolver


# final: the visit's steps are direct (inlinable) calls, not vtable calls
@cython.final
cdef class CDSolver(InnerSolver):
    cdef long max_iter, it
    cdef bint shrinking
    cdef unsigned long long rng
    cdef int* active             # n: the visiting order; shrunk samples at the end
    cdef double* Fs              # k: the visited sample's scores
    cdef double* du              # k: the visited sample's change of U
    cdef int* members            # maxper + 1: a group's variables (pair steps)
    cdef double* grad            # maxper + 1: their gradients
    cdef double* avals           # maxper + 1: their alphas

    cdef double _singles(self, int i, double Kii, double* sumF, double pg_hi, double pg_lo,
                         double* pg_max, double* pg_min, bint* shrinkable,
                         bint* changed) noexcept nogil
    cdef double _group_pairs(self, int i, double Kii, double* sumF, bint* shrinkable,
                             bint* changed) noexcept nogil
    cdef double _pair_violation(self, int i, double sumF) noexcept nogil
    cdef double _full_group_pair(self, int v, int w, double sumF, int* va,
                                 int* vb) noexcept nogil
    cdef double _visit(self, int i, double pg_hi, double pg_lo, double* pg_max,
                       double* pg_min, bint* shrinkable) noexcept nogil
    cdef void _shuffle(self, int n_active) noexcept nogil
