"""Model selection as the papers do it: the regularization chosen on a separate tuning set.

Every paper fits on a training set for each lambda of a grid (2^-16 .. 2^15 in
Liu, Wu and He (2011) and Liu and Yuan (2011)), picks the lambda whose fit scores best on an
independent tuning set, and reports that fit's test score.  Our estimators take
``C = 1 / (n lambda)`` (n the training size).  :class:`TuningSetSearch` does exactly that,
walking the grid from the largest lambda (smallest C) to the smallest with each fit
warm-started from the previous one (the variables at their bounds rescaled by C'/C, the free
ones kept, the equalities restored: ``msvm._sequence.path_start``), and is itself a
scikit-learn classifier, so it nests in ``cross_val_score`` and ``GridSearchCV``.
scikit-learn's own ``GridSearchCV`` with a ``PredefinedSplit`` selects the same C (tested); it
refits from scratch at each C.  With ``refit=True`` (the default, as ``GridSearchCV``) the
selected lambda is fitted once more on the training and tuning samples together, at the C
of that lambda for their number (``C = 1 / (n_all lambda)``); ``refit=False`` keeps the
papers' protocol, the fit on the training set alone.  The fits along the path, which serve
only to score each grid point on the tuning set, are solved to a looser tolerance
(``path_tol``, 5e-2 by default) and the selected point alone to the
estimator's ``tol``: by the refit, or (``refit=False``) by solving the selected fit on from
its own dual.
"""

import numbers
import time
import warnings
from copy import deepcopy

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, check_cv, train_test_split
from sklearn.utils import _safe_indexing
from sklearn.utils.metadata_routing import (MetadataRouter, MethodMapping, _routing_enabled,
                                            process_routing)
from sklearn.utils._param_validation import Interval, validate_parameter_constraints
from sklearn.utils.metaestimators import available_if
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import BaseMSVM
from ._fit_state import unfitted_on_error, user_stacklevel
from ._kernel_columns import KernelColumns
from ._kernels import between_class_gamma, median_gamma
from ._progress import StepLog
from ._thread_pools import one_blas_thread
from ._validation import check_class_labels, check_fit_sample_weight, degenerate_fit_message
from .exceptions import DegenerateFitWarning

# The default ``path_tol`` of TuningSetSearch (see its docstring; chosen by the tuning runs of
# benchmarks/results/tuning.md).
PATH_TOL = 5e-2

__all__ = ["TuningSetSearch", "between_class_gamma", "gamma_quartiles", "lambda_grid",
           "lambda_to_C", "median_gamma"]


def lambda_grid(low=-16, high=15, base=2.0):
    """The papers' grid lambda = base^low, ..., base^high (default 2^-16 .. 2^15), ascending."""
    if not (isinstance(low, numbers.Integral) and isinstance(high, numbers.Integral)
            and low <= high):
        raise ValueError(f"low and high must be integers with low <= high; got {low!r}, "
                         f"{high!r}")
    return float(base) ** np.arange(low, high + 1, dtype=np.float64)


def lambda_to_C(lambdas, n_samples):
    """C = 1 / (n lambda): the papers' ``lambda J(f) + (1/n) sum loss`` in our scaling."""
    lambdas = np.asarray(lambdas, dtype=np.float64)
    if np.any(~(lambdas > 0)) or not np.all(np.isfinite(lambdas)):
        raise ValueError("lambdas must be positive and finite")
    if not (isinstance(n_samples, numbers.Integral) and n_samples >= 1):
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}")
    return 1.0 / (n_samples * lambdas)


def gamma_quartiles(X, y, quantiles=(0.25, 0.5, 0.75)):
    """RBF gammas 1/(2 sigma^2) at quantiles of the between-class pairwise distances.

    Wu and Liu (2007) tunes sigma among the first quartile, the median and the third
    quartile; pass the result as ``param_grid={'gamma': ...}`` of :class:`TuningSetSearch`.
    """
    return [between_class_gamma(X, y, q) for q in quantiles]


def _stop(est):
    """(converged, stop_reason) of a fitted estimator, or None when it has no such attributes."""
    if hasattr(est, "converged_") and hasattr(est, "stop_reason_"):
        return bool(est.converged_), str(est.stop_reason_)
    return None


def _estimator_has_probability(search):
    """available_if check: the searched estimator was given ``probability=True``."""
    if not getattr(search.estimator, "probability", False):
        raise AttributeError("predict_proba is not available: the estimator of "
                             "TuningSetSearch needs probability=True")
    return True


def _fit_summary(est):
    """(objective, KKT residual) of a fitted estimator, NaN where it has none.

    A TargetedLocalMSVM reports the sum of its grid objectives and its largest residual.
    """
    objective = getattr(est, "objective_", None)
    if objective is None and getattr(est, "objectives_", None) is not None:
        objective = np.sum(est.objectives_)
    resid = getattr(est, "kkt_residual_", None)
    if resid is None and getattr(est, "kkt_residuals_", None) is not None:
        resid = np.max(est.kkt_residuals_)
    return (np.nan if objective is None else float(objective),
            np.nan if resid is None else float(resid))


def _check_only_sample_weight(fit_params, needs):
    unknown = set(fit_params) - {"sample_weight"}
    if unknown:
        raise ValueError(f"fit parameters {sorted(unknown)} need {needs}")


def _split_fit_params(fit_params, rows):
    """The fit parameters of a training part (sample_weight indexed with its rows)."""
    if fit_params.get("sample_weight") is None:
        return dict(fit_params)
    return dict(fit_params, sample_weight=np.asarray(fit_params["sample_weight"])[rows])


def _better(score, best_score):
    """Whether ``score`` beats the best so far: the first maximum wins, NaN never does."""
    return best_score is None or (np.isnan(best_score) and not np.isnan(score)) \
        or score > best_score


def _best_index(scores, lambdas):
    """Index of the selected grid point: the best score, ties to the largest lambda.

    ``scores`` and ``lambdas`` have one entry per grid point (every ``param_grid``
    combination times every lambda).  Among the points whose score equals the best, the one
    with the largest lambda wins (the most regularized, simplest and cheapest fit) over the
    whole grid; among those, the first in grid order.  A NaN score is never selected over a
    number; when every score is NaN the first point is returned.
    """
    scores = np.asarray(scores, dtype=float)
    valid = ~np.isnan(scores)
    if not valid.any():
        return 0
    tied = np.flatnonzero(scores == np.max(scores[valid]))
    return int(tied[np.argmax(np.asarray(lambdas, dtype=float)[tied])])


def _path_summary(est):
    """What a statistician plots of one fit: support size, coefficients, intercepts.

    ``n_support`` is the number of training samples with a nonzero dual variable (NaN for an
    estimator without ``support_``); ``coef`` and ``intercept`` are copies of ``coef_`` and
    ``intercept_`` when the estimator has explicit coefficients (the linear kernel), else None.
    """
    support = getattr(est, "support_", None)
    coef = getattr(est, "coef_", None)
    intercept = getattr(est, "intercept_", None)
    return {"n_support": np.nan if support is None else len(support),
            "coef": None if coef is None else np.array(coef, dtype=float),
            "intercept": None if coef is None or intercept is None
            else np.array(intercept, dtype=float)}


def _log_point(log, params, point):
    """One verbose line (and a step of the bar) for one fit of a lambda path."""
    shown = "".join(f", {key}={value!r}" for key, value in params.items())
    log.step(f"lambda {point['lambda']:.4g} (C = {point['C']:.4g}{shown})", point["objective"],
             point["resid"], f"tuning score {point['score']:.4g}, fit "
             f"{point['fit_time']:.3f} s", advance=True)


def _check_tuning_counts(tuning_size, n, k, stratified):
    """Refuse a ``tuning_size`` that leaves the tuning or the training part too small.

    The hold-out has ``ceil(tuning_size * n)`` samples (scikit-learn's rounding); a
    stratified split needs at least one sample of each of the k classes in each part, an
    unstratified one at least one sample in each part.
    """
    n_tune = int(np.ceil(tuning_size * n))
    least = k if stratified else 1
    if min(n_tune, n - n_tune) < least:
        need = (f"at least one sample of each of the {k} classes in each part" if stratified
                else "at least one sample in each part")
        raise ValueError(
            f"tuning_size={tuning_size:g} holds out {n_tune} of the {n} samples for tuning "
            f"and leaves {n - n_tune} for the fits; the hold-out needs {need}: use a "
            f"tuning_size between {least / n:.3g} and {1 - least / n:.3g}, or give X_tune "
            f"and y_tune")


def _check_scorer_methods(scorer, estimator, scoring):
    """Refuse a scorer that needs a method the estimator does not offer, naming the remedy.

    A scorer on probabilities (``'neg_log_loss'``, ``'roc_auc_ovr'``, ...) calls
    ``predict_proba``, which msvm's estimators offer with ``probability=True`` only; without
    this check every fit of the grid would run before the first score failed with a bare
    AttributeError.
    """
    methods = getattr(scorer, "_response_method", None)
    if methods is None:
        return
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    if any(hasattr(estimator, name) for name in methods):
        return
    remedy = (" Set probability=True on the estimator (or choose a scoring on predictions, "
              "e.g. 'accuracy')." if "probability" in estimator.get_params() else "")
    raise ValueError(f"scoring={scoring!r} needs {' or '.join(methods)}, which "
                     f"{type(estimator).__name__} does not offer with these parameters."
                     f"{remedy}")


def _fit_tol(est):
    """The ``tol`` an estimator fits to, NaN when it has no such parameter."""
    tol = est.get_params().get("tol")
    return float(tol) if isinstance(tol, numbers.Real) else np.nan


def _path_tolerance(estimator, path_tol):
    """The tol of the fits along a path: ``max(path_tol, tol)`` of an msvm estimator, None
    (its own settings) with ``path_tol=None`` or for another estimator, whose ``tol`` may
    mean something else than msvm's KKT residual and relative duality gap."""
    tol = estimator.get_params().get("tol")
    if path_tol is None or not isinstance(estimator, BaseMSVM) \
            or not isinstance(tol, numbers.Real):
        return None
    return max(float(path_tol), float(tol))


def _lambda_path(estimator, params, lambdas, n, warm_start, X, y, X_tune, y_tune, fit_params,
                 scorer, log=None, keep_best=True, path_tol=None):
    """Fit one ``param_grid`` combination along the lambda grid, warm-started, in order.

    The unit of work of a parallel :class:`TuningSetSearch` (one joblib task).  Returns the
    list of the path's fits (a dict each: lambda, C, tuning score, fit and scoring times,
    ``(converged, stop_reason)`` or None, the tol the fit was solved to, objective, KKT
    residual and duality gap, number of support samples, coefficients and intercepts of a
    linear fit) and ``(index, fit)`` of its best-scoring fit, the first maximum along the
    path, i.e. the largest lambda among ties (a copy of the estimator; None unless
    ``keep_best``).  ``path_tol`` (see :func:`_path_tolerance`) is the tol of every fit of
    the path.  ``log``, when given, reports each fit as it ends.
    """
    est = clone(estimator).set_params(**params)
    if "warm_start" in est.get_params():
        est.set_params(warm_start=bool(warm_start))
    tol = _path_tolerance(est, path_tol)
    if tol is not None:
        est.set_params(tol=tol)
    on_path = isinstance(est, BaseMSVM)
    if on_path:
        # along the path only: each fit keeps its row source (scores, kernel-row cache) for
        # the next, warm-started one, and the tuning-set kernel columns are computed once
        est._join_path(keep_rows=bool(warm_start), columns=KernelColumns(len(y)))
    try:
        # one thread of BLAS along the path: its products (tuning-set scores, the fits'
        # slot-space products) are small, and OpenBLAS's idle workers would spin for a
        # while after every one of them, taking the other core from the compiled solves.
        # Shared with overlapping fits: the caller's limits are back when the last ends.
        with one_blas_thread():
            return _walk_path(est, lambdas, n, X, y, X_tune, y_tune, fit_params, scorer,
                              params, log, keep_best)
    finally:
        if on_path:
            est._leave_path()


def _walk_path(est, lambdas, n, X, y, X_tune, y_tune, fit_params, scorer, params, log,
               keep_best):
    """The loop of :func:`_lambda_path` over the lambdas, on the prepared estimator."""
    points, best, best_score = [], None, None
    for lam in lambdas:
        C = 1.0 / (n * lam)
        est.set_params(C=C)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            # the large-lambda end of the path is expected to be constant
            warnings.simplefilter("ignore", DegenerateFitWarning)
            est.fit(X, y, **fit_params)
        t1 = time.perf_counter()
        score = float(scorer(est, X_tune, y_tune))
        objective, resid = _fit_summary(est)
        point = {"lambda": float(lam), "C": C, "score": score, "fit_time": t1 - t0,
                 "score_time": time.perf_counter() - t1, "stop": _stop(est),
                 "tol": _fit_tol(est), "objective": objective,
                 "resid": resid, "gap": float(getattr(est, "duality_gap_", np.nan)),
                 **_path_summary(est)}
        points.append(point)
        if keep_best and _better(score, best_score):
            best, best_score = (len(points) - 1, deepcopy(est)), score
        if log is not None:
            _log_point(log, params, point)
    return points, best


def _solve_to_tol(fit, estimator, X, y, fit_params):
    """The selected path ``fit`` solved on to the ``estimator``'s own tol (``refit=False``).

    A path solved to a looser ``path_tol`` gives a fit of the selected point that is only
    that close to its optimum; the same estimator is fitted again at the same C and the
    estimator's tol, warm-started from its own dual (rescaled by C/C = 1: the same point),
    so that the solver goes on from where the path fit stopped.  Without ``warm_start`` the
    refit starts from scratch.  A fit already solved to that tol is returned as it is.
    """
    tol = estimator.get_params().get("tol")
    if not isinstance(fit, BaseMSVM) or fit.tol == tol:
        return fit
    fit.set_params(tol=tol)
    with warnings.catch_warnings():
        # a degenerate selection is reported once, by fit
        warnings.simplefilter("ignore", DegenerateFitWarning)
        fit.fit(X, y, **fit_params)
    return fit._leave_path()        # the row source of the fit is not kept on the estimator


def _stack_sets(X, X_tune):
    """The training inputs X followed by the tuning inputs X_tune, in X's container (a
    pandas DataFrame, a CSR matrix or an array)."""
    if hasattr(X, "columns"):
        import pandas as pd
        if not hasattr(X_tune, "columns"):
            X_tune = pd.DataFrame(X_tune, columns=X.columns)
        return pd.concat([X, X_tune], ignore_index=True)
    if sp.issparse(X) or sp.issparse(X_tune):
        return sp.vstack([sp.csr_matrix(X), sp.csr_matrix(X_tune)]).tocsr()
    return np.vstack([X, np.asarray(X_tune, dtype=np.float64)])


def _merged_stop(stops):
    """(converged, stop_reason) of one grid point over the folds: the first unconverged fold's."""
    if any(stop is None for stop in stops):
        return None
    for stop in stops:
        if not stop[0]:
            return stop
    return stops[0]


def _cv_results(grid, lambdas, C, paths):
    """``cv_results_`` of a search (scikit-learn's ``GridSearchCV`` layout), one entry per fit.

    ``paths[g][s]`` is the list of fits of combination g on split s along ``lambdas``; ``C``
    the C reported for each lambda.
    """
    n_splits = len(paths[0])
    params = [dict(combination, C=float(c)) for combination in grid for c in C]
    n_fits = len(params)
    results = {"params": params}
    names = ["C"] + sorted({name for combination in grid for name in combination})
    for name in names:
        column = np.ma.MaskedArray(np.empty(n_fits, dtype=object), mask=True)
        for i, p in enumerate(params):
            if name in p:
                column[i] = p[name]
        results[f"param_{name}"] = column
    results["lambda"] = np.tile(np.asarray(lambdas, dtype=float), len(grid))

    def table(key):          # (n_fits, n_splits)
        return np.array([[point[key] for point in path] for split_paths in paths
                         for path in split_paths]).reshape(len(grid), n_splits, -1) \
            .transpose(0, 2, 1).reshape(n_fits, n_splits)

    scores = table("score")
    for i in range(n_splits):
        results[f"split{i}_test_score"] = scores[:, i]
    # how far each fit was solved: the tol it was asked for (``path_tol``), its objective
    # and its duality gap on each split
    results["tol"] = table("tol")[:, 0]
    for key, name in (("objective", "objective"), ("gap", "duality_gap")):
        values = table(key)
        for i in range(n_splits):
            results[f"split{i}_{name}"] = values[:, i]
    results["mean_test_score"] = scores.mean(axis=1)
    results["std_test_score"] = scores.std(axis=1)
    # as GridSearchCV: rank 1 is the best, ties share the lowest rank, NaN scores come last
    mean = results["mean_test_score"]
    finite = np.where(np.isnan(mean), np.nanmin(mean) - 1 if np.any(~np.isnan(mean))
                      else 0.0, mean)
    results["rank_test_score"] = rankdata(-finite, method="min").astype(np.int32)
    for key in ("fit_time", "score_time"):
        times = table(key)
        results[f"mean_{key}"] = times.mean(axis=1)
        results[f"std_{key}"] = times.std(axis=1)
    stops = [_merged_stop([path[j]["stop"] for path in split_paths])
             for split_paths in paths for j in range(len(lambdas))]
    if all(stop is not None for stop in stops):
        results["converged"] = np.array([stop[0] for stop in stops])
        results["stop_reason"] = np.array([stop[1] for stop in stops])
    return results


def _path_record(results, paths):
    """``path_`` of a search: per grid point (``results``' order), what a statistician plots.

    ``results`` is the search's ``cv_results_``, ``paths[g][s]`` the fits of combination g on
    split s along the lambdas (see :func:`_cv_results`).
    """
    fits = [[path[j] for path in split_paths] for split_paths in paths
            for j in range(len(split_paths[0]))]          # fits[point][split]
    record = {"params": list(results["params"]), "lambda": results["lambda"].copy(),
              "C": np.array([p["C"] for p in results["params"]]),
              "score": results["mean_test_score"].copy()}
    for key, name in (("objective", "objective"), ("n_support", "n_support"),
                      ("tol", "tol"), ("gap", "duality_gap")):
        record[name] = np.array([[fit[key] for fit in point] for point in fits], dtype=float)
    coefs = [fit["coef"] for point in fits for fit in point]
    if all(c is not None for c in coefs) and len({c.shape for c in coefs}) == 1:
        for key in ("coef", "intercept"):
            record[key] = np.array([[fit[key] for fit in point] for point in fits])
    return record


class TuningSetSearch(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Choose C on a separate tuning set along a lambda grid, with warm starts.

    For each combination of ``param_grid`` (e.g. several kernel widths) the estimator is fitted
    on the training set at ``C = 1 / (n lambda)`` for every lambda of ``lambdas``, from the
    largest lambda down, each fit warm-started from the previous one; each fit is scored on
    the tuning set.  Ties in the tuning score go to the largest lambda over the whole grid
    (the most regularized, simplest and cheapest fit, whatever its ``param_grid``
    combination), then to the first combination in grid order; a NaN score is never
    selected over a number.  ``n_jobs`` fits the combinations of ``param_grid`` in parallel,
    each job walking its lambda path in order (see below).

    Two protocols, chosen by ``refit``:

    * ``refit=True`` (default, scikit-learn's ``GridSearchCV`` protocol): the selected
      parameters are fitted once more on all the samples the search saw (training and
      tuning samples, or all of X with ``cv``), at the selected lambda: ``C = 1 / (n_all
      lambda)`` with n_all their number, so that the regularization ``lambda J(f)`` against
      the mean loss is the one selected (a C kept fixed would regularize less on more
      data).  This is the default because a scikit-learn user expects the search to
      predict with a model fitted on all the data, and it predicts better: on pendigits it
      scored 0.4-0.5 points higher on the test set than the fit on the training part
      (``benchmarks/results/tuning.md``).
    * ``refit=False`` (the papers' protocol, e.g. Liu and Yuan 2011): ``best_estimator_`` is
      the selected fit on the training set alone, whose test score the papers report.  With
      ``cv`` there is no such single fit: the search then only selects (``best_params_``,
      ``cv_results_``) and cannot predict, as ``GridSearchCV(refit=False)``.

    The fits at the large-lambda end of the grid are often constant classifiers; their
    :class:`~msvm.exceptions.DegenerateFitWarning` is silenced along the path, and raised
    once if the *selected* fit is one.  The inner fits see X in the container it was given
    in (a pandas DataFrame stays one), so feature names are checked at predict as usual.

    Parameters
    ----------
    estimator : estimator object
        An msvm estimator (anything with a ``C`` parameter; ``warm_start`` is used when it
        has one).
    lambdas : array-like of float, default=None
        The grid of lambda; ``None`` is the papers' ``2^-16 .. 2^15``.
    param_grid : dict or list of dicts, default=None
        Further parameters to search (outer loop), as in ``GridSearchCV``.
    scoring : str, callable or None, default=None
        A scikit-learn scorer for the tuning set (None: the estimator's accuracy).  For the
        average utility, :func:`msvm.metrics.make_utility_scorer`.
    tuning_size : float in (0, 1), default=0.5
        When ``fit`` gets no tuning set, this fraction of ``X`` (stratified) becomes one.
    warm_start : bool, default=True
        Warm-start each fit of the grid from the previous one.  The fits of a path then
        also share one kernel row source (its scores, rescaled, and its cache of kernel rows
        of at most the estimator's ``cache_size`` MB), reused only while the training
        inputs, the kernel and its parameters are unchanged; the kernel between the tuning
        set and the training samples is computed once per path when it fits in
        ``cache_size`` (with or without warm starts).  The fits are those of cold starts to
        the same tol (``path_tol``).
    random_state : int, RandomState instance or None, default=None
        Seed of the training/tuning split made when no tuning set is given.
    cv : int, cross-validation generator, iterable or None, default=None
        ``None``: one tuning set (``X_tune``, or the ``tuning_size`` hold-out), as the papers
        do.  Otherwise the folds of ``check_cv(cv, y, classifier=True)`` (an int is a
        stratified k-fold; the splitter's own seed decides the folds): the path is walked on
        the training part of every fold and scored on its held-out part; the mean score
        over the folds selects the combination and lambda, and ``best_estimator_`` is then
        fitted once more, on all of (X, y), at the selected parameters and
        ``C = 1 / (n lambda)`` with n = ``len(y)`` (the fits of a fold use that fold's
        training size).  Not with ``X_tune`` nor ``kernel='precomputed'``.
    refit : bool, default=True
        Refit the selected parameters on the training and tuning samples together, at
        ``C = 1 / (n_all lambda)`` (see the two protocols above); False keeps the selected
        fit on the training set (``cv``: no fitted model).  True needs the inputs of both
        sets: not with ``kernel='precomputed'`` (its tuning input is a kernel block against
        the training samples) nor with ``sample_weight`` and an explicit tuning set (the
        tuning samples have no weights); use ``refit=False`` there.
    n_jobs : int, default=None
        Number of jobs fitting the ``param_grid`` combinations (and ``cv`` folds) in
        parallel (joblib; ``None`` is 1 unless in a ``joblib.parallel_backend`` context, -1
        is every core).  Each job walks the whole warm-started lambda path of one
        combination on one split in order, so the fits, the scores and the selection are
        those of ``n_jobs=1``; with a single combination and split the search runs in this
        process.  Any joblib backend works, e.g. a Dask cluster
        through ``joblib.parallel_backend('dask')`` (``pip install "msvm[dask]"``).  The
        fits' warnings (e.g. ``ConvergenceWarning``) are not shown by the worker processes;
        ``results_['converged']`` and ``'stop_reason'`` record how each fit stopped.
    verbose : bool or int, default=0
        1 (True) or more prints one line per fit of the path (each lambda of each
        ``param_grid`` combination) with the fit's objective and KKT residual (for
        ``TargetedLocalMSVM`` the sum of its grid objectives and the largest residual), its
        tuning score and the time elapsed since the search started.  The estimator's own
        ``verbose`` still decides what each fit prints.  In parallel (``n_jobs``) the lines
        of a combination's path are printed when its job ends, in grid order (the time is
        then that of printing).
    progress_bar : bool, default=False
        Show a progress bar over the fits of the path (needs ``tqdm``: ``pip install tqdm``).
    path_tol : float or None, default=5e-2
        The tol of every fit along the path (at least the estimator's own ``tol``: the KKT
        residual and the relative duality gap the solver stops at; an estimator from
        outside msvm keeps its own settings).  The path fits serve only to score each grid
        point on the tuning set; the selected point is then solved to the estimator's
        ``tol``: by the refit (``refit=True``), or, with ``refit=False``, by fitting the
        selected path fit on at the same C and the estimator's tol, warm-started from its
        own dual, so that ``best_estimator_`` is always a fit to ``tol``.  On pendigits'
        issue-24 grid (15 C x 3 gammas, ReinforcedMSVM) 5e-2 cuts the search's CPU time to
        0.37 of path_tol=None (the fits at large C take 5-7x fewer epochs) with the same
        selection and test accuracy; on the searches of ``benchmarks/results/tuning.md``
        (sections 5-6) the tuning scores within 0.01 of the best moved by at most 0.002 and
        the selection was the same or an equally scoring grid point (test accuracy +0.0003).
        Scores far from the best move more (up to 0.36 at the large-lambda end, where the
        fits are nearly constant and their intercepts decide): for a validation curve
        accurate everywhere, use ``path_tol=None``.  ``cv_results_['tol']`` and
        ``path_['tol']`` record the tol of each path fit, ``converged`` whether it reached
        that tol (a path fit that does gives no ``ConvergenceWarning``), and
        ``cv_results_`` and ``path_`` its objective and duality gap.  ``None`` fits the
        whole path to the estimator's ``tol`` (the behaviour before this parameter).

    Attributes
    ----------
    best_estimator_ : estimator
        ``refit=True``: the selected parameters fitted on the training and tuning samples
        (with ``cv``: on all of X) at ``C = 1 / (n_all lambda)``.  ``refit=False``: the
        selected fit on the training set, solved on to the estimator's ``tol`` (see
        ``path_tol``; absent with ``cv``).  Either way a fit to the estimator's ``tol``.
    best_params_ : dict
        The selected grid point's parameters as in ``cv_results_['params']``, ``C``
        included (the C of the fits that were scored; with ``cv`` the C of the refit on all
        of X).  Plain Python numbers where the grid gave them so.
    best_lambda_ : float
        The selected lambda.
    best_score_ : float
        Its tuning-set score (with ``cv``: the mean over the folds): the score of the path
        fit, solved to ``path_tol``.  With ``refit=False`` and a ``path_tol`` looser than the
        estimator's ``tol``, ``best_estimator_`` is that fit solved on to ``tol``, whose
        tuning score may differ slightly.
    best_index_ : int
        Its index in ``cv_results_`` and ``path_``.
    results_ : dict of arrays
        One entry per fit: ``'params'``, ``'lambda'``, ``'C'``, ``'score'``, ``'fit_time'``
        (with ``cv``: one entry per grid point, the means over the folds), and, when the
        estimator reports how its fits stopped (every msvm estimator does), ``'converged'``
        (bool: the fit reached the tol it was solved to, ``path_tol``) and ``'stop_reason'``
        (its ``converged_`` and ``stop_reason_``: 'tol', 'max_iter', 'max_dc_iter', ...).
    cv_results_ : dict of arrays
        The same fits in the layout of scikit-learn's ``GridSearchCV.cv_results_`` (for
        ``pandas.DataFrame(search.cv_results_)``): ``'params'``, ``'param_C'`` and
        ``'param_<name>'`` for each ``param_grid`` name (masked arrays, masked where a
        combination lacks the name), ``'lambda'``, ``'split<i>_test_score'`` for each split
        (one, the tuning set, unless ``cv``), ``'mean_test_score'`` and
        ``'std_test_score'`` over the splits, ``'rank_test_score'`` (1 the best; ties share
        the lowest rank, NaN last), ``'mean_fit_time'``, ``'std_fit_time'``, ``'mean_score_time'``,
        ``'std_score_time'``, and ``'converged'`` and ``'stop_reason'`` as in ``results_``
        (with ``cv``: those of the first fold whose fit did not converge, if any); ``'tol'``,
        the tol each fit was solved to (``path_tol``; NaN for an estimator without ``tol``),
        and ``'split<i>_objective'`` and ``'split<i>_duality_gap'``, each fit's
        ``objective_`` and ``duality_gap_`` (NaN where it has none).
    path_ : dict
        What a statistician plots along the path, one entry per grid point (in the order of
        ``cv_results_``): ``'params'``, ``'lambda'``, ``'C'``, ``'score'`` (the mean tuning
        score), and per split (last axis or second axis: one split unless ``cv``)
        ``'objective'`` and ``'n_support'`` (number of support samples), shape
        (n_points, n_splits), ``'tol'`` and ``'duality_gap'`` (the tol each fit was solved
        to and its duality gap, same shape), and, when every fit has explicit coefficients
        (the linear
        kernel), ``'coef'`` and ``'intercept'`` of shapes (n_points, n_splits) +
        ``coef_.shape`` and + ``intercept_.shape``.  Drawn by
        :func:`msvm.plotting.plot_validation_curve` and
        :func:`msvm.plotting.plot_regularization_path`.
    classes_ : ndarray
        The class labels.
    n_features_in_ : int
        Number of features seen in fit.
    feature_names_in_ : ndarray of str
        Column names of X, when it has them (a pandas DataFrame).

    Examples
    --------
    >>> from msvm import ReinforcedMSVM
    >>> from msvm.datasets import make_reinforced_example
    >>> from msvm.model_selection import TuningSetSearch, lambda_grid
    >>> X, y = make_reinforced_example(50, random_state=0)
    >>> X_tune, y_tune = make_reinforced_example(50, random_state=1)
    >>> search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambda_grid(-4, 4))
    >>> search = search.fit(X, y, X_tune=X_tune, y_tune=y_tune)
    >>> len(search.results_["score"])
    9
    """

    _parameter_constraints = {"cv": ["cv_object"], "refit": ["boolean"],
                              "n_jobs": [numbers.Integral, None], "verbose": ["verbose"],
                              "progress_bar": ["boolean"],
                              "path_tol": [Interval(numbers.Real, 0, None, closed="neither"),
                                           None]}

    def __init__(self, estimator, lambdas=None, param_grid=None, scoring=None, tuning_size=0.5,
                 warm_start=True, random_state=None, *, cv=None, refit=True, n_jobs=None,
                 verbose=0, progress_bar=False, path_tol=PATH_TOL):
        self.estimator = estimator
        self.lambdas = lambdas
        self.param_grid = param_grid
        self.scoring = scoring
        self.tuning_size = tuning_size
        self.warm_start = warm_start
        self.random_state = random_state
        self.cv = cv
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.progress_bar = progress_bar
        self.path_tol = path_tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.input_tags = inner.input_tags
        return tags

    def _check_lambdas(self):
        lambdas = lambda_grid() if self.lambdas is None else np.asarray(self.lambdas, float)
        if lambdas.ndim != 1 or len(lambdas) == 0:
            raise ValueError("lambdas must be a non-empty 1-d array of positive numbers")
        if np.any(~(lambdas > 0)) or not np.all(np.isfinite(lambdas)):
            raise ValueError("lambdas must be positive and finite")
        return np.sort(lambdas)[::-1]            # largest lambda (smallest C) first

    def _tuning_split(self, X, y, fit_params):
        """(X, y, X_tune, y_tune, fit_params): a stratified ``tuning_size`` part held out."""
        if self.estimator.get_params().get("kernel") == "precomputed":
            raise ValueError("with kernel='precomputed' give the tuning set explicitly "
                             "(X_tune: the kernel between tuning and training points)")
        if not (isinstance(self.tuning_size, numbers.Real) and 0 < self.tuning_size < 1):
            raise ValueError(f"tuning_size must be in (0, 1); got {self.tuning_size!r}")
        _check_only_sample_weight(fit_params, "an explicit tuning set (X_tune, y_tune)")
        _, counts = np.unique(y, return_counts=True)
        stratify = y if len(counts) > 1 and counts.min() >= 2 else None
        _check_tuning_counts(self.tuning_size, len(y), len(counts), stratify is not None)
        index = np.arange(len(y))
        train, _tune = train_test_split(index, test_size=self.tuning_size,
                                        random_state=self.random_state, stratify=stratify)
        # a class with one sample cannot be stratified: every class keeps a sample in the
        # training part (else the fits would silently not know it)
        back = [_tune[np.flatnonzero(y[_tune] == c)[0]]
                for c in np.setdiff1d(np.unique(y), y[train])]
        if back:
            train, _tune = np.concatenate([train, back]), np.setdiff1d(_tune, back)
        if len(_tune) == 0:
            raise ValueError(f"too few samples ({len(y)}) to hold out a tuning set with "
                             f"every class in the training part; give X_tune and y_tune")
        return (_safe_indexing(X, train), y[train], _safe_indexing(X, _tune), y[_tune],
                _split_fit_params(fit_params, train))

    def _cv_splits(self, X, y, X_tune, fit_params):
        """The (X, y, X_tune, y_tune, fit_params) of each fold of ``cv``."""
        if X_tune is not None:
            raise ValueError("give either cv or a tuning set (X_tune, y_tune), not both")
        if self.estimator.get_params().get("kernel") == "precomputed":
            raise ValueError("cv does not take kernel='precomputed'; give the tuning set "
                             "explicitly (X_tune: the kernel between tuning and training "
                             "points)")
        _check_only_sample_weight(fit_params, "cv=None and an explicit tuning set")
        splits = []
        for train, test in check_cv(self.cv, y, classifier=True).split(X, y):
            splits.append((_safe_indexing(X, train), y[train], _safe_indexing(X, test),
                           y[test], _split_fit_params(fit_params, train)))
        return splits

    def _refit(self, params, X, y, fit_params):
        """The estimator at the selected parameters fitted on all of (X, y) (``refit``)."""
        est = clone(self.estimator).set_params(**params)
        with warnings.catch_warnings():
            # a degenerate selection is reported once, by fit
            warnings.simplefilter("ignore", DegenerateFitWarning)
            return est.fit(X, y, **fit_params)

    @unfitted_on_error
    def fit(self, X, y, X_tune=None, y_tune=None, sample_weight=None, **fit_params):
        """Fit along the grid on (X, y) and select on (X_tune, y_tune).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs.
        y : array-like of shape (n_samples,)
            Training labels.
        X_tune, y_tune : array-like, default=None
            The tuning set.  When omitted, a stratified ``tuning_size`` part of (X, y) is
            held out (``random_state``) and the rest is the training set; a class with a
            single sample stays in the training set.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the training samples, passed to the estimator's ``fit`` (split with X
            when the tuning set is held out of it); the tuning score is unweighted.  With
            metadata routing enabled (``sklearn.set_config(enable_metadata_routing=True)``)
            they reach the estimator only if it requests them
            (``estimator.set_fit_request(sample_weight=True)``).
        **fit_params : dict
            Further parameters of the estimator's ``fit`` (routed as metadata when routing
            is enabled).

        Returns
        -------
        self : object
        """
        validate_parameter_constraints(
            self._parameter_constraints,
            {name: getattr(self, name) for name in self._parameter_constraints},
            caller_name=type(self).__name__)
        if not hasattr(self.estimator, "C"):
            raise ValueError(f"estimator {type(self.estimator).__name__} has no C parameter")
        if (X_tune is None) != (y_tune is None):
            raise ValueError("give both X_tune and y_tune, or neither")
        lambdas = self._check_lambdas()
        # validate; a data frame is handed to the inner fits as it is (feature names kept)
        # sparse X stays sparse (CSR: the hold-out split indexes rows) where the estimator
        # takes it
        sparse_ok = "csr" if self.estimator.__sklearn_tags__().input_tags.sparse else False
        # float64 as the estimators validate it (numeric strings are converted alike)
        X_checked, y = validate_data(self, X, y, ensure_min_samples=2, reset=True,
                                     accept_sparse=sparse_ok, dtype=np.float64)
        if not hasattr(X, "columns"):
            X = X_checked
        check_class_labels(y)
        if y_tune is not None:
            check_class_labels(y_tune, "y_tune")
        if sample_weight is not None:
            check_fit_sample_weight(sample_weight, len(y))
        if _routing_enabled():
            routed = process_routing(self, "fit", sample_weight=sample_weight, **fit_params)
            fit_params = dict(routed.estimator.fit)
        else:
            fit_params = dict(fit_params)
            if sample_weight is not None:
                fit_params["sample_weight"] = sample_weight
        scorer = check_scoring(self.estimator, scoring=self.scoring)
        _check_scorer_methods(scorer, self.estimator, self.scoring)
        grid = list(ParameterGrid(self.param_grid)) if self.param_grid is not None else [{}]
        self._check_refit(X_tune, fit_params)
        splits = self._splits(X, y, X_tune, y_tune, fit_params)
        done = self._fit_paths(grid, splits, lambdas, scorer)
        self._store_results(grid, lambdas, splits, len(y), done)
        g = self._select(lambdas)
        fitted_on = self._best_fit(done[g * len(splits)], X, y, X_tune, y_tune, fit_params,
                                   splits[0])
        self.classes_ = (self.best_estimator_.classes_ if fitted_on is not None
                         else np.unique(y))
        if fitted_on is not None:
            self._warn_if_degenerate_selection(*fitted_on)
        return self

    def _check_refit(self, X_tune, fit_params):
        """Refuse ``refit=True`` where the training and tuning samples cannot be refitted
        together (before any work)."""
        precomputed = self.estimator.get_params().get("kernel") == "precomputed"
        if not self.refit or not (precomputed or (X_tune is not None and fit_params)):
            return
        if hasattr(self.estimator, "_validate_params"):
            # an invalid parameter of the estimator is the first thing to fix
            clone(self.estimator)._validate_params()
        if precomputed:
            raise ValueError("refit=True refits on the training and tuning samples together, "
                             "which needs the kernel among all of them, but with "
                             "kernel='precomputed' X_tune is the kernel against the training "
                             "samples only: set refit=False (the selected fit on the training "
                             "set is kept), or pass the kernel as a callable")
        if X_tune is not None and fit_params:
            raise ValueError(f"refit=True refits on the training and tuning samples "
                             f"together, but the fit parameters {sorted(fit_params)} (e.g. "
                             f"sample_weight) are given for the training samples only: set "
                             f"refit=False, or pass all samples as X with tuning_size (the "
                             f"weights are then split with X)")

    def _splits(self, X, y, X_tune, y_tune, fit_params):
        """The (X, y, X_tune, y_tune, fit_params) of every split: the folds of ``cv``, the
        ``tuning_size`` hold-out, or the given tuning set."""
        if self.cv is not None:
            return self._cv_splits(X, y, X_tune, fit_params)
        if X_tune is None:
            return [self._tuning_split(X, y, fit_params)]
        return [(X, y, X_tune, y_tune, fit_params)]

    def _fit_paths(self, grid, splits, lambdas, scorer):
        """The lambda path of every (``param_grid`` combination, split), in that order.

        Returns what :func:`_lambda_path` returns for each (its fits, and its best fit
        unless ``cv``).  In this process one verbose line per fit as it ends; with
        ``n_jobs`` one joblib task per path, whose lines are printed when it ends (in order).
        """
        keep_best = self.cv is None and not self.refit
        work = [(params, split) for params in grid for split in splits]
        with StepLog(type(self).__name__, self.verbose, total=len(work) * len(lambdas),
                     bar=self.progress_bar) as log:
            if len(work) == 1 or effective_n_jobs(self.n_jobs) == 1:
                return [_lambda_path(self.estimator, params, lambdas, len(split[1]),
                                     self.warm_start, *split, scorer, log=log,
                                     keep_best=keep_best, path_tol=self.path_tol)
                        for params, split in work]
            done = []
            # the paths in parallel workers fit with one solver thread each (no
            # oversubscription: n_jobs workers times n_threads)
            estimator = self.estimator
            if estimator.get_params().get("n_threads", 1) != 1:
                estimator = clone(estimator).set_params(n_threads=1)
            jobs = Parallel(n_jobs=self.n_jobs, return_as="generator")(
                delayed(_lambda_path)(estimator, params, lambdas, len(split[1]),
                                      self.warm_start, *split, scorer, keep_best=keep_best,
                                      path_tol=self.path_tol)
                for params, split in work)
            for (params, _), path in zip(work, jobs):
                done.append(path)
                for point in path[0]:
                    _log_point(log, params, point)
            return done

    def _store_results(self, grid, lambdas, splits, n_all, done):
        """``cv_results_`` and ``results_`` of the paths ``done`` (see :meth:`_fit_paths`).

        The C of each lambda is that of the fits (one tuning split) or of the refit on all
        ``n_all`` samples (``cv``).
        """
        C = 1.0 / ((len(splits[0][1]) if self.cv is None else n_all) * lambdas)
        paths = [[points for points, _ in done[g * len(splits):(g + 1) * len(splits)]]
                 for g in range(len(grid))]
        self.cv_results_ = cv = _cv_results(grid, lambdas, C, paths)
        self.path_ = _path_record(cv, paths)
        self.results_ = {"params": list(cv["params"]), "lambda": cv["lambda"].copy(),
                         "C": np.array([p["C"] for p in cv["params"]]),
                         "score": cv["mean_test_score"].copy(),
                         "fit_time": cv["mean_fit_time"].copy()}
        if "converged" in cv:
            self.results_["converged"] = cv["converged"].copy()
            self.results_["stop_reason"] = cv["stop_reason"].copy()

    def _select(self, lambdas):
        """``best_index_``, ``best_score_``, ``best_lambda_``, ``best_params_`` (the best
        mean tuning score, ties to the largest lambda: :func:`_best_index`); returns the
        index of the selected ``param_grid`` combination."""
        scores = self.cv_results_["mean_test_score"]
        best_index = _best_index(scores, self.cv_results_["lambda"])
        g, j = divmod(best_index, len(lambdas))
        self.best_index_ = best_index
        self.best_score_ = float(scores[best_index])
        self.best_lambda_ = float(lambdas[j])
        self.best_params_ = dict(self.cv_results_["params"][best_index])
        if np.isnan(self.best_score_):
            warnings.warn("every tuning score is NaN", UserWarning)
        return g

    def _best_fit(self, path, X, y, X_tune, y_tune, fit_params, split):
        """``best_estimator_`` as ``refit`` says; returns the (X, y) it was fitted on, or
        None when there is none (``refit=False`` with ``cv``).

        ``path`` is what :func:`_lambda_path` returned for the selected combination (on the
        first split): its fits, and the ``(index, fit)`` it kept (``refit=False`` without
        ``cv``); ``split`` the (X, y, ...) of the first split.  The refit is one fit from
        scratch (for the truncated losses, whose DC algorithm finds a local minimum that
        depends on its start, not necessarily the kind the warm path found).
        """
        if self.refit:
            if self.cv is None and X_tune is not None:
                X, y = _stack_sets(X, X_tune), np.concatenate([y, np.asarray(y_tune)])
            params = dict(self.best_params_, C=1.0 / (len(y) * self.best_lambda_))
            self.best_estimator_ = self._refit(params, X, y, fit_params)
            fitted_on = (X, y)
        elif self.cv is None:
            self.best_estimator_ = _solve_to_tol(path[1][1], self.estimator, split[0],
                                                 split[1], split[4])
            fitted_on = (split[0], split[1])
        else:
            return None
        if "warm_start" in self.best_estimator_.get_params():
            self.best_estimator_.set_params(warm_start=self.estimator.get_params()["warm_start"])
        return fitted_on

    def _warn_if_degenerate_selection(self, X_fit, y_fit):
        """One DegenerateFitWarning when the selected fit predicts one class for all of its
        training samples (X_fit, y_fit), and one with the selected fit's own summary of
        degenerate parts (``_local_problems_message``: TargetedLocalMSVM's grid points
        without a local problem), whose warnings the path and the refit silence."""
        summary = getattr(self.best_estimator_, "_local_problems_message", None)
        summary = summary() if summary is not None else None
        if summary is not None:
            warnings.warn(f"{summary} (in the fit TuningSetSearch selected)",
                          DegenerateFitWarning, stacklevel=user_stacklevel())
        message = degenerate_fit_message(self.best_estimator_,
                                         self.best_estimator_.predict(X_fit), y_fit)
        if message is not None:
            warnings.warn(f"TuningSetSearch selected lambda = {self.best_lambda_:g} (C = "
                          f"{self.best_estimator_.C:g}), a degenerate fit: {message} Extend "
                          f"the grid to smaller lambda (larger C) if the best tuning score "
                          f"sits at its end.", DegenerateFitWarning, stacklevel=user_stacklevel())

    def get_metadata_routing(self):
        """Metadata routing of this object (scikit-learn's metadata routing).

        ``fit`` consumes ``sample_weight`` itself (it splits it with X) and routes its
        metadata to the estimator's ``fit``.

        Returns
        -------
        routing : MetadataRouter
        """
        return (MetadataRouter(owner=self.__class__.__name__)
                .add_self_request(self)
                .add(estimator=self.estimator,
                     method_mapping=MethodMapping().add(caller="fit", callee="fit")))

    def predict(self, X):
        """Predict with the selected fit."""
        return self._best().predict(X)

    def decision_function(self, X):
        """Decision values of the selected fit."""
        return self._best().decision_function(X)

    @available_if(_estimator_has_probability)
    def predict_proba(self, X):
        """Class probabilities of the selected fit (an estimator with ``probability=True``).

        Every fit of the path then makes its probability fits too (about
        5 (1 + k * probability_grid) fits per lambda, ``n_probability_fits_``); to pay that
        once, search with ``probability=False`` and refit the selected parameters with
        ``probability=True``.
        """
        return self._best().predict_proba(X)

    @available_if(_estimator_has_probability)
    def predict_log_proba(self, X):
        """Logarithm of the class probabilities of the selected fit."""
        return self._best().predict_log_proba(X)

    def score(self, X, y, sample_weight=None):
        """The ``scoring`` of the selected fit on (X, y) (accuracy when ``scoring`` is None)."""
        best = self._best()
        if self.scoring is None:
            return best.score(X, y, sample_weight=sample_weight)
        return float(check_scoring(best, scoring=self.scoring)(best, X, y))

    def _best(self):
        """The fitted ``best_estimator_``, or NotFittedError naming the remedy."""
        check_is_fitted(self)
        if not hasattr(self, "best_estimator_"):
            raise NotFittedError("this TuningSetSearch was fitted with refit=False and cv: "
                                 "it selected parameters (best_params_, cv_results_) but "
                                 "keeps no fitted model to predict with; set refit=True")
        return self.best_estimator_
