"""A probability chain's weight levels as lean steps on one kept state (msvm/_level_chain.py).

``msvm._level_chain.LEAN_STEPS`` off restores a refit of the estimator at every level (main
10578f8): the probabilities, the number of fits and the shape of the estimate must be the
same bit for bit, for every model fitted by one convex solve and every kernel the lean
steps serve; the dual problem is built once per state, not once per level.
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone

import msvm
from msvm import _level_chain, _probability
from msvm._problem import margin_problem, pairwise_hinge_problem
from msvm.datasets import make_reinforced_example


class CappedMarginMSVM(msvm.WestonWatkinsMSVM):
    """A one-solve model whose dual has group caps: the generalized-margin hinge with the
    Weston-Watkins utility (a test model: its objective_ is not its loss's)."""

    def _dual_problem(self, y, k, weights):
        return margin_problem(y, k, weights, 1.0 - np.eye(k))


class RootWeightedMSVM(msvm.WestonWatkinsMSVM):
    """A one-solve model whose bounds are not C w_i times their value at unit weight (the
    state must then build the problem at every level)."""

    def _dual_problem(self, y, k, weights):
        return pairwise_hinge_problem(y, k, np.sqrt(weights))


CASES = [
    msvm.ReinforcedMSVM(C=1.0),
    msvm.ReinforcedMSVM(C=10.0, gamma="median"),
    msvm.ReinforcedMSVM(C=1.0, reinforcement=0.0, kernel="poly", degree=2),
    msvm.ReinforcedMSVM(C=1.0, class_weight="balanced"),
    msvm.WestonWatkinsMSVM(C=1.0),
    msvm.AngleBasedMSVM(C=3.0),
    CappedMarginMSVM(C=1.0),
    RootWeightedMSVM(C=1.0),
]


@pytest.fixture(scope="module")
def small():
    X, y = make_reinforced_example(90, "4.1.1", random_state=3)
    X_test, _ = make_reinforced_example(120, "4.1.1", random_state=8)
    return X, y, X_test


def _fit(estimator, X, y, lean, monkeypatch, **params):
    monkeypatch.setattr(_level_chain, "LEAN_STEPS", lean)
    est = clone(estimator).set_params(probability=True, probability_grid=4, **params)
    return est.fit(X, y)


@pytest.mark.parametrize("estimator", CASES, ids=lambda e: repr(e))
def test_lean_steps_give_the_refits_probabilities(estimator, small, monkeypatch):
    """The same probabilities bit for bit, the same fits and shape of the estimate."""
    X, y, X_test = small
    old = _fit(estimator, X, y, False, monkeypatch, random_state=0)
    new = _fit(estimator, X, y, True, monkeypatch, random_state=0)
    np.testing.assert_array_equal(new.predict_proba(X_test), old.predict_proba(X_test))
    assert new.n_probability_fits_ == old.n_probability_fits_
    for name in ("probability_C_factor_", "probability_exponent_", "probability_floor_"):
        assert getattr(new, name) == getattr(old, name), name
    for new_chain, old_chain in zip(new.probability_estimators_, old.probability_estimators_):
        for a, b in zip(new_chain, old_chain):
            np.testing.assert_array_equal(a.support_, b.support_)
            np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
            np.testing.assert_array_equal(a.intercept_, b.intercept_)
            assert a.converged_ == b.converged_


def test_sparse_inputs_give_the_refits_probabilities(small, monkeypatch):
    """CSR inputs (kernel rows from sparse X; the level fits keep sparse support vectors)."""
    import scipy.sparse as sp

    X, y, X_test = small
    X, X_test = sp.csr_matrix(X), sp.csr_matrix(X_test)
    probas = [_fit(msvm.WestonWatkinsMSVM(C=1.0), X, y, lean, monkeypatch,
                   random_state=0).predict_proba(X_test) for lean in (False, True)]
    np.testing.assert_array_equal(probas[1], probas[0])


def test_a_random_state_object_draws_the_same_seeds(small, monkeypatch):
    """A RandomState: every chain draws its levels' seeds from its own copy, as the refits
    did."""
    X, y, X_test = small
    probas = [_fit(msvm.ReinforcedMSVM(C=1.0), X, y, lean, monkeypatch,
                   random_state=np.random.RandomState(5)).predict_proba(X_test)
              for lean in (False, True)]
    np.testing.assert_array_equal(probas[1], probas[0])


def _counted_chains(monkeypatch, m, lean=True):
    """The chains of every class (ReinforcedMSVM, C = 10) by ``_task_chains`` at m levels,
    and the number of dual problems and row sources built."""
    from msvm import _base

    monkeypatch.setattr(_level_chain, "LEAN_STEPS", lean)
    X, y = make_reinforced_example(120, random_state=5)
    est = msvm.ReinforcedMSVM(C=10.0, gamma="median").fit(X, y)
    refit = _probability._refit_template(
        clone(est).set_params(warm_start=True, C=est.C_, gamma=est.gamma_), 1.0)
    built, sources = [], []
    real_problem = msvm.ReinforcedMSVM._dual_problem
    monkeypatch.setattr(msvm.ReinforcedMSVM, "_dual_problem",
                        lambda *a: built.append(1) or real_problem(*a))
    real = _base.make_row_source            # the lean steps' state's source too
    monkeypatch.setattr(_base, "make_row_source",
                        lambda *a, **k: sources.append(1) or real(*a, **k))
    monkeypatch.setattr(_probability, "SETTLED_CHAINS", False)     # every level fitted
    chains = _probability._task_chains(refit, est, X, y, np.ones(len(y)),
                                       _probability.probability_levels(m), est.classes_)
    assert len(chains) == 3 and all(len(chain) == m for chain in chains)
    return len(built), len(sources)


def test_the_problem_is_built_once_per_state(monkeypatch):
    """The chains of a group (3 classes) build their dual problem once, with the bounds at
    unit weight and one check of the bounds set in place against the model's builder: 3
    problems whatever the number of levels (a refit per level built one per level), and
    one row source."""
    assert _counted_chains(monkeypatch, 4) == (3, 1)
    assert _counted_chains(monkeypatch, 8) == (3, 1)
    monkeypatch.undo()
    assert _counted_chains(monkeypatch, 8, lean=False) == (3 * 8, 1)


def test_the_rule_of_the_lean_steps():
    """Lean steps for one-solve models on kernel rows computed in the core; the refits
    elsewhere (explicit features, a Gram matrix from outside, a DC model, Dask input)."""
    X = np.zeros((4, 2))
    assert _level_chain.applies(msvm.ReinforcedMSVM(), X)
    assert _level_chain.applies(msvm.WestonWatkinsMSVM(kernel="poly"), X)
    assert _level_chain.applies(msvm.AngleBasedMSVM(), X)
    assert not _level_chain.applies(msvm.ReinforcedMSVM(kernel="linear"), X)
    assert not _level_chain.applies(msvm.ReinforcedMSVM(kernel="precomputed"), X)
    assert not _level_chain.applies(msvm.ReinforcedMSVM(kernel=lambda A, B: A @ B.T), X)
    assert not _level_chain.applies(msvm.ReinforcedMSVM(kernel_approximation="rff"), X)
    assert not _level_chain.applies(msvm.RobustMSVM(), X)
    assert not _level_chain.applies(msvm.AdaptiveWeightedSVM(), X)
    assert not _level_chain.applies(msvm.TargetedLocalMSVM(), X)


def test_bounds_that_do_not_scale_are_built_at_every_level(small, monkeypatch):
    """Where the model's bounds are not C w_i times their value at unit weight, the state
    builds the problem at every level (and the probabilities are the refits')."""
    X, y, _ = small
    calls = []
    real = RootWeightedMSVM._dual_problem
    monkeypatch.setattr(RootWeightedMSVM, "_dual_problem",
                        lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(_probability, "SETTLED_CHAINS", False)
    est = _fit(RootWeightedMSVM(C=1.0), X, y, True, monkeypatch, random_state=0)
    fitted = len({id(fit) for chain in est.probability_estimators_ for fit in chain})
    assert len(calls) > fitted


def test_level_fits_hold_what_is_read_and_pickle(small):
    """A level's fit holds its support, dual coefficients, support vectors and intercepts
    (what the bracketing and predict_proba read), not an objective, a duality gap, alpha_
    or a kept row source; a pickled estimator predicts the same probabilities."""
    X, y, X_test = small
    est = msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    m = len(est.probability_grid_)
    for chain in est.probability_estimators_:
        for fit in chain[:m]:       # (a chain at 3 C ends with its top fit, a full fit)
            assert fit.support_vectors_.shape == (len(fit.support_), X.shape[1])
            assert fit.dual_coef_.shape == (3, len(fit.support_))
            assert fit.intercept_.shape == (3,) and fit.converged_
            for name in ("objective_", "duality_gap_", "alpha_", "_row_state",
                         "_warm_state", "_checked_input", "_plan_overrides"):
                assert not hasattr(fit, name), name
            np.testing.assert_allclose(fit.decision_values(X_test).sum(axis=1), 0.0,
                                       atol=1e-9)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X_test), est.predict_proba(X_test))
