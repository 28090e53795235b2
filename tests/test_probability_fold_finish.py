"""A calibration fold's fits take their first exact finishing step later (issue 25 item 1).

On kernel rows the fits of a calibration fold (its own fit, top fits and chains) run
``msvm._plan.FOLD_FINISH_AFTER`` epochs before the first exact finishing step
(msvm/_finish.py) instead of ``msvm._sequence.FINISH_AFTER``: the plan override
``finish_after`` (``msvm._plan.fold_finish_overrides``, set by
``msvm._probability._fold_template``).  Checked here: the override's rule and validation, the
solver's first stop moved by it (a fit that took a finishing step at 100 epochs converges
without one), the fold fits of a probability fit taking it and the kept fits not, the
probabilities near those of the former budget with argmax = predict, and pickling.
"""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm import _plan, _probability
from msvm._sequence import FINISH_AFTER


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=200, n_features=8, n_informative=6, n_classes=4,
                               random_state=0)
    return X, y


def test_fold_finish_overrides_rule(monkeypatch):
    assert _plan.FOLD_FINISH_AFTER > FINISH_AFTER
    expected = {"finish_after": _plan.FOLD_FINISH_AFTER}
    big = _plan.FOLD_FINISH_MIN_VARIABLES
    assert _plan.fold_finish_overrides("rbf", None, big // 10, 10) == expected
    assert _plan.fold_finish_overrides("precomputed", None, big, 2) == expected
    # small folds keep the sequence's budget
    assert _plan.fold_finish_overrides("rbf", None, big // 10 - 1, 10) == {}
    # explicit features or the linear kernel: the first stop is also the late primal start's
    assert _plan.fold_finish_overrides("linear", None, big, 10) == {}
    assert _plan.fold_finish_overrides("rbf", "nystroem", big, 10) == {}
    monkeypatch.setattr(_plan, "FOLD_FINISH_AFTER", 0)
    assert _plan.fold_finish_overrides("rbf", None, big, 10) == {}


def test_finish_after_override_validated():
    plan = _plan.plan_solve("rbf", 100, kernel="rbf", overrides={"finish_after": 250})
    assert plan.finish_after == 250
    assert _plan.plan_solve("rbf", 100, kernel="rbf").finish_after == 0
    with pytest.raises(ValueError, match="finish_after"):
        _plan.plan_solve("rbf", 100, kernel="rbf", overrides={"finish_after": -1})
    with pytest.raises(ValueError, match="finish_after"):
        _plan.plan_solve("rbf", 100, kernel="rbf", overrides={"finish_after": 2.5})


def test_finish_after_moves_the_first_stop(data):
    X, y = data
    plain = ReinforcedMSVM(C=100.0, gamma="scale").fit(X, y)
    later = ReinforcedMSVM(C=100.0, gamma="scale")
    later._plan_overrides = {"finish_after": 400}
    later.fit(X, y)
    # the default fit stops at 100 epochs and takes a finishing step; with the later stop
    # the solver converges on its own, past 100 epochs
    assert plain.solver_plan_.steps[0].finishing_steps == 1
    assert plain.n_iter_ == FINISH_AFTER + 1
    assert later.solver_plan_.steps[0].finishing_steps == 0
    assert FINISH_AFTER < later.n_iter_ < 400
    assert later.stop_reason_ == "tol"
    np.testing.assert_allclose(later.decision_function(X), plain.decision_function(X),
                               atol=0.05)
    rel = abs(later.objective_ - plain.objective_) / abs(plain.objective_)
    assert rel < 1e-3


_OWN_FIT = _probability._ChainRunner.own_fit


def _spied_own_fits(monkeypatch):
    own = []

    def spy(*args):
        fit = _OWN_FIT(*args)
        own.append(fit)
        return fit

    monkeypatch.setattr(_probability._ChainRunner, "own_fit", staticmethod(spy))
    return own


def _probability_fit(X, y, fold_finish_after, monkeypatch, cls=ReinforcedMSVM):
    # the folds here (133 samples, 4 classes) are below the size the rule takes; lowered
    monkeypatch.setattr(_plan, "FOLD_FINISH_MIN_VARIABLES", 100)
    monkeypatch.setattr(_plan, "FOLD_FINISH_AFTER", fold_finish_after)
    own = _spied_own_fits(monkeypatch)
    est = cls(C=100.0, gamma="scale", probability=True, probability_grid=4).fit(X, y)
    return est, own


def test_fold_fits_take_the_later_stop(data, monkeypatch):
    X, y = data
    after, own_after = _probability_fit(X, y, 400, monkeypatch)
    before, own_before = _probability_fit(X, y, 0, monkeypatch)
    assert len(own_after) == len(own_before) == _probability.REFITTED_FOLDS
    assert all(fit.solver_plan_.finish_after == 400 for fit in own_after)
    assert all(fit.solver_plan_.finish_after == 0 for fit in own_before)
    # the former budget's fold fits took the finishing step; the later stop none
    assert sum(s.finishing_steps for f in own_before for s in f.solver_plan_.steps) > 0
    assert sum(s.finishing_steps for f in own_after for s in f.solver_plan_.steps) == 0
    # the estimator's own fit and its kept chains keep the sequence's budget
    np.testing.assert_array_equal(after.decision_function(X), before.decision_function(X))
    kept = [est for chain in after.probability_estimators_ for est in chain]
    assert all(est.solver_plan_.finish_after == 0 for est in kept)
    assert all(not hasattr(est, "_plan_overrides") for est in kept)
    # the probabilities move within the tolerance of the folds' solves; argmax = predict
    p_after, p_before = after.predict_proba(X), before.predict_proba(X)
    assert np.max(np.abs(p_after - p_before)) < 0.05
    np.testing.assert_array_equal(after.classes_[np.argmax(p_after, axis=1)], after.predict(X))
    np.testing.assert_allclose(p_after.sum(axis=1), 1.0)


def test_small_folds_keep_the_budget(data, monkeypatch):
    X, y = data
    own = _spied_own_fits(monkeypatch)
    ReinforcedMSVM(C=100.0, gamma="scale", probability=True, probability_grid=4).fit(X, y)
    assert len(own) == _probability.REFITTED_FOLDS
    assert all(fit.solver_plan_.finish_after == 0 for fit in own)


def test_switch_off_restores_the_former_fits(data, monkeypatch):
    X, y = data
    # FOLD_FINISH_AFTER = 100 is the sequence's own budget: the same fits bit for bit
    off, _ = _probability_fit(X, y, 0, monkeypatch)
    same, _ = _probability_fit(X, y, FINISH_AFTER, monkeypatch)
    np.testing.assert_array_equal(off.predict_proba(X), same.predict_proba(X))


def test_pickled_probability_fit(data, monkeypatch):
    X, y = data
    est, _ = _probability_fit(X, y, 400, monkeypatch, cls=WestonWatkinsMSVM)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    np.testing.assert_array_equal(again.classes_[np.argmax(again.predict_proba(X), axis=1)],
                                  est.predict(X))
