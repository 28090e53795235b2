"""Which kernel rows the row cache keeps changes how many rows are computed, never a value.

A kernel row is computed by the same operations whenever it is computed, so an SMO fit's
iterates cannot depend on the cache's eviction order or size (once the cache holds a working
set): where the cache cannot hold every row, the solver evicts the rows of settled samples
first (RowSource.demote), and that must leave every fit identical to the last bit.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
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
    """A cache of about 110 of the 2,400 rows (rows of settled samples evicted first, most
    rows computed many times) and a cache of every row give identical dual_coef_,
    intercept_, objective_ and n_iter_."""
    X, y = _data()
    small = _fit(make, X, y, 2.0)
    whole = _fit(make, X, y, 100.0)
    assert np.array_equal(small.dual_coef_, whole.dual_coef_)
    assert np.array_equal(small.intercept_, whole.intercept_)
    assert small.objective_ == whole.objective_
    assert small.n_iter_ == whole.n_iter_


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
