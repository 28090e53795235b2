"""The compiled level step of the probability chains (msvm/_core/_level_loop.pyx).

``level_tail`` and ``moved_scores`` against the Python they replace (the same values, bit
for bit), on random dual problems (one-slot and two-slot directions, group caps, shifted
lower bounds, the angle-based metric) and on the solutions of probability chains; and the
probability fit with ``COMPILED_LEVELS`` on and off: the same probabilities, fits and
level attributes, over estimators, kernels, C, class and sample weights.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import msvm
from msvm import _level_chain, _probability
from msvm._core._level_loop import level_tail, moved_scores
from msvm._problem import DualProblem
from msvm._sequence import ROUNDING
from msvm._snapshot import centre_and_scale_in_place, exact_intercepts_in_place


def _problem(seed, structure, k=None):
    """A random dual: 'slots' (one-slot directions, some shifted lower bounds), 'angle' (the
    same, kappa = k / (k - 1)) or 'groups' (directions e_j - e_y with group caps); ``k``
    classes (default: 2 to 5)."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(8, 40)), int(rng.integers(2, 6)) if k is None else k
    y = rng.integers(0, k, n)
    w = rng.uniform(0.2, 2.0, n)
    cols = {name: [] for name in ("slot1", "coef1", "slot2", "coef2", "lin", "lo", "hi",
                                  "group")}
    ptr, cap = [0], []
    for i in range(n):
        for j in range(k):
            own = j == y[i]
            if structure == "groups":
                if own:
                    continue
                row = (j, 1.0, int(y[i]), -1.0, 1.0, 0.0, w[i], i)
            else:
                hi = w[i] * (0.6 if own else 0.4)
                lo = hi * rng.uniform(0, 0.5) if rng.uniform() < 0.2 else 0.0
                row = (j, -1.0 if own else 1.0, -1, 0.0, k - 1.0 if own else 1.0, lo, hi, -1)
            for name, value in zip(cols, row):
                cols[name].append(value)
        if structure == "groups":
            cap.append(w[i] * rng.uniform(0.3, 1.5))
        ptr.append(len(cols["lin"]))
    problem = DualProblem(k=k, var_ptr=ptr, cap=np.array(cap),
                          kappa=k / (k - 1.0) if structure == "angle" else 1.0,
                          equality=True, **cols)
    return problem, y


def _alpha(problem, rng):
    """A dual point with variables at 0, at either bound and inside the box, and some
    groups at their caps."""
    lo, hi = problem.expanded_bounds()
    pick = rng.integers(0, 4, problem.n_vars)
    alpha = np.where(pick == 0, 0.0, np.where(pick == 1, hi, np.where(
        pick == 2, lo, lo + (hi - lo) * rng.uniform(size=problem.n_vars))))
    alpha = np.maximum(alpha, lo)
    if len(problem.cap):
        group = problem.expand("group")
        sums = np.bincount(group, weights=alpha, minlength=len(problem.cap))
        full = rng.uniform(size=len(problem.cap)) < 0.5
        scale = np.where(sums > 0, np.where(full, problem.cap, np.minimum(
            problem.cap, sums)) / np.where(sums > 0, sums, 1.0), 1.0)
        alpha = alpha * scale[group]
    return alpha


def _python_tail(problem, alpha, F, b0, exact, is_label):
    """What the Python level step forms: exact intercepts (or None), V, support, settled."""
    b = (exact_intercepts_in_place(problem, np.array(F, order="C"), b0)[1] if exact
         else None)
    V = centre_and_scale_in_place(problem.slot_sums(alpha), problem.kappa)
    settled = not np.any(problem.at_moving_bounds(alpha)[is_label])
    return b, V, problem.support_mask(alpha), settled


@pytest.mark.parametrize("structure", ["slots", "angle", "groups"])
@pytest.mark.parametrize("seed", range(6))
def test_level_tail_is_the_python_step(structure, seed):
    problem, y = _problem(seed, structure)
    rng = np.random.default_rng(100 + seed)
    alpha = _alpha(problem, rng)
    # scores of any values (the tail reads them; slot-major, as the row source holds them)
    F = np.ascontiguousarray(rng.normal(size=(problem.k, problem.n_samples))).T
    b0 = rng.normal(size=problem.k)
    b0 -= b0.mean()
    is_label = y == 0
    exact = structure != "groups"
    b, V, support, settled = level_tail(problem, alpha, F, b0, exact, is_label.view(np.uint8))
    b_ref, V_ref, support_ref, settled_ref = _python_tail(problem, alpha, F, b0, exact,
                                                          is_label)
    assert np.array_equal(V, V_ref)
    assert np.array_equal(support, support_ref)
    assert settled == settled_ref
    if exact:
        assert b is not None and np.array_equal(b, b_ref)
    else:
        assert b is None


@pytest.mark.parametrize("k", [7, 8, 10, 17, 26, 130, 300])
def test_level_tail_coefficients_at_many_classes(k):
    """V's row means as NumPy forms them at any k (its pairwise sum: eight running sums from
    8 values, halves above 128); the intercepts there are the Python step's (k >= 8)."""
    problem, y = _problem(k, "slots", k=k)
    rng = np.random.default_rng(k)
    alpha = _alpha(problem, rng) * np.exp(rng.uniform(-20, 20, problem.n_vars))
    alpha = np.minimum(alpha, problem.expanded_bounds()[1])
    F = rng.normal(size=(problem.n_samples, k))
    b, V, support, settled = level_tail(problem, alpha, F, np.zeros(k), True,
                                        (y == 0).view(np.uint8))
    ref = _python_tail(problem, alpha, F, np.zeros(k), False, y == 0)
    assert np.array_equal(V, ref[1])
    assert (b is None) == (k >= 8)


def _with_boxes(problem, lo, hi):
    return DualProblem(k=problem.k, var_ptr=problem.var_ptr, slot1=problem.entry_slot1,
                       coef1=problem.entry_coef1, slot2=problem.entry_slot2,
                       coef2=problem.entry_coef2, lin=problem.entry_lin, lo=lo, hi=hi,
                       group=None, cap=np.zeros(0), kappa=1.0, equality=True)


def test_level_tail_leaves_tied_breakpoints_of_different_rises_to_python():
    """Two samples of one class with the same scores tie in t: with different boxes
    (rises) the rounding of the slopes would depend on the sort's tie order, and the
    intercepts are left to the Python step; with the same boxes the compiled search runs
    (and gives the Python step's intercepts)."""
    problem, y = _problem(3, "slots")
    n, k = problem.n_samples, problem.k
    rng = np.random.default_rng(0)
    F = rng.normal(size=(n, k))
    first, second = np.flatnonzero(y == y[0])[:2]
    F[second] = F[first]
    lo, hi = problem.expanded_bounds()
    own = slice(problem.var_ptr[second], problem.var_ptr[second + 1])
    copied = slice(problem.var_ptr[first], problem.var_ptr[first + 1])
    lo, hi = lo.copy(), hi.copy()
    lo[own], hi[own] = lo[copied], hi[copied]
    same = _with_boxes(problem, lo, hi)
    hi_other = hi.copy()
    hi_other[own] *= 1.5
    different = _with_boxes(problem, lo, hi_other)
    is_label = (y == 0).view(np.uint8)
    b0 = np.zeros(k)
    alpha = _alpha(same, rng)
    assert level_tail(different, alpha, F, b0, True, is_label)[0] is None
    b = level_tail(same, alpha, F, b0, True, is_label)[0]
    assert b is not None
    assert np.array_equal(b, exact_intercepts_in_place(same, F.copy(), b0)[1])


@pytest.mark.parametrize("structure", ["slots", "groups"])
@pytest.mark.parametrize("seed", range(4))
def test_moved_scores_is_move_to(structure, seed):
    problem, _ = _problem(seed, structure)
    rng = np.random.default_rng(seed)
    now = _alpha(problem, rng)
    alpha = now.copy()
    change = rng.uniform(size=len(alpha)) < 0.2
    alpha[change] = _alpha(problem, rng)[change]
    # a change at the rounding level of the slot sums is no change
    alpha[~change] *= 1.0 + 1e-16
    rows, dU = moved_scores(problem, alpha, now, ROUNDING)
    U, U_now = problem.slot_sums(alpha), problem.slot_sums(now)
    ref = U - U_now
    ref[np.abs(ref) <= ROUNDING * (np.abs(U) + np.abs(U_now))] = 0.0
    ref_rows = np.flatnonzero(np.any(ref != 0, axis=1))
    assert np.array_equal(rows, ref_rows)
    assert np.array_equal(dU, ref[ref_rows])


# ------------------------------------------------------------------ the probability fit
def _data(n=90, seed=0):
    X, y = make_blobs(n, centers=3, cluster_std=2.5, random_state=seed)
    return X, y


CASES = [
    ("ReinforcedMSVM", {"C": 1.0}),
    ("ReinforcedMSVM", {"C": 10.0, "class_weight": "balanced"}),
    ("ReinforcedMSVM", {"C": 1.0, "kernel": "poly", "degree": 2, "random_state": 3}),
    ("WestonWatkinsMSVM", {"C": 1.0}),
    ("WestonWatkinsMSVM", {"C": 10.0, "class_weight": {0: 2.0, 1: 1.0, 2: 0.5}}),
    ("AngleBasedMSVM", {"C": 1.0}),
    ("AngleBasedMSVM", {"C": 3.0, "kernel": "poly", "degree": 3}),
]


def _fit(name, params, X, y, sample_weight, compiled, monkeypatch):
    monkeypatch.setattr(_level_chain, "COMPILED_LEVELS", compiled)
    est = getattr(msvm, name)(probability=True, probability_grid=6, **params)
    return est.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("name, params", CASES)
def test_compiled_levels_give_the_same_probabilities(name, params, monkeypatch):
    X, y = _data()
    steps = []
    real = _level_chain.LevelState._compiled_solve

    def counted(state, *args):
        steps.append(1)
        return real(state, *args)

    monkeypatch.setattr(_level_chain.LevelState, "_compiled_solve", counted)
    for sample_weight in [None, np.random.default_rng(1).uniform(0.5, 2.0, len(y))]:
        steps.clear()
        new = _fit(name, params, X, y, sample_weight, True, monkeypatch)
        assert steps, "the compiled level step did not run"
        old = _fit(name, params, X, y, sample_weight, False, monkeypatch)
        assert np.array_equal(new.predict_proba(X), old.predict_proba(X))
        assert new.n_probability_fits_ == old.n_probability_fits_
        for chain_new, chain_old in zip(new.probability_estimators_,
                                        old.probability_estimators_):
            for a, b in zip(chain_new, chain_old):
                for attr in ("intercept_", "dual_coef_", "support_", "n_support_",
                             "n_iter_", "converged_", "stop_reason_"):
                    assert np.array_equal(getattr(a, attr), getattr(b, attr)), attr


def test_compiled_levels_keep_the_settled_stops(monkeypatch):
    """The chains stop at the same levels (the settled test of the compiled step is the
    Python rule's): the same number of distinct fits per chain."""
    X, y = _data(120, seed=2)
    counts = {}
    for compiled in (True, False):
        est = _fit("ReinforcedMSVM", {"C": 1.0}, X, y, None, compiled, monkeypatch)
        counts[compiled] = [_probability._n_fits(chain)
                            for chain in est.probability_estimators_]
    assert counts[True] == counts[False]
    assert min(counts[True]) < 6          # some chain stopped early


def test_unused_where_the_scores_can_drift(monkeypatch):
    """A source whose scores can drift keeps the Python level step (its solve certifies on
    fresh scores and refreshes them)."""
    X, y = _data()
    monkeypatch.setattr(msvm._sequence.DualSequence, "_scores_can_drift", lambda self: True)

    def refused(*args):
        raise AssertionError("the compiled level step ran")

    monkeypatch.setattr(_level_chain.LevelState, "_compiled_solve", refused)
    est = msvm.ReinforcedMSVM(probability=True, probability_grid=4).fit(X, y)
    assert np.allclose(est.predict_proba(X).sum(axis=1), 1.0)


# ------------------------------------------------------------ the top fits as lean steps
def _count_top_refits(monkeypatch):
    calls = []
    real = _probability._top_fit

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_probability._ChainRunner, "top_fit", staticmethod(counted))
    return calls


def test_top_fits_run_as_lean_steps(monkeypatch):
    """The unweighted fits at the calibration's 3 C (the top of every chain at that C) are
    the first lean step of their chains' state, not refits, and give the refits'
    probabilities (tests/test_probability_levels.py checks them bit for bit against the
    refits of ``LEAN_STEPS`` off); each keeps the dual its chains start from."""
    calls = _count_top_refits(monkeypatch)
    X, y = _data()
    seen = []
    real = _probability._lean_top

    def kept(state, template, own, y_, sample_weight):
        top = real(state, template, own, y_, sample_weight)
        seen.append(top)
        return top

    monkeypatch.setattr(_probability, "_lean_top", kept)
    est = msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=4).fit(X, y)
    assert not calls and len(seen) >= 2
    for top in seen:
        start = top._warm_start_state()
        assert start is not None and start.C == top.C_
        assert np.array_equal(top.intercept_.shape, (3,))
    monkeypatch.setattr(_level_chain, "LEAN_STEPS", False)
    refits = msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=4).fit(X, y)
    assert len(calls) >= 2
    assert np.array_equal(est.predict_proba(X), refits.predict_proba(X))


def test_top_fits_of_several_class_groups_stay_refits(monkeypatch):
    """Above ``CHAIN_GROUP_CLASSES`` classes every group of classes is a unit of work that
    starts from the top fit: it stays a refit of its own, made once."""
    calls = _count_top_refits(monkeypatch)
    monkeypatch.setattr(_probability, "CHAIN_GROUP_CLASSES", 2)
    X, y = _data()
    msvm.ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    assert len(calls) >= 2


@pytest.mark.parametrize("name, params", [CASES[0], CASES[4], CASES[5]])
def test_lean_top_fits_switch_gives_the_same_probabilities(name, params, monkeypatch):
    """``LEAN_TOP_FITS`` off (a refit of its own for every top fit, main 080c064) and on:
    the same probabilities and fits, bit for bit."""
    X, y = _data(seed=4)
    out = {}
    for lean in (True, False):
        monkeypatch.setattr(_probability, "LEAN_TOP_FITS", lean)
        est = getattr(msvm, name)(probability=True, probability_grid=5, **params).fit(X, y)
        out[lean] = est
    assert np.array_equal(out[True].predict_proba(X), out[False].predict_proba(X))
    assert out[True].n_probability_fits_ == out[False].n_probability_fits_


def test_level_tail_stays_interruptible():
    """The compiled level step polls Python's signal handlers: a signal during one long
    call interrupts it from inside (its frame in the traceback), as Ctrl-C would."""
    from msvm._problem import reinforced_problem
    from _signals import Alarm, alarm_after

    rng = np.random.default_rng(0)
    n, k = 400_000, 3
    y = rng.integers(0, k, n)
    problem = reinforced_problem(y, k, np.ones(n), 0.5)
    alpha = problem.clip_feasible(rng.uniform(0.0, 1.0, problem.n_vars))
    F = rng.normal(size=(n, k))
    is_label = (y == 0).view(np.uint8)
    with pytest.raises(Alarm) as caught:
        with alarm_after(0.002, clock="cpu"):
            for _ in range(50):
                level_tail(problem, alpha, F, np.zeros(k), True, is_label)
    assert any(entry.name.endswith("level_tail") for entry in caught.traceback)
