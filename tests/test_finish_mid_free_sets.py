"""The finishing step on free sets between FRESH_FREE and SMALL_FREE variables (RBF at large
C): fresh factorizations per step ran out of their flops after ten to thirty steps there,
returned nothing, and the solver stopped at max_iter; the Schur-updated face system settles
them (msvm/_finish.py, FRESH_FREE)."""

import warnings

import numpy as np

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



@pytest.mark.slow
@pytest.mark.parametrize("model", ["ReinforcedMSVM", "AngleBasedMSVM"])
def test_rbf_at_C_1e8_on_2000_samples_converges(model):
    """make_blobs n = 2,000, d = 3, RBF, C = 1e8: the finishing step from the first budget
    stop (about 500 free variables, 1,100 bounds to change) releases RELEASE_BATCH bounds a
    step and settles the face within its step budget, and the solver certifies the point
    in its first epoch (before, b9f36a5: one bound a step, MAX_STEPS ran out, the proposals
    were not optimal and both fits stopped at max_iter, KKT residual about 3)."""
    import msvm
    X, y = make_blobs(2000, 3, centers=3, cluster_std=2.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = getattr(msvm, model)(C=1e8, kernel="rbf").fit(X, y)
    assert est.converged_ and est.stop_reason_ == "tol"
    assert est.n_iter_ <= 401
    assert est.duality_gap_ <= est.tol * est.objective_


def test_release_takes_the_most_violating_bounds_in_a_batch():
    """`_most_violating`: the RELEASE_BATCH largest violations above the limit, all of them
    where fewer exceed it, none where none does."""
    from msvm._finish import RELEASE_BATCH, _most_violating
    rng = np.random.default_rng(0)
    viol = rng.random(10 * RELEASE_BATCH)
    got = _most_violating(viol, 0.0)
    assert sorted(got) == sorted(np.argsort(-viol)[:RELEASE_BATCH])
    few = np.zeros(100)
    few[[3, 50, 70]] = [1.0, 2.0, 1e-6]
    assert sorted(_most_violating(few, 1e-5)) == [3, 50]
    assert len(_most_violating(np.zeros(10), 0.0)) == 0
