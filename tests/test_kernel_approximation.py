"""Approximate kernels (kernel_approximation='nystroem' | 'rff'): the maps, the fits, the errors."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_classification

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, TargetedLocalMSVM,
                  WestonWatkinsMSVM)
from msvm._approx import (FourierMap, NystroemMap, fit_feature_map, kmeanspp_landmarks,
                          nystroem_map)
from msvm._kernels import kernel_matrix
from msvm.exceptions import DegenerateFitWarning
from _estimators import factories, ids

# every public estimator (tests/_estimators.py) and the iterative reweighting
ESTIMATORS = [
    *factories({"TargetedLocalMSVM": dict(kernel="rbf", n_grid=3, bandwidth=2.0)}),
    lambda **kw: AdaptiveWeightedSVM(scheme="iterative", **kw),
]
IDS = [*ids(ESTIMATORS[:-1]), "AdaptiveWeightedSVM-iterative"]
REINFORCED, WESTON_WATKINS, TARGETED = (
    ESTIMATORS[IDS.index(name)]
    for name in ("ReinforcedMSVM", "WestonWatkinsMSVM", "TargetedLocalMSVM"))


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=160, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=0)
    return X[:120], y[:120], X[120:], y[120:]


class _Settings:
    """Estimator parameters with the map's RNG; fit_feature_map reads these attributes."""

    def __init__(self, **kw):
        defaults = dict(kernel_approximation="nystroem", n_components=10, kernel="rbf",
                        degree=3, coef0=1.0, landmarks="uniform", random_state=0)
        for name, value in {**defaults, **kw}.items():
            setattr(self, name, value)


# ----------------------------------------------------------------------------- the maps
@pytest.mark.parametrize("kernel,gamma", [("rbf", 0.3), ("poly", 0.2), ("linear", None),
                                          (lambda A, B: (A @ B.T + 1.0) ** 2, None)])
@pytest.mark.parametrize("landmarks", ["uniform", "kmeans++"])
def test_nystroem_with_every_sample_as_landmark_reproduces_the_kernel(data, kernel, gamma,
                                                                       landmarks):
    X = data[0][:60]
    rng = np.random.default_rng(0)
    phi_map = nystroem_map(X, len(X), kernel, gamma, 3, 1.0, landmarks, rng)
    Phi = phi_map.transform(X)
    K = kernel_matrix(X, X, kernel, gamma, 3, 1.0)
    assert np.abs(Phi @ Phi.T - K).max() <= 1e-8 * max(1.0, np.abs(K).max())


def test_nystroem_drops_the_null_space_of_duplicated_landmarks(data):
    X = np.vstack([data[0][:20], data[0][:20]])
    phi_map = nystroem_map(X, 40, "rbf", 0.3, 3, 0.0, "uniform", np.random.default_rng(0))
    assert phi_map.n_components_ <= 20
    Phi = phi_map.transform(X)
    assert np.abs(Phi @ Phi.T - kernel_matrix(X, X, "rbf", 0.3)).max() < 1e-8


def test_kmeanspp_landmarks_are_distinct_rows():
    X = np.repeat(np.arange(10.0)[:, None], 3, axis=0)     # 10 distinct points, 3 copies each
    idx = kmeanspp_landmarks(X, 10, np.random.default_rng(0))
    assert len(np.unique(X[idx, 0])) == 10
    more = kmeanspp_landmarks(X, 15, np.random.default_rng(0))     # beyond the distinct ones
    assert len(np.unique(more)) == 15


def test_rff_error_decreases_with_n_components(data):
    X = data[0][:80]
    K = kernel_matrix(X, X, "rbf", 0.2)
    errors = []
    for m in (50, 500, 5000):
        est = _Settings(kernel_approximation="rff", n_components=m)
        Phi = fit_feature_map(est, X, 0.2).transform(X)
        errors.append(np.abs(Phi @ Phi.T - K).mean())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.02


def test_maps_are_computed_in_chunks(monkeypatch, data):
    import msvm._products as products

    X = data[0]
    whole = [fit_feature_map(_Settings(kernel_approximation=m, n_components=30), X, 0.3)
             for m in ("nystroem", "rff")]
    W = np.random.default_rng(0).normal(size=(4, 30))
    expected = [(f.transform(X), f.apply(X, W)) for f in whole]
    monkeypatch.setattr(products, "CHUNK_ENTRIES", 7 * 30)             # 7 rows per chunk
    for f, (Phi, out) in zip(whole, expected):
        assert np.allclose(f.transform(X), Phi, rtol=0, atol=1e-12)
        assert np.allclose(f.apply(X, W), out, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- the fits
def test_nystroem_with_all_landmarks_equals_the_exact_fit(data):
    X, y, X_test, _ = data
    exact = WestonWatkinsMSVM(C=1.0, gamma=0.2, tol=1e-8).fit(X, y)
    approx = WestonWatkinsMSVM(C=1.0, gamma=0.2, tol=1e-8, kernel_approximation="nystroem",
                               n_components=len(X), random_state=0).fit(X, y)
    assert isinstance(approx.feature_map_, NystroemMap)
    assert not hasattr(approx, "coef_")
    # the same convex problem (K = Phi Phi^T to 1e-8): decision values to the solver's tol
    assert np.abs(approx.decision_function(X_test) - exact.decision_function(X_test)).max() \
        < 1e-4
    assert approx.objective_ == pytest.approx(exact.objective_, rel=1e-6)


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("method", ["nystroem", "rff"])
def test_every_estimator_fits_and_predicts(data, make, method):
    X, y, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        est = make(kernel_approximation=method, n_components=60, random_state=0).fit(X, y)
    assert est.n_components_ <= 60
    pred = est.predict(X_test)
    assert pred.shape == (len(X_test),)
    assert np.mean(pred == y_test) > 0.6
    assert np.isfinite(est.objective_ if hasattr(est, "objective_") else est.objectives_).all()


@pytest.mark.parametrize("make", ESTIMATORS, ids=IDS)
def test_predict_applies_the_stored_map(data, make):
    X, y, X_test, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        est = make(kernel_approximation="nystroem", n_components=40, random_state=0).fit(X, y)
    G = est.decision_values(X_test)
    Phi = est.feature_map_.transform(X_test if not isinstance(est, TargetedLocalMSVM)
                                     else np.delete(X_test, est.target_index_, axis=1))
    if isinstance(est, TargetedLocalMSVM):
        # at a grid point the local functions are the grid fit's weights on (1, phi)
        Xg = X_test.copy()
        Xg[:, est.target_index_] = est.grid_[1]
        expected = np.hstack([np.ones((len(Phi), 1)), Phi]) @ est.feature_coef_path_[1].T
        assert np.allclose(est.local_functions(Xg), expected, atol=1e-10)
    else:
        expected = est._decision_from_output(Phi @ est.feature_coef_.T + est.intercept_)
        assert np.allclose(G, expected, atol=1e-10)


def test_predict_on_one_sample_equals_predict_on_many(data):
    X, y, X_test, _ = data
    est = ReinforcedMSVM(kernel_approximation="rff", n_components=50, random_state=0).fit(X, y)
    many = est.decision_function(X_test)
    one = np.vstack([est.decision_function(X_test[i:i + 1]) for i in range(5)])
    assert np.allclose(many[:5], one, atol=1e-12)


@pytest.mark.parametrize("method", ["nystroem", "rff"])
def test_same_random_state_same_fit_and_other_state_other_map(data, method):
    X, y, X_test, _ = data
    make = lambda seed: ReinforcedMSVM(kernel_approximation=method, n_components=30,  # noqa
                                       landmarks="kmeans++", random_state=seed).fit(X, y)
    a, b, c = make(0), make(0), make(1)
    assert np.array_equal(a.decision_function(X_test), b.decision_function(X_test))
    assert not np.allclose(a.decision_function(X_test), c.decision_function(X_test))


@pytest.mark.parametrize("method,landmarks", [("nystroem", "uniform"),
                                               ("nystroem", "kmeans++"), ("rff", "uniform")])
@pytest.mark.parametrize("make", [REINFORCED, TARGETED], ids=["reinforced", "targeted"])
def test_sparse_input_equals_dense(data, method, landmarks, make):
    X, y, X_test, _ = data
    X = X.copy()
    X[np.abs(X) < 0.5] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        kw = dict(kernel_approximation=method, n_components=40, landmarks=landmarks,
                  random_state=0, tol=1e-8)
        dense_fit = make(**kw).fit(X, y)
        sparse_fit = make(**kw).fit(sp.csr_matrix(X), y)
    assert np.abs(dense_fit.decision_values(X_test)
                  - sparse_fit.decision_values(sp.csr_matrix(X_test))).max() < 1e-6


def test_sample_weight_and_class_weight(data):
    X, y, X_test, _ = data
    w = np.where(y == 0, 2.0, 1.0)
    kw = dict(kernel_approximation="nystroem", n_components=50, random_state=0, tol=1e-8)
    by_sw = ReinforcedMSVM(**kw).fit(X, y, sample_weight=w)
    by_cw = ReinforcedMSVM(class_weight={0: 2.0}, **kw).fit(X, y)
    plain = ReinforcedMSVM(**kw).fit(X, y)
    assert np.allclose(by_sw.decision_function(X_test), by_cw.decision_function(X_test),
                       atol=1e-6)
    assert not np.allclose(by_sw.decision_function(X_test), plain.decision_function(X_test))


@pytest.mark.parametrize("method", ["nystroem", "rff"])
@pytest.mark.parametrize("make", [WESTON_WATKINS, TARGETED], ids=["ww", "targeted"])
def test_probability(data, method, make):
    X, y, X_test, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        est = make(kernel_approximation=method, n_components=40, random_state=0,
                   probability=True, probability_grid=2).fit(X, y)
    P = est.predict_proba(X_test)
    assert np.allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(est.classes_[P.argmax(axis=1)], est.predict(X_test))
    # every weighted refit uses the same map (same random_state, same training inputs)
    for fit in np.ravel(est.probability_estimators_):
        Z = (np.delete(X_test, est.target_index_, axis=1)
             if isinstance(est, TargetedLocalMSVM) else X_test)
        assert np.array_equal(fit.feature_map_.transform(Z), est.feature_map_.transform(Z))


def test_clone_and_pickle(data):
    X, y, X_test, _ = data
    est = AngleBasedMSVM(kernel_approximation="rff", n_components=25, random_state=0)
    params = clone(est).get_params()
    assert (params["kernel_approximation"], params["n_components"]) == ("rff", 25)
    est.fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    assert isinstance(again.feature_map_, FourierMap)
    assert np.array_equal(again.decision_function(X_test), est.decision_function(X_test))


def test_callable_and_poly_kernels_with_nystroem(data):
    X, y, X_test, y_test = data
    for kernel in ("poly", lambda A, B: kernel_matrix(A, B, "rbf", 0.2)):
        est = ReinforcedMSVM(kernel=kernel, kernel_approximation="nystroem", n_components=30,
                             random_state=0, coef0=1.0).fit(X, y)
        assert est.predict(X_test).shape == y_test.shape


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kernel", ["linear", "poly", lambda A, B: A @ B.T])
def test_rff_with_a_kernel_other_than_rbf_is_refused(data, kernel):
    with pytest.raises(ValueError, match="approximates the 'rbf' kernel only"):
        ReinforcedMSVM(kernel=kernel, kernel_approximation="rff").fit(data[0], data[1])


def test_precomputed_kernel_is_refused(data):
    X, y = data[0], data[1]
    with pytest.raises(ValueError, match="cannot be used with kernel='precomputed'"):
        ReinforcedMSVM(kernel="precomputed", kernel_approximation="nystroem").fit(X @ X.T, y)


@pytest.mark.parametrize("params", [dict(kernel_approximation="exact"),
                                    dict(kernel_approximation="nystroem", n_components=0),
                                    dict(kernel_approximation="nystroem", landmarks="kmeans")])
def test_invalid_parameters(data, params):
    with pytest.raises(ValueError):
        WestonWatkinsMSVM(**params).fit(data[0], data[1])


def test_more_nystroem_components_than_samples_are_clipped_with_a_warning(data):
    X, y = data[0], data[1]
    with pytest.warns(UserWarning, match="n_components=500 is larger than the 120") as record:
        est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=500,
                             random_state=0).fit(X, y)
    assert record[0].filename == __file__
    assert est.n_components_ <= len(X)
    # random Fourier features are not limited by n_samples
    est = ReinforcedMSVM(kernel_approximation="rff", n_components=500, random_state=0).fit(X, y)
    assert est.n_components_ == 500
