"""The slot-space products of a fit, computed without BLAS, against the matrix formulas."""

import numpy as np
import pytest

from msvm._products import centered_slots, feature_weights, times_small, weighted_sum


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


@pytest.mark.parametrize("n, d, k", [(0, 5, 3), (31, 4, 1), (32, 7, 2), (100, 50, 10),
                                     (65, 3, 5), (40, 0, 3), (10, 6, 0)])
def test_dense_rows_times_match_the_matrix_product(n, d, k):
    """The compiled X @ V of the linear path (blocks of 32 rows, slots in pairs, the rows
    left over one at a time) against numpy on every shape of the blocks."""
    from msvm._core._dense import rows_times

    rng = np.random.default_rng(n + d + k)
    X, V = rng.normal(size=(n, d)), rng.normal(size=(d, k))
    F = rows_times(X, V)
    assert F.shape == (n, k) and F.dtype == np.float64
    np.testing.assert_allclose(F, X @ V, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="columns but V has"):
        rows_times(X, rng.normal(size=(d + 1, k)))


def test_rows_times_dispatch():
    """msvm._products.rows_times: the compiled product for a C-contiguous float64 X of few
    columns and a narrow W, BLAS for a Fortran-ordered or wide X or a wide W, chunks of rows
    for float32, the sparse product for a sparse X; the same values every way."""
    import scipy.sparse as sp

    from msvm._products import NARROW, NARROW_FEATURES, rows_times

    rng = np.random.default_rng(0)
    for d in (9, NARROW_FEATURES + 1):
        X = rng.normal(size=(70, d))
        for W in (rng.normal(size=(d, 4)), rng.normal(size=(d, NARROW + 1)),
                  np.asfortranarray(rng.normal(size=(d, 4)))):
            expected = X @ W
            for Xv in (X, np.asfortranarray(X), sp.csr_matrix(X)):
                np.testing.assert_allclose(rows_times(Xv, W), expected, rtol=1e-12,
                                           atol=1e-12)
            np.testing.assert_allclose(rows_times(X.astype(np.float32), W),
                                       X.astype(np.float32).astype(np.float64) @ W,
                                       rtol=1e-12, atol=1e-12)
