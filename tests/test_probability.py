"""Class probabilities from weighted refits (probability=True, msvm._probability)."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

from msvm import ReinforcedMSVM
from msvm._probability import (bracket_ratios, fit_shape, probabilities_from_ratios,
                                probability_levels, shaped_probabilities)
from msvm.datasets import make_reinforced_example, reinforced_example_proba
from msvm.model_selection import TuningSetSearch, lambda_grid
from _estimators import configured

# every public estimator (tests/_estimators.py) and the linear kernel's path
ESTIMATORS = [*configured(), ReinforcedMSVM(kernel="linear")]


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(90, random_state=0)
    X_test, _ = make_reinforced_example(60, random_state=1)
    return X, y, X_test


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: repr(e))
def test_probabilities_are_a_distribution_whose_argmax_is_predict(estimator, data):
    X, y, X_test = data
    est = clone(estimator).set_params(probability=True, probability_grid=3, C=10.0).fit(X, y)
    proba = est.predict_proba(X_test)
    assert proba.shape == (len(X_test), 3)
    assert np.all(proba >= 0) and np.all(proba <= 1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    # by construction the predicted class has the largest probability (target >= 97 %)
    assert np.mean(est.classes_[np.argmax(proba, axis=1)] == est.predict(X_test)) >= 0.97
    np.testing.assert_allclose(est.predict_log_proba(X_test), np.log(proba))
    # own fit + 3 classes x 3 levels (+ the unweighted fit at the refits' C when it is not C),
    # and on each of the 2 refitted calibration folds an own fit, the 3 x 3 weighted fits for
    # each of the 2 candidate C factors and the unweighted fit at 3 C; a chain that settles
    # (``_settled``) repeats its last fit at the levels below, counted once
    top = est.probability_C_factor_ != 1.0
    made = 1 + len({id(fit) for chain in est.probability_estimators_ for fit in chain})
    assert made <= 1 + 3 * 3 + top
    assert 2 * (2 + 2 * 3) <= est.n_probability_fits_ - made <= 2 * (2 + 2 * 3 * 3)
    assert est.probability_C_factor_ in (1.0, 3.0)
    assert 0.25 <= est.probability_exponent_ <= 4.0 and 0.0 <= est.probability_floor_ <= 0.5
    assert len(est.probability_grid_) == 3


def test_close_to_the_true_probabilities():
    # Liu and Yuan's (2011) example 4.1.1, whose p(x) is known; C = 10, n = 400, default
    # grid (m = 8): the mean absolute error is about 0.03 (Platt scaling about 0.04).
    X, y = make_reinforced_example(400, random_state=0)
    X_test, _ = make_reinforced_example(1000, random_state=1)
    est = ReinforcedMSVM(C=10.0, gamma="median", probability=True).fit(X, y)
    error = np.abs(est.predict_proba(X_test) - reinforced_example_proba(X_test)).mean()
    assert error < 0.045


def test_unavailable_without_probability(data):
    X, y, _ = data
    est = ReinforcedMSVM().fit(X, y)
    assert not hasattr(est, "predict_proba")
    for method in ("predict_proba", "predict_log_proba"):
        with pytest.raises(AttributeError, match=method) as info:
            getattr(est, method)(X)
        assert "probability=False" in str(info.value)          # the error names the remedy
        assert "probability=True" in str(info.value)
    assert hasattr(ReinforcedMSVM(probability=True), "predict_proba")


def test_clone_and_pickle(data):
    X, y, X_test = data
    est = ReinforcedMSVM(probability=True, probability_grid=2).fit(X, y)
    assert clone(est).get_params()["probability_grid"] == 2
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict_proba(X_test), est.predict_proba(X_test))


def test_sparse_input(data):
    X, y, X_test = data
    dense = ReinforcedMSVM(probability=True, probability_grid=2).fit(X, y)
    sparse = ReinforcedMSVM(probability=True, probability_grid=2).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X_test)),
                               dense.predict_proba(X_test), atol=1e-3)  # solver tol


def test_string_labels_and_sample_weight(data):
    X, y, X_test = data
    labels = np.array(["a", "b", "c"])[y]
    est = ReinforcedMSVM(probability=True, probability_grid=2)
    est.fit(X, labels, sample_weight=np.linspace(0.5, 1.5, len(y)))
    proba = est.predict_proba(X_test)
    assert np.all(est.classes_[np.argmax(proba, axis=1)] == est.predict(X_test))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("grid", [0, "3"])
def test_invalid_grid_is_refused(data, estimator, grid):
    """Every estimator validates probability_grid (WestonWatkinsMSVM did not: 0 raised an
    IndexError deep in the fit, a string a ValueError from int())."""
    X, y, _ = data
    with pytest.raises(ValueError, match="probability_grid"):
        clone(estimator).set_params(probability=True, probability_grid=grid).fit(X, y)


def test_tuning_set_search_delegates(data):
    X, y, X_test = data
    search = TuningSetSearch(ReinforcedMSVM(probability=True, probability_grid=2),
                             lambdas=lambda_grid(-4, -2), random_state=0).fit(X, y)
    np.testing.assert_array_equal(search.predict_proba(X_test),
                                  search.best_estimator_.predict_proba(X_test))
    assert not hasattr(TuningSetSearch(ReinforcedMSVM()), "predict_proba")


def test_levels_and_bracketing():
    levels = probability_levels(4, smallest=1e-2)
    np.testing.assert_allclose(levels, [1e-2, 10 ** -1.5, 1e-1, 10 ** -0.5])
    # margins of class j at t_1..t_4 and t = 1: the sign changes between t_2 and t_3,
    # halfway in margin, so halfway in log t; no positive margin: half a step below t_1
    margins = np.array([[2.0, 1.0, -1.0, -2.0, -3.0],
                        [-1.0, -1.0, -2.0, -2.0, -3.0]])
    ratios = bracket_ratios(margins, levels)
    np.testing.assert_allclose(ratios, [10 ** -1.25, 10 ** -2.25])
    proba = probabilities_from_ratios(np.array([[0.5, 0.25, 7.0]]), np.array([2]))
    np.testing.assert_allclose(proba, [[0.5 / 1.75, 0.25 / 1.75, 1 / 1.75]])


def test_fit_shape_recovers_exponent_and_floor():
    # held-out ratios r = q / q_max of a known distribution q, labels drawn from
    # p = 0.9 * q^2 / sum(q^2) + 0.1 / 3: fit_shape should find a near 2 and eps near 0.1
    rng = np.random.default_rng(0)
    q = rng.dirichlet(np.ones(3), size=20000)
    ratios = q / q.max(axis=1, keepdims=True)
    p = shaped_probabilities(ratios, 2.0, 0.1)
    y = (rng.random(len(p))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    a, eps, loss = fit_shape(ratios, y)
    assert loss > 0
    assert abs(a - 2.0) < 0.2 and abs(eps - 0.1) < 0.03


def test_shaped_probabilities_keep_the_argmax():
    rng = np.random.default_rng(1)
    ratios = rng.uniform(1e-4, 1.0, size=(50, 4))
    predicted = rng.integers(4, size=50)
    ratios[np.arange(50), predicted] = 1.0
    for a, eps in ((0.3, 0.0), (1.0, 0.2), (3.5, 0.45)):
        proba = shaped_probabilities(ratios, a, eps)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert np.all(np.argmax(proba, axis=1) == predicted)


def test_shared_kernel_columns_give_the_per_fit_probabilities(data):
    """predict_proba scores all weighted fits through one KernelColumns; the ratios equal
    those of scoring each fit on its own (to rounding)."""
    from msvm._probability import bracketed_ratios

    X, y, X_test = data
    est = ReinforcedMSVM(C=3.0, probability=True, probability_grid=3).fit(X, y)
    fits = est.probability_estimators_
    alone = bracketed_ratios(est, fits, est.probability_grid_, X_test)
    shared = bracketed_ratios(est, fits, est.probability_grid_, X_test, n_train=len(X))
    np.testing.assert_allclose(shared, alone, rtol=1e-9, atol=1e-12)
    # the fits are left without the shared columns
    assert all(est._path().columns is None for chain in fits for est in chain)


def test_weighted_fits_use_the_resolved_kernel_width(data):
    """A heuristic gamma is resolved once, in the estimator's fit: every weighted fit (and
    the top fit at the refits' C) has the estimator's gamma_, at the refits' loose tol."""
    from msvm._probability import REFIT_TOL_FACTOR, REFIT_TOL_MAX

    X, y, _ = data
    est = ReinforcedMSVM(C=1.0, gamma="median", probability=True, probability_grid=2).fit(X, y)
    for chain in est.probability_estimators_:
        for fit in chain:
            assert fit.gamma_ == est.gamma_ and fit.gamma == est.gamma_
            assert fit.tol == min(REFIT_TOL_FACTOR * est.tol, REFIT_TOL_MAX)
            assert fit.C == est.C * est.probability_C_factor_
            assert not hasattr(fit, "_row_state") or fit._row_state is None


@pytest.mark.parametrize("approximation", ["nystroem", "rff"])
def test_weighted_fits_reuse_the_feature_map(data, approximation):
    """On the approximate-kernel path a class's chain of weighted fits fits the feature map
    once and reuses it with phi(X) (the map depends on neither y nor the weights): every fit
    of a chain holds the same map, equal to the estimator's own (same random_state), and the
    probabilities are those of fitting the map in every weighted fit."""
    X, y, X_test = data
    params = dict(kernel_approximation=approximation, n_components=40, random_state=0,
                  probability=True, probability_grid=2, C=3.0)
    est = ReinforcedMSVM(**params).fit(X, y)
    m = len(est.probability_grid_)
    for chain in est.probability_estimators_:
        # the m weighted fits (a chain at 3 C ends with its own top fit, not a weighted fit)
        assert all(fit.feature_map_ is chain[0].feature_map_ for fit in chain[:m])
        for name, value in vars(chain[0].feature_map_).items():
            np.testing.assert_array_equal(value, getattr(est.feature_map_, name), name)
        assert all(not hasattr(fit, "_feature_state") for fit in chain)   # not kept
    # a refit on other inputs does not take the kept map
    refit = ReinforcedMSVM(**{**params, "probability": False}, warm_start=True)
    refit._join_path(keep_rows=True).fit(X, y)
    first = refit.feature_map_
    refit.fit(X[:-5], y[:-5])
    assert refit.feature_map_ is not first
    refit.fit(X[:-5], y[:-5], sample_weight=np.full(len(y) - 5, 2.0))
    assert refit._feature_state[1] is refit.feature_map_


def test_feature_map_reuse_leaves_the_probabilities_unchanged(data, monkeypatch):
    """The probabilities with the map kept along each chain equal those with the map fitted
    again in every weighted fit (what fit did before the map was kept)."""
    from msvm._base import BaseMSVM

    X, y, X_test = data
    est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=40, random_state=0,
                         probability=True, probability_grid=2, C=3.0)
    kept = clone(est).fit(X, y).predict_proba(X_test)
    monkeypatch.setattr(BaseMSVM, "_feature_map_key", lambda self, X, dtype: None)
    np.testing.assert_array_equal(clone(est).fit(X, y).predict_proba(X_test), kept)


def test_calibration_refits_two_folds_and_their_held_out_thirds_decide(data, monkeypatch):
    """The calibration refits the training parts of two of the 3 folds: the fits counted
    are those of two folds, and fit_shape chooses the exponent and floor on their two
    held-out thirds alone (with all 3 folds refitted, on every sample)."""
    from msvm import _probability

    X, y, X_test = data
    est = ReinforcedMSVM(C=3.0, probability=True, probability_grid=2)
    seen = []
    real = _probability.fit_shape

    def spy(ratios, y_enc, sample_weight=None):
        seen.append(len(y_enc))
        return real(ratios, y_enc, sample_weight)

    monkeypatch.setattr(_probability, "fit_shape", spy)
    monkeypatch.setattr(_probability, "SETTLED_CHAINS", False)      # every level fitted
    one = clone(est).fit(X, y)
    # two held-out thirds (60 of 90 samples) per C factor
    assert seen == [2 * len(y) // 3] * len(_probability.REFIT_C_FACTORS)
    top = one.probability_C_factor_ != 1.0
    assert one.n_probability_fits_ == 1 + 3 * 2 + top + 2 * (2 + 2 * 3 * 2)
    monkeypatch.setattr(_probability, "REFITTED_FOLDS", 3)
    seen.clear()
    three = clone(est).fit(X, y)
    assert seen == [len(y)] * len(_probability.REFIT_C_FACTORS)
    assert three.n_probability_fits_ == 1 + 3 * 2 + (three.probability_C_factor_ != 1.0) \
        + 3 * (2 + 2 * 3 * 2)


@pytest.mark.parametrize("tol, refit_tol", [(1e-3, 0.3), (1e-4, 0.03), (0.01, 0.3), (0.5, 0.5)])
def test_refit_tolerance_is_loose_but_capped_and_never_tighter(tol, refit_tol):
    """The weighted fits stop at REFIT_TOL_FACTOR (300) times the estimator's tol, at most
    at REFIT_TOL_MAX (0.3), and never at a tighter tol than the estimator's own."""
    from msvm._probability import _refit_template

    refit = _refit_template(ReinforcedMSVM(C=2.0, tol=tol), 3.0)
    assert refit.tol == pytest.approx(refit_tol) and refit.C == 6.0


@pytest.mark.filterwarnings("ignore::msvm.exceptions.DegenerateFitWarning")
@pytest.mark.parametrize("C", [1.0, 10.0])
def test_loose_refits_give_nearly_the_probabilities_of_tight_ones(data, C, monkeypatch):
    """The bracketed estimate from weighted fits at the loose refit tol is within 0.02 (mean
    absolute difference) of the one from fits solved to the estimator's own tol: the
    bracketing reads only where the margins change sign between levels."""
    from msvm import _probability

    X, y, X_test = data
    est = ReinforcedMSVM(C=C).fit(X, y)
    levels = _probability.probability_levels(3)
    template = clone(est).set_params(warm_start=True, C=est.C_, gamma=est.gamma_)
    proba = {}
    for factor in (1.0, _probability.REFIT_TOL_FACTOR):
        monkeypatch.setattr(_probability, "REFIT_TOL_FACTOR", factor)
        refit = _probability._refit_template(template, 1.0)
        chains = _probability._task_chains(refit, est, X, y, np.ones(len(y)), levels,
                                           est.classes_)
        proba[factor] = shaped_probabilities(
            _probability.bracketed_ratios(est, chains, levels, X_test))
    assert np.abs(proba[1.0] - proba[_probability.REFIT_TOL_FACTOR]).mean() < 0.02


def _held_out(losses, y_enc=None):
    """(ratios, y_enc, weights) of held-out samples whose log losses at a = 1, eps = 0 are
    ``losses`` (two classes, class 0 true and predicted: p_0 = 1 / (1 + r_1))."""
    n = len(losses)
    p = np.exp(-np.asarray(losses))
    ratios = np.column_stack([np.ones(n), (1 - p) / p])
    return ratios, np.zeros(n, dtype=int) if y_enc is None else y_enc, np.ones(n)


def test_c_factor_other_than_the_own_needs_a_clear_gain(monkeypatch):
    """With FACTOR_SE = 1, 3 C is chosen over the estimator's own C only when it lowers the
    held-out log loss by more than one standard error of the paired per-sample differences
    (a gain within the noise keeps C, a clear one takes 3 C); with FACTOR_SE = 0 (the
    default) the smaller held-out log loss decides."""
    from msvm import _probability
    from msvm._probability import _chosen_factor

    monkeypatch.setattr(_probability, "FACTOR_SE", 1.0)
    rng = np.random.default_rng(0)
    base = rng.uniform(0.05, 0.5, 300)
    shape = (1.0, 0.0)
    for shift, expected in [(0.001, 1.0), (0.05, 3.0), (-0.05, 1.0)]:
        noisy = base - shift + rng.normal(0.0, 0.04, len(base))
        noisy = np.clip(noisy, 1e-3, None)
        held = {1.0: _held_out(base), 3.0: _held_out(noisy)}
        shapes = {1.0: (*shape, float(base.mean())), 3.0: (*shape, float(noisy.mean()))}
        assert _chosen_factor(shapes, held) == expected
        # with FACTOR_SE = 0 the smaller held-out log loss decides
        monkeypatch.setattr(_probability, "FACTOR_SE", 0.0)
        assert _chosen_factor(shapes, held) == (3.0 if shapes[3.0][2] < shapes[1.0][2]
                                                else 1.0)
        monkeypatch.setattr(_probability, "FACTOR_SE", 1.0)
