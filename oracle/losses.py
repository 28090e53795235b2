"""Every model's loss, margins and objective in plain NumPy, from ``docs/models.md``.

All objectives are ``penalty + C * sum_i w_i * loss_i`` with the penalty 1/2 sum_j ||h_j||^2
(`penalty`); the functions below take the decision values F (n, k) at the training points
(for the angle-based models the k inner products <f(x_i), W_j>, see `vertices`), labels y
coded 0..k-1 and sample weights w. Each ``*_losses`` function returns the per-sample losses
and the matching ``*_loss`` their weighted sum, without C:

- ReinforcedMSVM and AngleBasedMSVM: g [(k-1) - f_{y_i}]_+ + (1-g) sum_{j != y_i} [1 + f_j]_+;
- WestonWatkinsMSVM: sum_{j != y_i} [1 - (f_{y_i} - f_j)]_+;
- WeightedRobustMSVM (and AdaptiveWeightedSVM with U = I, s = None):
  sum_j U[y_i, j] T_s(g_j(f)), g_j(f) = min_{j' != j} (f_j - f_j') (`margins`),
  T_s(u) = [1 - u]_+ - [s - u]_+ (s = None: no truncation);
- RobustMSVM: sum_{j != y_i} T_s(f_j), T_s(u) = [1 + u]_+ - [u - s]_+.

The DC subproblems of the truncated models replace the concave part by its linearization at
indicators beta (Wu and Liu 2007, eq. 3.5; Liu, Wu and He 2011, section 4): `robust_beta`,
`robust_linearized_loss`, `weighted_beta` and `weighted_linearized_loss`.
"""

import numpy as np


def _labels(y):
    return np.asarray(y, dtype=np.intp)


def _weights(w, n):
    return np.ones(n) if w is None else np.asarray(w, dtype=np.float64)


def penalty(V, K):
    """1/2 sum_j ||h_j||^2 for h_j = sum_i V[i, j] K(x_i, .)."""
    return 0.5 * float(np.einsum("ij,ik,kj->", V, K, V))


# --------------------------------------------------------------------------------------------
# ReinforcedMSVM (and AngleBasedMSVM on the inner products with the simplex vertices)
# --------------------------------------------------------------------------------------------
def hinge_margins(F, y):
    """The arguments of the reinforced hinges.

    m[i, y_i] = (k-1) - F[i, y_i] and m[i, j] = 1 + F[i, j] otherwise; the loss of sample i is
    g [m[i, y_i]]_+ + (1-g) sum_{j != y_i} [m[i, j]]_+.
    """
    F = np.asarray(F, dtype=np.float64)
    n, k = F.shape
    y = _labels(y)
    m = 1.0 + F
    own = np.arange(n), y
    m[own] = (k - 1) - F[own]
    return m


def loss_weights(y, k, w, C, g):
    """Per-hinge weights C w_i g (own slot) and C w_i (1-g) (other slots).

    They are the upper bounds of the dual variables alpha_ij that multiply these hinges.
    """
    y = _labels(y)
    w = np.asarray(w, dtype=np.float64)
    n = len(y)
    U = np.repeat((C * w * (1.0 - g))[:, None], k, axis=1)
    U[np.arange(n), y] = C * w * g
    return U


def reinforced_losses(F, y, g):
    """Per-sample reinforced hinge losses g [(k-1) - F_iy]_+ + (1-g) sum_{j != y} [1 + F_ij]_+."""
    m = np.maximum(hinge_margins(F, y), 0.0)
    n = m.shape[0]
    own = m[np.arange(n), _labels(y)]
    m[np.arange(n), _labels(y)] = 0.0
    return g * own + (1.0 - g) * m.sum(axis=1)


def reinforced_loss(F, y, w, g):
    """sum_i w_i loss_i with the reinforced hinge loss (`reinforced_losses`)."""
    losses = reinforced_losses(F, y, g)
    return float(np.dot(_weights(w, len(losses)), losses))


def reinforced_objective(F, y, w, C, g, penalty):
    """penalty + C sum_i w_i [ g [(k-1) - F[i,y_i]]_+ + (1-g) sum_{j!=y_i} [1 + F[i,j]]_+ ].

    F: (n, k) decision values f_j(x_i); y: labels coded 0..k-1; w: sample weights;
    penalty: the value of 1/2 sum_j ||h_j||^2.
    """
    return float(penalty) + C * reinforced_loss(F, y, w, g)


def vertices(k):
    """The class vertices W_1..W_k of the angle-based models as columns, shape (k-1, k).

    W_1 = (k-1)^{-1/2} 1, W_j = -(1 + sqrt(k)) / (k-1)^{3/2} 1 + sqrt(k/(k-1)) e_{j-1}
    (Kang, Lin and Zhang 2019, section 1.1); the decision values are F @ vertices(k).
    """
    W = np.zeros((k - 1, k))
    one = np.ones(k - 1)
    W[:, 0] = one / np.sqrt(k - 1)
    for j in range(2, k + 1):
        e = np.zeros(k - 1)
        e[j - 2] = 1.0
        W[:, j - 1] = -(1 + np.sqrt(k)) / (k - 1) ** 1.5 * one + np.sqrt(k / (k - 1)) * e
    return W


# --------------------------------------------------------------------------------------------
# WestonWatkinsMSVM
# --------------------------------------------------------------------------------------------
def ww_losses(F, y):
    """Per-sample Weston-Watkins losses sum_{j != y_i} [1 - (f_{y_i} - f_j)]_+."""
    F = np.asarray(F, dtype=np.float64)
    n = F.shape[0]
    y = _labels(y)
    terms = np.maximum(1.0 - (F[np.arange(n), y][:, None] - F), 0.0)
    terms[np.arange(n), y] = 0.0
    return terms.sum(axis=1)


def ww_loss(F, y, w):
    """sum_i w_i loss_i with the Weston-Watkins loss (`ww_losses`)."""
    return float(np.dot(w, ww_losses(F, y)))


# --------------------------------------------------------------------------------------------
# WeightedRobustMSVM and AdaptiveWeightedSVM: the generalized functional margin
# --------------------------------------------------------------------------------------------
def margins(F):
    """Generalized functional margins g_j(f) = f_j - max_{j' != j} f_j' of every row of F."""
    F = np.asarray(F, dtype=np.float64)
    k = F.shape[1]
    out = np.empty_like(F)
    for j in range(k):
        out[:, j] = F[:, j] - np.delete(F, j, axis=1).max(axis=1)
    return out


def weighted_losses(F, y, U, s=None):
    """Per-sample losses sum_j U[y_i, j] T_s(g_j(f(x_i))), T_s(u) = [1 - u]_+ - [s - u]_+.

    s = None: no truncation (the convex weighted MSVM).
    """
    M = margins(F)
    T = np.maximum(1.0 - M, 0.0)
    if s is not None:
        T = T - np.maximum(s - M, 0.0)
    return (np.asarray(U, dtype=np.float64)[_labels(y)] * T).sum(axis=1)


def weighted_loss(F, y, w, U, s):
    """sum_i w_i loss_i with the utility-weighted truncated loss (`weighted_losses`)."""
    return float(np.dot(w, weighted_losses(F, y, U, s)))


def weighted_beta(F, s):
    """(beta, jstar): beta_ij = [g_j(f(x_i)) < s] and j* = argmax_{j' != j} f_j'(x_i)."""
    F = np.asarray(F, dtype=np.float64)
    n, k = F.shape
    jstar = np.empty((n, k), dtype=int)
    for j in range(k):
        G = F.copy()
        G[:, j] = -np.inf
        jstar[:, j] = np.argmax(G, axis=1)
    return margins(F) < s, jstar


def weighted_linearized_loss(F, y, w, U, s, beta, jstar):
    """sum_i w_i sum_j U[y_i, j] ([1 - g_j]_+ - beta_ij (s - f_j + f_{j*})): a DC step's loss."""
    F = np.asarray(F, dtype=np.float64)
    n = F.shape[0]
    rows = np.arange(n)[:, None]
    lin = s - F + F[rows, jstar]
    T = np.maximum(1.0 - margins(F), 0.0) - beta * lin
    return float(np.dot(w, (np.asarray(U)[_labels(y)] * T).sum(axis=1)))


# --------------------------------------------------------------------------------------------
# RobustMSVM
# --------------------------------------------------------------------------------------------
def robust_losses(F, y, s):
    """Per-sample losses sum_{j != y_i} T_s(f_j), T_s(u) = [1 + u]_+ - [u - s]_+.

    s = None: no truncation (the Lee-Lin-Wahba hinge).
    """
    F = np.asarray(F, dtype=np.float64)
    n = F.shape[0]
    T = np.maximum(1.0 + F, 0.0)
    if s is not None:
        T = T - np.maximum(F - s, 0.0)
    T[np.arange(n), _labels(y)] = 0.0
    return T.sum(axis=1)


def robust_loss(F, y, w, s):
    """sum_i w_i loss_i with the truncated Lee-Lin-Wahba loss (`robust_losses`)."""
    return float(np.dot(w, robust_losses(F, y, s)))


def robust_beta(F, y, s):
    """beta_ij = [f_j(x_i) > s] for j != y_i (Wu and Liu 2007, after eq. 3.4)."""
    beta = np.asarray(F) > s
    beta[np.arange(len(y)), _labels(y)] = False
    return beta


def robust_linearized_loss(F, y, w, s, beta):
    """sum_i w_i sum_{j != y_i} ([1 + f_j]_+ - beta_ij (f_j - s)): a DC step's loss."""
    F = np.asarray(F, dtype=np.float64)
    n = len(y)
    T = np.maximum(1.0 + F, 0.0) - beta * (F - s)
    T[np.arange(n), _labels(y)] = 0.0
    return float(np.dot(w, T.sum(axis=1)))
