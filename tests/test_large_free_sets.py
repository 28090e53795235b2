"""The exact finishing step on large free sets (msvm/_finish.py, issue 23 item 1).

* Its bordered system updated by Schur complements solves the same equality-constrained
  QP on the free set as a fresh factorization, whatever sequence of variables is fixed and
  freed (the property every active-set step relies on).
* The product of the held kernel columns with a block of slot sums (the finishing step's
  score update) equals the product with the gathered columns, also after the buffer was
  compacted to the columns asked for.
* The settling budget (LAST_CUBES) applies wherever the step settles a face up to
  MAX_FREE; the proximal route only before the solver's last run and within the gate.
* A free set above SMALL_FREE is finished only once it shrinks between two budget stops of
  the solver, or before its last run; a small one at every stop.
* An RBF fit whose free set at large C exceeds the old 600-variable limit of the finishing
  step converges, and one (n = 5,000) whose last-run finishing step needs more than
  MAX_FLOPS (converged_ True, no ConvergenceWarning), certified by the solver's own
  stopping rule (KKT residual and duality gap), for ReinforcedMSVM and AngleBasedMSVM; the
  big cases are marked slow.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import AngleBasedMSVM, ReinforcedMSVM
from msvm._finish import (LAST_CUBES, LAST_STEPS_PER_FREE, MAX_FLOPS, MAX_FREE, MAX_STEPS,
                          PROX_FREE, PROX_PER_SAMPLE, REFACTOR, SMALL_FREE, _Border,
                          _Columns, _FaceSystem, _Layout, _projected_step, _Scores,
                          _slot_basis, _system_for)
from msvm._kernels import kernel_matrix
from msvm._problem import reinforced_problem
from msvm._sequence import _finish_due


def _fresh_solve(lay, K, E, idx, z, c, prox=0.0):
    """The step and shift of the bordered system on idx, formed and solved from scratch
    (with the proximal weight prox x the largest diagonal entry on the free block)."""
    D = lay.directions(idx)
    Q = lay.kappa * K[np.ix_(lay.sample[idx], lay.sample[idx])] * (D @ (D - D.mean(1)[:, None]).T)
    m = len(idx)
    reg = 1e-11 * np.abs(np.diag(Q)).max()
    A = D @ E
    shift = reg + prox * np.abs(np.diag(Q)).max()
    M = np.block([[Q + shift * np.eye(m), A], [A.T, -reg * np.eye(lay.k - 1)]])
    sol = np.linalg.solve(M, np.concatenate([-z[idx], -(E.T @ c)]))
    return sol[:m], E @ sol[m:]


def _small_reinforced(seed, n, k=3):
    """A well-conditioned reinforced problem on n random points in 2-D (RBF, C = 10): the
    generator, kernel matrix, problem, its finishing-step layout and the slot basis."""
    rng = np.random.default_rng(seed)
    X = 3.0 * rng.normal(size=(n, 2))
    y = np.arange(n) % k
    K = kernel_matrix(X, X, "rbf", 1.0, 3, 0.0)
    problem = reinforced_problem(y, k, np.full(n, 10.0), 0.5)
    return rng, K, problem, _Layout(problem), _slot_basis(k)


@pytest.mark.parametrize("seed, prox", [(0, 0.0), (1, 0.0), (2, 0.0), (3, 1e-2)])
def test_schur_updated_system_equals_a_fresh_factorization(seed, prox):
    """Fixing and freeing variables in any order (fewer and more than REFACTOR changes from
    the factored base) gives the step and shift of a fresh solve on the same free set, with
    and without a proximal weight on the free block.  At most k - 1 variables of a sample
    are free and the kernel is well conditioned, so that the system is nonsingular and both
    solves are accurate."""
    n, k = 40, 3
    rng, K, problem, lay, E = _small_reinforced(seed, n, k)
    system = _FaceSystem(lay, _Columns(lambda s: K[:, s], n), E)
    system.set_prox(prox)
    z = rng.normal(size=problem.n_vars)
    c = rng.normal(size=k)
    free = np.zeros(problem.n_vars, dtype=bool)
    free[0::k] = free[1::k] = True
    for step in range(REFACTOR + 40):
        idx = np.flatnonzero(free)
        got, s_got = system.solve(idx, z, c)
        if step % 15 == 0 or step > REFACTOR:
            want, s_want = _fresh_solve(lay, K, E, idx, z, c, prox)
            scale = max(np.abs(want).max(), 1.0)
            assert np.abs(got - want).max() <= 1e-6 * scale
            assert np.abs(s_got - s_want).max() <= 1e-6 * max(np.abs(s_want).max(), 1.0)
        flip = rng.integers(problem.n_vars)
        if free[flip] or free[flip - flip % k:flip - flip % k + k].sum() < k - 1:
            free[flip] = not free[flip]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_projected_proximal_step_keeps_the_equalities_and_lowers_the_objective(seed):
    """`_projected_step` returns a point in the box whose class sums satisfy the equalities
    as the start did, whose scores and gradient are those of the point, and whose objective
    is below the start's; on this well-conditioned problem a step that leaves the box by far
    (the scaled negative gradient from alpha = 0) has some projection accepted."""
    n, k = 50, 3
    rng, K, problem, lay, E = _small_reinforced(seed, n, k)
    alpha = np.zeros(problem.n_vars)
    F = K @ problem.slot_sums(alpha)
    z = lay.gradient(F)
    idx = np.flatnonzero(lay.hi > lay.lo)
    A = lay.directions(idx) @ E
    step = -z[idx] * 20.0
    step -= A @ np.linalg.lstsq(A, step, rcond=None)[0]      # keeps the equalities
    scores = _Scores(lay, _Columns(lambda s: K[:, s], n), alpha, F)
    moved = _projected_step(lay, E, alpha, z, idx, step, scores)
    assert moved is not None
    new, z_new = moved
    assert np.all(new >= lay.lo) and np.all(new <= lay.hi)
    c = problem.class_sums(new)
    assert np.abs(c - c.mean()).max() <= 1e-9 * np.abs(new).max()
    assert np.allclose(z_new, lay.gradient(K @ problem.slot_sums(new)), atol=1e-8)

    def objective(a):
        return 0.5 * a @ (lay.gradient(K @ problem.slot_sums(a)) + lay.lin) - lay.lin @ a
    assert objective(new) < objective(alpha)


@pytest.mark.parametrize("seed", [0, 1])
def test_held_columns_times_slot_sums_equal_the_gathered_product(seed):
    """`_Columns.times(samples, rows)` is K[:, samples] @ rows, whatever columns the buffer
    already holds (fetched in another order, some not asked for) and as it grows."""
    rng = np.random.default_rng(seed)
    n = 60
    K = rng.normal(size=(n, n))
    cols = _Columns(lambda s: K[:, s], n)
    cols.block(rng.choice(n, 10, replace=False))
    for size in (1, 7, 30, 55):
        samples = rng.choice(n, size, replace=False)
        rows = rng.normal(size=(size, 3))
        assert np.allclose(cols.times(samples, rows), K[:, samples] @ rows, rtol=1e-12,
                           atol=1e-12)


def test_held_columns_give_the_same_products_gathered_or_over_the_span():
    """After the buffer holds many columns, products with a few of them (their rows
    gathered) and with most of them (the held span) equal K[:, samples] @ rows, in the
    order asked, and so do later products with other samples, held or new; `block` returns
    the right columns as the buffer grows."""
    rng = np.random.default_rng(0)
    n = 900
    K = rng.normal(size=(n, n))
    cols = _Columns(lambda s: K[:, s], n)
    cols.block(rng.choice(n, 700, replace=False))
    for size in (40, 500, 30, 5, 850, 3):
        samples = rng.choice(n, size, replace=False)
        rows = rng.normal(size=(size, 3))
        assert np.allclose(cols.times(samples, rows), K[:, samples] @ rows, rtol=1e-12,
                           atol=1e-12)
        probe = rng.choice(n, 20, replace=False)
        assert np.array_equal(cols.block(probe), K[:, probe])


def test_free_sets_up_to_max_free_are_finished_at_every_stop():
    """The finishing step's schedule (`_finish_due`): a free set of at most MAX_FREE
    variables at every stop; a larger one only when it shrank since the previous stop, or
    before the solver's last run."""
    problem = reinforced_problem(np.arange(3 * MAX_FREE) % 3, 3, np.ones(3 * MAX_FREE), 0.5)
    lo, hi = problem.expanded_bounds()

    def alpha_with(free):
        alpha = lo.copy()
        alpha[:free] = 0.5 * (lo[:free] + hi[:free])
        return alpha

    for mid in (SMALL_FREE, SMALL_FREE + 200, MAX_FREE):
        assert _finish_due(problem, alpha_with(mid), None, False) == (mid, True)
        assert _finish_due(problem, alpha_with(mid), mid - 1, False) == (mid, True)
    large = MAX_FREE + 200
    assert _finish_due(problem, alpha_with(large), None, False) == (large, False)
    assert _finish_due(problem, alpha_with(large), large - 1, False) == (large, False)
    assert _finish_due(problem, alpha_with(large), large + 1, False) == (large, True)
    assert _finish_due(problem, alpha_with(large), None, True) == (large, True)


@pytest.mark.parametrize("seed", [0, 1])
def test_border_inverse_updates_solve_the_schur_complement(seed):
    """`_Border`: after any sequence of appended and dropped changes (also after its
    inverse was lost), solve returns x with S x = rn - N^T y0 for the Schur complement S of
    the changes kept, as a direct solve does."""
    rng = np.random.default_rng(seed)
    size = 40
    G = rng.normal(size=(size, size))
    M0_inv = np.linalg.inv(G @ G.T + size * np.eye(size))      # symmetric, as M0 is
    border = _Border(size)
    for round_ in range(12):
        p, q = border.p, int(rng.integers(1, 6))
        C = rng.normal(size=(p + q, p + q))
        C = C + C.T + 20.0 * np.eye(p + q)
        Nn = rng.normal(size=(size, q))
        border.append(Nn, M0_inv @ Nn, C[:p, p:], C[p:, p:])
        if round_ % 3 == 2:
            border.keep(np.sort(rng.choice(border.p, border.p - 2, replace=False)))
        if round_ == 7:
            border.S_inv = None
        rn, y0 = rng.normal(size=border.p), rng.normal(size=size)
        x, _ = border.solve(rn, y0)
        want = np.linalg.solve(border.S, rn - border.NT[:border.p] @ y0)
        assert np.allclose(x, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    assert np.allclose(border.S_inv @ border.S, np.eye(border.p), atol=1e-9)


def test_settling_budgets_at_shrinking_stops_and_the_proximal_route_before_the_last_run():
    """`_system_for`: a face of SMALL_FREE < m <= MAX_FREE free variables gets LAST_CUBES m^3
    flops and LAST_STEPS_PER_FREE m steps wherever the step settles, MAX_FLOPS and
    MAX_STEPS otherwise; a larger one the proximally regularized face only before the last run, and
    only up to PROX_PER_SAMPLE free variables per sample."""
    n = 3000
    problem = reinforced_problem(np.arange(n) % 3, 3, np.ones(n), 0.5)
    lay = _Layout(problem)
    cols = _Columns(lambda s: np.zeros((n, len(s))), n)
    m = MAX_FREE - 100
    for settle, last, flops in [(False, False, MAX_FLOPS), (True, False, LAST_CUBES * m ** 3),
                                (True, True, LAST_CUBES * m ** 3)]:
        system, max_free, budget, steps = _system_for(lay, cols, m, settle, last)
        assert isinstance(system, _FaceSystem) and system.prox_rel == 0.0
        assert (max_free, budget) == (MAX_FREE, max(MAX_FLOPS, flops))
        assert steps == (max(MAX_STEPS, LAST_STEPS_PER_FREE * m) if settle else MAX_STEPS)
    big = MAX_FREE + 100
    for settle, last, prox in [(True, False, False), (False, True, False), (True, True, True)]:
        system, max_free, _, _ = _system_for(lay, cols, big, settle, last)
        assert (system.prox_rel > 0.0) == prox
        assert max_free == (PROX_FREE if prox else MAX_FREE)
    system, _, _, _ = _system_for(lay, cols, PROX_PER_SAMPLE * n + 1, True, True)
    assert system.prox_rel == 0.0


def _fit_without_warning(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est.fit(X, y)


def _assert_converged_to_tol(est):
    """The fit reached its stopping rule at the default tol = 1e-3: converged, KKT residual
    and relative duality gap within tol."""
    assert est.converged_
    assert est.kkt_residual_ <= 1e-3
    assert est.duality_gap_ <= 1e-3 * max(abs(est.objective_), 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("model", [ReinforcedMSVM, AngleBasedMSVM])
def test_rbf_large_C_with_a_large_free_set_converges(model):
    """make_blobs n = 2,000, d = 5 (overlapping: cluster_std 4), RBF gamma='scale', C = 1e5:
    about 900-2,500 free variables; both models stopped at max_iter before the Schur-updated
    finishing step (ReinforcedMSVM 33 s), AngleBasedMSVM still after it (68 s) until the
    finishing step stopped cycling on releases sent straight back to their bounds."""
    X, y = make_blobs(n_samples=2000, centers=3, n_features=5, cluster_std=4.0,
                      random_state=0)
    est = _fit_without_warning(model(C=1e5, kernel="rbf", gamma="scale"), X, y)
    _assert_converged_to_tol(est)


@pytest.mark.slow
def test_rbf_large_C_whose_last_run_finish_needs_a_larger_budget_converges():
    """make_blobs n = 5,000 (same data as above), C = 1e5, ReinforcedMSVM: the free set is
    1,884 variables at 6,400 epochs and its face settles only with the LAST_CUBES m^3 flop
    budget that the finishing step gets before the solver's last run (MAX_FLOPS ran out
    after 125 steps and the fit stopped at max_iter, KKT residual 0.33); about 85 s CPU."""
    X, y = make_blobs(n_samples=5000, centers=3, n_features=5, cluster_std=4.0,
                      random_state=0)
    est = _fit_without_warning(ReinforcedMSVM(C=1e5, kernel="rbf", gamma="scale"), X, y)
    _assert_converged_to_tol(est)


@pytest.mark.slow
def test_rbf_large_C_whose_last_free_set_exceeds_max_free_converges():
    """make_blobs n = 5,000 (same data as above), C = 1e5, LLW (ReinforcedMSVM with
    reinforcement 0): 5,581 free variables before the solver's last run, above MAX_FREE, so
    that the fit stopped at max_iter (KKT residual 4.9) until the proximally regularized
    finishing step settled that face; several minutes of CPU."""
    X, y = make_blobs(n_samples=5000, centers=3, n_features=5, cluster_std=4.0,
                      random_state=0)
    est = _fit_without_warning(ReinforcedMSVM(C=1e5, reinforcement=0.0, kernel="rbf",
                                              gamma="scale"), X, y)
    _assert_converged_to_tol(est)


@pytest.mark.slow
def test_rbf_at_C_1e6_with_a_free_set_above_max_free_converges():
    """make_blobs n = 5,000 (same data as above), C = 1e6, ReinforcedMSVM: 4,461-6,773 free
    variables at every budget stop; it stopped at max_iter (KKT residual 7.2, objective
    2.45x the optimum) before the proximal finishing step, which settles the 5,619 free
    variables before the solver's last run; about 230 s CPU
    (benchmarks/results/kernel_speed_early_5000_c1e6.md)."""
    X, y = make_blobs(n_samples=5000, centers=3, n_features=5, cluster_std=4.0,
                      random_state=0)
    est = _fit_without_warning(ReinforcedMSVM(C=1e6, kernel="rbf", gamma="scale"), X, y)
    _assert_converged_to_tol(est)
