"""objective_ is as accurate as tol says: within tol (relative) of the optimum at the default tol.

The solver stops when the KKT residual is within tol and a duality-gap certificate (primal
objective of the current function with its intercepts, against the dual's Lagrangian) is
within tol relative to the objective.  Checked here with hypothesis over random problems:
every convex model (the truncated models through their untruncated, convex form, which runs
the same dual layouts as their DC steps), k, kernels, weights and C in [1e-4, 1e4], against
the independent reference primal solved by cvxpy + Clarabel to 1e-10.

Up to C = 10 every fit converges and is within tol of the optimum.  Above it, the SMO path
can still stall on tiny rank-deficient problems (about 3 % of random problems at C >= 100,
mostly the grouped utility-weighted dual); those fits say so with a ConvergenceWarning, so
the property there is: within tol of the optimum, or a ConvergenceWarning, never a silently
inaccurate objective_.

For the per-class, Weston-Watkins and angle-based layouts (the grouped margin dual aside) the
solve converges at any C since the exact finishing step (msvm/_finish.py):
test_every_layout_and_kernel_converges_up_to_C_1e8 asserts it with no ConvergenceWarning
allowed, n from 5, every kernel including 'precomputed', C up to 1e8.
"""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from oracle import (cvx_angle_loss, cvx_weighted_loss, cvx_ww_loss, kernel_matrix, penalty,
                    primal_fit, reference_fit, reinforced_loss, vertices, weighted_loss, ww_loss)
from msvm import (AngleBasedMSVM, ReinforcedMSVM, RobustMSVM, WeightedRobustMSVM,
                  WestonWatkinsMSVM)
from msvm.exceptions import DegenerateFitWarning
from msvm.weighted import cost_to_utility

from _large_c import assert_within_tol, case_data, fit_converged, large_C_cases

pytest.importorskip("cvxpy")

MODELS = ["reinforced", "lee-lin-wahba", "weston-watkins", "weighted", "weighted-cost", "angle"]
# the default tol, and the accuracy it promises for objective_
TOL = 1e-3
# up to this C no fit of these problems may stop early
STRICT_C = 10.0


def _estimator(model, C, kernel, gamma, U):
    common = dict(C=C, kernel=kernel, gamma=gamma, degree=2, coef0=1.0)
    if model == "reinforced":
        return ReinforcedMSVM(reinforcement=0.5, **common)
    if model == "lee-lin-wahba":
        return RobustMSVM(truncation=None, **common)
    if model == "weston-watkins":
        return WestonWatkinsMSVM(**common)
    if model in ("weighted", "weighted-cost"):
        return WeightedRobustMSVM(utility=U, truncation=None, **common)
    return AngleBasedMSVM(reinforcement=0.5, **common)


def _optimum(model, K, y, w, C, k, U):
    """The optimal objective value of the model on Gram matrix K (independent reference)."""
    if model in ("reinforced", "lee-lin-wahba"):
        g = 0.5 if model == "reinforced" else 0.0
        return reference_fit(K, y, w, C, g, k=k)[0]
    if model == "weston-watkins":
        V, b, F = primal_fit(K, k, cvx_ww_loss(y, w, C))
        return penalty(V, K) + C * ww_loss(F, y, w)
    if model in ("weighted", "weighted-cost"):
        V, b, F = primal_fit(K, k, cvx_weighted_loss(y, w, C, U))
        return penalty(V, K) + C * weighted_loss(F, y, w, U, None)
    V, b, F = primal_fit(K, k - 1, cvx_angle_loss(y, w, C, 0.5, k), sum_to_zero=False)
    return penalty(V, K) + C * reinforced_loss(F @ vertices(k), y, w, 0.5)


@st.composite
def problems(draw):
    model = draw(st.sampled_from(MODELS))
    k = draw(st.integers(2, 4))
    n = draw(st.integers(2 * k, 18))
    d = draw(st.integers(1, 4))
    kernel = draw(st.sampled_from(["linear", "rbf", "poly"]))
    log_C = draw(st.floats(-4.0, 4.0))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    zero_weights = draw(st.booleans())
    return model, k, n, d, kernel, 10.0 ** log_C, seed, zero_weights


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
@given(problems())
def test_objective_within_tol_of_the_optimum(case):
    model, k, n, d, kernel, C, seed, zero_weights = case
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, d)) + 1.5 * np.eye(k, d)[y]
    w = rng.uniform(0.2, 2.0, n)
    if zero_weights:
        w[k:][rng.random(n - k) < 0.3] = 0.0      # every class keeps a weighted sample
    U = np.eye(k) + rng.uniform(0.0, 0.5, (k, k)) * (1 - np.eye(k)) if model == "weighted" \
        else None
    if model == "weighted-cost":        # a cost matrix's utility: several groups per sample
        U = cost_to_utility(rng.uniform(0.5, 2.0, (k, k)) * (1 - np.eye(k)))
    gamma = 0.5
    est = _estimator(model, C, kernel, gamma, U)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", DegenerateFitWarning)   # tiny C: constant fits
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(X, y, sample_weight=w)
    stopped_early = any(issubclass(c.category, ConvergenceWarning) for c in caught)
    assert not (stopped_early and C <= STRICT_C), "no ConvergenceWarning expected up to C = 10"
    if stopped_early:
        return                                    # said so: the property holds
    K = kernel_matrix(X, X, kernel, gamma=gamma, degree=2, coef0=1.0)
    try:
        optimum = _optimum(model, K, y, w, C, k, U)
    except RuntimeError:                          # the reference itself did not converge
        assume(False)
    scale = max(abs(optimum), 1e-12)
    assert est.objective_ >= optimum - 1e-6 * scale, "below the optimum: the oracle disagrees"
    assert est.objective_ <= optimum + TOL * scale, (
        f"{model} C={C:.3g} {kernel}: objective_ {est.objective_:.10g} vs optimum "
        f"{optimum:.10g} (relative excess {(est.objective_ - optimum) / scale:.2e}, "
        f"duality_gap_ {est.duality_gap_:.3g}, kkt_residual_ {est.kkt_residual_:.3g})")
    # the certificate covers the excess
    assert est.objective_ - optimum <= est.duality_gap_ + 1e-6 * scale


def test_weston_watkins_large_C_reaches_the_optimum():
    """WestonWatkinsMSVM(C=1000, linear) on n = k = d = 5 reaches the optimum (it once stopped
    at 8.2x the optimum)."""
    worst = 0.0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X, y = rng.standard_normal((5, 5)), np.arange(5)
        est = WestonWatkinsMSVM(C=1000, kernel="linear").fit(X, y)
        V, b, F = primal_fit(X @ X.T, 5, cvx_ww_loss(y, np.ones(5), 1000.0))
        optimum = penalty(V, X @ X.T) + 1000 * ww_loss(F, y, np.ones(5))
        worst = max(worst, (est.objective_ - optimum) / optimum)
    assert worst <= TOL


def test_grouped_dual_converges_at_large_C_on_a_rank_deficient_kernel():
    """WeightedRobustMSVM(truncation=None, C=1e4, linear) on 5 samples in d = 2 (a flat dual
    valley about C long) reaches its stopping rule with no ConvergenceWarning (it stopped at
    max_iter before the block Newton step on free variables)."""
    rng = np.random.default_rng(2)
    y = np.concatenate([[0, 1], rng.integers(0, 2, 3)])       # [0, 1, 1, 0, 0]
    X = rng.normal(size=(5, 2)) + 1.5 * np.eye(2)[y]
    w = rng.uniform(0.2, 2.0, 5)
    U = np.eye(2) + rng.uniform(0.0, 0.5, (2, 2)) * (1 - np.eye(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        WeightedRobustMSVM(C=1e4, utility=U, truncation=None, kernel="linear").fit(
            X, y, sample_weight=w)


# the layouts whose large-C solves the exact finishing step covers (msvm/_finish.py): the
# per-class hinges, Weston-Watkins and the angle-based simplex; the grouped margin dual is
# covered by test_objective_within_tol_of_the_optimum's relaxed rule above C = 10
LARGE_C_MODELS = ["reinforced", "lee-lin-wahba", "weston-watkins", "angle"]


def _check_converged_to_the_optimum(case):
    """Fit the case with no ConvergenceWarning allowed; objective_ within tol of the optimum."""
    model, k, _, _, kernel, C, _ = case
    X, y, w, K_lin, _ = case_data(case)
    est = _estimator(model, C, kernel, 0.5, None)
    fit_converged(est, case, X, y, w, K_lin)
    K = K_lin if kernel == "precomputed" else kernel_matrix(X, X, kernel, gamma=0.5, degree=2,
                                                            coef0=1.0)
    try:
        optimum = _optimum(model, K, y, w, C, k, None)
    except RuntimeError:                          # the reference itself did not converge
        assume(False)
    assert_within_tol(est, optimum, TOL, case)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
@given(large_C_cases(LARGE_C_MODELS, max_n=40, max_d=4))
def test_every_layout_and_kernel_converges_up_to_C_1e8(case):
    """Per-class, Weston-Watkins and angle-based duals on every kernel, n from 5, C in
    [1e-4, 1e8]: the solve reaches its stopping rule (no ConvergenceWarning) and objective_
    is within tol of the reference optimum."""
    _check_converged_to_the_optimum(case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(large_C_cases(LARGE_C_MODELS, max_n=40, max_d=4))
def test_every_layout_and_kernel_converges_up_to_C_1e8_wide(case):
    """The same property as test_every_layout_and_kernel_converges_up_to_C_1e8 over more
    random problems."""
    _check_converged_to_the_optimum(case)


@pytest.mark.parametrize("model", ["reinforced", "weston-watkins", "angle"])
@pytest.mark.parametrize("C", [1e4, 1e6, 1e8])
def test_large_C_on_blobs_converges(model, C):
    """The issue's case: blobs with 3 classes, d = 3, n = 60, linear kernel, C >= 1e4 stopped
    at max_iter 1.02-3.5x above the optimum; now converged within tol of it."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=60, centers=3, n_features=3, random_state=0)
    est = _estimator(model, C, "linear", 0.5, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    optimum = _optimum(model, X @ X.T, y, np.ones(60), C, 3, None)
    assert est.converged_
    assert est.objective_ <= optimum + TOL * abs(optimum)
