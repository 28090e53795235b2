"""What a fit keeps and copies: no copy of the training inputs for explicit-feature fits, the
solver's alpha handed over instead of copied, fitted attributes that share no memory with the
private warm-start state, and the in-place helpers of ``_store_solution`` against their plain
NumPy definitions."""

import warnings

import numpy as np
import pytest

import msvm
import msvm._products
from msvm import (AngleBasedMSVM, ReinforcedMSVM, RobustMSVM, WeightedRobustMSVM,
                  WestonWatkinsMSVM)
from msvm._kernels import kernel_matrix, make_row_source
from msvm._losses import losses_in_blocks
from msvm._problem import DualProblem
from msvm._snapshot import support_rows
from _estimators import factories


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = rng.integers(0, 3, 60)
    X[:, 0] += y
    return X, y


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("model", [ReinforcedMSVM, WestonWatkinsMSVM, AngleBasedMSVM])
@pytest.mark.parametrize("params, kept", [
    (dict(kernel="linear"), False),
    (dict(kernel="rbf", kernel_approximation="rff", n_components=20), False),
    (dict(kernel="rbf", kernel_approximation="nystroem", n_components=20), False),
    (dict(kernel="rbf", gamma=0.5), True),
    (dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0), True),
    (dict(kernel=lambda A, B: A @ B.T), True),
], ids=["linear", "rff", "nystroem", "rbf", "poly", "callable"])
def test_support_vectors_only_for_kernel_expansions(data, model, params, kept):
    """Explicit-feature fits keep no copy of X (X[support_] gives it); kernel fits do."""
    X, y = data
    est = _fit(model(C=1.0, random_state=0, **params), X, y)
    assert hasattr(est, "support_vectors_") == kept
    if kept:
        np.testing.assert_array_equal(est.support_vectors_, X[est.support_])
    elif params["kernel"] == "linear":
        # coef_ is the expansion of dual_coef_ over the support samples X[support_]
        T = est._output_map(len(est.classes_))
        np.testing.assert_allclose(T.T @ est.coef_ if isinstance(est, AngleBasedMSVM)
                                   else est.coef_,
                                   (T.T @ est.dual_coef_ if isinstance(est, AngleBasedMSVM)
                                    else est.dual_coef_) @ X[est.support_],
                                   rtol=1e-10, atol=1e-12)
    assert est.predict(X).shape == (len(X),)


def test_precomputed_keeps_no_support_vectors(data):
    X, y = data
    est = _fit(ReinforcedMSVM(kernel="precomputed", random_state=0), X @ X.T, y)
    assert not hasattr(est, "support_vectors_")


@pytest.mark.parametrize("model", [ReinforcedMSVM, WestonWatkinsMSVM, AngleBasedMSVM,
                                   RobustMSVM, WeightedRobustMSVM])
def test_fitted_attributes_share_no_memory_with_the_warm_start(data, model):
    """alpha_ (a view of alpha for some models) must not be the warm start's memory."""
    X, y = data
    est = _fit(model(C=1.0, kernel="linear", random_state=0, warm_start=True), X, y)
    alpha = est._warm_start_state().alpha
    kept = alpha.copy()
    for name, value in vars(est).items():
        if name.endswith("_") and isinstance(value, np.ndarray):
            assert not np.shares_memory(value, alpha), name
    est.alpha_[...] = 12345.0          # a user's write into a fitted attribute
    np.testing.assert_array_equal(est._warm_start_state().alpha, kept)


def _problem(rng, counts, k=3):
    counts = np.asarray(counts)
    nv = int(counts.sum())
    return DualProblem(k=k, var_ptr=np.concatenate([[0], np.cumsum(counts)]),
                       slot1=rng.integers(0, k, nv), coef1=np.ones(nv), lin=np.ones(nv),
                       lo=np.zeros(nv), hi=np.ones(nv))


@pytest.mark.parametrize("counts", [[2, 0, 3, 1, 0, 0, 4], [0, 0, 1], [1, 0, 0], [3, 3, 3],
                                    [0, 0], [5]])
def test_support_mask_marks_the_samples_of_nonzero_variables(counts):
    rng = np.random.default_rng(len(counts))
    problem = _problem(rng, counts)
    nv = int(np.sum(counts))
    for alpha in (np.zeros(nv), np.ones(nv), rng.choice([0.0, 0.5, -1.0], nv)):
        expected = np.unique(problem.sample_of_var()[alpha != 0])
        np.testing.assert_array_equal(np.flatnonzero(problem.support_mask(alpha)), expected)


@pytest.mark.parametrize("n, m", [(0, 0), (1, 0), (1, 1), (10, 4), (10, 5), (10, 10),
                                  (70000, 69999), (70000, 35000), (70000, 34999)])
def test_support_rows_equals_fancy_indexing(n, m):
    rng = np.random.default_rng(n + m)
    V = rng.standard_normal((n, 3))
    support = np.sort(rng.choice(n, m, replace=False)) if m else np.zeros(0, dtype=np.intp)
    expected = V[support]
    np.testing.assert_array_equal(support_rows(V, support), expected)


def _sequence(X, y):
    est = ReinforcedMSVM(kernel="rbf", gamma=0.5, random_state=0, tol=1e-8)
    src = make_row_source(X, "rbf", 3, gamma=0.5)
    return est, est._dual_sequence(X, src)


def test_solve_copy_false_hands_alpha0_to_the_solver(data):
    X, y = data
    est, sequence = _sequence(X, y)
    problem = est._dual_problem(y.astype(np.int32), 3, np.ones(len(y)))
    alpha0 = np.zeros(problem.n_vars)
    sol = sequence.solve(problem, alpha0, np.zeros(3), copy=False)
    assert sol.alpha is alpha0 and sequence.alpha is alpha0 and np.any(alpha0 != 0)
    # the default copies: the caller's start is left as it was
    start = np.zeros(problem.n_vars)
    _, other = _sequence(X, y)
    again = other.solve(problem, start, np.zeros(3))
    assert not np.any(start) and again.alpha is not start
    np.testing.assert_array_equal(again.alpha, sol.alpha)


def test_a_solution_alpha_is_not_written_by_later_solves(data):
    """The snapshot keeps the solver's alpha without a copy: later solves, move_to and scale
    of the same sequence must leave it as it was."""
    X, y = data
    est, sequence = _sequence(X, y)
    y = y.astype(np.int32)
    A = est._dual_problem(y, 3, np.ones(len(y)))
    B = est._dual_problem(y, 3, 3.0 * np.ones(len(y)))
    first = sequence.solve(A, np.zeros(A.n_vars), np.zeros(3))
    kept, G = first.alpha.copy(), first.G.copy()
    second = sequence.solve(B, B.clip_feasible(3.0 * first.alpha), first.mu)
    sequence.move_to(A, first.alpha)
    sequence.scale(2.0)
    sequence.solve(A, A.clip_feasible(first.alpha), first.mu)
    np.testing.assert_array_equal(first.alpha, kept)
    np.testing.assert_array_equal(first.G, G)
    assert not np.shares_memory(first.alpha, second.alpha)
    K = kernel_matrix(X, X, "rbf", 0.5)
    np.testing.assert_allclose(np.array(sequence.src.scores),
                               K @ A.slot_sums(sequence.alpha), rtol=1e-9, atol=1e-9)


# every public estimator with one loss over decision values (tests/_estimators.py);
# TargetedLocalMSVM's loss is that of AngleBasedMSVM at each grid point
@pytest.mark.parametrize("make", [f for f in factories() if f.__name__ != "TargetedLocalMSVM"],
                         ids=lambda f: f.__name__)
def test_sample_losses_in_blocks_equal_the_whole_loss(make, monkeypatch):
    """The objective's loss computed on blocks of rows equals the loss of all rows at once."""
    rng = np.random.default_rng(0)
    est = make()
    k = 4
    G = rng.normal(scale=2.0, size=(1000, k))
    y = rng.integers(0, k, 1000)
    if hasattr(est, "utility"):
        est.utility_ = np.ones((k, k)) - np.eye(k)
    whole = est._loss(G, y)
    monkeypatch.setattr(msvm._products, "CHUNK_ENTRIES", 37 * k)       # blocks of 37 rows
    np.testing.assert_array_equal(losses_in_blocks(est._loss, G, y), whole)
