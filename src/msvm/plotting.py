"""Plots of a fitted TargetedLocalMSVM (Kang, Lin and Zhang 2019 figures 1 to 4); needs
matplotlib."""

import numpy as np

from .angle import simplex_vertices


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("msvm.plotting needs matplotlib: pip install matplotlib") from exc
    return plt


def plot_coef_path(est, features=None, ax=None):
    """Plot the varying coefficients beta_q(u) along the grid (linear kernel).

    Parameters
    ----------
    est : fitted TargetedLocalMSVM with ``kernel='linear'``
    features : list of int, default=None
        Columns of ``coef_path_``'s last axis to draw (0 is the intercept, then the non-target
        features in order); all by default.
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes
    """
    if not hasattr(est, "coef_path_"):
        raise ValueError("plot_coef_path needs a TargetedLocalMSVM fitted with kernel='linear'")
    plt = _pyplot()
    if ax is None:
        ax = plt.gca()
    path = est.coef_path_
    features = range(path.shape[2]) if features is None else features
    for q in range(path.shape[1]):
        for f in features:
            name = "intercept" if f == 0 else f"x{f}"
            ax.plot(est.grid_, path[:, q, f], label=f"beta_{q + 1}, {name}")
    ax.set_xlabel("targeted variable u")
    ax.set_ylabel("beta(u)")
    ax.legend(fontsize="small")
    return ax


def inner_products(est, x):
    """<f(u, x), W_j> along the grid for one sample's non-target features x: (n_grid, k)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    rows = np.insert(np.tile(x, (len(est.grid_), 1)), est.target_index_, est.grid_, axis=1)
    return est.local_functions(rows) @ simplex_vertices(len(est.classes_))


def plot_inner_products(est, x, ax=None):
    """Plot <f(u, x), W_j> of one sample against u (the class with the largest is predicted).

    Parameters
    ----------
    est : fitted TargetedLocalMSVM
    x : array-like of shape (n_features_in_ - 1,)
        The sample's non-target features.
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes
    """
    plt = _pyplot()
    if ax is None:
        ax = plt.gca()
    values = inner_products(est, x)
    for j, label in enumerate(est.classes_):
        ax.plot(est.grid_, values[:, j], label=f"class {label}")
    ax.set_xlabel("targeted variable u")
    ax.set_ylabel("<f(u, x), W_j>")
    ax.legend(fontsize="small")
    return ax
