"""Degenerate fits are reported (msvm.exceptions.DegenerateFitWarning).

- a fit that predicts one class for every training sample warns once, with the model's cause:
  the truncated loss preferring the constant function (truncated DC fits) or a small C
  (convex fits), and the remedy; a healthy fit does not warn;
- TuningSetSearch does not warn along its lambda path, only for a degenerate selected fit;
- TargetedLocalMSVM names the grid points without local data of two classes in one warning;
  grid points without any sample are not sent to the solver (no ConvergenceWarning);
- TargetedLocalMSVM honours warm_start across a change of C.
"""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from msvm import (ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM, WeightedRobustMSVM,
                  WestonWatkinsMSVM)
from msvm.exceptions import DegenerateFitWarning
from msvm.model_selection import TuningSetSearch, lambda_grid


def _five_classes(n):
    return make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5,
                               random_state=0)


def _degenerate_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fit()
    return result, [str(w.message) for w in caught if w.category is DegenerateFitWarning]


def test_warning_is_a_user_warning():
    assert issubclass(DegenerateFitWarning, UserWarning)
    assert "degenerate" in DegenerateFitWarning.__doc__


@pytest.mark.parametrize("n", [150, 2000], ids=["n150", "n2000"])
def test_truncated_fit_that_is_constant_warns_with_the_dc_cause(n):
    X, y = _five_classes(n)
    est, messages = _degenerate_warnings(lambda: RobustMSVM(C=1.0, truncation=1.0).fit(X, y))
    assert len(np.unique(est.predict(X))) == 1 and np.any(est.truncated_)
    assert len(messages) == 1
    msg = messages[0]
    assert "RobustMSVM predicts class" in msg and "truncated loss prefers the constant" in msg
    assert "larger C" in msg and "larger truncation" in msg and "TuningSetSearch" in msg


def test_convex_fit_that_is_constant_warns_that_C_is_small():
    X, y = _five_classes(150)
    for est in (ReinforcedMSVM(C=0.01), WestonWatkinsMSVM(C=1e-4),
                RobustMSVM(C=0.01, truncation=None)):
        est, messages = _degenerate_warnings(lambda: est.fit(X, y))
        assert len(np.unique(est.predict(X))) == 1
        assert len(messages) == 1, type(est).__name__
        assert "C is small for these data: the penalty dominates the loss" in messages[0]
        assert "larger C" in messages[0] and "TuningSetSearch" in messages[0]


def test_healthy_fits_do_not_warn():
    X, y = _five_classes(150)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        ReinforcedMSVM(C=1.0).fit(X, y)
        RobustMSVM(C=20.0).fit(X, y)
        WeightedRobustMSVM(C=1.0).fit(X, y)


def test_tuning_set_search_warns_only_for_a_degenerate_selected_fit():
    X, y = _five_classes(150)
    est = RobustMSVM(kernel="rbf", truncation=1.0)      # the earlier default
    # the path runs from constant fits (large lambda) to useful ones: no warning
    search, messages = _degenerate_warnings(
        lambda: TuningSetSearch(est, lambdas=lambda_grid(-8, 2), random_state=0,
                                refit=False).fit(X, y))
    assert messages == []
    assert len(np.unique(search.predict(X))) > 1
    # the refit on all 150 samples at the selected lambda (the grid's end) is constant:
    # one warning, about the refit
    search, messages = _degenerate_warnings(
        lambda: TuningSetSearch(est, lambdas=lambda_grid(-8, 2), random_state=0).fit(X, y))
    assert len(np.unique(search.predict(X))) == 1
    assert len(messages) == 1 and "smaller lambda" in messages[0]
    # every lambda gives a constant fit: one warning, about the selected fit
    search, messages = _degenerate_warnings(
        lambda: TuningSetSearch(est, lambdas=lambda_grid(4, 8), random_state=0).fit(X, y))
    assert len(messages) == 1
    assert messages[0].startswith("TuningSetSearch selected lambda = 256")
    assert "smaller lambda" in messages[0]


def _gap_data():
    """The targeted variable has no sample in (1, 3); classes from the other columns."""
    rng = np.random.default_rng(0)
    U = np.r_[rng.uniform(0, 1, 60), rng.uniform(3, 4, 60)]
    Z = rng.normal(size=(120, 2))
    y = (Z[:, 0] > 0).astype(int) + (Z[:, 1] > 0)
    return np.column_stack([U, Z]), y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_targeted_grid_points_without_data_warn_once(kernel):
    X, y = _gap_data()
    est = TargetedLocalMSVM(n_grid=20, bandwidth=0.2, kernel=kernel)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    assert not any(w.category is ConvergenceWarning for w in caught)
    messages = [str(w.message) for w in caught if w.category is DegenerateFitWarning]
    assert len(messages) == 1
    U = X[:, 0]
    empty = [u0 for u0 in est.grid_ if not np.any(np.abs(U - u0) < 0.2)]
    assert len(empty) == 8
    np.testing.assert_array_equal(est.local_problems_["no_sample"], empty)
    assert len(est.local_problems_["one_class"]) == 0
    assert "larger bandwidth" in messages[0] and "n_grid" in messages[0]
    assert "local_problems_" in messages[0]
    # empty grid points: zero local functions, no solver run (the plan records every solve)
    assert len(est.solver_plan_.steps) == len(est.grid_) - len(empty)
    at = np.isin(est.grid_, empty)
    assert np.all(est.n_iter_[at] == 0) and np.all(est.n_iter_[~at] >= 1)
    path = est.coef_path_ if kernel == "linear" else est.dual_coef_path_
    assert np.all(path[at] == 0) and np.all(np.any(path[~at] != 0, axis=(1, 2)))


def test_targeted_one_class_grid_points_are_named():
    rng = np.random.default_rng(1)
    U = rng.uniform(0, 3, 150)
    y = np.floor(U).astype(int)                 # each third of U's range holds one class
    X = np.column_stack([U + 2 * y, rng.normal(size=(150, 2))])
    est, messages = _degenerate_warnings(
        lambda: TargetedLocalMSVM(n_grid=3, bandwidth=0.3).fit(X, y))
    assert len(messages) == 1 and "one class only" in messages[0]
    np.testing.assert_array_equal(est.local_problems_["one_class"], est.grid_)
    assert len(est.local_problems_["no_sample"]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateFitWarning)
        fine = TargetedLocalMSVM(n_grid=5, bandwidth=5.0).fit(X, y)
    assert all(len(points) == 0 for points in fine.local_problems_.values())


def _sparse_targeted_data():
    """Targeted data whose narrow bandwidth leaves grid points without a local problem."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    X[:, 0] = rng.uniform(0, 1, 120) ** 3
    y = (X[:, 1] + X[:, 2] * (X[:, 0] > 0.5) > 0).astype(int) + (X[:, 2] > 1)
    return X, y


def test_targeted_local_problems_warn_once_per_search():
    """Inside GridSearchCV (9 fold fits and a refit) and TuningSetSearch the local-problems
    warning is shown once, not once per fold and grid point (10 copies before); two
    separate fits still warn once each."""
    from sklearn.model_selection import GridSearchCV
    X, y = _sparse_targeted_data()
    est = TargetedLocalMSVM(kernel="linear", n_grid=10, bandwidth=0.03)
    searches = [lambda: GridSearchCV(est, {"C": [0.1, 1.0, 10.0]}, cv=3).fit(X, y),
                lambda: TuningSetSearch(est, lambdas=lambda_grid(-3, 0), random_state=0)
                .fit(X, y)]
    for search in searches:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            search()
        local = [w for w in caught if "local classification problem" in str(w.message)]
        assert len(local) == 1, [str(w.message) for w in local]
        assert local[0].filename == __file__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
        est.fit(X, y)
    assert sum("local classification problem" in str(w.message) for w in caught) == 2


@pytest.mark.parametrize("scenario,kernel,bandwidth", [("S2", "rbf", "silverman"),
                                                        ("S1", "linear", 0.3)])
def test_targeted_warm_start_reaches_the_cold_solution_in_fewer_iterations(scenario, kernel,
                                                                           bandwidth):
    from msvm.datasets import make_targeted_example

    X, y = make_targeted_example(200, scenario, random_state=0)
    kw = dict(n_grid=6, kernel=kernel, bandwidth=bandwidth, tol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateFitWarning)
        cold = TargetedLocalMSVM(C=4.0, **kw).fit(X, y)
        warm = TargetedLocalMSVM(C=2.0, warm_start=True, **kw).fit(X, y)
        warm.set_params(C=4.0).fit(X, y)
        # without warm_start a refit ignores the previous fit
        again = TargetedLocalMSVM(C=2.0, **kw).fit(X, y).set_params(C=4.0).fit(X, y)
    np.testing.assert_allclose(warm.objectives_, cold.objectives_, rtol=1e-4)
    assert warm.n_iter_.sum() < 0.75 * cold.n_iter_.sum()
    np.testing.assert_array_equal(again.objectives_, cold.objectives_)
    np.testing.assert_array_equal(again.n_iter_, cold.n_iter_)


@pytest.mark.parametrize("make", [lambda: ReinforcedMSVM(C=0.01),
                                  lambda: ReinforcedMSVM(C=0.01, probability=True,
                                                         probability_grid=2),
                                  lambda: RobustMSVM(C=0.01, truncation=None)],
                         ids=["plain", "probability-wrapped-fit", "dc"])
def test_warning_points_at_the_callers_line(make):
    """However many msvm frames the fit passes through, the warning names the user's line."""
    X, y = _five_classes(150)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make().fit(X, y)
    places = {w.filename for w in caught if w.category is DegenerateFitWarning}
    assert places == {__file__}
