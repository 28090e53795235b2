"""The DC (difference-of-convex) outer loop shared by every truncated model.

A truncated loss is a convex hinge minus a convex hinge, T = H_convex - H_concave.  Each DC
step replaces the subtracted hinge by its linearization at the current function (the 0/1
indicators beta of Liu, Wu and He (2011) and Wu and Liu (2007)) and solves the convex problem
that results.  In the dual that linear term is a shift of boxes and group caps
(msvm._problem.shifted), so every step is the model's own DualProblem with moved bounds,
warm-started from the previous solution with the same original multipliers (only the
variables whose beta flipped change; the scores follow through the rows of those samples
only, and the kernel-row cache is kept across steps).  The objective never increases from
one exactly solved step to the next (Wu and Liu 2007 section 3); the loop stops when the
linearization repeats, when a step lowers the objective by less than ``dc_tol`` (relative),
or after ``max_dc_iter`` steps with a ConvergenceWarning.

Inexact early solves: the untruncated start (of a fit from zero; a warm start is solved to
tol) and the early steps only place the linearization, so they are solved to ``LOOSE_TOL``;
once the steps' decrease is small (or the linearization repeats) they are solved to the
estimator's tol, and the returned function is always one solved to tol (a loose last
solution is polished).  On pendigits (RBF, C = 10, the default truncation) the untruncated
solve is most of the fit: solved loosely it takes 70 epochs instead of 154, and the whole DC
fit costs about what one convex solve to tol does (benchmarks/results/dc.md).  A step
warm-started from the previous solution still takes half the epochs of a cold solve when
only 37 of 69,246 variables flip (restoring the equalities before the step changes nothing:
75 against 76 epochs): that is the solver's rate on this dual, not the start.  With
``verbose >= 1`` every convex solve of the loop prints one line (msvm._progress): the start,
each step, a polish to tol, a rejected step.

The DC steps of a grouped truncated model on explicit features (WeightedRobustMSVM,
``kernel='linear'`` or an approximate kernel, where each step's dual starts from the smoothed
primal) take their start and their linearization from the DC iteration on the smoothed
primal (``SMOOTHED_DC``, msvm._primal.smoothed_dc_start): each stage of the Newton
continuation but the last is relinearized at its iterate whenever its steps converge, so the
step handed
to the dual solver is already near a DC fixed point, solved to tol at once, and the loop
finds the linearization at its solution repeated after one or two steps.  The loop's rules
and certificates are unchanged (every accepted step is a convex dual solved to tol; the
loop stops on a repeated linearization or a decrease below dc_tol).  Why the path before
was long: measured per step (make_classification, d = 20, k = 5), its objective still fell
by 3e-5 to 6e-4 (relative) a step after 20 steps, far above dc_tol and above each step's
certified accuracy (duality gap about 4e-6 of the objective), each late step moving 1-5
samples across the truncation point and 5-14 groups to another most-competing class: a long
path, not inexact solves.  Measured (CPU, shared machine,
benchmarks/results/grouped_primal_start.md, section "The DC steps linearized on the smoothed
primal"): n = 5,000 1.6 s and 2 DC steps instead of 13-15 s and 17-27, objective 2439.2
against 2436.3-2437.5; n = 20,000 18.4 s and 3 steps instead of 135-214 s and 35-72
(objective 10449.2 against 10456.8-10475.8), 17-19x its first convex step instead of
148x; pendigits linear 3.8 s instead of 11.4 s.
After a rejected step the loop goes on without it (the linearization at the solution).

The loop is :func:`dc_fit`, a function over a :class:`msvm._sequence.DualSequence` (the row
source and the scores of the current step); :func:`truncated_fit` is the whole fit of a
truncated model (its untruncated start, then the loop).  On kernel rows computed in the core
its steps are lean solves on the kept sequence (``LEAN_DC_LOOP``, :func:`lean_steps_apply`):
the scores moved to a step's start by one compiled pass (the rows whose slot sums moved),
the inner solver found once, the duality gap formed only for the step returned.  A
probability chain's refit of WeightedRobustMSVM starts its DC path from the previous level's
last step (``CHAIN_DC_START``, :func:`chain_dc_start`) instead of an untruncated solve,
and a chain's refit, whose steps are solved only to the refits' tol, stops once a step
lowers the objective by at most that tol of it (``LEVEL_DC_TOL``, :func:`level_rules`).
A step's passes over every variable are compiled (msvm/_core/_dc_pass.pyx: the
linearization and the weighed samples, ``COMPILED_DC_PASSES``; the models' loss of each
sample, ``COMPILED_DC_LOSSES``), WeightedRobustMSVM's solves take the lean snapshot
(``KKT_STEP_SOLUTIONS``), the duality gap of a converged solve is formed only where it is
read (``DEFERRED_START_GAPS``), and a chain refit's first solve is a lean solve too
(``LEAN_LEVEL_STARTS``, :func:`lean_start_applies`).
"""

import copy
import functools
import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from ._capped_terms import capped_terms_possible
from ._primal import smoothed_dc_start
from ._problem import shifted, shifted_bounds
from ._progress import n_epochs
from ._plan import SolveStep
from ._core._dc_pass import sample_losses, truncation_shift, weighed_marks
from ._core._solver import Status
from ._sequence import CONVERGED, SOLVER_STOP_REASONS, SequenceFit
from ._snapshot import (_Solution, centre_and_scale_in_place, duality_gap, intercept_solver,
                        output_map, slot_penalty, tail_intercepts, training_scores)
from ._snapshot import snapshot as full_snapshot
from ._validation import check_finite_objective

# Inner tolerance of the early DC steps, and the relative decrease below which the steps are
# solved to the estimator's tol (only those decide convergence).
LOOSE_TOL = 1e-2
LOOSE_UNTIL = 1e-3
# The least size of the objective a DC step's relative duality gap is measured against, as a
# fraction of the model's objective (msvm/_core/_gap.pyx): a step at the constant classifier
# has terms that cancel to rounding (size 1e-5 where the objective is 294), and its gap over
# that size never met tol.  1 % leaves every ordinary step's rule as it was (their sizes are
# above it: the objectives fingerprint is unchanged) and is still stricter than the
# objective's own scale.
GAP_SCALE = 1e-2

# Whether a DC step of a grouped dual on explicit features chooses its linearization by the
# DC iteration on the smoothed primal (``_SequenceSteps._smoothed_start``); benchmarks turn it
# off to measure the path before.
SMOOTHED_DC = True

# The DC steps' problems as copies of the base problem with their bounds moved (no second
# validation of values that are valid by construction; the structure's caches shared), and
# a probability chain's untruncated duals as its kept dual with the bounds scaled
# (msvm._level_chain.ScaledDual); False: every problem built and checked anew (main
# 51483cd; the same values, so the same fits bit for bit: tests and the benchmark's
# "before").  With it, the solutions of a DC fit on kernel rows computed in the core, with
# exact intercepts, are formed by the compiled level tail (``step_solution``).
LEAN_DC_STEPS = True

# The DC steps after a fit's first solve, on kernel rows computed in the core whose scores
# cannot drift, run as lean solves (``_SequenceSteps._lean_solve``): the scores moved by the
# compiled pass (``DualSequence.move_to``), the inner solver found once for the fit's
# problems (it reads the row source and the directions, which the steps share), none of
# ``DualSequence.solve``'s checks that cannot apply there (a primal start, a refit's budget,
# certification on fresh scores, a refresh); and a probability chain's refits keep the
# row source's drift test (``DualSequence._scores_can_drift``) with the solver's penalty and
# seed.  The same solves, so the same fits bit for bit; False: main 5c4386a's steps (tests
# and the benchmark's "before").
LEAN_DC_LOOP = True

# A probability chain's DC refit (a weighted fit at the next level of a class's chain) starts
# its DC path from the previous level's last accepted step, its linearization taken at the
# same decision values with this level's bounds and its dual as the start
# (:class:`ChainDCStart`), instead of an untruncated solve from the previous level's
# untruncated dual; its steps are solved to tol from the first (no loose phase).  Only for
# the models whose class says so (``_levels_from_last_step``: WeightedRobustMSVM; with it
# RobustMSVM's probabilities on Liu and Yuan's examples moved by +0.0020 and +0.0022 mean
# absolute error, over issue 25's limit: benchmarks/results/probability.md, section 9k).
# False: main 107ffe2's chain refits for every model (tests and the benchmark's "before").
# It moves the iterates of the probability levels only: no other fit is a chain refit.
CHAIN_DC_START = True
# Whether such a start leaves the up-weighted class untruncated (its samples' shifts zero):
# from the previous level's indicators alone the class's truncated samples stay truncated,
# deaf to its larger weight (RobustMSVM on example 4.1.2: mean absolute error +0.0049,
# WeightedRobustMSVM +0.0153 without it, +0.0023 and -0.0017 with it, one draw).
CHAIN_DC_RESET = True

# A probability chain's DC refit (its estimator has the chain's ``_kept_dual``) stops once
# an accepted step lowers the objective by at most max(dc_tol, tol) of it, the bound within
# which the loop already accepts a step that rose (:func:`_objective_rose`): the refits
# solve each step only to ``tol`` = REFIT_TOL_FACTOR times the estimator's (0.3 by default;
# msvm._probability), so a decrease below it is within the step's own accuracy, and the
# loop went on until a step rose (71 of RobustMSVM's 84 refits on example 4.1.1 ended with
# a dropped rising step).  On examples 4.1.1 / 4.1.2 (three draws each) the compiled solves
# of a probability fit fell from 344 / 377 to 178 / 173 (RobustMSVM) and from 282 / 271 to
# 186 / 177 (WeightedRobustMSVM), the mean absolute error of the probabilities moved by
# -0.0004 / -0.0015 and -0.0004 / -0.0038 (over six more draws by -0.0012 / -0.0068 and
# -0.0019 / -0.0038).  False: main aae56db's rule (dc_tol alone) for
# every fit (tests and the benchmark's "before"; benchmarks/results/probability.md, 9n).
LEVEL_DC_TOL = True
# At most this many DC steps in a probability chain's refit after the chain's first level
# (which keeps the whole path); None: no cap (main aae56db).  A refit stopped at the cap is
# reported converged: the levels only bracket the sign of each sample's decision.  Measured
# and not kept (section 9n).
LEVEL_DC_STEPS = None

# Values a DC fit has already formed, read again where the fit is stored instead of formed
# anew (a probability chain refits the model some 80 times, each refit about two solves):
# the objective of the returned solution (the last entry of ``dc_objectives_``; read by
# ``_store_solution`` through :class:`KeptDCObjective`), the truncated mask of the returned
# solution where the loop's last linearization was read at it (``_SequenceSteps.changed``),
# and the identity output map of :func:`step_solution` made once per k.  The same values
# from the same arithmetic, so the same fits bit for bit; False: main ebff6f7's fits
# (tests and the benchmark's "before").
DC_KEPT_VALUES = True

# A DC step's passes over every variable, compiled (msvm/_core/_dc_pass.pyx): the
# linearization at the current decision values (the models' ``_dc_shift``, through
# :func:`compiled_shift`) and the samples whose weights a solve read (:func:`weighed_samples`,
# or-ed in place into the path's marks by :func:`mark_weighed`), each one pass without
# (n, k) or (n_vars,) temporaries.  The same values, so the same fits bit for bit; False:
# main c94be25's NumPy steps (tests and the benchmark's "before",
# benchmarks/results/probability.md section 9p).
COMPILED_DC_PASSES = True
# The truncated models' loss of each sample (their ``_loss``, read by the objective of every
# solve of the DC loop) by one compiled pass over the decision values (msvm/_core/
# _dc_pass.pyx ``sample_losses``, through :func:`compiled_losses`) instead of some ten NumPy
# calls on (n, k) temporaries.  The same values (each row summed in NumPy's order), so the
# same fits bit for bit; False: main c94be25's (tests and the benchmark's "before").
COMPILED_DC_LOSSES = True

# The lean snapshot of a DC step (:func:`step_solution`) also where the model's intercepts
# are the solver's KKT estimate -mu (some direction with two slots: WeightedRobustMSVM),
# its coefficients V by the compiled level tail and its duality gap deferred to
# :func:`with_gap` as for exact intercepts, instead of ``msvm._snapshot.snapshot``'s steps:
# the same values (V as the slot sums centred, bit for bit), so the same fits; False: main
# c94be25's (tests and the benchmark's "before").
KKT_STEP_SOLUTIONS = True

# The duality gap of every converged solve of a DC fit on the lean snapshot deferred to
# :func:`with_gap` (``step_solution`` reads the solve's stop reason from its sequence), also
# where the solve is ``DualSequence.solve``'s (the untruncated start, a chain level's first
# step): only the returned solution's gap is read (``duality_gap_``), and a solve that
# stopped early forms its gap at once for its warning.  The same values; False: main
# c94be25's (a gap formed for every such solve).
DEFERRED_START_GAPS = True

# The first solve of a probability chain's DC refit (its untruncated start, warm-started from
# the previous level; WeightedRobustMSVM's step from the previous level's last step) as a
# lean solve (:func:`lean_solve`) where it gives ``DualSequence.solve``'s values
# (:func:`lean_start_applies`: kernel rows computed in the core without drift, and the
# chain's plan, whose 'dual first' refits make no factor or primal start and no budget);
# False: main c94be25's (tests and the benchmark's "before").
LEAN_LEVEL_STARTS = True

# The inner solver (method, working set) of a probability chain's DC refits found once for
# the chain (:func:`kept_inner_solver`, kept on the chain's estimator as ``_dc_inner``)
# instead of at every refit's first solve and first step: it reads the row source, the
# plan's solver settings and the directions, which the chain's refits share (their duals
# are copies of one kept dual).  The same choice; False: main c94be25's.
KEPT_INNER_SOLVER = True

DC_PARAMETER_CONSTRAINTS = {
    "dc_tol": [Interval(numbers.Real, 0, None, closed="left")],
    "max_dc_iter": [Interval(numbers.Integral, 0, None, closed="left")],
}


def dc_fit(sequence, first, objective, linearize, *, tol, dc_tol, max_dc_iter, log,
           first_tol=None, start=None, level_cap=None, inner=None):
    """Run the DC algorithm over ``sequence`` from its untruncated solution ``first``, or
    from a step ``first`` solved to tol (``start``).

    Parameters
    ----------
    sequence : msvm._sequence.DualSequence
        The sequence ``first`` was solved on (it is at ``first``).
    first : msvm._snapshot._Solution
        The solved untruncated convex dual; its problem is the base every step shifts.
    objective : callable
        ``objective(sol)``: the model's (truncated) objective at a solution.
    linearize : callable
        ``linearize(problem, G)``: the box shift of the linearized step at decision values
        G and the mask of truncated samples (``_dc_shift`` of the model).
    tol, dc_tol, max_dc_iter : float, float, int
        The estimator's parameters.
    log : msvm._progress.StepLog
        Reports every convex solve.
    first_tol : float, default=None
        The tolerance ``first`` was solved to (None: ``tol``).  Whatever it is, the
        returned solution is solved to ``tol``.
    start : tuple, default=None
        (base, shift, lin_G) where ``first`` is a DC step (:func:`chain_dc_start`): the
        untruncated dual its problem shifts, the shift and the decision values it
        linearizes.  Its steps are then solved to tol from the first.
    level_cap : int, default=None
        The most DC steps of a probability chain's later level (``LEVEL_DC_STEPS``); the
        loop stops there as converged, without a warning (None: no cap).
    inner : tuple, default=None
        The (method, working set) of the steps' lean solves, where known for the base's
        directions (:func:`kept_inner_solver`; None: found at the first step).

    Returns
    -------
    sol : msvm._snapshot._Solution
        The solution of the last accepted step.
    history : list of float
        The objective after each accepted convex solve (``dc_objectives_``).
    epochs : int
        Solver epochs summed over every solve (``n_solver_iter_``).
    stop_reason : str
        ``'tol'`` (a fixed point, or a decrease below dc_tol), ``'max_dc_iter'`` or
        ``'dc_objective_rose'``; the latter two with a ConvergenceWarning.
    weighed : ndarray of bool, shape (n_samples,)
        The samples whose weights the DC path read: :func:`weighed_samples` of every solve
        (``msvm._probability._path_settled``).
    steps : _SequenceSteps
        The steps (``lin_G``: the decision values the returned solution's shift
        linearizes; ``checked``: whether the loop read the linearization at it).
    """
    steps = _SequenceSteps(sequence, first, objective, linearize, log, tol, start, inner)
    obj = objective(first)
    name = "DC start (untruncated)" if start is None else "DC start (previous level's step)"
    log.step(name, obj, first.resid, n_epochs(first.n_iter))
    history, reason = dc_loop(steps, obj, tol=tol, first_tol=tol if first_tol is None
                              else first_tol, dc_tol=dc_tol, max_dc_iter=max_dc_iter,
                              owner=sequence.owner, loose=start is None, level_cap=level_cap)
    return with_gap(steps.sol), history, steps.epochs, reason, steps.weighed, steps


def dc_loop(steps, obj, *, tol, first_tol, dc_tol, max_dc_iter, owner, loose=True,
            level_cap=None):
    """The DC algorithm's rules (the module docstring) over the convex steps ``steps``.

    ``steps`` solves the convex problems, in memory (:class:`_SequenceSteps`) or over Dask
    chunks (msvm._dask_dc.ChunkedDC); it starts at the untruncated function, solved to
    ``first_tol`` with objective ``obj``, and has:

    * ``changed()``: whether the linearization at the current function is a new problem;
    * ``take(step_tol, gap_scale)``: solve that problem from the current function (the
      step is pending), returning its objective;
    * ``accept(step, obj)``: the pending step becomes the current function;
    * ``reject(step, obj, retake)``: the pending step is dropped (``retake``: it was loose
      and is taken again at tol; else the loop stops at the current function);
    * ``polish(step, tol, gap_scale)``: the current function's problem solved to tol,
      returning its objective.

    Each step's relative duality gap is measured against at least ``GAP_SCALE`` times the
    model's objective (a step at the constant classifier has an objective of rounding size:
    msvm/_core/_gap.pyx).  Returns (the objective after each accepted solve, stop reason);
    ``owner`` names the estimator in the ConvergenceWarnings.  ``loose=False``: every step
    is solved to tol (a start that is already a DC step solved to tol, ``CHAIN_DC_START``).
    ``level_cap``: after that many steps a new linearization is not solved; the loop stops
    as converged (a probability chain's later level, ``LEVEL_DC_STEPS``).
    """
    history, reason = [obj], None
    step_tol, sol_tol, n = max(tol, LOOSE_TOL) if loose else tol, first_tol, 0
    while reason is None and n < max_dc_iter:
        if steps.changed():
            if level_cap is not None and n >= level_cap:
                reason = CONVERGED
                break
            n += 1
            new = steps.take(step_tol, GAP_SCALE * abs(obj))
            if new > obj and step_tol > tol:
                steps.reject(n, new, retake=True)      # a loose step overshot: at tol again
                n, step_tol = n - 1, tol
            elif new > obj:
                steps.reject(n, new, retake=False)
                reason = _objective_rose(owner, n, obj, new, tol=tol, dc_tol=dc_tol)
            else:
                steps.accept(n, new)
                history.append(new)
                decrease, obj, sol_tol = obj - new, new, step_tol
                if step_tol > tol:
                    if decrease <= LOOSE_UNTIL * max(1.0, abs(obj)):
                        step_tol = tol
                elif decrease <= dc_tol * max(1.0, abs(obj)):
                    reason = CONVERGED
        elif sol_tol > tol:
            # the loose path has settled (the same linearization again): to tol
            step_tol = sol_tol = tol
            obj = history[-1] = steps.polish(n, tol, GAP_SCALE * abs(obj))
        else:
            reason = CONVERGED          # the same convex problem again: a DC fixed point
    if reason is None:
        reason = "max_dc_iter"
        warnings.warn(
            f"{owner}: the DC algorithm stopped at max_dc_iter={max_dc_iter} steps "
            f"while the objective still decreased; increase max_dc_iter or dc_tol.",
            ConvergenceWarning)
    if sol_tol > tol:
        # the loop stopped at a loosely solved function (max_dc_iter, or a step at tol
        # rejected after a loose one): the fit is that function's convex problem to tol
        history[-1] = steps.polish(n, tol, GAP_SCALE * abs(obj))
    return history, reason


class _SequenceSteps:
    """The convex steps of :func:`dc_loop` in memory: the model's DualProblem with its boxes
    shifted by the linearization, solved on the DualSequence from the current solution
    (only the variables whose shift changed move), every solve reported to ``log``."""

    def __init__(self, sequence, first, objective, linearize, log, tol, start=None,
                 inner=None):
        self.sequence, self.objective = sequence, objective
        self.linearize, self.log = linearize, log
        if start is None:
            start = (first.problem, np.zeros(first.problem.n_vars), None)
        # the untruncated dual every step shifts, the current shift and the decision values
        # it linearizes (None: no shift), and those of a pending step
        self.base, self.shift, self.lin_G = start
        self.sol, self.epochs = first, first.n_iter
        self.new_shift = self.pending = self.pending_lin = None
        # (the solution, its truncated mask) of the last linearization (``truncated``)
        self.last_linearized = (None, None)
        self.rejected, self.tol = False, tol
        # whether the loop read the linearization at ``sol``: it repeated, or the step it
        # gave rose and was dropped (``truncated_fit``: the marks of a chain's refit)
        self.checked = False
        # the samples whose weights the path has read so far (weighed_samples)
        self.weighed = weighed_samples(first.problem, first.alpha,
                                       None if start[2] is None else self.shift)
        self.lean, self.inner = lean_steps_apply(sequence), inner
        # a lean step's duality gap formed only where it is read (``step_solution``)
        snap = sequence._snapshot
        self.defer_gap = (self.lean and isinstance(snap, functools.partial)
                          and snap.func is step_solution)

    def changed(self):
        self.new_shift, truncated = self.linearize(self.base, self.sol.G)
        self.last_linearized = (self.sol, truncated)
        same = np.array_equal(self.new_shift, self.shift)
        self.checked = same
        return not same

    def truncated(self, problem):
        """The truncated mask of the returned solution at ``problem``'s bounds: the one
        the loop's last linearization formed where it was read at that solution and
        ``problem`` is the base it shifts (``DC_KEPT_VALUES``), else formed here."""
        sol, mask = self.last_linearized
        if DC_KEPT_VALUES and sol is self.sol and problem is self.base:
            return mask
        return self.linearize(problem, self.sol.G)[1]

    def take(self, step_tol, gap_scale):
        alpha0, mu0 = self.sol.alpha + self.shift - self.new_shift, self.sol.mu
        start = self._smoothed_start() if SMOOTHED_DC else None
        if start is not None:
            # the start is the smoothed primal's point at tol: solved to tol at once (a
            # later polish of this step starts at its solution and costs nothing); its
            # linearization and start depend on every sample's weight
            (self.new_shift, alpha0, mu0), step_tol = start, self.tol
            self.weighed[:] = True
        self.pending_lin = self.sol.G
        sol = self.pending = self._solve(step_problem(self.base, self.new_shift), alpha0,
                                         mu0, step_tol, gap_scale)
        self.epochs += sol.n_iter
        mark_weighed(self.weighed, sol.problem, sol.alpha, self.new_shift)
        return self.objective(sol)

    def _smoothed_start(self):
        """(shift, alpha, mu) of the DC iteration on the smoothed primal from the current
        function (msvm._primal.smoothed_dc_start), where the step's dual would start from
        the smoothed primal anyway (the sequence's plan) and its groups can be smoothed;
        None elsewhere, and after a rejected step (it is taken again as before)."""
        if self.rejected:
            return None
        seq = self.sequence
        X, W = getattr(seq, "features", None), getattr(seq.src, "weights", None)
        if X is None or W is None or not capped_terms_possible(self.base):
            return None
        problem = shifted(self.base, self.new_shift)
        diag = seq.src.diagonal()
        if not seq.plan.starts_from_primal(problem, X, diag):
            return None
        with seq._blas_threads():
            return smoothed_dc_start(self.base, self.new_shift, self.linearize, X,
                                     np.asarray(W), self.sol.mu, self.tol, diag,
                                     seq.max_iter)

    def accept(self, step, obj):
        self._report(f"DC step {step}", obj, self.pending)
        self.sol, self.shift, self.lin_G = self.pending, self.new_shift, self.pending_lin
        self.checked = False

    def reject(self, step, obj, retake):
        self.rejected = True
        if retake:
            self._report(f"DC step {step} rejected (objective rose; retaken at tol)", obj,
                         self.pending)
            self.sequence.move_to(self.sol.problem, self.sol.alpha)
        else:
            # the scores stay at the rejected step: nothing reads them after the loop
            self.checked = True
            self._report(f"DC step {step} rejected (objective rose; the fit keeps step "
                         f"{step - 1})", obj, self.pending)

    def polish(self, step, tol, gap_scale):
        self.checked = False
        sol = self.sol = self._solve(self.sol.problem, self.sol.alpha, self.sol.mu, tol,
                                     gap_scale)
        self.epochs += sol.n_iter
        mark_weighed(self.weighed, sol.problem, sol.alpha)
        obj = self.objective(sol)
        name = f"DC step {step}" if step else "DC start (untruncated)"
        self._report(f"{name} polished to tol", obj, sol)
        return obj

    def _report(self, what, obj, sol):
        self.log.step(what, obj, sol.resid, n_epochs(sol.n_iter))

    def _solve(self, problem, alpha0, mu0, tol, gap_scale):
        """``DualSequence.solve`` of a step (a copy of alpha0 and mu0 solved), lean where
        ``lean_steps_apply`` (:meth:`_lean_solve`)."""
        if not self.lean:
            return self.sequence.solve(problem, alpha0, mu0, tol=tol, gap_scale=gap_scale)
        return self._lean_solve(problem, alpha0, mu0, tol, gap_scale)

    def _lean_solve(self, problem, alpha0, mu0, tol, gap_scale):
        """:func:`lean_solve` of a step, the inner solver of the fit's first step kept (the
        steps' problems share the base's directions)."""
        sol, self.inner = lean_solve(self.sequence, problem, alpha0, mu0, tol, gap_scale,
                                     self.inner, self.defer_gap)
        return sol


def lean_solve(seq, problem, alpha0, mu0, tol, gap_scale, inner=None, defer_gap=False):
    """``DualSequence.solve(problem, alpha0, mu0, tol, gap_scale=gap_scale)`` on ``seq``
    where :func:`lean_steps_apply`: the same solver runs, finishing steps, record and
    snapshot, without the steps that do nothing there (a primal start, a refit's budget,
    certification on fresh scores, a refresh).  ``inner``: the (method, working set) found
    for an earlier problem with the same directions (None: found here); ``defer_gap``: the
    snapshot's duality gap left to :func:`with_gap`.  Returns (the solution, ``inner``)."""
    alpha, mu = np.array(alpha0, dtype=np.float64), np.array(mu0, dtype=np.float64)
    seq.move_to(problem, alpha)
    if inner is None:
        inner = seq.plan.inner_solver(seq.src, problem)
    method, working_set = inner
    alpha, mu, result, finished, late = seq._solve_and_finish(
        problem, alpha, mu, tol, False, method, working_set, gap_scale)
    seq.plan = seq.plan.record(SolveStep(method, working_set, False, finished, late))
    seq.stop_reasons.append(SOLVER_STOP_REASONS[result.status])
    if defer_gap:
        sol = seq._snapshot(problem, alpha, mu, int(result.n_iter), float(result.residual),
                            defer_gap=True)
    else:
        sol = seq._snapshot(problem, alpha, mu, int(result.n_iter), float(result.residual))
    if result.status != Status.CONVERGED:
        seq._warn_if_stopped_early(result.status, result.residual, result.gap, tol,
                                   with_gap(sol).gap)
    return sol, inner


def lean_steps_apply(sequence):
    """Whether the DC steps on ``sequence`` are lean solves (``LEAN_DC_LOOP``): after a
    first solve (its plan has a step, so no step is a warm-started refit's first solve), on
    kernel rows computed in the core (no explicit features, so no primal start; not a Gram
    matrix from outside) whose scores cannot drift (``DualSequence._scores_can_drift``: no
    certification on fresh scores, no refresh)."""
    return LEAN_DC_LOOP and bool(sequence.plan.steps) and sequence.on_core_rows_without_drift()


def _objective_rose(owner, step, obj, new, *, tol, dc_tol):
    """A step solved to tol raised the objective from ``obj`` to ``new``: the fit keeps the
    last function and stops.  Only an inexact convex solve can raise the objective; a
    ConvergenceWarning says so when the rise exceeds the solver's accuracy (stop reason
    ``'dc_objective_rose'``)."""
    if new - obj <= max(dc_tol, tol) * max(1.0, abs(obj)):
        return CONVERGED
    warnings.warn(
        f"{owner}: DC step {step} raised the objective from {obj:.10g} to {new:.10g} (the "
        f"convex step is solved to tol={tol:g} only); the fit stops at the previous step's "
        f"function. Lower tol for a more exact DC path.", ConvergenceWarning)
    return "dc_objective_rose"


def step_problem(base, shift):
    """``msvm._problem.shifted(base, shift)``, the DC step's problem: with
    ``LEAN_DC_STEPS`` a copy of ``base`` with the same bounds and caps (the same
    arithmetic) and its other arrays and their caches shared, without the constructor's
    checks.  They hold by construction: ``base`` passed them, a shift is finite (a multiple
    of a finite bound) and moves both bounds of a variable by the same amount (a rounded
    difference keeps lo <= hi)."""
    if not LEAN_DC_STEPS:
        return shifted(base, shift)
    problem = copy.copy(base)
    problem.box_lo, problem.box_hi, problem.cap = shifted_bounds(base, shift)
    problem.lo_per_entry = problem.hi_per_entry = False
    return problem


def lean_snapshot(estimator, sequence):
    """Set ``sequence``'s snapshot to :func:`step_solution` where it gives the values of
    ``msvm._snapshot.snapshot``: with ``LEAN_DC_STEPS``, kernel rows computed in the core
    (no explicit features, no Gram matrix from outside), the identity output map, and
    exact intercepts for its problems (every loss term on one slot: RobustMSVM's)."""
    src = sequence.src
    if (not LEAN_DC_STEPS or estimator._explicit_features() or sequence.features is not None
            or getattr(src, "gram", None) is not None or getattr(src, "weights", None)
            is not None or getattr(estimator, "intercept_solver", "exact") != "exact"
            or not output_map(estimator, len(estimator.classes_))[1]
            or estimator._decision_only()):
        return
    sequence._snapshot = functools.partial(step_solution, estimator, src,
                                           sequence=sequence if DEFERRED_START_GAPS else None)


def step_solution(model, src, problem, alpha, mu, n_iter, resid, defer_gap=False,
                  sequence=None):
    """``msvm._snapshot.snapshot`` of a solve (the decision values at the training points,
    the penalty, the duality gap), its exact intercepts and coefficients V formed by the
    compiled level tail (msvm/_core/_level_loop.pyx ``level_tail``: the values of the
    Python step, bit for bit), where :func:`lean_snapshot` set it; a problem whose
    intercepts are the KKT estimate -mu (some direction with two slots) takes its V from
    the level tail too (``KKT_STEP_SOLUTIONS``; else ``snapshot``'s own steps).  With
    ``defer_gap`` the duality gap is left NaN and its inputs kept (the scores' copy and the
    intercepts), formed by :func:`with_gap` where it is read: the one of a DC fit's returned
    step and of a solve stopped early, not those of the steps the loop passes through;
    with ``sequence`` (``DEFERRED_START_GAPS``) also where its last solve converged."""
    defer_gap = defer_gap or (sequence is not None and sequence.stop_reasons[-1:] == [CONVERGED])
    solver = intercept_solver(model, problem)
    if solver != "exact" and not (solver is None and KKT_STEP_SOLUTIONS):
        return full_snapshot(model, None, src, problem, alpha, mu, n_iter, resid)
    b_slot, V, _, _ = tail_intercepts(problem, alpha, src, -mu, solver,
                                      np.zeros(problem.n_samples, dtype=np.uint8))
    F = training_scores(None, None, src)
    gap = np.nan if defer_gap else duality_gap(problem, alpha, F, b_slot)
    H = centre_and_scale_in_place(training_scores(None, None, src), problem.kappa)
    penalty = slot_penalty(V, H)
    intercept = _identity(problem.k) @ b_slot    # T @ b_slot of ``snapshot`` (T = I)
    f_train = np.add(H, intercept, out=H)
    check_finite_objective(model, penalty, "the penalty 1/2 sum_j ||h_j||^2")
    sol = _Solution(problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter, resid=resid,
                    V=V, W=None, intercept=intercept,
                    G=model._decision_from_output(f_train),
                    penalty=max(0.0, penalty), gap=gap)
    if defer_gap:
        sol.gap_inputs = (F, b_slot)
    return sol


@functools.lru_cache(maxsize=16)
def _kept_identity(k):
    identity = np.eye(k)
    identity.flags.writeable = False
    return identity


def _identity(k):
    """The k x k identity output map: made once per k with ``DC_KEPT_VALUES`` (read
    only), else anew."""
    return _kept_identity(k) if DC_KEPT_VALUES else np.eye(k)


def keep_objective(sol, y, sw, value):
    """Keep ``value``, the model's objective at ``sol`` for labels ``y`` and weights ``sw``
    (the DC loop's last entry), for :class:`KeptDCObjective` (``DC_KEPT_VALUES``)."""
    if DC_KEPT_VALUES:
        sol.kept_objective = (y, sw, value)


class KeptDCObjective:
    """Mixin: a DC model's objective at the solution its fit returns, read from the fit
    (:func:`keep_objective`) where it is asked for the same labels and weights (the same
    arrays: ``_store_solution``), instead of formed a second time."""

    def _objective(self, sol, y, sw):
        kept = getattr(sol, "kept_objective", None)
        if DC_KEPT_VALUES and kept is not None and kept[0] is y and kept[1] is sw:
            return kept[2]
        return super()._objective(sol, y, sw)


def with_gap(sol):
    """``sol`` with its duality gap formed where :func:`step_solution` deferred it (the
    value it would have formed: the same scores and intercepts)."""
    inputs = getattr(sol, "gap_inputs", None)
    if inputs is not None:
        sol.gap = duality_gap(sol.problem, sol.alpha, *inputs)
        del sol.gap_inputs
    return sol


def kept_penalty_and_seed(estimator, sequence, problem):
    """Give the new ``sequence`` of a probability chain's refit (``_kept_dual``) the penalty
    rho and seed that its first solve would fix (``DualSequence._fix_penalty_and_seed``:
    a median of the kernel diagonal, and a draw from an integer ``random_state``), kept
    from the chains' first refit on the same row source (the same values); with
    ``LEAN_DC_STEPS``.  A ``random_state`` that is not an integer draws anew at every
    refit, as before; with ``LEAN_DC_LOOP`` its rho (a function of the source) is kept
    all the same, and so is the source's drift test (``DualSequence._scores_can_drift``,
    another median of the diagonal)."""
    kept = getattr(estimator, "_kept_dual", None)
    if kept is None or not LEAN_DC_STEPS or sequence.rho is not None:
        return
    seeded = isinstance(sequence.random_state, numbers.Integral)
    if not (seeded or LEAN_DC_LOOP):
        return
    key = (sequence.src, problem.kappa, int(sequence.random_state) if seeded else None)
    if kept.settings is None or not _same_settings(kept.settings[0], key):
        sequence._fix_penalty_and_seed(problem)
        sequence._scores_can_drift()
        kept.settings = (key, sequence.rho, sequence.seed, sequence._drift)
        return
    sequence.rho, sequence.seed = kept.settings[1:3]
    if not seeded:
        sequence.seed = sequence.drawn_seed()
    if LEAN_DC_LOOP:
        sequence._drift = kept.settings[3]


def _same_settings(a, b):
    return a[0] is b[0] and a[1:] == b[1:]


def chain_dual_problem(estimator, y, k, weights):
    """The model's dual at the weights C w_i: ``estimator._dual_problem``, or with
    ``LEAN_DC_STEPS`` on a probability chain's estimator the chain's kept dual at these
    weights (``_kept_dual``, a ``msvm._level_chain.ScaledDual``: the same values).  A DC
    model's untruncated dual, a reweighting's first one (at v = 1)."""
    kept = getattr(estimator, "_kept_dual", None)
    if kept is None or not LEAN_DC_STEPS:
        return estimator._dual_problem(y, k, weights)
    return kept.at(weights, lambda w: estimator._dual_problem(y, k, w))


def compiled_shift(problem, G, s, margin):
    """(shift, truncated) of a truncated model's linearization at decision values G
    (``_dc_shift``'s values) by the compiled pass (``COMPILED_DC_PASSES``,
    msvm/_core/_dc_pass.pyx ``truncation_shift``): one decision value per term above the
    truncation point ``s`` (RobustMSVM) or, with ``margin``, a group's generalized margin
    below it (WeightedRobustMSVM); None where the switch is off or the pass leaves it to
    the model's NumPy step."""
    if not COMPILED_DC_PASSES or s is None:
        return None
    return truncation_shift(problem, np.asarray(G, dtype=np.float64), float(s), margin)


def compiled_losses(G, y, s, utility=None):
    """Each sample's loss of a truncated model at decision values G (labels ``y``,
    truncation point ``s``; with ``utility`` WeightedRobustMSVM's, else RobustMSVM's) by the
    compiled pass (``COMPILED_DC_LOSSES``, msvm/_core/_dc_pass.pyx ``sample_losses``: the
    values of ``msvm._losses.truncated_hinge_loss`` / ``utility_margin_loss``); None where
    the switch is off or the pass leaves it to NumPy."""
    if not COMPILED_DC_LOSSES:
        return None
    return sample_losses(np.asarray(G, dtype=np.float64), y, s, utility)


def mark_weighed(marks, problem, alpha, shift=None):
    """``marks |= weighed_samples(problem, alpha, shift)`` in place (``marks``: boolean,
    C-contiguous), by one compiled pass with ``COMPILED_DC_PASSES``."""
    if not COMPILED_DC_PASSES:
        marks |= weighed_samples(problem, alpha, shift)
        return
    weighed_marks(problem, np.ascontiguousarray(alpha, dtype=np.float64),
                  None if shift is None else np.ascontiguousarray(shift, dtype=np.float64),
                  marks.view(np.uint8))


def weighed_samples(problem, alpha, shift=None):
    """Boolean (n,): the samples whose weights a solve of a fit's path read, at its
    solution ``alpha`` of ``problem``: those with a variable at a bound that moves with
    their weight (``DualProblem.at_moving_bounds``) and, for a DC step, those whose
    linearization shifts a variable (``shift``, whose entries are multiples of the
    sample's weight: the linear term of a truncated term, C w_i per truncated hinge).

    The weights of the other samples enter neither this solve's optimality conditions nor
    its start nor its objective (up to the hinge terms of variables free at their hinge,
    zero up to the solve's residual): see ``msvm._probability._path_settled``.
    """
    if COMPILED_DC_PASSES:
        marks = np.zeros(problem.n_samples, dtype=bool)
        mark_weighed(marks, problem, alpha, shift)
        return marks
    marks = problem.at_moving_bounds(alpha)
    if shift is not None:
        marks |= problem.samples_with(np.asarray(shift) != 0)
    return marks


def truncated_fit(estimator, sequence, y, sw, log):
    """The fit of a truncated model: its untruncated start, then the DC algorithm.

    ``estimator`` supplies ``_dual_problem`` (the untruncated convex dual),
    ``_truncation_value(k)`` (None: no truncation, the start is the fit) and
    ``_dc_shift(problem, G, y)`` (the linearized step's box shift and truncated mask).
    Returns the :class:`msvm._sequence.SequenceFit` with the DC attributes
    (``dc_objectives_``, ``truncated_``, ``n_iter_``, ``n_solver_iter_``) and
    ``_weight_bound_samples_``, the samples whose weights some solve of the fit read
    (:func:`weighed_samples`; what a probability chain's settled rule reads).
    """
    k = len(estimator.classes_)
    is_truncated = estimator._truncation_value(k) is not None
    lean_snapshot(estimator, sequence)
    problem = chain_dual_problem(estimator, y, k, estimator.C_ * sw)
    kept_penalty_and_seed(estimator, sequence, problem)
    chained = is_truncated and chain_start_applies(estimator, sequence)

    def linearize(problem, G):
        return estimator._dc_shift(problem, G, y)

    start = chain_dc_start(estimator, sequence, problem, linearize, sw) if chained else None
    if start is None:
        first_tol = _first_tol(estimator, problem, is_truncated)
        first = _level_start(estimator, sequence, problem, first_tol)
    else:
        (first, *start), first_tol = start, None

    def objective(sol):
        return estimator._objective(sol, y, sw)

    if not is_truncated:
        sol, history, epochs = with_gap(first), [objective(first)], first.n_iter
        log.step("solve", history[0], sol.resid, n_epochs(sol.n_iter))
        truncated, reason = np.zeros(len(y), dtype=bool), CONVERGED
        weighed = weighed_samples(first.problem, first.alpha)
    else:
        dc_tol, level_cap = level_rules(estimator)
        sol, history, epochs, reason, weighed, steps = dc_fit(
            sequence, first, objective, linearize, tol=estimator.tol, dc_tol=dc_tol,
            max_dc_iter=estimator.max_dc_iter, log=log, first_tol=first_tol, start=start,
            level_cap=level_cap, inner=kept_inner_solver(estimator, sequence, problem))
        if chained:
            keep_chain_dc_start(estimator, steps, history[-1], sw)
        # after keep_chain_dc_start: the linearization it reads is the returned solution's
        truncated = steps.truncated(problem)
        keep_objective(sol, y, sw, history[-1])
    return SequenceFit(sol, sw, sequence.stop_reason(reason), start=first, attributes={
        "dc_objectives_": np.array(history), "truncated_": truncated,
        "n_iter_": len(history), "n_solver_iter_": epochs,
        "_weight_bound_samples_": weighed})


def level_rules(estimator):
    """(dc_tol, level_cap) of ``estimator``'s DC loop: its own ``dc_tol`` and no cap, except
    on a probability chain's refit (it has the chain's ``_kept_dual``), where
    ``LEVEL_DC_TOL`` raises dc_tol to the refit's ``tol`` and ``LEVEL_DC_STEPS`` caps the
    steps of every level after the chain's first (``_dc_levels``: the levels the chain's
    estimator has fitted)."""
    if getattr(estimator, "_kept_dual", None) is None:
        return estimator.dc_tol, None
    levels = estimator.__dict__.get("_dc_levels", 0)
    estimator._dc_levels = levels + 1
    dc_tol = max(estimator.dc_tol, estimator.tol) if LEVEL_DC_TOL else estimator.dc_tol
    return dc_tol, LEVEL_DC_STEPS if levels else None


def lean_start_applies(estimator, sequence):
    """Whether the first solve of ``estimator``'s DC fit on ``sequence`` is a lean solve
    (``LEAN_LEVEL_STARTS``): a probability chain's refit (the chain's ``_kept_dual``),
    whose plan makes a 'dual first' refit (no start from a kernel factor; on kernel rows
    no primal start and no dual budget either), on kernel rows computed in the core whose
    scores cannot drift (no certification on fresh scores, no refresh): there
    ``DualSequence.solve`` runs what :func:`lean_solve` runs."""
    return (LEAN_LEVEL_STARTS and getattr(estimator, "_kept_dual", None) is not None
            and sequence.plan.refit_start == "dual first"
            and sequence.on_core_rows_without_drift())


def kept_inner_solver(estimator, sequence, problem):
    """``sequence.plan.inner_solver(sequence.src, problem)`` for a probability chain's refit
    (the chain's ``_kept_dual``) with ``KEPT_INNER_SOLVER``: found once and kept on the
    estimator for the next refits on the same row source, plan settings and direction
    arrays (the choice reads nothing else: ``SolvePlan.inner_solver``); None elsewhere (the
    caller finds it)."""
    if not KEPT_INNER_SOLVER or getattr(estimator, "_kept_dual", None) is None:
        return None
    plan = sequence.plan
    arrays = (sequence.src, problem.var_entry, problem.entry_coef1, problem.entry_slot2,
              problem.entry_coef2)
    kept = estimator.__dict__.get("_dc_inner")
    if (kept is None or kept[1] != (plan.solver, plan.working_set)
            or not all(a is b for a, b in zip(kept[0], arrays))):
        kept = estimator._dc_inner = (arrays, (plan.solver, plan.working_set),
                                      plan.inner_solver(sequence.src, problem))
    return kept[2]


def _level_start(estimator, sequence, problem, tol):
    """``estimator._start(sequence, problem, tol=tol)``: the untruncated start of a DC fit;
    where :func:`lean_start_applies` and the fit is warm-started, its warm branch (the
    previous fit's dual rescaled to this C, the scores with it, clipped to ``problem``)
    solved by :func:`lean_solve`."""
    start = (estimator._warm_start_point(sequence, problem)
             if lean_start_applies(estimator, sequence) else None)
    if start is None:
        return estimator._start(sequence, problem, tol=tol)
    alpha0, mu0 = start
    alpha0 = problem.clip_feasible(alpha0)
    sequence._fix_penalty_and_seed(problem)
    return lean_solve(sequence, problem, alpha0, mu0 - mu0.mean(),
                      sequence.tol if tol is None else float(tol), 0.0,
                      kept_inner_solver(estimator, sequence, problem))[0]


def _first_tol(estimator, problem, is_truncated):
    """The tolerance of a DC fit's untruncated start: loose (see the module docstring),
    except where it starts from a previous fit's dual (warm_start, a lambda path): that
    start is solved to tol (None), so that a refit at the same C repeats the DC path it
    stored (the local minimum depends on the start) instead of moving a loose start
    again."""
    state = estimator._warm_start_state()
    warm = estimator.warm_start and state is not None and state.fits(problem)
    return max(estimator.tol, LOOSE_TOL) if is_truncated and not warm else None


class ChainDCStart:
    """Where a probability chain's next DC refit starts (``CHAIN_DC_START``): the last
    accepted step of this level's DC path.

    Attributes
    ----------
    alpha : ndarray of shape (n_vars,)
        Its dual solution (shared, never written).
    mu : ndarray of shape (k,)
        Its equality multipliers.
    lin_G : ndarray of shape (n_samples, k) or None
        The decision values its shift linearizes (None: the untruncated dual).
    objective : float
        Its objective (the scale of the next level's first duality gap, ``GAP_SCALE``).
    C : float
        The C of the fit.
    """

    def __init__(self, alpha, mu, lin_G, objective, C):
        self.alpha, self.mu, self.lin_G = alpha, mu, lin_G
        self.objective, self.C = objective, C
        self.sw = None


def chain_start_applies(estimator, sequence):
    """Whether ``estimator``'s DC fit is a probability chain's refit (it has the chain's
    ``_kept_dual``: ``msvm._probability._weighted_chain``) that starts from the previous
    level's last step and keeps its own for the next (``CHAIN_DC_START``, and the model's
    ``_levels_from_last_step``): on kernel rows, where every step's shift is a
    linearization (no smoothed-primal start), warm-started."""
    return (CHAIN_DC_START and getattr(estimator, "_levels_from_last_step", False)
            and getattr(estimator, "_kept_dual", None) is not None
            and estimator.warm_start and sequence.features is None)


def chain_dc_start(estimator, sequence, problem, linearize, sw):
    """The first solve of a chain's DC refit from the previous level's last step (its
    ``ChainDCStart``, kept by :func:`keep_chain_dc_start`), or None where there is none
    (the chain's first level) or it does not fit ``problem``.

    The step's problem is ``problem`` (the untruncated dual at this level's weights)
    shifted by the linearization at the previous step's decision values, so with the same
    indicators and this level's bounds; its start is the previous step's dual, feasible
    there (the chain's weights only grow: every bound and shift is a multiple of its
    sample's weight, clipped all the same), solved to tol.  Returns (first, base, shift,
    lin_G) for :func:`dc_fit`.

    Why the settled rule (``msvm._probability._path_settled``) stays sound: where no
    sample of the up-weighted class is among a fit's marks, the refit at a larger weight
    starts from the same step with the same indicators (an unmarked sample's shift is zero
    at any weight), which meets its conditions there with the same residual (the rule's
    point 1): the same solution and objective.  The loop then reads the linearization at
    it, as this fit's loop did last (:func:`keep_chain_dc_start` marks every sample where
    it did not): the same linearization repeats, or the same step (its solution marked)
    rises again and is dropped.  The refit returns this fit.
    """
    previous = estimator.__dict__.get("_dc_chain_start")
    if (previous is None or previous.alpha.shape != (problem.n_vars,)
            or previous.mu.shape != (problem.k,) or previous.C != estimator.C_
            or (previous.lin_G is not None and len(previous.lin_G) != problem.n_samples)):
        return None
    if previous.lin_G is None:
        shift = np.zeros(problem.n_vars)
    else:
        shift = linearize(problem, previous.lin_G)[0]
        if CHAIN_DC_RESET and previous.sw is not None and len(previous.sw) == len(sw):
            shift[(sw != previous.sw)[problem.sample_of_var()]] = 0.0
    step = step_problem(problem, shift)
    alpha0 = step.clip_feasible(previous.alpha)
    gap_scale = GAP_SCALE * abs(previous.objective)
    if lean_start_applies(estimator, sequence):
        sequence._fix_penalty_and_seed(step)
        first = lean_solve(sequence, step, alpha0, previous.mu, sequence.tol, gap_scale,
                           kept_inner_solver(estimator, sequence, step))[0]
    else:
        first = sequence.solve(step, alpha0, previous.mu, copy=False, gap_scale=gap_scale)
    return first, problem, shift, previous.lin_G


def keep_chain_dc_start(estimator, steps, objective, sw):
    """Keep the DC fit's last accepted step (``steps``, the fit's :class:`_SequenceSteps`)
    as the start of the chain's next refit (:func:`chain_dc_start`).  Where the loop did
    not read the linearization at that step (it stopped on a decrease below dc_tol, at
    max_dc_iter, or after a polish), the next refit may take a step this fit never took:
    every sample is marked, so the chain does not stop here; with ``LEVEL_DC_TOL`` (a
    stop on a decrease within tol) the linearization at that step is read first, and a
    repeated one is a DC fixed point as in the loop."""
    if not steps.checked and LEVEL_DC_TOL:
        steps.changed()                 # sets ``checked`` where the linearization repeats
    if not steps.checked:
        steps.weighed[:] = True
    estimator._dc_chain_start = ChainDCStart(steps.sol.alpha, steps.sol.mu.copy(),
                                             steps.lin_G, objective, estimator.C_)
    estimator._dc_chain_start.sw = np.array(sw)


class TruncatedDegenerateCause:
    """Mixin: the DegenerateFitWarning cause and remedy of a truncated model.

    The model's fit is :func:`truncated_fit`; it supplies ``_truncation_value(k)`` and the
    fitted ``truncated_``.
    """

    # how to truncate less, for the DegenerateFitWarning (a model may say it better)
    _less_truncation = "less truncation (truncation=None: none)"

    def _degenerate_cause(self):
        if self._truncation_value(len(self.classes_)) is None or not np.any(self.truncated_):
            return super()._degenerate_cause()
        return (f"the truncated loss prefers the constant function at this C ("
                f"{int(np.sum(self.truncated_))} of {len(self.truncated_)} training samples "
                f"truncated). With free intercepts a constant classifier costs no penalty and "
                f"only the loss's bound on each sample of the other classes; when C is small "
                f"and the classes overlap that is lower than any nonconstant fit, so this is "
                f"the model's DC solution, not a solver failure",
                f"use a larger C or {self._less_truncation}, e.g. C tuned with "
                f"msvm.model_selection.TuningSetSearch")
