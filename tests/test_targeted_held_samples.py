"""TargetedLocalMSVM's grid points solved on their held samples only
(``msvm.targeted.SOLVE_ON_HELD_SAMPLES``, round 17): the same local optima as the solve over
all n samples (objectives within tol, the same predictions), nothing changed where every
weight is positive or the rows are not explicit features, warm starts across refits, the
fingerprint's targeted fit, pickling."""

import pickle
import warnings
from unittest import mock

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from msvm import TargetedLocalMSVM, targeted
from msvm.datasets import make_targeted_example


def _fit(on, estimator, X, y):
    """``estimator`` fitted with the switch ``on`` (DegenerateFitWarnings ignored)."""
    with mock.patch.multiple(targeted, SOLVE_ON_HELD_SAMPLES=on, HELD_MIN_SAMPLES=0), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def _held_solves(estimator, X, y):
    """The fitted estimator (switch on) and how many grid points took the held route."""
    solve = targeted.TargetedLocalMSVM._solve_on_held
    calls = []

    def counted(self, *args, **kwargs):
        calls.append(1)
        return solve(self, *args, **kwargs)

    with mock.patch.object(targeted.TargetedLocalMSVM, "_solve_on_held", counted):
        est = _fit(True, estimator, X, y)
    return est, len(calls)


@pytest.fixture(scope="module")
def s1():
    X, y = make_targeted_example(300, "S1", random_state=0)
    X_test, _ = make_targeted_example(400, "S1", random_state=1)
    return X, y, X_test


@pytest.mark.parametrize("C", ["auto", 1.0])
def test_same_optima_on_held_samples(s1, C):
    """Solved tightly, both routes reach the same local optimum at every grid point."""
    X, y, X_test = s1
    params = dict(C=C, n_grid=8, tol=1e-6, random_state=0)
    off = _fit(False, TargetedLocalMSVM(**params), X, y)
    on, held = _held_solves(TargetedLocalMSVM(**params), X, y)
    assert held == 8                # epanechnikov: every grid point holds m < n samples
    np.testing.assert_allclose(on.objectives_, off.objectives_, rtol=1e-5)
    np.testing.assert_allclose(on.coef_path_, off.coef_path_, atol=1e-3)
    np.testing.assert_array_equal(on.predict(X_test), off.predict(X_test))
    assert on.converged_ and np.all(on.n_iter_ >= 1)


def test_default_tol_within_tol(s1):
    """At the default tol the objectives agree within it and the predictions agree."""
    X, y, X_test = s1
    off = _fit(False, TargetedLocalMSVM(n_grid=8, random_state=0), X, y)
    on = _fit(True, TargetedLocalMSVM(n_grid=8, random_state=0), X, y)
    np.testing.assert_allclose(on.objectives_, off.objectives_, rtol=5e-3)
    assert np.mean(on.predict(X_test) == off.predict(X_test)) >= 0.99
    np.testing.assert_array_equal(on.support_, np.unique(on.support_))


def test_full_support_and_kernel_rows_unchanged(s1):
    """A smoother with full support (every weight positive) and a kernel fit (no explicit
    features) never take the route: the switch changes nothing, bit for bit."""
    X, y, X_test = s1
    for params in (dict(smoother="gaussian"), dict(kernel="rbf")):
        est = TargetedLocalMSVM(n_grid=5, random_state=0, **params)
        off = _fit(False, est, X, y)
        objectives, values = off.objectives_.copy(), off.decision_values(X_test)
        on, held = _held_solves(est, X, y)
        assert held == 0
        np.testing.assert_array_equal(on.objectives_, objectives)
        np.testing.assert_array_equal(on.decision_values(X_test), values)


def test_expanded_fit_attributes(s1):
    """The duals, support and moving-bound marks are of all n samples, zero off the held
    ones."""
    X, y, _ = s1
    est = _fit(True, TargetedLocalMSVM(n_grid=6, warm_start=True, random_state=0), X, y)
    state = est._warm_start_state()
    weights = est._grid_weights(X[:, 0], np.ones(len(y)))
    assert state.alphas.shape == (6, len(y) * 3)
    for g, fit in enumerate(state.solved.fits):
        off = np.repeat(weights[g] == 0, 3)
        assert not np.any(fit.alpha[off])
        assert fit.support.shape == fit.weighed.shape == (len(y),)
        assert not np.any(fit.support[weights[g] == 0])
        assert not np.any(fit.weighed[weights[g] == 0])
        assert np.any(fit.support)


def test_warm_started_refit(s1):
    """A warm-started refit at another C starts every grid point from its held duals: the
    same optimum as a cold fit, in fewer epochs."""
    X, y, X_test = s1
    est = _fit(True, TargetedLocalMSVM(C=1.0, n_grid=6, tol=1e-5, warm_start=True,
                                       random_state=0), X, y)
    est.set_params(C=1.2)
    warm = _fit(True, est, X, y)
    cold = _fit(True, TargetedLocalMSVM(C=1.2, n_grid=6, tol=1e-5, random_state=0), X, y)
    np.testing.assert_allclose(warm.objectives_, cold.objectives_, rtol=1e-4)
    np.testing.assert_array_equal(warm.predict(X_test), cold.predict(X_test))
    assert warm.n_iter_.sum() < cold.n_iter_.sum()


def test_fingerprint_targeted_fit():
    """The fingerprint's targeted case (benchmarks/objectives_fingerprint.py): the same fit
    within tol on either route."""
    X, y = make_blobs(n_samples=180, centers=3, n_features=4, cluster_std=2.0, random_state=0)
    Xg = np.column_stack([np.linspace(0, 1, 120), X[:120]])
    Xt = np.column_stack([np.linspace(0, 1, 60), X[120:]])
    off = _fit(False, TargetedLocalMSVM(n_grid=5, random_state=0), Xg, y[:120])
    on, held = _held_solves(TargetedLocalMSVM(n_grid=5, random_state=0), Xg, y[:120])
    assert held > 0
    np.testing.assert_allclose(on.objectives_, off.objectives_, rtol=5e-3)
    np.testing.assert_array_equal(on.predict(Xt), off.predict(Xt))


def test_pickled_and_probability(s1):
    """A probability fit on the route pickles and predicts as before pickling."""
    X, y, X_test = s1
    est = _fit(True, TargetedLocalMSVM(n_grid=6, probability=True, random_state=0), X, y)
    proba = est.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X_test), proba)
    np.testing.assert_array_equal(again.predict(X_test), est.predict(X_test))


def test_small_fits_keep_every_sample(s1):
    """Below ``HELD_MIN_SAMPLES`` training samples no grid point takes the route."""
    X, y, _ = s1
    est = TargetedLocalMSVM(n_grid=4, random_state=0)
    with mock.patch.object(targeted, "HELD_MIN_SAMPLES", len(y) + 1), \
            mock.patch.object(targeted, "SOLVE_ON_HELD_SAMPLES", True):
        calls = []
        solve = targeted.TargetedLocalMSVM._solve_on_held
        with mock.patch.object(targeted.TargetedLocalMSVM, "_solve_on_held",
                               lambda self, *a, **k: calls.append(1) or solve(self, *a, **k)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
    assert not calls
