"""A SIGALRM-based timeout for tests: raise an exception in the main thread after a delay.

The solver's compiled loops run Python's signal handlers at bounded intervals of work, so the
exception interrupts a fit the way Ctrl-C's KeyboardInterrupt does (without risking
interrupting pytest itself).  On platforms without interval timers it does nothing.
"""

import signal
from contextlib import contextmanager


class Alarm(Exception):
    """Raised by the timer's signal handler."""


@contextmanager
def alarm_after(seconds, exception=Alarm):
    """Raise ``exception`` (a class or an instance) in the main thread after ``seconds``."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def handler(signum, frame):
        raise exception

    previous = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
