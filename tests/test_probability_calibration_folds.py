"""The calibration folds of the probability estimate, capped in size on large data.

Up to ``CALIBRATION_TRAIN_MAX`` training samples a refitted fold is a fold of 3 stratified
folds (train on 2/3, hold out 1/3); above it the fold trains on a stratified part of that size
and holds out every other sample.  The fits on such folds are ordinary probability fits: the
argmax of the estimate is ``predict``, and ``n_jobs`` changes nothing.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

import msvm._probability as probability
from msvm import ReinforcedMSVM
from msvm.datasets import make_reinforced_example


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(150, random_state=5)
    X_test, _ = make_reinforced_example(60, random_state=6)
    return X, y, X_test


def test_small_data_keep_the_folds_of_three(data):
    """Below the cap the refitted folds are the first two of 3 stratified folds (seed 0)."""
    _, y, _ = data
    expected = list(StratifiedKFold(3, shuffle=True, random_state=0).split(y, y))[:2]
    for (train, test), (e_train, e_test) in zip(probability.calibration_splits(y), expected):
        np.testing.assert_array_equal(train, e_train)
        np.testing.assert_array_equal(test, e_test)


def test_capped_folds_train_on_a_stratified_part_and_hold_out_the_rest(monkeypatch):
    """Above the cap each fold trains on about cap samples, every class in proportion, and
    holds out exactly the other samples; the two folds' parts differ."""
    monkeypatch.setattr(probability, "CALIBRATION_TRAIN_MAX", 90)
    y = np.repeat([0, 1, 2], [300, 150, 150])
    splits = probability.calibration_splits(y)
    assert len(splits) == probability.REFITTED_FOLDS
    for train, held in splits:
        assert abs(len(train) - 90) <= 3
        np.testing.assert_array_equal(np.sort(np.concatenate([train, held])),
                                      np.arange(len(y)))
        assert np.all(np.diff(train) > 0) and np.all(np.diff(held) > 0)
        counts = np.bincount(y[train], minlength=3)
        np.testing.assert_allclose(counts / counts.sum(), [0.5, 0.25, 0.25], atol=0.02)
    assert not np.array_equal(splits[0][0], splits[1][0])


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator).fit(X, y)


def test_capped_calibration_keeps_argmax_and_n_jobs(data, monkeypatch):
    """With capped folds the estimate is a distribution whose argmax is predict, its fits
    are counted as before (the folds' fits are as many), and n_jobs=2 gives the sequential
    probabilities; the cap changes the calibration (the folds are other samples)."""
    X, y, X_test = data
    est = ReinforcedMSVM(C=3.0, gamma="median", probability=True, probability_grid=3)
    # every level fitted (no chain settles), in this process: the counts are comparable
    monkeypatch.setattr(probability, "SETTLED_CHAINS", False)
    uncapped = _fit(est, X, y)
    monkeypatch.setattr(probability, "CALIBRATION_TRAIN_MAX", 60)
    every = _fit(est, X, y)
    assert every.n_probability_fits_ - (every.probability_C_factor_ != 1.0) == \
        uncapped.n_probability_fits_ - (uncapped.probability_C_factor_ != 1.0)
    # SETTLED_CHAINS is read where a chain runs (in a joblib worker with n_jobs=2)
    monkeypatch.setattr(probability, "SETTLED_CHAINS", True)
    capped = _fit(est, X, y)
    P = capped.predict_proba(X_test)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(capped.classes_[P.argmax(axis=1)], capped.predict(X_test))
    parallel = _fit(est.set_params(n_jobs=2), X, y)
    np.testing.assert_array_equal(parallel.predict_proba(X_test), P)
    for name in ("probability_C_factor_", "probability_exponent_", "probability_floor_"):
        assert getattr(parallel, name) == getattr(capped, name), name
    monkeypatch.setattr(probability, "CALIBRATION_TRAIN_MAX", None)
    assert not np.array_equal(P, _fit(est.set_params(n_jobs=1), X, y).predict_proba(X_test))


def test_capped_folds_on_chunks_give_the_in_memory_schedule(monkeypatch, dask_synchronous):
    """On Dask input the capped folds are the same row subsets of the chunks: the chunked
    probability fit makes the in-memory schedule (fits, C factor) and probabilities within
    5e-3 of the in-memory ones (each fit is the same problem's solution within tol)."""
    da = pytest.importorskip("dask.array")
    from sklearn.datasets import make_classification

    X, y = make_classification(240, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=1)
    X, y = X[y < 2][:90], y[y < 2][:90]
    monkeypatch.setattr(probability, "CALIBRATION_TRAIN_MAX", 40)
    monkeypatch.setattr(probability, "REFIT_TOL_FACTOR", 10.0)
    monkeypatch.setattr(probability, "SETTLED_CHAINS", False)    # as the chunked chains
    params = dict(kernel="linear", C=1.0, tol=1e-5, probability=True, probability_grid=1)
    ref = _fit(ReinforcedMSVM(**params), X, y)
    est = _fit(ReinforcedMSVM(**params), da.from_array(X, chunks=(45, X.shape[1])), y)
    assert est.n_probability_fits_ == ref.n_probability_fits_
    assert est.probability_C_factor_ == ref.probability_C_factor_
    P = est.predict_proba(da.from_array(X, chunks=(45, X.shape[1]))).compute()
    np.testing.assert_allclose(P, ref.predict_proba(X), atol=5e-3)
