"""The warm-start state one fit hands to the next is an explicit object of its estimator's kind.

- a warm_start refit starts from the previous fit's state (``_warm_start_state()``): handing
  that state to a fresh estimator (``_start_from``) gives the very same refit, bitwise, for the
  base models (``DualStart``) and TargetedLocalMSVM's grid (``GridStart``);
- a state is never written by the fits that start from it;
- a state of another kind is refused by name; a state of another problem size is not used
  (the fit is the cold fit);
- a lambda path's reuse (``_join_path``) is dropped by ``_leave_path`` and never copied.
"""

import copy

import numpy as np
import pytest
from sklearn.base import clone

from msvm import AdaptiveWeightedSVM, ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM
from msvm._kernel_columns import KernelColumns
from msvm._warm_start import DualStart, GridStart
from msvm.datasets import make_reinforced_example

pytestmark = pytest.mark.filterwarnings("ignore::msvm.exceptions.DegenerateFitWarning")


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(60, random_state=0)
    return X, y


def _targeted_data(n=60, seed=0):
    X, y = make_reinforced_example(n, random_state=seed)
    U = np.random.default_rng(seed).uniform(size=n)
    return np.column_stack([U, X]), y


MAKERS = {
    "reinforced-rbf": lambda: ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5, random_state=0),
    "reinforced-linear": lambda: ReinforcedMSVM(0.5, kernel="linear", random_state=0),
    "robust-dc": lambda: RobustMSVM(0.5, kernel="rbf", gamma=0.5, random_state=0),
    "adaptive": lambda: AdaptiveWeightedSVM(0.5, kernel="rbf", gamma=0.5, random_state=0),
}


@pytest.mark.parametrize("name", list(MAKERS))
def test_handed_over_state_gives_the_same_refit(data, name):
    X, y = data
    first = MAKERS[name]().set_params(warm_start=True).fit(X, y)
    state = first._warm_start_state()
    assert isinstance(state, DualStart) and state.C == 0.5 and state.n_samples == len(y)
    kept = state.alpha.copy(), state.mu.copy()
    other = clone(first).set_params(C=2.0)._start_from(state).fit(X, y)
    first.set_params(C=2.0).fit(X, y)
    assert other.objective_ == first.objective_
    np.testing.assert_array_equal(other.alpha_, first.alpha_)
    np.testing.assert_array_equal(other.intercept_, first.intercept_)
    # the state the refits started from is unchanged
    np.testing.assert_array_equal(state.alpha, kept[0])
    np.testing.assert_array_equal(state.mu, kept[1])
    assert first._warm_start_state() is not state and first._warm_start_state().C == 2.0


def test_state_is_used_only_with_warm_start(data):
    X, y = data
    state = ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5).fit(X, y)._warm_start_state()
    cold = ReinforcedMSVM(2.0, kernel="rbf", gamma=0.5, random_state=0).fit(X, y)
    handed = ReinforcedMSVM(2.0, kernel="rbf", gamma=0.5, random_state=0)
    handed._start_from(state).fit(X, y)
    assert handed.objective_ == cold.objective_


def test_state_of_another_problem_size_is_not_used(data):
    X, y = data
    state = ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5).fit(X[:40], y[:40])._warm_start_state()
    assert state.n_samples == 40
    cold = ReinforcedMSVM(2.0, kernel="rbf", gamma=0.5, random_state=0).fit(X, y)
    handed = ReinforcedMSVM(2.0, kernel="rbf", gamma=0.5, random_state=0, warm_start=True)
    handed._start_from(state).fit(X, y)
    assert handed.objective_ == cold.objective_


def test_grid_state_gives_the_same_refit():
    X, y = _targeted_data()
    first = TargetedLocalMSVM(0.5, target=0, n_grid=4, bandwidth=0.4, kernel="rbf",
                              gamma=0.5, warm_start=True, random_state=0).fit(X, y)
    state = first._warm_start_state()
    assert isinstance(state, GridStart) and state.C == 0.5 and len(state.alphas) == 4
    kept = state.alphas.copy()
    other = clone(first).set_params(C=2.0)._start_from(state).fit(X, y)
    first.set_params(C=2.0).fit(X, y)
    np.testing.assert_array_equal(other.objectives_, first.objectives_)
    np.testing.assert_array_equal(other.dual_coef_path_, first.dual_coef_path_)
    np.testing.assert_array_equal(state.alphas, kept)


def test_state_of_another_kind_is_refused(data):
    X, y = data
    base_state = ReinforcedMSVM(kernel="linear").fit(X, y)._warm_start_state()
    grid_state = TargetedLocalMSVM(n_grid=3).fit(*_targeted_data())._warm_start_state()
    with pytest.raises(TypeError, match="TargetedLocalMSVM starts from a GridStart; got "
                                        "DualStart"):
        TargetedLocalMSVM()._start_from(base_state)
    with pytest.raises(TypeError, match="ReinforcedMSVM starts from a DualStart; got "
                                        "GridStart"):
        ReinforcedMSVM()._start_from(grid_state)
    assert ReinforcedMSVM()._start_from(None)._warm_start_state() is None


def test_path_reuse_is_dropped_on_leaving_and_never_copied(data):
    X, y = data
    est = ReinforcedMSVM(0.5, kernel="rbf", gamma=0.5, warm_start=True)
    columns = KernelColumns(len(y))
    est._join_path(keep_rows=True, columns=columns).fit(X, y)
    assert est._path().keep_rows and est._path().columns is columns
    assert est._row_state is not None
    assert not copy.deepcopy(est)._path().keep_rows
    est._leave_path()
    assert not est._path().keep_rows and est._path().columns is None
    assert not hasattr(est, "_row_state")
    assert isinstance(est._warm_start_state(), DualStart)      # the warm start stays
