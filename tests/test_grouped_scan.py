"""The grouped SMO's scan (round 15; _smo.pyx GROUPED_SCAN_ONCE, _grouped_violation): each
variable's z formed once and kept for its full group's pair test, each group's fullness
tested once, the invariants of the loop in locals.  Every value is the plain loops', so
every fit of a problem with groups is the same, bit for bit, with the switch on and off.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import AdaptiveWeightedSVM, WeightedRobustMSVM
from msvm._core import _smo


def _fit(make, once, n=400, centers=3, seed=0, weights=False):
    X, y = make_blobs(n, 3, centers=centers, cluster_std=2.0, random_state=seed)
    sw = np.random.default_rng(seed).uniform(0.2, 3.0, n) if weights else None
    old = _smo._grouped_scan(once)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return make().fit(X, y, sample_weight=sw)
    finally:
        _smo._grouped_scan(old)


CASES = {
    # many full groups (large C) and free variables below their caps (C = 10, weights)
    "WRM-rbf-1e4": (lambda: WeightedRobustMSVM(kernel="rbf", C=1e4, truncation=None,
                                                max_iter=30), {}),
    "WRM-rbf-10-k5-weights": (lambda: WeightedRobustMSVM(kernel="rbf", C=10.0,
                                                          truncation=None),
                              dict(centers=5, seed=1, weights=True)),
    # DC steps: shifted linear terms and bounds (fixed variables, hi <= lo, among them)
    "WRM-truncated": (lambda: WeightedRobustMSVM(kernel="rbf", C=100.0, max_iter=50),
                      dict(n=300, centers=4, seed=3)),
    "Adaptive-rbf-1e3": (lambda: AdaptiveWeightedSVM(kernel="rbf", C=1e3, max_iter=30), {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_grouped_scan_leaves_every_iterate_unchanged(case):
    make, data = CASES[case]
    plain, once = _fit(make, False, **data), _fit(make, True, **data)
    assert once.objective_ == plain.objective_
    assert once.n_iter_ == plain.n_iter_
    assert once.kkt_residual_ == plain.kkt_residual_
    np.testing.assert_array_equal(once.dual_coef_, plain.dual_coef_)
    np.testing.assert_array_equal(once.intercept_, plain.intercept_)


def test_grouped_scan_switch():
    old = _smo._grouped_scan()
    try:
        assert _smo._grouped_scan(False) == old
        assert _smo._grouped_scan() is False
        assert _smo._grouped_scan(True) is False
    finally:
        _smo._grouped_scan(old)
    assert old is True          # the default
