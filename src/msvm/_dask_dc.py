"""The DC algorithm of a truncated model (RobustMSVM) on Dask arrays: chunked convex steps.

Design
------
The in-memory fit of a truncated model (msvm._dc.truncated_fit) solves the untruncated
convex dual, then a sequence of convex duals whose boxes are shifted by the linearization of
the truncated loss's concave part at the last step's function, each warm-started from the
last (Wu and Liu 2007, section 3).  Here every convex step is a solve of the chunked
smoothed-primal Newton method (msvm._dask.ChunkedNewton) started from the last step's
iterate (V, b), and the shift is never gathered: each chunk computes its own from the small
fitted function of the last step (``ChunkModel.linearized``, msvm/_dask_passes.py).  Whether
the next linearization is a new problem is one pass (``dc_pass``: the number of variables
whose shift changes).  The loop's rules are those of msvm._dc.dc_fit: the untruncated
start and the early steps solved to ``LOOSE_TOL``, then to tol once a step lowers the
objective by less than ``LOOSE_UNTIL``; a loose step that raises the objective is retaken
at tol; a repeated linearization is a DC fixed point (polished to tol if its step was
loose); a step at tol that raises the objective ends the loop at the last function (a
ConvergenceWarning when the rise exceeds the solver's accuracy); a decrease below
``dc_tol`` ends it; ``max_dc_iter`` steps end it with a ConvergenceWarning; a loosely
solved last function is polished to tol.  Each step's relative duality gap is measured
against at least ``GAP_SCALE`` times the model's objective, as in memory.

The fitted attributes are those of the in-memory fit (``dc_objectives_``, ``n_iter_``: the
convex solves accepted; ``n_solver_iter_``: Newton steps over all solves), except that
``truncated_`` is a Dask array computed chunk by chunk (it has one entry per sample).
"""

import copy
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._dask_passes import dc_pass, truncated_block
from ._dc import GAP_SCALE, LOOSE_TOL, LOOSE_UNTIL
from ._sequence import CONVERGED, fit_stop_reason


class ChunkedDC:
    """The DC loop over a :class:`msvm._dask.ChunkedNewton` (see the module note).

    Parameters
    ----------
    solver : msvm._dask.ChunkedNewton
        The chunked solver, at the model's unshifted dual.
    est : RobustMSVM
        The estimator (tol, dc_tol, max_dc_iter, ``_truncation_value``, ``_dc_shift``).
    """

    def __init__(self, solver, est):
        self.solver, self.est = solver, est
        self.tol = float(est.tol)
        self.reasons = []           # of every convex solve ('tol' or 'max_iter')
        self.history = []

    def _solve(self, V, b, tol, gap_scale):
        self.solver.solve(V, b, tol=tol, gap_scale=gap_scale)
        self.reasons.append(CONVERGED if self.solver.converged else "max_iter")
        return self.solver.objective

    def _linearized_at(self, function):
        """The solver's model shifted at ``function`` (a new graph node, small)."""
        model = copy.copy(self.solver.model)
        model.linearized = function
        self.solver.use(model)

    def _changed(self, function):
        """(variables whose shift changes from the current model's to ``function``'s,
        samples truncated at ``function``): one pass."""
        self.solver.passes += 1
        out = self.solver.reduce(dc_pass, *function)
        return int(out[0]), int(out[1])

    def run(self):
        """The DC fit: returns (stop reason, fitted attributes of the loop)."""
        est, solver = self.est, self.solver
        truncated = est._truncation_value(solver.k) is not None
        # the untruncated start only places the first linearization: solved loosely
        first_tol = max(self.tol, LOOSE_TOL) if truncated else self.tol
        obj = self._solve(None, None, first_tol, 0.0)
        self.history = [obj]
        if not truncated:
            return fit_stop_reason(CONVERGED, self.reasons), self._attributes()
        step_tol, sol_tol, steps = max(self.tol, LOOSE_TOL), first_tol, 0
        reason = None
        while reason is None and steps < est.max_dc_iter:
            kept = solver.save()
            function = solver.function()
            changed, _ = self._changed(function)
            if not changed and sol_tol <= self.tol:
                reason = CONVERGED              # the same convex problem: a fixed point
                continue
            if changed:
                steps += 1
                self._linearized_at(function)
            tol = step_tol if changed else self.tol
            new = self._solve(kept["V"], kept["b"], tol, GAP_SCALE * abs(obj))
            if not changed:                     # the loose fixed point polished to tol
                step_tol = sol_tol = self.tol
                obj = self.history[-1] = new
                continue
            if new > obj:
                solver.restore(kept)
                steps -= 1
                if step_tol > self.tol:         # a loose step overshot: retake it at tol
                    step_tol = self.tol
                    continue
                reason = self._objective_rose(obj, new, steps + 1)
                continue
            self.history.append(new)
            decrease, obj, sol_tol = obj - new, new, step_tol
            if step_tol > self.tol:
                if decrease <= LOOSE_UNTIL * max(1.0, abs(obj)):
                    step_tol = self.tol
            elif decrease <= est.dc_tol * max(1.0, abs(obj)):
                reason = CONVERGED
        if reason is None:
            reason = "max_dc_iter"
            warnings.warn(
                f"{type(est).__name__}: the DC algorithm stopped at max_dc_iter="
                f"{est.max_dc_iter} steps while the objective still decreased; increase "
                f"max_dc_iter or dc_tol.", ConvergenceWarning)
        if sol_tol > self.tol:
            # the loop stopped at a loosely solved function: its convex problem to tol
            self.history[-1] = self._solve(solver.V, solver.b, self.tol, GAP_SCALE * abs(obj))
        return fit_stop_reason(reason, self.reasons), self._attributes()

    def _objective_rose(self, obj, new, step):
        """A step solved to tol raised the objective: the fit keeps the last function
        (msvm._dc._objective_rose)."""
        est = self.est
        if new - obj <= max(est.dc_tol, self.tol) * max(1.0, abs(obj)):
            return CONVERGED
        warnings.warn(
            f"{type(est).__name__}: DC step {step} raised the objective from {obj:.10g} to "
            f"{new:.10g} (the convex step is solved to tol={self.tol:g} only); the fit stops "
            f"at the previous step's function. Lower tol for a more exact DC path.",
            ConvergenceWarning)
        return "dc_objective_rose"

    def _attributes(self):
        return {"dc_objectives_": np.array(self.history), "n_iter_": len(self.history),
                "n_solver_iter_": self.solver.steps}

    def truncated(self, blocks, model, rows):
        """``truncated_`` of the fitted function: a Dask array of one bool per sample,
        computed chunk by chunk from ``blocks`` (X_c, y_c, sw_c) by ``model`` (its feature
        map applied), ``rows`` the chunks' sizes."""
        import dask.array as da
        from dask import delayed
        function = self.solver.function()
        task = delayed(model)
        parts = [da.from_delayed(delayed(truncated_block, pure=True)(task, *block, *function),
                                 shape=(size,), dtype=bool)
                 for block, size in zip(blocks, rows)]
        return da.concatenate(parts)
