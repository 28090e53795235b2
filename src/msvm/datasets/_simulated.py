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
