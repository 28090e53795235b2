"""Dot products of kernel rows by fused multiply-adds (_fused_dots.h; off by default, on through
msvm._core._rows._fused_dots where the machine has them): every value x_i . x_r is the chain
acc = fma(x_i[f], x_r[f], acc) over the features in order from 0.0, whatever the path (a row
alone, a batch of 1 to 16 rows through the panels of 16 samples or the samples outside whole
panels, column tiles, one or two threads), so that the kernel matrix is exactly symmetric with
its exact diagonal; the values differ from the plain loops' (a product rounded, then added) and
from NumPy's by rounding only.
"""

from fractions import Fraction

import numpy as np
import pytest

from msvm._core import _rows
from msvm._core._rows import make_row_source


def _dots_source(X, capacity):
    """A source whose values are the dot products themselves through the fused loops: the
    polynomial kernel (1 x . x' + 0)^1 (the linear kernel's rows keep the plain loops)."""
    return make_row_source("poly", 3, X=X, gamma=1.0, coef0=0.0, degree=1, capacity=capacity)

pytestmark = pytest.mark.skipif(not _rows.fused_dots_available(),
                                reason="no fused multiply-adds on this machine or build")

U = 2.0 ** -53                                   # the unit roundoff of float64


@pytest.fixture
def fused_dots():
    """The fused arithmetic for the sources built in the test."""
    old = _rows._fused_dots(True)
    yield
    _rows._fused_dots(old)


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    # values with long mantissas, so that any other order of operations shows in the bits
    return rng.normal(size=(n, d)) * np.exp(rng.normal(size=d))


def _fma_chain(x, y):
    """The chain acc = fma(x[f], y[f], acc) from 0.0, each step the exact x[f] y[f] + acc
    rounded once to float64 (Fraction arithmetic; int / int division rounds correctly)."""
    acc = 0.0
    for a, b in zip(x.tolist(), y.tolist()):
        exact = Fraction(a) * Fraction(b) + Fraction(acc)
        acc = exact.numerator / exact.denominator
    return acc


def test_the_default_is_plain_and_the_linear_kernel_stays_plain():
    X = np.ones((4, 2))
    assert _rows._fused_dots() is False
    assert not make_row_source("rbf", 3, X=X, gamma=0.5, capacity=4).fused
    old = _rows._fused_dots(True)
    try:
        assert make_row_source("rbf", 3, X=X, gamma=0.5, capacity=4).fused
        assert make_row_source("poly", 3, X=X, capacity=4).fused
        assert not make_row_source("linear-rows", 3, X=X, capacity=4).fused
    finally:
        _rows._fused_dots(old)


@pytest.mark.parametrize("n,d", [(5, 3), (16, 1), (17, 20), (47, 7), (35, 13)])
@pytest.mark.parametrize("threads", [1, 2])
def test_rows_equal_the_exact_fma_chain(n, d, threads, fused_dots):
    """Every value of the rows of dot products (_dots_source), alone and in
    batches of 1 to 16 rows, is the fused chain to the last bit (and differs from the plain
    sums somewhere: the test can tell the two arithmetics apart)."""
    X = _data(n, d, seed=n + d)
    want = np.array([[_fma_chain(X[i], X[r]) for r in range(n)] for i in range(n)])
    rng = np.random.default_rng(1)
    for m in sorted({1, 2, 3, 4, 5, 7, 9, 13, 16, 33} & set(range(1, n + 1))):
        src = _dots_source(X, n)
        src.set_threads(threads)
        idx = rng.choice(n, m, replace=False)
        src.prefetch_rows(idx)
        for i in idx:
            np.testing.assert_array_equal(src.kernel_row(int(i)), want[i])
    alone = _dots_source(X, n)
    for i in range(n):
        np.testing.assert_array_equal(alone.kernel_row(i), want[i])
    if d >= 7:
        plain = np.array([[sum((X[i] * X[r]).tolist()) for r in range(n)]
                          for i in range(n)])
        assert np.any(plain != want)


SIZES = (1, 2, 3, 4, 5, 13, 16, 37, 70)           # 70: a batch of 64 rows and one of 6


@pytest.mark.parametrize("n", [1003, 1040, 4133])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tile", [16, 48, 1024])
def test_rbf_matrix_exactly_symmetric_through_every_path(n, threads, tile, fused_dots):
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
def test_values_within_rounding_of_numpy(kernel, params, fused_dots):
    """Each value within the rounding bound of a float64 NumPy reference: a dot product
    within 2 d u sum_f |x_i[f] x_r[f]| of NumPy's (each within d u of the exact one), an RBF
    value within gamma times the bound on its distance (the norms and the dot product),
    plus 4 ulp for the exponentials."""
    n, d = 1040, 20
    X = _data(n, d, seed=5)
    src = (_dots_source(X, n) if kernel == "dots" else
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


def test_plain_and_fused_sources_differ_by_rounding_only():
    """The switch: sources built with _fused_dots(False) take the plain loops (the values of
    the plain ordered sums) and keep them after the switch moves."""
    X = _data(300, 20, seed=9)
    old = _rows._fused_dots(False)
    try:
        plain = _dots_source(X, 300)
        _rows._fused_dots(True)
        fused = _dots_source(X, 300)
    finally:
        _rows._fused_dots(old)
    assert not plain.fused and fused.fused
    ordered = np.zeros(300)
    for f in range(20):
        ordered = ordered + X[0, f] * X[:, f]
    a, b = plain.kernel_row(0), fused.kernel_row(0)
    np.testing.assert_array_equal(a, ordered)
    assert np.any(a != b)
    assert np.all(np.abs(a - b) <= 2 * 20 * U * (np.abs(X) @ np.abs(X[0])))


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
        try:
            est = ReinforcedMSVM(C=10.0, cache_dtype=cache_dtype, n_threads=n_threads,
                                 random_state=0).fit(X, y)
        finally:
            _rows._gather_upper(old)
        fits.append((est.objective_, est.n_iter_, est.decision_function(X[:50])))
    assert fits[0][0] == fits[1][0] and fits[0][1] == fits[1][1]
    np.testing.assert_array_equal(fits[0][2], fits[1][2])
