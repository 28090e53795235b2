"""The smoothed-primal start's small-primal path (``msvm._primal.LEAN_SMALL_STEPS``): the
Newton matrix, its Cholesky solve and the curvature's block updates with fewer NumPy calls
give the same start bit for bit as main's calls, on each layout the start serves."""

import numpy as np
import pytest
import scipy.sparse as sp

import msvm
import msvm._primal as primal_module
from msvm._primal import SmoothedPrimal, newton_matrix, primal_start
from msvm._problem import margin_problem

LAYOUTS = ("weston_watkins", "reinforced", "angle", "capped")


def _data(n, d, k, seed):
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, d)) + 1.2 * np.eye(k, d)[y]
    return X, y


def _weights(kind, n, seed):
    rng = np.random.default_rng(seed + 100)
    if kind == "equal":
        return np.full(n, 2.0)
    if kind == "alike":                 # boxes within BALANCE_MIN_RATIO
        return rng.uniform(0.5, 2.0, n)
    weights = np.ones(n)                # a probability refit's: one class far heavier
    weights[rng.random(n) < 0.3] = 200.0
    return weights


def _problem(layout, y, k, weights):
    if layout == "weston_watkins":
        return msvm.WestonWatkinsMSVM(C=1.0)._dual_problem(y, k, weights)
    if layout == "reinforced":
        return msvm.ReinforcedMSVM(C=1.0)._dual_problem(y, k, weights)
    if layout == "angle":
        return msvm.AngleBasedMSVM(C=1.0)._dual_problem(y, k, weights)
    U = np.eye(k) + 0.3 * np.eye(k, k, 1)
    return margin_problem(y, k, weights, U)


def _start(monkeypatch, on, problem, X, W, mu0, tol=1e-3):
    monkeypatch.setattr(primal_module, "LEAN_SMALL_STEPS", on)
    diag = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum(
        "ij,ij->i", X, X)
    return primal_start(problem, X, W, mu0, tol, diag, 1000)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("weights", ["equal", "alike", "heavy"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_same_start_bit_for_bit(monkeypatch, layout, weights, seed):
    k = 3 if layout == "capped" else 4
    X, y = _data(120, 3, k, seed)
    problem = _problem(layout, y, k, _weights(weights, len(y), seed))
    rng = np.random.default_rng(seed)
    W, mu0 = 0.01 * rng.normal(size=(X.shape[1], k)), 0.1 * rng.normal(size=k)
    for start_W, start_mu in ((np.zeros_like(W), np.zeros(k)), (W, mu0)):
        alpha0, mu_0 = _start(monkeypatch, False, problem, X, start_W, start_mu)
        alpha1, mu_1 = _start(monkeypatch, True, problem, X, start_W, start_mu)
        assert np.array_equal(alpha0, alpha1)
        assert np.array_equal(mu_0, mu_1)


def test_the_same_start_on_sparse_rows(monkeypatch):
    X, y = _data(150, 5, 3, 2)
    X[np.abs(X) < 0.7] = 0.0
    X = sp.csr_matrix(X)
    problem = _problem("weston_watkins", y, 3, _weights("heavy", len(y), 2))
    W, mu0 = np.zeros((5, 3)), np.zeros(3)
    alpha0, mu_0 = _start(monkeypatch, False, problem, X, W, mu0)
    alpha1, mu_1 = _start(monkeypatch, True, problem, X, W, mu0)
    assert np.array_equal(alpha0, alpha1) and np.array_equal(mu_0, mu_1)


@pytest.mark.parametrize("layout", ["weston_watkins", "angle"])
def test_small_blocks_give_the_curvature_of_the_chunked_updates(monkeypatch, layout):
    """The curvature after a start's updates, through `_add_small_blocks` (every change set
    within one chunk) and through main's `_weighted_gram` loop, is the same array; the
    small path is taken."""
    k = 4
    X, y = _data(200, 3, k, 3)
    problem = _problem(layout, y, k, _weights("alike", len(y), 3))
    calls = []
    original = SmoothedPrimal._add_small_blocks

    def counted(self, *args):
        calls.append(len(args[0]))
        return original(self, *args)

    monkeypatch.setattr(SmoothedPrimal, "_add_small_blocks", counted)
    curvatures = []
    for on in (False, True):
        monkeypatch.setattr(primal_module, "LEAN_SMALL_STEPS", on)
        primal = SmoothedPrimal(problem, X)
        primal.mu = 0.01
        V, b = np.zeros((X.shape[1], k)), np.zeros(k)
        primal.newton(V, b, 1e-8, max_steps=6)
        curvatures.append(primal._curvature.copy())
    assert calls
    assert np.array_equal(curvatures[0], curvatures[1])


@pytest.mark.parametrize("equality", [True, False])
def test_newton_matrix_is_the_same(monkeypatch, equality):
    rng = np.random.default_rng(4)
    m, k, d = 4, 3, 3 if equality else 4
    A = rng.normal(size=(20, m * k))
    curvature = (A.T @ A).reshape(m, k, m, k)
    out = []
    for on in (False, True):
        monkeypatch.setattr(primal_module, "LEAN_SMALL_STEPS", on)
        out.append(newton_matrix(curvature, 0.03, d, 2.5, equality))
    assert np.array_equal(out[0], out[1])


def test_cholesky_solve_declines_an_indefinite_matrix():
    rhs = np.array([1.0, 2.0])
    assert primal_module._cholesky_solve(np.diag([1.0, -1.0]), rhs) is None
    H = np.array([[4.0, 1.0], [1.0, 3.0]])
    np.testing.assert_allclose(primal_module._cholesky_solve(H, rhs), np.linalg.solve(H, rhs))
