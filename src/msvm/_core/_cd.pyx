# Design
# ======
# Inner solver for any problem and any row source: randomized dual coordinate descent over
# samples, in the manner of LIBLINEAR.  All variables of one sample share one kernel row (or
# one x_i with explicit weights), so a visit reads the sample's scores once, takes a clipped
# Newton step on each of its variables (curvature (kappa K_ii + rho) ||P d_v||^2), then exact
# pair steps inside every group whose cap is active, and applies the sample's change of U to
# the row source once.  A group whose cap is active (within rounding, `group_full`) gives its
# variables no room to increase by single steps: only its pair steps move them up (see
# `_upper`), so the single steps never report the rounding gap below a cap as a violation.
# Shrinking: a variable at a bound whose gradient pushes it outward by more than the previous
# epoch's extreme projected gradient is skipped, a sample all of whose variables are skipped
# leaves the active set; before declaring convergence one more pass over every sample runs
# without shrinking.  max_iter bounds the epochs over all rounds.  `violation` measures the
# same violation (single steps and full groups' pairs) at a point without moving it: the check
# of a start from the smoothed primal (msvm/_primal.py), with or without group caps.  A
# sample's violation at or below its rounding floor (InnerSolver.floor, where the caller sets
# one: msvm/_score_floor.py) counts as none in the epoch's violation and in `violation`.

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport malloc, free

from ._types cimport (Prob, State, STATUS_CONVERGED, STATUS_MAX_ITER, STATUS_NONFINITE,
                      STATUS_INTERRUPTED, CURV_MIN, rng_next, v_s1, v_c1, v_s2, v_c2, v_lin,
                      v_lo, v_hi, v_grp)
from ._state cimport (move_sums, pnorm2, pair_pnorm2, group_full, group_end, group_pair,
                     sums_finite)
from ._signals cimport tick, progress_note
from ._rows cimport RowSource
from ._problem cimport ProblemArrays
from ._state cimport DualState


cdef inline double _floored(const double* floor, int i, double viol) noexcept nogil:
    """Sample i's violation, 0 where it is at or below its rounding floor (NULL: none;
    msvm/_score_floor.py)."""
    return 0.0 if floor != NULL and viol <= floor[i] else viol


cdef inline double _grad(const Prob* p, const State* st, int v, const double* Fi,
                         double sumF) noexcept nogil:
    """Gradient of the inner objective in alpha_v (scores Fi of v's sample, their sum)."""
    cdef int j1 = v_s1(p, v), j2 = v_s2(p, v)
    cdef double c1 = v_c1(p, v), c2 = 0.0, dF, ds
    dF = c1 * Fi[j1]
    ds = c1 * st.s[j1]
    if j2 >= 0:
        c2 = v_c2(p, v)
        dF += c2 * Fi[j2]
        ds += c2 * st.s[j2]
    return p.kappa * (dF - (c1 + c2) * sumF / p.k) - v_lin(p, v) + ds


cdef inline double _upper(const Prob* p, const State* st, int v) noexcept nogil:
    """Upper end of alpha_v's room: its box and its group's cap.

    A full group (group_full: its sum within CAP_RTOL of the cap) leaves no room at all, even
    when rounding left its sum an ulp or two below the cap: a single step could then only
    add that ulp, but the variable's projected gradient would count at full size (about 1
    for a variable at 0 of the generalized-margin dual), so the epoch's violation stayed at
    that size while the sums' rounding kept reopening such ulps (pair steps alpha_a -= t,
    alpha_b += t do not restore the sum exactly) and the solve ran epochs that moved only
    rounding.  Inside a full group only the pair steps move a variable up, and they measure
    the group's violation; this is the same cap test they use."""
    cdef double ub = v_hi(p, v), room
    cdef int g = v_grp(p, v)
    if g >= 0:
        if group_full(p, st, g):
            return st.alpha[v] if st.alpha[v] < ub else ub
        room = p.cap[g] - st.gsum[g] + st.alpha[v]
        if room < ub:
            ub = room
    return ub


cdef inline bint _next_full_group(const Prob* p, const State* st, int* v, int v1,
                                  int* w) noexcept nogil:
    """Advance v to the first variable of the next full group among v..v1-1 (its end in w);
    False when none is left.  The caller sets v = w to go on: a group's fullness is tested
    when it is reached, after the steps in the groups before it."""
    cdef int g
    while v[0] < v1:
        g = v_grp(p, v[0])
        if g < 0:
            v[0] += 1
            continue
        w[0] = group_end(p, v[0], v1)
        if group_full(p, st, g):
            return True
        v[0] = w[0]
    return False


cdef inline void _move(const Prob* p, State* st, int v, double delta, double Kii,
                       double* Fi, double* sumF, double* du) noexcept nogil:
    """alpha_v += delta: the sums (move_sums), the sample's local scores and its change du."""
    cdef int j1 = v_s1(p, v), j2 = v_s2(p, v)
    cdef double c1 = v_c1(p, v), c2 = 0.0
    st.alpha[v] += delta
    move_sums(p, st, v, delta)
    du[j1] += delta * c1
    Fi[j1] += Kii * delta * c1
    if j2 >= 0:
        c2 = v_c2(p, v)
        du[j2] += delta * c2
        Fi[j2] += Kii * delta * c2
    sumF[0] += Kii * delta * (c1 + c2)


cdef class CDSolver(InnerSolver):
    """Randomized dual coordinate descent over samples (see the Design note)."""

    def __cinit__(self):
        self.active = NULL
        self.Fs = NULL
        self.du = NULL
        self.members = NULL
        self.grad = NULL
        self.avals = NULL

    def __init__(self, RowSource src, ProblemArrays pa, DualState ds, long max_iter,
                 bint shrinking, unsigned long long seed):
        cdef int n = pa.p.n, k = pa.p.k, m = pa.p.maxper + 1
        self._bind(src, pa, ds)
        self.max_iter = max_iter
        self.it = 0
        self.shrinking = shrinking
        self.rng = seed * 2654435761ULL + 88172645463325252ULL
        self.active = <int*> malloc(n * sizeof(int) + sizeof(int))
        self.Fs = <double*> malloc(k * sizeof(double))
        self.du = <double*> malloc(k * sizeof(double))
        self.members = <int*> malloc(m * sizeof(int))
        self.grad = <double*> malloc(m * sizeof(double))
        self.avals = <double*> malloc(m * sizeof(double))
        if (self.active == NULL or self.Fs == NULL or self.du == NULL or self.members == NULL
                or self.grad == NULL or self.avals == NULL):
            raise MemoryError("cannot allocate the solver's work arrays")

    def __dealloc__(self):
        free(self.active)
        free(self.Fs)
        free(self.du)
        free(self.members)
        free(self.grad)
        free(self.avals)

    cdef void end_round(self) noexcept nogil:
        pass

    cdef bint exhausted(self) noexcept nogil:
        return self.it >= self.max_iter

    cdef long epochs(self):
        return self.it

    cdef str progress(self):
        return f"epochs {self.it}"

    cdef double _singles(self, int i, double Kii, double* sumF, double pg_hi, double pg_lo,
                         double* pg_max, double* pg_min, bint* shrinkable,
                         bint* changed) noexcept nogil:
        """Clipped Newton steps on sample i's variables; their largest |projected gradient|.

        pg_hi / pg_lo: the previous epoch's extreme projected gradients (shrinking);
        pg_max / pg_min collect this epoch's."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef double* Fs = self.Fs
        cdef double* du = self.du
        cdef int v
        cdef double gr, pg, ub, lo, av, H, new, viol = 0.0
        # running values in locals (registers), written back once: the steps write through
        # Fs, du and the state's arrays, which the compiler must assume may alias pointers
        cdef double s = sumF[0], hi_seen = pg_max[0], lo_seen = pg_min[0]
        cdef bint shrink = shrinkable[0], moved = changed[0]
        for v in range(p.ptr[i], p.ptr[i + 1]):
            lo = v_lo(p, v)
            if v_hi(p, v) <= lo:
                continue
            gr = _grad(p, st, v, Fs, s)
            ub = _upper(p, st, v)
            av = st.alpha[v]
            pg = 0.0
            if ub <= lo:
                # a full group leaves this variable at its lower bound no room of its own:
                # only the pair steps inside the group can move it, and they measure its
                # violation (a variable above it can still step down, leaving the cap)
                shrink = False
                continue
            if av <= lo:
                if gr > pg_hi:
                    continue
                shrink = False
                if gr < 0.0:
                    pg = gr
            elif av >= ub:
                if gr < pg_lo and v_grp(p, v) < 0:
                    continue
                shrink = False
                if gr > 0.0:
                    pg = gr
            else:
                pg = gr
                shrink = False
            hi_seen = max(hi_seen, pg)
            lo_seen = min(lo_seen, pg)
            viol = max(viol, fabs(pg))
            if pg == 0.0:
                continue
            H = (p.kappa * Kii + st.rho * p.equality) * pnorm2(p, v)
            if H > CURV_MIN:
                new = min(max(av - gr / H, lo), ub)
            else:
                new = ub if gr < 0.0 else lo
            if new != av:
                _move(p, st, v, new - av, Kii, Fs, &s, du)
                moved = True
        sumF[0] = s
        pg_max[0] = hi_seen
        pg_min[0] = lo_seen
        shrinkable[0] = shrink
        changed[0] = moved
        return viol

    cdef double _group_pairs(self, int i, double Kii, double* sumF, bint* shrinkable,
                             bint* changed) noexcept nogil:
        """One exact pair step inside every full group of sample i; the largest violation."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef int v = p.ptr[i], v1 = p.ptr[i + 1], w, va, vb, a, b
        cdef double viol = 0.0, gv, curv, t
        while _next_full_group(p, st, &v, v1, &w):
            gv = self._full_group_pair(v, w, sumF[0], &va, &vb)
            if gv > 0.0:
                shrinkable[0] = False
                viol = max(viol, gv)
                a = v + va
                b = v + vb
                curv = (p.kappa * Kii + st.rho * p.equality) * pair_pnorm2(p, a, b)
                t = min(st.alpha[a] - v_lo(p, a), v_hi(p, b) - st.alpha[b])
                if curv > CURV_MIN and gv / curv < t:
                    t = gv / curv
                if t > 0.0:
                    _move(p, st, a, -t, Kii, self.Fs, sumF, self.du)
                    _move(p, st, b, t, Kii, self.Fs, sumF, self.du)
                    changed[0] = True
            v = w
        return viol

    cdef double _visit(self, int i, double pg_hi, double pg_lo, double* pg_max,
                       double* pg_min, bint* shrinkable) noexcept nogil:
        """One visit of sample i; returns its largest violation."""
        cdef int j
        cdef double sumF = 0.0, Kii = self.src.diag(i), viol
        cdef bint changed = False
        self.src.get_scores(i, self.Fs)
        for j in range(self.p.k):
            sumF += self.Fs[j]
            self.du[j] = 0.0
        shrinkable[0] = True
        viol = self._singles(i, Kii, &sumF, pg_hi, pg_lo, pg_max, pg_min, shrinkable,
                             &changed)
        if self.p.ngroups > 0:
            viol = max(viol, self._group_pairs(i, Kii, &sumF, shrinkable, &changed))
        if changed:
            self.src.apply(i, self.du)
        return viol

    cdef int violation(self, double* viol_out) noexcept nogil:
        """The largest violation over every variable, nothing moved, as an epoch measures
        it: the projected gradients of the single steps (a variable's room up to its box
        and its group's cap, `_upper`) and, in every full group, the pair violation of
        `_group_pairs` (the largest gradient among members that can decrease less the
        smallest among those that can increase)."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef int i, j, v
        cdef double sumF, gr, ub, lo, av, pg, vi, viol = 0.0, raw = 0.0
        viol_out[0] = INFINITY
        for i in range(p.n):
            self.src.get_scores(i, self.Fs)
            sumF = 0.0
            vi = 0.0
            for j in range(p.k):
                sumF += self.Fs[j]
            for v in range(p.ptr[i], p.ptr[i + 1]):
                lo = v_lo(p, v)
                if v_hi(p, v) <= lo:
                    continue
                ub = _upper(p, st, v)
                if ub <= lo:
                    continue            # a full group's member at its bound: see the pairs
                gr = _grad(p, st, v, self.Fs, sumF)
                av = st.alpha[v]
                pg = min(gr, 0.0) if av <= lo else (max(gr, 0.0) if av >= ub else gr)
                vi = max(vi, fabs(pg))
            if p.ngroups > 0:
                vi = max(vi, self._pair_violation(i, sumF))
            raw = max(raw, vi)
            viol = max(viol, _floored(self.floor, i, vi))
            if tick(&self.work, self.src.visit_cost):
                return STATUS_INTERRUPTED
        if not sums_finite(p, st, viol):
            return STATUS_NONFINITE
        viol_out[0] = viol
        self.raw_viol = raw
        return STATUS_CONVERGED

    cdef double _pair_violation(self, int i, double sumF) noexcept nogil:
        """The largest pair violation of sample i's full groups (as `_group_pairs` measures
        it), at the scores in Fs, nothing moved."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef int v = p.ptr[i], v1 = p.ptr[i + 1], w, va, vb
        cdef double viol = 0.0
        while _next_full_group(p, st, &v, v1, &w):
            viol = max(viol, self._full_group_pair(v, w, sumF, &va, &vb))
            v = w
        return viol

    cdef double _full_group_pair(self, int v, int w, double sumF, int* va,
                                 int* vb) noexcept nogil:
        """The pair violation of the full group of variables v..w-1 at the scores in Fs, and
        its pair (va, vb: positions in the group); nothing moved."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef int x
        for x in range(v, w):
            self.members[x - v] = x
            self.grad[x - v] = _grad(p, st, x, self.Fs, sumF)
            self.avals[x - v] = st.alpha[x]
        return group_pair(p, self.members, w - v, self.grad, self.avals, va, vb)

    cdef void _shuffle(self, int n_active) noexcept nogil:
        cdef int idx, j, tmp
        for idx in range(n_active - 1, 0, -1):
            j = <int> (rng_next(&self.rng) % <unsigned long long> (idx + 1))
            tmp = self.active[idx]
            self.active[idx] = self.active[j]
            self.active[j] = tmp

    cdef int run(self, double eps, double* viol_out) noexcept nogil:
        """Epochs until the violation is <= eps (after an unshrunk pass): CONVERGED,
        MAX_ITER, NONFINITE or INTERRUPTED."""
        cdef int n = self.p.n, i, idx, n_active = n
        cdef bint full_pass = False, shrinkable
        cdef double viol, vs, raw, pg_max, pg_min, pg_hi = INFINITY, pg_lo = -INFINITY
        for i in range(n):
            self.active[i] = i
        while self.it < self.max_iter:
            self.it += 1
            self._shuffle(n_active)
            viol = 0.0
            raw = 0.0
            pg_max = -INFINITY
            pg_min = INFINITY
            idx = 0
            while idx < n_active:
                i = self.active[idx]
                vs = self._visit(i, pg_hi, pg_lo, &pg_max, &pg_min, &shrinkable)
                raw = max(raw, vs)
                viol = max(viol, _floored(self.floor, i, vs))
                if tick(&self.work, self.src.visit_cost):
                    return STATUS_INTERRUPTED
                if self.shrinking and shrinkable and n_active > 1 and not full_pass:
                    n_active -= 1
                    self.active[idx] = self.active[n_active]
                    self.active[n_active] = i
                    continue
                idx += 1
            viol_out[0] = viol
            self.raw_viol = raw
            progress_note(self.it, viol, self.src, self.p, self.st)
            if not sums_finite(self.p, self.st, viol):
                return STATUS_NONFINITE
            if viol <= eps:
                if n_active < n and not full_pass:
                    # one more pass over every sample, without shrinking, to confirm
                    n_active = n
                    pg_hi = INFINITY
                    pg_lo = -INFINITY
                    full_pass = True
                    continue
                return STATUS_CONVERGED
            full_pass = False
            pg_hi = pg_max if pg_max > 0.0 and self.shrinking else INFINITY
            pg_lo = pg_min if pg_min < 0.0 and self.shrinking else -INFINITY
        return STATUS_MAX_ITER
