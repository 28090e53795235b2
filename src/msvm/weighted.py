"""Generalized-functional-margin MSVMs: WeightedRobustMSVM (Liu, Wu and He 2011) and
AdaptiveWeightedSVM (Wu and Liu 2013), both on the grouped dual of
msvm._problem.margin_problem."""

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from ._base import BaseMSVM
from ._dc import (DC_PARAMETER_CONSTRAINTS, KeptDCObjective, TruncatedDegenerateCause,
                  chain_dual_problem, compiled_losses, compiled_shift, kept_penalty_and_seed,
                  lean_solve, lean_steps_apply, truncated_fit, weighed_samples)
from ._docs import fill_doc
from ._fit_state import set_init_params
from ._losses import margin_hinge_loss, margins, utility_margin_loss
from ._probability import PROBABILITY_PARAMETER_CONSTRAINTS, ProbabilityMixin
from ._problem import alpha_by_slots, margin_problem
from ._progress import n_epochs
from ._sequence import CONVERGED, SequenceFit, clipped_start, warn_unsettled_weights


# AdaptiveWeightedSVM's reweighted solves as lean solves (``_reweighted_solve``): on a
# probability chain's refit the reweighted dual is the chain's kept dual at the new weights
# (``msvm._dc.chain_dual_problem``: a copy with the bounds scaled, so the scores move by the
# compiled pass), the start clipped to it with the over-full groups moved at once
# (``msvm._sequence.clipped_start``), the solve ``msvm._dc.lean_solve`` where
# ``lean_steps_apply``; and every fit's objective formed for the log only where it prints.
# The same values, so the same fits bit for bit; False: main ff4354d's refits (tests and the
# benchmark's "before", benchmarks/results/probability.md section 9m).
LEAN_REWEIGHT = True

# WeightedRobustMSVM's linearization (``_dc_shift``) from each sample's two largest
# decision values (:func:`_group_margins_truncated`) instead of every margin
# (``msvm._losses.margins``) and a copy of G per variable: the same masks in two thirds of
# the time (75 -> 50 us a call on example 4.1.1, n = 400, k = 3); a probability fit there
# forms some 270 (its chain refits' starts and their loops' tests).
# False: main ebff6f7's (tests and the benchmark's "before").
SAMPLE_MARGINS_SHIFT = True

# AdaptiveWeightedSVM's probability chains: the levels whose adaptive weights have stopped
# moving skip their solve at v = 1 (round 18, benchmarks/results/probability.md section
# 9q).  Once the one-step weights v of ``FROZEN_WEIGHTS_MOVES`` successive levels of a
# chain each differ from those of the level above by less than ``FROZEN_WEIGHTS_BELOW`` on
# average (the mean of |v - v_above| over the samples; v is in (0, 1]), the levels below
# take the last of them and each is the one reweighted solve, from the solution of the
# level above clipped to its caps (``_frozen_weights_fit``): on Liu and Yuan's examples
# 4.1.1 and 4.1.2 about a third fewer compiled solves.  A chain's own state
# (``_chain_weights``), only on a one-step probability chain's refits (those with the
# chain's ``_kept_dual``).  None: main c94be25's refits, every level solved at v = 1 first
# (tests and the benchmark's "before").
FROZEN_WEIGHTS_BELOW = 0.15
FROZEN_WEIGHTS_MOVES = 2


def cost_to_utility(cost):
    """Utility matrix U = max(C) 1 1^T - C of a misclassification cost matrix (Liu, Wu and He
    2011, section 3.3)."""
    cost = np.asarray(cost, dtype=np.float64)
    return cost.max() * np.ones_like(cost) - cost


def _check_matrix(M, k, name):
    M = np.asarray(M, dtype=np.float64)
    if M.shape != (k, k):
        raise ValueError(f"{name} must be a k x k matrix with k = {k} classes; got shape "
                         f"{M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} contains NaN or infinity")
    if np.any(M < 0):
        raise ValueError(f"{name} must be nonnegative")
    return M


def resolve_utility(utility, cost, k):
    """The k x k utility matrix from ``utility`` or ``cost`` (identity when both are None)."""
    if utility is not None and cost is not None:
        raise ValueError("give either utility or cost, not both")
    if cost is not None:
        cost = _check_matrix(cost, k, "cost")
        if np.any(np.diag(cost) != 0):
            raise ValueError("cost must have a zero diagonal (no cost for a correct prediction)")
        if not np.any(cost > 0):
            raise ValueError("cost is zero everywhere: every prediction would be free")
        return cost_to_utility(cost)
    if utility is None:
        return np.eye(k)
    U = _check_matrix(utility, k, "utility")
    if not np.all(U.max(axis=1) > 0):
        raise ValueError("utility has a row of zeros: a class whose samples would carry no loss")
    return U


def _auto_truncation(value, k):
    if value is None:
        return None
    if isinstance(value, str):          # 'auto'
        return -1.0 / (k - 1)
    return float(value)


def _group_margins_truncated(G, rows, own, s):
    """(beta, jstar) of the groups (sample ``rows``, class ``own``): whether the group's
    generalized margin f_j - max_{j' != j} f_j' is below ``s``, and the first j' != j
    attaining that max (``np.argmax`` of the row with j removed), from each sample's first
    and second largest decision value (``SAMPLE_MARGINS_SHIFT``).  The same values as
    ``margins`` and the argmax over each group's row: the max over j' != j is f at the
    sample's first argmax ``top`` where j is not ``top``, else the largest of the rest,
    whose first argmax is ``runner``."""
    samples = np.arange(len(G))
    top = np.argmax(G, axis=1)
    rest = np.array(G, dtype=np.float64)
    rest[samples, top] = -np.inf
    runner = np.argmax(rest, axis=1)
    at_top = own == top[rows]
    best_other = np.where(at_top, rest[samples, runner][rows], G[samples, top][rows])
    beta = G[rows, own] - best_other < s
    return beta, np.where(at_top, runner[rows], top[rows])


_TRUNCATION = [StrOptions({"auto"}), Interval(numbers.Real, None, 0, closed="right"), None]


@fill_doc
class WeightedRobustMSVM(ProbabilityMixin, KeptDCObjective, TruncatedDegenerateCause,
                         BaseMSVM):
    r"""Utility-based weighted multicategory robust SVM (Liu, Wu and He).

    Solves, with f_j = b_j + h_j, unpenalized intercepts and the generalized functional
    margin :math:`g_j(f) = \min_{j' \ne j} (f_j - f_{j'})`,

    .. math::

        \min_{f}\ \frac12 \sum_{j=1}^k \|h_j\|^2
            + C \sum_{i=1}^n w_i \sum_{j=1}^k U_{y_i j}\, T_s(g_j(f(x_i)))
        \quad\text{s.t.}\quad \sum_{j=1}^k f_j(x) = 0,
        \qquad T_s(u) = [1 - u]_+ - [s - u]_+,

    with U the utility matrix (row = true class, column = predicted class) and
    ``s = truncation <= 0``.  Prediction is :math:`\arg\max_j f_j(x)`; the utility only shapes
    training.  With ``truncation=None`` the loss is the convex weighted MSVM of the paper's
    eq. (7) (one solve); with U = identity it is the Crammer-Singer-type MSVM of Liu and Shen.
    Otherwise the DC algorithm of the paper's section 4 runs: its dual has variables
    alpha_{ijj'} with group caps sum_{j'} alpha_{ijj'} <= C w_i U_{y_i j}; each step shifts one
    variable of every truncated group.  The paper writes
    :math:`\lambda \cdot \text{penalty} + \frac1n \sum_i \text{loss}_i`; the two agree with
    ``C = 1 / (n * lambda)``.

    Parameters
    ----------
    {c_gap_one}
    utility : array-like of shape (k, k), default=None
        Nonnegative utility matrix U in the order of ``classes_``; None means the identity.
    cost : array-like of shape (k, k), default=None
        Misclassification costs (nonnegative, zero diagonal), converted by
        ``U = max(cost) 1 1^T - cost`` (Liu, Wu and He 2011 section 3.3).  Give utility or
        cost, not both.
    truncation : 'auto', float <= 0 or None, default='auto'
        The truncation point s: 'auto' is -1/(k-1) (the paper's recommendation), 0 gives
        psi-learning, None no truncation.
    {kernel_parameters}
    {dc_parameters}
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    {function_attributes}
    utility_ : ndarray of shape (k, k)
        The utility matrix used.
    truncation_ : float or None
        The truncation point used.
    alpha_ : ndarray of shape (n_samples, k, k)
        Dual variables of the last convex step: ``alpha_[i, j, j']`` multiplies the hinge
        [1 + f_j'(x_i) - f_j(x_i)]_+ of group (i, j).
    {dc_attributes}
    {probability_attributes}
    {approximation_attributes}

    Notes
    -----
    {dc_notes}

    Here less truncation means a more negative ``truncation`` s (the bound 1 - s of the loss
    grows; ``None`` is the convex weighted MSVM).
    """

    # how a fit on Dask input runs (msvm._dask._chunked_kind): the DC steps of
    # msvm/_dask_dc.py, the group caps smoothed per group (msvm/_dask_groups.py)
    _dask_fit = "dc"
    # a probability chain's levels each from the previous level's last DC step
    # (msvm._dc.CHAIN_DC_START; section 9k of benchmarks/results/probability.md)
    _levels_from_last_step = True
    # a probability chain's DC start for its next level (msvm._dc.ChainDCStart), the
    # levels its estimator has fitted (msvm._dc.level_rules) and the inner solver of its
    # refits (msvm._dc.kept_inner_solver): transient
    _transient_state = (*BaseMSVM._transient_state, "_dc_chain_start", "_dc_levels",
                        "_dc_inner")

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        **DC_PARAMETER_CONSTRAINTS,
        "utility": ["array-like", None],
        "cost": ["array-like", None],
        "truncation": _TRUNCATION,
        **PROBABILITY_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, C="auto", utility=None, cost=None, truncation="auto", *, kernel="rbf",
                 degree=3, gamma="scale", coef0=0.0, tol=1e-3, max_iter=10000, cache_size=200,
                 cache_dtype="auto", shrinking=True, warm_start=False, random_state=None,
                 verbose=False, class_weight=None, dc_tol=1e-6, max_dc_iter=100,
                 probability=False, probability_grid=8, n_jobs=None,
                 kernel_approximation=None, n_components=1000, landmarks="uniform",
                 intercept_solver="exact", n_threads=1):
        set_init_params(self, locals())

    _less_truncation = "a more negative truncation (truncation=None: the convex MSVM)"

    def _truncation_value(self, k):
        return _auto_truncation(self.truncation, k)

    def _prepare_dual(self, k):
        """``utility_`` and ``truncation_`` for k classes (before the dual is built; the
        chunked fit calls it too, msvm/_dask.py)."""
        self.utility_ = resolve_utility(self.utility, self.cost, k)
        self.truncation_ = self._truncation_value(k)

    def _fit_dual(self, sequence, y, sw, log):
        self._prepare_dual(len(self.classes_))
        return truncated_fit(self, sequence, y, sw, log)

    def _dual_problem(self, y, k, weights):
        return margin_problem(y, k, weights, self.utility_)

    def _dc_shift(self, problem, G, y):
        s = self._truncation_value(problem.k)
        found = compiled_shift(problem, G, s, margin=True)
        if found is not None:
            return found
        rows = problem.sample_of_var()
        # the class j of the variable's group, and the class j' of its direction
        own, other = problem.expand("slot2"), problem.expand("slot1")
        if SAMPLE_MARGINS_SHIFT:
            # the group's margin is truncated; the j' attaining max_{j' != j} f_j'(x_i)
            beta, jstar = _group_margins_truncated(G, rows, own, s)
        else:
            M = margins(G)
            beta = M[rows, own] < s                 # the group's margin is truncated
            # the variable of group (i, j) whose j' attains max_{j' != j} f_j'(x_i)
            Gm = G[rows].copy()
            Gm[np.arange(len(rows)), own] = -np.inf
            jstar = np.argmax(Gm, axis=1)
        hit = beta & (other == jstar)
        shift = np.where(hit, problem.cap[problem.expand("group")], 0.0)
        truncated = np.bincount(rows[beta], minlength=len(y)) > 0
        return shift, truncated

    def _loss(self, G, y):
        s = self._truncation_value(G.shape[1])
        found = compiled_losses(G, y, s, self.utility_)
        return utility_margin_loss(G, y, self.utility_, s) if found is None else found

    def _alpha_matrix(self, alpha, problem):
        return alpha_by_slots(problem, alpha, pairs=True)


@fill_doc
class AdaptiveWeightedSVM(ProbabilityMixin, BaseMSVM):
    r"""Adaptively weighted large-margin classifier (Wu and Liu), any number of classes.

    A weighted MSVM in the generalized-functional-margin form, refitted with data-driven
    sample weights v_i multiplied into w_i:

    .. math::

        \min_{f}\ \frac12 \sum_{j=1}^k \|h_j\|^2
            + C \sum_{i=1}^n w_i v_i\, [1 - g_{y_i}(f(x_i))]_+
        \quad\text{s.t.}\quad \sum_{j=1}^k f_j(x) = 0,

    with :math:`g_j(f) = \min_{j' \ne j} (f_j - f_{j'})` and unpenalized intercepts (for
    k = 2 this is the binary weighted SVM of the slides, in the sum-to-zero form
    f = (f_1, -f_1)).

    * ``scheme='one-step'`` (OWSVM): fit with v = 1, take the margins u_i = g_{y_i}(f(x_i)) and
      refit once with ``v_i = 1 / (1 + |u_i|)``, the hinge loss's choice v(u) = 1 / l(u) for
      u <= 0 mirrored to u > 0.
    * ``scheme='iterative'`` (IWSVM): start from v = 1 and refit with v_i = 1 if s <= u_i,
      else 0, until the weights repeat.  Its fixed points are the DC solutions of the
      truncated hinge T_s (``WeightedRobustMSVM`` with the identity utility).  The slides
      also set v_i = 0 for u_i > 1; such a point carries no loss and no dual weight at a fixed
      point, so the fixed points are the same, but with weight 0 it may drift back across the
      margin unpenalized and the iteration can cycle; here it keeps weight 1.

    Each refit is warm-started from the previous dual solution.  The objective above, with
    the final weights, is ``objective_``.  The slides write
    :math:`\lambda \cdot \text{penalty} + \frac1n \sum_i \text{loss}_i`; the two agree with
    ``C = 1 / (n * lambda)``.

    Parameters
    ----------
    {c_gap_one}
    scheme : {'one-step', 'iterative'}, default='one-step'
        The weighting scheme.
    truncation : 'auto' or float <= 0, default='auto'
        The truncation point s of the iterative scheme ('auto' is -1/(k-1)).
    max_reweight : int, default=100
        Maximum number of refits of the iterative scheme; reaching it raises a
        ``ConvergenceWarning``.
    {kernel_parameters}
    {probability_parameters}
    {approximation_parameters}

    Attributes
    ----------
    {function_attributes}
    adaptive_weights_ : ndarray of shape (n_samples,)
        The weights v of the final fit.
    alpha_ : ndarray of shape (n_samples, k, k)
        Dual variables of the final fit (see ``WeightedRobustMSVM.alpha_``).
    n_iter_ : int
        Number of fits (2 for the one-step scheme).
    n_solver_iter_ : int
        Solver epochs summed over the fits.
    {probability_attributes}
    {approximation_attributes}
    """

    # how a fit on Dask input runs (msvm._dask._chunked_kind): the refits of
    # msvm/_dask_reweight.py
    _dask_fit = "reweight"

    _parameter_constraints = {
        **BaseMSVM._parameter_constraints,
        "scheme": [StrOptions({"one-step", "iterative"})],
        "truncation": _TRUNCATION[:2],
        "max_reweight": [Interval(numbers.Integral, 1, None, closed="left")],
        **PROBABILITY_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, C="auto", scheme="one-step", truncation="auto", max_reweight=100, *,
                 kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, max_iter=10000,
                 cache_size=200, cache_dtype="auto", shrinking=True, warm_start=False,
                 random_state=None, verbose=False, class_weight=None,
                 probability=False, probability_grid=8, n_jobs=None,
                 kernel_approximation=None, n_components=1000, landmarks="uniform",
                 intercept_solver="exact", n_threads=1):
        set_init_params(self, locals())

    def _dual_problem(self, y, k, weights):
        return margin_problem(y, k, weights, np.eye(k))

    def next_weights(self, G, y):
        """The weights v the scheme assigns to decision values G (n, k) of the training set."""
        k = G.shape[1]
        u = margins(G)[np.arange(len(y)), y]
        if self.scheme == "one-step":
            return 1.0 / (1.0 + np.abs(u))
        s = _auto_truncation(self.truncation, k)
        return (u >= s).astype(np.float64)

    def _fit_dual(self, sequence, y, sw, log):
        """The reweighting loop: refits warm-started from the previous weights' solution;
        on a probability chain's level whose weights are frozen (``FROZEN_WEIGHTS_BELOW``),
        the reweighted solve alone (:meth:`_frozen_weights_fit`)."""
        frozen = self._frozen_weights()
        if frozen is not None:
            return self._frozen_weights_fit(sequence, y, sw, frozen, log)
        k = len(self.classes_)
        v = np.ones(len(y))
        problem = chain_dual_problem(self, y, k, self.C_ * sw)
        kept_penalty_and_seed(self, sequence, problem)      # a probability chain's refit
        first = sol = self._start(sequence, problem)
        weighed = weighed_samples(sol.problem, sol.alpha)      # msvm._probability._settled
        fits, epochs = 1, sol.n_iter
        self._log_fit(log, "fit 1 (v = 1)", sol, y, sw)
        reason = CONVERGED
        while True:
            v_new = self.next_weights(sol.G, y)
            if self.scheme == "iterative" and np.array_equal(v_new, v):
                break
            if fits - 1 >= self.max_reweight:
                reason = "max_reweight"
                break
            v = v_new
            previous = sol
            sol, start = self._reweighted_solve(sequence, y, k, self.C_ * sw * v, sol)
            # the samples the clip to the new caps moved: the start depends on their weights
            weighed |= sol.problem.samples_with(start != previous.alpha)
            weighed |= weighed_samples(sol.problem, sol.alpha)
            fits += 1
            epochs += sol.n_iter
            dropped = (f", {int(np.sum(v == 0))} of {len(v)} samples at weight 0"
                       if self.scheme == "iterative" else "")
            self._log_fit(log, f"reweighting {fits - 1}", sol, y, sw * v, dropped)
            if self.scheme == "one-step":
                break
        warn_unsettled_weights(reason, self.max_reweight)
        if self._weights_settle(v):
            first = sol     # the levels below start from this level's reweighted solution
        return SequenceFit(sol, sw * v, sequence.stop_reason(reason), start=first, attributes={
            "adaptive_weights_": v, "n_iter_": fits, "n_solver_iter_": epochs,
            "_weight_bound_samples_": weighed})

    def _weights_settle(self, v):
        """Record the weights ``v`` of a one-step probability chain's level (with
        ``FROZEN_WEIGHTS_BELOW``; elsewhere nothing) and whether the levels below take
        them: the weights of the last ``FROZEN_WEIGHTS_MOVES`` levels (this one included)
        each moved from those of the level above by less than ``FROZEN_WEIGHTS_BELOW`` on
        average."""
        if (FROZEN_WEIGHTS_BELOW is None or self.scheme != "one-step"
                or getattr(self, "_kept_dual", None) is None):
            return False
        above = getattr(self, "_chain_weights", None)
        small = (above is not None
                 and float(np.mean(np.abs(v - above[0]))) < FROZEN_WEIGHTS_BELOW)
        self._chain_weights = (v, above[1] + 1 if small else 0)
        return self._chain_weights[1] >= FROZEN_WEIGHTS_MOVES

    def _frozen_weights(self):
        """The weights v this chain level takes from the level above (None: its own)."""
        if FROZEN_WEIGHTS_BELOW is None:
            return None
        chain = getattr(self, "_chain_weights", None)
        return chain[0] if chain is not None and chain[1] >= FROZEN_WEIGHTS_MOVES else None

    def _frozen_weights_fit(self, sequence, y, sw, v, log):
        """A chain level at the frozen weights ``v``: the dual at the weights C sw v solved
        from the previous level's solution (this estimator's warm start) clipped to its
        caps, with the settled marks of both (the samples the clip moved, those at a
        moving bound of the solution: ``msvm._probability._path_settled``)."""
        k = len(self.classes_)
        state = self._warm_start_state()
        problem = chain_dual_problem(self, y, k, self.C_ * sw * v)
        kept_penalty_and_seed(self, sequence, problem)
        start = clipped_start(problem, state.alpha)
        if lean_steps_apply(sequence):
            sol = lean_solve(sequence, problem, start, state.mu, sequence.tol, 0.0)[0]
        else:
            sol = sequence.solve(problem, start, state.mu)
        weighed = problem.samples_with(start != state.alpha) | weighed_samples(problem, sol.alpha)
        self._log_fit(log, "reweighting (v of the level above)", sol, y, sw * v)
        return SequenceFit(sol, sw * v, sequence.stop_reason(), start=sol, attributes={
            "adaptive_weights_": v, "n_iter_": 1, "n_solver_iter_": sol.n_iter,
            "_weight_bound_samples_": weighed})

    def _reweighted_solve(self, sequence, y, k, weights, sol):
        """(solution, start): the dual at the weights ``weights`` (C sw v) solved from the
        previous solution ``sol`` clipped to its bounds; lean where ``LEAN_REWEIGHT`` (the
        module's comment)."""
        if not LEAN_REWEIGHT:
            problem = self._dual_problem(y, k, weights)
            start = problem.clip_feasible(sol.alpha)
            return sequence.solve(problem, start, sol.mu), start
        problem = chain_dual_problem(self, y, k, weights)
        start = clipped_start(problem, sol.alpha)
        if not lean_steps_apply(sequence):
            return sequence.solve(problem, start, sol.mu), start
        return lean_solve(sequence, problem, start, sol.mu, sequence.tol, 0.0)[0], start

    def _log_fit(self, log, name, sol, y, sw, detail=""):
        """Report one fit of the loop to ``log``; its objective formed only where the line
        prints (``LEAN_REWEIGHT``)."""
        if LEAN_REWEIGHT and log.level < 1:
            return
        log.step(name, self._objective(sol, y, sw), sol.resid, n_epochs(sol.n_iter) + detail)

    def _degenerate_cause(self):
        dropped = int(np.sum(self.adaptive_weights_ == 0))
        if self.scheme != "iterative" or dropped == 0:
            return super()._degenerate_cause()
        return (f"the iterative weights dropped {dropped} of {len(self.adaptive_weights_)} "
                f"training samples (margin below the truncation s): at this C the truncated "
                f"hinge's fixed point prefers the constant function",
                "use a larger C or a more negative truncation, e.g. C tuned with "
                "msvm.model_selection.TuningSetSearch")

    def _loss(self, G, y):
        return margin_hinge_loss(G, y)

    def _alpha_matrix(self, alpha, problem):
        return alpha_by_slots(problem, alpha, pairs=True)
