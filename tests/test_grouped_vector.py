"""The grouped SMO's vectorized passes (issue 23/24, round 14; _smo.pyx GROUPED_VECTOR,
_group_block.h): the extremes and pair partners of grouped buckets with the group caps'
rooms, and the Newton step's products over a gathered copy of the free samples' kernel
block.  Every value is the plain loops', so every fit is the same, bit for bit, with the
switch on and off; the product adds each sum's terms in the plain loop's order.  The same
for the grouped scan of round 15 (_smo.pyx GROUPED_SCAN_ONCE, _grouped_violation: each
variable's z formed once and kept for its full group's pair test, each group's fullness
tested once, the loop's invariants in locals), and for its one-pass form of round 16
(_smo.pyx GROUPED_SCAN_FUSED, _grouped_violation_fused: each group's room and pair test
formed as the pass goes).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import AdaptiveWeightedSVM, WeightedRobustMSVM
from msvm._core import _smo


def _fit(make, vector, n=400, centers=3, seed=0, weights=False,
         switch=_smo._grouped_vector):
    X, y = make_blobs(n, 3, centers=centers, cluster_std=2.0, random_state=seed)
    sw = np.random.default_rng(seed).uniform(0.2, 3.0, n) if weights else None
    old = switch(vector)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return make().fit(X, y, sample_weight=sw)
    finally:
        switch(old)


CASES = {
    # large C: Newton steps on free sets of many samples (the gathered products)
    "WRM-rbf-1e6": (lambda: WeightedRobustMSVM(kernel="rbf", C=1e6, truncation=None,
                                                max_iter=30), {}),
    "WRM-rbf-10-k5-weights": (lambda: WeightedRobustMSVM(kernel="rbf", C=10.0,
                                                          truncation=None),
                              dict(centers=5, seed=1, weights=True)),
    "WRM-linear-1e4": (lambda: WeightedRobustMSVM(kernel="linear", C=1e4, truncation=None,
                                                   max_iter=50), dict(n=200, seed=2)),
    # DC steps: shifted linear terms and bounds
    "WRM-truncated": (lambda: WeightedRobustMSVM(kernel="rbf", C=100.0, max_iter=50),
                      dict(n=300, centers=4, seed=3)),
    "Adaptive-rbf-1e4": (lambda: AdaptiveWeightedSVM(kernel="rbf", C=1e4, max_iter=30), {}),
    # a cost matrix: several groups a sample (one per predicted class with utility)
    "WRM-cost-k4": (lambda: WeightedRobustMSVM(kernel="rbf", C=1.0, truncation=None, max_iter=30,
                                                cost=np.array([[0, 1, 2, 3], [1, 0, 1, 2],
                                                               [4, 1, 0, 1], [1, 1, 1, 0]])),
                    dict(n=300, centers=4, seed=4)),
}


def _assert_same_fit(a, b):
    """Two fits the same to the last bit: objective, epochs, KKT residual, duals and
    intercepts."""
    assert a.objective_ == b.objective_
    assert a.n_iter_ == b.n_iter_
    assert a.kkt_residual_ == b.kkt_residual_
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)


@pytest.mark.parametrize("case", sorted(CASES))
def test_vectorized_grouped_passes_leave_every_iterate_unchanged(case):
    make, data = CASES[case]
    plain, vector = _fit(make, False, **data), _fit(make, True, **data)
    assert vector.objective_ == plain.objective_
    assert vector.n_iter_ == plain.n_iter_
    np.testing.assert_array_equal(vector.dual_coef_, plain.dual_coef_)
    np.testing.assert_array_equal(vector.intercept_, plain.intercept_)


@pytest.mark.parametrize("case", sorted(CASES))
def test_grouped_scan_leaves_every_iterate_unchanged(case):
    make, data = CASES[case]
    plain = _fit(make, False, switch=_smo._grouped_scan, **data)
    once = _fit(make, True, switch=_smo._grouped_scan, **data)
    _assert_same_fit(once, plain)


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_grouped_scan_leaves_every_iterate_unchanged(case):
    """The one-pass grouped scan gives the fits of round 15's two passes and of round
    14's plain loops, bit for bit."""
    make, data = CASES[case]
    two_pass = _fit(make, False, switch=_smo._grouped_scan_fused, **data)
    fused = _fit(make, True, switch=_smo._grouped_scan_fused, **data)
    plain = _fit(make, False, switch=_smo._grouped_scan, **data)
    _assert_same_fit(fused, two_pass)
    _assert_same_fit(fused, plain)


@pytest.mark.parametrize("case", sorted(CASES))
def test_grouped_pick_leaves_every_iterate_unchanged(case):
    """The working set's variables picked per group (_grouped_block_variables) give the
    fits of the rule per variable (_settled_variable), bit for bit."""
    make, data = CASES[case]
    per_variable = _fit(make, False, switch=_smo._grouped_pick, **data)
    per_group = _fit(make, True, switch=_smo._grouped_pick, **data)
    _assert_same_fit(per_group, per_variable)


@pytest.mark.parametrize("switch", [_smo._grouped_scan, _smo._grouped_scan_fused,
                                    _smo._grouped_pick], ids=["once", "fused", "pick"])
def test_grouped_scan_switch(switch):
    old = switch()
    try:
        assert switch(False) == old
        assert switch() is False
        assert switch(True) is False
    finally:
        switch(old)
    assert old is True          # the default


@pytest.mark.parametrize("m, k", [(1, 1), (7, 3), (33, 10), (130, 4)])
def test_free_block_product_sums_in_the_plain_order(m, k):
    rng = np.random.default_rng(m * 100 + k)
    KT = rng.standard_normal((m, m)) * 10.0 ** rng.integers(-8, 8, (m, m))
    D = rng.standard_normal((m, k)) * 10.0 ** rng.integers(-8, 8, (m, k))
    D[rng.random((m, k)) < 0.3] = 0.0
    D[rng.random((m, k)) < 0.1] = -0.0
    got = _smo._free_block_product(KT, D)
    # the plain loop: each sum from +0, its terms in increasing column order
    want = np.zeros((k, m))
    for a in range(m):
        for j in range(k):
            acc = 0.0
            for c in range(m):
                acc = acc + KT[c, a] * D[c, j]
            want[j, a] = acc
    np.testing.assert_array_equal(got, want)
    assert not np.signbit(got[got == 0.0]).any()


@pytest.mark.parametrize("switch", [_smo._grouped_vector, _smo._sparse_hmul],
                         ids=["grouped_vector", "sparse_hmul"])
def test_switch_returns_its_previous_value(switch):
    assert switch() is True
    assert switch(False) is True
    try:
        assert switch() is False
    finally:
        switch(True)
