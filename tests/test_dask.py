"""Fits and predictions on Dask arrays (msvm/_dask.py), on the synchronous scheduler.

The chunked fit solves the same problem as the in-memory fit: its objective is within tol
(relative) of the in-memory one whatever the chunking (one chunk, equal, unequal, empty
chunks, chunks missing classes), its duality gap is certified the same way, and its
predictions, computed chunk by chunk, are those of its own coefficients.  Inputs the chunked
path cannot fit are refused with the remedy.
"""

import sys
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

import msvm
from _estimators import DASK_PATHS
from msvm._dask import is_dask_collection, require_dask

da = pytest.importorskip("dask.array", reason="dask is an optional dependency (msvm[dask])")
dask = pytest.importorskip("dask")

CONVEX = ["WestonWatkinsMSVM", "ReinforcedMSVM", "AngleBasedMSVM"]
PATHS = DASK_PATHS


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(240, 5, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=1)
    return X, y


# every test of this file runs on the synchronous scheduler (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("dask_synchronous")


def _pair(name, X, y, chunks, sw=None, **params):
    """(in-memory fit, chunked fit) of the same estimator."""
    params = {**PATHS["linear"], **params}
    ref = getattr(msvm, name)(**params).fit(X, y, sample_weight=sw)
    Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
    est = getattr(msvm, name)(**params).fit(Xd, y, sample_weight=sw)
    return ref, est, Xd


def _same_problem(ref, est):
    """Both objectives within tol (relative) of each other, both certified."""
    assert est.converged_ and est.stop_reason_ == "tol"
    rel = abs(est.objective_ - ref.objective_) / abs(ref.objective_)
    assert rel <= ref.tol, (est.objective_, ref.objective_)
    assert est.duality_gap_ >= 0


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("name", CONVEX)
def test_chunked_fit_solves_the_in_memory_problem(data, name, path):
    """Every convex estimator on the linear and approximate paths: the chunked fit's
    objective is that of the in-memory fit within tol, and it predicts as its own
    coefficients do, chunk by chunk, as Dask arrays."""
    X, y = data
    ref, est, Xd = _pair(name, X, y, 120, **PATHS[path])
    _same_problem(ref, est)
    pred = est.predict(Xd)
    assert is_dask_collection(pred) and pred.chunks[0] == Xd.chunks[0]
    assert np.array_equal(pred.compute(), est.predict(X))
    assert np.mean(pred.compute() == ref.predict(X)) >= 0.97
    scores = est.decision_function(Xd)
    assert scores.shape == (len(y), 3)
    np.testing.assert_allclose(scores.compute(), est.decision_function(X), rtol=1e-12)
    assert est.score(Xd, y) == pytest.approx(est.score(X, y))


@pytest.mark.parametrize("chunks", [
    (240,), (60, 60, 60, 60), (1, 100, 0, 39, 100), (17, 0, 0, 200, 23)],
    ids=["one", "equal", "unequal-empty", "empty-run"])
def test_any_chunking_gives_the_same_fit(data, chunks):
    """One chunk, equal chunks, unequal chunks with empty ones: the same problem."""
    X, y = data
    ref = msvm.WestonWatkinsMSVM(kernel="linear").fit(X, y)
    est = msvm.WestonWatkinsMSVM(kernel="linear").fit(
        da.from_array(X, chunks=(chunks, 5)), da.from_array(y, chunks=(chunks,)))
    _same_problem(ref, est)


def test_classes_absent_from_chunks_and_weights(data):
    """Rows sorted by class (each chunk holds one or two classes), sample weights and
    class_weight='balanced' given as Dask arrays of another chunking: the same problem."""
    X, y = data
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    params = dict(kernel="linear", class_weight="balanced")
    ref = msvm.ReinforcedMSVM(**params).fit(X, y, sample_weight=sw)
    est = msvm.ReinforcedMSVM(**params).fit(
        da.from_array(X, chunks=(50, 5)), da.from_array(y, chunks=33),
        sample_weight=da.from_array(sw, chunks=71))
    _same_problem(ref, est)


def test_dataframe_input_and_string_labels(data):
    """A dask DataFrame X with named columns and string labels: fit, predict on frames."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = data
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    labels = np.array(["a", "b", "c"])[y]
    ref = msvm.WestonWatkinsMSVM(kernel="linear").fit(frame, labels)
    est = msvm.WestonWatkinsMSVM(kernel="linear").fit(dd.from_pandas(frame, npartitions=3),
                                                      labels)
    _same_problem(ref, est)
    assert list(est.feature_names_in_) == list(frame.columns)
    pred = est.predict(dd.from_pandas(frame, npartitions=4)).compute()
    assert np.array_equal(pred, est.predict(frame))


def test_binary_decision_function_and_predict_proba_by_chunks(data):
    """k = 2 keeps scikit-learn's 1-D decision_function; predict_proba of an estimator
    fitted with probability=True is computed chunk by chunk and equals the NumPy one."""
    X, y = data
    keep = y < 2
    est = msvm.WestonWatkinsMSVM(kernel="linear").fit(
        da.from_array(X[keep], chunks=50), y[keep])
    assert est.decision_function(da.from_array(X, chunks=50)).shape == (len(y),)
    prob = msvm.WestonWatkinsMSVM(kernel="linear", probability=True, probability_grid=2,
                                  random_state=0).fit(X[::3], y[::3])
    P = prob.predict_proba(da.from_array(X, chunks=(77, 5)))
    assert is_dask_collection(P)
    np.testing.assert_allclose(P.compute(), prob.predict_proba(X), rtol=1e-12)


@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "TargetedLocalMSVM"])
def test_refused_fits_name_the_remedy(data, name):
    """An exact kernel and warm_start on Dask input are refused with the remedy before any
    work; the estimator stays unfitted."""
    X, y = data
    Xd = da.from_array(X, chunks=60)
    refused = getattr(msvm, name)(kernel="rbf")
    with pytest.raises(ValueError, match="kernel_approximation.*compute"):
        refused.fit(Xd, y)
    assert not hasattr(refused, "classes_")
    est = msvm.ReinforcedMSVM(kernel="linear", warm_start=True)
    with pytest.raises(ValueError, match="warm_start"):
        est.fit(Xd, y)
    assert not hasattr(est, "coef_")


def test_robust_dc_fit_solves_the_in_memory_problem(data):
    """RobustMSVM's DC steps as chunked Newton solves: the objective of the in-memory DC fit
    within tol, a nonincreasing DC path ending at 'tol', and ``truncated_`` a Dask array
    holding the truncation of the chunked fit's own function."""
    X, y = data
    ref = msvm.RobustMSVM(kernel="linear").fit(X, y)
    est = msvm.RobustMSVM(kernel="linear").fit(da.from_array(X, chunks=120), y)
    _same_problem(ref, est)
    path = est.dc_objectives_
    assert len(path) == est.n_iter_ >= 2
    assert np.all(np.diff(path) <= 0)
    assert est.objective_ == pytest.approx(path[-1], rel=1e-12)
    truncated = est.truncated_
    assert is_dask_collection(truncated)
    G = est.decision_values(X)
    s = est._truncation_value(3)
    own = np.eye(3, dtype=bool)[y]
    np.testing.assert_array_equal(truncated.compute(), np.any((G > s) & ~own, axis=1))
    assert np.mean(truncated.compute() == ref.truncated_) >= 0.97


def test_robust_dc_stop_rules_are_the_in_memory_ones(data):
    """max_dc_iter=1 stops the chunked DC loop after one step with the in-memory fit's
    stop reason and ConvergenceWarning; truncation=None is the one convex solve."""
    from sklearn.exceptions import ConvergenceWarning

    X, y = data
    Xd = da.from_array(X, chunks=120)
    with pytest.warns(ConvergenceWarning, match="max_dc_iter"):
        est = msvm.RobustMSVM(kernel="linear", max_dc_iter=1).fit(Xd, y)
    assert est.stop_reason_ == "max_dc_iter" and not est.converged_
    assert est.n_iter_ == 2
    ref = msvm.RobustMSVM(kernel="linear", truncation=None).fit(X, y)
    est = msvm.RobustMSVM(kernel="linear", truncation=None).fit(Xd, y)
    _same_problem(ref, est)
    assert est.n_iter_ == 1 and not np.any(est.truncated_.compute())


def test_bad_chunked_input_is_refused(data):
    """NaN in a chunk, a single class, negative weights: the in-memory fit's errors."""
    X, y = data
    bad = X.copy()
    bad[200, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        msvm.WestonWatkinsMSVM(kernel="linear").fit(da.from_array(bad, chunks=60), y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        msvm.WestonWatkinsMSVM(kernel="linear").fit(da.from_array(X, chunks=60),
                                                    np.zeros(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        msvm.WestonWatkinsMSVM(kernel="linear").fit(da.from_array(X, chunks=60), y,
                                                    sample_weight=-np.ones(len(y)))


def test_persisted_features_give_the_same_fit(data):
    """dask.config msvm.persist_features=True maps the features once: the same fit."""
    X, y = data
    params = dict(PATHS["nystroem"], n_components=10)
    X, y = X[:120], y[:120]
    Xd = da.from_array(X, chunks=40)
    a = msvm.WestonWatkinsMSVM(**params).fit(Xd, y)
    with dask.config.set({"msvm.persist_features": True}):
        b = msvm.WestonWatkinsMSVM(**params).fit(Xd, y)
    np.testing.assert_allclose(a.feature_coef_, b.feature_coef_, rtol=1e-6, atol=1e-9)


def test_missing_dask_names_the_extra(monkeypatch):
    """Without Dask, the error names the msvm[dask] extra."""
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"msvm\[dask\]"):
        require_dask()


def test_numpy_input_never_takes_the_chunked_path(data, monkeypatch):
    """NumPy input is not a Dask collection: today's path (the chunked fit is not called)."""
    import msvm._base as base

    def refuse(*args, **kwargs):
        raise AssertionError("the chunked path was taken")

    monkeypatch.setattr(base, "fit_dask", refuse)
    X, y = data
    assert not is_dask_collection(X)
    msvm.WestonWatkinsMSVM(kernel="linear").fit(X, y).predict(X)


@pytest.mark.parametrize("name", ["ReinforcedMSVM", "AngleBasedMSVM"])
def test_chunked_intercepts_are_the_exact_intercept_step(data, name):
    """Where the in-memory fit makes the exact intercept step (every loss term on one slot),
    the chunked fit's intercepts are that step's on its own fitted function (breakpoints
    gathered in a window, over 5 chunks): the in-memory search on all margins agrees."""
    from msvm._intercept import exact_intercepts

    X, y = data
    est = getattr(msvm, name)(kernel="linear").fit(da.from_array(X, chunks=50), y)
    k = len(est.classes_)
    problem = est._dual_problem(np.searchsorted(est.classes_, y).astype(np.int32), k,
                                est.C_ * np.ones(len(y)))
    T = est._output_map(k)
    # slot functions from the output coefficients: coef_ = T Wh^T, T of full column rank
    Wh = np.linalg.lstsq(T, est.coef_, rcond=None)[0].T
    b_slot = np.linalg.lstsq(T, est.intercept_, rcond=None)[0]
    exact = exact_intercepts(problem, X @ Wh, b0=b_slot)
    np.testing.assert_allclose(b_slot, exact, atol=1e-8)


def test_line_search_rules_keep_descent():
    """The chunked line search's rules on a bracket (t, derivative, slope) of an increasing
    piecewise-linear derivative: the exact root where both ends lie on one linear piece
    (not where the slopes differ), descent judged from the ends alone (a step far beyond a
    steep root is not sure to descend), and a root below every step tried searched by
    powers of 4 below the smallest."""
    from msvm._dask import _bracket_steps, _descends, _one_piece, _secant

    # d(t) = 2 t - 1 on [0.25, 1]: one piece, root 0.5
    lo, hi = (0.25, -0.5, 2.0), (1.0, 1.0, 2.0)
    assert _one_piece(lo, hi, 1e-12)
    assert lo[0] - lo[1] / lo[2] == pytest.approx(0.5)
    assert not _one_piece(lo, (1.0, 1.0, 3.0), 1e-12)
    assert not _one_piece((0.0, -0.5, 0.0), hi, 1e-12)      # no slope known at t = 0
    # the bound lo d(lo) + (t - lo) d(hi) < 0: sure at the secant of a narrow bracket
    narrow_lo, narrow_hi = (0.4, -0.5, 1.0), (0.6, 0.2, 1.0)
    assert _descends(narrow_lo, narrow_hi, _secant(narrow_lo, narrow_hi))
    # derivative -1 up to lo = 0.1, then steep: at most -0.1 + 1000 (t - 0.1) is not < 0
    assert not _descends((0.1, -1.0, 0.0), (0.2, 1000.0, 0.0), 0.19)
    below = _bracket_steps((0.0, -1.0, 0.0), (1e-6, 5.0, 1.0))
    assert max(below) < 1e-6 and min(below) < 1e-12
    inside = _bracket_steps(lo, hi)
    assert all(0.25 < t < 1.0 for t in inside) and 0.5 in inside


def _probability_pair(name, X, y, chunks, **params):
    """(in-memory, chunked) fits with probability=True, and the chunked predict_proba; the
    weighted refits at tol 1e-4 (10 times the estimator's), so that both sides' refits are
    near their common optimum, and at every level on both sides (the chunked chains do not
    stop where they settle: ``msvm._probability.SETTLED_CHAINS``)."""
    import msvm._probability as probability
    params = {"C": 1.0, "tol": 1e-5, "probability": True, **params}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(probability, "REFIT_TOL_FACTOR", 10.0)
        patch.setattr(probability, "SETTLED_CHAINS", False)
        ref = getattr(msvm, name)(**params).fit(X, y)
        Xd = da.from_array(X, chunks=(chunks, X.shape[1]))
        est = getattr(msvm, name)(**params).fit(Xd, y)
    P = est.predict_proba(Xd)
    assert is_dask_collection(P)
    return ref, est, P.compute()


def test_probability_fit_on_chunks_gives_the_in_memory_probabilities(data):
    """probability=True on Dask input: the weighted refits as chunked fits, each started
    from the last one's iterate, and the calibration folds as row subsets of the chunks give
    the in-memory schedule (the same number of fits, C factor) and probabilities within
    5e-3 of the in-memory ones (every fit is the same problem's solution within tol)."""
    X, y = data
    keep = y < 2
    ref, est, P = _probability_pair("ReinforcedMSVM", X[keep][:90], y[keep][:90], 45,
                                    kernel="linear", probability_grid=1)
    assert est.n_probability_fits_ == ref.n_probability_fits_
    assert est.probability_C_factor_ == ref.probability_C_factor_
    np.testing.assert_allclose(P, ref.predict_proba(X[keep][:90]), atol=5e-3)
    assert np.array_equal(P.argmax(axis=1), est.predict(X[keep][:90]) == est.classes_[1])


def test_weights_spanning_orders_keep_the_best_certificate(data):
    """A chunked fit whose weights span 1000x: where a smaller smoothing certifies worse
    (the margins resolved no finer than rounding), the best certified point is kept and a
    ConvergenceWarning names tol; the objective stays within 1e-4 of the in-memory one
    (before: the last, smallest smoothing's point, objective 1.2e9 against 689.6)."""
    from sklearn.datasets import make_classification
    X, y = make_classification(150, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=1)
    sw = np.where(y == 0, 1000.0, 1.0)
    params = dict(kernel="linear", C=3.0, tol=1e-5)
    ref = msvm.WestonWatkinsMSVM(**params).fit(X, y, sample_weight=sw)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = msvm.WestonWatkinsMSVM(**params).fit(da.from_array(X, chunks=50), y,
                                                   sample_weight=sw)
    assert abs(est.objective_ - ref.objective_) <= 1e-4 * ref.objective_
    if not est.converged_:
        assert any("tol where smaller smoothing" in str(w.message) for w in caught)


@pytest.mark.slow
@pytest.mark.parametrize("name,path", [("WestonWatkinsMSVM", "linear"),
                                       ("ReinforcedMSVM", "nystroem")])
def test_probability_fit_on_chunks_three_classes(name, path):
    """Three classes, two levels, three chunks, the linear and the Nystroem paths: the
    chunked probability fit makes the in-memory schedule and its probabilities are within
    5e-3 of the in-memory ones (the feature map is kept along each chain)."""
    X, y = make_classification(150, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=1)
    ref, est, P = _probability_pair(name, X, y, 50, probability_grid=2, **PATHS[path])
    assert est.n_probability_fits_ == ref.n_probability_fits_
    np.testing.assert_allclose(P, ref.predict_proba(X), atol=5e-3)
