"""The average utility of Liu, Wu and He (2011) section 5.1 and its scorer."""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV

from msvm import WeightedRobustMSVM
from msvm.datasets import make_utility_example, utility_matrix
from msvm.metrics import average_utility, make_utility_scorer


def test_identity_utility_is_accuracy():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 3, 500), rng.integers(0, 3, 500)
    assert average_utility(y, p, utility=np.eye(3)) == pytest.approx(accuracy_score(y, p))


def test_hand_computed_and_weighted():
    U = utility_matrix(2, 0.4)     # rows: truth, columns: prediction
    y, p = [0, 0, 0, 1, 2], [0, 1, 2, 0, 2]
    assert average_utility(y, p, utility=U) == pytest.approx((1 + 0.4 + 0.4 + 0 + 1) / 5)
    w = [1, 0, 0, 0, 3]
    assert average_utility(y, p, utility=U, sample_weight=w) == pytest.approx(1.0)


def test_string_labels_follow_the_labels_order():
    U = utility_matrix(1, 0.5)
    y, p = ["c", "c", "b"], ["c", "a", "b"]
    # with labels ("c", "a", "b"), truth "c" predicted "a" is U[0, 1] = 0.5
    got = average_utility(y, p, utility=U, labels=["c", "a", "b"])
    assert got == pytest.approx((1 + 0.5 + 1) / 3)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="square"):
        average_utility([0, 1], [0, 1], utility=np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        average_utility([0, 1], [0, 1], utility=[[1, np.nan], [0, 1]])
    with pytest.raises(ValueError, match="lengths"):
        average_utility([0, 1], [0], utility=np.eye(2))
    with pytest.raises(ValueError, match="labels="):
        average_utility(["a", "b"], ["a", "b"], utility=np.eye(3))
    with pytest.raises(ValueError, match="not among labels"):
        average_utility([0, 5], [0, 1], utility=np.eye(2), labels=[0, 1])


def test_scorer_in_grid_search_prefers_the_utility():
    X, y = make_utility_example(240, example=2, random_state=0)
    U = utility_matrix(2, 0.6)
    scorer = make_utility_scorer(U)
    search = GridSearchCV(WeightedRobustMSVM(kernel="linear", utility=U, truncation=None),
                          {"C": [0.01, 1.0]}, scoring=scorer, cv=3).fit(X, y)
    est = search.best_estimator_
    assert scorer(est, X, y) == pytest.approx(average_utility(y, est.predict(X), utility=U))
