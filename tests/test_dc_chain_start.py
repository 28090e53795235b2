"""A DC probability chain's levels started from the previous level's last DC step
(``msvm._dc.CHAIN_DC_START``, with ``CHAIN_DC_RESET``: the up-weighted class untruncated),
WeightedRobustMSVM's default; RobustMSVM's default keeps the untruncated start
(``_levels_from_last_step``), turned on here to test the mechanism on both.

The change moves the iterates of the probability levels only: checked against
``CHAIN_DC_START = False`` (main 107ffe2's chain refits, every level from an untruncated
solve) over RobustMSVM and WeightedRobustMSVM with class and sample weights: the argmax is
``predict``, the probabilities stay within stated tolerances of the old path's, the fit
without probabilities is the same bit for bit, the chains' kept starts are not pickled, and
the settled rule (``msvm._probability._path_settled``) still holds under the new start (the
level below a settled one, refitted from it, is that fit up to the solver's tolerance).
"""

import pickle

import numpy as np
import pytest
from test_dc_lean_steps import _data
from test_dc_lean_steps import _models as lean_step_models

import msvm
from msvm import _dc
from msvm import _probability as probability

# the mean and the largest difference of the test probabilities between the two paths,
# measured on these problems (n = 150, probability_grid = 4): at most 0.011 and 0.32; the
# paths end in different local DC solutions at the refits' tolerance (300 times tol), as the
# settled chains did (section 9d of benchmarks/results/probability.md)
MEAN_TOLERANCE, LARGEST_TOLERANCE = 0.03, 0.5


def _models():
    """The DC models of tests/test_dc_lean_steps.py (class and sample weights)."""
    return lean_step_models()[:4]


def _probability_fit(est, X, y, sw, chain_start, monkeypatch, calls=None):
    monkeypatch.setattr(_dc, "CHAIN_DC_START", chain_start)
    # the mechanism on both models (RobustMSVM's default keeps the untruncated start)
    monkeypatch.setattr(msvm.RobustMSVM, "_levels_from_last_step", True)
    if calls is not None:
        original = _dc.chain_dc_start

        def counted(*args):
            start = original(*args)
            calls.append(start is not None)
            return start

        monkeypatch.setattr(_dc, "chain_dc_start", counted)
    return est.set_params(probability=True, probability_grid=4).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("index", range(4))
def test_chain_start_keeps_argmax_and_probabilities(index, monkeypatch):
    """The new start is taken (at the chain levels after the first), the argmax of the
    probabilities is ``predict`` on every sample, and they are within ``MEAN_TOLERANCE``
    (mean) and ``LARGEST_TOLERANCE`` of the old path's (class and sample weights)."""
    X, y, sw = _data(index)
    X_test = np.vstack([X, X[::3] + 0.3])
    calls = []
    new = _probability_fit(_models()[index], X, y, sw, True, monkeypatch, calls)
    old = _probability_fit(_models()[index], X, y, sw, False, monkeypatch)
    assert calls and sum(calls) >= len(calls) / 3     # the levels after the first
    assert_chain_probabilities(new, old, X_test, MEAN_TOLERANCE, LARGEST_TOLERANCE)


def assert_chain_probabilities(new, old, X_test, mean_tolerance, largest_tolerance):
    """The probability fit ``new`` (a chain rule changed) against ``old``: its argmax is
    ``predict``, its probabilities sum to 1 and are within ``mean_tolerance`` (mean) and
    ``largest_tolerance`` of ``old``'s, and the estimator's own fit is ``old``'s bit for
    bit."""
    proba = new.predict_proba(X_test)
    assert np.array_equal(np.argmax(proba, axis=1),
                          np.searchsorted(new.classes_, new.predict(X_test)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    diff = np.abs(proba - old.predict_proba(X_test))
    assert diff.mean() <= mean_tolerance and diff.max() <= largest_tolerance
    # the fit itself (the estimator's own) is the old path's
    assert np.array_equal(old.dual_coef_, new.dual_coef_)
    assert old.objective_ == new.objective_


@pytest.mark.parametrize("index", [0, 3])
def test_fit_without_probabilities_is_unchanged(index, monkeypatch):
    """A DC fit (probability=False) and its warm-started refit at another C are the same
    bit for bit with the switch on and off: no fit outside a chain starts anew."""
    X, y, sw = _data(index)
    out = {}
    for chain_start in (False, True):
        monkeypatch.setattr(_dc, "CHAIN_DC_START", chain_start)
        est = _models()[index].set_params(warm_start=True).fit(X, y, sample_weight=sw)
        first = (est.dual_coef_.copy(), est.intercept_.copy(), est.dc_objectives_.copy())
        est.set_params(C=2.0).fit(X, y, sample_weight=sw)
        out[chain_start] = first + (est.dual_coef_, est.intercept_, est.dc_objectives_)
        assert not hasattr(est, "_dc_chain_start")
    for a, b in zip(out[False], out[True]):
        assert np.array_equal(a, b)


def test_pickle_keeps_no_chain_start(monkeypatch):
    """The chains' kept starts are transient: neither the fitted estimator nor its level
    fits carry or pickle them, and a pickled probability fit predicts the same."""
    X, y, sw = _data(1)
    est = _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw, True,
                           monkeypatch)
    assert_transient(est, X, "_dc_chain_start")


def assert_transient(est, X, name):
    """Neither the probability fit ``est`` nor its level fits carry or pickle ``name``, and
    ``est`` pickled predicts the same on X."""
    for chain in est.probability_estimators_:
        for fit in chain:
            assert name not in fit.__dict__
            assert name not in fit.__getstate__()
    loaded = pickle.loads(pickle.dumps(est))
    assert np.array_equal(loaded.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("name", ["RobustMSVM", "WeightedRobustMSVM"])
def test_settled_level_is_its_refit(name, monkeypatch):
    """Under the new start the settled rule holds as it did: in each class's chain refitted
    at every level (``SETTLED_CHAINS = False``, tol 1e-6), the level below the first
    settled one, refitted from it, is that fit up to the solver's accuracy (one convex
    solve: its linearization repeats), as under the untruncated start (decision values
    within 2e-3 there on these data)."""
    X, y, sw = _data(0)
    monkeypatch.setattr(probability, "SETTLED_CHAINS", False)
    monkeypatch.setattr(msvm.RobustMSVM, "_levels_from_last_step", True)
    own = getattr(msvm, name)(C=1.0, random_state=0, tol=1e-6).fit(X, y, sample_weight=sw)
    template = probability._refit_template(
        probability._with_params(own, probability=False, warm_start=True), 1.0)
    levels = probability.probability_levels(8)
    for label in range(3):
        chain, _ = probability._weighted_chain(template, own, X, y, sw, levels, label)
        is_label = y == label
        settled = [i for i in range(len(chain) - 1, 0, -1)
                   if probability._settled(chain[i], is_label)]
        assert settled, "a chain settles on these data"
        fit, below = chain[settled[0]], chain[settled[0] - 1]
        assert below.n_iter_ == 1
        np.testing.assert_allclose(below.decision_function(X), fit.decision_function(X),
                                   atol=1e-2)


def test_robust_default_keeps_the_untruncated_start():
    """RobustMSVM's probability fit by default is main's (every level from an untruncated
    solve), bit for bit; WeightedRobustMSVM's takes the new start."""
    X, y, sw = _data(2)
    assert not msvm.RobustMSVM._levels_from_last_step
    assert msvm.WeightedRobustMSVM._levels_from_last_step
    fits = []
    for chain_start in (False, True):
        _dc.CHAIN_DC_START = chain_start
        try:
            est = msvm.RobustMSVM(C=1.0, random_state=0, probability=True,
                                  probability_grid=4).fit(X, y, sample_weight=sw)
        finally:
            _dc.CHAIN_DC_START = True
        fits.append(est.predict_proba(X))
    assert np.array_equal(fits[0], fits[1])


def test_unread_linearization_marks_every_sample(monkeypatch):
    """A DC fit whose loop did not read the linearization at its last step (a decrease
    below dc_tol) is marked everywhere: the next level may take a step this fit never
    took, so its chain does not stop there (``LEVEL_DC_TOL`` off: the linearization is
    not read after the loop; on: tests/test_dc_level_tol.py)."""
    monkeypatch.setattr(_dc, "LEVEL_DC_TOL", False)

    class Steps:
        sol = type("Sol", (), {"alpha": np.zeros(3), "mu": np.zeros(2)})()
        lin_G, weighed = None, np.zeros(4, dtype=bool)

    est = msvm.RobustMSVM(C=1.0)
    est.C_ = 1.0
    for checked in (True, False):
        steps = Steps()
        steps.weighed, steps.checked = np.zeros(4, dtype=bool), checked
        _dc.keep_chain_dc_start(est, steps, 1.0, np.ones(4))
        assert steps.weighed.all() != checked
        assert est._dc_chain_start.alpha is steps.sol.alpha


def test_dc_loop_steps_at_tol_from_a_step_start():
    """``dc_loop(loose=False)``: every step is solved to tol (a start that is a DC step
    solved to tol); the default takes the early steps at LOOSE_TOL."""
    class Steps:
        def __init__(self):
            self.tols, self.objs = [], iter([5.0, 4.0])

        def changed(self):
            return len(self.tols) < 2

        def take(self, step_tol, gap_scale):
            self.tols.append(step_tol)
            return next(self.objs)

        def accept(self, step, obj):
            pass

        def polish(self, step, tol, gap_scale):
            return 4.0

    for loose, first in ((True, _dc.LOOSE_TOL), (False, 1e-4)):
        steps = Steps()
        _dc.dc_loop(steps, 6.0, tol=1e-4, first_tol=1e-4, dc_tol=1e-6, max_dc_iter=10,
                    owner="test", loose=loose)
        assert steps.tols[0] == first
