"""The compiled solver on the problem structures later models hand it, against cvxpy + Clarabel.

ReinforcedMSVM only exercises single-slot directions with unpenalized intercepts.  The solver
is built for every model of docs/models.md, so its other features are checked here directly
on random DualProblems, each solved to tol 1e-9 and compared with the same dual QP

    minimize 1/2 alpha^T Q alpha - lin^T alpha,  Q_vw = K_{i(v) i(w)} d_v^T (kappa P) d_w,
    subject to lo <= alpha <= hi, group caps, and P c(alpha) = 0 when `equality`,

solved by cvxpy (Clarabel).  Structures: two-slot directions e_j - e_l with group caps
sum_{j'} alpha_{ijj'} <= cap_i (the generalized-margin duals of WeightedRobustMSVM and
WestonWatkinsMSVM), shifted boxes lo > 0 (DC steps), the angle-based metric kappa = k/(k-1),
and penalized intercepts (no equality).  Tolerance: 1e-6 relative on the dual objective.
"""

import numpy as np
import pytest

cp = pytest.importorskip("cvxpy")

from msvm._core._solver import init_scores, make_row_source, solve  # noqa: E402
from msvm._problem import DualProblem  # noqa: E402
from oracle.dual_qp import dual_value, reference_dual_value  # noqa: E402


def _random_problem(seed, structure):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(6, 25)), int(rng.integers(2, 5))
    y = rng.integers(0, k, n)
    w = rng.uniform(0.2, 2.0, n)
    X = rng.normal(size=(n, 3)) + np.eye(k, 3)[y]
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    ptr, s1, c1, s2, c2, lin, lo, hi, grp, cap = [0], [], [], [], [], [], [], [], [], []
    for i in range(n):
        if structure == "groups":
            # generalized margin: one variable per (i, j') with j' != y_i, direction
            # e_{j'} - e_{y_i}, offset 1, box [0, C w_i], group cap C w_i U
            for jp in range(k):
                if jp == y[i]:
                    continue
                for column, value in ((s1, jp), (c1, 1.0), (s2, int(y[i])), (c2, -1.0),
                                      (lin, 1.0), (lo, 0.0), (hi, w[i]), (grp, i)):
                    column.append(value)
            cap.append(w[i] * rng.uniform(0.3, 1.5))
        else:
            for j in range(k):
                own = j == y[i]
                for column, value in ((s1, j), (c1, -1.0 if own else 1.0), (s2, -1), (c2, 0.0)):
                    column.append(value)
                lin.append(k - 1.0 if own else 1.0)
                h = w[i] * (0.6 if own else 0.4)
                hi.append(h)
                lo.append(h * rng.uniform(0, 0.5) if structure == "shifted" and
                          rng.uniform() < 0.3 else 0.0)
                grp.append(-1)
        ptr.append(len(lin))
    problem = DualProblem(
        k=k, var_ptr=ptr, slot1=s1, coef1=c1, slot2=s2, coef2=c2, lin=lin, lo=lo, hi=hi,
        group=grp, cap=np.array(cap),
        kappa=k / (k - 1.0) if structure == "angle" else 1.0,
        equality=structure != "penalized")
    return K, problem


@pytest.mark.parametrize("structure", ["groups", "shifted", "angle", "penalized"])
@pytest.mark.parametrize("seed", range(4))
def test_solver_matches_generic_qp(structure, seed):
    K, problem = _random_problem(seed, structure)
    alpha = problem.clip_feasible(np.zeros(problem.n_vars))
    mu = np.zeros(problem.k)
    src = make_row_source("precomputed", problem.k, K=K)
    U = problem.slot_sums(alpha)
    if np.any(U != 0):
        init_scores(src, np.ascontiguousarray(U))
    _, resid, status, _ = solve(src, problem, alpha, mu, tol=1e-9, max_iter=10 ** 6,
                                   rho=1.0)
    assert status == 0 and resid <= 1e-9
    # feasibility
    lo, hi = problem.expanded_bounds()
    assert np.all(alpha >= lo - 1e-12) and np.all(alpha <= hi + 1e-12)
    if len(problem.cap):
        sums = np.bincount(problem.expand("group"), weights=alpha, minlength=len(problem.cap))
        assert np.all(sums <= problem.cap + 1e-10)
    c = problem.directions().T @ alpha
    if problem.equality:
        assert np.abs(c - c.mean()).max() <= 1e-7 * max(1.0, hi.max())
    # the scores the solver kept equal K U
    np.testing.assert_allclose(src.scores, K @ problem.slot_sums(alpha), atol=1e-9)
    # the optimum
    value = dual_value(K, problem, alpha)
    ref = reference_dual_value(K, problem)
    assert abs(value - ref) <= 1e-6 * max(1.0, abs(ref)), (value, ref)
