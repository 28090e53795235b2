"""The warm-started lambda path: a kept row source, rescaled scores, bound-only rescaling,
tuning-set kernel columns; each reused only where the reuse is exact (the same fits as a
cold path)."""

import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import check_scoring

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm._fit_state import data_fingerprint
from msvm._kernel_columns import KernelColumns
from msvm._kernels import kernel_matrix, make_row_source
from msvm._sequence import path_start, rescaled_dual
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, _lambda_path, lambda_grid

TIGHT = dict(tol=1e-8, max_iter=100000)

# small C on purpose (the large-lambda end of a path): constant fits are expected
pytestmark = pytest.mark.filterwarnings("ignore::msvm.exceptions.DegenerateFitWarning")


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(80, random_state=0)
    Xt, yt = make_reinforced_example(60, random_state=1)
    return X, y, Xt, yt


def _kept(est):
    """An estimator that keeps its row source between warm-started fits (as a path does)."""
    est.set_params(warm_start=True)
    return est._join_path(keep_rows=True)


def _src(est):
    return est._row_state.source


def _scores_from_scratch(est, X):
    """K U(alpha) of the dual the kept row source claims to hold."""
    problem, alpha = est._row_state.problem, est._row_state.alpha
    K = kernel_matrix(X, X, est.kernel, est.gamma_, est.degree, est.coef0)
    return K @ problem.slot_sums(alpha)


def _cold(est, X, y, **params):
    from sklearn.base import clone
    return clone(est).set_params(warm_start=False, **params).fit(X, y)


# ---------------------------------------------------------------------- reuse, and when not
@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(0.05, kernel="rbf", gamma=0.5, reinforcement=0.5, **TIGHT),
    lambda: WestonWatkinsMSVM(0.05, kernel="poly", degree=2, gamma=0.5, **TIGHT),
    lambda: WestonWatkinsMSVM(0.05, kernel="linear", **TIGHT),
], ids=["reinforced-rbf", "ww-poly", "ww-linear"])
def test_a_warm_refit_on_the_same_data_reuses_the_row_source_exactly(data, make):
    X, y, _, _ = data
    est = _kept(make()).fit(X, y)
    src = _src(est)
    for C in (0.1, 0.2, 3.0):
        est.set_params(C=C).fit(X, y)
        assert _src(est) is src                       # reused ...
        cold = _cold(est, X, y)
        assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)   # ... exactly
        np.testing.assert_array_equal(est.predict(X), cold.predict(X))
        if est.kernel != "linear":
            np.testing.assert_allclose(np.array(src.scores), _scores_from_scratch(est, X),
                                       rtol=1e-9, atol=1e-9)


def test_no_reuse_without_keep_rows_or_warm_start(data):
    X, y, _, _ = data
    est = ReinforcedMSVM(0.1, kernel="rbf", gamma=0.5, warm_start=True).fit(X, y)
    assert getattr(est, "_row_state", None) is None      # a plain warm_start keeps no cache
    est = _kept(ReinforcedMSVM(0.1, kernel="rbf", gamma=0.5)).set_params(warm_start=False)
    est.fit(X, y)
    assert getattr(est, "_row_state", None) is None


def test_x_changed_in_place_is_new_data(data):
    X, y, _, _ = data
    X = X.copy()
    est = _kept(ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5, **TIGHT)).fit(X, y)
    src = _src(est)
    X[:5] *= 1.5                                          # the same array object
    est.set_params(C=1.0).fit(X, y)
    assert _src(est) is not src
    cold = _cold(est, X, y)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    np.testing.assert_allclose(np.array(_src(est).scores), _scores_from_scratch(est, X),
                               rtol=1e-9, atol=1e-9)


def test_sparse_x_changed_in_place_is_new_data(data):
    X, y, _, _ = data
    Xs = sp.csr_matrix(X)
    est = _kept(WestonWatkinsMSVM(0.5, kernel="rbf", gamma=0.5, **TIGHT)).fit(Xs, y)
    src = _src(est)
    est.set_params(C=1.0).fit(Xs, y)
    assert _src(est) is src
    Xs.data[:7] += 0.25
    est.set_params(C=2.0).fit(Xs, y)
    assert _src(est) is not src
    assert est.objective_ == pytest.approx(_cold(est, Xs, y).objective_, rel=1e-6)


@pytest.mark.parametrize("change", [dict(gamma=0.25), dict(kernel="poly"), dict(degree=2),
                                    dict(coef0=1.0), dict(cache_dtype="float32")],
                         ids=["gamma", "kernel", "degree", "coef0", "cache_dtype"])
def test_a_changed_kernel_is_not_reused(data, change):
    X, y, _, _ = data
    est = _kept(WestonWatkinsMSVM(0.5, kernel="poly" if "degree" in change or "coef0" in change
                                  else "rbf", gamma=0.5, **TIGHT)).fit(X, y)
    src = _src(est)
    est.set_params(C=1.0, **change).fit(X, y)
    assert _src(est) is not src
    cold = _cold(est, X, y)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    np.testing.assert_array_equal(est.predict(X), cold.predict(X))


def test_a_gamma_scale_that_follows_x_is_not_reused(data):
    X, y, _, _ = data
    est = _kept(WestonWatkinsMSVM(0.5, kernel="rbf", gamma="scale", **TIGHT)).fit(X, y)
    src = _src(est)
    est.set_params(C=1.0).fit(2.0 * X, y)                  # new X, new gamma_
    assert _src(est) is not src
    assert est.objective_ == pytest.approx(_cold(est, 2.0 * X, y).objective_, rel=1e-6)


def test_changed_sample_weight_or_labels_reuse_the_source_and_stay_exact(data):
    X, y, _, _ = data
    rng = np.random.default_rng(0)
    est = _kept(ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5, reinforcement=0.5,
                               **TIGHT)).fit(X, y)
    src = _src(est)
    w = rng.uniform(0.0, 3.0, len(y))
    w[:4] = 0.0
    est.set_params(C=1.0).fit(X, y, sample_weight=w)
    assert _src(est) is src
    cold = ReinforcedMSVM(1.0, kernel="rbf", gamma=0.5, reinforcement=0.5,
                          **TIGHT).fit(X, y, sample_weight=w)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    np.testing.assert_array_equal(est.predict(X), cold.predict(X))
    y2 = np.roll(y, 7)                                    # other labels, same X
    est.set_params(C=2.0).fit(X, y2)
    assert _src(est) is src
    cold = ReinforcedMSVM(2.0, kernel="rbf", gamma=0.5, reinforcement=0.5, **TIGHT).fit(X, y2)
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-6)
    np.testing.assert_allclose(np.array(src.scores), _scores_from_scratch(est, X),
                               rtol=1e-9, atol=1e-9)


def test_a_failed_fit_drops_the_kept_source(data):
    X, y, _, _ = data
    est = _kept(ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5)).fit(X, y)
    with pytest.raises(ValueError):
        est.fit(X, y, sample_weight=-np.ones(len(y)))
    assert getattr(est, "_row_state", None) is None


def test_copies_and_pickles_hold_no_row_source(data):
    X, y, _, _ = data
    est = _kept(ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5)).fit(X, y)
    est._join_path(keep_rows=True, columns=KernelColumns(len(y)))
    for other in (copy.deepcopy(est), pickle.loads(pickle.dumps(est))):
        for name in ("_row_state", "_path_reuse"):
            assert not hasattr(other, name)
        np.testing.assert_array_equal(other.predict(X), est.predict(X))
    assert est._row_state is not None and est._path().keep_rows      # the original keeps them


def test_data_fingerprint():
    X = np.arange(12.0).reshape(4, 3)
    assert data_fingerprint(X) == data_fingerprint(X.copy())
    assert data_fingerprint(X) != data_fingerprint(X.reshape(3, 4))
    assert data_fingerprint(X) != data_fingerprint(X.astype(np.float32))
    Y = X.copy()
    Y[2, 1] = np.nextafter(Y[2, 1], 99)
    assert data_fingerprint(X) != data_fingerprint(Y)
    assert data_fingerprint(sp.csr_matrix(X)) == data_fingerprint(sp.csr_matrix(X.copy()))
    assert data_fingerprint(sp.csr_matrix(X)) != data_fingerprint(X)


# ---------------------------------------------------------------------- the pieces
@pytest.mark.parametrize("kind", ["rbf", "linear", "precomputed"])
def test_scale_scores_scales_the_scores(data, kind):
    X, _, _, _ = data
    rng = np.random.default_rng(1)
    U = rng.normal(size=(len(X), 3))
    src_X = kernel_matrix(X, X, "rbf", 0.5) if kind == "precomputed" else X
    src = make_row_source(src_X, "linear" if kind == "linear" else kind, 3, gamma=0.5,
                          cache_size=1e-3 if kind == "linear" else 200.0)
    from msvm._core._solver import init_scores
    init_scores(src, np.ascontiguousarray(U))
    before = [src.sample_scores(i) for i in range(len(X))]
    src.scale_scores(-2.5)
    for i in range(len(X)):
        np.testing.assert_allclose(src.sample_scores(i), -2.5 * before[i], rtol=1e-14)


@pytest.mark.parametrize("make", [
    lambda C: ReinforcedMSVM(C, kernel="rbf", gamma=0.5, reinforcement=0.5),
    lambda C: WestonWatkinsMSVM(C, kernel="rbf", gamma=0.5),
], ids=["reinforced", "weston-watkins"])
def test_path_start_is_feasible_and_keeps_free_variables(data, make):
    X, y, _, _ = data
    y = np.unique(y, return_inverse=True)[1].astype(np.int32)
    est = make(2.0).set_params(**TIGHT).fit(X, y)
    problem = est._dual_problem(y, 3, 4.0 * np.ones(len(y)))
    alpha = est._warm_start_state().alpha
    start = path_start(problem, alpha, 2.0, 4.0)
    lo, hi = problem.expanded_bounds()
    assert np.all(start >= lo) and np.all(start <= hi)
    c = problem.slot_sums(start).sum(axis=0)
    assert np.abs(c - c.mean()).max() <= 1e-9 * np.abs(problem.slot_sums(start)).sum()
    scaled = rescaled_dual(alpha, 2.0, 4.0)
    at_bound = (scaled == lo) | (scaled == hi)
    assert np.array_equal(start[at_bound], scaled[at_bound])       # exact at the bounds
    assert not np.array_equal(start, scaled)                       # free ones not doubled
    # no free variable: the plain rescaling
    lo_only = np.zeros_like(alpha)
    assert np.array_equal(path_start(problem, lo_only, 2.0, 4.0), lo_only)


def test_kernel_columns_score_exactly_and_follow_their_inputs(data):
    X, y, Xt, _ = data
    est = ReinforcedMSVM(1.0, kernel="rbf", gamma=0.5).fit(X, y)
    plain = est.decision_values(Xt)
    est._join_path(columns=KernelColumns(len(y)))
    np.testing.assert_allclose(est.decision_values(Xt), plain, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(est.decision_values(Xt), plain, rtol=1e-12, atol=1e-12)
    Xt2 = Xt.copy()
    Xt2[0] += 1.0                                   # other scoring inputs: recomputed
    est._leave_path()
    plain2 = est.decision_values(Xt2)
    est._join_path(columns=KernelColumns(len(y)))
    est.decision_values(Xt)
    np.testing.assert_allclose(est.decision_values(Xt2), plain2, rtol=1e-12, atol=1e-12)
    est.set_params(gamma=0.25, C=2.0).fit(X, y)      # other kernel, other support: recomputed
    got = est.decision_values(Xt)
    est._leave_path()
    np.testing.assert_allclose(got, est.decision_values(Xt), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------- the whole path
@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(kernel="rbf", gamma=0.5, reinforcement=0.5, random_state=0),
    lambda: WestonWatkinsMSVM(kernel="rbf", gamma="scale", random_state=0),
], ids=["reinforced", "weston-watkins"])
def test_warm_path_selects_and_fits_as_the_cold_path(data, make):
    X, y, Xt, yt = data
    lambdas = lambda_grid(-10, 4)
    searches = [TuningSetSearch(make().set_params(tol=1e-7), lambdas=lambdas,
                                warm_start=warm, refit=False).fit(X, y, X_tune=Xt, y_tune=yt)
                for warm in (True, False)]
    warm, cold = searches
    assert warm.best_lambda_ == cold.best_lambda_
    # every fit of the path: the same objective as the cold fit, to the solver's tolerance
    scorer = check_scoring(make())
    paths = [_lambda_path(make().set_params(tol=1e-7), {}, np.sort(lambdas)[::-1], len(y),
                          warm_start, X, y, Xt, yt, {}, scorer, keep_best=False)[0]
             for warm_start in (True, False)]
    for w, c in zip(*paths):
        assert w["objective"] == pytest.approx(c["objective"], rel=1e-5, abs=1e-9)
    assert warm.best_estimator_.objective_ == pytest.approx(cold.best_estimator_.objective_,
                                                            rel=1e-5)
    # the path's estimator state does not leak into the selected fit
    for name in ("_row_state", "_path_reuse"):
        assert not hasattr(warm.best_estimator_, name)
    fresh = make().set_params(C=warm.best_params_["C"], tol=1e-7).fit(X, y)
    assert warm.best_estimator_.objective_ == pytest.approx(fresh.objective_, rel=1e-5)
    np.testing.assert_array_equal(warm.predict(Xt), cold.predict(Xt))
