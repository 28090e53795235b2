"""Which algorithm solves a fit: the one place that decides it, and the record of what ran.

A fit's dual is solved on one of several paths, chosen from the estimator's parameters and the
shape and kind of its data with tuned thresholds:

* the row source (``rows``): 'linear rows' (the linear kernel as cached rows x_i^T X, for at
  most ``LINEAR_ROWS_MAX_SAMPLES`` samples whose rows all fit in the cache), 'explicit
  features' (the linear kernel or an approximate kernel's features phi(x) as explicit weights
  W = X^T U, no kernel rows, as LIBLINEAR does), 'kernel cache' (rows of the 'rbf' or 'poly'
  kernel computed on demand into an LRU cache) or 'precomputed' (rows of a Gram matrix: the
  'precomputed' kernel or a callable kernel's Gram matrix);
* the storage of cached kernel rows (``cache_dtype``: float32 where its rounding is far below
  the accuracy asked for, see ``FLOAT32_CACHE_TOL``);
* the inner solver of the compiled core (``solver``): working-set SMO where the source has
  kernel rows and every direction of the problem has coefficients +-1 on its slots, dual
  coordinate descent ('cd') otherwise; and the SMO path's working-set bound;
* the start from the smoothed primal (msvm/_primal.py) on explicit features where dual
  coordinate descent is slow (``primal_start_applies``), the route of its Newton systems
  (dense, or on the curvature's slot blocks: msvm/_newton_cg.py, ``newton_slot_route``),
  and, for the warm-started refits of a probability chain (``refit_start='dual first'``),
  dual coordinate descent from the neighbouring level's dual for that start's estimated
  cost before it
  (``refit_dual_epochs``; off since round 11, ``REFIT_DUAL_FIRST``), and the row source of
  a probability chain on the linear kernel (``refit_rows``) and of a calibration fold's fits
  on an approximate kernel's features (``fold_overrides``);
* the start of a large-C kernel fit (kernel cache rows or a Gram matrix) from the smoothed
  primal on a low-rank factor of its kernel (msvm/_kernel_factor.py,
  ``SolvePlan.starts_from_factor``, ``FACTOR_MIN_SCALE``);
* the start of a large computed-kernel fit of a per-class-hinge model from its dual solved
  on k-means clusters of the samples (msvm/_cluster_start.py,
  ``SolvePlan.starts_from_clusters``, from ``CLUSTER_MIN_SAMPLES`` samples).

:func:`plan_solve` makes the decisions that precede the row source (rows, cache dtype, the
rules for the rest) and returns a :class:`SolvePlan`.  The inner solver, its working set and
the primal start depend on the problem too (its directions, its largest bound, which moves
between DC steps), so they are decided at each solve by the plan's methods and recorded, one
:class:`SolveStep` per solve, in the plan that the fit keeps as ``solver_plan_``.  Tests and
benchmarks force a path through ``overrides`` (an estimator's ``_plan_overrides``), never by
changing the constants below.
"""

from dataclasses import dataclass, replace

import numpy as np

from ._capped_terms import capped_terms_possible
from ._core._rows import GramRows, WeightRows
from ._core._solver import auto_working_set, smo_applies
from ._newton_cg import slot_route_possible
from ._progress import verbosity

ROWS = ("linear rows", "explicit features", "kernel cache", "precomputed")
SOLVERS = ("auto", "smo", "cd")
PRIMAL_STARTS = ("auto", "on", "off")
CLUSTER_STARTS = ("auto", "on", "off")
FACTOR_STARTS = ("auto", "on", "off")
CACHE_DTYPES = ("float64", "float32")
REFIT_STARTS = ("primal", "dual first")

# Linear kernel: up to this many samples (and when every kernel row fits in the cache) the
# greedy kernel solver on rows x_i^T X is used; above it, coordinate descent on the explicit
# weight matrix (O(d k) per update, no kernel rows), as LIBLINEAR does.
LINEAR_ROWS_MAX_SAMPLES = 2000

# cache_dtype='auto' stores RBF kernel rows in float32 where that is safe: rounding a kernel
# value to single precision changes it by at most 6e-8 of itself, and a score sum_r K_ir U_r
# by about 6e-8 times the size of the dual variables (at most C * weight each).  From this
# tol up and with every C * weight at most FLOAT32_MAX_BOUND, that is orders of magnitude
# below the accuracy asked for; tighter tols and larger bounds (the near-hard-margin end,
# where the objective is tiny against C) keep the rows in float64.
FLOAT32_CACHE_TOL = 1e-4
FLOAT32_MAX_BOUND = 100.0

# The primal start is used when the largest box bound times the median ||x||^2 (the
# scale of the dual's curvature against its box) reaches PRIMAL_MIN_SCALE, or
# PRIMAL_MID_SCALE with at least PRIMAL_MID_SAMPLES samples: where it beat dual coordinate
# descent alone (measurements: benchmarks/results/tuned_constants.md) ...
PRIMAL_MIN_SCALE = 1.0
PRIMAL_MID_SCALE = 0.1
PRIMAL_MID_SAMPLES = 20000
# ... and the samples outnumber the primal's unknowns ((d + 1) k) this many times over.
PRIMAL_MIN_RATIO = 4
# largest number of primal unknowns (d + 1) k: the Newton system is formed and factored
PRIMAL_MAX_UNKNOWNS = 1500
# Round 12: above PRIMAL_MAX_UNKNOWNS the start solves its Newton systems on the curvature's
# k slot blocks of (d + 1)^2 (msvm/_newton_cg.py: block-Jacobi with the slot sums solved
# exactly, the Newton direction itself for one-slot directions, conjugate gradients with
# products through X for two-slot ones), whose cost grows with (d + 1)^3 k instead of
# ((d + 1) k)^3; the ratio of samples to unknowns is then that of samples to the rows
# d + 1 of a block.  False restores the rule before (tests, benchmarks: no start above
# PRIMAL_MAX_UNKNOWNS).
PRIMAL_SLOT_ROUTE = True
# one-slot terms (the route's solve is the Newton direction itself) take the slot route from
# this many unknowns (d + 1) k, below PRIMAL_MAX_UNKNOWNS too: the same directions (to
# rounding) for k (d + 1)^3 flops instead of ((d + 1) k)^3 / 3.  One chain of weighted
# refits, n = 20,000, 200 Nystroem components, k = 5 (1,005 unknowns; CPU, load 4-5, one
# process, twice each): 5.5-5.7 s dense, 3.4-3.7 s on the slot route, the same Newton steps
# (8-23 a level), objectives equal to 1e-11 relative
PRIMAL_SLOT_MIN_UNKNOWNS = 1000

# The refits of a probability chain (msvm/_probability.py: the same C, one class's boxes
# grown by 2.4 from the neighbouring level's) are planned with refit_start='dual first': where
# the rule above makes the primal start, such a refit (the first solve of a fit from another
# fit's dual) first runs dual coordinate descent from that dual for at most the epochs that
# the start is estimated to cost, REFIT_NEWTON_STEPS Newton steps of ``newton_step_epochs``
# epochs each (``refit_dual_epochs``); if that does not converge, the start is computed from
# its iterate and certified at once (msvm._sequence.DualSequence), and the chain's later
# levels (larger boxes, harder for both) start from the primal at once (refit_start='primal',
# the start of every other fit).  Neither start wins everywhere (one class's chain, CPU,
# shared machine).  Nystroem features, 200 components, d = 20, k = 5: at n = 5,000 dual
# coordinate descent converged in 17-119 epochs a level, 1.7 s a chain, against 15.0 s from
# the primal start, whose Newton steps (10-97 a level) are cut at the kinks of the terms
# whose band mu * bound narrows with the level; at n = 20,000 in 26-672 epochs, 25.6 s
# against 24.2 s.  The linear kernel with d = 5, C = 10, n = 5,000: 460 epochs and more,
# where the primal start certifies every level at once (0.24 s a chain; 0.28 s with the
# first level's budget spent first).  Round 11: the smoothed primal of a weighted refit is
# smoothed with bands alike for all samples (msvm._primal._balanced): its Newton steps are no
# longer cut at the kinks of the terms of weight 1, and the start from the primal at once wins
# everywhere measured (one class's chain, CPU, shared machine, Nystroem 200 components, d =
# 20, k = 5): n = 5,000 2.0 s (9-14 Newton steps a level, certified at once) against 2.2 s
# dual first; n = 20,000 4.9 s (7-23 steps a level) against 24.4 s dual first and 18.7 s
# from the primal without the balanced smoothing (8-133 steps).  So REFIT_DUAL_FIRST is off:
# every refit starts from the primal where a fit from zero would; True restores the rule of
# round 9 (tests, benchmarks).
REFIT_DUAL_FIRST = False
REFIT_NEWTON_STEPS = 40          # about the mean of the 10-97 measured at n = 5,000
# Round 11: a probability chain on the linear kernel solves on explicit features wherever
# the smoothed-primal start can run on them (``refit_rows``), also below
# LINEAR_ROWS_MAX_SAMPLES, where a fit from zero takes the kernel rows x_i^T X: a weighted
# refit at a large weight is a large-C problem, slow for the solvers on kernel rows.  From
# REFIT_EXPLICIT_MIN_SAMPLES samples: below, a Newton step's Python overhead (about 2 ms)
# exceeds an epoch on the kernel rows (probability=True, best of 3 in one process, CPU:
# breast cancer, 398 samples, d = 30, C = 1, 0.048 s on the kernel rows against 0.129 s on
# explicit features; 300 samples, d = 5, k = 3, C = 10: 0.47 s both; 600 samples: 1.08
# against 0.62 s; n = 5,000, d = 5, k = 5, C = 10, whose folds train on 1,000: 11.9 against
# 6.2 s).
REFIT_EXPLICIT_LINEAR = True
REFIT_EXPLICIT_MIN_SAMPLES = 500
# Round 15: a calibration fold's fits on an approximate kernel's features (msvm/_probability.py:
# its own fit, its top fit at 3 C and its weighted chains) solve on the explicit features
# from the smoothed primal ('on': whatever the ratio of samples to unknowns) where the
# fold's box bound C n / n_train (the weights that keep the full fit's balance of loss and
# penalty) reaches REFIT_FOLD_MIN_BOUND; on the features' Gram rows the solver then ran
# into its epoch budget and the exact finishing step.  Measured (CPU, one process each,
# make_classification d = 20, k = 5, 200 Nystroem components, 1,000 samples, C = 5, load
# 2-6): at weight 200 (a fold of n = 200,000) the own fit 5.0 -> 1.8 s, one chain 2.8 ->
# 0.7 s (101, 101 and 4 epochs with a finishing step -> every level certified at once); at
# weight 100 the own fit 2.5 -> 0.9 s but a chain 0.3 -> 0.6 s (69, 68, 16 epochs); at
# weight 20 both slower (own fit 0.36 -> 0.85 s, chain 0.17 -> 0.46 s).  The threshold lies
# between the bounds 500 (a loss) and 1,000 (a gain) measured.  False restores the route of
# round 14 (benchmarks).
REFIT_FOLD_PRIMAL = True
REFIT_FOLD_MIN_BOUND = 750.0
# Round 16: a calibration fold's fits (at most 1,000 samples, msvm._probability.
# CALIBRATION_TRAIN_MAX) try the exact finishing step (msvm/_finish.py) only after
# FOLD_FINISH_AFTER epochs instead of msvm._sequence.FINISH_AFTER (100): on their weights
# n / n_train (2 on pendigits at 2,000 samples, C = 10: box bounds 20) the own fits ran into
# the 100 epochs, and one finishing step on their ~2,000 free variables (a dense LU) cost
# 0.5-0.8 s, where the solver alone converged at 119-124 epochs (0.21-0.24 s against
# 0.70-0.96 s a fold's own fit, CPU, one process, alternating; ReinforcedMSVM, RBF
# gamma='scale').  An epoch on 1,000 samples costs a few ms, so the epochs up to the later
# first stop cost at most about one such finishing step where the solver still does not
# converge.  0 restores the sequence's own budget (benchmarks: section 9l).  Only on folds of
# at least FOLD_FINISH_MIN_VARIABLES samples times classes: the finishing step's dense
# factorization grows as the cube of the free set, an epoch as n^2 k, and on small folds the
# step costs little and its exact solution keeps the calibration where it was (example
# 4.1.2, n = 400, C = 10, WestonWatkinsMSVM, folds of 266 samples and 3 classes: the same
# CPU time, mean absolute error 0.0486 -> 0.0541 with the later stop, over issue 25's
# +0.002; on every other small set of section 9f the probabilities were identical).
FOLD_FINISH_AFTER = 400
FOLD_FINISH_MIN_VARIABLES = 2000
# how much faster per flop the Newton system's dense factorization runs than an epoch of
# dual coordinate descent (BLAS level 3 against vector updates; measured about 3-4)
FACTOR_SPEEDUP = 3.0

# The cluster start (msvm/_cluster_start.py) is made for computed-kernel fits ('kernel
# cache' rows) from CLUSTER_MIN_SAMPLES samples, on about n / CLUSTER_SIZE clusters.  Measured
# against the plain fit in one run (ReinforcedMSVM, RBF, C = 1, make_classification d = 20,
# k = 5; benchmarks/results/cluster_start.md): 1.26x the plain fit's CPU time at n = 10,000,
# 1.08x at 20,000, 1.04x at 40,000 (0.97x in an earlier run), 0.73x at 80,000 (where the
# plain fit's kernel rows outgrow the row cache: 339k rows computed, 246k from the start);
# on pendigits 1.1-1.25x.  The threshold lies between the break-even and the measured gain
# (60,000 itself was not measured).
CLUSTER_MIN_SAMPLES = 60000
CLUSTER_SIZE = 4000

# Round 17: a kernel fit (kernel cache rows or a Gram matrix) whose largest box bound times
# its largest kernel diagonal entry reaches FACTOR_MIN_SCALE starts from the smoothed primal
# on a pivoted Cholesky factor of its kernel where the kernel has a small numerical rank
# (msvm/_kernel_factor.py, ``SolvePlan.starts_from_factor``): at large C the kernel solver's
# epochs grow with C, the Newton steps of the start do not.  False restores the rule before
# (main aae56db: no such start; benchmarks' "before").
# Not above FACTOR_MAX_SCALE: there the rounding of a score, eps C max K_ii, reaches the
# margins' unit size, and a start at such bounds left scores the solver certified whose
# objective_ differed from its recomputation (the fuzz: C = 1e150, a linear poly kernel).
KERNEL_FACTOR_START = True
FACTOR_MIN_SCALE = 1e3
FACTOR_MAX_SCALE = 1e14

# Whether the DC steps' shifted groups (WeightedRobustMSVM's truncation) may start from the
# smoothed primal (``_smoothable``); benchmarks turn it off to measure the path before.
SHIFTED_GROUP_START = True


def cluster_start_possible(problem):
    """Whether the cluster start can be made for ``problem``: the per-class-hinge layout
    (directions +-e_j, one slot each, the own class's coefficient negative) without group
    caps, whose clusters of one class have the single feasible point alpha = 0."""
    return (problem.n_vars > 0 and problem.var_group is None and not problem.has_pairs
            and bool(np.any(problem.entry_coef1 < 0)))


def n_clusters(n, cluster_size=CLUSTER_SIZE):
    """Clusters of a cluster start on n samples: about n / ``cluster_size``, at least 2."""
    return max(2, int(round(n / max(int(cluster_size), 1))))


def _smoothable(problem):
    """Whether the smoothed primal can smooth ``problem``'s terms: one term per variable
    (no group caps, msvm._core._smoothed), or groups of one size with two-slot directions
    smoothed as a whole (the generalized-margin duals, msvm._capped_terms), a DC step's
    shifted groups (lower bounds below zero) included unless ``SHIFTED_GROUP_START`` is
    off (benchmarks: the path before the start took them).  Their Newton steps are cut
    more often (msvm/_primal.py, ``SHIFTED_FIRST_MU_SHARE``) but still beat dual coordinate
    descent: make_classification n = 5,000, d = 20, k = 5, truncation='auto', 76.8 s CPU
    without the start on the shifted steps, 18.9 s with it
    (benchmarks/results/grouped_primal_start.md)."""
    if problem.n_vars == 0:
        return False
    if not len(problem.cap):
        return True
    return capped_terms_possible(problem) and (SHIFTED_GROUP_START
                                               or not np.any(problem.expand("lo") < 0))


def primal_start_applies(problem, X, diag):
    """Whether the fit should start from the smoothed primal (see the module note)."""
    if X is None or not _smoothable(problem):
        return False
    bound = problem.max_abs_bound()
    scale = bound * float(np.median(diag)) if len(diag) else 0.0
    pays = scale >= PRIMAL_MIN_SCALE or (scale >= PRIMAL_MID_SCALE
                                         and X.shape[0] >= PRIMAL_MID_SAMPLES)
    unknowns = _newton_unknowns(problem, X)
    return pays and unknowns > 0 and X.shape[0] >= PRIMAL_MIN_RATIO * unknowns


def factor_start_applies(problem, diag):
    """Whether a kernel solve of ``problem`` (``diag``: its kernel diagonal) tries the start
    from a factor of its kernel: ``KERNEL_FACTOR_START`` on, terms the smoothed primal can
    smooth, and the largest box bound times the largest K_ii at least ``FACTOR_MIN_SCALE``
    (the scale of the dual's curvature against its box, as ``primal_start_applies``'s)
    and at most ``FACTOR_MAX_SCALE``."""
    if not KERNEL_FACTOR_START or not len(diag) or not _smoothable(problem):
        return False
    scale = problem.max_abs_bound() * float(np.max(diag))
    return FACTOR_MIN_SCALE <= scale <= FACTOR_MAX_SCALE


def newton_slot_route(problem, d):
    """Whether the smoothed primal of ``problem`` on d explicit features solves its Newton
    systems on the slot route (msvm/_newton_cg.py): above ``PRIMAL_MAX_UNKNOWNS`` unknowns
    (d + 1) k, and for one-slot terms from ``PRIMAL_SLOT_MIN_UNKNOWNS``; never with
    ``PRIMAL_SLOT_ROUTE`` off."""
    unknowns = (d + 1) * problem.k
    if not PRIMAL_SLOT_ROUTE or not slot_route_possible(problem, d):
        return False
    return unknowns > PRIMAL_MAX_UNKNOWNS or (unknowns >= PRIMAL_SLOT_MIN_UNKNOWNS
                                              and not problem.has_pairs)


def _newton_unknowns(problem, X):
    """The unknowns of the start's Newton systems that the samples must outnumber
    ``PRIMAL_MIN_RATIO`` times: (d + 1) k up to ``PRIMAL_MAX_UNKNOWNS`` (the dense system),
    above it the d + 1 rows of a slot block where the slot route can run
    (``PRIMAL_SLOT_ROUTE``, msvm._newton_cg.slot_route_possible), else 0 (no start)."""
    unknowns = (X.shape[1] + 1) * problem.k
    if unknowns <= PRIMAL_MAX_UNKNOWNS:
        return unknowns
    if PRIMAL_SLOT_ROUTE and slot_route_possible(problem, X.shape[1]):
        return X.shape[1] + 1
    return 0


def newton_step_epochs(n, d, k):
    """The cost of one Newton step of the smoothed primal on n samples of d explicit
    features and k class slots, in epochs of dual coordinate descent (about 2 n d k flops
    each): two passes over X (the gradient's X^T U and the step's X S) and the Cholesky
    factorization of the ((d + 1) k)-square Newton matrix, ((d + 1) k)^3 / 3 flops at
    ``FACTOR_SPEEDUP`` times the rate.  n = 5,000, d = 200, k = 5: 13 (measured about 10);
    d = 5: 2."""
    m = (d + 1) * k
    return 2.0 + m ** 3 / 3.0 / (FACTOR_SPEEDUP * 2.0 * max(n, 1) * max(d, 1) * k)


def refit_dual_epochs(problem, X):
    """The epochs of dual coordinate descent a warm-started refit on explicit features X
    runs from its start before it turns to the smoothed-primal start (see
    ``REFIT_NEWTON_STEPS``): the start's estimated cost, at least 1."""
    n, d = X.shape
    return max(1, int(np.ceil(REFIT_NEWTON_STEPS * newton_step_epochs(n, d, problem.k))))


def refit_rows(kernel, n, d, k):
    """The row source forced on a probability chain's refits: 'explicit features' for the
    linear kernel where the smoothed-primal start can run on them (at most
    ``PRIMAL_MAX_UNKNOWNS`` unknowns (d + 1) k, at least ``PRIMAL_MIN_RATIO`` samples per
    unknown) and pays (at least ``REFIT_EXPLICIT_MIN_SAMPLES`` samples), with
    ``REFIT_EXPLICIT_LINEAR`` on; None (the plan's own rule) otherwise."""
    unknowns = (d + 1) * k
    if (REFIT_EXPLICIT_LINEAR and kernel == "linear" and unknowns <= PRIMAL_MAX_UNKNOWNS
            and n >= max(PRIMAL_MIN_RATIO * unknowns, REFIT_EXPLICIT_MIN_SAMPLES)):
        return "explicit features"
    return None


def fold_overrides(kernel_approximation, bound, n, d):
    """The plan overrides of a calibration fold's fits (see ``REFIT_FOLD_PRIMAL``): rows
    'explicit features' and primal_start 'on' for an approximate kernel's d features of n
    samples when the fold's largest box bound ``bound`` (C times its heaviest sample weight)
    reaches ``REFIT_FOLD_MIN_BOUND`` and the samples outnumber the rows d + 1 of a slot
    block ``PRIMAL_MIN_RATIO`` times; {} (the plan's own rules) otherwise.  With as many
    features as samples (1,000 Nystroem components on a fold's 1,000 samples, weight 200)
    the fold's chains settle at their first level on the Gram rows (0.27 s a chain) and took
    1.9 s from the primal."""
    if (REFIT_FOLD_PRIMAL and kernel_approximation is not None
            and bound >= REFIT_FOLD_MIN_BOUND and n >= PRIMAL_MIN_RATIO * (d + 1)):
        return {"rows": "explicit features", "primal_start": "on"}
    return {}


def fold_finish_overrides(kernel, kernel_approximation, n, k):
    """The ``finish_after`` override of a calibration fold's fits of n samples and k classes
    on kernel rows (a computed or precomputed kernel, neither the linear kernel nor an
    approximate kernel's features, whose first budget stop is also where a late
    smoothed-primal start is made): ``FOLD_FINISH_AFTER`` epochs before the first exact
    finishing step where n k reaches ``FOLD_FINISH_MIN_VARIABLES``; {} otherwise or when
    ``FOLD_FINISH_AFTER`` is 0."""
    if (not FOLD_FINISH_AFTER or kernel == "linear" or kernel_approximation is not None
            or n * k < FOLD_FINISH_MIN_VARIABLES):
        return {}
    return {"finish_after": FOLD_FINISH_AFTER}


def primal_start_possible(problem, X):
    """Whether the smoothed-primal start can run at all (whether it pays aside): explicit
    features, terms it can smooth (``_smoothable``), a Newton system of at most
    ``PRIMAL_MAX_UNKNOWNS`` unknowns or one the slot route solves (``_newton_unknowns``)."""
    return X is not None and _smoothable(problem) and _newton_unknowns(problem, X) > 0


def resolve_cache_dtype(cache_dtype, kernel, tol, C, weights=None):
    """The storage of cached kernel rows: ``cache_dtype``, with 'auto' resolved to float32
    where single-precision rounding of the kernel is far below the accuracy asked for (see
    ``FLOAT32_CACHE_TOL``): the RBF kernel (values in (0, 1]), tol from ``FLOAT32_CACHE_TOL``
    up and every box bound C * weight at most ``FLOAT32_MAX_BOUND``.  float64 otherwise."""
    if cache_dtype != "auto":
        return cache_dtype
    if kernel != "rbf" or tol < FLOAT32_CACHE_TOL:
        return "float64"
    heaviest = 1.0 if weights is None or len(weights) == 0 else float(np.max(weights))
    return "float32" if C * heaviest <= FLOAT32_MAX_BOUND else "float64"


def cache_rows(cache_size, cache_dtype, n):
    """Kernel rows of n entries stored as ``cache_dtype`` that ``cache_size`` MB hold."""
    itemsize = 4 if cache_dtype == "float32" else 8
    return int(cache_size * 2 ** 20 // (itemsize * max(n, 1)))


def row_kind(source, n, cache_size, cache_dtype):
    """The row source for a source kind ('linear', 'precomputed', 'rbf', 'poly') and n
    samples: the linear kernel as rows up to ``LINEAR_ROWS_MAX_SAMPLES`` samples whose rows
    all fit in ``cache_size`` MB, as explicit features above."""
    if source == "precomputed":
        return "precomputed"
    if source == "linear":
        if n <= LINEAR_ROWS_MAX_SAMPLES and cache_rows(cache_size, cache_dtype, n) >= n:
            return "linear rows"
        return "explicit features"
    return "kernel cache"


@dataclass(frozen=True)
class SolveStep:
    """What one solve of a fit ran: its inner solver, the SMO path's working-set bound (0 on
    the coordinate-descent path), whether it started from the smoothed primal, how many
    times the solver went on from an exact finishing step (msvm/_finish.py) or a late
    smoothed-primal start after its epoch budget (msvm._sequence.DualSequence), whether
    a refit planned 'dual first' went on from that late start (``refit_dual_budget``), and
    the largest rounding floor of a sample's violation its last run measured against
    (msvm/_score_floor.py; 0.0: none, the solver's residual was held to tol)."""

    solver: str
    working_set: int
    primal_start: bool
    finishing_steps: int = 0
    late_primal_start: bool = False
    precision_floor: float = 0.0


@dataclass(frozen=True)
class SolvePlan:
    """Which algorithm solves a fit (see the module docstring).

    Attributes
    ----------
    rows : {'linear rows', 'explicit features', 'kernel cache', 'precomputed'}
        The row source of the training inputs.
    cache_dtype : {'float64', 'float32'}
        The storage of cached kernel rows (nothing is cached for 'explicit features' and
        'precomputed').
    solver : {'auto', 'smo', 'cd'}
        The inner-solver rule: 'auto' is SMO where the rows are kernel rows and the problem's
        directions have coefficients +-1, coordinate descent otherwise.
    primal_start : {'auto', 'on', 'off'}
        The smoothed-primal start rule: 'auto' where it pays (``primal_start_applies``, at
        each solve), 'on' wherever it can run, 'off' never (every source but explicit
        features).
    working_set : int
        The SMO path's working-set bound; 0 chooses it from the row source
        (``msvm._core._solver.auto_working_set``).
    cluster_start : {'auto', 'on', 'off'}
        The cluster-start rule (msvm/_cluster_start.py) of a fit's first solve from zero:
        'auto' (the default on kernel cache rows) from ``CLUSTER_MIN_SAMPLES`` samples, 'on'
        wherever it can run (kernel cache rows, ``cluster_start_possible``), 'off' never.
    cluster_size : int
        The samples per cluster the number of clusters is chosen for (``n_clusters``).
    refit_start : {'primal', 'dual first'}
        The start of a warm-started refit where the primal-start rule applies: 'primal' as a
        fit from zero, or 'dual first' (a probability chain's refits): dual coordinate
        descent from the warm start for the primal start's estimated cost first
        (``refit_dual_budget``).
    clusters : int
        Clusters the start of the first solve was built on (0: no cluster start made).
    finish_after : int
        Epochs the solver runs before its first exact finishing step (0: the sequence's
        ``msvm._sequence.FINISH_AFTER``); a calibration fold's fits set
        ``FOLD_FINISH_AFTER`` (``fold_overrides``).
    steps : tuple of SolveStep
        What each solve of the fit ran, in order (empty before the first solve).
    factor_start : {'auto', 'on', 'off'}
        The kernel-factor start rule (msvm/_kernel_factor.py) of a solve on kernel rows:
        'auto' (the default on kernel cache rows and Gram matrices) where
        ``factor_start_applies``, 'on' wherever the smoothed primal can smooth the terms,
        'off' never.  A solve so started records ``primal_start`` True.
    """

    rows: str
    cache_dtype: str
    solver: str = "auto"
    primal_start: str = "off"
    working_set: int = 0
    steps: tuple = ()
    cluster_start: str = "off"
    cluster_size: int = CLUSTER_SIZE
    clusters: int = 0
    refit_start: str = "primal"
    finish_after: int = 0
    factor_start: str = "off"

    def inner_solver(self, src, problem):
        """(solver, working_set) of a solve of ``problem`` on the row source ``src``."""
        smo = self.solver != "cd" and smo_applies(src, problem)
        if self.solver == "smo" and not smo:
            raise ValueError("the plan forces solver='smo', which needs kernel rows and "
                             "directions with coefficients +-1; use solver='auto' or 'cd'")
        if not smo:
            return "cd", 0
        return "smo", self.working_set or auto_working_set(src.capacity, src.n, src.k)

    def starts_from_primal(self, problem, X, diag):
        """Whether a solve of ``problem`` on explicit features X starts from the smoothed
        primal (``diag``: the squared norms of X's rows)."""
        if self.primal_start == "off" or self.rows != "explicit features":
            return False
        if self.primal_start == "on":
            return primal_start_possible(problem, X)
        return primal_start_applies(problem, X, diag)

    def starts_from_factor(self, problem, diag):
        """Whether a solve of ``problem`` on kernel rows (``diag``: the kernel diagonal)
        tries the start from a factor of its kernel (msvm/_kernel_factor.py); the factor
        itself may still give up (too high a rank).  Never for a probability chain's
        refits (``refit_start`` 'dual first'): their compiled level solves
        (msvm._level_chain.LevelState) make no start, and the level path through
        DualSequence.solve must give their values."""
        if (self.factor_start == "off" or self.refit_start == "dual first"
                or self.rows not in ("kernel cache", "precomputed")):
            return False
        if self.factor_start == "on":
            return _smoothable(problem)
        return factor_start_applies(problem, diag)

    def refit_dual_budget(self, problem, X, diag):
        """The epochs of dual coordinate descent that a warm-started refit of ``problem``
        on explicit features X runs from its start before the smoothed-primal start (from
        its iterate: ``restarts_from_primal``), or 0: the refit starts from the primal at
        once (``refit_start`` 'primal', ``REFIT_DUAL_FIRST`` off, the rule forced 'on') or
        not at all (the rule of ``starts_from_primal`` says no).  See
        ``REFIT_NEWTON_STEPS``."""
        if (self.refit_start != "dual first" or not REFIT_DUAL_FIRST
                or self.primal_start != "auto" or not self.starts_from_primal(problem, X, diag)):
            return 0
        return refit_dual_epochs(problem, X)

    def restarts_from_primal(self, problem, X, diag):
        """Whether a linear-kernel solve that its epoch budget stopped, and that the exact
        finishing step could not settle (a free set too large for it), goes on from the
        smoothed primal computed from its iterate: the rule of ``starts_from_primal``, on
        kernel rows of the linear kernel too."""
        if (self.primal_start == "off" or X is None
                or self.rows not in ("linear rows", "explicit features")):
            return False
        if self.primal_start == "on":
            return primal_start_possible(problem, X)
        return primal_start_applies(problem, X, diag)

    def starts_from_clusters(self, problem):
        """Whether a fit's first solve of ``problem`` from zero starts from its dual solved on
        clusters of the samples (msvm/_cluster_start.py); the number of clusters or 0."""
        if self.cluster_start == "off" or self.rows != "kernel cache" \
                or not cluster_start_possible(problem):
            return 0
        n = problem.n_samples
        if self.cluster_start == "auto" and n < CLUSTER_MIN_SAMPLES:
            return 0
        c = n_clusters(n, self.cluster_size)
        return c if c < n else 0

    def record(self, step):
        """The plan with one more solve's :class:`SolveStep`."""
        return replace(self, steps=self.steps + (step,))

    def __str__(self):
        text = f"rows={self.rows}"
        if self.rows in ("linear rows", "kernel cache"):
            text += f" ({self.cache_dtype} cache)"
        if not self.steps:
            return f"{text}, solver={self.solver}, primal start={self.primal_start}"
        solvers = sorted({(s.solver, s.working_set) for s in self.steps})
        text += ", solver=" + " and ".join(
            f"smo (working set {ws})" if name == "smo" else name for name, ws in solvers)
        starts = sum(s.primal_start for s in self.steps)
        solves = f"{len(self.steps)} solve" + ("s" if len(self.steps) != 1 else "")
        kind = "factor" if self.factor_start != "off" else "primal"
        rule = self.factor_start if kind == "factor" else self.primal_start
        text += f", {kind} start={rule} (made in {starts} of {solves})"
        finished = sum(s.finishing_steps for s in self.steps)
        text += f", {finished} exact finishing steps" if finished else ""
        floor = max(s.precision_floor for s in self.steps)
        text += f", residual held to a rounding floor up to {floor:.2g}" if floor else ""
        return text + (f", start from {self.clusters} clusters" if self.clusters else "")


def _check_overrides(overrides, source):
    unknown = set(overrides) - {"rows", "solver", "primal_start", "cache_dtype", "working_set",
                                "cluster_start", "cluster_size", "refit_start", "finish_after",
                                "factor_start"}
    if unknown:
        raise ValueError(f"unknown plan overrides {sorted(unknown)}; use rows, solver, "
                         f"primal_start, cache_dtype, working_set, cluster_start, "
                         f"cluster_size, refit_start, finish_after or factor_start")
    choices = {"solver": SOLVERS, "primal_start": PRIMAL_STARTS, "cache_dtype": CACHE_DTYPES,
               "cluster_start": CLUSTER_STARTS, "refit_start": REFIT_STARTS,
               "factor_start": FACTOR_STARTS,
               "rows": ("linear rows", "explicit features") if source == "linear" else ()}
    for name, allowed in choices.items():
        if name in overrides and overrides[name] not in allowed:
            raise ValueError(f"plan override {name}={overrides[name]!r} is not possible for "
                             f"a {source!r} row source; choose one of {list(allowed)}")
    for name in ("working_set", "finish_after"):
        value = overrides.get(name, 0)
        if not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"plan override {name} must be an int >= 0; got {value!r}")
    size = overrides.get("cluster_size", CLUSTER_SIZE)
    if not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"plan override cluster_size must be an int >= 1; got {size!r}")


def plan_solve(source, n_samples, *, kernel=None, cache_size=200.0, cache_dtype="float64",
               tol=1e-3, C=1.0, weights=None, overrides=None):
    """The :class:`SolvePlan` of a fit, with today's defaults and thresholds.

    Parameters
    ----------
    source : {'linear', 'precomputed', 'rbf', 'poly'}
        The kind of row source the fit needs ('linear': explicit features, of the linear
        kernel or of an approximate kernel's map; 'precomputed': a Gram matrix).
    n_samples : int
        Number of training samples.
    kernel : str or callable, default=None
        The estimator's ``kernel`` (the 'auto' cache dtype is float32 for 'rbf' only).
    cache_size, cache_dtype, tol, C
        The estimator's parameters (``cache_dtype`` may be 'auto').
    weights : ndarray of shape (n_samples,), default=None
        The per-sample weights of the loss (the box bounds are C times them).
    overrides : dict, default=None
        Forced decisions (tests, benchmarks): ``rows`` ('linear rows' or 'explicit
        features', for the 'linear' source), ``solver``, ``primal_start``, ``cache_dtype``,
        ``working_set``, ``cluster_start``, ``cluster_size``, ``refit_start``,
        ``finish_after`` and ``factor_start`` (see :class:`SolvePlan`; a probability
        chain's refits set ``refit_start``, a calibration fold's fits ``finish_after``).

    Returns
    -------
    SolvePlan
    """
    overrides = dict(overrides or {})
    _check_overrides(overrides, source)
    dtype = overrides.get("cache_dtype") or resolve_cache_dtype(cache_dtype, kernel, tol, C,
                                                                weights)
    rows = overrides.get("rows") or row_kind(source, n_samples, cache_size, dtype)
    explicit = rows == "explicit features"
    # the linear kernel's rows keep the primal rule for the late start from the solver's
    # iterate (``restarts_from_primal``); only explicit features start from it
    primal = overrides.get("primal_start",
                           "auto" if rows in ("explicit features", "linear rows") else "off")
    if primal != "off" and rows not in ("explicit features", "linear rows"):
        raise ValueError(f"plan override primal_start={primal!r} needs explicit features "
                         f"or the linear kernel's rows; the rows are {rows!r}")
    solver = overrides.get("solver", "cd" if explicit else "auto")
    if solver == "smo" and explicit:
        raise ValueError("plan override solver='smo' needs kernel rows; the rows are "
                         "'explicit features'")
    clusters = overrides.get("cluster_start", "auto" if rows == "kernel cache" else "off")
    kernel_rows = rows in ("kernel cache", "precomputed")
    factor = overrides.get("factor_start", "auto" if kernel_rows else "off")
    if factor != "off" and not kernel_rows:
        raise ValueError(f"plan override factor_start={factor!r} needs kernel rows (a "
                         f"computed or precomputed kernel); the rows are {rows!r}")
    return SolvePlan(rows, dtype, solver, primal, int(overrides.get("working_set", 0)),
                     cluster_start=clusters,
                     cluster_size=int(overrides.get("cluster_size", CLUSTER_SIZE)),
                     refit_start=overrides.get("refit_start", "primal"),
                     finish_after=int(overrides.get("finish_after", 0)),
                     factor_start=factor)


def source_plan(src, explicit_features):
    """The plan of a row source built without one (a sequence made directly, in tests):
    the rules of :func:`plan_solve` applied to the source as it is."""
    if isinstance(src, WeightRows):
        return SolvePlan("explicit features", "float64", "cd", "auto")
    if isinstance(src, GramRows):
        return SolvePlan("precomputed", "float64")
    return SolvePlan("linear rows" if explicit_features else "kernel cache", src.cache_dtype)


def report_plan(owner, plan, verbose):
    """Print the plan of a fit once (``verbose >= 1``)."""
    if verbosity(verbose) >= 1:
        print(f"[msvm] {owner} solver plan: {plan}")
