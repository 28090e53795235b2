"""The failing cells of the convergence matrix (benchmarks/results/convergence_matrix.md) that
were fixed: a precomputed linear Gram matrix at large C.

make_blobs n = 300, d = 3, 3 overlapping classes (cluster_std 2): the per-class and angle
duals on the precomputed linear Gram matrix stopped at max_iter at C = 1e4-1e6 (relative
duality gap 0.67), while the same problem on the linear kernel converged: every exact
finishing step (msvm/_finish.py) from the 135-147 free variables of the solver's iterate
ran out of its SMALL_STEPS fresh steps before the 913-989 steps its bound changes need, and
returned nothing.  Where the face is settled, the fresh steps now get LAST_STEPS_PER_FREE
steps per free variable of the start (msvm._finish._system_for).
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import AngleBasedMSVM, ReinforcedMSVM

pytest.importorskip("cvxpy")

TOL = 1e-3


def _blobs():
    return make_blobs(n_samples=300, centers=3, n_features=3, cluster_std=2.0,
                      random_state=0)


def _optimum(model, K, y, C):
    """The reference optimum (cvxpy + Clarabel on the primal, oracle/)."""
    from oracle import (cvx_angle_loss, penalty, primal_fit, reference_fit, reinforced_loss,
                        vertices)

    w = np.ones(len(y))
    if model is ReinforcedMSVM:
        return reference_fit(K, y, w, C, 0.5, k=3)[0]
    V, b, F = primal_fit(K, 2, cvx_angle_loss(y, w, C, 0.5, 3), sum_to_zero=False)
    return penalty(V, K) + C * reinforced_loss(F @ vertices(3), y, w, 0.5)


@pytest.mark.parametrize("model", [ReinforcedMSVM, AngleBasedMSVM])
@pytest.mark.parametrize("C", [1e4, 1e6])
def test_precomputed_linear_gram_converges_at_large_C(model, C):
    """A precomputed linear Gram matrix at large C reaches the stopping rule (it stopped at
    max_iter) and objective_ is within tol of the reference optimum."""
    X, y = _blobs()
    K = X @ X.T
    est = model(C=C, kernel="precomputed")
    # the finishing steps' path, without the kernel-factor start (tests/test_kernel_factor.py)
    est._plan_overrides = {"factor_start": "off"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est.fit(K, y)
    assert est.converged_ and est.stop_reason_ == "tol"
    assert est.solver_plan_.steps[0].finishing_steps >= 1
    optimum = _optimum(model, K, y, C)
    assert optimum - 1e-6 * optimum <= est.objective_ <= optimum + TOL * optimum
