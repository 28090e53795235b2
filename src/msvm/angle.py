"""AngleBasedMSVM: the reinforced angle-based multicategory SVM (the base model of Kang, Lin and
Zhang (2019))."""

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval

from ._base import BaseMSVM
from ._docs import fill_doc
from ._fit_state import set_init_params
from ._losses import reinforced_loss
from ._probability import PROBABILITY_PARAMETER_CONSTRAINTS, ProbabilityMixin
from ._problem import reinforced_problem


def simplex_vertices(k):
    """The k vertices W_1..W_k (columns, shape (k-1, k)) of the regular simplex in R^{k-1}.

    W_1 = (k-1)^{-1/2} 1 and W_j = -(1 + sqrt(k)) / (k-1)^{3/2} 1 + sqrt(k/(k-1)) e_{j-1}
    (Kang, Lin and Zhang 2019 section 1.1): unit vectors at equal angles, summing to zero.
    """
    if k < 2:
        raise ValueError(f"the simplex needs k >= 2 vertices; got {k}")
    W = np.empty((k - 1, k))
    W[:, 0] = (k - 1) ** -0.5
    W[:, 1:] = -(1.0 + np.sqrt(k)) / (k - 1) ** 1.5
    W[np.arange(k - 1), np.arange(1, k)] += np.sqrt(k / (k - 1.0))
    return W


class AngleGeometry:
    """Mixin: classes are simplex vertices, k - 1 functions, decision values <f, W_j>.

    The loss sees f only through g_j = <f, W_j>, which sum to zero; with W W^T = k/(k-1) I the
    penalty sum_q ||h_q||^2 equals (k-1)/k sum_j ||h_gj||^2, so the dual is the sum-to-zero
    one with the slot metric kappa = k/(k-1), and f = (k-1)/k W g maps the solution back.
    """

    def _kappa(self, k):
        return k / (k - 1.0)

    def _auto_C(self, k):
        return k - 1.0

    def _output_map(self, k):
        return (k - 1.0) / k * simplex_vertices(k)

    def _decision_from_output(self, f):
        return f @ simplex_vertices(f.shape[1] + 1)


@fill_doc
class AngleBasedMSVM(ProbabilityMixin, AngleGeometry, BaseMSVM):
    r"""Reinforced angle-based multicategory SVM (Zhang and Liu; Kang, Lin and Zhang section 1.1).

    Classes are the vertices W_1..W_k of a regular simplex in R^{k-1} (unit vectors at equal
    angles, ``simplex_vertices``); the classifier has k - 1 functions
    f = (f_1..f_{k-1}), f_q = b_q + h_q, no sum-to-zero constraint, and predicts
    :math:`\arg\max_j \langle f(x), W_j\rangle`.  It solves

    .. math::

        \min_f\ \frac12 \sum_{q=1}^{k-1} \|h_q\|^2
            + C \sum_{i=1}^n w_i \Big( \gamma\,[(k-1) - \langle f(x_i), W_{y_i}\rangle]_+
            + (1-\gamma) \sum_{j \ne y_i} [1 + \langle f(x_i), W_j\rangle]_+ \Big)

    with unpenalized intercepts b and :math:`\gamma` = ``reinforcement``.  The paper writes
    :math:`\lambda \cdot \text{penalty} + \frac1n \sum_i \text{loss}_i`; the two agree with
    ``C = 1 / (n * lambda)``.

    Parameters
    ----------
    C : float or 'auto', default='auto'
        Weight of the loss (``C = 1 / (n lambda)`` in the paper's scaling); a number is used
        as given.  ``'auto'`` means ``C = k - 1``, resolved at fit into ``C_``
        (``objective_`` is the objective at ``C_``).  Why k - 1: the angle coding asks for
        the gap <f, W_y> - <f, W_j> = k (<f, W_y> = k - 1, <f, W_j> = -1), and a sample
        whose variables sit at their bounds moves it by C K(x, x_i) k / (k - 1), so C = k - 1
        asks of each unit of kernel weight what ``SVC(C=1)`` asks; for k = 2 the fit is
        exactly ``SVC(C=1)``'s.  See the guide's section on the defaults.
    reinforcement : float in [0, 1], default=0.5
        The loss mixing weight gamma (Fisher consistent for gamma <= 1/2).
    {kernel_parameters}
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    {function_attributes}
    alpha_ : ndarray of shape (n_samples, k)
        Dual variables: ``alpha_[i, j]`` multiplies sample i's hinge term of class j.
    n_iter_ : int
        Number of solver epochs (0 when the linear path's smoothed-primal start already met
        the stopping rule).
    {probability_attributes}
    {approximation_attributes}

    Notes
    -----
    Here ``coef_`` has shape (k - 1, n_features), ``intercept_`` shape (k - 1,) and
    ``dual_coef_`` shape (k - 1, n_SV): they describe f.  ``decision_values`` returns the
    n x k matrix of <f(x), W_j>.
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

    def _dual_problem(self, y, k, weights):
        return reinforced_problem(y, k, weights, float(self.reinforcement), kappa=self._kappa(k))

    def _loss(self, G, y):
        return reinforced_loss(G, y, float(self.reinforcement))
