"""The passes a solve skips outside the smoothed-primal start (round 15b, issue 25 item 4).

Two passes over the training data are not repeated: ``DualSequence.move_to`` returns at once
when the sequence is at the same dual variables under the same slot map
(``msvm._sequence.SKIP_SAME_MOVE``: a probability chain's next level, warm-started from the
last, differs only in its bounds), and the snapshot of an explicit-feature fit forms X Wh and
X W of float32 features in one pass (``msvm._snapshot.SHARED_PASS``).  Both are exact by
construction (the same slot sums from the same loop; the same BLAS products of the same
chunks), so every fitted attribute is compared bit for bit with the switches off.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, _sequence, _snapshot
from msvm._products import rows_times

ATTRIBUTES = ("objective_", "duality_gap_", "kkt_residual_", "intercept_", "coef_",
              "dual_coef_", "n_iter_")


def _data(n=300, d=8, k=3, seed=0):
    X, y = make_classification(n, d, n_informative=5, n_redundant=0, n_classes=k,
                               n_clusters_per_class=1, random_state=seed)
    w = np.random.default_rng(seed).uniform(0.2, 3.0, n)
    return X, y, w


def _switched(monkeypatch, on):
    monkeypatch.setattr(_sequence, "SKIP_SAME_MOVE", on)
    monkeypatch.setattr(_snapshot, "SHARED_PASS", on)


def _assert_same_fit(a, b):
    for name in ATTRIBUTES:
        if hasattr(a, name):
            np.testing.assert_array_equal(np.asarray(getattr(a, name)),
                                          np.asarray(getattr(b, name)), err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_times_pair_is_rows_times(dtype):
    """The shared pass gives the two products of ``rows_times`` bit for bit, over several
    chunks of rows."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((5000, 600)).astype(dtype)      # 5,000 rows: 2 chunks of 3,495
    A, B = rng.standard_normal((600, 4)), rng.standard_normal((600, 4))
    XA, XB = _snapshot.rows_times_pair(X, A, B)
    np.testing.assert_array_equal(XA, rows_times(X, A))
    np.testing.assert_array_equal(XB, rows_times(X, B))


@pytest.mark.parametrize("params", [
    dict(kernel_approximation="nystroem", n_components=40),
    dict(kernel_approximation="rff", n_components=40),
    dict(kernel="linear"),
], ids=["nystroem", "rff", "linear"])
def test_weighted_fit_attributes_identical(monkeypatch, params):
    """A weighted fit on explicit features has the same objective, gap, KKT residual,
    intercepts and coefficients with the passes skipped as with them repeated; the snapshot
    of an approximate kernel's fit takes the shared pass (float32 features)."""
    X, y, w = _data()
    seen = []
    pair = _snapshot.rows_times_pair
    monkeypatch.setattr(_snapshot, "rows_times_pair",
                        lambda X, A, B: seen.append(X.dtype) or pair(X, A, B))
    fits = {}
    for on in (False, True):
        _switched(monkeypatch, on)
        fits[on] = ReinforcedMSVM(C=10.0, random_state=0, **params).fit(X, y, sample_weight=w)
    _assert_same_fit(fits[False], fits[True])
    assert seen
    if "kernel_approximation" in params:
        assert np.float32 in seen


def _counted_holds(monkeypatch):
    """Count the moves ``DualSequence._holds`` lets ``move_to`` skip."""
    skipped = []
    holds = _sequence.DualSequence._holds

    def counted(self, problem, alpha):
        result = holds(self, problem, alpha)
        skipped.append(result)
        return result
    monkeypatch.setattr(_sequence.DualSequence, "_holds", counted)
    return skipped


@pytest.mark.parametrize("params", [
    dict(kernel_approximation="nystroem", n_components=30),
    dict(kernel="linear"),
], ids=["nystroem", "linear"])
def test_probability_chain_identical(monkeypatch, params):
    """probability=True (its chains of weighted refits, each level warm-started from the
    last) gives the same probabilities and fitted attributes with the moves skipped, and
    skips some."""
    X, y, w = _data(n=240, seed=2)
    skipped = _counted_holds(monkeypatch)
    fits = {}
    for on in (False, True):
        _switched(monkeypatch, on)
        del skipped[:]
        fits[on] = ReinforcedMSVM(C=10.0, probability=True, probability_grid=4,
                                  random_state=0, **params).fit(X, y, sample_weight=w)
        if on:
            assert any(skipped)
        else:
            assert not any(skipped)
    _assert_same_fit(fits[False], fits[True])
    np.testing.assert_array_equal(fits[False].predict_proba(X), fits[True].predict_proba(X))


def test_same_slot_map():
    """Duals differing only in their bounds and linear terms share a slot map; other
    directions do not."""
    from msvm._problem import DualProblem
    a = DualProblem(k=3, var_ptr=[0, 2, 4], slot1=[0, 1, 1, 2], coef1=[1.0, 1.0, 1.0, -1.0],
                    lin=[1.0, 1.0, 1.0, 1.0], lo=[0.0] * 4, hi=[1.0] * 4)
    assert _sequence.same_slot_map(a, a)
    assert _sequence.same_slot_map(a, a.replace(hi=np.full(4, 5.0), lin=np.zeros(4)))
    assert not _sequence.same_slot_map(a, a.replace(coef1=np.array([1.0, 1.0, 1.0, 1.0])))
    assert not _sequence.same_slot_map(a, a.replace(slot1=np.array([0, 1, 2, 2])))
