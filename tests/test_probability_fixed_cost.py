"""Round 14, issue 25 item 1: cheaper paths to the same numbers in a small-data probability
fit (the held-out scoring's distances, ...)."""

import numpy as np
import pytest
import scipy.sparse as sp

from msvm import _kernels


def _pairs(seed):
    """Random dense blocks at scales 1e-3 to 1e3, some sharing rows (duplicates: 0 exactly)."""
    rng = np.random.default_rng(seed)
    n, m, d = rng.integers(1, 120, 3)
    A = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 4)
    B = rng.normal(size=(m, d)) * 10.0 ** rng.integers(-3, 4)
    return A, np.vstack([B, A[:3]]) if seed % 2 else B


@pytest.mark.parametrize("seed", range(40))
def test_fast_distances_give_scikit_learns_bits(seed, monkeypatch):
    A, B = _pairs(seed)
    fast = _kernels.kernel_matrix(A, B, "rbf", 0.7)
    monkeypatch.setattr(_kernels, "FAST_DISTANCES", False)
    assert np.array_equal(fast, _kernels.kernel_matrix(A, B, "rbf", 0.7))


def test_fast_distances_skip_scikit_learns_checks_on_dense_float64(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("euclidean_distances called on dense float64 blocks")

    A, B = _pairs(1)
    expected = _kernels.squared_distances(A, B)
    monkeypatch.setattr(_kernels, "euclidean_distances", refused)
    assert np.array_equal(_kernels.squared_distances(A, B), expected)


@pytest.mark.parametrize("convert", [sp.csr_matrix, lambda M: M.astype(np.float32)])
def test_other_inputs_still_go_through_scikit_learn(convert, monkeypatch):
    A, B = _pairs(2)
    calls = []
    original = _kernels.euclidean_distances
    monkeypatch.setattr(_kernels, "euclidean_distances",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    A, B = convert(A), convert(B)
    _kernels.squared_distances(A, B)
    assert calls


class _CountingNumPy:
    """numpy as ``msvm._sequence`` sees it, counting the medians taken."""

    def __init__(self):
        self.medians = 0

    def median(self, *args, **kwargs):
        self.medians += 1
        return np.median(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(np, name)


def test_drift_test_is_found_once_per_source(monkeypatch):
    """Whether a source's scores can drift (a median of its kernel diagonal) is found once
    per sequence, not twice at every solve of a lean chain."""
    from msvm import ReinforcedMSVM, _sequence
    from msvm.datasets import make_reinforced_example

    counting, solves, sequences = _CountingNumPy(), [], []
    real_solve, real_init = _sequence.solve, _sequence.DualSequence.__init__
    monkeypatch.setattr(_sequence, "np", counting)
    monkeypatch.setattr(_sequence, "solve", lambda *a, **k: solves.append(1) or real_solve(*a, **k))
    monkeypatch.setattr(_sequence.DualSequence, "__init__",
                        lambda *a, **k: sequences.append(1) or real_init(*a, **k))
    X, y = make_reinforced_example(120, "4.1.1", random_state=0)
    ReinforcedMSVM(C=1.0, probability=True, probability_grid=4).fit(X, y)
    assert len(solves) > 2 * len(sequences)
    # the penalty's median and the drift test's, once per sequence (before: 2 per solve)
    assert counting.medians <= 2 * len(sequences)


def test_drift_answer_follows_a_new_source():
    from msvm._sequence import DualSequence

    class Source:
        def __init__(self, diag):
            self.diag = np.asarray(diag, float)

        def diagonal(self):
            return self.diag.copy()

    seq = DualSequence.__new__(DualSequence)
    seq._drift = None
    seq.src = Source([1.0, 2.0, 3.0])
    assert not seq._scores_can_drift()
    seq.src = Source([1.0, 1.0, 1e150])
    assert seq._scores_can_drift()


def test_probabilities_do_not_depend_on_the_distance_path(monkeypatch):
    from msvm import ReinforcedMSVM
    from msvm.datasets import make_reinforced_example

    X, y = make_reinforced_example(150, "4.1.1", random_state=3)
    X_test, _ = make_reinforced_example(60, "4.1.1", random_state=4)

    def proba():
        return ReinforcedMSVM(C=1.0, probability=True, probability_grid=4).fit(
            X, y).predict_proba(X_test)

    fast = proba()
    monkeypatch.setattr(_kernels, "FAST_DISTANCES", False)
    assert np.array_equal(fast, proba())
