"""TargetedLocalMSVM (TLAMSVM, Kang, Lin and Zhang (2019)).

- each local fit equals the weighted angle-based fit with weights C w_i K_h(U_i - u0) and the
  intercept as a penalized constant feature (kernel K + 1), solved by cvxpy, to 1e-6;
- coefficients are interpolated along the grid; predictions use the coefficients at u;
- with a target that carries no information and a very wide bandwidth, it predicts like the
  global AngleBasedMSVM;
- the smoothers are densities; the bandwidth rules; plots; names of DataFrame columns;
- bad input gets a clear error.
"""

import numpy as np
import pytest

import oracle as R
from oracle import kernel_matrix, make_problem
from msvm import AngleBasedMSVM, TargetedLocalMSVM
from msvm.datasets import make_targeted_example
from msvm.targeted import SMOOTHERS, bandwidth_rule, smoothing_weights


def _data(seed=0, n=40, k=3):
    X, y, w = make_problem(700 + seed, n, k, 2)
    U = np.random.default_rng(seed).uniform(size=n)
    return np.column_stack([X[:, 0], U, X[:, 1]]), y, w


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("smoother", ["epanechnikov", "gaussian"])
def test_local_fits_match_reference(kernel, smoother):
    X, y, w = _data()
    est = TargetedLocalMSVM(C=3.0, target=1, smoother=smoother, bandwidth=0.4, n_grid=3,
                            kernel=kernel, gamma=0.8, tol=1e-9, max_iter=10 ** 6)
    est.fit(X, y, sample_weight=w)
    U, Z = X[:, 1], X[:, [0, 2]]
    K = kernel_matrix(Z, Z, kernel, gamma=0.8) + 1.0          # the constant feature
    for g, u0 in enumerate(est.grid_):
        weights = w * smoothing_weights(U, u0, 0.4, smoother)
        V, b, F = R.primal_fit(K, 2, R.cvx_angle_loss(y, weights, 3.0, 0.5, 3),
                               sum_to_zero=False, intercept=False)
        ref = R.penalty(V, K) + 3.0 * R.reinforced_loss(F @ R.vertices(3), y, weights, 0.5)
        assert abs(est.objectives_[g] - ref) <= 1e-6 * max(1.0, ref), (g, est.objectives_[g],
                                                                       ref)
    assert np.all(est.kkt_residuals_ <= 1e-9)


def test_linear_coefficients_and_interpolation():
    X, y, w = _data(1)
    est = TargetedLocalMSVM(C=2.0, target=1, n_grid=4, bandwidth=0.5).fit(X, y)
    assert est.coef_path_.shape == (4, 2, 3)                  # grid x (k-1) x (1 + p)
    mid = 0.5 * (est.grid_[1] + est.grid_[2])
    np.testing.assert_allclose(est.coef_at(mid), 0.5 * (est.coef_path_[1] + est.coef_path_[2]))
    np.testing.assert_allclose(est.coef_at(est.grid_[0] - 5.0), est.coef_path_[0])
    # prediction at (u, x) uses beta(u) on (1, x)
    row = np.array([[0.3, mid, -0.2]])
    f = est.coef_at(mid) @ np.array([1.0, 0.3, -0.2])
    np.testing.assert_allclose(est.local_functions(row)[0], f)
    np.testing.assert_allclose(est.decision_values(row)[0], f @ R.vertices(3), atol=1e-12)


def test_uninformative_target_and_wide_bandwidth_predict_like_the_global_model():
    rng = np.random.default_rng(0)
    Xg, y, _ = make_problem(11, 150, 3, 2, separation=2.0)
    X = np.column_stack([rng.uniform(size=150), Xg])
    h = 100.0
    scale = SMOOTHERS["gaussian"](0.0) / h             # the (nearly constant) local weight
    local = TargetedLocalMSVM(C=1.0 / scale, target=0, smoother="gaussian", bandwidth=h,
                              n_grid=5, kernel="linear", tol=1e-8).fit(X, y)
    glob = AngleBasedMSVM(C=1.0, kernel="linear", tol=1e-8).fit(Xg, y)
    Xt = np.column_stack([rng.uniform(size=500), rng.normal(size=(500, 2)) * 2.0])
    agree = np.mean(local.predict(Xt) == glob.predict(Xt[:, 1:]))
    assert agree >= 0.95


@pytest.mark.parametrize("name", sorted(SMOOTHERS))
def test_smoothers_are_symmetric_densities(name):
    t = np.linspace(-8, 8, 160001)
    K = SMOOTHERS[name](t)
    assert np.all(K >= 0)
    np.testing.assert_allclose(np.trapezoid(K, t), 1.0, atol=1e-4)
    np.testing.assert_allclose(K, SMOOTHERS[name](-t))
    u = np.array([0.1, 0.5])
    np.testing.assert_allclose(smoothing_weights(u, 0.3, 2.0, name),
                               SMOOTHERS[name]((u - 0.3) / 2.0) / 2.0)


def test_bandwidth_rules():
    U = np.random.default_rng(0).normal(size=400)
    sd = U.std(ddof=1)
    iqr = np.subtract(*np.percentile(U, [75, 25]))
    assert bandwidth_rule(U, "scott") == pytest.approx(1.06 * sd * 400 ** -0.2)
    assert bandwidth_rule(U, "silverman") == pytest.approx(0.9 * min(sd, iqr / 1.34) * 400 ** -0.2)


def test_dataframe_target_by_name_and_plots(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from msvm.plotting import inner_products, plot_coef_path, plot_inner_products

    X, y = make_targeted_example(300, "S1", random_state=0)
    df = pd.DataFrame(X, columns=["age", "x1", "x2"])
    by_name = TargetedLocalMSVM(target="age", n_grid=6).fit(df, y)
    by_index = TargetedLocalMSVM(target=0, n_grid=6).fit(X, y)
    np.testing.assert_allclose(by_name.coef_path_, by_index.coef_path_)
    values = inner_products(by_index, X[0, 1:])
    assert values.shape == (6, 3)
    np.testing.assert_allclose(values.sum(axis=1), 0.0, atol=1e-10)
    fig, (a, b) = plt.subplots(1, 2)
    plot_coef_path(by_index, ax=a)
    plot_inner_products(by_index, X[0, 1:], ax=b)
    assert len(a.lines) == 2 * 3 and len(b.lines) == 3
    fig.savefig(tmp_path / "paths.png")
    plt.close(fig)


@pytest.mark.parametrize("kwargs,match", [
    (dict(target=5), "out of range"),
    (dict(target="age"), "column name"),
    (dict(bandwidth=0.0), "bandwidth"),
    (dict(bandwidth=-1.0), "bandwidth"),
    (dict(smoother="cosine"), "smoother"),
    (dict(n_grid=0), "n_grid"),
])
def test_bad_input(kwargs, match):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=match):
        TargetedLocalMSVM(**kwargs).fit(X, y)


def test_constant_target_is_refused():
    X, y, _ = _data()
    X[:, 1] = 0.5
    with pytest.raises(ValueError, match="constant"):
        TargetedLocalMSVM(target=1).fit(X, y)


# ---------------------------------------------------------------------- sparse input
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_gives_the_dense_fit(kernel, fmt):
    import scipy.sparse as sp

    from msvm.datasets import make_reinforced_example

    X, y = make_reinforced_example(80, random_state=5)
    U = np.random.default_rng(5).uniform(0, 1, (len(X), 1))
    XU = np.hstack([U, X])
    XU[XU[:, 2] < 0, 2] = 0.0                      # some structural zeros
    S = sp.csr_matrix(XU) if fmt == "csr" else sp.csc_matrix(XU)
    params = dict(n_grid=4, kernel=kernel, gamma=0.5, tol=1e-12, max_iter=100000,
                  random_state=0)
    dense_fit = TargetedLocalMSVM(**params).fit(XU, y)
    sparse_fit = TargetedLocalMSVM(**params).fit(S, y)
    assert TargetedLocalMSVM().__sklearn_tags__().input_tags.sparse
    np.testing.assert_allclose(sparse_fit.grid_, dense_fit.grid_, rtol=0, atol=1e-15)
    for Xp in (XU, S):
        np.testing.assert_allclose(sparse_fit.decision_values(Xp), dense_fit.decision_values(XU),
                                   rtol=0, atol=1e-8)


@pytest.mark.parametrize("kwargs", [{"kernel": "linear"},
                                    {"kernel": "rbf", "kernel_approximation": "rff",
                                     "n_components": 20, "random_state": 0},
                                    {"kernel": "rbf"}])
def test_support_is_the_samples_with_a_nonzero_dual_variable(kwargs):
    """support_ on every path (the linear and approximate fits had none): the samples with a
    nonzero dual variable at some grid point."""
    X, y, w = _data(1)
    est = TargetedLocalMSVM(C=2.0, target=1, n_grid=4, bandwidth=0.5, **kwargs).fit(X, y)
    alphas = est._warm_start_state().alphas
    expected = np.flatnonzero(np.any(np.abs(alphas).reshape(len(alphas), len(y), -1) > 0,
                                     axis=(0, 2)))
    assert len(expected) > 0
    np.testing.assert_array_equal(est.support_, expected)
