"""A sequence of related duals over one row source, each solve warm-started from the last.

Every fit of msvm solves one or more convex duals that differ only in their bounds and linear
term: the single solve of a convex model, the steps of the DC algorithm (boxes shifted), the
refits of adaptive reweighting (boxes scaled), the grid of a targeted local model (boxes
weighted by a smoothing kernel).  They share the kernel, hence one row source whose cached
scores ``K @ U(alpha)`` belong to the dual the sequence was last at.  :class:`DualSequence`
owns that source, the augmented-Lagrangian penalty rho and the coordinate-order seed (both
fixed at the first solve and kept for the whole sequence), and the bookkeeping of which dual
the scores belong to: ``move_to`` moves the scores to another dual's alpha (only the rows
whose slot sums change, through the core's ``add_scores``) and ``solve`` moves them to its
starting point and runs the compiled solver from there, with the inner solver and start that
the sequence's :class:`msvm._plan.SolvePlan` gives for that dual (the plan records what each
solve ran).  A fit builds a sequence, runs its loop over it and returns a
:class:`SequenceFit`; nothing of a fit's loop is kept on the estimator except its fitted
attributes (``solver_plan_`` among them) and, for ``warm_start``, the dual it started from.
Along a lambda path (``msvm.model_selection.TuningSetSearch``) a warm-started refit on the
same training inputs and kernel builds its sequence on the previous fit's row source instead
(``resume``: scores and kernel-row cache taken over), and ``scale`` follows the rescaling of
the warm start by C'/C in O(n k); :func:`path_start` is that warm start.
"""

import contextlib
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._core._level_loop import moved_scores
from ._core._problem import clip_to_boxes
from ._core._rows import CachedRows
from ._core._solver import Status, add_scores, init_scores, solve
from ._finish import MAX_FREE, finish_dual
from ._finish_groups import finish_grouped
from ._kernel_factor import factor_start, kernel_factor, source_columns
from ._plan import SolveStep, source_plan
from ._primal import primal_start
from ._products import rows_times, transposed_times
from ._progress import solver_verbose
from ._score_floor import (absolute_feature_times, absolute_kernel_times, floor_needed,
                           score_floor)
from ._thread_pools import one_blas_thread

# The stop reason of each status that msvm._core._solver.solve returns (it raises on the
# others).
SOLVER_STOP_REASONS = {Status.CONVERGED: "tol", Status.MAX_ITER: "max_iter",
                       Status.GAP_FLOOR: "gap_floor"}

# Relative size of a slot-sum difference that ``DualSequence.move_to`` treats as rounding.
ROUNDING = 4 * np.finfo(np.float64).eps

# Epochs the solver runs before the first exact finishing step (see
# ``DualSequence._solve_and_finish``); every fit that converges within them is unchanged.
FINISH_AFTER = 100

# Round 17: the finishing step (the exact one of msvm/_finish.py or msvm/_finish_groups.py,
# or the late smoothed-primal start) timed by the solve's progress (``finish_timely``): a
# warm-started solve stops first after the step's predicted cost in epochs (at least
# FINISH_MIN, at most FINISH_AFTER) instead of FINISH_AFTER, and at a budget stop the step is
# put off to the next stop where the residual's decay per epoch predicts convergence in
# fewer epochs than the step costs and the epochs run have not yet cost as much as it.
# A DC step (``gap_scale`` > 0) keeps the first budget FINISH_AFTER: the step's exact point
# is another of its optimal points than the solver's, and the DC path went on from it to
# another local minimum (WeightedRobustMSVM, linear, tests/test_intercept_solver.py:
# objective 78.136 against 78.061 with its linprog twin, which took no step).
# False: main aae56db (a fixed first budget; the step at every stop where it is due).
FINISH_RULE = True
FINISH_MIN = 10
# The cost model, in seconds of one core (measured round 17, CPU time, make_blobs and
# pendigits): an epoch costs EPOCH_PER_VARIABLE per dual variable plus EPOCH_PER_MADD per
# multiply-add of n x width x k (width: n on kernel rows, d on explicit features); the exact
# finishing step on m free variables PER_CUBE m^3 plus PER_FREE m (its Python steps), the
# grouped one's (msvm/_finish_groups.py: SVDs or Schur updates a step) GROUPED_PER_CUBE and
# GROUPED_PER_FREE.
EPOCH_PER_VARIABLE = 4e-7
EPOCH_PER_MADD = 1e-10
PER_CUBE = 6e-11
PER_FREE = 1e-4
GROUPED_PER_CUBE = 1.5e-9
GROUPED_PER_FREE = 4e-4
# Round 18: the grouped SMO's epoch on a dual with several group caps a sample (a cost-matrix
# utility: k groups of k - 1 variables) on kernel rows computed in the core (RBF, poly) costs
# GROUPED_PER_ROW_ENTRY per dual variable and row entry: each variable's pair steps read the
# sample's computed row, where the model above counted one row a sample (measured, CPU, one
# BLAS thread, make_blobs k = 3 RBF: n = 600 7.5 ms an epoch, n = 1,000 19.3 ms, against
# 1.5 / 2.7 ms predicted; identity utilities, Gram rows and explicit features keep the
# model above).  False: main df26724's model for every dual.
GROUPED_EPOCH_MODEL = True
GROUPED_PER_ROW_ENTRY = 3.3e-9

# Relative tolerance of a warm start's bounds and equalities (see ``path_start``).
FEASIBLE = 1e-12

# Spread of the kernel diagonal (its largest entry over the median of its positive entries)
# above which a solve on kernel rows or explicit features computed in the core is checked
# again from scores recomputed from scratch (``DualSequence._certified_on_exact_scores``): a
# score update adds K_ij times a change of alpha, and its rounding, eps |K_ij| |d alpha|,
# reaches the scores' own size only where some K_ij dwarf the typical entry (a sample at
# 1e150 under 'linear' or 'poly'), never under 'rbf' (a unit diagonal).  Round 14:
# TargetedLocalMSVM's grid point whose one weighted sample sat at 1e150 stopped, converged,
# at alpha = 0 with a score of -9e133 left over from its warm start (0 exactly), so
# objective_ read 0 where the function returned has 0.075.
DRIFT_SPREAD = 1e8

# The rounding floor of the SMO path's violations (msvm/_score_floor.py; issue 23 item 1,
# pattern 2): where some sample's floor exceeds tol (a kernel with large entries at large
# C), a run of the solver starts from scores computed exactly once and counts a violation at
# or below its sample's floor as none; a converged solve whose last run moved alpha is
# checked again from scores recomputed (``_certified_at_floor``, at most FLOOR_CHECKS runs),
# so that the duality gap that decides convergence is measured on the function alpha stands
# for.  The plan records the largest floor (``SolveStep.precision_floor``).  False: main's
# rule (no floor).
PRECISION_FLOOR = True
FLOOR_CHECKS = 3
# the largest floor (margin units) used: above it the rounding of the scores reaches the
# margin (C = 1e300 on a linear kernel: 1e286; kernel entries of 1e301: 1e288) and a
# certificate on them means nothing (the LLW / angle Gram cells at C = 1e8: at most 0.29)
FLOOR_MAX = 1.0

# Every value of ``stop_reason_``: the solver's, then those of the loops around it.
CONVERGED = "tol"
# ``move_to`` between two duals with the same directions (a DC step's problem and the one
# before it, a probability chain's refits on their kept dual: copies sharing the arrays)
# forms the moved rows and their differences in one compiled pass (msvm/_core/_level_loop.pyx
# ``moved_scores``: the values of the NumPy step, bit for bit); False: the NumPy step (main
# 5c4386a; tests and the benchmark's "before").
COMPILED_MOVES = True
STOP_REASONS = ("tol", "max_iter", "gap_floor", "max_dc_iter", "dc_objective_rose",
                "max_reweight")


@dataclass
class SequenceFit:
    """What a fit's sequence of solves produced, returned explicitly to ``fit``.

    Attributes
    ----------
    solution : msvm._snapshot._Solution
        The solved dual the estimator keeps (its fitted function).
    sample_weight : ndarray of shape (n_samples,)
        The weights of the objective at that solution (a reweighting fit changes them).
    stop_reason : str
        How the fit stopped, one of `STOP_REASONS` (``'tol'``: converged).
    start : msvm._snapshot._Solution
        The first solve of the sequence, the dual a ``warm_start`` refit starts from.
    attributes : dict
        Further fitted attributes of the fit (``n_iter_``, ``dc_objectives_``, ...).
    """

    solution: object
    sample_weight: np.ndarray
    stop_reason: str
    start: object
    attributes: dict = field(default_factory=dict)


def fit_stop_reason(loop_reason, solver_reasons):
    """The stop reason of a fit: its loop's, or else the last unconverged solve's.

    A loop around the solver (DC steps, reweighting) that did not converge names the fit's
    stop; when it did (or there is none), a solve that stopped early (``'max_iter'``,
    ``'gap_floor'``: each warned) does; otherwise the fit converged (``'tol'``).
    """
    if loop_reason != CONVERGED:
        return loop_reason
    early = [reason for reason in solver_reasons if reason != CONVERGED]
    return early[-1] if early else CONVERGED


def warn_unsettled_weights(reason, max_reweight):
    """Warn that AdaptiveWeightedSVM's iterative weights still changed when its reweighting
    loop stopped (``reason`` not ``'tol'``), in memory or on Dask input alike."""
    if reason != CONVERGED:
        warnings.warn(f"AdaptiveWeightedSVM: the iterative weights still changed after "
                      f"max_reweight={max_reweight} refits; increase max_reweight.",
                      ConvergenceWarning)


def rescaled_dual(alpha, C_previous, C):
    """A previous fit's dual variables for a new C: ``alpha * C / C_previous``.

    Every box and group cap is proportional to C and the equalities are homogeneous, so the
    result is feasible for the new C and exact where alpha sat at its bounds.
    """
    return alpha * (float(C) / C_previous)


def path_start(problem, alpha, C_previous, C):
    """The warm start of a refit from a previous fit's dual ``alpha`` at ``C_previous``.

    At the same C (a refit with other sample weights: the weighted fits of a probability
    chain, msvm/_probability.py) it is ``alpha`` itself (a copy): nothing is rescaled, so
    there is nothing to restore, and the kept scores of a row source hold it already.  The
    start of :func:`rescaled_start` moved every free variable by the equalities' last
    residual (the solver's), a score update of the rows of a third of the samples per
    refit: a probability fit on pendigits (7,694 samples, C = 10) took 44.4 s CPU with it
    and 42.9 s without (one run, shared machine).  At another C it is
    :func:`rescaled_start`.
    """
    if float(C) == float(C_previous):
        return np.array(alpha, dtype=np.float64)
    return rescaled_start(problem, alpha, C_previous, C)


def rescaled_start(problem, alpha, C_previous, C):
    """A warm start for the new C that rescales only the variables at their bounds.

    ``rescaled_dual`` scales every variable by rho = C / C_previous: exact for those at a
    bound (the bounds scale with C) but it multiplies the free ones too, which along a path
    of growing C mostly stay where they were.  This start keeps the free variables, scales
    the others, and restores the equalities ``P c = 0`` (c the slot sums of all variables)
    that mixing the two breaks: the least-norm change of the free variables that zeroes the
    residual, clipped to their box and repeated on the variables still inside it.  When that
    does not give a feasible point (box, group caps, equalities to rounding) or there is no
    free variable, it is ``rescaled_dual``.  ``alpha`` is a solution of the dual at
    C_previous with the same sample weights (else the classification of bounds is a guess;
    the start is feasible either way).
    """
    scaled = rescaled_dual(alpha, C_previous, C)
    lo, hi = problem.expanded_bounds()
    width = FEASIBLE * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
    free = (scaled > lo + width) & (scaled < hi - width)
    if not np.any(free) or len(alpha) != problem.n_vars:
        return scaled
    start = np.where(free, alpha, scaled)
    if problem.equality:
        start = _restore_equalities(problem, start, free, lo, hi)
    if start is None or not _feasible(problem, start, lo, hi):
        return scaled
    return start


def clipped_start(problem, alpha):
    """``problem.clip_feasible(alpha)``, the same values bit for bit: alpha clipped to its
    boxes, then every group over its cap moved down, its members with room by the same
    amount (the least room of them at most), until its excess is rounding.  The moves of
    every over-full group are made at once, one round of :func:`_group_moves` per move (the
    same arithmetic per group as ``clip_feasible``'s loop over the groups): where a
    reweighting lowers the caps of hundreds of groups (AdaptiveWeightedSVM's refit) that
    loop was the largest part of the refit's cost outside the solver."""
    alpha = np.array(alpha, dtype=np.float64)
    clip_to_boxes(problem, alpha)
    if not len(problem.cap):
        return alpha
    lo, group = problem.expand("lo"), problem.expand("group")
    grouped = group >= 0
    sums = np.bincount(group[grouped], weights=alpha[grouped], minlength=len(problem.cap))
    over = sums > problem.cap
    if not np.any(over):
        return alpha
    excess = sums - problem.cap
    limit = 1e-15 * np.maximum(1.0, np.abs(problem.cap))
    active = over & (excess > limit)
    while np.any(active):
        active = _group_moves(alpha, lo, group, active, excess) & (excess > limit)
    return alpha


def _group_moves(alpha, lo, group, active, excess):
    """One move of each ``active`` group (``clip_feasible``'s: its members with room down
    by min(excess / their number, their least room)), alpha and ``excess`` updated in
    place; the groups moved (those with a member with room: the others stop)."""
    members = np.flatnonzero((group >= 0) & active[np.maximum(group, 0)])
    room = alpha[members] - lo[members]
    movable = members[room > 0]
    owner = group[movable]
    count = np.bincount(owner, minlength=len(active))
    least = np.full(len(active), np.inf)
    np.minimum.at(least, owner, room[room > 0])
    moved = count > 0
    step = np.zeros(len(active))
    step[moved] = np.minimum(excess[moved] / count[moved], least[moved])
    alpha[movable] -= step[owner]
    excess[moved] -= step[moved] * count[moved]
    return moved


def _equality_residual(problem, alpha, directions):
    """P c for the slot sums c = sum_v alpha_v d_v (the equalities' residual), its scale.

    ``directions``: ``problem.expanded_directions()``."""
    slot1, coef1, slot2, coef2 = directions
    c = problem.class_sums(alpha)
    absolute = np.abs(alpha)
    scale = (np.bincount(slot1, weights=np.abs(coef1) * absolute, minlength=problem.k)
             + np.bincount(np.maximum(slot2, 0),
                           weights=np.abs(coef2) * absolute * (slot2 >= 0),
                           minlength=problem.k))
    return c - c.mean(), float(scale.max(initial=0.0))


def _least_norm_change(problem, movable, r, directions):
    """delta on the ``movable`` variables, least in norm, with sum_v delta_v P d_v = -r.

    With m_v the mean of d_v's entries, P d_v = d_v - m_v 1, so the k x k normal matrix
    sum_v (P d_v)(P d_v)^T and the change delta_v = (P d_v) . z follow from the sparse
    directions (one or two slots each, ``problem.expanded_directions()``) in O(n_vars)
    memory.
    """
    k = problem.k
    slot1, coef1, slot2, coef2 = directions
    s1, c1 = slot1[movable], coef1[movable]
    two = slot2[movable] >= 0
    s2, c2 = np.where(two, slot2[movable], 0), np.where(two, coef2[movable], 0)
    m = (c1 + c2) / k
    G = (np.bincount(s1 * k + s1, weights=c1 * c1, minlength=k * k)
         + np.bincount(s2 * k + s2, weights=c2 * c2, minlength=k * k)
         + np.bincount(s1 * k + s2, weights=c1 * c2, minlength=k * k)
         + np.bincount(s2 * k + s1, weights=c1 * c2, minlength=k * k)).reshape(k, k)
    a = (np.bincount(s1, weights=c1 * m, minlength=k)
         + np.bincount(s2, weights=c2 * m, minlength=k))
    normal = G - a[:, None] - a[None, :] + np.dot(m, m)
    z = np.linalg.lstsq(normal, -r, rcond=None)[0]
    return c1 * z[s1] + c2 * z[s2] - m * z.sum()


def _restore_equalities(problem, alpha, movable, lo, hi, rounds=8):
    """alpha with ``P c = 0`` restored by changing the ``movable`` variables, or None.

    ``lo``, ``hi``: ``problem.expanded_bounds()``."""
    alpha = alpha.copy()
    directions = problem.expanded_directions()
    for _ in range(rounds):
        r, scale = _equality_residual(problem, alpha, directions)
        if np.abs(r).max(initial=0.0) <= FEASIBLE * max(scale, 1.0):
            return alpha
        if not np.any(movable):
            return None
        change = _least_norm_change(problem, movable, r, directions)
        alpha[movable] = np.clip(alpha[movable] + change, lo[movable], hi[movable])
        movable = movable & (alpha > lo) & (alpha < hi)
    r, scale = _equality_residual(problem, alpha, directions)
    return alpha if np.abs(r).max(initial=0.0) <= FEASIBLE * max(scale, 1.0) else None


def _feasible(problem, alpha, lo, hi):
    """Whether alpha is in its box [lo, hi] (``problem.expanded_bounds()``) and under its
    group caps."""
    if np.any(alpha < lo) or np.any(alpha > hi):
        return False
    if len(problem.cap):
        group = problem.expand("group")
        grouped = group >= 0
        sums = np.bincount(group[grouped], weights=alpha[grouped],
                           minlength=len(problem.cap))
        return bool(np.all(sums <= problem.cap * (1 + FEASIBLE)))
    return True


def _free_variables(problem, alpha):
    """How many variables of ``alpha`` lie strictly inside their boxes."""
    lo, hi = problem.expanded_bounds()
    return int(np.count_nonzero((alpha > lo) & (alpha < hi)))


def _finish_due(problem, alpha, free_before, last):
    """(free variables now, whether to try the finishing step of msvm/_finish.py now).

    A free set up to ``MAX_FREE`` variables is tried at every budget stop, a larger one
    before the last run of the solver (``last``: the proximal route) or where it shrank
    since the previous stop (``free_before``).  Free sets above SMALL_FREE were tried only
    where they shrank: while the solver's free set still grew, the finishing step, which
    released one bound a step, ran out of its work bound (make_blobs n = 2,000, RBF,
    C = 1e5: four attempts at 1,735-2,404 free variables, 6.5 s of 21 s of finishing steps,
    thrown away).  Releasing RELEASE_BATCH bounds a step, it settles such faces, and trying
    it at every stop ended fits earlier (n = 2,000, C = 1e5-1e6, LLW: 3.2-3.4 s CPU, 101
    epochs, against 5.7-6.3 s and 801 epochs; ReinforcedMSVM n = 4,000, C = 1e8: 47 s
    against 128 s, whose free set grew from 1,314 to 3,399 until the proximal route before
    the last run settled it).  Where it is tried it gets LAST_CUBES m^3 flops and
    LAST_STEPS_PER_FREE m steps (``finish_dual(settle=True)``); the proximal route above
    MAX_FREE stays for the last run: given at every shrinking stop, it spent more than 250 s
    CPU at 1,600 epochs on 7,879 free variables without returning (ReinforcedMSVM
    n = 10,000, C = 1e5, whose whole fit takes 318 s; benchmarks/results/kernel_speed_early*.md)."""
    free = _free_variables(problem, alpha)
    due = (free <= MAX_FREE or last
           or (free_before is not None and free < free_before))
    return free, due


@dataclass(frozen=True)
class FinishProgress:
    """Where a solve stands at one of its budget stops, for :func:`finish_timely`.

    Attributes
    ----------
    done : int
        Epochs the solve has run so far.
    since : int
        Epochs since the previous stop (or the start).
    residual : float
        The KKT residual at this stop.
    before : float
        The KKT residual at the previous stop (or the start); NaN where unknown (a warm start,
        or the iterate jumped since: a finishing step or a late start was taken).
    tol : float
        The solve's tol.
    step_epochs : float
        The finishing step's predicted cost, in epochs (:func:`step_epochs`).
    """

    done: int
    since: int
    residual: float
    before: float
    tol: float
    step_epochs: float


def epochs_left(progress):
    """The epochs the solver is predicted to need from ``progress`` (a
    :class:`FinishProgress`) to bring its residual down to tol, at the rate of decay per
    epoch since the previous stop (log residual linear in epochs, as a linearly converging
    method's); inf where the residual did not fall or its previous value is unknown."""
    res, before = progress.residual, progress.before
    if not (np.isfinite(before) and 0 < res < before and progress.since > 0):
        return np.inf
    if res <= progress.tol:
        return 0.0
    rate = np.log(before / res) / progress.since
    return float(np.log(res / progress.tol) / rate)


def finish_timely(progress):
    """Whether the finishing step is worth taking now (FINISH_RULE): once the epochs run so
    far have cost as much as the step (``done``, in the step's predicted epochs), or where the
    solver is not predicted to converge (:func:`epochs_left`) in fewer epochs than the step
    costs.  Before the first decay is measured (``before`` NaN: the first stop, or the first
    after the iterate jumped) a step that costs more than the epochs run waits for the next
    stop, which measures it.  A rent-or-buy choice: the epochs spent before the step is
    taken cost at most about twice the step (the budgets double)."""
    if progress.done >= progress.step_epochs:
        return True
    if not np.isfinite(progress.before):
        return False
    return epochs_left(progress) >= progress.step_epochs


def epoch_seconds(n_vars, n, k, width, groups=0, computed_rows=False):
    """The predicted CPU cost of one epoch of the solver (the cost model above): n_vars
    dual variables of n samples, k classes, rows of ``width`` entries (n for kernel rows,
    the features for explicit ones); ``groups`` group caps (0: none) and ``computed_rows``
    (kernel rows computed in the core): a grouped dual with more groups than samples on
    computed rows costs at least GROUPED_PER_ROW_ENTRY per variable and row entry
    (GROUPED_EPOCH_MODEL)."""
    per_sample = EPOCH_PER_VARIABLE * n_vars + EPOCH_PER_MADD * float(n) * width * k
    if not (GROUPED_EPOCH_MODEL and computed_rows and groups > n):
        return per_sample
    return max(per_sample, EPOCH_PER_VARIABLE * n_vars + GROUPED_PER_ROW_ENTRY
               * float(n_vars) * width)


def step_epochs(free, grouped, epoch):
    """The predicted cost, in epochs of ``epoch`` seconds, of the exact finishing step on
    ``free`` variables (``grouped``: msvm/_finish_groups.py's)."""
    m = float(free)
    cost = (GROUPED_PER_CUBE * m ** 3 + GROUPED_PER_FREE * m if grouped
            else PER_CUBE * m ** 3 + PER_FREE * m)
    return cost / max(epoch, 1e-12)


class DualSequence:
    """Related duals solved one after another on one row source (see the module docstring).

    Parameters
    ----------
    src : msvm._core._rows.RowSource
        The row source of the training inputs, shared by every dual of the sequence.
    snapshot : callable
        ``snapshot(problem, alpha, mu, n_iter, resid)``: the fitted function of a solved dual
        (an ``msvm._snapshot._Solution``), read while ``src`` holds its scores.
    owner : str
        Name of the estimator, for the ConvergenceWarning of a solve that stops early.
    tol, max_iter, shrinking, verbose, random_state
        The estimator's solver settings.
    features : ndarray or scipy.sparse matrix, default=None
        The explicit features of a fit on them (the linear kernel or an approximate
        kernel's map), for the smoothed-primal start; None for a kernel fit.
    plan : msvm._plan.SolvePlan, default=None
        Which inner solver and start each solve uses (:func:`msvm._plan.plan_solve`); None
        applies its rules to ``src`` as it is (:func:`msvm._plan.source_plan`).  ``plan``
        then also records what every solve ran.
    inputs : ndarray or scipy.sparse matrix, default=None
        The training inputs whose kernel rows ``src`` computes, for a start built on
        clusters of them (msvm/_cluster_start.py); None where there is none.
    """

    def __init__(self, src, snapshot, owner, *, tol, max_iter, shrinking, verbose,
                 random_state, features=None, plan=None, inputs=None):
        self.src = src
        self.inputs = inputs         # the inputs of a computed kernel (the cluster start)
        self.features = features     # explicit features of the linear path (primal start)
        self.plan = source_plan(src, features is not None) if plan is None else plan
        self._snapshot = snapshot
        self.owner = owner
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.shrinking = bool(shrinking)
        self.verbose = solver_verbose(verbose)
        self.random_state = random_state
        self.rho = None              # the augmented-Lagrangian penalty, set at the first solve
        self.seed = None             # the coordinate-order seed, drawn at the first solve
        self._drift = None           # (source, whether its scores can drift), found once
        self._factor = None          # (source, its kernel factor or None), found once
        self.problem = None          # the dual whose scores ``src`` holds, and its alpha
        self.alpha = None
        self.stop_reasons = []       # of every solve, in order
        # the late smoothed-primal start's predicted cost in epochs, for putting it off
        # while the solver is predicted to converge sooner (:meth:`_late_start_wait`);
        # 0: taken at the first budget stop, as the plan says (set by an estimator's fit:
        # msvm.targeted.LATE_START_EPOCHS)
        self.late_start_epochs = 0
        self.late_starts = 0         # late smoothed-primal starts taken, over every solve
        # the last run's largest rounding floor (0.0: none) and whether it moved alpha
        self._floor = (0.0, False)

    # ------------------------------------------------------------------ scores
    def move_to(self, problem, alpha, fresh=False):
        """Make ``src`` hold the scores of ``alpha`` (a dual variable of ``problem``).

        The first time (or with ``fresh``: the dual the sequence is at was overwritten) the
        scores are computed from scratch (``init_scores``; nothing to do for alpha = 0 the
        first time); afterwards only the rows whose slot sums differ from those of the dual
        the sequence is at are updated (``add_scores``).
        """
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        if self.problem is None or fresh:
            if fresh or alpha.any():    # alpha = 0 (a cold start) has zero slot sums
                U = problem.slot_sums(alpha)
                if fresh or np.any(U != 0):
                    init_scores(self.src, np.ascontiguousarray(U))
        elif COMPILED_MOVES and same_directions(problem, self.problem):
            rows, dU = moved_scores(problem, alpha, np.ascontiguousarray(self.alpha,
                                                                         dtype=np.float64),
                                    ROUNDING)
            if len(rows):
                add_scores(self.src, rows, dU)
        else:
            U, U_now = problem.slot_sums(alpha), self.problem.slot_sums(self.alpha)
            dU = U - U_now
            # a difference at the rounding level of the slot sums is no change: after
            # ``scale`` the sums of factor * alpha differ from factor * (sums of alpha) by
            # a few ulps, and updating those rows would cost a kernel row each for nothing.
            # The threshold ROUNDING * (|U| + |U_now|) is formed in U's memory.
            np.abs(U, out=U)
            U += np.abs(U_now, out=U_now)
            del U_now
            U *= ROUNDING
            dU[np.abs(dU) <= U] = 0.0
            del U
            rows = np.flatnonzero(np.any(dU != 0, axis=1)).astype(np.int32)
            if len(rows):
                add_scores(self.src, rows, np.ascontiguousarray(dU[rows]))
        self.problem, self.alpha = problem, alpha

    def resume(self, problem, alpha):
        """Declare that ``src`` already holds the scores of ``alpha`` (a dual of ``problem``).

        For a sequence built on the row source of an earlier fit (a ``warm_start`` refit on
        the same training inputs and kernel): the scores and the kernel-row cache are taken
        over instead of being recomputed.  ``alpha`` is kept without a copy (the sequence
        never writes into it: see ``solve``).
        """
        self.problem, self.alpha = problem, np.asarray(alpha, dtype=np.float64)

    def scale(self, factor):
        """Move to ``factor`` times the current alpha by scaling the scores, O(n k).

        The scores K U(alpha) are linear in alpha, so a warm start rescaled by C'/C (see
        :func:`rescaled_dual`) needs no kernel row at all.
        """
        if self.problem is None:
            raise RuntimeError("scale needs a sequence at a dual (solve or resume first)")
        self.src.scale_scores(float(factor))
        self.alpha = self.alpha * float(factor)

    # ------------------------------------------------------------------ solve
    def _fix_penalty_and_seed(self, problem):
        """The augmented-Lagrangian penalty rho and the seed, once.

        rho = kappa * median kernel diagonal (1 if that is 0).  With explicit features (the
        coordinate-descent path) it is divided by the square root of the features per row:
        the penalty couples every sample like a constant feature of size sqrt(rho), and one
        as large as the whole row slows coordinate descent (measured at d = 10, 50, 200: the
        epochs fall by 1.3-2x against rho = median ||x||^2, where a smaller rho costs more
        augmented-Lagrangian rounds than it saves).
        """
        if self.rho is None:
            diag = self.src.diagonal()
            rho = problem.kappa * float(np.median(diag)) if len(diag) else 1.0
            if self.src.weights is not None:
                rho /= np.sqrt(max(self.src.features_per_row, 1.0))
            self.rho = rho if rho > 0 else 1.0
            self.seed = self.drawn_seed()

    def drawn_seed(self):
        """A coordinate-order seed drawn from ``random_state`` (an integer: always the same
        one)."""
        return check_random_state(self.random_state).randint(0, 2 ** 31 - 1)

    def solve(self, problem, alpha0, mu0, tol=None, *, copy=True, gap_scale=0.0):
        """Solve ``problem`` from (alpha0, mu0); the fitted function of its solution.

        The scores are moved to alpha0 first (``move_to``); the solver then updates them with
        alpha, so that afterwards the sequence is at the solution.  ``tol`` overrides the
        sequence's tol (a DC step solved loosely).  A solve stopped by max_iter or by the
        duality-gap floor raises a ConvergenceWarning; its stop reason is appended to
        ``stop_reasons``.

        The solver updates its own alpha in place during the solve and never afterwards:
        once ``solve`` has returned, the alpha of its snapshot (also the sequence's
        ``alpha``) is not written again by the sequence (a later solve, ``move_to``,
        ``resume`` and ``scale`` all work on other arrays), so callers may keep it without
        a copy.

        Parameters
        ----------
        problem : msvm._problem.DualProblem
            The dual to solve.
        alpha0 : ndarray of shape (n_vars,)
            The start, feasible for ``problem``.
        mu0 : ndarray of shape (k,)
            The start of the equality multipliers.
        tol : float, default=None
            The solve's tol (the sequence's when None).
        copy : bool, default=True
            Whether the solver works on a copy of ``alpha0``.  With ``copy=False`` the caller
            hands over alpha0 (it must not read or keep it): a C-contiguous, writable float64
            alpha0 is then updated in place (no ``n_vars`` copy), any other is copied.
        gap_scale : float, default=0.0
            The least size of the objective the solver's relative duality gap is measured
            against (a DC step: a fraction of the model's objective; msvm/_core/_gap.pyx).

        Returns
        -------
        msvm._snapshot._Solution
            The snapshot of the solution.
        """
        tol = self.tol if tol is None else float(tol)
        if copy:
            alpha = np.array(alpha0, dtype=np.float64)       # the solver's own copy
        else:
            alpha = np.require(alpha0, dtype=np.float64, requirements=["C", "W"])
        mu = np.array(mu0, dtype=np.float64)
        # a warm-started refit: the fit's first solve, from another fit's dual
        refit = not self.plan.steps and bool(np.any(alpha))
        with self._blas_threads():
            self.move_to(problem, alpha)
            self._fix_penalty_and_seed(problem)
            dual_first = self._refit_dual_budget(problem) if refit else 0
            alpha, mu, started = ((alpha, mu, False) if dual_first else
                                  self._primal_start(problem, alpha, mu, tol))
            method, working_set = self.plan.inner_solver(self.src, problem)
            alpha, mu, result, finished, late = self._solve_and_finish(
                problem, alpha, mu, tol, started, method, working_set, gap_scale, dual_first)
            result = self._certified_on_exact_scores(problem, alpha, mu, tol, result, method,
                                                     working_set, gap_scale)
            result = self._certified_at_floor(problem, alpha, mu, tol, result, method,
                                              working_set, gap_scale)
            self.plan = self.plan.record(SolveStep(method, working_set, started, finished,
                                                   late, self._floor[0]))
            self._refresh_scores(problem, alpha, finished)
            self.stop_reasons.append(SOLVER_STOP_REASONS[result.status])
            sol = self._snapshot(problem, alpha, mu, int(result.n_iter), float(result.residual))
            self._warn_if_stopped_early(result.status, result.residual, result.gap, tol, sol.gap)
            return sol

    def _solve_and_finish(self, problem, alpha, mu, tol, started, method, working_set,
                          gap_scale=0.0, dual_first=0):
        """The compiled solve, interleaved with exact finishing steps (msvm/_finish.py).

        Where the finishing step applies (no group caps), the solver first runs for at most
        FINISH_AFTER epochs (the plan's ``finish_after`` where set: a calibration fold's
        fits); each time it stops at that budget, the dual is solved exactly on its free set
        from the solver's iterate and the solver goes on from the result (a proposal that
        its own stopping rule certifies, in its first augmented-Lagrangian round, or not),
        with a budget twice the work done so far, up to max_iter in all.
        A free set above MAX_FREE variables is finished only when `_finish_due` says so.
        With FINISH_RULE a warm start's first budget is `_first_budget`'s and a step that is
        due may be put off to a later stop (`_timely`, :func:`finish_timely`).
        Returns (alpha, mu, result, finishing steps taken, whether a 'dual first' refit went
        on from the late primal start), the result's epochs summed over the runs.

        With ``late_start_epochs`` the late smoothed-primal start may be put off at a
        budget stop (:meth:`_late_start_wait`).

        ``dual_first`` > 0 (a warm-started refit, ``_refit_dual_budget``): the first run
        gets that many epochs instead, and the smoothed-primal start from its iterate that
        follows an unconverged run is certified at once, as a start before the first run is.
        """
        total, done, certify, finished = self.max_iter, 0, started, 0
        started = started or self.features is None
        finish = finish_dual if problem.var_group is None else finish_grouped
        finishing = finish is not None and total > FINISH_AFTER
        budget = min(self.plan.finish_after or FINISH_AFTER, total) if finishing else total
        if dual_first and finishing:
            budget = min(dual_first, total)
        elif FINISH_RULE and finishing and not certify and not gap_scale:
            budget = self._first_budget(problem, alpha, budget, started, finish)
        before = np.nan
        late = False
        free_before = None
        while True:
            result = self._run_solver(problem, alpha, mu, tol, budget, method, working_set,
                                      certify, gap_scale)
            done += int(result.n_iter)
            if (result.status != Status.MAX_ITER or not finishing or done >= total
                    or result.n_iter <= 0):
                return alpha, mu, result._replace(n_iter=min(done, total)), finished, late
            budget, certify = min(max(done, FINISH_AFTER), total - done), False
            wait = self._late_start_wait(problem, result, done, before, tol, started or dual_first)
            if wait:
                before, budget = float(result.residual), min(wait, total - done)
                continue
            free_before, due = _finish_due(problem, alpha, free_before, budget >= total - done)
            found = None if started else self._late_primal_start(problem, alpha, mu, tol)
            if FINISH_RULE:
                due, budget = self._timely(problem, result, done, before, tol, budget,
                                           (due or finish is finish_grouped) and found is None,
                                           free_before, finish is finish_grouped,
                                           budget >= total - done)
                before = float(result.residual)
            # the late start of a refit planned 'dual first' is certified at once
            certify = found is not None and dual_first > 0
            late = late or certify
            started = True
            if found is None and (due or (finish is finish_grouped and not FINISH_RULE)):
                found = self._exact_step(problem, alpha, tol, finish is finish_grouped,
                                         budget >= total - done)
            if found is not None:
                before = np.nan          # the iterate jumped: the decay is measured afresh
                finished += 1
                self.move_to(problem, found[0])
                alpha, mu = self.alpha, np.array(found[1])
                if self.verbose:
                    print(f"[msvm] outer {done}: exact finishing step ({self.owner})")

    def _exact_step(self, problem, alpha, tol, grouped, last):
        """The exact finishing step from ``alpha`` (msvm/_finish_groups.py's where
        ``grouped``, else msvm/_finish.py's, settling, with the proximal route where
        ``last``): (alpha, mu) or None."""
        diag = self.src.diagonal()
        if grouped:
            return finish_grouped(problem, alpha, self._scores(), self._kernel_columns, tol,
                                  diag)
        # one BLAS thread for the per-class / WW / angle finishing step: its products are
        # small and many (hundreds of Schur updates); a second thread spinning on a busy
        # core made them 3x slower (n = 2,000 RBF, C = 1e5: 4.4 s CPU instead of 12.9 s
        # at a load of 14)
        with one_blas_thread():
            return finish_dual(problem, alpha, self._scores(), self._kernel_columns, tol,
                               float(np.max(diag, initial=0.0)), settle=True, last=last)

    def _first_budget(self, problem, alpha, budget, started, finish):
        """The first run's budget of a solve (FINISH_RULE) that starts from ``alpha``: from
        zero, ``budget`` (FINISH_AFTER or the plan's); from a warm start, the predicted cost
        of the step its first stop takes (the late smoothed-primal start where it applies:
        none; else the exact finishing step on the start's free set), at least FINISH_MIN
        epochs and at most ``budget``.  ``started``: no late start to try."""
        if not np.any(alpha):
            return budget
        if not started and self.plan.restarts_from_primal(problem, self.features,
                                                          self.src.diagonal()):
            cost = 0.0
        else:
            cost = step_epochs(_free_variables(problem, alpha), finish is finish_grouped,
                               self._epoch_seconds(problem))
        return int(min(budget, max(FINISH_MIN, np.ceil(cost))))

    def _timely(self, problem, result, done, before, tol, budget, due, free, grouped, last):
        """FINISH_RULE at a budget stop after ``done`` epochs: (whether to take the exact
        finishing step now, the next run's budget).  A step that is ``due`` (by
        `_finish_due`) is taken before the last run or where :func:`finish_timely` says so;
        one put off comes at the next stop, after the epochs still owed to its cost (at
        least FINISH_MIN, at most ``budget``, the doubled one)."""
        if not due or last:
            return due, budget
        cost = step_epochs(free, grouped, self._epoch_seconds(problem))
        if finish_timely(FinishProgress(done, int(result.n_iter), float(result.residual),
                                        before, tol, cost)):
            return True, budget
        return False, int(min(budget, max(FINISH_MIN, np.ceil(cost - done))))

    def _late_start_wait(self, problem, result, done, before, tol, planned):
        """The epochs to run on before the late smoothed-primal start, at a budget stop
        after ``done`` epochs (``before``: the residual at the previous stop, NaN at the
        first); 0: take it now, or none is to come (``planned``: the solve started from the
        primal, or a 'dual first' refit, whose plan fixes when).  A rent-or-buy choice as
        :func:`finish_timely`'s, against its cost ``late_start_epochs``: put off while the
        epochs run cost less than it and the solver is not predicted (:func:`epochs_left`)
        to need as many more; before the first decay is measured, FINISH_MIN epochs more
        measure it.  Where the start would not apply (the plan's rule) it is never waited
        for."""
        cost = self.late_start_epochs
        if planned or cost <= done or not self.plan.restarts_from_primal(
                problem, self.features, self.src.diagonal()):
            return 0
        if not np.isfinite(before):
            return int(min(FINISH_MIN, np.ceil(cost - done)))
        left = epochs_left(FinishProgress(done, int(result.n_iter), float(result.residual),
                                          before, tol, cost))
        if left >= cost - done:
            return 0
        return int(min(np.ceil(cost - done), max(FINISH_MIN, np.ceil(left))))

    def _epoch_seconds(self, problem):
        """The predicted CPU cost of one epoch on this sequence's rows (:func:`epoch_seconds`)."""
        n = problem.n_samples
        width = n if self.src.weights is None else self.src.features_per_row
        group = problem.var_group
        groups = 0 if group is None else int(np.max(group)) + 1
        return epoch_seconds(problem.n_vars, n, problem.k, width, groups,
                             isinstance(self.src, CachedRows))

    def _certified_on_exact_scores(self, problem, alpha, mu, tol, result, method, working_set,
                                   gap_scale):
        """Where the source's scores can drift (:meth:`_scores_can_drift`), a converged
        solve goes on once from its scores recomputed from scratch, so that the stopping rule
        is met on the function alpha stands for, not on the drifted scores; the scores are
        recomputed again at its end (``_refresh_scores``).  Returns the result, its epochs
        summed."""
        if result.status != Status.CONVERGED or not self._scores_can_drift():
            return result
        left = self.max_iter - int(result.n_iter)
        if left <= 0:
            return result
        self.move_to(problem, alpha, fresh=True)
        again = self._run_solver(problem, alpha, mu, tol, left, method, working_set, True,
                                 gap_scale)
        return again._replace(n_iter=int(result.n_iter) + int(again.n_iter))

    def _run_solver(self, problem, alpha, mu, tol, max_iter, method, working_set, certify,
                    gap_scale):
        """One run of the compiled solver (msvm._core._solver.solve) on the sequence's
        source and settings, alpha and mu updated in place; where the rounding floor applies
        (:meth:`_score_floor`) from scores computed afresh, against the floor."""
        floor = self._score_floor(problem, alpha, tol)
        start = None if floor is None else alpha.copy()
        result = solve(self.src, problem, alpha, mu, tol=tol, max_iter=max_iter,
                       shrinking=self.shrinking, seed=int(self.seed), rho=self.rho,
                       verbose=self.verbose, working_set=working_set, method=method,
                       certify_start=certify, gap_scale=float(gap_scale), floor=floor)
        self._floor = ((0.0, False) if floor is None
                       else (float(floor.max()), not np.array_equal(start, alpha)))
        return result

    def _score_floor(self, problem, alpha, tol):
        """The rounding floor of every sample's violation at ``alpha`` (msvm/_score_floor.py)
        where some sample's floor exceeds tol (PRECISION_FLOOR), the scores then recomputed
        from scratch (the floor bounds the rounding of scores computed
        once); else None (main's rule: every fit whose floors stay below tol)."""
        if not PRECISION_FLOOR or not floor_needed(problem, alpha, self.src.diagonal(), tol):
            return None
        floor = score_floor(problem, alpha, self._absolute_times)
        # a floor above FLOOR_MAX (or not finite): the scores' rounding reaches the margin
        # itself, where they tell nothing; main's rule (a max_iter or non-finite stop)
        largest = float(np.max(floor, initial=0.0))
        if not tol < largest <= FLOOR_MAX:
            return None
        self.move_to(problem, alpha, fresh=True)
        return floor

    def _absolute_times(self, V):
        """The magnitudes summed in the scores' products (msvm._score_floor.score_floor):
        |X| (|X|^T V) where the source holds explicit weights, else |K| V."""
        if self.src.weights is not None:
            return absolute_feature_times(self.features, V)
        return absolute_kernel_times(self._kernel_columns, V)

    def _certified_at_floor(self, problem, alpha, mu, tol, result, method, working_set,
                            gap_scale):
        """A converged solve whose last run measured against the rounding floor and moved
        alpha (its scores then updated, not computed once) goes on from scores recomputed,
        at most FLOOR_CHECKS times, until a run certifies the point it started from.
        Returns the result, its epochs summed."""
        for _ in range(FLOOR_CHECKS):
            left = self.max_iter - int(result.n_iter)
            if result.status != Status.CONVERGED or not self._floor[1] or left <= 0:
                break
            again = self._run_solver(problem, alpha, mu, tol, left, method, working_set, True,
                                     gap_scale)
            result = again._replace(n_iter=int(result.n_iter) + int(again.n_iter))
        return result

    def on_core_rows_without_drift(self):
        """Whether this sequence solves on kernel rows computed in the core (no explicit
        features, so no primal start; unweighted rows, not a Gram matrix from outside) whose
        scores cannot drift (:meth:`_scores_can_drift`): where a solve's certification on
        fresh scores and its refresh do nothing, so that a lean solve (a DC step's,
        ``msvm._dc.lean_solve``; a probability level's, ``LevelState``) gives
        :meth:`solve`'s values."""
        src = self.src
        return (self.features is None and getattr(src, "weights", None) is None
                and type(src).__name__ != "GramRows" and not self._scores_can_drift())

    def _scores_can_drift(self):
        """Whether the source's kernel diagonal spans more than ``DRIFT_SPREAD`` (its
        largest entry over the median of its positive entries), so that the rounding of a
        score update can reach the size of the scores themselves.  Found once per source
        (its diagonal is fixed): a median at every solve was 3 % of a small probability
        fit."""
        if self._drift is None or self._drift[0] is not self.src:
            diag = np.abs(self.src.diagonal())
            positive = diag[diag > 0]
            self._drift = (self.src, bool(positive.size > 0 and float(positive.max())
                                          > DRIFT_SPREAD * float(np.median(positive))))
        return self._drift[1]

    def _refresh_scores(self, problem, alpha, finished=0):
        """Recompute the scores K U(alpha) from scratch where their running updates can
        drift: a Gram matrix supplied from outside the core ('precomputed' or a callable
        kernel, whose entries may span any range) accumulates about eps * max|K| * C per
        update, so that objective_ and intercept_ would describe a function other than the
        one dual_coef_ and intercept_ predict with.  One pass over the rows of the support
        samples (the solver's own work is many such passes).  Explicit weights W = X^T U
        are recomputed after a solve that went on from a finishing step (``finished`` > 0):
        its jump adds and later removes large slot sums, whose rounding would leave W (and
        ``coef_``) off the alpha that the duality gap certifies (one O(n d k) pass).
        Kernel rows and explicit features computed in the core are recomputed where their
        diagonal spans more than ``DRIFT_SPREAD`` (:meth:`_scores_can_drift`); elsewhere an
        update's rounding is bounded by the typical entry and they are left as they are."""
        if (type(self.src).__name__ == "GramRows" or (finished and self.src.weights is not None)
                or self._scores_can_drift()):
            self.move_to(problem, alpha, fresh=True)

    def _late_primal_start(self, problem, alpha, mu, tol):
        """The smoothed-primal start (msvm/_primal.py) from the solver's iterate, for a
        linear-kernel solve on kernel rows (below the explicit-weights size) that its budget
        stopped and the finishing step could not settle (a free set too large for it); None
        where the start does not apply.  Returns (alpha, mu)."""
        X = self.features
        diag = self.src.diagonal()
        if X is None or not self.plan.restarts_from_primal(problem, X, diag):
            return None
        W = transposed_times(X, problem.slot_sums(alpha))
        self.late_starts += 1
        return primal_start(problem, X, np.asarray(W), mu, tol, diag, self.max_iter)

    def _scores(self):
        """The scores F = K U (n, k) the source holds for the current alpha."""
        if self.src.weights is not None:
            return rows_times(self.features, self.src.weights)
        return self.src.scores

    def _kernel_columns(self, samples):
        """Kernel columns K[:, samples] (n, len(samples)), for the finishing step."""
        if self.src.weights is not None:
            X = self.features
            if sp.issparse(X):
                return (X @ X[samples].T).toarray()
            return rows_times(X, X[samples].T)
        return source_columns(self.src, samples)

    def _blas_threads(self):
        """One BLAS thread for a solve on explicit features: its products (X^T U, X W, the
        primal start's) have k columns and are bound by reading X, where a second thread
        saves little wall time and its spinning after every product costs CPU time (100k
        samples, d = 50, k = 10, C = 0.01: 1.07 -> 1.02 s CPU, the same wall time); and the
        primal start's Hessian blocks are products of a few million flops, over which a
        threaded OpenBLAS waiting for a busy second core took seconds (1-3 s instead of
        20 ms under a load of 3 on 2 cores), time in which Ctrl-C could not stop the fit.
        Kernel solves keep the caller's setting.  The limit is process-wide; it is shared
        with every overlapping fit (``msvm._thread_pools``), so that the caller's limits are
        back once the last of them ends, whatever the interleaving."""
        if self.features is None:
            return contextlib.nullcontext()
        return one_blas_thread()

    def _refit_dual_budget(self, problem):
        """The epochs of dual coordinate descent a warm-started refit runs from its start
        before the smoothed-primal start from its iterate (``SolvePlan.refit_dual_budget``:
        where neither start wins everywhere, what the start is estimated to cost), or 0:
        the refit starts as a fit from zero would (from the primal where the plan says so).
        Only where the budget leaves room for the start (below max_iter, beyond which the
        first run of ``_solve_and_finish`` is the whole solve)."""
        if self.features is None or self.src.weights is None or self.max_iter <= FINISH_AFTER:
            return 0
        budget = self.plan.refit_dual_budget(problem, self.features, self.src.diagonal())
        return budget if budget < self.max_iter else 0

    def _primal_start(self, problem, alpha, mu, tol):
        """Where dual coordinate descent is slow (large C, n >> d, explicit features: the
        plan's rule), the start from the smoothed primal (msvm/_primal.py); otherwise
        (alpha, mu) unchanged.
        Returns (alpha, mu, whether the start was made): the solver then first checks the
        start against its stopping rule, which it often meets already."""
        if self.features is None or self.src.weights is None:
            return self._factor_start(problem, alpha, mu, tol)
        diag = self.src.diagonal()
        if not self.plan.starts_from_primal(problem, self.features, diag):
            return alpha, mu, False
        # the start overwrites alpha (one n_vars array less at the peak), so the scores are
        # computed afresh from it
        alpha, mu = primal_start(problem, self.features, self.src.weights, mu, tol, diag,
                                 self.max_iter, out=alpha)
        self.move_to(problem, alpha, fresh=True)
        if self.verbose:
            print(f"[msvm] {self.owner}: dual start from the smoothed primal (Newton)")
        return alpha, mu, True

    def _factor_start(self, problem, alpha, mu, tol):
        """Where the plan's rule says a kernel solve crawls (large C: ``SolvePlan.
        starts_from_factor``) and the kernel has a factor of small rank
        (:meth:`_kernel_factor`), the start from the smoothed primal on that factor
        (msvm/_kernel_factor.py); otherwise (alpha, mu) unchanged.  Returns (alpha, mu,
        whether the start was made)."""
        if not self.plan.starts_from_factor(problem, self.src.diagonal()):
            return alpha, mu, False
        L = self._kernel_factor(problem.k)
        if L is None:
            return alpha, mu, False
        started = factor_start(problem, L, alpha, mu, tol, self.max_iter)
        if started is None:
            return alpha, mu, False
        alpha, mu = started
        self.move_to(problem, alpha, fresh=True)
        if self.verbose:
            print(f"[msvm] {self.owner}: dual start from the smoothed primal on a kernel "
                  f"factor of rank {L.shape[1]}")
        return alpha, mu, True

    def _kernel_factor(self, k):
        """The kernel factor of the source (msvm._kernel_factor.kernel_factor), or None
        where it gave up; found once per source."""
        if self._factor is None or self._factor[0] is not self.src:
            self._factor = (self.src, kernel_factor(self.src, k))
        return self._factor[1]

    def _warn_if_stopped_early(self, status, resid, gap, tol, fitted_gap):
        """The ConvergenceWarning of a solve that stopped on max_iter or the gap floor.

        ``gap`` is the solver's relative duality-gap certificate at its own intercepts, which
        can be infinite where a loss term is unbounded at those intercepts although the fit
        is close to the optimum; the message then reports the duality gap at the fitted
        (exact) intercepts, ``fitted_gap`` (the fit's ``duality_gap_``), instead.
        """
        if np.isfinite(gap):
            certificate = f"relative duality gap {gap:.3g}"
        else:
            certificate = (f"duality gap {fitted_gap:.3g} at the fitted intercepts "
                           f"(duality_gap_; the solver's certificate at its own intercepts "
                           f"is not finite)")
        if status == Status.MAX_ITER:
            warnings.warn(
                f"{self.owner}: the solver stopped at max_iter={self.max_iter} epochs "
                f"with KKT residual {resid:.3g} and {certificate} (tol="
                f"{tol:g}); increase max_iter or tol.", ConvergenceWarning)
        elif status == Status.GAP_FLOOR:
            warnings.warn(
                f"{self.owner}: the {certificate} stayed above tol="
                f"{tol:g} although the KKT residual reached {resid:.3g}, the limit of double "
                f"precision for this problem; objective_ may be inexact. Rescale X or C, or "
                f"increase tol.", ConvergenceWarning)

    def stop_reason(self, loop_reason=CONVERGED):
        """The stop reason of a fit over this sequence (see :func:`fit_stop_reason`)."""
        return fit_stop_reason(loop_reason, self.stop_reasons)


_DIRECTION_ARRAYS = ("var_ptr", "var_entry", "entry_slot1", "entry_coef1", "entry_slot2",
                     "entry_coef2")


def same_directions(a, b):
    """Whether the duals ``a`` and ``b`` have the same variables and directions by
    construction: the same arrays (copies of one problem with other bounds), so that the
    slot sums of a dual of either are formed by ``a``'s."""
    return a is b or (a.k == b.k and all(getattr(a, name) is getattr(b, name)
                                         for name in _DIRECTION_ARRAYS))
