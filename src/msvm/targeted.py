"""TargetedLocalMSVM (TLAMSVM): the targeted local angle-based MSVM of Kang, Lin and Zhang (2019).

One column of X, the targeted variable U (age, say), modulates the whole classifier: for every
point u0 of a grid over U's range an angle-based MSVM is fitted on the other columns with
sample weights w_i K_h(U_i - u0), its intercept a penalized constant feature.  All grid fits
share one kernel-row source (the kernel does not depend on u0, only the weights, i.e. the
boxes of the dual, do) and each is warm-started from its neighbour's dual solution; on
explicit features a grid point whose weights leave samples out is solved on a row source of
the samples it holds (``SOLVE_ON_HELD_SAMPLES``).
"""

import numbers
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import BaseMSVM
from ._dask import is_dask_collection
from ._docs import fill_doc
from ._fit_state import set_init_params
from ._kernels import dense, kernel_matrix, make_row_source
from ._plan import plan_solve
from ._losses import reinforced_loss
from ._probability import PROBABILITY_PARAMETER_CONSTRAINTS, ProbabilityMixin
from ._problem import reinforced_problem
from .angle import AngleGeometry, simplex_vertices
from ._progress import StepLog, n_epochs
from ._sequence import CONVERGED, FINISH_AFTER, rescaled_dual
from ._products import feature_weights, times_small, weighted_sum
from ._validation import check_finite_objective
from ._warm_start import GridStart
from ._local_fits import SMOOTHERS, smoothing_weights, warn_once_per_call_site


def _with_constant(Z):
    """(1, x) for every row x of Z: the penalized intercept as a constant feature."""
    ones = np.ones((Z.shape[0], 1))
    return sp.hstack([ones, Z], format="csr") if sp.issparse(Z) else np.hstack([ones, Z])


@dataclass
class _GridFit:
    """The fit at one grid point u0 of a TargetedLocalMSVM.

    ``path`` is the local functions' representation: (k - 1, n_columns) weights of the
    explicit features (1, x) or (1, phi(z)), or (n, k - 1) dual coefficients of the kernel
    expansion.  ``support`` marks the samples with a nonzero dual variable; None at a grid
    point without a sample (not solved: alpha = 0 and f = 0 are exact there).  ``n_iter``
    is in epochs, at least 1 for a solved grid point.
    """

    u0: float
    alpha: np.ndarray
    objective: float
    resid: float
    n_iter: int
    stop: str
    path: np.ndarray
    support: Optional[np.ndarray]
    one_class: bool = False
    # the samples at a bound that moves with their weight (``DualProblem.at_moving_bounds``;
    # None at a grid point without a sample): msvm._probability._settled
    weighed: Optional[np.ndarray] = None
    # whether its solve went on from the late smoothed-primal start (``LATE_START_EPOCHS``)
    late_start: bool = False


# Whether the weighted refits of probability=True (a chain's levels and its top fit, warm-started
# from a fit of the same grid) on the linear kernel solve every grid point by the dual solver on
# the linear kernel's rows from that point's previous fit, where the refits' plan
# (``msvm._plan.refit_rows``) put them on explicit features, whose smoothed-primal start runs
# its whole continuation again at every grid point and discards the warm start (round 16,
# benchmarks/results/probability.md section 9j); False: main 5c4386a's plan.
LEVELS_ON_LINEAR_ROWS = True

# The plan overrides of those refits (``LEVELS_ON_LINEAR_ROWS``): the linear kernel's rows,
# the solver left to the plan (SMO).  Round 16 (section 9j, "tried"): the same rows with
# dual coordinate descent ({"rows": "linear rows", "solver": "cd"}) took 3x the CPU.
WARM_LEVEL_PLAN = {"rows": "linear rows"}


# Whether a chain's refit starts each grid point from its previous dual with the variables
# that sat at their upper bound moved to the new (grown) bound (``_bounds_followed``).
# Measured in round 16 (section 9j, "tried"): fewer epochs a solve, but the chains settle
# later (more refits and grid solves) and the probability fit costs more: off.
FOLLOW_MOVED_BOUNDS = False


# The share of the grid points (``n_grid``) that a calibration fold's fits of probability=True
# solve (``msvm._probability``'s folds, ``_fold_fit``): their grid over the fold's range of U
# has ``max(2, round(share * n_grid))`` points, the bandwidth unchanged.  The folds' fits are
# read only through their decision values at the held-out samples, each interpolated between
# the two grid points around its U; the estimator's own fit and the full data's chains keep
# ``n_grid``.  None: every fit on ``n_grid`` points (main aae56db).  Round 17, section 9j.
CALIBRATION_GRID_SHARE = 0.5

# The fewest training samples of a calibration fold on the coarser grid
# (``CALIBRATION_GRID_SHARE``): on smaller folds the coarser grid moved the calibration, so they
# keep ``n_grid``.  The MAE against the truth on scenario S1 (section 9j, "Round 17"), mean
# over draws: folds of 200 samples (n = 300) +0.0044 (6 draws, the exponent lower), of 533
# (n = 800, C = 1) +0.0015, of 667 (n = 1,000) +0.0005 and +0.0002, of 1,000 (n = 2,000)
# +0.0000.
CALIBRATION_GRID_MIN_SAMPLES = 600


# Whether a grid point whose weights hold m < n samples is solved on those m samples only
# (``_solve_on_held``: its dual, warm start and row source restricted to them, its fit expanded
# back to n with zeros) on explicit features (kernel='linear' or a kernel approximation).  A
# sample of weight 0 has the box [0, 0] and no term in the local objective: the same local
# optimum in exact arithmetic; the solver's iterates on the smaller problem differ in floating
# point (objectives within tol).  False: every grid point on all n samples (main 01872e7).
# Round 17, section 9j ("Round 17, later"): one fit 0.90-0.99x the CPU, the probability fit
# 0.79x on S2, 0.96x / 1.06x on S1 (C = 'auto' / 1), the predictions the same.
SOLVE_ON_HELD_SAMPLES = True

# The fewest training samples of a fit whose grid points take that route
# (``SOLVE_ON_HELD_SAMPLES``): on wine (n = 124) a row source and a problem per grid point
# cost more than the smaller solves save (one fit 1.15x, the probability fit 1.23x).
HELD_MIN_SAMPLES = 500


# The late smoothed-primal start's cost, in epochs of the solver on a grid point's held samples,
# that a probability refit's grid solve on them (``SOLVE_ON_HELD_SAMPLES``; a warm level,
# ``_warm_level``) weighs before taking it (``DualSequence.late_start_epochs``, a rent-or-buy
# choice): after its first budget stop the solver runs on while the residual's decay predicts
# convergence within that many epochs, and takes the start once they are spent or where it
# predicts no convergence in time.  Only where the same grid point's previous fit (the chain's
# level before) did not take the late start: where it did, the next level's solve is as hard
# and waiting costs epochs for nothing (scenario S2).  Measured (round 18, section 9j): the
# late start costs 60-110 epochs of the held rows' solver on S1 and S2 (3.4 and 8.6 ms against
# 54 and 81 us an epoch) and was 45-75 % of the probability fit.  0: the start at the first
# budget stop (main c94be25).
LATE_START_EPOCHS = 60


# Whether a warm-started refit takes a grid point's previous fit as it is where that fit is
# the refit's (``_SolvedGrid.reusable``: a probability chain's weighted refits, round 14);
# False solves every grid point, as before.
REUSE_SETTLED_POINTS = True


@dataclass(frozen=True, eq=False)
class _SolvedGrid:
    """The grid points' fits of a TargetedLocalMSVM fit, for a warm-started refit.

    ``key``: ``TargetedLocalMSVM._grid_key`` of the fit (its data and parameters);
    ``fits``: its :class:`_GridFit` list; ``weights`` (n_grid, n): the weights
    C w_i K_h(U_i - u0) each grid point was solved at.
    """

    key: tuple
    fits: list
    weights: np.ndarray

    def reusable(self, g, key, weights):
        """Grid point g's fit, when it is also the fit of a refit at ``weights`` (same data
        and parameters ``key``), else None.

        Every box of the local dual at g is [0, weights_i] times a constant of the sample's
        variable (no equalities: the intercept is a penalized feature).  When the weights
        only grew, and only on samples none of whose variables sat at its (nonzero) upper
        bound in the converged fit at g, that fit's dual point is feasible at the new
        weights and meets their optimality conditions with the same residual (a free
        variable stays free, one at zero stays at zero): the refit's solve, started there,
        stops there.  The probability chains' settled rule for one grid point
        (``msvm._probability._path_settled``, 5), applied inside the refit: the grid points
        where the up-weighted class is settled are not solved again.  Its objective is kept:
        at the new weights it differs by the grown samples' hinge terms, which are
        inactive or at the hinge (zero up to the residual).  ``n_iter`` 0: not solved.
        """
        params, fingerprint, y = key
        own_params, own_fingerprint, own_y = self.key
        if (params != own_params or fingerprint != own_fingerprint
                or not np.array_equal(y, own_y) or g >= len(self.fits)):
            return None
        fit, old = self.fits[g], self.weights[g]
        if fit.weighed is None or fit.stop != CONVERGED or old.shape != weights.shape:
            return None
        grown = weights != old
        if np.any(weights < old) or np.any(fit.weighed[grown]):
            return None
        return replace(fit, n_iter=0)


def _bounds_followed(problem, alpha, old_weights, g, weights):
    """``alpha`` (grid point g's previous dual, at the weights ``old_weights[g]``) with every
    variable that sat at its nonzero upper bound there moved to that bound at ``weights``.

    A sample whose hinge is active stays active when its weight grows (a chain's next
    level): its variables follow their bound, and the solve starts next to the new
    solution.  Every bound is a multiple of its sample's weight (no equalities: the
    intercept is a penalized feature), so the point stays feasible.  Unchanged where the
    weights did not only grow (not a chain's next level of the same grid).
    """
    if g >= len(old_weights) or old_weights[g].shape != weights.shape:
        return alpha
    old = old_weights[g]
    if np.any(weights < old):
        return alpha
    sample = problem.sample_of_var()
    grown = (weights > old)[sample]
    if not np.any(grown):
        return alpha
    hi = problem.expand("hi")
    ratio = np.ones_like(alpha)
    np.divide(old[sample], weights[sample], out=ratio, where=grown)
    at_bound = grown & (hi > 0) & (alpha >= hi * ratio)
    alpha = alpha.copy()
    alpha[at_bound] = hi[at_bound]
    return alpha


def _waits_for_late_start(solved, g):
    """Whether a refit's solve of grid point g weighs the late smoothed-primal start
    (``LATE_START_EPOCHS``): unless the previous fit of that grid point (``solved``, a
    :class:`_SolvedGrid`, or None) took it."""
    return LATE_START_EPOCHS > 0 and not (solved is not None and g < len(solved.fits)
                                          and solved.fits[g].late_start)


def _expanded_marks(marks, rows, n):
    """Boolean (n,): ``marks`` of the samples ``rows`` (boolean, len(rows)), False
    elsewhere."""
    full = np.zeros(n, dtype=bool)
    full[rows] = marks
    return full


def _primal_rule_of_all(plan, sequence, problem, features, src, sub_problem):
    """``plan`` for the solve of ``sub_problem`` on the held samples' ``features`` (their
    row source ``src``), with the smoothed-primal start's rule ('auto') decided on the n
    samples (``problem`` on the rows of ``sequence``): the rule weighs the samples' number
    (``PRIMAL_MID_SAMPLES``), so that on m of them it can refuse the (late) start that the
    solve over all n makes, leaving a stopped solve to the exact finishing step on a large
    free set (scenario S2: 1.5x the probability fit's CPU).  Forced 'on' or 'off' where
    the two decisions differ."""
    if plan.primal_start != "auto":
        return plan
    whole = plan.restarts_from_primal(problem, sequence.features, sequence.src.diagonal())
    if whole == plan.restarts_from_primal(sub_problem, features, src.diagonal()):
        return plan
    return replace(plan, primal_start="on" if whole else "off")


def _weighed_on_grid(fits, n):
    """Boolean (n,): the samples at a bound that moves with their weight at some grid
    point (a grid point without a sample has every bound zero: none there)."""
    marks = np.zeros(n, dtype=bool)
    for fit in fits:
        if fit.weighed is not None:
            marks |= fit.weighed
    return marks


def bandwidth_rule(U, rule):
    """Rule-of-thumb bandwidth: 'silverman' 0.9 min(sd, IQR/1.34) n^(-1/5), 'scott' 1.06 sd
    n^(-1/5)."""
    U = np.asarray(U, dtype=np.float64)
    n = len(U)
    sd = U.std(ddof=1) if n > 1 else 0.0
    if rule == "scott":
        return 1.06 * sd * n ** -0.2
    q75, q25 = np.percentile(U, [75, 25])
    spread = min(sd, (q75 - q25) / 1.34) if q75 > q25 else sd
    return 0.9 * spread * n ** -0.2


@fill_doc
class TargetedLocalMSVM(ProbabilityMixin, AngleGeometry, BaseMSVM):
    r"""Targeted local angle-based multicategory SVM (TLAMSVM; Kang, Lin and Zhang 2019).

    Column ``target`` of X is the targeted variable U; x denotes the other columns.  For each
    point u0 of a grid over U's range the model fits the reinforced angle-based MSVM
    (``AngleBasedMSVM``) on x with sample weights :math:`w_i K_h(U_i - u_0)` and the
    intercept as a penalized constant feature (Kang, Lin and Zhang 2019, eq. 8):

    .. math::

        \min_{\beta(u_0)}\ \frac12 \sum_{q=1}^{k-1} \|\beta_q(u_0)\|^2
            + C \sum_{i=1}^n w_i K_h(U_i - u_0) \Big( \gamma\,[(k-1) - \langle f(u_0, x_i),
              W_{y_i}\rangle]_+ + (1-\gamma) \sum_{j \ne y_i} [1 + \langle f(u_0, x_i),
              W_j\rangle]_+ \Big),

    with f_q(u0, x) = <beta_q(u0), (1, x)> for the linear kernel (beta_q including the
    intercept) and f_q(u0, .) in the RKHS of K + 1 otherwise, and W_j the simplex vertices.
    A new (u, x) is classified by :math:`\arg\max_j \langle f(u, x), W_j\rangle`, the
    coefficients at u interpolated linearly between the two neighbouring grid points (clamped
    to the grid's ends).  The paper writes :math:`\frac{n\lambda}{2} J + \sum_i K_h \cdot
    \text{loss}_i`; the two agree with ``C = 1 / (n * lambda)``.

    Parameters
    ----------
    C : float or 'auto', default='auto'
        Weight of the loss (``C = 1 / (n lambda)``); a number is used as given.  ``'auto'``
        means ``C = k - 1``, the rule of :class:`AngleBasedMSVM` for the same angle coding,
        resolved at fit into ``C_``.
    reinforcement : float in [0, 1], default=0.5
        The loss mixing weight gamma.
    target : int or str, default=0
        Column of X holding the targeted variable: an index, or a name when X is a pandas
        DataFrame.
    smoother : str, default='epanechnikov'
        Smoothing kernel K of the local weights: 'epanechnikov', 'gaussian', 'uniform',
        'triangular' or 'biweight'.
    bandwidth : float or {'silverman', 'scott'}, default='silverman'
        Bandwidth h, or a rule of thumb computed on the training values of U.
    n_grid : int, default=20
        Number of grid points, equally spaced over the training range of U.
    {kernel_parameters}
    progress_bar : bool, default=False
        Show a progress bar over the grid points (needs ``tqdm``: ``pip install tqdm``).
        With ``verbose=1`` the one line per grid point is written above the bar.
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
        Class labels.
    n_features_in_ : int
        Number of input features, the target included.
    target_index_ : int
        Column index of the targeted variable.
    bandwidth_ : float
        The bandwidth used.
    grid_ : ndarray of shape (n_grid,)
        The grid points u0.
    coef_path_ : ndarray of shape (n_grid, k - 1, n_features_in_)
        Linear kernel only: beta_q(u0) at every grid point, the intercept first and then the
        coefficients of the non-target columns in their order.
    dual_coef_path_ : ndarray of shape (n_grid, k - 1, n_SV)
        Other kernels: f_q(u0, x) = sum_s dual_coef_path_[g, q, s] (K(x, sv_s) + 1).
    support_ : ndarray of shape (n_SV,)
        Training samples with a nonzero dual variable at some grid point.
    support_vectors_ : ndarray of shape (n_SV, n_features_in_ - 1)
        Their non-target columns, for the kernel expansions only ('rbf', 'poly', a callable;
        without ``kernel_approximation``).  Absent for 'precomputed', ``kernel='linear'``
        (``coef_path_``) and ``kernel_approximation`` (``feature_coef_path_``).
    objectives_ : ndarray of shape (n_grid,)
        The objective above at every grid point.
    kkt_residuals_ : ndarray of shape (n_grid,)
        Final KKT residual of every grid fit.
    n_iter_ : ndarray of shape (n_grid,)
        Solver epochs of every grid fit: coordinate steps divided by n (all training samples,
        also those with zero local weight), rounded up and at least 1; a local fit whose few
        weighted samples needed fewer than n steps reports 1.  A grid point whose weights
        hold no sample is solved exactly without the solver and reports 0, as does one of a
        ``warm_start`` refit whose previous fit is its solution (the same data and
        parameters, its weights grown only on samples off their upper bounds there: the
        weighted refits of ``probability=True``).
    gamma_ : float or None
        Resolved kernel coefficient (computed on the non-target columns).
    local_problems_ : dict of ndarray
        The grid points u0 without a local classification problem: ``'no_sample'`` (the
        smoothing weights hold no sample) and ``'one_class'`` (samples of one class only);
        empty arrays when every grid point has one.
    grid_stop_reasons_ : ndarray of str, shape (n_grid,)
        How the solve of every grid point stopped: 'tol' (converged; also a grid point
        without samples, solved exactly), 'max_iter' or 'gap_floor' (each with a
        ``ConvergenceWarning``).
    converged_ : bool
        Whether every grid point converged.
    stop_reason_ : str
        'tol' when every grid point converged, else the stop reason of the last grid point
        that did not.
    {plan_attributes}
    {probability_attributes}
    feature_map_ : object
        The fitted feature map phi of the non-target columns (``kernel_approximation``
        only; see ``msvm._approx``).
    n_components_ : int
        Number of features of ``feature_map_`` (``kernel_approximation`` only).
    feature_coef_path_ : ndarray of shape (n_grid, k - 1, 1 + n_components_)
        ``kernel_approximation`` only: f_q(u0, x) = <feature_coef_path_[g, q], (1, phi(z))>
        at every grid point, z the non-target columns of x (``coef_path_`` and the
        ``dual_coef_path_`` are then not set).

    Notes
    -----
    With ``kernel_approximation`` the feature map is fitted on the non-target columns only
    (the kernel never sees the targeted variable, which only weights the local fits): every
    grid fit is the linear local model on (1, phi(z)), and prediction interpolates the grid
    fits' weights applied to phi(z).

    With ``kernel='precomputed'`` X is not a Gram matrix: pass ``kernel`` as a callable
    instead; the target column must stay in X.

    Each grid fit starts from its neighbour's dual solution; with ``warm_start=True`` a refit
    on data of the same shape with the same number of grid points (a new C along a path)
    starts every grid point from the previous fit's solution there, rescaled by
    ``C / C_previous``.

    A grid point u0 whose smoothing weights hold no sample has the zero local functions
    (predicting ``classes_[0]``); one whose weights hold samples of one class only fits a
    classifier of that class.  Such grid points are listed in ``local_problems_`` and
    reported by one :class:`~msvm.exceptions.DegenerateFitWarning` with a short text that
    does not depend on the data, attributed to the caller's line outside msvm, scikit-learn
    and joblib, and not repeated while the same call of that line goes on: a ``GridSearchCV``
    or :class:`~msvm.model_selection.TuningSetSearch` over this estimator warns once, not
    once per fold and grid point.  Remedy: a larger bandwidth or fewer grid points.
    """

    # how a fit on Dask input runs (msvm._dask._chunked_kind): a chunked fit per grid
    # point (msvm/_dask_grid.py)
    _dask_fit = "grid"

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        "kernel": [StrOptions({"linear", "poly", "rbf"}), callable],
        "reinforcement": [Interval(numbers.Real, 0, 1, closed="both")],
        "target": [Interval(numbers.Integral, None, None, closed="neither"), str],
        "smoother": [StrOptions(set(SMOOTHERS))],
        "bandwidth": [Interval(numbers.Real, 0, None, closed="neither"),
                      StrOptions({"silverman", "scott"})],
        "n_grid": [Interval(numbers.Integral, 1, None, closed="left")],
        "progress_bar": ["boolean"],
        **PROBABILITY_PARAMETER_CONSTRAINTS,
    }
    # a refit starts every grid point from the previous fit's dual there
    _warm_state_type = GridStart

    def __init__(self, C="auto", reinforcement=0.5, target=0, smoother="epanechnikov",
                 bandwidth="silverman", n_grid=20, *, kernel="linear", degree=3, gamma="scale",
                 coef0=0.0, tol=1e-3, max_iter=10000, cache_size=200, cache_dtype="auto",
                 shrinking=True, warm_start=False, random_state=None, verbose=False,
                 class_weight=None, progress_bar=False, probability=False, probability_grid=8,
                 n_jobs=None, kernel_approximation=None, n_components=1000, landmarks="uniform",
                 intercept_solver="exact", n_threads=1):
        set_init_params(self, locals())

    # ------------------------------------------------------------------ input
    def _target_column(self, n_features):
        if isinstance(self.target, str):
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                raise ValueError(f"target={self.target!r} is a column name, but X has no "
                                 f"column names (pass a pandas DataFrame or an index)")
            matches = np.flatnonzero(np.asarray(names) == self.target)
            if len(matches) == 0:
                raise ValueError(f"target column {self.target!r} is not among X's columns")
            return int(matches[0])
        if not -n_features <= self.target < n_features:
            raise ValueError(f"target={self.target} is out of range for X with {n_features} "
                             f"columns")
        return int(self.target) % n_features

    def _split(self, X):
        """(U, Z): the targeted column (dense) and the others (sparse when X is)."""
        if sp.issparse(X):
            keep = np.delete(np.arange(X.shape[1]), self.target_index_)
            return X[:, [self.target_index_]].toarray().ravel(), X[:, keep].tocsr()
        U = X[:, self.target_index_]
        Z = np.ascontiguousarray(np.delete(X, self.target_index_, axis=1))
        return U, Z

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit the local angle-based MSVMs along the grid of the targeted variable.

        A grid point whose smoothing weights hold no sample, or samples of one class only,
        has no local classification problem: those grid points are named in one
        :class:`~msvm.exceptions.DegenerateFitWarning` (remedy: a larger bandwidth or fewer
        grid points).  With no sample at all the local functions are zero, the exact solution
        of the local problem, and the solver is not run.  A fit that raises (or is
        interrupted) leaves the estimator unfitted.

        Parameters
        ----------
        X : {array-like, sparse matrix} or DataFrame of shape (n_samples, n_features)
            Inputs, the targeted column included (a scipy.sparse matrix stays sparse; the
            targeted column is read from it alone).
        y : array-like of shape (n_samples,)
            Class labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative weights, multiplied into the smoothing weights (and by
            ``class_weight``).

        Returns
        -------
        self : object
        """
        return super().fit(X, y, sample_weight=sample_weight)

    def _fit_model(self, X, y, sample_weight, start=None):
        """The model step of the fit template (``BaseMSVM.fit``): the grid of local fits
        (``start``: on Dask input, the fit a weighted refit of ``probability=True`` starts
        from, msvm/_dask_probability.py)."""
        if is_dask_collection(X):
            from ._dask_grid import fit_grid_dask
            # chunked: msvm/_dask_grid.py
            return fit_grid_dask(self, X, y, sample_weight, start=start)
        self._check_approximation()
        X, y, sw = self._validate_fit_input(X, y, sample_weight, ensure_min_features=2)
        self.target_index_ = self._target_column(X.shape[1])
        U, Z = self._split(X)
        self._set_grid(U)
        src_X, src, plan = self._grid_row_source(Z, y, sw)
        sequence = self._dual_sequence(src_X, src, plan)
        key = self._grid_key(src_X, y) if self.warm_start and REUSE_SETTLED_POINTS else None
        weights = self._grid_weights(U, sw)
        fits = self._fit_grid(sequence, src_X.shape[1], weights, y, key)
        alphas = np.array([fit.alpha for fit in fits])
        solved = None
        if key is not None:
            for fit, alpha in zip(fits, alphas):
                fit.alpha = alpha       # a view of the state's duals, not a second copy
            solved = _SolvedGrid(key, fits, weights)
        self._start_from(GridStart(alphas, self.C_, solved))
        self._store_grid(fits, Z)
        self._weight_bound_samples_ = _weighed_on_grid(fits, len(y))
        self.stop_reason_ = sequence.stop_reason()
        self._keep_plan(sequence.plan)
        self._warn_local_problems(fits)
        G = self._local_functions(X) @ simplex_vertices(len(self.classes_))
        self._warn_if_degenerate(self.classes_[np.argmax(G, axis=1)], y)
        return self

    def _set_grid(self, U):
        """``bandwidth_`` and ``grid_`` from the training values U of the targeted variable."""
        if np.ptp(U) == 0:
            raise ValueError(f"the targeted column {self.target!r} is constant: there is "
                             f"nothing to smooth over")
        self.bandwidth_ = (bandwidth_rule(U, self.bandwidth) if isinstance(self.bandwidth, str)
                           else float(self.bandwidth))
        if not self.bandwidth_ > 0:
            raise ValueError("the bandwidth rule gave 0; give a positive bandwidth")
        n_grid = self._n_grid_points(len(U))
        self.grid_ = np.linspace(U.min(), U.max(), n_grid) if n_grid > 1 \
            else np.array([np.median(U)])

    def _n_grid_points(self, n_samples):
        """The number of grid points: ``n_grid``, or on a calibration fold of
        ``probability=True`` (``_fold_fit``) of at least ``CALIBRATION_GRID_MIN_SAMPLES``
        training samples its share ``CALIBRATION_GRID_SHARE`` (at least 2), a coarser grid
        over the same range."""
        if CALIBRATION_GRID_SHARE is None or not getattr(self, "_fold_fit", False) \
                or self.n_grid < 2 or n_samples < CALIBRATION_GRID_MIN_SAMPLES:
            return self.n_grid
        return max(2, min(self.n_grid, round(CALIBRATION_GRID_SHARE * self.n_grid)))

    def _grid_row_source(self, Z, y, sw):
        """One row source for the whole grid, of the kernel of (1, z), i.e. K + 1.

        The base's choice of rows (``_training_rows``: z, phi(z) or a callable's Gram
        matrix; ``gamma_`` set on the non-target columns Z) with the penalized intercept
        added: a constant feature of the explicit features, 1 added to a Gram matrix, or
        the row source's ``shift`` of the kernel.  Returns ``(src_X, src, plan)``, ``plan``
        the :class:`msvm._plan.SolvePlan` the row source is built by.
        """
        _, src_X, kind = self._training_rows(Z, y, feature_dtype=np.float64)
        shift = 0.0
        if kind == "linear":
            src_X = _with_constant(src_X)
        elif kind == "precomputed":
            src_X = np.ascontiguousarray(src_X + 1.0)
        else:
            shift = 1.0
        plan = self._solve_plan(kind, src_X.shape[0], sw)
        src = make_row_source(src_X, kind, len(self.classes_), gamma=self.gamma_,
                              degree=self.degree, coef0=self.coef0, cache_size=self.cache_size,
                              shift=shift, cache_dtype=plan.cache_dtype, rows=plan.rows)
        src.set_threads(self._solver_threads())
        return src_X, src, plan

    def _solve_plan(self, source, n_samples, weights):
        """The base's plan (:meth:`BaseMSVM._solve_plan`), except for a warm-started
        probability refit on the linear kernel (:meth:`_warm_level`): the linear kernel's
        rows (``LEVELS_ON_LINEAR_ROWS``)."""
        if not (source == "linear" and self._warm_level()):
            return super()._solve_plan(source, n_samples, weights)
        overrides = {**(getattr(self, "_plan_overrides", None) or {}), **WARM_LEVEL_PLAN}
        return plan_solve(source, n_samples, kernel=self.kernel, cache_size=self.cache_size,
                          cache_dtype=self.cache_dtype, tol=self.tol, C=self.C_,
                          weights=weights, overrides=overrides)

    def _warm_level(self):
        """Whether this fit is a weighted refit of ``probability=True`` (a chain's level or
        its top fit) warm-started from a fit of the same grid, with ``LEVELS_ON_LINEAR_ROWS``:
        each grid point's solve starts next to its solution, which dual coordinate descent
        reaches in a few epochs."""
        return (LEVELS_ON_LINEAR_ROWS and getattr(self, "_probability_refit", False)
                and self.warm_start and self._warm_start_state() is not None)

    def _grid_key(self, src_X, y):
        """What a grid point's fit is of besides its weights: the training rows (a hash), the
        labels and every parameter of the local problems (:class:`_SolvedGrid`)."""
        params = (self.kernel, getattr(self, "gamma_", None), self.degree, self.coef0,
                  float(self.reinforcement), self.tol, self.target_index_, self.smoother,
                  self.bandwidth_, tuple(self.grid_), self.kernel_approximation)
        return params, self._fingerprint(src_X), np.asarray(y).copy()

    def _grid_weights(self, U, sw):
        """The weights C_ w_i K_h(U_i - u0) of every grid point's local problem."""
        return np.array([self.C_ * sw * smoothing_weights(U, u0, self.bandwidth_,
                                                          self.smoother)
                         for u0 in self.grid_])

    def _fit_grid(self, sequence, n_columns, grid_weights, y, key=None):
        """The fit at every grid point, in order (a list of :class:`_GridFit`).

        Each grid point starts from the previous fit's dual there with ``warm_start`` (times
        C / C_previous: every box is proportional to C, so the point stays feasible), else
        from its solved neighbour's.  ``n_columns``: the explicit features' number, (1, x).
        ``grid_weights`` (n_grid, n): every grid point's weights (:meth:`_grid_weights`).
        With ``key`` (``_grid_key``, a warm-started refit) a grid point whose previous fit is
        also this refit's (:meth:`_SolvedGrid.reusable`) is taken as it is, not solved.
        """
        k = len(self.classes_)
        state = self._warm_start_state() if self.warm_start else None
        solved = None if state is None or key is None else state.solved
        fits, last = [], None           # last: the dual of the last solved grid point
        with StepLog(type(self).__name__, self.verbose, total=len(self.grid_),
                     bar=self.progress_bar) as log:
            for g, (u0, weights) in enumerate(zip(self.grid_, grid_weights)):
                label = f"grid point {g + 1}/{len(self.grid_)} (u0 = {u0:.4g})"
                reused = None if solved is None else solved.reusable(g, key, weights)
                if reused is not None:
                    fits.append(reused)
                    last = reused.alpha
                    log.step(label, reused.objective, reused.resid,
                             "its previous fit, weights grown off its moving bounds",
                             advance=True)
                    continue
                problem = reinforced_problem(y, k, weights, float(self.reinforcement),
                                             kappa=self._kappa(k), equality=False)
                held = weights > 0
                if not np.any(held):
                    fits.append(self._no_sample_fit(u0, problem, n_columns, len(y)))
                    log.step(label, 0.0, 0.0, "no sample: f = 0, not solved", advance=True)
                    continue
                previous = state.at(g, len(self.grid_), problem) if state is not None else None
                if previous is not None:
                    alpha = problem.clip_feasible(rescaled_dual(previous, state.C, self.C_))
                    if solved is not None and FOLLOW_MOVED_BOUNDS:
                        alpha = _bounds_followed(problem, alpha, solved.weights, g, weights)
                elif last is not None:
                    alpha = problem.clip_feasible(last)
                else:
                    alpha = np.zeros(problem.n_vars)
                if self._held_route(sequence, held):
                    fit, last = self._solve_on_held(sequence, problem, alpha, u0, weights, y,
                                                    held, _waits_for_late_start(solved, g))
                else:
                    fit, last = self._solve_grid_point(sequence, problem, alpha, u0, weights,
                                                       y)
                fit.one_class = len(np.unique(y[held])) < 2
                fits.append(fit)
                log.step(label, fit.objective, fit.resid, n_epochs(fit.n_iter), advance=True)
        return fits

    def _no_sample_fit(self, u0, problem, n_columns, n_samples):
        """The fit at a grid point whose weights hold no sample: every box is [0, 0], so
        alpha = 0 and f = 0 solve the local problem exactly (not solved)."""
        k = len(self.classes_)
        shape = (k - 1, n_columns) if self._explicit_features() else (n_samples, k - 1)
        return _GridFit(u0, np.zeros(problem.n_vars), 0.0, 0.0, 0, CONVERGED, np.zeros(shape),
                        None)

    def _held_route(self, sequence, held):
        """Whether a grid point's dual is solved on its held samples only
        (``SOLVE_ON_HELD_SAMPLES``): on explicit features, some sample of weight 0, on at
        least ``HELD_MIN_SAMPLES`` training samples."""
        return (SOLVE_ON_HELD_SAMPLES and sequence.features is not None
                and len(held) >= HELD_MIN_SAMPLES and not np.all(held))

    def _solve_on_held(self, sequence, problem, alpha, u0, weights, y, held, wait=False):
        """:meth:`_solve_grid_point` on the samples of positive weight (``held``) only.

        The variables of a sample of weight 0 are fixed at 0 (box [0, 0]) and its terms of
        the local objective vanish, so the dual restricted to the held samples has the same
        optimum; its solve runs on a row source of their explicit features
        (:meth:`_held_sequence`).  The fit's alpha, support and moving-bound marks are
        expanded back to the n samples with zeros (the weights of the explicit features,
        ``path``, are the same either way).  ``wait``: a warm level's solve weighs the late
        smoothed-primal start against ``LATE_START_EPOCHS`` epochs.  Returns the fit and its
        (n-sample) dual.
        """
        rows = np.flatnonzero(held)
        kept = held[problem.sample_of_var()]
        sub_problem = reinforced_problem(y[rows], len(self.classes_), weights[rows],
                                         float(self.reinforcement), kappa=self._kappa(
                                             len(self.classes_)), equality=False)
        sub, share = self._held_sequence(sequence, rows, problem, sub_problem)
        sub.late_start_epochs = LATE_START_EPOCHS if wait and self._warm_level() else 0
        fit, sub_alpha = self._solve_grid_point(sub, sub_problem, alpha[kept], u0,
                                                weights[rows], y[rows])
        fit.late_start = sub.late_starts > 0
        sequence.plan = replace(sub.plan, finish_after=sequence.plan.finish_after,
                                primal_start=sequence.plan.primal_start)
        fit.n_iter = max(1, round(fit.n_iter * share))
        sequence.stop_reasons.append(sub.stop_reasons[-1])
        full = np.zeros(problem.n_vars)
        full[kept] = sub_alpha
        fit.alpha = full
        fit.support = _expanded_marks(fit.support, rows, len(y))
        fit.weighed = _expanded_marks(fit.weighed, rows, len(y))
        return fit, full

    def _held_sequence(self, sequence, rows, problem, sub_problem):
        """A DualSequence on the explicit features of the samples ``rows`` only, solving by
        the grid's plan with its coordinate-order seed and penalty (those of ``sequence``,
        fixed at ``problem`` when not yet), and the share m / n of its epochs that are
        epochs of the n samples.

        An epoch of SMO (kernel rows: ``'linear rows'``) is n steps, one of coordinate
        descent a pass over the active samples: on SMO the budgets counted in epochs
        (``max_iter``, the finishing step's ``FINISH_AFTER``) are scaled by n / m, so that
        the solve on m samples gets the steps that it gets among the n, and its epochs are
        reported as epochs of the n samples.  The smoothed-primal starts follow the rule's
        decision on the n samples (:func:`_primal_rule_of_all`)."""
        features = sequence.features[rows]
        plan = sequence.plan
        src = make_row_source(features, "linear", len(self.classes_),
                              cache_dtype=plan.cache_dtype, rows=plan.rows)
        src.set_threads(self._solver_threads())
        sequence._fix_penalty_and_seed(problem)
        share = 1.0
        if plan.inner_solver(src, sub_problem)[0] == "smo":
            share = len(rows) / problem.n_samples
            plan = replace(plan, finish_after=max(1, round(
                (plan.finish_after or FINISH_AFTER) / share)))
        plan = _primal_rule_of_all(plan, sequence, problem, features, src, sub_problem)
        sub = self._dual_sequence(features, src, plan)
        sub.rho, sub.seed = sequence.rho, sequence.seed
        sub.max_iter = max(1, round(sequence.max_iter / share))
        return sub, share

    def _solve_grid_point(self, sequence, problem, alpha, u0, weights, y):
        """Solve the local dual at u0 from ``alpha``: its :class:`_GridFit` and its dual."""
        k = len(self.classes_)
        sol = sequence.solve(problem, alpha, np.zeros(k))
        with np.errstate(over="ignore", invalid="ignore"):
            objective = sol.penalty + weighted_sum(
                weights, reinforced_loss(sol.G, y, float(self.reinforcement)))
        objective = check_finite_objective(self, objective, f"the objective at u0 = {u0:.4g}")
        T = self._output_map(k)
        if sol.W is not None:
            path = feature_weights(sol.W, self._kappa(k), T)      # (k-1) x (1 + p)
        else:
            path = times_small(sol.V, T.T)                        # n x (k-1)
        fit = _GridFit(u0, sol.alpha.copy(), objective, sol.resid, max(1, sol.n_iter),
                       sequence.stop_reasons[-1], path, problem.support_mask(sol.alpha),
                       weighed=problem.at_moving_bounds(sol.alpha))
        return fit, sol.alpha

    def _store_grid(self, fits, Z):
        """The fitted attributes of the grid's fits (Z: the non-target training columns)."""
        self.objectives_ = np.array([fit.objective for fit in fits])
        self.kkt_residuals_ = np.array([fit.resid for fit in fits])
        self.n_iter_ = np.array([fit.n_iter for fit in fits])
        self.grid_stop_reasons_ = np.array([fit.stop for fit in fits])
        self.converged_ = bool(np.all(self.grid_stop_reasons_ == CONVERGED))
        paths = np.array([fit.path for fit in fits])
        if self._explicit_features():
            support = np.zeros(Z.shape[0], dtype=bool)  # a nonzero dual variable at some u0
            for fit in fits:
                if fit.support is not None:
                    support |= fit.support
            self.support_ = np.flatnonzero(support)
            if self.kernel_approximation is not None:
                self.feature_coef_path_ = paths
            else:
                self.coef_path_ = paths
        else:
            # n_grid x n x (k-1)
            self.support_ = np.flatnonzero(np.any(paths != 0, axis=(0, 2)))
            self.dual_coef_path_ = np.transpose(paths[:, self.support_, :], (0, 2, 1))
            self.support_vectors_ = Z[self.support_]

    def _warn_local_problems(self, fits):
        """``local_problems_`` (the grid points without a local classification problem: no
        sample, or samples of one class only) and, if any, one DegenerateFitWarning."""
        self.local_problems_ = {
            "no_sample": np.array([fit.u0 for fit in fits if fit.support is None]),
            "one_class": np.array([fit.u0 for fit in fits if fit.one_class])}
        message = self._local_problems_message()
        if message is not None:
            warn_once_per_call_site(message)

    def _local_problems_message(self):
        """The text of the warning about ``local_problems_``, or None when there are none.

        The same text for every fit with such grid points (the points themselves are in
        ``local_problems_``), so that the repeated fits of a search warn once.
        """
        if not any(len(points) for points in self.local_problems_.values()):
            return None
        return ("TargetedLocalMSVM: some grid points have no local classification problem "
                "(their smoothing weights hold no sample, or samples of one class only), so "
                "predictions near them come from degenerate local fits; local_problems_ "
                "lists them. Use a larger bandwidth or fewer grid points (n_grid).")

    # ------------------------------------------------------------------ predict
    def _interpolation(self, u):
        """Grid indices (lo, hi) and weights t of the linear interpolation at every u."""
        g = self.grid_
        u = np.clip(u, g[0], g[-1])
        hi = np.clip(np.searchsorted(g, u, side="right"), 1, len(g) - 1) if len(g) > 1 \
            else np.zeros(len(u), dtype=int)
        lo = np.maximum(hi - 1, 0)
        span = g[hi] - g[lo]
        t = np.where(span > 0, (u - g[lo]) / np.where(span > 0, span, 1.0), 0.0)
        return lo, hi, t

    def local_functions(self, X):
        """f(u, x) (n_samples, k - 1) with u the targeted column of X."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False,
                          accept_sparse="csr", ensure_all_finite=True)
        return self._local_functions(X)

    def _local_functions(self, X):
        """f(u, x) for a validated float array X."""
        U, Z = self._split(X)
        lo, hi, t = self._interpolation(U)
        if self.kernel_approximation is not None:
            return self._approximate_local_functions(Z, lo, hi, t)
        if self.kernel == "linear":
            B = (1 - t)[:, None, None] * self.coef_path_[lo] + t[:, None, None] * \
                self.coef_path_[hi]                                  # n x (k-1) x (1 + p)
            # B is dense n x (k-1) x (1 + p) already: Z densified is no larger
            return np.einsum("nqd,nd->nq", B, dense(_with_constant(Z)))
        K = kernel_matrix(Z, self.support_vectors_, self.kernel, self.gamma_, self.degree,
                          self.coef0) + 1.0
        A = (1 - t)[:, None, None] * self.dual_coef_path_[lo] + t[:, None, None] * \
            self.dual_coef_path_[hi]                                 # n x (k-1) x n_SV
        return np.einsum("nqs,ns->nq", A, K)

    def _approximate_local_functions(self, Z, lo, hi, t):
        """f(u, x) from the features (1, phi(z)): every grid point's functions, interpolated.

        phi(Z) @ every grid point's weights in chunks of rows (O(n_grid k n_components) per
        sample), then the linear interpolation between the two grid points around each u.
        """
        paths = self.feature_coef_path_                           # n_grid x (k-1) x (1 + m)
        n_grid, q = paths.shape[:2]
        flat = paths.reshape(n_grid * q, -1)
        F = self.feature_map_.apply(Z, flat[:, 1:]) + flat[:, 0]  # n x (n_grid (k-1))
        F = F.reshape(len(t), n_grid, q)
        rows = np.arange(len(t))
        return (1 - t)[:, None] * F[rows, lo] + t[:, None] * F[rows, hi]

    def decision_values(self, X):
        """<f(u, x), W_j> for every class, shape (n_samples, k)."""
        return self.local_functions(X) @ simplex_vertices(len(self.classes_))

    def coef_at(self, u):
        """beta(u) (k - 1, n_features_in_) interpolated along the grid (linear kernel)."""
        check_is_fitted(self, "coef_path_")
        lo, hi, t = self._interpolation(np.atleast_1d(np.asarray(u, dtype=np.float64)))
        return (1 - t[0]) * self.coef_path_[lo[0]] + t[0] * self.coef_path_[hi[0]]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        tags.input_tags.sparse = True
        # the targeted column only weights the local fits: on generic data whose classes
        # need every column as a feature, the training score can be low by design
        tags.classifier_tags.poor_score = True
        return tags
