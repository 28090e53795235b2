"""WeightedRobustMSVM with a cost matrix: several group caps per sample (issue 23 item 1).

The SMO bounds the working set of such duals (msvm._core._smo.MULTI_GROUP_QMAX): with main
fd47237's 256-sample blocks the local SMO crawled through group pair steps (make_blobs, 4
classes, d = 3, RBF gamma 'scale', without the finishing step: n = 40, C = 1: 456 epochs,
134 with the bound; n = 80, C = 10: 4,906 epochs, 523 with the bound).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

import msvm._sequence as sequence
from msvm import WeightedRobustMSVM
from msvm._core import _smo

pytest.importorskip("cvxpy")
from oracle import cvx_weighted_loss, kernel_matrix, penalty, primal_fit, weighted_loss  # noqa: E402

def _blobs_with_costs(n, k=4, seed=0):
    X, y = make_blobs(n_samples=n, centers=k, n_features=3, random_state=seed)
    cost = np.random.default_rng(seed).uniform(0.5, 2.0, (k, k))
    np.fill_diagonal(cost, 0.0)
    return X, y, cost


def _gamma(X):
    """gamma='scale' as a number (the reference needs it)."""
    return 1.0 / (X.shape[1] * X.var())


def _optimum(X, y, C, U):
    K = kernel_matrix(X, X, "rbf", gamma=_gamma(X))
    V, b, F = primal_fit(K, U.shape[0], cvx_weighted_loss(y, np.ones(len(y)), C, U))
    return penalty(V, K) + C * weighted_loss(F, y, np.ones(len(y)), U, None)


def _fit(X, y, cost, C, **params):
    est = WeightedRobustMSVM(C=C, cost=cost, truncation=None, kernel="rbf", gamma=_gamma(X),
                             **params)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est.fit(X, y)


def test_the_working_set_is_bounded_for_several_groups_per_sample():
    assert _smo._multi_group_qmax() > 0


def test_the_smo_alone_converges_with_a_cost_matrix(monkeypatch):
    """Without the exact finishing step, the SMO reaches its stopping rule within 300
    epochs (456 before the bound, 134 with it) and objective_ is within tol of the
    reference optimum."""
    X, y, cost = _blobs_with_costs(40)
    monkeypatch.setattr(sequence, "finish_grouped", None)
    est = _fit(X, y, cost, 1.0, max_iter=300)
    optimum = _optimum(X, y, 1.0, est.utility_)
    assert est.converged_
    assert optimum - 1e-6 * optimum <= est.objective_ <= optimum * (1 + 1e-3)


def test_the_smo_alone_converges_at_C_10(monkeypatch):
    """n = 80, C = 10, no finishing step: within 1,000 epochs (4,906 before the bound)."""
    X, y, cost = _blobs_with_costs(80)
    monkeypatch.setattr(sequence, "finish_grouped", None)
    assert _fit(X, y, cost, 10.0, max_iter=1000).converged_


@pytest.mark.slow
def test_a_cost_matrix_fit_converges_to_the_optimum():
    """The default path (the finishing step on): no ConvergenceWarning, objective_ within
    1e-3 of the reference."""
    X, y, cost = _blobs_with_costs(40, seed=1)
    est = _fit(X, y, cost, 10.0)
    optimum = _optimum(X, y, 10.0, est.utility_)
    assert optimum - 1e-6 * optimum <= est.objective_ <= optimum * (1 + 1e-3)


def test_one_group_per_sample_keeps_its_working_set(monkeypatch):
    """The bound applies to duals with several groups per sample only: the identity utility
    (one group per sample) fits bit for bit the same with it off."""
    X, y, _ = _blobs_with_costs(60)
    fits = []
    for bound in (_smo._multi_group_qmax(), 0):
        old = _smo._multi_group_qmax(bound)
        try:
            fits.append(_fit(X, y, None, 10.0).dual_coef_)
        finally:
            _smo._multi_group_qmax(old)
    np.testing.assert_array_equal(fits[0], fits[1])
