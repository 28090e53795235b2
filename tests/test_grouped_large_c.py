"""The duality-gap certificate where the objective is tiny or the solve stops early, and the
DC step at the constant classifier.

- the relative duality gap a solve returns is the absolute certificate of its final point
  over the size of the objective's terms, or over ``gap_scale`` where that is larger; a solve
  stopped by max_iter before its KKT rule was met reports its final point's gap, not inf;
- a DC step whose convex problem sits at the constant classifier (objective of rounding
  size) reaches its stopping rule: the fit converges with no ConvergenceWarning, where the
  relative gap over the vanishing size kept the solve at max_iter before;
- the ConvergenceWarning of a grouped solve stopped by max_iter names a finite gap;
- every grouped-dual solve (WeightedRobustMSVM with and without truncation and utility,
  AdaptiveWeightedSVM) reaches its stopping rule at any C up to 1e8, on every kernel and
  from n = 5, through the exact finishing step with group caps (msvm/_finish_groups.py);
  the convex ones within tol of the reference optimum (cvxpy + Clarabel);
- that finishing step, called on a solver's unconverged iterate, returns a point whose
  dual value is the reference optimum of the dual QP.
"""

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from sklearn.exceptions import ConvergenceWarning

import msvm._finish_groups as finish_groups
from msvm import AdaptiveWeightedSVM, RobustMSVM, WeightedRobustMSVM
from msvm._core._solver import GramRows, primal_dual, solve
from msvm._finish_groups import finish_grouped
from msvm._problem import margin_problem
from oracle import (cvx_weighted_loss, kernel_matrix, penalty, primal_fit, weighted_loss)
from oracle.dual_qp import dual_value, reference_dual_value

from _large_c import assert_within_tol, case_data, fit_converged, large_C_cases

# the default tol, and the accuracy it promises for objective_
TOL = 1e-3


def _grouped_case(C):
    """The tiny rank-2 grouped problem of the known large-C stall (5 samples, 2 classes)."""
    rng = np.random.default_rng(2)
    y = np.concatenate([[0, 1], rng.integers(0, 2, 3)])
    X = rng.normal(size=(5, 2)) + 1.5 * np.eye(2)[y]
    w = rng.uniform(0.2, 2.0, 5)
    U = np.eye(2) + rng.uniform(0.0, 0.5, (2, 2)) * (1 - np.eye(2))
    return X, y, w, U, margin_problem(y, 2, C * w, U)


@pytest.mark.parametrize("gap_scale", [0.0, 1e6])
@pytest.mark.parametrize("C", [1.0, 1e4])
def test_returned_gap_is_the_certificate_over_its_scale(C, gap_scale):
    """The returned relative gap (here of a solve stopped by max_iter=1, before the KKT rule
    was met) is primal_dual's absolute gap at the final point over max(size, gap_scale)."""
    X, y, w, U, problem = _grouped_case(C)
    src = GramRows(np.ascontiguousarray(X @ X.T), 2)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(2)
    _, _, status, gap = solve(src, problem, alpha, mu, tol=1e-12, max_iter=1,
                              gap_scale=gap_scale)
    assert status == 1                                   # max_iter
    _, absolute, size = primal_dual(problem, alpha, np.array(src.scores, order="C"), -mu)
    assert np.isfinite(gap)
    assert gap == pytest.approx(absolute / max(size, gap_scale), rel=1e-6, abs=1e-12)


def test_negative_gap_scale_is_refused():
    """gap_scale < 0 (or NaN) is refused with a message naming it."""
    X, y, w, U, problem = _grouped_case(1.0)
    src = GramRows(np.ascontiguousarray(X @ X.T), 2)
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="gap_scale"):
            solve(src, problem, np.zeros(problem.n_vars), np.zeros(2), gap_scale=bad)


def test_dc_step_at_the_constant_classifier_reaches_its_stopping_rule():
    """RobustMSVM on 50 classes of 3 samples: the DC path reaches the constant classifier,
    whose convex step has an objective of rounding size; every solve stops by its stopping
    rule (no ConvergenceWarning) and the fit converges to the DC solution."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(50), 3)
    X = rng.normal(size=(len(y), 2))
    est = RobustMSVM(C=1.0, truncation=1.0, kernel="linear", max_iter=1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert not convergence, [str(w.message) for w in convergence]
    assert est.converged_
    assert len(np.unique(est.predict(X))) == 1           # the constant classifier
    assert np.all(np.diff(est.dc_objectives_) <= 1e-9 * np.abs(est.dc_objectives_[:-1]))


def test_max_iter_warning_names_a_finite_gap():
    """A grouped solve stopped by max_iter before its KKT rule was met warns with the final
    point's relative gap (finite, as duality_gap_ is), not the schedule's initial inf."""
    X, y, w, U, _ = _grouped_case(1e4)
    est = WeightedRobustMSVM(C=1e4, utility=U, truncation=None, kernel="linear", max_iter=1)
    with pytest.warns(ConvergenceWarning, match="max_iter") as caught:
        est.fit(X, y, sample_weight=w)
    message = next(str(m.message) for m in caught if "max_iter" in str(m.message))
    found = re.search(r"relative duality gap (\S+) \(tol", message)
    assert found is not None, message
    assert np.isfinite(float(found.group(1))), message
    assert np.isfinite(est.duality_gap_)



# ------------------------------------------------------------------ large C, every kernel
GROUPED_MODELS = ["weighted", "weighted-utility", "weighted-truncated", "adaptive"]


def _grouped_estimator(model, C, kernel, U):
    common = dict(C=C, kernel=kernel, gamma=0.5, degree=2, coef0=1.0)
    if model == "weighted":
        return WeightedRobustMSVM(truncation=None, **common)
    if model == "weighted-utility":
        return WeightedRobustMSVM(utility=U, truncation=None, **common)
    if model == "weighted-truncated":
        return WeightedRobustMSVM(utility=U, **common)
    return AdaptiveWeightedSVM(**common)


def _check_grouped_converges(case):
    """Fit with no ConvergenceWarning allowed; a convex fit's objective_ within tol of the
    reference optimum (AdaptiveWeightedSVM: of its final weighted problem)."""
    model, k, _, _, kernel, C, _ = case
    X, y, w, K_lin, rng = case_data(case)
    U = np.eye(k) + rng.uniform(0.0, 0.5, (k, k)) * (1 - np.eye(k))
    est = _grouped_estimator(model, C, kernel, U)
    fit_converged(est, case, X, y, w, K_lin)
    if model == "weighted-truncated":
        return                                    # a DC solution: no convex reference
    K = K_lin if kernel == "precomputed" else kernel_matrix(X, X, kernel, gamma=0.5,
                                                            degree=2, coef0=1.0)
    Um, wm = (np.eye(k), w * est.adaptive_weights_) if model == "adaptive" else \
        (U if model == "weighted-utility" else np.eye(k), w)
    try:
        V, b, F = primal_fit(K, k, cvx_weighted_loss(y, wm, C, Um))
    except RuntimeError:                          # the reference itself did not converge
        assume(False)
    assert_within_tol(est, penalty(V, K) + C * weighted_loss(F, y, wm, Um, None), TOL, case)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(large_C_cases(GROUPED_MODELS, max_n=10, max_d=3))
def test_grouped_dual_converges_up_to_C_1e8(case):
    """WeightedRobustMSVM (with and without truncation and utility) and AdaptiveWeightedSVM
    on every kernel, n from 5, C in [1e-4, 1e8]: every solve reaches its stopping rule (no
    ConvergenceWarning) and a convex fit's objective_ is within tol of the reference."""
    _check_grouped_converges(case)


@pytest.mark.slow
@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(large_C_cases(GROUPED_MODELS, max_n=40, max_d=3))
def test_grouped_dual_converges_up_to_C_1e8_wide(case):
    """The property of test_grouped_dual_converges_up_to_C_1e8 over more and larger random
    problems (n up to 40)."""
    _check_grouped_converges(case)


@pytest.mark.parametrize("route", ["as planned", "face"])
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("C", [1e3, 1e6])
def test_finishing_step_reaches_the_dual_optimum(kernel, C, route, monkeypatch):
    """finish_grouped from a solver's iterate stopped after 20 epochs (far from converged at
    this C) returns a feasible point whose dual value is the reference optimum of the dual QP
    (cvxpy + Clarabel) to 1e-6 relative; also with every step on the free set's m x m block
    ('face': FACE_MIN 1 and the factor's work bound spent at once, msvm/_grouped_face.py),
    caps made active and released on the way."""
    if route == "face":
        monkeypatch.setattr(finish_groups, "FACE_MIN", 1)
        monkeypatch.setattr(finish_groups, "MAX_WORK", -1.0)
    rng = np.random.default_rng(3)
    k, n = 3, 12
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, 2)) + 1.5 * np.eye(k, 2)[y]
    U = np.eye(k) + rng.uniform(0.0, 0.5, (k, k)) * (1 - np.eye(k))
    problem = margin_problem(y, k, C * rng.uniform(0.2, 2.0, n), U)
    K = np.ascontiguousarray(kernel_matrix(X, X, kernel, gamma=0.5, degree=2, coef0=1.0))
    src = GramRows(K, k)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(k)
    solve(src, problem, alpha, mu, max_iter=20)
    found = finish_grouped(problem, alpha.copy(), np.array(src.scores), lambda s: K[:, s],
                           1e-3, np.diag(K).copy())
    assert found is not None
    a = found[0]
    lo, hi = problem.expanded_bounds()
    assert np.all(a >= lo) and np.all(a <= hi)
    group = problem.expand("group")
    sums = np.bincount(group, weights=a, minlength=len(problem.cap))
    assert np.all(sums <= problem.cap * (1 + 1e-12))
    c = problem.class_sums(a)
    assert np.abs(c - c.mean()).max() <= 1e-9 * C
    optimum = reference_dual_value(K, problem)
    assert dual_value(K, problem, a) <= optimum + 1e-6 * abs(optimum)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["none", "auto", "adaptive"])
def test_grouped_blobs_n5000_large_C_converges(model):
    """Issue 23's case: make_blobs with 3 classes, n = 5,000, d = 2, linear, C = 1e4 (each
    solve stopped at max_iter with a relative gap near 1 before): every solve converges and
    the certified relative duality gap is within tol."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=5000, centers=3, n_features=2, random_state=0)
    est = AdaptiveWeightedSVM(C=1e4, kernel="linear") if model == "adaptive" else \
        WeightedRobustMSVM(C=1e4, kernel="linear",
                           truncation=None if model == "none" else "auto")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    assert est.converged_
    assert est.duality_gap_ <= TOL * abs(est.objective_)
