"""Every fit can be interrupted: Ctrl-C (or any signal handler that raises) stops it promptly.

The solver's loops run without the GIL and re-take it at bounded intervals of work to run
Python's signal handlers.  In-process, an interval timer's SIGALRM handler raises an exception
the way Ctrl-C's default handler raises KeyboardInterrupt (same mechanism, no risk of
interrupting pytest itself); one test sends a real SIGINT to a child process.  The fits below
take seconds uninterrupted; the timer fires after 0.2 s of the process's CPU time.

Latencies are measured in CPU time, from the signal to the exception, so that the bounds hold
on a loaded machine (where a process waits for a core for seconds of wall time).
"""

import signal
import subprocess
import sys
import textwrap
import warnings

import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from msvm import (AdaptiveWeightedSVM, ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM,
                  WeightedRobustMSVM)
from msvm.model_selection import TuningSetSearch, lambda_grid
from _signals import Alarm, alarm_after

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
}


@pytest.mark.parametrize("case", list(CASES))
def test_fit_stops_promptly(case, kernel_data, linear_data):
    make, data = CASES[case]
    if data == "large linear":
        X, y = make_classification(n_samples=40000, n_features=40, n_informative=20,
                                   n_classes=6, random_state=0)
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
