"""The finishing step's held kernel columns stay within COLUMNS_MAX_BYTES.

The exact finishing step (msvm._finish) keeps the kernel columns of the samples it touches in
one (n, capacity) buffer.  Uncapped, it held 3.3 GB (11x the features) in an in-memory
Nystroem fit of 100,000 rows, and the same fit on 2M rows ran out of 24 GB: a step that needs
more than COLUMNS_MAX_BYTES of columns now proposes nothing and the solver goes on alone.
"""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import msvm._finish as finish
import msvm._sequence as sequence
from msvm import ReinforcedMSVM
from msvm._finish import ColumnsOverBudget, _Columns


def test_held_columns_never_exceed_the_budget(monkeypatch):
    """The buffer grows (doubling) up to the budget's columns, no further; a fetch beyond
    it raises ColumnsOverBudget and leaves the held columns as they were."""
    n = 50
    K = np.random.default_rng(0).normal(size=(n, n))
    monkeypatch.setattr(finish, "COLUMNS_MAX_BYTES", 8 * n * 40)
    cols = _Columns(lambda s: K[:, s], n)
    assert np.array_equal(cols.block(np.arange(30)), K[:, :30])
    assert len(cols._KT) <= 40
    assert np.array_equal(cols.block(np.arange(35, 45)), K[:, 35:45])
    assert len(cols._KT) == 40
    with pytest.raises(ColumnsOverBudget):
        cols.block(np.arange(45, 50))
    held = np.r_[0:30, 35:45]
    assert np.array_equal(cols.block(held), K[:, held])


def test_finishing_over_the_budget_proposes_nothing_and_the_fit_still_converges(monkeypatch):
    """With a budget of 16 columns every finishing step of an RBF fit at large C returns
    None (it is tried, and refuses), and the fit reaches tol without it."""
    X, y = make_blobs(150, 3, centers=3, cluster_std=2.0, random_state=0)
    ref = ReinforcedMSVM(C=1e3, kernel="rbf").fit(X, y)
    calls = []

    def spy(*args, **kwargs):
        calls.append(finish.finish_dual(*args, **kwargs))
        return calls[-1]

    monkeypatch.setattr(finish, "COLUMNS_MAX_BYTES", 0)
    monkeypatch.setattr(sequence, "finish_dual", spy)
    est = ReinforcedMSVM(C=1e3, kernel="rbf", max_iter=200_000).fit(X, y)
    assert calls and all(c is None for c in calls)
    assert est.converged_
    assert est.objective_ == pytest.approx(ref.objective_, rel=2 * ref.tol)
