"""The finishing step timed by the solve's progress (``msvm._sequence.FINISH_RULE``).

The decision (``finish_timely``) on constructed progress records, the first budget of a
warm-started solve, a cost-matrix fit that the rule lets converge without the costly
grouped finishing step, a warm refit converging with the rule on, and the number of
finishing steps a fit can take bounded by max_iter.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import ReinforcedMSVM, WeightedRobustMSVM
from msvm import _plan as plan
from msvm import _sequence as sequence
from msvm._sequence import (FINISH_AFTER, FINISH_MIN, FinishProgress, epochs_left,
                            finish_timely, step_epochs)


def _progress(done=100, since=100, residual=0.01, before=np.nan, tol=1e-3, cost=500.0):
    return FinishProgress(done, since, residual, before, tol, cost)


def test_a_step_paid_for_by_the_epochs_run_is_taken():
    assert finish_timely(_progress(done=500, cost=500.0))
    assert finish_timely(_progress(done=100, before=0.5, residual=0.01, cost=20.0))


def test_the_first_stop_waits_for_a_costly_step():
    # no decay measured yet (the first stop, or just after a jump): the next stop measures it
    assert not finish_timely(_progress(done=100, before=np.nan, cost=500.0))


def test_a_solver_predicted_to_converge_first_goes_on():
    # 100 epochs took the residual from 1 to 1e-2: 1e-3 is about 50 epochs away
    progress = _progress(done=200, since=100, residual=1e-2, before=1.0, cost=500.0)
    assert epochs_left(progress) == pytest.approx(50.0)
    assert not finish_timely(progress)


def test_a_crawling_or_rising_solver_gets_the_step():
    # 100 epochs took the residual from 1.0 to 0.9: about 2,000 epochs to go
    assert finish_timely(_progress(done=200, residual=0.9, before=1.0, cost=500.0))
    # the residual rose: no prediction of convergence
    progress = _progress(done=200, residual=2.0, before=1.0, cost=500.0)
    assert epochs_left(progress) == np.inf
    assert finish_timely(progress)


def test_a_residual_at_tol_needs_no_more_epochs():
    assert epochs_left(_progress(residual=1e-4, before=1e-2)) == 0.0


def test_the_step_cost_grows_with_the_free_set():
    small, large = step_epochs(100, False, 1e-3), step_epochs(2000, False, 1e-3)
    assert 0 < small < large
    assert step_epochs(2000, True, 1e-3) > large       # the grouped step costs more
    assert step_epochs(2000, False, 1e-2) == pytest.approx(large / 10)


def _budgets(monkeypatch):
    """Record the budget of every run of the compiled solver."""
    budgets = []
    run = sequence.DualSequence._run_solver

    def recorded(self, problem, alpha, mu, tol, max_iter, *args):
        budgets.append(max_iter)
        return run(self, problem, alpha, mu, tol, max_iter, *args)
    monkeypatch.setattr(sequence.DualSequence, "_run_solver", recorded)
    return budgets


def _steps(monkeypatch, name):
    """Count the calls of the finishing step ``name`` of msvm._sequence."""
    calls = []
    step = getattr(sequence, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return step(*args, **kwargs)
    monkeypatch.setattr(sequence, name, counted)
    return calls


@pytest.fixture
def blobs():
    return make_blobs(n_samples=400, centers=3, n_features=2, random_state=0)


@pytest.mark.parametrize("rule", [True, False])
def test_a_warm_refit_converges_with_an_early_first_stop(blobs, monkeypatch, rule):
    X, y = blobs
    monkeypatch.setattr(sequence, "FINISH_RULE", rule)
    # the warm start's own path: at C max K_ii >= 1e3 a kernel-factor start would replace it
    # (tests/test_kernel_factor.py)
    monkeypatch.setattr(plan, "KERNEL_FACTOR_START", False)
    est = ReinforcedMSVM(C=1e3, warm_start=True).fit(X, y)
    budgets = _budgets(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.set_params(C=3e3).fit(X, y)
    cold = ReinforcedMSVM(C=3e3).fit(X, y)
    assert est.converged_
    assert abs(est.objective_ - cold.objective_) <= 1e-3 * abs(cold.objective_)
    # the warm start's first stop comes after the step's predicted cost (FINISH_MIN here),
    # main's after FINISH_AFTER epochs
    assert budgets[0] == (FINISH_MIN if rule else FINISH_AFTER)
    if rule:
        assert est.n_iter_ < FINISH_AFTER


def _cost_fit(max_iter=3000, C=1.0):
    X, y = make_blobs(n_samples=100, centers=5, n_features=3, random_state=2)
    cost = np.random.default_rng(2).uniform(0.5, 2.0, (5, 5))
    np.fill_diagonal(cost, 0.0)
    return X, y, WeightedRobustMSVM(C=C, cost=cost, truncation=None, kernel="rbf",
                                    max_iter=max_iter)


def test_a_cost_matrix_fit_converges_without_the_costly_step(monkeypatch):
    """n = 100, k = 5, C = 1: main takes the grouped finishing step at 100 epochs (about 2 s
    on 926 free variables); the rule puts it off and the solver converges by itself (140
    epochs)."""
    X, y, est = _cost_fit()
    steps = _steps(monkeypatch, "finish_grouped")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    assert est.converged_
    assert steps == []
    assert FINISH_AFTER < est.n_solver_iter_ < 2 * FINISH_AFTER


@pytest.mark.parametrize("max_iter", [3, 40])
def test_finishing_steps_are_bounded_by_max_iter(blobs, monkeypatch, max_iter):
    """Every run of the solver runs at least one epoch and a finishing step comes only
    between two runs, so a fit takes fewer finishing steps than max_iter, and one that
    stops early says so (here: a first budget of 2 epochs, deferrals of at least 1, a
    large C, so that the fit stops many times)."""
    X, y = blobs
    monkeypatch.setattr(sequence, "FINISH_AFTER", 2)
    monkeypatch.setattr(sequence, "FINISH_MIN", 1)
    budgets = _budgets(monkeypatch)
    steps = _steps(monkeypatch, "finish_dual")
    est = ReinforcedMSVM(C=1e6, gamma=10.0, max_iter=max_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(X, y)
    assert est.n_iter_ <= max_iter
    assert sum(budgets) <= max_iter
    assert len(steps) <= len(budgets) - 1 < max_iter
    assert len(budgets) > (2 if max_iter > 10 else 0)
    if not est.converged_:
        assert any(issubclass(c.category, ConvergenceWarning) for c in caught)
