"""RobustMSVM: the truncated-hinge-loss multicategory SVM of Wu and Liu (2007)."""

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseMSVM
from ._dc import (DC_PARAMETER_CONSTRAINTS, KeptDCObjective, TruncatedDegenerateCause,
                  compiled_losses, compiled_shift, truncated_fit)
from ._docs import fill_doc
from ._fit_state import set_init_params
from ._losses import truncated_hinge_loss
from ._probability import PROBABILITY_PARAMETER_CONSTRAINTS, ProbabilityMixin
from ._problem import alpha_by_slots, per_class_hinge_problem, select_variables


@fill_doc
class RobustMSVM(ProbabilityMixin, KeptDCObjective, TruncatedDegenerateCause, BaseMSVM):
    r"""Robust (truncated-hinge-loss) multicategory SVM (Wu and Liu).

    Solves, with f_j = b_j + h_j, h_j in the RKHS of the kernel and unpenalized intercepts b,

    .. math::

        \min_{f}\ \frac12 \sum_{j=1}^k \|h_j\|^2
            + C \sum_{i=1}^n w_i \sum_{j \ne y_i} T_s(f_j(x_i))
        \quad\text{s.t.}\quad \sum_{j=1}^k f_j(x) = 0,
        \qquad T_s(u) = [1 + u]_+ - [u - s]_+,

    the Lee, Lin and Wahba (2004) loss truncated at ``s = truncation`` (bounded by 1 + s), so
    that points far on the wrong side stop pulling the boundary.  The problem is nonconvex; the
    DC algorithm of the paper (section 3) starts from the untruncated solution and solves a
    sequence of convex problems (the LLW dual with boxes shifted by the indicators
    beta_ij = [f_j(x_i) > s]), each warm-started from the previous one.  It returns a local
    minimum.  The paper writes :math:`\lambda \cdot \text{penalty} + \frac1n \sum_i
    \text{loss}_i`; the two agree with ``C = 1 / (n * lambda)``.

    Parameters
    ----------
    {c_sum_to_zero}
    truncation : float >= 0, 'auto' or None, default='auto'
        The truncation point s.  ``'auto'`` means ``s = (k - 1) / 2``, half the coding's
        target k - 1 of the own class: the T_1 loss of the paper's experiments (k = 3) at
        k = 3, at the same place relative to the coding for every k (a fixed s = 1 truncates
        correctly classified points of a ten-class problem: 7 % of pendigits' training
        samples at C = 10).  None gives the untruncated Lee-Lin-Wahba MSVM (one convex
        solve).
    {kernel_parameters}
    {dc_parameters}
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    {function_attributes}
    alpha_ : ndarray of shape (n_samples, k)
        Dual variables of the last convex step: ``alpha_[i, j]`` (j != y_i) multiplies the
        hinge [1 + f_j(x_i)]_+, in ``[-C w_i beta_ij, C w_i (1 - beta_ij)]``; zero for
        ``j == y_i``.  A truncated term has beta_ij = 1.
    {dc_attributes}
    {probability_attributes}
    {approximation_attributes}

    Notes
    -----
    {dc_notes}

    Here less truncation means a larger ``truncation`` s (the bound 1 + s of the loss grows;
    ``None`` is the convex Lee-Lin-Wahba MSVM).  On overlapping data with many classes a
    small C with a small s (T_1 at C = 1) can end at the constant classifier (for example
    on scikit-learn's ``make_classification(n_samples=2000, n_features=20,
    n_informative=10, n_classes=5)`` with the rbf kernel, or on its ten-class digits).

    Examples
    --------
    >>> import numpy as np
    >>> from msvm import RobustMSVM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(90, 2)) + np.repeat(np.eye(3, 2) * 3, 30, axis=0)
    >>> y = np.repeat([0, 1, 2], 30)
    >>> clf = RobustMSVM(C=1.0, kernel="linear").fit(X, y)
    >>> bool(np.all(np.diff(clf.dc_objectives_) <= 1e-9 * clf.dc_objectives_[0]))
    True
    """

    # how a fit on Dask input runs (msvm._dask._chunked_kind)
    _dask_fit = "dc"
    # a probability chain's levels each from an untruncated solve (msvm._dc.CHAIN_DC_START:
    # from the previous level's last step the mean absolute error of the probabilities on
    # Liu and Yuan's examples rose by 0.0020-0.0022, over issue 25's limit)
    _levels_from_last_step = False
    # a probability chain's DC start for its next level (msvm._dc.ChainDCStart), the
    # levels its estimator has fitted (msvm._dc.level_rules) and the inner solver of its
    # refits (msvm._dc.kept_inner_solver): transient
    _transient_state = (*BaseMSVM._transient_state, "_dc_chain_start", "_dc_levels",
                        "_dc_inner")

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        **DC_PARAMETER_CONSTRAINTS,
        "truncation": [Interval(numbers.Real, 0, None, closed="left"), StrOptions({"auto"}),
                       None],
        **PROBABILITY_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, C="auto", truncation="auto", *, kernel="rbf", degree=3, gamma="scale",
                 coef0=0.0, tol=1e-3, max_iter=10000, cache_size=200, cache_dtype="auto",
                 shrinking=True, warm_start=False, random_state=None, verbose=False,
                 class_weight=None, dc_tol=1e-6, max_dc_iter=100,
                 probability=False, probability_grid=8, n_jobs=None,
                 kernel_approximation=None, n_components=1000, landmarks="uniform",
                 intercept_solver="exact", n_threads=1):
        set_init_params(self, locals())

    _less_truncation = "a larger truncation (truncation=None: the untruncated MSVM)"

    def _auto_C(self, k):
        return float(k)

    def _truncation_value(self, k):
        if self.truncation == "auto":
            return (k - 1) / 2.0
        return None if self.truncation is None else float(self.truncation)

    def _fit_dual(self, sequence, y, sw, log):
        return truncated_fit(self, sequence, y, sw, log)

    def _dual_problem(self, y, k, weights):
        full = per_class_hinge_problem(
            y, k, lin_own=0.0, lin_other=1.0, coef_own=1.0, coef_other=1.0,
            hi_own=np.zeros(len(y)), hi_other=weights)
        own = np.zeros((len(y), k), dtype=bool)
        own[np.arange(len(y)), y] = True
        return select_variables(full, ~own.ravel())

    def _dc_shift(self, problem, G, y):
        s = self._truncation_value(problem.k)
        found = compiled_shift(problem, G, s, margin=False)
        if found is not None:
            return found
        rows = problem.sample_of_var()
        beta = G[rows, problem.expand("slot1")] > s
        truncated = np.bincount(rows[beta], minlength=len(y)) > 0
        return problem.expand("hi") * beta, truncated

    def _loss(self, G, y):
        s = self._truncation_value(G.shape[1])
        found = compiled_losses(G, y, s)
        return truncated_hinge_loss(G, y, s) if found is None else found

    def _alpha_matrix(self, alpha, problem):
        return alpha_by_slots(problem, alpha)
