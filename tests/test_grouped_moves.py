"""The grouped finishing step at n = 4,000 (issue 23 item 1, round 13): its face solved on
the moves that keep the active caps (msvm._grouped_face.MoveFace), its releases in batches
and its proposal where the budgets run out (msvm/_finish_groups.py).

- MoveFace gives the step of GroupedFace (a multiplier row per active cap) on the same face,
  freshly factored and bordered with changes of the free set and the caps;
- where its budgets run out, the step proposes the point of its last check, feasible and
  with a lower dual objective than its start (before: None, and the solver went on from its
  own iterate: make_blobs n = 4,000, RBF, C = 1e6 stopped at max_iter after 499 s);
- (slow) WeightedRobustMSVM(truncation=None) on make_blobs n = 4,000, RBF, C = 1e6
  converges with no ConvergenceWarning (about 20 s CPU).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

import msvm._finish_groups as finish_groups
from msvm import WeightedRobustMSVM
from msvm._core._solver import GramRows, solve
from msvm._finish import _Columns, _Layout, _slot_basis
from msvm._grouped_face import GroupedFace, MoveFace
from msvm._problem import margin_problem
from oracle import kernel_matrix

from _large_c import dual_objective


def _blobs(n, k=3):
    return make_blobs(n, 3, centers=k, cluster_std=2.0, random_state=0)


def _faces(n, k, seed):
    """A margin dual on n blobs of k classes (RBF, identity utility: one group of k - 1
    variables per sample, a face QP that is not singular), both faces on it, and a random
    face: free variables (sorted) and active caps among their groups."""
    X, y = _blobs(n, k)
    K = kernel_matrix(X, X, "rbf", gamma=1.0 / (3 * X.var()))
    problem = margin_problem(y, k, 1e3 * np.ones(n), np.eye(k))
    lay, group_of = _Layout(problem), problem.expand("group")
    D, E = lay.directions(np.arange(problem.n_vars)), _slot_basis(k)
    faces = [Face(lay, _Columns(lambda s: K[:, s], n), E, group_of, D)
             for Face in (GroupedFace, MoveFace)]
    rng = np.random.default_rng(seed)
    free = np.sort(rng.choice(problem.n_vars, size=problem.n_vars // 3, replace=False))
    groups = np.unique(group_of[free])
    caps = np.sort(rng.choice(groups, size=len(groups) // 2, replace=False))
    return faces, free, caps, rng, E, group_of, D


def _check_same_step(faces, free, caps, rng, E, group_of, D):
    z, c_eq = rng.normal(size=len(free)), rng.normal(size=E.shape[1])
    (x0, s0), (x1, s1) = (face.solve(free, z, c_eq, caps) for face in faces)
    scale = np.abs(x0).max()
    assert np.abs(x1 - x0).max() <= 1e-6 * scale
    assert np.abs(s1 - s0).max() <= 1e-6 * np.abs(s0).max()
    # the moves keep every active cap's sum and meet the equalities
    in_cap = np.isin(group_of[free], caps)
    sums = np.bincount(group_of[free][in_cap], weights=x1[in_cap], minlength=group_of.max() + 1)
    assert np.abs(sums).max() <= 1e-9 * scale
    assert np.allclose((D[free] @ E).T @ x1, -c_eq, atol=1e-9 * scale)


@pytest.mark.parametrize("k", [3, 4])
def test_moves_give_the_face_step_fresh_and_bordered(k):
    """On 60 blobs, a random face (a third of the variables free, half of their groups'
    caps active): the same step and shift from both faces, fresh and after bordering the
    base with variables freed and fixed and caps made active and released."""
    faces, free, caps, rng, E, group_of, D = _faces(60, k, 0)
    _check_same_step(faces, free, caps, rng, E, group_of, D)
    n_vars = len(group_of)
    for _ in range(4):
        out = rng.choice(free, size=3, replace=False)
        new = rng.choice(np.setdiff1d(np.arange(n_vars), free), size=3, replace=False)
        free = np.sort(np.union1d(np.setdiff1d(free, out), new))
        groups = np.unique(group_of[free])
        flip = rng.choice(groups, size=2, replace=False)
        caps = np.sort(np.intersect1d(np.setxor1d(caps, flip), groups))
        _check_same_step(faces, free, caps, rng, E, group_of, D)
    assert faces[1].extra, "the last step was not bordered"


def test_the_last_checked_point_is_proposed_where_the_budget_runs_out(monkeypatch):
    """make_blobs n = 400, RBF, C = 1e8, from the solver's iterate after 100 epochs (48 free
    variables), with 30 steps, too few to settle the face (it takes about 60): the step
    proposes a point inside the boxes and caps whose dual objective is below the start's
    (before, and with RETURN_REACHED off: None)."""
    X, y = _blobs(400)
    k, C = 3, 1e8
    K = np.ascontiguousarray(kernel_matrix(X, X, "rbf", gamma=1.0 / (3 * X.var())))
    problem = margin_problem(y, k, C * np.ones(len(y)), np.eye(k))
    src = GramRows(K, k)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(k)
    solve(src, problem, alpha, mu, max_iter=100)
    monkeypatch.setattr(finish_groups, "MAX_STEPS", 30)
    found = finish_groups.finish_grouped(problem, alpha.copy(), np.array(src.scores),
                                         lambda s: K[:, s], 1e-3, np.diag(K).copy())
    assert found is not None
    a = found[0]
    lo, hi = problem.expanded_bounds()
    assert np.all(a >= lo) and np.all(a <= hi)
    sums = np.bincount(problem.expand("group"), weights=a, minlength=len(problem.cap))
    assert np.all(sums <= problem.cap * (1 + 1e-12))
    dual = dual_objective(problem, K)
    assert dual(a) < dual(alpha)


@pytest.mark.slow
def test_weighted_robust_converges_at_n_4000_C_1e6():
    """make_blobs n = 4,000, RBF, C = 1e6 (before: max_iter after 499 s CPU): the fit
    converges with no ConvergenceWarning."""
    X, y = _blobs(4000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = WeightedRobustMSVM(C=1e6, kernel="rbf", truncation=None).fit(X, y)
    assert est.converged_
