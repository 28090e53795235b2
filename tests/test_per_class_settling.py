"""Settling per-class-hinge variables as soon as their gradient points out of the box (the SMO
path's zero shrinking margin, msvm/_core/_smo.pyx) leaves the problem and the stopping rule as
they are: a fit with shrinking reaches the optimum of the fit without it, within tol, and both
certify their KKT residual below tol.  The zero margin applies from 2,000 samples on
(SETTLE_ZERO_MIN_N), hence the size of the data."""

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import AngleBasedMSVM, ReinforcedMSVM


def _data(n, k, seed):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, n_redundant=0,
                               n_classes=k, n_clusters_per_class=1, class_sep=0.8,
                               random_state=seed)
    return (X - X.mean(0)) / X.std(0), y


@pytest.mark.parametrize("make", [lambda **kw: ReinforcedMSVM(reinforcement=0.5, **kw),
                                  lambda **kw: ReinforcedMSVM(reinforcement=0.0, **kw),
                                  lambda **kw: AngleBasedMSVM(**kw)],
                         ids=["reinforced", "llw", "angle"])
@pytest.mark.parametrize("C", [1.0, 30.0])
def test_zero_margin_settling_keeps_the_optimum(make, C):
    """With shrinking (variables settled at a zero margin between full scans) the fit's
    objective equals the unshrunk fit's within tol, and both meet the KKT rule."""
    X, y = _data(2000, 3, seed=3)
    tol = 1e-3
    fits = [make(C=C, gamma=0.5, tol=tol, shrinking=s, random_state=0).fit(X, y)
            for s in (True, False)]
    for est in fits:
        assert est.converged_
        assert est.kkt_residual_ <= tol
    scale = max(abs(fits[1].objective_), 1.0)
    assert abs(fits[0].objective_ - fits[1].objective_) <= tol * scale
    # the settling rule really acted: the shrunk fit's iterates differ from the unshrunk one's
    assert not np.array_equal(fits[0].dual_coef_, fits[1].dual_coef_)
