"""The RBF kernel block of a chunked fit's mapped passes (msvm._kernels.LandmarkRBF).

A Nystroem map's kernel values against its landmarks, computed in every pass of a chunked
fit, are one product of the rows extended by [1, ||x||^2] with the landmarks' prepared side
and the exponential; the cancellation guard finds the entries it recomputes through the
landmarks' sorted norms.  The values are those of ``kernel_matrix`` (scikit-learn's
distances after the shift by the landmarks' median, lost digits recomputed) to rounding:
with large common offsets, duplicates of landmarks, near-duplicates, landmarks of equal
norms (the scan), rows whose exponents would overflow (the fallback).
"""

import pickle

import numpy as np
import pytest

from msvm._approx import NystroemMap
from msvm._kernels import LandmarkRBF, kernel_matrix

# relative difference allowed between the two computations of a kernel value
RTOL = 1e-12


def _assert_same(X, L, gamma):
    want = kernel_matrix(X, L, "rbf", gamma)
    got = LandmarkRBF(L, gamma)(X)
    assert got.shape == want.shape and got.dtype == np.float64
    assert np.all(np.abs(got - want) <= RTOL * want + 1e-300)
    return got, want


@pytest.mark.parametrize("offset", [0.0, 1e8])
@pytest.mark.parametrize("gamma", [0.05, 3.0, 1e4])
def test_landmark_rbf_equals_kernel_matrix(offset, gamma):
    """Random rows against landmarks taken from them, at a common offset of 0 and 1e8 and
    gammas from flat to sharp: the values of kernel_matrix within 1e-12 relative."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 7)) + offset
    L = X[rng.choice(400, 60, replace=False)].copy()
    _assert_same(rng.normal(size=(300, 7)) + offset, L, gamma)
    _assert_same(X, L, gamma)


@pytest.mark.parametrize("offset", [0.0, 1e8])
def test_duplicates_of_landmarks_give_exactly_one(offset):
    """A row equal to a landmark (with a common offset of 1e8, where the product's
    cancellation leaves only rounding noise) has kernel value exactly 1 against it, at a
    gamma large enough that the noise alone would be visible; near-duplicates (1e-5 away)
    get their value from the differences, as kernel_matrix's."""
    rng = np.random.default_rng(1)
    L = rng.normal(size=(50, 5)) * 3.0 + offset
    X = np.vstack([L[[4, 9, 9, 31]], L[[2, 17]] + 1e-5, rng.normal(size=(20, 5)) + offset])
    got, want = _assert_same(X, L, 1e6)
    assert got[0, 4] == got[1, 9] == got[2, 9] == got[3, 31] == 1.0
    assert 0.0 < got[4, 2] < 1.0 and 0.0 < got[5, 17] < 1.0


def test_landmarks_of_equal_norms_scan_the_block():
    """Landmarks of equal norms about their median (the signed unit vectors: every norm in
    every row's window) take the block scan: the same values, duplicates exactly 1."""
    d = 6
    L = np.vstack([np.eye(d), -np.eye(d)]) * 2.0 + 1e3
    rng = np.random.default_rng(2)
    X = np.vstack([L[[0, 7]], L, rng.normal(size=(5, d)) + 1e3])
    got, _ = _assert_same(X, L, 50.0)
    assert got[0, 0] == got[1, 7] == 1.0


def test_rows_beyond_the_safe_range_fall_back():
    """Rows whose squared norms would overflow the product (entries of 1e200) give the
    values of kernel_matrix (zero against every landmark); the other rows are unchanged."""
    rng = np.random.default_rng(3)
    L = rng.normal(size=(20, 4))
    X = np.vstack([rng.normal(size=(5, 4)), np.full((1, 4), 1e200)])
    with np.errstate(over="ignore", invalid="ignore"):
        want = kernel_matrix(X, L, "rbf", 0.5)
        got = LandmarkRBF(L, 0.5)(X)
    assert np.array_equal(got, want)
    assert np.all(got[-1] == 0.0)


def test_nystroem_pass_block_is_kernel_block_and_not_pickled():
    """NystroemMap.pass_block (RBF) equals kernel_block; the kept LandmarkRBF is dropped
    when the map is pickled (sent to the workers) and rebuilt there; other kernels use
    kernel_block itself."""
    rng = np.random.default_rng(4)
    L = rng.normal(size=(30, 3))
    fmap = NystroemMap(L, np.eye(30), "rbf", 0.7, 3, 0.0)
    X = rng.normal(size=(40, 3))
    assert np.allclose(fmap.pass_block(X), fmap.kernel_block(X), rtol=RTOL, atol=0.0)
    assert "_lean" in fmap.__dict__
    copy = pickle.loads(pickle.dumps(fmap))
    assert "_lean" not in copy.__dict__
    assert np.array_equal(copy.pass_block(X), fmap.pass_block(X))
    poly = NystroemMap(L, np.eye(30), "poly", 0.7, 2, 1.0)
    assert np.array_equal(poly.pass_block(X), poly.kernel_block(X))
