"""The RBF rows' exponentials (_exp_row.h: Cody and Waite's reduction, a polynomial of
degree 11 interpolating exp at Chebyshev nodes) within 2 ulp of NumPy's exp, over arguments
spread across every reduced argument r in [-ln2/2, ln2/2] and the whole range down to
exp(-708)."""

import numpy as np
import pytest

from msvm._core._rows import make_row_source


@pytest.mark.parametrize("gamma", [1e-3, 0.37, 5.0])
def test_exponentials_within_two_ulp_of_numpy(gamma):
    """One feature, so that the row's arguments -gamma max(x_i^2 + x_r^2 - 2 x_i x_r, 0)
    are NumPy's to the last bit (one product each, fused or not): the values then differ
    only by the exponentials."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-0.5, 0.5, 20_000), rng.normal(0.0, 8.0, 20_000)])
    X = x[:, None]
    src = make_row_source("rbf", 3, X=X, gamma=gamma, capacity=3)
    sq = x * x
    for i in (0, 1, 20_000, 39_999):
        arg = -gamma * np.maximum(sq[i] + sq - 2.0 * (x[i] * x), 0.0)
        want = np.exp(arg)
        row = src.kernel_row(i)
        normal = want >= np.exp(-708.0)
        assert normal.sum() > 10_000
        err = np.abs(row[normal] - want[normal]) / np.spacing(want[normal])
        assert err.max() <= 2.0
        assert np.all(row[~normal] == 0.0)
        assert row[i] == 1.0


@pytest.mark.parametrize("shift", [0.0, 0.5])
@pytest.mark.parametrize("threads", [1, 2])
def test_float32_rows_in_one_pass_equal_the_three_passes(shift, threads):
    """An RBF row stored in float32 in one pass (_exp_row.h: msvm_rbf_row32) equals, to the
    last bit, the exponent pass, the exponentials, the shift and the float32 store in turn,
    and the float64 row rounded to float32: in batches (4 parts on 2 threads) and alone."""
    from msvm._core import _rows
    rng = np.random.default_rng(12)
    X = rng.normal(size=(4133, 20)) * np.exp(rng.normal(size=20))
    idx = rng.choice(4133, 70, replace=False)
    rows = {}
    for key, one_pass, dtype in [("one", True, "float32"), ("three", False, "float32"),
                                 ("64", True, "float64")]:
        old = _rows._rbf_one_pass(one_pass)
        try:
            src = _rows.DenseKernelRows(X, 3, "rbf", gamma=0.03, shift=shift, capacity=80,
                                        cache_dtype=dtype)
            src.set_threads(threads)
            src.prefetch_rows(idx)
            rows[key] = np.array([src.kernel_row(int(i)) for i in idx])
            alone = _rows.DenseKernelRows(X, 3, "rbf", gamma=0.03, shift=shift, capacity=3,
                                          cache_dtype=dtype)
            rows[key + "-alone"] = np.array([alone.kernel_row(int(i)) for i in idx[:3]])
        finally:
            _rows._rbf_one_pass(old)
    np.testing.assert_array_equal(rows["one"], rows["three"])
    np.testing.assert_array_equal(rows["one"], rows["64"].astype(np.float32))
    np.testing.assert_array_equal(rows["one"][:3], rows["one-alone"])
    np.testing.assert_array_equal(rows["three-alone"], rows["one-alone"])
