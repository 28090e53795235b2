"""Sanity checks of the test oracle itself (the oracle package); msvm is not imported here.

The reference QP is trusted because it reproduces three things derived independently:

1. k = 2: the reinforced loss is g [1 - f_y]_+ + (1-g) [1 + f_other]_+ with f_other = -f_y,
   i.e. the binary hinge [1 - t f(x)]_+ (t = +-1, f = f_1 = -f_0) for every g. The penalty is
   1/2 (||h_0||^2 + ||h_1||^2) = ||h||^2, so the objective is twice the binary SVM objective
   1/2 ||h||^2 + (C/2) sum_i w_i [1 - t_i f(x_i)]_+ : SVC(C=C/2) with the same sample weights.
2. Linear kernel: the same problem written in weight space (W of shape d x k with W 1 = 0,
   penalty 1/2 ||W||_F^2), solved as a different cvxpy program.
3. Weak duality: the multipliers of the hinge constraints, put into the Lagrange dual, give a
   lower bound within 1e-9 of the primal value.
"""

import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel as sk_linear
from sklearn.metrics.pairwise import polynomial_kernel as sk_poly
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf
from sklearn.svm import SVC

from oracle import (
    dual_objective,
    hinge_margins,
    kernel_matrix,
    loss_weights,
    make_problem,
    reference_fit,
    reinforced_objective,
    resolve_gamma,
    signed_dual,
)


def test_objective_by_hand():
    # k = 3, one sample of class 0 with F = (0.5, -0.2, -0.3), w = 2, C = 1.5, g = 0.25:
    # own hinge [2 - 0.5]_+ = 1.5, other hinges [1 - 0.2]_+ = 0.8 and [1 - 0.3]_+ = 0.7;
    # loss = 0.25 * 1.5 + 0.75 * (0.8 + 0.7) = 1.5; objective = 1.5 * 2 * 1.5 + penalty.
    F = np.array([[0.5, -0.2, -0.3]])
    assert reinforced_objective(F, [0], [2.0], 1.5, 0.25, 0.7) == pytest.approx(4.5 + 0.7)
    # Inactive hinges contribute nothing: F = (3, -1.5, -1.5) has every margin <= 0.
    F = np.array([[3.0, -1.5, -1.5]])
    assert reinforced_objective(F, [0], [1.0], 1.0, 0.5, 0.0) == 0.0
    np.testing.assert_allclose(hinge_margins(F, [0]), [[-1.0, -0.5, -0.5]])


def test_kernels_match_sklearn():
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((7, 3)), rng.standard_normal((5, 3))
    np.testing.assert_allclose(kernel_matrix(A, B, "linear"), sk_linear(A, B), rtol=1e-12)
    np.testing.assert_allclose(
        kernel_matrix(A, B, "poly", gamma=0.3, degree=3, coef0=0.7),
        sk_poly(A, B, gamma=0.3, degree=3, coef0=0.7),
        rtol=1e-12,
    )
    np.testing.assert_allclose(kernel_matrix(A, B, "rbf", gamma=0.3), sk_rbf(A, B, gamma=0.3),
                               rtol=1e-12)
    X = rng.standard_normal((20, 4)) * 3.0
    assert resolve_gamma("scale", X) == pytest.approx(1.0 / (4 * X.var()))
    assert resolve_gamma("auto", X) == 0.25
    y = np.array([0, 1] * 10)
    d = [np.linalg.norm(X[i] - X[j]) for i in range(20) for j in range(i + 1, 20) if y[i] != y[j]]
    assert resolve_gamma("median", X, y) == pytest.approx(1.0 / (2 * np.median(d) ** 2))


@pytest.mark.parametrize("seed", range(6))
def test_binary_case_is_svc(seed):
    rng = np.random.default_rng(seed)
    kernel = ["rbf", "linear", "poly"][seed % 3]
    X, y, w = make_problem(seed, 40, 2, 3, weights="random")
    C = float(np.exp(rng.uniform(np.log(0.05), np.log(20.0))))
    K = kernel_matrix(X, X, kernel, gamma=0.5, degree=2, coef0=1.0)
    g = rng.uniform()
    obj, V, b, F = reference_fit(K, y, w, C, g)

    svc = SVC(C=C / 2, kernel="precomputed", tol=1e-12, max_iter=10**7)
    svc.fit(K, y, sample_weight=w)
    fs = svc.decision_function(K)  # > 0 means class 1, so fs plays f_1 = -f_0
    dc, sv = svc.dual_coef_[0], svc.support_
    t = np.where(y == 1, 1.0, -1.0)
    obj_svc = 0.5 * dc @ K[np.ix_(sv, sv)] @ dc + C / 2 * np.sum(w * np.maximum(1 - t * fs, 0))

    # libsvm's own stopping rule limits this comparison to ~1e-6; the reference must never be
    # worse than libsvm's solution by more than its own accuracy.
    assert abs(obj - 2 * obj_svc) <= 2e-6 * max(1.0, obj)
    assert obj <= 2 * obj_svc + 1e-9 * max(1.0, obj)
    scale = max(1.0, np.abs(fs).max())
    np.testing.assert_allclose(F[:, 1], fs, atol=1e-5 * scale)
    np.testing.assert_allclose(F[:, 0], -fs, atol=1e-5 * scale)
    # k = 2: the reinforcement does not change the problem.
    obj_other_g, *_ = reference_fit(K, y, w, C, 1.0 - g)
    assert obj_other_g == pytest.approx(obj, rel=1e-8)


def _weight_space_fit(X, y, w, C, g, k):
    """The linear-kernel problem over W (d x k) directly: an independent cvxpy formulation."""
    import cvxpy as cp

    n, d = X.shape
    W = cp.Variable((d, k))
    b = cp.Variable(k)
    F = X @ W + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
    onehot = np.eye(k)[y]
    f_own = cp.sum(cp.multiply(onehot, F), axis=1)
    loss = g * cp.pos((k - 1) - f_own) + (1 - g) * cp.sum(
        cp.multiply(1 - onehot, cp.pos(1 + F)), axis=1
    )
    prob = cp.Problem(
        cp.Minimize(0.5 * cp.sum_squares(W) + C * (w @ loss)),
        [cp.sum(W, axis=1) == 0, cp.sum(b) == 0],
    )
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    Wv = W.value - W.value.mean(axis=1, keepdims=True)
    bv = b.value - b.value.mean()
    return reinforced_objective(X @ Wv + bv, y, w, C, g, 0.5 * np.sum(Wv**2))


@pytest.mark.parametrize("seed", range(6))
def test_linear_case_matches_weight_space(seed):
    rng = np.random.default_rng(100 + seed)
    k = 3 + seed % 3
    X, y, w = make_problem(seed, 45, k, 4, weights=["random", "zeros", "integers"][seed % 3])
    C = float(np.exp(rng.uniform(np.log(0.05), np.log(20.0))))
    g = [0.0, 1.0, rng.uniform()][seed % 3]
    obj, V, b, F = reference_fit(kernel_matrix(X, X, "linear"), y, w, C, g)
    obj_w = _weight_space_fit(X, y, w, C, g, k)
    assert obj == pytest.approx(obj_w, rel=1e-8, abs=1e-10)
    np.testing.assert_allclose(F.sum(axis=1), 0.0, atol=1e-9 * max(1.0, np.abs(F).max()))


@pytest.mark.parametrize("seed", range(9))
def test_reference_duality_gap(seed):
    rng = np.random.default_rng(200 + seed)
    k = 2 + seed % 4
    kernel = ["linear", "poly", "rbf"][seed % 3]
    X, y, w = make_problem(seed, 50, k, 4, weights=["random", "zeros", "ones"][seed % 3])
    C = float(np.exp(rng.uniform(np.log(0.05), np.log(50.0))))
    g = rng.uniform()
    K = kernel_matrix(X, X, kernel, gamma=0.4, degree=3, coef0=1.0)
    obj, V, b, F, alpha = reference_fit(K, y, w, C, g, return_dual=True)
    U = loss_weights(y, k, w, C, g)
    assert np.all(alpha >= -1e-9 * U.max()) and np.all(alpha <= U * (1 + 1e-9) + 1e-12)
    alpha = np.clip(alpha, 0.0, U)
    D, spread = dual_objective(K, y, alpha)
    assert spread <= 1e-8 * U.max()
    assert -1e-9 * max(1.0, obj) <= obj - D <= 1e-8 * max(1.0, obj)
    # Stationarity in h: the fitted function is the centred expansion in the multipliers.
    c = signed_dual(alpha, y)
    ct = c - c.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(K @ ct, F - b, atol=1e-6 * max(1.0, np.abs(F).max()))
