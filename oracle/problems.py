"""Random small classification problems for property tests (no msvm import)."""

import numpy as np


def make_problem(seed, n, k, d, weights="random", separation=1.0):
    """A random k-class problem with every class present.

    Class centres are drawn at ``separation`` times a standard normal; points are centre plus
    standard normal noise.

    Parameters
    ----------
    seed : int
        Seed of ``numpy.random.default_rng``.
    n, k, d : int
        Samples (n >= k), classes and features.
    weights : {'ones', 'random', 'zeros', 'integers'}, default='random'
        'ones'; 'random' (uniform in [0.2, 3]); 'zeros' (random with about 15% exact zeros,
        never a whole class); 'integers' (1..3).
    separation : float, default=1.0
        Scale of the class centres.

    Returns
    -------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels 0..k-1.
    w : ndarray of shape (n,)
        Sample weights.
    """
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    centres = separation * rng.standard_normal((k, d))
    X = centres[y] + rng.standard_normal((n, d))
    if weights == "ones":
        w = np.ones(n)
    elif weights == "random":
        w = rng.uniform(0.2, 3.0, size=n)
    elif weights == "integers":
        w = rng.integers(1, 4, size=n).astype(np.float64)
    elif weights == "zeros":
        w = rng.uniform(0.2, 3.0, size=n)
        zero = rng.random(n) < 0.15
        # keep at least one positive weight in every class
        for c in range(k):
            members = np.flatnonzero(y == c)
            zero[members[0]] = False
        w[zero] = 0.0
    else:
        raise ValueError(weights)
    return X, y, w
