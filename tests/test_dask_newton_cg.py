"""The chunked fit's conjugate-gradient Newton route (msvm/_dask_cg.py), synchronous scheduler.

Beyond DENSE_MAX_UNKNOWNS unknowns the chunked fit solves each Newton system by
preconditioned conjugate gradients, one pass over the chunks per product, instead of
summing the dense curvature over the chunks.  The product is the dense Newton matrix's,
conjugate gradients solve a positive definite system to the requested residual, and the
fit solves the in-memory fit's problem within tol whatever the chunking, with its
certificate, ``converged_`` and ``stop_reason_`` meaning what they mean on the dense route.
Here the route is forced on small problems by lowering DENSE_MAX_UNKNOWNS.  The default
preconditioner is the Newton matrix of a sample of the free terms (subsampled Newton): with
every free term in the sample it is the Newton matrix itself, and with a subsample
(SAMPLED_ROWS_PER_FEATURE lowered) conjugate gradients correct it with exact products.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification

import msvm
import msvm._dask as chunked
from _estimators import DASK_PATHS
import msvm._dask_cg as cg
from msvm._dask_cg import (KroneckerPreconditioner, SampledPreconditioner, SlotPreconditioner,
                           conjugate_gradients, sampled_newton_matrix)
from msvm._dask_passes import SampledRows, gradient_pass, pattern_pass, sampled_rows
from msvm._primal import newton_matrix

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
def subsampled(monkeypatch):
    """The sampled Newton matrix takes about one free sample per row of V (fewer than the
    free samples: conjugate gradients run with exact products)."""
    monkeypatch.setattr(cg, "SAMPLED_ROWS_PER_FEATURE", 1)


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

    def direction(self, V, b, g, curv, free_mu=None):
        # a stage's first step: the curvature (and the products) of the last stage's pattern
        H = newton_matrix(curv, self.mu, self.d, self.kappa, self.equality)
        P = np.random.default_rng(len(seen)).normal(size=(H.shape[0] // self.k, self.k))
        P -= P.mean(axis=1, keepdims=True)
        want = (H @ P.ravel()).reshape(P.shape)
        got = self.hessian_times(V, b, P, free_mu)
        seen.append(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        return original(self, V, b, g, curv, free_mu)

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


def _random_terms(rng, s, m, k):
    """Rows z_i (s, m - 1) and symmetric positive semidefinite blocks S_i (s, k, k), some
    sparse as the models' (one or two slots per term)."""
    rows = rng.normal(size=(s, m - 1))
    D = rng.normal(size=(s, k, 2)) * (rng.random((s, k, 1)) < 0.5)
    return rows, np.einsum("ija,ila->ijl", D, D)


@pytest.mark.parametrize("equality", [True, False])
def test_sampled_newton_matrix_is_the_dense_newton_matrix(equality):
    """Formed from rows and blocks, the sampled Newton matrix equals ``newton_matrix`` of
    the curvature sum sum_i z_i z_i^T (x) S_i over the same rows, and the preconditioner
    built from a sample that holds every free term solves that system (the exact Newton
    direction: no products needed)."""
    rng = np.random.default_rng(3)
    d, k, s, mu, kappa = 6, 4, 30, 0.05, 3.0
    rows, blocks = _random_terms(rng, s, d + 1, k)
    Z = np.column_stack([rows, np.ones(s)]) if equality else rows
    curvature = np.einsum("ia,ib,ijl->ajbl", Z, Z, blocks)
    H = newton_matrix(curvature, mu, d, kappa, equality)
    assert np.allclose(sampled_newton_matrix(rows, blocks, mu, kappa, d, equality), H,
                       rtol=1e-12, atol=1e-12 * np.max(np.abs(H)))
    M = SampledPreconditioner(SampledRows(rows, blocks, s, True), mu, kappa, d, equality)
    g = rng.normal(size=(Z.shape[1], k))
    assert M.exact
    assert np.allclose(H @ M(g).ravel(), g.ravel(), atol=1e-9 * np.max(np.abs(g)))


def test_sampled_rows_estimate_the_chunk_sum():
    """A chunk's sample of every stride-th free sample: the blocks scaled by the free
    samples per sample taken (their sum is the chunk's sum at stride 1, and its estimate
    otherwise), ``exact`` only when every free sample is taken, and two chunks' samples
    joined by ``+``."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    samples = np.sort(rng.choice(50, 20, replace=False))
    S = rng.random((20, 3, 3))
    whole = sampled_rows(X, samples, S, 1)
    assert whole.exact and whole.free == 20 and whole.rows.dtype == np.float32
    assert np.array_equal(whole.rows, X[samples]) and np.array_equal(whole.blocks, S)
    part = sampled_rows(X, samples, S, 3)
    assert not part.exact and part.free == 20 and len(part.rows) == 7
    assert np.allclose(part.blocks, S[::3] * 20 / 7)
    joined = whole + part
    assert joined.free == 40 and not joined.exact and len(joined.rows) == 27


def test_sampled_direction_is_the_dense_newton_direction(data, monkeypatch):
    """At the iterates of a dense-route fit, the gradient pass's sample of every free term
    (stride 1, summed over unequal chunks) gives the dense Newton matrix's direction."""
    X, y = data
    seen = []
    original = chunked.ChunkedNewton.direction

    def direction(self, V, b, g, curv, free_mu=None):
        H = newton_matrix(curv, self.mu, self.d, self.kappa, self.equality)
        if free_mu is None:
            sample = chunked.reduce_chunks(self.blocks, gradient_pass, self.task, V, b,
                                           self.mu, "sampled", 1)[3]
        else:       # a stage's first step: the last stage's pattern
            sample = chunked.reduce_chunks(self.blocks, pattern_pass, self.task, V, b,
                                           self.mu, free_mu, "sampled", 1)[3]
        if sample is not None and len(sample.rows):
            M = SampledPreconditioner(sample, self.mu, self.kappa, self.d, self.equality)
            want = np.linalg.solve(H, g)
            got = M(g.reshape(-1, self.k)).ravel()
            seen.append(np.max(np.abs(got - want)) / np.max(np.abs(want)))
        return original(self, V, b, g, curv, free_mu)

    monkeypatch.setattr(chunked.ChunkedNewton, "direction", direction)
    msvm.WestonWatkinsMSVM(**DASK_PATHS["rff"]).fit(
        da.from_array(X, chunks=((100, 0, 17, 123), (5,))), y)
    assert len(seen) > 3 and max(seen) < 1e-7


@pytest.mark.slow
def test_subsampled_newton_route_solves_the_in_memory_problem(data, cg_route, subsampled):
    """With a subsample of the free terms (conjugate gradients corrected by exact
    products), unequal chunks with an empty one: the in-memory problem within tol."""
    X, y = data
    ref, est = _fit_pair("ReinforcedMSVM", X, y, (1, 100, 0, 39, 100),
                         **DASK_PATHS["nystroem"])
    _same_problem(ref, est)
    assert est._chunked_products_ > 0


@pytest.mark.slow
@pytest.mark.parametrize("chunks", [240, 60, (17, 0, 0, 200, 23)],
                         ids=["one", "equal", "empty-run"])
@pytest.mark.parametrize("path", list(DASK_PATHS))
@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "ReinforcedMSVM", "AngleBasedMSVM"])
def test_subsampled_route_any_chunking_any_convex_model(data, cg_route, subsampled, name,
                                                        path, chunks):
    """With a subsample of the free terms, every convex estimator on every path and
    chunking: the in-memory problem."""
    X, y = data
    _same_problem(*_fit_pair(name, X, y, chunks, **DASK_PATHS[path]))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["slots", "kronecker"])
def test_other_preconditioners_solve_the_in_memory_problem(data, cg_route, monkeypatch, kind):
    """The slot blocks and the Kronecker preconditioner (PRECONDITIONER): the in-memory
    problem, with more products than the sampled Newton matrix on the same fit."""
    X, y = data
    params = DASK_PATHS["nystroem"]
    ref, sampled = _fit_pair("WestonWatkinsMSVM", X, y, 60, **params)
    monkeypatch.setattr(cg, "PRECONDITIONER", kind)
    _, est = _fit_pair("WestonWatkinsMSVM", X, y, 60, **params)
    _same_problem(ref, est)
    assert est._chunked_products_ > sampled._chunked_products_


@pytest.mark.slow
def test_reused_sampled_factor_solves_the_in_memory_problem(data, cg_route, subsampled,
                                                            monkeypatch):
    """With the sampled Newton matrix factored only at a stage's first step and after a
    direction of more than one product (REUSE_PRODUCTS = 1), a stale factor preconditions
    exact products: the in-memory problem within tol."""
    monkeypatch.setattr(chunked, "REUSE_PRODUCTS", 1)
    X, y = data
    _same_problem(*_fit_pair("AngleBasedMSVM", X, y, (100, 0, 140),
                             **DASK_PATHS["nystroem"]))
