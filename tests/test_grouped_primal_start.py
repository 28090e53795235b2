"""The smoothed-primal Newton start of the grouped margin dual (msvm/_primal.py, CappedPrimal).

- the compiled projection onto a capped box (msvm._core._smoothed.capped_project) is the
  projection a bisection on the cap's multiplier finds, with and without a DC step's shift;
- the coordinate-descent solver's violation at a point, nothing moved, is the one its epochs
  measure with group caps (single steps and full groups' pairs): a start meeting the
  stopping rule is certified with zero epochs, one that does not is not;
- WeightedRobustMSVM (with and without utility and truncation) and AdaptiveWeightedSVM on
  explicit features, started from the smoothed primal, converge with no ConvergenceWarning
  at every C from 1e-4 to 1e8, the convex fits within tol of the reference optimum (cvxpy +
  Clarabel), the DC fits through their shifted steps (started from the primal too), their
  last step within tol of the cvxpy optimum of the convex step linearized there;
- the capped smoothed primal of a DC-shifted dual (lower bounds below zero, caps moved)
  minimized by Newton's method reaches the minimum cvxpy + Clarabel finds for the same
  smoothed objective (written as an infimal convolution of the capped box's support
  function with a quadratic), and its gradient is the central difference of its value;
- an approximate-kernel fit started from the primal reaches the objective of the fit without
  the start;
- the stall case (make_classification, n = 10,000, d = 20, k = 5, C = 'auto'), which ran to
  max_iter with the KKT residual stuck near 0.03, converges (slow); so does its truncated
  fit at n = 20,000, which stopped at max_iter in its shifted steps (slow).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm import AdaptiveWeightedSVM, WeightedRobustMSVM
from msvm._capped_terms import CappedTerms
from msvm._primal import CappedPrimal
from msvm._core._rows import DenseLinearRows
from msvm._core._solver import init_scores, solve
from msvm._problem import margin_problem, shifted
from oracle import (cvx_weighted_loss, penalty, primal_fit, weighted_beta, weighted_linearized_loss,
                    weighted_loss)

TOL = 1e-3
EXPLICIT_PRIMAL = {"rows": "explicit features", "primal_start": "on"}


def _bisection_projection(Y, lo, hi, cap):
    """The projection of each row of Y onto {lo <= a <= hi, sum a <= cap} by bisection on
    the multiplier of the cap (a plain reference)."""
    out = np.clip(Y, lo, hi)
    for g in np.flatnonzero(out.sum(axis=1) > cap):
        left, right = 0.0, float(np.max(Y[g] - lo[g])) + 1.0
        for _ in range(80):
            mid = 0.5 * (left + right)
            if np.clip(Y[g] - mid, lo[g], hi[g]).sum() > cap[g]:
                left = mid
            else:
                right = mid
        out[g] = np.clip(Y[g] - right, lo[g], hi[g])
    return out


@pytest.mark.parametrize("shift", [False, True], ids=["caps", "dc-shifted"])
def test_compiled_capped_projection_is_the_bisection_projection(shift):
    """capped_project agrees with a bisection on the cap's multiplier to 1e-9, and reports
    a binding cap exactly where the clipped sum exceeds the cap."""
    rng = np.random.default_rng(0)
    k, n = 5, 150
    y = rng.integers(0, k, n)
    U = np.eye(k) + rng.uniform(0.0, 0.6, (k, k)) * (rng.random((k, k)) < 0.5)
    problem = margin_problem(y, k, rng.uniform(0.1, 3.0, n), U)
    if shift:
        s = np.zeros(problem.n_vars)
        pick = rng.choice(problem.n_vars, problem.n_vars // 3, replace=False)
        s[pick] = rng.uniform(0.0, 1.0, len(pick)) * problem.expand("hi")[pick]
        problem = shifted(problem, s)
    terms = CappedTerms(problem, 0.3)
    z = terms.along(rng.normal(scale=2.0, size=(n, k)))
    a, free, binding = terms.project(z)
    ref = _bisection_projection(z / terms.mu, terms.lo, terms.hi, terms.cap)
    np.testing.assert_allclose(a, ref, atol=1e-9)
    clipped = np.clip(z / terms.mu, terms.lo, terms.hi).sum(axis=1)
    np.testing.assert_array_equal(binding, clipped > terms.cap)
    assert free.dtype == bool and free.shape == a.shape


def _grouped_solve(problem, X, alpha, certify, max_iter=10000):
    src = DenseLinearRows(np.ascontiguousarray(X), problem.k)
    init_scores(src, np.ascontiguousarray(problem.slot_sums(alpha)))
    alpha = np.array(alpha)
    result = solve(src, problem, alpha, np.zeros(problem.k), tol=TOL, max_iter=max_iter,
                   method="cd", certify_start=certify)
    return result, alpha


def test_grouped_violation_certifies_an_optimum_and_only_an_optimum():
    """From the solver's own converged point (tol 1e-8), a certified solve at tol 1e-3
    takes zero epochs; from zero (every group's pair violation about 1 or more) it does
    not certify the start and takes epochs."""
    rng = np.random.default_rng(1)
    k, n = 3, 300
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, 3)) + 1.5 * np.eye(k, 3)[y]
    problem = margin_problem(y, k, np.ones(n), np.eye(k))
    src = DenseLinearRows(np.ascontiguousarray(X), k)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(k)
    first = solve(src, problem, alpha, mu, tol=1e-8, max_iter=100000, method="cd")
    assert first.status == 0
    src2 = DenseLinearRows(np.ascontiguousarray(X), k)
    init_scores(src2, np.ascontiguousarray(problem.slot_sums(alpha)))
    again = solve(src2, problem, alpha.copy(), mu.copy(), tol=TOL, method="cd",
                  certify_start=True)
    assert again.status == 0 and again.n_iter == 0
    assert again.residual <= TOL
    cold, _ = _grouped_solve(problem, X, np.zeros(problem.n_vars), True)
    assert cold.status == 0 and cold.n_iter > 0


def _grouped_case(C, seed=0, n=60):
    rng = np.random.default_rng(seed)
    k = 3
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, 2)) + 1.5 * np.eye(k, 2)[y]
    w = rng.uniform(0.2, 2.0, n)
    U = np.eye(k) + np.array([[0, 0.4, 0], [0.2, 0, 0], [0, 0.3, 0]])
    return X, y, w, U


def _fit_without_warning(est, X, y, w):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(X, y, sample_weight=w)
    messages = [str(c.message) for c in caught if issubclass(c.category, ConvergenceWarning)]
    assert not messages, messages
    assert est.converged_
    return est


@pytest.mark.parametrize("model, C", [("weighted-utility", 1e-4), ("weighted-utility", 1e4),
                                      ("weighted-utility", 1e8), ("adaptive", 1.0),
                                      ("adaptive", 1e6)])
def test_primal_started_grouped_fit_reaches_the_reference_optimum(model, C):
    """The convex grouped fits on explicit features, started from the capped smoothed
    primal (every solve), converge with no ConvergenceWarning and objective_ within tol of
    the cvxpy + Clarabel optimum (AdaptiveWeightedSVM: of its final weighted problem)."""
    _check_reference_optimum(model, C)


@pytest.mark.slow
@pytest.mark.parametrize("C", [1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                               1e8])
@pytest.mark.parametrize("model", ["weighted", "weighted-utility", "adaptive"])
def test_primal_started_grouped_fit_reaches_the_reference_optimum_wide(model, C):
    """The property of test_primal_started_grouped_fit_reaches_the_reference_optimum at
    every power of 10 of C and without utility."""
    _check_reference_optimum(model, C)


def _check_reference_optimum(model, C):
    X, y, w, U = _grouped_case(C)
    k = 3
    est = (AdaptiveWeightedSVM(C=C, kernel="linear") if model == "adaptive" else
           WeightedRobustMSVM(C=C, kernel="linear", truncation=None,
                              utility=U if model == "weighted-utility" else None))
    est._plan_overrides = EXPLICIT_PRIMAL
    _fit_without_warning(est, X, y, w)
    assert all(step.primal_start for step in est.solver_plan_.steps)
    Um, wm = (np.eye(k), w * est.adaptive_weights_) if model == "adaptive" else \
        (U if model == "weighted-utility" else np.eye(k), w)
    K = X @ X.T
    try:
        V, b, F = primal_fit(K, k, cvx_weighted_loss(y, wm, C, Um))
    except RuntimeError:
        pytest.skip("the reference solver did not converge")
    optimum = penalty(V, K) + C * weighted_loss(F, y, wm, Um, None)
    assert est.objective_ <= optimum + TOL * max(abs(optimum), 1e-12), (est.objective_,
                                                                      optimum)


@pytest.mark.parametrize("C", [1e-2, 1.0, 1e4, 1e6])
def test_truncated_fit_converges_through_its_shifted_steps(C):
    """WeightedRobustMSVM(truncation='auto') on explicit features: every solve, the
    DC-shifted steps included, starts from the primal and reaches its stopping rule, and
    the last step is within tol of the cvxpy + Clarabel optimum of the convex step
    linearized at the fitted function."""
    _check_shifted_step(C)


@pytest.mark.slow
@pytest.mark.parametrize("C", [1e-4, 1e-3, 0.1, 10.0, 1e2, 1e3, 1e5, 1e7, 1e8])
def test_truncated_fit_converges_through_its_shifted_steps_wide(C):
    """The property of test_truncated_fit_converges_through_its_shifted_steps at the other
    powers of 10 of C from 1e-4 to 1e8."""
    _check_shifted_step(C)


def _check_shifted_step(C):
    X, y, w, U = _grouped_case(C, seed=1)
    est = WeightedRobustMSVM(C=C, kernel="linear", utility=U)
    est._plan_overrides = EXPLICIT_PRIMAL
    _fit_without_warning(est, X, y, w)
    assert all(step.primal_start for step in est.solver_plan_.steps)
    assert est.duality_gap_ <= TOL * max(abs(est.objective_), 1e-12) + 1e-12
    s, G, K = est.truncation_, est.decision_values(X), X @ X.T
    beta, jstar = weighted_beta(G, s)
    beta &= U[y] > 0
    try:
        V, b, F = primal_fit(K, 3, cvx_weighted_loss(y, w, C, U, beta, jstar, s))
    except RuntimeError:
        pytest.skip("the reference solver did not converge")
    best = penalty(V, K) + C * weighted_linearized_loss(F, y, w, U, s, beta, jstar)
    # the fitted penalty: objective_ is the penalty plus C times the truncated loss
    fitted = est.objective_ - C * weighted_loss(G, y, w, U, s)
    here = fitted + C * weighted_linearized_loss(G, y, w, U, s, beta, jstar)
    assert here <= best + TOL * max(abs(best), 1e-12), (here, best)


def _shifted_problem(seed, n=14, k=3):
    """A margin dual with a utility matrix, shifted as a DC step does (one variable of
    every other group moved down by its cap: lower bounds below zero, caps to zero)."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, 2)) + 1.2 * np.eye(k, 2)[y]
    U = np.eye(k) + np.array([[0, 0.4, 0], [0.2, 0, 0], [0, 0.3, 0]])
    problem = margin_problem(y, k, rng.uniform(0.3, 2.0, n), U)
    p = k - 1
    shift = np.zeros(problem.n_vars)
    for g in range(0, len(problem.cap), 2):
        shift[g * p + rng.integers(0, p)] = problem.cap[g]
    return shifted(problem, shift), X


def _cvx_smoothed_minimum(problem, X, mu):
    """min over (V, b) of the capped smoothed primal, by cvxpy + Clarabel: each group's
    l(z) = max_{a in P} <a, z> - mu/2 |a|^2 is the infimal convolution of the support
    function of P = {lo <= a <= hi, sum a <= cap} (an LP's dual: min hi.p - lo.q + cap r over
    p - q + r 1 = u, p, q, r >= 0) with |z - u|^2 / (2 mu)."""
    import cvxpy as cp

    terms = CappedTerms(problem, mu)
    n, d = X.shape
    k = problem.k
    V, b = cp.Variable((d, k)), cp.Variable(k)
    F = X @ V + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
    G, p = terms.lo.shape
    rows = terms.sample
    Z = []
    for v in range(p):
        S1 = np.zeros((G, n * k))
        S1[np.arange(G), rows * k + terms.slot1[:, v]] = terms.coef1[:, v]
        S1[np.arange(G), rows * k + terms.slot2[:, v]] += terms.coef2[:, v]
        Z.append(terms.lin[:, v] + S1 @ cp.reshape(F, (n * k,), order="C"))
    Z = cp.vstack(Z).T
    u, P, Q, r = cp.Variable((G, p)), cp.Variable((G, p)), cp.Variable((G, p)), cp.Variable(G)
    support = cp.sum(cp.multiply(terms.hi, P)) - cp.sum(cp.multiply(terms.lo, Q)) + terms.cap @ r
    cons = [P >= 0, Q >= 0, r >= 0, P - Q + cp.reshape(r, (G, 1), order="C") @ np.ones((1, p))
            == u, cp.sum(V, axis=1) == 0, cp.sum(b) == 0]
    obj = (cp.sum_squares(V) / (2 * problem.kappa) + support
           + cp.sum_squares(Z - u) / (2 * mu))
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    if prob.status != "optimal":
        pytest.skip(f"the reference solver stopped with status {prob.status}")
    return float(prob.value)


@pytest.mark.parametrize("seed, mu", [(0, 0.3), (1, 0.05), (2, 1e-3)])
def test_shifted_smoothed_primal_minimum_is_the_reference_minimum(seed, mu):
    """On a DC-shifted capped dual (lower bounds below zero), the capped smoothed primal's
    gradient is the central difference of its value (relative 1e-6) and Newton's method
    reaches the minimum that cvxpy + Clarabel finds for the same smoothed objective
    (relative 1e-7)."""
    problem, X = _shifted_problem(seed)
    assert np.any(problem.expand("lo") < 0)
    primal = CappedPrimal(problem, X)
    primal.mu = mu
    rng = np.random.default_rng(seed)
    V, b = primal._center(rng.normal(size=(X.shape[1], problem.k)), rng.normal(size=3))
    dV, db = primal._center(rng.normal(size=V.shape), rng.normal(size=3))
    f, gV, gb = primal.value_and_gradient(V, b, primal.decision(V, b))
    h = 1e-6
    up = primal.value_and_gradient(V + h * dV, b + h * db, primal.decision(V + h * dV,
                                                                          b + h * db))[0]
    down = primal.value_and_gradient(V - h * dV, b - h * db, primal.decision(V - h * dV,
                                                                            b - h * db))[0]
    slope = float(np.sum(gV * dV) + gb @ db)
    assert (up - down) / (2 * h) == pytest.approx(slope, rel=1e-6, abs=1e-8)
    V, b, F = primal.newton(V, b, 1e-10, max_steps=500)
    value = primal.value_and_gradient(V, b, F)[0]
    reference = _cvx_smoothed_minimum(problem, X, mu)
    assert value == pytest.approx(reference, rel=1e-7, abs=1e-9)
    assert value >= reference - 1e-7 * abs(reference)


def test_approximate_kernel_fit_from_the_primal_matches_the_dual_fit():
    """AdaptiveWeightedSVM and WeightedRobustMSVM with kernel_approximation='nystroem'
    (explicit features): started from the primal, converged, and objective_ within 2 tol
    of the fit without the start (both certified within tol)."""
    X, y = make_classification(n_samples=800, n_features=6, n_informative=4, n_classes=3,
                               random_state=3)
    for make in (lambda: AdaptiveWeightedSVM(C=10.0, kernel="rbf", n_components=40,
                                             kernel_approximation="nystroem", random_state=0),
                 lambda: WeightedRobustMSVM(C=10.0, kernel="rbf", truncation=None,
                                            n_components=40, kernel_approximation="nystroem",
                                            random_state=0)):
        fits = {}
        for primal in ("on", "off"):
            est = make()
            est._plan_overrides = {"rows": "explicit features", "primal_start": primal}
            fits[primal] = _fit_without_warning(est, X, y, None)
        assert fits["on"].solver_plan_.steps[0].primal_start
        assert not fits["off"].solver_plan_.steps[0].primal_start
        a, b = fits["on"].objective_, fits["off"].objective_
        assert abs(a - b) <= 2 * TOL * max(abs(a), abs(b))


@pytest.mark.slow
def test_truncated_stall_case_converges_from_the_primal():
    """WeightedRobustMSVM(truncation='auto'), make_classification n = 20,000, d = 20, k = 5,
    C = 'auto' (before: its DC-shifted steps on dual coordinate descent stopped at
    max_iter): every solve, the shifted steps included, starts from the smoothed primal, and
    the fit converges with no ConvergenceWarning within tol."""
    X, y = make_classification(n_samples=20000, n_features=20, n_informative=10,
                               n_classes=5, random_state=0)
    est = _fit_without_warning(WeightedRobustMSVM(kernel="linear"), X, y, None)
    assert all(step.primal_start for step in est.solver_plan_.steps)
    assert est.kkt_residual_ <= TOL
    assert est.duality_gap_ <= TOL * abs(est.objective_)


@pytest.mark.slow
def test_stall_case_converges_from_the_primal():
    """WeightedRobustMSVM(truncation=None), make_classification n = 10,000, d = 20, k = 5,
    C = 'auto' (before: 10,000 epochs, KKT residual 0.03, a ConvergenceWarning): the
    solve starts from the smoothed primal, converges with no ConvergenceWarning and
    certifies its relative gap within tol."""
    X, y = make_classification(n_samples=10000, n_features=20, n_informative=10, n_classes=5,
                               random_state=0)
    est = _fit_without_warning(WeightedRobustMSVM(kernel="linear", truncation=None), X, y,
                               None)
    assert est.solver_plan_.steps[0].primal_start
    assert est.kkt_residual_ <= TOL
    assert est.duality_gap_ <= TOL * abs(est.objective_)
