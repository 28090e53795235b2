"""AdaptiveWeightedSVM's reweighted solves as lean solves (msvm/weighted.py
``LEAN_REWEIGHT``): a probability chain's reweighted dual as the chain's kept dual scaled,
the start clipped with the over-full groups moved at once (``msvm._sequence.clipped_start``),
the solve ``msvm._dc.lean_solve``, the objective formed only where the log prints.

Each gives the values of the step it replaces, so the fits and the probabilities are the
same bit for bit: checked against ``LEAN_REWEIGHT = False`` (main ff4354d's refits) with
class and sample weights, both schemes, the settled marks (``_weight_bound_samples_``), the
verbose log, and pickling.
"""

import pickle

import numpy as np
import pytest

import msvm
from msvm import weighted
from msvm._problem import margin_problem
from msvm._sequence import clipped_start
from test_dc_lean_steps import _data, assert_same_probability_fits


def _models():
    return [msvm.AdaptiveWeightedSVM(C=1.0, random_state=0),
            msvm.AdaptiveWeightedSVM(C=1.0, random_state=0, class_weight="balanced"),
            msvm.AdaptiveWeightedSVM(C=1.0, random_state=0, class_weight={0: 2.0, 1: 1.0,
                                                                          2: 0.5}),
            msvm.AdaptiveWeightedSVM(C=2.0, scheme="iterative", max_reweight=5,
                                     random_state=0)]


def _fit(est, X, y, sw, lean, monkeypatch, probability=True):
    monkeypatch.setattr(weighted, "LEAN_REWEIGHT", lean)
    return est.set_params(probability=probability, probability_grid=4).fit(
        X, y, sample_weight=sw)


@pytest.mark.parametrize("seed", range(4))
def test_clipped_start_is_clip_feasible(seed):
    """``clipped_start`` holds ``clip_feasible``'s values bit for bit: caps lowered by
    reweighting (groups over their cap, some members without room, some needing a second
    move), a cap of zero, and groups under their cap."""
    rng = np.random.default_rng(seed)
    n, k = 60, 4
    y, w = rng.integers(0, k, n), rng.uniform(0.1, 3.0, n)
    for utility in (np.eye(k), np.ones((k, k)) - np.eye(k)):
        old = margin_problem(y, k, w, utility)
        alpha = old.clip_feasible(rng.uniform(0, 1, old.n_vars) * old.expand("hi"))
        # some members at zero (no room): their group's excess needs further moves
        alpha[rng.uniform(size=old.n_vars) < 0.3] = 0.0
        v = rng.uniform(0.0, 1.2, n)
        v[:3] = 0.0
        new = margin_problem(y, k, w * v, utility)
        expected = new.clip_feasible(alpha)
        got = clipped_start(new, alpha)
        assert np.array_equal(got, expected)
        assert not np.array_equal(expected, new.expanded_bounds()[1].clip(None, alpha))


def test_clipped_start_leaves_its_input():
    """The start is a new array; a start already feasible comes back unchanged."""
    rng = np.random.default_rng(7)
    y, w = rng.integers(0, 3, 20), rng.uniform(0.5, 1.5, 20)
    problem = margin_problem(y, 3, w, np.eye(3))
    alpha = problem.clip_feasible(rng.uniform(0, 0.1, problem.n_vars))
    kept = alpha.copy()
    out = clipped_start(problem, alpha)
    assert out is not alpha and np.array_equal(alpha, kept) and np.array_equal(out, alpha)


@pytest.mark.parametrize("index", range(4))
def test_probability_fit_is_mains(index, monkeypatch):
    """The probability fit with the lean reweighted solves and with main's: the same
    probabilities, fits made, fitted attributes and settled marks at every level, bit for
    bit (class and sample weights, both schemes)."""
    X, y, sw = _data(index)
    X_test = X[::3] + 0.3
    fits = {lean: _fit(_models()[index], X, y, sw, lean, monkeypatch) for lean in (False, True)}
    old, new = fits[False], fits[True]
    assert_same_probability_fits(old, new, X_test)
    for chain_old, chain_new in zip(old.probability_estimators_, new.probability_estimators_):
        for a, b in zip(chain_old, chain_new):
            assert np.array_equal(a.adaptive_weights_, b.adaptive_weights_)
            assert a.duality_gap_ == b.duality_gap_


def test_plain_fit_and_its_log_are_mains(monkeypatch, capsys):
    """A fit without probabilities, and its verbose lines but the elapsed times, are main's
    (the objective is still formed where the line prints)."""
    X, y, sw = _data(2)
    out = {}
    for lean in (False, True):
        est = _fit(msvm.AdaptiveWeightedSVM(C=1.0, scheme="iterative", max_reweight=4,
                                            random_state=0, verbose=1),
                   X, y, sw, lean, monkeypatch, probability=False)
        lines = [line.rsplit("elapsed", 1)[0] for line in capsys.readouterr().out.splitlines()]
        out[lean] = (est, lines)
    (old, old_lines), (new, new_lines) = out[False], out[True]
    assert any("reweighting 1" in line for line in new_lines)
    assert old_lines == new_lines
    assert np.array_equal(old.decision_function(X), new.decision_function(X))
    assert old.objective_ == new.objective_ and old.n_iter_ == new.n_iter_


def test_pickled_fit_refits_as_mains(monkeypatch):
    """A lean probability fit pickles without a chain's kept state; loaded and fitted again
    with main's refits, it gives the lean fit's probabilities."""
    X, y, sw = _data(5)
    lean = _fit(msvm.AdaptiveWeightedSVM(C=1.0, random_state=0), X, y, sw, True, monkeypatch)
    loaded = pickle.loads(pickle.dumps(lean))
    assert not hasattr(loaded, "_kept_dual")
    expected = lean.predict_proba(X)
    assert np.array_equal(loaded.predict_proba(X), expected)
    refitted = _fit(loaded, X, y, sw, False, monkeypatch)
    assert np.array_equal(refitted.predict_proba(X), expected)
