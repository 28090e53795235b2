"""The lean DC steps of msvm/_dc.py (``LEAN_DC_STEPS``): the DC steps' problems as copies of
the base problem with moved bounds (``step_problem``), a probability chain's untruncated
duals as one kept dual with scaled bounds (``msvm._level_chain.ScaledDual``), the solutions
formed by the compiled level tail (``step_solution``) and the solver's penalty and seed
kept for a chain's refits (``kept_penalty_and_seed``; also a reweighting's first solve).

Each gives the values of the step it replaces, so the fits and the probabilities are the
same bit for bit: checked against ``LEAN_DC_STEPS = False`` (main 51483cd's steps) over the
DC models and the reweighting (AdaptiveWeightedSVM) with class and sample weights, with the
marks that the settled rule reads (``_weight_bound_samples_``), other kernels, samples at
weight 0, and pickling.
"""

import pickle

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import msvm
from msvm import _dc, _sequence
from msvm._level_chain import ScaledDual
from msvm._problem import margin_problem, shifted
from msvm._snapshot import snapshot

ARRAYS = ("var_ptr", "var_entry", "entry_slot1", "entry_coef1", "entry_slot2", "entry_coef2",
          "entry_lin", "var_group", "box_lo", "box_hi", "cap")


def _same_values(a, b):
    """Whether two dual problems hold the same values (the bounds per variable)."""
    return (all(np.array_equal(x, y) for x, y in zip(a.expanded_bounds(), b.expanded_bounds()))
            and all(_equal(getattr(a, n), getattr(b, n)) for n in ARRAYS if "box" not in n)
            and (a.k, a.kappa, a.equality) == (b.k, b.kappa, b.equality))


def _equal(x, y):
    return (x is None and y is None) or (x is not None and y is not None
                                          and np.array_equal(x, y))


def _data(seed=0, n=150):
    """Three overlapping blobs (some samples truncated at C = 1) and positive weights."""
    X, y = make_blobs(n, centers=3, cluster_std=2.0, random_state=seed)
    sw = np.random.default_rng(seed).uniform(0.5, 2.0, n)
    return X, y, sw


def _models():
    return [msvm.RobustMSVM(C=1.0, random_state=0),
            msvm.RobustMSVM(C=1.0, random_state=0, class_weight="balanced"),
            msvm.WeightedRobustMSVM(C=1.0, random_state=0),
            msvm.WeightedRobustMSVM(C=1.0, truncation=0, random_state=0,
                                    class_weight={0: 2.0, 1: 1.0, 2: 0.5}),
            msvm.AdaptiveWeightedSVM(C=1.0, random_state=0, class_weight="balanced")]


@pytest.mark.parametrize("seed", range(3))
def test_step_problem_is_the_shifted_problem(seed):
    """``step_problem`` holds the values of ``shifted`` (one-slot boxes, and group caps of
    the generalized-margin dual), without sharing a bound with the base."""
    rng = np.random.default_rng(seed)
    n, k = 30, 4
    y, w = rng.integers(0, k, n), rng.uniform(0.1, 3.0, n)
    robust = msvm.RobustMSVM()._dual_problem(y, k, w)
    grouped = margin_problem(y, k, w, np.ones((k, k)) - np.eye(k))
    for base in (robust, grouped):
        shift = base.expand("hi") * (rng.uniform(size=base.n_vars) < 0.3)
        lean = _dc.step_problem(base, shift)
        assert _same_values(lean, shifted(base, shift))
        assert not np.shares_memory(lean.box_hi, base.box_hi)
        assert not np.shares_memory(lean.cap, base.cap) or len(base.cap) == 0


def test_scaled_dual_is_the_builder():
    """``ScaledDual.at``: the model's dual at every weight vector (checked against the
    builder past the verified copies), the builder's own problem where the bounds do not
    scale, and non-finite bounds refused as the builder refuses them."""
    rng = np.random.default_rng(1)
    n, k = 40, 3
    y = rng.integers(0, k, n)
    for build in (lambda w: msvm.RobustMSVM()._dual_problem(y, k, w),
                  lambda w: margin_problem(y, k, w, np.ones((k, k)) - np.eye(k))):
        kept = ScaledDual()
        for _ in range(6):
            w = rng.uniform(0.01, 5.0, n)
            assert _same_values(kept.at(w, build), build(w))
        assert kept.owner is not None
        w = rng.uniform(0.01, 5.0, n)
        w[3] = np.inf
        with pytest.raises(ValueError, match="not finite"):
            kept.at(w, build)
    # bounds that are not C w_i times the unit ones: the builder's problem every time
    kept = ScaledDual()
    odd = lambda w: msvm.RobustMSVM()._dual_problem(y, k, w ** 2)  # noqa: E731
    for _ in range(3):
        w = rng.uniform(0.5, 2.0, n)
        assert _same_values(kept.at(w, odd), odd(w))
    assert kept.owner is None


def test_step_solution_is_the_snapshot():
    """``step_solution`` of a solved RobustMSVM dual: every value of ``snapshot``'s."""
    X, y, sw = _data(3)
    est = msvm.RobustMSVM(C=1.0, kernel="rbf", random_state=0)
    est.fit(X, y, sample_weight=sw)
    seen, deferred = [], []
    original = _dc.step_solution

    def both(model, src, problem, alpha, mu, n_iter, resid, defer_gap=False, sequence=None):
        lean = original(model, src, problem, alpha, mu, n_iter, resid, defer_gap=defer_gap,
                        sequence=sequence)
        full = snapshot(model, None, src, problem, alpha, mu, n_iter, resid)
        # deferred: a lean DC step's gap, and with ``DEFERRED_START_GAPS`` (round 18) that
        # of every converged solve (``sequence`` given)
        deferred.append(np.isnan(lean.gap))
        # a deferred duality gap formed later: snapshot's value
        seen.append(all(_equal(getattr(lean, f), getattr(full, f)) for f in
                        ("alpha", "mu", "V", "intercept", "G", "penalty"))
                    and np.isnan(lean.gap) == (defer_gap or (
                        sequence is not None and sequence.stop_reasons[-1:] == ["tol"]))
                    and _dc.with_gap(lean).gap == full.gap)
        return lean

    _dc.step_solution = both
    try:
        msvm.RobustMSVM(C=1.0, random_state=0).fit(X, y, sample_weight=sw)
    finally:
        _dc.step_solution = original
    assert len(seen) >= 2 and all(seen) and any(deferred)


# the switches of a lean path and main's: round 15's DC steps (main 51483cd) and round 16's
# DC steps as lean solves with the scores moved by one compiled pass (main 5c4386a,
# tests/test_dc_loop.py)
SWITCHES = {"steps": ((_dc, "LEAN_DC_STEPS"),),
            "loop": ((_dc, "LEAN_DC_LOOP"), (_sequence, "COMPILED_MOVES"))}


def _probability_fit(est, X, y, sw, lean, monkeypatch, switches="steps"):
    for module, name in SWITCHES[switches]:
        monkeypatch.setattr(module, name, lean)
    return est.set_params(probability=True, probability_grid=4).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("switches", sorted(SWITCHES))
@pytest.mark.parametrize("index", range(5))
def test_probability_fit_is_the_refits(index, switches, monkeypatch):
    """The probability fit with the lean DC steps and with main's: the same probabilities,
    fits made, fitted attributes and settled marks at every level, bit for bit (class and
    sample weights)."""
    X, y, sw = _data(index)
    X_test = X[::3] + 0.3
    fits = {lean: _probability_fit(_models()[index], X, y, sw, lean, monkeypatch, switches)
            for lean in (False, True)}
    assert_same_probability_fits(fits[False], fits[True], X_test)


def assert_same_probability_fits(old, new, X_test):
    """The same probabilities at X_test, fits made, fitted attributes and, for every level
    of every chain, settled marks, objectives, intercepts and epochs, bit for bit."""
    assert np.array_equal(old.predict_proba(X_test), new.predict_proba(X_test))
    assert old.n_probability_fits_ == new.n_probability_fits_
    assert np.array_equal(old.dual_coef_, new.dual_coef_)
    assert old.objective_ == new.objective_ and old.duality_gap_ == new.duality_gap_
    for chain_old, chain_new in zip(old.probability_estimators_, new.probability_estimators_):
        for a, b in zip(chain_old, chain_new):
            assert np.array_equal(a._weight_bound_samples_, b._weight_bound_samples_)
            assert np.array_equal(getattr(a, "dc_objectives_", a.objective_),
                                  getattr(b, "dc_objectives_", b.objective_))
            assert np.array_equal(a.intercept_, b.intercept_)
            assert a.n_solver_iter_ == b.n_solver_iter_
            assert not hasattr(b, "_kept_dual")


def test_random_state_instance_draws_every_refit(monkeypatch):
    """A RandomState instance is drawn from at every refit (no kept seed): the same fits as
    main's steps."""
    X, y, sw = _data(5)
    fits = [_probability_fit(msvm.RobustMSVM(C=1.0, random_state=np.random.RandomState(3)),
                             X, y, sw, lean, monkeypatch) for lean in (False, True)]
    assert np.array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))


def test_pickled_probability_fit(monkeypatch):
    """A probability fit made with the lean steps pickles without a chain's kept state and
    predicts the same after loading."""
    X, y, sw = _data(6)
    est = _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw, True,
                           monkeypatch)
    data = pickle.dumps(est)
    assert b"ScaledDual" not in data
    loaded = pickle.loads(data)
    assert np.array_equal(loaded.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("kernel", ["precomputed", "linear"])
def test_other_kernels_and_zero_weights(kernel, monkeypatch):
    """Where the compiled tail does not apply (a Gram matrix from outside, explicit
    features) and with samples at weight 0: the same probabilities as main's steps."""
    X, y, sw = _data(7, n=90)
    sw[::9] = 0.0
    if kernel == "precomputed":
        X = np.exp(-0.1 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    fits = [_probability_fit(msvm.RobustMSVM(C=1.0, kernel=kernel, random_state=0), X, y, sw,
                             lean, monkeypatch) for lean in (False, True)]
    assert np.array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))
    assert fits[0].n_probability_fits_ == fits[1].n_probability_fits_
