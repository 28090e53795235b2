"""The coordinate-descent solver (msvm/_core/_cd.pyx) on grouped duals.

The generalized-margin duals of WeightedRobustMSVM / AdaptiveWeightedSVM (msvm._problem.
margin_problem) have one group of k - 1 variables alpha_{ijj'} per (sample i, class j) with
U[y_i, j] > 0 and a cap sum_{j'} alpha_{ijj'} <= C w_i U[y_i, j].  Checked here, on the CD path
(method='cd') that linear fits take:

- the optimum: the dual objective matches cvxpy + Clarabel (1e-7 relative) on small problems
  with one or several groups per sample, sample weights (some zero), explicit features and
  kernel rows;
- a group whose sum rounding left an ulp below its cap counts as full: started from a solved
  point whose group sums were moved a few ulps below their caps, the solve confirms the
  optimum in one epoch (the single steps do not report such a group's negative gradients as a
  violation, which kept the solve running for epochs that moved only rounding);
- convergence within an epoch budget on a degenerate problem (optimum: the constant function,
  every group at its cap), where the rounding gaps below the caps used to cost about twice the
  epochs (10-16 against 6-7 over 20 seeds).
"""

import numpy as np
import pytest

from msvm._core._solver import init_scores, make_row_source, solve
from msvm._problem import margin_problem
from oracle.dual_qp import dual_value, reference_dual_value

cp = pytest.importorskip("cvxpy")


def _data(seed, n, d, k):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rng.shuffle(y)
    X = rng.normal(size=(n, d)) + 1.5 * np.eye(k, d)[y]
    return X, y


def _utility(kind, k):
    if kind == "identity":
        return np.eye(k)
    # a cost-based utility (every entry > 0 but the largest cost's): several groups per sample
    cost = np.abs(np.subtract.outer(np.arange(k), np.arange(k))).astype(float)
    return cost.max() - cost + np.eye(k)


def _cd_solve(src, problem, alpha, mu, tol, seed=0, rho=1.0):
    return solve(src, problem, alpha, mu, tol=tol, max_iter=10 ** 6, seed=seed, rho=rho,
                 method="cd")


@pytest.mark.parametrize("utility", ["identity", "cost"])
@pytest.mark.parametrize("source", ["linear", "rbf"])
@pytest.mark.parametrize("seed", range(3))
def test_grouped_cd_matches_reference(utility, source, seed):
    k = 3 + seed % 2
    X, y = _data(seed, 24, 3, k)
    rng = np.random.default_rng(100 + seed)
    w = rng.uniform(0.1, 2.0, len(y)) * [0.0 if i % 7 == 3 else 1.0 for i in range(len(y))]
    C = [0.05, 1.0, 20.0][seed]
    problem = margin_problem(y, k, C * w, _utility(utility, k))
    if source == "linear":
        K = X @ X.T
        src = make_row_source("linear", k, X=np.ascontiguousarray(X))
    else:
        K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        src = make_row_source("precomputed", k, K=K)
    alpha = np.zeros(problem.n_vars)
    mu = np.zeros(k)
    _, resid, status, _ = _cd_solve(src, problem, alpha, mu, tol=1e-10, seed=seed)
    assert status == 0 and resid <= 1e-10
    lo, hi = problem.expanded_bounds()
    assert np.all(alpha >= lo - 1e-14) and np.all(alpha <= hi + 1e-14)
    sums = np.bincount(problem.expand("group"), weights=alpha, minlength=len(problem.cap))
    assert np.all(sums <= problem.cap * (1 + 1e-12) + 1e-15)
    ref = reference_dual_value(K, problem)
    value = dual_value(K, problem, alpha)
    assert abs(value - ref) <= 1e-7 * max(1.0, abs(ref)), (value, ref)


def test_rounding_gap_below_a_cap_is_no_violation():
    k = 4
    X, y = _data(3, 60, 3, k)
    problem = margin_problem(y, k, np.full(len(y), 2.0), np.eye(k))
    src = make_row_source("linear", k, X=np.ascontiguousarray(X))
    alpha = np.zeros(problem.n_vars)
    mu = np.zeros(k)
    _, resid, status, _ = _cd_solve(src, problem, alpha, mu, tol=1e-9)
    assert status == 0
    value = dual_value(X @ X.T, problem, alpha)
    # move the sums of full groups a few ulps below their caps (the largest member down,
    # where it is below its box's upper end, so that no pair of the group changes): a
    # feasible point within rounding of the optimum, whose lowered groups have members at 0
    # with negative gradients (the cap's multiplier)
    group, hi = problem.expand("group"), problem.expand("hi")
    sums = np.bincount(group, weights=alpha, minlength=len(problem.cap))
    full = np.flatnonzero(sums >= problem.cap * (1 - 1e-13))
    lowered = 0
    for g in full:
        members = np.flatnonzero(group == g)
        top = members[np.argmax(alpha[members])]
        if alpha[top] >= hi[top]:
            continue
        alpha[top] = np.nextafter(np.nextafter(alpha[top], 0.0), 0.0)
        lowered += problem.cap[g] - alpha[members].sum() > 0
    assert lowered >= 5
    # one epoch from there (the penalty rho of the solve's end): the violation it reports is
    # the optimum's, not the size of those gradients
    src = make_row_source("linear", k, X=np.ascontiguousarray(X))
    init_scores(src, np.ascontiguousarray(problem.slot_sums(alpha)))
    n_iter, resid, status, _ = solve(src, problem, alpha, mu, tol=1e-9, max_iter=1, rho=4.0,
                                     method="cd")
    assert n_iter == 1
    assert resid <= 1e-7, resid
    assert abs(dual_value(X @ X.T, problem, alpha) - value) <= 1e-9 * abs(value)


@pytest.mark.parametrize("seed", range(3))
def test_degenerate_grouped_fit_converges_within_budget(seed):
    # make_classification with 10 classes, 50 features: at C = 0.01 the optimum is the
    # constant function (every group at its cap, the weights W = X^T U zero)
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=20000, n_features=50, n_informative=20, n_classes=10,
                               random_state=0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    n, k = X.shape[0], 10
    problem = margin_problem(y, k, np.full(n, 0.01), np.eye(k))
    src = make_row_source("linear", k, X=np.ascontiguousarray(X))
    alpha = np.zeros(problem.n_vars)
    mu = np.zeros(k)
    n_iter, resid, status, gap = _cd_solve(src, problem, alpha, mu, tol=1e-3, seed=seed)
    assert status == 0 and resid <= 1e-3
    sums = np.bincount(problem.expand("group"), weights=alpha, minlength=len(problem.cap))
    np.testing.assert_allclose(sums, problem.cap, rtol=1e-10)
    assert np.abs(src.weights).max() <= 1e-4
    # 6-7 epochs over seeds 0..19 (the rounding gaps below the caps used to cost 10-16)
    assert n_iter <= 8, n_iter
