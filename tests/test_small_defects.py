"""Small contract defects of issue 23: class counts beyond 64, TuningSetSearch's errors and
input handling, the ConvergenceWarning's figures and plain label values in messages."""

import types
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from msvm._core._solver import Status
from msvm._sequence import DualSequence
from msvm.model_selection import TuningSetSearch


def _many_classes(k, per=3, seed=0):
    """k well separated classes of ``per`` samples each, in 3 dimensions."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=20.0, size=(k, 3))
    X = np.repeat(centers, per, axis=0) + rng.normal(scale=0.05, size=(k * per, 3))
    return X, np.repeat(np.arange(k), per)


@pytest.mark.parametrize("est, kernel", [(ReinforcedMSVM, "rbf"), (WestonWatkinsMSVM, "rbf"),
                                         (AngleBasedMSVM, "rbf"), (ReinforcedMSVM, "linear")])
def test_seventy_classes_are_fitted(est, kernel):
    """fit documents any k >= 2: 70 classes (above the former limit of 64) fit and
    classify their separated training data (2 samples a class: half the CPU time of 3)."""
    X, y = _many_classes(70, per=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = est(kernel=kernel, C=100.0, gamma=0.01).fit(X, y)
    assert len(m.classes_) == 70
    if kernel == "rbf":
        assert m.score(X, y) == 1.0


def test_one_class_is_named_by_its_plain_value():
    X = np.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match=r"got 1 class \(0\)$"):
        ReinforcedMSVM().fit(X, np.zeros(3, dtype=np.int64))


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(40, 3, centers=3, random_state=0)


@pytest.mark.parametrize("size", [0.01, 0.99])
def test_tuning_size_errors_name_tuning_size(blobs, size):
    """Not scikit-learn's test_size, which TuningSetSearch does not have."""
    X, y = blobs
    with pytest.raises(ValueError, match="tuning_size") as info:
        TuningSetSearch(ReinforcedMSVM(), lambdas=[1e-2], tuning_size=size).fit(X, y)
    assert "test_size" not in str(info.value)
    assert "X_tune" in str(info.value)


def test_probability_scoring_without_probability_names_the_remedy(blobs):
    X, y = blobs
    with pytest.raises(ValueError, match="probability=True"):
        TuningSetSearch(ReinforcedMSVM(), lambdas=[1e-2], scoring="neg_log_loss").fit(X, y)
    search = TuningSetSearch(ReinforcedMSVM(probability=True), lambdas=[1e-2],
                             scoring="neg_log_loss").fit(X, y)
    assert np.isfinite(search.best_score_)


def test_numeric_string_X_is_accepted_by_search_as_by_estimators(blobs):
    X, y = blobs
    Xs = X.astype(str)
    direct = ReinforcedMSVM(C=1.0).fit(Xs, y)
    search = TuningSetSearch(ReinforcedMSVM(), lambdas=[1.0 / 20], random_state=0).fit(Xs, y)
    reference = TuningSetSearch(ReinforcedMSVM(), lambdas=[1.0 / 20], random_state=0).fit(X, y)
    assert search.best_score_ == reference.best_score_
    assert direct.score(Xs, y) == direct.score(X, y)
    with pytest.raises(ValueError):
        TuningSetSearch(ReinforcedMSVM(), lambdas=[1e-2]).fit(np.full_like(Xs, "a"), y)


@pytest.mark.parametrize("status", [Status.MAX_ITER, Status.GAP_FLOOR])
def test_convergence_warning_reports_a_finite_gap_when_the_certificate_is_inf(status):
    """An infinite solver certificate is replaced by the fit's duality gap at its intercepts."""
    seq = types.SimpleNamespace(owner="Model", max_iter=10)
    with pytest.warns(ConvergenceWarning) as record:
        DualSequence._warn_if_stopped_early(seq, status, 1e-14, float("inf"), 1e-3, 0.06)
    message = str(record[0].message)
    assert "inf" not in message and "duality gap 0.06" in message
    with pytest.warns(ConvergenceWarning) as record:
        DualSequence._warn_if_stopped_early(seq, status, 1e-14, 0.5, 1e-3, 0.06)
    assert "relative duality gap 0.5" in str(record[0].message)
