"""msvm.plotting draws a TuningSetSearch's validation curve and coefficient paths (Agg)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from msvm import ReinforcedMSVM  # noqa: E402
from msvm.datasets import make_reinforced_example  # noqa: E402
from msvm.model_selection import TuningSetSearch, lambda_grid  # noqa: E402
from msvm.plotting import plot_regularization_path, plot_validation_curve  # noqa: E402


@pytest.fixture(scope="module")
def data():
    X, y = make_reinforced_example(60, random_state=0)
    Xt, yt = make_reinforced_example(60, random_state=1)
    return X, y, Xt, yt


def test_validation_curve_draws_the_scores_of_every_combination(data):
    """One line per param_grid combination through the path_ scores, and the selected lambda
    marked by a vertical line."""
    X, y, Xt, yt = data
    lambdas = lambda_grid(-3, 1)
    search = TuningSetSearch(ReinforcedMSVM(kernel="rbf"), lambdas=lambdas,
                             param_grid={"gamma": [0.5, 2.0]}).fit(X, y, X_tune=Xt, y_tune=yt)
    fig, ax = plt.subplots()
    try:
        assert plot_validation_curve(search, ax=ax) is ax
        curves = [line for line in ax.get_lines() if len(line.get_xdata()) == len(lambdas)]
        assert len(curves) == 2
        for line, gamma in zip(curves, [0.5, 2.0]):
            rows = [i for i, p in enumerate(search.path_["params"]) if p["gamma"] == gamma]
            np.testing.assert_array_equal(line.get_ydata(), search.path_["score"][rows])
            np.testing.assert_array_equal(line.get_xdata(), search.path_["lambda"][rows])
        marks = [line for line in ax.get_lines() if len(line.get_xdata()) == 2]
        assert marks and marks[0].get_xdata()[0] == search.best_lambda_
        assert ax.get_xscale() == "log"
    finally:
        plt.close(fig)


def test_regularization_path_draws_every_coefficient(data):
    """A linear model: one line per entry of coef_ along lambda, the values of path_."""
    X, y, Xt, yt = data
    lambdas = lambda_grid(-3, 1)
    search = TuningSetSearch(ReinforcedMSVM(kernel="linear"), lambdas=lambdas).fit(
        X, y, X_tune=Xt, y_tune=yt)
    fig, ax = plt.subplots()
    try:
        plot_regularization_path(search, ax=ax)
        coef = search.path_["coef"][:, 0]
        lines = [line for line in ax.get_lines() if len(line.get_xdata()) == len(lambdas)]
        assert len(lines) == coef.shape[1] * coef.shape[2]
        np.testing.assert_array_equal(lines[0].get_ydata(), coef[:, 0, 0])
    finally:
        plt.close(fig)
    kernel = TuningSetSearch(ReinforcedMSVM(kernel="rbf"), lambdas=[1.0]).fit(
        X, y, X_tune=Xt, y_tune=yt)
    with pytest.raises(ValueError, match="kernel='linear'"):
        plot_regularization_path(kernel)
    with pytest.raises(ValueError, match="combination"):
        plot_regularization_path(search, combination=3)
    with pytest.raises(ValueError, match="fitted TuningSetSearch"):
        plot_validation_curve(ReinforcedMSVM())
