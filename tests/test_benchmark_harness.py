"""The benchmark harness counts fits that did not converge from the estimators' attributes.

``benchmarks.harness`` reads ``converged_`` and ``stop_reason_`` (``TuningSetSearch``: its
``results_`` entries per grid point) and falls back to the category of the warnings, never
their text, for estimators without those attributes.
"""

import warnings
from collections import Counter

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from benchmarks.harness import (count_unconverged, format_counts, markdown_table,
                                recording_scorer, stop_reasons, timed_fit, watch_fits)
from msvm import ReinforcedMSVM
from msvm.datasets import make_reinforced_example


class Stopping(ClassifierMixin, BaseEstimator):
    """Predicts class 0; stops with ``reason`` (``None``: no stop-reason attributes)."""

    def __init__(self, reason="tol", converged=True, n_warnings=0):
        self.reason = reason
        self.converged = converged
        self.n_warnings = n_warnings

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        for _ in range(self.n_warnings):
            warnings.warn("stopped early (any text)", ConvergenceWarning)
        warnings.warn("an unrelated warning", UserWarning)
        if self.reason is not None:
            self.converged_, self.stop_reason_ = self.converged, self.reason
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def _data():
    return np.arange(12.0).reshape(6, 2), np.array([0, 1, 0, 1, 0, 1])


@pytest.mark.filterwarnings("ignore:an unrelated warning")
def test_stop_reasons_from_attributes():
    X, y = _data()
    assert stop_reasons(Stopping("max_iter", False).fit(X, y)) == [(False, "max_iter")]
    pipe = make_pipeline(StandardScaler(), Stopping("max_dc_iter", False)).fit(X, y)
    assert stop_reasons(pipe) == [(False, "max_dc_iter")]
    assert stop_reasons(Stopping(None).fit(X, y)) is None

    class Search:
        results_ = {"converged": np.array([True, False, False]),
                    "stop_reason": np.array(["tol", "max_iter", "max_reweight"])}
    assert stop_reasons(Search()) == [(True, "tol"), (False, "max_iter"),
                                      (False, "max_reweight")]
    Search.results_ = {"score": np.zeros(3)}
    assert stop_reasons(Search()) is None


def test_counts_use_the_attributes_not_the_warnings():
    X, y = _data()
    counter = Counter()
    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        with count_unconverged(counter) as count:
            count(Stopping("max_iter", False, n_warnings=3).fit(X, y))
            count(Stopping("tol", True, n_warnings=1).fit(X, y))
    assert counter == Counter({"max_iter": 1})
    # the other warnings are re-emitted, the ConvergenceWarnings are not
    assert [w.category for w in outer] == [UserWarning, UserWarning]


def test_fallback_counts_convergence_warnings_by_category():
    X, y = _data()
    with watch_fits() as watch:
        watch.add(Stopping(None, n_warnings=2).fit(X, y))
    assert watch.unconverged() == {"ConvergenceWarning": 2}
    assert [w.category for w in watch.other_warnings()] == [UserWarning]
    assert watch.n_fits() is None
    with watch_fits() as watch:
        watch.add(Stopping(None).fit(X, y))
    assert watch.unconverged() == {}


def test_recording_scorer_reaches_every_fit_of_a_grid_search():
    X, y = _data()
    with watch_fits() as watch:
        search = GridSearchCV(Stopping(), {"converged": [True, False], "reason": ["max_iter"]},
                              cv=3, scoring=recording_scorer("accuracy", watch))
        search.fit(X, y)
        watch.add(search.best_estimator_)
    assert watch.n_fits() == 2 * 3 + 1
    expected = 3 + (0 if search.best_params_["converged"] else 1)
    assert watch.unconverged() == {"max_iter": expected}


def test_an_msvm_fit_stopped_by_max_iter():
    X, y = make_reinforced_example(60, random_state=0)
    seconds, runs, est, notes = timed_fit(lambda: ReinforcedMSVM(max_iter=1), X, y, repeats=2)
    assert runs == 2 and seconds > 0
    reason = "max_iter" if hasattr(est, "stop_reason_") else "ConvergenceWarning"
    assert notes == [f"ReinforcedMSVM: not converged ({reason})"]


def test_report_helpers():
    assert markdown_table(["a", "b"], [[1, "x"]]) == "| a | b |\n|---|---|\n| 1 | x |"
    assert format_counts({}) == "none"
    assert format_counts({"tol": 2, "max_iter": 1}) == "1 max_iter, 2 tol"


def test_targeted_fits_are_counted_per_grid_point():
    from msvm import TargetedLocalMSVM
    from msvm.datasets import make_targeted_example

    X, y = make_targeted_example(80, random_state=0)[:2]
    with watch_fits() as watch:
        est = TargetedLocalMSVM(n_grid=3, max_iter=1, tol=1e-8, random_state=0).fit(X, y)
        watch.add(est)
    assert stop_reasons(est) == [(r == "tol", r) for r in est.grid_stop_reasons_]
    assert watch.n_fits() == 3
    n_warned = sum("max_iter=1" in str(w.message) for w in watch.warnings)
    assert watch.unconverged() == {"max_iter": n_warned} and n_warned > 0


def test_large_n_report_renders_targets_and_missing_sources():
    from benchmarks import report_large_n as report

    empty = report.render({name: None for name in report.SOURCES})
    assert empty.count("missing") >= len(report.SOURCES)
    tuning = {"machine": {"date": "d", "git": "g"}, "benchmarks": {"1": {"date": "d", "rows": [
        {"model": "ReinforcedMSVM", "n": 1000, "ratio_warm": 4.0, "ratio_off": 8.0},
        {"model": "WestonWatkinsMSVM", "n": 1000, "ratio_warm": 30.0, "ratio_off": 60.0}]}}}
    text = report.render({**{name: None for name in report.SOURCES}, "tuning": tuning})
    assert "| 4.0x (without reuse 8.0x) | met |" in text
    assert "| 30.0x (without reuse 60.0x) | missed |" in text
