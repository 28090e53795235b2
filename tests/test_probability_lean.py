"""The fixed cost of a probability refit cut where it arises (round 13), the same results.

``msvm._probability.LEAN_LEVELS`` switches the round's changes: units of work in turn without
joblib at one job, X and y validated once for the whole probability fit, the kernel width
resolved once per sequence of checked refits, the calibration folds' fits without objective,
penalty and duality gap, no DegenerateFitWarning formed for a refit.  Off, they give round
12's path: the probabilities must be the same bit for bit.
"""

import numpy as np
import pytest

from sklearn.base import clone

import msvm
from msvm import _probability
from msvm.datasets import make_reinforced_example

# every estimator with a probability estimate, at a small size (k = 3, 60 samples)
ESTIMATORS = [
    msvm.ReinforcedMSVM(C=1.0), msvm.WestonWatkinsMSVM(C=1.0), msvm.AngleBasedMSVM(C=1.0),
    msvm.RobustMSVM(C=1.0), msvm.WeightedRobustMSVM(C=1.0), msvm.AdaptiveWeightedSVM(C=1.0),
]


@pytest.fixture(scope="module")
def small():
    X, y = make_reinforced_example(60, "4.1.1", random_state=2)
    X_test, _ = make_reinforced_example(80, "4.1.1", random_state=9)
    return X, y, X_test


def _proba(estimator, X, y, X_test, lean, monkeypatch):
    monkeypatch.setattr(_probability, "LEAN_LEVELS", lean)
    est = estimator.set_params(probability=True, probability_grid=3, random_state=0)
    est.fit(X, y)
    return est, est.predict_proba(X_test)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_lean_probabilities_are_round_12s(estimator, small, monkeypatch):
    """With the round's changes the probabilities (and the number of fits, the chosen C
    factor, exponent and floor) are those of round 12's path, bit for bit."""
    X, y, X_test = small
    old, p_old = _proba(clone(estimator), X, y, X_test, False, monkeypatch)
    new, p_new = _proba(clone(estimator), X, y, X_test, True, monkeypatch)
    np.testing.assert_array_equal(p_new, p_old)
    assert new.n_probability_fits_ == old.n_probability_fits_
    for name in ("probability_C_factor_", "probability_exponent_", "probability_floor_"):
        assert getattr(new, name) == getattr(old, name), name
    assert np.array_equal(np.argmax(p_new, axis=1), np.searchsorted(new.classes_,
                                                                    new.predict(X_test)))


def test_kept_chains_keep_their_objective_and_gap(small, monkeypatch):
    """Only the calibration folds' (discarded) fits skip the objective and the duality gap:
    the full data's weighted fits (``probability_estimators_``) keep both, as fits, where
    they are refits (since round 14 the chains of one-solve kernel models are lean steps,
    whose fits hold no objective: tests/test_probability_levels.py)."""
    from msvm import _level_chain

    monkeypatch.setattr(_level_chain, "LEAN_STEPS", False)
    X, y, _ = small
    est = msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    for chain in est.probability_estimators_:
        for fit in chain:
            assert np.isfinite(fit.objective_) and np.isfinite(fit.duality_gap_)
            assert not fit._decision_only()
            assert not hasattr(fit, "_probability_refit")   # warns as any fit when refitted


def test_fold_fits_are_decision_only(small, monkeypatch):
    """The calibration folds' fits of a one-solve model carry no objective_ (not computed);
    their decision values are those of the same fit with it."""
    X, y, _ = small
    seen = []
    real = _probability._HeldOutRatios.add

    def spy(held, factors, owns, parts):
        seen.extend(owns)
        return real(held, factors, owns, parts)

    monkeypatch.setattr(_probability._HeldOutRatios, "add", spy)
    msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    assert seen and all(own._decision_only() for own in seen)
    assert not any(hasattr(own, "objective_") or hasattr(own, "duality_gap_") for own in seen)
    # the same fit made as a public fit (clone: without the fold's marks) on the same part
    train = _probability.calibration_splits(np.searchsorted(seen[0].classes_, y))[0][0]
    plain = clone(seen[0]).set_params(warm_start=False)
    plain.fit(X[train], y[train], sample_weight=np.full(len(train), len(y) / len(train)))
    assert np.isfinite(plain.objective_)
    np.testing.assert_array_equal(seen[0].decision_values(X), plain.decision_values(X))


def test_one_job_runs_without_joblib(small, monkeypatch):
    """At one job the units of work run in turn, never through joblib's Parallel (round 12
    dispatched them through it sequentially)."""
    import joblib

    X, y, _ = small

    def refuse(*args, **kwargs):
        raise AssertionError("joblib.Parallel called at n_jobs=1")

    monkeypatch.setattr(joblib, "Parallel", refuse)
    msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    monkeypatch.setattr(_probability, "LEAN_LEVELS", False)
    with pytest.raises(AssertionError, match="joblib.Parallel"):
        msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)


def test_kernel_width_resolved_once_per_data_set(small, monkeypatch):
    """The kernel width (and X's scale check) of the refits is resolved once per sequence
    of checked refits on a validated X, not once per refit (round 12: once per fit)."""
    from msvm import _base

    X, y, _ = small
    calls = []
    real = _base.resolve_gamma
    monkeypatch.setattr(_base, "resolve_gamma",
                        lambda *args: calls.append(args[0]) or real(*args))
    est = msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    numeric = [g for g in calls if not isinstance(g, str)]
    # one numeric width per data set (the full data, two folds)
    assert len(numeric) == 3 < est.n_probability_fits_


def test_intercept_scale_and_span_are_numpys():
    """The intercept search's scale (largest |cumulative slope|) and span (largest finite
    bound or |b0|), formed on Python floats, are NumPy's values, NaN and infinities alike."""
    from msvm._intercept import _largest_abs, _largest_finite_bound

    rng = np.random.default_rng(1)
    for _ in range(500):
        k = int(rng.integers(2, 12))
        cum = np.sort(rng.normal(size=int(rng.integers(1, 6))) * 10.0 ** rng.integers(-5, 5))
        if rng.random() < 0.1:
            cum[-1] = np.inf
        if rng.random() < 0.1:
            cum[-1] = np.nan
        assert np.array_equal(_largest_abs(cum), np.abs(cum).max(), equal_nan=True)
        b0, bmin = rng.normal(size=k), rng.normal(size=k) - 3.0
        bmax = bmin + np.abs(rng.normal(size=k))
        bmin[rng.random(k) < 0.2] = -np.inf
        bmax[rng.random(k) < 0.2] = np.inf
        if rng.random() < 0.1:
            b0[0] = np.nan
        finite = np.concatenate([bmin[np.isfinite(bmin)], bmax[np.isfinite(bmax)], b0])
        assert np.array_equal(_largest_finite_bound(b0, bmin, bmax), np.abs(finite).max(),
                              equal_nan=True)
