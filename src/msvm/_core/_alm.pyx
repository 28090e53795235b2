# Design
# ======
# One augmented-Lagrangian driver for every inner solver.  The problem (see _solver.pyx)
#
#     minimize D(alpha)  subject to boxes, group caps and (if `equality`) P c(alpha) = 0
#
# is solved as a sequence of inner problems over the boxes and caps only, for a multiplier
# mu of the equalities and a penalty rho:  D(alpha) + <mu, P c> + rho/2 ||P c||^2.  Their
# gradient shift is s = mu + rho P c (the intercept estimate is -s).  A round:
#
# 1. s = mu + rho P c (`_start_round`);
# 2. the inner solver (coordinate descent: _cd.pyx; working-set SMO: _smo.pyx) runs until
#    its projected-gradient violation is <= eps_in (or its work budget is spent);
# 3. mu += rho P c (`_multiplier_step`); the KKT residual is max(violation, |P c|_inf / scale);
# 4. when the violation and the equality residual meet their tolerances, the relative
#    duality gap is evaluated (_gap.pyx): within tol ends the solve; above it the KKT
#    tolerances are lowered towards KKT_FLOOR / FEAS_FLOOR (`_gap_verdict`) and the solve goes
#    on; otherwise eps_in shrinks by 10 and rho grows by 4 when the equality residual fell by
#    less than 4x (`_next_round`), up to RHO_MAX / scale.
#
# A start that may already be optimal (the smoothed primal's dual point) is first checked
# against the stopping rule with no step taken (`_certify_start`): one pass for the violation,
# one for the gap.
#
# Termination: the inner solver's budget (max_iter) bounds the work, every round counting at
# least one unit (`end_round`); non-finite sums stop the solve (NONFINITE); a signal stops it
# (INTERRUPTED).
#
# The rounds' trace (`_round_trace`, off by default; for profiling, issue 24 round 17): every
# round appends its solve's number, the inner solver's progress, the round's tolerances, the
# violation, the equality residual, rho, the kernel rows computed so far and the relative
# duality gap, evaluated every round (one more O(n k) pass; no value of the solve moves).

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport malloc, free

from ._types cimport (STATUS_CONVERGED, STATUS_MAX_ITER, STATUS_NONFINITE,
                      STATUS_INTERRUPTED, STATUS_GAP_FLOOR, EPS_START, KKT_FLOOR,
                      FEAS_FLOOR, GAP_FLOOR, RHO_MAX)
from ._gap cimport scores_gap


# the rounds' trace (_round_trace): off, one test of the flag per round
cdef bint ROUND_TRACE = False
_ROUND_LOG = []
cdef long _trace_solves = 0


def _round_trace(on=None):
    """The rounds traced since the last call (one dict each: see the Design note), then
    reset; ROUND_TRACE switched on or off where ``on`` is given."""
    global ROUND_TRACE, _trace_solves
    out = list(_ROUND_LOG)
    _ROUND_LOG.clear()
    _trace_solves = 0
    if on is not None:
        ROUND_TRACE = bool(on)
    return out


cdef class InnerSolver:

    def __cinit__(self):
        self.Fi = NULL
        self.zbuf = NULL
        self.used = NULL
        self.floor = NULL
        self.raw_viol = 0.0

    def __dealloc__(self):
        free(self.Fi)
        free(self.zbuf)
        free(self.used)

    cdef int _bind(self, RowSource src, ProblemArrays pa, DualState ds) except -1:
        if pa.p.n != src.n:
            raise ValueError("the problem and the row source disagree in the number of samples")
        self.src = src
        self.pa = pa
        self.ds = ds
        self.p = &pa.p
        self.st = &ds.st
        self.work = 0
        self.Fi = <double*> malloc(pa.p.k * sizeof(double) + 1)
        self.zbuf = <double*> malloc((pa.p.maxper + 1) * sizeof(double))
        self.used = <char*> malloc(pa.p.maxper + 1)
        if self.Fi == NULL or self.zbuf == NULL or self.used == NULL:
            raise MemoryError("cannot allocate the solver's work arrays")
        return 0

    cdef int run(self, double eps, double* viol) noexcept nogil:
        return STATUS_MAX_ITER

    cdef int violation(self, double* viol) noexcept nogil:
        """The largest projected-gradient violation at the current point, nothing moved
        (INFINITY where the solver cannot measure it without steps); a status."""
        viol[0] = INFINITY
        return STATUS_CONVERGED

    cdef void end_round(self) noexcept nogil:
        pass

    cdef bint exhausted(self) noexcept nogil:
        return True

    cdef int gap(self, double* gap) noexcept nogil:
        return scores_gap(self.src, self.p, self.st, self.Fi, self.zbuf, self.used,
                          &self.work, gap)

    cdef long epochs(self):
        return 0

    cdef str progress(self):
        return ""


cdef inline double _rho_max(double scale) noexcept nogil:
    return RHO_MAX / scale if scale < 1.0 else RHO_MAX


cdef void schedule_init(Schedule* sc, const Prob* p, double tol, double scale) noexcept nogil:
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


cdef inline double _mean_class_sum(const Prob* p, const State* st) noexcept nogil:
    """The mean of the class sums c (P c = c - this mean)."""
    cdef int j
    cdef double mean_c = 0.0
    for j in range(p.k):
        mean_c += st.c[j]
    return mean_c / p.k


cdef void _start_round(const Prob* p, State* st) noexcept nogil:
    """s = mu + rho P c: the gradient shift of the inner problem for the current mu."""
    cdef int j
    cdef double mean_c = _mean_class_sum(p, st)
    for j in range(p.k):
        st.s[j] = (st.mu[j] + st.rho * (st.c[j] - mean_c)) if p.equality else 0.0


cdef double _multiplier_step(const Prob* p, State* st, double scale) noexcept nogil:
    """mu += rho P c; returns the equality violation |P c|_inf / scale (NaN if non-finite)."""
    cdef int j
    cdef double mean_c = _mean_class_sum(p, st), vs, feas = 0.0, check = 0.0
    for j in range(p.k):
        check += st.s[j]
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


cdef int _check_gap(InnerSolver inner, Schedule* sc) noexcept nogil:
    """The KKT rule is met: evaluate the gap; a status to stop with, or -1 to go on."""
    cdef double gap = INFINITY
    cdef int status = inner.gap(&gap)
    if status != STATUS_CONVERGED:
        return status
    status = _gap_verdict(sc, gap)
    if status >= 0:
        return status
    return STATUS_MAX_ITER if inner.exhausted() else -1


cdef int _certify_start(InnerSolver inner, Schedule* sc, int verbose) noexcept nogil:
    """Before any step: if the start already meets the stopping rule (violation, equality and
    gap within tol), CONVERGED; -1 to go on with the rounds; or a status to stop with."""
    cdef const Prob* p = inner.p
    cdef State* st = inner.st
    cdef double viol = INFINITY, feas = 0.0, mean_c
    cdef int j, status
    _start_round(p, st)
    status = inner.violation(&viol)
    if status != STATUS_CONVERGED:
        return status
    if p.equality:
        mean_c = _mean_class_sum(p, st)
        for j in range(p.k):
            feas = max(feas, fabs(st.c[j] - mean_c))
        feas /= sc.scale
    sc.resid = viol if viol > feas else feas
    if verbose:
        with gil:
            print(f"[msvm] start: violation {viol:.3e}, equality {feas:.3e}")
    if not (viol <= sc.kkt_tol and feas <= sc.feas_tol):
        return -1
    status = inner.gap(&sc.gap)
    if status != STATUS_CONVERGED:
        return status
    if sc.gap != sc.gap:
        return STATUS_NONFINITE
    return STATUS_CONVERGED if sc.gap <= sc.tol else -1


cdef int _trace_round(InnerSolver inner, Schedule* sc, double eps_in, double viol,
                      double feas) noexcept nogil:
    """Append this round to the trace (ROUND_TRACE): its gap evaluated once more; a status
    (INTERRUPTED when a signal came during that pass)."""
    cdef double gap = INFINITY
    cdef int status = inner.gap(&gap)
    with gil:
        _ROUND_LOG.append({"solve": _trace_solves, "progress": inner.progress(),
                           "n": inner.p.n, "eps_in": eps_in, "kkt_tol": sc.kkt_tol,
                           "feas_tol": sc.feas_tol, "violation": viol, "equality": feas,
                           "rho": inner.st.rho, "gap": gap,
                           "rows_computed": inner.src.n_computed})
    return status


cdef int alm_solve(InnerSolver inner, Schedule* sc, int verbose,
                   bint certify_start) noexcept nogil:
    """Rounds of the augmented Lagrangian around ``inner`` (see the Design note); a status.
    With ``certify_start`` the start is first checked against the stopping rule
    (`_certify_start`): a start from the smoothed primal often meets it already."""
    cdef const Prob* p = inner.p
    cdef State* st = inner.st
    cdef int status, outer = 0
    cdef double viol = INFINITY, feas
    global _trace_solves
    if ROUND_TRACE:
        _trace_solves += 1
    if certify_start:
        status = _certify_start(inner, sc, verbose)
        if status >= 0:
            return status
    while True:
        _start_round(p, st)
        status = inner.run(sc.eps_in, &viol)
        if status == STATUS_INTERRUPTED or status == STATUS_NONFINITE:
            return status
        outer += 1
        inner.end_round()
        feas = _multiplier_step(p, st, sc.scale)
        sc.resid = viol if viol > feas else feas
        if verbose:
            with gil:
                print(f"[msvm] outer {outer}: {inner.progress()}, violation {viol:.3e}, "
                      f"equality {feas:.3e}, rho {st.rho:.3g}")
        if feas != feas:
            return STATUS_NONFINITE
        if ROUND_TRACE and _trace_round(inner, sc, sc.eps_in, viol, feas) == STATUS_INTERRUPTED:
            return STATUS_INTERRUPTED
        if status != STATUS_CONVERGED:
            return status
        if viol <= sc.kkt_tol and feas <= sc.feas_tol:
            status = _check_gap(inner, sc)
            if status >= 0:
                return status
            continue
        if inner.exhausted():
            return STATUS_MAX_ITER
        _next_round(sc, st, feas)
