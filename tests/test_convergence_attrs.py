"""Machine-readable convergence: ``converged_`` and ``stop_reason_`` of every estimator.

Every reason is reached by a real fit, and a fit reports an unconverged stop exactly when it
raised a ConvergenceWarning naming that stop.
"""

import warnings
from unittest import mock

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import msvm._sequence
from msvm import (AdaptiveWeightedSVM, ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM,
                  WeightedRobustMSVM)
from msvm._base import BaseMSVM
from msvm._core._solver import Status
from msvm._sequence import STOP_REASONS, fit_stop_reason
from msvm.datasets import make_disc_example, make_reinforced_example
from msvm.model_selection import TuningSetSearch
from _estimators import classes

ESTIMATORS = classes()          # every public estimator (tests/_estimators.py)


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(90, random_state=0)
    U = np.random.default_rng(0).uniform(0, 1, (len(X), 1))
    return X, y, np.hstack([U, X])


def _fit(est, X, y):
    """Fit; the ConvergenceWarnings raised, in order."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]


def _inputs(cls, data):
    X, y, XU = data
    return (XU if cls is TargetedLocalMSVM else X), y


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_converged_fit_says_tol(cls, data):
    X, y = _inputs(cls, data)
    est = cls(random_state=0)
    assert _fit(est, X, y) == []
    assert est.converged_ is True and est.stop_reason_ == "tol"


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_max_iter_stop(cls, data):
    X, y = _inputs(cls, data)
    # the truncated models as one convex solve: their DC loop has stops of its own (below)
    convex = {"truncation": None} if cls in (RobustMSVM, WeightedRobustMSVM) else {}
    est = cls(max_iter=1, tol=1e-8, random_state=0, **convex)
    messages = _fit(est, X, y)
    assert messages and all("max_iter=1" in m for m in messages)
    assert est.converged_ is False and est.stop_reason_ == "max_iter"


def _disc(seed=0, n=60):
    X, y, _ = make_disc_example(n, contamination=0.2, random_state=seed)
    return X, y


@pytest.mark.parametrize("cls", [RobustMSVM, WeightedRobustMSVM])
def test_max_dc_iter_stop(cls):
    X, y = _disc()
    est = cls(C=10.0, max_dc_iter=1, dc_tol=0.0, random_state=0)
    messages = _fit(est, X, y)
    assert len(messages) == 1 and "max_dc_iter=1" in messages[0]
    assert est.converged_ is False and est.stop_reason_ == "max_dc_iter"
    assert est.n_iter_ == 2
    # the same fit with room for the DC loop converges
    est = cls(C=10.0, random_state=0)
    assert _fit(est, X, y) == [] and est.stop_reason_ == "tol"


def test_dc_objective_rose_stop():
    # every convex step stopped after one epoch: a step can raise the objective
    X, y = _disc()
    est = WeightedRobustMSVM(C=10.0, tol=0.1, max_iter=1, dc_tol=0.0, random_state=0)
    messages = _fit(est, X, y)
    assert any("raised the objective" in m for m in messages)
    assert est.converged_ is False and est.stop_reason_ == "dc_objective_rose"
    # the loop's reason names the stop although solves also stopped at max_iter
    assert any("max_iter=1" in m for m in messages)


def test_max_reweight_stop():
    X, y = make_reinforced_example(90, random_state=2)     # its weights settle after 4 refits
    est = AdaptiveWeightedSVM(C=10.0, scheme="iterative", max_reweight=1, random_state=0)
    messages = _fit(est, X, y)
    assert len(messages) == 1 and "max_reweight=1" in messages[0]
    assert est.converged_ is False and est.stop_reason_ == "max_reweight"
    est = AdaptiveWeightedSVM(C=10.0, scheme="iterative", random_state=0)
    assert _fit(est, X, y) == [] and est.stop_reason_ == "tol" and est.n_iter_ > 2


def test_gap_floor_stop():
    # sample weights over 16 decades at tol=1e-8: the KKT residual reaches its floor while
    # the relative duality gap cannot be certified below tol in double precision
    X, y = make_reinforced_example(40, random_state=2)
    w = 10.0 ** np.random.default_rng(2).uniform(-8, 8, len(y))
    est = ReinforcedMSVM(C=1e3, tol=1e-8, kernel="rbf", gamma=5.0, max_iter=20000,
                         random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, sample_weight=w)
    messages = [str(m.message) for m in caught if issubclass(m.category, ConvergenceWarning)]
    assert len(messages) == 1 and "limit of double precision" in messages[0]
    assert est.converged_ is False and est.stop_reason_ == "gap_floor"


def test_gap_floor_status_is_mapped_by_the_sequence():
    # the sequence's own mapping, whatever fit reaches the floor: the real solve is run and
    # its status replaced by the floor's
    X, y = make_reinforced_example(40, random_state=1)

    real = msvm._sequence.solve

    def solve_at_floor(*args, **kwargs):
        return real(*args, **kwargs)._replace(status=Status.GAP_FLOOR)

    est = ReinforcedMSVM(random_state=0)
    with mock.patch.object(msvm._sequence, "solve", solve_at_floor):
        messages = _fit(est, X, y)
    assert len(messages) == 1 and "limit of double precision" in messages[0]
    assert est.converged_ is False and est.stop_reason_ == "gap_floor"


def test_stop_reason_rule():
    assert fit_stop_reason("tol", ["tol", "tol"]) == "tol"
    assert fit_stop_reason("tol", ["max_iter", "tol", "gap_floor", "tol"]) == "gap_floor"
    assert fit_stop_reason("max_dc_iter", ["max_iter"]) == "max_dc_iter"
    assert set(STOP_REASONS) >= {"tol", "max_iter", "gap_floor", "max_dc_iter",
                                 "dc_objective_rose", "max_reweight"}


def test_targeted_reports_every_grid_point(data):
    _, y, XU = data
    est = TargetedLocalMSVM(n_grid=4, max_iter=1, tol=1e-8, random_state=0)
    messages = _fit(est, XU, y)
    reasons = est.grid_stop_reasons_
    assert reasons.shape == (4,)
    assert len(messages) == int(np.sum(reasons == "max_iter")) > 0
    assert est.converged_ is False and est.stop_reason_ == "max_iter"
    est = TargetedLocalMSVM(n_grid=4, random_state=0)
    assert _fit(est, XU, y) == []
    assert list(est.grid_stop_reasons_) == ["tol"] * 4 and est.converged_


def test_targeted_empty_grid_point_is_solved_exactly():
    rng = np.random.default_rng(3)
    U = np.concatenate([rng.uniform(0, 0.2, 30), rng.uniform(0.8, 1.0, 30)])
    X = np.column_stack([U, rng.normal(size=60)])
    y = (X[:, 1] > 0).astype(int)
    est = TargetedLocalMSVM(n_grid=5, bandwidth=0.1, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert 0 in est.n_iter_                 # a grid point without samples, not solved
    assert list(est.grid_stop_reasons_) == ["tol"] * 5 and est.converged_


def test_tuning_set_search_records_each_fit(data):
    X, y, _ = data
    lambdas = [1e-1, 1e-3]
    search = TuningSetSearch(ReinforcedMSVM(max_iter=1, tol=1e-8), lambdas=lambdas,
                             random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search.fit(X, y)
    assert list(search.results_["converged"]) == [False, False]
    assert list(search.results_["stop_reason"]) == ["max_iter", "max_iter"]
    search = TuningSetSearch(RobustMSVM(), lambdas=lambdas, random_state=0).fit(X, y)
    assert search.results_["converged"].dtype == bool
    assert list(search.results_["stop_reason"]) == ["tol", "tol"]


def test_tuning_set_search_without_stop_attributes(data):
    from sklearn.svm import SVC

    X, y, _ = data
    search = TuningSetSearch(SVC(kernel="linear"), lambdas=[1e-2], random_state=0).fit(X, y)
    assert "converged" not in search.results_ and "stop_reason" not in search.results_


def test_every_estimator_documents_the_attributes():
    for cls in ESTIMATORS:
        assert "    converged_ :" in cls.__doc__ and "    stop_reason_ :" in cls.__doc__
    assert "    grid_stop_reasons_ :" in TargetedLocalMSVM.__doc__
    assert issubclass(TargetedLocalMSVM, BaseMSVM)


@pytest.mark.parametrize("cls", [RobustMSVM, WeightedRobustMSVM])
def test_max_iter_stop_inside_the_dc_loop(cls):
    # the DC loop itself ends (a fixed point or max_dc_iter is not what stops it here): the
    # solves that stopped at max_iter name the fit's stop
    X, y = _disc()
    est = cls(C=1.0, tol=0.3, max_iter=1, random_state=0)
    messages = _fit(est, X, y)
    assert messages and all("max_iter=1" in m for m in messages)
    assert est.converged_ is False and est.stop_reason_ == "max_iter"
