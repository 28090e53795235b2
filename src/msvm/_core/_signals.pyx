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
# note their epochs and violation once per epoch or scan (`progress_note`), and while a
# `progress_reports(callback, interval)` block is open, a check made at least `interval`
# seconds after the last report calls `callback(epochs, violation, objective)` under the GIL
# it already holds.  With no block open a check, and a note, cost one more integer test each.
#
# The objective estimate is the dual value of the running solve, the Lagrangian at the
# intercept estimate -s that _gap.pyx also uses:
#
#     L(alpha) = sum_v a_v alpha_v - 1/2 kappa sum_i U_i^T P F_i - <P c, s>,
#
# one pass over the noted scores and variables, O(nv + n k) with kept scores (O(n d k) for
# the linear source's F_i = x_i W, about one epoch).  At the solve's end it is within the
# duality gap of the objective (a lower bound of it once the equalities P c = 0 hold), so
# it shows how far a long solve still has to go.  It is taken only in a note made once a
# report is due (the solver's state is consistent there, and alive: a report made later,
# from a check, only reads the number), and the report waits for that note, up to one more
# interval (a solve that notes nothing for that long is reported without an estimate, NaN).
#
# A Ctrl-C is never lost.  Python runs the SIGINT handler in the main thread at its next
# check of pending work, whatever Python code runs there, and that can be a garbage
# collector callback (distributed's scheduler registers one in the client's process: a
# LocalCluster's) or a finalizer: the handler's KeyboardInterrupt is then "ignored" (handed to
# sys.unraisablehook) and the fit runs to its end.  While a fit runs in the main thread
# (`ctrl_c_kept`, entered by every estimator's fit), SIGINT's handler is `_note_ctrl_c`:
# Python's default_int_handler that also notes the Ctrl-C.  A noted Ctrl-C still pending
# when the next signal check runs (the solvers' `signal_raised`, the chunked passes'
# `raise_lost_ctrl_c`, the block's exit) raises KeyboardInterrupt there.  Only the main
# thread installs, notes and raises (Python runs signal handlers there only; a fit in another
# thread is not stopped by Ctrl-C), only over Python's default handler (a handler of the
# user's is left alone), and the block restores the handler it replaced on every exit.

import signal
import threading
import time

from cpython.exc cimport PyErr_SetNone, PyErr_SetObject
from libc.math cimport NAN
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from ._types cimport MAX_CLASSES, v_s1, v_c1, v_s2, v_c2, v_lin

cdef extern from "Python.h":
    int _py_check_signals "PyErr_CheckSignals" ()
    unsigned long _thread_ident "PyThread_get_thread_ident" ()

cdef long _off_blocks = 0          # open signal_checks_off() blocks (checks run when 0)
cdef long long _checks_made = 0     # signal checks since import (for measuring their cost)

cdef long _report_blocks = 0       # open progress_reports() blocks (reports when > 0)
cdef double _report_every = 0.0    # seconds between two reports
cdef double _report_next = 0.0     # monotonic time of the next report
cdef double _noted_epochs = 0.0    # the last progress_note of a solver
cdef double _noted_violation = -1.0
cdef double _noted_objective = NAN  # the estimate of a note made once a report was due,
cdef double _estimate_epochs = 0.0  # with that note's epochs and violation
cdef double _estimate_violation = -1.0
cdef bint _estimate_due = False     # a report is due and has that note's estimate
_report_callback = None            # the innermost open block's callback

# False: fits keep Python's SIGINT handler, and a swallowed Ctrl-C is lost (for measuring)
KEEP_CTRL_C = True
cdef bint _ctrl_c_noted = False    # a Ctrl-C noted by _note_ctrl_c, not yet known delivered
cdef unsigned long _main_thread_ident = threading.main_thread().ident


cdef double _monotonic() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef double _dual_value(RowSource src, const Prob* p, const State* st) noexcept nogil:
    """The dual value L(alpha) of the Design note: one pass over the scores F_i of ``src``."""
    cdef double U[MAX_CLASSES]
    cdef double F[MAX_CLASSES]
    cdef int i, j, v, k = p.k
    cdef double lin = 0.0, pen = 0.0, meanF, a, mean_c = 0.0
    for i in range(p.n):
        src.get_scores(i, F)
        meanF = 0.0
        for j in range(k):
            U[j] = 0.0
            meanF += F[j]
        meanF /= k
        for v in range(p.ptr[i], p.ptr[i + 1]):
            a = st.alpha[v]
            lin += v_lin(p, v) * a
            U[v_s1(p, v)] += a * v_c1(p, v)
            if v_s2(p, v) >= 0:
                U[v_s2(p, v)] += a * v_c2(p, v)
        for j in range(k):
            pen += U[j] * (F[j] - meanF)
    lin -= 0.5 * p.kappa * pen
    if p.equality:
        for j in range(k):
            mean_c += st.c[j]
        mean_c /= k
        for j in range(k):
            lin -= (st.c[j] - mean_c) * st.s[j]
    return lin


cdef void progress_note(double epochs, double violation, RowSource src, const Prob* p,
                        const State* st) noexcept nogil:
    """Note a solver's work so far (epochs) and its current violation, for the reports; when
    a report is due, also the objective estimate of its current point (see the Design note:
    `src`, `p` and `st` are the running solve's scores, problem and dual point)."""
    global _noted_epochs, _noted_violation, _noted_objective, _estimate_due
    global _estimate_epochs, _estimate_violation
    _noted_epochs = epochs
    _noted_violation = violation
    if _report_blocks > 0 and not _estimate_due and _monotonic() >= _report_next:
        _noted_objective = _dual_value(src, p, st)
        _estimate_epochs, _estimate_violation = epochs, violation
        _estimate_due = True


cdef int _report() noexcept:
    """Call the report callback (under the GIL); a callback that raises stops the fit."""
    global _report_next, _noted_objective, _estimate_due
    # a report with an estimate gives the epochs and violation of the note that took it
    if _estimate_due:
        epochs, violation, objective = _estimate_epochs, _estimate_violation, _noted_objective
    else:
        epochs, violation, objective = _noted_epochs, _noted_violation, NAN
    _report_next = _monotonic() + _report_every
    _noted_objective, _estimate_due = NAN, False
    try:
        _report_callback(epochs, violation, objective)
    except BaseException as exc:
        raised = exc
    else:
        return 0
    # set it again (the except clause cleared it): the solver stops as for a signal, and
    # its caller re-raises it (reraise)
    PyErr_SetObject(type(raised), raised)
    return -1


cdef bint _report_ready() noexcept nogil:
    """A report is due and has its estimate, or has waited one more interval for it."""
    cdef double now
    if _estimate_due:
        return True
    now = _monotonic()
    return now >= _report_next + _report_every


cdef bint signal_raised() noexcept nogil:
    """Run Python's signal handlers; True when one raised (its exception stays set)."""
    global _checks_made
    cdef int r
    if _off_blocks > 0:
        return False
    _checks_made += 1
    with gil:
        r = _py_check_signals()
        if r == 0 and _ctrl_c_noted and _take_noted_ctrl_c():
            PyErr_SetNone(KeyboardInterrupt)
            r = -1
        if r == 0 and _report_blocks > 0 and _report_ready():
            r = _report()
    return r != 0


cdef bint _take_noted_ctrl_c() noexcept:
    """In the main thread: True, once, for a noted Ctrl-C whose KeyboardInterrupt was lost."""
    global _ctrl_c_noted
    if not _ctrl_c_noted or _thread_ident() != _main_thread_ident:
        return False
    _ctrl_c_noted = False
    return True


def _note_ctrl_c(signum, frame):
    """SIGINT's handler inside `ctrl_c_kept`: note the Ctrl-C, raise KeyboardInterrupt."""
    global _ctrl_c_noted
    _ctrl_c_noted = True
    raise KeyboardInterrupt


def raise_lost_ctrl_c():
    """Raise KeyboardInterrupt for a Ctrl-C whose own KeyboardInterrupt was lost.

    In the main thread, inside a `ctrl_c_kept` block: a Ctrl-C noted by its handler whose
    exception no code has let through since (a garbage collector callback or finalizer
    swallowed it) raises here.  Elsewhere, and with no Ctrl-C lost, it does nothing.  The
    solvers' signal checks make the same test; Python code that waits (the chunked passes)
    calls this between its waits.
    """
    if _take_noted_ctrl_c():
        raise KeyboardInterrupt


class ctrl_c_kept:
    """Context manager: a Ctrl-C during the block raises KeyboardInterrupt in it, always.

    Every estimator's fit runs inside one.  Entered in the main thread while SIGINT's
    handler is Python's ``signal.default_int_handler``, the block installs a handler that
    raises KeyboardInterrupt as that one does and notes the Ctrl-C; a KeyboardInterrupt that
    Python code in the main thread swallowed (a garbage collector callback, a finalizer:
    Python reports it as "Exception ignored") is raised again at the next signal check of a
    solver, the next wait of a chunked pass, or at the latest on the block's exit.  The exit
    restores the handler it replaced (unless SIGINT's handler was changed meanwhile: that
    one stays), whatever the block raised.  Nested blocks and blocks in other threads, or
    over a handler that is not Python's default, change nothing (Python runs signal handlers
    in the main thread only: a Ctrl-C never stops a fit running in another thread).

    Examples
    --------
    >>> import signal
    >>> from msvm._core._signals import ctrl_c_kept
    >>> before = signal.getsignal(signal.SIGINT)
    >>> with ctrl_c_kept():
    ...     pass
    >>> signal.getsignal(signal.SIGINT) is before
    True
    """

    def __enter__(self):
        global _ctrl_c_noted
        self._replaced = None
        if (KEEP_CTRL_C and _thread_ident() == _main_thread_ident
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            try:
                signal.signal(signal.SIGINT, _note_ctrl_c)
            except ValueError:          # not the main interpreter: Python's handler stays
                return self
            self._replaced = signal.default_int_handler
            _ctrl_c_noted = False
        return self

    def __exit__(self, exc_type, exc, tb):
        global _ctrl_c_noted
        if self._replaced is None:
            return False
        if signal.getsignal(signal.SIGINT) is _note_ctrl_c:
            signal.signal(signal.SIGINT, self._replaced)
        lost = _ctrl_c_noted and exc_type is None
        _ctrl_c_noted = False
        if lost:
            raise KeyboardInterrupt
        return False


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
    """Context manager: ``callback(epochs, violation, objective)`` every ``interval`` seconds.

    Inside the block, the compiled solvers' periodic signal checks (every ~10 ms of work)
    call ``callback`` when at least ``interval`` seconds have passed since the block opened or
    since the last call, with the epochs of the running solve so far, its latest violation
    (-1 before its first scan) and an estimate of its objective (the dual value of its
    current point, see the module's Design note; NaN when the solve made no note since the
    report fell due).  The estimate is taken at the solver's first note (end of an epoch or
    scan) after the report falls due, and the report waits for it, up to one more
    ``interval``.  A callback that raises stops the solve as Ctrl-C
    does (its exception propagates).  Blocks nest: the innermost open block's callback and
    interval are used, and the outer ones are restored on exit.  The state is the process's
    (threads share it).

    Examples
    --------
    >>> from msvm._core._signals import progress_reports
    >>> with progress_reports(lambda epochs, violation, objective: None, 5.0):
    ...     pass
    """

    def __init__(self, callback, interval):
        self.callback, self.interval = callback, float(interval)

    def __enter__(self):
        global _report_blocks, _report_callback, _report_every, _report_next
        global _noted_epochs, _noted_violation, _noted_objective, _estimate_due
        with _off_lock:
            self._saved = (_report_callback, _report_every, _report_next)
            _report_callback, _report_every = self.callback, self.interval
            _report_next = _monotonic() + self.interval
            _noted_epochs, _noted_violation = 0.0, -1.0
            _noted_objective, _estimate_due = NAN, False
            _report_blocks += 1
        return self

    def __exit__(self, *exc_info):
        global _report_blocks, _report_callback, _report_every, _report_next
        global _noted_objective, _estimate_due
        with _off_lock:
            _report_blocks -= 1
            _report_callback, _report_every, _report_next = self._saved
            _noted_objective, _estimate_due = NAN, False
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
