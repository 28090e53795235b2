"""Simulated examples of the robust and utility-weighted MSVM papers (seeds 000 and 001)."""

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


def make_disc_example(n_samples=200, contamination=0.1, random_state=None):
    """The three-class unit-disc example of Wu and Liu (seed 001, section 4).

    X is uniform on the unit disc; with theta its polar angle in [0, 2 pi), the disc is cut
    into six 60-degree sectors s = floor(6 theta / (2 pi)) + 1 and the class is 1 for sectors
    1 and 4, 2 for sectors 2 and 3, 3 for sectors 5 and 6 (the paper writes floor(k theta /
    2 pi) with k = 3, which cannot reach sectors 4 to 6: the six-sector reading is the one
    its class list needs).  Then a fraction ``contamination`` of the points, chosen at random,
    get one of the two other labels with equal probabilities.

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
    radius = np.sqrt(rng.uniform(size=n))
    theta = rng.uniform(0.0, 2.0 * np.pi, size=n)
    X = np.column_stack([radius * np.cos(theta), radius * np.sin(theta)])
    sector = np.minimum((6.0 * theta / (2.0 * np.pi)).astype(int), 5)   # 0..5
    y_clean = np.array([0, 1, 1, 0, 2, 2])[sector]
    y = y_clean.copy()
    flip = rng.choice(n, size=int(round(contamination * n)), replace=False)
    y[flip] = (y[flip] + rng.randint(1, 3, size=len(flip))) % 3
    return X, y, y_clean


_UTILITY_MEANS = np.array([[1.0, 0.0], [-0.5, np.sqrt(3.0) / 2.0], [-0.5, -np.sqrt(3.0) / 2.0]])


def make_utility_example(n_samples=200, flip=0.0, random_state=None):
    """Examples 1 and 2 of Liu, Wu and He (seed 000, section 5.1).

    Y is uniform on three classes and X given Y = y is N(mu_y, 0.7^2 I_2) with
    mu_1 = (1, 0), mu_2 = (-1/2, sqrt(3)/2), mu_3 = (-1/2, -sqrt(3)/2) (Example 1).  Example 2
    then replaces each label by j with probability ``1 - flip`` for j = y and ``flip / 2``
    otherwise (the paper: flip = 0.15, i.e. 0.85 and 0.075).

    Parameters
    ----------
    n_samples : int, default=200
    flip : float in [0, 1], default=0.0
        Probability that a label is moved to another class (0 gives Example 1).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
        Labels 0, 1, 2 (the paper's 1, 2, 3), after the flips.
    """
    n = _check_n(n_samples)
    flip = _check_fraction(flip, "flip")
    rng = check_random_state(random_state)
    y = rng.randint(3, size=n)
    X = _UTILITY_MEANS[y] + 0.7 * rng.standard_normal((n, 2))
    moved = rng.uniform(size=n) < flip
    y = np.where(moved, (y + rng.randint(1, 3, size=n)) % 3, y)
    return X, y


def utility_matrix(kind=0, a=0.0):
    """The utility matrices U_0, U_{1,a}, U_{2,a}, U_{3,a} of seed 000, eq. (16).

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
