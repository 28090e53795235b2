"""The ``cache_dtype`` parameter: float32 kernel-row storage, float64 scores and sums."""

import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from msvm import (ReinforcedMSVM, TargetedLocalMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.datasets import make_reinforced_example
from _estimators import classes

ESTIMATORS = classes()          # every public estimator (tests/_estimators.py)


def _data():
    X, y = make_reinforced_example(80, random_state=5)
    U = np.random.default_rng(5).uniform(0, 1, (len(X), 1))
    return np.hstack([U, X]), y


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_auto_is_the_default(cls):
    assert cls().get_params()["cache_dtype"] == "auto"


@pytest.mark.parametrize("cls", [WestonWatkinsMSVM, ReinforcedMSVM, WeightedRobustMSVM])
@pytest.mark.parametrize("params, storage", [
    (dict(tol=1e-3), "float32"), (dict(tol=1e-4), "float32"), (dict(tol=1e-6), "float64"),
    (dict(C=1000.0), "float64"), (dict(kernel="poly", degree=2), "float64")],
    ids=["default-tol", "tol-1e-4", "tight-tol", "large-C", "poly"])
def test_auto_resolves_by_kernel_tol_and_bounds(cls, params, storage):
    # 'auto' is float32 storage for RBF rows at tol >= 1e-4 and C * weight <= 100, float64
    # otherwise: the same fit, bit for bit, as the storage it resolves to
    X, y = _data()
    X = X[:, 1:]
    params = dict(dict(kernel="rbf", gamma=0.5, random_state=0), **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = cls(**params).fit(X, y)
        fixed = cls(cache_dtype=storage, **params).fit(X, y)
        other = cls(cache_dtype="float64" if storage == "float32" else "float32",
                    **params).fit(X, y)
    np.testing.assert_array_equal(auto.decision_values(X), fixed.decision_values(X))
    assert not np.array_equal(auto.decision_values(X), other.decision_values(X))


def test_auto_keeps_float64_for_a_heavy_sample():
    X, y = _data()
    X = X[:, 1:]
    w = np.ones(len(y))
    w[0] = 500.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = WestonWatkinsMSVM(kernel="rbf", gamma=0.5).fit(X, y, sample_weight=w)
        wide = WestonWatkinsMSVM(kernel="rbf", gamma=0.5, cache_dtype="float64").fit(
            X, y, sample_weight=w)
    np.testing.assert_array_equal(auto.decision_values(X), wide.decision_values(X))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_float32_cache_gives_the_float64_decision_values(cls):
    X, y = _data()
    params = dict(kernel="rbf", gamma=0.5, tol=1e-8, random_state=0)
    if cls is TargetedLocalMSVM:
        params["n_grid"] = 3
    else:
        X = X[:, 1:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = cls(**params).fit(X, y)
        narrow = cls(cache_dtype="float32", **params).fit(X, y)
    G64, G32 = wide.decision_values(X), narrow.decision_values(X)
    assert np.max(np.abs(G32 - G64)) <= 1e-4 * np.max(np.abs(G64))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_invalid_cache_dtype_is_refused(cls):
    X, y = _data()
    with pytest.raises(InvalidParameterError, match="cache_dtype"):
        cls(cache_dtype="float16").fit(X, y)
    assert issubclass(InvalidParameterError, ValueError)
