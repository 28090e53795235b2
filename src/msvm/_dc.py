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

The loop is :func:`dc_fit`, a function over a :class:`msvm._sequence.DualSequence` (the row
source and the scores of the current step); :func:`truncated_fit` is the whole fit of a
truncated model (its untruncated start, then the loop).
"""

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from ._problem import shifted
from ._progress import n_epochs
from ._sequence import CONVERGED, SequenceFit

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

DC_PARAMETER_CONSTRAINTS = {
    "dc_tol": [Interval(numbers.Real, 0, None, closed="left")],
    "max_dc_iter": [Interval(numbers.Integral, 0, None, closed="left")],
}


def dc_fit(sequence, first, objective, linearize, *, tol, dc_tol, max_dc_iter, log,
           first_tol=None):
    """Run the DC algorithm over ``sequence`` from its untruncated solution ``first``.

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
    """
    path = _DCPath.start(first, objective, tol, tol if first_tol is None else first_tol)
    log.step("DC start (untruncated)", path.obj, first.resid, n_epochs(first.n_iter))
    reason = None
    while reason is None and path.steps < max_dc_iter:
        new_shift, _ = linearize(first.problem, path.sol.G)
        if not np.array_equal(new_shift, path.shift):
            reason = _dc_step(sequence, path, first.problem, new_shift, objective, tol=tol,
                              dc_tol=dc_tol, log=log)
        elif path.sol_tol > tol:
            _polish(sequence, path, objective, tol, log)
        else:
            reason = CONVERGED          # the same convex problem again: a DC fixed point
    if reason is None:
        reason = "max_dc_iter"
        warnings.warn(
            f"{sequence.owner}: the DC algorithm stopped at max_dc_iter={max_dc_iter} steps "
            f"while the objective still decreased; increase max_dc_iter or dc_tol.",
            ConvergenceWarning)
    if path.sol_tol > tol:
        # the loop stopped at a loosely solved function (max_dc_iter, or a step at tol
        # rejected after a loose one): the fit is that function's convex problem to tol
        _polish(sequence, path, objective, tol, log)
    return path.sol, path.history, path.epochs, reason


@dataclass
class _DCPath:
    """The state of the DC loop: the last accepted solution and the path that led to it.

    ``step_tol`` is the inner tolerance of the next step: early steps only move the
    linearization and are solved loosely (``LOOSE_TOL``), the last ones, which decide
    convergence, to tol; ``sol_tol`` is the tolerance ``sol`` was solved to.
    """

    sol: object
    obj: float
    shift: np.ndarray
    history: list
    epochs: int
    step_tol: float
    sol_tol: float
    steps: int = 0

    @classmethod
    def start(cls, first, objective, tol, first_tol):
        """The path at the untruncated solution ``first`` (solved to ``first_tol``)."""
        obj = objective(first)
        return cls(sol=first, obj=obj, shift=np.zeros(first.problem.n_vars), history=[obj],
                   epochs=first.n_iter, step_tol=max(tol, LOOSE_TOL), sol_tol=first_tol)


def _polish(sequence, path, objective, tol, log):
    """The loose path has settled (the same linearization again): solve the same problem to
    tol; its objective replaces the last one of the history."""
    path.step_tol = path.sol_tol = tol
    sol = path.sol = sequence.solve(path.sol.problem, path.sol.alpha, path.sol.mu, tol=tol,
                                    gap_scale=GAP_SCALE * abs(path.obj))
    path.epochs += sol.n_iter
    path.obj = path.history[-1] = objective(sol)
    name = f"DC step {path.steps}" if path.steps else "DC start (untruncated)"
    log.step(f"{name} polished to tol", path.obj, sol.resid, n_epochs(sol.n_iter))


def _dc_step(sequence, path, base, new_shift, objective, *, tol, dc_tol, log):
    """Solve the convex step linearized at the shift ``new_shift``, warm-started from the
    path's solution; accept it or reject it.  Returns the stop reason, or None to go on."""
    path.steps += 1
    # the step's gap is measured against 1 % of the model's objective at least (a step at
    # the constant classifier has an objective of rounding size: msvm/_core/_gap.pyx)
    new_sol = sequence.solve(shifted(base, new_shift), path.sol.alpha + path.shift - new_shift,
                             path.sol.mu, tol=path.step_tol, gap_scale=GAP_SCALE * abs(path.obj))
    path.epochs += new_sol.n_iter
    new_obj = objective(new_sol)
    if new_obj > path.obj and path.step_tol > tol:
        # a loose step overshot: undo it and take it again at full accuracy
        log.step(f"DC step {path.steps} rejected (objective rose; retaken at tol)",
                 new_obj, new_sol.resid, n_epochs(new_sol.n_iter))
        sequence.move_to(path.sol.problem, path.sol.alpha)
        path.steps -= 1
        path.step_tol = tol
        return None
    if new_obj > path.obj:
        return _objective_rose(sequence, path, new_sol, new_obj, tol=tol, dc_tol=dc_tol,
                               log=log)
    path.history.append(new_obj)
    log.step(f"DC step {path.steps}", new_obj, new_sol.resid, n_epochs(new_sol.n_iter))
    decrease = path.obj - new_obj
    path.sol, path.obj, path.shift, path.sol_tol = new_sol, new_obj, new_shift, path.step_tol
    if path.step_tol > tol:
        if decrease <= LOOSE_UNTIL * max(1.0, abs(path.obj)):
            path.step_tol = tol
    elif decrease <= dc_tol * max(1.0, abs(path.obj)) and path.sol_tol == tol:
        return CONVERGED
    return None


def _objective_rose(sequence, path, new_sol, new_obj, *, tol, dc_tol, log):
    """A step solved to tol raised the objective: keep the path's function and stop.

    Only an inexact convex solve can raise the objective; a ConvergenceWarning says so when
    the rise exceeds the solver's accuracy (stop reason ``'dc_objective_rose'``).  The scores
    stay at the rejected step: nothing reads them after the loop.
    """
    log.step(f"DC step {path.steps} rejected (objective rose; the fit keeps step "
             f"{path.steps - 1})", new_obj, new_sol.resid, n_epochs(new_sol.n_iter))
    if new_obj - path.obj <= max(dc_tol, tol) * max(1.0, abs(path.obj)):
        return CONVERGED
    warnings.warn(
        f"{sequence.owner}: DC step {path.steps} raised the objective from "
        f"{path.obj:.10g} to {new_obj:.10g} (the convex step is solved to tol="
        f"{tol:g} only); the fit stops at the previous step's function. Lower "
        f"tol for a more exact DC path.", ConvergenceWarning)
    return "dc_objective_rose"


def truncated_fit(estimator, sequence, y, sw, log):
    """The fit of a truncated model: its untruncated start, then the DC algorithm.

    ``estimator`` supplies ``_dual_problem`` (the untruncated convex dual),
    ``_truncation_value(k)`` (None: no truncation, the start is the fit) and
    ``_dc_shift(problem, G, y)`` (the linearized step's box shift and truncated mask).
    Returns the :class:`msvm._sequence.SequenceFit` with the DC attributes
    (``dc_objectives_``, ``truncated_``, ``n_iter_``, ``n_solver_iter_``).
    """
    k = len(estimator.classes_)
    is_truncated = estimator._truncation_value(k) is not None
    problem = estimator._dual_problem(y, k, estimator.C_ * sw)
    # the DC algorithm starts from a loose untruncated solve (see the module docstring),
    # except where it starts from a previous fit's dual (warm_start, a lambda path): that
    # start is solved to tol, so that a refit at the same C repeats the DC path it stored
    # (the local minimum depends on the start) instead of moving a loose start again
    state = estimator._warm_start_state()
    warm = estimator.warm_start and state is not None and state.fits(problem)
    first_tol = max(estimator.tol, LOOSE_TOL) if is_truncated and not warm else None
    first = estimator._start(sequence, problem, tol=first_tol)

    def objective(sol):
        return estimator._objective(sol, y, sw)

    if not is_truncated:
        sol, history, epochs = first, [objective(first)], first.n_iter
        log.step("solve", history[0], sol.resid, n_epochs(sol.n_iter))
        truncated, reason = np.zeros(len(y), dtype=bool), CONVERGED
    else:
        sol, history, epochs, reason = dc_fit(
            sequence, first, objective, lambda problem, G: estimator._dc_shift(problem, G, y),
            tol=estimator.tol, dc_tol=estimator.dc_tol, max_dc_iter=estimator.max_dc_iter,
            log=log, first_tol=first_tol)
        truncated = estimator._dc_shift(first.problem, sol.G, y)[1]
    return SequenceFit(sol, sw, sequence.stop_reason(reason), start=first, attributes={
        "dc_objectives_": np.array(history), "truncated_": truncated,
        "n_iter_": len(history), "n_solver_iter_": epochs})


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
