"""A probability chain's weight levels as lean steps on one kept dual problem (issue 25).

The weighted fits of a class's chain (msvm/_probability.py) differ from one level to the next
only in the weights of that class's samples, and for a model fitted by one convex solve the
weights enter its dual only through the boxes (and group caps) of their samples' variables:
C w_i times a value of the variable's own.  A level is therefore one step on a state kept for
the chains of a group of classes (:class:`LevelState`): the dual problem built once, at each
level its bounds set in place to C w_i times the bounds at unit weight, the compiled solve
warm-started from the previous level's dual on the kept row source (its scores and kernel-row
cache), the exact intercepts of the solution, and of each level only what the bracketing, the
held-out scoring and ``predict_proba`` read: the support, its dual coefficients and samples,
the intercepts, the convergence (:meth:`LevelState.level_fit`).  The refit through the
estimator's model step (``BaseMSVM._refit``) built the dual, the plan and the sequence
again at every level, stored every fitted attribute (objective, duality gap, alpha_) and
copied the estimator: about 1 ms of Python a level on small data, against a compiled solve
of 0.1 to 0.35 ms (docs/probability.md, "Cost").

The iterates are those of the refits bit for bit: the same problem values (the bounds at
unit weight times the weights, each product the one the model's builder forms; checked
against the builder at the first levels of a state, :meth:`LevelState._verified`), the same
warm start, penalty rho, seed (drawn per level from the chain's ``random_state``), plan and
row source, so the same solves and the same intercepts.

Around the compiled solve a level's work is two compiled calls (msvm/_core/_level_loop.pyx,
:meth:`LevelState._compiled_solve`, ``COMPILED_LEVELS``): the rows whose slot sums moved
from the previous level's solution to this level's start (``moved_scores``), and of the
solution the exact intercepts, the coefficients V, the support and the settled test in one
pass (``level_tail``); the same values as the Python step, bit for bit.

Where it applies (:func:`applies`): a model whose fit is its one convex solve
(``BaseMSVM._fit_dual`` and ``_fit_model`` as they are), kernel rows computed in the core
(not the linear kernel or an approximate kernel's explicit features, not a Gram matrix
from outside: 'precomputed' or a callable kernel, whose snapshots differ), in-memory X.
Elsewhere the chains keep the refits of ``msvm._probability._weighted_chain``.
"""

import copy
import functools
import numbers

import numpy as np
from sklearn.utils import check_random_state

from ._dask import is_dask_collection
from ._plan import SolveStep
from ._products import times_small
from ._sequence import CONVERGED, SOLVER_STOP_REASONS, path_start
from ._snapshot import (_Solution, intercept_solver, level_solution, output_map, support_rows,
                        tail_intercepts)
from ._validation import class_weight_factors
from ._warm_start import KeptRows

# The chains of the models where it applies run as lean steps (False: the refits of main
# 10578f8, the same probabilities bit for bit: tests and the benchmark's "before").
LEAN_STEPS = True
# A lean step's work around its compiled solve (the scores moved to its start; the exact
# intercepts, coefficients, support and settled test of its solution) in one compiled call
# each (msvm/_core/_level_loop.pyx), where :meth:`LevelState._compiled_applies`; False: the
# Python of main 080c064 (the same probabilities bit for bit: tests and the benchmark's
# "before").
COMPILED_LEVELS = True
# The bounds set in place are compared with the model's own builder at this many first
# steps of a state; a difference makes the state build the problem at every level.
VERIFIED_STEPS = 2

_BOUNDS = ("box_lo", "box_hi", "cap")


def applies(template, X):
    """Whether the chains of ``template`` (a refit template) on X run as lean steps."""
    from ._base import BaseMSVM

    cls = type(template)
    return (LEAN_STEPS and cls._fit_dual is BaseMSVM._fit_dual
            and cls._fit_model is BaseMSVM._fit_model
            and not template._explicit_features() and not callable(template.kernel)
            and template.kernel != "precomputed" and not is_dask_collection(X))


class LevelState:
    """The kept state of the chains of one group of classes on one X: the validated
    inputs, the row source and its sequence, the dual problem and the working estimator.

    Parameters
    ----------
    template : estimator
        The refit template (validated parameters, ``warm_start=True``).
    X, y : training inputs and labels (as the refits would get them)
    sample_weight : ndarray of shape (n_samples,)
        The weights of the chains' start (checked here as a fit checks them; the level
        weights multiply them).
    checked : msvm._base.CheckedInput or None
        The validation of X and y of an earlier fit on them.
    """

    def __init__(self, template, X, y, sample_weight, checked=None):
        est = copy.copy(template)
        with est._checked_refits(X, y, checked):
            X, y_enc, _ = est._validate_fit_input(X, y, sample_weight)
            train, src_X, src_kind = est._training_rows(X, y_enc)
        self.est, self.X, self.y_enc = est, X, y_enc
        self.k = len(est.classes_)
        self.plan = est._solve_plan(src_kind, src_X.shape[0], None)
        self.src = est._new_row_source(src_X, src_kind, self.k, self.plan)
        self.src.set_threads(est._solver_threads())
        self.sequence = est._dual_sequence(train, self.src, self.plan)
        self.sequence._snapshot = functools.partial(level_solution, est, self.src)
        self.sequence.random_state = 0      # the seed is set at every step (``step``)
        self.T, self.identity = output_map(est, self.k)
        self.problem, self.unit, self.owner, self.steps = None, None, None, 0
        self.class_factors = (None if est.class_weight is None else
                              class_weight_factors(est.class_weight, est.classes_, y_enc))
        self.seeds = {}     # the seed of an integer random_state (the same at every level)
        self.prototype = self._prototype()
        # the settled test and the support of the last step's solution, where the compiled
        # level step made them (None: the caller's ``msvm._probability._settled``, the
        # problem's ``support_mask``)
        self.settled = self.support = None
        self._compiled = None   # whether the compiled level step applies (found once)
        self._inner, self._plans = None, {}     # the kept problem's solver, recorded plans

    def _prototype(self):
        """The unfitted part of every level's fit: the estimator with its input attributes
        (``classes_``, ``n_features_in_``, ...), ``C_`` and ``gamma_``."""
        proto = copy.copy(self.est)
        proto._leave_path()
        for name in ("_warm_state", "_plan_overrides", "_checked_input"):
            proto.__dict__.pop(name, None)
        return proto

    # ------------------------------------------------------------------ the problem
    def _weights(self, level_sw):
        """C times the weights of the fit with sample weights ``level_sw`` (the start's,
        checked by its fit, times positive level weights), times ``class_weight`` as a
        refit's input checks form them (``check_fit_weights``: the same products)."""
        if self.class_factors is None:
            return self.est.C_ * level_sw
        return self.est.C_ * (level_sw * self.class_factors)

    def _built(self, weights):
        """The model's own dual problem at the weights C w_i."""
        return self.est._dual_problem(self.y_enc, self.k, weights)

    def problem_at(self, weights):
        """The dual problem at the weights C w_i: the kept one with its bounds set in place,
        or (the first step, or where the bounds do not scale) the model's."""
        if self.problem is None:
            self._keep(self._built(weights), weights)
        elif self.unit is None:
            self.problem = self._built(weights)
        else:
            self._scale_bounds(weights)
            if self.steps < VERIFIED_STEPS:
                built = self._built(weights)
                if not _same_problem(self.problem, built):
                    self.unit, self.problem = None, built
        self.steps += 1
        return self.problem

    def _keep(self, problem, weights):
        """Keep ``problem`` (its bounds as arrays of its own) and its bounds at unit weight,
        if C w_i times them are the problem's bounds (else ``unit`` is None)."""
        for name in _BOUNDS:
            setattr(problem, name, np.array(getattr(problem, name)))
        self.problem = problem
        self.owner, self.unit = bound_scaling(problem, self._built(np.ones(len(self.y_enc))),
                                              weights)

    def _scale_bounds(self, weights):
        """The kept problem's bounds (per variable) and caps set to C w_i times their
        values at unit weight, in place; bounds stored per entry do not hold weights."""
        for name, owner in self.owner.items():
            if owner is not None and len(owner):
                values = getattr(self.problem, name)
                np.multiply(weights[owner], self.unit[name], out=values)
                _check_finite(values)

    # ------------------------------------------------------------------ a level
    def step(self, level_sw, start, random_state, is_label=None):
        """Solve the dual at the sample weights ``level_sw`` from ``start`` (a
        ``DualStart``: the previous level's, or the chains' start fit's), on the kept row
        source, as the refit ``BaseMSVM._fit_dual`` makes (its ``_start``); the level's
        solution (``msvm._snapshot.level_solution``).  The seed is drawn from
        ``random_state`` (the chain's), as every refit's new sequence drew it.  With
        ``is_label`` (boolean, the samples of the chain's class) and where it applies
        (:meth:`_compiled_applies`), the solve and its solution go through the compiled
        level step (:meth:`_compiled_solve`), which also sets ``settled``."""
        est, sequence = self.est, self.sequence
        problem = self.problem_at(self._weights(level_sw))
        if start is not None and start.fits(problem):
            # at the same C the start itself (``path_start``: a copy, which
            # ``clip_feasible`` makes)
            alpha0, mu0 = start.alpha, start.mu
            if est.C_ != start.C:
                alpha0 = path_start(problem, start.alpha, start.C, est.C_)
                if sequence.problem is not None:
                    sequence.scale(est.C_ / start.C)
        else:
            alpha0, mu0 = np.zeros(problem.n_vars), np.zeros(self.k)
        alpha0 = problem.clip_feasible(alpha0)
        if sequence.rho is None:
            sequence._fix_penalty_and_seed(problem)      # rho, fixed for the state
        sequence.plan, sequence.stop_reasons = self.plan, []
        sequence.seed = self._seed(random_state)
        self.settled = self.support = None
        if is_label is not None and self._compiled_applies():
            sol = self._compiled_solve(problem, alpha0, mu0 - mu0.mean(), is_label)
        else:
            sol = sequence.solve(problem, alpha0, mu0 - mu0.mean(), copy=False)
        est.converged_ = sequence.stop_reason() == CONVERGED
        if self.settled is not None:
            self.settled = self.settled and est.converged_
        est._row_state = KeptRows(None, self.src, problem, sol.alpha)     # ``_settled``
        return sol

    # ------------------------------------------------------------ the compiled level step
    def _compiled_applies(self):
        """Whether a level's solve is the plain one that :meth:`_compiled_solve` makes: kernel
        rows computed in the core (no explicit features, so no primal start and no
        'dual first' budget), whose scores cannot drift (``DualSequence._scores_can_drift``:
        no certification on fresh scores, no refresh at the end); with
        ``COMPILED_LEVELS``."""
        if self._compiled is None:
            self._compiled = self.sequence.on_core_rows_without_drift()
        return COMPILED_LEVELS and self._compiled

    def _compiled_solve(self, problem, alpha, mu, is_label):
        """``DualSequence.solve`` of a level where :meth:`_compiled_applies` (the same solver
        runs, finishing steps and record), with the scores moved to the start by
        ``DualSequence.move_to`` (its compiled ``moved_scores``) and the level's solution
        formed by ``level_tail`` (msvm/_core/_level_loop.pyx): the values of ``move_to`` and
        ``msvm._snapshot.level_solution``, bit for bit, and the settled test of the
        chain's class ``is_label`` (``settled``)."""
        sequence = self.sequence
        alpha = np.require(alpha, dtype=np.float64, requirements=["C", "W"])
        mu = np.array(mu, dtype=np.float64)
        sequence.move_to(problem, alpha)
        method, working_set = self._inner_solver(problem)
        alpha, mu, result, finished, late = sequence._solve_and_finish(
            problem, alpha, mu, sequence.tol, False, method, working_set)
        sequence.plan = self._recorded(method, working_set, finished, late)
        sequence.stop_reasons.append(SOLVER_STOP_REASONS[result.status])
        sol = self._level_solution(problem, alpha, mu, int(result.n_iter),
                                   float(result.residual), is_label)
        sequence._warn_if_stopped_early(result.status, result.residual, result.gap,
                                        sequence.tol, sol.gap)
        return sol

    def _inner_solver(self, problem):
        """``SolvePlan.inner_solver`` of the state's plan: found once for the kept problem
        (the solver's choice reads the row source and the directions, not the bounds)."""
        if problem is not self.problem or self.unit is None:
            return self.plan.inner_solver(self.src, problem)
        if self._inner is None:
            self._inner = self.plan.inner_solver(self.src, problem)
        return self._inner

    def _recorded(self, method, working_set, finished, late):
        """The state's plan with a level's solve recorded (``SolvePlan.record``): one
        frozen plan per kind of solve, shared by the levels that ran it."""
        key = (method, working_set, finished, late)
        if key not in self._plans:
            self._plans[key] = self.plan.record(SolveStep(method, working_set, False,
                                                          finished, late))
        return self._plans[key]

    def _level_solution(self, problem, alpha, mu, n_iter, resid, is_label):
        """``msvm._snapshot.level_solution`` by ``level_tail`` (its intercepts by the Python
        step where the compiled one leaves them), and the settled test (``settled``)."""
        b_slot, V, self.support, self.settled = tail_intercepts(
            problem, alpha, self.src, -mu, intercept_solver(self.est, problem),
            np.asarray(is_label).view(np.uint8))
        return _Solution(problem=problem, alpha=alpha, mu=mu.copy(), n_iter=n_iter,
                         resid=resid, V=V, W=None, intercept=self.T @ b_slot, G=None,
                         penalty=np.nan)

    def _seed(self, random_state):
        """The seed a new sequence draws from ``random_state``; for an integer, drawn once."""
        if not isinstance(random_state, numbers.Integral):
            return check_random_state(random_state).randint(0, 2 ** 31 - 1)
        if random_state not in self.seeds:
            self.seeds[random_state] = check_random_state(random_state).randint(0, 2 ** 31 - 1)
        return self.seeds[random_state]

    def level_fit(self, sol):
        """The fit of one level as the bracketing, the held-out scoring and
        ``predict_proba`` read it: support, dual coefficients, support vectors,
        intercepts, convergence; not the objective, duality gap or ``alpha_``."""
        fit = object.__new__(type(self.prototype))       # copy.copy without __reduce_ex__
        fit.__dict__.update(self.prototype.__dict__)
        mask = sol.problem.support_mask(sol.alpha) if self.support is None else self.support
        support = np.flatnonzero(mask)
        V, sol.V = sol.V, None
        fit.support_ = support
        fit.n_support_ = np.bincount(self.y_enc[support], minlength=self.k).astype(np.int32)
        fit.dual_coef_ = (support_rows(V, support).T if self.identity
                          else times_small(V[support], self.T.T).T)
        fit.intercept_ = sol.intercept
        fit.support_vectors_ = self.X[support]
        fit.kkt_residual_ = sol.resid
        fit.n_iter_ = sol.n_iter
        fit.stop_reason_ = self.sequence.stop_reason()
        fit.converged_ = fit.stop_reason_ == CONVERGED
        fit.solver_plan_ = self.sequence.plan
        return fit


def bound_scaling(problem, unit_problem, weights):
    """(owner, unit) where the bounds and caps of ``problem`` (the model's dual at the
    weights C w_i) are C w_i times those of ``unit_problem`` (its dual at unit weights):
    ``owner[name]``, the sample whose weight scales each bound of ``name`` ('box_lo',
    'box_hi', 'cap'; None: stored per entry, not holding weights, equal at every weight),
    and ``unit[name]``, its value at unit weight.  (None, None) where the two problems
    differ otherwise or the bounds do not scale so."""
    sample = problem.sample_of_var()
    groups = problem.var_group if problem.var_group is not None else np.zeros(0, np.int32)
    first = np.unique(groups[groups >= 0], return_index=True)[1]
    owner = {"box_lo": None if problem.lo_per_entry else sample,
             "box_hi": None if problem.hi_per_entry else sample,
             "cap": sample[np.flatnonzero(groups >= 0)[first]]}
    unit = {name: np.array(getattr(unit_problem, name)) for name in owner}
    same = (_same_problem(problem, unit_problem, bounds=False)
            and len(owner["cap"]) == len(problem.cap)
            and all(owner[name] is not None
                    or np.array_equal(getattr(problem, name), unit[name])
                    for name in _BOUNDS)
            and all(np.array_equal(weights[rows] * unit[name], getattr(problem, name))
                    for name, rows in owner.items() if rows is not None))
    return (owner, unit) if same else (None, None)


def _check_finite(values):
    if not np.all(np.isfinite(values)):
        raise ValueError("the dual's bounds are not finite: C times the sample "
                         "weights overflows double precision. Use a smaller C "
                         "or rescale sample_weight.")


class ScaledDual:
    """The model's dual problem at changing sample weights, for the refits of the chains of a
    task (the dual of a DC model's or a reweighting's first solve at each level,
    ``msvm._dc.chain_dual_problem``): built
    by the model's builder at the first weights, then a copy of that problem with its
    bounds and caps C w_i times their values at unit weight (:func:`bound_scaling`; each
    product the one the builder forms), sharing its other arrays and their caches;
    compared with the builder at the first ``VERIFIED_STEPS`` copies, and built by it
    wherever the bounds do not scale so (the same values either way).  ``settings``: the
    solver's penalty rho and seed of the chains' refits, kept by ``msvm._dc`` (None until
    the first refit)."""

    def __init__(self):
        self.template, self.owner, self.unit, self.copies = None, None, None, 0
        self.settings = None

    def at(self, weights, build):
        """The dual at the weights C w_i (``weights``); ``build(weights)``: the model's."""
        if self.template is None:
            self.template = build(weights)
            self.owner, self.unit = bound_scaling(self.template, build(np.ones(len(weights))),
                                                  weights)
            return self.template
        if self.owner is None or len(weights) != self.template.n_samples:
            return build(weights)
        problem = copy.copy(self.template)
        for name, owner in self.owner.items():
            if owner is not None:
                values = np.multiply(weights[owner], self.unit[name])
                _check_finite(values)
                setattr(problem, name, values)
        if self.copies < VERIFIED_STEPS:
            self.copies += 1
            built = build(weights)
            if not _same_problem(problem, built):
                self.owner = None
                return built
        return problem


def _same_problem(a, b, bounds=True):
    """Whether two dual problems hold the same values (every array and scalar; without
    ``bounds``, all but the bounds and caps)."""
    names = ("var_ptr", "var_entry", "entry_slot1", "entry_coef1", "entry_slot2",
             "entry_coef2", "entry_lin", "var_group") + (_BOUNDS if bounds else ())
    scalars = ("k", "kappa", "equality", "lo_per_entry", "hi_per_entry")
    return (all(getattr(a, s) == getattr(b, s) for s in scalars)
            and all(_same_array(getattr(a, n), getattr(b, n)) for n in names))


def _same_array(a, b):
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.array_equal(a, b)
