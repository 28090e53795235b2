"""The row cache's store in 2 MB pages (_row_store.h) changes the page faults, never a value.

On Linux a store of at least the bytes and samples of _rows._huge_store() (16 MB, 20,000
samples by default) is an anonymous mapping marked MADV_HUGEPAGE; below them, elsewhere, or
with the setting 0 it is malloc'd.  A fit must be
the same to the last bit either way, and the mapping must be released with its source.
"""

import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import WestonWatkinsMSVM
from msvm._core import _rows
from msvm._core._rows import make_row_source

LINUX = sys.platform.startswith("linux")


def _fit(min_bytes, X, y):
    old = _rows._huge_store(min_bytes, 0)
    try:
        return WestonWatkinsMSVM(C=1.0, gamma=0.1, cache_dtype="float32").fit(X, y)
    finally:
        _rows._huge_store(*old)


def test_mapped_and_malloced_stores_give_identical_fits():
    """A fit whose store is mapped (the threshold lowered to 1 MB: the 1,200 rows of 1,200
    float32 values are 5.8 MB) and one whose store is malloc'd: identical dual_coef_,
    intercept_, objective_ and n_iter_."""
    X, y = make_classification(n_samples=1200, n_features=8, n_informative=5, n_classes=4,
                               n_clusters_per_class=1, random_state=0)
    plain = _fit(0, X, y)
    mapped = _fit(1 << 20, X, y)
    assert np.array_equal(plain.dual_coef_, mapped.dual_coef_)
    assert np.array_equal(plain.intercept_, mapped.intercept_)
    assert plain.objective_ == mapped.objective_
    assert plain.n_iter_ == mapped.n_iter_


def test_store_mapped_only_from_the_threshold():
    """A store below the threshold or with the setting 0 is malloc'd; one at or above it is
    a mapping of whole 2 MB pages (on Linux), and its rows are those of a malloc'd store."""
    X = np.ascontiguousarray(np.random.default_rng(0).standard_normal((1000, 6)))
    nbytes = 1000 * 1000 * 4
    old = _rows._huge_store(min_samples=0)
    try:
        rows = {}
        for setting, want in ((0, 0), (nbytes + 1, 0), (nbytes, 4 << 20 if LINUX else 0)):
            _rows._huge_store(setting)
            src = make_row_source("rbf", 3, X=X, gamma=0.2, capacity=1000,
                                  cache_dtype="float32")
            assert _rows._store_mapped(src) == want
            src.prefetch_rows(np.arange(0, 1000, 7))
            rows[setting] = np.array([src.kernel_row(i) for i in (0, 7, 994)])
        assert all(np.array_equal(r, rows[0]) for r in rows.values())
    finally:
        _rows._huge_store(*old)
    with pytest.raises(ValueError, match="min_bytes"):
        _rows._huge_store(-1)
    with pytest.raises(ValueError, match="min_samples"):
        _rows._huge_store(min_samples=-1)


def test_store_mapped_by_default_from_20000_samples():
    """By default a store of 16 MB or more is mapped from n = 20,000 samples on only: 210
    float32 rows of 20,000 values (16.8 MB) are mapped (on Linux), 2,000 rows of 2,100
    values (16.8 MB too) are not."""
    rng = np.random.default_rng(2)
    for n, capacity, want in ((20000, 210, (18 << 20) if LINUX else 0), (2100, 2000, 0)):
        X = np.ascontiguousarray(rng.standard_normal((n, 2)))
        src = make_row_source("rbf", 2, X=X, gamma=0.5, capacity=capacity,
                              cache_dtype="float32")
        assert _rows._store_mapped(src) == want


def _memory_mb():
    """(resident, virtual) MB of this process."""
    with open("/proc/self/statm") as fh:
        size, resident = (int(v) for v in fh.read().split()[:2])
    page = 4096
    return resident * page / 2 ** 20, size * page / 2 ** 20


@pytest.mark.skipif(not LINUX, reason="mappings (and /proc) on Linux only")
def test_mapped_stores_are_released():
    """200 sources with mapped 4 MB stores, every row touched, built and dropped: the
    process's resident and virtual memory grow by far less than the 800 MB they would keep
    if the mappings leaked."""
    X = np.ascontiguousarray(np.random.default_rng(1).standard_normal((1000, 4)))
    old = _rows._huge_store(1 << 20, 0)
    _rows._drop_spare_store()          # a larger spare store would be reused here
    try:
        src = make_row_source("rbf", 2, X=X, gamma=0.5, capacity=1000, cache_dtype="float32")
        src.prefetch_rows(np.arange(1000))
        del src
        rss0, vm0 = _memory_mb()
        for _ in range(200):
            src = make_row_source("rbf", 2, X=X, gamma=0.5, capacity=1000,
                                  cache_dtype="float32")
            assert _rows._store_mapped(src) == 4 << 20
            src.prefetch_rows(np.arange(1000))
            del src
        rss1, vm1 = _memory_mb()
    finally:
        _rows._huge_store(*old)
    assert rss1 - rss0 < 200
    assert vm1 - vm0 < 200


# ---------------------------------------------------------------- round 15: spare, populate
def _wwfit(X, y, spare_max, populate):
    old = _rows._store_reuse(spare_max, populate)
    try:
        return WestonWatkinsMSVM(C=1.0, gamma=0.1, cache_dtype="float32").fit(X, y)
    finally:
        _rows._store_reuse(*old)


def _same_fit(a, b):
    assert np.array_equal(a.dual_coef_, b.dual_coef_)
    assert np.array_equal(a.intercept_, b.intercept_)
    assert a.objective_ == b.objective_
    assert a.n_iter_ == b.n_iter_


def test_spare_and_populated_stores_give_identical_fits():
    """A fit in a fresh store without populating (main's), one populating ahead, and fits
    whose store is the spare of an earlier fit (of the same data, and of other data whose
    rows it still holds): identical dual_coef_, intercept_, objective_ and n_iter_."""
    X, y = make_classification(n_samples=1200, n_features=8, n_informative=5, n_classes=4,
                               n_clusters_per_class=1, random_state=0)
    X2, y2 = make_classification(n_samples=1250, n_features=8, n_informative=5, n_classes=4,
                                 n_clusters_per_class=1, random_state=1)
    _rows._drop_spare_store()
    plain = _wwfit(X, y, 0, 0)
    _same_fit(plain, _wwfit(X, y, 0, 2 << 20))
    _wwfit(X2, y2, 64 << 20, 0)                     # leaves a larger spare of other rows
    _same_fit(plain, _wwfit(X, y, 64 << 20, 0))     # takes it
    _same_fit(plain, _wwfit(X, y, 64 << 20, 2 << 20))
    _rows._drop_spare_store()


def _source(n, capacity):
    X = np.ascontiguousarray(np.random.default_rng(n).standard_normal((n, 4)))
    return make_row_source("rbf", 2, X=X, gamma=0.5, capacity=capacity,
                           cache_dtype="float32")


def test_spare_store_taken_by_the_next_store_of_at_most_its_size():
    """A released store's touched bytes (at most the limit) are resident for the next store
    of at most its size: its _store_ready; a larger store, or with the limit 0, starts
    cold (0); the spare is given to one store only."""
    old = _rows._store_reuse(64 << 20, 0)
    _rows._drop_spare_store()
    try:
        src = _source(1000, 1000)
        assert _rows._store_ready(src) == 0
        src.prefetch_rows(np.arange(500))
        del src                                     # the spare: 500 rows touched
        a, b = _source(1000, 1000), _source(1000, 1000)
        assert _rows._store_ready(a) == 500 * 1000 * 4
        assert _rows._store_ready(b) == 0
        del a, b                                    # a becomes the spare again
        assert _rows._store_ready(_source(1100, 1100)) == 0      # larger: a fresh store
        _rows._store_reuse(1 << 20)
        src = _source(1000, 1000)
        src.prefetch_rows(np.arange(1000))
        del src                                     # kept: its first 1 MB only
        assert _rows._store_ready(_source(900, 900)) == 1 << 20
        _rows._store_reuse(0)
        src = _source(1000, 1000)
        assert _rows._store_ready(src) == 0
        del src                                     # released, not kept
        _rows._store_reuse(64 << 20)
        assert _rows._store_ready(_source(1000, 1000)) == 0
    finally:
        _rows._store_reuse(*old)
        _rows._drop_spare_store()
    with pytest.raises(ValueError, match="spare_max"):
        _rows._store_reuse(-1)
    with pytest.raises(ValueError, match="populate"):
        _rows._store_reuse(populate=-1)


@pytest.mark.skipif(not LINUX, reason="madvise on Linux only")
def test_store_populated_ahead_as_rows_are_claimed():
    """With populating on, a store's ready part runs ahead of its claimed rows by at most
    the setting (exactly, where the kernel has MADV_POPULATE_WRITE: Linux 5.14 on), and
    never behind them; with it off, it is the claimed rows."""
    old = _rows._store_reuse(0, 1 << 20)
    _rows._drop_spare_store()
    try:
        row = 2000 * 4
        for populate in (1 << 20, 0):
            _rows._store_reuse(populate=populate)
            src = _source(2000, 2000)
            for rows in (1, 2, 200, 2000):
                src.prefetch_rows(np.arange(rows))
                ready = _rows._store_ready(src)
                assert rows * row <= ready <= min(rows * row + populate, 2000 * row)
            del src
    finally:
        _rows._store_reuse(*old)


@pytest.mark.skipif(not LINUX, reason="/proc on Linux only")
def test_malloced_stores_with_the_spare_are_released():
    """200 sources with 8 MB malloc'd stores populated ahead, every row touched, built and
    dropped with the spare on: the process's resident memory grows by far less than the
    1.6 GB they would keep if they leaked (the one spare's 8 MB aside)."""
    old = _rows._store_reuse(64 << 20, 2 << 20)
    try:
        src = _source(1400, 1400)
        src.prefetch_rows(np.arange(1400))
        del src
        rss0, _ = _memory_mb()
        for _ in range(200):
            src = _source(1400, 1400)
            assert _rows._store_mapped(src) == 0
            src.prefetch_rows(np.arange(1400))
            del src
        rss1, _ = _memory_mb()
    finally:
        _rows._store_reuse(*old)
        _rows._drop_spare_store()
    assert rss1 - rss0 < 100


@pytest.mark.parametrize("m, tile", [(0, 16), (1, 16), (5, 16), (16, 16), (17, 16),
                                     (100, 16), (256, 32), (37, 0), (40, 7)])
def test_block_mirrored_in_tiles(m, tile):
    """The kernel block's mirror (block_entries, MIRROR_TILE): every entry below the
    diagonal becomes its transpose's, every entry on and above it stays, for every tile."""
    rng = np.random.default_rng(m + tile)
    out = rng.standard_normal((m, m))
    want = np.triu(out) + np.triu(out, 1).T
    _rows._mirror_block(out, tile)
    assert np.array_equal(out, want)


def test_block_mirrored_in_tiles_gives_the_same_fit():
    """Fits whose working sets' blocks are mirrored in tiles of 16 and 5 and row by row
    (round 14's): identical to the last bit."""
    X, y = make_classification(n_samples=700, n_features=8, n_informative=5, n_classes=4,
                               random_state=3)
    fits = []
    old = _rows._mirror_tile()
    try:
        for tile in (0, 16, 5):
            _rows._mirror_tile(tile)
            fits.append(WestonWatkinsMSVM(C=10.0, random_state=0).fit(X, y))
    finally:
        _rows._mirror_tile(old)
    for est in fits[1:]:
        _same_fit(fits[0], est)
    assert old == 16
    with pytest.raises(ValueError, match="tile"):
        _rows._mirror_tile(-1)
