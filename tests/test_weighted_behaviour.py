"""Behaviour of the utility-weighted and robust models that the papers describe, and their
input validation.

- cost to utility conversion (Liu, Wu and He 2011 section 3.3) and its equivalence (9): on any
  probability vector the prediction of least expected cost is the one of largest expected
  utility;
- Liu, Wu and He (2011) Example 1: as a grows, U_{1,a} shrinks the region predicted as class 1 and
  grows class 2's; U_{2,a} shrinks class 1's in favour of classes 2 and 3; U_{3,a} grows class 1's;
- Wu and Liu's (2007) contaminated unit disc: the truncated model keeps fewer support vectors than
  the untruncated one (median over seeds);
- AdaptiveWeightedSVM: one-step weights 1 / (1 + |u|); for k = 2 the model is the binary
  weighted SVM, i.e. scikit-learn's SVC with C' = 2 C on f = f_2 - f_1;
- bad input gets an error naming the problem.
"""

import numpy as np
import pytest
from sklearn.svm import SVC

from msvm import AdaptiveWeightedSVM, RobustMSVM, WeightedRobustMSVM, WestonWatkinsMSVM
from msvm.datasets import make_disc_example, make_utility_example, utility_matrix
from msvm.weighted import cost_to_utility, margins


def test_cost_to_utility_and_equivalence_9():
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        cost = rng.uniform(0, 5, (k, k)) * (rng.uniform(size=(k, k)) < 0.8)
        np.fill_diagonal(cost, 0.0)
        U = cost_to_utility(cost)
        np.testing.assert_allclose(U, cost.max() - cost)
        assert np.all(U >= 0) and np.all(np.diag(U) == cost.max())
        p = rng.dirichlet(np.ones(k))
        expected_cost, expected_utility = p @ cost, p @ U
        np.testing.assert_allclose(expected_utility, cost.max() - expected_cost)
        assert np.argmin(expected_cost) == np.argmax(expected_utility)


def test_cost_argument_is_the_converted_utility():
    X, y = make_utility_example(150, random_state=1)
    cost = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [3.0, 1.0, 0.0]])
    a = WeightedRobustMSVM(cost=cost, kernel="linear", truncation=None, tol=1e-8).fit(X, y)
    b = WeightedRobustMSVM(utility=cost_to_utility(cost), kernel="linear", truncation=None,
                           tol=1e-8).fit(X, y)
    np.testing.assert_allclose(a.utility_, b.utility_)
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-12)


def _shares(kind, a, X, y, grid):
    est = WeightedRobustMSVM(C=1.0 / (len(y) * 1e-2), utility=utility_matrix(kind, a),
                             kernel="linear", tol=1e-4)
    pred = est.fit(X, y).predict(grid)
    return np.bincount(pred, minlength=3) / len(grid)


def test_utility_matrices_move_the_regions_as_seed_000_example_1():
    X, y = make_utility_example(600, random_state=0)
    g = np.linspace(-2.5, 2.5, 41)
    grid = np.array([(u, v) for u in g for v in g])
    s = {kind: np.array([_shares(kind, a, X, y, grid) for a in (0.0, 0.4, 0.8)])
         for kind in (1, 2, 3)}
    # U_{1,a}: class 1 (index 0) shrinks, class 2 grows
    assert np.all(np.diff(s[1][:, 0]) < 0) and np.all(np.diff(s[1][:, 1]) > 0)
    # U_{2,a}: class 1 shrinks, classes 2 and 3 grow
    assert np.all(np.diff(s[2][:, 0]) < 0)
    assert s[2][-1, 1] > s[2][0, 1] and s[2][-1, 2] > s[2][0, 2]
    # U_{3,a}: class 1 grows, classes 2 and 3 shrink
    assert np.all(np.diff(s[3][:, 0]) > 0)
    assert s[3][-1, 1] < s[3][0, 1] and s[3][-1, 2] < s[3][0, 2]


def test_truncation_keeps_fewer_support_vectors_on_the_contaminated_disc():
    untruncated, truncated = [], []
    for seed in range(5):
        X, y, _ = make_disc_example(200, contamination=0.2, random_state=seed)
        params = dict(C=1.0 / (200 * 1e-2), kernel="rbf", gamma=2.0)
        untruncated.append(len(RobustMSVM(truncation=None, **params).fit(X, y).support_))
        truncated.append(len(RobustMSVM(truncation=1.0, **params).fit(X, y).support_))
    assert np.median(truncated) < np.median(untruncated)


def test_one_step_weights():
    X, y, _ = make_disc_example(120, contamination=0.1, random_state=3)
    est = AdaptiveWeightedSVM(scheme="one-step", kernel="rbf", gamma=2.0, tol=1e-8)
    first = WeightedRobustMSVM(truncation=None, kernel="rbf", gamma=2.0, tol=1e-8).fit(X, y)
    u = margins(first.decision_values(X))[np.arange(len(y)), y]
    est.fit(X, y)
    np.testing.assert_allclose(est.adaptive_weights_, 1.0 / (1.0 + np.abs(u)), atol=1e-6)
    assert est.n_iter_ == 2


def test_binary_adaptive_model_is_the_weighted_svc():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2)) + np.repeat([[1.5, 0.0], [-1.5, 0.0]], 30, axis=0)
    y = np.repeat([0, 1], 30)
    w = rng.uniform(0.5, 2.0, 60)
    ours = WeightedRobustMSVM(C=0.7, truncation=None, kernel="linear", tol=1e-9)
    ours.fit(X, y, sample_weight=w)
    svc = SVC(C=1.4, kernel="linear", tol=1e-10).fit(X, y, sample_weight=w)
    f = ours.decision_values(X)
    # f = (f_1, f_2) with f_1 = -f_2; the binary function is f_2 - f_1
    np.testing.assert_allclose(f[:, 1] - f[:, 0], svc.decision_function(X), atol=1e-5)


# ------------------------------------------------------------------ bad input
@pytest.fixture
def data():
    X, y = make_utility_example(60, random_state=0)
    return X, y


@pytest.mark.parametrize("kwargs,match", [
    (dict(utility=np.eye(2)), "utility must be a k x k matrix"),
    (dict(utility=-np.eye(3)), "utility must be nonnegative"),
    (dict(utility=np.full((3, 3), np.nan)), "utility contains NaN"),
    (dict(utility=np.zeros((3, 3))), "row of zeros"),
    (dict(utility=np.eye(3), cost=1 - np.eye(3)), "either utility or cost"),
    (dict(cost=np.ones((3, 3))), "zero diagonal"),
    (dict(cost=np.zeros((3, 3))), "zero everywhere"),
    (dict(truncation=0.5), "truncation"),
])
def test_weighted_bad_input(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        WeightedRobustMSVM(**kwargs).fit(*data)


@pytest.mark.parametrize("est,match", [
    (RobustMSVM(truncation=-1.0), "truncation"),
    (RobustMSVM(dc_tol=-1.0), "dc_tol"),
    (RobustMSVM(max_dc_iter=-1), "max_dc_iter"),
    (AdaptiveWeightedSVM(scheme="two-step"), "scheme"),
    (AdaptiveWeightedSVM(truncation=0.3), "truncation"),
    (AdaptiveWeightedSVM(max_reweight=0), "max_reweight"),
])
def test_parameter_errors(data, est, match):
    with pytest.raises(ValueError, match=match):
        est.fit(*data)


@pytest.mark.parametrize("cls", [RobustMSVM, WeightedRobustMSVM, AdaptiveWeightedSVM,
                                 WestonWatkinsMSVM])
def test_one_class_and_nan_are_refused(cls):
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="at least 2 classes"):
        cls().fit(X, np.zeros(10))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls().fit(X, np.arange(10) % 2)
