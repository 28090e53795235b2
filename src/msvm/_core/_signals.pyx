# Design
# ======
# The solver's loops run without the GIL, so Python's signal handlers (Ctrl-C's
# KeyboardInterrupt, an alarm) cannot run while they do.  Every loop meters its work in units
# of about one multiply-add (`tick`, _signals.pxd) and every CHECK_WORK units (~10 ms) calls
# `signal_raised`, which re-takes the GIL and runs the handlers.  A loop that sees True stops
# (status INTERRUPTED), frees its work arrays, and its Python caller calls `reraise` to
# propagate the handler's exception, which is still set.

import time

cdef extern from "Python.h":
    int _py_check_signals "PyErr_CheckSignals" ()

cdef bint _enabled = True
cdef long long _checks_made = 0     # signal checks since import (for measuring their cost)


cdef bint signal_raised() noexcept nogil:
    """Run Python's signal handlers; True when one raised (its exception stays set)."""
    global _checks_made
    cdef int r
    if not _enabled:
        return False
    _checks_made += 1
    with gil:
        r = _py_check_signals()
    return r != 0


cdef int reraise() except -1:
    """Propagate the exception a signal handler left set (see signal_raised)."""
    return -1


def set_signal_checks(bint enabled):
    """Turn the solver's periodic signal checks on or off; returns the previous setting.

    Only for measuring what the checks cost (benchmarks): with them off a fit cannot be
    interrupted until it returns.
    """
    global _enabled
    previous = _enabled
    _enabled = enabled
    return previous


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
