"""The DC iteration on the smoothed primal (msvm._primal.smoothed_dc_start) that starts and
linearizes each DC step of a truncated grouped model on explicit features (msvm/_dc.py).

- the start's dual point is feasible for the DC step it names (its boxes shifted by the
  returned linearization), and that linearization is one of the model's (per truncated
  group, the cap on one variable, zero elsewhere);
- the Newton steps with relinearization stop where the gradient of the last linearized
  problem is below the tolerance, and no group moves more than RELINEARIZE_MAX_CHANGES
  times in one stage;
- a WeightedRobustMSVM fit through the start ends at a certified DC fixed point (converged,
  the linearization at its function is its last step's, a nonincreasing objective path, no
  ConvergenceWarning), takes no more DC steps than the path without the start and ends
  within 1 % of its objective;
- after a rejected step the loop takes its steps without the start (as before).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

import msvm._dc as dc
import msvm._primal as primal
from msvm import WeightedRobustMSVM
from msvm._problem import margin_problem, shifted


EXPLICIT_PRIMAL = {"rows": "explicit features", "primal_start": "on"}


def _data(n=1500, seed=0):
    return make_classification(n_samples=n, n_features=8, n_informative=6, n_classes=4,
                               random_state=seed)


def _fit(X, y, smoothed, **params):
    old = dc.SMOOTHED_DC
    dc.SMOOTHED_DC = smoothed
    try:
        est = WeightedRobustMSVM(kernel="linear", random_state=0, **params)
        est._plan_overrides = EXPLICIT_PRIMAL
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            est.fit(X, y)
    finally:
        dc.SMOOTHED_DC = old
    return est


def _start(seed):
    """(base, linearize, the start's (shift, alpha, mu), y) for a DC step from the
    untruncated fit's function on random data."""
    X, y = _data(800, seed)
    est = WeightedRobustMSVM(kernel="linear", truncation=None, C=5.0).fit(X, y)
    k = len(est.classes_)
    base = margin_problem(y, k, np.full(len(y), 5.0), np.eye(k))
    trunc = WeightedRobustMSVM(kernel="linear")

    def linearize(problem, G):
        return trunc._dc_shift(problem, G, y)

    G = est.decision_function(X)
    shift = linearize(base, G)[0]
    diag = np.einsum("ij,ij->i", X, X)
    start = primal.smoothed_dc_start(base, shift, linearize, X, np.zeros((X.shape[1], k)),
                                     np.zeros(k), 1e-3, diag, 10000)
    return base, linearize, start, X


@pytest.mark.parametrize("seed", [0, 1])
def test_smoothed_dc_start_is_feasible_for_the_step_it_names(seed):
    """The dual point lies in the boxes and caps shifted by the returned linearization, which
    shifts at most one variable of each group, by the group's cap."""
    base, _, (shift, alpha, mu), _ = _start(seed)
    step = shifted(base, shift)
    lo, hi = step.expanded_bounds()
    assert np.all(alpha >= lo - 1e-12) and np.all(alpha <= hi + 1e-12)
    group = step.expand("group")
    assert np.all(np.bincount(group, weights=alpha, minlength=len(step.cap))
                  <= step.cap + 1e-9)
    p = base.n_vars // len(base.cap)
    per_group = shift.reshape(-1, p)
    assert np.all(np.count_nonzero(per_group, axis=1) <= 1)
    nonzero = per_group.sum(axis=1)
    assert np.allclose(nonzero[nonzero != 0], base.cap[nonzero != 0])
    assert np.all(np.isfinite(mu))


def test_relinearized_newton_stops_below_gtol_and_bounds_each_groups_moves():
    """``newton`` with a relinearization reports ``reached`` only with the gradient of the
    last linearized problem below gtol, and a stage moves no group more than
    RELINEARIZE_MAX_CHANGES times."""
    X, y = _data(600, 3)
    k = 4
    base = margin_problem(y, k, np.full(len(y), 5.0), np.eye(k))
    trunc = WeightedRobustMSVM(kernel="linear")
    shift = np.zeros(base.n_vars)
    cp = primal.CappedPrimal(shifted(base, shift), X)
    relin = primal._Relinearizer(cp, base, shift,
                                 lambda problem, G: trunc._dc_shift(problem, G, y))
    cp.mu = 0.03 / base.max_abs_bound()
    V, b = cp.gradient_step(np.zeros((X.shape[1], k)), np.zeros(k))
    gtol = 1e-6
    V, b, F = cp.newton(V, b, gtol, 150, relinearize=relin)
    assert relin.changes.max() <= primal.RELINEARIZE_MAX_CHANGES
    assert np.any(relin.shift != 0)
    _, gV, gb = cp.value_and_gradient(V, b, F)
    if cp.reached:
        assert cp._norm(gV, gb) <= gtol


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fit_through_the_smoothed_start_is_a_certified_dc_fixed_point(seed, monkeypatch):
    """With the start the fit converges with no ConvergenceWarning to a function whose
    linearization is its last step's (the loop's last ``changed()`` is False), along a
    nonincreasing path, in no more DC steps than without the start, and within 1 % of that
    fit's objective."""
    X, y = _data(seed=seed)
    without = _fit(X, y, False, C=20.0)
    seen = []
    real = dc._SequenceSteps.changed

    def spy(self):
        seen.append(real(self))
        return seen[-1]

    monkeypatch.setattr(dc._SequenceSteps, "changed", spy)
    with_start = _fit(X, y, True, C=20.0)
    assert with_start.converged_ and with_start.stop_reason_ == "tol"
    assert seen and seen[-1] is False
    path = with_start.dc_objectives_
    assert np.all(np.diff(path) <= 1e-9 * abs(path[0]))
    assert with_start.n_iter_ <= without.n_iter_
    assert with_start.objective_ <= 1.01 * without.objective_
    # the DC steps started from the primal (the smoothed start's point)
    assert all(step.primal_start for step in with_start.solver_plan_.steps)


def test_a_rejected_step_turns_the_start_off():
    """After a rejected step ``_smoothed_start`` makes no start: the loop takes the plain
    linearization at the current function, as before the start existed."""
    steps = dc._SequenceSteps.__new__(dc._SequenceSteps)
    steps.rejected = True
    assert steps._smoothed_start() is None
