"""class_weight: a fit with class weights equals the fit with the corresponding sample weights."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.class_weight import compute_class_weight

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  TargetedLocalMSVM, WestonWatkinsMSVM)
from msvm.model_selection import TuningSetSearch, lambda_grid
from _estimators import configured

TIGHT = dict(tol=1e-9, max_iter=100000)

# every public estimator (tests/_estimators.py), then the other kernel or scheme of two
ESTIMATORS = [
    *configured({"ReinforcedMSVM": dict(kernel="linear"),
                 "RobustMSVM": dict(kernel="linear", dc_tol=1e-12),
                 "WeightedRobustMSVM": dict(kernel="rbf", dc_tol=1e-12),
                 "AdaptiveWeightedSVM": dict(kernel="linear"),
                 "WestonWatkinsMSVM": dict(kernel="linear"),
                 "AngleBasedMSVM": dict(kernel="rbf"),
                 "TargetedLocalMSVM": dict(n_grid=4, bandwidth=1.5)}, **TIGHT),
    ReinforcedMSVM(kernel="rbf", **TIGHT),
    AdaptiveWeightedSVM(kernel="linear", scheme="iterative", **TIGHT),
]
IDS = [f"{type(e).__name__}-{e.kernel}" + (f"-{e.scheme}" if hasattr(e, "scheme") else "")
       for e in ESTIMATORS]

LABELS = np.array([3, 7, 9])        # labels that are not the encoded 0..k-1


def _data(seed=0):
    rng = np.random.default_rng(seed)
    counts = [30, 15, 8]                # imbalanced, so 'balanced' is not uniform
    y = np.repeat(LABELS, counts)
    centres = np.array([[0.0, 0.0, 0.0], [2.0, 0.5, 1.0], [0.5, 2.0, -1.0]])
    X = rng.normal(size=(len(y), 3)) + np.repeat(centres, counts, axis=0)
    perm = rng.permutation(len(y))
    return X[perm], y[perm]


def _expected_weights(class_weight, y):
    """Per-sample class weights computed without msvm."""
    classes = np.unique(y)
    if class_weight == "balanced":
        table = dict(zip(classes, compute_class_weight("balanced", classes=classes, y=y)))
    else:
        table = {c: class_weight.get(c, 1.0) for c in classes}
    return np.array([table[label] for label in y], dtype=np.float64)


def _decision(est, X):
    if isinstance(est, TargetedLocalMSVM):
        return est.local_functions(X)
    return est.decision_values(X)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=IDS)
@pytest.mark.parametrize("class_weight", ["balanced", {3: 0.5, 9: 2.5}],
                         ids=["balanced", "dict"])
@pytest.mark.parametrize("with_sample_weight", [False, True], ids=["no_sw", "sw"])
def test_class_weight_equals_sample_weight(estimator, class_weight, with_sample_weight):
    X, y = _data()
    user_sw = (np.random.default_rng(1).uniform(0.2, 2.0, len(y)) if with_sample_weight
               else None)
    expected = _expected_weights(class_weight, y)
    if user_sw is not None:
        expected = expected * user_sw          # they multiply
    with_cw = clone(estimator).set_params(class_weight=class_weight).fit(
        X, y, sample_weight=user_sw)
    with_sw = clone(estimator).fit(X, y, sample_weight=expected)
    np.testing.assert_allclose(_decision(with_cw, X), _decision(with_sw, X), rtol=0,
                               atol=1e-8)
    if hasattr(with_sw, "objective_"):
        np.testing.assert_allclose(with_cw.objective_, with_sw.objective_, rtol=1e-10)
    # and it is not a no-op: the unweighted fit differs
    plain = clone(estimator).fit(X, y, sample_weight=user_sw)
    assert np.max(np.abs(_decision(plain, X) - _decision(with_cw, X))) > 1e-6


def test_class_weight_none_is_unweighted():
    X, y = _data()
    a = ReinforcedMSVM(kernel="linear", class_weight=None, **TIGHT).fit(X, y)
    b = ReinforcedMSVM(kernel="linear", class_weight={}, **TIGHT).fit(X, y)
    c = ReinforcedMSVM(kernel="linear", **TIGHT).fit(X, y)
    np.testing.assert_array_equal(a.decision_values(X), c.decision_values(X))
    np.testing.assert_array_equal(b.decision_values(X), c.decision_values(X))


def test_class_weight_string_labels():
    X, y = _data()
    names = np.array(["cat", "dog", "eel"])[np.searchsorted(LABELS, y)]
    with_cw = ReinforcedMSVM(kernel="linear", class_weight={"dog": 3.0}, **TIGHT).fit(X, names)
    with_sw = ReinforcedMSVM(kernel="linear", **TIGHT).fit(
        X, names, sample_weight=np.where(names == "dog", 3.0, 1.0))
    np.testing.assert_allclose(with_cw.decision_values(X), with_sw.decision_values(X),
                               atol=1e-8)


def test_class_weight_zero_class_follows_sample_weight_rules():
    X, y = _data()
    # one class weighted to zero: the same as zero sample weights for it
    with_cw = ReinforcedMSVM(kernel="linear", class_weight={9: 0.0}, **TIGHT).fit(X, y)
    with_sw = ReinforcedMSVM(kernel="linear", **TIGHT).fit(
        X, y, sample_weight=np.where(y == 9, 0.0, 1.0))
    np.testing.assert_allclose(with_cw.decision_values(X), with_sw.decision_values(X),
                               atol=1e-8)
    # every class but one weighted to zero: a classifier needs two weighted classes
    with pytest.raises(ValueError, match="one class only"):
        ReinforcedMSVM(class_weight={3: 0, 7: 0}).fit(X, y)
    with pytest.raises(ValueError, match="zero for every sample"):
        ReinforcedMSVM(class_weight={3: 0, 7: 0, 9: 0}).fit(X, y)
    # zero sample weights of some classes times class weights of the others
    with pytest.raises(ValueError, match="zero for every sample"):
        ReinforcedMSVM(class_weight={3: 0, 7: 0}).fit(
            X, y, sample_weight=np.where(y == 9, 0.0, 1.0))


@pytest.mark.parametrize("class_weight, message", [
    ({3: 1.0, 5: 2.0, "x": 1.0}, r"not classes of y: 5, 'x'"),
    ({3: -1.0}, r"class_weight\[3\] must be finite and nonnegative"),
    ({7: np.nan}, r"class_weight\[7\] must be finite and nonnegative"),
    ({9: np.inf}, r"class_weight\[9\] must be finite and nonnegative"),
    ({9: "heavy"}, r"class_weight\[9\] must be a number"),
])
@pytest.mark.parametrize("Estimator", [ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM])
def test_bad_class_weight_raises(Estimator, class_weight, message):
    X, y = _data()
    est = Estimator(class_weight=class_weight)
    with pytest.raises(ValueError, match=message):
        est.fit(X, y)
    assert not hasattr(est, "classes_")          # a fit that raises leaves it unfitted


@pytest.mark.parametrize("class_weight", ["uniform", [1.0, 2.0, 3.0], 2.0])
def test_class_weight_type_is_validated(class_weight):
    X, y = _data()
    with pytest.raises(ValueError, match="class_weight"):
        WestonWatkinsMSVM(class_weight=class_weight).fit(X, y)


def test_class_weight_is_a_parameter():
    est = AngleBasedMSVM(class_weight={3: 2.0})
    assert est.get_params()["class_weight"] == {3: 2.0}
    assert clone(est).class_weight == {3: 2.0}
    assert "class_weight" in TuningSetSearch(est).get_params()["estimator"].get_params()


def test_tuning_set_search_passes_class_weight_through():
    X, y = _data(0)
    X_tune, y_tune = _data(1)
    lambdas = lambda_grid(-6, 0)
    search_cw = TuningSetSearch(
        ReinforcedMSVM(kernel="linear", class_weight="balanced", **TIGHT),
        lambdas=lambdas, refit=False).fit(X, y, X_tune=X_tune, y_tune=y_tune)
    search_sw = TuningSetSearch(ReinforcedMSVM(kernel="linear", **TIGHT), lambdas=lambdas,
                                refit=False).fit(
        X, y, X_tune=X_tune, y_tune=y_tune, sample_weight=_expected_weights("balanced", y))
    assert search_cw.best_estimator_.class_weight == "balanced"
    np.testing.assert_allclose(search_cw.results_["score"], search_sw.results_["score"])
    assert search_cw.best_lambda_ == search_sw.best_lambda_
    np.testing.assert_allclose(search_cw.decision_function(X_tune),
                               search_sw.decision_function(X_tune), atol=1e-8)
