"""RobustMSVM, WeightedRobustMSVM, AdaptiveWeightedSVM and WestonWatkinsMSVM against the
independent cvxpy references of the oracle package (oracle/primal.py), and the DC
algorithm's properties.

- every convex problem (WestonWatkinsMSVM, WeightedRobustMSVM(truncation=None) with a random
  utility, and one DC step's convex subproblem of RobustMSVM and WeightedRobustMSVM) reaches
  the reference optimum to 1e-6 relative (fits at tol=1e-8);
- DC: dc_objectives_ never increases, objective_ is its last entry and equals the contract's
  formula on the fitted function, and the returned function is a DC fixed point: the convex
  subproblem linearized there has no solution with a lower (true) objective;
- the DCA / iterative-weighting equivalence of Wu and Liu (2013) in both directions.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from hypothesis import given, settings
from hypothesis import strategies as st

import oracle as R
from oracle import kernel_matrix, make_problem
from msvm import AdaptiveWeightedSVM, RobustMSVM, WeightedRobustMSVM, WestonWatkinsMSVM

RTOL = 1e-6
TIGHT = dict(tol=1e-8, max_iter=1_000_000)


def _kernel_params(kernel, rng):
    if kernel == "poly":
        return dict(kernel="poly", degree=2, coef0=1.0, gamma=float(rng.uniform(0.2, 1.0)))
    if kernel == "rbf":
        return dict(kernel="rbf", gamma=float(rng.uniform(0.2, 1.5)))
    return dict(kernel="linear")


def _gram(est, X):
    gamma = est.gamma_ if est.kernel != "linear" else None
    return kernel_matrix(X, X, est.kernel, gamma=gamma, degree=getattr(est, "degree", 3),
                         coef0=getattr(est, "coef0", 0.0))


def _penalty(est, K):
    """1/2 sum_j ||h_j||^2 of the fitted function, from dual_coef_ and the kernel."""
    sv = est.support_
    A = est.dual_coef_
    return 0.5 * float(np.einsum("js,st,jt->", A, K[np.ix_(sv, sv)], A))


def _case(seed, kernel, k=None, n=None):
    rng = np.random.default_rng(seed)
    k = k or int(rng.integers(2, 5))
    n = n or int(rng.integers(max(12, 3 * k), 36))
    X, y, w = make_problem(500 + seed, n, k, 2, weights=["random", "zeros", "ones"][seed % 3],
                           separation=float(rng.uniform(0.5, 2.0)))
    return X, y, w, k, rng, _kernel_params(kernel, rng)


def _close(a, b):
    return abs(a - b) <= RTOL * max(1.0, abs(b))


# ------------------------------------------------------------------ convex models
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("seed", range(3))
def test_weston_watkins_matches_reference(seed, kernel):
    X, y, w, k, rng, kp = _case(seed, kernel)
    C = float(np.exp(rng.uniform(np.log(0.1), np.log(10))))
    est = WestonWatkinsMSVM(C=C, **kp, **TIGHT).fit(X, y, sample_weight=w)
    K = _gram(est, X)
    V, b, F = R.primal_fit(K, k, R.cvx_ww_loss(y, w, C))
    ref = R.penalty(V, K) + C * R.ww_loss(F, y, w)
    G = est.decision_values(X)
    assert _close(est.objective_, ref), (est.objective_, ref)
    assert _close(_penalty(est, K) + C * R.ww_loss(G, y, w), est.objective_)


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("seed", range(3))
def test_convex_weighted_msvm_matches_reference(seed, kernel):
    X, y, w, k, rng, kp = _case(seed, kernel)
    C = float(np.exp(rng.uniform(np.log(0.1), np.log(10))))
    U = rng.uniform(0.0, 1.0, (k, k)) * (rng.uniform(size=(k, k)) < 0.6) + np.eye(k)
    est = WeightedRobustMSVM(C=C, utility=U, truncation=None, **kp, **TIGHT)
    est.fit(X, y, sample_weight=w)
    K = _gram(est, X)
    V, b, F = R.primal_fit(K, k, R.cvx_weighted_loss(y, w, C, U))
    ref = R.penalty(V, K) + C * R.weighted_loss(F, y, w, U, None)
    assert _close(est.objective_, ref), (est.objective_, ref)
    G = est.decision_values(X)
    assert _close(_penalty(est, K) + C * R.weighted_loss(G, y, w, U, None), est.objective_)
    np.testing.assert_allclose(G.sum(axis=1), 0.0, atol=1e-9)


# ------------------------------------------------------------------ one DC step
def _disc(seed, n=40):
    from msvm.datasets import make_disc_example

    X, y, _ = make_disc_example(n, contamination=0.2, random_state=seed)
    return X, y, np.random.default_rng(seed).uniform(0.3, 2.0, n)


@pytest.fixture
def exact_steps(monkeypatch):
    """Solve every DC step to tol (the early steps are otherwise solved loosely)."""
    import msvm._dc

    monkeypatch.setattr(msvm._dc, "LOOSE_TOL", 0.0)


@pytest.mark.parametrize("seed", range(3))
def test_robust_dc_step_matches_reference(seed, exact_steps):
    X, y, w = _disc(seed)
    params = dict(C=2.0, kernel="rbf", gamma=2.0, **TIGHT)
    start = RobustMSVM(truncation=None, **params).fit(X, y, sample_weight=w)
    s = 0.0
    beta = R.robust_beta(start.decision_values(X), y, s)
    assert beta.any()
    one = RobustMSVM(truncation=s, max_dc_iter=1, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # max_dc_iter=1 stops early on purpose
        one.fit(X, y, sample_weight=w)
    assert one.n_iter_ == 2
    K = _gram(one, X)
    V, b, F = R.primal_fit(K, 3, R.cvx_robust_loss(y, w, 2.0, beta, s))
    ref = R.penalty(V, K) + 2.0 * R.robust_linearized_loss(F, y, w, s, beta)
    got = _penalty(one, K) + 2.0 * R.robust_linearized_loss(one.decision_values(X), y, w, s,
                                                            beta)
    assert _close(got, ref), (got, ref)


@pytest.mark.parametrize("seed", range(3))
def test_weighted_dc_step_matches_reference(seed, exact_steps):
    X, y, w = _disc(seed)
    rng = np.random.default_rng(seed)
    U = np.eye(3) + rng.uniform(0, 0.5, (3, 3)) * (1 - np.eye(3))
    params = dict(C=2.0, utility=U, kernel="rbf", gamma=2.0, **TIGHT)
    start = WeightedRobustMSVM(truncation=None, **params).fit(X, y, sample_weight=w)
    s = -0.5
    beta, jstar = R.weighted_beta(start.decision_values(X), s)
    assert (beta & (U[y] > 0)).any()
    one = WeightedRobustMSVM(truncation=s, max_dc_iter=1, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one.fit(X, y, sample_weight=w)
    assert one.n_iter_ == 2
    K = _gram(one, X)
    V, b, F = R.primal_fit(K, 3, R.cvx_weighted_loss(y, w, 2.0, U, beta, jstar, s))
    ref = R.penalty(V, K) + 2.0 * R.weighted_linearized_loss(F, y, w, U, s, beta, jstar)
    got = _penalty(one, K) + 2.0 * R.weighted_linearized_loss(one.decision_values(X), y, w, U,
                                                              s, beta, jstar)
    assert _close(got, ref), (got, ref)


# ------------------------------------------------------------------ DC properties
@st.composite
def dc_problems(draw):
    seed = draw(st.integers(0, 10_000))
    kernel = draw(st.sampled_from(["linear", "rbf"]))
    k = draw(st.integers(2, 4))
    X, y, w, k, rng, kp = _case(seed, kernel, k=k, n=draw(st.integers(3 * k, 30)))
    flip = rng.uniform(size=len(y)) < 0.2
    y = np.where(flip, (y + 1) % k, y)
    model = draw(st.sampled_from(["robust", "weighted"]))
    C = draw(st.floats(0.1, 10.0))
    if model == "robust":
        est = RobustMSVM(C=C, truncation=draw(st.sampled_from([0.0, 0.5, 1.0])), **kp, **TIGHT)
    else:
        U = np.eye(k) + draw(st.floats(0.0, 0.8)) * (1 - np.eye(k)) * rng.uniform(size=(k, k))
        est = WeightedRobustMSVM(C=C, utility=U, truncation=draw(st.sampled_from(["auto", 0.0])),
                                 **kp, **TIGHT)
    return X, y, w, est


@settings(max_examples=12, deadline=None)
@given(dc_problems())
def test_dc_properties(problem):
    X, y, w, est = problem
    if len(np.unique(y)) < 2:
        return
    est.fit(X, y, sample_weight=w)
    yk = np.searchsorted(est.classes_, y)
    k = len(est.classes_)
    obj = est.dc_objectives_
    assert np.all(np.diff(obj) <= 1e-9 * max(1.0, abs(obj[0])))
    assert est.objective_ == pytest.approx(obj[-1], rel=1e-12)
    assert est.n_iter_ == len(obj)
    K = _gram(est, X)
    G = est.decision_values(X)
    C = est.C
    if isinstance(est, RobustMSVM):
        s = est.truncation
        true = lambda F: R.robust_loss(F, yk, w, s)  # noqa: E731
        beta = R.robust_beta(G, yk, s)
        loss = R.cvx_robust_loss(yk, w, C, beta, s)
        lin = lambda F: R.robust_linearized_loss(F, yk, w, s, beta)  # noqa: E731
        truncated = beta.any(axis=1)
        near = (np.abs(G - s) < 1e-7).any(axis=1)
    else:
        s = est.truncation_
        U = est.utility_
        true = lambda F: R.weighted_loss(F, yk, w, U, s)  # noqa: E731
        beta, jstar = R.weighted_beta(G, s)
        beta &= U[yk] > 0
        loss = R.cvx_weighted_loss(yk, w, C, U, beta, jstar, s)
        lin = lambda F: R.weighted_linearized_loss(F, yk, w, U, s, beta, jstar)  # noqa: E731
        truncated = beta.any(axis=1)
        near = (np.abs(R.margins(G) - s) < 1e-7).any(axis=1)
    # objective_ is the contract's formula at the fitted function
    assert est.objective_ == pytest.approx(_penalty(est, K) + C * true(G), rel=1e-9, abs=1e-9)
    # (points within 1e-7 of the truncation point may fall either way in floating point)
    np.testing.assert_array_equal(est.truncated_[~near], truncated[~near])
    # DC fixed point: the fitted function solves the convex subproblem linearized at itself
    # (so one more DC step cannot lower the objective; where that subproblem's minimizer is not
    # unique, in the intercepts, another minimizer may have another truncated objective)
    V, b, F = R.primal_fit(K, k, loss)
    best = R.penalty(V, K) + C * lin(F)
    here = _penalty(est, K) + C * lin(G)
    assert here <= best + 1e-6 * max(1.0, abs(best))


# ------------------------------------------------------------------ DCA and IWSVM (Wu and Liu 2013)
@pytest.mark.parametrize("seed", range(3))
def test_dc_solution_is_a_fixed_point_of_iterative_weighting(seed):
    X, y, w = _disc(seed, n=50)
    params = dict(C=1.0, kernel="rbf", gamma=2.0, **TIGHT)
    dc = WeightedRobustMSVM(truncation="auto", **params).fit(X, y, sample_weight=w)
    G = dc.decision_values(X)
    iw = AdaptiveWeightedSVM(scheme="iterative", truncation="auto", **params)
    v = iw.next_weights(G, y)
    refit = WeightedRobustMSVM(truncation=None, **params).fit(X, y, sample_weight=w * v)
    np.testing.assert_allclose(refit.decision_values(X), G, atol=1e-5)
    np.testing.assert_array_equal(iw.next_weights(refit.decision_values(X), y), v)


@pytest.mark.parametrize("seed", range(3))
def test_iterative_weighting_fixed_point_is_a_dc_fixed_point(seed):
    X, y, w = _disc(seed, n=50)
    iw = AdaptiveWeightedSVM(scheme="iterative", C=1.0, kernel="rbf", gamma=2.0, **TIGHT)
    iw.fit(X, y, sample_weight=w)
    G = iw.decision_values(X)
    s = -0.5
    U = np.eye(3)
    beta, jstar = R.weighted_beta(G, s)
    beta &= U[y] > 0
    K = _gram(iw, X)
    V, b, F = R.primal_fit(K, 3, R.cvx_weighted_loss(y, w, 1.0, U, beta, jstar, s))
    best = R.penalty(V, K) + R.weighted_linearized_loss(F, y, w, U, s, beta, jstar)
    here = _penalty(iw, K) + R.weighted_linearized_loss(G, y, w, U, s, beta, jstar)
    assert _close(here, best), (here, best)
    # and the iterative weights at that point are the DC indicators' complement
    v = iw.adaptive_weights_
    np.testing.assert_array_equal(v == 0, beta[np.arange(len(y)), y])


@pytest.mark.parametrize("max_dc_iter", [0, 1, 2])
@pytest.mark.parametrize("model", ["robust", "weighted"])
def test_dc_fit_stopped_early_returns_a_function_solved_to_tol(model, max_dc_iter):
    """The untruncated start and the early DC steps are solved loosely (tol 1e-2), but a fit
    whose DC loop stops at max_dc_iter (with its ConvergenceWarning) still returns the
    convex step it stopped at solved to tol: kkt_residual_ <= tol."""
    from msvm.datasets import make_disc_example

    X, y, _ = make_disc_example(200, contamination=0.2, random_state=0)
    cls, s = (RobustMSVM, 0.5) if model == "robust" else (WeightedRobustMSVM, "auto")
    est = cls(C=10.0, truncation=s, kernel="rbf", gamma=2.0, tol=1e-6, max_dc_iter=max_dc_iter,
              random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_dc_iter"):
        est.fit(X, y)
    assert est.stop_reason_ == "max_dc_iter"
    assert est.n_iter_ == max_dc_iter + 1
    assert est.kkt_residual_ <= 1e-6
    assert est.objective_ == est.dc_objectives_[-1]
