"""``fit`` is one template of named steps (BaseMSVM.fit), for every estimator.

- the steps run in order, each once per fit: parameter validation, the model's own fit
  (``_fit_model``), and the probability step only when ``probability=True``;
- a subclass that overrides ``fit`` and calls ``super().fit`` gets the probability step once,
  not once per level of ``fit`` (no hidden wrapping of subclass methods);
- an interruption inside the probability step leaves the estimator unfitted, as one inside
  the model's fit does;
- TargetedLocalMSVM's fit is the same template.
"""

import warnings
from unittest import mock

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from msvm import ReinforcedMSVM, TargetedLocalMSVM, WestonWatkinsMSVM
from msvm._base import BaseMSVM
from msvm._probability import ProbabilityMixin
from msvm.datasets import make_reinforced_example


@pytest.fixture(scope="module")
def data():
    return make_reinforced_example(45, random_state=1)


def _recording(calls, model=BaseMSVM):
    """Spies on the template's steps that append their names to ``calls`` (``model``: the
    class whose ``_fit_model`` is the model step)."""
    steps = {"_validate_params": BaseMSVM, "_fit_model": model,
             "_fit_probability": ProbabilityMixin}
    patches = []
    for name, owner in steps.items():
        real = getattr(owner, name)

        def spy(self, *args, _real=real, _name=name, **kwargs):
            calls.append(_name)
            return _real(self, *args, **kwargs)

        patches.append(mock.patch.object(owner, name, spy))
    return patches


@pytest.mark.parametrize("probability", [False, True])
def test_fit_runs_each_named_step_once_in_order(data, probability):
    X, y = data
    calls = []
    patches = _recording(calls)
    for p in patches:
        p.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            WestonWatkinsMSVM(probability=probability, probability_grid=2).fit(X, y)
    finally:
        for p in patches:
            p.stop()
    if not probability:
        assert calls == ["_validate_params", "_fit_model"]
    else:
        # the weighted fits of the probability step (copies with probability=False) run
        # the model step alone after the step has begun (lean refits, BaseMSVM._refit: the
        # parameters were validated once, by this fit)
        assert calls[:3] == ["_validate_params", "_fit_model", "_fit_probability"]
        assert calls.count("_fit_probability") == 1
        assert set(calls[3:]) == {"_fit_model"}


def test_a_subclass_fit_gets_the_probability_step_once(data):
    X, y = data

    class Subclassed(ReinforcedMSVM):
        def fit(self, X, y, sample_weight=None):
            self.subclass_fits_ = getattr(self, "subclass_fits_", 0) + 1
            return super().fit(X, y, sample_weight=sample_weight)

    real = ProbabilityMixin._fit_probability
    counted = []

    def counting(self, *args, **kwargs):
        counted.append(type(self))
        return real(self, *args, **kwargs)

    with mock.patch.object(ProbabilityMixin, "_fit_probability", counting), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Subclassed(probability=True, probability_grid=2).fit(X, y)
    assert counted == [Subclassed]
    assert est.predict_proba(X).shape == (len(y), 3)


@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(probability=True, probability_grid=2),
    lambda: TargetedLocalMSVM(n_grid=3, probability=True, probability_grid=2),
], ids=["reinforced", "targeted"])
def test_interrupt_in_the_probability_step_leaves_the_estimator_unfitted(data, make):
    X, y = data
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    check_is_fitted(est, "probability_estimators_")

    def interrupted(self, *args, **kwargs):
        assert hasattr(self, "classes_")             # the model step has run
        raise KeyboardInterrupt

    with mock.patch.object(ProbabilityMixin, "_fit_probability", interrupted):
        with pytest.raises(KeyboardInterrupt):
            est.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    assert not [name for name in vars(est) if name.endswith("_")]
    assert est._warm_start_state() is None


def test_targeted_fit_is_the_template(data):
    X, y = data
    assert "fit" not in vars(ProbabilityMixin) and "__init_subclass__" not in vars(
        ProbabilityMixin)
    calls = []
    patches = _recording(calls, model=TargetedLocalMSVM)
    for p in patches:
        p.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            TargetedLocalMSVM(n_grid=3).fit(np.column_stack([X, y * 0.1 + X[:, 0]]), y)
    finally:
        for p in patches:
            p.stop()
    assert calls == ["_validate_params", "_fit_model"]
