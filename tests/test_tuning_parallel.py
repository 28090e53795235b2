"""TuningSetSearch at scale: n_jobs (joblib, Dask) gives the n_jobs=1 search; cv_results_."""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, PredefinedSplit

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, lambda_grid

GAMMAS = [0.1, 0.5, 2.0]


@pytest.fixture(scope="module")
def split():
    X, y = make_reinforced_example(60, random_state=0)
    Xt, yt = make_reinforced_example(60, random_state=1)
    return X, y, Xt, yt


def _search(n_jobs, **kwargs):
    return TuningSetSearch(ReinforcedMSVM(kernel="rbf", reinforcement=0.5),
                           lambdas=lambda_grid(-8, 2), param_grid={"gamma": GAMMAS},
                           n_jobs=n_jobs, **kwargs)


def _fit(search, split):
    X, y, Xt, yt = split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search.fit(X, y, X_tune=Xt, y_tune=yt)


def assert_same_search(a, b, X):
    """The same fits (scores, stop reasons), the same selection, the same selected fit."""
    assert a.best_params_ == b.best_params_ and a.best_lambda_ == b.best_lambda_
    assert a.best_score_ == b.best_score_
    for key in ("lambda", "C", "score", "converged", "stop_reason"):
        np.testing.assert_array_equal(a.results_[key], b.results_[key])
    assert a.results_["params"] == b.results_["params"]
    np.testing.assert_array_equal(a.best_estimator_.dual_coef_, b.best_estimator_.dual_coef_) \
        if hasattr(a.best_estimator_, "dual_coef_") else None
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("n_jobs", [2, -1])
def test_parallel_search_is_the_sequential_one(split, n_jobs):
    sequential = _fit(_search(None), split)
    parallel = _fit(_search(n_jobs), split)
    assert len(parallel.results_["score"]) == len(GAMMAS) * 11
    assert_same_search(sequential, parallel, split[2])


def test_threading_backend_is_the_sequential_one(split):
    sequential = _fit(_search(1), split)
    with joblib.parallel_backend("threading", n_jobs=2):
        threaded = _fit(_search(None), split)
    assert_same_search(sequential, threaded, split[2])


def test_parallel_verbose_reports_every_fit(split, capsys):
    _fit(_search(2, verbose=1), split)
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("[msvm] TuningSetSearch")]
    assert len(lines) == len(GAMMAS) * 11
    assert "gamma=0.1" in lines[0] and "gamma=2.0" in lines[-1]       # grid order


def test_cv_results_layout(split):
    pd = pytest.importorskip("pandas")
    search = _fit(_search(None), split)
    cv = search.cv_results_
    n_fits = len(GAMMAS) * 11
    for key in ("params", "param_C", "param_gamma", "lambda", "split0_test_score",
                "mean_test_score", "std_test_score", "rank_test_score", "mean_fit_time",
                "std_fit_time", "mean_score_time", "std_score_time", "converged",
                "stop_reason"):
        assert len(cv[key]) == n_fits, key
    assert isinstance(cv["param_gamma"], np.ma.MaskedArray)
    np.testing.assert_array_equal(cv["mean_test_score"], search.results_["score"])
    np.testing.assert_array_equal(np.asarray(cv["param_C"], float), search.results_["C"])
    best = np.flatnonzero(cv["rank_test_score"] == 1)
    assert cv["params"][best[0]] == search.best_params_
    assert cv["mean_test_score"][best[0]] == search.best_score_
    frame = pd.DataFrame(cv)
    assert len(frame) == n_fits and frame["rank_test_score"].min() == 1


def test_cv_results_mask_names_a_combination_lacks(split):
    X, y, Xt, yt = split
    search = TuningSetSearch(WestonWatkinsMSVM(), lambdas=lambda_grid(-3, 0),
                             param_grid=[{"kernel": ["linear"]},
                                         {"kernel": ["rbf"], "gamma": [0.5]}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y, X_tune=Xt, y_tune=yt)
    gamma = search.cv_results_["param_gamma"]
    assert gamma.mask[:4].all() and not gamma.mask[4:].any()
    assert list(search.cv_results_["param_kernel"][:5]) == ["linear"] * 4 + ["rbf"]


def test_cv_results_ranks_like_grid_search(split):
    """The ranks of GridSearchCV with the same tuning split (PredefinedSplit) on the same C."""
    X, y, Xt, yt = split
    lambdas = lambda_grid(-6, 0)
    # path_tol=None: the path's fits to the estimator's tol, as GridSearchCV's
    search = _fit(TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambdas,
                                  warm_start=False, path_tol=None), split)
    grid = GridSearchCV(ReinforcedMSVM(kernel="linear"),
                        {"C": list(search.results_["C"])},
                        cv=PredefinedSplit(np.r_[-np.ones(len(y)), np.zeros(len(yt))]),
                        refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid.fit(np.vstack([X, Xt]), np.r_[y, yt])
    np.testing.assert_allclose(grid.cv_results_["mean_test_score"],
                               search.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(grid.cv_results_["rank_test_score"],
                                  search.cv_results_["rank_test_score"])


def test_n_jobs_is_validated(split):
    with pytest.raises(ValueError, match="n_jobs"):
        _fit(_search("two"), split)


def test_nan_scores_are_never_selected(split):
    calls = []

    def scorer(est, X, y):
        calls.append(1)
        return np.nan if len(calls) == 1 else float(np.mean(est.predict(X) == y))

    search = _fit(TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambda_grid(-4, 0),
                                  scoring=scorer), split)
    assert not np.isnan(search.best_score_)
    assert search.cv_results_["rank_test_score"][0] == 5


def test_dask_cluster_gives_the_sequential_search(split):
    distributed = pytest.importorskip("distributed")
    sequential = _fit(_search(1), split)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_backend("dask"):
        on_dask = _fit(_search(2), split)
    assert_same_search(sequential, on_dask, split[2])


# --------------------------------------------------------------------------- cv folds
def _cv_search(**kwargs):
    return TuningSetSearch(ReinforcedMSVM(kernel="rbf", reinforcement=0.5),
                           lambdas=lambda_grid(-6, 1), param_grid={"gamma": [0.2, 1.0]},
                           **kwargs)


def _fit_xy(search, X, y, **fit_kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search.fit(X, y, **fit_kwargs)


@pytest.fixture(scope="module")
def pooled(split):
    X, y, Xt, yt = split
    return np.vstack([X, Xt]), np.r_[y, yt]


def test_cv_folds_are_tuning_set_searches(pooled):
    """Each split<i>_test_score is the search with that fold as its tuning set."""
    from sklearn.model_selection import StratifiedKFold
    X, y = pooled
    w = np.linspace(0.5, 2.0, len(y))
    folds = StratifiedKFold(3)
    search = _fit_xy(_cv_search(cv=folds), X, y, sample_weight=w)
    cv = search.cv_results_
    for i, (train, test) in enumerate(folds.split(X, y)):
        one = _fit_xy(_cv_search(refit=False), X[train], y[train], X_tune=X[test],
                      y_tune=y[test], sample_weight=w[train])
        np.testing.assert_array_equal(cv[f"split{i}_test_score"], one.results_["score"])
    scores = np.column_stack([cv[f"split{i}_test_score"] for i in range(3)])
    np.testing.assert_allclose(cv["mean_test_score"], scores.mean(axis=1))
    np.testing.assert_allclose(cv["std_test_score"], scores.std(axis=1))
    # selected by the mean; refitted on all of X at C = 1 / (n lambda), n = len(y)
    best = search.best_index_
    assert cv["mean_test_score"][best] == np.max(cv["mean_test_score"])
    assert search.best_params_ == cv["params"][best]
    assert search.best_score_ == cv["mean_test_score"][best]
    assert search.best_params_["C"] == pytest.approx(1 / (len(y) * search.best_lambda_))
    refit = ReinforcedMSVM(kernel="rbf", reinforcement=0.5).set_params(**search.best_params_)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        refit.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(search.decision_function(X), refit.decision_function(X))


def test_cv_in_parallel_is_the_sequential_one(pooled):
    X, y = pooled
    sequential = _fit_xy(_cv_search(cv=3), X, y)
    parallel = _fit_xy(_cv_search(cv=3, n_jobs=2), X, y)
    for key in ("split0_test_score", "split2_test_score", "mean_test_score",
                "rank_test_score", "converged", "stop_reason"):
        np.testing.assert_array_equal(sequential.cv_results_[key], parallel.cv_results_[key])
    assert sequential.best_params_ == parallel.best_params_
    np.testing.assert_array_equal(sequential.decision_function(X),
                                  parallel.decision_function(X))


def test_cv_input_errors(split):
    X, y, Xt, yt = split
    with pytest.raises(ValueError, match="not both"):
        _fit_xy(_cv_search(cv=3), X, y, X_tune=Xt, y_tune=yt)
    K = X @ X.T
    with pytest.raises(ValueError, match="precomputed"):
        _fit_xy(TuningSetSearch(ReinforcedMSVM(kernel="precomputed"), cv=3), K, y)
    with pytest.raises(ValueError, match="cv"):
        _fit_xy(_cv_search(cv="five"), X, y)
