"""DualSequence: one row source, warm-started solves, scores moved between duals."""

import warnings

import numpy as np
import pytest

from msvm import ReinforcedMSVM
from msvm._kernels import kernel_matrix, make_row_source
from msvm.datasets import make_reinforced_example
from _estimators import factories

TIGHT = dict(tol=1e-10, max_iter=100000)


@pytest.fixture(scope="module")
def setting():
    X, y = make_reinforced_example(60, random_state=4)
    y = y.astype(np.int32) - y.min()
    est = ReinforcedMSVM(kernel="rbf", gamma=0.5, random_state=0, **TIGHT)
    return est, X, y.astype(np.int32)


def _sequence(setting):
    est, X, y = setting
    src = make_row_source(X, "rbf", 3, gamma=0.5)
    return est._dual_sequence(X, src)


def _problem(setting, C):
    est, X, y = setting
    return est._dual_problem(y, 3, C * np.ones(len(y)))


def _cold(setting, C):
    problem = _problem(setting, C)
    return _sequence(setting).solve(problem, np.zeros(problem.n_vars), np.zeros(3))


def test_move_to_holds_the_scores_of_the_new_dual(setting):
    est, X, y = setting
    sequence = _sequence(setting)
    A, B = _problem(setting, 1.0), _problem(setting, 3.0)
    sol = sequence.solve(A, np.zeros(A.n_vars), np.zeros(3))
    alpha = B.clip_feasible(3.0 * sol.alpha)
    sequence.move_to(B, alpha)
    K = kernel_matrix(X, X, "rbf", 0.5)
    np.testing.assert_allclose(np.array(sequence.src.scores), K @ B.slot_sums(alpha),
                               rtol=1e-10, atol=1e-10)
    assert sequence.problem is B and np.array_equal(sequence.alpha, alpha)


def test_move_to_then_solve_equals_a_cold_solve(setting):
    sequence = _sequence(setting)
    A, B = _problem(setting, 1.0), _problem(setting, 3.0)
    sol = sequence.solve(A, np.zeros(A.n_vars), np.zeros(3))
    warm = sequence.solve(B, B.clip_feasible(3.0 * sol.alpha), sol.mu)
    cold = _cold(setting, 3.0)
    np.testing.assert_allclose(warm.G, cold.G, atol=1e-6)
    assert abs(warm.penalty - cold.penalty) <= 1e-7 * cold.penalty


def test_solve_from_its_own_solution_stays_there(setting):
    sequence = _sequence(setting)
    A = _problem(setting, 2.0)
    sol = sequence.solve(A, np.zeros(A.n_vars), np.zeros(3))
    again = sequence.solve(A, sol.alpha, sol.mu)
    np.testing.assert_allclose(again.G, sol.G, atol=1e-8)
    assert again.n_iter <= sol.n_iter


def test_penalty_and_seed_are_fixed_at_the_first_solve(setting):
    sequence = _sequence(setting)
    assert sequence.rho is None and sequence.seed is None
    A, B = _problem(setting, 1.0), _problem(setting, 5.0)
    sequence.solve(A, np.zeros(A.n_vars), np.zeros(3))
    rho, seed = sequence.rho, sequence.seed
    assert rho > 0
    sequence.solve(B, np.zeros(B.n_vars), np.zeros(3))
    assert (sequence.rho, sequence.seed) == (rho, seed)
    assert sequence.stop_reasons == ["tol", "tol"]


def _data(seed):
    X, y = make_reinforced_example(70, random_state=seed)
    U = np.random.default_rng(seed).uniform(0, 1, (len(X), 1))
    return np.hstack([U, X]), y


# every public estimator (tests/_estimators.py) and the linear kernel's path
_MAKERS = [*factories({"RobustMSVM": dict(C=5.0), "WeightedRobustMSVM": dict(C=5.0),
                       "AdaptiveWeightedSVM": dict(scheme="iterative"),
                       "TargetedLocalMSVM": dict(n_grid=4)}, random_state=0),
           lambda: ReinforcedMSVM(kernel="linear", random_state=0)]


@pytest.mark.parametrize("make", _MAKERS,
                         ids=[*(make.__name__ for make in _MAKERS[:-1]), "reinforced-linear"])
def test_no_state_leaks_between_two_fits(make):
    # the second data set has another scale: another kernel diagonal, so another rho
    (X1, y1), (X2, y2) = _data(0), _data(1)
    X2 = 3.0 * X2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reused = make().fit(X1, y1).fit(X2, y2)
        fresh = make().fit(X2, y2)
    np.testing.assert_array_equal(reused.decision_values(X1), fresh.decision_values(X1))
    assert reused.stop_reason_ == fresh.stop_reason_
    assert not {"_rho", "_seed"} & set(vars(reused))
