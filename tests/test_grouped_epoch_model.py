"""The finishing rule's epoch model for grouped duals (msvm._sequence.GROUPED_EPOCH_MODEL,
issue 23 item 1, pattern 4): the grouped SMO epoch of a cost-matrix dual on computed kernel
rows (k groups of k - 1 variables a sample) cost about 5x main's prediction (n = 600, RBF:
7.5 ms measured, 1.5 ms predicted), so the exact grouped finishing step waited hundreds of
epochs.  Predictions are asserted here, never timings.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from benchmarks.run_convergence_matrix import UTILITY, cell_data
from msvm import WeightedRobustMSVM
from msvm import _sequence
from msvm._sequence import epoch_seconds, step_epochs

pytest.importorskip("cvxpy")
from test_grouped_cost_matrix import _gamma, _optimum  # noqa: E402  (the reference optimum)


def _shape(n, k):
    """(n_vars, n, k, width) of a cost-matrix dual on kernel rows: k groups of k - 1."""
    return n * k * (k - 1), n, k, n


def test_a_cost_matrix_epoch_is_predicted_above_the_identity_one():
    """Same variables, samples, classes and rows: the dual with k groups a sample (a cost
    matrix) on computed rows is predicted dearer than one with a group a sample (the
    identity utility), by about the measured 5x at n = 600, k = 3; so its step costs
    fewer epochs."""
    n_vars, n, k, width = _shape(600, 3)
    cost = epoch_seconds(n_vars, n, k, width, groups=n * k, computed_rows=True)
    identity = epoch_seconds(n_vars, n, k, width, groups=n, computed_rows=True)
    assert identity == epoch_seconds(n_vars, n, k, width)
    assert cost > 3.0 * identity
    assert 5e-3 < cost < 1.2e-2                 # measured: 7.5 ms (CPU, one BLAS thread)
    assert step_epochs(800, True, cost) < step_epochs(800, True, identity)


def test_the_model_keeps_main_where_it_does_not_apply(monkeypatch):
    """Gram rows or explicit features, no groups, or the switch off: main's model."""
    n_vars, n, k, width = _shape(600, 3)
    main = epoch_seconds(n_vars, n, k, width)
    assert epoch_seconds(n_vars, n, k, width, groups=n * k, computed_rows=False) == main
    assert epoch_seconds(n_vars, n, k, width, groups=0, computed_rows=True) == main
    monkeypatch.setattr(_sequence, "GROUPED_EPOCH_MODEL", False)
    assert epoch_seconds(n_vars, n, k, width, groups=n * k, computed_rows=True) == main


def test_a_cost_matrix_kernel_fit_converges_at_the_reference_with_the_model(monkeypatch):
    """WeightedRobustMSVM with the matrix's utility, RBF, n = 100, C = 1e2: the rule read
    the grouped model's epoch (above main's), the fit converged with no ConvergenceWarning
    and objective_ within 1e-3 of the cvxpy reference (relative)."""
    X, y, _ = cell_data(100)
    U = UTILITY[3]
    seen = []
    predict = _sequence.DualSequence._epoch_seconds

    def recording(self, problem):
        seen.append(predict(self, problem))
        return seen[-1]

    monkeypatch.setattr(_sequence.DualSequence, "_epoch_seconds", recording)
    est = WeightedRobustMSVM(C=1e2, utility=U, truncation=None, kernel="rbf", gamma=_gamma(X),
                             random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(X, y)
    assert est.converged_
    optimum = _optimum(X, y, 1e2, U)
    assert abs(est.objective_ - optimum) <= 1e-3 * max(abs(optimum), 1.0)
    n = len(y)
    main = epoch_seconds(n * 6, n, 3, n)
    assert seen and np.all(np.array(seen) > main)
