"""Kernel blocks, k-means++ landmarks and random Fourier features through scikit-learn: the
same values as scikit-learn's where the algorithm is the same, and exact where scikit-learn's
own is not (a large common offset)."""

import numpy as np
import pytest
from sklearn.cluster import kmeans_plusplus
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from msvm._approx import fourier_map, kmeanspp_landmarks
from msvm._kernels import kernel_matrix, typical_point


@pytest.fixture(scope="module")
def blocks():
    rng = np.random.default_rng(0)
    return rng.normal(size=(150, 5)), rng.normal(size=(40, 5))


def test_rbf_block_is_scikit_learns_and_exact_under_an_offset(blocks):
    """On centred data the block is rbf_kernel's to round-off; under an offset of 1e8
    (where rbf_kernel's distances lose every digit) it is the exact kernel of the shifted
    points, and a point against itself gives exactly 1."""
    A, B = blocks
    np.testing.assert_allclose(kernel_matrix(A, B, "rbf", 0.3), rbf_kernel(A, B, gamma=0.3),
                               rtol=1e-12)
    A8, B8 = A + 1e8, B + 1e8
    exact = np.exp(-0.3 * ((A8[:, None, :] - B8[None, :, :]) ** 2).sum(axis=2))
    np.testing.assert_allclose(kernel_matrix(A8, B8, "rbf", 0.3), exact, rtol=1e-12)
    assert np.max(np.abs(rbf_kernel(A8, B8, gamma=0.3) - exact)) > 0.1   # why the shift
    K = kernel_matrix(A8, A8[:10], "rbf", 50.0)
    np.testing.assert_array_equal(np.diag(K[:10]), 1.0)


def test_poly_block_is_scikit_learns(blocks):
    A, B = blocks
    np.testing.assert_array_equal(kernel_matrix(A, B, "poly", 0.2, 3, 1.0),
                                  polynomial_kernel(A, B, degree=3, gamma=0.2, coef0=1.0))


def test_kmeanspp_landmarks_are_scikit_learns_seeding(blocks):
    """The indices are kmeans_plusplus(n_local_trials=1)'s on the median-shifted rows with
    the seed drawn from the generator (sorted), and distinct."""
    A, _ = blocks
    A = A + 1e8
    idx = kmeanspp_landmarks(A, 12, np.random.default_rng(3))
    seed = int(np.random.default_rng(3).integers(np.iinfo(np.int32).max))
    _, ref = kmeans_plusplus(A - typical_point(A), 12, random_state=seed, n_local_trials=1)
    np.testing.assert_array_equal(idx, np.sort(ref))
    assert len(np.unique(idx)) == 12


def test_kmeanspp_landmarks_with_duplicated_rows_are_distinct():
    """Three distinct rows, each repeated: 7 landmarks are 7 distinct indices, the three
    distinct points among them (drawn before any distance is zero)."""
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]]), 10, axis=0)
    for seed in range(5):
        idx = kmeanspp_landmarks(X, 7, np.random.default_rng(seed))
        assert len(np.unique(idx)) == 7
        assert len(np.unique(X[idx], axis=0)) == 3


def test_fourier_features_follow_their_definition(blocks):
    """phi(x) = sqrt(2 / m) cos(x W + b) with the map's W and b."""
    A, _ = blocks
    fmap = fourier_map(A.shape[1], 64, 0.5, np.random.default_rng(1))
    expected = np.sqrt(2.0 / 64) * np.cos(A @ fmap.weights + fmap.offsets)
    np.testing.assert_allclose(fmap.transform(A), expected, rtol=1e-14, atol=1e-15)


def test_fourier_features_are_the_same_in_chunks_in_float32_and_from_sparse_rows(
        blocks, monkeypatch):
    """The features computed in place in the output's rows, chunk by chunk (chunks of 7
    rows here), equal the definition for a dense or CSR X; float32 storage is their
    rounding; ``apply`` and ``_block`` give the same features."""
    import scipy.sparse as sp

    import msvm._products as products

    A, _ = blocks
    fmap = fourier_map(A.shape[1], 64, 0.5, np.random.default_rng(1))
    expected = np.sqrt(2.0 / 64) * np.cos(A @ fmap.weights + fmap.offsets)
    monkeypatch.setattr(products, "CHUNK_ENTRIES", 7 * 64)
    for X in (A, sp.csr_matrix(A)):
        np.testing.assert_allclose(fmap.transform(X), expected, rtol=1e-14, atol=1e-15)
        np.testing.assert_array_equal(fmap.transform(X, np.float32),
                                      fmap.transform(X).astype(np.float32))
        np.testing.assert_allclose(fmap._block(X), expected, rtol=1e-14, atol=1e-15)
    W = np.random.default_rng(2).normal(size=(3, 64))
    np.testing.assert_allclose(fmap.apply(A, W), expected @ W.T, rtol=1e-12, atol=1e-13)
