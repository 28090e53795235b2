"""A DC fit reads again the values it has formed (``msvm._dc.DC_KEPT_VALUES``): the
returned solution's objective (``KeptDCObjective``: ``_store_solution`` reads the DC loop's
last entry), its truncated mask (from the loop's last linearization where it was read at
that solution) and the identity output map of the lean snapshot (made once per k); and
WeightedRobustMSVM's linearization from each sample's two largest decision values
(``msvm.weighted.SAMPLE_MARGINS_SHIFT``).

Checked against the switch off (main ebff6f7) on RobustMSVM and WeightedRobustMSVM with
class and sample weights: the probabilities, the argmax, the fitted attributes the same bit
for bit; fewer objectives and linearizations formed; the estimators pickle.
"""

import pickle
import warnings

import numpy as np
import pytest
from test_dc_lean_steps import _data
from test_dc_lean_steps import _models as lean_step_models

import msvm
from msvm import _base, _dc, weighted

ATTRIBUTES = ("dual_coef_", "intercept_", "objective_", "duality_gap_", "truncated_",
              "dc_objectives_", "n_iter_")


def _counted_fit(est, X, y, sw, kept, monkeypatch, **params):
    """``est`` fitted with ``DC_KEPT_VALUES`` and ``SAMPLE_MARGINS_SHIFT`` = ``kept``, and
    how many objectives (``BaseMSVM._objective``) and linearizations (the model's
    ``_dc_shift``) it formed."""
    monkeypatch.setattr(_dc, "DC_KEPT_VALUES", kept)
    monkeypatch.setattr(weighted, "SAMPLE_MARGINS_SHIFT", kept)
    counts = {"objective": 0, "linearization": 0}
    real_objective, cls = _base.BaseMSVM._objective, type(est)
    real_shift = cls._dc_shift

    def objective(self, *args):
        counts["objective"] += 1
        return real_objective(self, *args)

    def shift(self, *args):
        counts["linearization"] += 1
        return real_shift(self, *args)

    monkeypatch.setattr(_base.BaseMSVM, "_objective", objective)
    monkeypatch.setattr(cls, "_dc_shift", shift)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = est.set_params(**params).fit(X, y, sample_weight=sw)
    monkeypatch.setattr(_base.BaseMSVM, "_objective", real_objective)
    monkeypatch.setattr(cls, "_dc_shift", real_shift)
    return est, counts


def _assert_same_fit(new, old):
    for name in ATTRIBUTES:
        assert np.array_equal(getattr(new, name), getattr(old, name)), name


@pytest.mark.parametrize("index", range(4))
def test_fit_the_same_with_fewer_objectives(index, monkeypatch):
    """A DC fit is main's bit for bit; its objective is formed once less (the stored
    ``objective_`` is the loop's last entry) and its linearizations no more often."""
    X, y, sw = _data(index)
    new, new_counts = _counted_fit(lean_step_models()[index], X, y, sw, True, monkeypatch)
    old, old_counts = _counted_fit(lean_step_models()[index], X, y, sw, False, monkeypatch)
    _assert_same_fit(new, old)
    assert new.objective_ == new.dc_objectives_[-1]
    assert new_counts["objective"] == old_counts["objective"] - 1
    assert new_counts["linearization"] <= old_counts["linearization"]


@pytest.mark.parametrize("index", range(4))
def test_probabilities_the_same(index, monkeypatch):
    """The probability fit is main's bit for bit (probabilities, argmax = ``predict``, the
    level fits' objectives), with fewer objectives formed; it pickles and predicts the same
    loaded."""
    X, y, sw = _data(index)
    X_test = np.vstack([X, X[::3] + 0.3])
    params = {"probability": True, "probability_grid": 4}
    new, new_counts = _counted_fit(lean_step_models()[index], X, y, sw, True, monkeypatch,
                                   **params)
    old, old_counts = _counted_fit(lean_step_models()[index], X, y, sw, False, monkeypatch,
                                   **params)
    proba = new.predict_proba(X_test)
    assert np.array_equal(proba, old.predict_proba(X_test))
    assert np.array_equal(np.argmax(proba, axis=1),
                          np.searchsorted(new.classes_, new.predict(X_test)))
    _assert_same_fit(new, old)
    for chain_new, chain_old in zip(new.probability_estimators_, old.probability_estimators_):
        for fit_new, fit_old in zip(chain_new, chain_old):
            assert fit_new.objective_ == fit_old.objective_
            assert np.array_equal(fit_new.truncated_, fit_old.truncated_)
    assert new_counts["objective"] < old_counts["objective"]
    assert new_counts["linearization"] <= old_counts["linearization"]
    loaded = pickle.loads(pickle.dumps(new))
    assert np.array_equal(loaded.predict_proba(X_test), proba)


def test_kept_objective_only_for_the_same_arrays():
    """``KeptDCObjective`` reads the kept value only for the arrays it was formed with;
    for others (or without one) the objective is formed."""
    X, y, sw = _data(0)
    est = msvm.RobustMSVM(C=1.0, random_state=0).fit(X, y, sample_weight=sw)
    problem = est._dual_problem(y, 3, est.C_ * sw)
    sol = _dc._Solution(problem=problem, alpha=np.zeros(problem.n_vars), mu=np.zeros(3),
                        n_iter=0, resid=0.0, V=None, W=None, intercept=np.zeros(3),
                        G=est.decision_function(X), penalty=1.0)
    formed = _base.BaseMSVM._objective(est, sol, y, sw)
    _dc.keep_objective(sol, y, sw, -1.0)
    assert est._objective(sol, y, sw) == -1.0
    assert est._objective(sol, y.copy(), sw) == formed
    assert est._objective(sol, y, sw.copy()) == formed


def test_identity_made_once_and_read_only(monkeypatch):
    """The lean snapshot's identity output map is one read-only array per k with the
    switch on, a new one off; the same values either way."""
    a, b = _dc._identity(4), _dc._identity(4)
    assert a is b and not a.flags.writeable
    assert np.array_equal(a, np.eye(4))
    monkeypatch.setattr(_dc, "DC_KEPT_VALUES", False)
    c = _dc._identity(4)
    assert c is not a and c.flags.writeable and np.array_equal(c, a)


def _ties(rng, n, k):
    """Decision values with ties: small integers, a tied row, a constant row."""
    G = rng.integers(-2, 3, (n, k)).astype(float)
    G[0] = 0.0
    G[1, :2] = G[1].max()
    return G


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [2, 3, 5])
def test_sample_margins_shift_is_main_s(seed, k, monkeypatch):
    """WeightedRobustMSVM's linearization is main's (the shift and the truncated mask)
    with ``SAMPLE_MARGINS_SHIFT``, at decision values with ties and without, for several
    truncations and a utility matrix."""
    rng = np.random.default_rng(seed)
    n = 40
    y = np.arange(n) % k
    utility = np.eye(k) + 0.5 * (1 - np.eye(k))
    for truncation in ("auto", 0.0, -0.5):
        est = msvm.WeightedRobustMSVM(C=1.0, truncation=truncation, utility=utility)
        est.classes_ = np.arange(k)
        est._prepare_dual(k)
        problem = est._dual_problem(y, k, rng.uniform(0.5, 2.0, n))
        for G in (rng.normal(size=(n, k)), _ties(rng, n, k)):
            out = []
            for flag in (False, True):
                monkeypatch.setattr(weighted, "SAMPLE_MARGINS_SHIFT", flag)
                out.append(est._dc_shift(problem, G, y))
            assert np.array_equal(out[0][0], out[1][0])
            assert np.array_equal(out[0][1], out[1][1])
