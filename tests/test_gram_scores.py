"""A fit on a Gram matrix from outside the core ('precomputed', a callable kernel) reports the
objective of the function it predicts with (issue 23, item 2).

The solver keeps running scores K U; with a Gram matrix whose entries span a large range they
drift by about eps * max|K| * C per update, and -kappa (K U) P rounds apart from
K (-kappa U P).  ``objective_``, ``intercept_`` and the training decision values must describe
the function that ``dual_coef_`` and ``intercept_`` give, at any scale of K.
"""

import warnings

import numpy as np
import pytest

from oracle import reinforced_loss, vertices, ww_loss
from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from msvm._base import BaseMSVM


def _data(n=60, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    X = rng.standard_normal((n, 2)) + 1.5 * np.column_stack([np.cos(y), np.sin(y)])
    return X, y


def _objective_of_returned_function(est, K, y):
    """penalty + C sum_i loss_i of the function given by dual_coef_ and intercept_ (the
    model objective of docs/models.md), recomputed from K alone."""
    sup, dc = est.support_, est.dual_coef_
    F = K[:, sup] @ dc.T + est.intercept_
    G = F @ vertices(len(est.classes_)) if isinstance(est, AngleBasedMSVM) else F
    w = np.ones(len(y))
    loss = ww_loss(G, y, w) if isinstance(est, WestonWatkinsMSVM) \
        else reinforced_loss(G, y, w, float(est.reinforcement))
    penalty = 0.5 * float(np.einsum("js,st,jt->", dc, K[np.ix_(sup, sup)], dc))
    return penalty + est.C * loss, G


def _fit_recording_scores(monkeypatch, est, X, y):
    """Fit ``est``; return the training decision values its ``objective_`` was computed from
    (the snapshot's G, recorded as the objective reads it)."""
    seen = []
    original = BaseMSVM._objective

    def recording(self, sol, y, sw):
        seen.append(np.array(sol.G))
        return original(self, sol, y, sw)

    monkeypatch.setattr(BaseMSVM, "_objective", recording)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # a large offset may stop the solve early
        est.fit(X, y)
    return seen[-1]


@pytest.mark.parametrize("model", [ReinforcedMSVM, WestonWatkinsMSVM, AngleBasedMSVM])
@pytest.mark.parametrize("offset", [0.0, 1e11, 1e300])
def test_objective_reads_the_decision_values_prediction_gives(monkeypatch, model, offset):
    """K = x x^T + offset (a linear kernel plus a constant up to 1e300): the decision values
    objective_ is computed from are bitwise those decision_values(K) gives, and objective_
    is the model objective of that function (the penalty to the rounding of its own sum,
    which cancels under a large offset)."""
    X, y = _data()
    K = X @ X.T + offset
    est = model(C=10.0, kernel="precomputed", random_state=0)
    G_fit = _fit_recording_scores(monkeypatch, est, K, y)
    np.testing.assert_array_equal(G_fit, est.decision_values(K))
    expected, G = _objective_of_returned_function(est, K, y)
    sup, dc = est.support_, np.abs(est.dual_coef_)
    pen_scale = 0.5 * float(np.einsum("js,st,jt->", dc, np.abs(K[np.ix_(sup, sup)]), dc))
    assert abs(est.objective_ - expected) <= 1e-9 * abs(expected) + 1e-13 * pen_scale


def test_callable_kernel_objective_reads_the_decision_values_prediction_gives(monkeypatch):
    """The same for a callable kernel (its Gram matrix is held as a precomputed one;
    prediction calls the kernel again on blocks of rows, so to the rounding of that call)."""
    X, y = _data(seed=1)

    def kernel(A, B):
        return A @ B.T + 1e10

    est = ReinforcedMSVM(C=10.0, kernel=kernel, random_state=0)
    G_fit = _fit_recording_scores(monkeypatch, est, X, y)
    G = est.decision_values(X)
    np.testing.assert_allclose(G_fit, G, rtol=0, atol=1e-15 * 1e10 * np.abs(est.dual_coef_).sum())
