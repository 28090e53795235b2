"""Shrinking in the kernel SMO path changes the path, never the optimum.

The SMO scans leave settled samples out between full scans and look at every sample before
declaring convergence (msvm/_core/_smo.pyx).  With and without shrinking a solve must reach
the same certified optimum, and with it the scans must actually skip samples (a small
working set forces many scans).
"""

import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm._core._solver import make_row_source, solve
from msvm._kernels import kernel_matrix
from msvm._problem import margin_problem, pairwise_hinge_problem, reinforced_problem

PROBLEMS = {
    "weston-watkins": lambda y, k, w: pairwise_hinge_problem(y, k, w),
    "reinforced": lambda y, k, w: reinforced_problem(y, k, w, 0.5),
    # one group per sample: the samples whose group is below its cap can be settled
    "margin, one group per sample": lambda y, k, w: margin_problem(y, k, w, np.eye(k)),
    # k - 1 groups per sample, here at their caps or free: never settled
    "margin, full groups": lambda y, k, w: margin_problem(
        y, k, w, np.ones((k, k)) - np.eye(k)),
}


def _solve(K, problem, shrinking, capsys):
    alpha, mu = np.zeros(problem.n_vars), np.zeros(problem.k)
    src = make_row_source("precomputed", problem.k, K=K)
    capsys.readouterr()
    _, resid, status, gap = solve(src, problem, alpha, mu, tol=1e-9, max_iter=10 ** 5,
                                  shrinking=shrinking, working_set=8, method="smo", verbose=1)
    out = capsys.readouterr().out
    skipped = sum(int(m) for m in re.findall(r"settled visits (\d+)", out))
    return alpha, status, np.array(src.scores), skipped


@pytest.mark.parametrize("model", list(PROBLEMS))
@pytest.mark.parametrize("seed", [0, 1])
def test_shrinking_reaches_the_same_optimum(model, seed, capsys):
    # full groups are never settled, so their solves scan every sample: 150 samples (half
    # the others') show the same property in a third of the time
    n = 150 if model == "margin, full groups" else 300
    X, y = make_classification(n_samples=n, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=4, n_clusters_per_class=1, random_state=seed)
    w = 10.0 * np.random.default_rng(seed).uniform(0.2, 2.0, size=len(y))
    K = kernel_matrix(X, X, "rbf", 0.5, 3, 0.0)
    problem = PROBLEMS[model](y, 4, w)
    a_on, status_on, F_on, skipped_on = _solve(K, problem, True, capsys)
    a_off, status_off, F_off, skipped_off = _solve(K, problem, False, capsys)
    assert status_on == 0 and status_off == 0
    assert skipped_off == 0
    if model == "margin, full groups":
        assert skipped_on == 0              # a sample with a full group is never settled
    else:
        assert skipped_on > 0               # the scans did leave settled samples out
    # the same dual objective (unique at the optimum) to the solve's tolerance
    Q_on = 0.5 * np.sum(problem.slot_sums(a_on) * (F_on - F_on.mean(axis=1, keepdims=True)))
    Q_off = 0.5 * np.sum(problem.slot_sums(a_off) * (F_off - F_off.mean(axis=1, keepdims=True)))
    d_on = problem.expand("lin") @ a_on - Q_on
    d_off = problem.expand("lin") @ a_off - Q_off
    assert d_on == pytest.approx(d_off, rel=1e-7)
