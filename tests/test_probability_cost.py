"""The cheaper steps of the probability fit compute what the plain steps computed.

The weighted refits of a chain validate X and y once (``BaseMSVM._checked_refits``), the
intercept search stops its bisection once the bracket cannot shrink, and the exponent and
floor of the estimate are found with the exact gradient of their held-out log loss.
"""

import copy
import numpy as np
import pytest
from sklearn.base import clone

from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from msvm._intercept import slot_intercepts_from_breakpoints
from msvm._probability import _shape_loss, fit_shape, shaped_probabilities
from msvm.datasets import make_reinforced_example

FITTED = ("dual_coef_", "intercept_", "alpha_", "support_", "objective_", "n_iter_")


@pytest.fixture(scope="module")
def data():
    return make_reinforced_example(90, random_state=3)


def _refits(estimator, X, y, weights, checked):
    """Warm-started refits of one estimator at each of ``weights``, inside or outside
    ``_checked_refits``; the fitted attributes of each."""
    est = clone(estimator).set_params(warm_start=True)
    out = []

    def run():
        for w in weights:
            est.fit(X, y, sample_weight=w)
            out.append({name: np.copy(getattr(est, name)) for name in FITTED})

    if checked:
        with est._checked_refits(X, y):
            run()
    else:
        run()
    return out


@pytest.mark.parametrize("estimator", [ReinforcedMSVM(C=10.0), AngleBasedMSVM(C=3.0),
                                       WestonWatkinsMSVM(C=1.0, kernel="linear")],
                         ids=lambda e: type(e).__name__)
def test_checked_refits_are_the_public_fits(estimator, data):
    """Refits that validate X and y once make exactly the fits of the public fit."""
    X, y = data
    weights = [np.where(y == 1, 1.0 / t, 1.0) for t in (0.5, 0.2, 0.05)]
    plain = _refits(estimator, X, y, weights, checked=False)
    checked = _refits(estimator, X, y, weights, checked=True)
    for a, b in zip(plain, checked):
        for name in FITTED:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("estimator", [ReinforcedMSVM(C=10.0), AngleBasedMSVM(C=3.0),
                                       WestonWatkinsMSVM(C=1.0, kernel="linear")],
                         ids=lambda e: type(e).__name__)
def test_lean_refits_of_a_group_are_the_public_fits(estimator, data):
    """``_refit`` (no parameter validation), on inputs validated once for a group of
    estimators (a second estimator takes the first's ``CheckedInput``, as the chains of a
    group do), makes bitwise the fits of the public fit, with the input attributes set."""
    X, y = data
    weights = [np.where(y == 1, 1.0 / t, 1.0) for t in (0.5, 0.2, 0.05)]
    plain = _refits(estimator, X, y, weights, checked=False)
    template = clone(estimator).set_params(warm_start=True)
    template._validate_params()
    lean, checked = [], None
    for _ in range(2):
        est = clone(template)
        with est._checked_refits(X, y, checked) as checked:
            for w in weights:
                est._refit(X, y, w)
                lean.append({name: np.copy(getattr(est, name)) for name in FITTED})
            assert est.n_features_in_ == X.shape[1]
            np.testing.assert_array_equal(est.classes_, np.unique(y))
    for a, b in zip(plain + plain, lean):
        for name in FITTED:
            np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_lean_refit_that_raises_leaves_the_estimator_unfitted(data):
    """A lean refit refused (weights of one class only) raises as ``fit`` does and leaves
    no fitted attribute behind."""
    X, y = data
    est = ReinforcedMSVM(C=1.0, warm_start=True)
    with est._checked_refits(X, y):
        est._refit(X, y)
        with pytest.raises(ValueError, match="one class only"):
            est._refit(X, y, (y == 0).astype(float))
    assert not hasattr(est, "dual_coef_") and not hasattr(est, "classes_")


@pytest.mark.parametrize("lean", [True, False])
def test_probability_fit_validates_each_data_set_once(data, monkeypatch, lean):
    """A probability fit validates X and y once (``LEAN_LEVELS``): the estimator's own fit's
    validation serves the full data's weighted fits (all chains and the fit at 3 C) and, row
    by row, each calibration fold's training part; round 12 (``LEAN_LEVELS = False``)
    validated once per data set, the full data twice."""
    from msvm import _base, _probability
    from msvm._probability import REFITTED_FOLDS

    monkeypatch.setattr(_probability, "LEAN_LEVELS", lean)
    X, y = data
    calls = []
    real = _base.BaseMSVM._validated_arrays
    monkeypatch.setattr(_base.BaseMSVM, "_validated_arrays",
                        lambda est, *args: calls.append(1) or real(est, *args))
    est = ReinforcedMSVM(C=1.0, probability=True, probability_grid=3).fit(X, y)
    assert len(calls) == (1 if lean else 2 + REFITTED_FOLDS)
    assert est.n_probability_fits_ > 2 + REFITTED_FOLDS


def test_chain_copies_have_the_template_parameters_and_own_random_state():
    """The estimators of a probability fit made by ``_with_params`` have the parameters
    ``clone(template).set_params`` gives, share none of the template's mutable random
    state, and an unknown parameter is refused."""
    from msvm._probability import _with_params

    template = ReinforcedMSVM(C=2.0, random_state=np.random.RandomState(0),
                              class_weight={0: 2.0})
    copied = _with_params(template, C=6.0, tol=0.3)
    expected = clone(template).set_params(C=6.0, tol=0.3).get_params()
    got = copied.get_params()
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        if name != "random_state":
            assert got[name] == value, name
    assert copied.random_state is not template.random_state
    assert copied.random_state.randint(1000) == template.random_state.randint(1000)
    with pytest.raises(ValueError, match="no parameter 'gama'"):
        _with_params(template, gama=1.0)


def test_checked_refits_check_new_inputs_and_every_weight(data):
    """Within the block, other X or y objects are validated again, the weights at every fit,
    and the validated inputs are neither kept after it nor copied with the estimator."""
    X, y = data
    est = ReinforcedMSVM(C=1.0, warm_start=True)
    with est._checked_refits(X, y):
        est.fit(X, y)
        with pytest.raises(ValueError, match="NaN|infinity"):
            est.fit(np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X), y)
        with pytest.raises(ValueError):
            est.fit(X, y, sample_weight=-np.ones(len(y)))
        est.fit(X, y)
        assert est.n_features_in_ == X.shape[1]
        assert "_checked_input" not in est.__getstate__()
    assert not hasattr(est, "_checked_input")


def _bisection_reference(slots, b0):
    """The intercepts of the search with all 200 bisection steps (the search before the
    early stop): the stop must not change a single bit."""
    from msvm import _intercept

    lam_min = max(cum[0] for _, cum in slots)
    lam_max = min(cum[-1] for _, cum in slots)
    lam = _intercept._first_reaching(
        slots, lam_min, lam_max,
        lambda value: _intercept._interval_sums(slots, value)[1].sum() >= 0.0)
    bmin, bmax = _intercept._interval_sums(slots, lam)
    finite = np.concatenate([bmin[np.isfinite(bmin)], bmax[np.isfinite(bmax)], b0])
    span = 2.0 * (np.abs(finite).max() + 1.0)
    a, c = -2.0 * span, 2.0 * span
    for _ in range(200):
        theta = 0.5 * (a + c)
        if np.clip(b0 + theta, bmin, bmax).sum() < 0.0:
            a = theta
        else:
            c = theta
    b = np.clip(b0 + 0.5 * (a + c), bmin, bmax)
    free = np.flatnonzero((b > bmin) & (b < bmax))
    j = free[0] if len(free) else int(np.argmax(bmax - bmin))
    b[j] -= b.sum()
    return b


@pytest.mark.parametrize("seed", range(20))
def test_intercept_bisection_stop_changes_no_bit(seed):
    """The exact intercept search gives bitwise the intercepts of all 200 bisection steps."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    slots = []
    for _ in range(k):
        m = int(rng.integers(1, 30))
        t = np.sort(rng.normal(scale=10.0 ** rng.integers(-3, 3), size=m))
        if seed % 3 == 0:
            t = np.round(t, 1)                                # ties: intervals of minimizers
        cum = np.concatenate([[-rng.uniform(1, 5)], rng.uniform(0, 1, m)]).cumsum()
        cum[-1] = max(cum[-1], 1.0)
        slots.append((t, cum))
    b0 = rng.normal(size=k)
    np.testing.assert_array_equal(slot_intercepts_from_breakpoints(slots, b0),
                                  _bisection_reference(slots, b0))


@pytest.mark.parametrize("seed", range(24))
def test_block_search_and_scalar_shift_give_the_bits_of_the_plain_search(seed):
    """Testing the remaining candidates of the common slope all at once
    (``BLOCK_CANDIDATES``) and bisecting the common shift on Python floats (below
    ``SCALAR_SHIFT_SLOTS`` slots) give bitwise the intercepts of the binary search over
    at most 256 candidates and NumPy's bisection, for k = 2 to 12 and up to 6,000
    breakpoints (ties among breakpoints and slopes included)."""
    rng = np.random.default_rng(100 + seed)
    k = 2 + seed % 11
    slots = []
    for _ in range(k):
        m = int(rng.integers(1, 3000 if seed % 2 else 300))
        t = np.sort(rng.normal(scale=10.0 ** rng.integers(-3, 3), size=m))
        steps = rng.uniform(0, 1, m)
        if seed % 3 == 0:
            t, steps = np.round(t, 1), np.round(steps, 1)
        cum = np.concatenate([[-rng.uniform(1, 5)], steps]).cumsum()
        cum[-1] = max(cum[-1], 1.0)
        slots.append((t, cum))
    b0 = rng.normal(size=k) * (seed % 4 != 0)
    np.testing.assert_array_equal(slot_intercepts_from_breakpoints(slots, b0),
                                  _bisection_reference(slots, b0))


def test_shape_loss_gradient_is_exact():
    """The gradient of the held-out log loss in (a, eps) matches central differences."""
    rng = np.random.default_rng(0)
    ratios = rng.uniform(1e-3, 1.0, size=(200, 4))
    ratios[np.arange(200), rng.integers(0, 4, 200)] = 1.0
    y = rng.integers(0, 4, 200)
    w = rng.uniform(0.5, 2.0, 200)
    w /= w.sum()
    for params in ([1.0, 0.01], [2.5, 0.2], [0.4, 0.0]):
        value, grad = _shape_loss(np.array(params), np.log(ratios), y, w)
        expected = -np.sum(w * np.log(shaped_probabilities(ratios, *params)[np.arange(200), y]))
        assert value == pytest.approx(expected, rel=1e-12)
        h = 1e-6
        for i in range(2):
            step = np.eye(2)[i] * h
            fd = (_shape_loss(np.array(params) + step, np.log(ratios), y, w)[0]
                  - _shape_loss(np.array(params) - step, np.log(ratios), y, w)[0]) / (2 * h)
            assert grad[i] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_fit_shape_reaches_the_minimum_of_a_dense_search():
    """fit_shape's held-out log loss is no higher than the best of a dense (a, eps) grid."""
    rng = np.random.default_rng(1)
    q = rng.dirichlet(np.ones(3) * 0.7, size=3000)
    ratios = q / q.max(axis=1, keepdims=True)
    p = shaped_probabilities(ratios, 1.6, 0.05)
    y = (rng.random(len(p))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    a, eps, loss = fit_shape(ratios, y)
    rows = np.arange(len(y))
    grid = min(-np.mean(np.log(shaped_probabilities(ratios, ga, ge)[rows, y]))
               for ga in np.linspace(0.25, 4.0, 76) for ge in np.linspace(0.0, 0.5, 101))
    assert loss <= grid + 1e-9
    assert 0.25 <= a <= 4.0 and 0.0 <= eps <= 0.5


@pytest.mark.parametrize("estimator", [ReinforcedMSVM(C=10.0), AngleBasedMSVM(C=3.0)],
                         ids=lambda e: type(e).__name__)
def test_stacked_scoring_gives_each_fits_decision_values(estimator, data):
    """The held-out samples scored by all the weighted fits (and the own fit) in one kernel
    block and one product get each fit's own decision values (up to the rounding of the
    sum), also when the block is computed in several parts of rows."""
    from msvm._probability import _stacked_decision_values, _support_span

    X, y = data
    X_test, _ = make_reinforced_example(40, random_state=4)
    est = clone(estimator).set_params(probability=True, probability_grid=3).fit(X, y)
    fits = [est] + [fit for chain in est.probability_estimators_ for fit in chain]
    own = [fit.decision_values(X_test) for fit in fits]
    stacked = _stacked_decision_values(fits, X_test, _support_span(fits))
    assert stacked is not None and len(stacked) == len(fits)
    for a, b in zip(own, stacked):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    small = copy.copy(est)
    small.cache_size = 1e-4                      # a block of one row of kernel columns
    parts = _stacked_decision_values([small] + fits[1:], X_test, _support_span(fits))
    for a, b in zip(own, parts):                 # a few rows at a time
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    assert _stacked_decision_values(fits, X_test, None) is None     # unknown training set


def _blobs():
    """Three well separated classes: up-weighted enough, a class is fitted with margin."""
    from sklearn.datasets import make_blobs

    return make_blobs(120, centers=3, cluster_std=0.6, random_state=0)


def test_settled_fit_is_the_fit_at_larger_weights():
    """Where ``_settled`` says a weighted fit is settled (no variable of the up-weighted
    class at a bound that moves with its weight), the fit at a 100 times larger weight of
    that class has the same decision values (both solved to a tight tol)."""
    from msvm._probability import _settled

    X, y = _blobs()
    is_label = y == 0
    est = ReinforcedMSVM(C=10.0, tol=1e-7, warm_start=True)._join_path(keep_rows=True)
    est.fit(X, y, sample_weight=np.where(is_label, 30.0, 1.0))
    assert _settled(est, is_label)
    heavier = ReinforcedMSVM(C=10.0, tol=1e-7).fit(X, y,
                                                   sample_weight=np.where(is_label, 3e3, 1.0))
    G = est.decision_values(X)
    np.testing.assert_allclose(heavier.decision_values(X), G, atol=1e-3 * np.abs(G).max())


def test_unsettled_where_the_class_has_bounded_variables(data):
    """A fit whose up-weighted class has a variable at its upper bound (overlapping
    classes, t = 1) is not settled, nor is one that kept no row source (off a path).  (The
    DC, reweighting and grid fits: tests/test_probability_paths.py.)"""
    from msvm._probability import _settled

    X, y = data
    est = ReinforcedMSVM(C=10.0, warm_start=True)._join_path(keep_rows=True).fit(X, y)
    assert not _settled(est, y == 0)
    assert not _settled(ReinforcedMSVM(C=10.0).fit(X, y), y == 0)     # no kept dual


def test_settled_chain_repeats_its_fit_and_counts_it_once():
    """A chain that settles stops: the levels below hold the settled fit itself, the fits
    are counted once (``n_probability_fits_``), and the probabilities are those of the
    chain refitted at every level within the refits' tolerance (same predictions)."""
    from msvm import _probability

    X, y = _blobs()
    X_test = X + 0.1
    est = ReinforcedMSVM(C=10.0, probability=True, probability_grid=4).fit(X, y)
    chains = est.probability_estimators_
    assert any(chain[0] is chain[1] for chain in chains)
    distinct = len({id(fit) for chain in chains for fit in chain})
    assert distinct < sum(map(len, chains))
    full = _probability.SETTLED_CHAINS
    try:
        _probability.SETTLED_CHAINS = False
        every = ReinforcedMSVM(C=10.0, probability=True, probability_grid=4).fit(X, y)
    finally:
        _probability.SETTLED_CHAINS = full
    assert est.n_probability_fits_ < every.n_probability_fits_
    P, Q = est.predict_proba(X_test), every.predict_proba(X_test)
    np.testing.assert_array_equal(P.argmax(axis=1), Q.argmax(axis=1))


def test_same_C_warm_start_is_the_previous_dual(data):
    """A warm start at the refit's own C is the previous dual itself (a copy: states are
    never written), so the kept scores need no update; at another C the free variables
    are kept and the bounded ones rescaled, as before."""
    from msvm._sequence import path_start, rescaled_start

    X, y = data
    est = ReinforcedMSVM(C=10.0).fit(X, y)
    state = est._warm_start_state()
    problem = est._dual_problem(np.searchsorted(est.classes_, y), 3, est.C_ * np.ones(len(y)))
    start = path_start(problem, state.alpha, state.C, state.C)
    assert start is not state.alpha
    np.testing.assert_array_equal(start, state.alpha)
    np.testing.assert_array_equal(path_start(problem, state.alpha, state.C, 30.0),
                                  rescaled_start(problem, state.alpha, state.C, 30.0))


def _group_chains(monkeypatch, share):
    """The chains of every class of the example (ReinforcedMSVM, C = 10) by
    ``_task_chains``, on one row source (``share``) or one per chain; and the number of row
    sources built."""
    from msvm import _base, _level_chain, _probability

    X, y = make_reinforced_example(150, random_state=5)
    est = ReinforcedMSVM(C=10.0, gamma="median").fit(X, y)
    template = clone(est).set_params(warm_start=True, C=est.C_, gamma=est.gamma_)
    refit = _probability._refit_template(template, 1.0)
    built = []
    real = _base.make_row_source
    counted = lambda *a, **k: built.append(1) or real(*a, **k)  # noqa: E731
    monkeypatch.setattr(_base, "make_row_source", counted)    # the lean steps' state too
    if not share:
        monkeypatch.setattr(_level_chain, "LEAN_STEPS", False)       # a refit per level
        chain = _probability._weighted_chain
        monkeypatch.setattr(_probability, "_weighted_chain",
                            lambda *args, **kw: chain(*args[:-1], None, **kw))
    levels = _probability.probability_levels(8)
    chains = _probability._task_chains(refit, est, X, y, np.ones(len(y)), levels,
                                       est.classes_)
    X_test, _ = make_reinforced_example(300, random_state=6)
    return _probability.bracketed_ratios(est, chains, levels, X_test), len(built)


def test_chains_of_a_group_build_one_row_source(monkeypatch):
    """The chains of the classes of one group run on one row source, built once (one
    storage of kernel rows at every level: with cache_dtype='auto' the weights of the lower
    levels would ask for another and rebuild it); chains on row sources of their own build
    one each, and the probabilities are the same up to the refits' tolerance."""
    shared, n_shared = _group_chains(monkeypatch, share=True)
    monkeypatch.undo()
    alone, n_alone = _group_chains(monkeypatch, share=False)
    assert n_shared == 1 and n_alone == 3
    assert np.abs(shaped_probabilities(shared) - shaped_probabilities(alone)).mean() < 0.01


def test_class_groups_depend_on_the_classes_alone():
    """The units of chains are groups of at most CHAIN_GROUP_CLASSES classes, in order,
    covering every class once."""
    from msvm._probability import CHAIN_GROUP_CLASSES, _class_groups

    for k in (2, 3, CHAIN_GROUP_CLASSES, CHAIN_GROUP_CLASSES + 1, 10, 26):
        groups = _class_groups(np.arange(k))
        assert all(1 <= len(g) <= CHAIN_GROUP_CLASSES for g in groups)
        np.testing.assert_array_equal(np.concatenate(groups), np.arange(k))
        assert len(groups) == -(-k // CHAIN_GROUP_CLASSES)
