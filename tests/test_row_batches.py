"""Kernel rows computed in batches (the SMO path's prefetch) equal, to the last bit, the dot
products summed feature by feature in order: a product rounded, then added, for the plain
loops (checked here); fused multiply-adds where the machine has them (tests/test_fused_dots.py).

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


@pytest.fixture
def plain_dots():
    """The plain loops' arithmetic for the sources built in the test."""
    old = _rows._fused_dots(False)
    yield
    _rows._fused_dots(old)


@pytest.mark.parametrize("n,d", [(5, 3), (16, 1), (17, 20), (47, 7), (1003, 20), (1040, 2),
                                 (4133, 5)])
@pytest.mark.parametrize("threads", [1, 2])
def test_batch_dots_equal_the_ordered_sums(n, d, threads, plain_dots):
    """The linear kernel's rows (the dot products themselves) of batches of 1 to 70 rows
    (70: a batch of 64 and one of 6) equal the ordered sums, for n below, at and around
    multiples of the 16-sample panels."""
    X = _data(n, d, seed=n + d)
    rng = np.random.default_rng(1)
    for m in sorted({1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 37, 64, 70} & set(range(1, n + 1))):
        src = make_row_source("linear-rows", 3, X=X, capacity=n)
        assert not src.fused
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
