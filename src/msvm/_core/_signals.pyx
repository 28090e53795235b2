# Design
# ======
# The solver's loops run without the GIL, so Python's signal handlers (Ctrl-C's
# KeyboardInterrupt, an alarm) cannot run while they do.  Every loop meters its work in units
# of about one multiply-add (`tick`, _signals.pxd) and every CHECK_WORK units (~10 ms) calls
# `signal_raised`, which re-takes the GIL and runs the handlers.  A loop that sees True stops
# (status INTERRUPTED), frees its work arrays, and its Python caller calls `reraise` to
# propagate the handler's exception, which is still set.
#
# The checks can be switched off only inside a `signal_checks_off()` block (for measuring what
# they cost): the switch is a count of open blocks, changed under a lock on entry and exit, so
# blocks opened by several threads nest and overlap correctly, and every exit (an exception
# included) undoes exactly its own entry.  No test or benchmark can leave the checks off.

import threading
import time

cdef extern from "Python.h":
    int _py_check_signals "PyErr_CheckSignals" ()

cdef long _off_blocks = 0          # open signal_checks_off() blocks (checks run when 0)
cdef long long _checks_made = 0     # signal checks since import (for measuring their cost)


cdef bint signal_raised() noexcept nogil:
    """Run Python's signal handlers; True when one raised (its exception stays set)."""
    global _checks_made
    cdef int r
    if _off_blocks > 0:
        return False
    _checks_made += 1
    with gil:
        r = _py_check_signals()
    return r != 0


cdef int reraise() except -1:
    """Propagate the exception a signal handler left set (see signal_raised)."""
    return -1


_off_lock = threading.Lock()


class signal_checks_off:
    """Context manager: the solver's periodic signal checks are off inside the block.

    Only for measuring what the checks cost (benchmarks): inside the block a fit cannot be
    interrupted until it returns.  On exit the previous state is restored, whatever the
    block raised.  Thread safety: the switch counts the open blocks under a lock, so blocks
    entered by several threads nest and overlap without one restoring a stale state over
    another; while any block is open the checks are off in every thread (Python runs signal
    handlers in the main thread only, so the checks of other threads find nothing to run).

    Examples
    --------
    >>> from msvm._core._solver import signal_checks_off, signal_checks_enabled
    >>> with signal_checks_off():
    ...     signal_checks_enabled()
    False
    >>> signal_checks_enabled()
    True
    """

    def __enter__(self):
        global _off_blocks
        with _off_lock:
            _off_blocks += 1
        return self

    def __exit__(self, *exc_info):
        global _off_blocks
        with _off_lock:
            _off_blocks -= 1
        return False


def signal_checks_enabled():
    """True when the solver's loops check for signals (no signal_checks_off() block open)."""
    return _off_blocks == 0


def signal_check_stats(long repeat=0):
    """(signal checks made since import, seconds per check over ``repeat`` timed checks).

    For measuring what the checks cost: a fit's count times the time of one check, against
    the fit's time.  The timed checks are made without the GIL, as the solver makes them.
    """
    cdef long i
    cdef bint raised = False
    seconds = float("nan")
    if repeat > 0:
        start = time.perf_counter()
        with nogil:
            for i in range(repeat):
                if signal_raised():
                    raised = True
                    break
        seconds = (time.perf_counter() - start) / repeat
        if raised:
            reraise()
    return _checks_made, seconds
