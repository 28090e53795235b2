"""The working set's load at small n (msvm/_core/_smo.pyx, _rows.pyx; issue 25 item 1): the
kernel block gathered whole where rows are short (``_rows.UPPER_MIN_N``) and the block's
variables picked with the problem's fields in locals (``_smo.FLAT_PICK``) give the same
fits bit for bit as the triangle-and-mirror gather and the per-variable rule, and the same
probabilities; the block loop's profile counts what it ran while on and nothing once off."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from benchmarks.probability_lean import main_0fa54fe_load as _old_load
from msvm._core import _smo


def _data(n, k, seed):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=k, n_clusters_per_class=1, class_sep=0.8,
                               random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


def _fit_values(est, X, y):
    est.fit(X, y)
    return est.objective_, est.n_iter_, est.dual_coef_, est.decision_function(X[:60])


def _assert_same(new, old):
    assert new[0] == old[0] and new[1] == old[1]
    np.testing.assert_array_equal(new[2], old[2])
    np.testing.assert_array_equal(new[3], old[3])


MODELS = {
    "reinforced": lambda **kw: ReinforcedMSVM(**kw),
    "llw": lambda **kw: ReinforcedMSVM(reinforcement=0.0, **kw),
    "angle": lambda **kw: AngleBasedMSVM(**kw),
    "ww": lambda **kw: WestonWatkinsMSVM(**kw),
}


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("kernel, C, k, cache_size", [
    ("rbf", 1.0, 3, 200.0),
    ("rbf", 30.0, 4, 0.5),          # a cache of about 200 rows: rows evicted
    ("poly", 3.0, 3, 200.0),
    ("linear", 10.0, 5, 0.5),
])
def test_small_block_load_gives_the_same_fit(model, kernel, C, k, cache_size):
    """Switches on and off: the same objective, iterations, duals and decision values."""
    X, y = _data(600, k, seed=k)
    make = MODELS[model]
    kw = dict(C=C, kernel=kernel, cache_size=cache_size, random_state=0)
    if kernel != "linear":
        kw["gamma"] = 0.3
    new = _fit_values(make(**kw), X, y)
    with _old_load():
        old = _fit_values(make(**kw), X, y)
    _assert_same(new, old)


@pytest.mark.parametrize("cache_dtype", ["float32", "float64"])
def test_small_block_load_gives_the_same_fit_on_two_threads(cache_dtype):
    """With 2 threads the whole block is gathered in parts of rows: the same fit as the
    triangle's parts and as one thread."""
    X, y = _data(800, 4, seed=7)
    kw = dict(C=10.0, gamma=0.3, cache_dtype=cache_dtype, random_state=0)
    new = _fit_values(ReinforcedMSVM(n_threads=2, **kw), X, y)
    with _old_load():
        old = _fit_values(ReinforcedMSVM(n_threads=2, **kw), X, y)
    _assert_same(new, old)
    _assert_same(_fit_values(ReinforcedMSVM(n_threads=1, **kw), X, y), new)


@pytest.mark.parametrize("cache_dtype", ["float32", "float64"])
def test_small_block_load_gives_the_same_probabilities(cache_dtype):
    """A probability fit (its weight levels: warm solves at small n) gives the same
    probabilities with the switches on and off."""
    X, y = _data(240, 3, seed=5)
    kw = dict(C=1.0, gamma=0.5, probability=True, cache_dtype=cache_dtype, random_state=0)
    new = ReinforcedMSVM(**kw).fit(X, y)
    with _old_load():
        old = ReinforcedMSVM(**kw).fit(X, y)
    assert new.n_probability_fits_ == old.n_probability_fits_
    np.testing.assert_array_equal(new.predict_proba(X), old.predict_proba(X))


def _profile_parts(profile):
    """The counts and the load's parts of an _smo._profile() dict."""
    return ({name: profile[name] for name in _smo.PROFILE_COUNTS},
            {name: profile[name] for name in _smo.PROFILE_LOAD_PARTS})


def test_profile_counts_while_on_only():
    """_smo._profile counts solves, scans, blocks and steps and times the load's parts
    while on; nothing once off.  Its keys are the phases', the counts' and the parts'."""
    X, y = _data(300, 3, seed=2)
    _smo._profile(True)
    try:
        ReinforcedMSVM(C=1.0, gamma=0.5, random_state=0).fit(X, y)
    finally:
        profile = _smo._profile(False)
    assert set(profile) == set(_smo.PROFILE_PHASES + _smo.PROFILE_COUNTS
                               + _smo.PROFILE_LOAD_PARTS)
    counts, times = _profile_parts(profile)
    assert counts["runs"] >= 1 and counts["blocks"] >= 1 and counts["steps"] >= 1
    assert counts["full scans"] <= counts["scans"]
    assert counts["block entries"] >= counts["block samples"] >= counts["blocks"]
    assert all(t >= 0.0 for t in times.values()) and sum(times.values()) > 0.0
    ReinforcedMSVM(C=1.0, gamma=0.5, random_state=0).fit(X, y)
    counts, times = _profile_parts(_smo._profile())
    assert not any(counts.values()) and not any(times.values())
