"""The settled rule of the fits that are sequences of solves (msvm._probability._path_settled):
the DC models, the reweighting and the targeted grid.  A class's chain stops where no solve of
its fit's path read the weights of that class's samples; the levels below hold that fit.

Checked at a tight tolerance (the estimator's tol 1e-6, the refits at that tol), where a
stopped chain's fits must agree with the same chain refitted at every level up to the solves'
accuracy; at the refits' default tolerance (300 times tol) they agree only to it, as the
one-solve rule's do (benchmarks/results/probability.md, section 9d).
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import msvm
from msvm import _probability
from msvm._dc import weighed_samples
from msvm._problem import margin_problem

FAMILIES = ["RobustMSVM", "WeightedRobustMSVM", "AdaptiveWeightedSVM", "TargetedLocalMSVM"]


def _data(name, outliers=False):
    """Three well separated blobs (a class fitted with margin once up-weighted enough); with
    ``outliers`` two class-0 samples at class 1's centre.  TargetedLocalMSVM gets a uniform
    targeted column first."""
    X, y = make_blobs(120, centers=3, cluster_std=0.6, random_state=0)
    if outliers:
        centre = X[y == 1].mean(axis=0)
        X, y = np.vstack([X, centre, centre + 0.05]), np.concatenate([y, [0, 0]])
    if name == "TargetedLocalMSVM":
        X = np.column_stack([np.random.default_rng(0).uniform(0, 1, len(y)), X])
    return X, y


def _chains(name, X, y, levels, C=1.0, tol=1e-6, **params):
    """The weighted chains of every class from the own fit, as ``probability=True`` makes
    them (``_task_chains`` at the refits' template), with the refits at the estimator's tol."""
    own = getattr(msvm, name)(C=C, tol=tol, **params).fit(X, y)
    template = _probability._with_params(own.__class__(**own.get_params()), C=own.C_,
                                         warm_start=True)
    if getattr(own, "gamma_", None) is not None:
        template.gamma = own.gamma_
    template = _probability._refit_template(template, 1.0)
    chains = _probability._task_chains(template, own, X, y, np.ones(len(y)), levels,
                                       own.classes_)
    return own, chains


@pytest.mark.parametrize("name", FAMILIES)
def test_chain_stops_where_settled_with_the_full_chains_fits(name, monkeypatch):
    """Each family's chains stop before their last level (on main they never did: fits =
    3 x 4), and every level's fit agrees with the chain refitted at every level
    (SETTLED_CHAINS = False) to the solves' accuracy: decision values within 1e-4 of their
    size, the (uncalibrated) probabilities within 1e-5.  With SETTLED_PATHS = False (main's
    rule) every level is fitted."""
    monkeypatch.setattr(_probability, "REFIT_TOL_FACTOR", 1.0)
    X, y = _data(name)
    X_test = X + 0.1
    levels = _probability.probability_levels(4)
    runs = {}
    for settle, paths in ((True, True), (False, True), (True, False)):
        monkeypatch.setattr(_probability, "SETTLED_CHAINS", settle)
        monkeypatch.setattr(_probability, "SETTLED_PATHS", paths)
        runs[settle, paths] = _chains(name, X, y, levels)
    (own, stopped), (_, full), (_, main) = runs[True, True], runs[False, True], runs[True, False]
    n_fits = [sum(map(_probability._n_fits, chains)) for chains in (stopped, full, main)]
    assert n_fits[0] < n_fits[1] == n_fits[2] == 3 * len(levels)
    for chain, every in zip(stopped, full):
        for fit, refit in zip(chain, every):
            G, H = fit.decision_values(X_test), refit.decision_values(X_test)
            np.testing.assert_allclose(G, H, atol=1e-4 * np.abs(H).max())
    P = [_probability.shaped_probabilities(
        _probability.bracketed_ratios(own, chains, levels, X_test)) for chains in (stopped, full)]
    np.testing.assert_allclose(P[0], P[1], atol=1e-5)
    np.testing.assert_array_equal(own.classes_[P[0].argmax(axis=1)], own.predict(X_test))


@pytest.mark.parametrize("name", FAMILIES)
def test_chain_goes_on_while_the_class_weights_are_read(name, monkeypatch):
    """Where the up-weighted class keeps samples whose weights the path reads (two class-0
    outliers inside class 1, the weights grown only to 2 over the levels: still truncated or
    at their bounds), class 0's chain fits every level and every fit marks them."""
    monkeypatch.setattr(_probability, "REFIT_TOL_FACTOR", 1.0)
    X, y = _data(name, outliers=True)
    levels = _probability.probability_levels(4, smallest=0.5)
    _, chains = _chains(name, X, y, levels, kernel="linear")
    assert _probability._n_fits(chains[0]) == len(levels)
    for fit in chains[0]:
        assert fit._weight_bound_samples_[-2:].any()
        assert not _probability._settled(fit, y == 0)


def test_truncated_sample_is_read_though_off_its_moving_bounds():
    """A DC fit's truncated samples carry a weight-scaled shift: their variables sit at the
    zero bound of the shifted box (not a moving one), so the last solve alone would call the
    fit settled for them; the path marks them, and the fit is not settled there."""
    X, y = _data("RobustMSVM", outliers=True)
    est = msvm.RobustMSVM(C=1.0, warm_start=True)._join_path(keep_rows=True).fit(X, y)
    outliers = np.arange(len(y)) >= len(y) - 2
    assert est.truncated_[outliers].all()
    problem, alpha = est._solved_dual()
    assert not problem.at_moving_bounds(alpha)[outliers].any()
    assert est._weight_bound_samples_[outliers].all()
    assert not _probability._settled(est, outliers)


def test_weighed_samples_of_a_dc_step():
    """``weighed_samples``: the samples at a nonzero bound or a nonzero full cap, and those a
    DC step shifts; a zero cap (a weight-0 sample, a truncated group's shifted cap) does not
    move with the weight and marks nothing."""
    y = np.array([0, 1, 2, 0])
    problem = margin_problem(y, 3, np.array([1.0, 2.0, 0.0, 1.0]), np.eye(3))
    alpha = np.zeros(problem.n_vars)
    assert not weighed_samples(problem, alpha).any()       # sample 2: cap 0, sum 0
    alpha[problem.var_ptr[1]] = 2.0                         # sample 1's group at its cap
    shift = np.zeros(problem.n_vars)
    shift[problem.var_ptr[3]] = 1.0                         # sample 3 shifted
    np.testing.assert_array_equal(weighed_samples(problem, alpha, shift),
                                  [False, True, False, True])


def test_probability_fit_of_a_dc_model_makes_fewer_fits(monkeypatch):
    """The whole probability fit: fewer fits than with every level refitted, and its argmax
    is ``predict``."""
    X, y = _data("RobustMSVM")
    est = msvm.RobustMSVM(C=1.0, probability=True, probability_grid=4).fit(X, y)
    monkeypatch.setattr(_probability, "SETTLED_PATHS", False)
    main = msvm.RobustMSVM(C=1.0, probability=True, probability_grid=4).fit(X, y)
    assert est.n_probability_fits_ < main.n_probability_fits_
    np.testing.assert_array_equal(est.predict_proba(X).argmax(axis=1),
                                  np.searchsorted(est.classes_, est.predict(X)))


def test_targeted_refit_reuses_the_grid_points_it_would_not_move(monkeypatch):
    """A warm-started TargetedLocalMSVM refit whose weights grew only on one class takes the
    previous fit of every grid point where none of that class's samples sat at an upper
    bound (``n_iter_`` 0 there) and solves the others; its local functions are those of the
    refit that solves every grid point (REUSE_SETTLED_POINTS = False) to the solves'
    accuracy.  New labels (same shapes) or shrunk weights reuse nothing."""
    from msvm import targeted

    X, y = _data("TargetedLocalMSVM")
    heavier = np.where(y == 0, 30.0, 1.0)

    def refit(sample_weight, labels=y):
        est = msvm.TargetedLocalMSVM(C=1.0, tol=1e-6, warm_start=True)
        est.fit(X, y, sample_weight=np.where(y == 0, 10.0, 1.0))
        return est.fit(X, labels, sample_weight=sample_weight)

    reused = refit(heavier)
    assert 0 < np.sum(reused.n_iter_ == 0) < len(reused.n_iter_)
    monkeypatch.setattr(targeted, "REUSE_SETTLED_POINTS", False)
    solved = refit(heavier)
    assert np.all(solved.n_iter_ > 0)
    F, H = reused.local_functions(X), solved.local_functions(X)
    np.testing.assert_allclose(F, H, atol=1e-4 * np.abs(H).max())
    monkeypatch.setattr(targeted, "REUSE_SETTLED_POINTS", True)
    assert np.all(refit(np.where(y == 0, 5.0, 1.0)).n_iter_ > 0)          # weights shrank
    assert np.all(refit(heavier, labels=(y + 1) % 3).n_iter_ > 0)        # other labels
