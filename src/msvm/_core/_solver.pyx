# Design
# ======
# One dual solver for every model of msvm.  A model is data: a `DualProblem` (see
# msvm/_problem.py) lists, per dual variable v, the sample i(v) it belongs to, its direction
# d_v in class-slot space (at most two nonzero slots: +-e_j for the per-class hinges of the
# Lee-Lin-Wahba / reinforced / truncated losses, e_j - e_l for the generalized-margin hinges),
# its linear term a_v, its box [lo_v, hi_v] and optionally a group (a contiguous run of one
# sample's variables) with a cap sum_{v in g} alpha_v <= cap_g.  The problem solved is
#
#     minimize   D(alpha) = 1/2 || sum_v alpha_v (M^{1/2} d_v) K(x_{i(v)}, .) ||^2 - sum_v a_v alpha_v
#     subject to lo <= alpha <= hi,  group caps,  and (if `equality`) P c(alpha) = 0,
#
# with c(alpha) = sum_v alpha_v d_v, P = I - 11^T/k and the slot metric M = kappa P
# (kappa = 1 for sum-to-zero models, k/(k-1) for the angle-based simplex geometry).  It is the
# dual of   min 1/2 ||h||^2 + sum_v [a_v + <d_v, b + h(x_i)>]_+ -type problems whose unpenalized
# intercepts b (sum-to-zero) create the k-1 equalities P c = 0.
#
# Method: augmented Lagrangian on the equalities (multiplier mu, in range(P), penalty rho); the
# inner problems (box/group constraints only) are solved on one of two paths:
#
# * kernel problems whose directions have coefficients +-1 on one or two slots (the
#   Lee-Lin-Wahba / reinforced / truncated, Weston-Watkins and generalized-margin layouts, their
#   DC steps, with or without group caps): working-set SMO (_smo.pxi).  An O(n k) scan picks
#   the q most violating samples; a pair/single/group-pair SMO solves the subproblem on their
#   q x q kernel block; the scores of all samples are then updated once with the rows of the
#   samples that changed.  The working set plays the part of shrinking: kernel rows and
#   steps are spent on violating samples only;
# * everything else (the linear kernel with explicit weights above 2000 samples, directions
#   with other coefficients): randomized dual coordinate descent over samples (all variables
#   of one sample share one kernel row or one x_i), LIBLINEAR-style shrinking with a final
#   unshrunk pass, and exact pair steps inside groups whose cap is active.
#
# The current scores F = K U are held by a RowSource (_rows.pxi): explicit weights for the
# linear kernel (O(d k) per sample update) or explicit F with kernel rows from a Gram matrix or
# an LRU row cache.  At the end b = -mu (the KKT multiplier of the equalities) is the intercept
# up to tol; the Python layer makes it exact for the fitted h (msvm/_intercept.py).
#
# Stopping rule.  The KKT residual is max(largest projected-gradient violation (margin units),
# largest equality violation |P c|_inf divided by the largest box bound).  It does not bound the
# objective (with a large C a violation of 1e-3 per sample can leave the objective far from
# its optimum), so when it falls below its tolerance the relative duality gap is evaluated
# too: primal objective of the current function (intercept b = -s, the multiplier estimate)
# minus the dual objective, over the size of the objective's terms.  If the gap exceeds tol,
# the KKT tolerance is lowered and the solve goes on.  The gap costs one O(n k) pass and is
# only evaluated when the KKT rule is met.
#
# Termination and interruption.  max_iter bounds the total work: epochs of the coordinate
# path, steps / n of the SMO path, where every working-set round and every augmented-
# Lagrangian round counts at least one step.  Non-finite scores, class sums or gaps stop the
# solve (status NONFINITE, a ValueError for the caller).  The loops run without the GIL; every
# CHECK_WORK units of work (about one multiply-add each) they re-take it briefly to run
# Python's signal handlers, so Ctrl-C or an alarm stops a fit within milliseconds (status
# INTERRUPTED: the handler's exception is re-raised once the work arrays are freed).

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport malloc, free

import numpy as np

include "_rows.pxi"

# Largest working set (samples) of the kernel SMO path; never more than the row cache holds.
WORKING_SET = 256

# Solver status codes (returned by the inner solvers, turned into warnings or errors by `solve`)
cdef enum:
    STATUS_CONVERGED = 0
    STATUS_MAX_ITER = 1
    STATUS_NONFINITE = 2
    STATUS_INTERRUPTED = 3
    STATUS_GAP_FLOOR = 4
    STATUS_NO_MEMORY = -1

# Inner tolerance of the first augmented-Lagrangian round; the KKT tolerance below which the
# duality-gap rule stops lowering it (rounding dominates there).
cdef double EPS_START = 0.1
cdef double KKT_FLOOR = 1e-13
# The same floor for the equality violation |P c|_inf / scale (the class sums c round far
# less than the gradients do).
cdef double FEAS_FLOOR = 1e-15
# The relative duality gap is certified down to GAP_FLOOR (below it the gap's own sums round);
# a smaller tol still applies to the KKT residual.
cdef double GAP_FLOOR = 1e-8
# Largest augmented-Lagrangian penalty for boxes of size ~1.  The equalities are measured
# relative to the box scale, so a multiplier step rho * residual moves the gradients by
# rho * feas * scale: with tiny boxes (small C: the large-lambda end of the papers' grids) rho
# must reach RHO_MAX / scale, or the equalities stall below the inner tolerance's resolution.
cdef double RHO_MAX = 1e6


cdef inline double _rho_max(double scale) noexcept nogil:
    return RHO_MAX / scale if scale < 1.0 else RHO_MAX


# ---------------------------------------------------------------------- signals
# Work units (about one multiply-add each) between two signal checks: ~10 ms of work, so a
# check (re-taking the GIL, a few hundred ns) costs far below 1 % of a solve.
cdef long long CHECK_WORK = 1 << 24
cdef bint _signal_checks = True
cdef long long _checks_made = 0     # signal checks since import (for measuring their cost)

cdef extern from "Python.h":
    int _py_check_signals "PyErr_CheckSignals" ()


cdef bint _signal_raised() noexcept nogil:
    """Run Python's signal handlers; True when one raised (its exception stays set)."""
    global _checks_made
    cdef int r
    if not _signal_checks:
        return False
    _checks_made += 1
    with gil:
        r = _py_check_signals()
    return r != 0


cdef inline bint _tick(long long* work, long long amount) noexcept nogil:
    """Count `amount` units of work; every CHECK_WORK units, check for signals."""
    work[0] += amount
    if work[0] < CHECK_WORK:
        return False
    work[0] = 0
    return _signal_raised()


cdef int _reraise() except -1:
    """Propagate the exception a signal handler left set (see _signal_raised)."""
    return -1


def set_signal_checks(bint enabled):
    """Turn the solver's periodic signal checks on or off; returns the previous setting.

    Only for measuring what the checks cost (benchmarks): with them off a fit cannot be
    interrupted until it returns.
    """
    global _signal_checks
    previous = _signal_checks
    _signal_checks = enabled
    return previous


def signal_check_stats(long repeat=0):
    """(signal checks made since import, seconds per check over ``repeat`` timed checks).

    For measuring what the checks cost: a fit's count times the time of one check, against
    the fit's time.  The timed checks are made without the GIL, as the solver makes them.
    """
    import time
    cdef long i
    cdef bint raised = False
    seconds = float("nan")
    if repeat > 0:
        start = time.perf_counter()
        with nogil:
            for i in range(repeat):
                if _signal_raised():
                    raised = True
                    break
        seconds = (time.perf_counter() - start) / repeat
        if raised:
            _reraise()
    return _checks_made, seconds


cdef inline unsigned long long _rng_next(unsigned long long* state) noexcept nogil:
    # xorshift64*
    cdef unsigned long long x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return x * 2685821657736338717ULL


cdef struct Prob:
    int n, k, nv
    const int* ptr
    const int* s1
    const double* c1
    const int* s2
    const double* c2
    const double* lin
    const double* lo
    const double* hi
    const int* grp
    const double* cap
    double kappa
    int equality
    int maxper        # most variables of one sample


cdef struct State:
    double* alpha
    double* gsum      # per group: sum of alpha
    double* c         # k: sum_v alpha_v d_v
    double* s         # k: mu + rho * P c  (the intercept estimate is -s)
    double* mu        # k
    double rho


cdef class ProblemArrays:
    """A DualProblem's arrays held as typed views, and the solver's Prob struct over them."""

    cdef const int[::1] ptr, s1, s2, grp
    cdef const double[::1] c1, c2, lin, lo, hi, cap
    cdef Prob p

    def __init__(self, problem, int k):
        cdef int i, nv
        self.ptr = problem.var_ptr
        self.s1 = problem.slot1
        self.c1 = problem.coef1
        self.s2 = problem.slot2
        self.c2 = problem.coef2
        self.lin = problem.lin
        self.lo = problem.lo
        self.hi = problem.hi
        self.grp = problem.group
        self.cap = problem.cap
        nv = self.lin.shape[0]
        if k > 64:
            raise ValueError("the compiled solver supports at most 64 classes")
        if (self.s1.shape[0] != nv or self.c1.shape[0] != nv or self.s2.shape[0] != nv
                or self.c2.shape[0] != nv or self.lo.shape[0] != nv or self.hi.shape[0] != nv
                or self.grp.shape[0] != nv):
            raise ValueError("problem arrays disagree in length")
        self.p.n = self.ptr.shape[0] - 1
        self.p.k = k
        self.p.nv = nv
        self.p.ptr = &self.ptr[0]
        self.p.s1 = &self.s1[0] if nv else NULL
        self.p.c1 = &self.c1[0] if nv else NULL
        self.p.s2 = &self.s2[0] if nv else NULL
        self.p.c2 = &self.c2[0] if nv else NULL
        self.p.lin = &self.lin[0] if nv else NULL
        self.p.lo = &self.lo[0] if nv else NULL
        self.p.hi = &self.hi[0] if nv else NULL
        self.p.grp = &self.grp[0] if nv else NULL
        self.p.cap = &self.cap[0] if self.cap.shape[0] > 0 else NULL
        self.p.kappa = float(problem.kappa)
        self.p.equality = 1 if problem.equality else 0
        self.p.maxper = 0
        for i in range(self.p.n):
            if self.ptr[i + 1] - self.ptr[i] > self.p.maxper:
                self.p.maxper = self.ptr[i + 1] - self.ptr[i]



# ---------------------------------------------------------------------- duality gap
# Sums over samples kept while evaluating a gap: penalty, loss, linear term, sum |loss term|,
# then the k class sums c.
cdef enum:
    GAP_SUMS = 4 + 64


cdef void _sample_gap(const Prob* p, const State* st, int i, const double* Fi, double* acc,
                      double* zbuf, char* used) noexcept nogil:
    """Add sample i's terms to acc (see GAP_SUMS).

    With U_i = sum_v alpha_v d_v, the slot-space function h(x_i) = -kappa P F_i and the
    intercept b = -s: penalty 1/2 kappa U_i^T P F_i (its sum over i is 1/2 ||h||^2), linear
    sum_v a_v alpha_v, and loss the primal hinge terms max_{alpha' in box, caps}
    sum_v alpha'_v z_v with z_v = a_v + <d_v, b + h(x_i)> (a continuous knapsack per group).
    """
    cdef int k = p.k, j, v, w, x, best, g, v0 = p.ptr[i], v1 = p.ptr[i + 1]
    cdef double U[64]
    cdef double Hb[64]
    cdef double meanF = 0.0, pen = 0.0, a, z, t, budget, room, zb
    for j in range(k):
        meanF += Fi[j]
        U[j] = 0.0
    meanF /= k
    for v in range(v0, v1):
        a = st.alpha[v]
        U[p.s1[v]] += a * p.c1[v]
        if p.s2[v] >= 0:
            U[p.s2[v]] += a * p.c2[v]
        acc[2] += p.lin[v] * a
    for j in range(k):
        pen += U[j] * (Fi[j] - meanF)
        Hb[j] = -p.kappa * (Fi[j] - meanF) - st.s[j]
        acc[4 + j] += U[j]
    acc[0] += 0.5 * p.kappa * pen
    v = v0
    while v < v1:
        g = p.grp[v]
        w = v + 1
        while w < v1 and g >= 0 and p.grp[w] == g:
            w += 1
        for x in range(v, w):
            z = p.lin[x] + p.c1[x] * Hb[p.s1[x]]
            if p.s2[x] >= 0:
                z += p.c2[x] * Hb[p.s2[x]]
            zbuf[x - v] = z
        if g < 0:
            z = zbuf[0]
            t = p.hi[v] * z if z > 0.0 else p.lo[v] * z
        else:
            # max sum alpha z over lo <= alpha <= hi, sum alpha <= cap: start at lo, then
            # fill the remaining budget by decreasing positive z
            t = 0.0
            budget = p.cap[g]
            for x in range(v, w):
                t += p.lo[x] * zbuf[x - v]
                budget -= p.lo[x]
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
                room = p.hi[best] - p.lo[best]
                if room > budget:
                    room = budget
                t += room * zb
                budget -= room
        acc[1] += t
        acc[3] += fabs(t)
        v = w


cdef double _gap_from_sums(const Prob* p, const State* st, const double* acc,
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


cdef inline double _relative(double gap, double size) noexcept nogil:
    """gap / size (the size of the objective's terms); 0 for an empty objective."""
    if size > 0.0:
        return gap / size
    return 0.0 if gap <= 0.0 else INFINITY


cdef inline void _zero_sums(double* acc) noexcept nogil:
    cdef int j
    for j in range(GAP_SUMS):
        acc[j] = 0.0


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
    cdef double s[64]
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
            _sample_gap(&pa.p, &st, i, &F[i, 0], acc, zbuf, used)
        gap = _gap_from_sums(&pa.p, &st, acc, &primal, &size)
    free(zbuf); free(used)
    return primal, gap, size


# ---------------------------------------------------------------------- augmented Lagrangian
cdef struct Schedule:
    double tol        # target of the relative duality gap (tol, at least GAP_FLOOR)
    double kkt_tol    # tolerance of the projected-gradient violation (lowered while the gap
                      # exceeds tol)
    double feas_tol   # tolerance of the equality violation (lowered with kkt_tol)
    double eps_in     # inner tolerance of the current round
    double feas_prev  # equality violation after the previous round
    double scale      # largest box bound (equalities are measured relative to it)
    double gap        # relative duality gap at its last evaluation
    double resid      # KKT residual after the last round


cdef void _schedule_init(Schedule* sc, const Prob* p, double tol, double scale) noexcept nogil:
    sc.tol = tol if tol > GAP_FLOOR else GAP_FLOOR
    sc.kkt_tol = tol
    sc.feas_tol = tol
    sc.eps_in = EPS_START if p.equality else tol
    if sc.eps_in < tol:
        sc.eps_in = tol
    sc.feas_prev = INFINITY
    sc.scale = scale
    sc.gap = INFINITY
    sc.resid = INFINITY


cdef void _start_round(const Prob* p, State* st) noexcept nogil:
    """s = mu + rho P c: the gradient shift of the inner problem for the current mu."""
    cdef int j
    cdef double mean_c = 0.0
    for j in range(p.k):
        mean_c += st.c[j]
    mean_c /= p.k
    for j in range(p.k):
        st.s[j] = (st.mu[j] + st.rho * (st.c[j] - mean_c)) if p.equality else 0.0


cdef double _multiplier_step(const Prob* p, State* st, double scale) noexcept nogil:
    """mu += rho P c; returns the equality violation |P c|_inf / scale (NaN if non-finite)."""
    cdef int j
    cdef double mean_c = 0.0, vs, feas = 0.0, check = 0.0
    for j in range(p.k):
        mean_c += st.c[j]
        check += st.s[j]
    mean_c /= p.k
    if not p.equality:
        return 0.0 if check - check == 0.0 and mean_c - mean_c == 0.0 else mean_c - mean_c
    for j in range(p.k):
        vs = st.c[j] - mean_c
        if fabs(vs) > feas:
            feas = fabs(vs)
        st.mu[j] += st.rho * vs
        check += st.mu[j]
    if check - check != 0.0:
        return check - check           # NaN: something became non-finite
    return feas / scale


cdef void _next_round(Schedule* sc, State* st, double feas) noexcept nogil:
    """After a round that did not converge: tighten the inner tolerance, grow rho."""
    if sc.eps_in > sc.kkt_tol:
        sc.eps_in *= 0.1
        if feas < sc.eps_in:
            sc.eps_in = feas if feas > sc.kkt_tol else sc.kkt_tol
        if sc.eps_in < sc.kkt_tol:
            sc.eps_in = sc.kkt_tol
    if feas > 0.25 * sc.feas_prev and st.rho < _rho_max(sc.scale):
        st.rho *= 4.0
    sc.feas_prev = feas


cdef int _gap_verdict(Schedule* sc, double gap) noexcept nogil:
    """After the KKT rule is met: CONVERGED if the relative gap is within tol; otherwise lower
    the KKT tolerance (-1: go on) unless it reached KKT_FLOOR (GAP_FLOOR) or gap is NaN."""
    cdef double factor
    sc.gap = gap
    if gap != gap:
        return STATUS_NONFINITE
    if gap <= sc.tol:
        return STATUS_CONVERGED
    if sc.kkt_tol <= KKT_FLOOR and sc.feas_tol <= FEAS_FLOOR:
        return STATUS_GAP_FLOOR
    # the gap shrinks about linearly with the violations; aim below tol with some margin
    factor = 0.5 * sc.tol / gap
    if factor < 0.01:
        factor = 0.01
    sc.kkt_tol = sc.kkt_tol * factor if sc.kkt_tol * factor > KKT_FLOOR else KKT_FLOOR
    sc.feas_tol = sc.feas_tol * factor if sc.feas_tol * factor > FEAS_FLOOR else FEAS_FLOOR
    if sc.eps_in > sc.kkt_tol:
        sc.eps_in = sc.kkt_tol
    return -1


cdef inline bint _kkt_met(const Schedule* sc, double viol, double feas) noexcept nogil:
    """The KKT rule: violation and equality residual within their tolerances."""
    return viol <= sc.kkt_tol and feas <= sc.feas_tol


include "_smo.pxi"


# ---------------------------------------------------------------------- coordinate descent
cdef inline double _grad(const Prob* p, State* st, int v, const double* Fi, double sumF) noexcept nogil:
    cdef int j1 = p.s1[v], j2 = p.s2[v]
    cdef double c1 = p.c1[v], c2 = 0.0, dF, ds
    dF = c1 * Fi[j1]
    ds = c1 * st.s[j1]
    if j2 >= 0:
        c2 = p.c2[v]
        dF += c2 * Fi[j2]
        ds += c2 * st.s[j2]
    return p.kappa * (dF - (c1 + c2) * sumF / p.k) - p.lin[v] + ds


cdef inline double _upper(const Prob* p, State* st, int v) noexcept nogil:
    cdef double ub = p.hi[v]
    cdef int g = p.grp[v]
    cdef double room
    if g >= 0:
        room = p.cap[g] - st.gsum[g] + st.alpha[v]
        if room < ub:
            ub = room
    return ub


cdef inline void _move(const Prob* p, State* st, int v, double delta, double Kii,
                       double* Fi, double* sumF, double* du) noexcept nogil:
    """alpha_v += delta and every quantity derived from it (local scores, c, s, group sums)."""
    cdef int j1 = p.s1[v], j2 = p.s2[v], j
    cdef double c1 = p.c1[v], c2 = 0.0, sd
    st.alpha[v] += delta
    du[j1] += delta * c1
    Fi[j1] += Kii * delta * c1
    st.c[j1] += delta * c1
    if j2 >= 0:
        c2 = p.c2[v]
        du[j2] += delta * c2
        Fi[j2] += Kii * delta * c2
        st.c[j2] += delta * c2
    sd = c1 + c2
    sumF[0] += Kii * delta * sd
    if p.equality:
        st.s[j1] += st.rho * delta * c1
        if j2 >= 0:
            st.s[j2] += st.rho * delta * c2
        if sd != 0.0:
            for j in range(p.k):
                st.s[j] -= st.rho * delta * sd / p.k
    if p.grp[v] >= 0:
        st.gsum[p.grp[v]] += delta


cdef inline double _pnorm2(const Prob* p, int v) noexcept nogil:
    """||P d_v||^2."""
    cdef double c1 = p.c1[v], c2 = 0.0
    if p.s2[v] >= 0:
        c2 = p.c2[v]
    return c1 * c1 + c2 * c2 - (c1 + c2) * (c1 + c2) / p.k


cdef inline double _pair_pnorm2(const Prob* p, int a, int b) noexcept nogil:
    """||P (d_b - d_a)||^2 for two variables of one sample."""
    cdef double e[64]
    cdef int j
    cdef double tot = 0.0, sq = 0.0
    for j in range(p.k):
        e[j] = 0.0
    e[p.s1[b]] += p.c1[b]
    if p.s2[b] >= 0:
        e[p.s2[b]] += p.c2[b]
    e[p.s1[a]] -= p.c1[a]
    if p.s2[a] >= 0:
        e[p.s2[a]] -= p.c2[a]
    for j in range(p.k):
        tot += e[j]
        sq += e[j] * e[j]
    return sq - tot * tot / p.k

cdef double _visit(const Prob* p, State* st, RowSource src, int i, double* Fi, double* du,
                   double PGmax_old, double PGmin_old, double* PGmax_new, double* PGmin_new,
                   int* shrinkable) noexcept nogil:
    """One coordinate-descent visit of sample i. Returns the largest |projected gradient|."""
    cdef int v, j, a0 = p.ptr[i], a1 = p.ptr[i + 1], g, va, vb, w
    cdef double sumF = 0.0, Kii = src.diag(i), gr, pg, ub, lo, av, H, new, viol = 0.0
    cdef double ga, gb, t, curv, lim
    cdef int changed = 0, all_shrink = 1
    src.get_scores(i, Fi)
    for j in range(p.k):
        sumF += Fi[j]
        du[j] = 0.0
    for v in range(a0, a1):
        lo = p.lo[v]
        if p.hi[v] <= lo:
            continue
        gr = _grad(p, st, v, Fi, sumF)
        ub = _upper(p, st, v)
        av = st.alpha[v]
        pg = 0.0
        if ub <= lo:
            # a full group leaves this variable no room of its own: only the pair steps
            # inside the group below can move it, and they measure its violation
            all_shrink = 0
            continue
        if av <= lo:
            if gr > PGmax_old:
                continue
            all_shrink = 0
            if gr < 0.0:
                pg = gr
        elif av >= ub:
            if gr < PGmin_old and p.grp[v] < 0:
                continue
            all_shrink = 0
            if gr > 0.0:
                pg = gr
        else:
            pg = gr
            all_shrink = 0
        if pg > PGmax_new[0]:
            PGmax_new[0] = pg
        if pg < PGmin_new[0]:
            PGmin_new[0] = pg
        if fabs(pg) > viol:
            viol = fabs(pg)
        if pg == 0.0:
            continue
        H = (p.kappa * Kii + st.rho * p.equality) * _pnorm2(p, v)
        if H > 1e-12:
            new = av - gr / H
            if new < lo:
                new = lo
            elif new > ub:
                new = ub
        else:
            new = ub if gr < 0.0 else lo
        if new != av:
            _move(p, st, v, new - av, Kii, Fi, &sumF, du)
            changed = 1
    # exact pair steps inside groups whose cap is active
    v = a0
    while v < a1:
        g = p.grp[v]
        if g < 0:
            v += 1
            continue
        w = v
        while w < a1 and p.grp[w] == g:
            w += 1
        if st.gsum[g] >= p.cap[g] - 1e-12 * (1.0 + fabs(p.cap[g])):
            va = -1
            vb = -1
            ga = -INFINITY
            gb = INFINITY
            for j in range(v, w):
                gr = _grad(p, st, j, Fi, sumF)
                if st.alpha[j] > p.lo[j] and gr > ga:
                    ga = gr
                    va = j
                if st.alpha[j] < p.hi[j] and gr < gb:
                    gb = gr
                    vb = j
            if va >= 0 and vb >= 0 and va != vb and ga - gb > 0.0:
                all_shrink = 0
                if ga - gb > viol:
                    viol = ga - gb
                curv = (p.kappa * Kii + st.rho * p.equality) * _pair_pnorm2(p, va, vb)
                lim = st.alpha[va] - p.lo[va]
                if p.hi[vb] - st.alpha[vb] < lim:
                    lim = p.hi[vb] - st.alpha[vb]
                t = lim
                if curv > 1e-12 and (ga - gb) / curv < lim:
                    t = (ga - gb) / curv
                if t > 0.0:
                    _move(p, st, va, -t, Kii, Fi, &sumF, du)
                    _move(p, st, vb, t, Kii, Fi, &sumF, du)
                    changed = 1
        v = w
    if changed:
        src.apply(i, du)
    shrinkable[0] = all_shrink
    return viol



cdef inline bint _finite(const Prob* p, const State* st, double viol) noexcept nogil:
    """False when the violation, a class sum or the shift is NaN or infinite."""
    cdef int j
    cdef double tot = viol
    for j in range(p.k):
        tot += st.c[j] + st.s[j]
    return tot - tot == 0.0


cdef int _cd_gap(RowSource src, const Prob* p, const State* st, double* Fi, double* zbuf,
                 char* used, long long* work, double* gap) noexcept nogil:
    """Relative duality gap of the current point (coordinate path): 0, or INTERRUPTED."""
    cdef double acc[GAP_SUMS]
    cdef double primal, size, absolute
    cdef int i
    _zero_sums(acc)
    for i in range(p.n):
        src.get_scores(i, Fi)
        _sample_gap(p, st, i, Fi, acc, zbuf, used)
        if _tick(work, src.visit_cost):
            return STATUS_INTERRUPTED
    absolute = _gap_from_sums(p, st, acc, &primal, &size)
    gap[0] = _relative(absolute, size)
    return STATUS_CONVERGED


cdef int _cd_inner(RowSource src, const Prob* p, State* st, double eps, long max_iter,
                   bint shrinking, unsigned long long* rng, int* active, double* Fi,
                   double* du, long* it, long long* work, double* viol_out) noexcept nogil:
    """Epochs of randomized coordinate descent over samples (shrinking, one final unshrunk
    pass) until the violation is <= eps: CONVERGED, MAX_ITER, NONFINITE or INTERRUPTED."""
    cdef int n = p.n, i, j, idx, tmp, shr, n_active = n, full_pass = 0
    cdef double viol = INFINITY, vs, PGmax_new, PGmin_new
    cdef double PGmax_old = INFINITY, PGmin_old = -INFINITY
    for i in range(n):
        active[i] = i
    while it[0] < max_iter:
        it[0] += 1
        for idx in range(n_active - 1, 0, -1):
            j = <int> (_rng_next(rng) % <unsigned long long> (idx + 1))
            tmp = active[idx]; active[idx] = active[j]; active[j] = tmp
        viol = 0.0
        PGmax_new = -INFINITY
        PGmin_new = INFINITY
        idx = 0
        while idx < n_active:
            i = active[idx]
            vs = _visit(p, st, src, i, Fi, du, PGmax_old, PGmin_old, &PGmax_new, &PGmin_new,
                        &shr)
            if vs > viol:
                viol = vs
            if _tick(work, src.visit_cost):
                return STATUS_INTERRUPTED
            if shrinking and shr and n_active > 1 and not full_pass:
                n_active -= 1
                active[idx] = active[n_active]
                active[n_active] = i
                continue
            idx += 1
        viol_out[0] = viol
        if not _finite(p, st, viol):
            return STATUS_NONFINITE
        if viol <= eps:
            if n_active < n and not full_pass:
                # one more pass over every sample, without shrinking, to confirm
                n_active = n
                PGmax_old = INFINITY
                PGmin_old = -INFINITY
                full_pass = 1
                continue
            return STATUS_CONVERGED
        full_pass = 0
        PGmax_old = PGmax_new if PGmax_new > 0.0 and shrinking else INFINITY
        PGmin_old = PGmin_new if PGmin_new < 0.0 and shrinking else -INFINITY
    return STATUS_MAX_ITER


cdef int _cd(RowSource src, const Prob* p, State* st, Schedule* sc, long max_iter,
             bint shrinking, unsigned long long seed, int verbose, long* it_out) noexcept nogil:
    """Augmented Lagrangian around _cd_inner (the Design note's coordinate-descent path)."""
    cdef int status = STATUS_CONVERGED, outer = 0
    cdef long it = 0
    cdef long long work = 0
    cdef double viol = INFINITY, feas, gap = INFINITY
    cdef unsigned long long rng = seed * 2654435761ULL + 88172645463325252ULL
    cdef int* active = <int*> malloc(p.n * sizeof(int) + sizeof(int))
    cdef double* Fi = <double*> malloc(p.k * sizeof(double))
    cdef double* du = <double*> malloc(p.k * sizeof(double))
    cdef double* zbuf = <double*> malloc((p.maxper + 1) * sizeof(double))
    cdef char* used = <char*> malloc(p.maxper + 1)
    if active == NULL or Fi == NULL or du == NULL or zbuf == NULL or used == NULL:
        status = STATUS_NO_MEMORY
    while status == STATUS_CONVERGED:
        _start_round(p, st)
        status = _cd_inner(src, p, st, sc.eps_in, max_iter, shrinking, &rng, active, Fi, du,
                           &it, &work, &viol)
        if status == STATUS_INTERRUPTED:
            break
        outer += 1
        feas = _multiplier_step(p, st, sc.scale)
        sc.resid = viol if viol > feas else feas
        if verbose:
            with gil:
                print(f"[msvm] outer {outer}: epochs {it}, violation {viol:.3e}, "
                      f"equality {feas:.3e}, rho {st.rho:.3g}")
        if feas != feas:
            status = STATUS_NONFINITE
        if status != STATUS_CONVERGED:
            break
        if _kkt_met(sc, viol, feas):
            status = _cd_gap(src, p, st, Fi, zbuf, used, &work, &gap)
            if status != STATUS_CONVERGED:
                break
            status = _gap_verdict(sc, gap)
            if status >= 0:
                break
            status = STATUS_CONVERGED
            continue
        _next_round(sc, st, feas)
    free(active); free(Fi); free(du); free(zbuf); free(used)
    it_out[0] = it
    return status


NONFINITE_MESSAGE = (
    "non-finite values (NaN or infinity) arose in the solver: kernel values, scores or dual "
    "bounds overflow double precision. Rescale X (e.g. with sklearn.preprocessing."
    "StandardScaler), or use a smaller C or smaller sample weights.")


def solve(RowSource src, problem, double[::1] alpha, double[::1] mu, double tol=1e-3,
          long max_iter=10000, bint shrinking=True, unsigned long long seed=0, double rho=1.0,
          int verbose=0, int working_set=WORKING_SET, str method="auto"):
    """Solve the dual QP described by `problem` (a msvm._problem.DualProblem).

    ``method`` picks the inner solver: 'smo' (kernel sources, +-1 directions), 'cd'
    (coordinate descent, any problem) or 'auto' (SMO where it applies).

    `alpha` (warm start, feasible for the box and group caps) and `mu` (k, sums to zero) are
    updated in place; `src` must hold scores consistent with alpha (see `init_scores`).

    Returns (n_iter, residual, status, gap): the work in epochs, the final KKT residual, the
    status (0: the KKT residual and the relative duality gap are within tol; 1: max_iter
    reached; 4: the gap stayed above tol down to the KKT tolerance floor) and the last
    relative duality gap evaluated (inf if the KKT rule was never met).  Raises ValueError
    when non-finite values arise, and re-raises the exception of a signal handler (Ctrl-C's
    KeyboardInterrupt) that ran during the solve.
    """
    cdef ProblemArrays pa = ProblemArrays(problem, src.k)
    cdef Prob* p = &pa.p
    cdef State st
    cdef Schedule sc
    cdef int n = p.n, k = src.k, nv = p.nv, ngroups = pa.cap.shape[0]
    cdef int v, j, status = STATUS_CONVERGED
    cdef long it = 0
    cdef long long steps = 0
    cdef double scale = 0.0, vs
    cdef int qmax
    cdef double* buf_c
    if alpha.shape[0] != nv:
        raise ValueError("problem arrays and alpha disagree in length")
    if mu.shape[0] != k:
        raise ValueError("mu must have one entry per class slot")
    if n != src.n:
        raise ValueError("the problem and the row source disagree in the number of samples")
    buf_c = <double*> malloc((3 * k + ngroups + 1) * sizeof(double))
    if buf_c == NULL:
        raise MemoryError()
    st.alpha = &alpha[0] if nv else NULL
    st.c = buf_c
    st.s = buf_c + k
    st.mu = &mu[0]
    st.gsum = buf_c + 2 * k
    st.rho = rho if p.equality else 0.0
    with nogil:
        for j in range(k):
            st.c[j] = 0.0
            st.s[j] = 0.0
        for j in range(ngroups):
            st.gsum[j] = 0.0
        for v in range(nv):
            vs = st.alpha[v]
            if fabs(p.hi[v]) > scale:
                scale = fabs(p.hi[v])
            if fabs(p.lo[v]) > scale:
                scale = fabs(p.lo[v])
            if vs == 0.0:
                continue
            st.c[p.s1[v]] += vs * p.c1[v]
            if p.s2[v] >= 0:
                st.c[p.s2[v]] += vs * p.c2[v]
            if p.grp[v] >= 0:
                st.gsum[p.grp[v]] += vs
        if scale <= 0.0:
            scale = 1.0
        _schedule_init(&sc, p, tol, scale)
    if method not in ("auto", "smo", "cd"):
        raise ValueError(f"method must be 'auto', 'smo' or 'cd'; got {method!r}")
    if method == "smo" and not _uses_smo(src, pa):
        raise ValueError("the SMO path needs a kernel row source and +-1 directions")
    if method != "cd" and _uses_smo(src, pa):
        qmax = working_set
        if src.capacity > 0 and qmax > src.capacity:
            qmax = <int> src.capacity
        with nogil:
            status = _smo(src, p, &st, &sc, max_iter * <long long> max(n, 1), qmax, verbose,
                          &steps)
        it = min((steps + n - 1) // max(n, 1), max_iter)   # a round's unit of work may pass it
        if verbose and status != STATUS_INTERRUPTED:
            print(f"[msvm] smo: {steps} steps ({it} epochs), residual {sc.resid:.3e}, gap "
                  f"{sc.gap:.3e}, kernel rows computed {src.n_computed} of "
                  f"{src.n_requests} requested")
    else:
        with nogil:
            status = _cd(src, p, &st, &sc, max_iter, shrinking, seed, verbose, &it)
    free(buf_c)
    if status == STATUS_INTERRUPTED:
        _reraise()
    if status == STATUS_NO_MEMORY:
        raise MemoryError("cannot allocate the solver's work arrays")
    if status == STATUS_NONFINITE:
        raise ValueError(NONFINITE_MESSAGE)
    return it, sc.resid, status, sc.gap


cdef bint _uses_smo(RowSource src, ProblemArrays pa):
    """The working-set SMO path serves kernel sources whose directions are +-1 on each slot."""
    if src.kind == SRC_LINEAR:
        return False
    c1 = np.asarray(pa.c1)
    s2 = np.asarray(pa.s2)
    c2 = np.asarray(pa.c2)
    return bool(np.all(np.abs(c1) == 1.0)) and bool(np.all((s2 < 0) | (np.abs(c2) == 1.0)))


def init_scores(RowSource src, const double[:, ::1] U):
    """Set the source's scores to K U (kernel) or W = X^T U (linear), U the n x k slot sums."""
    cdef int i, j, n = U.shape[0], k = U.shape[1]
    cdef bint interrupted = False
    cdef long long work = 0
    cdef double* du
    if k != src.k or n != src.n:
        raise ValueError("U must be n x k")
    du = <double*> malloc(k * sizeof(double))
    if du == NULL:
        raise MemoryError()
    with nogil:
        src.reset_scores()
        for i in range(n):
            for j in range(k):
                du[j] = U[i, j]
            src.apply(i, du)
            if _tick(&work, src.visit_cost):
                interrupted = True
                break
    free(du)
    if interrupted:
        _reraise()


def add_scores(RowSource src, const int[::1] rows, const double[:, ::1] dU):
    """Scores += K[:, rows] dU (kernel) or W += X[rows]^T dU (linear): a warm start's change."""
    cdef Py_ssize_t r, m = rows.shape[0]
    cdef bint interrupted = False
    cdef long long work = 0
    if dU.shape[0] != m or dU.shape[1] != src.k:
        raise ValueError("dU must be len(rows) x k")
    for r in range(m):
        if rows[r] < 0 or rows[r] >= src.n:
            raise ValueError("row index out of range")
    with nogil:
        for r in range(m):
            src.apply(rows[r], &dU[r, 0])
            if _tick(&work, src.visit_cost):
                interrupted = True
                break
    if interrupted:
        _reraise()
