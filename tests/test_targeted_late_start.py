"""TargetedLocalMSVM's probability refits weighing the late smoothed-primal start
(``msvm.targeted.LATE_START_EPOCHS``, round 18; ``DualSequence.late_start_epochs``): the
rent-or-buy rule, its memory along a chain, fewer late starts, the probabilities close to
the start taken at once, argmax = predict, and nothing changed with the switch off."""

import types
import warnings
from unittest import mock

import numpy as np
import pytest

from msvm import TargetedLocalMSVM, _sequence, targeted
from msvm.datasets import make_targeted_example


def _sequence_at(cost, applies=True):
    """A stand-in for a DualSequence whose late start costs ``cost`` epochs and applies
    (the plan's rule) where ``applies``."""
    plan = types.SimpleNamespace(restarts_from_primal=lambda problem, X, diag: applies)
    src = types.SimpleNamespace(diagonal=lambda: np.ones(3))
    return types.SimpleNamespace(late_start_epochs=cost, plan=plan, features=np.ones((3, 2)),
                                 src=src)


def _wait(sequence, n_iter, done, residual, before, tol=1e-3):
    result = types.SimpleNamespace(n_iter=n_iter, residual=residual)
    return _sequence.DualSequence._late_start_wait(sequence, None, result, done, before, tol,
                                                   False)


def test_no_cost_never_waits():
    """late_start_epochs = 0 (every sequence's default): the start at the first stop."""
    assert _wait(_sequence_at(0), 10, 10, 1.0, np.nan) == 0
    assert _wait(_sequence_at(0), 10, 20, 0.0011, 1.0) == 0


def test_first_stop_measures_the_decay():
    assert _wait(_sequence_at(60), 10, 10, 1.0, np.nan) == _sequence.FINISH_MIN
    assert _wait(_sequence_at(15), 10, 10, 1.0, np.nan) == 5


def test_waits_only_where_convergence_is_predicted_in_time():
    sequence = _sequence_at(60)
    # 1e-1 -> 1e-2 in 10 epochs: 10 more reach tol = 1e-3, within the 40 left of the cost
    assert _wait(sequence, 10, 20, 1e-2, 1e-1) == 10
    # 1.0 -> 0.9 in 10 epochs: about 650 more, beyond the cost: the start now
    assert _wait(sequence, 10, 20, 0.9, 1.0) == 0
    # no decay: the start now
    assert _wait(sequence, 10, 20, 1.0, 1.0) == 0
    # the cost spent: the start now
    assert _wait(sequence, 10, 60, 1e-2, 1e-1) == 0
    # where the start would not apply, never waited for
    assert _wait(_sequence_at(60, applies=False), 10, 10, 1.0, np.nan) == 0
    # nor where the plan fixed it (a start from the primal, a 'dual first' refit)
    result = types.SimpleNamespace(n_iter=10, residual=1.0)
    assert _sequence.DualSequence._late_start_wait(sequence, None, result, 10, np.nan, 1e-3,
                                                   True) == 0


def test_a_grid_point_that_took_the_start_does_not_wait_again():
    took = targeted._GridFit(0.0, np.zeros(2), 1.0, 0.0, 3, "tol", np.zeros((2, 2)), None,
                             late_start=True)
    did_not = targeted._GridFit(1.0, np.zeros(2), 1.0, 0.0, 3, "tol", np.zeros((2, 2)), None)
    solved = targeted._SolvedGrid(((), 0, np.zeros(1)), [took, did_not], np.ones((2, 1)))
    assert not targeted._waits_for_late_start(solved, 0)
    assert targeted._waits_for_late_start(solved, 1)
    assert targeted._waits_for_late_start(None, 0)
    with mock.patch.object(targeted, "LATE_START_EPOCHS", 0):
        assert not targeted._waits_for_late_start(solved, 1)
        assert not targeted._waits_for_late_start(None, 0)


@pytest.fixture(scope="module")
def s1():
    # n = 600: the grid points on their held samples (HELD_MIN_SAMPLES = 500)
    X, y = make_targeted_example(600, "S1", random_state=0)
    X_test, _ = make_targeted_example(400, "S1", random_state=1)
    return X, y, X_test


def _probability_fit(X, y, epochs):
    """A probability fit at ``LATE_START_EPOCHS = epochs`` and its late starts taken (the
    solves that went on from the smoothed primal at a budget stop)."""
    late = _sequence.DualSequence._late_primal_start
    taken = []

    def counted(self, *args, **kwargs):
        out = late(self, *args, **kwargs)
        taken.append(out is not None)
        return out

    est = TargetedLocalMSVM(C=1.0, n_grid=10, probability=True, probability_grid=4,
                            random_state=0)
    with mock.patch.object(targeted, "LATE_START_EPOCHS", epochs), \
            mock.patch.object(_sequence.DualSequence, "_late_primal_start", counted), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, sum(taken)


@pytest.fixture(scope="module")
def fits(s1):
    X, y, _ = s1
    return {"off": _probability_fit(X, y, 0), "on": _probability_fit(X, y, 60)}


@pytest.mark.slow
def test_fewer_late_starts(fits):
    assert fits["on"][1] < 0.8 * fits["off"][1]


@pytest.mark.slow
def test_probabilities_close_and_argmax_is_predict(s1, fits):
    """The refits move within their tolerance: the probabilities by little, argmax =
    predict exactly (the estimator's own fit is the same)."""
    _, _, X_test = s1
    off, on = fits["off"][0], fits["on"][0]
    np.testing.assert_array_equal(on.predict(X_test), off.predict(X_test))
    proba = on.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(on.classes_[np.argmax(proba, axis=1)], on.predict(X_test))
    assert np.mean(np.abs(proba - off.predict_proba(X_test))) < 0.02


def test_one_fit_unchanged(s1):
    """Only a probability refit weighs the start: one fit is the same with the switch off."""
    X, y, X_test = s1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on = TargetedLocalMSVM(n_grid=10, random_state=0).fit(X, y)
        with mock.patch.object(targeted, "LATE_START_EPOCHS", 0):
            off = TargetedLocalMSVM(n_grid=10, random_state=0).fit(X, y)
    np.testing.assert_array_equal(on.coef_path_, off.coef_path_)
    np.testing.assert_array_equal(on.n_iter_, off.n_iter_)
