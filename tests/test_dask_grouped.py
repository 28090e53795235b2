"""The grouped duals on Dask arrays (msvm/_dask_groups.py), on the synchronous scheduler.

WeightedRobustMSVM and AdaptiveWeightedSVM have the generalized-margin hinge, whose dual
caps each group's sum.  The chunked fit smooths each group by the projection onto its capped
box; the smoothed terms' value, gradient (the projection), generalized Hessian and line
derivative are those of the smoothed loss, and the chunked fits solve the in-memory fit's
problem within tol whatever the chunking.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import msvm
from _estimators import DASK_PATHS
from msvm._dask_groups import CappedTerms
from msvm._problem import margin_problem, shifted

da = pytest.importorskip("dask.array", reason="dask is an optional dependency (msvm[dask])")
dask = pytest.importorskip("dask")

# a utility matrix with off-diagonal entries: two or three capped groups per sample
UTILITY = np.array([[1.0, 0.3, 0.0], [0.2, 1.0, 0.0], [0.0, 0.4, 1.5]])


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(240, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=2)
    return X, y


# every test of this file runs on the synchronous scheduler (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("dask_synchronous")


def _same_problem(ref, est):
    assert est.converged_ and est.stop_reason_ == "tol"
    rel = abs(est.objective_ - ref.objective_) / abs(ref.objective_)
    assert rel <= ref.tol, (est.objective_, ref.objective_)
    assert est.duality_gap_ >= 0


def _terms(seed=0, n=40, k=4, mu=0.3, shift=False):
    rng = np.random.default_rng(seed)
    y = rng.integers(k, size=n).astype(np.int32)
    utility = rng.uniform(0.0, 2.0, (k, k)) * (rng.uniform(size=(k, k)) < 0.7)
    np.fill_diagonal(utility, 1.0)
    problem = margin_problem(y, k, rng.uniform(0.0, 2.0, n), utility)
    if shift:
        # a DC step's shift: one variable of some groups moved by the group's cap
        lead = np.arange(0, problem.n_vars, k - 1)
        s = np.zeros(problem.n_vars)
        pick = lead[rng.uniform(size=len(lead)) < 0.4]
        s[pick] = problem.cap[problem.expand("group")[pick]]
        problem = shifted(problem, s)
    return CappedTerms(problem, mu), problem, rng.normal(scale=2.0, size=(n, k))


def _smoothed_value(terms, F):
    return terms.value_and_slot_sums(F)[0]


@pytest.mark.parametrize("shift", [False, True], ids=["caps", "dc-shifted"])
def test_capped_projection_is_the_maximizer(shift):
    """The dual point is feasible (box and cap) and maximizes <a, z> - mu/2 |a|^2 over the
    capped box: no feasible point from random perturbations projected back does better,
    and it satisfies the projection's optimality conditions (a = clip(z / mu - lambda),
    lambda >= 0 only where the cap binds)."""
    terms, problem, F = _terms(shift=shift)
    z = terms.along(F)
    a, free, binding = terms.project(z)
    assert np.all(a >= terms.lo - 1e-12) and np.all(a <= terms.hi + 1e-12)
    assert np.all(a.sum(axis=1) <= terms.cap + 1e-10)
    np.testing.assert_allclose(a[binding].sum(axis=1), terms.cap[binding], atol=1e-10)
    Y = z / terms.mu
    shift = np.where(free, Y - a, 0.0)        # the common shift lambda of the free terms
    some = free.any(axis=1)
    top = shift.max(axis=1, initial=-np.inf, where=free)
    low = shift.min(axis=1, initial=np.inf, where=free)
    assert np.all(top[some] - low[some] <= 1e-9)
    assert np.all(np.abs(shift[~binding]) <= 1e-9) and np.all(low[some] >= -1e-9)
    obj = lambda b: np.sum(b * z, axis=1) - 0.5 * terms.mu * np.sum(b * b, axis=1)  # noqa
    rng = np.random.default_rng(1)
    best = obj(a)
    for _ in range(200):
        b = np.clip(a + rng.normal(scale=0.05, size=a.shape), terms.lo, terms.hi)
        over = np.maximum(b.sum(axis=1) - terms.cap, 0.0)
        b = np.clip(b - over[:, None] / b.shape[1], terms.lo, terms.hi)
        ok = b.sum(axis=1) <= terms.cap + 1e-12
        assert np.all(obj(b)[ok] <= best[ok] + 1e-9)


@pytest.mark.parametrize("shift", [False, True], ids=["caps", "dc-shifted"])
def test_capped_gradient_hessian_and_line_slope_are_derivatives(shift):
    """The slot sums are the smoothed loss's gradient in F, the curvature blocks its
    Hessian (the smoothed loss is piecewise quadratic: central differences are exact away
    from the pieces' edges), and the line search's derivative and slope are the first and
    second derivatives along a direction."""
    terms, problem, F = _terms(seed=3, shift=shift)
    n, k = F.shape
    _, U, (free, binding) = terms.value_and_slot_sums(F)
    samples, S = terms.sample_curvature(free, binding)
    H = np.zeros((n, k, k))
    H[samples] = S / terms.mu
    h = 1e-7
    for j in range(k):
        E = np.zeros_like(F)
        E[:, j] = h
        # the loss is a sum over samples: one perturbation of slot j of every sample
        up, down = terms.value_and_slot_sums(F + E), terms.value_and_slot_sums(F - E)
        np.testing.assert_allclose((up[0] - down[0]) / (2 * h), U[:, j].sum(), rtol=1e-6,
                                   atol=1e-6)
        np.testing.assert_allclose((up[1] - down[1]) / (2 * h), H[:, :, j], atol=1e-5)
    dF = np.random.default_rng(4).normal(size=F.shape)
    z, dz = terms.along(F), terms.along(dF, lin=False)
    for t in (0.0, 0.3, 1.0):
        slope, curv = terms.line_slope_and_curvature(z, dz, t)
        value = lambda s: _smoothed_value(terms, F - s * dF)  # noqa: E731
        assert -(value(t + h) - value(t - h)) / (2 * h) == pytest.approx(slope, rel=1e-6,
                                                                           abs=1e-6)
        s_up = terms.line_slope_and_curvature(z, dz, t + h)[0]
        s_down = terms.line_slope_and_curvature(z, dz, t - h)[0]
        assert -(s_up - s_down) / (2 * h) == pytest.approx(curv, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("chunks", [(240,), (60, 60, 60, 60), (1, 100, 0, 39, 100)],
                         ids=["one", "equal", "unequal-empty"])
def test_weighted_convex_fit_solves_the_in_memory_problem(data, chunks):
    """WeightedRobustMSVM without truncation, with a utility matrix (several capped groups
    per sample): the in-memory objective within tol whatever the chunking; ``truncated_`` is a
    Dask array of False; predictions are those of its own coefficients."""
    X, y = data
    params = dict(kernel="linear", truncation=None, utility=UTILITY)
    ref = msvm.WeightedRobustMSVM(**params).fit(X, y)
    Xd = da.from_array(X, chunks=(chunks, 5))
    est = msvm.WeightedRobustMSVM(**params).fit(Xd, y)
    _same_problem(ref, est)
    np.testing.assert_array_equal(est.utility_, ref.utility_)
    assert est.n_iter_ == 1 and not np.any(est.truncated_.compute())
    assert np.array_equal(est.predict(Xd).compute(), est.predict(X))
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.97


def test_grouped_fits_with_weights_and_classes_absent_from_chunks(data):
    """Rows sorted by class (chunks missing classes), Dask sample weights of another
    chunking and class_weight: WeightedRobustMSVM (convex) and AdaptiveWeightedSVM's
    one-step refit solve the in-memory problems; ``adaptive_weights_`` is a Dask array of
    the weights 1 / (1 + |margin|) of the first chunked fit."""
    X, y = data
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    Xd = da.from_array(X, chunks=(50, 5))
    swd = da.from_array(sw, chunks=71)
    for name, extra in (("WeightedRobustMSVM", dict(truncation=None)),
                        ("AdaptiveWeightedSVM", {})):
        params = dict(kernel="linear", class_weight="balanced", **extra)
        ref = getattr(msvm, name)(**params).fit(X, y, sample_weight=sw)
        est = getattr(msvm, name)(**params).fit(Xd, y, sample_weight=swd)
        _same_problem(ref, est)
    assert est.n_iter_ == ref.n_iter_ == 2
    v = est.adaptive_weights_
    assert v.chunks[0] == Xd.chunks[0]
    np.testing.assert_allclose(v.compute(), ref.adaptive_weights_, rtol=0.05)


@pytest.mark.slow
def test_weighted_dc_fit_solves_the_in_memory_problem(data):
    """WeightedRobustMSVM's DC steps (the truncated generalized-margin hinge) as chunked
    solves: the in-memory DC fit's objective within tol on data where both reach the same
    DC point, a nonincreasing path, and ``truncated_`` the truncation of the chunked fit's
    own function."""
    X, y = data
    ref = msvm.WeightedRobustMSVM(kernel="linear").fit(X, y)
    est = msvm.WeightedRobustMSVM(kernel="linear").fit(da.from_array(X, chunks=120), y)
    _same_problem(ref, est)
    path = est.dc_objectives_
    assert len(path) == est.n_iter_ >= 2 and np.all(np.diff(path) <= 0)
    margins = msvm._losses.margins(est.decision_values(X))[np.arange(len(y)), y]
    np.testing.assert_array_equal(est.truncated_.compute(), margins < est.truncation_)


@pytest.mark.slow
def test_adaptive_iterative_fit_solves_the_in_memory_problem(data):
    """AdaptiveWeightedSVM's iterative scheme: refits until the 0/1 weights repeat, the
    in-memory fit's objective within tol and its number of fits; the final weights are
    those of the last fit's margins."""
    X, y = data
    params = dict(kernel="linear", scheme="iterative")
    ref = msvm.AdaptiveWeightedSVM(**params).fit(X, y)
    Xd = da.from_array(X, chunks=80)
    est = msvm.AdaptiveWeightedSVM(**params).fit(Xd, y)
    _same_problem(ref, est)
    assert est.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(est.adaptive_weights_.compute(), ref.adaptive_weights_)


def test_grouped_approximate_path(data):
    """The Nystroem path: the in-memory objective within tol."""
    X, y = data
    params = dict(truncation=None, **DASK_PATHS["nystroem"])
    ref = msvm.WeightedRobustMSVM(**params).fit(X, y)
    est = msvm.WeightedRobustMSVM(**params).fit(da.from_array(X, chunks=100), y)
    _same_problem(ref, est)
