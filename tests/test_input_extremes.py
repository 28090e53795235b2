"""Inputs at the edges of double precision are refused with the cause and the remedy, on the
exact and the approximate kernel paths alike, and a constant fit names its true cause."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
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
