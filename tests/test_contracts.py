"""Input contracts and the fitted state: malformed inputs are refused by name, and a fit that
fails leaves the estimator unfitted.

- TuningSetSearch: sample_weight of the wrong length or shape is refused; sample_weight reaches
  the inner fits through scikit-learn's metadata routing; mixed-type labels get the estimators'
  ValueError; a DataFrame reaches the inner fits (feature names checked at predict);
- a 2-D sample_weight is refused with a message giving the expected and received shapes;
- a callable kernel that ignores its second argument is refused at fit;
- a fit that raises, or is interrupted, leaves the estimator unfitted.
"""

import re
import warnings
from unittest import mock

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score
from sklearn.utils.validation import check_is_fitted

import msvm._base
import msvm._sequence
from msvm import ReinforcedMSVM, TargetedLocalMSVM
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, lambda_grid
from _estimators import factories


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(60, random_state=0)
    w = np.random.default_rng(0).uniform(0.1, 3.0, len(y))
    return X, y, w


def _search(inner=None, **kwargs):
    inner = ReinforcedMSVM(kernel="linear", tol=1e-8) if inner is None else inner
    return TuningSetSearch(inner, lambdas=lambda_grid(-4, 2), random_state=0, **kwargs)


# ---------------------------------------------------------------------- sample_weight
@pytest.mark.parametrize("length", [59, 61])
@pytest.mark.parametrize("tuning_set", [False, True])
def test_tuning_set_search_refuses_sample_weight_of_the_wrong_length(data, length, tuning_set):
    X, y, _ = data
    tune = dict(X_tune=X, y_tune=y) if tuning_set else {}
    with pytest.raises(ValueError, match=re.escape(
            f"sample_weight must be a 1-D array of length n_samples = 60; got shape "
            f"({length},)")):
        _search().fit(X, y, sample_weight=np.ones(length), **tune)


@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(), lambda: TargetedLocalMSVM(), lambda: _search()])
def test_two_dimensional_sample_weight_message(data, make):
    X, y, _ = data
    X = np.column_stack([X, X[:, 0]])           # TargetedLocalMSVM: a target and 2 more columns
    with pytest.raises(ValueError, match=re.escape(
            "sample_weight must be a 1-D array of length n_samples = 60; got shape (60, 1)")):
        make().fit(X, y, sample_weight=np.ones((60, 1)))


def test_sample_weight_reaches_the_inner_fits_through_metadata_routing(data):
    X, y, w = data

    def routed():
        inner = ReinforcedMSVM(kernel="linear", tol=1e-8).set_fit_request(sample_weight=True)
        return (_search(inner).set_fit_request(sample_weight=True)
                .set_score_request(sample_weight=False))

    with sklearn.config_context(enable_metadata_routing=True):
        weighted = cross_val_score(routed(), X, y, params={"sample_weight": w}, cv=3)
        plain = cross_val_score(routed(), X, y, cv=3)
        fitted = routed().fit(X, y, sample_weight=w)
        with pytest.raises(Exception, match="set_fit_request"):
            # the inner estimator has not requested the weights
            _search().set_fit_request(sample_weight=True).fit(X, y, sample_weight=w)
    # routing off: sample_weight is passed to the inner fits as before
    explicit = cross_val_score(_search(), X, y, params={"sample_weight": w}, cv=3)
    direct = _search().fit(X, y, sample_weight=w)
    unweighted = _search().fit(X, y)
    assert not np.array_equal(weighted, plain)
    np.testing.assert_array_equal(weighted, explicit)
    assert fitted.best_estimator_.objective_ == pytest.approx(direct.best_estimator_.objective_,
                                                              rel=1e-9)
    assert fitted.best_estimator_.objective_ != pytest.approx(
        unweighted.best_estimator_.objective_, rel=1e-3)
    routing = _search().get_metadata_routing()
    assert "estimator" in repr(routing)


# ---------------------------------------------------------------------- labels
def test_tuning_set_search_mixed_type_labels_get_the_estimators_error(data):
    X, _, _ = data
    y = np.array([1, "a", 2] * 20, dtype=object)
    with pytest.raises(ValueError) as expected:
        ReinforcedMSVM().fit(X, y)
    with pytest.raises(ValueError, match=re.escape(str(expected.value))):
        _search().fit(X, y)
    # a mixed tuning set: the same error, naming y_tune
    with pytest.raises(ValueError, match=re.escape("y_tune" + str(expected.value)[1:])):
        _search().fit(X, np.arange(60) % 3, X_tune=X, y_tune=y)


# ---------------------------------------------------------------------- callable kernels
@pytest.mark.parametrize("make", [lambda k: ReinforcedMSVM(kernel=k),
                                  lambda k: TargetedLocalMSVM(kernel=k)])
def test_callable_kernel_that_ignores_its_second_argument_is_refused_at_fit(data, make):
    X, y, _ = data
    X = np.column_stack([X, X[:, 0] ** 2])
    with pytest.raises(ValueError, match=re.escape(
            "returned shape (2, 2), expected (2, 3)")):
        make(lambda A, B: A @ A.T).fit(X, y)
    # a proper callable kernel fits and predicts like the named one
    est = make(lambda A, B: A @ B.T).fit(X, y)
    ref = make("linear").fit(X, y)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))


# ---------------------------------------------------------------------- data frames
def test_tuning_set_search_keeps_feature_names(data):
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    df = pd.DataFrame(X, columns=["a", "b"])
    search = _search().fit(df, y)
    np.testing.assert_array_equal(search.feature_names_in_, ["a", "b"])
    np.testing.assert_array_equal(search.best_estimator_.feature_names_in_, ["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search.predict(df)
        search.decision_function(df)
    with pytest.raises(ValueError, match="feature names should match"):
        search.predict(df.rename(columns={"a": "z"}))


# ---------------------------------------------------------------------- left unfitted
def _fitted_state(est):
    return sorted(name for name in vars(est)
                  if (name.endswith("_") and not name.startswith("__"))
                  or name in ("_warm_state", "_rho", "_seed"))


def _interrupted_on_call(n):
    """A stand-in for the compiled solve: the n-th call raises KeyboardInterrupt."""
    real = msvm._sequence.solve
    calls = []

    def solve(*args, **kwargs):
        calls.append(1)
        if len(calls) == n:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    return solve


# every public estimator (tests/_estimators.py), interrupted at the nth solve of its fit: in
# the middle of the DC loop, the reweighting or the grid where it has one
_INTERRUPTED_AT = {"RobustMSVM": 2, "WeightedRobustMSVM": 2, "AdaptiveWeightedSVM": 2,
                   "TargetedLocalMSVM": 3}
_INTERRUPTED = factories({"RobustMSVM": dict(C=5.0),
                          "AdaptiveWeightedSVM": dict(warm_start=False),
                          # a warm refit on the same data takes every grid point's fit as
                          # it is (msvm.targeted._SolvedGrid): no solve to interrupt
                          "TargetedLocalMSVM": dict(n_grid=4, warm_start=False)},
                         warm_start=True)


@pytest.mark.parametrize("make,nth", [
    *((make, _INTERRUPTED_AT.get(make.__name__, 1)) for make in _INTERRUPTED),
    (lambda: _search(), 4),                                          # along the lambda path
], ids=[*(make.__name__ for make in _INTERRUPTED), "tuning-search"])
def test_interrupted_fit_leaves_the_estimator_unfitted(data, make, nth):
    X, y, _ = data
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    check_is_fitted(est)
    assert _fitted_state(est)
    with mock.patch.object(msvm._sequence, "solve", _interrupted_on_call(nth)):
        with pytest.raises(KeyboardInterrupt):
            est.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    assert _fitted_state(est) == []
    with pytest.raises(NotFittedError):
        est.predict(X)
    # it fits again, from scratch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    check_is_fitted(est)


@pytest.mark.parametrize("make", [lambda: ReinforcedMSVM(), lambda: TargetedLocalMSVM(),
                                  lambda: _search()])
def test_fit_that_raises_on_bad_input_leaves_the_estimator_unfitted(data, make):
    X, y, _ = data
    est = make().fit(X, y)
    X_bad = X.copy()
    X_bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        est.fit(X_bad, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    assert _fitted_state(est) == []


# ---------------------------------------------------------------------- parameters
def test_init_stores_exactly_the_arguments():
    import inspect

    import msvm as package

    for name in package.__all__:
        cls = getattr(package, name)
        if not (inspect.isclass(cls) and issubclass(cls, msvm._base.BaseMSVM)):
            continue
        signature = inspect.signature(cls.__init__)
        defaults = {p: v.default for p, v in signature.parameters.items() if p != "self"}
        assert cls().get_params() == defaults, name
        marker = object()
        est = cls(C=marker, random_state=marker)
        assert est.C is marker and est.random_state is marker
        assert set(vars(est)) == set(defaults), name
