"""TargetedLocalMSVM's warm-started probability refits on the linear kernel's rows
(``msvm.targeted.LEVELS_ON_LINEAR_ROWS``, round 16): the refits' plan, their probabilities
against main's path (explicit features with a smoothed-primal start at every grid point),
argmax = predict, pickling and Ctrl-C."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from msvm import TargetedLocalMSVM, targeted
from msvm.datasets import make_targeted_example

from _signals import Alarm, alarm_after

# n = 600: the refits on the full data are on explicit features on main (500 samples and
# more, ``msvm._plan.refit_rows``), the calibration folds' (400 samples) are not
N = 600


@pytest.fixture(scope="module")
def data():
    X, y = make_targeted_example(N, "S1", random_state=0)
    X_test, _ = make_targeted_example(400, "S1", random_state=1)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    return X, y, X_test, weights


def _fit(X, y, weights, on):
    est = TargetedLocalMSVM(probability=True, probability_grid=3, n_grid=10,
                            random_state=0)
    previous = targeted.LEVELS_ON_LINEAR_ROWS
    targeted.LEVELS_ON_LINEAR_ROWS = on
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return est.fit(X, y, sample_weight=weights)
    finally:
        targeted.LEVELS_ON_LINEAR_ROWS = previous


@pytest.fixture(scope="module")
def fits(data):
    X, y, _, weights = data
    return {on: _fit(X, y, weights, on) for on in (False, True)}


def _refits(est):
    """The distinct weighted refits of the full data (the top fit included)."""
    return list({id(fit): fit for chain in est.probability_estimators_
                 for fit in chain}.values())


def test_refits_run_on_linear_rows(fits):
    """The chains' refits on the full data solve on the linear kernel's rows (main: explicit
    features), with no smoothed-primal start; the own fit keeps its plan."""
    after, before = fits[True], fits[False]
    assert {fit.solver_plan_.rows for fit in _refits(after)} == {"linear rows"}
    assert "explicit features" in {fit.solver_plan_.rows for fit in _refits(before)}
    assert not any(step.primal_start for fit in _refits(after)
                   for step in fit.solver_plan_.steps)
    assert after.solver_plan_.rows == before.solver_plan_.rows


def test_probabilities_close_to_main_path(data, fits):
    """With sample weights: the same levels and calibration choices; the probabilities move
    only within the refits' tolerance (300 tol): at most 0.15 anywhere, 0.01 on average."""
    _, _, X_test, _ = data
    after, before = fits[True], fits[False]
    assert after.probability_C_factor_ == before.probability_C_factor_
    diff = np.abs(after.predict_proba(X_test) - before.predict_proba(X_test))
    assert diff.max() < 0.15
    assert diff.mean() < 0.01
    np.testing.assert_array_equal(after.predict(X_test), before.predict(X_test))


def test_argmax_is_predict(data, fits):
    _, _, X_test, _ = data
    est = fits[True]
    proba = est.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[np.argmax(proba, axis=1)], est.predict(X_test))


def test_pickled_probability_fit_predicts_the_same(data, fits):
    _, _, X_test, _ = data
    est = fits[True]
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_proba(X_test), est.predict_proba(X_test))


def test_ctrl_c_stops_a_probability_fit():
    """An interrupt in the middle of the weighted refits stops the fit promptly and leaves
    the estimator unfitted."""
    X, y = make_targeted_example(3000, "S2", random_state=0)
    est = TargetedLocalMSVM(C=10.0, probability=True)
    latency = None
    with pytest.raises(Alarm), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with alarm_after(1.0, clock="cpu") as arrival:
            try:
                est.fit(X, y)
            except Alarm:
                latency = arrival.latency()
                raise
    assert latency < 1.0
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
