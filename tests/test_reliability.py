"""Every fit terminates on pathological inputs: inputs that overflow double precision and
indefinite kernels are refused with a named cause and remedy, max_iter bounds the whole solve,
and objective_ is never negative.

Each fit runs under a timeout in CPU time (SIGPROF; the solver checks for signals while it
works), so a hang fails the test instead of hanging the suite, and a loaded machine, where the
process waits for a core, does not.
"""

import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm import (ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM, WeightedRobustMSVM,
                  WestonWatkinsMSVM)
from msvm.exceptions import DegenerateFitWarning
from _estimators import classes
from _signals import alarm_after

ESTIMATORS = classes()          # every public estimator (tests/_estimators.py)
TIMEOUT = 20.0                  # seconds of CPU time


class Hang(Exception):
    """The fit did not return within TIMEOUT seconds of CPU time."""


def timeout(seconds=TIMEOUT):
    return alarm_after(seconds, Hang(f"no return within {seconds} s of CPU time"), clock="cpu")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.arange(60) % 3
    return X, y


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda c: c.__name__)
def test_overflowing_X_is_refused_not_hung(Est, kernel, data):
    """X * 1e300 hung forever with the default RBF kernel (gamma_ = 0, NaN kernel rows) and
    gave objective_ = nan with the linear kernel."""
    X, y = data
    with timeout(), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="[Rr]escale X"):
            Est(kernel=kernel, max_iter=1).fit(X * 1e300, y)


@pytest.mark.parametrize("Est", [c for c in ESTIMATORS if c is not TargetedLocalMSVM],
                         ids=lambda c: c.__name__)
def test_predict_on_overflowing_X_is_refused(Est, data):
    """A cubic kernel overflows on X * 1e200: infinite kernel values, NaN decisions.  (An RBF
    kernel is exactly 0 that far away, so its decision values are finite and correct.)"""
    X, y = data
    est = Est(kernel="poly", degree=3, coef0=1.0, gamma=0.5).fit(X, y)
    with warnings.catch_warnings(), pytest.raises(ValueError, match="not finite.*[Rr]escale X"):
        warnings.simplefilter("ignore", RuntimeWarning)
        est.predict(X * 1e200)


def test_explicit_gamma_does_not_bypass_the_overflow_check(data):
    X, y = data
    with timeout(), pytest.raises(ValueError, match="overflows double precision"):
        ReinforcedMSVM(gamma=1.0).fit(X * 1e200, y)


@pytest.mark.parametrize("C", [1e290, 1e300, 1e307])
@pytest.mark.parametrize("Est", [ReinforcedMSVM, WestonWatkinsMSVM], ids=lambda c: c.__name__)
def test_overflowing_C_is_refused(Est, C):
    """Duplicated samples with different labels: zero-curvature steps reach boxes of ~1e300,
    so the scores or the objective overflow; the fit returned objective_ = inf before."""
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((10, 3))
    X = np.vstack([Z, Z])
    y = np.concatenate([np.arange(10) % 3, (np.arange(10) + 1) % 3])
    with timeout(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(ValueError, match="(non-finite values|objective|penalty).*smaller C"):
            Est(kernel="linear", C=C).fit(X, y)


@pytest.mark.parametrize("Est", ESTIMATORS, ids=lambda c: c.__name__)
def test_max_iter_one_returns_at_once(Est):
    """max_iter bounds the whole solve (augmented-Lagrangian and working-set rounds too)."""
    X, y = make_classification(n_samples=3000, n_features=10, n_informative=6, n_classes=4,
                               random_state=0)
    start = time.process_time()
    with timeout(), pytest.warns(ConvergenceWarning), warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        est = Est(C=100.0, max_iter=1, tol=1e-12).fit(X, y)
    elapsed = time.process_time() - start
    # a full fit takes seconds to minutes of CPU here; "at once" leaves room for a slow core
    # (CPU time, every thread: a loaded machine does not inflate it)
    assert elapsed < 10.0
    assert np.all(np.isfinite(est.decision_values(X) if hasattr(est, "decision_values")
                              else est.decision_function(X)))


POLY_NEGATIVE = dict(kernel="poly", degree=2, coef0=-2.0, gamma=1.0)


@pytest.mark.parametrize("Est", [RobustMSVM, WeightedRobustMSVM, ReinforcedMSVM,
                                 WestonWatkinsMSVM],
                         ids=lambda c: c.__name__)
def test_poly_with_negative_coef0_is_refused_like_a_precomputed_gram(Est, data):
    """RobustMSVM and WeightedRobustMSVM reported negative objectives on such kernels."""
    X, y = data
    with pytest.raises(ValueError, match="not positive semidefinite.*smallest eigenvalue"):
        Est(**POLY_NEGATIVE).fit(X, y)
    K = (X @ X.T - 2.0) ** 2
    with pytest.raises(ValueError, match="not positive semidefinite.*smallest eigenvalue"):
        Est(kernel="precomputed").fit(K, y)


def test_indefinite_kernel_is_found_above_the_full_test_size(monkeypatch):
    """Above 2000 samples the test runs on a 2000-sample principal submatrix (it was skipped),
    so its cost is bounded: the factorization and the eigenvalue search see 2000 x 2000
    matrices, never the 6000 x 6000 Gram matrix.  (What that costs is machine-dependent and
    not asserted: 0.1-0.3 s of CPU time.)"""
    from msvm import _kernels

    shapes = []

    def recording(function):
        def wrapper(K, *args, **kwargs):
            shapes.append((function.__name__, np.shape(K)))
            return function(K, *args, **kwargs)
        return wrapper

    monkeypatch.setattr(_kernels, "cholesky", recording(_kernels.cholesky))
    monkeypatch.setattr(_kernels, "smallest_eigenvalue", recording(_kernels.smallest_eigenvalue))
    rng = np.random.default_rng(2)
    X = rng.standard_normal((6000, 2))
    y = np.arange(6000) % 2
    with pytest.raises(ValueError, match="tested on 2000 of the 6000"):
        ReinforcedMSVM(**POLY_NEGATIVE).fit(X, y)
    assert shapes == [("cholesky", (2000, 2000)), ("smallest_eigenvalue", (2000, 2000))]


def test_psd_test_does_not_overflow_on_huge_entries():
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((20, 3))
    K = 1e300 * (Z @ Z.T) / 3
    from msvm._kernels import check_gram

    assert check_gram(K).shape == (20, 20)


def test_positive_coef0_poly_kernel_still_fits(data):
    X, y = data
    est = RobustMSVM(kernel="poly", degree=2, coef0=1.0, gamma=0.5).fit(X, y)
    assert est.objective_ >= 0


@pytest.mark.parametrize("Est", [RobustMSVM, WeightedRobustMSVM], ids=lambda c: c.__name__)
@pytest.mark.parametrize("C", [1e-3, 1.0, 1e3])
def test_objective_is_never_negative(Est, C, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Est(C=C, kernel="poly", degree=3, coef0=0.0, gamma=0.3).fit(X, y)
    assert est.objective_ >= 0
    assert np.all(np.asarray(est.dc_objectives_) >= 0)
