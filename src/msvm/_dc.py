"""The DC (difference-of-convex) outer loop shared by every truncated model.

A truncated loss is a convex hinge minus a convex hinge, T = H_convex - H_concave.  Each DC
step replaces the subtracted hinge by its linearization at the current function (the 0/1
indicators beta of Liu, Wu and He (2011) and Wu and Liu (2007)) and solves the convex problem that results.  In the dual
that linear term is a shift of boxes and group caps (msvm._problem.shifted), so every step is
the model's own DualProblem with moved bounds, warm-started from the previous solution with the
same original multipliers (only the variables whose beta flipped change).  The objective never
increases from one exactly solved step to the next (Wu and Liu 2007 section 3); the loop stops when the
linearization repeats, when a step lowers the objective by less than ``dc_tol`` (relative), or
after ``max_dc_iter`` steps with a ConvergenceWarning.  With ``verbose >= 1`` every convex solve
of the loop prints one line (msvm._progress): the start, each step, a polish to tol, a rejected
step.
"""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from ._problem import shifted
from ._progress import n_epochs

# Inner tolerance of the early DC steps, and the relative decrease below which the steps are
# solved to the estimator's tol (only those decide convergence).
LOOSE_TOL = 1e-2
LOOSE_UNTIL = 1e-3

DC_PARAMETER_CONSTRAINTS = {
    "dc_tol": [Interval(numbers.Real, 0, None, closed="left")],
    "max_dc_iter": [Interval(numbers.Integral, 0, None, closed="left")],
}


class DCMixin:
    """Runs the DC algorithm in place of the single convex solve of BaseMSVM.

    A model supplies ``_dual_problem`` (the untruncated convex dual), ``_truncation_value(k)``
    (None for no truncation) and ``_dc_shift(problem, G, y)`` returning the box shift of the
    linearized step at decision values G and the mask of truncated samples.
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

    def _fit_dual(self, X, y, sw, src, log):
        k = len(self.classes_)
        base = self._dual_problem(y, k, self.C * sw)
        sol = self._first_solve(X, y, sw, src, base)
        epochs = sol.n_iter
        obj = self._objective(sol, y, sw)
        history = [obj]
        shift = np.zeros(len(base.lin))
        steps = 0
        truncating = self._truncation_value(k) is not None
        log.step("DC start (untruncated)" if truncating else "solve", obj, sol.resid,
                 n_epochs(sol.n_iter))
        if truncating:
            converged = False
            # early steps only move the linearization: solve them loosely (LOOSE_TOL), the
            # last ones, which decide convergence, to tol
            step_tol = max(self.tol, LOOSE_TOL)
            sol_tol = self.tol            # the accuracy the current solution was solved to
            while steps < self.max_dc_iter:
                new_shift, _ = self._dc_shift(base, sol.G, y)
                if np.array_equal(new_shift, shift):
                    if sol_tol > self.tol:
                        # the loose path has settled: polish the same problem to tol
                        step_tol = sol_tol = self.tol
                        sol = self._solve(X, src, sol.problem, sol.alpha, sol.mu.copy(),
                                          tol=step_tol)
                        epochs += sol.n_iter
                        obj = self._objective(sol, y, sw)
                        history[-1] = obj
                        log.step(f"DC step {steps} polished to tol", obj, sol.resid,
                                 n_epochs(sol.n_iter))
                        continue
                    converged = True          # the same convex problem again: a DC fixed point
                    break
                steps += 1
                problem = shifted(base, new_shift)
                alpha = np.ascontiguousarray(sol.alpha + shift - new_shift)
                self._move_to(src, sol.problem, sol.alpha, problem, alpha)
                new_sol = self._solve(X, src, problem, alpha, sol.mu.copy(), tol=step_tol)
                epochs += new_sol.n_iter
                new_obj = self._objective(new_sol, y, sw)
                if new_obj > obj and step_tol > self.tol:
                    # a loose step overshot: undo it and take it again at full accuracy
                    log.step(f"DC step {steps} rejected (objective rose; retaken at tol)",
                             new_obj, new_sol.resid, n_epochs(new_sol.n_iter))
                    self._move_to(src, new_sol.problem, new_sol.alpha, sol.problem, sol.alpha)
                    steps -= 1
                    step_tol = self.tol
                    continue
                if new_obj > obj:
                    # only an inexact convex solve can raise the objective: keep the better
                    # function and stop; say so when the rise exceeds the solver's accuracy
                    log.step(f"DC step {steps} rejected (objective rose; the fit keeps step "
                             f"{steps - 1})", new_obj, new_sol.resid, n_epochs(new_sol.n_iter))
                    if new_obj - obj > max(self.dc_tol, self.tol) * max(1.0, abs(obj)):
                        warnings.warn(
                            f"{type(self).__name__}: DC step {steps} raised the objective "
                            f"from {obj:.10g} to {new_obj:.10g} (the convex step is solved to "
                            f"tol={self.tol:g} only); the fit stops at the previous step's "
                            f"function. Lower tol for a more exact DC path.",
                            ConvergenceWarning)
                    steps -= 1
                    converged = True
                    break
                history.append(new_obj)
                log.step(f"DC step {steps}", new_obj, new_sol.resid, n_epochs(new_sol.n_iter))
                decrease = obj - new_obj
                sol, obj, shift, sol_tol = new_sol, new_obj, new_shift, step_tol
                if step_tol > self.tol:
                    if decrease <= LOOSE_UNTIL * max(1.0, abs(obj)):
                        step_tol = self.tol
                elif decrease <= self.dc_tol * max(1.0, abs(obj)) and sol_tol == self.tol:
                    converged = True
                    break
            if not converged:
                warnings.warn(
                    f"{type(self).__name__}: the DC algorithm stopped at max_dc_iter="
                    f"{self.max_dc_iter} steps while the objective still decreased; increase "
                    f"max_dc_iter or dc_tol.", ConvergenceWarning)
            truncated = self._dc_shift(base, sol.G, y)[1]
        else:
            truncated = np.zeros(len(y), dtype=bool)
        self.dc_objectives_ = np.array(history)
        self.truncated_ = truncated
        self.n_iter_ = len(history)
        self.n_solver_iter_ = epochs
        return sol
