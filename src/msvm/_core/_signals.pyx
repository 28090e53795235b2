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
#
# Progress reports (``verbose=1`` during a long fit) ride on the same checks: the solvers
# note their epochs and violation once per epoch or scan (`progress_note`: two stores), and
# while a `progress_reports(callback, interval)` block is open, a check made at least
# `interval` seconds after the last report calls `callback(epochs, violation)` under the GIL
# it already holds.  With no block open a check costs one more integer test, and nothing else.

import threading
import time

from cpython.exc cimport PyErr_SetObject
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

cdef extern from "Python.h":
    int _py_check_signals "PyErr_CheckSignals" ()

cdef long _off_blocks = 0          # open signal_checks_off() blocks (checks run when 0)
cdef long long _checks_made = 0     # signal checks since import (for measuring their cost)

cdef long _report_blocks = 0       # open progress_reports() blocks (reports when > 0)
cdef double _report_every = 0.0    # seconds between two reports
cdef double _report_next = 0.0     # monotonic time of the next report
cdef double _noted_epochs = 0.0    # the last progress_note of a solver
cdef double _noted_violation = -1.0
_report_callback = None            # the innermost open block's callback


cdef double _monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef void progress_note(double epochs, double violation) noexcept nogil:
    """Note a solver's work so far (epochs) and its current violation, for the reports."""
    global _noted_epochs, _noted_violation
    _noted_epochs = epochs
    _noted_violation = violation


cdef int _report() noexcept:
    """Call the report callback (under the GIL); a callback that raises stops the fit."""
    global _report_next
    _report_next = _monotonic() + _report_every
    try:
        _report_callback(_noted_epochs, _noted_violation)
    except BaseException as exc:
        raised = exc
    else:
        return 0
    # set it again (the except clause cleared it): the solver stops as for a signal, and
    # its caller re-raises it (reraise)
    PyErr_SetObject(type(raised), raised)
    return -1


cdef bint signal_raised() noexcept nogil:
    """Run Python's signal handlers; True when one raised (its exception stays set)."""
    global _checks_made
    cdef int r
    if _off_blocks > 0:
        return False
    _checks_made += 1
    with gil:
        r = _py_check_signals()
        if r == 0 and _report_blocks > 0 and _monotonic() >= _report_next:
            r = _report()
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


class progress_reports:
    """Context manager: ``callback(epochs, violation)`` every ``interval`` seconds of a solve.

    Inside the block, the compiled solvers' periodic signal checks (every ~10 ms of work)
    call ``callback`` when at least ``interval`` seconds have passed since the block opened or
    since the last call, with the epochs of the running solve so far and its latest
    violation (-1 before its first scan).  A callback that raises stops the solve as Ctrl-C
    does (its exception propagates).  Blocks nest: the innermost open block's callback and
    interval are used, and the outer ones are restored on exit.  The state is the process's
    (threads share it).

    Examples
    --------
    >>> from msvm._core._signals import progress_reports
    >>> with progress_reports(lambda epochs, violation: None, 5.0):
    ...     pass
    """

    def __init__(self, callback, interval):
        self.callback, self.interval = callback, float(interval)

    def __enter__(self):
        global _report_blocks, _report_callback, _report_every, _report_next
        global _noted_epochs, _noted_violation
        with _off_lock:
            self._saved = (_report_callback, _report_every, _report_next)
            _report_callback, _report_every = self.callback, self.interval
            _report_next = _monotonic() + self.interval
            _noted_epochs, _noted_violation = 0.0, -1.0
            _report_blocks += 1
        return self

    def __exit__(self, *exc_info):
        global _report_blocks, _report_callback, _report_every, _report_next
        with _off_lock:
            _report_blocks -= 1
            _report_callback, _report_every, _report_next = self._saved
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
