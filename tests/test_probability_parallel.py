"""The fits of the probability estimate in parallel (n_jobs, joblib backends, Dask).

Every unit of work (a calibration fold's own fit, a top fit, one class's chain of weighted
fits) is computed from its inputs alone, so the probabilities must not depend on ``n_jobs``
nor on the joblib backend that runs the units.
"""

import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone

from msvm import ReinforcedMSVM, RobustMSVM
from msvm.datasets import make_reinforced_example


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(120, random_state=3)
    X_test, _ = make_reinforced_example(50, random_state=4)
    return X, y, X_test


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return clone(estimator).fit(X, y)


def assert_same_probability_fit(a, b, X_test):
    """Identical probabilities and identical calibration choices."""
    np.testing.assert_array_equal(a.predict_proba(X_test), b.predict_proba(X_test))
    for name in ("probability_C_factor_", "probability_exponent_", "probability_floor_",
                 "n_probability_fits_"):
        assert getattr(a, name) == getattr(b, name), name


@pytest.mark.parametrize("estimator", [ReinforcedMSVM(C=1.0, gamma="median"),
                                       RobustMSVM(C=10.0)], ids=lambda e: type(e).__name__)
def test_n_jobs_gives_the_sequential_probabilities(estimator, data):
    """n_jobs=2 (processes) gives exactly the probabilities of n_jobs=1."""
    X, y, X_test = data
    est = estimator.set_params(probability=True, probability_grid=3)
    sequential = _fit(est.set_params(n_jobs=1), X, y)
    parallel = _fit(est.set_params(n_jobs=2), X, y)
    assert_same_probability_fit(sequential, parallel, X_test)


def test_threading_backend_gives_the_sequential_probabilities(data):
    """A joblib context (here threads, n_jobs=None on the estimator) runs the same fits."""
    X, y, X_test = data
    est = ReinforcedMSVM(C=3.0, probability=True, probability_grid=2)
    sequential = _fit(est, X, y)
    with joblib.parallel_backend("threading", n_jobs=2):
        threaded = _fit(est, X, y)
    assert_same_probability_fit(sequential, threaded, X_test)


def test_invalid_n_jobs_is_refused(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="n_jobs"):
        ReinforcedMSVM(probability=True, n_jobs="two").fit(X, y)


@pytest.mark.slow
def test_dask_cluster_gives_the_sequential_probabilities(data):
    """The weighted fits on a 2-worker Dask cluster (joblib's 'dask' backend) give the
    probabilities of the sequential fit."""
    distributed = pytest.importorskip(
        "distributed", reason="the Dask test needs distributed: pip install 'dask[distributed]'")
    X, y, X_test = data
    est = ReinforcedMSVM(C=1.0, probability=True, probability_grid=3)
    sequential = _fit(est, X, y)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_backend("dask"):
        on_dask = _fit(est.set_params(n_jobs=-1), X, y)
    assert_same_probability_fit(sequential, on_dask, X_test)
