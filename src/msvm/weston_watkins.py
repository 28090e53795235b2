"""WestonWatkinsMSVM: the comparator of Liu and Yuan's (2011) tables."""

from ._base import BaseMSVM
from ._docs import fill_doc
from ._fit_state import set_init_params
from ._losses import pairwise_hinge_loss
from ._probability import PROBABILITY_PARAMETER_CONSTRAINTS, ProbabilityMixin
from ._problem import alpha_by_slots, pairwise_hinge_problem


@fill_doc
class WestonWatkinsMSVM(ProbabilityMixin, BaseMSVM):
    r"""Weston-Watkins multicategory SVM with sum-to-zero functions.

    Solves, with f_j = b_j + h_j and unpenalized intercepts b,

    .. math::

        \min_{f}\ \frac12 \sum_{j=1}^k \|h_j\|^2
            + C \sum_{i=1}^n w_i \sum_{j \ne y_i} [1 - (f_{y_i}(x_i) - f_j(x_i))]_+
        \quad\text{s.t.}\quad \sum_{j=1}^k f_j(x) = 0.

    The loss depends on differences of the f_j only, so the sum-to-zero constraint just fixes
    the common level.  Its dual has one variable per (i, j != y_i) in [0, C w_i].  The papers
    write :math:`\lambda \cdot \text{penalty} + \frac1n \sum_i \text{loss}_i`; the two agree
    with ``C = 1 / (n * lambda)``.

    Parameters
    ----------
    C : float or 'auto', default='auto'
        Weight of the loss (``C = 1 / (n lambda)`` in the papers' scaling); a number is used
        as given.  ``'auto'`` means ``C = 1`` for every k, resolved at fit into ``C_``: this
        loss asks for a gap of 1 between the classes' functions, and a sample whose
        variables sit at their bounds moves it by at least C K(x, x_i), so C = 1 already
        asks of each unit of kernel weight no more than ``SVC(C=1)`` does.  (The
        per-class-hinge models use C = k or k - 1.)
    {kernel_parameters}
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    {function_attributes}
    alpha_ : ndarray of shape (n_samples, k)
        Dual variables: ``alpha_[i, j]`` (j != y_i) multiplies the hinge
        [1 - (f_{y_i}(x_i) - f_j(x_i))]_+; zero for ``j == y_i``.
    n_iter_ : int
        Number of solver epochs (0 when the linear path's smoothed-primal start already met
        the stopping rule).
    {probability_attributes}
    {approximation_attributes}
    """

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        **PROBABILITY_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, C="auto", *, kernel="rbf", degree=3, gamma="scale",
                 coef0=0.0, tol=1e-3, max_iter=10000, cache_size=200, cache_dtype="auto",
                 shrinking=True, warm_start=False, random_state=None, verbose=False,
                 class_weight=None, probability=False, probability_grid=8, n_jobs=None,
                 kernel_approximation=None, n_components=1000, landmarks="uniform",
                 intercept_solver="exact", n_threads=1):
        set_init_params(self, locals())

    def _dual_problem(self, y, k, weights):
        return pairwise_hinge_problem(y, k, weights)

    def _loss(self, G, y):
        return pairwise_hinge_loss(G, y)

    def _alpha_matrix(self, alpha, problem):
        return alpha_by_slots(problem, alpha)
