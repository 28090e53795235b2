"""The solver's paths and the intercept step: explicit-weights coordinate descent against the
greedy kernel solver, a tiny kernel-row cache against a full one, and the LP intercept step
(scipy linprog) against the intercepts the solver reads off its KKT multipliers."""

import numpy as np
import pytest

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm._intercept import lp_intercepts


def _data(seed, n=70, k=4, d=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    X = rng.normal(size=(n, d)) + 1.2 * np.eye(k, d)[y]
    w = rng.uniform(0.3, 2.0, n)
    return X, y, w


def _rel(a, b):
    return abs(a - b) / max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_explicit_weight_path_matches_kernel_rows_path(seed):
    X, y, w = _data(seed)
    params = dict(C=2.0, reinforcement=0.4, kernel="linear", tol=1e-7, max_iter=10**6,
                  random_state=0)
    rows = ReinforcedMSVM(**params).fit(X, y, sample_weight=w)
    explicit = ReinforcedMSVM(**params)
    explicit._plan_overrides = {"rows": "explicit features"}
    explicit.fit(X, y, sample_weight=w)
    assert rows.solver_plan_.rows == "linear rows"
    assert explicit.solver_plan_.rows == "explicit features"
    assert _rel(rows.objective_, explicit.objective_) <= 1e-6
    np.testing.assert_allclose(rows.coef_, explicit.coef_, atol=1e-4)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_tiny_row_cache_gives_the_same_fit(kernel):
    X, y, w = _data(3, n=90)
    params = dict(C=5.0, kernel=kernel, degree=2, coef0=1.0, tol=1e-8, max_iter=10**6,
                  random_state=0)
    big = ReinforcedMSVM(cache_size=200, **params).fit(X, y, sample_weight=w)
    tiny = ReinforcedMSVM(cache_size=2 * 8 * 90 / 2 ** 20, **params).fit(X, y, sample_weight=w)
    assert _rel(big.objective_, tiny.objective_) <= 1e-9
    np.testing.assert_allclose(big.decision_values(X), tiny.decision_values(X), atol=1e-6)


@pytest.mark.parametrize("kernel,gamma", [("rbf", 0.0), ("linear", 1.0), ("rbf", 1.0)])
def test_lp_intercepts_agree_with_kkt_intercepts(kernel, gamma):
    X, y, w = _data(4, n=50, k=3)
    est = ReinforcedMSVM(C=3.0, reinforcement=gamma, kernel=kernel, tol=1e-9,
                         max_iter=10**6, random_state=0).fit(X, y, sample_weight=w)
    k = len(est.classes_)
    H = est.decision_values(X) - est.intercept_
    problem = est._dual_problem(np.searchsorted(est.classes_, y), k, est.C * w)
    b_lp, loss_lp = lp_intercepts(problem, H)
    assert abs(b_lp.sum()) <= 1e-9
    loss_kkt = est.C * float(np.dot(w, est._loss(est.decision_values(X),
                                                 np.searchsorted(est.classes_, y))))
    # the solver's intercepts are optimal for its h: the LP cannot do better
    assert loss_kkt - loss_lp <= 1e-6 * max(1.0, loss_lp)
    assert loss_lp <= loss_kkt + 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_exact_intercepts_equal_the_lp(seed):
    """The breakpoint search reaches the LP's optimal loss for arbitrary h and shifted boxes."""
    from msvm._intercept import exact_intercepts
    from msvm._problem import per_class_hinge_problem

    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 40)), int(rng.integers(2, 6))
    y = rng.integers(0, k, n)
    w = rng.uniform(0.0, 2.0, n)
    g = float(rng.uniform())
    problem = per_class_hinge_problem(y, k, lin_own=k - 1.0, lin_other=1.0, coef_own=-1.0,
                                      coef_other=1.0, hi_own=w * g, hi_other=w * (1 - g))
    if seed % 2:  # DC-style shifted boxes: lo > 0 on some variables
        shifted_lo = 0.5 * problem.expand("hi")
        problem = problem.replace(
            lo=np.where(rng.uniform(size=problem.n_vars) < 0.3, shifted_lo, 0.0))
    H = rng.normal(scale=2.0, size=(n, k))
    H -= H.mean(axis=1, keepdims=True)
    lo, hi = problem.expanded_bounds()

    def loss(b):
        D = problem.directions()
        z = problem.expand("lin") + np.einsum("vj,vj->v", D, (H + b)[problem.sample_of_var()])
        return float(np.sum(np.where(z > 0, hi, lo) * z))

    b = exact_intercepts(problem, H, b0=rng.normal(size=k))
    b_lp, loss_lp = lp_intercepts(problem, H)
    assert abs(b.sum()) <= 1e-10
    assert loss(b) == pytest.approx(loss_lp, rel=1e-9, abs=1e-9)
    assert loss(b_lp) == pytest.approx(loss_lp, rel=1e-9, abs=1e-9)


def test_slot_breakpoints_match_the_explicit_layout():
    """The compiled breakpoint pass of the intercept step against numpy on the explicit
    per-variable arrays (entries shared by class, boxes per variable), and its refusal of
    two-slot directions."""
    from msvm._core._problem import slot_breakpoints
    from msvm._problem import per_class_hinge_problem

    rng = np.random.default_rng(3)
    n, k = 50, 4
    y = rng.integers(0, k, n)
    w = rng.uniform(0.0, 2.0, n)
    problem = per_class_hinge_problem(y, k, lin_own=k - 1.0, lin_other=1.0, coef_own=-1.0,
                                      coef_other=1.0, hi_own=0.3 * w, hi_other=0.7 * w)
    problem = problem.replace(lo=np.where(rng.uniform(size=problem.n_vars) < 0.3,
                                          0.5 * problem.expand("hi"), 0.0))
    H = rng.normal(size=(n, k))
    ts, rises, base = slot_breakpoints(problem, H)
    rows = problem.sample_of_var()
    lo, hi = problem.expanded_bounds()
    slot1, coef1, lin = problem.expand("slot1"), problem.expand("coef1"), problem.expand("lin")
    sig = np.sign(coef1)
    for j in range(k):
        sel = np.flatnonzero(slot1 == j)
        np.testing.assert_array_equal(ts[j], -sig[sel] * lin[sel] - H[rows[sel], j])
        np.testing.assert_array_equal(rises[j], hi[sel] - lo[sel])
        assert base[j] == pytest.approx(np.sum(np.where(sig[sel] > 0, lo[sel], -hi[sel])),
                                        rel=1e-13)
    X = rng.normal(size=(n, 3))
    pairs = WestonWatkinsMSVM(C=1.0)._dual_problem(y, k, np.ones(n))
    with pytest.raises(ValueError, match="one-slot"):
        slot_breakpoints(pairs, H)
    with pytest.raises(ValueError, match="H must be"):
        slot_breakpoints(problem, X)


@pytest.mark.parametrize("truncation", [None, "auto"])
def test_tiny_C_equalities_converge(truncation):
    """At the large-lambda end of the papers' grid (C = 1/(n 2^15)) the boxes are ~1e-7: the
    augmented-Lagrangian penalty must grow past its cap for boxes of size 1, or the equality
    residual (relative to the boxes) stalls below the inner tolerance's resolution (it ran
    for minutes before)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from msvm import WeightedRobustMSVM
    from msvm.datasets import make_utility_example, utility_matrix

    X, y = make_utility_example(400, example=2, random_state=3964924996)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = WeightedRobustMSVM(C=1 / (400 * 2.0 ** 15), utility=utility_matrix(1, 0.8),
                                 truncation=truncation, kernel="linear", max_iter=200).fit(X, y)
    assert est.kkt_residual_ <= est.tol


def test_working_set_grows_where_its_fixed_costs_dominate():
    from msvm._core._solver import auto_working_set
    assert auto_working_set(6500, 7694, 10) == 256        # every row cached, small scan
    assert auto_working_set(2500, 20000, 5) == 512        # cache under half the rows
    assert auto_working_set(5100, 9800, 26) == 512        # n k >= 200,000
