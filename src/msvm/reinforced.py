"""ReinforcedMSVM: the reinforced multicategory SVM of Liu and Yuan (2011), seed 002."""

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval

from ._base import BaseMSVM
from ._problem import per_class_hinge_problem


class ReinforcedMSVM(BaseMSVM):
    r"""Reinforced multicategory SVM (Liu and Yuan 2011); the Lee-Lin-Wahba MSVM at gamma = 0.

    Solves, with f_j = b_j + h_j, h_j in the RKHS of the kernel and unpenalized intercepts b,

    .. math::

        \min_{f}\ \frac12 \sum_{j=1}^k \|h_j\|^2
            + C \sum_{i=1}^n w_i \Big( \gamma\,[(k-1) - f_{y_i}(x_i)]_+
            + (1-\gamma) \sum_{j \ne y_i} [1 + f_j(x_i)]_+ \Big)
        \quad\text{s.t.}\quad \sum_{j=1}^k f_j(x) = 0,

    where :math:`\gamma` is ``reinforcement``.  The paper writes
    :math:`\lambda \cdot \text{penalty} + \frac1n \sum_i \text{loss}_i`; the two agree with
    ``C = 1 / (n * lambda)``.  The loss is Fisher consistent iff ``reinforcement <= 1/2``
    (Theorems 1 and 2 of the paper); larger values are allowed.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the loss (``C = 1 / (n lambda)`` in the paper's scaling).
    reinforcement : float in [0, 1], default=0.5
        The loss mixing weight gamma. 0 gives the Lee, Lin and Wahba (2004) MSVM.
    kernel : {'linear', 'poly', 'rbf', 'precomputed'} or callable, default='rbf'
        Kernel. A callable ``kernel(A, B)`` returns the Gram matrix between the rows of A and B.
    degree : int, default=3
        Degree of the 'poly' kernel ``(gamma <x, x'> + coef0) ** degree``.
    gamma : {'scale', 'auto', 'median'} or float, default='scale'
        Kernel coefficient of 'rbf' (``exp(-gamma ||x - x'||^2)``) and 'poly'. 'scale' is
        ``1 / (n_features * X.var())``, 'auto' is ``1 / n_features``, 'median' is
        ``1 / (2 sigma^2)`` with sigma the median between-class pairwise distance (the papers'
        heuristic).  The resolved value is ``gamma_``.
    coef0 : float, default=0.0
        Independent term of the 'poly' kernel.
    tol : float, default=1e-3
        Stop when the scaled KKT residual of the dual (see ``kkt_residual_``) is below tol.
    max_iter : int, default=10000
        Maximum number of solver epochs; reaching it raises a ``ConvergenceWarning``.
    cache_size : float, default=200
        Kernel row cache size in MB: fitting never holds more kernel rows than this.
    shrinking : bool, default=True
        Whether to shrink samples whose dual variables sit firmly at their bounds.  Used by
        the coordinate-descent path (the linear kernel with more than 2000 samples); the
        kernel SMO path always works on a working set of the most violating samples (at
        most 256, never more than the row cache holds), which has the same effect.
    warm_start : bool, default=False
        Start the next ``fit`` from the previous dual solution.
    random_state : int, RandomState instance or None, default=None
        Seed of the coordinate order of the coordinate-descent path (the kernel SMO path is
        deterministic).
    verbose : bool, default=False
        Print the solver's progress.

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
        Class labels; slot j of every matrix below is ``classes_[j]``.
    n_features_in_ : int
        Number of input features (training samples for 'precomputed').
    coef_ : ndarray of shape (k, n_features)
        ``h_j(x) = <coef_[j], x>`` (linear kernel only).
    intercept_ : ndarray of shape (k,)
        The intercepts b (they sum to zero).
    dual_coef_ : ndarray of shape (k, n_SV)
        ``h_j(x) = sum_s dual_coef_[j, s] K(x, support_vectors_[s])``.
    support_ : ndarray of shape (n_SV,)
        Indices of training samples with a nonzero dual variable.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        Those samples (absent for 'precomputed').
    n_support_ : ndarray of shape (k,)
        Number of support samples of each class.
    alpha_ : ndarray of shape (n_samples, k)
        Dual variables: ``alpha_[i, j]`` multiplies sample i's hinge term in slot j
        (the reinforced term when ``j == y_i``), in ``[0, C w_i gamma]`` resp.
        ``[0, C w_i (1 - gamma)]``.
    objective_ : float
        The objective above evaluated at the fitted function.
    kkt_residual_ : float
        Final scaled KKT residual: the largest projected-gradient violation of the dual (in
        margin units) or equality violation (relative to the largest box bound).
    n_iter_ : int
        Number of solver epochs.
    gamma_ : float or None
        Resolved kernel coefficient.

    Examples
    --------
    >>> from msvm import ReinforcedMSVM
    >>> from msvm.datasets import make_reinforced_example
    >>> X, y = make_reinforced_example(n_samples=150, random_state=0)
    >>> clf = ReinforcedMSVM(C=1.0, reinforcement=0.5).fit(X, y)
    >>> clf.decision_function(X[:2]).sum(axis=1).round(12)
    array([0., 0.])
    """

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        "reinforcement": [Interval(numbers.Real, 0, 1, closed="both")],
    }

    def __init__(self, C=1.0, reinforcement=0.5, *, kernel="rbf", degree=3, gamma="scale",
                 coef0=0.0, tol=1e-3, max_iter=10000, cache_size=200, shrinking=True,
                 warm_start=False, random_state=None, verbose=False):
        self.C = C
        self.reinforcement = reinforcement
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.shrinking = shrinking
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose

    def _dual_problem(self, y, k, weights):
        g = float(self.reinforcement)
        return per_class_hinge_problem(
            y, k, lin_own=k - 1.0, lin_other=1.0, coef_own=-1.0, coef_other=1.0,
            hi_own=weights * g, hi_other=weights * (1.0 - g))

    def _loss(self, G, y):
        n, k = G.shape
        g = float(self.reinforcement)
        own = np.zeros((n, k), dtype=bool)
        own[np.arange(n), y] = True
        reinforced = np.maximum((k - 1) - G[own], 0.0)
        others = np.where(own, 0.0, np.maximum(1.0 + G, 0.0)).sum(axis=1)
        return g * reinforced + (1.0 - g) * others
