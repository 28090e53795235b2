"""Every fit can be interrupted: Ctrl-C (or any signal handler that raises a BaseException, as
Ctrl-C's KeyboardInterrupt is) stops it promptly.  An Exception raised by a handler can be
swallowed by library code that catches Exception (dask's tokenize does): the tests' Alarm is
a BaseException (tests/_signals.py).

The solver's loops run without the GIL and re-take it at bounded intervals of work to run
Python's signal handlers.  In-process, an interval timer's SIGALRM handler raises an exception
the way Ctrl-C's default handler raises KeyboardInterrupt (same mechanism, no risk of
interrupting pytest itself); one test sends a real SIGINT to a child process.  The fits below
take seconds uninterrupted; the timer fires after 0.2 s of the process's CPU time.

Latencies are measured in CPU time, from the signal to the exception, so that the bounds hold
on a loaded machine (where a process waits for a core for seconds of wall time).
"""

import _thread
import gc
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings

import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from msvm import (AdaptiveWeightedSVM, ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM,
                  WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.model_selection import TuningSetSearch, lambda_grid
from _signals import Alarm, alarm_after, call_after

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                reason="needs POSIX interval timers")

ALARM_AFTER = 0.2
# the requirement is 1 s; the measured latency is milliseconds (CPU time: every thread of
# the process counts, so the bound is independent of the machine's load)
MAX_LATENCY = 1.0


@pytest.fixture(scope="module")
def kernel_data():
    return make_classification(n_samples=3000, n_features=10, n_informative=6, n_classes=4,
                               random_state=0)


@pytest.fixture(scope="module")
def linear_data():
    return make_classification(n_samples=6000, n_features=20, n_informative=10, n_classes=4,
                               random_state=0)


CASES = {
    # C = 1000: about 9 s uninterrupted (C = 10 now takes 0.2 s, as long as the alarm waits)
    "kernel SMO": (lambda: ReinforcedMSVM(kernel="rbf", C=1000), "kernel"),
    # the dual path alone (the primal start switched off), then the primal Newton start
    "linear coordinate descent": (lambda: ReinforcedMSVM(kernel="linear", C=10), "linear"),
    "linear primal start": (lambda: ReinforcedMSVM(kernel="linear", C=10), "large linear"),
    "DC steps": (lambda: RobustMSVM(kernel="rbf", C=10), "kernel"),
    "grouped DC steps": (lambda: WeightedRobustMSVM(kernel="rbf", C=10), "kernel"),
    "reweighting": (lambda: AdaptiveWeightedSVM(kernel="rbf", C=10, scheme="iterative"),
                    "kernel"),
    "targeted grid": (lambda: TargetedLocalMSVM(kernel="rbf", C=10, n_grid=60), "kernel"),
    # the warm-started path reuses its row source: on the larger data it takes about 2 s
    "tuning-set path": (lambda: TuningSetSearch(ReinforcedMSVM(kernel="rbf"),
                                                lambdas=lambda_grid(-16, 0)), "linear"),
    # the weighted refits of the probability estimate after the model's own fit
    "probability fit": (lambda: ReinforcedMSVM(kernel="rbf", C=10, probability=True),
                        "kernel"),
    # chunked passes on Dask's local threaded scheduler (the client waits between passes)
    "Dask array": (lambda: WestonWatkinsMSVM(kernel="linear", tol=1e-8), "dask linear"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fit_stops_promptly(case, kernel_data, linear_data):
    make, data = CASES[case]
    if data == "large linear":
        X, y = make_classification(n_samples=40000, n_features=40, n_informative=20,
                                   n_classes=6, random_state=0)
    elif data == "dask linear":
        da = pytest.importorskip("dask.array", reason="dask is an optional dependency")
        X, y = linear_data
        X = da.from_array(X, chunks=1000)
    else:
        X, y = kernel_data if data == "kernel" else linear_data
    est = make()
    if case == "linear coordinate descent":
        est._plan_overrides = {"primal_start": "off"}
    latency = None
    with pytest.raises(Alarm), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with alarm_after(ALARM_AFTER, clock="cpu") as arrival:
            try:
                est.fit(X, y)
            except Alarm:
                latency = arrival.latency()
                raise
    print(f"{case}: {1e3 * latency:.1f} ms of CPU time from the signal to the exception")
    assert latency < MAX_LATENCY, (
        f"{case}: the signal took {latency:.2f} s of CPU time to stop the fit")
    with pytest.raises(NotFittedError):          # the interrupted fit leaves it unfitted
        check_is_fitted(est)


def test_interrupted_solver_can_fit_again(kernel_data):
    """An interrupted solve leaves nothing behind that spoils the next fit."""
    X, y = kernel_data
    est = ReinforcedMSVM(kernel="rbf", C=1000)
    with pytest.raises(Alarm), alarm_after(0.05, clock="cpu"):
        est.fit(X, y)
    small = ReinforcedMSVM(kernel="rbf", C=10, tol=1e-6).fit(X[:300], y[:300])
    reference = ReinforcedMSVM(kernel="rbf", C=10, tol=1e-6).fit(X[:300], y[:300])
    assert small.objective_ == pytest.approx(reference.objective_, rel=1e-12)


def test_ctrl_c_raises_keyboard_interrupt_in_a_child_process():
    """A real SIGINT stops a process in the middle of a long kernel fit with KeyboardInterrupt,
    within MAX_LATENCY of CPU time.

    The child measures the latency itself: a helper thread waits until the fit has used 0.5 s
    of CPU time (so the signal comes in the middle of the fit whatever the machine's load),
    reads the process's CPU time and sends SIGINT to its own process, as a terminal's Ctrl-C
    does; the fit's ``except KeyboardInterrupt`` reads the CPU time again.  The child's
    start-up and exit are not part of the measurement.  The child first restores a terminal
    process's SIGINT state (Python's handler, SIGINT not blocked): a child inherits its
    parent's signal mask and ignored signals, and a test run may leave either behind.
    """
    script = textwrap.dedent("""
        import os, signal, threading, time
        from sklearn.datasets import make_classification
        from msvm import ReinforcedMSVM
        X, y = make_classification(n_samples=8000, n_features=20, n_informative=10,
                                   n_classes=5, random_state=0)
        inherited = (signal.getsignal(signal.SIGINT),
                     signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))
        print(f"inherited SIGINT handler, blocked: {inherited}", flush=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        sent = []

        def press_ctrl_c(start):
            while time.process_time() - start < 0.5:
                time.sleep(0.01)
            sent.append(time.process_time())
            os.kill(os.getpid(), signal.SIGINT)

        print("fitting", flush=True)
        threading.Thread(target=press_ctrl_c, args=(time.process_time(),), daemon=True).start()
        try:
            ReinforcedMSVM(kernel="rbf", C=100).fit(X, y)      # about 11 s CPU uninterrupted
        except KeyboardInterrupt:
            print(f"latency {time.process_time() - sent[0]:.4f}", flush=True)
            raise
        print("finished", flush=True)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=1800)                 # a hang guard only
    assert "fitting" in proc.stdout, f"the child did not start fitting: {proc.stderr[-2000:]}"
    assert "finished" not in proc.stdout, (
        f"the fit was not interrupted: {proc.stdout!r}\n{proc.stderr[-3000:]}")
    assert "KeyboardInterrupt" in proc.stderr
    assert proc.returncode != 0
    latency = float(proc.stdout.split("latency")[1])
    print(f"SIGINT: {1e3 * latency:.1f} ms of CPU time from the signal to the exception")
    assert 0 <= latency < MAX_LATENCY, f"SIGINT took {latency:.3f} s of CPU time to stop the fit"


def test_signal_checks_off_is_scoped_and_restores_the_previous_state():
    """The checks are off only inside a signal_checks_off() block: nested blocks, an
    exception leaving a block and blocks of other threads all leave them on afterwards."""
    import threading

    from msvm._core import _solver

    assert not hasattr(_solver, "set_signal_checks")   # no process-global switch
    assert _solver.signal_checks_enabled()
    with _solver.signal_checks_off():
        assert not _solver.signal_checks_enabled()
        with _solver.signal_checks_off():
            assert not _solver.signal_checks_enabled()
        assert not _solver.signal_checks_enabled()      # the outer block is still open
    assert _solver.signal_checks_enabled()
    with pytest.raises(RuntimeError), _solver.signal_checks_off():
        raise RuntimeError("leaves the block")
    assert _solver.signal_checks_enabled()

    entered, release = threading.Barrier(5), threading.Event()

    def hold_a_block():
        with _solver.signal_checks_off():
            entered.wait()
            release.wait()

    threads = [threading.Thread(target=hold_a_block) for _ in range(4)]
    for thread in threads:
        thread.start()
    entered.wait()
    assert not _solver.signal_checks_enabled()
    release.set()
    for thread in threads:
        thread.join()
    assert _solver.signal_checks_enabled()


def test_fit_inside_signal_checks_off_block_is_unchanged():
    """A fit with the checks off reaches the same objective and leaves them on after."""
    from msvm._core import _solver

    X, y = make_classification(n_samples=200, n_features=5, n_informative=3, n_classes=3,
                               random_state=1)
    reference = ReinforcedMSVM().fit(X, y).objective_
    with _solver.signal_checks_off():
        objective = ReinforcedMSVM().fit(X, y).objective_
    assert objective == reference
    assert _solver.signal_checks_enabled()


# ---------------------------------------------------------------------------- lost Ctrl-C
class SwallowingGcCallback:
    """Context manager: a garbage collection in the main thread, made by :meth:`collect`
    (from a CPU-time timer's handler: in the middle of the fit), presses Ctrl-C
    (``_thread.interrupt_main``) from a gc callback, where Python swallows the handler's
    KeyboardInterrupt ("Exception ignored in garbage collection callback"), as it does in
    distributed's scheduler callback in a LocalCluster's client process when a real
    Ctrl-C arrives during a full collection.  ``swallowed`` lists the exceptions swallowed.

    The collection is made on purpose, not left to the allocation threshold: a fit whose
    slow part is compiled allocates few Python objects, so a collection in its middle
    depends on the count left by earlier code (with ``gc.set_threshold(50)``, 8 of 28 runs
    of the kernel case at load 7 made none while it ran: "DID NOT RAISE"), and one made
    before the fit enters ``ctrl_c_kept`` loses the Ctrl-C outside the fit, where msvm
    promises nothing.
    """

    def __init__(self, monkeypatch):
        self.monkeypatch, self.swallowed = monkeypatch, []
        self.armed = self.pressed = False

    def _callback(self, phase, info):
        if (self.armed and not self.pressed
                and threading.current_thread() is threading.main_thread()):
            self.pressed, self.pressed_cpu = True, time.process_time()
            _thread.interrupt_main()        # the handler runs here, in the callback

    def collect(self):
        """A full collection whose callback presses Ctrl-C (once; call it in the main
        thread, e.g. from a signal handler: another thread's running collection makes
        ``gc.collect`` return at once, so call it again until ``pressed``)."""
        self.armed = True
        gc.collect()

    def __enter__(self):
        self.monkeypatch.setattr(sys, "unraisablehook",
                                 lambda u: self.swallowed.append(u.exc_value))
        self.enabled = gc.isenabled()
        gc.enable()
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc_info):
        gc.callbacks.remove(self._callback)
        if not self.enabled:
            gc.disable()
        return False


def _dask_input(X):
    da = pytest.importorskip("dask.array", reason="dask is an optional dependency")
    return da.from_array(X, chunks=1000)


@pytest.mark.parametrize("path", ["kernel SMO", "Dask array"])
def test_ctrl_c_swallowed_by_python_code_still_stops_the_fit(path, kernel_data, linear_data,
                                                             monkeypatch):
    """A Ctrl-C whose KeyboardInterrupt a gc callback swallowed still raises one in the fit
    (at the solver's next signal check, the next chunked pass, or the fit's end), and the
    fit leaves SIGINT's handler as it found it.  Without msvm's note of the Ctrl-C the fit
    runs to its end (the issue's cluster test: 95 s of Newton steps)."""
    if path == "kernel SMO":
        est, (X, y) = ReinforcedMSVM(kernel="rbf", C=1000), kernel_data
    else:
        X, y = linear_data
        est, X = WestonWatkinsMSVM(kernel="linear", tol=1e-8), _dask_input(X)
    before = signal.getsignal(signal.SIGINT)

    def press_swallowed_ctrl_c():
        # every ALARM_AFTER s of CPU time: until pressed, a collection in the fit; 60 s
        # after the first, a hang guard
        if not callback.pressed:
            callback.collect()
        elif arrival.latency() > 60:
            raise Alarm

    with pytest.raises(KeyboardInterrupt), warnings.catch_warnings(), \
            SwallowingGcCallback(monkeypatch) as callback:
        warnings.simplefilter("ignore")
        with call_after(ALARM_AFTER, press_swallowed_ctrl_c, clock="cpu",
                        interval=ALARM_AFTER) as arrival:
            try:
                est.fit(X, y)
            except KeyboardInterrupt:
                latency = time.process_time() - callback.pressed_cpu
                raise
    assert callback.pressed
    print(f"{path}: {1e3 * latency:.1f} ms of CPU time from the swallowed Ctrl-C to the "
          "fit's KeyboardInterrupt")
    assert latency < MAX_LATENCY
    assert any(isinstance(exc, KeyboardInterrupt) for exc in callback.swallowed)
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(NotFittedError):
        check_is_fitted(est)


def test_fits_leave_sigint_handler_as_they_found_it(kernel_data):
    """A fit that ends, raises, is interrupted, runs beside a fit in another thread, or
    runs under a handler of the user's: SIGINT's handler afterwards is the one before."""
    from msvm._core._signals import ctrl_c_kept

    X, y = kernel_data
    small = X[:300], y[:300]
    default = signal.getsignal(signal.SIGINT)
    assert default is signal.default_int_handler
    ReinforcedMSVM().fit(*small)
    assert signal.getsignal(signal.SIGINT) is default
    with pytest.raises(ValueError):
        ReinforcedMSVM(C=-1.0).fit(*small)
    assert signal.getsignal(signal.SIGINT) is default
    with pytest.raises(Alarm), alarm_after(0.05, clock="cpu"):
        ReinforcedMSVM(kernel="rbf", C=1000).fit(X, y)
    assert signal.getsignal(signal.SIGINT) is default

    fitted = []
    worker = threading.Thread(
        target=lambda: fitted.append(ReinforcedMSVM(kernel="rbf", C=10).fit(X, y)))
    worker.start()
    for _ in range(3):
        ReinforcedMSVM().fit(*small)
    worker.join()
    assert fitted and signal.getsignal(signal.SIGINT) is default

    def mine(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, mine)
    try:
        with ctrl_c_kept():
            assert signal.getsignal(signal.SIGINT) is mine      # the user's stays
        ReinforcedMSVM().fit(*small)
        assert signal.getsignal(signal.SIGINT) is mine
        signal.signal(signal.SIGINT, default)
        with ctrl_c_kept():
            assert signal.getsignal(signal.SIGINT) is not default
            with ctrl_c_kept():                                  # nested: unchanged
                pass
            assert signal.getsignal(signal.SIGINT) is not default
            signal.signal(signal.SIGINT, mine)                   # changed inside: kept
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_does_not_stop_a_fit_in_another_thread(kernel_data):
    """Python runs signal handlers in the main thread only: a Ctrl-C while a fit runs in
    another thread raises KeyboardInterrupt in the main thread (here waiting for the fit)
    and the fit goes on to its normal end, the same fit as without the Ctrl-C."""
    X, y = kernel_data
    reference = ReinforcedMSVM(kernel="rbf", C=10).fit(X, y)
    fitted, done = [], threading.Event()

    def fit_in_a_thread():
        try:
            fitted.append(ReinforcedMSVM(kernel="rbf", C=10).fit(X, y))
        finally:
            done.set()

    # the main thread waits on an Event: a KeyboardInterrupt inside Thread.join (Python
    # 3.11) marks the thread as stopped while it runs on
    threading.Thread(target=fit_in_a_thread).start()
    try:
        with pytest.raises(KeyboardInterrupt), \
                alarm_after(0.05, KeyboardInterrupt, clock="cpu"):
            while not done.wait(0.01):
                pass
    finally:
        done.wait()
    assert fitted[0].objective_ == reference.objective_
