"""The simulated examples of Liu and Yuan (2011), "Reinforced multicategory SVMs", section 4.1."""

import numbers

import numpy as np
from sklearn.utils import check_random_state

_SQRT3 = np.sqrt(3.0)
_SD = 1.5

# Class-conditional Gaussian means (standard deviation 1.5 in every direction), one list of
# equally weighted mixture components per class; classes 0, 1, 2 are the paper's 1, 2, 3.
_MEANS = {
    "4.1.1": [
        [(0.0, 2.0)],
        [(-_SQRT3, -1.0)],
        [(_SQRT3, -1.0)],
    ],
    "4.1.2": [
        [(2.0, 0.0)],
        [(0.0, 2.0), (0.0, -2.0)],
        [(-2.0, 0.0)],
    ],
}


def make_reinforced_example(n_samples=100, example="4.1.1", random_state=None):
    """Draw a sample from the simulated three-class examples of Liu and Yuan (2011).

    Labels are drawn with equal class priors P(Y = j) = 1/3, then X given Y is bivariate normal
    with covariance ``1.5**2 * I_2``:

    - ``"4.1.1"`` (piecewise linear Bayes boundary, Bayes error about 0.204): means
      ``(0, 2)``, ``(-sqrt(3), -1)`` and ``(sqrt(3), -1)``.
    - ``"4.1.2"`` (nonlinear Bayes boundary, Bayes error about 0.288): means ``(2, 0)`` and
      ``(-2, 0)`` for classes 0 and 2; class 1 is the equal mixture
      ``0.5 N((0, 2), 1.5**2 I) + 0.5 N((0, -2), 1.5**2 I)``.

    Parameters
    ----------
    n_samples : int, default=100
        Number of samples.
    example : {"4.1.1", "4.1.2"}, default="4.1.1"
        Which example of section 4.1 of the paper.
    random_state : int, RandomState instance or None, default=None
        Seed of the draw.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The inputs.
    y : ndarray of shape (n_samples,)
        Class labels 0, 1, 2 (the paper's classes 1, 2, 3).

    References
    ----------
    Liu, Y. and Yuan, M. (2011). Reinforced multicategory support vector machines.
    Journal of Computational and Graphical Statistics, 20(4), 901-919.

    Examples
    --------
    >>> from msvm.datasets import make_reinforced_example
    >>> X, y = make_reinforced_example(n_samples=5, random_state=0)
    >>> X.shape, y.shape
    ((5, 2), (5,))
    """
    if (not isinstance(n_samples, numbers.Integral) or isinstance(n_samples, bool)
            or n_samples < 1):
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}")
    if example not in _MEANS:
        raise ValueError(f"example must be one of {sorted(_MEANS)}; got {example!r}")
    rng = check_random_state(random_state)
    n = int(n_samples)

    y = rng.randint(3, size=n)
    component = rng.randint(2, size=n)  # which mixture component, used by mixture classes only
    means = np.empty((n, 2))
    for label, components in enumerate(_MEANS[example]):
        mask = y == label
        means[mask] = np.asarray(components)[component[mask] % len(components)]
    X = means + _SD * rng.standard_normal((n, 2))
    return X, y


def reinforced_example_proba(X, example="4.1.1"):
    """True class probabilities P(Y = j | X = x) of the simulated examples of Liu and Yuan (2011).

    With equal priors, p_j(x) is proportional to the class-j density (a mixture density for
    class 1 of ``"4.1.2"``) of :func:`make_reinforced_example`: the truth against which
    estimated probabilities are measured.

    Parameters
    ----------
    X : array-like of shape (n_samples, 2)
        Inputs.
    example : {"4.1.1", "4.1.2"}, default="4.1.1"
        Which example of section 4.1 of the paper.

    Returns
    -------
    proba : ndarray of shape (n_samples, 3)
        p_0(x), p_1(x), p_2(x); each row sums to 1.

    Examples
    --------
    >>> from msvm.datasets import make_reinforced_example, reinforced_example_proba
    >>> X, y = make_reinforced_example(n_samples=5, random_state=0)
    >>> reinforced_example_proba(X).shape
    (5, 3)
    """
    if example not in _MEANS:
        raise ValueError(f"example must be one of {sorted(_MEANS)}; got {example!r}")
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n_samples, 2); got {X.shape}")
    # log of each class density up to the common factor 1 / (2 pi sd^2)
    logd = np.empty((len(X), len(_MEANS[example])))
    for label, components in enumerate(_MEANS[example]):
        sq = np.stack([np.sum((X - np.asarray(mu)) ** 2, axis=1) for mu in components])
        logd[:, label] = np.log(np.mean(np.exp(-(sq - sq.min(axis=0)) / (2 * _SD ** 2)),
                                        axis=0)) - sq.min(axis=0) / (2 * _SD ** 2)
    logd -= logd.max(axis=1, keepdims=True)
    proba = np.exp(logd)
    return proba / proba.sum(axis=1, keepdims=True)
