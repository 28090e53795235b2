"""The smoothed-primal start above the dense Newton limit: the slot route (msvm/_newton_cg.py)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from test_refit_start import _chain

import msvm
from msvm import _plan
from msvm._newton_cg import ProjectedSlotBlocks
from msvm._primal import SmoothedPrimal


def _problem(model, n=400, d=6, k=4, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = rng.normal(size=(n, d)) + 0.8 * np.eye(k, d)[y]
    weights = np.where(y == 0, 20.0, 1.0)
    est = (msvm.WestonWatkinsMSVM(C=2.0) if model == "ww" else msvm.ReinforcedMSVM(C=2.0))
    return est._dual_problem(y, k, 2.0 * weights), X


def _both_routes(problem, X, mu, seed):
    """A dense and a slot-route SmoothedPrimal at one random point, their gradients taken
    (tracking the free terms), and that point's (V, b, F, g)."""
    rng = np.random.default_rng(seed)
    k = problem.k
    primals = [SmoothedPrimal(problem, X), SmoothedPrimal(problem, X, slot_route=True)]
    V, b = primals[0]._center(rng.normal(size=(X.shape[1], k)), rng.normal(size=k))
    for primal in primals:
        primal.mu = mu
        F = primal.decision(V, b)
        _, gV, gb = primal.value_and_gradient(V, b, F, track_free=True)
    return primals, F, primals[0]._flat(gV, gb)


def _centered(primal, flat):
    return primal._flat(*primal._center(*primal._unflat(flat)))


@pytest.mark.parametrize("mu", [0.3, 0.01])
def test_the_slot_blocks_give_the_newton_direction_of_one_slot_terms(mu):
    """ReinforcedMSVM's terms have one slot each: the curvature is block diagonal by slot,
    and the slot blocks' solve with the slot sums held at zero is the dense Newton matrix's
    direction (no product taken)."""
    problem, X = _problem("reinforced")
    assert not problem.has_pairs
    (dense, slot), F, g = _both_routes(problem, X, mu, seed=1)
    assert slot._curvature.shape == (X.shape[1] + 1, X.shape[1] + 1, problem.k)
    expected = _centered(dense, dense._direction(F, g))
    got = _centered(slot, slot._direction(F, g))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9 * np.abs(expected).max())
    assert slot.products == 0


def test_two_slot_terms_are_solved_by_conjugate_gradients():
    """Weston-Watkins terms couple two slots: the slot blocks precondition conjugate
    gradients with products through X, whose direction meets the dense system to CG_RTOL and
    descends."""
    from msvm._newton_cg import CG_RTOL
    problem, X = _problem("ww")
    assert problem.has_pairs
    (dense, slot), F, g = _both_routes(problem, X, 0.1, seed=2)
    H = dense.hessian(F)
    s = _centered(slot, slot._direction(F, g))
    assert slot.products > 0
    assert np.linalg.norm(H @ s - g) <= CG_RTOL * np.linalg.norm(g) * (1 + 1e-9)
    assert float(g @ s) > 0


def test_the_projected_blocks_invert_the_centred_block_matrix():
    """P M P x = R with x's slots summing to zero, M block diagonal (random blocks, their
    upper triangles given)."""
    rng = np.random.default_rng(3)
    k, m, d = 4, 5, 4
    A = np.stack([(lambda B: B @ B.T)(rng.normal(size=(m, m))) for _ in range(k)], axis=2)
    R = rng.normal(size=(m, k))
    R -= R.mean(axis=1, keepdims=True)
    upper = np.moveaxis(np.triu(np.moveaxis(A, 2, 0)), 0, 2)
    x = ProjectedSlotBlocks(np.asfortranarray(upper), 0.5, 2.0, d, 1e-3)(R)
    M = [A[:, :, j] / 0.5 + np.diag([0.5] * d + [1e-3]) for j in range(k)]
    Mx = np.column_stack([M[j] @ x[:, j] for j in range(k)])
    np.testing.assert_allclose(x.sum(axis=1), 0.0, atol=1e-10)
    np.testing.assert_allclose(Mx - Mx.mean(axis=1, keepdims=True), R, atol=1e-10)


@pytest.mark.parametrize("model", [msvm.ReinforcedMSVM, msvm.WestonWatkinsMSVM])
def test_the_slot_route_start_is_certified_as_the_dense_one(model, monkeypatch):
    """Linear kernel on explicit features, C = 10: the start from the dense route and from
    the slot route (forced by a dense limit below the 3 x 6 unknowns) are both certified by
    the dual solver, at the same optimum within their duality gaps."""
    X, y = make_classification(3000, 5, n_informative=5, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    fits = {}
    for limit in (_plan.PRIMAL_MAX_UNKNOWNS, 10):
        monkeypatch.setattr(_plan, "PRIMAL_MAX_UNKNOWNS", limit)
        est = model(kernel="linear", C=10.0)
        est._plan_overrides = {"rows": "explicit features"}
        fits[limit] = est.fit(X, y)
        assert est.converged_ and est.solver_plan_.steps[0].primal_start
    a, b = fits.values()
    assert abs(a.objective_ - b.objective_) <= max(a.duality_gap_, b.duality_gap_)
    assert b.n_iter_ <= a.n_iter_ + 1


def test_a_chain_above_the_dense_limit_starts_from_the_primal(monkeypatch):
    """300 Nystroem components, k = 5: 1,505 unknowns, above the dense limit (no primal
    start on 3a47b86).  Every refit of a chain starts from the primal on the slot route and
    is certified; the top level's objective is that of the refit by dual coordinate
    descent alone (``PRIMAL_SLOT_ROUTE`` off) within their duality gaps."""
    X, y = make_classification(2500, 20, n_informative=10, n_classes=5,
                               n_clusters_per_class=1, random_state=0)
    est = msvm.ReinforcedMSVM(kernel_approximation="nystroem", n_components=300,
                              random_state=0).fit(X, y)
    assert (300 + 1) * 5 > _plan.PRIMAL_MAX_UNKNOWNS
    fits = _chain(est, X, y)
    assert len(fits) >= 2
    for fit in fits:
        assert fit.converged_ and fit.solver_plan_.steps[0].primal_start
    monkeypatch.setattr(_plan, "PRIMAL_SLOT_ROUTE", False)
    dual = _chain(est, X, y)
    assert not any(fit.solver_plan_.steps[0].primal_start for fit in dual)
    a, b = fits[0], dual[0]
    assert abs(a.objective_ - b.objective_) <= max(a.duality_gap_, b.duality_gap_)


def test_the_route_rule(monkeypatch):
    """Above the dense limit every uncapped dual takes the slot route (the start is possible
    there, not on 3a47b86); below it only one-slot terms from PRIMAL_SLOT_MIN_UNKNOWNS
    (two-slot ones keep the dense route, where the slot blocks are only a preconditioner);
    with PRIMAL_SLOT_ROUTE off neither (main's rule: no start above the limit)."""
    reinforced, _ = _problem("reinforced", k=5)
    ww, _ = _problem("ww", k=5)
    X = np.zeros((30000, 999))
    for problem in (reinforced, ww):
        assert _plan.newton_slot_route(problem, 999)
        assert _plan.primal_start_possible(problem, X)
        assert not _plan.newton_slot_route(problem, 150)
    assert _plan.newton_slot_route(reinforced, 199)
    assert not _plan.newton_slot_route(ww, 199)
    monkeypatch.setattr(_plan, "PRIMAL_SLOT_ROUTE", False)
    assert not _plan.newton_slot_route(reinforced, 199)
    assert not _plan.newton_slot_route(reinforced, 999)
    assert not _plan.primal_start_possible(reinforced, X)


def test_a_warm_balanced_start_skips_the_descent_step(monkeypatch):
    """A weighted refit's balanced start from a warm start (the neighbouring level's
    weights) goes to its Newton steps at once (``BALANCED_WARM_DESCENT`` off), a start from
    zero first takes the steepest-descent step; both are feasible dual points the solver's
    refit certifies."""
    from msvm import _primal
    from test_refit_start_rules import _weighted_problem
    problem, X, _ = _weighted_problem(100.0)
    diag = np.einsum("ij,ij->i", X, X)
    calls = []
    step = _primal.SmoothedPrimal.gradient_step

    def counted(self, V, b):
        calls.append(bool(np.any(V != 0)))
        return step(self, V, b)

    monkeypatch.setattr(_primal.SmoothedPrimal, "gradient_step", counted)
    zero = np.zeros((X.shape[1], problem.k))
    alpha, mu = _primal.primal_start(problem, X, zero, np.zeros(problem.k), 0.3, diag, 300)
    assert calls == [False]
    W = X.T @ problem.slot_sums(alpha)
    warm, _ = _primal.primal_start(problem, X, W, mu, 0.3, diag, 300)
    assert calls == [False]
    lo, hi = problem.expanded_bounds()
    assert np.all(warm >= lo) and np.all(warm <= hi)
    monkeypatch.setattr(_primal, "BALANCED_WARM_DESCENT", True)
    _primal.primal_start(problem, X, W, mu, 0.3, diag, 300)
    assert calls == [False, True]
