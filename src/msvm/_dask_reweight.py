"""AdaptiveWeightedSVM on Dask arrays: the reweighting loop as chunked refits.

Design
------
The in-memory fit (msvm.weighted.AdaptiveWeightedSVM._fit_dual) solves the weighted
generalized-margin MSVM with v = 1, then refits with the weights v_i the scheme assigns to
the margins of the last fit (one refit for 'one-step'; for 'iterative' until the weights
repeat or max_reweight refits), each refit warm-started from the last.  A weight depends on
the last fit's decision values at its sample only, so the weights are never gathered: the
chunk model carries the last fit's small function (``ChunkModel.reweighted``,
msvm/_dask_passes.py) and each chunk multiplies its weights by the scheme's v at its own
rows; every refit is a chunked solve (msvm._dask.ChunkedNewton) started from the last
Newton iterate, and whether the iterative weights repeat is one pass (``reweight_pass``:
the number of samples whose weight changes).  The group caps of this dual are smoothed per
group (msvm/_dask_groups.py).

The fitted attributes are the in-memory fit's (``n_iter_``: the fits, ``n_solver_iter_``:
Newton steps over all of them, ``objective_`` with the final weights), except that
``adaptive_weights_`` is a Dask array computed chunk by chunk (one value per sample).
"""

import copy

import numpy as np

from ._dask_passes import reweight_pass, weights_block
from ._sequence import CONVERGED, fit_stop_reason, warn_unsettled_weights


def fit_reweighted(solver, est, blocks, model, rows):
    """The reweighting loop of ``est`` (an AdaptiveWeightedSVM) over the chunked ``solver``
    at its unweighted dual: returns (stop reason, fitted attributes).  ``blocks``: the
    chunks (X_c, y_c, sw_c) of the inputs, ``model``: the chunk model with the feature map
    (for ``adaptive_weights_``), ``rows``: the chunks' sizes."""
    reasons, fits, reason = [], 1, CONVERGED
    _solve(solver, None, None, reasons)
    weights_at = None                     # the function of the current weights (None: v = 1)
    while True:
        function = solver.function()
        if est.scheme == "iterative":
            solver.passes += 1
            if not int(solver.reduce(reweight_pass, function)[0]):
                break
        if fits - 1 >= est.max_reweight:
            reason = "max_reweight"
            break
        weights_at = function
        refit = copy.copy(solver.model)
        refit.reweighted = function
        solver.use(refit)
        _solve(solver, solver.V, solver.b, reasons)
        fits += 1
        if est.scheme == "one-step":
            break
    warn_unsettled_weights(reason, est.max_reweight)
    attributes = {"adaptive_weights_": _weights(blocks, model, weights_at, rows),
                  "n_iter_": fits, "n_solver_iter_": solver.steps}
    return fit_stop_reason(reason, reasons), attributes


def _solve(solver, V, b, reasons):
    solver.solve(V, b)
    reasons.append(CONVERGED if solver.converged else "max_iter")


def _weights(blocks, model, function, rows):
    """``adaptive_weights_``: a Dask array of the weights at ``function``, chunk by chunk."""
    import dask.array as da
    from dask import delayed
    task = delayed(model)
    parts = [da.from_delayed(delayed(weights_block, pure=True)(task, *block, function),
                             shape=(size,), dtype=np.float64)
             for block, size in zip(blocks, rows)]
    return da.concatenate(parts)
