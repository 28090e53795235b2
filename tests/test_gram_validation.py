"""The blockwise validation of a training Gram matrix refuses exactly what the whole-matrix
checks refused (asymmetry, non-finite entries, indefiniteness), without n x n temporaries."""

import tracemalloc

import numpy as np
import pytest

from msvm import ReinforcedMSVM
from msvm._kernels import GRAM_BLOCK, PSD_MAX_SAMPLES, check_gram, smallest_eigenvalue


def _rbf_gram(n, seed=0, gamma=0.5):
    X = np.random.default_rng(seed).standard_normal((n, 3))
    sq = np.einsum("ij,ij->i", X, X)
    K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0))
    return (K + K.T) / 2


# sizes on both sides of a block edge and of the full-factorization limit
SIZES = [3, GRAM_BLOCK + 7, PSD_MAX_SAMPLES + 50]


@pytest.mark.parametrize("n", SIZES)
def test_asymmetry_is_found_in_any_block(n):
    """One entry off by more than the tolerance, in the last block pair, is refused."""
    K = _rbf_gram(n)
    assert check_gram(K) is not None
    K[n - 1, 0] += 1e-6
    with pytest.raises(ValueError, match="must be symmetric"):
        check_gram(K)


def test_symmetry_tolerance_is_that_of_allclose():
    """Differences within np.allclose(K, K.T, rtol=1e-8, atol=1e-10 * max|diag|) pass."""
    K = _rbf_gram(GRAM_BLOCK + 7)
    K[-1, 0] += 0.5e-10
    assert np.allclose(K, K.T, rtol=1e-8, atol=1e-10)
    check_gram(K)


@pytest.mark.parametrize("n", SIZES)
def test_non_finite_entry_is_found_in_any_block(n):
    K = _rbf_gram(n)
    K[n - 1, n - 2] = K[n - 2, n - 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_gram(K)


def test_indefinite_pair_is_found_outside_the_random_subsample():
    """Above PSD_MAX_SAMPLES the factorization sees a random subsample; a pair of samples
    with |K_ij| > sqrt(K_ii K_jj) is refused wherever it is (every 2 x 2 minor is read)."""
    n = PSD_MAX_SAMPLES + 600
    K = np.eye(n)
    rng = np.random.default_rng(0)
    i, j = rng.choice(n, 2, replace=False)
    K[i, j] = K[j, i] = 1.5
    with pytest.raises(ValueError, match=r"not positive semidefinite.*smallest eigenvalue"):
        check_gram(K)


def test_indefinite_full_matrix_reports_its_smallest_eigenvalue():
    K = _rbf_gram(300) - 0.5 * np.eye(300) * 3
    expected = np.linalg.eigvalsh(K)[0]
    with pytest.raises(ValueError, match="smallest eigenvalue") as info:
        ReinforcedMSVM(kernel="precomputed").fit(K, np.arange(300) % 2)
    assert f"{expected:.3g}" in str(info.value)


def test_smallest_eigenvalue_matches_dense_eigh():
    A = _rbf_gram(400) - 0.3 * np.eye(400)
    assert smallest_eigenvalue(A) == pytest.approx(np.linalg.eigvalsh(A)[0], rel=1e-8)


def test_validation_allocates_far_less_than_the_gram_matrix():
    """Above the full-factorization size the check holds no n x n temporary: its peak
    allocation stays below a quarter of K (the previous checks took twice K)."""
    n = 2 * PSD_MAX_SAMPLES + 500
    K = _rbf_gram(n)
    tracemalloc.start()
    try:
        check_gram(K)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 0.25 * K.nbytes
