"""The DC steps as lean solves on the kept sequence (msvm/_dc.py ``LEAN_DC_LOOP``) and the
scores moved by one compiled pass (msvm/_sequence.py ``COMPILED_MOVES``).

Both give the values of the steps they replace, so the fits and the probabilities are the
same bit for bit: checked against main 5c4386a's steps (both switches off) over the DC
models with class and sample weights and with and without an integer random_state, with the
marks that the settled rule reads (``_weight_bound_samples_``), where the lean steps do not
apply (a Gram matrix from outside, explicit features), with a solve stopped early, after
pickling, and with a fit interrupted by a signal.
"""

import pickle
import signal
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.validation import check_is_fitted

import msvm
from msvm import _dc, _sequence
from _signals import Alarm, alarm_after
from test_dc_lean_steps import _data


def _models():
    return [msvm.RobustMSVM(C=1.0, random_state=0),
            msvm.RobustMSVM(C=1.0, class_weight="balanced"),
            msvm.WeightedRobustMSVM(C=1.0, random_state=0),
            msvm.WeightedRobustMSVM(C=1.0, truncation=0, random_state=0,
                                    class_weight={0: 2.0, 1: 1.0, 2: 0.5})]


def _switched(monkeypatch, lean):
    monkeypatch.setattr(_dc, "LEAN_DC_LOOP", lean)
    monkeypatch.setattr(_sequence, "COMPILED_MOVES", lean)


def _probability_fit(est, X, y, sw, lean, monkeypatch):
    _switched(monkeypatch, lean)
    return est.set_params(probability=True, probability_grid=4).fit(X, y, sample_weight=sw)


def _counted(monkeypatch, owner, name):
    """Wrap ``owner.name`` to count its calls; returns the list of calls."""
    calls, real = [], getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("index", range(4))
def test_probability_fit_is_mains(index, monkeypatch):
    """The probability fit with the lean DC steps and with main's, without an integer
    random_state (a seed drawn at every refit, the penalty kept): the same probabilities,
    fits made and settled marks, bit for bit (class and sample weights).  With an integer
    random_state: ``test_dc_lean_steps.test_probability_fit_is_the_refits``."""
    X, y, sw = _data(index)
    fits = [_probability_fit(_models()[index].set_params(random_state=None), X, y, sw, lean,
                             monkeypatch) for lean in (False, True)]
    assert np.array_equal(fits[0].predict_proba(X[::2] - 0.2), fits[1].predict_proba(X[::2] - 0.2))
    assert fits[0].n_probability_fits_ == fits[1].n_probability_fits_
    marks = [[fit._weight_bound_samples_ for chain in est.probability_estimators_
              for fit in chain] for est in fits]
    assert len(marks[0]) == len(marks[1])
    assert all(np.array_equal(a, b) for a, b in zip(*marks))


def test_lean_steps_and_compiled_moves_run(monkeypatch):
    """The lean solves and the compiled moves are on the path of a DC probability fit (and
    not with the switches off)."""
    X, y, sw = _data(4)
    for lean in (False, True):
        lean_solves = _counted(monkeypatch, _dc._SequenceSteps, "_lean_solve")
        moves = _counted(monkeypatch, _sequence, "moved_scores")
        _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw, lean, monkeypatch)
        assert (len(lean_solves) > 0) == lean and (len(moves) > 0) == lean
        monkeypatch.undo()


@pytest.mark.parametrize("kernel", ["precomputed", "linear"])
def test_where_lean_steps_do_not_apply(kernel, monkeypatch):
    """A Gram matrix from outside and explicit features keep ``DualSequence.solve`` for
    every step, with the same probabilities as main's steps."""
    X, y, sw = _data(7, n=90)
    sw[::9] = 0.0
    if kernel == "precomputed":
        X = np.exp(-0.1 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
    lean_solves = _counted(monkeypatch, _dc._SequenceSteps, "_lean_solve")
    fits = [_probability_fit(msvm.RobustMSVM(C=1.0, kernel=kernel, random_state=0), X, y, sw,
                             lean, monkeypatch) for lean in (False, True)]
    assert not lean_solves
    assert np.array_equal(fits[0].predict_proba(X), fits[1].predict_proba(X))


def test_step_stopped_early_warns(monkeypatch):
    """A lean step stopped by max_iter raises the ConvergenceWarning of main's step, and the
    fit is main's."""
    X, y, sw = _data(8)
    fits = []
    for lean in (False, True):
        _switched(monkeypatch, lean)
        with pytest.warns(ConvergenceWarning, match="max_iter"):
            fits.append(msvm.RobustMSVM(C=10.0, max_iter=2, random_state=0).fit(
                X, y, sample_weight=sw))
    assert np.array_equal(fits[0].dc_objectives_, fits[1].dc_objectives_)
    assert np.array_equal(fits[0].decision_function(X), fits[1].decision_function(X))


def test_pickled_fit_refits_as_mains(monkeypatch):
    """A probability fit made with the lean steps pickles without a chain's kept state; the
    loaded estimator, fitted again with main's steps, gives the probabilities of the lean
    fit (nothing of the lean path's state travels with it)."""
    X, y, sw = _data(6)
    lean = _probability_fit(msvm.WeightedRobustMSVM(C=1.0, random_state=0), X, y, sw, True,
                            monkeypatch)
    loaded = pickle.loads(pickle.dumps(lean))
    assert not hasattr(loaded, "_kept_dual")
    expected = lean.predict_proba(X)
    assert np.array_equal(loaded.predict_proba(X), expected)
    refitted = _probability_fit(loaded, X, y, sw, False, monkeypatch)
    assert np.array_equal(refitted.predict_proba(X), expected)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX interval timers")
def test_interrupted_probability_fit(monkeypatch):
    """A signal stops a DC probability fit on the lean path (the compiled passes poll the
    signal handlers) and leaves the estimator unfitted; a fit afterwards is main's."""
    X, y = make_blobs(600, centers=4, cluster_std=2.5, random_state=1)
    _switched(monkeypatch, True)
    est = msvm.RobustMSVM(C=1.0, probability=True, random_state=0)
    with pytest.raises(Alarm), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with alarm_after(0.1, clock="cpu"):
            est.fit(X, y)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    Xs, ys, sw = _data(9, n=90)
    after = _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), Xs, ys, sw, True,
                             monkeypatch)
    before = _probability_fit(msvm.RobustMSVM(C=1.0, random_state=0), Xs, ys, sw, False,
                              monkeypatch)
    assert np.array_equal(after.predict_proba(Xs), before.predict_proba(Xs))
