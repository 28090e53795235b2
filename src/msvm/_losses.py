"""Per-sample losses of every model on decision values G (n, k): the value behind objective_.

Each function returns the unweighted loss of every sample (shape (n,)) for encoded labels y
(0..k-1); a fit's objective is the penalty plus C times their weighted sum.  The same losses
in plain NumPy, written independently, are in ``oracle/losses.py``.

- ReinforcedMSVM, AngleBasedMSVM and TargetedLocalMSVM (on the inner products with the
  simplex vertices): :func:`reinforced_loss`;
- WestonWatkinsMSVM: :func:`pairwise_hinge_loss`;
- RobustMSVM: :func:`truncated_hinge_loss`;
- WeightedRobustMSVM: :func:`utility_margin_loss` on the generalized functional
  :func:`margins`;
- AdaptiveWeightedSVM: :func:`margin_hinge_loss`.
"""

import numpy as np

from ._products import chunk_rows


def losses_in_blocks(loss, G, y):
    """``loss(G, y)`` computed on blocks of rows (the loss of a sample depends on its row
    alone), so that its (n, k) temporaries are those of one block at a large n."""
    step = chunk_rows(G.shape[1])
    if len(y) <= step:
        return loss(G, y)
    out = np.empty(len(y))
    for start in range(0, len(y), step):
        out[start:start + step] = loss(G[start:start + step], y[start:start + step])
    return out


def margins(G):
    """Generalized functional margins g_j(f) = f_j - max_{j' != j} f_j', shape (n, k)."""
    G = np.asarray(G, dtype=np.float64)
    order = np.argsort(G, axis=1)
    top, second = order[:, -1], order[:, -2]
    rows = np.arange(len(G))
    best_other = np.where(np.arange(G.shape[1])[None, :] == top[:, None],
                          G[rows, second][:, None], G[rows, top][:, None])
    return G - best_other


def reinforced_loss(G, y, gamma):
    """gamma [(k-1) - G_{i,y_i}]_+ + (1 - gamma) sum_{j != y_i} [1 + G_ij]_+ per sample."""
    n, k = G.shape
    rows = np.arange(n)
    reinforced = np.maximum((k - 1) - G[rows, y], 0.0)
    terms = 1.0 + G                         # one (n, k) temporary, changed in place
    np.maximum(terms, 0.0, out=terms)
    terms[rows, y] = 0.0
    return gamma * reinforced + (1.0 - gamma) * terms.sum(axis=1)


def pairwise_hinge_loss(G, y):
    """sum_{j != y_i} [1 - (G_{i,y_i} - G_ij)]_+ per sample (Weston and Watkins)."""
    own = G[np.arange(len(y)), y][:, None]
    terms = G - own                     # 1 - (own - G), one (n, k) array in place
    terms += 1.0
    np.maximum(terms, 0.0, out=terms)
    terms[np.arange(len(y)), y] = 0.0
    return terms.sum(axis=1)


def truncated_hinge_loss(G, y, s):
    """sum_{j != y_i} T_s(G_ij), T_s(u) = [1 + u]_+ - [u - s]_+ per sample (s = None: no
    truncation, the hinge [1 + u]_+ alone)."""
    n, k = G.shape
    other = np.ones((n, k), dtype=bool)
    other[np.arange(n), y] = False
    terms = np.maximum(1.0 + G, 0.0)
    if s is not None:
        terms = terms - np.maximum(G - s, 0.0)
    return np.where(other, terms, 0.0).sum(axis=1)


def truncated_margin_hinge(u, s):
    """T_s(u) = [1 - u]_+ - [s - u]_+ elementwise (s = None: the hinge [1 - u]_+ alone)."""
    loss = np.maximum(1.0 - u, 0.0)
    return loss if s is None else loss - np.maximum(s - u, 0.0)


def utility_margin_loss(G, y, utility, s):
    """sum_j U[y_i, j] T_s(g_j(G_i)) per sample, g the generalized :func:`margins`."""
    return np.sum(utility[y] * truncated_margin_hinge(margins(G), s), axis=1)


def margin_hinge_loss(G, y):
    """[1 - g_{y_i}(G_i)]_+ per sample, g the generalized :func:`margins`."""
    return np.maximum(1.0 - margins(G)[np.arange(len(y)), y], 0.0)
