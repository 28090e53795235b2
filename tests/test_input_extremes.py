"""Inputs at the edges of double precision are refused with the cause and the remedy, on the
exact and the approximate kernel paths alike, and a constant fit names its true cause."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, TargetedLocalMSVM,
                  WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.exceptions import DegenerateFitWarning

ESTIMATORS = [ReinforcedMSVM, WestonWatkinsMSVM, AngleBasedMSVM]
OVERFLOW = "the kernel overflows double precision on X"
UNDERFLOW = "the kernel underflows double precision on X"


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(90, 3, centers=3, random_state=0)


@pytest.mark.parametrize("est", ESTIMATORS)
@pytest.mark.parametrize("approx, kernel, scale", [
    (None, "rbf", 1e300), ("rff", "rbf", 1e300), ("nystroem", "rbf", 1e200),
    ("nystroem", "linear", 1e200), ("nystroem", "rbf", 1e300)])
def test_overflowing_X_is_refused_on_every_path_with_the_exact_message(blobs, est, approx,
                                                                      kernel, scale):
    """X * 1e300 (rff) or 1e200 (Nystroem): the exact path's refusal, no RuntimeWarning and
    no silently chance-level classifier."""
    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=OVERFLOW) as info:
            est(kernel=kernel, gamma=0.5 if kernel == "rbf" else "scale",
                kernel_approximation=approx, n_components=50).fit(X * scale, y)
    assert "Rescale X" in str(info.value)


@pytest.mark.parametrize("approx", [None, "rff", "nystroem"])
@pytest.mark.parametrize("kernel, gamma", [("rbf", "scale"), ("rbf", 0.5), ("rbf", "auto"),
                                           ("linear", "scale"), ("poly", "scale")])
def test_underflowing_X_is_refused_not_fitted_as_constant(blobs, approx, kernel, gamma):
    """X * 1e-200: X.var() and every squared norm underflow; before, gamma='scale' became 1.0
    and the constant Gram matrix gave a DegenerateFitWarning advising a larger C."""
    if approx == "rff" and kernel != "rbf":
        pytest.skip("rff approximates the RBF kernel only")
    X, y = blobs
    with pytest.raises(ValueError, match=UNDERFLOW) as info:
        ReinforcedMSVM(kernel=kernel, gamma=gamma, kernel_approximation=approx,
                       n_components=50).fit(X * 1e-200, y)
    assert "Rescale X" in str(info.value)


def test_scale_gamma_refuses_a_variance_that_underflows_on_a_varying_X():
    """A non-constant X whose variance underflows (an offset of 1e-140, a spread of 1e-155:
    squared norms still normal) does not get gamma = 1.0 as if X were constant."""
    from msvm._kernels import resolve_gamma
    X = np.full((4, 2), 1e-140)
    X[0, 0] += 1e-155
    assert 0 < X.var() < np.finfo(float).tiny
    with pytest.raises(ValueError, match="outside what double precision"):
        resolve_gamma("scale", "rbf", X, np.array([0, 1, 0, 1]))
    assert resolve_gamma("scale", "rbf", np.full((4, 2), 1e-140), None) == 1.0   # constant


def test_moderate_scales_still_fit(blobs):
    """The checks do not refuse X far inside double precision (1e-100 and 1e100 with a
    float gamma scaled alike, and gamma='scale')."""
    X, y = blobs
    for scale in (1e-100, 1e100):
        for approx in (None, "rff", "nystroem"):
            m = ReinforcedMSVM(kernel="rbf", kernel_approximation=approx,
                               n_components=50).fit(X * scale, y)
            assert m.score(X * scale, y) > 0.9


def _degenerate_message(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    messages = [str(w.message) for w in caught if issubclass(w.category, DegenerateFitWarning)]
    assert len(messages) == 1, [str(w.message) for w in caught]
    return messages[0]


def test_degenerate_warning_names_constant_X(blobs):
    _, y = blobs
    message = _degenerate_message(ReinforcedMSVM(C=100.0), np.full((len(y), 3), 2.5), y)
    assert "every training sample has the same X" in message
    assert "larger C" not in message


def test_degenerate_warning_names_all_zero_sparse_X(blobs):
    _, y = blobs
    message = _degenerate_message(ReinforcedMSVM(C=100.0), sp.csr_matrix((len(y), 3)), y)
    assert "X is all zero" in message and "larger C" not in message


def test_degenerate_warning_names_degree_zero(blobs):
    X, y = blobs
    message = _degenerate_message(ReinforcedMSVM(kernel="poly", degree=0, C=100.0), X, y)
    assert "degree=0" in message and "use degree >= 1" in message


def test_degenerate_warning_names_identical_points_with_different_labels(blobs):
    X, _ = blobs
    Xd = np.repeat(X[:2], 30, axis=0)
    yd = np.tile([0, 1, 2], 20)
    message = _degenerate_message(ReinforcedMSVM(C=100.0), Xd, yd)
    assert "identical inputs, different labels" in message
    assert "60 of the 60" in message


def test_degenerate_warning_at_small_C_still_advises_a_larger_C(blobs):
    """Informative X at a tiny C: the cause is still C."""
    X, y = blobs
    y = np.where(np.arange(len(y)) < 80, 0, y)        # one class dominates
    message = _degenerate_message(ReinforcedMSVM(C=1e-6), X, y)
    assert "larger C" in message


# ---- found by the slow scale fuzz family (round 9) -----------------------------------------
@pytest.mark.parametrize("make", [
    lambda: AdaptiveWeightedSVM(C=0.1, scheme="one-step", gamma="median", kernel="rbf"),
    lambda: AngleBasedMSVM(C=0.1, gamma="median", kernel="rbf"),
    lambda: TargetedLocalMSVM(C=0.1, gamma="median", kernel="rbf", n_grid=4, bandwidth=10.0)])
@pytest.mark.parametrize("huge", ["every row", "one row"])
def test_median_gamma_on_overflowing_distances_names_the_remedy(make, huge):
    """gamma='median' on X whose squared distances overflow is refused with a message that
    says to rescale X (it was scikit-learn's bare "Input contains infinity" from the
    distance routine, which names neither the cause nor the remedy)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    y = np.array([0, 1, 0, 1, 0, 1])
    if huge == "every row":
        X *= 1e300
    else:
        X[2] *= 1e300
    with pytest.raises(ValueError, match="Rescale X"):
        make().fit(X, y)


def test_squared_distances_of_overflowing_rows_are_infinite_the_others_exact():
    """Rows whose squared norms overflow get infinite distances; the other entries are the
    distances computed as for finite rows."""
    from msvm._kernels import squared_distances
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    A[1] *= 1e300
    B[3] *= 1e300
    D2 = squared_distances(A, B)
    assert np.all(np.isinf(D2[1])) and np.all(np.isinf(D2[:, 3]))
    keep_a, keep_b = [0, 2, 3], [0, 1, 2, 4]
    exact = ((A[keep_a, None, :] - B[None, keep_b, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(D2[np.ix_(keep_a, keep_b)], exact, rtol=1e-12)


# 13 samples whose first two columns are near 1e-300 and the third near 1e10 (linear kernel):
# the grouped finishing step met an empty free set and failed inside NumPy ("cannot reshape
# array of size 0")
NOTHING_FREE_X = np.array([
    [1.7781181268373116e-301, 2.450684123926357e-300, 426239869.9594208],
    [2.4272919841729317e-300, 2.8742119124466046e-300, 10663212592.984684],
    [-4.830246796305669e-301, -1.1210947138847618e-300, -3776391066.2838106],
    [-2.4467325980865792e-300, -2.7069864003705034e-301, -14030624711.016954],
    [4.8360042149853845e-301, 5.238477297606549e-301, 5513063589.327919],
    [1.0486563430585565e-300, -2.916557111126272e-301, -6504574107.989812],
    [-1.718612313316036e-300, -1.1336208018819682e-300, -12275404439.5956],
    [1.7160163012516322e-300, 1.1687186220488344e-300, 1906815535.1936517],
    [2.4977657075196632e-300, 1.7968206610063743e-300, 5645450815.594608],
    [-4.0673748019422205e-301, -3.3925051004425025e-300, -9714957661.561401],
    [1.1959802337496396e-300, 7.609029369955768e-301, 11511059674.747227],
    [-1.1706323178823997e-301, -2.924373286490766e-300, -12619276538.808395],
    [7.45305271420234e-301, 2.1492030882163135e-300, -369965147.0939011]])
NOTHING_FREE_Y = np.array([0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0])


def test_grouped_finishing_step_with_nothing_free_lets_the_fit_finish():
    """An active-set step on an empty free set is no step (the releases decide): the fit
    returns a finite model and reports its own stop, instead of a NumPy reshape error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = WeightedRobustMSVM(C=0.1, truncation=None, kernel="linear").fit(
            NOTHING_FREE_X, NOTHING_FREE_Y)
    assert np.all(np.isfinite(est.decision_function(NOTHING_FREE_X)))
    assert np.isfinite(est.objective_)
