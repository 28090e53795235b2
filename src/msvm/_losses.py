"""Per-sample losses of the models, evaluated on decision values (the value behind objective_)."""

import numpy as np


def reinforced_loss(G, y, gamma):
    """gamma [(k-1) - G_{i,y_i}]_+ + (1 - gamma) sum_{j != y_i} [1 + G_ij]_+ per sample."""
    n, k = G.shape
    own = np.zeros((n, k), dtype=bool)
    own[np.arange(n), y] = True
    reinforced = np.maximum((k - 1) - G[own], 0.0)
    others = np.where(own, 0.0, np.maximum(1.0 + G, 0.0)).sum(axis=1)
    return gamma * reinforced + (1.0 - gamma) * others
