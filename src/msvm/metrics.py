"""Evaluation metrics of the papers: the average utility of Liu, Wu and He (2011), section 5.1."""

import numpy as np
from sklearn.metrics import make_scorer


def _utility_labels(y_true, y_pred, U, labels):
    k = U.shape[0]
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim != 1 or len(labels) != k or len(np.unique(labels)) != k:
            raise ValueError(f"labels must list the k = {k} distinct classes of the utility "
                             f"matrix in its row order; got {labels!r}")
        return labels
    present = np.unique(np.concatenate([np.asarray(y_true).ravel(),
                                        np.asarray(y_pred).ravel()]))
    if len(present) == k:
        return present
    if (len(present) < k and np.issubdtype(present.dtype, np.integer)
            and present.min() >= 0 and present.max() < k):
        return np.arange(k)
    raise ValueError(f"cannot match the {len(present)} labels present ({present!r}) to the "
                     f"rows of the {k} x {k} utility matrix: pass labels=")


def average_utility(y_true, y_pred, *, utility, labels=None, sample_weight=None):
    """Average utility (1/n) sum_i U[y_i, yhat_i] of predictions (Liu, Wu and He 2011, section 5.1).

    With ``U`` the identity this is the accuracy.  The papers report it times 100.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,)
        Predicted labels.
    utility : array-like of shape (k, k)
        ``utility[i, j]`` is the utility of predicting class ``labels[j]`` for a sample of
        class ``labels[i]`` (rows: truth, columns: prediction).
    labels : array-like of shape (k,), default=None
        The classes in the row order of ``utility``.  By default the sorted labels present
        when all k occur, or ``0 .. k-1`` for integer labels in that range.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of a weighted average.

    Returns
    -------
    float

    Examples
    --------
    >>> from msvm.datasets import utility_matrix
    >>> from msvm.metrics import average_utility
    >>> average_utility([0, 0, 1, 2], [0, 1, 1, 1], utility=utility_matrix(1, 0.4))
    0.6
    """
    U = np.asarray(utility, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] != U.shape[1] or U.shape[0] < 2:
        raise ValueError(f"utility must be a square k x k matrix with k >= 2; got shape "
                         f"{U.shape}")
    if not np.all(np.isfinite(U)):
        raise ValueError("utility contains NaN or infinity")
    y_true = np.asarray(y_true).ravel()
    y_pred = np.asarray(y_pred).ravel()
    if len(y_true) != len(y_pred):
        raise ValueError(f"y_true and y_pred have different lengths ({len(y_true)} and "
                         f"{len(y_pred)})")
    if len(y_true) == 0:
        raise ValueError("average_utility needs at least one sample")
    labels = _utility_labels(y_true, y_pred, U, labels)
    order = np.argsort(labels)
    sorted_labels = labels[order]

    def positions(y, name):
        pos = np.clip(np.searchsorted(sorted_labels, y), 0, len(labels) - 1)
        bad = sorted_labels[pos] != y
        if np.any(bad):
            raise ValueError(f"{name} holds labels not among labels: {np.unique(y[bad])!r}")
        return order[pos]

    u = U[positions(y_true, "y_true"), positions(y_pred, "y_pred")]
    return float(np.average(u, weights=sample_weight))


def make_utility_scorer(utility, labels=None):
    """A scikit-learn scorer (greater is better) of :func:`average_utility`.

    Usable as ``scoring=`` in ``GridSearchCV``, ``cross_val_score`` and
    :class:`msvm.model_selection.TuningSetSearch`.

    Examples
    --------
    >>> from sklearn.model_selection import cross_val_score
    >>> from msvm import WeightedRobustMSVM
    >>> from msvm.datasets import make_utility_example, utility_matrix
    >>> from msvm.metrics import make_utility_scorer
    >>> X, y = make_utility_example(90, random_state=0)
    >>> U = utility_matrix(2, 0.4)
    >>> scores = cross_val_score(WeightedRobustMSVM(utility=U), X, y, cv=3,
    ...                          scoring=make_utility_scorer(U))
    >>> scores.shape
    (3,)
    """
    U = np.asarray(utility, dtype=np.float64)
    return make_scorer(average_utility, utility=U, labels=labels)
