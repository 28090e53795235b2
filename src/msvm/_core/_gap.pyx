# Design
# ======
# The duality-gap certificate behind the stopping rule and `duality_gap_`.  For a dual point
# alpha with scores F = K U, the function is h = -kappa F P and the intercept b = -s (the
# multiplier estimate).  One pass over the samples sums the penalty 1/2 ||h||^2, the primal
# hinge terms at f = b + h (per group a continuous knapsack), the linear term and the class
# sums; the certificate is
#
#     gap = P(h, b) - L(alpha, b) + |P c|_1 |b|_inf  >=  P(h, b) - P*,
#
# with L the Lagrangian (what the dual gives at b) and the last term bounding <P c, b - b*>
# while the equalities P c = 0 hold only to tolerance.  Relative to the size of the
# objective's terms (1/2 ||h||^2 + sum |hinge term|), it is what the solver compares with tol.
#
# That size can vanish where the objective itself does not: a DC step at (or near) the
# constant classifier has h = 0 and hinge terms that the linearized concave part cancels to
# rounding (RobustMSVM, 50 classes of 3 samples: size 1.3e-5, the model's objective 294),
# so that an absolute gap of 5e-3, from KKT violations of 1e-6, read as a relative gap of
# 430 (or inf at size 0), which the KKT tolerances cannot lower once they reach rounding:
# the solve spun to max_iter with a KKT residual of 1e-13.  A caller that knows the scale
# of the objective the problem is a step of (the DC loop: 1 % of the truncated objective,
# which the step's objective majorizes and which dc_tol is measured against) sets it as
# Prob.gap_scale, the least size the relative gap is measured against.

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport malloc, free

from ._types cimport (STATUS_CONVERGED, STATUS_INTERRUPTED, v_s1, v_c1, v_s2, v_c2, v_lin, v_lo,
                      v_hi, v_grp)
from ._signals cimport tick
from ._state cimport group_end
from ._problem cimport ProblemArrays


cdef void sample_gap(const Prob* p, const State* st, int i, const double* Fi, double* acc,
                      double* zbuf, char* used) noexcept nogil:
    """Add sample i's terms to acc (see GAP_SUMS).

    With U_i = sum_v alpha_v d_v, the slot-space function h(x_i) = -kappa P F_i and the
    intercept b = -s: penalty 1/2 kappa U_i^T P F_i (its sum over i is 1/2 ||h||^2), linear
    sum_v a_v alpha_v, and loss the primal hinge terms max_{alpha' in box, caps}
    sum_v alpha'_v z_v with z_v = a_v + <d_v, b + h(x_i)> (a continuous knapsack per group).
    """
    cdef int k = p.k, j, v, w, x, best, g, v0 = p.ptr[i], v1 = p.ptr[i + 1]
    cdef double U[MAX_CLASSES]
    cdef double Hb[MAX_CLASSES]
    cdef double meanF = 0.0, pen = 0.0, a, z, t, budget, room, zb
    for j in range(k):
        meanF += Fi[j]
        U[j] = 0.0
    meanF /= k
    for v in range(v0, v1):
        a = st.alpha[v]
        U[v_s1(p, v)] += a * v_c1(p, v)
        if v_s2(p, v) >= 0:
            U[v_s2(p, v)] += a * v_c2(p, v)
        acc[2] += v_lin(p, v) * a
    for j in range(k):
        pen += U[j] * (Fi[j] - meanF)
        Hb[j] = -p.kappa * (Fi[j] - meanF) - st.s[j]
        acc[4 + j] += U[j]
    acc[0] += 0.5 * p.kappa * pen
    v = v0
    while v < v1:
        g = v_grp(p, v)
        w = group_end(p, v, v1)
        for x in range(v, w):
            z = v_lin(p, x) + v_c1(p, x) * Hb[v_s1(p, x)]
            if v_s2(p, x) >= 0:
                z += v_c2(p, x) * Hb[v_s2(p, x)]
            zbuf[x - v] = z
        if g < 0:
            z = zbuf[0]
            t = v_hi(p, v) * z if z > 0.0 else v_lo(p, v) * z
        else:
            # max sum alpha z over lo <= alpha <= hi, sum alpha <= cap: start at lo, then
            # fill the remaining budget by decreasing positive z
            t = 0.0
            budget = p.cap[g]
            for x in range(v, w):
                t += v_lo(p, x) * zbuf[x - v]
                budget -= v_lo(p, x)
                used[x - v] = 0
            while budget > 0.0:
                best = -1
                zb = 0.0
                for x in range(v, w):
                    if not used[x - v] and zbuf[x - v] > zb:
                        zb = zbuf[x - v]
                        best = x
                if best < 0:
                    break
                used[best - v] = 1
                room = v_hi(p, best) - v_lo(p, best)
                if room > budget:
                    room = budget
                t += room * zb
                budget -= room
        acc[1] += t
        acc[3] += fabs(t)
        v = w


cdef double gap_from_sums(const Prob* p, const State* st, const double* acc,
                           double* primal, double* size) noexcept nogil:
    """Duality-gap certificate of the point whose sums _sample_gap collected.

    primal P = 1/2 ||h||^2 + loss at f = b + h; the Lagrangian L = sum a alpha - 1/2 ||h||^2
    + <P c, b> is what the dual gives at the intercept b, and P - L >= 0 is the complementary
    slackness gap.  With the equalities met only to tolerance, P - P* = (P - L) + <P c, b - b*>;
    the certificate bounds the second term by |P c|_1 |b|_inf (b near the optimal b*).
    """
    cdef int j, k = p.k
    cdef double mean_c = 0.0, lagr, pc, pc1 = 0.0, bmax = 0.0
    primal[0] = acc[0] + acc[1]
    size[0] = acc[0] + acc[3]
    lagr = acc[2] - acc[0]
    if p.equality:
        for j in range(k):
            mean_c += acc[4 + j]
        mean_c /= k
        for j in range(k):
            pc = acc[4 + j] - mean_c
            lagr -= pc * st.s[j]
            pc1 += fabs(pc)
            if fabs(st.s[j]) > bmax:
                bmax = fabs(st.s[j])
    return primal[0] - lagr + pc1 * bmax


cdef double relative_gap(double gap, double size) noexcept nogil:
    """gap / size (the size of the objective's terms); 0 for an empty objective."""
    if size > 0.0:
        return gap / size
    return 0.0 if gap <= 0.0 else INFINITY


cdef inline void _zero_sums(double* acc) noexcept nogil:
    cdef int j
    for j in range(GAP_SUMS):
        acc[j] = 0.0


cdef int scores_gap(RowSource src, const Prob* p, const State* st, double* Fi, double* zbuf,
                    char* used, long long* work, double* gap) noexcept nogil:
    """Relative duality gap of the current point, scores from the row source: CONVERGED
    (gap set), or INTERRUPTED.  The gap is relative to the size of the objective's terms,
    at least p.gap_scale (see the Design note).  Fi: k values; zbuf, used: maxper + 1
    values."""
    cdef double acc[GAP_SUMS]
    cdef double primal, size, absolute
    cdef int i
    _zero_sums(acc)
    for i in range(p.n):
        src.get_scores(i, Fi)
        sample_gap(p, st, i, Fi, acc, zbuf, used)
        if tick(work, src.visit_cost):
            return STATUS_INTERRUPTED
    absolute = gap_from_sums(p, st, acc, &primal, &size)
    gap[0] = relative_gap(absolute, size if size >= p.gap_scale else p.gap_scale)
    return STATUS_CONVERGED


def primal_dual(problem, const double[::1] alpha, const double[:, ::1] F,
                const double[::1] intercept):
    """Primal objective and duality-gap certificate of a DualProblem at dual point alpha.

    F (n x k) holds the scores K U of alpha (the function is h = -kappa F P) and
    ``intercept`` the slot intercepts b.  Returns (primal, gap, size): primal =
    1/2 ||h||^2 + the hinge terms at f = b + h, gap >= primal - optimum (see _gap_from_sums),
    and size = 1/2 ||h||^2 + sum |hinge term| (the scale of a relative gap).
    """
    cdef int k = F.shape[1]
    cdef ProblemArrays pa = ProblemArrays(problem, k)
    cdef State st
    cdef double acc[GAP_SUMS]
    cdef double s[MAX_CLASSES]
    cdef double primal, size, gap
    cdef int i, j, n = pa.p.n
    cdef double* zbuf
    cdef char* used
    if F.shape[0] != n or alpha.shape[0] != pa.p.nv or intercept.shape[0] != k:
        raise ValueError("alpha, F and intercept do not match the problem")
    zbuf = <double*> malloc((pa.p.maxper + 1) * sizeof(double))
    used = <char*> malloc(pa.p.maxper + 1)
    if zbuf == NULL or used == NULL:
        free(zbuf); free(used)
        raise MemoryError()
    for j in range(k):
        s[j] = -intercept[j]
    _zero_sums(acc)
    st.alpha = <double*> &alpha[0] if pa.p.nv else NULL
    st.s = s
    with nogil:
        for i in range(n):
            sample_gap(&pa.p, &st, i, &F[i, 0], acc, zbuf, used)
        gap = gap_from_sums(&pa.p, &st, acc, &primal, &size)
    free(zbuf); free(used)
    return primal, gap, size
