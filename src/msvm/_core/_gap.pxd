# The duality-gap certificate of a dual point (see _gap.pyx).

from ._types cimport Prob, State, MAX_CLASSES
from ._rows cimport RowSource

# Sums over samples kept while evaluating a gap: penalty, loss, linear term, sum |loss term|,
# then the k class sums c.
cdef enum:
    GAP_SUMS = 4 + MAX_CLASSES


cdef void sample_gap(const Prob* p, const State* st, int i, const double* Fi, double* acc,
                     double* zbuf, char* used) noexcept nogil
cdef double gap_from_sums(const Prob* p, const State* st, const double* acc,
                          double* primal, double* size) noexcept nogil
cdef double relative_gap(double gap, double size) noexcept nogil
cdef int scores_gap(RowSource src, const Prob* p, const State* st, double* Fi, double* zbuf,
                    char* used, long long* work, double* gap) noexcept nogil
