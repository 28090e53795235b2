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
