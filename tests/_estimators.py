"""The registry of msvm's public estimators for the contract tests.

Every estimator class in ``msvm.__all__`` is in :data:`ESTIMATORS`, found from ``msvm.__all__``
itself, so a new model is covered by every test that parametrizes over the registry from the
day it is exported.  :data:`SMALL` gives each a small valid configuration (fast to fit on the
test problems: a few hundred samples, up to 5 classes); a model without an entry is built with
its defaults, and ``test_registry.py`` fails until it gets one.

Use ``ids()`` for readable test ids and ``make(name, **params)`` for a fresh estimator with
the small configuration and some parameters changed.
"""

import inspect

from sklearn.base import BaseEstimator

import msvm

# name -> parameters of a small valid configuration (the defaults where they are small already)
SMALL = {
    "AdaptiveWeightedSVM": {},
    "AngleBasedMSVM": {},
    "ReinforcedMSVM": {},
    "RobustMSVM": {},
    "TargetedLocalMSVM": {"n_grid": 3},
    "WeightedRobustMSVM": {},
    "WestonWatkinsMSVM": {},
}


def public_estimators():
    """Names of the estimator classes of ``msvm.__all__``, in that order."""
    return [name for name in msvm.__all__
            if inspect.isclass(getattr(msvm, name))
            and issubclass(getattr(msvm, name), BaseEstimator)]


ESTIMATORS = public_estimators()


def make(name, **params):
    """A new estimator ``name`` with its small configuration, updated by ``params``."""
    return getattr(msvm, name)(**{**SMALL.get(name, {}), **params})


def classes(names=None):
    """The estimator classes of ``names`` (default: every public estimator)."""
    return [getattr(msvm, name) for name in (ESTIMATORS if names is None else names)]


def ids(values):
    """Test ids: the class name of each estimator, class or name."""
    out = []
    for value in values:
        if isinstance(value, str):
            out.append(value)
        elif inspect.isclass(value) or inspect.isfunction(value):
            out.append(value.__name__)
        else:
            out.append(type(value).__name__)
    return out


def configured(overrides=None, **common):
    """One new estimator per public estimator: its small configuration, then ``common``, then
    ``overrides[name]`` (the parameters a test needs for that model)."""
    overrides = overrides or {}
    return [make(name, **{**common, **overrides.get(name, {})}) for name in ESTIMATORS]


def factories(overrides=None, **common):
    """Like :func:`configured`, as functions ``make(**params)`` that build the estimator with
    further parameters."""
    overrides = overrides or {}

    def factory(name):
        def build(**params):
            return make(name, **{**common, **overrides.get(name, {}), **params})
        build.__name__ = name
        return build

    return [factory(name) for name in ESTIMATORS]


# The fit paths that take Dask input (tests/test_dask.py, tests/test_dask_cluster.py): the
# linear kernel and the two kernel approximations, small enough for a few hundred samples.
DASK_PATHS = {
    "linear": dict(kernel="linear"),
    "nystroem": dict(kernel="rbf", kernel_approximation="nystroem", n_components=20,
                     random_state=0),
    "rff": dict(kernel="rbf", kernel_approximation="rff", n_components=20, random_state=0),
}
