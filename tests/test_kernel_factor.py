"""The start of a large-C kernel fit from the smoothed primal on a factor of its kernel
(msvm/_kernel_factor.py, the plan's rule ``SolvePlan.starts_from_factor``).

- the factor (msvm._finish_groups._Factor grown over all samples) of a low-rank kernel has
  its rank and reproduces the kernel; where the rank cap is reached it gives up (None);
- per-class hinges, Weston-Watkins and angle-based fits on a precomputed linear Gram matrix
  and on a low-degree polynomial kernel at C = 1e6 and 1e8 take the route, converge with no
  ConvergenceWarning and reach the objective of the same problem on explicit features
  (kernel='linear') or of the fit without the route;
- sample weights, class weights and the DC steps' shifted duals (RobustMSVM on a Gram
  matrix) keep working on the route;
- where the factor gives up, and below the rule's scale, the fit is main's, bit for bit;
- the plan override ``factor_start`` is checked like the others.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

import msvm._kernel_factor as kernel_factor_module
import msvm._plan as plan_module
from msvm import (AngleBasedMSVM, ReinforcedMSVM, RobustMSVM, WeightedRobustMSVM,
                  WestonWatkinsMSVM)
from msvm._core._rows import GramRows
from msvm._kernel_factor import factor_rank_cap, kernel_factor
from msvm._plan import plan_solve


def _blobs(n=150, seed=0):
    X, y = make_blobs(n_samples=n, centers=3, n_features=3, cluster_std=2.0,
                      random_state=seed)
    return X, y


def _fit(est, X, y, route=True, **fit_params):
    """Fit with the route on or off (``KERNEL_FACTOR_START``); the ConvergenceWarnings."""
    old = plan_module.KERNEL_FACTOR_START
    plan_module.KERNEL_FACTOR_START = route
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y, **fit_params)
    finally:
        plan_module.KERNEL_FACTOR_START = old
    return [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def _started(est):
    return bool(est.solver_plan_.steps) and est.solver_plan_.steps[0].primal_start


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-12)


def test_factor_of_low_rank_gram_has_its_rank():
    X, _ = _blobs(120)
    K = X @ X.T
    L = kernel_factor(GramRows(np.ascontiguousarray(K), 3), 3)
    assert L is not None and L.shape == (120, 3)
    assert np.abs(L @ L.T - K).max() <= 1e-9 * np.abs(K).max()
    # poly of degree 2 in 3 dimensions: rank 10
    P = (1.0 + X @ X.T / 3.0) ** 2
    L = kernel_factor(GramRows(np.ascontiguousarray(P), 3), 3)
    assert L is not None and L.shape[1] == 10
    assert np.abs(L @ L.T - P).max() <= 1e-8 * np.abs(P).max()


def test_factor_gives_up_at_its_rank_cap(monkeypatch):
    X, _ = _blobs(120)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-5.0 * D)                       # a narrow RBF kernel: nearly full rank
    monkeypatch.setattr(kernel_factor_module, "FACTOR_MAX_RANK", 20)
    assert factor_rank_cap(120, 3) == 20
    assert factor_rank_cap(10 ** 7, 3) == kernel_factor_module.FACTOR_MAX_BYTES // (8 * 10 ** 7)
    assert kernel_factor(GramRows(np.ascontiguousarray(K), 3), 3) is None


@pytest.mark.parametrize("make", [
    lambda C, kernel: ReinforcedMSVM(C=C, kernel=kernel, degree=2),
    lambda C, kernel: ReinforcedMSVM(C=C, kernel=kernel, degree=2, reinforcement=0.0),
    lambda C, kernel: WestonWatkinsMSVM(C=C, kernel=kernel, degree=2),
    lambda C, kernel: AngleBasedMSVM(C=C, kernel=kernel, degree=2),
], ids=["reinforced", "llw", "weston-watkins", "angle"])
@pytest.mark.parametrize("C", [1e6, 1e8])
def test_precomputed_gram_at_large_C_converges_from_the_factor(make, C):
    X, y = _blobs()
    est = make(C, "precomputed")
    caught = _fit(est, X @ X.T, y)
    assert not caught, caught[0].message
    assert est.converged_ and _started(est)
    # the same problem on explicit features (the smoothed-primal route of kernel='linear')
    lin = make(C, "linear")
    assert not _fit(lin, X, y)
    assert _rel(est.objective_, lin.objective_) <= 1e-4


@pytest.mark.parametrize("make", [
    lambda C: ReinforcedMSVM(C=C, kernel="poly", degree=2),
    lambda C: WestonWatkinsMSVM(C=C, kernel="poly", degree=2),
    lambda C: AngleBasedMSVM(C=C, kernel="poly", degree=2),
], ids=["reinforced", "weston-watkins", "angle"])
def test_poly_kernel_at_large_C_converges_from_the_factor(make):
    X, y = _blobs()
    est = make(1e6)
    caught = _fit(est, X, y)
    assert not caught, caught[0].message
    assert est.converged_ and _started(est)
    # the same poly kernel as a Gram matrix, fitted without the route, where it converges
    gram = make(1e6).set_params(kernel="precomputed")
    K = (est.gamma_ * (X @ X.T) + est.coef0) ** 2
    without = _fit(gram, K, y, route=False)
    if not without:
        assert _rel(est.objective_, gram.objective_) <= 1e-4


@pytest.mark.parametrize("make", [ReinforcedMSVM,
                                  pytest.param(AngleBasedMSVM, marks=pytest.mark.slow)])
@pytest.mark.parametrize("C", [1e4, 1e8])
def test_route_reaches_the_reference_optimum(make, C):
    """n = 300 (the convergence matrix's cells): objective_ within tol of the reference
    optimum (cvxpy + Clarabel on the primal), converged at once from the factor's start."""
    pytest.importorskip("cvxpy")
    from oracle import (cvx_angle_loss, penalty, primal_fit, reference_fit, reinforced_loss,
                        vertices)

    X, y = _blobs(300)
    K = X @ X.T
    est = make(C=C, kernel="precomputed")
    assert not _fit(est, K, y)
    assert est.converged_ and _started(est)
    w = np.ones(len(y))
    if make is ReinforcedMSVM:
        optimum = reference_fit(K, y, w, C, 0.5, k=3)[0]
    else:
        V, b, F = primal_fit(K, 2, cvx_angle_loss(y, w, C, 0.5, 3), sum_to_zero=False)
        optimum = penalty(V, K) + C * reinforced_loss(F @ vertices(3), y, w, 0.5)
    assert optimum - 1e-6 * optimum <= est.objective_ <= optimum + 1e-3 * optimum


def test_weights_on_the_route():
    X, y = _blobs()
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    cw = {0: 1.0, 1: 2.5, 2: 0.5}
    est = ReinforcedMSVM(C=1e6, kernel="precomputed", class_weight=cw)
    assert not _fit(est, X @ X.T, y, sample_weight=w)
    assert est.converged_ and _started(est)
    lin = ReinforcedMSVM(C=1e6, kernel="linear", class_weight=cw)
    assert not _fit(lin, X, y, sample_weight=w)
    assert _rel(est.objective_, lin.objective_) <= 1e-4


@pytest.mark.parametrize("model", [RobustMSVM, WeightedRobustMSVM])
def test_dc_steps_on_the_route(model):
    X, y = _blobs()
    est = model(C=1e4, kernel="precomputed")
    assert not _fit(est, X @ X.T, y)
    assert est.converged_
    assert any(step.primal_start for step in est.solver_plan_.steps)


def test_given_up_factor_leaves_the_fit_as_main(monkeypatch):
    X, y = _blobs(200, seed=1)
    monkeypatch.setattr(kernel_factor_module, "FACTOR_MAX_RANK", 5)
    fits = []
    for route in (True, False):
        est = ReinforcedMSVM(C=1e4, kernel="rbf", gamma=2.0, max_iter=300)
        _fit(est, X, y, route=route)
        fits.append(est)
    assert not _started(fits[0])
    assert np.array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
    assert np.array_equal(fits[0].intercept_, fits[1].intercept_)
    assert fits[0].n_iter_ == fits[1].n_iter_


def test_small_C_does_not_try_the_factor():
    X, y = _blobs()
    fits = []
    for route in (True, False):
        est = ReinforcedMSVM(C=1.0, kernel="poly", degree=2)
        _fit(est, X, y, route=route)
        fits.append(est)
    assert not _started(fits[0])
    assert np.array_equal(fits[0].dual_coef_, fits[1].dual_coef_)


def test_factor_start_override():
    plan = plan_solve("precomputed", 10)
    assert plan.factor_start == "auto"
    assert plan_solve("linear", 10).factor_start == "off"
    assert plan_solve("rbf", 10, overrides={"factor_start": "off"}).factor_start == "off"
    with pytest.raises(ValueError, match="factor_start"):
        plan_solve("linear", 10, overrides={"factor_start": "on"})
    with pytest.raises(ValueError, match="factor_start"):
        plan_solve("rbf", 10, overrides={"factor_start": "sometimes"})
