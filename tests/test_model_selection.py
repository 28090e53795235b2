"""Tuning-set model selection: the lambda grid, warm starts, and agreement with GridSearchCV."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, PredefinedSplit, cross_val_score

from msvm import ReinforcedMSVM, WeightedRobustMSVM, WestonWatkinsMSVM
from msvm.datasets import make_reinforced_example, make_utility_example, utility_matrix
from msvm.metrics import make_utility_scorer
from msvm.model_selection import (TuningSetSearch, gamma_quartiles, lambda_grid,
                                  lambda_to_C)


@pytest.fixture(scope="module")
def split():
    X, y = make_reinforced_example(60, random_state=0)
    Xt, yt = make_reinforced_example(60, random_state=1)
    return X, y, Xt, yt


def test_lambda_grid_is_the_papers():
    grid = lambda_grid()
    assert len(grid) == 32 and grid[0] == 2.0 ** -16 and grid[-1] == 2.0 ** 15
    np.testing.assert_allclose(lambda_to_C([0.5, 2.0], 100), [1 / 50, 1 / 200])
    with pytest.raises(ValueError):
        lambda_grid(3, 1)
    with pytest.raises(ValueError, match="positive"):
        lambda_to_C([0.0], 10)


@pytest.mark.parametrize("make", [
    lambda C: ReinforcedMSVM(C, kernel="rbf", gamma=0.5, reinforcement=0.5),
    lambda C: WestonWatkinsMSVM(C, kernel="linear"),
    lambda C: WeightedRobustMSVM(C, kernel="linear", utility=utility_matrix(2, 0.4),
                                 truncation=None),
], ids=["reinforced", "weston-watkins", "weighted-robust"])
def test_warm_start_across_C_reaches_the_cold_solution(split, make):
    X, y, _, _ = split
    warm = make(0.05).set_params(warm_start=True, tol=1e-8).fit(X, y)
    warm.set_params(C=5.0).fit(X, y)
    cold = make(5.0).set_params(tol=1e-8).fit(X, y)
    assert warm.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    np.testing.assert_array_equal(warm.predict(X), cold.predict(X))


def test_warm_start_across_C_reaches_a_dc_fixed_point(split):
    """The truncated (nonconvex) model returns a local minimum that depends on the start:
    on this sample the warm path and a cold start both reach 217.64 today (at one time the
    warm path reached 208.13 and the cold start 217.64, and both 208.13 before the SMO path
    also shrank grouped problems).  What a warm start must give is a
    fixed point of the DC algorithm: refitting from it keeps its objective, and the two
    minima classify the training points alike."""
    X, y, _, _ = split

    def make(C):
        return WeightedRobustMSVM(C, kernel="linear", utility=utility_matrix(2, 0.4),
                                  warm_start=True, tol=1e-8)

    warm = make(0.05).fit(X, y)
    warm.set_params(C=5.0).fit(X, y)
    cold = make(5.0).fit(X, y)
    for fit in (warm, cold):
        objective = fit.objective_
        fit.fit(X, y)
        assert fit.objective_ == pytest.approx(objective, rel=1e-6)
    assert np.mean(warm.predict(X) == cold.predict(X)) >= 0.9


def test_same_choice_as_grid_search_with_predefined_split(split):
    X, y, Xt, yt = split
    lambdas = lambda_grid(-8, 6)
    est = ReinforcedMSVM(kernel="linear", reinforcement=0.5, tol=1e-8)
    # path_tol=None: every path fit to the estimator's tol, as GridSearchCV's fits
    search = TuningSetSearch(est, lambdas=lambdas, refit=False, path_tol=None).fit(
        X, y, X_tune=Xt, y_tune=yt)

    Cs = lambda_to_C(np.sort(lambdas)[::-1], len(X))      # the same order: C ascending
    folds = PredefinedSplit(np.r_[-np.ones(len(X)), np.zeros(len(Xt))])
    gs = GridSearchCV(est, {"C": list(Cs)}, cv=folds, refit=False).fit(
        np.vstack([X, Xt]), np.r_[y, yt])
    np.testing.assert_allclose(search.results_["score"], gs.cv_results_["mean_test_score"])
    assert search.best_params_["C"] == pytest.approx(gs.best_params_["C"])
    # the kept fit is the training-set fit at the chosen C, not a refit on train + tune
    fresh = clone(est).set_params(C=search.best_params_["C"]).fit(X, y)
    assert search.best_estimator_.objective_ == pytest.approx(fresh.objective_, rel=1e-6)
    assert search.best_lambda_ == pytest.approx(1 / (len(X) * search.best_params_["C"]))


def test_ties_go_to_the_largest_lambda(split):
    X, y, Xt, yt = split
    search = TuningSetSearch(ReinforcedMSVM(kernel="linear"),
                             lambdas=lambda_grid(-4, 4)).fit(X, y, X_tune=Xt, y_tune=yt)
    scores, lams = search.results_["score"], search.results_["lambda"]
    assert np.all(np.diff(lams) < 0)                       # largest lambda first
    best = scores.max()
    assert search.best_lambda_ == lams[np.flatnonzero(scores == best)[0]]


def test_ties_go_to_the_largest_lambda_over_the_whole_grid(split):
    """Among tied grid points the largest lambda wins whatever its param_grid combination
    (the first combination used to win, at whatever lambda it reached the best score)."""
    X, y, Xt, yt = split
    lambdas = lambda_grid(-4, 2)

    def scorer(est, X_, y_):           # gamma 2 ties everywhere; gamma 1 only at small lambda
        return 1.0 if est.gamma == 2.0 or est.C > 1.0 / (len(X) * 2.0 ** -3) else 0.5

    search = TuningSetSearch(ReinforcedMSVM(kernel="rbf"), lambdas=lambdas, scoring=scorer,
                             param_grid={"gamma": [1.0, 2.0]}).fit(X, y, X_tune=Xt,
                                                                   y_tune=yt)
    assert search.best_params_["gamma"] == 2.0 and search.best_lambda_ == lambdas.max()
    assert search.best_index_ == len(lambdas)              # the first point of gamma 2
    assert search.best_estimator_.gamma == 2.0


def test_best_index_rule():
    """The selection: best score, then the largest lambda, then the first in grid order;
    NaN never beats a number."""
    from msvm.model_selection import _best_index
    assert _best_index([0.9, 0.9, 0.5], [0.1, 10.0, 100.0]) == 1
    assert _best_index([0.9, 0.9, 0.9, 0.9], [1.0, 8.0, 8.0, 2.0]) == 1
    assert _best_index([np.nan, 0.3, 0.2], [5.0, 1.0, 2.0]) == 1
    assert _best_index([np.nan, np.nan], [5.0, 1.0]) == 0


@pytest.mark.parametrize("given", ["explicit", "held-out"])
def test_refit_fits_all_samples_at_the_selected_lambda(split, given):
    """refit=True (default): best_estimator_ is the selected lambda fitted on the training
    and tuning samples together at C = 1 / (n_all lambda); best_params_ keeps the C of the
    scored fits.  refit=False keeps the selected fit on the training set."""
    X, y, Xt, yt = split
    est = ReinforcedMSVM(kernel="linear", tol=1e-8)
    kwargs = dict(X_tune=Xt, y_tune=yt) if given == "explicit" else {}
    X_fit, y_fit = (X, y) if given == "explicit" else (np.vstack([X, Xt]), np.r_[y, yt])
    X_all, y_all = np.vstack([X, Xt]), np.r_[y, yt]
    search = TuningSetSearch(est, lambdas=lambda_grid(-6, 2), random_state=0).fit(
        X_fit, y_fit, **kwargs)
    n_scored = len(X) if given == "explicit" else len(X_fit) // 2
    assert search.best_estimator_.C == pytest.approx(1 / (len(y_all) * search.best_lambda_))
    assert search.best_params_["C"] == pytest.approx(1 / (n_scored * search.best_lambda_))
    direct = clone(est).set_params(C=search.best_estimator_.C).fit(X_all, y_all)
    assert search.best_estimator_.objective_ == pytest.approx(direct.objective_, rel=1e-6)
    kept = TuningSetSearch(est, lambdas=lambda_grid(-6, 2), random_state=0,
                           refit=False).fit(X_fit, y_fit, **kwargs)
    assert kept.best_estimator_.C == pytest.approx(kept.best_params_["C"])
    assert kept.best_lambda_ == search.best_lambda_


def test_refit_false_with_cv_selects_but_does_not_predict(split):
    from sklearn.exceptions import NotFittedError
    X, y, _, _ = split
    search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambda_grid(-3, 1),
                             cv=3, refit=False).fit(X, y)
    assert not hasattr(search, "best_estimator_") and "C" in search.best_params_
    np.testing.assert_array_equal(search.classes_, np.unique(y))
    with pytest.raises(NotFittedError, match="refit=True"):
        search.predict(X)


def test_refit_needs_inputs_of_both_sets(split):
    X, y, Xt, yt = split
    with pytest.raises(ValueError, match="refit=False"):
        TuningSetSearch(ReinforcedMSVM(kernel="precomputed"), lambdas=[1.0]).fit(
            X @ X.T, y, X_tune=Xt @ X.T, y_tune=yt)
    search = TuningSetSearch(ReinforcedMSVM(kernel="precomputed"), lambdas=[1.0],
                             refit=False).fit(X @ X.T, y, X_tune=Xt @ X.T, y_tune=yt)
    assert search.predict(Xt @ X.T).shape == yt.shape
    with pytest.raises(ValueError, match="sample_weight"):
        TuningSetSearch(ReinforcedMSVM(), lambdas=[1.0]).fit(
            X, y, X_tune=Xt, y_tune=yt, sample_weight=np.ones(len(y)))


def test_best_params_are_plain_python_numbers(split):
    """best_params_ and cv_results_['params'] hold plain floats for C (np.float64 before),
    and the param_grid values as the grid gave them."""
    X, y, Xt, yt = split
    search = TuningSetSearch(ReinforcedMSVM(kernel="rbf"), lambdas=lambda_grid(-2, 0),
                             param_grid={"gamma": [0.5, 1.0], "degree": [3]}).fit(
        X, y, X_tune=Xt, y_tune=yt)
    assert type(search.best_params_["C"]) is float
    assert type(search.best_params_["gamma"]) is float
    assert type(search.best_params_["degree"]) is int
    assert all(type(p["C"]) is float for p in search.cv_results_["params"])
    assert type(search.best_lambda_) is float and type(search.best_score_) is float


def test_path_keeps_what_a_statistician_plots(split):
    """path_: per grid point the lambda, C, tuning score, objective, number of support
    samples and, for a linear model, the coefficients and intercepts of every fit."""
    X, y, Xt, yt = split
    lambdas = lambda_grid(-3, 1)
    # path_tol=None: the kept fit is the path's own (not solved on to a tighter tol)
    search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambdas,
                             refit=False, path_tol=None).fit(X, y, X_tune=Xt, y_tune=yt)
    path = search.path_
    n = len(lambdas)
    assert path["coef"].shape == (n, 1) + search.best_estimator_.coef_.shape
    assert path["intercept"].shape == (n, 1) + search.best_estimator_.intercept_.shape
    np.testing.assert_array_equal(path["score"], search.results_["score"])
    np.testing.assert_array_equal(path["lambda"], search.results_["lambda"])
    i = search.best_index_
    np.testing.assert_allclose(path["coef"][i, 0], search.best_estimator_.coef_)
    assert path["n_support"][i, 0] == len(search.best_estimator_.support_)
    assert path["objective"][i, 0] == pytest.approx(search.best_estimator_.objective_)
    # a kernel model: no coefficients, the rest kept; cv: one column per fold
    rbf = TuningSetSearch(ReinforcedMSVM(kernel="rbf"), lambdas=lambdas, cv=2).fit(X, y)
    assert "coef" not in rbf.path_ and rbf.path_["n_support"].shape == (n, 2)
    assert np.all(rbf.path_["n_support"] >= 1) and np.all(np.isfinite(rbf.path_["objective"]))


def test_param_grid_utility_scoring_and_delegation(split):
    X, y, Xt, yt = split
    U = utility_matrix(3, 0.4)
    gammas = gamma_quartiles(X, y)
    # path_tol=None: best_estimator_ is the scored path fit itself (with a looser path_tol
    # it is that fit solved on to tol, whose tuning score may differ from best_score_)
    search = TuningSetSearch(WeightedRobustMSVM(utility=U, truncation=None),
                             lambdas=lambda_grid(-3, 3), param_grid={"gamma": gammas},
                             scoring=make_utility_scorer(U), refit=False, path_tol=None)
    search.fit(X, y, X_tune=Xt, y_tune=yt)
    assert len(search.results_["score"]) == 3 * 7
    assert search.best_params_["gamma"] in gammas
    assert search.best_score_ == pytest.approx(max(search.results_["score"]))
    np.testing.assert_array_equal(search.predict(Xt), search.best_estimator_.predict(Xt))
    assert search.score(Xt, yt) == pytest.approx(search.best_score_)
    assert search.decision_function(Xt).shape == (len(Xt), 3)


def test_nests_in_cross_validation_without_a_tuning_set():
    X, y = make_utility_example(150, example=2, random_state=0)
    search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambda_grid(-4, 2),
                             random_state=0)
    scores = cross_val_score(search, X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores > 0.4) & (scores <= 1))
    fitted = clone(search).fit(X, y)
    assert fitted.classes_.tolist() == [0, 1, 2]
    assert fitted.n_features_in_ == 2


def test_input_errors(split):
    X, y, Xt, yt = split

    class NoC:
        def get_params(self, deep=True):
            return {}

    with pytest.raises(ValueError, match="no C parameter"):
        TuningSetSearch(NoC()).fit(X, y)
    with pytest.raises(ValueError, match="both X_tune and y_tune"):
        TuningSetSearch(ReinforcedMSVM()).fit(X, y, X_tune=Xt)
    with pytest.raises(ValueError, match="positive"):
        TuningSetSearch(ReinforcedMSVM(), lambdas=[1.0, -1.0]).fit(X, y, X_tune=Xt, y_tune=yt)
    with pytest.raises(ValueError, match="tuning_size"):
        TuningSetSearch(ReinforcedMSVM(), tuning_size=1.5).fit(X, y)
    with pytest.raises(ValueError, match="precomputed"):
        TuningSetSearch(ReinforcedMSVM(kernel="precomputed")).fit(X @ X.T, y)
