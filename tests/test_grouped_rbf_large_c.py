"""The grouped margin dual (WeightedRobustMSVM(truncation=None), AdaptiveWeightedSVM) with
RBF kernels at large C (issue 23 item 1): the grouped finishing step's steps on the free
set's m x m block (msvm/_grouped_face.py).

- on make_blobs n = 700 (3 overlapping classes, d = 3) at C = 1e8, the finishing step from
  the solver's iterate after 100 epochs returns a point whose duality gap is within 1e-5 of
  its objective (before: None, its factor's SVD steps ran out of MAX_WORK at 143-192 free
  variables, and the fits crawled: n = 1,000 stopped at max_iter after 89 s);
- with every step forced onto the face (the factor's work bound set to nothing), the
  finishing step still reaches the reference optimum of the dual QP (cvxpy + Clarabel) on
  small problems with group caps, for linear, RBF and polynomial kernels;
- (slow) both estimators at n = 1,000, C = 1e8 converge with no ConvergenceWarning and an
  objective within 1e-6 of a solve at tol = 1e-6.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

import msvm._finish_groups as finish_groups
from msvm import AdaptiveWeightedSVM, WeightedRobustMSVM
from msvm._core._solver import GramRows, primal_dual, solve
from msvm._finish_groups import finish_grouped
from msvm._problem import margin_problem
from oracle import kernel_matrix
from oracle.dual_qp import dual_value, reference_dual_value


def _blobs(n):
    return make_blobs(n, 3, centers=3, cluster_std=2.0, random_state=0)


def _after_epochs(K, problem, k, epochs):
    """The solver's iterate after ``epochs`` epochs and its scores."""
    src = GramRows(K, k)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(k)
    solve(src, problem, alpha, mu, max_iter=epochs)
    return alpha, np.array(src.scores)


def test_finishing_step_settles_rbf_free_sets_at_large_C():
    """n = 700, RBF (gamma='scale'), C = 1e8: from the iterate after 100 epochs (about 140
    free variables, a factor of rank above 200) the step returns a feasible point whose
    duality gap is within 1e-5 of its objective."""
    X, y = _blobs(700)
    k, C = 3, 1e8
    K = np.ascontiguousarray(kernel_matrix(X, X, "rbf", gamma=1.0 / (3 * X.var())))
    problem = margin_problem(y, k, C * np.ones(len(y)), np.eye(k))
    alpha, F = _after_epochs(K, problem, k, 100)
    found = finish_grouped(problem, alpha, F, lambda s: K[:, s], 1e-3, np.diag(K).copy())
    assert found is not None
    a, s = found
    lo, hi = problem.expanded_bounds()
    assert np.all(a >= lo) and np.all(a <= hi)
    sums = np.bincount(problem.expand("group"), weights=a, minlength=len(problem.cap))
    assert np.all(sums <= problem.cap * (1 + 1e-12))
    scores = np.ascontiguousarray(K @ problem.slot_sums(a))
    _, gap, size = primal_dual(problem, a, scores, -np.asarray(s))
    assert gap <= 1e-5 * size


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("C", [1e3, 1e6])
def test_face_steps_reach_the_dual_optimum(kernel, C, monkeypatch):
    """Every step on the face (FACE_MIN 1, the factor's work bound spent at once): from a
    solver's iterate after 20 epochs the step returns a feasible point whose dual value is
    the reference optimum to 1e-6 relative (caps made active and released on the way)."""
    monkeypatch.setattr(finish_groups, "FACE_MIN", 1)
    monkeypatch.setattr(finish_groups, "MAX_WORK", -1.0)
    rng = np.random.default_rng(3)
    k, n = 3, 12
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, 2)) + 1.5 * np.eye(k, 2)[y]
    U = np.eye(k) + rng.uniform(0.0, 0.5, (k, k)) * (1 - np.eye(k))
    problem = margin_problem(y, k, C * rng.uniform(0.2, 2.0, n), U)
    K = np.ascontiguousarray(kernel_matrix(X, X, kernel, gamma=0.5, degree=2, coef0=1.0))
    alpha, F = _after_epochs(K, problem, k, 20)
    found = finish_grouped(problem, alpha, F, lambda s: K[:, s], 1e-3, np.diag(K).copy())
    assert found is not None
    a = found[0]
    lo, hi = problem.expanded_bounds()
    assert np.all(a >= lo) and np.all(a <= hi)
    sums = np.bincount(problem.expand("group"), weights=a, minlength=len(problem.cap))
    assert np.all(sums <= problem.cap * (1 + 1e-12))
    c = problem.class_sums(a)
    assert np.abs(c - c.mean()).max() <= 1e-9 * C
    optimum = reference_dual_value(K, problem)
    assert dual_value(K, problem, a) <= optimum + 1e-6 * abs(optimum)


def _fit(make, tol, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return make(tol).fit(X, y)


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    lambda tol: WeightedRobustMSVM(C=1e8, kernel="rbf", truncation=None, tol=tol),
    lambda tol: AdaptiveWeightedSVM(C=1e8, kernel="rbf", tol=tol)],
    ids=["WeightedRobustMSVM", "AdaptiveWeightedSVM"])
def test_rbf_fits_converge_at_C_1e8(make):
    """make_blobs n = 1,000, RBF, C = 1e8 (before: max_iter after 89 s CPU): the fit
    converges with no ConvergenceWarning, its objective within 1e-6 of a fit at tol 1e-6."""
    X, y = _blobs(1000)
    est = _fit(make, 1e-3, X, y)
    tight = _fit(make, 1e-6, X, y)
    assert est.converged_ and tight.converged_
    assert abs(est.objective_ - tight.objective_) <= 1e-6 * tight.objective_
