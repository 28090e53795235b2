"""The stopping rule's rounding floor (msvm/_score_floor.py; issue 23 item 1, pattern 2).

At C = 1e8 on a linear Gram matrix the scores K U are sums of terms up to 3e10 that cancel to
about 1, so their rounding (up to 0.03 at n = 3,000) exceeds tol: a solve asked for a KKT
residual below its scores' own rounding and wandered to max_iter from the optimum.  With the
floor, a violation within its sample's rounding floor counts as none, and the duality gap
still decides.  Checked here: the n = 300 precomputed cells against the independent
reference, the n = 3,000 LLW cell against the same problem on ``kernel='linear'``, a point
perturbed off the optimum by more than the floor is not accepted, and ordinary fits never
meet the floor.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

import msvm._sequence as sequence
from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from msvm._core._solver import Status, init_scores, solve
from msvm._score_floor import absolute_kernel_times, floor_bound, score_floor

TOL = 1e-3
C_LARGE = 1e8


def _blobs(n):
    """The convergence matrix's data (benchmarks/run_convergence_matrix.py)."""
    return make_blobs(n_samples=n, centers=3, n_features=3, cluster_std=2.0, random_state=0)


def _estimator(model, C=C_LARGE, kernel="precomputed", **kw):
    if model == "LLW":
        return ReinforcedMSVM(reinforcement=0.0, C=C, kernel=kernel, **kw)
    if model == "reinforced":
        return ReinforcedMSVM(C=C, kernel=kernel, **kw)
    if model == "weston-watkins":
        return WestonWatkinsMSVM(C=C, kernel=kernel, **kw)
    return AngleBasedMSVM(C=C, kernel=kernel, **kw)


def _fit_without_warning(est, data, y):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        return est.fit(data, y)


def _reference(model, est, K, y):
    """The optimum from the independent reference (cvxpy + Clarabel, oracle/)."""
    pytest.importorskip("cvxpy")
    from oracle import (cvx_angle_loss, cvx_ww_loss, penalty, primal_fit, reference_fit,
                        reinforced_loss, vertices, ww_loss)

    w = np.ones(len(y))
    if model in ("LLW", "reinforced"):
        return reference_fit(K, y, w, C_LARGE, est.reinforcement, k=3)[0]
    if model == "weston-watkins":
        V, b, F = primal_fit(K, 3, cvx_ww_loss(y, w, C_LARGE))
        return penalty(V, K) + C_LARGE * ww_loss(F, y, w)
    V, b, F = primal_fit(K, 2, cvx_angle_loss(y, w, C_LARGE, est.reinforcement, 3),
                         sum_to_zero=False)
    return penalty(V, K) + C_LARGE * reinforced_loss(F @ vertices(3), y, w, est.reinforcement)


@pytest.mark.parametrize("model", ["LLW", "angle", "reinforced", "weston-watkins"])
def test_precomputed_n300_C1e8_converges_to_the_reference(model):
    X, y = _blobs(300)
    K = X @ X.T
    est = _fit_without_warning(_estimator(model), K, y)
    assert est.converged_ and est.stop_reason_ == "tol"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        optimum = _reference(model, est, K, y)
    assert abs(est.objective_ - optimum) <= TOL * abs(optimum)


@pytest.mark.parametrize("model", ["LLW", "angle"])
def test_precomputed_n3000_C1e8_converges_where_main_stopped_at_max_iter(model):
    """Main: max_iter (10,000 epochs, 11-12 s) with KKT residual 0.008-0.02 from a start at
    the optimum; here at most 200 epochs are allowed and the solve stops at the start."""
    X, y = _blobs(3000)
    est = _fit_without_warning(_estimator(model, max_iter=200), X @ X.T, y)
    assert est.converged_ and est.stop_reason_ == "tol"
    assert est.solver_plan_.steps[-1].precision_floor > TOL
    assert "rounding floor" in str(est.solver_plan_)
    # kkt_residual_ reports the violation the floor passed over, not a floored one
    assert est.kkt_residual_ > TOL
    linear = _estimator(model, kernel="linear", random_state=0).fit(X, y)
    assert linear.converged_
    assert abs(est.objective_ - linear.objective_) <= TOL * abs(linear.objective_)


def _recorded_fit(monkeypatch, est, data, y):
    """Fit ``est`` recording the compiled solve's calls: (source, problem, alpha, mu, its
    keyword arguments) of the last one, alpha and mu as the solve left them."""
    calls = []

    def recording_solve(src, problem, alpha, mu, **kw):
        result = solve(src, problem, alpha, mu, **kw)
        calls.append((src, problem, alpha, mu, kw))
        return result

    monkeypatch.setattr(sequence, "solve", recording_solve)
    _fit_without_warning(est, data, y)
    monkeypatch.undo()
    src, problem, alpha, mu, kw = calls[-1]
    return src, problem, np.array(alpha), np.array(mu), kw


def _solved_point(monkeypatch, n=300):
    """A solved LLW dual at C = 1e8 on a precomputed Gram matrix: (K, the solver's source,
    problem, alpha, mu, its settings)."""
    X, y = _blobs(n)
    K = X @ X.T
    src, problem, alpha, mu, kw = _recorded_fit(monkeypatch, _estimator("LLW"), K, y)
    settings = {key: kw[key] for key in ("tol", "rho", "seed")}
    return K, src, problem, alpha, mu, settings


def _certified(src, problem, alpha, mu, settings, floor):
    """Whether the stopping rule accepts (alpha, mu) with no step (max_iter=0), from scores
    computed once."""
    init_scores(src, np.ascontiguousarray(problem.slot_sums(alpha)))
    result = solve(src, problem, alpha.copy(), mu.copy(), max_iter=0, floor=floor,
                   certify_start=True, **settings)
    return result.status == Status.CONVERGED


def _floor(K, problem, alpha):
    return score_floor(problem, alpha,
                       lambda V: absolute_kernel_times(lambda s: K[:, s], V))


def test_floor_accepts_the_optimum_but_not_a_point_perturbed_beyond_it(monkeypatch):
    K, src, problem, alpha, mu, settings = _solved_point(monkeypatch, n=3000)
    floor = _floor(K, problem, alpha)
    assert floor.max() > TOL                  # the cell where the floor applies
    assert _certified(src, problem, alpha, mu, settings, floor)
    assert not _certified(src, problem, alpha, mu, settings, None)   # main's rule
    # move U along a same-class pair of free variables (the equalities hold) so far that
    # the violations of the pair's samples exceed three times the largest floor
    lo, hi = problem.expanded_bounds()
    slot = problem.expanded_directions()[0]
    free = np.flatnonzero((alpha > lo + 1.0) & (alpha < hi - 1.0))
    a = free[0]
    b = next(v for v in free[1:] if slot[v] == slot[a])
    sample = np.repeat(np.arange(problem.n_samples), np.diff(problem.var_ptr))
    i, j = sample[a], sample[b]
    curvature = problem.kappa * (1 - 1 / problem.k) * (K[i, i] + K[j, j] - 2 * K[i, j])
    t = 3.0 * floor.max() / curvature
    t = min(t, 0.5 * (hi[a] - alpha[a]), 0.5 * (alpha[b] - lo[b]))
    perturbed = alpha.copy()
    perturbed[a] += t
    perturbed[b] -= t
    assert curvature * t > 2.0 * max(floor[i], floor[j])
    assert not _certified(src, problem, perturbed, mu, settings,
                          _floor(K, problem, perturbed))


def test_ordinary_fits_never_meet_the_floor():
    X, y = _blobs(300)
    for est in (ReinforcedMSVM(C=10.0, kernel="rbf"), ReinforcedMSVM(C=1e4, kernel="linear"),
                WestonWatkinsMSVM(C=100.0, kernel="poly", degree=2)):
        est.fit(X, y)
        assert all(step.precision_floor == 0.0 for step in est.solver_plan_.steps)
        assert "rounding floor" not in str(est.solver_plan_)


def test_floor_bound_bounds_the_floor(monkeypatch):
    """The O(n k) bound that gates the floor is above every sample's floor."""
    X, y = _blobs(200)
    K = X @ X.T
    _, problem, alpha, _, _ = _recorded_fit(monkeypatch, _estimator("LLW", C=1e6), K, y)
    for scale in (1.0, 0.37, 5.3):
        point = alpha * scale
        floor = _floor(K, problem, point)
        assert 0.0 < floor.max() <= floor_bound(problem, point, np.diag(K)) * (1 + 1e-12)


def test_switch_off_restores_mains_rule(monkeypatch):
    """PRECISION_FLOOR off: no floor, and an ordinary fit is bitwise the same either way."""
    X, y = _blobs(300)
    on = ReinforcedMSVM(C=1e4, kernel="rbf", random_state=0).fit(X, y)
    monkeypatch.setattr(sequence, "PRECISION_FLOOR", False)
    off = ReinforcedMSVM(C=1e4, kernel="rbf", random_state=0).fit(X, y)
    assert on.objective_ == off.objective_
    np.testing.assert_array_equal(on.dual_coef_, off.dual_coef_)
    K = X @ X.T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = _estimator("LLW", max_iter=300).fit(K, y)
    assert all(step.precision_floor == 0.0 for step in plain.solver_plan_.steps)


@pytest.mark.parametrize("case", ["kernel entries 1e301", "C 1e300"])
def test_a_floor_beyond_the_margin_is_not_used(case):
    """Where the rounding of the scores reaches the margin itself (a floor above
    FLOOR_MAX: 1e288 with kernel entries near 1e301, tests/test_finish_budget.py's case;
    1e286 at C = 1e300, tests/test_fuzz.py's), main's rule stays: the first fit stops at
    max_iter with a ConvergenceWarning, the second is refused as overflowing (with the
    floor it returned objective_ 0.0)."""
    from test_finish_budget import X_SCALED, Y

    from msvm import AdaptiveWeightedSVM, RobustMSVM

    if case == "C 1e300":
        X = np.array([[1.67027107], [1.90426485], [1.34257862], [1.98472563], [2.64932607],
                      [-1.60184066]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match="overflows double precision"):
                RobustMSVM(C=1e300, truncation=0.0, kernel="linear").fit(
                    X, np.array([0, 1, 1, 1, 1, 0]))
        return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = AdaptiveWeightedSVM(C=10.0, scheme="one-step", kernel="linear",
                                  max_iter=2000).fit(X_SCALED, Y)
    assert not est.converged_ and est.stop_reason_ == "max_iter"
    assert any(issubclass(c.category, ConvergenceWarning) for c in caught)
    assert all(step.precision_floor == 0.0 for step in est.solver_plan_.steps)
