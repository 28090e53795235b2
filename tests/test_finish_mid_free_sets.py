"""The finishing step on free sets between FRESH_FREE and SMALL_FREE variables (RBF at large
C): fresh factorizations per step ran out of their flops after ten to thirty steps there,
returned nothing, and the solver stopped at max_iter; the Schur-updated face system settles
them (msvm/_finish.py, FRESH_FREE)."""

import warnings

import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import ReinforcedMSVM


def _fit(C, reinforcement):
    X, y = make_blobs(700, 3, centers=3, cluster_std=2.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return ReinforcedMSVM(C=C, kernel="rbf", reinforcement=reinforcement).fit(X, y)


@pytest.mark.parametrize("C, reinforcement", [(1e6, 0.0), (1e8, 0.5)])
def test_rbf_at_large_C_converges_with_mid_sized_free_sets(C, reinforcement):
    """make_blobs n = 700, d = 3, 3 overlapping classes, RBF: the fit converges (before:
    max_iter after 10,000 epochs, KKT residual 2-8) with a duality gap within tol of its
    objective's size, in the few budget stops of its finishing steps."""
    est = _fit(C, reinforcement)
    assert est.converged_ and est.stop_reason_ == "tol"
    assert est.n_iter_ <= 401
    assert est.duality_gap_ <= est.tol * est.objective_

