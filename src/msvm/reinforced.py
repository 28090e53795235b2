"""ReinforcedMSVM: the reinforced multicategory SVM of Liu and Yuan (2011), Liu and Yuan (2011)."""

import numbers

from sklearn.utils._param_validation import Interval

from ._base import BaseMSVM
from ._docs import fill_doc
from ._fit_state import set_init_params
from ._losses import reinforced_loss
from ._probability import PROBABILITY_PARAMETER_CONSTRAINTS, ProbabilityMixin
from ._problem import reinforced_problem


@fill_doc
class ReinforcedMSVM(ProbabilityMixin, BaseMSVM):
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
    {c_sum_to_zero}
    reinforcement : float in [0, 1], default=0.5
        The loss mixing weight gamma. 0 gives the Lee, Lin and Wahba (2004) MSVM.
    {kernel_parameters}
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    {function_attributes}
    alpha_ : ndarray of shape (n_samples, k)
        Dual variables: ``alpha_[i, j]`` multiplies sample i's hinge term in slot j
        (the reinforced term when ``j == y_i``), in ``[0, C w_i gamma]`` resp.
        ``[0, C w_i (1 - gamma)]``.
    n_iter_ : int
        Number of solver epochs (0 when the linear path's smoothed-primal start already met
        the stopping rule).
    {probability_attributes}
    {approximation_attributes}

    Examples
    --------
    >>> from msvm import ReinforcedMSVM
    >>> from msvm.datasets import make_reinforced_example
    >>> X, y = make_reinforced_example(n_samples=150, random_state=0)
    >>> clf = ReinforcedMSVM(C=1.0, reinforcement=0.5).fit(X, y)
    >>> bool(abs(clf.decision_function(X[:2]).sum(axis=1)).max() < 1e-12)
    True
    """

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        "reinforcement": [Interval(numbers.Real, 0, 1, closed="both")],
        **PROBABILITY_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, C="auto", reinforcement=0.5, *, kernel="rbf", degree=3, gamma="scale",
                 coef0=0.0, tol=1e-3, max_iter=10000, cache_size=200, cache_dtype="auto",
                 shrinking=True, warm_start=False, random_state=None, verbose=False,
                 class_weight=None, probability=False, probability_grid=8, n_jobs=None,
                 kernel_approximation=None, n_components=1000, landmarks="uniform",
                 intercept_solver="exact", n_threads=1):
        set_init_params(self, locals())

    def _auto_C(self, k):
        return float(k)

    def _dual_problem(self, y, k, weights):
        return reinforced_problem(y, k, weights, float(self.reinforcement))

    def _loss(self, G, y):
        return reinforced_loss(G, y, float(self.reinforcement))
