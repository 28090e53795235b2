# Design
# ======
# The per-term passes of the smoothed primal (msvm/_primal.py), done on the compact problem
# layout so that a Newton step allocates nothing per dual variable.  Every dual variable v of
# a DualProblem is one hinge term of the primal with margin
#
#     z_v = a_v + <d_v, F_i>,   F_i = b + V^T x_i  (the decision values of sample i = i(v)),
#
# smoothed (Nesterov, parameter mu) to l_v(z) = max_{lo_v <= a <= hi_v} a z - mu/2 a^2, whose
# maximizer is alpha_v(z) = clip(z / mu, lo_v, hi_v): the term's dual point.  The Python layer
# keeps only (n, k) arrays (F, a direction dF, slot sums U) and calls one pass per quantity:
#
# * `value_and_slot_sums`: sum_v l_v(z_v) and U_i = sum_{v of i} alpha_v(z_v) d_v (the
#   gradient is X^T U up to the projection), one pass, over a range of samples (the caller
#   accumulates X^T U chunk by chunk, so U never exists for all samples at once);
# * `line_slope_and_curvature`: sum_v dz_v alpha_v(z_v - t dz_v), dz_v = <d_v, dF_i>, the
#   loss part of the derivative along a step t dF, and that derivative's own slope, sum
#   dz_v^2 / mu over the terms inside their quadratic piece at t, so that the exact line
#   search takes Newton steps on its piecewise-linear derivative (exact once it is on the
#   right piece).  With ``keep`` the pass also keeps the terms whose piece can change for
#   steps s in [0, t] (margin, dz and variable: the others are clipped at one bound at both
#   ends, so at every s in between, and enter as one constant), and
#   `kept_line_slope_and_curvature` evaluates any s in [0, t] from those alone: the search's
#   later evaluations (three or four a step) read the terms that can still change (at 100k
#   samples about the 14 % free ones) instead of all of them;
# * `free_changes`: the terms that entered or left the quadratic piece (mu lo_v <= z_v <=
#   mu hi_v) since the caller's last look (a 0/1 byte per variable), as arrays of their
#   sample, slots, coefficients and sign: the Hessian is updated by their blocks only (after
#   the first steps of a stage few terms change, so a Newton step costs O(n_vars) plus the
#   changed terms' d^2 work instead of the free terms'); `value_sums_and_changes` does both
#   in the one pass the gradient needs anyway (a Newton step reads the terms once less);
# * `dual_point`: alpha_v(z_v) for every v, the dual start handed to the solver.
#
# Duals with group caps (WeightedRobustMSVM, AdaptiveWeightedSVM) are smoothed group by group
# (msvm/_capped_terms.py): `capped_project` (the dual point, free set and binding caps of
# every group) and `capped_line` (the line search's derivative and slope) are their compiled
# per-group passes, on (groups, k - 1) arrays (see the note above `_project_group`).
#
# A pass over ten million variables takes tens of milliseconds; the Python layer checks for
# signals between passes, so none of them polls.

import numpy as np
from libc.stdlib cimport free, malloc, realloc

from ._types cimport Prob, v_s1, v_c1, v_s2, v_c2, v_lin, v_lo, v_hi
from ._problem cimport ProblemArrays


cdef inline double _margin(const Prob* p, int v, const double* Fi) noexcept nogil:
    """z_v = a_v + <d_v, F_i>."""
    cdef int j2 = v_s2(p, v)
    cdef double z = v_lin(p, v) + v_c1(p, v) * Fi[v_s1(p, v)]
    if j2 >= 0:
        z += v_c2(p, v) * Fi[j2]
    return z


cdef inline unsigned char _on_piece(const Prob* p, int v, double z,
                                    double mu) noexcept nogil:
    """Whether term v with margin z is on the quadratic piece: mu lo_v <= z <= mu hi_v
    (kinks count)."""
    return (mu * v_lo(p, v) <= z) & (z <= mu * v_hi(p, v))


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    """x clipped to [lo, hi] (as min and max: no branch where the outcomes interleave)."""
    return min(max(x, lo), hi)


cdef inline void _add_slope_term(double x, double dz, double lo, double hi, double* total,
                                 double* curv) noexcept nogil:
    """One term's part of the line search's derivative, dz alpha(x) (alpha = x clipped to
    its box), and of that derivative's slope times mu, dz^2 strictly inside the box; without
    branches (the terms inside and outside are interleaved)."""
    curv[0] += (lo < x) * (x < hi) * dz * dz
    total[0] += dz * _clip(x, lo, hi)


cdef class SmoothedTerms:
    """The hinge terms of a DualProblem, smoothed by mu (see the module's Design note)."""
    cdef ProblemArrays pa
    cdef public double mu
    # the terms kept by the last ``keep`` pass of the line search: two doubles each (margin
    # / mu at the step 0, dz) and their variables; the constant of the others; the step up
    # to which they are valid (-1: none kept) and the mu they were kept at.  At most kmax
    # terms are kept (20 bytes each: the memory of one (n, k) array of doubles)
    cdef double* kept
    cdef int* kvar
    cdef Py_ssize_t kn, kcap, kmax
    cdef double kconst, kt, kmu

    def __cinit__(self):
        self.kept = NULL
        self.kvar = NULL
        self.kn = 0
        self.kcap = 0
        self.kt = -1.0

    def __dealloc__(self):
        self._free_kept()

    def __init__(self, problem, double mu=1.0):
        self.pa = ProblemArrays(problem, problem.k)
        self.mu = mu
        self.kmax = max(4096, (<Py_ssize_t> self.pa.p.n) * self.pa.p.k * 8 // 20)

    cdef void _check(self, const double[:, ::1] F) except *:
        if F.shape[0] != self.pa.p.n or F.shape[1] != self.pa.p.k:
            raise ValueError("F must be (n_samples, k)")

    def value_and_slot_sums(self, const double[:, ::1] F, double[:, ::1] U=None,
                            int start=0, int stop=-1):
        """sum_v l_v(z_v) over the samples start:stop (stop -1: all) at the decision values
        F (n, k); with U, also write the slot sums of their dual point into U's rows
        0:stop-start, U_i = sum_{v of sample i} alpha_v(z_v) d_v."""
        cdef Py_ssize_t m = 0
        stop = self._range(F, start, stop)
        return self._sums_pass(F, U, None, None, start, stop, &m, False)

    def pattern_slot_sums(self, const double[:, ::1] F, double[:, ::1] U,
                          unsigned char[::1] free, int start=0, int stop=-1):
        """The slot sums of samples start:stop (into U's rows 0:stop-start) for the quadratic
        model of a free pattern: alpha_v = z_v / mu, unclipped, for the terms marked in
        ``free`` (left unchanged), clip(z_v / mu, lo_v, hi_v) for the others.  At the
        solution for a larger mu with that pattern, this is the gradient's part that a Newton
        step with the pattern's Hessian at the current mu removes (see msvm/_primal.py)."""
        cdef Py_ssize_t m = 0
        stop = self._range(F, start, stop)
        self._check_free(free)
        self._sums_pass(F, U, free, None, start, stop, &m, True)

    def value_sums_and_changes(self, const double[:, ::1] F, double[:, ::1] U,
                               unsigned char[::1] free, int start=0, int stop=-1):
        """`value_and_slot_sums` and `free_changes` of the samples start:stop in one pass.

        Returns (loss, changes), changes the tuple `free_changes` returns (``free`` is
        updated in place as there)."""
        cdef Py_ssize_t m = 0
        stop = self._range(F, start, stop)
        self._check_free(free)
        ids = np.empty(self.pa.p.ptr[stop] - self.pa.p.ptr[start], dtype=np.int32)
        loss = self._sums_pass(F, U, free, ids, start, stop, &m, False)
        return loss, self._changed_terms(ids[:m], free)

    cdef int _range(self, const double[:, ::1] F, int start, int stop) except -1:
        """Check F and the sample range start:stop; returns stop (-1: all samples)."""
        self._check(F)
        if stop < 0:
            stop = self.pa.p.n
        if not 0 <= start <= stop <= self.pa.p.n:
            raise ValueError("sample range out of bounds")
        return stop

    cdef void _check_free(self, unsigned char[::1] free) except *:
        if free.shape[0] != self.pa.p.nv:
            raise ValueError("free must have one entry per dual variable")

    cdef double _sums_pass(self, const double[:, ::1] F, double[:, ::1] U,
                           unsigned char[::1] free, int[::1] ids, int start, int stop,
                           Py_ssize_t* m, bint frozen) except? -1.0:
        """The loss of samples start:stop; the slot sums into U (when given); with ``free``,
        the terms whose membership of the quadratic piece changed into ``ids[:m]`` (and
        ``free`` updated), or with ``frozen`` the slot sums of ``free``'s quadratic model
        (`pattern_slot_sums`; ``free`` read only, the loss meaningless)."""
        cdef const Prob* p = &self.pa.p
        cdef int i, v, j2
        cdef Py_ssize_t r, count = 0
        cdef double z, a, loss = 0.0, mu = self.mu
        cdef unsigned char now
        cdef bint sums = U is not None, track = free is not None and not frozen
        if sums and (U.shape[0] < stop - start or U.shape[1] != p.k):
            raise ValueError("U must have stop - start rows and k columns")
        with nogil:
            for i in range(start, stop):
                r = i - start
                if sums:
                    for v in range(p.k):
                        U[r, v] = 0.0
                for v in range(p.ptr[i], p.ptr[i + 1]):
                    z = _margin(p, v, &F[i, 0])
                    if track:
                        now = _on_piece(p, v, z, mu)
                        if now != free[v]:
                            free[v] = now
                            ids[count] = v
                            count += 1
                    a = z / mu
                    if not (frozen and free[v]):
                        a = _clip(a, v_lo(p, v), v_hi(p, v))
                    # without a branch on a == 0 (most terms, interleaved with the others)
                    loss += a * z - 0.5 * mu * a * a
                    if sums:
                        U[r, v_s1(p, v)] += a * v_c1(p, v)
                        j2 = v_s2(p, v)
                        if j2 >= 0:
                            U[r, j2] += a * v_c2(p, v)
        m[0] = count
        return loss

    def line_slope_and_curvature(self, const double[:, ::1] F, const double[:, ::1] dF,
                                 double t, bint keep=False):
        """(sum_v dz_v alpha_v(z_v - t dz_v), sum dz_v^2 / mu over the terms strictly inside
        their quadratic piece at t), with z at F and dz = <d_v, dF_i>: the loss part of the
        derivative along the step and the slope of that part (the derivative is piecewise
        linear in t; at a kink this is the slope of the pieces' common interior, a safeguarded
        Newton step only needs some slope there).

        With ``keep`` (t >= 0), the terms whose piece can change for a step in [0, t] are kept
        for `kept_line_slope_and_curvature` (until the next ``keep`` or `release_line`).
        More of them than fit in the memory of one (n, k) array of doubles (20 bytes a term:
        a long step early in a stage can move over half the terms), or memory that cannot be
        had, keep none (`kept_step` is then -1)."""
        cdef const Prob* p = &self.pa.p
        cdef int i, v, j1, j2
        cdef double dz, x0, x, lo, hi, total = 0.0, curv = 0.0, inv = 1.0 / self.mu
        cdef double kept_curv
        cdef bint ok = True
        cdef double* kept = NULL
        cdef int* kvar = NULL
        cdef Py_ssize_t kn = 0, room = 0
        cdef const double* Fi
        cdef const double* dFi
        self._check(F)
        self._check(dF)
        if keep and not t >= 0.0:
            raise ValueError("keep needs a step t >= 0")
        if keep:
            self.kn = 0
            self.kt = -1.0
        with nogil:
            for i in range(p.n):
                Fi = &F[i, 0]
                dFi = &dF[i, 0]
                if keep and ok and kn + p.ptr[i + 1] - p.ptr[i] > room:
                    self.kn = kn
                    ok = self._reserve(p.ptr[i + 1] - p.ptr[i])
                    kept, kvar, room = self.kept, self.kvar, self.kcap
                for v in range(p.ptr[i], p.ptr[i + 1]):
                    j1 = v_s1(p, v)
                    j2 = v_s2(p, v)
                    dz = v_c1(p, v) * dFi[j1]
                    x0 = v_lin(p, v) + v_c1(p, v) * Fi[j1]
                    if j2 >= 0:
                        dz += v_c2(p, v) * dFi[j2]
                        x0 += v_c2(p, v) * Fi[j2]
                    x0 *= inv
                    x = x0 - t * (dz * inv)
                    lo = v_lo(p, v)
                    hi = v_hi(p, v)
                    _add_slope_term(x, dz, lo, hi, &total, &curv)
                    if keep and ok:
                        # every term is written (into the same cached slot until one is
                        # kept), and the count moves past the ones not clipped at one bound
                        # at both ends
                        kept[2 * kn] = x0
                        kept[2 * kn + 1] = dz
                        kvar[kn] = v
                        kn += ((x0 > lo) | (x > lo)) & ((x0 < hi) | (x < hi)) & (dz != 0.0)
        if keep:
            self.kn = kn
        if keep and ok:
            # the others' part: the total less the kept terms' (a pass over those alone)
            self.kt, self.kmu = t, self.mu
            self.kconst = total - self._kept_sums(t, &kept_curv)
        elif keep:
            self._free_kept()
        return total, curv * inv

    cdef bint _reserve(self, Py_ssize_t more) noexcept nogil:
        """Room for ``more`` terms past the kept ones (their arrays grown by half, up to
        kmax terms); False (nothing kept) when they would exceed kmax or the memory cannot be
        had."""
        cdef Py_ssize_t cap
        cdef void* mem
        if self.kn + more <= self.kcap:
            return True
        if self.kn + more > self.kmax:
            return False
        cap = min(self.kcap + self.kcap // 2 + 4096, self.kmax)
        if cap < self.kn + more:
            cap = self.kn + more
        mem = realloc(self.kept, 2 * cap * sizeof(double))
        if mem == NULL:
            return False
        self.kept = <double*> mem
        mem = realloc(self.kvar, cap * sizeof(int))
        if mem == NULL:
            return False
        self.kvar = <int*> mem
        self.kcap = cap
        return True

    cdef double _kept_sums(self, double t, double* curv_out) noexcept nogil:
        """The kept terms' part of the loss slope at step t; their part of the curvature,
        times mu, into curv_out."""
        cdef const Prob* p = &self.pa.p
        cdef Py_ssize_t r
        cdef int v
        cdef double dz, total = 0.0, curv = 0.0, inv = 1.0 / self.kmu
        cdef const double* kt = self.kept
        for r in range(self.kn):
            dz = kt[2 * r + 1]
            v = self.kvar[r]
            _add_slope_term(kt[2 * r] - t * (dz * inv), dz, v_lo(p, v), v_hi(p, v), &total,
                            &curv)
        curv_out[0] = curv
        return total

    @property
    def kept_step(self):
        """The step t of the last ``keep`` pass (-1 when no terms are kept)."""
        return self.kt

    @property
    def n_kept(self):
        """How many terms the last ``keep`` pass kept."""
        return self.kn if self.kt >= 0.0 else 0

    def kept_line_slope_and_curvature(self, double t):
        """`line_slope_and_curvature` at a step t in [0, kept_step] (at the F and dF of the
        last ``keep`` pass), from the kept terms and the others' constant (the same values
        up to the order of the sum)."""
        cdef double total, curv = 0.0
        if self.kt < 0.0 or not 0.0 <= t <= self.kt:
            raise ValueError("no kept terms for this step (line_slope_and_curvature with "
                             "keep=True first, at a step >= t)")
        if self.mu != self.kmu:
            raise ValueError("the kept terms belong to another mu")
        with nogil:
            total = self.kconst + self._kept_sums(t, &curv)
        return total, curv / self.kmu

    def release_line(self):
        """Free the kept terms."""
        self._free_kept()

    cdef void _free_kept(self) noexcept nogil:
        free(self.kept)
        free(self.kvar)
        self.kept = NULL
        self.kvar = NULL
        self.kn = 0
        self.kcap = 0
        self.kt = -1.0

    def free_changes(self, const double[:, ::1] F, unsigned char[::1] free, int start=0,
                     int stop=-1):
        """The terms of samples start:stop (stop -1: all) whose membership of the quadratic
        piece changed at F.

        A term is free when mu lo_v <= z_v <= mu hi_v (a term at a kink counts).  ``free``
        (n_vars, 0/1) holds the membership the caller last saw and is updated in place.
        Returns (sample, slot1, coef1, slot2, coef2, sign) of the changed terms: sign +1 for a
        term that became free, -1 for one that left; slot2 is -1 for one-slot terms.  With
        ``free`` all zero this lists every free term."""
        cdef Py_ssize_t m = 0
        stop = self._range(F, start, stop)
        self._check_free(free)
        ids = np.empty(self.pa.p.ptr[stop] - self.pa.p.ptr[start], dtype=np.int32)
        self._sums_pass(F, None, free, ids, start, stop, &m, False)
        return self._changed_terms(ids[:m], free)

    def _changed_terms(self, const int[::1] ids, const unsigned char[::1] free):
        """(sample, slot1, coef1, slot2, coef2, sign) of the terms ids (ascending), sign from
        their membership now in ``free``."""
        cdef const Prob* p = &self.pa.p
        cdef Py_ssize_t r, m = ids.shape[0]
        cdef int v, i = 0
        rows = np.empty(m, dtype=np.int32)
        s1 = np.empty(m, dtype=np.int32)
        s2 = np.empty(m, dtype=np.int32)
        c1 = np.empty(m)
        c2 = np.empty(m)
        sign = np.empty(m)
        cdef int[::1] rr = rows, ss1 = s1, ss2 = s2
        cdef double[::1] cc1 = c1, cc2 = c2, sg = sign
        with nogil:
            for r in range(m):
                v = ids[r]
                while p.ptr[i + 1] <= v:
                    i += 1
                rr[r] = i
                ss1[r] = v_s1(p, v)
                cc1[r] = v_c1(p, v)
                ss2[r] = v_s2(p, v)
                cc2[r] = v_c2(p, v) if v_s2(p, v) >= 0 else 0.0
                sg[r] = 1.0 if free[v] else -1.0
        return rows, s1, c1, s2, c2, sign

    def dual_point(self, const double[:, ::1] F, out=None):
        """alpha_v(z_v) = clip(z_v / mu, lo_v, hi_v) for every variable (n_vars,), written
        into ``out`` when given."""
        cdef const Prob* p = &self.pa.p
        cdef int i, v
        cdef double mu = self.mu
        self._check(F)
        alpha = np.empty(p.nv) if out is None else out
        cdef double[::1] a = alpha
        if a.shape[0] != p.nv:
            raise ValueError("out must have one entry per dual variable")
        with nogil:
            for i in range(p.n):
                for v in range(p.ptr[i], p.ptr[i + 1]):
                    a[v] = _clip(_margin(p, v, &F[i, 0]) / mu, v_lo(p, v), v_hi(p, v))
        return alpha


# ---------------------------------------------------------------------- capped groups
# The groups of a dual with group caps (msvm/_capped_terms.py), smoothed as a whole: the dual
# point of a group at margins z is the projection of y = z / mu onto its capped box,
# {lo <= a <= hi, sum a <= cap}: clip(y, lo, hi) when its sum is within the cap, else
# clip(y - lambda, lo, hi) with the lambda > 0 at which the sum is the cap.  That sum is
# piecewise linear and decreasing in lambda, with slope -(number of variables strictly inside
# their box) between its 2 p knots y - hi (a variable leaves hi) and y - lo (it reaches lo):
# the knots above 0 are sorted (insertion sort: p is k - 1) and walked until the sum reaches
# the cap, O(p log p) per group with no allocation.  Arrays are (groups, p), C order.

cdef inline int _insert_knot(double* knots, double* deltas, int m, double kv,
                             double dv) noexcept nogil:
    """Insert the knot kv (change of slope dv) into the sorted knots[:m]; returns m + 1."""
    cdef int r = m
    while r > 0 and knots[r - 1] > kv:
        knots[r] = knots[r - 1]
        deltas[r] = deltas[r - 1]
        r -= 1
    knots[r] = kv
    deltas[r] = dv
    return m + 1


cdef bint _project_group(const double* y, const double* lo, const double* hi, int p,
                         double cap, double* a, unsigned char* fr, double* knots,
                         double* deltas) noexcept nogil:
    """The projection of y (p) onto the capped box into a, its free set (lo < hi and
    lo <= y - lambda <= hi) into fr; whether the cap binds.  knots, deltas: 2 p each."""
    cdef int v, m = 0, r
    cdef double s = 0.0, slope = 0.0, lam = 0.0, prev = 0.0, e, f, at
    for v in range(p):
        a[v] = _clip(y[v], lo[v], hi[v])
        s += a[v]
    if not s > cap:
        for v in range(p):
            fr[v] = (lo[v] < hi[v]) & (lo[v] <= y[v]) & (y[v] <= hi[v])
        return False
    for v in range(p):
        e = y[v] - hi[v]
        f = y[v] - lo[v]
        if e <= 0.0 < f:
            slope -= 1.0
        # the knots above 0, sorted on insertion with their change of slope
        if e > 0.0:
            m = _insert_knot(knots, deltas, m, e, -1.0)
        if f > 0.0:
            m = _insert_knot(knots, deltas, m, f, 1.0)
    lam = -1.0
    for r in range(m):
        at = s + slope * (knots[r] - prev)
        if at <= cap:
            lam = prev + (cap - s) / slope if slope < 0.0 else knots[r]
            break
        s = at
        prev = knots[r]
        slope += deltas[r]
    if lam < 0.0:
        lam = prev                  # sum lo above the cap: every variable at lo
    for v in range(p):
        e = y[v] - lam
        a[v] = _clip(e, lo[v], hi[v])
        fr[v] = (lo[v] < hi[v]) & (lo[v] <= e) & (e <= hi[v])
    return True


def capped_project(const double[:, ::1] z, double mu, const double[:, ::1] lo,
                   const double[:, ::1] hi, const double[::1] cap):
    """(a, free, binding): the projection a of z / mu onto every group's capped box
    (groups, p), its free set (bool, (groups, p)) and whether each group's cap binds."""
    cdef Py_ssize_t g, G = z.shape[0]
    cdef int v, p = z.shape[1]
    cdef double inv = 1.0 / mu
    if lo.shape[0] != G or hi.shape[0] != G or cap.shape[0] != G or lo.shape[1] != p \
            or hi.shape[1] != p:
        raise ValueError("z, lo, hi must be (groups, p) and cap (groups,)")
    a_arr = np.empty((G, p))
    free_arr = np.empty((G, p), dtype=np.uint8)
    bind_arr = np.empty(G, dtype=np.uint8)
    cdef double[:, ::1] a = a_arr
    cdef unsigned char[:, ::1] fr = free_arr
    cdef unsigned char[::1] bd = bind_arr
    cdef double* work = <double*> malloc((5 * p + 1) * sizeof(double))
    if work == NULL:
        raise MemoryError()
    with nogil:
        for g in range(G):
            for v in range(p):
                work[v] = z[g, v] * inv
            bd[g] = _project_group(work, &lo[g, 0], &hi[g, 0], p, cap[g], &a[g, 0],
                                   &fr[g, 0], work + p, work + 3 * p)
    free(work)
    return a_arr, free_arr.view(bool), bind_arr.view(bool)


def capped_line(const double[:, ::1] z, const double[:, ::1] dz, double t, double mu,
                const double[:, ::1] lo, const double[:, ::1] hi, const double[::1] cap):
    """(sum dz a(z - t dz), sum over groups of dz_F^T J dz_F / mu) at step t: the loss part
    of the line search's derivative along a direction and its slope (J the projection's
    Jacobian: the identity on the free set F, less 1_F 1_F^T / |F| where the cap binds)."""
    cdef Py_ssize_t g, G = z.shape[0]
    cdef int v, p = z.shape[1], nf
    cdef double inv = 1.0 / mu, total = 0.0, quad = 0.0, fs, d
    cdef bint binding
    if dz.shape[0] != G or dz.shape[1] != p or lo.shape[0] != G or hi.shape[0] != G \
            or cap.shape[0] != G:
        raise ValueError("z, dz, lo, hi must be (groups, p) and cap (groups,)")
    cdef double* work = <double*> malloc((6 * p + 1) * sizeof(double))
    cdef unsigned char* fr = <unsigned char*> malloc(p + 1)
    if work == NULL or fr == NULL:
        free(work)
        free(fr)
        raise MemoryError()
    with nogil:
        for g in range(G):
            for v in range(p):
                work[v] = (z[g, v] - t * dz[g, v]) * inv
            binding = _project_group(work, &lo[g, 0], &hi[g, 0], p, cap[g], work + p, fr,
                                     work + 2 * p, work + 4 * p)
            fs = 0.0
            nf = 0
            for v in range(p):
                d = dz[g, v]
                total += d * work[p + v]
                if fr[v]:
                    quad += d * d
                    fs += d
                    nf += 1
            if binding and nf > 0:
                quad -= fs * fs / nf
    free(work)
    free(fr)
    return total, quad * inv
