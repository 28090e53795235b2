"""The simulations S1 and S2 of Kang, Lin and Zhang (2019, section 3.1)."""

import numpy as np
from sklearn.utils import check_random_state

from ._robust_examples import _check_n

_MU_S2 = 5.0 * np.array([[1, 1, 0, 0, 0, 0], [0, 1, 1, 0, 0, 0], [0, 0, 1, 1, 0, 0],
                         [0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 1, 1]], dtype=np.float64)


def _eta(u):
    return np.column_stack([2 * u, u ** 2 + 2 * u - 1, np.cos(2 * np.pi * u),
                            4 * np.exp((u - 0.3) ** 2), np.log(1.0 / u ** 2),
                            np.sin(3 * np.pi * u)])


def make_targeted_example(n_samples=None, scenario="S1", sigma=None, random_state=None):
    """Simulation S1 (3 classes) or S2 (5 classes) of Kang, Lin and Zhang (2019).

    The targeted variable U ~ Uniform(0, 1) is column 0 of X.  A latent score
    s = U^2 + U - 1 + eps, eps ~ N(0, 0.1) (variance 0.1), is cut at its empirical quantiles
    into k equally frequent classes (the paper's eq. 17 for S1, where "tertiles" must be
    those of the score: U's own tertiles would leave class 3 almost empty; the paper does
    not print S2's rule and says it is made "the same way", so S2 cuts the same score into
    quintiles).  Given Y = y (1-based) and U:

    - S1 (defaults n = 1000, sigma = 1, not given in the paper): X ~ N(beta(U) y, sigma^2 I_2)
      with beta(u) = (sin(4 pi u), 2 exp(-20 (u - 0.5)^2));
    - S2 (defaults n = 1500, sigma = 2): X ~ N(mu^(y) * eta(U), sigma^2 I_6) elementwise, with
      the paper's mu^(1..5) (two adjacent entries 5, the rest 0) and
      eta(u) = (2u, u^2 + 2u - 1, cos(2 pi u), 4 exp((u - 0.3)^2), ln(1/u^2), sin(3 pi u)).

    Parameters
    ----------
    n_samples : int, default=None
        1000 for S1, 1500 for S2.
    scenario : {'S1', 'S2'}, default='S1'
    sigma : float, default=None
        Noise standard deviation (1 for S1, 2 for S2).
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    X : ndarray of shape (n_samples, 3) for S1 or (n_samples, 7) for S2
        Column 0 is U.
    y : ndarray of shape (n_samples,)
        Labels 0..k-1.
    """
    if scenario not in ("S1", "S2"):
        raise ValueError(f"scenario must be 'S1' or 'S2'; got {scenario!r}")
    n = _check_n(n_samples if n_samples is not None else (1000 if scenario == "S1" else 1500))
    sigma = (1.0 if scenario == "S1" else 2.0) if sigma is None else float(sigma)
    if not sigma > 0:
        raise ValueError(f"sigma must be positive; got {sigma!r}")
    rng = check_random_state(random_state)
    U = rng.uniform(size=n)
    U = np.where(U > 0, U, np.finfo(float).tiny)
    score = U ** 2 + U - 1 + rng.normal(0.0, np.sqrt(0.1), size=n)
    k = 3 if scenario == "S1" else 5
    y = np.searchsorted(np.quantile(score, np.arange(1, k) / k), score, side="left")
    if scenario == "S1":
        beta = np.column_stack([np.sin(4 * np.pi * U), 2 * np.exp(-20 * (U - 0.5) ** 2)])
        X = beta * (y + 1)[:, None] + sigma * rng.standard_normal((n, 2))
    else:
        X = _MU_S2[y] * _eta(U) + sigma * rng.standard_normal((n, 6))
    return np.column_stack([U, X]), y
