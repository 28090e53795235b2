"""Estimator base shared by every msvm model: validation, kernels, the solve, fitted attributes.

A model subclass supplies only data: `_dual_problem` (its dual as a DualProblem), `_loss` (its
per-sample loss on decision values, for `objective_`), and `_alpha_matrix` (how its dual
variables are shaped for `alpha_`).  Angle-based models also override `_output_map` (decision
vector coordinates versus class slots).  A fit builds one :class:`msvm._sequence.DualSequence`
on its row source and runs its model's ``_fit_dual`` over it (one solve here; the DC steps,
the reweighting or a grid in the models that need several), which returns a ``SequenceFit``.
"""

import functools
import hashlib
import numbers
import os
import sys
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._approx import (APPROXIMATIONS, LANDMARK_RULES, check_approximation, chunk_rows,
                      fit_feature_map, rows_times)
from ._core._solver import primal_dual, solve
from ._intercept import INTERCEPT_SOLVERS, fitted_intercepts
from ._kernels import (KERNELS, check_callable_kernel, check_gram, kernel_matrix,
                       make_row_source, resolve_gamma)
from ._progress import StepLog, n_epochs
from ._sequence import CONVERGED, DualSequence, SequenceFit, path_start
from ._slot_products import feature_weights, times_small, weighted_sum
from .exceptions import DegenerateFitWarning


def support_rows(V, support):
    """``V[support]`` for sorted, distinct row indices, in V's memory when that is no waste.

    When the support holds at least half the rows (at a small C nearly all), its rows are
    moved to the front of V in place and the first ``len(support)`` rows of V returned (a
    view: no second (n, k) array at the end of a large fit; at most twice the memory of the
    result is kept).  Otherwise the copy ``V[support]``.  V is overwritten in the first case.
    """
    m = len(support)
    if 2 * m < len(V):
        return V[support]
    # support[j] >= j: a block of rows gathered (a temporary copy) before it is written only
    # overwrites rows that no later block reads
    step = max(1, 2 ** 16 // max(1, V.shape[1]))
    for start in range(0, m, step):
        rows = support[start:start + step]
        V[start:start + len(rows)] = V[rows]
    return V[:m]


@dataclass
class _Solution:
    """One solved dual and the fitted function it gives, at the training points."""

    problem: object
    alpha: np.ndarray
    mu: np.ndarray
    n_iter: int
    resid: float
    V: np.ndarray            # h_slot(x) = sum_i K(x, x_i) V_i
    W: object                # d x k slot weights (linear kernel) or None
    intercept: np.ndarray    # in output coordinates
    G: np.ndarray            # decision values at the training points
    penalty: float           # 1/2 sum_j ||h_j||^2
    gap: float = np.nan      # duality-gap certificate at the fitted intercepts


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# cache_dtype='auto' stores RBF kernel rows in float32 where that is safe: rounding a kernel
# value to single precision changes it by at most 6e-8 of itself, and a score sum_r K_ir U_r
# by about 6e-8 times the size of the dual variables (at most C * weight each).  From this
# tol up and with every C * weight at most FLOAT32_MAX_BOUND, that is orders of magnitude
# below the accuracy asked for; tighter tols and larger bounds (the near-hard-margin end,
# where the objective is tiny against C) keep the rows in float64.
FLOAT32_CACHE_TOL = 1e-4
FLOAT32_MAX_BOUND = 100.0


def user_stacklevel():
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside msvm.

    Called from the function that warns; however many msvm frames lie between it and the
    user's call (a wrapped ``fit``, a meta-estimator), the warning points at the user's line.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def data_fingerprint(X):
    """A hash of an array's (or CSR matrix's) shape, dtype and bytes: equal data, equal hash.

    O(size of X), far below the kernel work of a fit on X; identifies the training inputs of
    a warm-start refit without trusting the array object (which may have changed in place).
    """
    digest = hashlib.blake2b(digest_size=20)
    if sp.issparse(X):
        X = X.tocsr()
        parts = (X.data, X.indices, X.indptr)
    else:
        parts = (X,)
    digest.update(repr((type(X).__name__, X.shape, X.dtype.str)).encode())
    for part in parts:
        digest.update(np.ascontiguousarray(part).view(np.uint8).ravel())
    return digest.hexdigest()


class KernelColumns:
    """The kernel between one scoring set and the training samples, computed once per sample.

    A lambda path (``msvm.model_selection``) scores 32 fits on the same tuning set; their
    support vectors are mostly the same training samples, so the kernel column of training
    sample i, K(X_tune, x_i), is computed the first time i is a support vector and kept.
    A column is reused only for the same scoring inputs (a hash of their bytes), the same
    kernel and parameters, and the same training row x_i (compared exactly); the block is
    kept only while it fits in the estimator's ``cache_size``.

    Parameters
    ----------
    n_train : int
        Number of training samples (the fits' ``support_`` index them).
    """

    def __init__(self, n_train):
        self.n_train = int(n_train)
        self.key = None

    def columns(self, estimator, X):
        """K(X, x_i) for every training sample i (n_samples, n_train), or None.

        The columns of the estimator's support vectors are exact; the others are zero or
        those of earlier fits (the caller multiplies them by zero coefficients).  None when
        the block cannot be kept (sparse inputs, or larger than ``cache_size``).
        """
        sv, support = estimator.support_vectors_, estimator.support_
        if sp.issparse(X) or sp.issparse(sv) \
                or X.shape[0] * self.n_train * 8 > estimator.cache_size * 2 ** 20 \
                or (len(support) and support.max() >= self.n_train):
            return None
        key = (estimator.kernel, estimator.gamma_, estimator.degree, estimator.coef0,
               data_fingerprint(X))
        if key != self.key:
            self.key = key
            self.K = np.zeros((X.shape[0], self.n_train))
            self.rows = np.full((self.n_train, X.shape[1]), np.nan)
        new = ~np.all(self.rows[support] == sv, axis=1)
        if np.any(new):
            self.K[:, support[new]] = kernel_matrix(X, sv[new], estimator.kernel,
                                                    estimator.gamma_, estimator.degree,
                                                    estimator.coef0)
            self.rows[support[new]] = sv[new]
        return self.K


def set_init_params(estimator, arguments):
    """Store the arguments of an estimator's ``__init__`` as its parameters, unmodified.

    Every ``__init__`` names its parameters in its signature (scikit-learn's convention, read
    by ``get_params``) and ends with ``set_init_params(self, locals())``: ``arguments`` is
    that ``locals()``, i.e. exactly the arguments (``self`` and ``__class__`` are skipped).
    """
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def check_finite_decision(values):
    """Refuse non-finite decision values (inputs whose kernel overflows), naming the remedy."""
    if not np.all(np.isfinite(values)):
        raise ValueError("decision values are not finite: the kernel overflows double "
                         "precision on these inputs. Rescale X the way the training data "
                         "were scaled (e.g. with sklearn.preprocessing.StandardScaler).")
    return values


def check_finite_objective(estimator, value, what):
    """Refuse a fit whose objective (or penalty) overflows double precision.

    With a huge C (or huge sample weights) the dual variables, hence the fitted functions and
    their norms, can exceed the range of double precision although every bound is finite;
    reporting such a fit (NaN once turned into a penalty of 0) would be silently wrong.
    """
    if not np.isfinite(value):
        raise ValueError(
            f"{type(estimator).__name__}: {what} of the fit is {value} (it overflows double "
            f"precision): C times the sample weights is too large for this kernel and X. Use "
            f"a smaller C or smaller sample weights, or rescale X.")
    return value


def check_class_labels(y, name="y"):
    """``check_classification_targets``, with labels of mixed types refused by name.

    scikit-learn sorts the labels to classify them, which fails with a bare TypeError
    ("'<' not supported between instances of 'int' and 'str'") when strings and numbers are
    mixed, or calls some such mixtures 'unknown'; both become this ValueError.
    """
    y = np.asarray(y)
    if y.dtype == object:
        kinds = {type(v) for v in y.ravel()}
        if any(issubclass(t, str) for t in kinds) and not all(issubclass(t, str)
                                                              for t in kinds):
            names = sorted(t.__name__ for t in kinds)
            raise ValueError(f"{name} mixes class labels of types {names}, which cannot be "
                             f"ordered into classes_; use labels of one type (e.g. all "
                             f"strings)")
    try:
        check_classification_targets(y)
    except TypeError as exc:
        names = sorted({type(v).__name__ for v in y.ravel()})
        raise ValueError(f"{name} holds class labels of types {names} that cannot be "
                         f"compared ({exc}); use labels of one type") from None


def check_fit_sample_weight(sample_weight, n_samples):
    """Validated sample weights (float64, shape (n_samples,); ones for None).

    The one contract of every ``fit``: a 1-D array of n_samples finite, nonnegative weights,
    not all zero.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    sw = np.asarray(sample_weight)
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(f"sample_weight must be a 1-D array of length n_samples = "
                         f"{n_samples}; got shape {sw.shape}")
    try:
        sw = sw.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"sample_weight must be numeric; got dtype {sw.dtype}") from None
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be nonnegative")
    if not np.any(sw > 0):
        raise ValueError("sample_weight is zero for every sample")
    return sw


def class_weight_factors(class_weight, classes, y):
    """Per-sample factors ``class_weight[y_i]`` (float64, shape (n_samples,)).

    ``class_weight`` is None (all ones), ``'balanced'`` (``n_samples / (n_classes *
    bincount(y))``, scikit-learn's ``compute_class_weight``) or a dict {label: weight} whose
    keys are labels of ``classes`` (a class it omits keeps weight 1), with finite,
    nonnegative weights.  ``y`` holds the encoded labels (indices into ``classes``).
    """
    y = np.asarray(y)
    if class_weight is None:
        return np.ones(len(y))
    counts = np.bincount(y, minlength=len(classes))
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict; got "
                             f"{class_weight!r}")
        return (len(y) / (len(classes) * counts.astype(np.float64)))[y]
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict; got "
                         f"{type(class_weight).__name__}")

    def plain(label):           # NumPy scalars as Python values, so that 3 finds np.int64(3)
        return label.item() if isinstance(label, np.generic) else label

    slot = {plain(label): j for j, label in enumerate(classes)}
    unknown = [key for key in class_weight if plain(key) not in slot]
    if unknown:
        raise ValueError(f"class_weight has labels that are not classes of y: "
                         f"{', '.join(label_repr(key) for key in unknown)} (the classes are "
                         f"{', '.join(label_repr(c) for c in classes)})")
    factors = np.ones(len(classes))
    for key, weight in class_weight.items():
        try:
            weight = float(weight)
        except (TypeError, ValueError):
            raise ValueError(f"class_weight[{label_repr(key)}] must be a number; got "
                             f"{weight!r}") from None
        if not (np.isfinite(weight) and weight >= 0):
            raise ValueError(f"class_weight[{label_repr(key)}] must be finite and "
                             f"nonnegative; got {weight!r}")
        factors[slot[plain(key)]] = weight
    return factors[y]


def weights_name(estimator):
    """How error messages name a fit's weights: sample_weight, times class_weight if given."""
    return ("sample_weight" if getattr(estimator, "class_weight", None) is None
            else "sample_weight times class_weight")


def check_weighted_classes(sw, y_enc, classes, what="sample_weight"):
    """Refuse weights ``sw`` positive on samples of one class only (encoded labels y_enc)."""
    weighted = np.unique(y_enc[sw > 0])
    if len(weighted) < 2:
        raise ValueError(f"{what} is positive for samples of one class only "
                         f"({label_repr(classes[weighted[0]])}): a classifier needs weighted "
                         f"samples of at least 2 classes")
    return sw


def reset_fit_state(estimator):
    """Remove every fitted attribute, so that ``check_is_fitted`` fails again.

    Fitted attributes are those whose name ends with ``_`` (not ``__``-private ones), plus the
    private fit state an estimator lists in ``_fit_state`` (e.g. the warm-start dual).
    """
    private = set(getattr(estimator, "_fit_state", ()))
    for name in list(vars(estimator)):
        if (name.endswith("_") and not name.startswith("__")) or name in private:
            delattr(estimator, name)


def unfitted_on_error(fit):
    """Decorator of ``fit``: a fit that raises leaves the estimator unfitted.

    Whatever ``fit`` raises (any BaseException, KeyboardInterrupt included), every fitted
    attribute is removed (:func:`reset_fit_state`), also when the estimator was fitted
    before, so no mix of old and new fitted attributes is left behind.
    """

    @functools.wraps(fit)
    def fit_or_reset(self, *args, **kwargs):
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            reset_fit_state(self)
            raise

    return fit_or_reset


def check_fit_weights(estimator, sample_weight, y):
    """The weights of a fit: validated ``sample_weight`` times the estimator's class_weight.

    ``y`` holds the encoded labels (indices into ``estimator.classes_``).  The product obeys
    the sample-weight contract (not zero for every sample).
    """
    sw = check_fit_sample_weight(sample_weight, len(y))
    class_weight = getattr(estimator, "class_weight", None)
    if class_weight is None:
        return sw
    sw = sw * class_weight_factors(class_weight, estimator.classes_, y)
    if not np.any(sw > 0):
        raise ValueError("sample_weight times class_weight is zero for every sample")
    return sw


def label_repr(label):
    """repr of a class label, NumPy scalars as the Python value (``0``, not ``np.int64(0)``)."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def degenerate_fit_message(estimator, y_pred, y):
    """Text of a :class:`~msvm.exceptions.DegenerateFitWarning`, or None.

    A fit is degenerate when its predictions ``y_pred`` of the training samples are one class
    although their labels ``y`` hold several.  The cause and the remedy come from the
    estimator's ``_degenerate_cause()`` when it has one.
    """
    predicted = np.unique(y_pred)
    if len(predicted) != 1 or len(np.unique(y)) < 2:
        return None
    explain = getattr(estimator, "_degenerate_cause", None)
    cause, remedy = explain() if explain is not None else (
        "the fit is a constant classifier", "use a larger C")
    return (f"{type(estimator).__name__} predicts class {label_repr(predicted[0])} for every "
            f"training sample although y holds {len(np.unique(y))} classes: {cause}. Remedy: "
            f"{remedy}.")


class BaseMSVM(ClassifierMixin, BaseEstimator):
    """Common machinery of the kernel multicategory SVMs (not for direct use)."""

    # private fit state removed with the fitted attributes when a fit fails
    _fit_state = ("_dual_state", "_row_state")
    # private state never copied nor pickled: the row source kept for warm-start refits and
    # the tuning-set kernel columns of a lambda path (msvm.model_selection)
    _transient_state = ("_row_state", "_keep_rows", "_tuning_columns")

    _parameter_constraints = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [StrOptions(set(KERNELS)), callable],
        "degree": [Interval(numbers.Integral, 0, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto", "median"}),
                  Interval(numbers.Real, 0, None, closed="neither")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "cache_size": [Interval(numbers.Real, 0, None, closed="neither")],
        "cache_dtype": [StrOptions({"auto", "float64", "float32"})],
        "shrinking": ["boolean"],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "kernel_approximation": [StrOptions(set(APPROXIMATIONS)), None],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "landmarks": [StrOptions(set(LANDMARK_RULES))],
        "intercept_solver": [StrOptions(set(INTERCEPT_SOLVERS))],
    }

    # ------------------------------------------------------------------ model hooks
    def _dual_problem(self, y, k, weights):
        """DualProblem for encoded labels y (0..k-1) and per-sample weights C * w_i."""
        raise NotImplementedError

    def _loss(self, G, y):
        """Per-sample loss (unweighted) of decision values G (n, k) for encoded labels y."""
        raise NotImplementedError

    def _alpha_matrix(self, alpha, problem):
        """Dual variables in the model's natural shape."""
        return alpha.reshape(problem.n_samples, -1)

    def _cache_dtype(self, weights=None):
        """The storage of cached kernel rows: ``cache_dtype``, with 'auto' resolved to
        float32 where single-precision rounding of the kernel is far below the accuracy asked
        for (see ``FLOAT32_CACHE_TOL``): the RBF kernel (values in (0, 1]), tol from
        ``FLOAT32_CACHE_TOL`` up and every box bound C * weight at most
        ``FLOAT32_MAX_BOUND``.  float64 otherwise."""
        if self.cache_dtype != "auto":
            return self.cache_dtype
        if self.kernel != "rbf" or self.tol < FLOAT32_CACHE_TOL:
            return "float64"
        heaviest = 1.0 if weights is None or len(weights) == 0 else float(np.max(weights))
        return "float32" if self.C * heaviest <= FLOAT32_MAX_BOUND else "float64"

    def _output_map(self, k):
        """T (n_outputs, k): the fitted functions are T times the slot-space functions."""
        return np.eye(k)

    def _decision_from_output(self, f):
        """Decision values (n, k) from the fitted functions f (n, n_outputs)."""
        return f

    # ------------------------------------------------------------------ sklearn plumbing
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        # scipy.sparse rows go to the sparse row sources; a Gram matrix must be dense
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def _validate_fit_input(self, X, y, sample_weight, **check):
        """(X, encoded labels, weights) of a fit; ``check`` adds ``validate_data`` options."""
        if self.kernel == "precomputed":
            X, y = validate_data(self, X, y, dtype=np.float64, order="C",
                                 ensure_all_finite=True, **check)
            X = check_gram(X)
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, order="C",
                                 accept_sparse="csr", ensure_all_finite=True, **check)
        check_class_labels(y)
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"got 1 class ({self.classes_[0]!r})")
        sw = check_weighted_classes(check_fit_weights(self, sample_weight, y_enc), y_enc,
                                    self.classes_, weights_name(self))
        return X, y_enc.astype(np.int32), sw

    # ------------------------------------------------------------------ degenerate fits
    def _degenerate_cause(self):
        """(cause, remedy) of a fit that predicts one class for every training sample."""
        return ("C is small for these data: the penalty dominates the loss, so the fitted "
                "functions are (nearly) constant",
                "use a larger C, e.g. tuned with msvm.model_selection.TuningSetSearch")

    def _warn_if_degenerate(self, y_pred, y):
        """Warn (DegenerateFitWarning) when the training predictions are one class."""
        message = degenerate_fit_message(self, y_pred, y)
        if message is not None:
            warnings.warn(message, DegenerateFitWarning, stacklevel=user_stacklevel())

    # ------------------------------------------------------------------ fit
    @unfitted_on_error
    def fit(self, X, y, sample_weight=None):
        """Fit the model.

        A fit that raises (or is interrupted) leaves the estimator unfitted.  A fit that
        predicts one class for every training sample raises a
        :class:`~msvm.exceptions.DegenerateFitWarning` naming the cause.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training inputs, or the Gram matrix when ``kernel='precomputed'``.
        y : array-like of shape (n_samples,)
            Class labels (any k >= 2 distinct values).
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative weights; a weight multiplies that sample's whole loss.  The
            estimator's ``class_weight`` multiplies them.

        Returns
        -------
        self : object
        """
        self._validate_params()
        self._check_approximation()
        X, y, sw = self._validate_fit_input(X, y, sample_weight)
        k = len(self.classes_)
        self.gamma_ = resolve_gamma(self.gamma, self.kernel, X, y) \
            if not callable(self.kernel) else None
        train = X          # the inputs of the solved problem: X, or its features phi(X)
        if callable(self.kernel):
            check_callable_kernel(self.kernel, X)
        if self.kernel_approximation is not None:
            train = self._fit_feature_map(X, dtype=np.float32)
            src_X, src_kind = train, "linear"
        elif callable(self.kernel):
            gram = check_gram(kernel_matrix(X, X, self.kernel), "callable kernel's Gram matrix")
            src_X, src_kind = gram, "precomputed"
        else:
            src_X, src_kind = X, self.kernel
        cache_dtype = self._cache_dtype(sw)
        key = self._row_source_key(src_X, src_kind, k, cache_dtype)
        kept = getattr(self, "_row_state", None)
        self._row_state = None          # in use: a fit that raises must not leave it behind
        if key is not None and kept is not None and kept[0] == key:
            src = kept[1]
            sequence = self._dual_sequence(train, src)
            sequence.resume(kept[2], kept[3])
        else:
            src = make_row_source(src_X, src_kind, k, gamma=self.gamma_, degree=self.degree,
                                  coef0=self.coef0, cache_size=self.cache_size,
                                  cache_dtype=cache_dtype)
            sequence = self._dual_sequence(train, src)
        fitted = self._fit_dual(sequence, y, sw, StepLog(type(self).__name__, self.verbose))
        y_pred = self.classes_[np.argmax(fitted.solution.G, axis=1)]
        self._store_fit(X, y, fitted)       # releases the solution's (n, k) arrays
        if key is not None:
            self._row_state = (key, src, sequence.problem, sequence.alpha)
        self._warn_if_degenerate(y_pred, y)
        return self

    # ------------------------------------------------------------------ approximate kernels
    def _check_approximation(self):
        """Refuse a kernel_approximation the kernel has no map for (before any work)."""
        check_approximation(self.kernel_approximation, self.kernel)

    def _explicit_features(self):
        """Whether the solved problem is linear in explicit features (x, or phi(x))."""
        return self.kernel == "linear" or self.kernel_approximation is not None

    def _fit_feature_map(self, X, dtype=np.float64):
        """Fit ``feature_map_`` on the training inputs X; return the features phi(X).

        ``dtype``: the storage of the features (float32 halves the memory of a large n; the
        solver accumulates in float64)."""
        self.feature_map_ = fit_feature_map(self, X, self.gamma_)
        self.n_components_ = self.feature_map_.n_components_
        return self.feature_map_.transform(X, dtype=dtype)

    # ------------------------------------------------------------------ warm-start reuse
    def _row_source_key(self, src_X, src_kind, k, cache_dtype):
        """What a kept row source must match to be reused by this fit, or None (no reuse).

        A warm-start refit keeps the previous fit's row source (its scores and kernel-row
        cache) only when asked to (``_keep_rows``, set by ``TuningSetSearch`` on the
        estimator of a lambda path: a fitted estimator does not hold a kernel cache of up to
        ``cache_size`` MB otherwise) and only for the same training inputs (a hash of their
        bytes, not the array's identity: an array changed in place is new data), the same
        kernel and parameters, and the same number of class slots.
        """
        if not (self.warm_start and getattr(self, "_keep_rows", False)) \
                or self.kernel_approximation is not None or callable(self.kernel):
            return None
        return (src_kind, k, self.gamma_, self.degree, self.coef0, self.cache_size,
                cache_dtype, data_fingerprint(src_X))

    def __getstate__(self):
        # a copy: object.__getstate__ returns the instance's own __dict__
        state = dict(super().__getstate__())
        for name in self._transient_state:
            state.pop(name, None)
        return state

    # ------------------------------------------------------------------ the solves
    def _dual_sequence(self, X, src):
        """A DualSequence on the row source ``src`` of the training inputs X."""
        return DualSequence(src, functools.partial(self._snapshot, X, src),
                            type(self).__name__, tol=self.tol, max_iter=self.max_iter,
                            shrinking=self.shrinking, verbose=self.verbose,
                            random_state=self.random_state, solver=solve,
                            features=X if self._explicit_features() else None)

    def _fit_dual(self, sequence, y, sw, log):
        """Solve the model's dual once; DC and reweighting models run several solves here.

        Returns a :class:`msvm._sequence.SequenceFit`.  ``log`` (a
        :class:`msvm._progress.StepLog`) reports every solve (``verbose``).
        """
        sol = self._start(sequence, self._dual_problem(y, len(self.classes_), self.C * sw))
        log.step("solve", self._objective(sol, y, sw), sol.resid, n_epochs(sol.n_iter))
        return SequenceFit(sol, sw, sequence.stop_reason(), start=sol,
                           attributes={"n_iter_": sol.n_iter})

    def _start(self, sequence, problem):
        """Solve the model's convex dual, from the previous fit's solution if warm_start."""
        k = problem.k
        alpha0, mu0 = np.zeros(problem.n_vars), np.zeros(k)
        if self.warm_start and getattr(self, "_dual_state", None) is not None:
            a_prev, mu_prev, C_prev = self._dual_state
            if a_prev.shape == alpha0.shape and mu_prev.shape == mu0.shape:
                alpha0, mu0 = path_start(problem, a_prev, C_prev, self.C), mu_prev
                if sequence.problem is not None:
                    # a kept row source (see fit): the scores follow the rescaling exactly
                    sequence.scale(float(self.C) / C_prev)
        alpha0 = problem.clip_feasible(alpha0)
        # alpha0 is this method's own array (zeros or a new warm start): the solver takes it
        return sequence.solve(problem, alpha0, mu0 - mu0.mean(), copy=False)

    def _store_fit(self, X, y, fitted):
        """The fitted attributes of a SequenceFit, and the dual a warm_start refit starts from.

        The fit's solution is consumed (see ``_store_solution``).
        """
        self._store_solution(X, y, fitted.sample_weight, fitted.solution)
        for name, value in fitted.attributes.items():
            setattr(self, name, value)
        self.stop_reason_ = fitted.stop_reason
        self.converged_ = fitted.stop_reason == CONVERGED
        # no copy: a solve's alpha is never written once the solve has returned, and no
        # fitted attribute shares its memory (``_store_solution`` copies a view of it)
        self._dual_state = (fitted.start.alpha, fitted.start.mu.copy(), float(self.C))

    def _snapshot(self, X, src, problem, alpha, mu, n_iter, resid):
        """The fitted functions of one solved dual, at the training points.

        ``alpha`` is kept without a copy: the sequence never writes into the alpha of a solve
        once that solve has returned (see ``DualSequence.solve``).  Each (n, k) array is
        computed in place where its input is no longer needed: with the identity output map
        at most two are alive at once (the slot sums and the scores, which become the
        centred function and then the decision values).
        """
        k = problem.k
        kappa = problem.kappa
        T = self._output_map(k)
        identity = T.shape == (k, k) and np.array_equal(T, np.eye(k))
        explicit = self._explicit_features()
        # the exact intercepts: the KKT multipliers -mu of the dual made exact (given h) by
        # the per-slot breakpoint search, where every loss term involves one slot
        exact = problem.equality and not problem.has_pairs
        # the slot sums U (they become V) come first, or else after that search, which then
        # runs with one (n, k) array fewer alive
        U = None
        if not exact or (explicit and src.weights is None):
            U = problem.slot_sums(alpha)
        W = None
        if explicit:
            W = src.weights if src.weights is not None else X.T @ U     # d x k, = X^T U
            W = np.array(W)

        def scores():
            """The scores F = K U at the training points (a new C-contiguous array)."""
            return rows_times(X, W) if explicit else np.array(src.scores, order="C")

        F = scores()
        b_slot = -mu
        # the LP: any model with free intercepts (equality; otherwise they are penalized)
        if exact or (problem.equality and self.intercept_solver == "linprog"):
            # the search runs on h alone, in F's memory; F is formed again after it (the
            # row source still holds it, or X W), so that one (n, k) array fewer is alive
            H = F
            del F
            H -= H.mean(axis=1, keepdims=True)   # h_slot at the training points, -kappa F P
            H *= -kappa
            b_slot = fitted_intercepts(problem, H, b_slot, self.intercept_solver)
            F = scores()
            _, gap, _ = primal_dual(problem, alpha, F,
                                    np.ascontiguousarray(b_slot, dtype=np.float64))
            del F
        else:
            # the gap first, then h in F's memory
            _, gap, _ = primal_dual(problem, alpha, F,
                                    np.ascontiguousarray(b_slot, dtype=np.float64))
            H = F
            del F
            H -= H.mean(axis=1, keepdims=True)
            H *= -kappa
        intercept = T @ b_slot
        # h_slot(x) = sum_i K(x, x_i) V_i with V = -kappa U P: U centred in place
        V = problem.slot_sums(alpha) if U is None else U
        del U
        V -= V.mean(axis=1, keepdims=True)
        V *= -kappa
        if identity:
            # T = I: the output functions are the slot functions; H's memory then holds the
            # decision values (the penalty's products are summed without an (n, k) array)
            with np.errstate(over="ignore", invalid="ignore"):
                penalty = 0.5 * float(np.einsum("ij,ij->", V, H))
            f_train = np.add(H, intercept, out=H)
            del H
        else:
            HT = times_small(H, T.T)
            del H
            with np.errstate(over="ignore", invalid="ignore"):
                penalty = 0.5 * float(np.sum(times_small(V, T.T) * HT))
            f_train = np.add(HT, intercept, out=HT)
            del HT
        check_finite_objective(self, penalty, "the penalty 1/2 sum_j ||h_j||^2")
        return _Solution(
            problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter, resid=resid,
            V=V, W=W, intercept=intercept, G=self._decision_from_output(f_train),
            # a squared norm: a negative value can only be rounding
            penalty=max(0.0, penalty),
            gap=gap)

    def _objective(self, sol, y, sw):
        """The model's objective (models.md) at a snapshot's function."""
        with np.errstate(over="ignore", invalid="ignore"):
            value = sol.penalty + self.C * weighted_sum(sw, self._sample_losses(sol.G, y))
        return check_finite_objective(self, value, "the objective")

    def _sample_losses(self, G, y):
        """``_loss(G, y)`` computed on blocks of rows (the loss of a sample depends on its row
        alone), so that its (n, k) temporaries are those of one block at a large n."""
        step = chunk_rows(G.shape[1])
        if len(y) <= step:
            return self._loss(G, y)
        out = np.empty(len(y))
        for start in range(0, len(y), step):
            out[start:start + step] = self._loss(G[start:start + step], y[start:start + step])
        return out

    def _store_solution(self, X, y, sw, sol):
        """The fitted attributes of one solved dual.

        Explicit-feature fits (``_explicit_features``: the linear kernel, or a
        ``kernel_approximation``) keep no ``support_vectors_``: their function is given by
        ``coef_`` (``feature_coef_``), and a copy of the support samples of a large fit (at a
        small C nearly all of X) would double the memory of the data; ``X[support_]`` gives
        them.

        ``sol`` is consumed: its decision values ``G`` are released once ``objective_`` is
        computed, and its ``V`` becomes the memory of ``dual_coef_`` (``sol.V`` and
        ``sol.G`` are None afterwards), so that the fitted attributes take no second copy of
        an (n, k) array.
        """
        problem, alpha = sol.problem, sol.alpha
        k = problem.k
        T = self._output_map(k)
        self.objective_ = self._objective(sol, y, sw)
        sol.G = None
        if sol.W is not None:
            weights = feature_weights(sol.W, problem.kappa, T)
            if self.kernel_approximation is None:
                self.coef_ = weights
            else:
                self.feature_coef_ = weights
        support = np.flatnonzero(problem.support_mask(alpha))
        self.support_ = support
        self.n_support_ = np.bincount(y[support], minlength=k).astype(np.int32)
        V, sol.V = sol.V, None
        if np.array_equal(T, np.eye(k)):
            self.dual_coef_ = support_rows(V, support).T
        else:
            self.dual_coef_ = times_small(V[support], T.T).T
        del V
        self.intercept_ = sol.intercept
        if self.kernel != "precomputed" and not self._explicit_features():
            self.support_vectors_ = X[support]
        alpha_matrix = self._alpha_matrix(alpha, problem)
        # a fitted attribute of its own: alpha stays the (private) warm start of a refit
        self.alpha_ = alpha_matrix.copy() if np.may_share_memory(alpha_matrix, alpha) \
            else alpha_matrix
        self.kkt_residual_ = sol.resid
        self.duality_gap_ = sol.gap

    # ------------------------------------------------------------------ predict
    def _fitted_functions(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False,
                          accept_sparse=False if self.kernel == "precomputed" else "csr",
                          ensure_all_finite=True)
        if self.kernel_approximation is not None:
            return check_finite_decision(self.feature_map_.apply(X, self.feature_coef_)
                                         + self.intercept_)
        if self.kernel == "linear":
            return check_finite_decision(X @ self.coef_.T + self.intercept_)
        if self.kernel == "precomputed":
            cols = self.support_
        else:
            kept = getattr(self, "_tuning_columns", None)
            K = kept.columns(self, X) if kept is not None else None
            if K is not None:
                coef = np.zeros((K.shape[1], self.dual_coef_.shape[0]))
                coef[self.support_] = self.dual_coef_.T
                return check_finite_decision(K @ coef + self.intercept_)
        out = np.empty((X.shape[0], self.dual_coef_.shape[0]))
        step = chunk_rows(len(self.support_))
        for start in range(0, X.shape[0], step):
            Xc = X[start:start + step]
            if self.kernel == "precomputed":
                Kc = Xc[:, cols]
            else:
                Kc = kernel_matrix(Xc, self.support_vectors_, self.kernel, self.gamma_,
                                   self.degree, self.coef0)
            out[start:start + step] = Kc @ self.dual_coef_.T
        out += self.intercept_
        check_finite_decision(out)
        return out

    def decision_values(self, X):
        """Decision values of every class, shape (n_samples, n_classes), any k.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs, or the kernel between them and the training inputs (n_samples, n_train)
            when ``kernel='precomputed'``.
        """
        return self._decision_from_output(self._fitted_functions(X))

    def decision_function(self, X):
        """Decision values; the predicted class is the argmax over classes.

        Shape (n_samples, n_classes) for k > 2.  For k = 2 it follows scikit-learn's binary
        convention: shape (n_samples,), the value of class ``classes_[1]`` (the two values sum
        to zero, so it is positive exactly when ``classes_[1]`` is predicted); the full
        matrix is ``decision_values(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs, or the kernel between them and the training inputs (n_samples, n_train)
            when ``kernel='precomputed'``.
        """
        G = self.decision_values(X)
        return G[:, 1] if G.shape[1] == 2 else G

    def predict(self, X):
        """Class labels: ``classes_[argmax_j decision_values(X)[:, j]]``."""
        scores = self.decision_values(X)
        return self.classes_[np.argmax(scores, axis=1)]
