"""The fixed cost of a probability refit cut where it arises (round 13), the same results.

``msvm._probability.LEAN_LEVELS`` switches the round's changes: units of work in turn without
joblib at one job, X and y validated once for the whole probability fit, the kernel width
resolved once per sequence of checked refits, the calibration folds' fits without objective,
penalty and duality gap, no DegenerateFitWarning formed for a refit; and
``msvm._intercept.ROOTED_SHIFT`` the common shift of the exact intercepts found from the root
of its sum.  Off, they give round 12's path: the probabilities must be the same bit for bit.
"""

import math

import numpy as np
import pytest

from sklearn.base import clone

import msvm
from msvm import _intercept, _probability
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
    monkeypatch.setattr(_intercept, "ROOTED_SHIFT", lean)
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


def test_kept_chains_keep_their_objective_and_gap(small):
    """Only the calibration folds' (discarded) fits skip the objective and the duality gap:
    the full data's weighted fits (``probability_estimators_``) keep both, as fits."""
    X, y, _ = small
    est = msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    for chain in est.probability_estimators_:
        for fit in chain:
            assert np.isfinite(fit.objective_) and np.isfinite(fit.duality_gap_)
            assert not fit._decision_only()


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


def _bracket(b0, bmin, bmax, rooted):
    finite = np.concatenate([bmin[np.isfinite(bmin)], bmax[np.isfinite(bmax)], b0])
    span = 2.0 * (np.abs(finite).max() + 1.0)
    _intercept.ROOTED_SHIFT = rooted
    try:
        return _intercept._shift_bisection(b0, bmin, bmax, span)
    finally:
        _intercept.ROOTED_SHIFT = True


def test_rooted_shift_gives_the_bisection_bracket():
    """The common shift found from the root of its sum ends in the bracket the plain
    bisection ends in, bit for bit: random boxes of every scale, infinite sides, empty
    boxes, roots near 0 and roots far from b0."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        k = int(rng.integers(2, 8))
        b0 = rng.normal(size=k) * 10.0 ** rng.integers(-3, 4)
        bmin = b0 + rng.normal(size=k) * 10.0 ** rng.integers(-12, 3)
        bmax = bmin + np.abs(rng.normal(size=k)) * 10.0 ** rng.integers(-12, 3) * (
            rng.random(k) < 0.8)
        if rng.random() < 0.3:
            bmin[rng.integers(k)] = -np.inf
        if rng.random() < 0.3:
            bmax[rng.integers(k)] = np.inf
        if rng.random() < 0.2:                       # the root at (nearly) 0
            bmin, bmax = b0 - 1.0, b0 + 1.0
            b0 = b0 - b0.mean() + 1e-300 * rng.normal()
        assert _bracket(b0, bmin, bmax, True) == _bracket(b0, bmin, bmax, False)


def test_rooted_shift_search_is_exact_on_its_own():
    """``_smallest_reaching`` returns the smallest float at which the float sum reaches 0."""
    terms = [(0.3, -1.0, 2.0), (-0.1, -0.5, 0.5), (1e-9, -math.inf, 1.0)]

    def total(theta):
        acc = 0.0
        for start, low, high in terms:
            value = start + theta
            acc += high if value > high else (low if value < low else value)
        return acc

    c = _intercept._smallest_reaching(total, terms, 10.0)
    assert total(c) >= 0.0 > total(math.nextafter(c, -math.inf))
