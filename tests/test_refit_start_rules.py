"""The rules of round 11 for a probability chain's refits on explicit features: the
smoothed-primal start at once (``msvm._plan.REFIT_DUAL_FIRST`` off), smoothed with bands alike
for all samples (``msvm._primal._balanced``), and the linear kernel's chains on explicit
features below ``LINEAR_ROWS_MAX_SAMPLES`` (``msvm._plan.refit_rows``,
``REFIT_EXPLICIT_LINEAR``)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM
from msvm import _plan, _primal, _probability
from msvm._plan import refit_rows
from msvm._primal import _balanced


def _linear_data(n, d=5, k=5):
    return make_classification(n, d, n_informative=d, n_redundant=0, n_classes=k,
                               n_clusters_per_class=1, random_state=0)


def _solved(n, d=5):
    """(problem, X, diag) of a linear-kernel fit on explicit features."""
    X, y = _linear_data(n, d)
    est = ReinforcedMSVM(kernel="linear", C=10.0, warm_start=True)._join_path(keep_rows=True)
    est._plan_overrides = {"rows": "explicit features"}
    problem, _ = est.fit(X, y)._solved_dual()
    return problem, X, np.einsum("ij,ij->i", X, X)


def test_linear_chains_run_on_explicit_features_where_the_primal_start_can():
    """The linear kernel with many samples per primal unknown: explicit features (also below
    LINEAR_ROWS_MAX_SAMPLES); not for other kernels, too few samples, too many unknowns,
    too few samples for the primal start to pay, nor with the switch off."""
    assert refit_rows("linear", 600, 5, 3) == "explicit features"
    assert refit_rows("rbf", 600, 5, 3) is None
    assert refit_rows("linear", 400, 30, 2) is None              # 400 < 500 samples
    assert refit_rows("linear", 100000, 400, 5) is None          # 2005 unknowns > 1500
    assert refit_rows(lambda a, b: a @ b.T, 600, 5, 3) is None


def test_the_switch_restores_the_kernel_rows(monkeypatch):
    monkeypatch.setattr(_plan, "REFIT_EXPLICIT_LINEAR", False)
    assert refit_rows("linear", 600, 5, 3) is None


def _probability_fit(X, y):
    return ReinforcedMSVM(kernel="linear", C=10.0, probability=True).fit(X, y)


def test_a_small_linear_probability_fit_refits_on_explicit_features(monkeypatch):
    """600 samples (kernel rows for the estimator's own fit): every weighted refit runs on
    explicit features from the primal start, certified at once; the probabilities keep
    their argmax at ``predict`` and stay close to those of the chains on the kernel rows
    (both are fits to the refits' tol of the same problems)."""
    X, y = _linear_data(800, k=3)
    X_train, y_train, X_test = X[:600], y[:600], X[600:]
    est = _probability_fit(X_train, y_train)
    assert est.solver_plan_.rows == "linear rows"
    fits = {id(f): f for chain in est.probability_estimators_ for f in chain[:-1]
            if f is not est}
    assert fits
    for fit in fits.values():
        assert fit.solver_plan_.rows == "explicit features"
        assert fit.solver_plan_.steps[0].primal_start and fit.converged_
    proba = est.predict_proba(X_test)
    np.testing.assert_array_equal(est.classes_[proba.argmax(1)], est.predict(X_test))
    monkeypatch.setattr(_plan, "REFIT_EXPLICIT_LINEAR", False)
    before = _probability_fit(X_train, y_train)
    assert all(f.solver_plan_.rows == "linear rows"
               for chain in before.probability_estimators_ for f in chain)
    assert np.mean(np.abs(before.predict_proba(X_test) - proba)) < 0.02


def test_a_linear_chain_is_certified_at_every_level():
    """d = 5, C = 10, 2,500 samples: every level of a chain starts from the primal at once
    and is certified without an epoch (round 9: the first level ran its budget of dual
    coordinate descent first)."""
    X, y = _linear_data(2500)
    est = ReinforcedMSVM(kernel="linear", C=10.0).fit(X, y)
    template = _probability._refit_template(clone(est).set_params(warm_start=True,
                                                                  C=est.C_), 1.0)
    chain, _ = _probability._weighted_chain(template, est, X, y, np.ones(len(y)),
                                            _probability.probability_levels(8), 0)
    fits = list({id(fit): fit for fit in chain}.values())
    for fit in fits:
        step = fit.solver_plan_.steps[0]
        assert step.primal_start and not step.late_primal_start and fit.n_iter_ == 0


def _weighted_problem(weight, n=1000):
    """The dual of a chain's refit (class 0 at ``weight``) on the linear kernel."""
    X, y = _linear_data(n)
    est = ReinforcedMSVM(kernel="linear", C=10.0, warm_start=True)._join_path(keep_rows=True)
    est._plan_overrides = {"rows": "explicit features"}
    est.fit(X, y, sample_weight=np.where(y == 0, weight, 1.0))
    return est._solved_dual()[0], X, y


def test_balanced_smoothing_rescales_only_unequal_boxes():
    """Boxes within BALANCE_MIN_RATIO of each other: no rescaling (every fit with equal
    weights is as before); class 0 at weight 100: its variables scaled by 10 (the square root
    of the box ratio), their terms by 10 and their boxes by 1 / 10, the others' unchanged;
    the target mu bounds the smoothing's KKT violation by TARGET_SHARE tol in the original
    margins (width / scale^2 = the unweighted width for every variable).  Since round 16
    boxes that differ within that ratio give the problem itself, unscaled, to be started as
    the balanced ones are (``WEIGHTED_AS_BALANCED``; None with it off), and equal boxes
    None."""
    problem, _, y = _weighted_problem(8.0)
    same, target, scale = _balanced(problem, 0.3)
    assert same is problem and scale == 1.0
    assert target == pytest.approx(_primal.TARGET_SHARE * 0.3 / problem.max_abs_bound())
    _primal.WEIGHTED_AS_BALANCED = False
    try:
        assert _balanced(problem, 0.3) is None
    finally:
        _primal.WEIGHTED_AS_BALANCED = True
    assert _balanced(_weighted_problem(1.0)[0], 0.3) is None
    problem, _, y = _weighted_problem(100.0)
    balanced, target, scale = _balanced(problem, 0.3)
    heavy = (y == 0)[problem.sample_of_var()]
    np.testing.assert_allclose(scale[heavy], 10.0)
    np.testing.assert_allclose(scale[~heavy], 1.0)
    lo, hi = problem.expanded_bounds()
    np.testing.assert_allclose(balanced.expand("hi"), hi / scale)
    np.testing.assert_allclose(balanced.expand("coef1"), problem.expand("coef1") * scale)
    np.testing.assert_allclose(balanced.expand("lin"), problem.expand("lin") * scale)
    assert target == pytest.approx(_primal.TARGET_SHARE * 0.3 / hi[~heavy].max())


def test_the_balanced_start_is_a_feasible_dual_point_the_solver_certifies(monkeypatch):
    """The dual point of the rescaled problem, mapped back, lies in the original boxes and
    meets the equalities; a refit at the refits' tol from it is certified at once, at the
    optimum of the refit from the one-mu smoothing (within the larger duality gap)."""
    problem, X, y = _weighted_problem(100.0)
    diag = np.einsum("ij,ij->i", X, X)
    W = np.zeros((X.shape[1], problem.k))
    alpha, _ = _primal.primal_start(problem, X, W, np.zeros(problem.k), 0.3, diag, 300)
    lo, hi = problem.expanded_bounds()
    assert np.all(alpha >= lo) and np.all(alpha <= hi)
    c = problem.class_sums(alpha)
    assert np.abs(c - c.mean()).max() <= 1e-8 * np.abs(alpha).sum()
    fits = {}
    for power in (0.5, 0.0):
        monkeypatch.setattr(_primal, "BALANCE_POWER", power)
        est = ReinforcedMSVM(kernel="linear", C=10.0, tol=0.3)
        est._plan_overrides = {"rows": "explicit features"}
        fits[power] = est.fit(X, y, sample_weight=np.where(y == 0, 100.0, 1.0))
        assert fits[power].converged_ and fits[power].solver_plan_.steps[0].primal_start
    assert fits[0.5].n_iter_ == 0
    assert abs(fits[0.5].objective_ - fits[0.0].objective_) <= max(
        fits[0.5].duality_gap_, fits[0.0].duality_gap_)
