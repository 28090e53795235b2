"""Feedback during one long fit: verbose=1 prints a progress line at bounded time intervals,
from the compiled solver's periodic signal checks, with an estimate of the objective (the dual
value of the running solve) that ends within the stopping tolerance of objective_; verbose=0
prints nothing and a report callback that raises stops the fit."""

import math
import re

import pytest
from sklearn.datasets import make_classification

import msvm._progress as progress
from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm._core._signals import progress_reports

LINE = re.compile(r"^\[msvm\] (\w+): solving, (\S+) epochs so far, violation (\S+|not measured "
                  r"yet), dual objective (\S+|not measured yet), elapsed (\S+) s$")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(400, 10, n_informative=6, n_classes=4, random_state=0)
    return X, y


@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(C=50.0, kernel="rbf", random_state=0),       # SMO
    lambda: WestonWatkinsMSVM(C=50.0, kernel="linear", random_state=0),  # coordinate descent
], ids=["smo", "cd"])
def test_verbose_prints_progress_lines_during_a_fit(make, data, monkeypatch, capsys):
    """With the interval at 0 every signal check (~10 ms of work) reports; the lines name
    the estimator, count epochs that never go negative and show the violation."""
    X, y = data
    monkeypatch.setattr(progress, "REPORT_INTERVAL", 0.0)
    make().set_params(verbose=1).fit(X, y)
    lines = [LINE.match(line) for line in capsys.readouterr().out.splitlines()]
    reports = [m for m in lines if m]
    assert reports, "no progress line"
    assert {m[1] for m in reports} == {make().__class__.__name__}
    assert all(float(m[2]) >= 0 and float(m[5]) >= 0 for m in reports)
    make().set_params(verbose=0).fit(X, y)
    assert capsys.readouterr().out == ""


def test_progress_reports_call_back_with_the_solver_state_and_can_stop_it(data):
    """The callback gets (epochs, violation, objective estimate) of the running solve; one
    that raises stops the fit with its exception and leaves the estimator unfitted; the
    reports end with the block."""
    X, y = data
    seen = []
    with progress_reports(lambda epochs, viol, obj: seen.append((epochs, viol, obj)), 0.0):
        ReinforcedMSVM(C=50.0, random_state=0).fit(X, y)
    assert seen and all(e >= 0 for e, _, _ in seen)
    assert any(v >= 0 for _, v, _ in seen)
    assert any(math.isfinite(o) for _, _, o in seen)

    class Stop(Exception):
        pass

    def stop(epochs, viol, obj):
        raise Stop

    est = ReinforcedMSVM(C=50.0, random_state=0)
    with pytest.raises(Stop):
        with progress_reports(stop, 0.0):
            est.fit(X, y)
    assert not hasattr(est, "classes_")
    before = len(seen)
    ReinforcedMSVM(C=50.0, random_state=0).fit(X, y)     # outside the block: no calls
    assert len(seen) == before


def test_no_progress_line_comes_before_the_interval(data, capsys):
    """The lines come every REPORT_INTERVAL seconds (10 by default), not at every check: a
    line printed at all shows at least that much elapsed time."""
    X, y = data
    assert progress.REPORT_INTERVAL == 10.0
    ReinforcedMSVM(C=50.0, random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "solve: objective" in out
    reports = [LINE.match(line) for line in out.splitlines() if LINE.match(line)]
    assert all(float(m[5]) >= 10.0 for m in reports)


@pytest.mark.parametrize("make", [
    lambda: ReinforcedMSVM(C=50.0, kernel="rbf", random_state=0),       # SMO
    lambda: WestonWatkinsMSVM(C=0.1, kernel="linear", random_state=0),  # coordinate descent
], ids=["smo", "cd"])
def test_progress_lines_show_an_objective_estimate_that_ends_at_the_objective(
        make, monkeypatch, capsys):
    """A long fit at verbose=1 (the interval forced to 0 through REPORT_INTERVAL: a line at
    every signal check) prints finite dual objectives, and the last one agrees with the
    fitted objective_ to 1 % (relative): it is the dual value of the solve's point at most
    one check (~10 ms of work) before its end, and the solve stops at a duality gap of
    tol = 1e-3 relative.  The estimates of a solve approach objective_ from below: none is
    above it by more than that tolerance."""
    X, y = make_classification(1000, 20, n_informative=10, n_classes=5, random_state=0)
    monkeypatch.setattr(progress, "REPORT_INTERVAL", 0.0)
    est = make().set_params(verbose=1).fit(X, y)
    lines = [LINE.match(line) for line in capsys.readouterr().out.splitlines()]
    estimates = [float(m[4]) for m in lines if m and m[4] != "not measured yet"]
    assert len(estimates) >= 3, "too few progress lines with an estimate"
    assert all(math.isfinite(v) for v in estimates)
    assert abs(estimates[-1] - est.objective_) <= 1e-2 * abs(est.objective_)
    assert max(estimates) <= est.objective_ * (1 + 1e-2)
