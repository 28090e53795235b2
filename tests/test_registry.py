"""The estimator registry of the tests (tests/_estimators.py) covers every public estimator.

The contract tests parametrize over the registry, so a model exported in ``msvm.__all__`` is
tested from the day it is exported; these tests fail until it also has a small configuration.
"""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import msvm
from msvm.datasets import make_reinforced_example
import _estimators


def test_every_public_estimator_has_a_small_configuration():
    exported = {name for name in msvm.__all__
                if inspect.isclass(getattr(msvm, name))
                and issubclass(getattr(msvm, name), BaseEstimator)}
    assert set(_estimators.ESTIMATORS) == exported
    missing = exported - set(_estimators.SMALL)
    assert not missing, f"add a small configuration to tests/_estimators.py SMALL: {missing}"
    assert not set(_estimators.SMALL) - exported, "SMALL names an estimator msvm no longer has"


@pytest.mark.parametrize("name", _estimators.ESTIMATORS)
def test_small_configuration_fits_a_small_problem(name):
    """Each small configuration is valid and fits 90 samples of 3 classes."""
    X, y = make_reinforced_example(90, random_state=0)
    X = np.hstack([np.random.default_rng(0).uniform(0, 1, (len(X), 1)), X])
    est = _estimators.make(name, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert est.predict(X).shape == (len(X),)


def test_registry_helpers_build_one_estimator_per_model():
    built = _estimators.configured({"ReinforcedMSVM": dict(C=3.0)}, tol=1e-4)
    assert _estimators.ids(built) == _estimators.ESTIMATORS
    assert all(est.tol == 1e-4 for est in built)
    assert built[_estimators.ESTIMATORS.index("ReinforcedMSVM")].C == 3.0
    makers = _estimators.factories()
    assert [type(make(C=2.0)).__name__ for make in makers] == _estimators.ESTIMATORS
