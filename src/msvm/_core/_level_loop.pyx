# Design
# ======
# The per-level work of a probability chain's lean step (msvm/_level_chain.py) around its
# compiled solve, in C: what the Python level step formed in 30 to 40 NumPy calls a level
# (about 0.25 ms at 400 samples and k = 3, against a warm solve of 0.3 ms).
#
# * ``moved_scores``: the rows whose slot sums U = sum_v alpha_v d_v differ between the
#   previous level's solution and this level's start, and their differences, for the
#   scores' update (``DualSequence.move_to``: a difference within ROUNDING (|U| + |U_now|)
#   is no change).  One pass over the variables, no (n, k) temporaries.
# * ``level_tail``: of a level's solution, in one pass over the variables and the scores F
#   the row source holds, (1) the exact intercepts (msvm/_intercept.py) of the slot
#   functions h = -kappa F P: per slot the breakpoints t_v = -sign(c_v) a_v - h_j(x_i), their
#   rises hi_v - lo_v and the slope below them, sorted by t, the cumulative slopes, and the
#   search of _intercepts.pyx (``slot_search``); (2) the slot coefficients V = -kappa U P;
#   (3) the support (samples with a nonzero variable); (4) the settled test of the chain
#   (``msvm._probability._one_solve_settled``): no sample of the up-weighted class with a
#   variable at a nonzero bound or in a group at its nonzero cap.
#
# Every value is the one the Python step forms, bit for bit: the row means as NumPy forms
# them (NumPy's pairwise sum: one after another below 8 values, eight running sums up to
# 128, halves above), the
# cumulative slopes one after another (np.cumsum), then the slope below added (``cum +=
# base``), the group sums in the order of the variables (np.bincount).  The one freedom of
# the Python step, the order of tied breakpoints (an unstable np.argsort), changes the
# rounding of the slopes between them; where two tied breakpoints of a slot have different
# rises, or a breakpoint is NaN, ``level_tail`` leaves the intercepts to the Python step
# (None), as it does wherever the compiled search does not apply (k >= 8, a slope or b0
# not finite, no candidate: ``plain_slot_search``'s rule).  The passes count their work and
# poll Python's signal handlers (``tick``, as the solver's loops do): Ctrl-C stays prompt.

import numpy as np
from libc.math cimport isfinite
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

from ._types cimport Prob, v_s1, v_c1, v_s2, v_c2, v_lin, v_lo, v_hi
from ._problem cimport ProblemArrays
from ._bounds cimport at_moving_bound, group_sums as group_sums_of
from ._intercepts cimport Slot, slot_search
from ._signals cimport tick, reraise

# status of an interrupted pass (a signal handler ran: its exception is raised once the work
# arrays are freed, as the solver does)
DEF INTERRUPTED = -2
# the work counted per variable of a pass and per breakpoint sorted, in the solver's units
# (about a multiply-add; a check every CHECK_WORK units): a pass over a variable costs some
# 20 ns here, a breakpoint's share of the sort some 60 ns
DEF VAR_WORK = 16
DEF SORT_WORK = 64

# below this many slots the compiled search's sums are NumPy's (``_intercepts.pyx``)
DEF PLAIN_SUM_SLOTS = 8


cdef struct Breakpoint:
    double t
    double rise


cdef inline void _sums_of(const Prob* p, const double* alpha, int i, double* u) noexcept nogil:
    """U_i = sum_v alpha_v d_v over the variables of sample i (``slot_sums``'s additions)."""
    cdef int v, j2
    cdef double a
    for v in range(p.k):
        u[v] = 0.0
    for v in range(p.ptr[i], p.ptr[i + 1]):
        a = alpha[v]
        if a == 0.0:
            continue
        u[v_s1(p, v)] += a * v_c1(p, v)
        j2 = v_s2(p, v)
        if j2 >= 0:
            u[j2] += a * v_c2(p, v)


cdef double _row_sum(const double* u, int k) noexcept nogil:
    """The sum of u[:k] as NumPy's ``add.reduce`` forms it over a contiguous row (its
    pairwise sum): one after another below 8 values; up to 128, eight running sums combined
    pairwise and the rest added one after another; above, the two halves (the first a
    multiple of 8) summed so and added."""
    cdef int i, j, half
    cdef double total
    cdef double r[8]
    if k < 8:
        total = 0.0
        for i in range(k):
            total += u[i]
        return total
    if k > 128:
        half = k // 2
        half -= half % 8
        return _row_sum(u, half) + _row_sum(u + half, k - half)
    for j in range(8):
        r[j] = u[j]
    i = 8
    while i < k - (k % 8):
        for j in range(8):
            r[j] += u[i + j]
        i += 8
    total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
    while i < k:
        total += u[i]
        i += 1
    return total


cdef inline void _centred(double* u, int k, double kappa) noexcept nogil:
    """u <- -kappa (u - mean(u)) in place (``centre_and_scale_in_place`` on one row: the
    mean as NumPy's, :func:`_row_sum` / k)."""
    cdef int j
    cdef double mean = _row_sum(u, k) / k, scale = -kappa
    for j in range(k):
        u[j] = (u[j] - mean) * scale


def moved_scores(problem, const double[::1] alpha, const double[::1] alpha_now,
                 double rounding):
    """(rows, dU): the samples whose slot sums at ``alpha`` differ from those at
    ``alpha_now`` (both duals of ``problem``'s variables) by more than ``rounding`` (|U| +
    |U_now|), and those differences (len(rows), k), as ``DualSequence.move_to`` forms them."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int i, j, k = p.k, m = 0
    cdef double d
    cdef bint moved, interrupted = False
    cdef long long work = 0
    if alpha.shape[0] != p.nv or alpha_now.shape[0] != p.nv:
        raise ValueError("alpha does not match the problem")
    rows = np.empty(p.n, dtype=np.int32)
    dU = np.empty((p.n, k))
    cdef int[::1] r = rows
    cdef double[:, ::1] du = dU
    cdef double* u = <double*> malloc(2 * k * sizeof(double) + 1)
    cdef double* w
    if u == NULL:
        raise MemoryError()
    w = u + k
    with nogil:
        for i in range(p.n):
            _sums_of(p, &alpha[0], i, u)
            _sums_of(p, &alpha_now[0], i, w)
            moved = False
            for j in range(k):
                d = u[j] - w[j]
                if not (d if d >= 0.0 else -d) <= ((u[j] if u[j] >= 0.0 else -u[j])
                                                   + (w[j] if w[j] >= 0.0 else -w[j])) * rounding:
                    moved = True
                else:
                    d = 0.0
                du[m, j] = d
            if moved:
                r[m] = i
                m += 1
            if tick(&work, VAR_WORK * (p.ptr[i + 1] - p.ptr[i]) + k):
                interrupted = True
                break
    free(u)
    if interrupted:
        reraise()
    return rows[:m], dU[:m]


cdef inline bint _before(const Breakpoint* a, const Breakpoint* b) noexcept nogil:
    return a.t < b.t


cdef void _merge_sort(Breakpoint* a, Breakpoint* tmp, Py_ssize_t m) noexcept nogil:
    """Sort a[:m] by t (stable, bottom-up; runs of 8 by insertion first)."""
    cdef Py_ssize_t width, lo, mid, hi, i, j, out
    cdef Breakpoint x
    cdef Breakpoint* src = a
    cdef Breakpoint* dst = tmp
    cdef Breakpoint* swap
    for lo in range(0, m, 8):
        hi = lo + 8 if lo + 8 < m else m
        for i in range(lo + 1, hi):
            x = a[i]
            j = i
            while j > lo and _before(&x, &a[j - 1]):
                a[j] = a[j - 1]
                j -= 1
            a[j] = x
    width = 8
    while width < m:
        lo = 0
        while lo < m:
            mid = lo + width if lo + width < m else m
            hi = lo + 2 * width if lo + 2 * width < m else m
            i, j, out = lo, mid, lo
            while i < mid and j < hi:
                if _before(&src[j], &src[i]):
                    dst[out] = src[j]
                    j += 1
                else:
                    dst[out] = src[i]
                    i += 1
                out += 1
            while i < mid:
                dst[out] = src[i]
                i += 1
                out += 1
            while j < hi:
                dst[out] = src[j]
                j += 1
                out += 1
            lo = hi
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != a:
        memcpy(a, src, m * sizeof(Breakpoint))


cdef int _exact_intercepts(const Prob* p, const double[:, :] F, const double* b0,
                           double* b, long long* work) noexcept nogil:
    """The exact intercepts of the slot functions h = -kappa F P into ``b``: 1; 0 where the
    Python step decides (a NaN breakpoint, tied breakpoints of different rises, the
    compiled search's own refusals); -1: no memory; INTERRUPTED: a signal handler ran."""
    cdef int i, v, j, k = p.k, status = 0
    cdef Py_ssize_t n_bp = p.nv, c, at
    cdef double sig, cv
    cdef Breakpoint* bp = <Breakpoint*> malloc(2 * n_bp * sizeof(Breakpoint) + 1)
    cdef double* cum = <double*> malloc((n_bp + k) * sizeof(double) + 1)
    cdef double* t = <double*> malloc(n_bp * sizeof(double) + 1)
    cdef Py_ssize_t* start = <Py_ssize_t*> malloc((2 * k + 1) * sizeof(Py_ssize_t))
    cdef double* scratch = <double*> malloc(2 * k * sizeof(double) + 1)
    cdef Slot* slots = <Slot*> malloc(k * sizeof(Slot) + 1)
    cdef Py_ssize_t* fill
    cdef double* h
    cdef double* base
    if (bp == NULL or cum == NULL or t == NULL or start == NULL or scratch == NULL
            or slots == NULL):
        status = -1
    else:
        fill = start + k + 1
        h, base = scratch, scratch + k
        # slot j's breakpoints at bp[start[j]:start[j + 1]], in the order of the variables
        for j in range(k + 1):
            start[j] = 0
        for v in range(p.nv):
            start[v_s1(p, v) + 1] += 1
        for j in range(k):
            start[j + 1] += start[j]
            fill[j] = start[j]
            base[j] = 0.0
        status = 1
        for i in range(p.n):
            for j in range(k):
                h[j] = F[i, j]
            _centred(h, k, p.kappa)
            for v in range(p.ptr[i], p.ptr[i + 1]):
                j = v_s1(p, v)
                cv = v_c1(p, v)
                sig = (cv > 0.0) - (cv < 0.0)
                at = fill[j]
                bp[at].t = -sig * v_lin(p, v) - h[j]
                bp[at].rise = v_hi(p, v) - v_lo(p, v)
                if bp[at].t != bp[at].t:
                    status = 0
                base[j] += v_lo(p, v) if sig > 0.0 else -v_hi(p, v)
                fill[j] += 1
            if tick(work, VAR_WORK * (p.ptr[i + 1] - p.ptr[i]) + k):
                status = INTERRUPTED
                break
        for j in range(k):
            if status != 1:
                break
            c = start[j + 1] - start[j]
            _merge_sort(&bp[start[j]], &bp[n_bp], c)
            if tick(work, SORT_WORK * c):
                status = INTERRUPTED
                break
            # cum[start[j] + j: ...]: the slot's m + 1 cumulative slopes
            at = start[j] + j
            cum[at] = 0.0
            for i in range(c):
                t[start[j] + i] = bp[start[j] + i].t
                if i > 0 and bp[start[j] + i].t == bp[start[j] + i - 1].t and (
                        bp[start[j] + i].rise != bp[start[j] + i - 1].rise):
                    status = 0          # the rounding of the slopes depends on the tie order
                cum[at + i + 1] = (bp[start[j]].rise if i == 0
                                   else cum[at + i] + bp[start[j] + i].rise)
            for i in range(c + 1):
                cum[at + i] += base[j]
                if not isfinite(cum[at + i]):
                    status = 0
            slots[j].t = &t[start[j]]
            slots[j].cum = &cum[at]
            slots[j].m = c
        for j in range(k):
            if status == 1 and not isfinite(b0[j]):
                status = 0
        if status == 1:
            status = slot_search(slots, k, b0, b)
    free(bp)
    free(cum)
    free(t)
    free(start)
    free(scratch)
    free(slots)
    return status


cdef int _level_arrays(const Prob* p, const double* alpha, const unsigned char* is_label,
                       double* V, unsigned char* support, bint* settled,
                       double* group_sums, long long* work) noexcept nogil:
    """V = -kappa U P (n, k), the support and the settled test of a level's solution: 0;
    INTERRUPTED where a signal handler ran."""
    cdef int i, v, k = p.k
    cdef bint moving
    group_sums_of(p, alpha, group_sums)
    settled[0] = True
    for i in range(p.n):
        _sums_of(p, alpha, i, &V[<Py_ssize_t> i * k])
        _centred(&V[<Py_ssize_t> i * k], k, p.kappa)
        support[i] = 0
        moving = False
        for v in range(p.ptr[i], p.ptr[i + 1]):
            if alpha[v] != 0.0:
                support[i] = 1
            if at_moving_bound(p, alpha, v, group_sums):
                moving = True
        if moving and is_label[i]:
            settled[0] = False
        if tick(work, VAR_WORK * (p.ptr[i + 1] - p.ptr[i]) + k):
            return INTERRUPTED
    return 0


def level_tail(problem, const double[::1] alpha, const double[:, :] F, const double[::1] b0,
               bint exact, const unsigned char[::1] is_label):
    """What a probability chain's level keeps of its solution ``alpha`` (see the Design
    note): (b, V, support, settled).

    Parameters
    ----------
    problem : msvm._problem.DualProblem
        The level's dual.
    alpha : ndarray of shape (n_vars,)
        Its solution.
    F : ndarray of shape (n_samples, k)
        The scores K U(alpha) the row source holds (any strides).
    b0 : ndarray of shape (k,)
        The solver's KKT estimate -mu of the intercepts.
    exact : bool
        Whether the intercepts are the exact search's (``msvm._snapshot.intercept_solver``
        says 'exact'); otherwise ``b`` is None.
    is_label : ndarray of uint8, shape (n_samples,)
        The samples of the chain's up-weighted class.

    Returns
    -------
    b : ndarray of shape (k,) or None
        The exact slot intercepts, or None: the caller forms them (not ``exact``, or the
        Python step decides, see the Design note).
    V : ndarray of shape (n_samples, k)
        The slot coefficients -kappa U P.
    support : ndarray of bool, shape (n_samples,)
    settled : bool
        No sample of ``is_label`` has a variable at a bound that grows with its weight.
    """
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int k = p.k, status = 0
    cdef bint settled = True
    cdef long long work = 0
    if (alpha.shape[0] != p.nv or F.shape[0] != p.n or F.shape[1] != k
            or b0.shape[0] != k or is_label.shape[0] != p.n):
        raise ValueError("the level's arrays do not match the problem")
    V = np.empty((p.n, k))
    support = np.empty(p.n, dtype=bool)
    b = np.empty(k)
    cdef double[:, ::1] v_view = V
    cdef unsigned char[::1] s_view = support.view(np.uint8)
    cdef double[::1] b_view = b
    cdef double* sums = <double*> malloc(p.ngroups * sizeof(double) + 1)
    if sums == NULL:
        raise MemoryError()
    with nogil:
        status = _level_arrays(p, &alpha[0] if p.nv else NULL, &is_label[0] if p.n else NULL,
                               &v_view[0, 0] if p.n else NULL, &s_view[0] if p.n else NULL,
                               &settled, sums, &work)
        if status == 0 and exact and 0 < k < PLAIN_SUM_SLOTS and p.equality:
            status = _exact_intercepts(p, F, &b0[0], &b_view[0], &work)
    free(sums)
    if status == INTERRUPTED:
        reraise()
    if status < 0:
        raise MemoryError()
    return (b if status == 1 else None), V, support, bool(settled)
