# Design
# ======
# The exact intercept search of msvm/_intercept.py (``slot_intercepts_from_breakpoints``)
# after its sort, in C: given per slot j the sorted breakpoints t_j and cumulative slopes
# cum_j of the slot's convex piecewise-linear loss phi_j(b_j), find the common subgradient
# lam (the smallest slope value among the cum_j in [max_j cum_j[0], min_j cum_j[-1]] at which
# the sum over j of the largest minimizer of phi_j(b) - lam b reaches 0; the largest such
# value if none does), the intervals [bmin_j, bmax_j] of minimizers at lam, and the common
# shift of the KKT estimate b0 clipped to them that sums to 0 (a bisection), as the Python
# search computes them: the same comparisons and the same additions in the same order, so
# the same bits.  Only where that order is the plain one: fewer than 8 slots (NumPy sums
# fewer than 8 values one after another from 0; the Python search's bisection runs on Python
# floats there) and finite slopes and b0; otherwise None, and the caller runs the Python
# search.  At 400 samples and k = 3 the Python search took 90 to 200 us of a weighted
# probability refit (its NumPy calls on arrays of a few hundred values), the compiled one a
# few us.  The union of the candidates is scanned in increasing order with one pointer per
# slot (the test is nondecreasing in lam), O(n k) in all.  ``slot_search`` (declared in
# _intercepts.pxd) is the search on C arrays, which ``plain_slot_search`` and the probability
# chains' compiled level step (_level_loop.pyx) call.

import numpy as np
from libc.math cimport isfinite, INFINITY, fabs
from libc.stdlib cimport malloc, free

# the Python search's bisection halvings at most (``msvm._intercept._shift_bisection``)
DEF MAX_HALVINGS = 200
# below this many slots the sums are the plain ones (``msvm._intercept.SCALAR_SHIFT_SLOTS``)
DEF PLAIN_SUM_SLOTS = 8


cdef Py_ssize_t _search_right(const double* a, Py_ssize_t n, double x) noexcept nogil:
    """np.searchsorted(a[:n], x, side='right')."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef Py_ssize_t _search_left(const double* a, Py_ssize_t n, double x) noexcept nogil:
    """np.searchsorted(a[:n], x, side='left')."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef double _largest_at(const Slot* s, Py_ssize_t r) noexcept nogil:
    """The largest minimizer of a slot at a slope whose right search index less one is r."""
    if r < 0:
        return -INFINITY
    if r == s.m:
        return INFINITY
    return s.t[r]


cdef double _common_slope(const Slot* slots, int k, double lam_min, double lam_max,
                          Py_ssize_t* pos, bint* found) noexcept nogil:
    """The smallest candidate (a cum value in [lam_min, lam_max]) at which the sum of the
    slots' largest minimizers is >= 0, else the largest candidate; ``found`` false when
    there is no candidate.  ``pos``: k work entries."""
    cdef int j, nxt
    cdef double c, total, last = 0.0, best
    cdef Py_ssize_t* end = pos + k
    found[0] = False
    for j in range(k):
        pos[j] = _search_left(slots[j].cum, slots[j].m + 1, lam_min)
        end[j] = _search_right(slots[j].cum, slots[j].m + 1, lam_max)
    while True:
        # the next candidate in increasing order: the least of the slots' next cum values
        nxt = -1
        for j in range(k):
            if pos[j] < end[j] and (nxt < 0 or slots[j].cum[pos[j]] < best):
                nxt, best = j, slots[j].cum[pos[j]]
        if nxt < 0:
            return last
        c = best
        found[0] = True
        last = c
        total = 0.0
        for j in range(k):
            total += _largest_at(&slots[j], _search_right(slots[j].cum, slots[j].m + 1, c) - 1)
        if total >= 0.0:
            return c
        # past every cum value equal to c (duplicates are the same candidate)
        for j in range(k):
            while pos[j] < end[j] and slots[j].cum[pos[j]] <= c:
                pos[j] += 1


cdef void _minimizer_interval(const Slot* s, double lam, double* lo, double* hi) noexcept nogil:
    """[lo, hi]: the minimizers of phi(b) - lam b (``msvm._intercept._interval_sums``)."""
    cdef Py_ssize_t m = s.m, r
    cdef double lam_j = lam
    if s.cum[0] > lam_j:            # Python's max(lam, cum[0]), then min(., cum[-1])
        lam_j = s.cum[0]
    if s.cum[m] < lam_j:
        lam_j = s.cum[m]
    r = _search_left(s.cum, m + 1, lam_j)
    lo[0] = -INFINITY if r == 0 else (INFINITY if r > m else s.t[r - 1])
    r = _search_right(s.cum, m + 1, lam_j) - 1
    hi[0] = -INFINITY if r < 0 else (INFINITY if r == m else s.t[r])


cdef double _clipped_total(const double* b0, const double* bmin, const double* bmax, int k,
                           double theta) noexcept nogil:
    """sum_j clip(b0_j + theta, bmin_j, bmax_j), one after another from 0."""
    cdef double acc = 0.0, value
    cdef int j
    for j in range(k):
        value = b0[j] + theta
        acc += bmax[j] if value > bmax[j] else (bmin[j] if value < bmin[j] else value)
    return acc


cdef double _largest_finite(const double* b0, const double* bmin, const double* bmax,
                           int k) noexcept nogil:
    """The largest |value| of the finite bounds and of b0 (``_largest_finite_bound``)."""
    cdef double bound = 0.0
    cdef int j
    for j in range(k):
        if isfinite(bmin[j]) and fabs(bmin[j]) > bound:
            bound = fabs(bmin[j])
        if isfinite(bmax[j]) and fabs(bmax[j]) > bound:
            bound = fabs(bmax[j])
        if fabs(b0[j]) > bound:
            bound = fabs(b0[j])
    return bound


cdef double _common_shift(const double* b0, const double* bmin, const double* bmax, int k,
                          double span) noexcept nogil:
    """0.5 (a + c) of the final bracket of the bisection for the shift in [-2 span, 2 span]
    at which the clipped sum reaches 0 (``_shift_bisection``)."""
    cdef double a = -2.0 * span, c = 2.0 * span, theta
    cdef int i
    for i in range(MAX_HALVINGS):
        theta = 0.5 * (a + c)
        if theta == a or theta == c:
            break
        if _clipped_total(b0, bmin, bmax, k, theta) < 0.0:
            a = theta
        else:
            c = theta
    return 0.5 * (a + c)


cdef int _residue_slot(const double* b, const double* bmin, const double* bmax,
                       int k) noexcept nogil:
    """The slot that takes the last rounding residue of the sum: the first with room, else
    the first of the widest intervals (np.argmax)."""
    cdef int j, best = 0
    cdef double width, widest
    for j in range(k):
        if b[j] > bmin[j] and b[j] < bmax[j]:
            return j
    widest = bmax[0] - bmin[0]
    for j in range(1, k):
        width = bmax[j] - bmin[j]
        if width > widest:
            best, widest = j, width
    return best


cdef bint _kept_slots(list slots, Slot* s, list views) except -1:
    """Fill ``s`` with the slots' arrays (kept alive in ``views``); False where a slope is
    not finite or the arrays disagree in length."""
    cdef int j
    cdef Py_ssize_t i
    cdef const double[::1] t_view
    cdef const double[::1] cum_view
    for j in range(len(slots)):
        t_view = slots[j][0]
        cum_view = slots[j][1]
        views.append((t_view, cum_view))
        s[j].m = t_view.shape[0]
        if cum_view.shape[0] != s[j].m + 1:
            return False
        s[j].t = &t_view[0] if s[j].m > 0 else NULL
        s[j].cum = &cum_view[0]
        for i in range(s[j].m + 1):
            if not isfinite(s[j].cum[i]):
                return False
    return True


cdef double _slope_search(const Slot* s, int k, Py_ssize_t* pos, bint* found) noexcept nogil:
    """The common slope lam of the search (``found`` false: no candidate)."""
    cdef double lam_min = s[0].cum[0], lam_max = s[0].cum[s[0].m], scale = 1.0, size
    cdef int j
    for j in range(k):
        if s[j].cum[0] > lam_min:
            lam_min = s[j].cum[0]
        if s[j].cum[s[j].m] < lam_max:
            lam_max = s[j].cum[s[j].m]
        size = fabs(s[j].cum[0])
        if fabs(s[j].cum[s[j].m]) > size:
            size = fabs(s[j].cum[s[j].m])
        if size > scale:
            scale = size
    if lam_min > lam_max and lam_min - lam_max <= 1e-12 * scale:
        found[0] = True
        return 0.5 * (lam_min + lam_max)
    return _common_slope(s, k, lam_min, lam_max, pos, found)


cdef int slot_search(const Slot* s, int k, const double* b0, double* b) noexcept nogil:
    """The search of :func:`plain_slot_search` on C arrays: the intercepts into ``b`` (k);
    1 where found and finite, 0 where the caller runs the Python search (no candidate,
    intercepts that are not finite), -1 where the work arrays cannot be allocated.  The
    slots' cum values must be finite and k below PLAIN_SUM_SLOTS (the caller checks)."""
    cdef int j
    cdef double lam, shift, y, total = 0.0
    cdef bint found = False
    cdef Py_ssize_t* pos = <Py_ssize_t*> malloc(2 * k * sizeof(Py_ssize_t)
                                                + 2 * k * sizeof(double) + 1)
    cdef double* bmin
    cdef double* bmax
    if pos == NULL:
        return -1
    bmin = <double*> (pos + 2 * k)
    bmax = bmin + k
    lam = _slope_search(s, k, pos, &found)
    if not found:
        free(pos)
        return 0
    for j in range(k):
        _minimizer_interval(&s[j], lam, &bmin[j], &bmax[j])
    shift = _common_shift(b0, bmin, bmax, k, 2.0 * (_largest_finite(b0, bmin, bmax, k) + 1.0))
    for j in range(k):
        y = b0[j] + shift                    # np.clip(y, bmin, bmax)
        y = y if y > bmin[j] else bmin[j]
        b[j] = y if y < bmax[j] else bmax[j]
        if not isfinite(b[j]):
            free(pos)
            return 0
    for j in range(k):
        total += b[j]
    b[_residue_slot(b, bmin, bmax, k)] -= total
    free(pos)
    return 1


def plain_slot_search(list slots, const double[::1] b0):
    """The intercepts of ``msvm._intercept.slot_intercepts_from_breakpoints`` (the same
    bits), or None where the compiled search does not apply (8 or more slots, a slope or a
    b0 entry that is not finite, no candidate, intercepts that are not finite): the
    caller then runs the Python search.

    Parameters
    ----------
    slots : list of k (t, cum) pairs
        Per slot the sorted breakpoints (m,) and cumulative slopes (m + 1,), float64,
        C-contiguous (``msvm._intercept._slot_breakpoints``).
    b0 : ndarray of shape (k,)
        The KKT estimate of the intercepts.

    Returns
    -------
    b : ndarray of shape (k,) or None
    """
    cdef int k = len(slots), j, status = 0
    cdef Slot* s
    cdef double[::1] b
    if k < 1 or k >= PLAIN_SUM_SLOTS or b0.shape[0] != k:
        return None
    for j in range(k):
        if not isfinite(b0[j]):
            return None
    views = []
    s = <Slot*> malloc(k * sizeof(Slot) + 1)
    if s == NULL:
        raise MemoryError()
    out = np.empty(k)
    b = out
    try:
        if not _kept_slots(slots, s, views):
            return None
        with nogil:
            status = slot_search(s, k, &b0[0], &b[0])
        if status < 0:
            raise MemoryError()
        return out if status == 1 else None
    finally:
        free(s)
