"""Fit-state plumbing shared by every estimator: parameters, fitted attributes, warnings.

An estimator's ``__init__`` stores its arguments (:func:`set_init_params`); a fit that raises
leaves it unfitted (:func:`reset_fit_state`, :func:`unfitted_on_error`); a warning raised deep
inside msvm points at the user's line (:func:`user_stacklevel`); a warm-start refit recognizes
its training inputs by their bytes (:func:`data_fingerprint`).
"""

import functools
import hashlib
import os
import sys

import numpy as np
import scipy.sparse as sp

from ._core._signals import ctrl_c_kept

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel():
    """The ``stacklevel`` of ``warnings.warn`` that names the first frame outside msvm.

    Called from the function that warns; however many msvm frames lie between it and the
    user's call (a wrapped ``fit``, a meta-estimator), the warning points at the user's line.
    """
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def set_init_params(estimator, arguments):
    """Store the arguments of an estimator's ``__init__`` as its parameters, unmodified.

    Every ``__init__`` names its parameters in its signature (scikit-learn's convention, read
    by ``get_params``) and ends with ``set_init_params(self, locals())``: ``arguments`` is
    that ``locals()``, i.e. exactly the arguments (``self`` and ``__class__`` are skipped).
    """
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


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
            with ctrl_c_kept():     # a Ctrl-C swallowed by Python code still stops the fit
                return fit(self, *args, **kwargs)
        except BaseException:
            reset_fit_state(self)
            raise

    return fit_or_reset


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
