"""The grouped finishing step (msvm/_finish_groups.py) on the convergence matrix's odd cells
(issue 23 item 1, patterns 4 and 5): releases that let nothing move, loops whose worst
violation stays put, and the descent guard on fresh systems.

AdaptiveWeightedSVM, linear, make_blobs n = 3,000, C = 0.01 (the matrix's cell): with main
c94be25's loop one finishing step released the same 23 variables and 27 caps at each of
1,426 checks (a full step of rounding size after zero-length steps counted as a move) and
spent its 10,000 steps twice; with another random_state the same 50 caps of multipliers
-1.4e3 came back at every check for 2,740-3,890 steps.  Step counts are asserted here,
never timings.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from benchmarks.run_convergence_matrix import UTILITY, cell_data, make_estimator
from msvm import WeightedRobustMSVM
from msvm import _finish_groups as fg

pytest.importorskip("cvxpy")
from test_grouped_cost_matrix import _gamma, _optimum  # noqa: E402  (the reference optimum)

OFF = {"STILL_BY_POINT": False, "STALL_CHECKS": None, "FLAT_CHECKS": None}


def _counted_steps(monkeypatch):
    """Count the active-set steps of every finishing step (a list holding the count)."""
    count = [0]
    take = fg._take_step

    def counting(*args):
        count[0] += 1
        return take(*args)

    monkeypatch.setattr(fg, "_take_step", counting)
    return count


def _fit_quietly(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est.fit(X, y)


def test_a_release_that_moved_alpha_by_rounding_only_is_stuck():
    """After a release, a step of rounding size (t = 1, x nonzero) does not count as a move
    (STILL_BY_POINT): the release is marked stuck at the next check."""
    alpha = np.array([0.0, 0.5, 1.0])
    assert fg._still(alpha + 1e-17, alpha)
    assert not fg._still(alpha + np.array([0.0, 1e-6, 0.0]), alpha)
    releases = fg._Releases(np.ones(3, dtype=bool), 1)
    releases.released, releases.cap_released = np.array([0]), np.zeros(0, dtype=np.intp)
    releases.at_release, releases.moved = alpha.copy(), False
    releases.step_taken(1.0, np.full(3, 1e-17))
    assert releases.moved
    assert releases._stuck(alpha + 1e-17, None, None, None, None, None)


def test_a_worst_violation_that_does_not_fall_is_counted():
    """`_Releases.flat` counts the checks in a row whose worst violation stayed above
    FLAT_SHARE of the least one seen, and starts again where it falls."""
    releases = fg._Releases(np.ones(1, dtype=bool), 0)
    for viol, flat in ((5.0, 0), (5.0, 1), (6.0, 2), (4.0, 0), (4.0, 1)):
        releases.flat = 0 if viol < fg.FLAT_SHARE * releases.least else releases.flat + 1
        releases.least = min(releases.least, viol)
        assert releases.flat == flat


@pytest.mark.parametrize("seed", [0, 3])
def test_the_matrix_adaptive_cell_finishes_in_few_steps(monkeypatch, seed):
    """The matrix's AdaptiveWeightedSVM cell (linear, n = 3,000, C = 0.01): every finishing
    step stops cycling; the fit converges with at most 3,000 active-set steps in all
    (main's loop: more than 20,000)."""
    X, y, k = cell_data(3000)
    count = _counted_steps(monkeypatch)
    est = make_estimator("AdaptiveWeightedSVM", 0.01, "linear", k).set_params(random_state=seed)
    _fit_quietly(est, X, y)
    assert est.converged_
    assert count[0] <= 3000


@pytest.mark.parametrize("C", [1.0, 100.0, 1e4])
def test_a_cost_matrix_kernel_fit_reaches_the_reference_optimum(monkeypatch, C):
    """WeightedRobustMSVM with the matrix's utility, RBF, n = 60: converged with no
    ConvergenceWarning, objective_ within 1e-3 of the cvxpy reference (relative), and the
    same objective within tol with the round-18 switches off (main's loop)."""
    X, y, _ = cell_data(60)
    U = UTILITY[3]

    def fit():
        est = WeightedRobustMSVM(C=C, utility=U, truncation=None, kernel="rbf",
                                 gamma=_gamma(X), random_state=0)
        return _fit_quietly(est, X, y)

    on = fit()
    for name, value in OFF.items():
        monkeypatch.setattr(fg, name, value)
    off = fit()
    optimum = _optimum(X, y, C, U)
    assert on.converged_ and off.converged_
    scale = max(abs(optimum), 1.0)
    assert abs(on.objective_ - optimum) <= 1e-3 * scale
    assert abs(on.objective_ - off.objective_) <= on.tol * scale


def test_a_loop_that_cannot_settle_stops_before_its_budget_and_says_so(monkeypatch):
    """tests/test_finish_budget.py's cycling case (8 samples, kernel entries near 1e301):
    with the stall and flat stops every call of the loop ends before its step budget, and
    the fit still reports that its solver stopped early (no silent wrong result)."""
    from test_finish_budget import X_SCALED, Y

    from msvm import AdaptiveWeightedSVM

    monkeypatch.setattr(fg, "PROJECT_FACTOR_STEP", False)
    monkeypatch.setattr(fg, "CAP_BATCH", False)
    calls, loop = [], fg._active_set
    count = _counted_steps(monkeypatch)

    def counted_loop(problem, *args, **kwargs):
        count[0] = 0
        result = loop(problem, *args, **kwargs)
        calls.append((problem.n_vars, count[0]))
        return result

    monkeypatch.setattr(fg, "_active_set", counted_loop)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = AdaptiveWeightedSVM(C=10.0, scheme="one-step", kernel="linear").fit(X_SCALED, Y)
    assert calls
    assert all(taken < fg.step_budget(n_vars) for n_vars, taken in calls)
    assert not est.converged_
    assert any(issubclass(c.category, ConvergenceWarning) for c in caught)
