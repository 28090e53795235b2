"""DualProblem.at_moving_bounds: the samples whose dual variables sit at a bound that grows
with their weight (what a weighted chain's settled rule reads, in memory and on Dask)."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, WeightedRobustMSVM


def _by_sample(problem, alpha):
    """The same marks from one loop over the samples' variables and groups."""
    lo, hi = problem.expanded_bounds()
    group = problem.expand("group")
    sums = {}
    for v, g in enumerate(group):
        if g >= 0:
            sums[g] = sums.get(g, 0.0) + alpha[v]
    marks = []
    for i in range(problem.n_samples):
        marked = False
        for v in range(problem.var_ptr[i], problem.var_ptr[i + 1]):
            if (hi[v] != 0 and alpha[v] >= hi[v]) or (lo[v] != 0 and alpha[v] <= lo[v]):
                marked = True
            if group[v] >= 0 and sums[group[v]] >= problem.cap[group[v]]:
                marked = True
        marks.append(marked)
    return np.array(marks)


@pytest.mark.parametrize("make", [lambda: ReinforcedMSVM(C=1.0, kernel="linear"),
                                  lambda: WeightedRobustMSVM(C=1.0, truncation=None)])
def test_at_moving_bounds_marks_samples_at_growing_bounds(make):
    """Upper bounds, nonzero lower bounds and full group caps mark their samples; a fitted
    dual at moderate C has both marked and unmarked samples."""
    X, y = make_classification(80, 4, n_informative=3, n_redundant=0, n_classes=3,
                               random_state=0)
    # a fit on a path keeps its row source, which holds the solved dual
    problem, alpha = make().set_params(warm_start=True)._join_path(keep_rows=True).fit(
        X, y)._solved_dual()
    marks = problem.at_moving_bounds(alpha)
    np.testing.assert_array_equal(marks, _by_sample(problem, alpha))
    assert 0 < marks.sum() < len(y)
    assert not problem.at_moving_bounds(np.zeros_like(alpha)).any() or \
        np.any(problem.expand("lo") != 0)
