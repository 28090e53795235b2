"""Invariances of ReinforcedMSVM fits and the scikit-learn workflow around them.

The optimum of the objective is unique in h (1-strongly convex penalty), so two fits of
equivalent problems at tol=1e-8 must give the same objective (to OBJ_RTOL, the accuracy also
demanded against the reference QP) and decision values close to DEC_ATOL (times the scale of
the decision values). The problems are random, with free support vectors, so the intercepts
are unique as well.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from oracle import kernel_matrix, make_problem, rbf_kernel, resolve_gamma
from msvm import ReinforcedMSVM

TOL = 1e-8
OBJ_RTOL = 1e-6
DEC_ATOL = 1e-5


def _problem(seed=0, n=40, k=3, d=3, weights="random"):
    return make_problem(seed, n, k, d, weights=weights, separation=1.5)


def _fit(X, y, w=None, **params):
    params.setdefault("tol", TOL)
    params.setdefault("max_iter", 1_000_000)
    params.setdefault("random_state", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return ReinforcedMSVM(**params).fit(X, y, sample_weight=w)


def _same_objective(a, b):
    assert abs(a - b) <= OBJ_RTOL * max(1.0, abs(a), abs(b)), (a, b, a - b)


def _same_decision(F1, F2):
    scale = max(1.0, np.abs(F1).max())
    np.testing.assert_allclose(F1, F2, rtol=0, atol=DEC_ATOL * scale)


KERNELS = [
    dict(kernel="linear"),
    dict(kernel="rbf", gamma=0.5),
    dict(kernel="poly", gamma=0.5, degree=2, coef0=1.0),
]


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
@pytest.mark.parametrize("g", [0.0, 0.3, 1.0])
def test_weight_two_equals_duplicated_row(params, g):
    X, y, w = _problem(1, weights="ones")
    rows = [0, 5, 11]
    w2 = w.copy()
    w2[rows] = 2.0
    est_w = _fit(X, y, w2, reinforcement=g, **params)
    Xd = np.vstack([X, X[rows]])
    yd = np.concatenate([y, y[rows]])
    est_d = _fit(Xd, yd, reinforcement=g, **params)
    _same_objective(est_w.objective_, est_d.objective_)
    _same_decision(est_w.decision_values(X), est_d.decision_values(X))


@pytest.mark.parametrize("params", KERNELS[:2], ids=lambda p: p["kernel"])
def test_zero_weight_equals_dropped_row(params):
    X, y, w = _problem(2)
    w[[3, 7]] = 0.0
    keep = w > 0
    est_0 = _fit(X, y, w, **params)
    est_drop = _fit(X[keep], y[keep], w[keep], **params)
    _same_objective(est_0.objective_, est_drop.objective_)
    _same_decision(est_0.decision_values(X), est_drop.decision_values(X))
    assert not np.isin([3, 7], est_0.support_).any()


def test_weight_scaling_equals_c_scaling():
    X, y, w = _problem(3)
    est_a = _fit(X, y, 3.0 * w, C=0.5, kernel="rbf", gamma=0.5)
    est_b = _fit(X, y, w, C=1.5, kernel="rbf", gamma=0.5)
    _same_objective(est_a.objective_, est_b.objective_)
    _same_decision(est_a.decision_values(X), est_b.decision_values(X))


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
def test_row_permutation(params):
    X, y, w = _problem(4, k=4)
    perm = np.random.default_rng(0).permutation(len(y))
    est = _fit(X, y, w, **params)
    est_p = _fit(X[perm], y[perm], w[perm], **params)
    _same_objective(est.objective_, est_p.objective_)
    _same_decision(est.decision_values(X), est_p.decision_values(X))


@pytest.mark.parametrize(
    "labels",
    [np.array([7, 3, 5]), np.array(["cat", "ant", "bee"]), np.array([10, -1, 0])],
    ids=["unsorted-int", "str", "negative-int"],
)
def test_relabelling_classes(labels):
    X, y, w = _problem(5, k=3)
    est = _fit(X, y, w, kernel="rbf", gamma=0.5, reinforcement=0.4)
    yl = labels[y]
    est_l = _fit(X, yl, w, kernel="rbf", gamma=0.5, reinforcement=0.4)
    np.testing.assert_array_equal(est_l.classes_, np.sort(labels))
    # column of label labels[c] in est_l is column c of est
    cols = np.searchsorted(est_l.classes_, labels)
    _same_objective(est.objective_, est_l.objective_)
    _same_decision(est.decision_values(X), est_l.decision_values(X)[:, cols])
    np.testing.assert_array_equal(est_l.predict(X), labels[est.predict(X)])
    assert est_l.score(X, yl) == est.score(X, y)


@pytest.mark.parametrize(
    "params",
    [dict(kernel="rbf", gamma=0.7), dict(kernel="poly", gamma=0.4, degree=3, coef0=0.5)],
    ids=["rbf", "poly"],
)
def test_precomputed_equals_on_the_fly(params):
    X, y, w = _problem(6, n=45)
    rng = np.random.default_rng(1)
    Xt = rng.standard_normal((15, X.shape[1]))
    est = _fit(X, y, w, **params)
    gram = lambda A, B: kernel_matrix(A, B, params["kernel"], gamma=params["gamma"],  # noqa: E731
                                      degree=params.get("degree", 3), coef0=params.get("coef0", 0))
    est_pre = _fit(gram(X, X), y, w, kernel="precomputed")
    assert est_pre.gamma_ is None
    _same_objective(est.objective_, est_pre.objective_)
    _same_decision(est.decision_values(X), est_pre.decision_values(gram(X, X)))
    Ft = est_pre.decision_values(gram(Xt, X))
    _same_decision(est.decision_values(Xt), Ft)
    np.testing.assert_array_equal(est_pre.predict(gram(Xt, X)), est.predict(Xt))
    # dual_coef_ expands over the training rows est_pre.support_
    Ks = gram(Xt, X)[:, est_pre.support_]
    np.testing.assert_allclose(Ft, Ks @ est_pre.dual_coef_.T + est_pre.intercept_, rtol=0,
                               atol=1e-9 * max(1.0, np.abs(Ft).max()))


def _my_rbf(A, B):
    return rbf_kernel(A, B, 0.8)


def test_callable_kernel_equals_named():
    X, y, w = _problem(7)
    est = _fit(X, y, w, kernel="rbf", gamma=0.8)
    est_c = _fit(X, y, w, kernel=_my_rbf)
    assert est_c.gamma_ is None
    _same_objective(est.objective_, est_c.objective_)
    _same_decision(est.decision_values(X), est_c.decision_values(X))
    Xt = np.random.default_rng(2).standard_normal((10, X.shape[1]))
    _same_decision(est.decision_values(Xt), est_c.decision_values(Xt))
    np.testing.assert_array_equal(est_c.predict(Xt), est.predict(Xt))


@pytest.mark.parametrize("gamma", ["scale", "auto", "median", 0.37])
def test_gamma_resolution(gamma):
    X, y, w = _problem(8)
    X = 2.5 * X
    est = _fit(X, y, w, kernel="rbf", gamma=gamma, tol=1e-3)
    assert est.gamma_ == pytest.approx(resolve_gamma(gamma, X, y), rel=1e-12)
    assert _fit(X, y, kernel="linear", tol=1e-3).gamma_ is None


@pytest.mark.parametrize("params", KERNELS[:2], ids=lambda p: p["kernel"])
def test_warm_start_from_optimum_returns_at_once(params):
    X, y, w = _problem(9)
    est = ReinforcedMSVM(warm_start=True, tol=TOL, max_iter=1_000_000, random_state=0, **params)
    est.fit(X, y, sample_weight=w)
    obj, alpha = est.objective_, est.alpha_.copy()
    est.fit(X, y, sample_weight=w)
    assert est.n_iter_ <= 2
    _same_objective(obj, est.objective_)
    scale = np.abs(alpha).max()
    np.testing.assert_allclose(est.alpha_, alpha, rtol=0, atol=1e-6 * scale)


def test_warm_start_along_c_path_reaches_cold_solution():
    X, y, w = _problem(10)
    warm = ReinforcedMSVM(warm_start=True, tol=TOL, max_iter=1_000_000, kernel="rbf", gamma=0.5,
                          random_state=0)
    for C in [0.1, 1.0, 10.0]:
        warm.set_params(C=C).fit(X, y, sample_weight=w)
        cold = _fit(X, y, w, C=C, kernel="rbf", gamma=0.5)
        assert warm.kkt_residual_ <= TOL
        _same_objective(warm.objective_, cold.objective_)
        _same_decision(warm.decision_values(X), cold.decision_values(X))


def test_max_iter_raises_convergence_warning():
    X, y, w = _problem(11, n=60)
    with pytest.warns(ConvergenceWarning):
        est = ReinforcedMSVM(max_iter=1, tol=1e-12, random_state=0).fit(X, y, sample_weight=w)
    assert est.n_iter_ <= 1
    assert est.kkt_residual_ > 1e-12


@pytest.mark.parametrize("params", KERNELS[:2], ids=lambda p: p["kernel"])
def test_deterministic_for_fixed_random_state(params):
    X, y, w = _problem(12)
    a = ReinforcedMSVM(random_state=3, tol=1e-4, **params).fit(X, y, sample_weight=w)
    b = ReinforcedMSVM(random_state=3, tol=1e-4, **params).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    np.testing.assert_array_equal(a.decision_values(X), b.decision_values(X))
    assert a.n_iter_ == b.n_iter_
    assert a.objective_ == b.objective_


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
def test_pickle_round_trip(params):
    X, y, w = _problem(13)
    est = _fit(X, y, w, tol=1e-4, **params)
    est2 = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(est2.decision_values(X), est.decision_values(X))
    np.testing.assert_array_equal(est2.predict(X), est.predict(X))
    for attr in ["classes_", "intercept_", "dual_coef_", "support_", "alpha_"]:
        np.testing.assert_array_equal(getattr(est2, attr), getattr(est, attr))
    assert est2.objective_ == est.objective_


def test_pipeline_and_grid_search():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = X * np.array([1.0, 10.0, 100.0, 0.1])  # badly scaled features: the scaler matters
    pipe = make_pipeline(StandardScaler(), ReinforcedMSVM(tol=1e-4))
    pipe.fit(X, y)
    assert isinstance(pipe, Pipeline)
    assert pipe.score(X, y) >= 0.9
    assert pipe.decision_function(X).shape == (150, 3)
    search = GridSearchCV(pipe, {"reinforcedmsvm__C": [0.01, 1.0, 100.0]}, cv=3)
    search.fit(X, y)
    assert search.best_params_["reinforcedmsvm__C"] in (0.01, 1.0, 100.0)
    assert search.best_score_ >= 0.85
    assert search.score(X, y) >= 0.9


@pytest.mark.parametrize("params", KERNELS, ids=lambda p: p["kernel"])
def test_fitted_attributes(params):
    X, y, w = _problem(14, n=30, k=4, d=3)
    est = _fit(X, y, w, tol=1e-4, **params)
    n, k, d = 30, 4, 3
    np.testing.assert_array_equal(est.classes_, np.arange(k))
    assert est.n_features_in_ == d
    assert est.intercept_.shape == (k,)
    assert est.alpha_.shape == (n, k)
    assert est.dual_coef_.shape == (k, len(est.support_))
    if params["kernel"] == "linear":
        assert not hasattr(est, "support_vectors_")      # X[support_] gives them
    else:
        assert est.support_vectors_.shape == (len(est.support_), d)
        np.testing.assert_array_equal(est.support_vectors_, X[est.support_])
    assert est.n_support_.shape == (k,) and est.n_support_.sum() == len(est.support_)
    assert np.all(np.diff(est.support_) > 0) and est.support_.min() >= 0 and est.support_.max() < n
    assert isinstance(est.n_iter_, (int, np.integer)) and est.n_iter_ >= 1
    assert np.isfinite(est.objective_) and est.kkt_residual_ <= 1e-4
    if params["kernel"] == "linear":
        assert est.coef_.shape == (k, d)
        assert est.gamma_ is None
    else:
        assert not hasattr(est, "coef_")
        assert est.gamma_ == params["gamma"]


@pytest.mark.parametrize("params", KERNELS[:2], ids=lambda p: p["kernel"])
def test_decision_function_conventions(params):
    # k > 2: decision_function is the (n, k) matrix of f_j; k = 2: scikit-learn's binary
    # convention, the (n,) values of f_1 = -f_0 (positive exactly when classes_[1] wins).
    X, y, w = _problem(15, k=3)
    est = _fit(X, y, w, tol=1e-4, **params)
    np.testing.assert_array_equal(est.decision_function(X), est.decision_values(X))
    yb = np.where(y == 0, "no", "yes")
    est = _fit(X, yb, w, tol=1e-4, **params)
    G = est.decision_values(X)
    f = est.decision_function(X)
    assert G.shape == (len(X), 2) and f.shape == (len(X),)
    np.testing.assert_array_equal(f, G[:, 1])
    np.testing.assert_allclose(G[:, 0], -G[:, 1], rtol=0, atol=1e-8 * max(1, np.abs(G).max()))
    np.testing.assert_array_equal(est.predict(X), est.classes_[(f > 0).astype(int)])
