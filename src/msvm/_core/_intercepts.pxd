# The exact intercept search on C arrays (_intercepts.pyx), for modules that cimport it
# (_level_loop.pyx: a probability chain's level step).

cdef struct Slot:
    const double* t      # m sorted breakpoints
    const double* cum    # m + 1 cumulative slopes
    Py_ssize_t m

cdef int slot_search(const Slot* s, int k, const double* b0, double* b) noexcept nogil
