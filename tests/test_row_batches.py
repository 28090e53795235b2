"""Kernel rows computed in batches (the SMO path's prefetch) equal, to the last bit, the dot
products summed feature by feature in order: a product rounded, then added, for the plain
loops (checked here).

The batches read X in panels of 16 samples, four rows against a panel, the samples outside
whole panels one at a time (_dense_dots.h); rows are split between threads and computed in
column tiles (_rows.pyx).  Every value must come out the same whatever the path, so that the
kernel matrix stays exactly symmetric and a fit's iterates do not depend on which rows were
computed together: checked here at sizes around the panels' and tiles' edges.
"""

import numpy as np
import pytest

from msvm._core import _rows
from msvm._core._rows import make_row_source


def _ordered_dots(X, i):
    """x_i . x_r for every r, summed over the features in order from 0.0 (NumPy's
    elementwise products and sums: each rounded, never fused)."""
    acc = np.zeros(X.shape[0])
    for f in range(X.shape[1]):
        acc = acc + X[i, f] * X[:, f]
    return acc


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    # values with long mantissas, so that any other order of operations shows in the bits
    return rng.normal(size=(n, d)) * np.exp(rng.normal(size=d))


@pytest.mark.parametrize("n,d", [(5, 3), (16, 1), (17, 20), (47, 7), (1003, 20), (1040, 2),
                                 (4133, 5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_batch_dots_equal_the_ordered_sums(n, d, threads):
    """The linear kernel's rows (the dot products themselves) of batches of 1 to 70 rows
    (70: a batch of 64 and one of 6) equal the ordered sums, for n below, at and around
    multiples of the 16-sample panels."""
    X = _data(n, d, seed=n + d)
    rng = np.random.default_rng(1)
    for m in sorted({1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 37, 64, 70} & set(range(1, n + 1))):
        src = make_row_source("linear-rows", 3, X=X, capacity=n)
        src.set_threads(threads)
        idx = rng.choice(n, m, replace=False)
        src.prefetch_rows(idx)
        assert src.n_computed == m
        for i in idx:
            np.testing.assert_array_equal(src.kernel_row(int(i)), _ordered_dots(X, i))
        assert src.n_computed == m                      # served from the batch


@pytest.mark.parametrize("tile", [16, 48, 1024])
def test_rbf_batches_in_tiles_equal_rows_alone(tile):
    """RBF rows computed in batches, a column tile at a time, on two threads (parts of the
    samples) equal the rows computed alone, and the block of the batch is exactly
    symmetric: n = 2,000 + 9 samples (a partial panel at the end), 16 + 7 rows."""
    X = _data(2009, 20, seed=3)
    idx = np.random.default_rng(2).choice(2009, 23, replace=False)
    alone = make_row_source("rbf", 3, X=X, gamma=0.05, capacity=30)
    want = np.array([alone.kernel_row(int(i)) for i in idx])
    old = _rows._tiles()
    try:
        _rows._tiles(row_tile=tile)
        src = make_row_source("rbf", 3, X=X, gamma=0.05, capacity=30)
        src.set_threads(2)
        src.prefetch_rows(idx)
        got = np.array([src.kernel_row(int(i)) for i in idx])
    finally:
        _rows._tiles(*old)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, idx], got[:, idx].T)


U = 2.0 ** -53                                   # the unit roundoff of float64
SIZES = (1, 2, 3, 4, 5, 13, 16, 37, 70)           # 70: a batch of 64 rows and one of 6


@pytest.mark.parametrize("n", [1003, 1040, 4133])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tile", [16, 48, 1024])
def test_rbf_matrix_exactly_symmetric_through_every_path(n, threads, tile):
    """RBF rows computed in batches of 1 to 64 rows (panels, the samples outside whole
    panels, column tiles, one or two threads: 4 parts of the samples at n = 4,133) equal the
    rows computed alone, and every block of the kernel matrix they span is exactly symmetric
    with its diagonal exactly 1."""
    X = _data(n, 20, seed=n)
    rng = np.random.default_rng(n + tile)
    idx = rng.choice(n, sum(SIZES), replace=False)
    alone = make_row_source("rbf", 3, X=X, gamma=0.05, capacity=len(idx))
    want = np.array([alone.kernel_row(int(i)) for i in idx])
    old = _rows._tiles()
    try:
        _rows._tiles(row_tile=tile)
        src = make_row_source("rbf", 3, X=X, gamma=0.05, capacity=len(idx),
                              cache_dtype="float64")
        src.set_threads(threads)
        at = 0
        for m in SIZES:
            src.prefetch_rows(idx[at:at + m])
            at += m
        assert src.n_computed == len(idx)
        got = np.array([src.kernel_row(int(i)) for i in idx])
    finally:
        _rows._tiles(*old)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got[:, idx], got[:, idx].T)
    np.testing.assert_array_equal(np.diag(got[:, idx]), 1.0)


@pytest.mark.parametrize("kernel,params", [("rbf", dict(gamma=0.05)),
                                           ("dots", {}),
                                           ("poly", dict(gamma=0.1, coef0=1.0, degree=3))])
def test_values_within_rounding_of_numpy(kernel, params):
    """Each value within the rounding bound of a float64 NumPy reference: a dot product
    within 2 d u sum_f |x_i[f] x_r[f]| of NumPy's (each within d u of the exact one), an RBF
    value within gamma times the bound on its distance (the norms and the dot product),
    plus 4 ulp for the exponentials."""
    n, d = 1040, 20
    X = _data(n, d, seed=5)
    src = (make_row_source("linear-rows", 3, X=X, capacity=n) if kernel == "dots" else
           make_row_source(kernel, 3, X=X, capacity=n, **params))
    src.prefetch_rows(np.arange(0, n, 7))
    absdots = np.abs(X) @ np.abs(X).T
    sq = np.einsum("ij,ij->i", X, X)
    dots = X @ X.T
    tol_dots = 2 * d * U * absdots
    for i in range(0, n, 7):
        row = src.kernel_row(i)
        if kernel == "dots":
            assert np.all(np.abs(row - dots[i]) <= tol_dots[i])
        elif kernel == "poly":
            base = params["gamma"] * dots[i] + params["coef0"]
            want = base ** 3
            tol = 3 * base ** 2 * params["gamma"] * tol_dots[i] + 8 * np.spacing(np.abs(want))
            assert np.all(np.abs(row - want) <= tol * 1.01)
        else:
            dist = np.maximum(sq[i] + sq - 2 * dots[i], 0.0)
            want = np.exp(-params["gamma"] * dist)
            tol_dist = 2 * tol_dots[i] + 4 * d * U * (sq[i] + sq)
            tol = params["gamma"] * tol_dist * want + 4 * np.spacing(want)
            assert np.all(np.abs(row - want) <= tol)
            assert row[i] == 1.0


@pytest.mark.parametrize("cache_dtype", ["float32", "float64"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_block_gathered_on_its_upper_triangle_gives_the_same_fit(cache_dtype, n_threads):
    """A working set's kernel block gathered on and above its diagonal and mirrored (the
    dense sources' exact symmetry) gives a fit identical to the last bit to one gathering
    every entry."""
    from sklearn.datasets import make_classification

    from msvm import ReinforcedMSVM
    X, y = make_classification(n_samples=700, n_features=8, n_informative=5, n_classes=4,
                               random_state=3)
    fits = []
    for upper in (True, False):
        old = _rows._gather_upper(upper)
        min_n = _rows._upper_min_n(0)       # the triangle at this n too (UPPER_MIN_N)
        try:
            est = ReinforcedMSVM(C=10.0, cache_dtype=cache_dtype, n_threads=n_threads,
                                 random_state=0).fit(X, y)
        finally:
            _rows._gather_upper(old)
            _rows._upper_min_n(min_n)
        fits.append((est.objective_, est.n_iter_, est.decision_function(X[:50])))
    assert fits[0][0] == fits[1][0] and fits[0][1] == fits[1][1]
    np.testing.assert_array_equal(fits[0][2], fits[1][2])
