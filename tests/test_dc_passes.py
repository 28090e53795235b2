"""A DC step's passes over the variables compiled (msvm/_core/_dc_pass.pyx): the
linearization and its truncated samples (``msvm._dc.COMPILED_DC_PASSES``, the models'
``_dc_shift``), the samples whose weights a solve read (the same switch,
``weighed_samples`` / ``mark_weighed``), the models' loss of each sample
(``COMPILED_DC_LOSSES``); WeightedRobustMSVM's steps on the lean snapshot
(``KKT_STEP_SOLUTIONS``), the converged solves' duality gaps deferred
(``DEFERRED_START_GAPS``), a chain refit's first solve a lean solve
(``LEAN_LEVEL_STARTS``) and the chain's inner solver found once (``KEPT_INNER_SOLVER``).

Each pass against the NumPy step it replaces, at decision values with ties, infinities,
signed zeros and NaN; the fits and probabilities with every switch on against every switch
off (main c94be25), bit for bit; argmax = predict; pickling; the passes poll the signal
handlers.
"""

import pickle
import warnings

import numpy as np
import pytest
from test_dc_lean_steps import _data
from test_dc_lean_steps import _models as lean_step_models

import msvm
from msvm import _dc
from msvm._core._dc_pass import sample_losses, truncation_shift, weighed_marks
from msvm._losses import truncated_hinge_loss, utility_margin_loss

SWITCHES = ("COMPILED_DC_PASSES", "COMPILED_DC_LOSSES", "KKT_STEP_SOLUTIONS",
            "DEFERRED_START_GAPS", "LEAN_LEVEL_STARTS", "KEPT_INNER_SOLVER")
ATTRIBUTES = ("dual_coef_", "intercept_", "objective_", "duality_gap_", "truncated_",
              "dc_objectives_", "n_iter_", "support_", "alpha_")


def _switches(monkeypatch, on):
    for name in SWITCHES:
        monkeypatch.setattr(_dc, name, on)


def _values(rng, n, k, kind):
    """Decision values: plain, with ties (small integers, a tied and a constant row), with
    infinities and signed zeros, or with a NaN."""
    G = rng.normal(size=(n, k)) * 2.0
    if kind == "ties":
        G = rng.integers(-2, 3, (n, k)).astype(float)
        G[0] = 0.0
        G[1, :2] = G[1].max()
    elif kind == "extremes":
        G[rng.random((n, k)) < 0.15] = np.inf
        G[rng.random((n, k)) < 0.15] = -np.inf
        G[rng.random((n, k)) < 0.15] = -0.0
    elif kind == "nan":
        G[rng.random((n, k)) < 0.1] = np.nan
    return G


def _model(name, k):
    est = getattr(msvm, name)()
    est.classes_ = np.arange(k)
    if name == "WeightedRobustMSVM":
        est._prepare_dual(k)
    return est


KINDS = ("plain", "ties", "extremes", "nan")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [2, 3, 5])
def test_sample_losses_are_numpy_s(kind, k):
    """The per-sample loss of both forms is msvm._losses' bit for bit (signed zeros too),
    with and without truncation; a NaN in the margin form is left to NumPy (None)."""
    rng = np.random.default_rng(k)
    G, y = _values(rng, 60, k, kind), rng.integers(0, k, 60)
    U = rng.uniform(0.0, 2.0, (k, k))
    with np.errstate(all="ignore"):
        for s in (None, 0.5, -0.25):
            want = truncated_hinge_loss(G, y, s)
            got = sample_losses(G, y, s)
            assert np.array_equal(got, want, equal_nan=True)
            assert np.array_equal(np.signbit(got), np.signbit(want))
            got = sample_losses(G, y, s, U)
            if kind == "nan":
                assert got is None
            else:
                assert np.array_equal(got, utility_margin_loss(G, y, U, s), equal_nan=True)


def test_sample_losses_leave_what_numpy_decides():
    """Labels outside the classes and k >= 8 go to NumPy (None); a strided G is read."""
    rng = np.random.default_rng(0)
    G = rng.normal(size=(10, 3))
    assert sample_losses(G, np.full(10, 3), 0.5) is None
    assert sample_losses(rng.normal(size=(10, 8)), np.zeros(10, int), 0.5) is None
    wide = rng.normal(size=(10, 6))[:, ::2]
    y = rng.integers(0, 3, 10)
    assert np.array_equal(sample_losses(wide, y, 0.5), truncated_hinge_loss(wide, y, 0.5))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [2, 3, 5])
@pytest.mark.parametrize("name", ["RobustMSVM", "WeightedRobustMSVM"])
def test_linearization_is_numpy_s(name, k, kind, monkeypatch):
    """The model's linearization (shift and truncated mask) with the compiled pass is its
    NumPy step's, bit for bit."""
    rng = np.random.default_rng(k)
    n = 50
    G, y = _values(rng, n, k, kind), rng.integers(0, k, n)
    est = _model(name, k)
    problem = est._dual_problem(y, k, rng.uniform(0.5, 2.0, n))
    monkeypatch.setattr(_dc, "COMPILED_DC_PASSES", False)
    with np.errstate(all="ignore"):
        want = est._dc_shift(problem, G, y)
    monkeypatch.setattr(_dc, "COMPILED_DC_PASSES", True)
    got = est._dc_shift(problem, G, y)
    for a, b in zip(got, want):
        assert np.array_equal(a, b)
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", ["RobustMSVM", "WeightedRobustMSVM"])
def test_weighed_marks_are_numpy_s(name, seed, monkeypatch):
    """The marks (a variable at a moving bound, a group at its cap, a shifted variable) are
    ``at_moving_bounds`` | ``samples_with(shift != 0)``; ``mark_weighed`` ors them in."""
    rng = np.random.default_rng(seed)
    n, k = 40, 3
    y = rng.integers(0, k, n)
    est = _model(name, k)
    problem = est._dual_problem(y, k, rng.uniform(0.5, 2.0, n))
    alpha = problem.clip_feasible(rng.uniform(-1.0, 3.0, problem.n_vars))
    alpha[rng.random(problem.n_vars) < 0.3] = 0.0
    shift = est._dc_shift(problem, _values(rng, n, k, "plain"), y)[0]
    for sh in (None, shift):
        want = problem.at_moving_bounds(alpha)
        if sh is not None:
            want |= problem.samples_with(sh != 0)
        assert want.any() and not want.all()
        assert np.array_equal(_dc.weighed_samples(problem, alpha, sh), want)
        marks = np.zeros(n, dtype=bool)
        marks[:3] = True
        _dc.mark_weighed(marks, problem, alpha, sh)
        assert np.array_equal(marks, want | (np.arange(n) < 3))
        monkeypatch.setattr(_dc, "COMPILED_DC_PASSES", False)
        assert np.array_equal(_dc.weighed_samples(problem, alpha, sh), want)
        monkeypatch.setattr(_dc, "COMPILED_DC_PASSES", True)


def test_margin_form_refuses_variables_without_groups():
    """The margin form needs every variable's group and second slot: a problem without
    groups is left to NumPy (None)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 20)
    problem = _model("RobustMSVM", 3)._dual_problem(y, 3, np.ones(20))
    assert truncation_shift(problem, rng.normal(size=(20, 3)), 0.0, True) is None


def _fit(est, X, y, sw, on, monkeypatch, **params):
    _switches(monkeypatch, on)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.set_params(**params).fit(X, y, sample_weight=sw)


@pytest.mark.parametrize("index", range(4))
@pytest.mark.parametrize("truncation", ["auto", None])
def test_fit_the_same(index, truncation, monkeypatch):
    """A DC fit (and the untruncated fit) with every switch on is main's bit for bit, its
    duality gap included."""
    X, y, sw = _data(index)
    params = {"truncation": truncation if truncation is None else
              lean_step_models()[index].truncation}
    new = _fit(lean_step_models()[index], X, y, sw, True, monkeypatch, **params)
    old = _fit(lean_step_models()[index], X, y, sw, False, monkeypatch, **params)
    for name in ATTRIBUTES:
        assert np.array_equal(getattr(new, name), getattr(old, name)), name
    assert np.isfinite(new.duality_gap_)


@pytest.mark.parametrize("index", range(4))
def test_probabilities_the_same(index, monkeypatch):
    """The probability fit with every switch on is main's bit for bit (probabilities, the
    level fits' objectives and gaps); argmax = ``predict``; it pickles and predicts the
    same loaded."""
    X, y, sw = _data(index, n=90)
    X_test = np.vstack([X, X[::3] + 0.3])
    params = {"probability": True, "probability_grid": 4}
    new = _fit(lean_step_models()[index], X, y, sw, True, monkeypatch, **params)
    old = _fit(lean_step_models()[index], X, y, sw, False, monkeypatch, **params)
    proba = new.predict_proba(X_test)
    assert np.array_equal(proba, old.predict_proba(X_test))
    assert np.array_equal(np.argmax(proba, axis=1),
                          np.searchsorted(new.classes_, new.predict(X_test)))
    assert new.n_probability_fits_ == old.n_probability_fits_
    for chain_new, chain_old in zip(new.probability_estimators_, old.probability_estimators_):
        for fit_new, fit_old in zip(chain_new, chain_old):
            assert fit_new.objective_ == fit_old.objective_
            assert np.array_equal(fit_new.duality_gap_, fit_old.duality_gap_)
    loaded = pickle.loads(pickle.dumps(new))
    assert np.array_equal(loaded.predict_proba(X_test), proba)


def test_start_gap_deferred_only_when_converged(monkeypatch):
    """With ``DEFERRED_START_GAPS`` the untruncated start's snapshot leaves its gap to
    ``with_gap`` (formed once, where read); a solve that stopped early forms it at once."""
    X, y, sw = _data(0)
    seen = []
    real = _dc.step_solution

    def spy(*args, **kwargs):
        sol = real(*args, **kwargs)
        seen.append((kwargs.get("sequence") is not None, np.isnan(sol.gap),
                     hasattr(sol, "gap_inputs")))
        return sol

    monkeypatch.setattr(_dc, "step_solution", spy)
    _fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw, True, monkeypatch)
    assert seen and all(nan == kept for _, nan, kept in seen)
    assert seen[0][1]               # the start's gap deferred
    seen.clear()
    est = _fit(msvm.RobustMSVM(C=1.0, random_state=0), X, y, sw, True, monkeypatch,
               max_iter=1)
    assert seen and not seen[0][1]  # stopped at max_iter: formed at once
    assert np.isfinite(est.duality_gap_)


def test_passes_stay_interruptible():
    """The compiled passes poll Python's signal handlers: a signal during a long call
    interrupts it from inside (its frame in the traceback), as Ctrl-C would.  The inputs
    are large enough for several checks a call (one every CHECK_WORK units of work); a
    signal due after a call's last check is handled between calls, so up to 5 tries."""
    from _signals import Alarm, alarm_after

    from msvm._problem import margin_problem

    rng = np.random.default_rng(0)
    n, k = 150_000, 5
    y = rng.integers(0, k, n)
    problem = margin_problem(y, k, np.ones(n), np.ones((k, k)))
    G = rng.normal(size=(n, k))
    alpha = np.zeros(problem.n_vars)
    marks = np.zeros(n, dtype=np.uint8)
    G_long = rng.normal(size=(8 * n, k))
    y_long = rng.integers(0, k, 8 * n)
    calls = {"truncation_shift": lambda: truncation_shift(problem, G, -0.5, True),
             "weighed_marks": lambda: weighed_marks(problem, alpha, None, marks),
             "sample_losses": lambda: sample_losses(G_long, y_long, -0.5, np.eye(k))}
    for name, call in calls.items():
        inside = False
        for _ in range(5):      # a signal due after a call's last check lands between calls
            with pytest.raises(Alarm) as caught:
                with alarm_after(0.002, clock="cpu"):
                    for _ in range(200):
                        call()
            inside = any(entry.name.endswith(name) for entry in caught.traceback)
            if inside:
                break
        assert inside, name


def _counted_switch(index, switch, owner, name, monkeypatch):
    """Probability fits of model ``index`` with every switch of the round on and ``switch``
    on, then off, checked for the same probabilities; the calls of ``owner.name`` counted
    per side, and what they returned.  Returns (fits, calls, results)."""
    X, y, sw = _data(index, n=90)
    calls, results, side = {True: 0, False: 0}, [], [True]
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        calls[side[0]] += 1
        results.append(real(*args, **kwargs))
        return results[-1]

    monkeypatch.setattr(owner, name, counted)
    _switches(monkeypatch, True)
    fits = {}
    for on in (True, False):
        side[0] = on
        monkeypatch.setattr(_dc, switch, on)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits[on] = lean_step_models()[index].set_params(
                probability=True, probability_grid=4).fit(X, y, sample_weight=sw)
    assert np.array_equal(fits[True].predict_proba(X), fits[False].predict_proba(X))
    return fits, calls, results


@pytest.mark.parametrize("index", [0, 2])
def test_chain_refits_start_lean(index, monkeypatch):
    """With ``LEAN_LEVEL_STARTS`` a chain refit's first solve is a lean solve (no
    ``DualSequence.solve``) wherever it is warm-started on the chain's plan, with the
    probabilities of ``DualSequence.solve`` (switch off) bit for bit; the fits outside the
    chains (the own and top fits) keep ``DualSequence.solve``."""
    from msvm import _sequence

    fits, calls, _ = _counted_switch(index, "LEAN_LEVEL_STARTS", _sequence.DualSequence,
                                     "solve", monkeypatch)
    assert 0 < calls[True] < calls[False] - fits[True].n_probability_fits_ // 2


@pytest.mark.parametrize("index", [0, 2])
def test_chain_inner_solver_found_once(index, monkeypatch):
    """With ``KEPT_INNER_SOLVER`` a chain's refits find their inner solver once per chain
    (a kept choice is the one found afresh), not at every refit's first solve and step;
    the probabilities are the same bit for bit; the kept choice is transient (not
    pickled)."""
    from msvm import _plan

    fits, calls, choices = _counted_switch(index, "KEPT_INNER_SOLVER", _plan.SolvePlan,
                                           "inner_solver", monkeypatch)
    assert calls[True] < calls[False] - fits[True].n_probability_fits_
    assert len(set(choices)) == 1
    for chain in fits[True].probability_estimators_:
        for fit in chain:
            assert "_dc_inner" not in fit.__dict__
    assert "_dc_inner" not in pickle.loads(pickle.dumps(fits[True])).__dict__
