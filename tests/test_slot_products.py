"""The slot-space products of a fit, computed without BLAS, against the matrix formulas."""

import numpy as np
import pytest

from msvm._slot_products import centered_slots, feature_weights, times_small, weighted_sum


@pytest.mark.parametrize("k", [2, 3, 7])
def test_products_match_their_matrix_formulas(k):
    rng = np.random.default_rng(k)
    A = rng.normal(size=(50, k))
    B = rng.normal(size=(k, k - 1))
    P = np.eye(k) - 1.0 / k
    np.testing.assert_allclose(centered_slots(A), A @ P, atol=1e-14)
    np.testing.assert_allclose(times_small(A, B), A @ B, atol=1e-13)
    W = rng.normal(size=(6, k))
    T = rng.normal(size=(k - 1, k))
    np.testing.assert_allclose(feature_weights(W, 1.5, T), T @ (-1.5 * P @ W.T), atol=1e-13)
    w, v = rng.normal(size=50), rng.normal(size=50)
    assert weighted_sum(w, v) == pytest.approx(float(w @ v), abs=1e-13)
