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
#   right piece: two or three passes a step instead of a regula falsi's eight);
# * `free_changes`: the terms that entered or left the quadratic piece (mu lo_v <= z_v <=
#   mu hi_v) since the caller's last look (a 0/1 byte per variable), as arrays of their
#   sample, slots, coefficients and sign: the Hessian is updated by their blocks only (after
#   the first steps of a stage few terms change, so a Newton step costs O(n_vars) plus the
#   changed terms' d^2 work instead of the free terms'); `value_sums_and_changes` does both
#   in the one pass the gradient needs anyway (a Newton step reads the terms once less);
# * `dual_point`: alpha_v(z_v) for every v, the dual start handed to the solver.
#
# A pass over ten million variables takes tens of milliseconds; the Python layer checks for
# signals between passes, so none of them polls.

import numpy as np

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
    return mu * v_lo(p, v) <= z <= mu * v_hi(p, v)


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef class SmoothedTerms:
    """The hinge terms of a DualProblem, smoothed by mu (see the module's Design note)."""
    cdef ProblemArrays pa
    cdef public double mu

    def __init__(self, problem, double mu=1.0):
        self.pa = ProblemArrays(problem, problem.k)
        self.mu = mu

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
                    if a == 0.0:
                        continue
                    loss += a * z - 0.5 * mu * a * a
                    if sums:
                        U[r, v_s1(p, v)] += a * v_c1(p, v)
                        j2 = v_s2(p, v)
                        if j2 >= 0:
                            U[r, j2] += a * v_c2(p, v)
        m[0] = count
        return loss

    def line_slope_and_curvature(self, const double[:, ::1] F, const double[:, ::1] dF,
                                 double t):
        """(sum_v dz_v alpha_v(z_v - t dz_v), sum dz_v^2 / mu over the terms strictly inside
        their quadratic piece at t), with z at F and dz = <d_v, dF_i>: the loss part of the
        derivative along the step and the slope of that part (the derivative is piecewise
        linear in t; at a kink this is the slope of the pieces' common interior, a safeguarded
        Newton step only needs some slope there)."""
        cdef const Prob* p = &self.pa.p
        cdef int i, v, j1, j2
        cdef double dz, x, total = 0.0, curv = 0.0, inv = 1.0 / self.mu
        cdef const double* Fi
        cdef const double* dFi
        self._check(F)
        self._check(dF)
        with nogil:
            for i in range(p.n):
                Fi = &F[i, 0]
                dFi = &dF[i, 0]
                for v in range(p.ptr[i], p.ptr[i + 1]):
                    j1 = v_s1(p, v)
                    j2 = v_s2(p, v)
                    dz = v_c1(p, v) * dFi[j1]
                    x = v_lin(p, v) + v_c1(p, v) * (Fi[j1] - t * dFi[j1])
                    if j2 >= 0:
                        dz += v_c2(p, v) * dFi[j2]
                        x += v_c2(p, v) * (Fi[j2] - t * dFi[j2])
                    x *= inv
                    # without branches: the terms inside and outside are interleaved
                    curv += (v_lo(p, v) < x) * (x < v_hi(p, v)) * dz * dz
                    total += dz * min(max(x, v_lo(p, v)), v_hi(p, v))
        return total, curv * inv

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
