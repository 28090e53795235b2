"""The Lagrange dual of the ReinforcedMSVM (``docs/models.md``), for checking primal solves.

With the multipliers alpha[i, j] of the hinge constraints, stationarity in h gives
h_j = sum_i (c[i, j] - mean_j' c[i, j']) K(x_i, .) with the signed multipliers c
(`signed_dual`), and stationarity in the unpenalized intercepts (with sum_j b_j = 0) says that
the column sums of c are equal.
"""

import numpy as np


def signed_dual(alpha, y):
    """c[i, j] = alpha[i, j] on the own slot (j = y_i), -alpha[i, j] on the other slots."""
    c = -np.array(alpha, dtype=np.float64)
    n = c.shape[0]
    c[np.arange(n), y] *= -1.0
    return c


def dual_objective(K, y, alpha):
    """Lagrange dual function of the reinforced MSVM at alpha, ignoring the intercept condition.

        D(alpha) = (k-1) sum_i alpha[i, y_i] + sum_{j != y_i} alpha[i, j]
                   - 1/2 sum_j c~_j' K c~_j,      c~ = c - row means of c.

    For alpha in the box [0, C w_i g] x [0, C w_i (1-g)] with equal column sums of c (see
    `signed_dual`), D(alpha) <= optimum (weak duality).

    Returns
    -------
    D : float
        The dual value.
    spread : float
        max - min of the column sums of c (zero when the intercept condition holds).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    n, k = alpha.shape
    y = np.asarray(y)
    own = np.zeros((n, k), dtype=bool)
    own[np.arange(n), y] = True
    linear = (k - 1) * alpha[own].sum() + alpha[~own].sum()
    c = signed_dual(alpha, y)
    ct = c - c.mean(axis=1, keepdims=True)
    quad = 0.5 * float(np.einsum("ij,ik,kj->", ct, K, ct))
    s = c.sum(axis=0)
    return float(linear - quad), float(s.max() - s.min())
