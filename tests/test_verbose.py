"""verbose and progress_bar: one line per step of a long fit, the solver's internals at 2, a bar."""

import re
import sys

import numpy as np
import pytest
from sklearn.base import clone

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  TargetedLocalMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm._progress import step_line
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, lambda_grid
from _estimators import configured

LINE = re.compile(r"^\[msvm\] (?P<owner>\w+) (?P<step>.+?): objective (?P<objective>\S+), "
                  r"KKT residual (?P<resid>\S+)(?P<detail>, .*)?, elapsed (?P<elapsed>\S+) s$")
SOLVER_LINE = re.compile(r"^\[msvm\] (outer \d+|smo):")
PLAN_LINE = re.compile(r"^\[msvm\] (?P<owner>\w+) solver plan: (?P<plan>rows=.+)$")


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(n_samples=120, random_state=0)
    X_tune, y_tune = make_reinforced_example(n_samples=60, random_state=1)
    return X, y, X_tune, y_tune


def _steps(out, plans=1):
    """The parsed step lines of captured output; every other line must be a fit's solver
    plan, printed once at the end of each of ``plans`` fits."""
    lines = [line for line in out.splitlines() if line]
    assert sum(bool(PLAN_LINE.match(line)) for line in lines) == plans, lines
    assert plans == 0 or PLAN_LINE.match(lines[-1])
    lines = [line for line in lines if not PLAN_LINE.match(line)]
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), f"unexpected output lines: {lines}"
    return parsed


def _elapsed_nondecreasing(steps):
    times = [float(m["elapsed"]) for m in steps]
    assert all(t >= 0 for t in times) and times == sorted(times)


def test_step_line_format():
    line = step_line("RobustMSVM", "DC step 3", 12.5, 3.25e-4, 0.1234, "7 epochs")
    assert line == ("[msvm] RobustMSVM DC step 3: objective 12.5, KKT residual 3.250e-04, "
                    "7 epochs, elapsed 0.123 s")
    assert LINE.match(line)
    assert LINE.match(step_line("X", "solve", np.nan, np.nan, 0.0))


SINGLE_SOLVE = [ReinforcedMSVM(), ReinforcedMSVM(kernel="linear"), WestonWatkinsMSVM(),
                AngleBasedMSVM(), RobustMSVM(truncation=None),
                WeightedRobustMSVM(truncation=None)]


@pytest.mark.parametrize("estimator", SINGLE_SOLVE, ids=lambda e: type(e).__name__)
def test_single_solve_prints_one_line(estimator, data, capsys):
    X, y, _, _ = data
    est = clone(estimator).set_params(verbose=1).fit(X, y)
    steps = _steps(capsys.readouterr().out)
    assert len(steps) == 1
    (m,) = steps
    assert m["owner"] == type(est).__name__ and m["step"] == "solve"
    assert float(m["objective"]) == pytest.approx(est.objective_, rel=1e-9)
    assert float(m["resid"]) == pytest.approx(est.kkt_residual_, rel=1e-3)


@pytest.mark.parametrize("estimator", [
    RobustMSVM(kernel="linear", C=10.0),
    RobustMSVM(kernel="linear", C=10.0, tol=1e-5),        # loose steps, then polished
    WeightedRobustMSVM(kernel="rbf", C=10.0),
], ids=["robust", "robust-tight", "weighted-robust"])
def test_dc_prints_one_line_per_step(estimator, data, capsys):
    X, y, _, _ = data
    est = clone(estimator).set_params(verbose=1).fit(X, y)
    steps = _steps(capsys.readouterr().out)
    assert steps[0]["step"] == "DC start (untruncated)"
    # rebuild dc_objectives_ from the lines: a step appends, a polish replaces the last
    # value, a rejected step leaves it
    history = []
    for m in steps:
        if "rejected" in m["step"]:
            continue
        if "polished" in m["step"]:
            history[-1] = float(m["objective"])
        else:
            history.append(float(m["objective"]))
        assert "epoch" in m["detail"]
    assert len(history) == est.n_iter_ > 1
    np.testing.assert_allclose(history, est.dc_objectives_, rtol=1e-9)
    assert float(steps[-1]["resid"]) == pytest.approx(est.kkt_residual_, rel=1e-3)
    _elapsed_nondecreasing(steps)


@pytest.mark.parametrize("scheme", ["one-step", "iterative"])
def test_reweighting_prints_one_line_per_fit(scheme, data, capsys):
    X, y, _, _ = data
    est = AdaptiveWeightedSVM(scheme=scheme, verbose=True).fit(X, y)
    steps = _steps(capsys.readouterr().out)
    assert len(steps) == est.n_iter_
    assert steps[0]["step"] == "fit 1 (v = 1)"
    assert [m["step"] for m in steps[1:]] == [f"reweighting {i}" for i in range(1, est.n_iter_)]
    assert float(steps[-1]["objective"]) == pytest.approx(est.objective_, rel=1e-9)
    assert float(steps[-1]["resid"]) == pytest.approx(est.kkt_residual_, rel=1e-3)
    _elapsed_nondecreasing(steps)


def test_targeted_grid_prints_one_line_per_grid_point(data, capsys):
    X, y, _, _ = data
    est = TargetedLocalMSVM(n_grid=5, bandwidth=2.0, verbose=1).fit(X, y)
    steps = _steps(capsys.readouterr().out)
    assert len(steps) == 5
    assert [m["step"].split(" (")[0] for m in steps] == [f"grid point {g}/5" for g in range(1, 6)]
    np.testing.assert_allclose([float(m["objective"]) for m in steps], est.objectives_,
                               rtol=1e-9)
    np.testing.assert_allclose([float(m["resid"]) for m in steps], est.kkt_residuals_,
                               rtol=1e-3)
    _elapsed_nondecreasing(steps)


def test_targeted_grid_point_without_samples_is_reported(data, capsys):
    X, y, _, _ = data
    X = X.copy()
    X[0, 0] = 50.0                       # an outlier in U leaves grid points without samples
    with pytest.warns(Warning):
        TargetedLocalMSVM(n_grid=4, bandwidth=1.0, verbose=1).fit(X, y)
    steps = _steps(capsys.readouterr().out)
    assert len(steps) == 4
    assert any("no sample" in m["detail"] for m in steps)


def test_tuning_set_search_prints_one_line_per_lambda(data, capsys):
    X, y, X_tune, y_tune = data
    search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambda_grid(-3, 0),
                             param_grid={"reinforcement": [0.0, 0.5]}, verbose=1)
    search.fit(X, y, X_tune=X_tune, y_tune=y_tune)
    steps = _steps(capsys.readouterr().out, plans=0)    # the estimator itself stays silent
    assert len(steps) == len(search.results_["score"]) == 8
    assert all(m["owner"] == "TuningSetSearch" for m in steps)
    assert [float(re.search(r"lambda (\S+)", m["step"])[1]) for m in steps] == \
        pytest.approx(list(search.results_["lambda"]), rel=1e-3)
    scores = [float(re.search(r"tuning score (\S+),", m["detail"])[1]) for m in steps]
    np.testing.assert_allclose(scores, search.results_["score"], rtol=1e-3)
    assert "reinforcement=0.5" in steps[-1]["step"]
    # the objective and residual are those of the fit at that lambda (the last one here)
    est = clone(search.estimator).set_params(C=search.results_["C"][-1], reinforcement=0.5)
    est.fit(X, y)
    assert float(steps[-1]["objective"]) == pytest.approx(est.objective_, rel=1e-2)
    _elapsed_nondecreasing(steps)


def test_tuning_set_search_over_targeted_sums_the_grid(data, capsys):
    X, y, X_tune, y_tune = data
    search = TuningSetSearch(TargetedLocalMSVM(n_grid=3, bandwidth=2.0),
                             lambdas=lambda_grid(-1, 0), verbose=1)
    search.fit(X, y, X_tune=X_tune, y_tune=y_tune)
    steps = _steps(capsys.readouterr().out, plans=0)
    assert len(steps) == 2
    # the objective of the fit at the last lambda: the sum over its grid points
    est = clone(search.estimator).set_params(C=search.results_["C"][-1]).fit(X, y)
    assert float(steps[-1]["objective"]) == pytest.approx(np.sum(est.objectives_), rel=1e-2)
    # the path fits are solved to path_tol (recorded in cv_results_), not the estimator's tol
    assert float(steps[-1]["resid"]) <= search.cv_results_["tol"][-1]


# every public estimator (tests/_estimators.py)
ALL = configured({"RobustMSVM": dict(kernel="linear", C=10.0),
                  "AdaptiveWeightedSVM": dict(scheme="iterative"),
                  "TargetedLocalMSVM": dict(n_grid=3, bandwidth=2.0)})


@pytest.mark.parametrize("estimator", ALL, ids=lambda e: type(e).__name__)
def test_verbose_0_prints_nothing(estimator, data, capsys):
    X, y, _, _ = data
    clone(estimator).set_params(verbose=0).fit(X, y)
    clone(estimator).fit(X, y)                   # the default
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_tuning_set_search_verbose_0_prints_nothing(data, capsys):
    X, y, X_tune, y_tune = data
    TuningSetSearch(RobustMSVM(kernel="linear"), lambdas=lambda_grid(-2, 0)).fit(
        X, y, X_tune=X_tune, y_tune=y_tune)
    out, err = capsys.readouterr()
    assert out == "" and err == ""


@pytest.mark.parametrize("estimator", ALL, ids=lambda e: type(e).__name__)
def test_verbose_2_adds_the_solver_lines(estimator, data, capsys):
    X, y, _, _ = data
    one = clone(estimator).set_params(verbose=1).fit(X, y)
    out1 = capsys.readouterr().out
    two = clone(estimator).set_params(verbose=2).fit(X, y)
    out2 = capsys.readouterr().out
    lines2 = out2.splitlines()
    assert not any(SOLVER_LINE.match(line) for line in out1.splitlines())
    assert any(SOLVER_LINE.match(line) for line in lines2)
    # the step lines are the same (the solver's printing changes nothing in the fit)
    steps1 = _steps(out1)
    steps2 = [m for m in (LINE.match(line) for line in lines2) if m]
    assert [m["step"] for m in steps1] == [m["step"] for m in steps2]
    assert [m["objective"] for m in steps1] == [m["objective"] for m in steps2]
    assert all(SOLVER_LINE.match(line) or LINE.match(line) or PLAN_LINE.match(line)
               for line in lines2)
    if hasattr(one, "objective_"):
        assert one.objective_ == two.objective_


def test_verbose_true_means_1(data, capsys):
    X, y, _, _ = data
    RobustMSVM(kernel="linear", C=10.0, verbose=True).fit(X, y)
    out_true = capsys.readouterr().out
    RobustMSVM(kernel="linear", C=10.0, verbose=1).fit(X, y)
    out_one = capsys.readouterr().out
    strip = [m["step"] for m in _steps(out_true)]
    assert strip == [m["step"] for m in _steps(out_one)]
    assert not any(SOLVER_LINE.match(line) for line in out_true.splitlines())


def test_progress_bar_tuning_set_search(data, capsys):
    pytest.importorskip("tqdm")
    X, y, X_tune, y_tune = data
    kwargs = dict(lambdas=lambda_grid(-3, 0), param_grid={"reinforcement": [0.0, 0.5]})
    plain = TuningSetSearch(ReinforcedMSVM(kernel="linear"), **kwargs).fit(
        X, y, X_tune=X_tune, y_tune=y_tune)
    capsys.readouterr()
    barred = TuningSetSearch(ReinforcedMSVM(kernel="linear"), progress_bar=True, verbose=1,
                             **kwargs).fit(X, y, X_tune=X_tune, y_tune=y_tune)
    out, err = capsys.readouterr()
    assert "TuningSetSearch" in err and "/8" in err            # the bar, on stderr
    assert len(_steps(out)) == 8                              # the lines, above the bar
    np.testing.assert_array_equal(plain.results_["score"], barred.results_["score"])


def test_progress_bar_targeted_grid(data, capsys):
    pytest.importorskip("tqdm")
    X, y, _, _ = data
    plain = TargetedLocalMSVM(n_grid=4, bandwidth=2.0).fit(X, y)
    capsys.readouterr()
    barred = TargetedLocalMSVM(n_grid=4, bandwidth=2.0, progress_bar=True).fit(X, y)
    out, err = capsys.readouterr()
    assert out == ""
    assert "TargetedLocalMSVM" in err and "/4" in err
    np.testing.assert_array_equal(plain.coef_path_, barred.coef_path_)


@pytest.mark.parametrize("make", [
    lambda: TargetedLocalMSVM(n_grid=3, progress_bar=True),
    lambda: TuningSetSearch(ReinforcedMSVM(), lambdas=lambda_grid(-1, 0), progress_bar=True),
], ids=["targeted", "search"])
def test_progress_bar_without_tqdm_names_pip_install_tqdm(make, data, monkeypatch):
    """The ImportError names ``pip install tqdm`` (not an extra of an unpublished package)."""
    X, y, X_tune, y_tune = data
    monkeypatch.setitem(sys.modules, "tqdm", None)           # import tqdm fails
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    est = make()
    fit_kwargs = dict(X_tune=X_tune, y_tune=y_tune) if isinstance(est, TuningSetSearch) else {}
    with pytest.raises(ImportError, match="pip install tqdm") as raised:
        est.fit(X, y, **fit_kwargs)
    assert "msvm[progress]" not in str(raised.value)
    assert not hasattr(est, "classes_")


@pytest.mark.parametrize("params", [{"verbose": -1}, {"verbose": "loud"},
                                    {"progress_bar": "yes"}])
def test_tuning_set_search_validates_verbose_and_progress_bar(params, data):
    X, y, X_tune, y_tune = data
    with pytest.raises(ValueError, match=next(iter(params))):
        TuningSetSearch(ReinforcedMSVM(), lambdas=[1.0], **params).fit(
            X, y, X_tune=X_tune, y_tune=y_tune)


def test_targeted_validates_progress_bar(data):
    X, y, _, _ = data
    with pytest.raises(ValueError, match="progress_bar"):
        TargetedLocalMSVM(progress_bar="yes").fit(X, y)


@pytest.mark.parametrize("estimator", ALL, ids=lambda e: type(e).__name__)
def test_verbose_prints_the_fitted_solver_plan_once(estimator, data, capsys):
    """verbose >= 1 prints the fit's solver plan once, at its end: ``str(solver_plan_)``."""
    X, y, _, _ = data
    est = clone(estimator).set_params(verbose=1).fit(X, y)
    plans = [PLAN_LINE.match(line) for line in capsys.readouterr().out.splitlines()]
    (m,) = [m for m in plans if m]
    assert m["owner"] == type(est).__name__ and m["plan"] == str(est.solver_plan_)
