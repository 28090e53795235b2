"""TargetedLocalMSVM on Dask arrays (msvm/_dask_grid.py), on the synchronous scheduler.

Every grid point's local model is a chunked fit of the in-memory local problem (weights
times the smoothing kernel at u0, the intercept a penalized constant feature): each grid
point's objective is the in-memory one within tol whatever the chunking, the grid, the
bandwidth and the grid points without a local problem are the in-memory ones, and
predictions come chunk by chunk from the fitted coefficient paths.  probability=True on Dask
input: tests/test_dask_probability.py.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

import msvm
from _estimators import DASK_PATHS
from msvm._dask import is_dask_collection

da = pytest.importorskip("dask.array", reason="dask is an optional dependency (msvm[dask])")
dask = pytest.importorskip("dask")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(300, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=1)
    return X, y


# every test of this file runs on the synchronous scheduler (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("dask_synchronous")


def _fits(X, y, chunks, sw=None, swd=None, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", msvm.exceptions.DegenerateFitWarning)
        ref = msvm.TargetedLocalMSVM(**params).fit(X, y, sample_weight=sw)
        est = msvm.TargetedLocalMSVM(**params).fit(da.from_array(X, chunks=(chunks, 5)), y,
                                                   sample_weight=swd)
    return ref, est


def _same_grid_problems(ref, est):
    assert est.converged_ and est.stop_reason_ == "tol"
    np.testing.assert_allclose(est.grid_, ref.grid_, rtol=1e-12)
    assert est.bandwidth_ == pytest.approx(ref.bandwidth_, rel=1e-12)
    empty = ref.objectives_ == 0           # grid points without samples: exactly zero
    np.testing.assert_array_equal(est.objectives_[empty], 0.0)
    rel = np.abs(est.objectives_ - ref.objectives_)[~empty] / np.abs(ref.objectives_[~empty])
    assert np.all(rel <= ref.tol), (est.objectives_, ref.objectives_)
    for key in ("no_sample", "one_class"):
        np.testing.assert_array_equal(est.local_problems_[key], ref.local_problems_[key])


@pytest.mark.parametrize("chunks", [(300,), (1, 120, 0, 79, 100)], ids=["one", "unequal-empty"])
def test_grid_fits_solve_the_in_memory_local_problems(data, chunks):
    """The linear local models: every grid point's objective within tol of the in-memory
    one, predictions as Dask arrays computed chunk by chunk from the coefficient path."""
    X, y = data
    ref, est = _fits(X, y, chunks, kernel="linear", n_grid=4)
    _same_grid_problems(ref, est)
    assert est.coef_path_.shape == ref.coef_path_.shape
    Xd = da.from_array(X, chunks=70)
    pred = est.predict(Xd)
    assert is_dask_collection(pred)
    assert np.array_equal(pred.compute(), est.predict(X))
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.97


def test_grid_fits_with_weights_and_the_approximate_path(data):
    """Dask sample weights multiplied into the smoothing weights, with a Nystroem map of
    the non-target columns and the targeted variable given as a later column."""
    X, y = data
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    params = dict(n_grid=3, target=2, **DASK_PATHS["nystroem"])
    ref, est = _fits(X, y, 100, sw=sw, swd=da.from_array(sw, chunks=77), **params)
    _same_grid_problems(ref, est)
    assert est.feature_coef_path_.shape == ref.feature_coef_path_.shape


@pytest.mark.slow
def test_grid_point_without_samples_is_exact(data):
    """A compact smoother and a small bandwidth leave grid points without samples: their
    local functions are zero and the solve is skipped, as in memory."""
    X, y = data
    ref, est = _fits(X, y, 100, kernel="linear", n_grid=12, bandwidth=0.05,
                     smoother="uniform")
    assert len(ref.local_problems_["no_sample"])
    _same_grid_problems(ref, est)
    empty = np.isin(est.grid_, est.local_problems_["no_sample"])
    assert np.all(est.coef_path_[empty] == 0) and np.all(est.n_iter_[empty] == 0)


@pytest.mark.filterwarnings("ignore::msvm.exceptions.DegenerateFitWarning")
def test_weighted_refit_starts_each_grid_point_from_the_last_fit(data):
    """A weighted refit of probability=True (``ChunkedFits.top_fit``) starts each grid
    point's solve from the last fit's Newton iterate at that grid point: the same local
    problems as a cold fit (objectives within twice tol: each is within tol of the optimum)
    in fewer Newton steps."""
    from msvm._dask_probability import ChunkedFits
    X, y = data
    Xd = da.from_array(X, chunks=100)
    params = dict(kernel="linear", n_grid=3)
    sw = np.where(y == 0, 2.0, 1.0)
    first = msvm.TargetedLocalMSVM(**params).fit(Xd, y)
    warm = ChunkedFits.top_fit(msvm.TargetedLocalMSVM(**params), first, Xd, y, sw)
    cold = msvm.TargetedLocalMSVM(**params).fit(Xd, y, sample_weight=sw)
    assert warm.converged_ and cold.converged_
    rel = np.abs(warm.objectives_ - cold.objectives_) / np.abs(cold.objectives_)
    assert np.all(rel <= 2 * cold.tol), rel
    assert warm.n_iter_.sum() < cold.n_iter_.sum(), (warm.n_iter_, cold.n_iter_)
