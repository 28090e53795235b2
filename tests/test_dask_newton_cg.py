"""The chunked fit's conjugate-gradient Newton route (msvm/_dask_cg.py), synchronous scheduler.

Beyond DENSE_MAX_UNKNOWNS unknowns the chunked fit solves each Newton system by
preconditioned conjugate gradients, one pass over the chunks per product, instead of
summing the dense curvature over the chunks.  The product is the dense Newton matrix's,
conjugate gradients solve a positive definite system to the requested residual, and the
fit solves the in-memory fit's problem within tol whatever the chunking, with its
certificate, ``converged_`` and ``stop_reason_`` meaning what they mean on the dense route.
Here the route is forced on small problems by lowering DENSE_MAX_UNKNOWNS.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import msvm
import msvm._dask as chunked
from _estimators import DASK_PATHS
from msvm._dask_cg import KroneckerPreconditioner, SlotPreconditioner, conjugate_gradients

da = pytest.importorskip("dask.array", reason="dask is an optional dependency (msvm[dask])")
pytest.importorskip("dask")

# every test of this file runs on the synchronous scheduler (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("dask_synchronous")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(240, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=1)
    return X, y


@pytest.fixture
def cg_route(monkeypatch):
    """Every chunked fit of the test takes the conjugate-gradient route."""
    monkeypatch.setattr(chunked, "DENSE_MAX_UNKNOWNS", 0)


def _fit_pair(name, X, y, chunks, sw=None, **params):
    ref = getattr(msvm, name)(**params).fit(X, y, sample_weight=sw)
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    est = getattr(msvm, name)(**params).fit(Xd, y, sample_weight=sw)
    return ref, est


def _same_problem(ref, est):
    """Certified, on the conjugate-gradient route, objective within tol of the in-memory
    fit's."""
    assert est.solver_plan_.steps[0].solver == "chunked newton-cg"
    assert est.converged_ and est.stop_reason_ == "tol" and est.duality_gap_ >= 0
    rel = abs(est.objective_ - ref.objective_) / abs(ref.objective_)
    assert rel <= ref.tol, (est.objective_, ref.objective_)


def test_cg_route_solves_the_in_memory_problem(data, cg_route):
    """Unequal chunks with an empty one, on the approximate path: the conjugate-gradient
    route's fit is the in-memory fit within tol (the fast test of the route)."""
    X, y = data
    ref, est = _fit_pair("WestonWatkinsMSVM", X, y, (1, 100, 0, 39, 100),
                         **DASK_PATHS["nystroem"])
    _same_problem(ref, est)
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.97


def test_hessian_product_is_the_dense_newton_matrix(data, monkeypatch):
    """At the iterates of a dense-route fit, one product pass times a centered direction is
    the dense Newton matrix (``newton_matrix`` of the summed curvature) times it."""
    from msvm._primal import newton_matrix
    X, y = data
    seen = []
    original = chunked.ChunkedNewton.direction

    def direction(self, V, b, g, curv):
        H = newton_matrix(curv, self.mu, self.d, self.kappa, self.equality)
        P = np.random.default_rng(len(seen)).normal(size=(H.shape[0] // self.k, self.k))
        P -= P.mean(axis=1, keepdims=True)
        want = (H @ P.ravel()).reshape(P.shape)
        seen.append(np.max(np.abs(self.hessian_times(V, b, P) - want)) / np.max(np.abs(want)))
        return original(self, V, b, g, curv)

    monkeypatch.setattr(chunked.ChunkedNewton, "direction", direction)
    msvm.ReinforcedMSVM(**DASK_PATHS["rff"]).fit(da.from_array(X, chunks=(70, 5)), y)
    assert len(seen) > 3 and max(seen) < 1e-9


@pytest.mark.parametrize("kind", ["slots", "kronecker"])
def test_conjugate_gradients_reach_the_residual(kind):
    """On a random positive definite Newton-like system (curvature sums of random free
    terms), preconditioned CG stops with ||g - H s|| <= rtol ||g|| and its direction is a
    descent direction (<g, s> > 0)."""
    rng = np.random.default_rng(0)
    m, k, n, mu, kappa = 6, 3, 40, 0.1, 2.0
    Z = np.column_stack([rng.normal(size=(n, m - 1)), np.ones(n)])
    S = rng.normal(size=(n, k, k))
    S = np.einsum("ijl,iml->ijm", S, S)
    P = np.eye(k) - 1.0 / k
    T = np.einsum("jl,ilr,rm->ijm", P, S, P)
    H = np.einsum("ia,ib,ijl->ajbl", Z, Z, T).reshape(m * k, m * k) / mu
    H[np.arange((m - 1) * k), np.arange((m - 1) * k)] += 1.0 / kappa
    H += np.kron(np.eye(m), np.full((k, k), 1.0 / k))
    if kind == "slots":
        A = np.einsum("ia,ib,ij->jab", Z, Z, np.einsum("ijj->ij", T))
        M = SlotPreconditioner(A, mu, kappa, m - 1)
    else:
        w = np.einsum("ijj->i", T)
        M = KroneckerPreconditioner((Z * w[:, None]).T @ Z, T.sum(axis=0), mu, kappa, m - 1)
    g = rng.normal(size=(m, k))
    g -= g.mean(axis=1, keepdims=True)
    s, used = conjugate_gradients(lambda p: (H @ p.ravel()).reshape(m, k), g, M,
                                  rtol=1e-8, max_iter=200)
    assert np.linalg.norm(g.ravel() - H @ s.ravel()) <= 1e-8 * np.linalg.norm(g)
    assert 0 < used < 200 and float(np.sum(g * s)) > 0


@pytest.mark.slow
@pytest.mark.parametrize("chunks", [240, 60, (17, 0, 0, 200, 23)],
                         ids=["one", "equal", "empty-run"])
@pytest.mark.parametrize("path", list(DASK_PATHS))
@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "ReinforcedMSVM", "AngleBasedMSVM"])
def test_cg_route_any_chunking_any_convex_model(data, cg_route, name, path, chunks):
    """Every convex estimator on every path and chunking: the in-memory problem."""
    X, y = data
    _same_problem(*_fit_pair(name, X, y, chunks, **DASK_PATHS[path]))


@pytest.mark.slow
@pytest.mark.parametrize("chunks", [240, (1, 100, 0, 39, 100)], ids=["one", "unequal-empty"])
def test_cg_route_grouped_and_dc_models(data, cg_route, chunks):
    """The capped groups of WeightedRobustMSVM (without truncation: one convex solve) and
    the DC steps of RobustMSVM on the conjugate-gradient route: the in-memory problem
    (objective within tol)."""
    X, y = data
    utility = np.array([[1.0, 0.3, 0.0], [0.2, 1.0, 0.0], [0.0, 0.4, 1.5]])
    for name, params in (("WeightedRobustMSVM", dict(utility=utility, truncation=None)),
                         ("RobustMSVM", {})):
        ref, est = _fit_pair(name, X, y, chunks, **params, **DASK_PATHS["linear"])
        rel = abs(est.objective_ - ref.objective_) / abs(ref.objective_)
        assert est.solver_plan_.steps[0].solver == "chunked newton-cg"
        assert rel <= ref.tol, (name, est.objective_, ref.objective_)
