"""The calibration folds' route on an approximate kernel's features (round 15).

A fold trains on at most ``CALIBRATION_TRAIN_MAX`` samples weighted n / n_train, so at large n
its fits are fits at a large C; from ``msvm._plan.REFIT_FOLD_MIN_BOUND`` (C times the fold's
heaviest weight) they solve on the explicit features from the smoothed primal
(``msvm._plan.fold_overrides``) instead of on the features' Gram rows.  Checked here: the
rule, that the fold's own fit, top fits and chains take the route, that every level's fit is
certified (converged, KKT residual within tol), that the route's chains agree with the Gram
rows' chains to the solves' accuracy, and that a chain stopped where settled on the route
agrees with the same chain refitted at every level.  The threshold is lowered in the tests
(the folds of small data have small weights).
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.metrics import log_loss

from msvm import ReinforcedMSVM, _plan, _probability

ROUTE = {"rows": "explicit features", "primal_start": "on"}


def test_the_rule_of_the_fold_route(monkeypatch):
    """The route from REFIT_FOLD_MIN_BOUND up, for an approximate kernel whose features the
    fold's samples outnumber PRIMAL_MIN_RATIO times (per row of a slot block) only, never
    with the switch off."""
    bound = _plan.REFIT_FOLD_MIN_BOUND
    assert _plan.fold_overrides("nystroem", bound, 1000, 200) == ROUTE
    assert _plan.fold_overrides("rff", 10 * bound, 1000, 200) == ROUTE
    assert _plan.fold_overrides("nystroem", 0.99 * bound, 1000, 200) == {}
    assert _plan.fold_overrides(None, 10 * bound, 1000, 200) == {}
    # as many features as samples: the Gram rows (the fold's chains settle at once there)
    assert _plan.fold_overrides("nystroem", 10 * bound, 1000, 1000) == {}
    assert _plan.fold_overrides("nystroem", 10 * bound, 1000, 250) == {}
    monkeypatch.setattr(_plan, "REFIT_FOLD_PRIMAL", False)
    assert _plan.fold_overrides("nystroem", 10 * bound, 1000, 200) == {}


@pytest.fixture(scope="module")
def fold():
    """A fold-like problem: 600 samples of 3 classes weighted 40 (a fold of n = 24,000)."""
    X, y = make_classification(900, 20, n_informative=10, n_classes=3,
                               n_clusters_per_class=1, random_state=0)
    return X[:600], y[:600], X[600:], np.full(600, 40.0)


def _fold_chains(X, y, w, levels, overrides, tol=1e-4):
    """The fold's own fit and the chains of every class, as a calibration fold makes them
    (the template's ``_plan_overrides`` as ``_fold_template`` sets them)."""
    template = ReinforcedMSVM(kernel_approximation="nystroem", n_components=40, C=5.0,
                              tol=tol, random_state=0, warm_start=True)
    template = _probability._with_params(template)
    if overrides:
        template._plan_overrides = overrides
    own = _probability._own_fit(template, X, y, w)
    refit = _probability._refit_template(template, 1.0)
    features = own._kept_feature_state(X)
    chains = _probability._task_chains(refit, own, X, y, w, levels, own.classes_, features)
    return own, chains


def _fits(chains):
    return list({id(fit): fit for chain in chains for fit in chain}.values())


def test_route_chains_are_certified_and_agree_with_the_gram_rows(fold, monkeypatch):
    """On the route every fit (own fit and each level's) is on the explicit features, started
    from the smoothed primal and certified (converged, KKT residual <= the refits' tol); at
    the refits' tol 1e-4 (REFIT_TOL_FACTOR = 1) the decision values of every level agree with
    the chains on the Gram rows (the path before) within 1e-2 of their size, and the
    uncalibrated probabilities within 1e-3: the same problems, solved to tol by either
    route.  Before round 15 the route did not exist (the fits were on 'linear rows')."""
    monkeypatch.setattr(_probability, "REFIT_TOL_FACTOR", 1.0)
    X, y, X_test, w = fold
    levels = _probability.probability_levels(4)
    own, chains = _fold_chains(X, y, w, levels, ROUTE)
    own0, chains0 = _fold_chains(X, y, w, levels, {})
    assert own.solver_plan_.rows == "explicit features"
    assert own0.solver_plan_.rows == "linear rows"
    for fit in [own, *_fits(chains)]:
        assert fit.solver_plan_.rows == "explicit features"
        assert any(step.primal_start for step in fit.solver_plan_.steps)
        assert fit.converged_ and fit.kkt_residual_ <= fit.tol
    for chain, chain0 in zip(chains, chains0):
        for fit, fit0 in zip(chain, chain0):
            G, G0 = fit.decision_values(X_test), fit0.decision_values(X_test)
            np.testing.assert_allclose(G, G0, atol=1e-2 * np.abs(G0).max())
    P, P0 = [_probability.shaped_probabilities(_probability.bracketed_ratios(o, c, levels,
                                                                            X_test))
             for o, c in ((own, chains), (own0, chains0))]
    np.testing.assert_allclose(P, P0, atol=1e-3)


def test_settled_chains_on_the_route_hold_every_levels_fit(fold, monkeypatch):
    """The settled rule on the route (the dual the fit solved last: no variable of the
    up-weighted class at a moving bound): a chain stopped where settled agrees with the same
    chain refitted at every level (SETTLED_CHAINS = False), each refit certified, to the
    solves' accuracy (tol 1e-4: decision values within 1e-2 of their size, uncalibrated
    probabilities within 1e-3), and some chain does stop early."""
    monkeypatch.setattr(_probability, "REFIT_TOL_FACTOR", 1.0)
    X, y, X_test, w = fold
    levels = _probability.probability_levels(4)
    own, stopped = _fold_chains(X, y, w, levels, ROUTE)
    monkeypatch.setattr(_probability, "SETTLED_CHAINS", False)
    _, every = _fold_chains(X, y, w, levels, ROUTE)
    assert len(_fits(stopped)) < len(_fits(every)) == len(levels) * len(own.classes_)
    for fit in _fits(every):
        assert fit.converged_ and fit.kkt_residual_ <= fit.tol
    for chain, chain_every in zip(stopped, every):
        for fit, refit in zip(chain, chain_every):
            G, H = fit.decision_values(X_test), refit.decision_values(X_test)
            np.testing.assert_allclose(G, H, atol=1e-2 * np.abs(H).max())
    P = [_probability.shaped_probabilities(_probability.bracketed_ratios(own, c, levels,
                                                                         X_test))
         for c in (stopped, every)]
    np.testing.assert_allclose(P[0], P[1], atol=1e-3)


def _probability_fit(X, y, **params):
    return ReinforcedMSVM(C=5.0, random_state=0, probability=True, probability_grid=4,
                          **params).fit(X, y)


def test_probability_fit_takes_the_route_on_the_folds(monkeypatch):
    """With the threshold lowered below the folds' bound, a probability fit's fold fits run
    on the route (recorded through ``_ChainRunner``), the full data's do not (no override:
    the estimator's own plan), argmax = predict on every sample, and the held-out log loss
    within 0.01 of the Gram rows' (the issue's limit; the C factor is fixed at 1, so that
    the two differ by the folds' solves only)."""
    X, y = make_classification(2300, 20, n_informative=10, n_classes=3,
                               n_clusters_per_class=1, random_state=1)
    X, y, X_test, y_test = X[:1500], y[:1500], X[1500:], y[1500:]
    monkeypatch.setattr(_probability, "REFIT_C_FACTORS", (1.0,))
    params = dict(kernel_approximation="nystroem", n_components=50)
    base = _probability_fit(X, y, **params)
    runner, seen = _probability._ChainRunner, []
    chains_of = runner.__dict__["task_chains"]

    def recorded(template, start, X_, *args):
        chains = chains_of.__func__(template, start, X_, *args)
        seen.append((len(X_), [start, *_fits(chains)]))
        return chains

    monkeypatch.setattr(runner, "task_chains", staticmethod(recorded))
    monkeypatch.setattr(_plan, "REFIT_FOLD_MIN_BOUND", 1.0)
    est = _probability_fit(X, y, **params)
    folds = [fit for n, fits in seen if n < len(y) for fit in fits]
    full = [fit for n, fits in seen if n == len(y) for fit in fits]
    assert folds and full
    assert all(fit.solver_plan_.rows == "explicit features" for fit in folds)
    assert all(fit.solver_plan_.primal_start == "on" for fit in folds)
    assert all(fit.solver_plan_.primal_start == "auto" for fit in full)
    for fitted in (base, est):
        P = fitted.predict_proba(X_test)
        np.testing.assert_array_equal(fitted.classes_[P.argmax(axis=1)], fitted.predict(X_test))
    assert log_loss(y_test, est.predict_proba(X_test)) <= (
        log_loss(y_test, base.predict_proba(X_test)) + 0.01)


def test_the_linear_kernel_is_left_alone(monkeypatch):
    """The route is for approximate kernels: the linear kernel's probabilities are the same
    with the threshold at zero."""
    X, y = make_classification(700, 5, n_informative=5, n_redundant=0, n_classes=3,
                               n_clusters_per_class=1, random_state=2)
    X_test = X[:100] + 0.05
    P0 = _probability_fit(X, y, kernel="linear").predict_proba(X_test)
    monkeypatch.setattr(_plan, "REFIT_FOLD_MIN_BOUND", 0.0)
    np.testing.assert_array_equal(_probability_fit(X, y, kernel="linear").predict_proba(X_test),
                                  P0)


def test_single_precision_steps_leave_the_chains_certified(monkeypatch):
    """A weighted refit's Newton steps with dF = X s in single precision on the float32
    features (``msvm._primal.SINGLE_STEPS``): on a chain of the full data (3,000 samples,
    the levels below t = 0.1 balanced) every level is started from the smoothed primal and
    certified, and the decision values agree with the double-precision steps' within 1e-5
    of their size (measured 2e-7 at n = 50,000); ``step_values`` is the product itself to
    single-precision rounding."""
    from _approx_chain import full_data_chain

    from msvm import _primal

    X, y, X_test, est, template, levels, features = full_data_chain()
    chains, calls = {}, []
    real = _primal.SmoothedPrimal.step_values

    def counted(primal, sV, sb):
        dF = real(primal, sV, sb)
        if primal.single_steps:
            exact = primal.decision(sV, sb)
            calls.append(np.abs(dF - exact).max() / max(np.abs(exact).max(), 1e-300))
        return dF

    monkeypatch.setattr(_primal.SmoothedPrimal, "step_values", counted)
    # the steps alone: the gradient's product in double in both (SINGLE_GRADIENT: its test
    # in tests/test_primal_single_gradient.py)
    monkeypatch.setattr(_primal, "SINGLE_GRADIENT", False)
    for single in (False, True):
        monkeypatch.setattr(_primal, "SINGLE_STEPS", single)
        chains[single], _ = _probability._weighted_chain(
            template, est, X, y, np.ones(len(y)), levels, est.classes_[0], features)
    assert calls and max(calls) < 1e-5
    for fit, fit0 in zip(chains[True], chains[False]):
        assert any(step.primal_start for step in fit.solver_plan_.steps)
        assert fit.converged_ and fit.kkt_residual_ <= fit.tol
        G, G0 = fit.decision_values(X_test), fit0.decision_values(X_test)
        np.testing.assert_allclose(G, G0, atol=1e-5 * np.abs(G0).max())
