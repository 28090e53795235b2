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
