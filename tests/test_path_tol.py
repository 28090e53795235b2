"""TuningSetSearch's path_tol: the path fits solved loosely, the selected point to tol."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, lambda_grid


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(100, random_state=0)
    Xt, yt = make_reinforced_example(100, random_state=1)
    return X, y, Xt, yt


def _search(data, estimator, **kwargs):
    X, y, Xt, yt = data
    with warnings.catch_warnings():
        # a path fit that reaches path_tol converged: no ConvergenceWarning
        warnings.simplefilter("error", ConvergenceWarning)
        return TuningSetSearch(estimator, lambdas=lambda_grid(-10, 0), **kwargs).fit(
            X, y, X_tune=Xt, y_tune=yt)


def _model(**kwargs):
    return ReinforcedMSVM(kernel="rbf", gamma=0.5, reinforcement=0.5, random_state=0,
                          **kwargs)


def test_path_fits_record_the_tol_they_were_solved_to(data):
    """Every path fit is solved to path_tol and says so: cv_results_['tol'] and path_['tol']
    are path_tol, converged means reaching it, and the duality gap recorded in path_ and
    cv_results_ is each fit's own, below path_tol relative to its objective."""
    search = _search(data, _model(), path_tol=0.05, refit=False)
    res, path = search.cv_results_, search.path_
    assert np.all(res["tol"] == 0.05) and np.all(path["tol"] == 0.05)
    assert res["converged"].all() and set(res["stop_reason"]) == {"tol"}
    gap, objective = path["duality_gap"][:, 0], path["objective"][:, 0]
    np.testing.assert_array_equal(res["split0_duality_gap"], gap)
    np.testing.assert_array_equal(res["split0_objective"], objective)
    assert np.all(np.isfinite(gap)) and np.all(gap <= 0.05 * np.abs(objective))


def test_refit_false_solves_the_selected_point_on_to_tol(data):
    """refit=False: best_estimator_ is the selected point at the estimator's tol (converged,
    warm-started from the loose path fit), and its objective is a cold fit's at tol."""
    X, y, _, _ = data
    loose = _search(data, _model(tol=1e-6), path_tol=0.05, refit=False)
    best = loose.best_estimator_
    assert best.tol == 1e-6 and best.converged_ and best.warm_start is False
    assert best.duality_gap_ <= 1e-6 * best.objective_
    cold = _model(tol=1e-6, C=best.C).fit(X, y)
    assert best.objective_ == pytest.approx(cold.objective_, rel=1e-5)
    np.testing.assert_array_equal(best.predict(X), cold.predict(X))
    # the path fit of the selected point was looser than the final one
    assert loose.path_["duality_gap"][loose.best_index_, 0] > best.duality_gap_


def test_path_tol_none_or_below_tol_fits_the_path_to_tol(data):
    """path_tol=None, or a path_tol below the estimator's tol, solves every path fit to the
    estimator's tol: the same search as path_tol=None, and the kept fit is not refitted."""
    exact = _search(data, _model(), path_tol=None, refit=False)
    below = _search(data, _model(), path_tol=1e-6, refit=False)
    assert np.all(exact.cv_results_["tol"] == 1e-3) and np.all(below.cv_results_["tol"] == 1e-3)
    np.testing.assert_array_equal(exact.cv_results_["split0_objective"],
                                  below.cv_results_["split0_objective"])
    assert exact.best_estimator_.n_iter_ == below.best_estimator_.n_iter_


def test_refit_true_is_the_refit_at_tol(data):
    """refit=True: the refit at the selected point uses the estimator's own tol, whatever
    path_tol the path used."""
    X, y, Xt, yt = data
    search = _search(data, _model(), path_tol=0.05)
    best = search.best_estimator_
    assert best.tol == 1e-3 and best.converged_
    cold = _model(C=best.C).fit(np.vstack([X, Xt]), np.concatenate([y, yt]))
    assert best.objective_ == cold.objective_


def test_path_fit_short_of_path_tol_is_unconverged(data):
    """A path fit that stops before path_tol (max_iter) is recorded as unconverged, with a
    ConvergenceWarning naming the tol it was asked for."""
    X, y, Xt, yt = data
    with pytest.warns(ConvergenceWarning, match="tol=0.01"):
        search = TuningSetSearch(WestonWatkinsMSVM(kernel="rbf", max_iter=1, random_state=0),
                                 lambdas=lambda_grid(-10, -8), path_tol=0.01,
                                 refit=False).fit(X, y, X_tune=Xt, y_tune=yt)
    assert not search.cv_results_["converged"].all()
    assert set(search.cv_results_["stop_reason"]) <= {"tol", "max_iter"}


@pytest.mark.parametrize("path_tol", [0.0, -1e-2, "loose"])
def test_path_tol_must_be_positive(data, path_tol):
    """A path_tol that is not a positive number is refused before any fit."""
    X, y, Xt, yt = data
    with pytest.raises(ValueError, match="path_tol"):
        TuningSetSearch(_model(), lambdas=[1.0], path_tol=path_tol).fit(
            X, y, X_tune=Xt, y_tune=yt)


def test_estimator_from_outside_msvm_keeps_its_tol(data):
    """path_tol applies to msvm estimators only (its meaning is their tol's): scikit-learn's
    SVC is fitted along the path at its own tol, and the selected fit kept as it is."""
    from sklearn.svm import SVC
    X, y, Xt, yt = data
    search = TuningSetSearch(SVC(kernel="linear", tol=1e-4), lambdas=lambda_grid(-6, -2),
                             path_tol=0.1, refit=False).fit(X, y, X_tune=Xt, y_tune=yt)
    assert np.all(search.cv_results_["tol"] == 1e-4)
    assert search.best_estimator_.tol == 1e-4


def test_cv_folds_record_every_fit_and_refit_at_tol(data):
    """With cv, every fold's path fits are recorded at path_tol (objective and duality gap
    per split) and best_estimator_ is the refit on all of X at the estimator's tol."""
    X, y, _, _ = data
    search = TuningSetSearch(_model(), lambdas=lambda_grid(-6, -2), cv=2,
                             path_tol=0.05).fit(X, y)
    res = search.cv_results_
    assert np.all(res["tol"] == 0.05) and search.path_["duality_gap"].shape == (5, 2)
    for i in range(2):
        assert np.all(res[f"split{i}_duality_gap"] <= 0.05 * res[f"split{i}_objective"])
    assert search.best_estimator_.tol == 1e-3 and search.best_estimator_.converged_
