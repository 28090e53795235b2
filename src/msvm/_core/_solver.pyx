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
#   DC steps, with or without group caps): working-set SMO (_smo.pyx).  An O(n k) scan picks
#   the q most violating samples; a pair/single/group-pair SMO solves the subproblem on their
#   q x q kernel block; the scores of all samples are then updated once with the rows of the
#   samples that changed.  The working set plays the part of shrinking: kernel rows and
#   steps are spent on violating samples only;
# * everything else (the linear kernel with explicit weights above 2000 samples, directions
#   with other coefficients): randomized dual coordinate descent over samples (all variables
#   of one sample share one kernel row or one x_i), LIBLINEAR-style shrinking with a final
#   unshrunk pass, and exact pair steps inside groups whose cap is active.  Where this is
#   slow (explicit features, large C, n >> d, no group caps), the Python layer first
#   solves the smoothed primal by Newton's method and starts the solver from its dual point
#   (msvm/_primal.py); the solver first checks that start against the stopping rule without
#   a step (`certify_start`, usually met) and otherwise goes on from it like from any other.
#
# The current scores F = K U are held by a RowSource (_rows.pyx), the only seam to the data:
# explicit weights for the linear kernel (O(d k) per sample update, dense or CSR rows) or
# explicit F with kernel rows from a Gram matrix or an LRU row cache (dense or CSR X).  At
# the end b = -mu (the KKT multiplier of the equalities) is the intercept up to tol; the
# Python layer makes it exact for the fitted h (msvm/_intercept.py).
#
# Modules: _types.pxd (structs, status codes, constants), _problem (the problem's typed
# arrays), _state (the dual point and its shared updates), _rows (row sources), _signals
# (signal checks), _gap (the duality-gap certificate), _alm (the one augmented-Lagrangian
# driver and the inner-solver interface), _cd and _smo (the inner solvers), and this module,
# the Python entry points.
#
# Stopping rule.  The KKT residual is max(largest projected-gradient violation (margin units),
# largest equality violation |P c|_inf divided by the largest box bound).  It does not bound the
# objective (with a large C a violation of 1e-3 per sample can leave the objective far from
# its optimum), so when it falls below its tolerance the relative duality gap is evaluated
# too: primal objective of the current function (intercept b = -s, the multiplier estimate)
# minus the dual objective, over the size of the objective's terms.  If the gap exceeds tol,
# the KKT tolerance is lowered and the solve goes on.  The gap costs one O(n k) pass and is
# only evaluated when the KKT rule is met.  Where the scores' own rounding exceeds tol (their
# terms K_ij U_j reach C max K: 3e10 on a linear Gram matrix at C = 1e8, the scores ~1), the
# caller passes a rounding floor per sample (``floor``, msvm/_score_floor.py): the scans count
# a violation at or below its sample's floor as none (InnerSolver.floor), the gap still
# decides, and the residual returned is the violation before the floor.
#
# Termination and interruption.  max_iter bounds the total work: epochs of the coordinate
# path, steps / n of the SMO path, where every working-set round and every augmented-
# Lagrangian round counts at least one step.  Non-finite scores, class sums or gaps stop the
# solve (status NONFINITE, a ValueError for the caller).  The loops run without the GIL; every
# CHECK_WORK units of work (about one multiply-add each) they re-take it briefly to run
# Python's signal handlers, so Ctrl-C or an alarm stops a fit within milliseconds (status
# INTERRUPTED: the handler's exception is re-raised once the work arrays are freed).

from ._types cimport (Schedule, STATUS_CONVERGED, STATUS_MAX_ITER, STATUS_NONFINITE,
                      STATUS_INTERRUPTED, STATUS_GAP_FLOOR, STATUS_NO_MEMORY, WORKING_SET,
                      WORKING_SET_LARGE, LARGE_SCAN)
from ._signals cimport tick, reraise
from ._problem cimport ProblemArrays
from ._state cimport DualState
from ._rows cimport RowSource
from ._alm cimport InnerSolver, alm_solve, schedule_init
from ._cd cimport CDSolver
from ._smo cimport SMOSolver

from libc.stdlib cimport malloc, free
from libc.math cimport INFINITY

from collections import namedtuple
from enum import IntEnum

from ._signals import signal_checks_off, signal_checks_enabled, signal_check_stats
from ._rows import (make_row_source, GramRows, DenseKernelRows, SparseKernelRows,
                    DenseLinearRows, SparseLinearRows)
from ._gap import primal_dual
from ._smo import smo_applies

__all__ = ["solve", "SolveResult", "Status", "init_scores", "add_scores", "primal_dual",
           "make_row_source", "RowSource", "signal_checks_off", "signal_checks_enabled",
           "signal_check_stats", "NONFINITE_MESSAGE", "auto_working_set", "smo_applies"]


# The status codes of _types.pxd under their names, the only Python copy of them.  `solve`
# returns CONVERGED, MAX_ITER and GAP_FLOOR and turns the others into exceptions.
Status = IntEnum("Status", {"CONVERGED": STATUS_CONVERGED, "MAX_ITER": STATUS_MAX_ITER,
                            "NONFINITE": STATUS_NONFINITE, "INTERRUPTED": STATUS_INTERRUPTED,
                            "GAP_FLOOR": STATUS_GAP_FLOOR, "NO_MEMORY": STATUS_NO_MEMORY},
                 module=__name__)

# What `solve` returns: the work in epochs, the final KKT residual, the Status and the last
# relative duality gap evaluated.
SolveResult = namedtuple("SolveResult", ["n_iter", "residual", "status", "gap"],
                         module=__name__)


def auto_working_set(Py_ssize_t capacity, int n, int k):
    """The SMO path's working-set bound: WORKING_SET (256 samples), or WORKING_SET_LARGE
    (512) where a working set's fixed costs dominate: the row cache holds under half the rows,
    so that every block recomputes kernel rows (n = 40,000, d = 20, k = 5: 107k rows computed
    with 256, 82k with 512, 28 % less time), or the scan of every block covers n k >=
    LARGE_SCAN sample-slot pairs (26 classes, n = 9,800: 8 % less time).  Where every row
    stays cached and n k is small (pendigits), 512 costs 10 % more (larger block solves)."""
    if 2 * capacity < n or <long long> n * k >= LARGE_SCAN:
        return WORKING_SET_LARGE
    return WORKING_SET


NONFINITE_MESSAGE = (
    "non-finite values (NaN or infinity) arose in the solver: kernel values, scores or dual "
    "bounds overflow double precision. Rescale X (e.g. with sklearn.preprocessing."
    "StandardScaler), or use a smaller C or smaller sample weights.")


def solve(RowSource src, problem, double[::1] alpha, double[::1] mu, double tol=1e-3,
          long max_iter=10000, bint shrinking=True, unsigned long long seed=0, double rho=1.0,
          int verbose=0, int working_set=0, str method="auto", bint certify_start=False,
          double gap_scale=0.0, const double[::1] floor=None):
    """Solve the dual QP described by `problem` (a msvm._problem.DualProblem).

    ``method`` picks the inner solver: 'smo' (kernel sources, +-1 directions), 'cd'
    (coordinate descent, any problem) or 'auto' (SMO where it applies).  ``working_set``
    bounds the SMO path's working set (samples); 0 chooses it (`auto_working_set`).
    ``certify_start``: first check whether the start already meets the stopping rule (no
    step taken; the coordinate-descent path, with or without group caps), as a start from the
    smoothed primal often does.  ``gap_scale``: the least size of the objective the relative
    duality gap is measured against (the DC loop: a fraction of its objective; see _gap.pyx),
    0 for none.  ``floor`` (n, or None): the SMO path's rounding floor of each sample's
    violation, at or below which its violation counts as none (msvm/_score_floor.py; None:
    none).

    `alpha` (warm start, feasible for the box and group caps) and `mu` (k, sums to zero) are
    updated in place; `src` must hold scores consistent with alpha (see `init_scores`).

    Returns a SolveResult (n_iter, residual, status, gap): the work in epochs, the final KKT
    residual, the Status (CONVERGED: the KKT residual and the relative duality gap are within
    tol; MAX_ITER: max_iter reached; GAP_FLOOR: the gap stayed above tol down to the KKT
    tolerance floor) and the last relative duality gap evaluated (at a max_iter stop before
    the KKT rule was ever met, it is evaluated once at the final point).  Raises ValueError
    when non-finite values arise, and re-raises the exception of a signal handler (Ctrl-C's
    KeyboardInterrupt) that ran during the solve.
    """
    cdef ProblemArrays pa = ProblemArrays(problem, src.k)
    cdef DualState ds = DualState(pa, alpha, mu, rho)
    cdef InnerSolver inner
    cdef Schedule sc
    cdef int status
    cdef long n_iter
    if not gap_scale >= 0.0:
        raise ValueError(f"gap_scale must be >= 0; got {gap_scale!r}")
    pa.p.gap_scale = gap_scale
    if method not in ("auto", "smo", "cd"):
        raise ValueError(f"method must be 'auto', 'smo' or 'cd'; got {method!r}")
    use_smo = method != "cd" and smo_applies(src, problem)
    if method == "smo" and not use_smo:
        raise ValueError("the SMO path needs a kernel row source and +-1 directions")
    if use_smo:
        if working_set <= 0:
            working_set = auto_working_set(src.capacity, pa.p.n, pa.p.k)
        inner = SMOSolver(src, pa, ds, max_iter * <long long> max(pa.p.n, 1), working_set,
                          shrinking)
    else:
        inner = CDSolver(src, pa, ds, max_iter, shrinking, seed)
    if floor is not None:
        if floor.shape[0] != pa.p.n:
            raise ValueError("floor must have one value per sample")
        inner.floor = &floor[0] if pa.p.n else NULL
    schedule_init(&sc, &pa.p, tol, ds.scale)
    with nogil:
        status = alm_solve(inner, &sc, verbose, certify_start)
        if status == STATUS_MAX_ITER and sc.gap == INFINITY:
            # the KKT rule was never met, so no gap was evaluated: evaluate it once (one
            # O(n k) pass), so that the ConvergenceWarning reports the final point's gap
            # (which can be finite and small: it read "inf" where duality_gap_ /
            # objective_ was 0.06) rather than the schedule's initial inf
            if inner.gap(&sc.gap) == STATUS_INTERRUPTED:
                status = STATUS_INTERRUPTED
    if floor is not None:
        # the residual reported is the violation before the floor (the floor let the
        # stopping rule pass over it; the plan records the floor: msvm/_score_floor.py)
        sc.resid = max(sc.resid, inner.raw_viol)
    if status == STATUS_INTERRUPTED:
        reraise()
    if status == STATUS_NO_MEMORY:
        raise MemoryError("cannot allocate the solver's work arrays")
    if status == STATUS_NONFINITE:
        raise ValueError(NONFINITE_MESSAGE)
    n_iter = min(inner.epochs(), max_iter)     # a round's unit of work may pass max_iter
    if verbose and use_smo:
        print(f"[msvm] smo: {inner.progress()} ({n_iter} epochs), residual {sc.resid:.3e}, "
              f"gap {sc.gap:.3e}, kernel rows computed {src.n_computed} of "
              f"{src.n_requests} requested")
    return SolveResult(n_iter, sc.resid, Status(status), sc.gap)


def init_scores(RowSource src, const double[:, ::1] U):
    """Set the source's scores to K U (kernel) or W = X^T U (linear), U the n x k slot sums."""
    cdef int i, j, n = U.shape[0], k = U.shape[1]
    cdef bint interrupted = False
    cdef long long work = 0
    cdef double* du
    if k != src.k or n != src.n:
        raise ValueError("U must be n x k")
    du = <double*> malloc(k * sizeof(double) + 1)
    if du == NULL:
        raise MemoryError()
    with nogil:
        src.reset_scores()
        for i in range(n):
            for j in range(k):
                du[j] = U[i, j]
            src.apply(i, du)
            if tick(&work, src.visit_cost):
                interrupted = True
                break
    free(du)
    if interrupted:
        reraise()


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
            if tick(&work, src.visit_cost):
                interrupted = True
                break
    if interrupted:
        reraise()
