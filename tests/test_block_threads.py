"""The block loop with 2 threads: the pool's begin / end hand-off of each working set's
kernel block (the workers gather it while the calling thread gathers the block's scores and
variables), the split scans and score updates.

Every value is computed as with one thread, so a 2-thread fit converges to the 1-thread
fit's values to the last bit, says so, and stays interruptible; many short fits in a row do
not deadlock the pool's hand-off.  (Round 15's overlapped block loop, whose iterates
differed from one thread's, was removed in round 16; it is kept on branch blockthreads.)
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm import (AngleBasedMSVM, ReinforcedMSVM, RobustMSVM, WeightedRobustMSVM,
                  WestonWatkinsMSVM)
from msvm._core import _rows, _smo
from _signals import Alarm, alarm_after

pytestmark = pytest.mark.skipif(not _rows.threads_available(),
                                reason="the compiled core has no threads here")

TOL = 1e-3


def _data(n=900, k=4, seed=0):
    return make_classification(n_samples=n, n_features=8, n_informative=6, n_classes=k,
                               n_clusters_per_class=1, random_state=seed)


def _working_set(est, size):
    """est with its working set fixed at ``size`` samples (the plan's override)."""
    est._plan_overrides = {"working_set": size}
    return est


def _converged_fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est.fit(X, y)


@pytest.mark.parametrize("make", [
    lambda t: ReinforcedMSVM(C=1.0, n_threads=t),
    lambda t: ReinforcedMSVM(C=10.0, gamma=0.5, n_threads=t),
    lambda t: ReinforcedMSVM(C=10.0, reinforcement=0.0, cache_dtype="float64", n_threads=t),
    # a cache of about 4 working sets of 64 (263 rows of 900): rows evicted and recomputed
    # between blocks
    lambda t: _working_set(ReinforcedMSVM(C=1.0, cache_size=1.9, cache_dtype="float64",
                                          n_threads=t), 64),
    lambda t: ReinforcedMSVM(kernel="poly", degree=2, C=1.0, n_threads=t),
    lambda t: AngleBasedMSVM(C=10.0, n_threads=t),
    lambda t: RobustMSVM(C=1.0, n_threads=t),
    # two slots a direction; with group caps
    lambda t: WestonWatkinsMSVM(C=1.0, n_threads=t),
    lambda t: WeightedRobustMSVM(truncation=None, C=1.0, n_threads=t),
], ids=["reinforced", "reinforced-C10", "llw-float64", "small-cache", "poly", "angle",
        "robust-dc", "weston-watkins", "weighted-robust"])
def test_two_thread_fit_converges_to_the_one_thread_fit(make):
    """With 2 threads the fit converges (no ConvergenceWarning, KKT residual within tol) to
    the 1-thread fit's values, to the last bit."""
    X, y = _data()
    one = _converged_fit(make(1), X, y)
    two = _converged_fit(make(2), X, y)
    assert two.kkt_residual_ <= TOL
    assert np.array_equal(one.dual_coef_, two.dual_coef_)
    assert one.objective_ == two.objective_ and one.n_iter_ == two.n_iter_


def test_many_short_two_thread_fits_do_not_deadlock():
    """200 short fits with 2 threads in a row (400 samples, working sets of 256: each
    block's kernel block gathered in parts handed to the pool and taken back), they all
    finish (a hang guard of 300 s of CPU time), the last as one thread's."""
    X, y = _data(n=400, k=3, seed=1)

    def fit(threads, seed):
        est = ReinforcedMSVM(C=1.0, n_threads=threads)
        est._plan_overrides = {"working_set": 256}
        return _converged_fit(est, X[seed % 7:], y[seed % 7:])

    with alarm_after(300.0, clock="cpu"):
        for seed in range(200):
            two = fit(2, seed)
    one = fit(1, seed)
    assert np.array_equal(one.dual_coef_, two.dual_coef_)


def test_two_thread_fit_stops_promptly():
    """A signal stops a 2-thread fit within 1 s of CPU time (the requirement;
    the measured latency is milliseconds), and the solver fits again afterwards."""
    X, y = make_classification(n_samples=3000, n_features=10, n_informative=6, n_classes=4,
                               random_state=0)
    latency = None
    with pytest.raises(Alarm), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with alarm_after(0.2, clock="cpu") as arrival:
            try:
                ReinforcedMSVM(kernel="rbf", C=1000, n_threads=2).fit(X, y)
            except Alarm:
                latency = arrival.latency()
                raise
    assert latency is None or latency < 1.0
    small = _converged_fit(ReinforcedMSVM(C=1.0, n_threads=2), X[:900], y[:900])
    assert small.kkt_residual_ <= TOL


def test_profile_times_the_phases():
    """_smo._profile records the calling thread's time per phase of the block loop while
    on, and nothing once off; _rows._worker_seconds the workers' busy time."""
    X, y = _data(n=1200)
    _smo._profile(True)
    _rows._worker_seconds(True)
    try:
        ReinforcedMSVM(C=1.0, n_threads=2).fit(X, y)
    finally:
        profile = _smo._profile(False)
        busy = _rows._worker_seconds(False)
    phases = {name: profile[name] for name in _smo.PROFILE_PHASES}
    assert set(phases) == {"scan", "load", "local SMO", "update"}
    assert all(w >= 0.0 and c >= 0.0 for w, c in phases.values())
    assert phases["local SMO"][1] > 0.0 and busy >= 0.0
    ReinforcedMSVM(C=1.0, n_threads=2).fit(X, y)
    profile = _smo._profile()
    assert all(profile[name] == (0.0, 0.0) for name in _smo.PROFILE_PHASES)
