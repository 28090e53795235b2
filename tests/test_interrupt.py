"""Every fit can be interrupted: Ctrl-C (or any signal handler that raises) stops it promptly.

The solver's loops run without the GIL and re-take it at bounded intervals of work to run
Python's signal handlers.  In-process, an interval timer's SIGALRM handler raises an exception
the way Ctrl-C's default handler raises KeyboardInterrupt (same mechanism, no risk of
interrupting pytest itself); one test sends a real SIGINT to a child process.  The fits below
take seconds uninterrupted; the timer fires after 0.2 s.
"""

import signal
import subprocess
import sys
import textwrap
import time
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
# the requirement is 1 s; the measured latency is milliseconds
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
    start = time.perf_counter()
    with pytest.raises(Alarm), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with alarm_after(ALARM_AFTER):
            est.fit(X, y)
    latency = time.perf_counter() - start - ALARM_AFTER
    assert latency < MAX_LATENCY, f"{case}: the signal took {latency:.2f} s to stop the fit"
    with pytest.raises(NotFittedError):          # the interrupted fit leaves it unfitted
        check_is_fitted(est)


def test_interrupted_solver_can_fit_again(kernel_data):
    """An interrupted solve leaves nothing behind that spoils the next fit."""
    X, y = kernel_data
    est = ReinforcedMSVM(kernel="rbf", C=1000)
    with pytest.raises(Alarm), alarm_after(0.05):
        est.fit(X, y)
    small = ReinforcedMSVM(kernel="rbf", C=10, tol=1e-6).fit(X[:300], y[:300])
    reference = ReinforcedMSVM(kernel="rbf", C=10, tol=1e-6).fit(X[:300], y[:300])
    assert small.objective_ == pytest.approx(reference.objective_, rel=1e-12)


def test_ctrl_c_raises_keyboard_interrupt_in_a_child_process():
    """A real SIGINT stops a process in the middle of a long kernel fit with KeyboardInterrupt.

    The child reports the CPU time its fit took until the interrupt: the signal comes 1 s
    (wall clock) into a fit of about 11 s CPU, so the fit stops after at most 2 s of CPU (two
    cores) plus the latency, whatever the machine's load.
    """
    script = textwrap.dedent("""
        import sys, time
        from sklearn.datasets import make_classification
        from msvm import ReinforcedMSVM
        X, y = make_classification(n_samples=8000, n_features=20, n_informative=10,
                                   n_classes=5, random_state=0)
        print("fitting", flush=True)
        start = time.process_time()
        try:
            ReinforcedMSVM(kernel="rbf", C=100).fit(X, y)      # about 11 s uninterrupted
        except KeyboardInterrupt:
            print(f"interrupted after {time.process_time() - start:.3f}", flush=True)
            raise
        print("finished", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        if line != "fitting":
            proc.kill()
            pytest.fail(f"the child did not start fitting: {proc.communicate()[1][-2000:]}")
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "KeyboardInterrupt" in err
    assert proc.returncode != 0
    assert "finished" not in out
    fit_cpu = float(out.split("interrupted after")[1])
    assert fit_cpu < 2 * 1.0 + MAX_LATENCY, f"the fit ran {fit_cpu:.2f} s of CPU"


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
