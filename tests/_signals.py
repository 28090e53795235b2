"""Interval timers for tests: raise an exception in the main thread after a delay.

The solver's compiled loops run Python's signal handlers at bounded intervals of work, so the
exception interrupts a fit the way Ctrl-C's KeyboardInterrupt does (without risking
interrupting pytest itself).  On platforms without interval timers it does nothing.

Two clocks: ``clock="wall"`` (SIGALRM after real time) and ``clock="cpu"`` (SIGPROF after
this process's CPU time, user + system, all threads).  A budget in CPU time does not run out
on a loaded machine, where a process waits for a core: hang guards and latency bounds use it.
"""

import signal
import time
from contextlib import contextmanager

_TIMERS = {"wall": ("ITIMER_REAL", "SIGALRM"), "cpu": ("ITIMER_PROF", "SIGPROF")}


class Alarm(BaseException):
    """Raised by the timer's signal handler.

    A BaseException, as KeyboardInterrupt is: Python code that the interrupted fit runs in
    the main thread may catch ``Exception`` and go on, and an Exception raised there by the
    handler is lost.  Dask's tokenize does (``_normalize_pickle``, run for every chunked
    pass's delayed tasks): an Exception-based Alarm raised while it pickled was swallowed
    and the fit ran to its end ("DID NOT RAISE Alarm", 3 of 30 Dask fits with a gc callback
    at load 7), where Ctrl-C's KeyboardInterrupt goes through.
    """


class Arrival:
    """When the timer's signal was due, in this process's CPU time (time.process_time)."""

    cpu = None

    def latency(self):
        """CPU seconds from the signal to now (the exception's arrival, when called there)."""
        return time.process_time() - self.cpu


@contextmanager
def call_after(seconds, action, clock="wall", interval=0.0):
    """Call ``action()`` from a signal handler in the main thread after ``seconds`` of wall
    time (``clock="wall"``) or of this process's CPU time (``clock="cpu"``), then every
    ``interval`` seconds (0: once).  What ``action`` raises is raised where the handler runs.

    Yields an :class:`Arrival`; with ``clock="cpu"`` its ``cpu`` is the process CPU time at
    which the first signal was due (the timer counts that time exactly, in clock ticks).
    """
    arrival = Arrival()
    if not hasattr(signal, "setitimer"):
        yield arrival
        return
    which, signame = (getattr(signal, name) for name in _TIMERS[clock])

    def handler(signum, frame):
        action()

    previous = signal.signal(signame, handler)
    start = time.process_time()
    signal.setitimer(which, seconds, interval)
    arrival.cpu = start + seconds if clock == "cpu" else None
    try:
        yield arrival
    finally:
        signal.setitimer(which, 0)
        signal.signal(signame, previous)


def alarm_after(seconds, exception=Alarm, clock="wall"):
    """Raise ``exception`` (a class or an instance) in the main thread after ``seconds`` of
    wall time (``clock="wall"``) or of this process's CPU time (``clock="cpu"``).

    A context manager; yields an :class:`Arrival` (see :func:`call_after`).
    """

    def raise_it():
        raise exception

    return call_after(seconds, raise_it, clock)
