"""What the local fits of TargetedLocalMSVM share, in memory (msvm/targeted.py) and on Dask
(msvm/_dask_grid.py): the smoothing kernels K_h(U - u0) that weight the samples at each grid
point u0, and the warning about degenerate local problems, shown once per call site.
"""

import os
import sys
import warnings

import joblib
import numpy as np
import sklearn

from .exceptions import DegenerateFitWarning


def _epanechnikov(t):
    return np.where(np.abs(t) <= 1.0, 0.75 * (1.0 - t * t), 0.0)


def _gaussian(t):
    return np.exp(-0.5 * t * t) / np.sqrt(2.0 * np.pi)


def _uniform(t):
    return np.where(np.abs(t) <= 1.0, 0.5, 0.0)


def _triangular(t):
    return np.maximum(1.0 - np.abs(t), 0.0)


def _biweight(t):
    return np.where(np.abs(t) <= 1.0, 15.0 / 16.0 * (1.0 - t * t) ** 2, 0.0)


SMOOTHERS = {"epanechnikov": _epanechnikov, "gaussian": _gaussian, "uniform": _uniform,
             "triangular": _triangular, "biweight": _biweight}


def smoothing_weights(U, u0, bandwidth, smoother="epanechnikov"):
    """K_h(U - u0) = K((U - u0) / h) / h for the named smoothing kernel K."""
    return SMOOTHERS[smoother]((np.asarray(U, dtype=np.float64) - u0) / bandwidth) / bandwidth


# frames of these packages are skipped by the local-problems warning (warn_once_per_call_site)
_LIBRARY_DIRS = tuple(os.path.dirname(module.__file__) + os.sep
                      for module in (sys.modules[__package__], sklearn, joblib))


# (frame id, code, instruction, text) of the last local-problems warning's call site
_last_warned = None


def warn_once_per_call_site(message):
    """A DegenerateFitWarning attributed to the first frame outside msvm, scikit-learn and
    joblib (the user's line, also when a meta-estimator fits); inside a meta-estimator (a
    scikit-learn or joblib frame between), not again while the same call of that line goes
    on with the same text.

    ``GridSearchCV`` runs every fold and grid point under fresh warning filters (each job
    of scikit-learn's ``Parallel`` restores them), which clears Python's record of the
    warnings already shown, so its default filter would show one copy per fit (10 in a
    3-fold search over 3 values and its refit).  The same frame at the same instruction
    is one call: the search's folds, grid points and refit.  A fit called directly warns
    every time (Python's filters decide).
    """
    global _last_warned
    frame, level, meta = sys._getframe(0), 1, False    # level 1: this function's frame
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARY_DIRS):
        meta = meta or not frame.f_code.co_filename.startswith(_LIBRARY_DIRS[0])
        frame, level = frame.f_back, level + 1
    key = None if frame is None or not meta else (id(frame), frame.f_code, frame.f_lasti,
                                                  message)
    if key is not None and key == _last_warned:
        return
    _last_warned = key
    warnings.warn(message, DegenerateFitWarning, stacklevel=level)
