# The dual point and the quantities derived from it (class sums, gradient shift, group sums),
# with the one copy of every update the inner solvers share: the class-sum update of a move,
# the curvature of a direction and of a pair, the cap test and the group-pair choice.

from libc.math cimport fabs, INFINITY

from ._types cimport (Prob, State, MAX_CLASSES, CAP_RTOL, all_finite, v_s1, v_c1, v_s2, v_c2,
                      v_lo, v_hi, v_grp)
from ._problem cimport ProblemArrays


cdef class DualState:
    """alpha and mu (the caller's arrays, updated in place) and the sums derived from them."""
    cdef State st
    cdef double scale         # largest |box bound| (1 if all are 0)
    cdef double* buf
    cdef double[::1] alpha_view
    cdef double[::1] mu_view


cdef inline void move_sums(const Prob* p, State* st, int v, double delta) noexcept nogil:
    """alpha_v moves by delta: update the class sums c, the shift s and the group sum."""
    cdef int j1 = v_s1(p, v), j2 = v_s2(p, v), j
    cdef double c1 = v_c1(p, v), c2 = 0.0, sd
    st.c[j1] += delta * c1
    if j2 >= 0:
        c2 = v_c2(p, v)
        st.c[j2] += delta * c2
    if p.equality:
        sd = c1 + c2
        st.s[j1] += st.rho * delta * c1
        if j2 >= 0:
            st.s[j2] += st.rho * delta * c2
        if sd != 0.0:
            for j in range(p.k):
                st.s[j] -= st.rho * delta * sd / p.k
    if v_grp(p, v) >= 0:
        st.gsum[v_grp(p, v)] += delta


cdef inline double pnorm2(const Prob* p, int v) noexcept nogil:
    """||P d_v||^2 (P = I - 11^T/k)."""
    cdef double c1 = v_c1(p, v), c2 = 0.0
    if v_s2(p, v) >= 0:
        c2 = v_c2(p, v)
    return c1 * c1 + c2 * c2 - (c1 + c2) * (c1 + c2) / p.k


cdef inline double pair_pnorm2(const Prob* p, int a, int b) noexcept nogil:
    """||P (d_b - d_a)||^2 for two variables (the curvature of a pair step, per unit K)."""
    cdef double e[MAX_CLASSES]
    cdef int j
    cdef double tot = 0.0, sq = 0.0
    for j in range(p.k):
        e[j] = 0.0
    e[v_s1(p, b)] += v_c1(p, b)
    if v_s2(p, b) >= 0:
        e[v_s2(p, b)] += v_c2(p, b)
    e[v_s1(p, a)] -= v_c1(p, a)
    if v_s2(p, a) >= 0:
        e[v_s2(p, a)] -= v_c2(p, a)
    for j in range(p.k):
        tot += e[j]
        sq += e[j] * e[j]
    return sq - tot * tot / p.k


cdef inline int group_end(const Prob* p, int v, int v1) noexcept nogil:
    """One past the last variable of v's group among v..v1-1 (v + 1 if v has no group):
    a sample's variables of one group are contiguous."""
    cdef int g = v_grp(p, v), w = v + 1
    while w < v1 and g >= 0 and v_grp(p, w) == g:
        w += 1
    return w


cdef inline bint group_full(const Prob* p, const State* st, int g) noexcept nogil:
    """Whether group g's cap is active (its sum within rounding of the cap)."""
    return g >= 0 and st.gsum[g] >= p.cap[g] - CAP_RTOL * (1.0 + fabs(p.cap[g]))


cdef inline double group_pair(const Prob* p, const int* members, int m, const double* grad,
                              const double* alpha, int* va, int* vb) noexcept nogil:
    """The violating pair of a full group: members[0:m] (variables), their alpha-space
    gradients and alphas.  va: position of the largest gradient among members that can
    decrease; vb: of the smallest among those that can increase.  Returns g_a - g_b
    (<= 0 or no pair: the group's condition holds)."""
    cdef int x, v
    cdef double ga = -INFINITY, gb = INFINITY
    va[0] = -1
    vb[0] = -1
    for x in range(m):
        v = members[x]
        if alpha[x] > v_lo(p, v) and grad[x] > ga:
            ga = grad[x]
            va[0] = x
        if alpha[x] < v_hi(p, v) and grad[x] < gb:
            gb = grad[x]
            vb[0] = x
    if va[0] < 0 or vb[0] < 0 or va[0] == vb[0]:
        return 0.0
    return ga - gb


cdef inline bint sums_finite(const Prob* p, const State* st, double viol) noexcept nogil:
    """False when the violation, a class sum or the shift is NaN or infinite."""
    cdef int j
    cdef double tot = viol
    for j in range(p.k):
        tot += st.c[j] + st.s[j]
    return all_finite(tot)
