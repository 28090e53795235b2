"""Malformed and extreme inputs to every estimator end in a named error or a correct finite fit.

Hypothesis draws a small classification problem and one defect or extreme of it -- non-finite
values (in X, y, sample_weight, parameters), huge and tiny scales, degenerate classes and
weights, odd labels, bad kernels and parameters -- and fits every estimator and
``TuningSetSearch`` (over a short lambda grid) on it.  Each case ends in one of two ways:

- a ValueError or TypeError whose message names the problem (key words of the message are
  asserted), and the estimator is left unfitted; or
- a finite fit: finite decision values equal to the function rebuilt here from ``dual_coef_``,
  ``intercept_`` and the oracle kernels of ``oracle/kernels.py``, predictions in
  ``classes_``, and ``objective_ >= 0`` equal to the model's objective of docs/models.md
  recomputed here (penalty from ``dual_coef_`` and the kernel between support vectors, plus
  C sum_i w_i loss_i with the oracle losses of ``oracle/losses.py``; the truncated
  loss for the DC models).

A case states which outcomes it allows: must raise (NaN in X), must fit (one sample in a
class), or either (X times 1e150: a fit, or a refusal that says "Rescale").

Every case runs under an interval timer in CPU time (:func:`case_timeout`, SIGPROF) that
raises inside the fit -- the solver re-raises a signal handler's exception from its nogil loops
within milliseconds -- so a hang fails that case with its input instead of hanging the suite,
and a loaded machine (where the process waits for a core) does not.  pytest-timeout, in wall
time, is only the backstop for the whole test (a deadlock that uses no CPU); it uses its thread
method and a bound far above the test's time at load 12.

The default run draws DEFAULT_EXAMPLES cases per (family, estimator), derandomized (about
20 s on one core); the ``slow`` variants (``-m slow``) draw SLOW_EXAMPLES (a few minutes).

One known defect remains (RBF_CANCELLATION_DEFECT, beyond any solver: the information of
'linear' and 'poly' kernel entries with a huge common offset lies below their rounding); in
its input region (``known_defect_of``) the fuzz cases still check termination, finiteness,
classes and ``objective_ >= 0``, but not the agreement with the recomputation.  The score-drift
exemption TargetedLocalMSVM's local fits had (one sample times 1e150 or more under 'linear'
and 'poly') was lifted in round 14: with it off, the slow scale family passed for that model
derandomized and in five runs of 400 random cases each, as did 162 fits of one huge row.
"""

import re
import signal
import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from _estimators import classes
from _signals import alarm_after
from oracle import kernel_matrix as ref_kernel
from oracle import reinforced_loss, robust_loss, smoothing_kernel, vertices, weighted_loss, ww_loss
from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  TargetedLocalMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.model_selection import TuningSetSearch, lambda_grid

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                reason="the per-case timeout needs POSIX interval timers")

# A tiny fit takes milliseconds; a case that runs this long (CPU time) is a hang.
CASE_SECONDS = 10.0
# Agreement of objective_ and decision values with the recomputation: relative, plus an
# absolute slack relative to the size of the terms summed (rounding in sums that cancel).
RTOL = 1e-6
ATOL = 1e-9
# Kernel rows cached in float32 (cache_dtype='auto' resolves to it for the RBF kernel at the
# default tol and C * weight <= 100): the solver's scores, from which objective_ is computed,
# are those of the kernel rounded to single precision (documented under cache_dtype), so the
# objective agrees with the float64 recomputation to single precision's unit roundoff of the
# terms summed
ATOL_FLOAT32_ROWS = 6e-8

DEFAULT_EXAMPLES = 60
SLOW_EXAMPLES = 400


class CaseTimeout(BaseException):
    """Raised by the case timer: the fit did not finish in CASE_SECONDS.

    A BaseException, so that no ``except Exception`` on the way can swallow it.
    """


def case_timeout(seconds=CASE_SECONDS):
    """Raise CaseTimeout inside the block after ``seconds`` of CPU time (SIGPROF)."""
    return alarm_after(seconds, CaseTimeout(f"the case ran longer than {seconds:g} s of CPU"),
                       clock="cpu")


# --------------------------------------------------------------------------------------------
# Estimators
# --------------------------------------------------------------------------------------------
# the fuzzed estimators (the model-specific draws and objectives below use these names);
# test_every_public_estimator_is_fuzzed keeps them in step with tests/_estimators.py
CLASSES = {"reinforced": ReinforcedMSVM, "robust": RobustMSVM,
           "weighted-robust": WeightedRobustMSVM, "adaptive": AdaptiveWeightedSVM,
           "weston-watkins": WestonWatkinsMSVM, "angle": AngleBasedMSVM,
           "targeted": TargetedLocalMSVM}
MODELS = [*CLASSES, "tuning-search"]
INNER = MODELS[:-1]
SEARCH_LAMBDAS = lambda_grid(-3, -1)            # three fits along the path


def test_every_public_estimator_is_fuzzed():
    """Every estimator of the registry (built from msvm.__all__) is drawn by the fuzz tests."""
    assert set(CLASSES.values()) == set(classes())


def make_estimator(model, params, inner=None):
    """The estimator ``model`` with ``params``; for the search, ``inner`` gets the params."""
    params = dict(params)
    if model == "tuning-search":
        lambdas = params.pop("lambdas", SEARCH_LAMBDAS)
        params.pop("C", None)
        # refit=False: the checks read the selected fit against the training X it saw
        return TuningSetSearch(make_estimator(inner, params), lambdas=lambdas, refit=False)
    params.setdefault("random_state", 0)
    cls = CLASSES[model]
    if model == "targeted":
        params.setdefault("n_grid", 4)
        params.setdefault("bandwidth", 10.0)
    return cls(**params)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------
@dataclass
class Case:
    """One fuzz case: the fit's inputs and the outcomes it allows.

    ``outcome`` is 'raise' (must raise, message matching ``match``), 'fit' (must fit, with a
    finite, checked result) or 'either' (a checked fit, or an error matching ``match``).
    ``predict_X`` is handed to predict after a successful fit ('raise' then refers to it).
    ``known_defect`` names the core defect whose region the input lies in (see
    ``known_defect_of``): the agreement with the recomputation is then not asserted.
    """

    name: str
    model: str
    inner: str
    X: np.ndarray
    y: np.ndarray
    sample_weight: object
    params: dict
    outcome: str
    match: str = ""
    predict_X: object = None
    at_predict: bool = False
    known_defect: str = ""

    def __repr__(self):
        sw = self.sample_weight
        sw = None if sw is None else np.asarray(sw)
        with np.printoptions(precision=3, threshold=40):
            return (f"Case({self.name!r}, model={self.model!r}, inner={self.inner!r}, "
                    f"params={self.params!r}, outcome={self.outcome!r}, match={self.match!r}, "
                    f"X{np.shape(self.X)}={np.asarray(self.X)!r}, y={np.asarray(self.y)!r}, "
                    f"sample_weight={sw!r}, known_defect={bool(self.known_defect)})")


def _base_model(model, inner):
    return inner if model == "tuning-search" else model


@st.composite
def problems(draw, model, min_features=1):
    """(inner, X, y, k, kernel parameters): a small k-class problem, every class present."""
    inner = draw(st.sampled_from(INNER)) if model == "tuning-search" else model
    base = _base_model(model, inner)
    k = draw(st.integers(2, 4))
    n = draw(st.integers(2 * k, 18))
    d = draw(st.integers(max(min_features, 2 if base == "targeted" else 1), 3))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    rng.shuffle(y)
    X = 2.0 * rng.standard_normal((k, d))[y] + rng.standard_normal((n, d))
    kernels = ["linear", "rbf", "poly", "callable"]
    if base != "targeted":
        kernels.append("precomputed")
    kernel = draw(st.sampled_from(kernels))
    params = {"C": draw(st.sampled_from([0.1, 1.0, 10.0]))}
    if kernel == "poly":
        params.update(degree=draw(st.integers(1, 3)), coef0=draw(st.sampled_from([0.0, 1.0])))
    if base == "adaptive":
        params["scheme"] = draw(st.sampled_from(["one-step", "iterative"]))
    if base in ("robust", "weighted-robust"):
        params["truncation"] = draw(st.sampled_from(
            [None, 0.0, 1.0] if base == "robust" else [None, "auto", 0.0, -1.0]))
    return inner, X, y, k, kernel, params


def callable_linear(A, B):
    """A user's callable kernel: the linear kernel (inf where it overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(A, dtype=np.float64) @ np.asarray(B, dtype=np.float64).T


def with_kernel(X, kernel, params):
    """(X for fit, params) with the kernel set; 'precomputed' turns X into its linear Gram."""
    params = dict(params)
    if kernel == "callable":
        params["kernel"] = callable_linear
        return X, params
    params["kernel"] = kernel
    if kernel == "precomputed":
        with np.errstate(over="ignore", invalid="ignore"):
            return callable_linear(X, X), params
    return X, params


def _case(name, model, inner, X, y, kernel, params, outcome, match="", sample_weight=None,
          **kwargs):
    X, params = with_kernel(X, kernel, params)
    return Case(name, model, inner, X, y, sample_weight, params, outcome, match, **kwargs)


# ---- non-finite values ----------------------------------------------------------------------
NONFINITE = [np.nan, np.inf, -np.inf]
NONFINITE_MESSAGE = r"NaN|infinity|finite"


def _nonfinite_parameters(model, base, kernel):
    """(parameter, value) pairs with a NaN or infinity for this model."""
    pairs = [("tol", np.nan), ("tol", np.inf)]
    if model != "tuning-search":                # the search sets C from its lambdas
        pairs += [("C", v) for v in NONFINITE]
    if kernel in ("rbf", "poly"):
        pairs += [("gamma", v) for v in NONFINITE]
    if kernel == "poly":
        pairs += [("coef0", v) for v in NONFINITE]
    if base in ("reinforced", "angle", "targeted"):
        pairs += [("reinforcement", np.nan)]
    if base in ("robust", "weighted-robust"):
        pairs += [("truncation", np.nan), ("dc_tol", np.nan)]
    if base == "robust":
        pairs += [("truncation", np.inf)]
    if base == "weighted-robust":
        pairs += [("truncation", -np.inf), ("utility", "nan"), ("cost", "inf")]
    if base == "adaptive":
        pairs += [("truncation", -np.inf)]
    if base == "targeted":
        pairs += [("bandwidth", np.nan), ("bandwidth", np.inf)]
    return pairs


@st.composite
def nonfinite_cases(draw, model):
    inner, X, y, k, kernel, params = draw(problems(model))
    base = _base_model(model, inner)
    n = len(y)
    where = draw(st.sampled_from(["X", "y", "sample_weight", "parameter", "lambdas",
                                  "predict X"]))
    value = draw(st.sampled_from(NONFINITE))
    i = draw(st.integers(0, n - 1))
    if where == "X":
        X = X.copy()
        X[i, draw(st.integers(0, X.shape[1] - 1))] = value
        if kernel == "precomputed":
            # the Gram matrix itself holds the non-finite entry
            Xk = callable_linear(np.nan_to_num(X), np.nan_to_num(X))
            j = draw(st.integers(0, n - 1))
            Xk[i, j] = Xk[j, i] = value
            params["kernel"] = "precomputed"
            return Case("non-finite Gram entry", model, inner, Xk, y, None, params, "raise",
                        NONFINITE_MESSAGE)
        return _case(f"{value} in X", model, inner, X, y, kernel, params, "raise",
                     NONFINITE_MESSAGE)
    if where == "y":
        y = y.astype(np.float64)
        y[i] = value
        return _case(f"{value} in y", model, inner, X, y, kernel, params, "raise",
                     NONFINITE_MESSAGE)
    if where == "sample_weight":
        sw = np.ones(n)
        sw[i] = value
        return _case(f"{value} in sample_weight", model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*(NaN|infinity)", sample_weight=sw)
    if where == "lambdas" and model == "tuning-search":
        params["lambdas"] = np.array([1e-2, value, 1e-3])
        return _case(f"{value} in lambdas", model, inner, X, y, kernel, params, "raise",
                     r"lambdas.*finite")
    if where == "predict X":
        Xp = X.copy()
        Xp[i, 0] = value
        if kernel == "precomputed":
            Xp = callable_linear(np.nan_to_num(X), np.nan_to_num(X))
            Xp[i, 0] = value
            return Case(f"{value} in the prediction Gram matrix", model, inner,
                        callable_linear(X, X), y, None, dict(params, kernel="precomputed"),
                        "raise", NONFINITE_MESSAGE, predict_X=Xp, at_predict=True)
        return _case(f"{value} in X at predict", model, inner, X, y, kernel, params, "raise",
                     NONFINITE_MESSAGE, predict_X=Xp, at_predict=True)
    name, v = draw(st.sampled_from(_nonfinite_parameters(model, base, kernel)))
    if name in ("utility", "cost"):
        M = np.eye(k) if name == "utility" else 1.0 - np.eye(k)
        M[0, 1] = np.nan if v == "nan" else np.inf
        v = M
    params[name] = v
    return _case(f"{name}={v!r}", model, inner, X, y, kernel, params, "raise",
                 rf"\b{name}\b")


# ---- scales -----------------------------------------------------------------------------------
SCALES = [1e-300, 1e-150, 1e-10, 1e10, 1e150, 1e300]

# A known defect: kernel entries computed as ||x||^2-sized sums lose the samples' differences
# when they share a large offset.  Fixed for 'rbf' (the row source centres X, see
# test_rbf_on_samples_with_a_large_common_offset); for 'linear' and 'poly' the information
# is below the rounding of the kernel entries themselves (1e300 + O(1)): no solver can get it.
RBF_CANCELLATION_DEFECT = (
    "kernel entries of samples with a large common offset: the 'linear' and 'poly' kernels' "
    "information lies below the rounding of their entries (1e300 + O(1))")
# X whose squared norms exceed this multiple of its largest squared distance is in its region
OFFSET_LARGE = 1e8


def known_defect_of(X, kernel):
    """The known core defect whose region the (scaled) training X lies in, or ''."""
    with np.errstate(over="ignore", invalid="ignore"):
        big = float(np.max(np.einsum("ij,ij->i", X, X)))
        diff = X[:, None, :] - X[None, :, :]
        spread = float(np.max(np.einsum("abd,abd->ab", diff, diff)))
    if not np.isfinite(big):
        return ""                      # refused: nothing is fitted
    if kernel != "rbf" and big > OFFSET_LARGE * spread:
        return RBF_CANCELLATION_DEFECT
    return ""
# a refusal of an extreme scale must say what to do
SCALE_MESSAGE = r"Rescale|rescale"


@st.composite
def scale_cases(draw, model):
    inner, X, y, k, kernel, params = draw(problems(model, min_features=2))
    base = _base_model(model, inner)
    how = draw(st.sampled_from(["all", "per column", "constant column", "constant X",
                                "one huge row"]))
    X = X.copy()
    if how == "all":
        s = draw(st.sampled_from(SCALES))
        X *= s
        name = f"X times {s:g}"
    elif how == "per column":
        s = np.array([draw(st.sampled_from(SCALES + [1.0])) for _ in range(X.shape[1])])
        X *= s
        name = f"column scales {s.tolist()}"
    elif how == "constant column":
        c = draw(st.integers(1 if base == "targeted" else 0, X.shape[1] - 1))
        X[:, c] = draw(st.sampled_from([0.0, 1.0, 1e150, -1e300]))
        name = f"constant column {c}"
    elif how == "constant X":
        X[:] = draw(st.sampled_from([0.0, 1.0, 1e-300, 1e300]))
        name = "constant X"
    else:
        X[draw(st.integers(0, len(y) - 1))] *= draw(st.sampled_from([1e150, 1e300]))
        name = "one huge row"
    if not np.all(np.isfinite(X)):
        # the scaling overflowed: X itself holds infinity
        return _case(name, model, inner, X, y, kernel, params, "raise", NONFINITE_MESSAGE)
    if kernel in ("rbf", "poly") and draw(st.booleans()):
        params["gamma"] = draw(st.sampled_from(["scale", "auto", "median", 1e-300, 1e300]))
    if name == "constant X" and base == "targeted":
        # nothing to smooth over: the target column is constant
        return _case(name, model, inner, X, y, kernel, params, "raise", r"target.*constant")
    # a user's Gram matrix (or callable) is refused for its values, not for X's scale
    outside = kernel in ("precomputed", "callable")
    match = SCALE_MESSAGE + ("|" + NONFINITE_MESSAGE if outside else "")
    known_defect = known_defect_of(X, kernel)
    if "gamma" in params or kernel in ("rbf", "poly"):
        match += r"|gamma"
    return _case(name, model, inner, X, y, kernel, params, "either", match,
                 known_defect=known_defect)


# ---- labels and weights --------------------------------------------------------------------
@st.composite
def label_weight_cases(draw, model):
    inner, X, y, k, kernel, params = draw(problems(model))
    n = len(y)
    how = draw(st.sampled_from([
        "one class", "a class of one sample", "string labels", "boolean labels",
        "mixed object labels", "continuous labels", "all-zero weights",
        "weights zero on a class", "weights positive on one class", "negative weight",
        "2-D weights", "wrong-length weights", "string weights", "huge or tiny weights",
        "one huge weight", "integer weights"]))
    sw = None
    if how == "one class":
        return _case(how, model, inner, X, np.full(n, 3), kernel, params, "raise", r"class")
    if how == "a class of one sample":
        y = y.copy()
        y[y == k - 1] = 0
        y[draw(st.integers(0, n - 1))] = k - 1
        if k == 2 and np.all(y == 1):
            y[0] = 0
        return _case(how, model, inner, X, y, kernel, params, "fit")
    if how == "string labels":
        names = np.array(["cat", "dog", "emu", "ant"])[:k]
        return _case(how, model, inner, X, names[y], kernel, params, "fit")
    if how == "boolean labels":
        return _case(how, model, inner, X, (y % 2).astype(bool), kernel, params, "fit")
    if how == "mixed object labels":
        labels = np.array([1, "a", 2.5, "b"], dtype=object)[:k]
        return _case(how, model, inner, X, labels[y], kernel, params, "raise",
                     r"label|[Tt]ype")
    if how == "continuous labels":
        return _case(how, model, inner, X, y + 0.5 * np.arange(n) / n, kernel, params,
                     "raise", r"label|continuous")
    if how == "all-zero weights":
        return _case(how, model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*zero", sample_weight=np.zeros(n))
    if how == "weights zero on a class":
        sw = np.ones(n)
        sw[y == draw(st.integers(0, k - 1))] = 0.0
        if k == 2:
            return _case(how, model, inner, X, y, kernel, params, "raise",
                         r"sample_weight.*one class", sample_weight=sw)
        return _case(how, model, inner, X, y, kernel, params, "fit", sample_weight=sw)
    if how == "weights positive on one class":
        sw = (y == draw(st.integers(0, k - 1))).astype(np.float64)
        return _case(how, model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*one class", sample_weight=sw)
    if how == "negative weight":
        sw = np.ones(n)
        sw[draw(st.integers(0, n - 1))] = -draw(st.sampled_from([1e-300, 0.5, 1e300]))
        return _case(how, model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*nonnegative", sample_weight=sw)
    if how == "2-D weights":
        shape = draw(st.sampled_from([(n, 1), (1, n), (n, 2)]))
        return _case(how, model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*1-D", sample_weight=np.ones(shape))
    if how == "wrong-length weights":
        m = draw(st.sampled_from([0, n - 1, n + 1]))
        return _case(how, model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*length", sample_weight=np.ones(m))
    if how == "string weights":
        return _case(how, model, inner, X, y, kernel, params, "raise",
                     r"sample_weight.*numeric", sample_weight=np.array(["w"] * n))
    if how == "integer weights":
        sw = np.random.default_rng(n).integers(1, 4, n)
        return _case(how, model, inner, X, y, kernel, params, "fit", sample_weight=sw)
    if how == "one huge weight":
        sw = np.ones(n)
        sw[draw(st.integers(0, n - 1))] = draw(st.sampled_from([1e150, 1e300]))
    else:
        sw = np.full(n, draw(st.sampled_from([1e-300, 1e-150, 1e150, 1e300])))
        if draw(st.booleans()):
            sw *= np.random.default_rng(n).uniform(0.5, 2.0, n)
    return _case(how, model, inner, X, y, kernel, params, "either",
                 r"sample_weight|\bC\b|Rescale", sample_weight=sw)


# ---- kernels and parameters -------------------------------------------------------------------
def callable_wrong_shape(A, B):
    """Ignores B: the Gram matrix of A with itself."""
    return np.asarray(A) @ np.asarray(A).T


def callable_transposed(A, B):
    return (np.asarray(A) @ np.asarray(B).T).T


def callable_nan(A, B):
    K = np.asarray(A, dtype=np.float64) @ np.asarray(B, dtype=np.float64).T
    K[0, 0] = np.nan
    return K


def callable_vector(A, B):
    return np.ones(len(A))


def callable_negative(A, B):
    """-x^T x': negative semidefinite, so indefinite unless zero."""
    return -callable_linear(A, B)


@st.composite
def kernel_parameter_cases(draw, model):
    inner, X, y, k, kernel, params = draw(problems(model))
    base = _base_model(model, inner)
    n = len(y)
    how = draw(st.sampled_from([
        "bad C", "bad gamma", "unknown kernel", "bad callable", "bad precomputed",
        "poly negative coef0", "poly degree 0", "negative degree", "extreme tol",
        "max_iter=1", "extreme C", "extreme gamma"]))
    if how == "bad C" and model == "tuning-search":
        # the search's C comes from its lambdas
        params["lambdas"] = np.array([1e-2, draw(st.sampled_from([0.0, -1.0]))])
        return _case("lambdas with a nonpositive entry", model, inner, X, y, kernel, params,
                     "raise", r"lambdas.*positive")
    if how == "bad C":
        params["C"] = draw(st.sampled_from([0.0, -1.0, -np.inf, "1"]))
        return _case(f"C={params['C']!r}", model, inner, X, y, kernel, params, "raise",
                     r"\bC\b")
    if how == "bad gamma":
        kernel = draw(st.sampled_from(["rbf", "poly"]))
        params["gamma"] = draw(st.sampled_from([0.0, -1.0, "bogus", None]))
        return _case(f"gamma={params['gamma']!r}", model, inner, X, y, kernel, params,
                     "raise", r"gamma")
    if how == "unknown kernel":
        name = draw(st.sampled_from(["sigmoid", "RBF", "", "gaussian"]))
        if base == "targeted" and draw(st.booleans()):
            name = "precomputed"                   # not a kernel of the targeted model
        return _case(f"kernel={name!r}", model, inner, X, y, name, params, "raise",
                     r"kernel")
    if how == "bad callable":
        fn, match = draw(st.sampled_from([
            (callable_wrong_shape, r"kernel.*shape"), (callable_transposed, r"kernel.*shape"),
            (callable_nan, r"kernel.*(NaN|infinity)"), (callable_vector, r"kernel.*shape"),
            (callable_negative, r"kernel.*positive semidefinite")]))
        params["kernel"] = fn
        return Case(f"callable kernel {fn.__name__}", model, inner, X, y, None, params,
                    "raise", match)
    if how == "bad precomputed":
        if base == "targeted":
            return _case("kernel='precomputed'", model, inner, X, y, "precomputed", params,
                         "raise", r"kernel")
        K = callable_linear(X, X)
        what = draw(st.sampled_from(["not square", "not symmetric", "indefinite", "NaN",
                                     "1-D"]))
        if what == "not square":
            K, match = K[:, :-1], r"square"
        elif what == "not symmetric":
            K = K + np.triu(np.ones_like(K), 1)
            match = r"symmetric"
        elif what == "indefinite":
            K = K - (np.abs(K).max() + 1.0) * np.eye(n)
            match = r"positive semidefinite.*eigenvalue"
        elif what == "NaN":
            K[0, 0] = np.nan
            match = NONFINITE_MESSAGE
        else:
            K, match = K[0], r"2D array|square"
        params["kernel"] = "precomputed"
        return Case(f"precomputed Gram {what}", model, inner, K, y, None, params, "raise",
                    match)
    if how == "poly negative coef0":
        params.update(degree=draw(st.integers(1, 4)), coef0=draw(st.sampled_from([-1.0,
                                                                                 -1e-3])))
        return _case(how, model, inner, X, y, "poly", params, "either",
                     r"poly.*positive semidefinite.*eigenvalue")
    if how == "poly degree 0":
        params.update(degree=0, coef0=draw(st.sampled_from([0.0, 1.0, -1.0])))
        return _case(how, model, inner, X, y, "poly", params, "fit")
    if how == "negative degree":
        params["degree"] = -1
        return _case(how, model, inner, X, y, "poly", params, "raise", r"degree")
    if how == "extreme tol":
        params["tol"] = draw(st.sampled_from([1e-300, 1e-15, 1e3, 1e300]))
        # tiny tol may end at max_iter: bound it so the case stays quick
        params["max_iter"] = 200
        return _case(f"tol={params['tol']:g}", model, inner, X, y, kernel, params, "fit")
    if how == "max_iter=1":
        params["max_iter"] = 1
        return _case(how, model, inner, X, y, kernel, params, "fit")
    if how == "extreme C":
        params["C"] = draw(st.sampled_from([1e-300, 1e-150, 1e150, 1e300]))
        if model == "tuning-search":
            params["lambdas"] = np.array([1.0 / (len(y) * params["C"])])
        return _case(f"C={params['C']:g}", model, inner, X, y, kernel, params, "either",
                     r"\bC\b|Rescale")
    kernel = draw(st.sampled_from(["rbf", "poly"]))
    params["gamma"] = draw(st.sampled_from([1e-300, 1e-150, 1e150, 1e300]))
    return _case(f"gamma={params['gamma']:g}", model, inner, X, y, kernel, params, "either",
                 r"gamma|Rescale")


# --------------------------------------------------------------------------------------------
# The oracle: the fitted function and the objective, recomputed
# --------------------------------------------------------------------------------------------
def oracle_gram(est, A, B, X_fit=None, rows=None, cols=None):
    """K(A, B) for the fitted estimator's kernel, from the oracle kernels.

    For 'precomputed', the Gram matrix X_fit restricted to ``rows`` x ``cols``.
    """
    kernel = est.kernel
    if kernel == "precomputed":
        return np.asarray(X_fit)[np.ix_(rows, cols)]
    if callable(kernel):
        return np.asarray(kernel(A, B), dtype=np.float64)
    return ref_kernel(A, B, kernel, est.gamma_, est.degree, est.coef0)


def contract_truncation(est, k):
    """The truncation s of a DC model, from its parameter and the contract."""
    s = est.truncation
    if s is None:
        return None
    if isinstance(s, str):          # 'auto': (k - 1) / 2 for RobustMSVM, else -1/(k-1)
        return (k - 1) / 2.0 if type(est).__name__ == "RobustMSVM" else -1.0 / (k - 1)
    return float(s)


def oracle_loss(est, G, y, w):
    """C-free sum_i w_i loss_i of the estimator's model at decision values G (n, k)."""
    name = type(est).__name__
    k = G.shape[1]
    if name in ("ReinforcedMSVM", "AngleBasedMSVM"):
        return reinforced_loss(G, y, w, float(est.reinforcement))
    if name == "RobustMSVM":
        return robust_loss(G, y, w, contract_truncation(est, k))
    if name == "WeightedRobustMSVM":
        U = np.eye(k) if est.utility is None else np.asarray(est.utility, dtype=float)
        if est.cost is not None:
            cost = np.asarray(est.cost, dtype=float)
            U = cost.max() - cost
        np.testing.assert_array_equal(est.utility_, U)
        return weighted_loss(G, y, w, U, contract_truncation(est, k))
    if name == "AdaptiveWeightedSVM":
        v = est.adaptive_weights_
        assert v.shape == w.shape and np.all(np.isfinite(v)) and np.all((v >= 0) & (v <= 1))
        return weighted_loss(G, y, w * v, np.eye(k), None)
    if name == "WestonWatkinsMSVM":
        return ww_loss(G, y, w)
    raise AssertionError(name)


def _close(actual, expected, scale, what, atol=ATOL):
    """|actual - expected| <= RTOL |expected| + atol scale, elementwise."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert np.all(np.isfinite(actual)), f"{what}: not finite: {actual}"
    bound = RTOL * np.abs(expected) + atol * np.asarray(scale, float)
    err = np.abs(actual - expected)
    worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.ndim else ()
    assert np.all(err <= bound), (
        f"{what}: differs from the recomputation by {err[worst]:.3g} where {bound[worst]:.3g} "
        f"is allowed: {actual} vs {expected}")


def _objective_atol(est):
    """The absolute slack of objective_'s agreement: ATOL, or single precision's where the
    fit's kernel rows were cached in float32."""
    plan = getattr(est, "solver_plan_", None)
    return ATOL_FLOAT32_ROWS if getattr(plan, "cache_dtype", None) == "float32" else ATOL


def check_fitted_base(est, X, y_enc, w, consistent=True):
    """A fitted BaseMSVM model against the oracle (X: the fit input, y_enc: 0..k-1).

    ``consistent=False`` (a known defect's region) skips the agreement of objective_ and the
    decision values with the recomputation.
    """
    k = len(est.classes_)
    angle = isinstance(est, AngleBasedMSVM)
    n_out = k - 1 if angle else k
    sup = est.support_
    dc = np.asarray(est.dual_coef_)
    b = np.asarray(est.intercept_)
    assert dc.shape == (n_out, len(sup)) and b.shape == (n_out,)
    assert np.all(np.isfinite(dc)) and np.all(np.isfinite(b))
    for name in ("kkt_residual_", "duality_gap_"):
        assert not np.isnan(getattr(est, name)) or name == "duality_gap_", name
    if est.kernel == "precomputed":
        sv = None
    elif est.kernel == "linear" or getattr(est, "kernel_approximation", None) is not None:
        # an explicit-feature fit keeps no copy of its support samples: X[support_] are they
        assert not hasattr(est, "support_vectors_")
        sv = X[sup]
    else:
        sv = est.support_vectors_
        np.testing.assert_array_equal(sv, X[sup])
    Kss = oracle_gram(est, sv, sv, X, sup, sup)
    Kxs = oracle_gram(est, X, sv, X, np.arange(len(X)), sup)
    # the penalty 1/2 sum_j ||h_j||^2 of h_j = sum_s dc[j, s] K(sv_s, .)
    penalty = 0.5 * float(np.einsum("js,st,jt->", dc, Kss, dc))
    pen_scale = 0.5 * float(np.einsum("js,st,jt->", np.abs(dc), np.abs(Kss), np.abs(dc)))
    F = Kxs @ dc.T + b
    F_scale = np.abs(Kxs) @ np.abs(dc).T + np.abs(b)
    if angle:
        W = vertices(k)
        G, G_scale = F @ W, F_scale @ np.abs(W)
    else:
        G, G_scale = F, F_scale
    # the functions of the classes are centred against each other: rounding is relative to
    # the largest class (per feature, per sample)
    if est.kernel == "linear":
        _close(est.coef_, dc @ sv, (np.abs(dc) @ np.abs(sv)).max(axis=0), "coef_")
    assert np.isfinite(est.objective_) and est.objective_ >= 0, est.objective_
    obj = penalty + est.C * oracle_loss(est, G, y_enc, w)
    scale = pen_scale + est.C * float(np.dot(w, (k + G_scale.sum(axis=1))))
    if hasattr(est, "dc_objectives_"):
        h = est.dc_objectives_
        assert np.all(np.isfinite(h)) and np.all(h >= 0)
        _close(h[-1], est.objective_, scale, "dc_objectives_[-1]")
    if not consistent:
        return
    # decision values of the fitted model at the training points
    _close(est.decision_values(X), G, G_scale.max(axis=1, keepdims=True), "decision_values")
    _close(est.objective_, obj, scale, "objective_", _objective_atol(est))


def check_fitted_targeted(est, X, y_enc, w, consistent=True):
    """TargetedLocalMSVM: the objective at every grid point, recomputed."""
    k = len(est.classes_)
    t = est.target_index_
    U = X[:, t]
    Z = np.delete(X, t, axis=1)
    np.testing.assert_allclose(est.grid_, np.linspace(U.min(), U.max(), est.n_grid)
                               if est.n_grid > 1 else [np.median(U)])
    h = est.bandwidth_
    assert np.isfinite(h) and h > 0
    W = vertices(k)
    assert np.all(np.isfinite(est.objectives_)) and np.all(est.objectives_ >= 0)
    if not consistent:
        return
    if est.kernel == "linear":
        Z1 = np.hstack([np.ones((len(Z), 1)), Z])
    else:
        sv = est.support_vectors_
        np.testing.assert_array_equal(sv, Z[est.support_])
        Kss = oracle_gram(est, sv, sv) + 1.0
        Kzs = oracle_gram(est, Z, sv) + 1.0
    for g, u0 in enumerate(est.grid_):
        local = est.C * w * smoothing_kernel(est.smoother, (U - u0) / h) / h
        if est.kernel == "linear":
            B = est.coef_path_[g]                       # (k-1) x (1 + p)
            penalty = 0.5 * float(np.sum(B * B))
            pen_scale = penalty
            F, F_scale = Z1 @ B.T, np.abs(Z1) @ np.abs(B).T
        else:
            V = est.dual_coef_path_[g]                  # (k-1) x n_SV
            penalty = 0.5 * float(np.einsum("qs,st,qt->", V, Kss, V))
            pen_scale = 0.5 * float(np.einsum("qs,st,qt->", np.abs(V), np.abs(Kss),
                                              np.abs(V)))
            F, F_scale = Kzs @ V.T, np.abs(Kzs) @ np.abs(V).T
        G, G_scale = F @ W, F_scale @ np.abs(W)
        obj = penalty + reinforced_loss(G, y_enc, local, float(est.reinforcement))
        scale = pen_scale + float(np.dot(local, k + G_scale.sum(axis=1)))
        _close(est.objectives_[g], obj, scale, f"objectives_[{g}]", _objective_atol(est))


def check_fit(est, case):
    """A successful fit: finite, predictions in classes_, objective recomputed."""
    X, y = case.X, np.asarray(case.y)
    classes = np.unique(y)
    fitted = est.best_estimator_ if isinstance(est, TuningSetSearch) else est
    np.testing.assert_array_equal(est.classes_, classes)
    y_enc = np.searchsorted(classes, y)
    w = np.ones(len(y)) if case.sample_weight is None else np.asarray(
        case.sample_weight, dtype=np.float64)
    Xf = np.asarray(X, dtype=np.float64)
    values = fitted.decision_values(Xf)
    assert values.shape == (len(y), len(classes)) and np.all(np.isfinite(values))
    pred = est.predict(Xf)
    assert np.all(np.isin(pred, classes)), pred
    scores = est.decision_function(Xf)
    assert np.all(np.isfinite(scores))
    check = check_fitted_targeted if isinstance(fitted, TargetedLocalMSVM) else \
        check_fitted_base
    check(fitted, Xf, y_enc, w, consistent=not case.known_defect)


# --------------------------------------------------------------------------------------------
# Running a case
# --------------------------------------------------------------------------------------------
def run_case(case):
    est = make_estimator(case.model, case.params, case.inner)
    kwargs = {}
    if case.model == "tuning-search":
        kwargs = dict(X_tune=case.X, y_tune=case.y)
    if case.sample_weight is not None:
        kwargs["sample_weight"] = case.sample_weight
    with case_timeout(), warnings.catch_warnings():
        # convergence and degenerate-fit warnings are expected on these inputs
        warnings.simplefilter("ignore")
        try:
            est.fit(case.X, case.y, **kwargs)
            if case.at_predict:
                est.predict(case.predict_X)
        except (ValueError, TypeError) as exc:
            error = exc
        else:
            error = None
        if error is None:
            assert case.outcome in ("fit", "either"), (
                f"{case.name}: expected an error matching {case.match!r}, got a fit")
            check_fit(est, case)
            return "fit"
    assert case.outcome in ("raise", "either"), (
        f"{case.name}: expected a fit, got {type(error).__name__}: {error}")
    assert re.search(case.match, str(error), flags=re.S), (
        f"{case.name}: the {type(error).__name__} does not name the problem "
        f"(expected {case.match!r}): {error}")
    if not case.at_predict:
        with pytest.raises(NotFittedError):
            check_is_fitted(est)
    return "raise"


FAMILIES = {
    "nonfinite": nonfinite_cases,
    "scale": scale_cases,
    "labels-weights": label_weight_cases,
    "kernels-parameters": kernel_parameter_cases,
}


def _fuzz(family, max_examples, timeout, marks=()):
    strategy = FAMILIES[family]

    @pytest.mark.timeout(timeout, method="thread")
    @pytest.mark.parametrize("model", MODELS)
    @settings(max_examples=max_examples, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
    @given(data=st.data())
    def test(model, data):
        run_case(data.draw(strategy(model), label="case"))

    for mark in marks:
        test = mark(test)
    test.__name__ = f"test_fuzz_{family.replace('-', '_')}{'_slow' if marks else ''}"
    return test


# wall-clock backstops: a few seconds idle per test, so 900 s holds at any plausible load
test_fuzz_nonfinite = _fuzz("nonfinite", DEFAULT_EXAMPLES, 900)
test_fuzz_scale = _fuzz("scale", DEFAULT_EXAMPLES, 900)
test_fuzz_labels_weights = _fuzz("labels-weights", DEFAULT_EXAMPLES, 900)
test_fuzz_kernels_parameters = _fuzz("kernels-parameters", DEFAULT_EXAMPLES, 900)

test_fuzz_nonfinite_slow = _fuzz("nonfinite", SLOW_EXAMPLES, 1800, [pytest.mark.slow])
test_fuzz_scale_slow = _fuzz("scale", SLOW_EXAMPLES, 1800, [pytest.mark.slow])
test_fuzz_labels_weights_slow = _fuzz("labels-weights", SLOW_EXAMPLES, 1800,
                                      [pytest.mark.slow])
test_fuzz_kernels_parameters_slow = _fuzz("kernels-parameters", SLOW_EXAMPLES, 1800,
                                          [pytest.mark.slow])


def test_case_timeout_stops_a_hang():
    """The per-case timer turns a hang (a loop that spins, as a solver's would) into a
    failure of that case, after the case's CPU time and not much more."""
    import time

    start = time.process_time()
    with pytest.raises(CaseTimeout), case_timeout(0.1):
        while True:
            pass
    assert time.process_time() - start < 1.0


# --------------------------------------------------------------------------------------------
# Regressions: defects the fuzz cases found, each pinned by its smallest input
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("labels", [["a", 1, 2.5], ["a", 1], [1, "a", 2]])
@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(), lambda: TargetedLocalMSVM(),
    lambda: TuningSetSearch(ReinforcedMSVM(), lambdas=SEARCH_LAMBDAS)])
def test_mixed_type_labels_are_refused_with_a_value_error(make, labels):
    """Labels mixing strings and numbers: once a bare TypeError from sorting them."""
    X = np.random.default_rng(0).standard_normal((12, 2))
    y = np.array(labels * (12 // len(labels)), dtype=object)
    with pytest.raises(ValueError, match=r"y mixes class labels of types \[.*'str'.*\]"):
        make().fit(X, y)


def test_rbf_prediction_at_a_training_point_with_a_large_gamma():
    """K(x, x) = 1 at predict: the Gram product's rounding once gave exp(-1e150 * noise) = 0."""
    X = np.array([[-0.6631267, -4.90518533], [2.1874603, -0.67951197],
                  [-1.48817001, -1.186586], [-1.09924067, -5.09512281]])
    y = np.array([1, 0, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = AngleBasedMSVM(C=0.1, kernel="rbf", gamma=1e150, random_state=0).fit(X, y)
    K = ref_kernel(X, est.support_vectors_, "rbf", 1e150)
    np.testing.assert_allclose(est.decision_values(X),
                               (K @ est.dual_coef_.T + est.intercept_) @ vertices(2),
                               rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(est.predict(X), y)


def test_median_gamma_of_coinciding_classes_names_gamma():
    X = np.ones((12, 2))
    with pytest.raises(ValueError, match=r"between-class distances.*zero.*give gamma as a "
                                         r"positive float"):
        ReinforcedMSVM(gamma="median").fit(X, np.arange(12) % 3)


def test_targeted_refuses_weights_positive_on_one_class_only():
    """TargetedLocalMSVM once fitted (one class at every grid point) where the others refuse."""
    X = np.random.default_rng(0).standard_normal((12, 2))
    y = np.arange(12) % 2
    with pytest.raises(ValueError, match=r"sample_weight is positive for samples of one class "
                                         r"only \(1\)"):
        TargetedLocalMSVM().fit(X, y, sample_weight=(y == 1).astype(float))


def test_objective_is_that_of_the_predicted_function_on_a_huge_gram_matrix():
    """objective_ is the objective of the function dual_coef_ and intercept_ predict with,
    on seven samples with K = 1e300 + x x^T (which rounds to 1e300 everywhere).

    The solver's running scores K U drift by about eps * max|K| * C per update: the fit once
    reported objective_ = 0.6, the loss of f = 0, while the function it returned had decision
    values of about +-2.8e282 at the training points.  The snapshot now forms the training
    decision values from the fitted coefficients as prediction does.
    """
    x = np.array([-2.5, 1.7, -3.3, 1.6, -1.5, 3.3, -2.2])
    y = np.array([1, 0, 1, 0, 1, 0, 1])
    K = 1e300 + np.outer(x, x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ReinforcedMSVM(C=0.1, kernel="precomputed", random_state=0).fit(K, y)
    F = K[:, est.support_] @ est.dual_coef_.T + est.intercept_
    np.testing.assert_allclose(est.decision_values(K), F)
    # the objective at the function the estimator predicts with
    loss = reinforced_loss(F, y, np.ones(len(y)), 0.5)
    assert est.objective_ == pytest.approx(0.1 * loss, rel=1e-6)


def test_targeted_grid_point_certified_on_exact_scores_of_a_huge_sample():
    """The slow scale family's case (round 14): a grid point whose one weighted sample sits at
    1e150 under 'poly' with degree 1 (its kernel diagonal 3.6e300 against about 5 for the
    others).  Its warm start from the last grid point left a running score of -9e133 where
    alpha = 0 gives 0 exactly, so the solve stopped at once, "converged", with objectives_
    0.0 where the function returned has 0.075 (the optimum is about 0).  A solve on a kernel
    diagonal this spread goes on from scores recomputed from scratch
    (msvm._sequence.DRIFT_SPREAD)."""
    X = np.array([[1.6702710729482115e+150, 1.9042648544532817e+150],
                  [-5.4223136122708304e-001, 1.9847256277229222e+000],
                  [2.5112621365332299e-001, -3.3963695209610565e+000],
                  [5.0439844588642369e-001, 1.3620891430072093e+000]])
    y = np.array([1, 1, 0, 1])
    est = TargetedLocalMSVM(C=1.0, kernel="poly", degree=1, coef0=0.0, gamma="auto",
                            n_grid=4, bandwidth=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    check_fitted_targeted(est, X, y, np.ones(len(y)))
    assert est.objectives_[-1] < 1e-6


@pytest.mark.parametrize("make", [lambda: RobustMSVM(C=1e300, truncation=0.0, kernel="linear"),
                                  lambda: TuningSetSearch(RobustMSVM(truncation=0.0,
                                                                     kernel="linear"),
                                                          lambdas=[1 / 6e300])])
def test_overflowing_penalty_is_refused_not_reported_as_zero(make):
    """C = 1e300: a DC step's function overflowed, and max(0, NaN) made objective_ 0.0."""
    X = np.array([[1.67027107], [1.90426485], [1.34257862], [1.98472563], [2.64932607],
                  [-1.60184066]])
    y = np.array([0, 1, 1, 1, 1, 0])
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"penalty .* \(it overflows double precision\): "
                                             r"C times the sample weights is too large"):
            est.fit(X, y, **({"X_tune": X, "y_tune": y}
                             if isinstance(est, TuningSetSearch) else {}))
    with pytest.raises(NotFittedError):
        check_is_fitted(est)


def test_rbf_on_samples_with_a_large_common_offset():
    """Four samples sharing a constant column 1e8: the solver's rbf kernel was not K
    (objective_ 2.55 against 3.16 at the fitted function); the row source now works on
    centred X (the kernel depends on differences only)."""
    X = np.column_stack([np.full(4, 1e8), [1.9, 2.0, -3.4, 1.4]])
    y = np.array([1, 1, 0, 1])
    est = ReinforcedMSVM(C=10, kernel="rbf", gamma=0.5, random_state=0).fit(X, y)
    sv = est.support_vectors_
    F = ref_kernel(X, sv, "rbf", 0.5) @ est.dual_coef_.T + est.intercept_
    np.testing.assert_allclose(est.decision_values(X), F, rtol=1e-12)
    penalty = 0.5 * float(np.einsum("js,st,jt->", est.dual_coef_,
                                    ref_kernel(sv, sv, "rbf", 0.5), est.dual_coef_))
    expected = penalty + 10 * reinforced_loss(F, y, np.ones(len(y)), 0.5)
    assert est.objective_ == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("random_state", range(6))
def test_tuning_split_keeps_a_class_of_one_sample_in_the_training_part(random_state):
    """The held-out split once dropped a one-sample class: classes_ silently lacked it."""
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = np.array([0, 1] * 9 + [2, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=SEARCH_LAMBDAS,
                                 random_state=random_state).fit(X, y)
    np.testing.assert_array_equal(search.classes_, [0, 1, 2])
    np.testing.assert_array_equal(search.best_estimator_.classes_, [0, 1, 2])


def test_tuning_split_too_small_for_every_class_is_refused():
    X = np.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match=r"too few samples \(3\) to hold out a tuning set"):
        TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=SEARCH_LAMBDAS).fit(
            X, np.array([0, 1, 2]))
