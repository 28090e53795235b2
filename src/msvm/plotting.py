"""Plots of fitted msvm objects; needs matplotlib.

* a TargetedLocalMSVM (Kang, Lin and Zhang 2019 figures 1 to 4): :func:`plot_coef_path`,
  :func:`plot_inner_products`;
* a TuningSetSearch along its lambda path (``path_``): :func:`plot_validation_curve` (the
  tuning score against lambda) and :func:`plot_regularization_path` (the coefficients of a
  linear model against lambda).
"""

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


def _combination_label(params):
    """'gamma=0.5' for the parameters of a grid point other than C ('' when none)."""
    return ", ".join(f"{name}={value:.4g}" if isinstance(value, float) else f"{name}={value!r}"
                     for name, value in params.items() if name != "C")


def _combinations(search):
    """[(label, indices of path_'s entries)] per ``param_grid`` combination, in grid order."""
    groups = {}
    for i, params in enumerate(search.path_["params"]):
        groups.setdefault(_combination_label(params), []).append(i)
    return list(groups.items())


def plot_validation_curve(search, ax=None):
    """Plot the tuning score of a fitted TuningSetSearch against lambda (log scale).

    One line per ``param_grid`` combination (with ``cv``: the mean over the folds, with a
    band of one standard deviation); the selected lambda is marked.

    Parameters
    ----------
    search : fitted :class:`~msvm.model_selection.TuningSetSearch`
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes
    """
    if not hasattr(search, "path_"):
        raise ValueError("plot_validation_curve needs a fitted TuningSetSearch")
    plt = _pyplot()
    if ax is None:
        ax = plt.gca()
    path, std = search.path_, search.cv_results_["std_test_score"]
    for label, rows in _combinations(search):
        lam, score = path["lambda"][rows], path["score"][rows]
        (line,) = ax.plot(lam, score, marker="o", markersize=3, label=label or None)
        if np.any(std[rows] > 0):
            ax.fill_between(lam, score - std[rows], score + std[rows], alpha=0.2,
                            color=line.get_color())
    ax.axvline(search.best_lambda_, color="k", linestyle="--", linewidth=1,
               label=f"selected lambda = {search.best_lambda_:.3g}")
    ax.set_xscale("log")
    ax.set_xlabel("lambda (C = 1 / (n lambda))")
    ax.set_ylabel("tuning score")
    ax.legend(fontsize="small")
    return ax


def plot_regularization_path(search, combination=0, split=0, ax=None):
    """Plot the coefficients of a linear model along the lambda path of a TuningSetSearch.

    Every entry of ``coef_`` (class function or output q, feature j) against lambda (log
    scale), for one ``param_grid`` combination and one split (``cv`` fold); the selected
    lambda is marked.

    Parameters
    ----------
    search : fitted :class:`~msvm.model_selection.TuningSetSearch` of a linear model
        (``path_`` has ``'coef'``: the estimator's fits have ``coef_``).
    combination : int, default=0
        Index of the ``param_grid`` combination, in grid order.
    split : int, default=0
        The split whose fits are drawn (0: the one tuning set, or the first fold).
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes
    """
    if "coef" not in getattr(search, "path_", {}):
        raise ValueError("plot_regularization_path needs a TuningSetSearch whose fits have "
                         "explicit coefficients (coef_: kernel='linear')")
    groups = _combinations(search)
    if not 0 <= combination < len(groups):
        raise ValueError(f"combination must be in [0, {len(groups)}); got {combination!r}")
    plt = _pyplot()
    if ax is None:
        ax = plt.gca()
    rows = groups[combination][1]
    lam, coef = search.path_["lambda"][rows], search.path_["coef"][rows, split]
    for q in range(coef.shape[1]):
        for j in range(coef.shape[2]):
            ax.plot(lam, coef[:, q, j], label=f"output {q + 1}, x{j + 1}")
    ax.axvline(search.best_lambda_, color="k", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("lambda (C = 1 / (n lambda))")
    ax.set_ylabel("coefficient")
    if coef.shape[1] * coef.shape[2] <= 12:
        ax.legend(fontsize="small")
    return ax
