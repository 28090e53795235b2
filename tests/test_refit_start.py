"""The start of a probability chain's refits on explicit features (msvm._plan,
refit_start='dual first'): dual coordinate descent from the neighbour's dual for the
smoothed-primal start's estimated cost first, then the primal start from its iterate,
certified at once, and the chain's later levels from the primal."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM
from msvm import _plan, _probability
from msvm._plan import newton_step_epochs, plan_solve, refit_dual_epochs


@pytest.fixture(autouse=True)
def _dual_first_everywhere(monkeypatch):
    """The rule of round 9 (``REFIT_DUAL_FIRST``, off since round 11:
    tests/test_refit_start_rules.py)."""
    monkeypatch.setattr(_plan, "REFIT_DUAL_FIRST", True)


def _budget(n, d, k):
    """``refit_dual_epochs`` of a refit on n samples of d features and k class slots."""
    return max(1, int(np.ceil(_plan.REFIT_NEWTON_STEPS * newton_step_epochs(n, d, k))))

EXPLICIT = {"rows": "explicit features"}
DUAL_FIRST = {**EXPLICIT, "refit_start": "dual first"}


def _refit(est, X, y, weight=20.0, tol=None):
    """A copy of the fitted ``est`` refitted warm with class 0 up-weighted (a probability
    chain's level), at ``tol`` (the estimator's by default)."""
    refit = clone(est).set_params(warm_start=True, tol=tol or est.tol)
    refit._plan_overrides = DUAL_FIRST
    refit._start_from(est._warm_start_state())
    refit.fit(X, y, sample_weight=np.where(y == 0, weight, 1.0))
    return refit


def _nystroem(n=800):
    X, y = make_classification(n, 10, n_informative=6, n_classes=4, n_clusters_per_class=1,
                               random_state=0)
    est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=30, random_state=0)
    est._plan_overrides = EXPLICIT
    return est.fit(X, y), X, y


def _linear(n=1000):
    X, y = make_classification(n, 5, n_informative=5, n_redundant=0, n_classes=5,
                               n_clusters_per_class=1, random_state=0)
    est = ReinforcedMSVM(kernel="linear", C=10.0)
    est._plan_overrides = EXPLICIT
    return est.fit(X, y), X, y


def test_newton_step_cost_grows_with_the_features_and_falls_with_the_samples():
    """A Newton step costs two epochs' passes plus a factorization whose share shrinks as
    the samples grow and grows with the cube of the features."""
    assert newton_step_epochs(10 ** 9, 5, 5) == pytest.approx(2.0, abs=1e-6)
    assert newton_step_epochs(5000, 200, 5) > 5 * newton_step_epochs(5000, 5, 5)
    assert newton_step_epochs(5000, 200, 5) > newton_step_epochs(50000, 200, 5) > 2.0


def test_the_budget_is_given_only_where_the_primal_start_would_be_made(monkeypatch):
    """The rule decides only between the two starts of a refit that the primal-start rule
    allows; forcing the start on, off, or REFIT_DUAL_FIRST off leaves the plan as before."""
    est, X, y = _linear()
    kept = clone(est).set_params(warm_start=True)._join_path(keep_rows=True)
    kept._plan_overrides = EXPLICIT
    problem, _ = kept.fit(X, y)._solved_dual()
    diag = np.einsum("ij,ij->i", X, X)
    plan = plan_solve("linear", len(y), overrides=DUAL_FIRST)
    assert plan.starts_from_primal(problem, X, diag)
    assert plan.refit_dual_budget(problem, X, diag) == refit_dual_epochs(problem, X) > 0
    assert refit_dual_epochs(problem, X) == _budget(*X.shape, problem.k)
    assert plan_solve("linear", len(y), overrides=EXPLICIT).refit_dual_budget(
        problem, X, diag) == 0                     # 'primal': every fit but a chain's refits
    for forced in ("on", "off"):
        other = plan_solve("linear", len(y), overrides={**DUAL_FIRST, "primal_start": forced})
        assert other.refit_dual_budget(problem, X, diag) == 0
    monkeypatch.setattr(_plan, "REFIT_DUAL_FIRST", False)
    assert plan.refit_dual_budget(problem, X, diag) == 0


def test_a_fit_from_zero_still_starts_from_the_primal():
    """Only a warm-started refit starts on the dual: a fit from zero where the rule says so
    starts from the smoothed primal, as before."""
    est, _, _ = _nystroem()
    assert est.solver_plan_.steps[0].primal_start


def _same_optimum(a, b):
    """Two certified fits of one problem: each objective is above the optimum by at most
    its duality gap, so they differ by at most the larger gap."""
    assert a.converged_ and b.converged_
    assert abs(a.objective_ - b.objective_) <= max(a.duality_gap_, b.duality_gap_)


def test_a_refit_that_converges_within_the_budget_makes_no_primal_start(monkeypatch):
    """On approximate-kernel features a probability chain's refit (the next level: class 0
    weighted by 2.37, at the refits' tol 0.3) converges by dual coordinate descent from its
    neighbour's dual within the budget: no primal start, no late start, and the optimum of
    the refit started from the primal."""
    est, X, y = _nystroem()
    refit = _refit(est, X, y, weight=1e3 ** 0.125, tol=0.3)
    budget = _budget(len(y), est.n_components_, len(est.classes_))
    step = refit.solver_plan_.steps[0]
    assert not step.primal_start and step.finishing_steps == 0
    assert 0 < refit.n_iter_ < budget
    monkeypatch.setattr(_plan, "REFIT_DUAL_FIRST", False)
    primal = _refit(est, X, y, weight=1e3 ** 0.125, tol=0.3)
    assert primal.solver_plan_.steps[0].primal_start
    _same_optimum(refit, primal)


def test_a_refit_beyond_the_budget_goes_on_from_the_primal_certified_at_once(monkeypatch):
    """On the linear kernel with few features and a large C, dual coordinate descent from
    the neighbour's dual is slow: at the budget the refit goes on from the smoothed primal
    computed from its iterate, which the solver certifies without another epoch."""
    est, X, y = _linear()
    refit = _refit(est, X, y)
    budget = _budget(*X.shape, len(est.classes_))
    step = refit.solver_plan_.steps[0]
    assert not step.primal_start and step.finishing_steps == 1
    assert refit.n_iter_ == budget
    monkeypatch.setattr(_plan, "REFIT_DUAL_FIRST", False)
    primal = _refit(est, X, y)
    assert primal.n_iter_ == 0
    _same_optimum(refit, primal)


def _chain(est, X, y, label=0, grid=8):
    """The probability chain of class ``label`` from the fitted ``est``, as
    ``_fit_probability`` makes it (the refits' C and tol), unique fits from t = 1 down."""
    template = clone(est).set_params(warm_start=True, C=est.C_)
    refit = _probability._refit_template(template, 1.0)
    chain, _ = _probability._weighted_chain(refit, est, X, y, np.ones(len(y)),
                                            _probability.probability_levels(grid), label,
                                            est._kept_feature_state(X))
    return list({id(fit): fit for fit in chain[::-1]}.values())


def test_a_chain_turns_to_the_primal_start_after_its_first_late_start():
    """Linear kernel, d = 5, C = 10 (explicit features above 2,000 samples): the chain's
    first refit runs dual coordinate descent for its budget and goes on from the primal;
    every later level starts from the primal at once and is certified without an epoch.
    The fitted copies do not keep the chain's plan."""
    X, y = make_classification(2500, 5, n_informative=5, n_redundant=0, n_classes=5,
                               n_clusters_per_class=1, random_state=0)
    est = ReinforcedMSVM(kernel="linear", C=10.0).fit(X, y)
    fits = _chain(est, X, y)
    first = fits[0].solver_plan_.steps[0]
    assert first.late_primal_start and not first.primal_start
    assert fits[0].n_iter_ == _budget(*X.shape, 5)
    for fit in fits[1:]:
        step = fit.solver_plan_.steps[0]
        assert step.primal_start and not step.late_primal_start and fit.n_iter_ == 0
    assert all(fit.converged_ and not hasattr(fit, "_plan_overrides") for fit in fits)


def test_a_chain_on_nystroem_features_starts_on_the_dual():
    """Nystroem features (100 components, 2,500 samples): the chain's refits run by dual
    coordinate descent from the neighbour's dual, each within its budget, until one does
    not converge within it (the levels grow harder); that one goes on from the primal
    start and the levels after it start from the primal.  The first level converges on the
    dual (23 epochs where the budget is 227)."""
    X, y = make_classification(2500, 10, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=0)
    est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=100,
                         random_state=0).fit(X, y)
    assert est.solver_plan_.steps[0].primal_start
    fits = _chain(est, X, y)
    budget = _budget(2500, 100, 4)
    steps = [fit.solver_plan_.steps[0] for fit in fits]
    late = [step.late_primal_start for step in steps] + [True]
    switch = late.index(True)
    assert switch > 0
    for fit, step in zip(fits[:switch], steps):
        assert not step.primal_start and fit.n_iter_ < budget
    if switch < len(fits):
        assert fits[switch].n_iter_ == budget and not steps[switch].primal_start
        assert all(step.primal_start for step in steps[switch + 1:])
    assert all(fit.converged_ for fit in fits)
