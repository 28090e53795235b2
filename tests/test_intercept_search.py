"""The exact intercept search after its sort, compiled (msvm/_core/_intercepts.pyx): the
intercepts of the Python search bit for bit, and the Python search where it does not apply."""

import numpy as np
import pytest

import msvm
from msvm import _intercept
from msvm._core._intercepts import plain_slot_search
from msvm.datasets import make_reinforced_example


def _python_search(slots, b0, monkeypatch):
    monkeypatch.setattr(_intercept, "COMPILED_SEARCH", False)
    try:
        return _intercept.slot_intercepts_from_breakpoints(slots, b0)
    except RuntimeError:
        return None
    finally:
        monkeypatch.undo()


def _random_slots(rng, k):
    """k slots of sorted breakpoints and cumulative slopes, with ties (rounded values),
    empty slots and slopes of any scale."""
    slots = []
    for _ in range(k):
        m = int(rng.integers(0, 25))
        t = rng.standard_normal(m) * 10.0 ** rng.integers(-3, 4)
        if rng.random() < 0.5:
            t = np.round(t, int(rng.integers(0, 2)))
        rise = rng.exponential(1.0, m) * 10.0 ** rng.integers(-2, 3)
        if rng.random() < 0.3:
            rise = np.round(rise, 1)
        cum = np.empty(m + 1)
        cum[0] = 0.0
        np.cumsum(rise, out=cum[1:])
        cum += -rise.sum() * rng.random() + (rng.standard_normal() if rng.random() < 0.1 else 0)
        slots.append((np.sort(t), cum))
    return slots


def test_compiled_search_gives_the_python_intercepts(monkeypatch):
    """Random slots (k = 2 to 7, ties, empty slots): the same intercepts, bit for bit, or
    None where the Python search finds none."""
    rng = np.random.default_rng(7)
    compared = 0
    for _ in range(3000):
        k = int(rng.integers(2, 8))
        slots = _random_slots(rng, k)
        b0 = rng.standard_normal(k) * 5
        fast = plain_slot_search(slots, b0)
        slow = _python_search(slots, b0, monkeypatch)
        if fast is None:
            continue
        compared += 1
        assert slow is not None
        np.testing.assert_array_equal(fast, slow)
        assert np.array_equal(np.signbit(fast), np.signbit(slow))
    assert compared > 2500


def test_compiled_search_declines_where_it_does_not_apply():
    """8 or more slots, a non-finite slope or KKT estimate, no candidate: None (the Python
    search runs)."""
    rng = np.random.default_rng(1)
    slots = _random_slots(rng, 8)
    assert plain_slot_search(slots, np.zeros(8)) is None
    slots = _random_slots(rng, 3)
    assert plain_slot_search(slots, np.array([0.0, np.nan, 0.0])) is None
    t, cum = slots[0]
    slots[0] = (t, np.concatenate([cum[:-1], [np.inf]]))
    assert plain_slot_search(slots, np.zeros(3)) is None
    apart = [(np.array([0.0]), np.array([1.0, 2.0])), (np.array([0.0]), np.array([-2.0, -1.0]))]
    assert plain_slot_search(apart, np.zeros(2)) is None       # no common slope


@pytest.mark.parametrize("make", [msvm.ReinforcedMSVM, msvm.AngleBasedMSVM])
def test_fits_are_the_same_with_the_compiled_search(make, monkeypatch):
    """Fits and probability fits are the same bit for bit with the Python search."""
    X, y = make_reinforced_example(120, "4.1.2", random_state=4)
    X_test, _ = make_reinforced_example(50, "4.1.2", random_state=5)
    out = []
    for compiled in (False, True):
        monkeypatch.setattr(_intercept, "COMPILED_SEARCH", compiled)
        est = make(C=10.0, probability=True, probability_grid=3, random_state=0).fit(X, y)
        out.append((est.intercept_, est.objective_, est.predict_proba(X_test)))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
