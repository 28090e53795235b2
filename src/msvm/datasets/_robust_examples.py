"""Simulated examples of the robust and utility-weighted MSVM papers (Liu, Wu and He (2011) and
Wu and Liu (2007))."""

import numbers

import numpy as np
from sklearn.utils import check_random_state


def _check_n(n_samples):
    if (not isinstance(n_samples, numbers.Integral) or isinstance(n_samples, bool)
            or n_samples < 1):
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}")
    return int(n_samples)


def _check_fraction(value, name):
    if not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1]; got {value!r}")
    return float(value)


def flip_labels(y, fraction, n_classes, random_state=None):
    """Move ``round(fraction * n)`` randomly chosen labels to one of the other classes.

    The contamination of Wu and Liu (2007) and Wu and Liu (2013): the chosen points get one of the
    ``n_classes - 1`` other labels with equal probabilities.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer labels 0 .. n_classes-1.
    fraction : float in [0, 1]
        Fraction of the labels to flip.
    n_classes : int >= 2
        Number of classes.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.

    Returns
    -------
    ndarray of shape (n_samples,)
        A flipped copy of ``y``.
    """
    y = np.array(y, copy=True)
    fraction = _check_fraction(fraction, "fraction")
    if (not isinstance(n_classes, numbers.Integral) or isinstance(n_classes, bool)
            or n_classes < 2):
        raise ValueError(f"n_classes must be an integer >= 2; got {n_classes!r}")
    if y.ndim != 1 or (len(y) and (y.min() < 0 or y.max() >= n_classes)):
        raise ValueError(f"y must be a 1-d array of labels 0 .. {n_classes - 1}")
    rng = check_random_state(random_state)
    chosen = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    y[chosen] = (y[chosen] + rng.randint(1, n_classes, size=len(chosen))) % n_classes
    return y


def _uniform_disc(n, rng):
    """n points uniform on the unit disc and their polar angles in [0, 2 pi)."""
    radius = np.sqrt(rng.uniform(size=n))
    theta = rng.uniform(0.0, 2.0 * np.pi, size=n)
    return np.column_stack([radius * np.cos(theta), radius * np.sin(theta)]), theta


def make_disc_example(n_samples=200, contamination=0.1, random_state=None):
    """The three-class unit-disc example of Wu and Liu (2007, section 4).

    X is uniform on the unit disc; with theta its polar angle in [0, 2 pi), the disc is cut
    into six 60-degree sectors s = floor(6 theta / (2 pi)) + 1 and the class is 1 for sectors
    1 and 4, 2 for sectors 2 and 3, 3 for sectors 5 and 6 (the paper writes floor(k theta /
    2 pi) with k = 3, which cannot reach sectors 4 to 6: the six-sector reading is the one
    its class list needs).  Then a fraction ``contamination`` of the points, chosen at random,
    get one of the two other labels with equal probabilities.
    The paper does not print the sample size; the default 200 is ours.  Its test errors
    (Table 1) grow with the contamination, so its test sets are contaminated as well.

    Parameters
    ----------
    n_samples : int, default=200
        Number of points.
    contamination : float in [0, 1], default=0.1
        Fraction of flipped labels (the paper uses 0.1 and 0.2).
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
        Labels 0, 1, 2 (the paper's 1, 2, 3) after contamination.
    y_clean : ndarray of shape (n_samples,)
        The labels before contamination.
    """
    n = _check_n(n_samples)
    contamination = _check_fraction(contamination, "contamination")
    rng = check_random_state(random_state)
    X, theta = _uniform_disc(n, rng)
    sector = np.minimum((6.0 * theta / (2.0 * np.pi)).astype(int), 5)   # 0..5
    y_clean = np.array([0, 1, 1, 0, 2, 2])[sector]
    return X, flip_labels(y_clean, contamination, 3, rng), y_clean


_UTILITY_MEANS = np.array([[1.0, 0.0], [-0.5, np.sqrt(3.0) / 2.0], [-0.5, -np.sqrt(3.0) / 2.0]])

# paper defaults per example: training size (Example 1: the linear fits of Figure 1; the
# Gaussian-kernel fits of Figure 2 use 800) and label-flip probability
_UTILITY_DEFAULTS = {1: (1600, 0.0), 2: (400, 0.15), 3: (200, 0.15)}


def _move_labels(y, flip, k, rng):
    """Move each label to one of the k - 1 others (uniformly) with probability ``flip``."""
    moved = rng.uniform(size=len(y)) < flip
    return np.where(moved, (y + rng.randint(1, k, size=len(y))) % k, y)


def _example3_logits(X):
    x1, x2 = X[:, 0], X[:, 1]
    return np.column_stack([-20 * x1 + 2 * x1 ** 2 - x2 ** 2 + 2,
                            -4 * x1 ** 2 + 2 * x2 ** 2 - 4,
                            20 * x1 + 2 * x1 ** 2 - x2 ** 2 + 2])


def make_utility_example(n_samples=None, example=1, flip=None, random_state=None):
    """Examples 1, 2 and 3 of Liu, Wu and He (2011, section 5.1).

    - Example 1: Y is uniform on three classes and X given Y = y is N(mu_y, 0.7^2 I_2) with
      mu_1 = (1, 0), mu_2 = (-1/2, sqrt(3)/2), mu_3 = (-1/2, -sqrt(3)/2) (piecewise linear
      Bayes boundary).  The paper uses n = 1600 for linear and 800 for Gaussian-kernel fits.
    - Example 2: Example 1's (X, Y~), then the label-flip contamination below with
      probability 0.15; n = 400, test set 100 n.
    - Example 3: X_1 ~ U[-3, 3], X_2 ~ U[-6, 6]; Y~ = j with probability
      exp(f_j(x)) / sum_m exp(f_m(x)), where f_1 = -20 x_1 + 2 x_1^2 - x_2^2 + 2,
      f_2 = -4 x_1^2 + 2 x_2^2 - 4, f_3 = 20 x_1 + 2 x_1^2 - x_2^2 + 2; then the flips with
      probability 0.15; n = 200, test set 10 n.  The paper prints f_1 with
      "2 x_2^2 - x_2^2", an evident typo: we use the reading symmetric to f_3 under
      x_1 -> -x_1, which is what makes classes 1 and 3 mirror images.

    The contamination replaces Y~ by Y = j with probability ``1 - flip`` for j = Y~ and
    ``flip / 2`` for each other class (the paper: 0.85 and 0.075).

    Parameters
    ----------
    n_samples : int, default=None
        The paper's size: 1600, 400 or 200 for Examples 1, 2, 3.
    example : {1, 2, 3}, default=1
        Which example.
    flip : float in [0, 1], default=None
        Probability that a label is moved to another class: 0 for Example 1, 0.15 for
        Examples 2 and 3.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
        Labels 0, 1, 2 (the paper's 1, 2, 3), after the flips.

    Examples
    --------
    >>> from msvm.datasets import make_utility_example
    >>> X, y = make_utility_example(example=3, random_state=0)
    >>> X.shape
    (200, 2)
    """
    if example not in _UTILITY_DEFAULTS:
        raise ValueError(f"example must be 1, 2 or 3; got {example!r}")
    default_n, default_flip = _UTILITY_DEFAULTS[example]
    n = _check_n(default_n if n_samples is None else n_samples)
    flip = _check_fraction(default_flip if flip is None else flip, "flip")
    rng = check_random_state(random_state)
    if example == 3:
        X = np.column_stack([rng.uniform(-3.0, 3.0, size=n), rng.uniform(-6.0, 6.0, size=n)])
        logits = _example3_logits(X)
        P = np.exp(logits - logits.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        y = (rng.uniform(size=n)[:, None] > np.cumsum(P, axis=1)[:, :-1]).sum(axis=1)
    else:
        y = rng.randint(3, size=n)
        X = _UTILITY_MEANS[y] + 0.7 * rng.standard_normal((n, 2))
    return X, _move_labels(y, flip, 3, rng)


def make_circle_example(n_samples=100, n_classes=2, flip=0.1, random_state=None):
    """The circle example of Wu and Liu's adaptively weighted classifiers (Wu and Liu 2013).

    X is uniform on the unit disc and, with theta its polar angle in [0, 2 pi), the class is
    floor(k theta / (2 pi)) (the paper's floor(k theta / 2 pi) + 1, 0-based here): k equal
    sectors, so the Bayes boundary is linear (k = 2: the x_1 axis) or piecewise linear through
    the origin (k = 3).  Then ``round(flip * n)`` points chosen at random get one of the
    k - 1 other labels with equal probabilities.  The slides use training, tuning and test
    sets of 100, 100 and 10000 points; they do not print the flip fractions.

    Parameters
    ----------
    n_samples : int, default=100
        Number of points.
    n_classes : int >= 2, default=2
        k, the number of sectors (the slides use 2 and 3).
    flip : float in [0, 1], default=0.1
        Fraction of labels flipped.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
        Labels 0 .. k-1 after the flips.
    y_clean : ndarray of shape (n_samples,)
        The labels before the flips.
    """
    n = _check_n(n_samples)
    if not isinstance(n_classes, numbers.Integral) or isinstance(n_classes, bool) \
            or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2; got {n_classes!r}")
    k = int(n_classes)
    flip = _check_fraction(flip, "flip")
    rng = check_random_state(random_state)
    X, theta = _uniform_disc(n, rng)
    y_clean = np.minimum((k * theta / (2.0 * np.pi)).astype(int), k - 1)
    return X, flip_labels(y_clean, flip, k, rng), y_clean


def utility_matrix(kind=0, a=0.0):
    """The utility matrices U_0, U_{1,a}, U_{2,a}, U_{3,a} of Liu, Wu and He (2011), eq. (16).

    U_0 is the identity; U_{1,a} adds a at (1, 2); U_{2,a} adds a at (1, 2) and (1, 3);
    U_{3,a} is the transpose of U_{2,a} (rows: true class, columns: predicted class).
    """
    if kind not in (0, 1, 2, 3):
        raise ValueError(f"kind must be 0, 1, 2 or 3; got {kind!r}")
    if not isinstance(a, numbers.Real) or not a >= 0:
        raise ValueError(f"a must be a nonnegative number; got {a!r}")
    U = np.eye(3)
    if kind >= 1:
        U[0, 1] = a
    if kind >= 2:
        U[0, 2] = a
    return U.T.copy() if kind == 3 else U
