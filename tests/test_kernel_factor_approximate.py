"""The approximate kernel-factor start (round 18; msvm/_kernel_factor.py): where the exact
factor of a kernel gives up at its rank cap (an RBF kernel), its first pivots start the fit.

- the residual after each pivot, read from the factor's columns, is the residual computed
  directly;
- an RBF kernel whose residual falls below ``START_RTOL`` within ``start_rank_budget``
  pivots gets the fewest such pivots; with ``APPROXIMATE_START`` off it gives up (main);
- a nearly full-rank kernel, or a budget too small for the residual, gives up;
- an exactly low-rank kernel keeps its exact factor (round 17's route unchanged);
- RBF fits at C = 1e6 take the start, converge with no ConvergenceWarning and reach the
  objective of the fit without it.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel

import msvm._kernel_factor as kernel_factor_module
from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from msvm._core._rows import GramRows
from msvm._finish_groups import _Factor
from msvm._kernel_factor import (_RowColumns, kernel_factor, residual_after_pivots,
                                 start_rank_budget)


def _blobs(n, seed=0):
    return make_blobs(n_samples=n, centers=3, n_features=3, cluster_std=2.0,
                      random_state=seed)


def _rbf_rows(n, gamma=None):
    """The RBF Gram matrix of make_blobs (gamma 'scale' by default) as a row source."""
    X, _ = _blobs(n)
    gamma = 1.0 / (X.shape[1] * X.var()) if gamma is None else gamma
    return GramRows(np.ascontiguousarray(rbf_kernel(X, gamma=gamma)), 3)


def _fit(est, X, y, approximate):
    """Fit with the approximate start on or off; the ConvergenceWarnings."""
    old = kernel_factor_module.APPROXIMATE_START
    kernel_factor_module.APPROXIMATE_START = approximate
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y)
    finally:
        kernel_factor_module.APPROXIMATE_START = old
    return [w for w in caught if issubclass(w.category, ConvergenceWarning)]


def _started(est):
    return bool(est.solver_plan_.steps) and est.solver_plan_.steps[0].primal_start


def test_residual_after_pivots_is_the_direct_residual():
    src = _rbf_rows(200, gamma=0.5)
    diag = np.asarray(src.diagonal(), dtype=np.float64)
    factor = _Factor(_RowColumns(src), diag, rtol=1e-12)
    assert factor.rows(np.arange(200), max_rank=30) is None and factor.too_wide
    L = factor.L
    got = residual_after_pivots(L, factor.resid)
    direct = [np.max(diag - np.sum(L[:, :r] ** 2, axis=1)) for r in range(1, 31)]
    assert np.allclose(got, direct, rtol=0.0, atol=1e-10)
    assert np.all(np.diff(got) <= 1e-12)


def test_rbf_factor_is_cut_at_the_start_residual():
    src = _rbf_rows(1000)
    diag = np.asarray(src.diagonal(), dtype=np.float64)
    L = kernel_factor(src, 3)
    assert L is not None and 0 < L.shape[1] <= start_rank_budget(1000, 3)
    resid = np.max(diag - np.einsum("ij,ij->i", L, L))
    assert resid <= kernel_factor_module.START_RTOL * diag.max()
    # the fewest such pivots: one fewer leaves a residual above START_RTOL
    assert np.max(diag - np.sum(L[:, :-1] ** 2, axis=1)) > \
        kernel_factor_module.START_RTOL * diag.max()
    # main's rule: the exact factor gives up
    kernel_factor_module.APPROXIMATE_START = False
    try:
        assert kernel_factor(src, 3) is None
    finally:
        kernel_factor_module.APPROXIMATE_START = True


def test_high_rank_kernel_or_small_budget_gives_up(monkeypatch):
    # a narrow RBF kernel: the residual stays near max K_ii within the budget
    assert kernel_factor(_rbf_rows(1000, gamma=5.0), 3) is None
    # a budget below the rank the residual needs (53 at n = 1000)
    monkeypatch.setattr(kernel_factor_module, "START_EPOCHS", 5)
    assert start_rank_budget(1000, 3) < 30
    assert kernel_factor(_rbf_rows(1000), 3) is None


def test_low_rank_factor_is_the_exact_one(monkeypatch):
    X, _ = _blobs(300)
    src = GramRows(np.ascontiguousarray(X @ X.T), 3)
    L = kernel_factor(src, 3)
    monkeypatch.setattr(kernel_factor_module, "APPROXIMATE_START", False)
    assert L.shape == (300, 3) and np.array_equal(L, kernel_factor(src, 3))


@pytest.mark.parametrize("make", [
    ReinforcedMSVM,
    WestonWatkinsMSVM,
    lambda **kw: ReinforcedMSVM(reinforcement=0.0, **kw),
    AngleBasedMSVM,
], ids=["reinforced", "weston-watkins", "llw", "angle"])
def test_rbf_at_large_C_converges_from_the_approximate_start(make, monkeypatch):
    # n = 600, gamma = 0.01: the exact factor needs 249 pivots, past a cap of 100 here;
    # 2e-2 of max K_ii takes about 30, within the budget of 47
    monkeypatch.setattr(kernel_factor_module, "FACTOR_MAX_RANK", 100)
    X, y = _blobs(600)
    est = make(C=1e6, kernel="rbf", gamma=0.01)
    caught = _fit(est, X, y, approximate=True)
    assert not caught, caught[0].message
    assert est.converged_ and _started(est)
    main = make(C=1e6, kernel="rbf", gamma=0.01)
    assert not _fit(main, X, y, approximate=False)
    assert main.converged_ and not _started(main)
    assert abs(est.objective_ - main.objective_) <= 1e-4 * abs(main.objective_)
    assert np.mean(est.predict(X) == main.predict(X)) >= 0.99
