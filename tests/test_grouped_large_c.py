"""The duality-gap certificate where the objective is tiny or the solve stops early, and the
DC step at the constant classifier.

- the relative duality gap a solve returns is the absolute certificate of its final point
  over the size of the objective's terms, or over ``gap_scale`` where that is larger; a solve
  stopped by max_iter before its KKT rule was met reports its final point's gap, not inf;
- a DC step whose convex problem sits at the constant classifier (objective of rounding
  size) reaches its stopping rule: the fit converges with no ConvergenceWarning, where the
  relative gap over the vanishing size kept the solve at max_iter before;
- the ConvergenceWarning of a grouped solve stopped by max_iter names a finite gap.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from msvm import RobustMSVM, WeightedRobustMSVM
from msvm._core._solver import GramRows, primal_dual, solve
from msvm._problem import margin_problem


def _grouped_case(C):
    """The tiny rank-2 grouped problem of the known large-C stall (5 samples, 2 classes)."""
    rng = np.random.default_rng(2)
    y = np.concatenate([[0, 1], rng.integers(0, 2, 3)])
    X = rng.normal(size=(5, 2)) + 1.5 * np.eye(2)[y]
    w = rng.uniform(0.2, 2.0, 5)
    U = np.eye(2) + rng.uniform(0.0, 0.5, (2, 2)) * (1 - np.eye(2))
    return X, y, w, U, margin_problem(y, 2, C * w, U)


@pytest.mark.parametrize("gap_scale", [0.0, 1e6])
@pytest.mark.parametrize("C", [1.0, 1e4])
def test_returned_gap_is_the_certificate_over_its_scale(C, gap_scale):
    """The returned relative gap (here of a solve stopped by max_iter=1, before the KKT rule
    was met) is primal_dual's absolute gap at the final point over max(size, gap_scale)."""
    X, y, w, U, problem = _grouped_case(C)
    src = GramRows(np.ascontiguousarray(X @ X.T), 2)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(2)
    _, _, status, gap = solve(src, problem, alpha, mu, tol=1e-12, max_iter=1,
                              gap_scale=gap_scale)
    assert status == 1                                   # max_iter
    _, absolute, size = primal_dual(problem, alpha, np.array(src.scores, order="C"), -mu)
    assert np.isfinite(gap)
    assert gap == pytest.approx(absolute / max(size, gap_scale), rel=1e-6, abs=1e-12)


def test_negative_gap_scale_is_refused():
    """gap_scale < 0 (or NaN) is refused with a message naming it."""
    X, y, w, U, problem = _grouped_case(1.0)
    src = GramRows(np.ascontiguousarray(X @ X.T), 2)
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="gap_scale"):
            solve(src, problem, np.zeros(problem.n_vars), np.zeros(2), gap_scale=bad)


def test_dc_step_at_the_constant_classifier_reaches_its_stopping_rule():
    """RobustMSVM on 50 classes of 3 samples: the DC path reaches the constant classifier,
    whose convex step has an objective of rounding size; every solve stops by its stopping
    rule (no ConvergenceWarning) and the fit converges to the DC solution."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(50), 3)
    X = rng.normal(size=(len(y), 2))
    est = RobustMSVM(C=1.0, truncation=1.0, kernel="linear", max_iter=1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    convergence = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert not convergence, [str(w.message) for w in convergence]
    assert est.converged_
    assert len(np.unique(est.predict(X))) == 1           # the constant classifier
    assert np.all(np.diff(est.dc_objectives_) <= 1e-9 * np.abs(est.dc_objectives_[:-1]))


def test_max_iter_warning_names_a_finite_gap():
    """A grouped solve stopped by max_iter before its KKT rule was met warns with the final
    point's relative gap (finite, as duality_gap_ is), not the schedule's initial inf."""
    X, y, w, U, _ = _grouped_case(1e4)
    est = WeightedRobustMSVM(C=1e4, utility=U, truncation=None, kernel="linear", max_iter=1)
    with pytest.warns(ConvergenceWarning, match="max_iter") as caught:
        est.fit(X, y, sample_weight=w)
    message = next(str(m.message) for m in caught if "max_iter" in str(m.message))
    found = re.search(r"relative duality gap (\S+) \(tol", message)
    assert found is not None, message
    assert np.isfinite(float(found.group(1))), message
    assert np.isfinite(est.duality_gap_)

