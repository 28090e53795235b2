"""The grouped SMO's Newton-step block products over the samples that take part (issue 23,
round 13: make_blobs n = 4,000, RBF, C = 1e6, WeightedRobustMSVM(truncation=None) spent
most of its SMO epochs in products with the whole q x q block; see _smo.pyx, SPARSE_HMUL).

The products over the samples holding a free variable and those where the direction is
nonzero add the same terms in the same order less the zero ones, so every fit is the same,
bit for bit, with the switch on and off (before: no switch, the whole block every time).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import AdaptiveWeightedSVM, WeightedRobustMSVM
from msvm._core import _smo


def _fit(make, sparse):
    X, y = make_blobs(500, 3, centers=3, cluster_std=2.0, random_state=0)
    old = _smo._sparse_hmul(sparse)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return make().fit(X, y)
    finally:
        _smo._sparse_hmul(old)


@pytest.mark.parametrize("make", [
    lambda: WeightedRobustMSVM(kernel="rbf", C=1e6, truncation=None, max_iter=30),
    lambda: AdaptiveWeightedSVM(kernel="rbf", C=1e4, max_iter=30),
], ids=["WeightedRobustMSVM", "AdaptiveWeightedSVM"])
def test_sparse_block_products_leave_every_iterate_unchanged(make):
    dense, sparse = _fit(make, False), _fit(make, True)
    assert sparse.objective_ == dense.objective_
    assert sparse.n_iter_ == dense.n_iter_
    np.testing.assert_array_equal(sparse.dual_coef_, dense.dual_coef_)
    np.testing.assert_array_equal(sparse.intercept_, dense.intercept_)
