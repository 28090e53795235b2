# Signal checks from nogil loops: the loops count their work and, every CHECK_WORK units,
# re-take the GIL briefly to run Python's signal handlers (Ctrl-C).  The solvers also note
# their epochs and violation (progress_note), which a progress report reads at those checks,
# with an estimate of the objective taken from their state when a report is due.

from ._types cimport CHECK_WORK, Prob, State
from ._rows cimport RowSource


cdef bint signal_raised() noexcept nogil
cdef int reraise() except -1
cdef void progress_note(double epochs, double violation, RowSource src, const Prob* p,
                        const State* st) noexcept nogil


cdef inline bint tick(long long* work, long long amount) noexcept nogil:
    """Count `amount` units of work; every CHECK_WORK units, check for signals."""
    work[0] += amount
    if work[0] < CHECK_WORK:
        return False
    work[0] = 0
    return signal_raised()
