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
whose shift changes).  The loop and its rules are the in-memory fit's own
(msvm._dc.dc_loop); this module supplies its convex steps.

Each chunked step's continuation starts at FIRST_MU_SHARE from the last step's iterate, not
at the in-memory shifted steps' SHIFTED_FIRST_MU_SHARE (those start from zero): measured on
make_classification n = 3,000 (d = 20, k = 5, two chunks, CPU, shared machine), 0.3 took
2,301 Newton steps and 47.9 s against 1,959 and 40.2 s at 0.03, the same 27 DC steps and
objective.  The in-memory DC iteration on the smoothed primal (msvm._primal.
smoothed_dc_start) is not done here: each chunked step is linearized at the last step's
function.

The fitted attributes are those of the in-memory fit (``dc_objectives_``, ``n_iter_``: the
convex solves accepted; ``n_solver_iter_``: Newton steps over all solves), except that
``truncated_`` is a Dask array computed chunk by chunk (it has one entry per sample).
"""

import copy

import numpy as np

from ._dask_passes import dc_pass, truncated_block
from ._dc import LOOSE_TOL, dc_loop
from ._sequence import CONVERGED, fit_stop_reason


class ChunkedDC:
    """The DC fit over a :class:`msvm._dask.ChunkedNewton` (see the module note): the
    convex steps of msvm._dc.dc_loop as chunked solves.

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
        self.kept = self.function = None

    def _solve(self, V, b, tol, gap_scale):
        self.solver.solve(V, b, tol=tol, gap_scale=gap_scale)
        self.reasons.append(CONVERGED if self.solver.converged else "max_iter")
        return self.solver.objective

    def changed(self):
        """Whether the linearization at the current function shifts any variable: one pass
        (``dc_pass``)."""
        self.kept, self.function = self.solver.save(), self.solver.function()
        self.solver.passes += 1
        return bool(int(self.solver.reduce(dc_pass, *self.function)[0]))

    def take(self, step_tol, gap_scale):
        """The solver's model shifted at the current function (a new graph node, small),
        solved from the current iterate."""
        model = copy.copy(self.solver.model)
        model.linearized = self.function
        self.solver.use(model)
        return self._solve(self.kept["V"], self.kept["b"], step_tol, gap_scale)

    def accept(self, step, obj):
        pass

    def reject(self, step, obj, retake):
        self.solver.restore(self.kept)

    def polish(self, step, tol, gap_scale):
        return self._solve(self.solver.V, self.solver.b, tol, gap_scale)

    def run(self):
        """The DC fit: returns (stop reason, fitted attributes of the loop)."""
        est = self.est
        truncated = est._truncation_value(self.solver.k) is not None
        # the untruncated start only places the first linearization: solved loosely
        first_tol = max(self.tol, LOOSE_TOL) if truncated else self.tol
        self.history = [self._solve(None, None, first_tol, 0.0)]
        if not truncated:
            return fit_stop_reason(CONVERGED, self.reasons), self._attributes()
        self.history, reason = dc_loop(self, self.history[0], tol=self.tol,
                                       first_tol=first_tol, dc_tol=est.dc_tol,
                                       max_dc_iter=est.max_dc_iter, owner=type(est).__name__)
        return fit_stop_reason(reason, self.reasons), self._attributes()

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
