"""AngleBasedMSVM against an independent cvxpy reference, and its simplex geometry.

- objective_ equals the reference optimum of the angle-based primal (k - 1 functions, no
  sum-to-zero, unpenalized intercepts) to 1e-6 relative, on random small problems;
- the simplex has unit vertices at equal angles (pairwise inner products -1/(k-1)) summing
  to zero;
- relabelling the classes only permutes the decision values (the regular simplex is
  symmetric under any permutation of its vertices).
"""

import numpy as np
import pytest

import oracle as R
from oracle import kernel_matrix, make_problem
from msvm import AngleBasedMSVM
from msvm.angle import simplex_vertices


@pytest.mark.parametrize("k", range(2, 8))
def test_simplex_geometry(k):
    W = simplex_vertices(k)
    np.testing.assert_allclose(W, R.vertices(k), atol=1e-14)
    G = W.T @ W
    np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-12)
    off = G[~np.eye(k, dtype=bool)]
    np.testing.assert_allclose(off, -1.0 / (k - 1), atol=1e-12)
    np.testing.assert_allclose(W.sum(axis=1), 0.0, atol=1e-12)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("seed", range(4))
def test_angle_based_matches_reference(seed, kernel):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    X, y, w = make_problem(900 + seed, int(rng.integers(3 * k, 40)), k, 3,
                           weights=["random", "zeros", "ones", "integers"][seed])
    C = float(np.exp(rng.uniform(np.log(0.1), np.log(10))))
    g = float(rng.uniform())
    params = dict(kernel=kernel, gamma=0.7, degree=2, coef0=1.0)
    est = AngleBasedMSVM(C=C, reinforcement=g, tol=1e-8, max_iter=10 ** 6, **params)
    est.fit(X, y, sample_weight=w)
    K = kernel_matrix(X, X, kernel, gamma=0.7, degree=2, coef0=1.0)
    V, b, F = R.primal_fit(K, k - 1, R.cvx_angle_loss(y, w, C, g, k), sum_to_zero=False)
    ref = R.penalty(V, K) + C * R.reinforced_loss(F @ R.vertices(k), y, w, g)
    assert abs(est.objective_ - ref) <= 1e-6 * max(1.0, abs(ref)), (est.objective_, ref)
    # objective_ is the formula at the fitted function (k - 1 functions in f space)
    G = est.decision_values(X)
    sv = est.support_
    pen = 0.5 * float(np.einsum("qs,st,qt->", est.dual_coef_, K[np.ix_(sv, sv)], est.dual_coef_))
    assert est.objective_ == pytest.approx(pen + C * R.reinforced_loss(G, y, w, g), rel=1e-9)
    np.testing.assert_allclose(G, (K[:, sv] @ est.dual_coef_.T + est.intercept_) @ R.vertices(k),
                               atol=1e-8)
    assert est.dual_coef_.shape[0] == k - 1 and est.intercept_.shape == (k - 1,)
    if kernel == "linear":
        assert est.coef_.shape == (k - 1, X.shape[1])


def test_relabelling_only_permutes():
    X, y, w = make_problem(3, 45, 4, 2)
    perm = np.array([2, 0, 3, 1])
    a = AngleBasedMSVM(C=2.0, kernel="rbf", gamma=0.5, tol=1e-9).fit(X, y, sample_weight=w)
    b = AngleBasedMSVM(C=2.0, kernel="rbf", gamma=0.5, tol=1e-9).fit(X, perm[y],
                                                                     sample_weight=w)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-7)
    np.testing.assert_allclose(b.decision_values(X)[:, perm], a.decision_values(X), atol=1e-5)
    np.testing.assert_array_equal(perm[a.predict(X)], b.predict(X))
