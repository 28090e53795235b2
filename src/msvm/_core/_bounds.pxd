# A solution's variables at bounds that move with their sample's weight, for the passes over
# a dual's variables (_level_loop.pyx: a probability level's settled test; _dc_pass.pyx: a
# DC step's weighed samples): ``DualProblem.at_moving_bounds``'s test, per variable.

from ._types cimport Prob, v_lo, v_hi, v_grp


cdef inline void group_sums(const Prob* p, const double* alpha, double* sums) noexcept nogil:
    """sums[g] = the sum of alpha over group g's variables, in the order of the variables
    (np.bincount's additions)."""
    cdef int v, g
    for g in range(p.ngroups):
        sums[g] = 0.0
    for v in range(p.nv):
        g = v_grp(p, v)
        if g >= 0:
            sums[g] += alpha[v]


cdef inline bint at_moving_bound(const Prob* p, const double* alpha, int v,
                                 const double* sums) noexcept nogil:
    """Whether variable v is at a nonzero bound of its box or in a group at its nonzero cap
    (``sums``: :func:`group_sums`)."""
    cdef double a = alpha[v], lo = v_lo(p, v), hi = v_hi(p, v)
    cdef int g = v_grp(p, v)
    return ((a >= hi and hi != 0.0) or (a <= lo and lo != 0.0)
            or (g >= 0 and sums[g] >= p.cap[g] and p.cap[g] != 0.0))
