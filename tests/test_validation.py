"""Bad inputs raise ValueError with a message naming the problem."""

import numpy as np
import pytest

from msvm import ReinforcedMSVM


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 2))
    y = np.array([0, 1, 2] * 4)
    return X, y


def test_one_class(data):
    X, _ = data
    with pytest.raises(ValueError, match="class"):
        ReinforcedMSVM().fit(X, np.zeros(len(X), dtype=int))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_inf_in_X(data, bad):
    X, y = data
    X = X.copy()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity|inf"):
        ReinforcedMSVM().fit(X, y)


def test_nan_in_X_at_predict(data):
    X, y = data
    est = ReinforcedMSVM(tol=1e-3).fit(X, y)
    X = X.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN|infinity|inf"):
        est.predict(X)


def test_len_X_differs_from_len_y(data):
    X, y = data
    with pytest.raises(ValueError, match="inconsistent|samples|length"):
        ReinforcedMSVM().fit(X, y[:-1])


def test_sample_weight_wrong_length(data):
    X, y = data
    with pytest.raises(ValueError, match="sample_weight"):
        ReinforcedMSVM().fit(X, y, sample_weight=np.ones(len(y) + 1))


def test_negative_sample_weight(data):
    X, y = data
    w = np.ones(len(y))
    w[4] = -0.5
    with pytest.raises(ValueError, match="sample_weight|[Nn]egative"):
        ReinforcedMSVM().fit(X, y, sample_weight=w)


@pytest.mark.parametrize("g", [-0.1, 1.1, np.nan])
def test_reinforcement_outside_unit_interval(data, g):
    X, y = data
    with pytest.raises(ValueError, match="reinforcement"):
        ReinforcedMSVM(reinforcement=g).fit(X, y)


@pytest.mark.parametrize("C", [0.0, -1.0])
def test_nonpositive_C(data, C):
    X, y = data
    with pytest.raises(ValueError, match=r"\bC\b"):
        ReinforcedMSVM(C=C).fit(X, y)


def test_precomputed_kernel_not_square(data):
    X, y = data
    K = X @ np.vstack([X, X[:3]]).T  # 12 x 15
    with pytest.raises(ValueError, match="square"):
        ReinforcedMSVM(kernel="precomputed").fit(K, y)


def test_predict_wrong_number_of_features(data):
    X, y = data
    est = ReinforcedMSVM(tol=1e-3).fit(X, y)
    X3 = np.hstack([X, X[:, :1]])
    msg = "X has 3 features, but ReinforcedMSVM is expecting 2 features as input"
    for method in (est.predict, est.decision_function):
        with pytest.raises(ValueError, match=msg):
            method(X3)
    with pytest.raises(ValueError, match="features"):
        est.score(X3, y)


def test_precomputed_predict_wrong_number_of_columns(data):
    X, y = data
    est = ReinforcedMSVM(kernel="precomputed", tol=1e-3).fit(X @ X.T, y)
    with pytest.raises(ValueError, match="features|samples|columns|shape"):
        est.predict(X[:5] @ X[:-1].T)


@pytest.mark.parametrize("gamma", [0.0, -1.0, "bogus"])
def test_bad_gamma(data, gamma):
    X, y = data
    with pytest.raises(ValueError, match="gamma"):
        ReinforcedMSVM(gamma=gamma).fit(X, y)


def test_bad_kernel_name(data):
    X, y = data
    with pytest.raises(ValueError, match="kernel"):
        ReinforcedMSVM(kernel="sigmoidal").fit(X, y)
