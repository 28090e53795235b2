"""Estimator base shared by every msvm model: the fit template, the solve, fitted attributes.

A model subclass supplies only data: `_dual_problem` (its dual as a DualProblem), `_loss` (its
per-sample loss, msvm._losses, for `objective_`) and `_alpha_matrix` (its dual variables as
`alpha_`); angle-based models also override `_output_map` (decision vector coordinates versus
class slots).  ``fit`` is one template: validate the parameters, the model step
``_fit_model``, then the probability step when ``probability=True``; a fit that raises leaves
the estimator unfitted.  The model step builds one :class:`msvm._sequence.DualSequence` on
its row source and runs the model's ``_fit_dual`` over it (one solve here; the DC steps, the
reweighting or a grid in the models that need several), which returns a ``SequenceFit``;
its solutions are computed by msvm._snapshot.
"""

import contextlib
import functools
import numbers
import os
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._core._rows import threads_available
from ._approx import APPROXIMATIONS, LANDMARK_RULES, check_approximation, fit_feature_map
from ._cluster_start import start_from_clusters
from ._dask import chunkwise, dask_score, fit_dask, is_dask_collection
from ._fit_state import data_fingerprint, reset_fit_state, user_stacklevel
from ._intercept import INTERCEPT_SOLVERS
from ._kernels import (KERNELS, check_callable_kernel, check_gram, kernel_matrix,
                       make_row_source, resolve_gamma)
from ._losses import losses_in_blocks
from ._plan import plan_solve, report_plan
from ._products import chunk_rows, feature_weights, times_small, weighted_sum
from ._core._signals import ctrl_c_kept
from ._progress import StepLog, fit_progress, n_epochs
from ._sequence import CONVERGED, DualSequence, SequenceFit, path_start
from ._snapshot import snapshot, support_rows
from ._validation import (check_class_labels, check_finite_decision, check_finite_objective,
                          check_fit_weights, check_weighted_classes, degenerate_fit_message,
                          label_repr, weights_name)
from ._warm_start import DualStart, KeptRows, WarmStartMixin
from .exceptions import DegenerateFitWarning


class CheckedInput:
    """The training inputs of a sequence of refits, validated by the first fit.

    ``serves`` is true for a later fit on the same X and y objects (identity: the caller of
    ``BaseMSVM._checked_refits`` does not change them in between) with the same
    ``validate_data`` options.  The sequence may pass from estimator to estimator (the
    chains of a group of classes, copies of one template): a fit of an estimator that has
    not validated them itself is given the attributes that validation set (``classes_``,
    ``n_features_in_``, ``feature_names_in_``).  The hash of the validated X
    (``data_fingerprint``, which identifies a kept row source or feature map) is computed
    once for the sequence (``fingerprint``).
    """

    _INPUT_ATTRIBUTES = ("classes_", "n_features_in_", "feature_names_in_")

    def __init__(self, X, y):
        self.raw, self.check, self.valid = (X, y), None, None
        self.attributes, self._fingerprint = {}, None
        self.widths = {}        # (kernel, gamma) -> the fits' gamma_ on the validated X

    def serves(self, estimator, X, y, check):
        """Whether the validated arrays serve a fit of ``estimator`` on (X, y); if so, the
        estimator holds the attributes their validation set."""
        if not (self.valid is not None and X is self.raw[0] and y is self.raw[1]
                and check == self.check):
            return False
        for name, value in self.attributes.items():
            setattr(estimator, name, value)
        return True

    def keep(self, estimator, raw, check, valid):
        """Keep the validated (X, y_enc) of the raw inputs, when they are this sequence's,
        and the attributes their validation set on ``estimator``."""
        if raw[0] is self.raw[0] and raw[1] is self.raw[1]:
            self.check, self.valid = dict(check), valid
            self.attributes = {name: getattr(estimator, name)
                               for name in self._INPUT_ATTRIBUTES if hasattr(estimator, name)}
            self._fingerprint = None

    def serving(self, X, y, rows=None, pairwise=False):
        """This validation for other raw inputs holding the same values: (X, y) themselves
        (``rows`` None: y as ``column_or_1d`` gives it back), or the rows ``rows`` of the
        validated X with y = the raw labels of those rows (a calibration fold's training
        part: the validated X's rows are what validating them would give, float64 values
        converted one by one).  None when that cannot be vouched for: nothing validated, a
        Gram matrix (``pairwise``) or sparse X (a fold's part is then validated itself), or
        a part without every class (its own validation would encode its labels otherwise).
        """
        if self.valid is None:
            return None
        out = CheckedInput(X, y)
        out.check, out.attributes = self.check, dict(self.attributes)
        if rows is None:
            out.valid = self.valid
            return out
        X_valid, y_enc = self.valid
        classes = self.attributes.get("classes_")
        if (self.check or pairwise or not isinstance(X_valid, np.ndarray) or classes is None
                or len(np.unique(y_enc[rows])) != len(classes)):
            return None
        out.raw = (X_valid[rows], y)
        out.valid = (out.raw[0], y_enc[rows])
        out.attributes.pop("feature_names_in_", None)
        return out

    def fingerprint(self, A):
        """``data_fingerprint(A)``, computed once when A is the validated X."""
        if self.valid is None or A is not self.valid[0]:
            return data_fingerprint(A)
        if self._fingerprint is None:
            self._fingerprint = data_fingerprint(A)
        return self._fingerprint


class BaseMSVM(WarmStartMixin, ClassifierMixin, BaseEstimator):
    """Common machinery of the kernel multicategory SVMs (not for direct use)."""

    # the kept feature map and features phi(X) of a warm-started refit (``_fit_feature_map``)
    # and the validated inputs of checked refits (``_checked_refits``) are transient too:
    # never copied nor pickled, dropped by ``_leave_path``
    _transient_state = (*WarmStartMixin._transient_state, "_feature_state", "_checked_input")

    _parameter_constraints = {
        "C": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
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
        "n_threads": [Interval(numbers.Integral, 1, None, closed="left"),
                      Interval(numbers.Integral, None, -1, closed="right")],
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

    def _auto_C(self, k):
        """The C of ``C='auto'`` for k classes.  1 for the generalized-margin
        (Weston-Watkins-type) losses; the per-class-hinge codings override it (their
        docstrings give the formula)."""
        return 1.0

    def _resolve_C(self, k):
        """``C_`` of a fit with k classes: ``C`` as given, or ``_auto_C(k)`` for 'auto'."""
        return self._auto_C(k) if isinstance(self.C, str) else float(self.C)

    def _solve_plan(self, source, n_samples, weights):
        """The :class:`msvm._plan.SolvePlan` of a fit on a row source of kind ``source``
        ('linear', 'precomputed', 'rbf', 'poly'); ``_plan_overrides`` (a dict, tests and
        benchmarks) forces parts of it (see :func:`msvm._plan.plan_solve`)."""
        return plan_solve(source, n_samples, kernel=self.kernel, cache_size=self.cache_size,
                          cache_dtype=self.cache_dtype, tol=self.tol, C=self.C_,
                          weights=weights, overrides=getattr(self, "_plan_overrides", None))

    def _solver_threads(self):
        """The threads of this fit's kernel solver: ``n_threads``, counted back from the
        processors when negative (-1: all of them), and 1 (with a warning) where the
        compiled core has no threads (see the ``n_threads`` parameter)."""
        n = int(self.n_threads)
        if n < 0:
            n = max((os.cpu_count() or 1) + 1 + n, 1)
        if n > 1 and not threads_available():
            warnings.warn(f"{type(self).__name__}: n_threads={self.n_threads} asks for {n} "
                          f"threads, but msvm's compiled core was built without threads "
                          f"(no POSIX threads on this platform): the fit runs one thread. "
                          f"Set n_threads=1 to silence this warning.", UserWarning,
                          stacklevel=user_stacklevel())
            n = 1
        return n

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
        """(X, encoded labels, weights) of a fit; ``check`` adds ``validate_data`` options.

        Within ``_checked_refits(X, y)`` the first fit validates X and y and the next fits
        on the same objects reuse the validated arrays and encoded labels; the weights are
        checked at every fit.
        """
        checked = getattr(self, "_checked_input", None)
        if checked is not None and checked.serves(self, X, y, check):
            X, y_enc = checked.valid
        else:
            raw = (X, y)
            X, y_enc = self._validated_arrays(X, y, check)
            if checked is not None:
                checked.keep(self, raw, check, (X, y_enc))
        self.C_ = self._resolve_C(len(self.classes_))
        sw = check_weighted_classes(check_fit_weights(self, sample_weight, y_enc), y_enc,
                                    self.classes_, weights_name(self))
        return X, y_enc.astype(np.int32), sw

    def _validated_arrays(self, X, y, check):
        """X (float64, C order, finite; a checked Gram matrix) and the encoded labels; sets
        ``classes_`` and the input attributes of ``validate_data``."""
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
                             f"got 1 class ({label_repr(self.classes_[0])})")
        return X, y_enc

    @contextlib.contextmanager
    def _checked_refits(self, X, y, checked=None):
        """Within the block, fits of this estimator on these X and y (the same objects, not
        changed in between: a probability chain's refits at its weight levels) validate them
        once (``_validate_fit_input``); each fit is the one the public fit would make.
        ``checked``: the ``CheckedInput`` of another estimator's block on the same X and y
        (an earlier chain of the group), whose validation serves this one too; yields it."""
        self._checked_input = CheckedInput(X, y) if checked is None else checked
        try:
            yield self._checked_input
        finally:
            self.__dict__.pop("_checked_input", None)

    def _fingerprint(self, A):
        """``data_fingerprint(A)``: once per sequence of checked refits for its X."""
        checked = getattr(self, "_checked_input", None)
        return data_fingerprint(A) if checked is None else checked.fingerprint(A)

    def _refit(self, X, y, sample_weight=None):
        """The fit ``fit(X, y, sample_weight)`` makes, for a refit whose parameters were
        validated before (the estimator is a copy of a validated template and its
        parameters have not changed since: a probability chain's refits) and that asks for
        no probability estimate: the model step alone (``_fit_model``), without the
        parameters' validation (0.17 ms of CPU, a tenth of a weighted refit of 400 samples)
        and the progress report (``verbose`` is 0 in a chain).  Within
        ``_checked_refits(X, y)`` X and y are validated once.  A fit that raises leaves the
        estimator unfitted, as ``fit`` does.  Returns self."""
        try:
            self._fit_model(X, y, sample_weight)
        except BaseException:
            reset_fit_state(self)
            raise
        return self

    # ------------------------------------------------------------------ degenerate fits
    def _degenerate_cause(self):
        """(cause, remedy) of a fit that predicts one class for every training sample."""
        return ("C is small for these data: the penalty dominates the loss, so the fitted "
                "functions are (nearly) constant",
                "use a larger C, e.g. tuned with msvm.model_selection.TuningSetSearch")

    def _warn_if_degenerate(self, y_pred, y, X=None):
        """Warn (DegenerateFitWarning) when the training predictions are one class; ``X``
        (the training inputs) lets the warning name a cause in the data."""
        if getattr(self, "_probability_refit", False):
            return      # a probability refit's warning is dropped (msvm._probability._caught)
        message = degenerate_fit_message(self, y_pred, y, X)
        if message is not None:
            warnings.warn(message, DegenerateFitWarning, stacklevel=user_stacklevel())

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None):
        """Fit the model; with ``probability=True`` also the weighted fits of its estimate.

        The one public fit of every msvm estimator, a template of named steps: the
        parameters are validated, the model's own fit runs (``_fit_model``: the input checks,
        the solve sequence, the fitted attributes), then, when ``probability=True``, the
        weighted fits of the probability estimate (``_fit_probability``).  A fit that raises
        in any step (or is interrupted) leaves the estimator unfitted.  Ctrl-C stops a fit
        running in the main thread with KeyboardInterrupt (also when Python code swallowed
        the first one: ``msvm._core._signals.ctrl_c_kept``); Python runs signal handlers in
        the main thread only, so a fit running in another thread goes on to its end.  A fit
        that predicts one class for every training sample raises a
        :class:`~msvm.exceptions.DegenerateFitWarning` naming the cause.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training inputs, or the Gram matrix when ``kernel='precomputed'``.
        y : array-like of shape (n_samples,)
            Class labels (k >= 2 distinct values, at most 1024: the compiled solver's
            limit on class slots).
        sample_weight : array-like of shape (n_samples,), default=None
            Nonnegative weights; a weight multiplies that sample's whole loss.  The
            estimator's ``class_weight`` multiplies them, and the weighted fits of the
            probability estimate multiply them by their level weights.

        Returns
        -------
        self : object
        """
        try:
            # a Ctrl-C raises KeyboardInterrupt even if Python code swallowed it (ctrl_c_kept)
            with ctrl_c_kept():
                self._validate_params()
                probability = self._probability_requested()
                # with probabilities, X and y validated once for the own fit and the refits
                inputs = (self._checked_refits(X, y) if probability
                          else contextlib.nullcontext())
                with fit_progress(type(self).__name__, self.verbose), inputs as checked:
                    self._fit_model(X, y, sample_weight)
                if probability:
                    self._fit_probability(X, y, sample_weight, checked)
        except BaseException:
            # whatever a step raises (KeyboardInterrupt included), no mix of old and new
            # fitted attributes is left behind
            reset_fit_state(self)
            raise
        return self

    def _decision_only(self):
        """Whether the fit's only readers are its decision function, its warm start and its
        solved dual: a calibration fold's fit of the probability estimate (marked
        ``_fold_fit`` by msvm._probability, discarded once its held-out samples are scored)
        of a model fitted by one convex solve.  Its ``objective_``, penalty and
        ``duality_gap_`` are then not computed (``msvm._snapshot.snapshot``,
        ``_store_solution``): about 0.06 ms of a 1.3 ms refit of 124 to 400 samples."""
        return (getattr(self, "_fold_fit", False) and type(self)._fit_dual is BaseMSVM._fit_dual
                and type(self)._fit_model is BaseMSVM._fit_model)

    def _probability_requested(self):
        """Whether ``fit`` adds the weighted fits of a probability estimate (the
        ``probability`` parameter of :class:`msvm._probability.ProbabilityMixin`)."""
        return False

    def _fit_model(self, X, y, sample_weight):
        """The model step of ``fit``: input checks, the solve sequence, fitted attributes."""
        if is_dask_collection(X):
            return fit_dask(self, X, y, sample_weight)       # chunked: msvm/_dask.py
        self._check_approximation()
        X, y, sw = self._validate_fit_input(X, y, sample_weight)
        k = len(self.classes_)
        train, src_X, src_kind = self._training_rows(X, y)
        plan = self._solve_plan(src_kind, src_X.shape[0], sw)
        key = self._row_source_key(src_X, src_kind, k, plan)
        kept = getattr(self, "_row_state", None)
        self._row_state = None          # in use: a fit that raises must not leave it behind
        if key is not None and kept is not None and kept.key == key:
            src = kept.source
            sequence = self._dual_sequence(train, src, plan)
            sequence.resume(kept.problem, kept.alpha)
        else:
            src = self._new_row_source(src_X, src_kind, k, plan)
            sequence = self._dual_sequence(train, src, plan)
        src.set_threads(self._solver_threads())
        fitted = self._fit_dual(sequence, y, sw, StepLog(type(self).__name__, self.verbose))
        y_pred = self.classes_[np.argmax(fitted.solution.G, axis=1)]
        self._store_fit(X, y, fitted)       # releases the solution's (n, k) arrays
        self._keep_plan(sequence.plan)
        if key is not None:
            self._row_state = KeptRows(key, src, sequence.problem, sequence.alpha)
        self._warn_if_degenerate(y_pred, y, X)
        return self

    def _new_row_source(self, src_X, src_kind, k, plan):
        """A row source on the rows ``src_X`` (of kind ``src_kind``, :meth:`_training_rows`)
        with this estimator's kernel parameters and the storage ``plan`` chose."""
        return make_row_source(src_X, src_kind, k, gamma=self.gamma_, degree=self.degree,
                               coef0=self.coef0, cache_size=self.cache_size,
                               cache_dtype=plan.cache_dtype, rows=plan.rows)

    def _training_rows(self, X, y, feature_dtype=np.float32):
        """The inputs of the solved problem and the rows of its row source; sets ``gamma_``.

        Returns ``(train, src_X, src_kind)``: ``train`` is X, or its features phi(X) stored
        in ``feature_dtype`` with a ``kernel_approximation``; the row source is built on
        phi(X) ('linear'), on the Gram matrix of a callable kernel ('precomputed'), or on X
        with the kernel.
        """
        self.gamma_ = self._kernel_width(X, y) if not callable(self.kernel) else None
        if callable(self.kernel):
            check_callable_kernel(self.kernel, X)
        if self.kernel_approximation is not None:
            train = self._fit_feature_map(X, dtype=feature_dtype)
            return train, train, "linear"
        if callable(self.kernel):
            gram = check_gram(kernel_matrix(X, X, self.kernel), "callable kernel's Gram matrix")
            return X, gram, "precomputed"
        return X, X, self.kernel

    def _kernel_width(self, X, y):
        """``resolve_gamma`` of the fit (its check of X's scale included), once per
        sequence of checked refits on the validated X for a numeric gamma (a probability
        chain's refits: about 0.03 ms each at 400 samples); the value depends on X, the
        kernel and gamma alone."""
        checked = getattr(self, "_checked_input", None)
        if (checked is None or checked.valid is None or X is not checked.valid[0]
                or not isinstance(self.gamma, numbers.Real)):
            return resolve_gamma(self.gamma, self.kernel, X, y)
        key = (self.kernel, float(self.gamma))
        if key not in checked.widths:
            checked.widths[key] = resolve_gamma(self.gamma, self.kernel, X, y)
        return checked.widths[key]

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
        solver accumulates in float64).  A warm-started refit that keeps its row source
        (``_join_path(keep_rows=True)``: a probability chain, a lambda path) also keeps the
        map and phi(X), and reuses them while the inputs (a hash of their bytes) and the
        map's parameters are the same: the map depends on neither y nor the sample weights,
        and fitting it (Nystroem: the landmarks' kernel and its eigendecomposition) and
        computing phi(X) cost as much as the solve at large n.
        """
        key = self._feature_map_key(X, dtype) if self._path().keep_rows else None
        kept = getattr(self, "_feature_state", None)
        if key is not None and kept is not None and kept[0] == key:
            self.feature_map_, features = kept[1], kept[2]
        else:
            self.feature_map_ = fit_feature_map(self, X, self.gamma_)
            features = self.feature_map_.transform(X, dtype=dtype)
        if key is not None:
            self._feature_state = (key, self.feature_map_, features)
        self.n_components_ = self.feature_map_.n_components_
        return features

    def _kept_feature_state(self, X, dtype=np.float32):
        """For a fitted estimator with a ``kernel_approximation``, the state (key, map,
        phi(X)) through which refits on the same X (``_share_features``) reuse its
        ``feature_map_`` and features instead of fitting the map again; None otherwise.

        ``dtype`` is that of the training features (``_training_rows``).  X is validated as
        a fit validates it, so the key is the one the refits compute.  Only for the model
        step of this class, which maps X itself (``TargetedLocalMSVM`` maps X without its
        targeted column: its refits fit their own maps).
        """
        if (self.kernel_approximation is None or not hasattr(self, "feature_map_")
                or type(self)._fit_model is not BaseMSVM._fit_model):
            return None
        X = validate_data(self, X, dtype=np.float64, order="C", accept_sparse="csr",
                          ensure_all_finite=True, reset=False)
        return (self._feature_map_key(X, dtype), self.feature_map_,
                self.feature_map_.transform(X, dtype=dtype))

    def _share_features(self, state):
        """Give this estimator another fit's ``_kept_feature_state`` (or None): its fits on
        the same X while it keeps rows (``_join_path(keep_rows=True)``) reuse that map and
        features (the key decides, ``_fit_feature_map``).  Returns self."""
        if state is not None:
            self._feature_state = state
        return self

    def _feature_map_key(self, X, dtype):
        """What a kept feature map and features must match to serve a fit on X: the
        map's parameters, the resolved kernel width, the features' dtype and X's bytes."""
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) \
            else id(self.random_state)
        return (self.kernel_approximation, int(self.n_components), self.landmarks,
                self.kernel, self.degree, self.coef0, self.gamma_, seed,
                np.dtype(dtype).str, self._fingerprint(X))

    # ------------------------------------------------------------------ warm-start reuse
    def _row_source_key(self, src_X, src_kind, k, plan):
        """What a kept row source must match to be reused by this fit, or None (no reuse).

        A warm-start refit keeps the previous fit's row source (its scores and kernel-row
        cache) only when asked to (``_join_path(keep_rows=True)``, by ``TuningSetSearch`` on
        the estimator of a lambda path: a fitted estimator does not hold a kernel cache of up
        to ``cache_size`` MB otherwise) and only for the same training inputs (a hash of their
        bytes, not the array's identity: an array changed in place is new data), the same
        kernel and parameters, the same row source and cache storage (``plan``) and the same
        number of class slots.  With a ``kernel_approximation`` the rows are those of phi(X),
        identified by the key of the kept feature map that made them (its parameters and X's
        bytes: ``_fit_feature_map``) rather than by a hash of phi(X) (n x n_components
        values): a probability chain's refits then keep the row source from level to level
        (at n = 5,000 with 1,000 components each refit of a calibration fold's chain
        computed the fold's kernel rows afresh, 78 of 122 s).
        """
        if not (self.warm_start and self._path().keep_rows) or callable(self.kernel):
            return None
        if self.kernel_approximation is not None:
            state = getattr(self, "_feature_state", None)
            if state is None:
                return None
            inputs = ("features", state[0])
        else:
            inputs = self._fingerprint(src_X)
        return (src_kind, k, self.gamma_, self.degree, self.coef0, self.cache_size,
                plan.cache_dtype, plan.rows, inputs)

    def __getstate__(self):
        # a copy: object.__getstate__ returns the instance's own __dict__
        state = dict(super().__getstate__())
        for name in self._transient_state:
            state.pop(name, None)
        return state

    # ------------------------------------------------------------------ the solves
    def _keep_plan(self, plan):
        """Keep the plan a fit ran (``solver_plan_``); print it at ``verbose >= 1``."""
        self.solver_plan_ = plan
        report_plan(type(self).__name__, plan, self.verbose)

    def _dual_sequence(self, X, src, plan=None):
        """A DualSequence on the row source ``src`` of the training inputs X, solving by
        ``plan`` (a :class:`msvm._plan.SolvePlan`; None: the plan of ``src`` as it is)."""
        return DualSequence(src, functools.partial(snapshot, self, X, src),
                            type(self).__name__, tol=self.tol, max_iter=self.max_iter,
                            shrinking=self.shrinking, verbose=self.verbose,
                            random_state=self.random_state,
                            features=X if self._explicit_features() else None, plan=plan,
                            inputs=None if self._explicit_features() else X)

    def _fit_dual(self, sequence, y, sw, log):
        """Solve the model's dual once; DC and reweighting models run several solves here.

        Returns a :class:`msvm._sequence.SequenceFit`.  ``log`` (a
        :class:`msvm._progress.StepLog`) reports every solve (``verbose``).
        """
        sol = self._start(sequence, self._dual_problem(y, len(self.classes_), self.C_ * sw))
        if log.level >= 1:      # the objective only for the line (``objective_`` is stored)
            log.step("solve", self._objective(sol, y, sw), sol.resid, n_epochs(sol.n_iter))
        return SequenceFit(sol, sw, sequence.stop_reason(), start=sol,
                           attributes={"n_iter_": sol.n_iter})

    def _start(self, sequence, problem, tol=None):
        """Solve the model's convex dual, from the previous fit's solution if warm_start.

        ``tol``: the solve's tolerance (default: the estimator's; the DC algorithm starts
        from a loosely solved untruncated dual, msvm/_dc.py)."""
        start = self._warm_start_point(sequence, problem)
        if start is not None:
            alpha0, mu0 = start
        else:
            alpha0, mu0 = np.zeros(problem.n_vars), np.zeros(problem.k)
            if sequence.problem is None:
                # a large computed-kernel fit from zero: its dual solved on clusters of the
                # samples
                alpha0, mu0 = start_from_clusters(self, sequence, problem, alpha0, mu0)
        alpha0 = problem.clip_feasible(alpha0)
        # alpha0 is this method's own array (zeros or a new warm start): the solver takes it
        return sequence.solve(problem, alpha0, mu0 - mu0.mean(), tol=tol, copy=False)

    def _warm_start_point(self, sequence, problem):
        """(alpha0, mu0): the previous fit's dual rescaled to this C (``path_start``), not
        yet clipped to ``problem``, with the kept row source's scores rescaled with it;
        None where the fit is not warm-started from a dual that fits ``problem``."""
        state = self._warm_start_state()
        if not (self.warm_start and state is not None and state.fits(problem)):
            return None
        if sequence.problem is not None:
            # a kept row source (see fit): the scores follow the rescaling exactly
            sequence.scale(self.C_ / state.C)
        return path_start(problem, state.alpha, state.C, self.C_), state.mu

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
        self._start_from(DualStart(fitted.start.alpha, fitted.start.mu.copy(), self.C_,
                                   fitted.start.problem.n_samples))

    def _objective(self, sol, y, sw):
        """The model's objective (models.md) at a snapshot's function."""
        with np.errstate(over="ignore", invalid="ignore"):
            losses = losses_in_blocks(self._loss, sol.G, y)
            value = sol.penalty + self.C_ * weighted_sum(sw, losses)
        return check_finite_objective(self, value, "the objective")

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
        if not self._decision_only():
            self.objective_ = self._objective(sol, y, sw)
            self.duality_gap_ = sol.gap
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
            kept = self._path().columns
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

    @chunkwise
    def decision_values(self, X):
        """Decision values of every class, shape (n_samples, n_classes), any k.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs, or the kernel between them and the training inputs (n_samples, n_train)
            when ``kernel='precomputed'``.
        """
        return self._decision_from_output(self._fitted_functions(X))

    @chunkwise
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

    @chunkwise
    def predict(self, X):
        """Class labels: ``classes_[argmax_j decision_values(X)[:, j]]``."""
        scores = self.decision_values(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``predict(X)`` against y (weighted by ``sample_weight``); Dask
        inputs are scored chunk by chunk (msvm/_dask.py)."""
        if is_dask_collection(X):
            return dask_score(self, X, y, sample_weight)
        return super().score(X, y, sample_weight=sample_weight)
