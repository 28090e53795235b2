"""AdaptiveWeightedSVM's probability chains with frozen weights (msvm/weighted.py
``FROZEN_WEIGHTS_BELOW``, ``FROZEN_WEIGHTS_MOVES``): once the one-step weights v of
successive chain levels each moved from the level above's by less than the threshold on
average, the levels below take the last v and are each one reweighted solve from the level
above's solution (no solve at v = 1).

The switch off (None) is main c94be25's refits; a threshold of 0 never freezes and gives
them bit for bit.  With it on, every frozen level is a solution of its dual at the frozen
weights, the chains stop where settled as before (checked against every level refitted at
a tight tolerance), the probabilities stay within a stated bound of main's, their argmax is
``predict``, and the kept fits pickle without the chain's state.
"""

import pickle

import numpy as np
import pytest

import msvm
from msvm import _probability, weighted
from msvm.datasets import make_reinforced_example, reinforced_example_proba
from test_dc_lean_steps import _data, assert_same_probability_fits


def _fit(X, y, sw, below, monkeypatch, grid=8, **params):
    monkeypatch.setattr(weighted, "FROZEN_WEIGHTS_BELOW", below)
    est = msvm.AdaptiveWeightedSVM(C=1.0, random_state=0, probability=True,
                                   probability_grid=grid, **params)
    return est.fit(X, y, sample_weight=sw)


def _levels(est):
    """Every distinct fit of every chain, t_m first (the order the chain made them)."""
    return [list({id(f): f for f in chain[::-1]}.values())
            for chain in est.probability_estimators_]


def _frozen(est):
    return sum(f.n_iter_ == 1 for chain in _levels(est) for f in chain)


@pytest.mark.parametrize("index", [0, 1, 3])
def test_zero_threshold_is_mains(index, monkeypatch):
    """A threshold of 0 freezes nothing: main's fits bit for bit (probabilities, fits made,
    settled marks, objectives, intercepts and epochs of every level)."""
    X, y, sw = _data(index)
    X_test = X[::3] + 0.3
    old, new = (_fit(X, y, sw, below, monkeypatch) for below in (None, 0.0))
    assert_same_probability_fits(old, new, X_test)
    assert _frozen(old) == 0


@pytest.mark.parametrize("index", [0, 1, 3])
def test_frozen_levels_take_the_weights_above(index, monkeypatch):
    """With the switch on some levels freeze (the blobs of ``_data`` at probability_grid 8:
    2 to 4 of them); each takes the v of the level above it; the first frozen level of a
    chain follows ``FROZEN_WEIGHTS_MOVES`` levels whose v each moved from the level
    above's by less than the threshold on average; a frozen level is one solve, its KKT
    residual within the refits' tol at the weights sw v.  No frozen level without the
    switch."""
    X, y, sw = _data(index)
    below, moves = weighted.FROZEN_WEIGHTS_BELOW, weighted.FROZEN_WEIGHTS_MOVES
    assert below is not None and moves >= 1
    est = _fit(X, y, sw, below, monkeypatch)
    assert _frozen(est) >= 2
    assert _frozen(_fit(X, y, sw, None, monkeypatch)) == 0
    tol = est.probability_estimators_[0][0].tol
    for chain in _levels(est):
        assert all(level.n_iter_ == 2 for level in chain[:moves + 1])
        for index, level in enumerate(chain[1:], start=1):
            if level.n_iter_ == 2:
                assert chain[index - 1].n_iter_ == 2
                continue
            assert np.array_equal(level.adaptive_weights_, chain[index - 1].adaptive_weights_)
            assert level.kkt_residual_ <= tol
            if chain[index - 1].n_iter_ == 2:
                for lower in range(index - moves, index):
                    moved = np.mean(np.abs(chain[lower].adaptive_weights_
                                           - chain[lower - 1].adaptive_weights_))
                    assert moved < below


def test_frozen_probabilities_near_mains(monkeypatch):
    """On Liu and Yuan's example 4.1.1 (n = 150, draws 0, 1, 2): the mean absolute error
    against the true probabilities within 0.005 of main's on the mean of the draws (single
    draws at this n move by up to 0.015 either way), argmax = predict at every test sample,
    fewer compiled solves."""
    mae, solves = {None: [], "on": []}, {None: 0, "on": 0}
    for seed in range(3):
        X, y = make_reinforced_example(150, "4.1.1", random_state=seed)
        X_test, _ = make_reinforced_example(600, "4.1.1", random_state=1000 + seed)
        truth = reinforced_example_proba(X_test, "4.1.1")
        for side, below in ((None, None), ("on", weighted.FROZEN_WEIGHTS_BELOW)):
            est = _fit(X, y, None, below, monkeypatch)
            proba = est.predict_proba(X_test)
            mae[side].append(np.mean(np.abs(proba - truth)))
            solves[side] += sum(f.n_iter_ for chain in _levels(est) for f in chain)
            assert np.array_equal(est.classes_[np.argmax(proba, axis=1)], est.predict(X_test))
    assert np.mean(mae["on"]) <= np.mean(mae[None]) + 0.005
    assert solves["on"] < solves[None]


def test_settled_chains_with_frozen_levels(monkeypatch):
    """The chains stopped where settled, frozen levels among them, against the same chains
    refitted at every level (``SETTLED_CHAINS = False``), at a tight tolerance (tol 1e-6,
    the refits at tol): the same uncalibrated probabilities to 1e-4 (section 9d's check)."""
    X, y, sw = _data(0)
    X_test = X[::2] + 0.2
    monkeypatch.setattr(_probability, "REFIT_TOL_FACTOR", 1.0)
    own = msvm.AdaptiveWeightedSVM(C=1.0, random_state=0, tol=1e-6).fit(X, y, sample_weight=sw)
    template = _probability._refit_template(
        _probability._with_params(msvm.AdaptiveWeightedSVM(**own.get_params()), C=own.C_,
                                  warm_start=True, gamma=own.gamma_), 1.0)
    levels = _probability.probability_levels(8)
    out = {}
    for settle in (True, False):
        monkeypatch.setattr(_probability, "SETTLED_CHAINS", settle)
        chains = _probability._task_chains(template, own, X, y, sw, levels, own.classes_)
        frozen = sum(f.n_iter_ == 1 for chain in chains for f in chain)
        ratios = _probability.bracketed_ratios(own, chains, levels, X_test)
        out[settle] = (frozen, _probability.shaped_probabilities(ratios))
    assert out[True][0] > 0 and out[False][0] > 0
    assert np.max(np.abs(out[True][1] - out[False][1])) <= 1e-4


def test_plain_and_iterative_fits_are_mains(monkeypatch):
    """Outside a one-step probability chain nothing changes: a plain fit and an iterative
    scheme's probability fit are main's bit for bit, and keep no chain state."""
    X, y, sw = _data(2)
    fits = {}
    for below in (None, weighted.FROZEN_WEIGHTS_BELOW):
        monkeypatch.setattr(weighted, "FROZEN_WEIGHTS_BELOW", below)
        plain = msvm.AdaptiveWeightedSVM(C=1.0, random_state=0).fit(X, y, sample_weight=sw)
        iterative = _fit(X, y, sw, below, monkeypatch, grid=4, scheme="iterative",
                         max_reweight=5)
        fits[below] = (plain, iterative)
    (plain_old, it_old), (plain_new, it_new) = fits.values()
    assert np.array_equal(plain_old.decision_function(X), plain_new.decision_function(X))
    assert plain_new.n_iter_ == 2 and not hasattr(plain_new, "_chain_weights")
    assert_same_probability_fits(it_old, it_new, X)


def test_pickled_fit_keeps_no_chain_state(monkeypatch):
    """The kept fits of a probability fit with frozen levels carry no chain state; the
    estimator pickles and predicts the same probabilities, argmax = predict."""
    X, y, sw = _data(1)
    est = _fit(X, y, sw, weighted.FROZEN_WEIGHTS_BELOW, monkeypatch)
    assert _frozen(est) > 0
    for chain in est.probability_estimators_:
        for fit in chain:
            assert not hasattr(fit, "_chain_weights") and not hasattr(fit, "_kept_dual")
    loaded = pickle.loads(pickle.dumps(est))
    proba = est.predict_proba(X)
    assert np.array_equal(loaded.predict_proba(X), proba)
    assert np.array_equal(est.classes_[np.argmax(proba, axis=1)], est.predict(X))
