"""The simulated examples of the papers: paper settings, reproducibility, contamination."""

import numpy as np
import pytest

from msvm.datasets import (make_circle_example, make_disc_example, make_reinforced_example,
                           make_targeted_example, make_utility_example, utility_matrix)
from msvm.model_selection import between_class_gamma, gamma_quartiles


@pytest.mark.parametrize("example, n", [(1, 1600), (2, 400), (3, 200)])
def test_utility_example_paper_defaults_and_seed(example, n):
    X, y = make_utility_example(example=example, random_state=3)
    assert X.shape == (n, 2) and y.shape == (n,)
    assert set(np.unique(y)) == {0, 1, 2}
    X2, y2 = make_utility_example(example=example, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)


@pytest.mark.parametrize("example", [2, 3])
def test_utility_example_flip_rate(example):
    # the same seed draws the same (X, Y~); the flips then move a fraction 0.15 of labels
    X0, y0 = make_utility_example(20000, example=example, flip=0.0, random_state=1)
    X1, y1 = make_utility_example(20000, example=example, random_state=1)
    np.testing.assert_array_equal(X0, X1)
    moved = y0 != y1
    assert abs(moved.mean() - 0.15) < 0.01
    # a moved label goes to each of the two other classes equally often
    step = (y1[moved] - y0[moved]) % 3
    assert abs((step == 1).mean() - 0.5) < 0.03


def test_utility_example3_class_probabilities_and_symmetry():
    X, y = make_utility_example(40000, example=3, flip=0.0, random_state=0)
    assert X[:, 0].min() >= -3 and X[:, 0].max() <= 3
    assert X[:, 1].min() >= -6 and X[:, 1].max() <= 6
    # the symmetric reading of f_1: x_1 -> -x_1 swaps classes 1 and 3
    left = X[:, 0] < 0
    np.testing.assert_allclose(np.mean(y[left] == 0), np.mean(y[~left] == 2), atol=0.015)
    np.testing.assert_allclose(np.mean(y[left] == 2), np.mean(y[~left] == 0), atol=0.015)
    # near the x_1 axis, far left is class 1 (f_1 has -20 x_1) and far right class 3; large
    # |x_2| is class 2 (f_2 has +2 x_2^2)
    mid = np.abs(X[:, 1]) < 3
    assert np.mean(y[mid & (X[:, 0] < -1.5)] == 0) > 0.95
    assert np.mean(y[mid & (X[:, 0] > 1.5)] == 2) > 0.95
    assert np.mean(y[(np.abs(X[:, 1]) > 5.5) & (np.abs(X[:, 0]) < 0.5)] == 1) > 0.95


def test_utility_example_errors():
    with pytest.raises(ValueError, match="example"):
        make_utility_example(example=4)
    with pytest.raises(ValueError, match="flip"):
        make_utility_example(example=2, flip=1.5)
    with pytest.raises(ValueError, match="n_samples"):
        make_utility_example(0)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_circle_example_sectors_and_flips(k):
    X, y, y_clean = make_circle_example(3000, n_classes=k, flip=0.1, random_state=0)
    assert np.all(np.einsum("ij,ij->i", X, X) <= 1.0)
    theta = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    np.testing.assert_array_equal(y_clean, np.floor(k * theta / (2 * np.pi)).astype(int))
    assert np.sum(y != y_clean) == 300
    if k == 2:
        np.testing.assert_array_equal(y_clean, (X[:, 1] < 0).astype(int))
    with pytest.raises(ValueError, match="n_classes"):
        make_circle_example(10, n_classes=1)


def test_disc_example_contamination_is_exact():
    X, y, y_clean = make_disc_example(500, contamination=0.2, random_state=2)
    assert np.sum(y != y_clean) == 100


def test_utility_matrices_eq16():
    np.testing.assert_array_equal(utility_matrix(0), np.eye(3))
    U1, U2, U3 = (utility_matrix(kind, 0.4) for kind in (1, 2, 3))
    np.testing.assert_array_equal(U1, [[1, 0.4, 0], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(U2, [[1, 0.4, 0.4], [0, 1, 0], [0, 0, 1]])
    np.testing.assert_array_equal(U3, U2.T)


def test_other_generators_are_seeded():
    for make in (lambda: make_reinforced_example(30, example="4.1.2", random_state=4),
                 lambda: make_targeted_example(40, scenario="S2", random_state=4)):
        a, b = make(), make()
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_between_class_gamma_quantiles():
    X, y = make_reinforced_example(200, random_state=0)
    g25, g50, g75 = gamma_quartiles(X, y)
    assert g25 > g50 > g75 > 0
    # direct check of the median
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    between = np.triu(y[:, None] != y[None, :], 1)
    sigma = np.median(D[between])
    np.testing.assert_allclose(g50, 1 / (2 * sigma ** 2), rtol=1e-12)
    with pytest.raises(ValueError, match="quantile"):
        between_class_gamma(X, y, quantile=2)


def test_flip_labels_moves_an_exact_fraction_to_other_classes():
    from msvm.datasets import flip_labels

    y = np.repeat([0, 1], 100)
    flipped = flip_labels(y, 0.1, 2, random_state=0)
    assert np.sum(flipped != y) == 20 and np.array_equal(y, np.repeat([0, 1], 100))
    with pytest.raises(ValueError, match="labels 0 .. 1"):
        flip_labels([0, 2], 0.5, 2)
    with pytest.raises(ValueError, match="fraction"):
        flip_labels(y, -0.1, 2)
