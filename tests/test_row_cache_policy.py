"""Which kernel rows the row cache keeps changes how many rows are computed, never a value.

A kernel row is computed by the same operations whenever it is computed, so an SMO fit's
iterates cannot depend on the cache's eviction order or size (once the cache holds a working
set): where the cache cannot hold every row, the solver evicts the rows of settled samples
first (RowSource.demote), and that must leave every fit identical to the last bit.  Likewise
the column tiles in which a batch of rows is computed and a score update is applied change
the order of the loops only, never an entry's operations.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm._core import _rows
from msvm._core._rows import make_row_source


def _data(n=2400, k=4, seed=0):
    X, y = make_classification(n_samples=n, n_features=10, n_informative=6, n_classes=k,
                               n_clusters_per_class=1, random_state=seed)
    return X, y


def _fit(make, X, y, cache_size):
    est = make(cache_size)
    # one working-set bound for both caches (the default one depends on the capacity)
    est._plan_overrides = {"working_set": 64}
    return est.fit(X, y)


@pytest.mark.parametrize("make", [
    lambda mb: ReinforcedMSVM(C=1.0, cache_size=mb, cache_dtype="float64"),
    lambda mb: WestonWatkinsMSVM(C=1.0, cache_size=mb, cache_dtype="float64"),
], ids=["reinforced", "weston-watkins"])
def test_fit_does_not_depend_on_what_the_cache_holds(make):
    """A cache of about 1,560 of the 2,400 rows (rows of settled samples evicted first,
    rows computed again) and a cache of every row give identical dual_coef_, intercept_,
    objective_ and n_iter_ (a cache of at least half the rows: the working set's choice does
    not look at the cache)."""
    X, y = _data()
    small = _fit(make, X, y, 30.0)
    whole = _fit(make, X, y, 100.0)
    assert np.array_equal(small.dual_coef_, whole.dual_coef_)
    assert np.array_equal(small.intercept_, whole.intercept_)
    assert small.objective_ == whole.objective_
    assert small.n_iter_ == whole.n_iter_


@pytest.mark.parametrize("make", [
    lambda mb: ReinforcedMSVM(C=1.0, cache_size=mb, cache_dtype="float64"),
    lambda mb: ReinforcedMSVM(C=1.0, reinforcement=0.0, cache_size=mb, cache_dtype="float64"),
    lambda mb: WestonWatkinsMSVM(C=1.0, cache_size=mb, cache_dtype="float64"),
], ids=["reinforced", "llw", "weston-watkins"])
def test_cache_aware_working_sets_solve_the_same_problem(make):
    """With a cache of about 110 of the 2,400 rows (under half: the working set prefers
    candidates whose rows are cached) the fit converges (KKT residual within tol), its
    objective agrees with the fit from a cache of every row to 1e-3 relative and its
    predictions on the training set to 99 %."""
    X, y = _data()
    small = _fit(make, X, y, 2.0)
    whole = _fit(make, X, y, 100.0)
    assert small.converged_
    assert small.kkt_residual_ <= small.tol
    assert abs(small.objective_ - whole.objective_) <= 1e-3 * abs(whole.objective_)
    assert np.mean(small.predict(X) == whole.predict(X)) >= 0.99


def test_demoted_rows_are_evicted_first_and_others_kept():
    """After demote_rows, computing new rows evicts the demoted rows before any other (the
    rows kept are served from the cache: no recomputation), and the rows flagged but kept
    (``keep``, a working set) stay where they were."""
    X, _ = _data(n=300)
    src = make_row_source("rbf", 3, X=np.ascontiguousarray(X), gamma=0.1, capacity=10)
    src.prefetch_rows(np.arange(10))                     # rows 0..9, 9 the most recent
    before = src.kernel_row(3)                           # 3 the most recent now
    idle = np.zeros(300, dtype=bool)
    idle[[3, 4, 5, 7]] = True
    assert src.demote_rows(idle, keep=[7]) == 3          # 3, 4, 5 to the evicting end
    computed = src.n_computed
    src.prefetch_rows(np.arange(100, 103))               # three new rows take their slots
    assert src.n_computed == computed + 3
    src.prefetch_rows(np.array([0, 1, 2, 6, 7, 8, 9]))   # every other row still cached
    assert src.n_computed == computed + 3
    src.prefetch_rows(np.array([3]))                     # 3 was evicted: computed again
    assert src.n_computed == computed + 4
    assert np.array_equal(src.kernel_row(3), before)


def test_demote_needs_one_flag_per_sample():
    """demote_rows refuses flags of the wrong length."""
    X, _ = _data(n=50)
    src = make_row_source("rbf", 3, X=np.ascontiguousarray(X), gamma=0.1, capacity=10)
    with pytest.raises(ValueError, match="one flag per sample"):
        src.demote_rows(np.zeros(49, dtype=bool))


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_rows_in_tiles_equal_rows_in_one_pass(cache_dtype):
    """Kernel rows computed in batches, a column tile at a time (prefetch), equal to the last
    bit the same rows computed one at a time over all samples (a row fetched on a miss),
    for n not a multiple of the tile and tiles of 16 to 1024 samples."""
    X, _ = _data(n=3333)
    X = np.ascontiguousarray(X)
    idx = np.array([5, 17, 2000, 3332, 0, 1024, 77], dtype=np.int32)
    alone = make_row_source("rbf", 3, X=X, gamma=0.1, capacity=10, cache_dtype=cache_dtype)
    want = np.array([alone.kernel_row(int(i)) for i in idx])
    old = _rows._tiles()
    try:
        for tile in (16, 48, 1024):
            _rows._tiles(row_tile=tile)
            src = make_row_source("rbf", 3, X=X, gamma=0.1, capacity=10,
                                  cache_dtype=cache_dtype)
            src.prefetch_rows(idx)
            computed = src.n_computed
            got = np.array([src.kernel_row(int(i)) for i in idx])
            assert src.n_computed == computed            # served from the batch
            assert np.array_equal(got, want)
    finally:
        _rows._tiles(*old)


def test_score_update_in_tiles_equals_one_pass():
    """A working set's score update where the cache cannot hold every row, in column tiles
    or in one pass (the default from round 15), taking 1, 3, 4 (round 14's) or 8 (the
    default) terms per pass over a target: the same values to the last bit, and
    K[idx]^T coef to rounding."""
    X, _ = _data(n=3333)
    src = make_row_source("rbf", 3, X=np.ascontiguousarray(X), gamma=0.1, capacity=40)
    rng = np.random.default_rng(2)
    idx = rng.choice(3333, 30, replace=False).astype(np.int32)
    coef = rng.standard_normal((30, 4)) * (rng.random((30, 4)) < 0.6)
    start = rng.standard_normal((4, 3333))
    old, old_group = _rows._tiles(), _rows._update_group()
    try:
        out = {}
        for tile in (0, 16, 1024):
            for group in (1, 3, 4, 8):
                _rows._tiles(update_tile=tile)
                _rows._update_group(group)
                ys = start.copy()
                src.add_rows(idx, coef, ys)
                out[tile, group] = ys
    finally:
        _rows._tiles(*old)
        _rows._update_group(old_group)
    assert old[1] == 0 and old_group == 8            # the defaults
    assert all(np.array_equal(ys, out[0, 1]) for ys in out.values())
    K = np.array([src.kernel_row(int(i)) for i in idx])
    np.testing.assert_allclose(out[0, 1], start + coef.T @ K, rtol=1e-12, atol=1e-12)
    for bad in (0, 9):
        with pytest.raises(ValueError, match="group"):
            _rows._update_group(bad)


def test_tiles_refuse_bad_sizes():
    """Row tiles must be positive multiples of 16 and update tiles >= 0."""
    with pytest.raises(ValueError, match="multiple of 16"):
        _rows._tiles(row_tile=100)
    with pytest.raises(ValueError, match=">= 0"):
        _rows._tiles(update_tile=-1)
