"""Nystroem features mapped in every pass of a chunked fit, kept factored (msvm._products).

On the conjugate-gradient route a chunk's features phi(X_c) = K(X_c, L) N are never formed:
each pass multiplies the kernel values by N V (m, k) and maps K^T U back through N^T.  The
passes then equal those of the persisted float32 features up to that float32 rounding, and
the fit is the persisted fit's and the in-memory fit's problem.  The route is forced on
small problems by lowering DENSE_MAX_UNKNOWNS (synchronous scheduler).
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

import msvm
import msvm._dask as chunked
from _estimators import DASK_PATHS
from msvm._approx import fit_feature_map
from msvm._dask_cg import sampled_newton_matrix
from msvm._dask_passes import (ChunkModel, breakpoint_pass, certificate_pass, gradient_pass,
                               hessian_pass, line_pass, setup_pass)
from msvm._primal import newton_matrix
from msvm._products import FactoredRows, rows_times, transposed_times

da = pytest.importorskip("dask.array", reason="dask is an optional dependency (msvm[dask])")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.usefixtures("dask_synchronous")

# the float32 rounding of persisted features, seen through sums over a few hundred rows
ROUNDING = 1e-6


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(300, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=2)
    return X, y


def _models(X, name="WestonWatkinsMSVM", n_components=40):
    est = getattr(msvm, name)(kernel="rbf", kernel_approximation="nystroem",
                              n_components=n_components, random_state=0)
    fmap = fit_feature_map(est, X, 0.2)
    k = 3
    mapped = ChunkModel(clone(est), np.arange(k), np.ones(k), fmap, 1.0)
    mapped.factored = True              # as the solver sets it on the conjugate-gradient route
    persisted = ChunkModel(clone(est), np.arange(k), np.ones(k), None, 1.0)
    return fmap, mapped, persisted, fmap.transform(X, dtype=np.float32)


def _close(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert np.max(np.abs(a - b), initial=0.0) <= ROUNDING * max(np.max(np.abs(b)), 1.0)


def test_factored_rows_are_the_mapped_features(data):
    """phi W, phi^T U and rows by index of the factored chunk are those of the formed map."""
    X, _ = data
    fmap, *_ = _models(X)
    rows = FactoredRows(X, fmap)
    phi = fmap.transform(X)
    rng = np.random.default_rng(0)
    W, U = rng.normal(size=(phi.shape[1], 4)), rng.normal(size=(len(X), 4))
    assert rows.shape == phi.shape
    assert np.allclose(rows_times(rows, W), phi @ W, rtol=1e-10, atol=1e-10)
    assert np.allclose(transposed_times(rows, U), phi.T @ U, rtol=1e-10, atol=1e-9)
    pick = np.array([3, 0, 77])
    assert rows[pick].dtype == np.float32
    assert np.allclose(rows[pick], phi[pick], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "ReinforcedMSVM", "AngleBasedMSVM"])
def test_mapped_passes_equal_the_persisted_passes(data, name):
    """Every pass of a factored chunk (gradient with and without the sampled rows, product,
    line search, certificate, intercept breakpoints, setup) equals the pass over the
    persisted float32 features up to their rounding; the sampled rows and blocks too."""
    X, y = data
    _, mapped, persisted, phi = _models(X, name)
    assert isinstance(mapped.rows(X, y, None)[0], FactoredRows)
    rng = np.random.default_rng(1)
    m, k = phi.shape[1], 3
    V = rng.normal(size=(m, k)) * 0.3
    V -= V.mean(axis=1, keepdims=True)
    b, sV, sb, mu = np.zeros(k), rng.normal(size=(m, k)), rng.normal(size=k), 4.0
    for curvature, stride in ((False, 1), ("sampled", 1), ("sampled", 3)):
        got = gradient_pass(mapped, X, y, None, V, b, mu, curvature, stride)
        want = gradient_pass(persisted, phi, y, None, V, b, mu, curvature, stride)
        for a, c in zip(got[:3], want[:3]):
            _close(a, c)
        if curvature:
            assert got[3].free == want[3].free > 0
            _close(got[3].rows, want[3].rows)
            _close(got[3].blocks, want[3].blocks)
    for a, c in zip(hessian_pass(mapped, X, y, None, V, b, mu, sV, sb),
                    hessian_pass(persisted, phi, y, None, V, b, mu, sV, sb)):
        _close(a, c)
    steps = (0.01, 0.3, 1.0)
    _close(line_pass(mapped, X, y, None, V, b, sV, sb, mu, steps),
           line_pass(persisted, phi, y, None, V, b, sV, sb, mu, steps))
    W = rng.normal(size=(m, k))
    _close(certificate_pass(mapped, X, y, None, V, b, mu, W, b),
           certificate_pass(persisted, phi, y, None, V, b, mu, W, b))
    _close(setup_pass(mapped, X, y, None), setup_pass(persisted, phi, y, None))
    if name == "WestonWatkinsMSVM":
        return                       # no exact intercept step (terms on two slots)
    window = (b - 5.0, b + 5.0)
    got = breakpoint_pass(mapped, X, y, None, W, *window)
    want = breakpoint_pass(persisted, phi, y, None, W, *window)
    for j in range(k):
        _close(np.sort(got[2][j]), np.sort(want[2][j]))


def test_dense_route_maps_the_chunk(data):
    """With few unknowns (the dense route) the solver keeps the chunk's features formed:
    the chunk is mapped as persisted features are, and the fit is the persisted one."""
    X, y = data
    _, mapped, _, phi = _models(X)
    mapped.factored = False
    features = mapped.rows(X, y, None)[0]
    assert isinstance(features, np.ndarray) and np.array_equal(features, phi)


def _fits(name, X, y, chunks, **params):
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    mapped = getattr(msvm, name)(**params).fit(Xd, y)
    with dask.config.set({"msvm.persist_features": True}):
        persisted = getattr(msvm, name)(**params).fit(Xd, y)
    return mapped, persisted, getattr(msvm, name)(**params).fit(X, y)


def _same_fit(mapped, persisted, ref):
    """Both certified on the conjugate-gradient route; the mapped objective is the
    persisted one's up to the features' rounding and the in-memory one's within tol."""
    assert mapped.solver_plan_.steps[0].solver == "chunked newton-cg"
    assert mapped.converged_ and persisted.converged_
    assert abs(mapped.objective_ - persisted.objective_) <= 1e-5 * abs(persisted.objective_)
    assert abs(mapped.objective_ - ref.objective_) <= ref.tol * abs(ref.objective_)


def test_mapped_fit_is_the_persisted_and_in_memory_fit(data, cg_route):
    """Unequal chunks with an empty one: the factored fit solves the persisted fit's and
    the in-memory fit's problem (the fast test of the factored passes)."""
    X, y = data
    mapped, persisted, ref = _fits("WestonWatkinsMSVM", X, y, (1, 150, 0, 49, 100),
                                   **DASK_PATHS["nystroem"])
    _same_fit(mapped, persisted, ref)
    assert np.mean(mapped.predict(X) == ref.predict(X)) >= 0.97


def test_solver_keeps_features_factored_on_the_cg_route_only(data, monkeypatch):
    """The solver sets ``factored`` by its route: factored passes on the conjugate-gradient
    route, formed features on the dense route (whose fit is then the persisted fit)."""
    X, y = data
    seen = []
    original = chunked.ChunkedNewton.solve

    def solve(self, *args, **kwargs):
        seen.append((self.curvature, self.model.factored))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(chunked.ChunkedNewton, "solve", solve)
    params = dict(DASK_PATHS["nystroem"], n_components=10)
    Xd = da.from_array(X[:120], chunks=40)
    msvm.WestonWatkinsMSVM(**params).fit(Xd, y[:120])
    monkeypatch.setattr(chunked, "DENSE_MAX_UNKNOWNS", 0)
    with pytest.warns(ConvergenceWarning):
        msvm.WestonWatkinsMSVM(**params, max_iter=3).fit(Xd, y[:120])
    assert seen == [("dense", False), ("sampled", True)]


@pytest.mark.slow
@pytest.mark.parametrize("chunks", [300, 75, (17, 0, 0, 260, 23)],
                         ids=["one", "equal", "empty-run"])
@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "ReinforcedMSVM", "AngleBasedMSVM",
                                  "WeightedRobustMSVM"])
def test_mapped_fit_any_chunking_any_model(data, cg_route, name, chunks):
    """Every chunking, convex and grouped models: the factored fit is the persisted fit
    and the in-memory problem."""
    X, y = data
    params = dict(DASK_PATHS["nystroem"])
    if name == "WeightedRobustMSVM":
        params["truncation"] = None
    _same_fit(*_fits(name, X, y, chunks, **params))


def test_laplacian_blocks_form_the_dense_newton_matrix():
    """Blocks whose rows sum to zero up to rounding (a Weston-Watkins sample's: every
    term on e_j - e_y), formed as Laplacians alone: ``newton_matrix`` of the curvature sum."""
    rng = np.random.default_rng(5)
    d, k, s, mu, kappa = 5, 4, 40, 0.1, 2.0
    rows = rng.normal(size=(s, d))
    blocks = np.zeros((s, k, k))
    for i in range(s):
        y = rng.integers(k)
        for j in range(k):
            if j != y and rng.random() < 0.6:
                e = np.zeros(k)
                e[j], e[y] = 1.0, -1.0
                blocks[i] += rng.random() * np.outer(e, e)
    Z = np.column_stack([rows, np.ones(s)])
    H = newton_matrix(np.einsum("ia,ib,ijl->ajbl", Z, Z, blocks), mu, d, kappa, True)
    assert np.allclose(sampled_newton_matrix(rows, blocks, mu, kappa, d, True), H,
                       rtol=1e-12, atol=1e-12 * np.max(np.abs(H)))
