"""TargetedLocalMSVM on Dask arrays: every grid point's local model as a chunked fit.

Design
------
The in-memory fit (msvm.targeted.TargetedLocalMSVM) solves, for every grid point u0 of the
targeted variable U, the reinforced angle-based MSVM on the other columns z with sample
weights w_i K_h(U_i - u0) and the intercept a penalized constant feature (Kang, Lin and
Zhang 2019, eq. 8): the dual of ``reinforced_problem`` without equalities on the features
(1, z) or (1, phi(z)).  Each grid point's problem differs from its neighbour's only in the
weights, which a chunk computes from its own column of U: here the chunk model
(``GridChunkModel``) splits each chunk into U and z, maps z, prepends the constant and
multiplies the weights by the smoothing kernel at u0, and every grid point is one solve of
the chunked smoothed-primal Newton method (msvm._dask.ChunkedNewton) with its certificate,
started from the last solved grid point's Newton iterate (the in-memory fit starts from
its dual point, which a chunked fit does not keep).

The client holds U and y (n values each: the bandwidth rule's spread and quantiles, the
grid's range and which grid points have samples of one class only need them) and the
training predictions of the degenerate-fit check; the features never leave the workers.
With ``probability=True`` (msvm/_dask_probability.py) a weighted refit starts each grid
point's solve from the last fit's iterate at that grid point (``_grid_starts``), as every
chunked weighted refit starts from the last fit's: TargetedLocalMSVM, 120 samples,
``n_grid=4``, ``probability_grid=8``: 68 s CPU instead of 187 s from the last grid point's
iterate of the same fit, the same probabilities within the loose refits' spread (0.184 from
the in-memory ones either way: docs/distributed.md).  The fitted attributes are
the in-memory fit's, except ``support_`` (one entry per support sample), which is not kept,
and ``kkt_residuals_``, the bound mu max|bound| of each grid point's dual point through the
smoothing; ``n_iter_`` counts Newton steps.
"""

import numpy as np
from sklearn.base import clone

from ._dask_passes import ChunkModel
from ._local_fits import smoothing_weights, warn_once_per_call_site
from ._problem import reinforced_problem
from ._products import FactoredRows
from ._sequence import CONVERGED


class GridChunkModel(ChunkModel):
    """The chunk model of one grid point u0 (see the module note): a chunk of X (every
    column) becomes (1, z) or (1, phi(z)), its weights times K_h(U - u0), and its dual the
    local reinforced angle-based one.

    Parameters
    ----------
    estimator : AngleBasedMSVM
        Its ``_loss``, ``_output_map`` and ``_decision_from_output`` (the local model's).
    classes, class_factors, feature_map, C
        As :class:`msvm._dask_passes.ChunkModel` (the map of the non-target columns).
    local : dict
        ``target`` (column index of U), ``u0``, ``bandwidth``, ``smoother``,
        ``reinforcement`` and ``kappa``.
    """

    def __init__(self, estimator, classes, class_factors, feature_map, C, local):
        super().__init__(estimator, classes, class_factors, feature_map, C)
        self.local = dict(local)

    def rows(self, Xc, yc, swc):
        """((1, features of z), encoded labels, weights times the smoothing at u0)."""
        local = self.local
        Xc = np.asarray(Xc, dtype=np.float64)
        U = Xc[:, local["target"]]
        Z = np.delete(Xc, local["target"], axis=1)
        X, y_enc, sw = super().rows(Z, yc, swc)
        if isinstance(X, FactoredRows):
            X = X.features()          # the constant feature is prepended to the features
        features = np.empty((X.shape[0], X.shape[1] + 1), dtype=X.dtype)
        features[:, 0] = 1.0
        features[:, 1:] = X
        sw = sw * smoothing_weights(U, local["u0"], local["bandwidth"], local["smoother"])
        return features, y_enc, sw

    def problem(self, y_enc, sw, X):
        """The local dual: reinforced, angle-based slot metric, no equalities."""
        local = self.local
        return reinforced_problem(y_enc, self.k, self.C * sw, float(local["reinforcement"]),
                                  kappa=local["kappa"], equality=False)


def fit_grid_dask(est, X, y, sample_weight, start=None):
    """The model step of ``TargetedLocalMSVM.fit`` on Dask input (see the module note).

    ``start``: a TargetedLocalMSVM fitted on Dask input to the same rows (a weighted refit
    of ``probability=True``, msvm/_dask_probability.py): each grid point's solve starts
    from that fit's iterate at the same grid point, as every chunked weighted refit starts
    from the last fit's; None for a fit of its own."""
    from ._dask import (_blocks, _check_data, _feature_names, _fit_map, _gamma, aligned,
                        as_row_chunks, check_dask_fit, require_dask)
    from ._fit_state import reset_fit_state
    require_dask()
    check_dask_fit(est)
    est._check_approximation()
    reset_fit_state(est)
    names = _feature_names(X)
    X = as_row_chunks(X)
    if X.ndim != 2 or X.shape[1] < 2:
        raise ValueError(f"TargetedLocalMSVM needs X with at least 2 columns (the targeted "
                         f"variable and a feature); got shape {X.shape}")
    if names is not None:
        est.feature_names_in_ = names
    est.n_features_in_ = X.shape[1]
    est.target_index_ = est._target_column(X.shape[1])
    y = aligned(y, X.chunks[0], "y")
    sw = aligned(sample_weight, X.chunks[0], "sample_weight")
    import dask.array as da
    # one chunk of columns (deleting an inner column splits them in two)
    Z = as_row_chunks(da.delete(X, est.target_index_, axis=1))
    est.classes_, factors, facts = _check_data(est, Z, _blocks(Z, y, sw))
    U = np.asarray(X[:, est.target_index_].compute(), dtype=np.float64)
    if not np.all(np.isfinite(U)):
        raise ValueError("Input X contains NaN or infinity.")
    labels = np.searchsorted(est.classes_, np.asarray(y.compute()))
    est._set_grid(U)
    est.gamma_ = _gamma(est, Z, y, facts)
    k = len(est.classes_)
    est.C_ = est._resolve_C(k)
    if est.kernel_approximation is not None:
        _fit_map(est, Z)
    fits = _solve_grid(est, _blocks(X, y, sw), factors, U, labels, Z.shape[1],
                       _grid_starts(est, start))
    _store(est, fits)
    pred = est.predict(X).compute()
    est._warn_if_degenerate(pred, est.classes_[labels])
    return est


def _grid_starts(est, start):
    """For each grid point, the Newton iterate (V, b) of ``start``'s solve there (or None):
    None for every grid point without a fitted ``start`` on the same grid."""
    starts = getattr(start, "_chunked_grid_iterates_", None)
    if starts is None or not np.array_equal(start.grid_, est.grid_):
        return [None] * len(est.grid_)
    return starts


def _solve_grid(est, blocks, factors, U, labels, width, starts):
    """Every grid point's chunked solve, in order: a list of dicts (path, objective, ...);
    ``starts`` (one per grid point, or None): where a weighted refit's solve starts."""

    from ._dask import ChunkedNewton
    from ._thread_pools import one_blas_thread
    from .angle import AngleBasedMSVM
    k = len(est.classes_)
    m = 1 + (est.n_components_ if est.kernel_approximation is not None else width)
    local_est = AngleBasedMSVM(kernel="linear", reinforcement=float(est.reinforcement))
    fmap = getattr(est, "feature_map_", None)
    fits, start = [], (None, None)
    with one_blas_thread():
        for u0, near in zip(est.grid_, starts):
            local = dict(target=est.target_index_, u0=float(u0), bandwidth=est.bandwidth_,
                         smoother=est.smoother, reinforcement=est.reinforcement,
                         kappa=est._kappa(k))
            held = smoothing_weights(U, u0, est.bandwidth_, est.smoother) > 0
            one_class = bool(np.any(held)) and len(np.unique(labels[held])) < 2
            model = GridChunkModel(clone(local_est), est.classes_, factors, fmap, est.C_,
                                   local)
            solver = ChunkedNewton(blocks, model, est, d=m)
            if solver.bound == 0:
                # every box is [0, 0]: alpha = 0 and f = 0 solve the local problem exactly
                fits.append(dict(u0=u0, path=np.zeros((k - 1, m)), objective=0.0, resid=0.0,
                                 n_iter=0, stop=CONVERGED, passes=solver.passes,
                                 no_sample=True, one_class=False, iterate=None))
                continue
            solver.solve(*(start if near is None else near))
            start = (solver.V, solver.b)
            fits.append(dict(u0=u0, path=solver.function()[0], objective=solver.objective,
                             resid=float(solver.mu * solver.bound), n_iter=solver.steps,
                             stop=CONVERGED if solver.converged else "max_iter",
                             passes=solver.passes, no_sample=False, one_class=one_class,
                             iterate=(solver.V, solver.b)))
    return fits


def _store(est, fits):
    """The fitted attributes of the grid's chunked fits (see the module note)."""
    from ._plan import SolvePlan, SolveStep
    est.objectives_ = np.array([fit["objective"] for fit in fits])
    est.kkt_residuals_ = np.array([fit["resid"] for fit in fits])
    est.n_iter_ = np.array([fit["n_iter"] for fit in fits])
    est.n_passes_ = int(sum(fit["passes"] for fit in fits))
    est.grid_stop_reasons_ = np.array([fit["stop"] for fit in fits])
    est.converged_ = bool(np.all(est.grid_stop_reasons_ == CONVERGED))
    unconverged = [fit["stop"] for fit in fits if fit["stop"] != CONVERGED]
    est.stop_reason_ = unconverged[-1] if unconverged else CONVERGED
    paths = np.array([fit["path"] for fit in fits])
    if est.kernel_approximation is not None:
        est.feature_coef_path_ = paths
    else:
        est.coef_path_ = paths
    est.solver_plan_ = SolvePlan("explicit features", "float64", "chunked newton", "on",
                                 steps=(SolveStep("chunked newton", 0, True),)
                                 * sum(not fit["no_sample"] for fit in fits))
    # each grid point's last Newton iterate: the start of a weighted refit
    est._chunked_grid_iterates_ = [fit["iterate"] for fit in fits]
    est.local_problems_ = {
        "no_sample": np.array([fit["u0"] for fit in fits if fit["no_sample"]]),
        "one_class": np.array([fit["u0"] for fit in fits if fit["one_class"]])}
    message = est._local_problems_message()
    if message is not None:
        warn_once_per_call_site(message)
