"""A working-set block solved only part of the way never changes the certified optimum.

The SMO path (msvm/_core/_smo.pyx) solves each block to a fraction of the block's own
starting violation, not to the round's tolerance, and updates every score once per block.
Whatever the working-set size, the solve must end at the optimum the coordinate-descent path
certifies, and the scores it holds must still equal K U for its final dual point.
"""

import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm._core._solver import make_row_source, solve
from msvm._kernels import kernel_matrix
from msvm._problem import pairwise_hinge_problem, reinforced_problem

PROBLEMS = {
    "reinforced": lambda y, k, w: reinforced_problem(y, k, w, 0.5),
    "lee-lin-wahba": lambda y, k, w: reinforced_problem(y, k, w, 0.0),
    "weston-watkins": lambda y, k, w: pairwise_hinge_problem(y, k, w),
}


def _dual(problem, alpha, F):
    """The dual objective sum a alpha - 1/2 <U, P F> at alpha (F = K U, n x k)."""
    U = problem.slot_sums(alpha)
    return problem.expand("lin") @ alpha - 0.5 * np.sum(U * (F - F.mean(axis=1, keepdims=True)))


def _solve(K, problem, method, working_set, capsys):
    alpha, mu = np.zeros(problem.n_vars), np.zeros(problem.k)
    src = make_row_source("precomputed", problem.k, K=K)
    capsys.readouterr()
    _, _, status, gap = solve(src, problem, alpha, mu, tol=1e-9, max_iter=10 ** 5,
                              working_set=working_set, method=method, verbose=1)
    blocks = sum(int(m) for m in re.findall(r"blocks (\d+)", capsys.readouterr().out))
    return alpha, status, np.array(src.scores), blocks


@pytest.mark.parametrize("model", list(PROBLEMS))
@pytest.mark.parametrize("working_set", [4, 32])
def test_partly_solved_blocks_reach_the_certified_optimum(model, working_set, capsys):
    X, y = make_classification(n_samples=240, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=4, n_clusters_per_class=1, random_state=3)
    w = 10.0 * np.random.default_rng(3).uniform(0.2, 2.0, size=len(y))
    K = kernel_matrix(X, X, "rbf", 0.5, 3, 0.0)
    problem = PROBLEMS[model](y, 4, w)
    a_smo, status, F_smo, blocks = _solve(K, problem, "smo", working_set, capsys)
    a_cd, status_cd, F_cd, _ = _solve(K, problem, "cd", 0, capsys)
    assert status == 0 and status_cd == 0
    assert blocks > 10                       # many blocks, each solved only part of the way
    # the held scores are K U of the final point (every block's update was applied once)
    np.testing.assert_allclose(F_smo, K @ problem.slot_sums(a_smo), rtol=0, atol=1e-9)
    assert _dual(problem, a_smo, F_smo) == pytest.approx(_dual(problem, a_cd, F_cd), rel=1e-7)


def test_angle_problem_blocks_reach_the_certified_optimum(capsys):
    """The angle-based layout (the simplex metric, kappa = k / (k - 1)) through the same
    small blocks."""
    X, y = make_classification(n_samples=200, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=5)
    K = kernel_matrix(X, X, "rbf", 0.5, 3, 0.0)
    problem = reinforced_problem(y, 3, np.full(len(y), 5.0), 0.5, kappa=1.5)
    a_smo, status, F_smo, blocks = _solve(K, problem, "smo", 8, capsys)
    a_cd, status_cd, F_cd, _ = _solve(K, problem, "cd", 0, capsys)
    assert status == 0 and status_cd == 0 and blocks > 10
    assert _dual(problem, a_smo, F_smo) == pytest.approx(_dual(problem, a_cd, F_cd), rel=1e-7)
