# The augmented-Lagrangian driver and the interface of the inner solvers (see _alm.pyx).

from ._types cimport Prob, State, Schedule
from ._rows cimport RowSource
from ._problem cimport ProblemArrays
from ._state cimport DualState


cdef class InnerSolver:
    """An inner solver: minimizes the augmented Lagrangian over the boxes and group caps for
    the current multiplier (the shift s in State), to a given tolerance."""
    cdef RowSource src
    cdef ProblemArrays pa
    cdef DualState ds
    cdef const Prob* p
    cdef State* st
    cdef long long work          # signal-check meter (units of about one multiply-add)
    cdef double* Fi              # k: one sample's scores (gap pass)
    cdef double* zbuf            # maxper + 1 (gap pass)
    cdef char* used              # maxper + 1 (gap pass)
    # n: the rounding floor of each sample's violation, at or below which it counts as none
    # (msvm/_score_floor.py); NULL (the default): none, main's rule
    cdef const double* floor
    cdef readonly double raw_viol  # the last scan's (epoch's) largest violation before the floor

    cdef int _bind(self, RowSource src, ProblemArrays pa, DualState ds) except -1
    cdef int run(self, double eps, double* viol) noexcept nogil
    cdef int violation(self, double* viol) noexcept nogil
    cdef void end_round(self) noexcept nogil
    cdef bint exhausted(self) noexcept nogil
    cdef int gap(self, double* gap) noexcept nogil
    cdef long epochs(self)
    cdef str progress(self)


cdef void schedule_init(Schedule* sc, const Prob* p, double tol, double scale) noexcept nogil
cdef int alm_solve(InnerSolver inner, Schedule* sc, int verbose,
                   bint certify_start) noexcept nogil
