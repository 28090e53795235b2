"""A DC probability chain's refits stop on a decrease within the refit's tol
(``msvm._dc.LEVEL_DC_TOL``), and the cap of DC steps on a chain's later levels
(``msvm._dc.LEVEL_DC_STEPS``, measured and off by default).

The refits solve each DC step only to their tol (300 times the estimator's, at most 0.3:
``msvm._probability.REFIT_TOL_FACTOR``), so main's loop, whose decrease test reads dc_tol
(1e-6), went on until a step rose within that tol and was dropped.  Checked against the
switch off (main aae56db) on RobustMSVM and WeightedRobustMSVM with class and sample
weights: fewer compiled solves, the argmax is ``predict``, the probabilities within stated
tolerances of the old path's, a fit outside a chain the same bit for bit, the chains'
level counts not pickled.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from test_dc_chain_start import assert_chain_probabilities, assert_transient
from test_dc_lean_steps import _data
from test_dc_lean_steps import _models as lean_step_models

import msvm
from msvm import _dc, _sequence

# the mean and the largest difference of the test probabilities between the two rules,
# measured on these problems (n = 150, probability_grid = 4): at most 0.021 and 0.37; the
# paths end at different local DC solutions within the refits' tolerance
MEAN_TOLERANCE, LARGEST_TOLERANCE = 0.03, 0.5


def _probability_fit(est, X, y, sw, level_tol, monkeypatch, cap=None):
    """The probability fit under the rule ``level_tol`` (and the cap ``cap``) and the
    number of compiled solves it made."""
    monkeypatch.setattr(_dc, "LEVEL_DC_TOL", level_tol)
    monkeypatch.setattr(_dc, "LEVEL_DC_STEPS", cap)
    solves = []
    real = _sequence.DualSequence._solve_and_finish

    def counted(self, *args, **kwargs):
        solves.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_sequence.DualSequence, "_solve_and_finish", counted)
    est = est.set_params(probability=True, probability_grid=4).fit(X, y, sample_weight=sw)
    monkeypatch.setattr(_sequence.DualSequence, "_solve_and_finish", real)
    return est, len(solves)


@pytest.mark.parametrize("index", range(4))
def test_level_tol_fewer_solves_same_probabilities(index, monkeypatch):
    """The rule makes fewer compiled solves than main's; the argmax of the probabilities
    is ``predict``; they are within ``MEAN_TOLERANCE`` (mean) and ``LARGEST_TOLERANCE`` of
    main's; the estimator's own fit is main's bit for bit."""
    X, y, sw = _data(index)
    X_test = np.vstack([X, X[::3] + 0.3])
    new, new_solves = _probability_fit(lean_step_models()[index], X, y, sw, True,
                                       monkeypatch)
    old, old_solves = _probability_fit(lean_step_models()[index], X, y, sw, False,
                                       monkeypatch)
    assert new_solves < old_solves
    assert_chain_probabilities(new, old, X_test, MEAN_TOLERANCE, LARGEST_TOLERANCE)


@pytest.mark.parametrize("index", [0, 2])
def test_fit_outside_a_chain_is_unchanged(index, monkeypatch):
    """A DC fit (probability=False) at a large tol, where the rule would stop its loop, is
    the same bit for bit with the switch on and off: only a chain's refits read it."""
    X, y, sw = _data(index)
    out = []
    for level_tol in (False, True):
        monkeypatch.setattr(_dc, "LEVEL_DC_TOL", level_tol)
        est = lean_step_models()[index].set_params(tol=0.3).fit(X, y, sample_weight=sw)
        out.append((est.dual_coef_, est.intercept_, est.dc_objectives_))
        assert "_dc_levels" not in est.__dict__
    for a, b in zip(*out):
        assert np.array_equal(a, b)


def test_level_rules_only_in_a_chain(monkeypatch):
    """``level_rules``: the estimator's dc_tol and no cap outside a chain; in a chain
    max(dc_tol, tol) under ``LEVEL_DC_TOL`` and the cap from the second level on."""
    est = msvm.RobustMSVM(tol=0.3, dc_tol=1e-6)
    monkeypatch.setattr(_dc, "LEVEL_DC_STEPS", 2)
    assert _dc.level_rules(est) == (1e-6, None)
    est._kept_dual = object()
    for level_tol, dc_tol in ((True, 0.3), (False, 1e-6)):
        monkeypatch.setattr(_dc, "LEVEL_DC_TOL", level_tol)
        est.__dict__.pop("_dc_levels", None)
        assert _dc.level_rules(est) == (dc_tol, None)      # the chain's first level
        assert _dc.level_rules(est) == (dc_tol, 2)
        assert est._dc_levels == 2


class _Steps:
    """A stand-in for ``_SequenceSteps``: every linearization new, each step lowering the
    objective by ``decrease``."""

    def __init__(self, decrease):
        self.decrease, self.taken, self.obj = decrease, 0, 10.0

    def changed(self):
        return True

    def take(self, step_tol, gap_scale):
        self.taken += 1
        return self.obj - self.decrease

    def accept(self, step, obj):
        self.obj = obj


def test_dc_loop_level_cap_stops_without_warning():
    """``dc_loop(level_cap=N)``: N steps, then a stop reported converged, without the
    ConvergenceWarning of max_dc_iter (a cap is a probability level's, not a failure)."""
    steps = _Steps(1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history, reason = _dc.dc_loop(steps, 10.0, tol=1e-3, first_tol=1e-3, dc_tol=1e-6,
                                      max_dc_iter=50, owner="test", loose=False,
                                      level_cap=2)
    assert steps.taken == 2 and len(history) == 3 and reason == _sequence.CONVERGED
    steps = _Steps(1e-2)
    with pytest.warns(ConvergenceWarning, match="max_dc_iter"):
        _dc.dc_loop(steps, 10.0, tol=1e-3, first_tol=1e-3, dc_tol=1e-6, max_dc_iter=5,
                    owner="test", loose=False)
    assert steps.taken == 5


def test_dc_loop_stops_on_a_decrease_within_dc_tol():
    """The loop stops after the first step whose decrease is within dc_tol of the
    objective: at the refits' tol (0.3, ``level_rules``) a decrease of 1 % stops it, at
    1e-6 it goes on to max_dc_iter."""
    steps = _Steps(0.1)
    _, reason = _dc.dc_loop(steps, 10.0, tol=0.3, first_tol=0.3, dc_tol=0.3,
                            max_dc_iter=50, owner="test", loose=False)
    assert steps.taken == 1 and reason == _sequence.CONVERGED


def test_kept_start_reads_the_linearization(monkeypatch):
    """With ``LEVEL_DC_TOL`` a chain fit that stopped on a decrease reads the linearization
    at its last step: repeated, its marks stay (a DC fixed point, as in the loop); new,
    every sample is marked (the next level takes a step this fit never took)."""
    monkeypatch.setattr(_dc, "LEVEL_DC_TOL", True)

    class Steps:
        sol = type("Sol", (), {"alpha": np.zeros(3), "mu": np.zeros(2)})()
        lin_G = None

        def __init__(self, repeats):
            self.repeats, self.checked = repeats, False
            self.weighed = np.zeros(4, dtype=bool)

        def changed(self):
            self.checked = self.repeats
            return not self.repeats

    est = msvm.RobustMSVM(C=1.0)
    est.C_ = 1.0
    for repeats in (True, False):
        steps = Steps(repeats)
        _dc.keep_chain_dc_start(est, steps, 1.0, np.ones(4))
        assert steps.weighed.all() != repeats


@pytest.mark.parametrize("cap", [1, 2])
def test_level_cap_fewer_solves(cap, monkeypatch):
    """The cap (off by default) makes fewer compiled solves than main's loop, with the
    argmax = predict and the probabilities within the tolerances."""
    X, y, sw = _data(0)
    new, new_solves = _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw,
                                       False, monkeypatch, cap=cap)
    old, old_solves = _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw,
                                       False, monkeypatch)
    assert new_solves < old_solves
    assert_chain_probabilities(new, old, X, MEAN_TOLERANCE, LARGEST_TOLERANCE)


def test_pickle_keeps_no_level_count():
    """The chains' level counts are transient: neither the fitted estimator nor its level
    fits carry or pickle them, and a pickled probability fit predicts the same."""
    X, y, sw = _data(1)
    est = msvm.WeightedRobustMSVM(C=1.0, random_state=0, probability=True,
                                  probability_grid=4).fit(X, y, sample_weight=sw)
    assert "_dc_levels" not in est.__dict__
    assert_transient(est, X, "_dc_levels")
