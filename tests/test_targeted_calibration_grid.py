"""TargetedLocalMSVM's probability fit with its calibration folds on a coarser grid
(``msvm.targeted.CALIBRATION_GRID_SHARE``, round 17): fewer grid solves, the probabilities
within the tolerance stated, argmax = predict, pickling."""

import contextlib
import pickle
import warnings
from unittest import mock

import numpy as np
import pytest

from msvm import TargetedLocalMSVM, targeted
from msvm.datasets import make_targeted_example

N_GRID = 10


def _settings(**values):
    """msvm.targeted's switches set to ``values`` within the block (none: the defaults)."""
    return mock.patch.multiple(targeted, **values) if values else contextlib.nullcontext()


@contextlib.contextmanager
def _counted(counts):
    """Count the grid solves and the grid sizes of the fits that make them."""
    solve = targeted.TargetedLocalMSVM._solve_grid_point

    def counted(self, *args, **kwargs):
        counts["solves"] += 1
        counts["grids"].add(len(self.grid_))
        return solve(self, *args, **kwargs)

    targeted.TargetedLocalMSVM._solve_grid_point = counted
    try:
        yield
    finally:
        targeted.TargetedLocalMSVM._solve_grid_point = solve


@pytest.fixture(scope="module")
def data():
    # n = 900: the calibration folds train on 600 samples (CALIBRATION_GRID_MIN_SAMPLES)
    X, y = make_targeted_example(900, "S1", random_state=0)
    X_test, _ = make_targeted_example(400, "S1", random_state=1)
    return X, y, X_test


def _fit(X, y, **switches):
    est = TargetedLocalMSVM(probability=True, probability_grid=3, n_grid=N_GRID,
                            random_state=0)
    counts = {"solves": 0, "grids": set()}
    with _settings(**switches), _counted(counts), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, counts


@pytest.fixture(scope="module")
def fits(data):
    X, y, _ = data
    # the late start at once (LATE_START_EPOCHS = 0, round 17's refits): the coarser folds'
    # effect alone
    return {"main": _fit(X, y, CALIBRATION_GRID_SHARE=None, LATE_START_EPOCHS=0),
            "coarse": _fit(X, y, CALIBRATION_GRID_SHARE=0.5, LATE_START_EPOCHS=0)}


def test_defaults():
    """Round 17 (benchmarks/results/probability.md, section 9j): the folds on half the grid
    kept."""
    assert targeted.CALIBRATION_GRID_SHARE == 0.5
    assert targeted.CALIBRATION_GRID_MIN_SAMPLES == 600


@pytest.mark.parametrize("share, fold, n, expected", [
    (0.5, True, 700, 10), (0.5, False, 700, 20), (None, True, 700, 20), (0.01, True, 700, 2),
    (2.0, True, 700, 20), (0.5, True, 599, 20), (0.5, True, 600, 10)])
def test_grid_points_of_a_fold(share, fold, n, expected):
    est = TargetedLocalMSVM(n_grid=20)
    if fold:
        est._fold_fit = True
    with _settings(CALIBRATION_GRID_SHARE=share, CALIBRATION_GRID_MIN_SAMPLES=600):
        assert est._n_grid_points(n) == expected


def test_a_single_grid_point_stays_single():
    est = TargetedLocalMSVM(n_grid=1)
    est._fold_fit = True
    assert est._n_grid_points(1000) == 1


def test_small_folds_keep_the_grid():
    """Folds below CALIBRATION_GRID_MIN_SAMPLES training samples: main's fit, bit for bit."""
    X, y = make_targeted_example(300, "S1", random_state=0)
    X_test, _ = make_targeted_example(100, "S1", random_state=1)
    main, _ = _fit(X, y, CALIBRATION_GRID_SHARE=None)
    now, counts = _fit(X, y)
    assert counts["grids"] == {N_GRID}
    np.testing.assert_array_equal(now.predict_proba(X_test), main.predict_proba(X_test))


def test_fewer_grid_solves_with_the_coarser_folds(fits):
    """The folds' fits solve on N_GRID / 2 points; the estimator and its chains on N_GRID."""
    main, coarse = fits["main"][1], fits["coarse"][1]
    assert coarse["solves"] < 0.8 * main["solves"]
    assert main["grids"] == {N_GRID}
    assert coarse["grids"] == {N_GRID // 2, N_GRID}
    est = fits["coarse"][0]
    assert len(est.grid_) == N_GRID
    assert {len(fit.grid_) for chain in est.probability_estimators_ for fit in chain} == {N_GRID}


def test_coarser_folds_move_the_probabilities_little(data, fits):
    """Only the calibration (C factor, exponent, floor) is read from the folds: the
    probabilities move by the shape's change, at most 0.1 here and 0.01 on average (S1,
    n = 1,000, section 9j: MAE against the truth within +-0.0015 over 4 draws)."""
    _, _, X_test = data
    main, coarse = fits["main"][0], fits["coarse"][0]
    diff = np.abs(main.predict_proba(X_test) - coarse.predict_proba(X_test))
    assert diff.max() < 0.1
    assert diff.mean() < 0.01
    np.testing.assert_array_equal(main.predict(X_test), coarse.predict(X_test))


def _assert_argmax_is_predict(est, X_test):
    proba = est.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.classes_[np.argmax(proba, axis=1)], est.predict(X_test))


def test_argmax_is_predict(data, fits):
    _assert_argmax_is_predict(fits["coarse"][0], data[2])


def test_pickled_probability_fit_predicts_the_same(data, fits):
    _, _, X_test = data
    est = fits["coarse"][0]
    back = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(back.predict_proba(X_test), est.predict_proba(X_test))
