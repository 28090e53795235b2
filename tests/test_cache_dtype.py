"""The ``cache_dtype`` parameter: float32 kernel-row storage, float64 scores and sums."""

import warnings

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  TargetedLocalMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.datasets import make_reinforced_example

ESTIMATORS = [ReinforcedMSVM, WestonWatkinsMSVM, AngleBasedMSVM, RobustMSVM,
              WeightedRobustMSVM, AdaptiveWeightedSVM, TargetedLocalMSVM]


def _data():
    X, y = make_reinforced_example(80, random_state=5)
    U = np.random.default_rng(5).uniform(0, 1, (len(X), 1))
    return np.hstack([U, X]), y


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_float64_is_the_default(cls):
    assert cls().get_params()["cache_dtype"] == "float64"


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
