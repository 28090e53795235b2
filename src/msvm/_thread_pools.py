"""One BLAS thread during msvm's solves, without leaving the process changed.

A BLAS thread-pool limit (threadpoolctl) is process-wide: it holds for every thread of the
process, and ``threadpool_limits`` restores, on exit, the limits it found on entry.  Two fits
overlapping in two threads therefore interleave badly with it: the second fit enters while
the first holds the limit, records "one thread" as the original, and restores that on exit
after the first has restored the caller's setting, so that the whole process is left at one
BLAS thread for good.

:func:`one_blas_thread` shares one limit between every overlapping user: a process-wide count
under a lock; the first to enter records the caller's limits and sets one thread, the last
to leave restores what the first recorded.  Whatever the interleaving of the fits, the
process ends with the limits it had before the first of them.  While any fit runs, the
limit holds for every thread of the process (a BLAS limit cannot be per thread).

threadpoolctl (3.8) lets only one thread at a time set the limits of OpenBLAS with its own
pthreads pool (the first to set them; the others' calls silently do nothing, until the
controlling thread releases control).  The first user and the last may be different threads,
so each takes control before it sets or restores and releases it afterwards.

Building a ``ThreadpoolController`` scans the process's loaded libraries (1.7-1.9 ms, paid
at every solve on the explicit-feature paths: 4 % of a 0.05 s linear fit, and once per
refit of a probability fit).  The controller is kept and built again only when the set of
imported modules has changed (:func:`_controller`): a BLAS library arrives with the
extension module that links it.
"""

import contextlib
import sys
import threading

import threadpoolctl
from threadpoolctl import ThreadpoolController

_lock = threading.Lock()
_users = 0
_restore = None          # the limiter of the first user, which restores the caller's limits
_kept = (None, -1)       # (controller, number of imported modules when it was built)


def _controller():
    """A ThreadpoolController of the loaded libraries, kept while no module is imported."""
    global _kept
    controller, modules = _kept
    if controller is None or modules != len(sys.modules):
        _kept = controller, modules = ThreadpoolController(), len(sys.modules)
    return controller


def _release_blas_control():
    """Let any thread set OpenBLAS's limits (no-op before threadpoolctl 3.8)."""
    controller = getattr(threadpoolctl, "OpenBLASController", None)
    release = getattr(controller, "clear_controlling_thread", None)
    if release is not None:
        release(force=True)


@contextlib.contextmanager
def one_blas_thread():
    """Context: BLAS limited to one thread, shared by every overlapping user (see module)."""
    global _users, _restore
    with _lock:
        if _users == 0:
            _release_blas_control()
            _restore = _controller().limit(limits=1, user_api="blas")
            _release_blas_control()
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                limiter, _restore = _restore, None
                _release_blas_control()
                limiter.restore_original_limits()
                _release_blas_control()
