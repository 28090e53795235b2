"""The smoothed-primal Newton start of the linear path (msvm/_primal.py)."""

import numpy as np
import pytest

import msvm
import msvm._primal as primal_module
from msvm._plan import primal_start_applies
from msvm._primal import SmoothedPrimal, primal_start


def _data(n=3000, d=4, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    X = rng.normal(size=(n, d)) + 0.8 * np.eye(k, d)[y]
    return X, y


def _ww_problem(X, y, k, C):
    return msvm.WestonWatkinsMSVM(C=C)._dual_problem(y, k, C * np.ones(len(y)))


def _margins(problem, F):
    """z_v = a_v + <d_v, F_i> for every dual variable, from the explicit layout."""
    rows = problem.sample_of_var()
    slot1, coef1, slot2, coef2 = problem.expanded_directions()
    z = problem.expand("lin") + coef1 * F[rows, slot1]
    two = slot2 >= 0
    z[two] += coef2[two] * F[rows[two], slot2[two]]
    return z


def _smoothed_loss(problem, F, mu):
    """sum_v max_{lo <= a <= hi} a z_v - mu / 2 a^2, from the explicit layout."""
    z = _margins(problem, F)
    a = np.clip(z / mu, *problem.expanded_bounds())
    return float(np.sum(a * z - 0.5 * mu * a * a))


def _layout_case(model, seed):
    """A Weston-Watkins or reinforced problem on 300 samples (k = 4), its SmoothedPrimal at
    mu = 0.3, and random decision values F and a direction dF."""
    X, y = _data(n=300, d=3, k=4)
    problem = (_ww_problem(X, y, 4, 1.0) if model == "ww" else
               msvm.ReinforcedMSVM(C=1.0)._dual_problem(y, 4, np.ones(len(y))))
    sp = SmoothedPrimal(problem, X)
    sp.mu = 0.3
    rng = np.random.default_rng(seed)
    F = rng.normal(size=(len(y), 4))
    dF = rng.normal(size=(len(y), 4))
    return problem, sp, F, dF


@pytest.mark.parametrize("model", ["ww", "reinforced"])
def test_compiled_passes_match_the_explicit_layout(model):
    """The compiled per-term passes against numpy on the explicit per-variable arrays."""
    problem, sp, F, dF = _layout_case(model, seed=2)
    z = _margins(problem, F)
    lo, hi = problem.expanded_bounds()
    slot1, coef1, slot2, coef2 = problem.expanded_directions()
    alpha = np.clip(z / sp.mu, lo, hi)
    U = np.empty_like(F)
    assert sp.terms.value_and_slot_sums(F, U) == pytest.approx(_smoothed_loss(problem, F, 0.3))
    np.testing.assert_allclose(U, problem.slot_sums(alpha), atol=1e-12)
    np.testing.assert_allclose(sp.terms.dual_point(F), alpha, atol=1e-15)
    dz = _margins(problem, dF) - problem.expand("lin")
    t = 0.7
    expected = float(dz @ np.clip((z - t * dz) / sp.mu, lo, hi))
    assert sp.terms.line_slope_and_curvature(F, dF, t)[0] == pytest.approx(expected, rel=1e-12)
    mask = np.zeros(problem.n_vars, dtype=np.uint8)
    rows, s1, c1, s2, c2, sign = sp.terms.free_changes(F, mask)
    free = np.flatnonzero((z >= sp.mu * lo) & (z <= sp.mu * hi))
    assert 0 < len(free) < problem.n_vars
    np.testing.assert_array_equal(np.flatnonzero(mask), free)
    np.testing.assert_array_equal(sign, 1.0)
    np.testing.assert_array_equal(rows, problem.sample_of_var()[free])
    np.testing.assert_array_equal(s1, slot1[free])
    np.testing.assert_array_equal(s2, slot2[free])
    np.testing.assert_array_equal(c1, coef1[free])
    np.testing.assert_array_equal(c2, np.where(slot2[free] >= 0, coef2[free], 0))
    # at other values the changes are exactly the symmetric difference, signed
    F2 = F + 0.3 * dF
    z2 = _margins(problem, F2)
    free2 = (z2 >= sp.mu * lo) & (z2 <= sp.mu * hi)
    rows, *_, sign = sp.terms.free_changes(F2, mask)
    np.testing.assert_array_equal(mask.astype(bool), free2)
    was = np.zeros(problem.n_vars, dtype=bool)
    was[free] = True
    assert len(rows) == np.sum(was != free2)
    assert np.sum(sign > 0) == np.sum(free2 & ~was) and np.sum(sign < 0) == np.sum(was & ~free2)


@pytest.mark.parametrize("model", ["ww", "reinforced"])
def test_fused_and_model_passes_match_the_explicit_layout(model):
    """The pass that gives value, slot sums and free changes at once equals the separate
    passes; the line search's derivative slope and the free pattern's model slot sums
    against numpy on the explicit per-variable arrays."""
    problem, sp, F, dF = _layout_case(model, seed=4)
    mask, fused_mask = (np.zeros(problem.n_vars, dtype=np.uint8) for _ in range(2))
    sp.terms.free_changes(F, mask)
    sp.terms.free_changes(F, fused_mask)
    F2 = F + 0.3 * dF
    U, U2 = np.empty_like(F), np.empty_like(F)
    loss = sp.terms.value_and_slot_sums(F2, U, 100, 250)
    changes = sp.terms.free_changes(F2, mask, 100, 250)
    loss2, changes2 = sp.terms.value_sums_and_changes(F2, U2, fused_mask, 100, 250)
    assert loss2 == loss
    np.testing.assert_array_equal(U2[:150], U[:150])
    np.testing.assert_array_equal(fused_mask, mask)
    assert len(changes[0]) > 0
    for a, b in zip(changes2, changes):
        np.testing.assert_array_equal(a, b)
    # the derivative's slope: dz^2 / mu summed over the terms inside their piece at t
    z, dz, t = _margins(problem, F), _margins(problem, dF) - problem.expand("lin"), 0.7
    lo, hi = problem.expanded_bounds()
    x = (z - t * dz) / sp.mu
    inside = (x > lo) & (x < hi)
    slope, curv = sp.terms.line_slope_and_curvature(F, dF, t)
    assert slope == pytest.approx(float(dz @ np.clip(x, lo, hi)), rel=1e-12)
    assert curv == pytest.approx(float(np.sum(dz[inside] ** 2)) / sp.mu, rel=1e-12)
    assert 0 < np.sum(inside) < problem.n_vars
    # the model of the pattern in mask: unclipped z / mu on the marked terms
    model = np.where(mask.astype(bool), z / sp.mu, np.clip(z / sp.mu, lo, hi))
    before = mask.copy()
    sp.terms.pattern_slot_sums(F, U, mask)
    np.testing.assert_array_equal(mask, before)
    np.testing.assert_allclose(U, problem.slot_sums(model), atol=1e-12)
    assert np.any(model != np.clip(z / sp.mu, lo, hi))


@pytest.mark.parametrize("model", ["ww", "reinforced"])
def test_kept_terms_give_the_full_pass_values(model):
    """A ``keep`` pass at step t keeps exactly the terms not clipped at one bound at both
    ends of [0, t]; from them (and the others' constant) every step in [0, t] gets the full
    pass's slope and curvature to rounding; outside [0, t], after a change of mu or after
    `release_line` the kept terms are refused."""
    problem, sp, F, dF = _layout_case(model, seed=6)
    terms, t_keep = sp.terms, 0.9
    assert terms.kept_step == -1.0 and terms.n_kept == 0
    assert terms.line_slope_and_curvature(F, dF, t_keep, keep=True) \
        == terms.line_slope_and_curvature(F, dF, t_keep)
    z, dz = _margins(problem, F), _margins(problem, dF) - problem.expand("lin")
    lo, hi = problem.expanded_bounds()
    x0, x1 = z / sp.mu, (z - t_keep * dz) / sp.mu
    constant = ((x0 <= lo) & (x1 <= lo)) \
        | ((x0 >= hi) & (x1 >= hi)) | (dz == 0)
    assert terms.kept_step == t_keep and terms.n_kept == np.sum(~constant)
    assert 0 < terms.n_kept < problem.n_vars
    for t in (0.0, 0.05, 0.4, t_keep):
        full = terms.line_slope_and_curvature(F, dF, t)
        kept = terms.kept_line_slope_and_curvature(t)
        assert kept[0] == pytest.approx(full[0], rel=1e-12, abs=1e-12)
        assert kept[1] == pytest.approx(full[1], rel=1e-12, abs=1e-12)
    with pytest.raises(ValueError, match="no kept terms"):
        terms.kept_line_slope_and_curvature(1.0)
    sp.mu = 0.2
    with pytest.raises(ValueError, match="another mu"):
        terms.kept_line_slope_and_curvature(0.5)
    sp.mu = 0.3
    terms.release_line()
    assert terms.kept_step == -1.0
    with pytest.raises(ValueError, match="no kept terms"):
        terms.kept_line_slope_and_curvature(0.5)
    with pytest.raises(ValueError, match="t >= 0"):
        terms.line_slope_and_curvature(F, dF, -1.0, keep=True)


def test_too_many_kept_terms_keep_none():
    """Where more terms would be kept than the memory of one (n, k) array allows (20 bytes
    a term), the pass keeps none (the line search then reads all terms every time) and
    still returns the full values."""
    X, y = _data(n=6000, d=3, k=3)
    problem = msvm.ReinforcedMSVM(C=1.0)._dual_problem(y, 3, np.ones(len(y)))
    sp = SmoothedPrimal(problem, X)
    sp.mu = 1.0
    rng = np.random.default_rng(0)
    # every margin near its kink and a long step: nearly every term crosses its piece
    F = 1e-3 * rng.normal(size=(len(y), 3))
    dF = 100.0 * rng.normal(size=(len(y), 3))
    values = sp.terms.line_slope_and_curvature(F, dF, 1.0, keep=True)
    assert sp.terms.kept_step == -1.0 and sp.terms.n_kept == 0
    assert values == sp.terms.line_slope_and_curvature(F, dF, 1.0)
    # a shorter step keeps fewer of them, within the limit
    sp.terms.line_slope_and_curvature(F, dF, 0.01, keep=True)
    assert sp.terms.kept_step == 0.01 and 0 < sp.terms.n_kept <= 6000 * 3 * 8 // 20


def test_exact_step_is_the_minimizer_along_the_direction():
    """The line search's t is the root of the derivative along the step (checked on a
    fine grid of the objective) and its derivative is within the tolerance."""
    X, y = _data(n=400, d=3, k=4)
    problem = _ww_problem(X, y, 4, 1.0)
    sp = SmoothedPrimal(problem, X)
    sp.mu = 0.05
    rng = np.random.default_rng(5)
    V, b = sp._center(0.3 * rng.normal(size=(3, 4)), 0.3 * rng.normal(size=4))
    F = sp.decision(V, b)
    f0, gV, gb = sp.value_and_gradient(V, b, F)
    sV, sb = sp._center(gV + 0.5 * rng.normal(size=gV.shape), gb)
    s0 = -float(np.sum(gV * sV) + gb @ sb)
    assert s0 < 0
    dF = sp.decision(sV, sb)
    t = sp._exact_step(V, sV, F, dF, s0)

    def value(t):
        return sp.value_and_gradient(V - t * sV, b - t * sb, F - t * dF)[0]

    grid = np.linspace(0.0, 3.0 * max(t, 1e-3), 301)
    assert value(t) <= min(value(u) for u in grid) + 1e-12 * abs(f0)
    _, gV1, gb1 = sp.value_and_gradient(V - t * sV, b - t * sb, F - t * dF)
    assert abs(float(np.sum(gV1 * sV) + gb1 @ sb)) <= 1e-8 * abs(s0)


def test_line_search_fallbacks():
    """Newton from the point just evaluated, else from the bracket's other end, else the
    geometric midpoint of a wide bracket (hi / 100 from t = 0), the midpoint of a narrow
    one, and doubling while the derivative stays negative."""
    step = primal_module._bracketed_newton
    lo, hi = (0.0, -1.0, 0.0), (1.0, 1.0, 4.0)
    assert step(hi, lo, hi) == pytest.approx(0.75)
    lo, hi = (0.0, -1.0, 0.0), (1.0, 3.0, 1.0)        # tangents leave the bracket
    assert step(hi, lo, hi) == pytest.approx(0.01)
    lo = (1e-4, -1.0, 0.1)
    assert step(lo, lo, hi) == pytest.approx(1e-2)
    lo = (0.5, -1.0, 0.1)
    assert step(lo, lo, hi) == pytest.approx(0.75)
    lo = (0.5, -1.0, 5.0)                               # Newton from lo lands inside
    assert step(lo, lo, hi) == pytest.approx(0.7)
    assert step((0.5, -1.0, 0.0), (0.5, -1.0, 0.0), (np.inf, np.inf, 0.0)) == 2.0


@pytest.mark.parametrize("cls", [msvm.WestonWatkinsMSVM, msvm.ReinforcedMSVM])
def test_predicted_stage_reaches_the_same_solution_in_fewer_steps(cls):
    """After a solve at mu, the next stage (mu / 10) started by the pattern's Newton step
    ends at the solution the plain Newton stage ends at, in fewer steps."""
    X, y = _data(n=3000, d=4, k=3)
    problem = cls(C=5.0)._dual_problem(y, 3, 5.0 * np.ones(len(y)))
    gtol, ends, steps = 1e-10, [], []
    for predict in (False, True):
        sp = SmoothedPrimal(problem, X)
        sp.mu = 1.0 / problem.max_abs_bound()
        V, b = sp._center(np.zeros((4, 3)), np.zeros(3))
        for _ in range(2):
            V, b, _ = sp.newton(V, b, gtol)
            sp.mu *= 0.1
        V, b, _ = sp.newton(V, b, gtol, predict=predict)
        ends.append(np.concatenate([V.ravel(), b]))
        steps.append(sp.steps)
    np.testing.assert_allclose(ends[1], ends[0], atol=1e-7)
    assert steps[1] < steps[0]


def test_stages_divide_mu_by_ten_and_end_at_the_target(monkeypatch):
    """mu goes FIRST_MU_SHARE / bound, / 10, ... and a stage that would fall within
    LAST_STAGE_SNAP of the target is the target's; only the last stage is solved to the full
    gtol."""
    X, y = _data()
    problem = _ww_problem(X, y, 3, 5.0)
    stages, newton = [], SmoothedPrimal.newton

    def recording(self, V, b, gtol, max_steps, predict=False, rtol=0.0, **kwargs):
        stages.append((self.mu, predict, rtol))
        return newton(self, V, b, gtol, max_steps, predict=predict, rtol=rtol, **kwargs)

    monkeypatch.setattr(SmoothedPrimal, "newton", recording)
    tol, bound = 1e-3, problem.max_abs_bound()
    diag = np.einsum("ij,ij->i", X, X)
    primal_start(problem, X, np.zeros((X.shape[1], 3)), np.zeros(3), tol, diag, max_steps=1000)
    mus = [mu for mu, _, _ in stages]
    target = primal_module.TARGET_SHARE * tol / bound
    assert mus[0] == pytest.approx(primal_module.FIRST_MU_SHARE / bound)
    np.testing.assert_allclose(np.array(mus[1:-1]) / mus[:-2], 0.1)
    assert mus[-1] == pytest.approx(target)
    assert mus[-2] * 0.1 < primal_module.LAST_STAGE_SNAP * target < mus[-2]
    assert all(p for _, p, _ in stages)         # (the first has no pattern to start from)
    assert [r for _, _, r in stages] == [primal_module.STAGE_RTOL] * (len(stages) - 1) + [0.0]


def test_stage_rtol_and_gradient_step():
    """A stage with rtol stops once the gradient fell by that factor; the steepest-descent
    step goes to the minimizer along the gradient."""
    X, y = _data(n=2000, d=4, k=3)
    problem = _ww_problem(X, y, 3, 5.0)
    sp = SmoothedPrimal(problem, X)
    sp.mu = 0.1 / problem.max_abs_bound()
    V0, b0 = sp._center(np.zeros((4, 3)), np.zeros(3))
    f0, gV, gb = sp.value_and_gradient(V0, b0, sp.decision(V0, b0))
    V, b = sp.gradient_step(V0, b0)
    f1, gV1, gb1 = sp.value_and_gradient(V, b, sp.decision(V, b))
    assert f1 < f0
    assert abs(float(np.sum(gV1 * gV) + gb1 @ gb)) <= 1e-8 * float(np.sum(gV * gV) + gb @ gb)
    g0 = sp._norm(gV1, gb1)
    sp.newton(V, b, 1e-12)
    full = sp.steps
    V2, b2, _ = sp.newton(V, b, 1e-12, rtol=1e-2)
    assert sp.steps < full
    assert sp._norm(*sp.value_and_gradient(V2, b2, sp.decision(V2, b2))[1:]) <= 1e-2 * g0


def test_updated_curvature_equals_a_fresh_build():
    """The Hessian updated by the changed terms along a path of values F equals the one
    built from scratch at the last of them."""
    X, y = _data(n=500, d=3, k=4)
    problem = msvm.ReinforcedMSVM(C=1.0)._dual_problem(y, 4, np.ones(len(y)))
    rng = np.random.default_rng(3)
    sp = SmoothedPrimal(problem, X)
    sp.mu = 0.5
    V, b = sp._center(0.3 * rng.normal(size=(3, 4)), 0.3 * rng.normal(size=4))
    for _ in range(4):
        V, b = V + 0.05 * rng.normal(size=V.shape), b + 0.05 * rng.normal(size=4)
        H = sp.hessian(sp.decision(*sp._center(V, b)))
    fresh = SmoothedPrimal(problem, X)
    fresh.mu = 0.5
    np.testing.assert_allclose(H, fresh.hessian(sp.decision(*sp._center(V, b))), atol=1e-9)
    # and when the gradient's pass tracks the changes (as the Newton steps do)
    for _ in range(3):
        V, b = sp._center(V + 0.05 * rng.normal(size=V.shape), b + 0.05 * rng.normal(size=4))
        F = sp.decision(V, b)
        sp.value_and_gradient(V, b, F, track_free=True)
        H = sp.hessian(F)
    np.testing.assert_allclose(H, fresh.hessian(F), atol=1e-9)


@pytest.mark.parametrize("equality", [True, False])
def test_gradient_and_hessian_match_finite_differences(equality):
    X, y = _data(n=400, d=3, k=4)
    problem = _ww_problem(X, y, 4, 1.0)
    problem.equality = equality
    sp = SmoothedPrimal(problem, X)
    sp.mu = 0.3
    rng = np.random.default_rng(1)
    V, b = sp._center(0.3 * rng.normal(size=(3, 4)), 0.3 * rng.normal(size=4))
    dV, db = sp._center(rng.normal(size=(3, 4)), rng.normal(size=4))
    F = sp.decision(V, b)

    def at(V, b):       # (value, gV, gb) at (V, b)
        return sp.value_and_gradient(V, b, sp.decision(V, b))

    _, gV, gb = at(V, b)
    eps = 1e-6
    fd = (at(V + eps * dV, b + eps * db)[0] - at(V - eps * dV, b - eps * db)[0]) / (2 * eps)
    assert fd == pytest.approx(float(np.sum(gV * dV) + np.sum(gb * db)), rel=1e-6)
    H = sp.hessian(F)
    g_plus = at(V + eps * dV, b + eps * db)[1:]
    g_minus = at(V - eps * dV, b - eps * db)[1:]
    fd_h = sp._flat((g_plus[0] - g_minus[0]) / (2 * eps), (g_plus[1] - g_minus[1]) / (2 * eps))
    np.testing.assert_allclose(H @ sp._flat(dV, db), fd_h, rtol=1e-5, atol=1e-6)


def test_start_is_feasible_and_nearly_optimal():
    """alpha in its box, P c(alpha) ~ 0, and every term's KKT violation below tol."""
    X, y = _data()
    k, tol = 3, 1e-3
    problem = _ww_problem(X, y, k, 5.0)
    diag = np.einsum("ij,ij->i", X, X)
    alpha, mu = primal_start(problem, X, np.zeros((X.shape[1], k)), np.zeros(k), tol, diag,
                             max_steps=1000)
    lo, hi = problem.expanded_bounds()
    assert np.all(alpha >= lo) and np.all(alpha <= hi)
    c = problem.class_sums(alpha)
    assert np.abs(c - c.mean()).max() <= tol * hi.max()
    # the dual's own margins at alpha: z = a + <d, b + h>, h = -kappa X X^T U P
    U = problem.slot_sums(alpha)
    W = X.T @ U
    F = X @ (-problem.kappa * (W - W.mean(axis=1, keepdims=True))) - mu
    z = _margins(problem, F)
    viol = np.where(alpha <= lo, np.maximum(z, 0), 0.0) \
        + np.where(alpha >= hi, np.maximum(-z, 0), 0.0) \
        + np.where((alpha > lo) & (alpha < hi), np.abs(z), 0.0)
    assert viol.max() <= tol


@pytest.mark.parametrize("cls", [msvm.WestonWatkinsMSVM, msvm.ReinforcedMSVM,
                                 msvm.AngleBasedMSVM])
def test_fit_with_primal_start_matches_the_dual_path(cls):
    X, y = _data()
    fits = {}
    for name, start in (("primal", "on"), ("dual", "off")):
        est = cls(C=0.3, kernel="linear", tol=1e-6, random_state=0)
        est._plan_overrides = {"primal_start": start}
        fits[name] = est.fit(X, y)
        assert [s.primal_start for s in est.solver_plan_.steps] == [name == "primal"]
    assert fits["primal"].objective_ == pytest.approx(fits["dual"].objective_, rel=1e-5)
    assert fits["primal"].converged_ and fits["dual"].converged_
    assert fits["primal"].n_iter_ < fits["dual"].n_iter_       # the start did the work
    np.testing.assert_allclose(fits["primal"].decision_function(X[:50]),
                               fits["dual"].decision_function(X[:50]), atol=1e-2)


def test_primal_start_is_chosen_only_where_it_pays():
    X, y = _data()
    diag = np.einsum("ij,ij->i", X, X)
    assert primal_start_applies(_ww_problem(X, y, 3, 100.0), X, diag)
    assert not primal_start_applies(_ww_problem(X, y, 3, 0.01), X, diag)         # small C
    assert not primal_start_applies(_ww_problem(X[:30], y[:30], 3, 100.0), X[:30], diag[:30])
    reinforced = msvm.ReinforcedMSVM(C=100.0)._dual_problem(y, 3, 100.0 * np.ones(len(y)))
    assert primal_start_applies(reinforced, X, diag)
    # group caps: groups of one size with two-slot directions are smoothed as a whole (the
    # generalized-margin dual; WW's variables capped per sample), a DC step's groups
    # (shifted below zero) too unless msvm._plan.SHIFTED_GROUP_START is off (the path before)
    import msvm._plan as plan
    from msvm._problem import margin_problem, shifted
    margin = margin_problem(y, 3, 100.0 * np.ones(len(y)), np.eye(3))
    assert primal_start_applies(margin, X, diag)
    shift = np.zeros(margin.n_vars)
    shift[::2] = 1.0
    assert primal_start_applies(shifted(margin, shift), X, diag)
    plan.SHIFTED_GROUP_START = False
    try:
        assert not primal_start_applies(shifted(margin, shift), X, diag)
        assert primal_start_applies(margin, X, diag)
    finally:
        plan.SHIFTED_GROUP_START = True
    ww = _ww_problem(X, y, 3, 100.0)
    capped = ww.replace(group=ww.sample_of_var(), cap=np.full(len(y), 100.0))
    assert primal_start_applies(capped, X, diag)


def _linear_solve(problem, X, alpha, mu, tol, certify_start):
    """The compiled solver on the linear row source from (alpha, mu); its returns and alpha."""
    from msvm._core._solver import init_scores, make_row_source, solve
    src = make_row_source("linear", problem.k, X=X)
    init_scores(src, np.ascontiguousarray(problem.slot_sums(alpha)))
    alpha = np.array(alpha)
    mu = np.array(mu)
    n_iter, resid, status, gap = solve(src, problem, alpha, mu, tol=tol, method="cd",
                                       certify_start=certify_start)
    return n_iter, resid, status, gap, alpha


@pytest.mark.parametrize("cls", [msvm.WestonWatkinsMSVM, msvm.ReinforcedMSVM])
def test_a_primal_start_is_certified_without_a_step(cls):
    """The smoothed primal's dual point meets the stopping rule (violation 0.9 tol, equality
    and gap within tol): the solver certifies it with zero epochs and returns it unchanged,
    within tol of the optimum a cold solve reaches; from a cold start the same check lets
    the epochs run."""
    X, y = _data(n=4000)
    k, tol, C = 3, 1e-3, 0.05
    problem = cls(C=C)._dual_problem(y, k, C * np.ones(len(y)))
    diag = np.einsum("ij,ij->i", X, X)
    start, mu = primal_start(problem, X, np.zeros((X.shape[1], k)), np.zeros(k), tol, diag,
                             max_steps=1000)
    n_iter, resid, status, gap, alpha = _linear_solve(problem, X, start, mu, tol, True)
    assert (n_iter, status) == (0, 0)
    assert resid <= tol and gap <= tol
    np.testing.assert_array_equal(alpha, start)
    n_cold, _, status_cold, _, cold = _linear_solve(problem, X, np.zeros_like(start),
                                                    np.zeros(k), 1e-5, True)
    assert status_cold == 0 and n_cold > 0

    def dual(a):
        U = problem.slot_sums(a)
        W = X.T @ U
        return 0.5 * problem.kappa * np.sum(W * (W - W.mean(axis=1, keepdims=True))) \
            - problem.expand("lin") @ a

    assert dual(alpha) == pytest.approx(dual(cold), rel=tol)


def test_certification_leaves_grouped_problems_to_the_rounds():
    """With group caps the start's pair violations are not measured without steps: the
    rounds run even from the optimum of a tight solve."""
    X, y = _data(n=600)
    k = 3
    ww = _ww_problem(X, y, k, 1.0)
    capped = ww.replace(group=ww.sample_of_var(), cap=np.full(len(y), 1.5))
    _, _, status, _, optimum = _linear_solve(capped, X, np.zeros(capped.n_vars), np.zeros(k),
                                             1e-10, False)
    n_iter, _, status2, _, _ = _linear_solve(capped, X, optimum, np.zeros(k), 1e-3, True)
    assert status == 0 and status2 == 0 and n_iter > 0
