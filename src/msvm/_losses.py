"""Per-sample losses of the models, evaluated on decision values (the value behind objective_)."""

import numpy as np


def reinforced_loss(G, y, gamma):
    """gamma [(k-1) - G_{i,y_i}]_+ + (1 - gamma) sum_{j != y_i} [1 + G_ij]_+ per sample."""
    n, k = G.shape
    rows = np.arange(n)
    reinforced = np.maximum((k - 1) - G[rows, y], 0.0)
    terms = 1.0 + G                         # one (n, k) temporary, changed in place
    np.maximum(terms, 0.0, out=terms)
    terms[rows, y] = 0.0
    return gamma * reinforced + (1.0 - gamma) * terms.sum(axis=1)
