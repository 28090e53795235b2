"""Fits leave the process's BLAS thread pools as they found them, under any interleaving."""

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from msvm import ReinforcedMSVM
from msvm._thread_pools import one_blas_thread


def _blas_threads():
    return sorted(pool["num_threads"] for pool in threadpool_info()
                  if pool["user_api"] == "blas")


@pytest.fixture
def two_blas_threads():
    """The caller's setting, as the process has it (not set here: with OpenBLAS, a limit set
    by one thread is not seen by a thread that set its own with threadpool_limits)."""
    found = _blas_threads()
    if not found:
        pytest.skip("no BLAS thread pool visible to threadpoolctl")
    return found


def test_overlapping_limits_restore_the_callers_setting(two_blas_threads):
    """A enters, B enters, A leaves, B leaves (the interleaving that left one thread for good
    with nested threadpool_limits): one thread while either holds it, the caller's after."""
    a_in, b_in, a_out, release_b = (threading.Event() for _ in range(4))
    seen = {}

    def user(name, entered, leave_after, left):
        with one_blas_thread():
            entered.set()
            leave_after.wait(10)
            seen[name] = _blas_threads()
        left.set()

    ta = threading.Thread(target=user, args=("a", a_in, b_in, a_out))
    tb = threading.Thread(target=user, args=("b", b_in, release_b, threading.Event()))
    ta.start()
    a_in.wait(10)
    tb.start()
    ta.join(10)                                       # A has left, B still holds the limit
    assert _blas_threads() == [1] * len(two_blas_threads)
    release_b.set()
    tb.join(10)
    assert seen == {"a": [1] * len(two_blas_threads), "b": [1] * len(two_blas_threads)}
    assert _blas_threads() == two_blas_threads


def test_two_linear_fits_in_two_threads_leave_the_pools_unchanged(two_blas_threads):
    """Linear fits (explicit features: BLAS limited during the solve) in two threads, each
    several times so that their solves overlap: the caller's limits afterwards."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = np.argmax(X[:, :3], axis=1)
    errors = []

    def fits():
        try:
            for _ in range(3):
                ReinforcedMSVM(kernel="linear", C=0.1).fit(X, y)
        except Exception as exc:          # noqa: BLE001 (reported by the main thread)
            errors.append(exc)

    threads = [threading.Thread(target=fits) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors
    assert _blas_threads() == two_blas_threads


def test_limit_is_released_when_the_fit_raises(two_blas_threads):
    """A fit that raises inside the limit restores the caller's setting too."""
    with pytest.raises(RuntimeError):
        with one_blas_thread():
            raise RuntimeError("stop")
    assert _blas_threads() == two_blas_threads



def test_the_controller_is_kept_until_a_module_is_imported(monkeypatch, two_blas_threads):
    """one_blas_thread builds its ThreadpoolController once (a scan of the loaded libraries)
    and again only after the set of imported modules changed; the limit holds inside and the
    caller's limits are back after, either way."""
    import sys
    import types

    import msvm._thread_pools as pools

    built, real = [], pools.ThreadpoolController
    monkeypatch.setattr(pools, "ThreadpoolController", lambda: built.append(1) or real())
    monkeypatch.setattr(pools, "_kept", (None, -1))
    for _ in range(3):
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
    assert len(built) == 1
    monkeypatch.setitem(sys.modules, "msvm_test_new_module", types.ModuleType("m"))
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
    assert len(built) == 2
    assert _blas_threads() == two_blas_threads
