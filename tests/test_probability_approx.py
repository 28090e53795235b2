"""probability=True on the approximate-kernel path: the feature map is fitted once per X."""

import numpy as np
import pytest
from sklearn.base import clone

from msvm import ReinforcedMSVM
from msvm import _approx, _base, _probability
from msvm.datasets import make_reinforced_example


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(90, random_state=0)
    X_test, _ = make_reinforced_example(60, random_state=1)
    return X, y, X_test


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_feature_map_is_fitted_once_per_training_inputs(data, approximation, monkeypatch):
    """A probability fit fits the feature map once for the full X and once for each refitted
    calibration fold's training part (their own fits), not once per chain or top fit; every
    weighted fit of the full X holds the estimator's own map."""
    X, y, _ = data
    calls = []
    real = _approx.fit_feature_map

    def counted(estimator, X, gamma, check_scale=True):
        calls.append(X.shape[0])
        return real(estimator, X, gamma, check_scale)

    monkeypatch.setattr(_base, "fit_feature_map", counted)
    est = ReinforcedMSVM(kernel_approximation=approximation, n_components=30, random_state=0,
                         probability=True, probability_grid=2, C=3.0).fit(X, y)
    n_train = 2 * len(y) // 3
    assert sorted(calls) == [n_train] * _probability.REFITTED_FOLDS + [len(y)]
    for chain in est.probability_estimators_:
        assert all(fit.feature_map_ is est.feature_map_ for fit in chain)
        assert all(not hasattr(fit, "_feature_state") for fit in chain)   # not kept


@pytest.mark.parametrize("random_state", [0, np.random.RandomState(3)])
def test_shared_feature_map_leaves_the_probabilities_unchanged(data, random_state,
                                                               monkeypatch):
    """With the map shared by the chains of the same X, the probabilities equal those with
    a map fitted in every chain (as before): the map is a function of X and its seed.  A
    RandomState instance gives each clone its own copy, whose key differs: then the map is
    fitted in every chain as before, and the result is the same too."""
    X, y, X_test = data
    est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=30,
                         random_state=random_state, probability=True, probability_grid=2,
                         C=3.0)
    shared = clone(est).fit(X, y).predict_proba(X_test)
    monkeypatch.setattr(_probability._ChainRunner, "_shared_features",
                        lambda self, tasks: [()] * len(tasks))
    np.testing.assert_array_equal(clone(est).fit(X, y).predict_proba(X_test), shared)


def test_a_state_of_other_inputs_is_not_reused(data):
    """A shared feature state serves only fits on the inputs it was made from: a refit on
    other rows fits its own map."""
    X, y, _ = data
    est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=30, random_state=0)
    est.fit(X, y)
    state = est._kept_feature_state(X)
    np.testing.assert_array_equal(state[2], est.feature_map_.transform(X, dtype=np.float32))
    refit = clone(est).set_params(warm_start=True)._join_path(keep_rows=True)
    refit._share_features(state).fit(X[:-7], y[:-7])
    assert refit.feature_map_ is not est.feature_map_
    refit._leave_path()
    other = clone(est).set_params(warm_start=True)._join_path(keep_rows=True)
    other._share_features(state).fit(X, y)
    assert other.feature_map_ is est.feature_map_
    assert ReinforcedMSVM().fit(X, y)._kept_feature_state(X) is None    # exact kernel


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_shared_map_scoring_maps_each_input_once(data, approximation, monkeypatch):
    """``predict_proba`` on the approximate path maps X once for the own fit and all its
    weighted fits (they share its feature map), not once per fit: phi is computed for one
    block of rows per call, where each of the 1 + k m fits used to map X itself."""
    X, y, X_test = data
    est = ReinforcedMSVM(kernel_approximation=approximation, n_components=30, random_state=0,
                         probability=True, probability_grid=2, C=3.0).fit(X, y)
    blocks = []
    real = type(est.feature_map_)._block

    def counted(self, rows):
        blocks.append(rows.shape[0])
        return real(self, rows)

    monkeypatch.setattr(type(est.feature_map_), "_block", counted)
    est.predict_proba(X_test)
    assert blocks == [len(X_test)]


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_shared_map_scoring_leaves_the_probabilities_unchanged(data, approximation,
                                                               monkeypatch):
    """Scoring the held-out and new inputs through one phi(X) for all the fits that share a
    feature map gives exactly the probabilities of scoring each fit by its own
    ``decision_values`` (the same blocks of rows, the same products), in the fit (the
    calibration folds' held-out ratios) and in ``predict_proba``."""
    X, y, X_test = data
    est = ReinforcedMSVM(kernel_approximation=approximation, n_components=30, random_state=0,
                         probability=True, probability_grid=3, C=3.0)
    shared = clone(est).fit(X, y)
    monkeypatch.setattr(_probability, "_mapped_ratios", lambda *args: None)
    separate = clone(est).fit(X, y)
    np.testing.assert_array_equal(shared.predict_proba(X_test), separate.predict_proba(X_test))
    assert shared.probability_exponent_ == separate.probability_exponent_
    monkeypatch.undo()
    np.testing.assert_array_equal(shared.predict_proba(X_test), separate.predict_proba(X_test))


def test_shared_map_decision_values_are_each_fits_own(data):
    """``shared_map_decision_values`` gives, block by block, each fit's ``decision_values``
    bit for bit, and None for fits whose feature maps differ (or an exact-kernel fit)."""
    X, y, X_test = data
    params = dict(kernel_approximation="nystroem", n_components=30, random_state=0)
    a = ReinforcedMSVM(C=1.0, **params).fit(X, y)
    b = clone(a).set_params(C=5.0)._join_path(keep_rows=True)
    b._share_features(a._kept_feature_state(X)).fit(X, y)
    b._leave_path()
    assert b.feature_map_ is a.feature_map_
    blocks = list(_approx.shared_map_decision_values([a, b], X_test))
    for est, index in ((a, 0), (b, 1)):
        values = np.vstack([v[index] for _, v in blocks])
        np.testing.assert_array_equal(values, est.decision_values(X_test))
    other = ReinforcedMSVM(**params).fit(X[:-5], y[:-5])
    assert _approx.shared_map_decision_values([a, other], X_test) is None
    assert _approx.shared_map_decision_values([ReinforcedMSVM().fit(X, y)], X_test) is None
