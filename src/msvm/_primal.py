"""A primal Newton start for the linear path where dual coordinate descent is slow.

Dual coordinate descent slows sharply as C grows when n >> d (the dual has many free
variables in a space of rank d k).  For explicit features (``kernel='linear'`` or an
approximate kernel), the fit then first solves the primal smoothed by mu (Nesterov smoothing
of each hinge term),

    min_{V, b}  1 / (2 kappa) ||V||^2 + sum_v l_v(z_v),   z_v = a_v + <d_v, b + V^T x_i>,
    l_v(z) = max_{lo_v <= a <= hi_v}  a z - mu / 2 a^2,

by Newton's method (the class-slot matrix V has rows summing to zero, b sums to zero when
the intercepts are unpenalized): the (d + 1) k x (d + 1) k Hessian sums the blocks of the
free terms over slot pairs and is factored; between steps it is updated by the blocks of the
terms that entered or left the free set only (few, once a stage's pattern settles).  The step
is the exact minimizer along the Newton direction (the smoothed objective is piecewise
quadratic there), and mu decreases by 10 from 0.03 / max|bound| to 0.9 tol / max|bound|
(after one steepest-descent step from the start; see FIRST_MU_SHARE).  Each
stage after the first starts with the Newton step of the last solution's free pattern (its
terms quadratic at the new mu): the pattern changes little from stage to stage, and that step
goes most of the way to the new solution, where the plain Newton steps at the new mu (whose
free set is only the few terms within the 10 times narrower band) were cut to t = 1e-5-0.1 by
the terms they met, four or five times a stage.

The last stage's dual point alpha_v = clip(z_v / mu, lo_v, hi_v) is feasible, satisfies the
equalities P c(alpha) = 0 (the stationarity in b) and violates the KKT conditions of the
exact dual by at most mu max|bound| <= 0.9 tol (margin units), plus 0.05 tol for the
gradient left.  The
compiled dual solver then starts from it and first checks it against its stopping rule
without a step (violation, equalities and duality gap: it usually passes, and the fit
reports zero epochs); otherwise it goes on from there as from any other start: the primal
start changes where the solver starts, never what it returns a solution for.

Duals with group caps (WeightedRobustMSVM, AdaptiveWeightedSVM: sum_v alpha_v <= cap_g over
each group) are smoothed group by group instead (``CappedPrimal``, msvm/_capped_terms.py): a
group's dual point is the projection of its z / mu onto its capped box, and its Hessian that
projection's Jacobian.  Measured on make_classification (d = 20, k = 5, C = 'auto', CPU, a
shared machine): WeightedRobustMSVM(truncation=None) at n = 10,000 in 0.95 s instead of 36-42
s at max_iter, AdaptiveWeightedSVM at n = 50,000 in 14 s instead of 167 s
(benchmarks/results/grouped_primal_start.md).

A DC step's shifted groups (WeightedRobustMSVM's truncation: one variable of a truncated
group in [-cap, 0], the others in [0, cap], the cap 0) start from it too, though their
Newton steps are cut far more often (t = 0.02-0.2, 90-150 steps a solve at n = 5,000 against
10-20 unshifted).  Not through a wrong smoothing: the gradient and Hessian match central
differences (relative 1e-9), Newton's minimum matches cvxpy + Clarabel's of the smoothed
objective (tests/test_grouped_primal_start.py), and centring the smoothing at the box's
lower corner instead (the unshifted group plus a linear term) gives the same steps.  The
cause is a zigzag: a truncated group's linearized loss is c max(f_o - f_j*, 0) between its
class j* and another class o, flat on both sides of a band of width mu c, so the Newton
matrix holds no curvature for it; the direction, nearly the same step after step, is cut
where 10-40 such groups cross their band, and the next step sends most of them back (150
steps changed the pattern of 433 groups, one of them 60 times), from the previous DC step's
solution as much as from zero.  Levenberg-Marquardt damping and the union of the last two
free sets both added steps; a longer continuation, from mu = 0.3 / max|bound|
(``SHIFTED_FIRST_MU_SHARE``), halves them.  With the start the shifted steps still cost
several times less than on dual coordinate descent (benchmarks/results/
grouped_primal_start.md, section "The DC-shifted steps").

A DC step of such a dual also chooses its linearization on the smoothed primal
(`smoothed_dc_start`, called by msvm/_dc.py): the continuation from zero, each stage but the
last relinearized at its iterate whenever its Newton steps converge (`_Relinearizer`: a
group at most RELINEARIZE_MAX_CHANGES times a stage), its last linearization and dual point
handed to the DC loop, whose solve of that step starts from the point at the last stage's mu
(`primal_start`'s warm try, WARM_MAX_STEPS) and usually certifies it in one or two Newton
steps.  make_classification n = 20,000: 3 DC steps and 18.4 s CPU instead of 35-72 steps and
135-214 s.  Tried and not kept (benchmarks/results/grouped_primal_start.md): relinearizing
before every Newton step, only at the last stage, at every stage including the last (24.6 s),
only at mu >= 0.01 / max|bound| (more DC steps), a warm start at the last stage's mu
from the step's function (30-150 steps, not converged: the zigzag again), one change per
group and stage, five relinearizations per stage, and freezing the groups that changed
pattern twice (at their dual point, the intercepts ran off along the flat pieces; as
quadratics, their dual values left the boxes).

Above ``msvm._plan.PRIMAL_MAX_UNKNOWNS`` unknowns (d + 1) k (1,000 Nystroem components at
k = 5: 5,005) the Newton matrix is not formed: the curvature is kept as its k slot blocks
of (d + 1)^2 and the direction solved on them with the slot sums held at zero, the Newton
direction itself for one-slot terms (the per-class hinge duals), conjugate gradients with
products through X preconditioned by it for two-slot ones (msvm/_newton_cg.py, the "slot
route"; one-slot terms take it from ``PRIMAL_SLOT_MIN_UNKNOWNS``, where it costs less than
the dense factorization).  One chain of weighted refits at n = 20,000 with 1,000 Nystroem
components: every level certified at once after 9-18 Newton steps, 28.6 s against 60.4 s
of dual coordinate descent (26-312 epochs a level) with no start
(benchmarks/results/probability_scale.md, round 12).

The per-term passes (values, slot sums, line-search derivatives and their slopes, the changed
free terms, the dual point) run compiled on the problem's compact layout
(msvm/_core/_smoothed.pyx), and the slot sums are mapped back by X^T chunk by chunk of
samples: a Newton step keeps two (n, k) arrays and a byte per dual variable, never a float
per dual variable.  The gradient's pass also lists the terms that entered or left the free
set (the Hessian's update reads the terms no second time), and the exact line search takes
safeguarded Newton steps on its piecewise-linear derivative; its first pass keeps the terms
whose piece can change up to its step (at most the memory of one (n, k) array), and the
later evaluations read those alone.  Every solve on explicit features runs BLAS on one
thread (``msvm._sequence.DualSequence``).

A probability refit's late starts (TargetedLocalMSVM's grid points on their held samples)
solve primals of 8-28 unknowns, where a Newton step's cost is the Python around NumPy and
SciPy calls, not flops.  ``LEAN_SMALL_STEPS`` trims it with the same iterates bit for bit:
the Newton matrix's slot means by ufunc reductions and its constant I (x) 11^T / k formed
once per shape (`newton_matrix`), the Cholesky factorization and solve by LAPACK directly
(`_cholesky_solve`), a change set that fits one chunk of rows gathered and scaled at once
(`_add_small_blocks`).  One S1 probability fit's late starts: median 3.2 -> 2.2 ms CPU a
start; the probability fit 0.90x (S1) and 0.67x (S2, one fit a side)
(benchmarks/results/probability.md section 9j, "Round 18, later").
"""

import functools

import numpy as np

from ._capped_terms import CappedLine, CappedTerms, curvature_sum
from ._core._smoothed import SmoothedTerms
from ._products import centered_slots, chunk_rows, rows_times, transposed_times

# Which fits start from the smoothed primal: msvm/_plan.py (``primal_start_applies``).
NEWTON_MAX_ITER = 150
# the smoothing stops at mu = TARGET_SHARE TOL_FLOOR / max bound even when tol is smaller
TOL_FLOOR = 1e-6
# the exact line search stops when the derivative is within this fraction of its start
LINE_RTOL = 1e-9
# evaluations of the line search's derivative allowed per step (two or three suffice)
LINE_MAX_EVALS = 60
# terms per chunk of samples when the Hessian's changed terms are listed
CHUNK_TERMS = 1 << 18
# the last stage's mu: its dual point violates the exact KKT conditions by at most
# TARGET_SHARE tol (margin units) through the smoothing, and by GRAD_SHARE tol through the
# remaining gradient, so that the solver can certify it as it is (0.9 rather than 0.5: far
# fewer Newton steps; benchmarks/results/tuned_constants.md)
TARGET_SHARE = 0.9
GRAD_SHARE = 0.05
# the first stage's mu times max|bound|: stages at 1 and 0.1 / bound only re-formed free sets
# that later stages discard (benchmarks/results/tuned_constants.md)
FIRST_MU_SHARE = 0.03
# the same for a DC step's shifted groups (lower bounds below zero; see the module note):
# their truncated groups zigzag across the kinks between two classes' pieces, and a longer
# continuation from a smoother problem halves the Newton steps (make_classification n =
# 5,000, d = 20, k = 5, 23 DC steps: 92-157 steps a solve at 0.03, 56-116 at 0.3)
SHIFTED_FIRST_MU_SHARE = 0.3
# a dual whose samples' boxes differ by more than BALANCE_MIN_RATIO (a probability chain's
# weighted refits) is smoothed with bands alike (``_balanced``): each sample's variables
# rescaled by its box ratio to this power (0: off, one mu for all terms as before).  At 4,
# the level t = 0.18 (box ratio 5.6) of the linear kernel's chains (d = 5, k = 5, C = 30,
# 1,000 samples: a calibration fold's) was not certified at once (KKT residual 0.63
# against 0.27 at every other level) and took 201 epochs; from 10 every level was, for
# every class.  Not understood; measured.
BALANCE_MIN_RATIO = 10.0
BALANCE_POWER = 0.5
# whether a balanced (weighted refit's) start from a warm start takes the steepest-descent
# step before its Newton steps, as a start from zero does (``_continuation``).  From the
# neighbouring level's solution it only moves the iterate off a point whose free pattern is
# nearly the solution's: one chain, n = 20,000, 200 Nystroem components (CPU, one process,
# twice each): 110 Newton steps and 3.39-3.46 s with it, 92 steps and 2.83-2.88 s without,
# every level certified at once either way
BALANCED_WARM_DESCENT = False
# whether a balanced (weighted refit's) start on a float32 X (an approximate kernel's features)
# computes each Newton step's dF = X s in single precision (``SmoothedPrimal.step_values``;
# the gradient's X^T U too with SINGLE_GRADIENT), from SINGLE_STEPS_MIN_TOL up: F drifts
# from X V + b by the rounding of the steps (about 1e-7 of their size), far below the
# refits' tolerance; the dual point the solver certifies is read from F either way
SINGLE_STEPS = True
SINGLE_STEPS_MIN_TOL = 1e-2
# whether such a start (``single_steps``) also maps the gradient's slot sums back in single
# precision, X^T U as float32 products over row blocks of ``chunk_rows`` (each block's sum in
# single precision, the blocks added in double; ``SmoothedPrimal.mapped_back``) instead of
# each float32 block converted to float64 first: at n = 200,000 with 200 features the
# conversion was a third of the gradient's pass (cProfile of one chain: ``astype`` 1.96 of
# the 5.56 s of X^T U).  The gradient then carries the rounding of the float32 sums (about
# 1e-6 of the sums of |x_i| |u_i|), far below the Newton steps' tolerance at the refits' tol;
# the dual point the solver certifies is read from F either way
SINGLE_GRADIENT = True
# whether a dual whose samples' boxes differ by at most BALANCE_MIN_RATIO (a probability
# chain's upper levels, t = 0.42 and 0.18, box ratios 2.4 and 5.6) is started as a balanced
# one without its rescaling (``_balanced`` returns it as it is): from a warm start no
# steepest-descent step first, and the single-precision steps and gradient
WEIGHTED_AS_BALANCED = True
# the Newton steps a DC step's shifted groups may take at the last stage's mu from a warm
# start (`primal_start`) before the continuation from zero takes over
WARM_MAX_STEPS = 10
# the times a group's linearization may change within one stage of a smoothed DC start
# (`smoothed_dc_start`) before it keeps its side for the rest of that stage (1: 44-77 s at
# n = 20,000 against 24.6 s, both relinearizing the last stage too)
RELINEARIZE_MAX_CHANGES = 2
# a stage whose mu would lie within this factor above the target's is replaced by the target
# stage: the longer last stage costs less than one more stage (tuned_constants.md)
LAST_STAGE_SNAP = 2.0
# the stages before the last stop once the gradient norm fell by this factor (or below 1e3
# gtol): they only bring the free pattern near (tuned_constants.md)
STAGE_RTOL = 1e-4
# the damping of the capped primal's Newton matrix (``CappedPrimal._exact_step``): its
# first value (times the matrix's mean diagonal) and the steps that raise or lower it
# the Newton step's small-primal path (a late start's primal has 8-28 unknowns, where a
# step's cost is NumPy's and SciPy's Python layers, not flops): the Newton matrix's slot
# means by ufunc reductions, its constant part formed once per shape, the Cholesky
# factorization and solve by LAPACK directly; the same iterates bit for bit (False: main's
# calls, benchmarks/results/probability.md section 9j, "Round 18, later")
LEAN_SMALL_STEPS = True
DAMP_START = 1e-6
DAMP_BELOW = 1e-2
UNDAMP_ABOVE = 0.5


class SmoothedPrimal:
    """The smoothed primal of a DualProblem on explicit features X (see the module note).

    The iterate is (V, b) with its decision values F = X V + b (n, k); the per-term passes
    (values, slot sums, line-search slopes, the free terms) run compiled on the problem's
    compact layout (``msvm._core._smoothed``), so a Newton step allocates (n, k) and
    (d + 1) k x (d + 1) k arrays only, never one value per dual variable."""

    # whether the Newton directions are solved on the curvature's slot blocks by
    # msvm/_newton_cg.py instead of the dense Newton matrix (``slot_route``)
    slot_route = False
    # whether a step's dF is one single-precision product on a float32 X (``step_values``)
    single_steps = False
    # whether the gradient's X^T U is too (``mapped_back``; set with ``single_steps``)
    single_gradient = False

    def __init__(self, problem, X, slot_route=False):
        self.problem, self.X = problem, X
        self.k, self.kappa = problem.k, problem.kappa
        self.terms = SmoothedTerms(problem)
        self.slot_route, self.products = bool(slot_route), 0
        self._curvature = None      # sum of the free terms' blocks (see `hessian`)
        self._current = False       # whether the curvature is that of the last gradient's F
        ptr = problem.var_ptr
        self._chunks = np.unique(np.concatenate(
            [[0], np.searchsorted(ptr, np.arange(0, ptr[-1], CHUNK_TERMS), side="right") - 1,
             [len(ptr) - 1]])).tolist()
        self._chunk_max = max([0, *np.diff(self._chunks)])

    @property
    def mu(self):
        return self.terms.mu

    @mu.setter
    def mu(self, value):
        self.terms.mu = float(value)

    # ----------------------------------------------------------------- pieces
    def _center(self, V, b):
        """Rows of V and b in range(P) (sum zero over the class slots)."""
        V = centered_slots(V)
        b = b - b.mean() if self.problem.equality else np.zeros(self.k)
        return V, b

    def decision(self, V, b):
        """F = X V + b (n, k), C-contiguous float64."""
        F = np.ascontiguousarray(rows_times(self.X, V), dtype=np.float64)
        F += b
        return F

    def step_values(self, sV, sb):
        """dF = X sV + sb of a Newton step: `decision`, or with ``single_steps`` on a dense
        float32 X one single-precision product (``SINGLE_STEPS``)."""
        X = self.X
        if not (self.single_steps and isinstance(X, np.ndarray) and X.dtype == np.float32):
            return self.decision(sV, sb)
        dF = np.empty((X.shape[0], self.k))
        step = chunk_rows(X.shape[1])
        s32 = np.asarray(sV, dtype=np.float32)
        for start in range(0, X.shape[0], step):
            dF[start:start + step] = X[start:start + step] @ s32
        dF += sb
        return dF

    def value_and_gradient(self, V, b, F, track_free=False):
        """The smoothed objective and its gradient (gV, gb) at (V, b) with values F: the
        slot sums U of the dual point are formed and mapped back by X^T chunk by chunk of
        samples, so no (n, k) array is allocated.  With ``track_free``, the same pass also
        brings the curvature sum up to date at F (`_update_curvature`, without its own
        pass over the terms)."""
        if track_free and self._curvature is None:
            self._reset_curvature()

        def chunk(Uc, start, stop):
            if not track_free:
                return self.terms.value_and_slot_sums(F, Uc, start, stop)
            loss, changes = self.terms.value_sums_and_changes(F, Uc, self._free, start, stop)
            self._add_changes(changes)
            return loss

        result = self._mapped_slot_sums(V, chunk)
        self._current = track_free
        return result

    def pattern_gradient(self, V, b, F):
        """The gradient (gV, gb) at (V, b) with values F of the quadratic model of the free
        pattern the curvature holds (``pattern_slot_sums``): its Newton step goes to the
        solution at the current mu if that pattern is still the solution's."""
        def chunk(Uc, start, stop):
            self.terms.pattern_slot_sums(F, Uc, self._free, start, stop)
            return 0.0

        return self._mapped_slot_sums(V, chunk)[1:]

    def _mapped_slot_sums(self, V, chunk):
        """(penalty + loss, gV, gb) from slot sums U filled chunk by chunk of samples by
        ``chunk(U, start, stop)`` (which returns the chunk's loss) and mapped back by X^T."""
        loss, XtU, gb = 0.0, np.zeros((self.X.shape[1], self.k)), np.zeros(self.k)
        bounds = self._chunks
        U = np.empty((self._chunk_max, self.k))
        for start, stop in zip(bounds[:-1], bounds[1:]):
            Uc = U[:stop - start]
            loss += chunk(Uc, start, stop)
            XtU += self.mapped_back(self.X[start:stop], Uc)
            gb += Uc.sum(axis=0)
        return self._assembled(V, loss, XtU, gb)

    def mapped_back(self, X, U):
        """X^T U (float64) of a block of rows: ``transposed_times``, or with
        ``single_gradient`` on a dense float32 X float32 products over row blocks of
        ``chunk_rows``, each block's (d, k) sum added in double (``SINGLE_GRADIENT``)."""
        if not (self.single_gradient and isinstance(X, np.ndarray) and X.dtype == np.float32):
            return transposed_times(X, U)
        out = np.zeros((X.shape[1], U.shape[1]))
        step = chunk_rows(X.shape[1])
        U32 = U.astype(np.float32)
        for start in range(0, X.shape[0], step):
            out += X[start:start + step].T @ U32[start:start + step]
        return out

    def _assembled(self, V, loss, XtU, gb):
        """(penalty + loss, gV, gb) from the loss, X^T U and the column sums of the slot
        sums U."""
        gV = centered_slots(XtU)
        gb = gb - gb.mean() if self.problem.equality else np.zeros(self.k)
        return 0.5 / self.kappa * float(np.sum(V * V)) + loss, gV + V / self.kappa, gb

    def hessian(self, F):
        """The (generalized) Hessian in the layout of ``_flat`` at the decision values F.

        Every free term v (mu lo_v <= z_v <= mu hi_v; terms at a kink count as free, their
        curvature is what a step meets first) adds (x_i x_i^T) (x) (d_v d_v^T) / mu, with x_i
        extended by 1 for the intercepts.  That sum (times mu) is kept between calls and
        updated by the terms that entered or left the free set (`_update_curvature`), then
        projected by P on the slot axes.  The penalty adds I / kappa on the V rows;
        I (x) 11^T / k (the directions P removes, where nothing moves) and a tiny ridge on b
        make it positive definite."""
        self._update_curvature(F)
        return newton_matrix(self._curvature, self.mu, self.X.shape[1], self.kappa,
                             self.problem.equality)

    def _update_curvature(self, F):
        """Bring ``_curvature`` = sum over the free terms of (x_i x_i^T) (x) (d_v d_v^T),
        as (m, k, m, k), up to date at F: add the blocks of the terms that became free and
        subtract those of the terms that left, over chunks of samples of at most
        CHUNK_TERMS terms (so the lists of changed terms stay small).  Nothing to do when
        the last gradient pass tracked the free terms at this F (``_current``)."""
        if self._curvature is None:
            self._reset_curvature()
        elif self._current:
            self._current = False
            return
        bounds = self._chunks
        for start, stop in zip(bounds[:-1], bounds[1:]):
            self._add_changes(self.terms.free_changes(F, self._free, start, stop))

    def _add_changes(self, changes):
        """Add the blocks of the changed terms listed by ``free_changes``."""
        self._n_free += int(np.sum(changes[-1]))
        self._add_blocks(*changes)

    def _reset_curvature(self):
        """Forget the curvature sum: the next Hessian is built from the free terms alone
        (every Newton stage starts so, which also bounds the rounding of the updates)."""
        m, k = self.n_rows, self.k
        # on the slot route the upper triangles of the k slot blocks, each Fortran-ordered
        # (``_add_slot_blocks`` accumulates into them in place)
        self._curvature = (np.zeros((m, m, k), order="F") if self.slot_route
                           else np.zeros((m, k, m, k)))
        self._free = np.zeros(self.problem.n_vars, dtype=np.uint8)
        self._n_free = 0
        self._current = False

    def _add_blocks(self, rows, s1, c1, s2, c2, sign):
        """Add sign_v (x_i x_i^T) (x) (d_v d_v^T) of the listed terms to ``_curvature``: d_v
        has at most two slots, so the sum is taken block by block (slot pair j <= l) over the
        samples with terms there (on the slot route the diagonal pairs j = l only)."""
        if not len(rows):
            return
        k = self.k
        keys, weights = [s1 * k + s1], [sign * c1 ** 2]
        two = np.flatnonzero(s2 >= 0)
        if len(two):
            t1, t2 = s1[two], s2[two]
            keys += [t2 * k + t2, np.minimum(t1, t2) * k + np.maximum(t1, t2)]
            weights += [sign[two] * c2[two] ** 2, sign[two] * c1[two] * c2[two]]
            rows = np.concatenate([rows, rows[two], rows[two]])
        keys, weights = np.concatenate(keys), np.concatenate(weights)
        if self.slot_route:
            keep = keys // k == keys % k
            keys, weights, rows = keys[keep], weights[keep], rows[keep]
        n = self.X.shape[0]
        # the weight of every (slot pair, sample) cell, the cells sorted by slot pair
        cells, inverse = np.unique(keys.astype(np.int64) * n + rows, return_inverse=True)
        w = np.bincount(inverse, weights=weights)
        pairs, starts = np.unique(cells // n, return_index=True)
        if (LEAN_SMALL_STEPS and not self.slot_route
                and len(cells) <= chunk_rows(self.n_rows)):
            self._add_small_blocks(cells, w, pairs, starts)
            return
        H4 = self._curvature
        for key, lo, hi in zip(pairs, starts, [*starts[1:], len(cells)]):
            j, m = divmod(int(key), k)
            if self.slot_route:
                self._weighted_gram(cells[lo:hi] - key * n, w[lo:hi], H4[:, :, j])
                continue
            B = self._weighted_gram(cells[lo:hi] - key * n, w[lo:hi])
            H4[:, j, :, m] += B
            if j != m:
                H4[:, m, :, j] += B.T

    def _add_small_blocks(self, cells, w, pairs, starts):
        """`_add_blocks`'s loop over the slot pairs when all the changed cells fit in one
        chunk of rows (``LEAN_SMALL_STEPS``): the scaled rows [x_i, 1] sqrt|w| of every
        cell gathered at once, grouped by slot pair and sign (in their order within each
        group), then the same syrk updates as `_weighted_gram`'s on slices of them."""
        from scipy.linalg.blas import dsyrk

        n, k, d, m = self.X.shape[0], self.k, self.X.shape[1], self.n_rows
        kept = np.flatnonzero((w > 0) | (w < 0))
        # 2 (the cell's slot pair) + (its weight < 0), in the order of the pairs
        group = 2 * (np.searchsorted(starts, kept, side="right") - 1) + (w[kept] < 0)
        by_group = np.argsort(group, kind="stable")
        order, group = kept[by_group], group[by_group]
        Xs = np.empty((len(order), m))
        rows = self.X[cells[order] % n]
        Xs[:, :d] = rows.toarray() if hasattr(rows, "toarray") else rows
        Xs[:, d:] = 1.0
        Xs *= np.sqrt(np.abs(w[order]))[:, None]
        bounds = np.searchsorted(group, np.arange(2 * len(pairs) + 1))
        H4 = self._curvature
        for p, key in enumerate(pairs):
            j, o = divmod(int(key), k)
            B = np.zeros((m, m), order="F")
            for sign, lo, hi in ((1.0, bounds[2 * p], bounds[2 * p + 1]),
                                 (-1.0, bounds[2 * p + 1], bounds[2 * p + 2])):
                if hi > lo:
                    B = dsyrk(sign, Xs[lo:hi].T, beta=1.0, c=B, overwrite_c=1)
            B = _symmetric_of_upper(B)
            H4[:, j, :, o] += B
            if j != o:
                H4[:, o, :, j] += B.T

    def _weighted_gram(self, idx, w, out=None):
        """[X, 1]^T diag(w) [X, 1] over the rows idx (or X^T diag(w) X without intercepts),
        gathered in chunks of rows (the temporaries stay within a few CHUNK_ENTRIES).

        The rows of each sign of w are scaled by sqrt|w| and summed by symmetric rank
        updates (BLAS syrk: half the flops of a general product), one triangle only.  With
        ``out`` (m, m, Fortran order) the upper triangle is added to it in place and
        returned as it is (the slot route's blocks)."""
        from scipy.linalg.blas import dsyrk

        d, m = self.X.shape[1], self.n_rows
        B = np.zeros((m, m), order="F") if out is None else out
        step = chunk_rows(m)
        for sign in (1.0, -1.0):
            part = np.flatnonzero(w > 0 if sign > 0 else w < 0)
            for start in range(0, len(part), step):
                sel = part[start:start + step]
                Xs = np.empty((len(sel), m))
                rows = self.X[idx[sel]]
                Xs[:, :d] = rows.toarray() if hasattr(rows, "toarray") else rows
                Xs[:, d:] = 1.0
                Xs *= np.sqrt(np.abs(w[sel]))[:, None]
                # Xs.T is Fortran-ordered (m, rows): its syrk without transposing is
                # Xs^T Xs, accumulated into B's upper triangle
                B = dsyrk(sign, Xs.T, beta=1.0, c=B, overwrite_c=1)
        if out is not None:
            if B is not out:
                out[...] = B
            return out
        if LEAN_SMALL_STEPS:
            return _symmetric_of_upper(B)
        return np.triu(B) + np.triu(B, 1).T

    @property
    def n_rows(self):
        """Rows of the unknown block [V; b^T]: d, plus 1 with unpenalized intercepts."""
        return self.X.shape[1] + (1 if self.problem.equality else 0)

    def _norm(self, gV, gb):
        g = self._flat(gV, gb)
        return float(np.sqrt(g @ g))

    def _flat(self, gV, gb):
        return (np.vstack([gV, gb[None, :]]) if self.problem.equality else gV).ravel()

    def _unflat(self, x):
        T = x.reshape(self.n_rows, self.k)
        d = self.X.shape[1]
        return T[:d], (T[d] if self.problem.equality else np.zeros(self.k))

    # ----------------------------------------------------------------- Newton
    def newton(self, V, b, gtol, max_steps=NEWTON_MAX_ITER, predict=False, rtol=0.0,
               relinearize=None):
        """Newton's method, each step the exact minimizer along the Newton direction, until
        the gradient norm is below gtol or rtol times its start (at most max_steps steps;
        ``self.steps`` counts them).  Returns (V, b, F), F the decision values at (V, b).

        With ``predict`` (after a solve at a larger mu, whose free pattern the curvature
        still holds), the first step is the pattern's Newton step (`pattern_gradient`):
        the terms free at the last solution are likely free at the next, and that step goes
        to the next solution at once when they all are, where a Newton step at the current
        free set (few terms: the last solution's margins are mu times larger than the new
        band) is cut to a tiny step by the terms it meets.

        ``relinearize(F)`` (a DC step's smoothed start, `smoothed_dc_start`) is called where
        the gradient norm meets gtol: when it moves the terms to a new linearization (it
        returns True), the objective and gradient are those of the new problem and the steps
        go on.  ``self.reached`` tells whether the gradient norm met gtol (of the last
        problem)."""
        # two (n, k) arrays live at a time: F (moved along a step in place) and the step's dF
        F = self.decision(V, b)
        model = None
        if predict and self._curvature is not None:
            f, gV, gb = self.value_and_gradient(V, b, F)
            model = self._flat(*self.pattern_gradient(V, b, F))
            self._current = True        # the first Hessian: the last pattern's, not F's
        else:
            self._curvature = None
            f, gV, gb = self.value_and_gradient(V, b, F, track_free=True)
        self.steps, self.reached = 0, False
        gtol = max(gtol, rtol * self._norm(gV, gb))
        for _ in range(max_steps):
            self.steps += 1
            g = self._flat(gV, gb)
            gnorm = float(np.sqrt(g @ g))
            if gnorm <= gtol and relinearize is not None and relinearize(F):
                f, gV, gb = self.value_and_gradient(V, b, F, track_free=True)
                g = self._flat(gV, gb)
                gnorm = float(np.sqrt(g @ g))
            if gnorm <= gtol:
                self.reached = True
                break
            rhs, model = (g, None) if model is None else (model, None)
            step_dir = self._direction(F, rhs)
            sV, sb = self._center(*self._unflat(step_dir))
            slope = float(gV.ravel() @ sV.ravel() + gb @ sb)
            if not slope > 0:
                sV, sb, slope = gV, gb, float(g @ g)
            dF = self.step_values(sV, sb if self.problem.equality else np.zeros(self.k))
            step = self._exact_step(V, sV, F, dF, -slope)
            V1, b1 = V - step * sV, b - step * sb
            dF *= step
            F -= dF                                 # F - step dF, in place
            del dF
            f1, gV1, gb1 = self.value_and_gradient(V1, b1, F, track_free=True)
            # the exact line search along a descent direction lowers f; near the optimum
            # that decrease falls below the rounding of f's sum over all terms (a million
            # samples: about 1e-10 |f|), where the gradient still shrinks: the step is kept
            # while either of them falls
            if not (f1 < f or self._norm(gV1, gb1) < gnorm):
                F = self.decision(V, b)             # neither falls: rounding reached
                break
            V, b, f, gV, gb = V1, b1, f1, gV1, gb1
        return V, b, F

    def _direction(self, F, rhs):
        """The Newton direction (flat) at F for the right-hand side rhs: the dense Newton
        matrix's Cholesky solve, or on the slot route that of msvm/_newton_cg.py (the
        curvature's slot blocks, conjugate gradients where directions have two slots)."""
        from scipy.linalg import cho_factor, cho_solve, LinAlgError, lstsq
        if self.slot_route:
            from ._newton_cg import newton_cg_direction
            self._update_curvature(F)
            return newton_cg_direction(self, rhs)
        H = self.hessian(F)
        if LEAN_SMALL_STEPS and np.isfinite(H).all() and np.isfinite(rhs).all():
            direction = _cholesky_solve(H, rhs)
            if direction is not None:
                return direction
            return lstsq(H, rhs)[0]
        try:
            return cho_solve(cho_factor(H), rhs)
        except LinAlgError:
            return lstsq(H, rhs)[0]

    def dual_point(self, F, out=None):
        """alpha_v(z_v) at F for every variable (``SmoothedTerms.dual_point``)."""
        return self.terms.dual_point(F, out)

    def gradient_step(self, V, b):
        """(V, b) moved to the minimizer along the negative gradient (exact line search)."""
        F = self.decision(V, b)
        _, gV, gb = self.value_and_gradient(V, b, F)
        dF = self.decision(gV, gb if self.problem.equality else np.zeros(self.k))
        s0 = -float(np.sum(gV * gV) + gb @ gb)
        if not s0 < 0:
            return V, b
        t = self._exact_step(V, gV, F, dF, s0)
        return V - t * gV, b - t * gb

    def _exact_step(self, V, sV, F, dF, s0):
        """The minimizer t > 0 of the objective along -(sV, sb) (decision values F - t dF):
        the derivative in t, (t ||sV||^2 - <V, sV>) / kappa - sum_v dz_v alpha_v(z_v - t dz_v),
        is increasing and piecewise linear (the smoothed hinge terms are piecewise quadratic),
        so its root is found by Newton steps on it from t = 1 (exact once on the root's
        piece), kept inside the bracket of the evaluations so far (a false-position step
        where a Newton step leaves it), one pass per evaluation (`_line`).  s0 < 0: the
        derivative at t = 0, -<g, s> (known from the gradient, so it costs no pass)."""
        a, c = float(np.sum(sV * sV)) / self.kappa, float(np.sum(V * sV)) / self.kappa
        tol = LINE_RTOL * abs(s0)
        lo, hi = (0.0, s0, 0.0), (np.inf, np.inf, 0.0)     # (t, derivative, its slope)
        t = 1.0
        evaluate, release = self._line(F, dF)
        try:
            for _ in range(LINE_MAX_EVALS):
                loss_slope, loss_curv = evaluate(t)
                point = (t, t * a - c - loss_slope, a + loss_curv)
                if abs(point[1]) <= tol:
                    return t
                if point[1] < 0:
                    lo = point
                else:
                    hi = point
                if hi[0] - lo[0] <= 1e-14 * hi[0]:
                    return t
                t = _bracketed_newton(point, lo, hi)
            return lo[0] if hi[0] == np.inf else 0.5 * (lo[0] + hi[0])
        finally:
            release()

    def _line(self, F, dF):
        """(evaluate, release): evaluate(t) is the loss part of the line search's derivative
        along -dF from F at step t and its slope, one compiled pass: over all the terms at a
        step beyond the last such pass, which keeps the terms whose piece can change up to
        its step (``keep``), over those alone at a step within it; release() frees them."""
        terms = self.terms

        def evaluate(t):
            if t <= terms.kept_step:
                return terms.kept_line_slope_and_curvature(t)
            return terms.line_slope_and_curvature(F, dF, t, keep=True)

        return evaluate, terms.release_line


class CappedPrimal(SmoothedPrimal):
    """The smoothed primal of a DualProblem with group caps on explicit features X.

    Each capped group is smoothed as a whole (msvm/_capped_terms.py): its dual point is the
    projection of z / mu onto its capped box, its generalized Hessian that projection's
    Jacobian.  The terms are NumPy arrays over all groups, and the Newton matrix is formed
    afresh at each step from the samples with a free term (``curvature_sum``), with no
    pattern step (``newton``'s ``predict`` is ignored)."""

    def __init__(self, problem, X):
        self.problem, self.X = problem, X
        self.k, self.kappa = problem.k, problem.kappa
        self.terms = CappedTerms(problem, 1.0)
        self._curvature = None          # never set: the Hessian is formed at each step
        self._pattern = None            # (free, binding) of the last gradient's point
        self._damping = 0.0             # Levenberg-Marquardt damping (see `_exact_step`)

    def value_and_gradient(self, V, b, F, track_free=False):
        """The smoothed objective and its gradient (gV, gb) at (V, b) with values F; the
        projection's free set and binding caps are kept for `hessian` at the same F."""
        loss, U, self._pattern = self.terms.value_and_slot_sums(F)
        return self._assembled(V, loss, transposed_times(self.X, U), U.sum(axis=0))

    def hessian(self, F):
        """The generalized Hessian at F, the point of the last gradient (see the class
        note)."""
        d = self.X.shape[1]
        curvature = curvature_sum(self.X, *self.terms.sample_curvature(*self._pattern),
                                  self.problem.equality)
        H = newton_matrix(curvature, self.mu, d, self.kappa, self.problem.equality)
        if self._damping > 0:
            H[np.diag_indices_from(H)] += self._damping * float(np.mean(np.diag(H)))
        return H

    def _exact_step(self, V, sV, F, dF, s0):
        """``SmoothedPrimal._exact_step``, with the damping of the next Newton matrices
        adapted to the step taken: a binding group with one free variable has no curvature
        (its cap fixes that variable), so where most groups are so (a warm start of
        AdaptiveWeightedSVM's refit), the Newton matrix is nearly singular in directions
        (the intercepts') along which kinks stop the step at once (t = 1e-8 seen: 114 steps
        for one stage).  A step below DAMP_BELOW multiplies the damping by 10, one above
        UNDAMP_ABOVE divides it by 10."""
        t = super()._exact_step(V, sV, F, dF, s0)
        if t < DAMP_BELOW:
            self._damping = max(10.0 * self._damping, DAMP_START)
        elif t > UNDAMP_ABOVE:
            self._damping = 0.1 * self._damping if self._damping > DAMP_START else 0.0
        return t

    def _line(self, F, dF):
        return CappedLine(self.terms, F, dF), lambda: None

    def dual_point(self, F, out=None):
        """The dual point (the projection at F) for every variable, into ``out`` if given."""
        alpha = self.terms.dual_point(F)
        if out is None:
            return alpha
        out[:] = alpha
        return out


def newton_matrix(curvature, mu, d, kappa, equality):
    """The Newton matrix ((d + 1) k or d k square) of the smoothed primal from the curvature
    sum (m, k, m, k) of its free terms (see ``SmoothedPrimal.hessian``): divided by mu,
    projected by P on both slot axes, plus I / kappa on the V rows, I (x) 11^T / k and a tiny
    ridge on b.  Shared by the in-memory fit and the chunked one (msvm/_dask.py), whose
    curvature is a sum over chunks."""
    m, k = curvature.shape[:2]
    H4 = curvature / mu
    H4 -= _slot_mean(H4, 1)                      # P on both slot axes
    H4 -= _slot_mean(H4, 3)
    H = H4.reshape(m * k, m * k)
    if LEAN_SMALL_STEPS:
        H.reshape(-1)[:d * k * (m * k + 1):m * k + 1] += 1.0 / kappa
        H += _slot_means_matrix(m, k)
    else:
        H[np.arange(d * k), np.arange(d * k)] += 1.0 / kappa
        H += np.kron(np.eye(m), np.full((k, k), 1.0 / k))
    if equality:
        top = max(float(np.max(np.abs(np.diag(H)))), 1.0)
        H[np.arange(d * k, m * k), np.arange(d * k, m * k)] += 1e-10 * top
    return H


def _symmetric_of_upper(B):
    """The symmetric matrix of B's upper triangle, B's strict lower triangle zero (syrk's
    output into zeros): B + B^T with B's own diagonal (the same bits as np.triu(B) +
    np.triu(B, 1).T: the off-diagonal sums add zeros)."""
    out = B + B.T
    np.fill_diagonal(out, np.diagonal(B))
    return out


def _slot_mean(H4, axis):
    """The mean of H4 (m, k, m, k) over the slot axis ``axis``, kept as a length-1 axis:
    ``np.mean``'s sum and division without its Python layers with ``LEAN_SMALL_STEPS``
    (the same rounding: the same pairwise sum, divided by k)."""
    if not LEAN_SMALL_STEPS:
        return H4.mean(axis=axis, keepdims=True)
    total = np.add.reduce(H4, axis=axis, keepdims=True)
    total /= H4.shape[axis]
    return total


@functools.lru_cache(maxsize=32)
def _slot_means_matrix(m, k):
    """I_m (x) 11^T / k (read-only, kept per shape): the directions P removes, added to the
    Newton matrix (the same entries as ``np.kron``'s, formed once)."""
    out = np.kron(np.eye(m), np.full((k, k), 1.0 / k))
    out.flags.writeable = False
    return out


def _cholesky_solve(H, rhs):
    """H^-1 rhs by LAPACK's potrf and potrs on the upper triangle, the routines and
    arguments ``scipy.linalg.cho_factor`` and ``cho_solve`` call (so the same bits) without
    their checks (the caller checked H and rhs finite); None where H is not positive
    definite."""
    from scipy.linalg.lapack import dpotrf, dpotrs
    c, info = dpotrf(H, lower=0, clean=0, overwrite_a=0)
    if info != 0:
        return None
    x, info = dpotrs(c, rhs, lower=0, overwrite_b=0)
    return x if info == 0 else None


def _newton_root(point):
    """The root of the tangent at point = (t, derivative, its slope) (inf without slope)."""
    t, s, h = point
    return t - s / h if h > 0 else np.inf


def _bracketed_newton(point, lo, hi):
    """The next point of the line search, each of point, lo, hi a (t, derivative, slope)
    (lo's derivative < 0 < hi's): the Newton step from the point just evaluated when it
    lands strictly inside (lo, hi); else the one from the bracket's other end (the
    derivative is often convex, flat while few terms are free and steep after, where a
    Newton step from the left overshoots and one from the right does not); else the
    bracket's geometric midpoint (its midpoint when lo > hi / 100; hi / 100 from lo = 0),
    as the derivative is as often concave, steep from t = 0 on as the terms at their kinks
    enter the free set and flat once they cross it, with roots down to 1e-3: halving took
    up to 12 evaluations there; doubling lo while nothing is known on the right."""
    for candidate in (point, lo if point is hi else hi):
        nxt = _newton_root(candidate)
        if lo[0] < nxt < hi[0]:
            return nxt
    if hi[0] == np.inf:
        return 2.0 * max(lo[0], 1.0)
    if lo[0] > 0.01 * hi[0]:
        return 0.5 * (lo[0] + hi[0])
    return np.sqrt(lo[0] * hi[0]) if lo[0] > 0 else 0.01 * hi[0]


def primal_start(problem, X, W, mu0, tol, diag, max_steps, out=None):
    """A dual start (alpha, mu) from the smoothed primal (see the module note).

    ``W`` (d, k): the current weights X^T U of the row source (the warm start, or zeros);
    ``mu0`` (k): the current multiplier (intercept estimate -mu0); ``diag``: the squared
    norms of the rows of X; ``max_steps``: the Newton steps allowed over all stages (the
    fit's max_iter); ``out``: an (n_vars,) array to hold the start (or None).  mu stops at
    TOL_FLOOR: below it the start gains nothing the dual solver cannot do from there, and
    the smoothed problem only grows stiffer.  BLAS runs on the caller's threads: the
    DualSequence of a fit limits them to one (``DualSequence._blas_threads``).

    A DC step's shifted groups with a warm start (``_warm_shifted``: the previous step's
    function, or the point of `smoothed_dc_start`) are first tried at the last stage's mu
    from it, at most WARM_MAX_STEPS Newton steps; the continuation from zero follows only
    where that did not reach the gradient tolerance.
    """
    primal, V, b, target, gtol = _smoothed_setup(problem, X, W, mu0, tol, diag)
    balanced = _balanced(problem, tol)
    if balanced is not None:
        primal, target, scale = _new_primal(balanced[0], X), balanced[1], balanced[2]
        primal.single_steps = SINGLE_STEPS and tol >= SINGLE_STEPS_MIN_TOL
        primal.single_gradient = primal.single_steps and SINGLE_GRADIENT
        V, b, F = _continuation(primal, balanced[0], V, b, target, gtol, max_steps,
                                descend_first=BALANCED_WARM_DESCENT)
        alpha = primal.dual_point(F, out)
        alpha *= scale
        return alpha, np.ascontiguousarray(-b)
    if _warm_shifted(problem, W):
        primal.mu = target
        Vw, bw, F = primal.newton(V, b, gtol, min(WARM_MAX_STEPS, max_steps))
        if primal.reached:
            return primal.dual_point(F, out), np.ascontiguousarray(-bw)
        max_steps -= primal.steps
    if len(problem.cap):
        # the capped primal starts from zero: a warm start's weights are those of the last
        # dual clipped into the new boxes (AdaptiveWeightedSVM's refit), a function the
        # Newton steps leave slowly (n = 20,000: 92 steps from it, 32 from zero)
        V, b = np.zeros_like(V), np.zeros_like(b)
    V, b, F = _continuation(primal, problem, V, b, target, gtol, max_steps)
    alpha = primal.dual_point(F, out)
    return alpha, np.ascontiguousarray(-b)


def _balanced(problem, tol):
    """The dual with each sample's variables rescaled so that its terms' smoothing bands are
    alike, for samples whose boxes differ in size by more than ``BALANCE_MIN_RATIO`` (a
    probability chain's refits: one class at weight 1/t up to 1,000); None otherwise.

    With one mu for all terms, the band mu (hi_v - lo_v) of a term grows with its sample's
    weight, and the target mu (``TARGET_SHARE tol / max|bound|``) is set by the heaviest
    samples: the terms of weight 1 are smoothed 1/t times more narrowly than the tolerance
    needs, and the Newton steps are cut at their kinks (8 steps at t = 0.42 to 133 at t =
    0.001 on one chain, n = 20,000, 200 Nystroem components).  Substituting a_v = s_i a'_v
    (s_i = r_i ** ``BALANCE_POWER``, r_i the sample's box width over the smallest) scales
    the sample's terms (lin, directions) by s_i and its box by 1 / s_i: the same dual, whose
    smoothed primal has the band of a term divided by s_i^2.  Returns (the rescaled dual,
    its target mu: TARGET_SHARE tol / max_v (width_v / s_v^2), the smoothing's bound on the
    KKT violation in the original margins; the scale of every variable), the dual point of
    the rescaled problem times the scale being the original's (feasible; the equalities are
    the same).  Without group caps only.
    """
    if len(problem.cap) or problem.n_vars == 0 or BALANCE_POWER == 0:
        return None
    lo, hi = problem.expanded_bounds()
    ptr = problem.var_ptr
    starts = ptr[:-1][np.diff(ptr) > 0]
    width = np.zeros(problem.n_samples)
    width[np.diff(ptr) > 0] = np.maximum.reduceat(hi - lo, starts)
    positive = width > 0
    if not np.any(positive):
        return None
    ratio = np.where(positive, width / width[positive].min(), 1.0)
    if ratio.max() <= BALANCE_MIN_RATIO:
        if not (WEIGHTED_AS_BALANCED and ratio.max() > 1.0):
            return None
        # boxes that differ, within BALANCE_MIN_RATIO: the dual as it is, started as the
        # balanced ones are (WEIGHTED_AS_BALANCED)
        return problem, TARGET_SHARE * max(tol, TOL_FLOOR) / problem.max_abs_bound(), 1.0
    scale = (ratio ** BALANCE_POWER)[problem.sample_of_var()]
    _, coef1, _, coef2 = problem.expanded_directions()
    balanced = problem.replace(coef1=coef1 * scale, coef2=coef2 * scale,
                               lin=problem.expand("lin") * scale, lo=lo / scale, hi=hi / scale)
    widest = float(np.max(np.maximum(np.abs(lo), np.abs(hi)) / scale ** 2))
    return balanced, TARGET_SHARE * max(tol, TOL_FLOOR) / widest, scale


def _new_primal(problem, X):
    """The smoothed primal of ``problem`` on X: capped (``CappedPrimal``) with group caps,
    else a ``SmoothedPrimal``, on the slot route (msvm/_newton_cg.py) where
    ``msvm._plan.newton_slot_route`` says so (above ``PRIMAL_MAX_UNKNOWNS`` unknowns
    (d + 1) k, where the dense Newton matrix would be formed and factored, and for one-slot
    terms from ``PRIMAL_SLOT_MIN_UNKNOWNS``)."""
    if len(problem.cap):
        return CappedPrimal(problem, X)
    from ._plan import newton_slot_route
    return SmoothedPrimal(problem, X, newton_slot_route(problem, X.shape[1]))


def _warm_shifted(problem, W):
    """Whether ``problem`` is a DC step's shifted capped dual with a nonzero warm start W."""
    return (len(problem.cap) > 0 and bool(np.any(problem.expand("lo") < 0))
            and bool(np.any(np.asarray(W) != 0)))


def _smoothed_setup(problem, X, W, mu0, tol, diag):
    """(primal, V, b, target mu, gtol) of a smoothed-primal start from the weights W and the
    multiplier mu0 (see `primal_start`)."""
    primal = _new_primal(problem, X)
    V, b = primal._center(-problem.kappa * np.asarray(W, dtype=np.float64),
                          -np.asarray(mu0, dtype=np.float64))
    bound = problem.max_abs_bound()
    tol = max(tol, TOL_FLOOR)
    target = TARGET_SHARE * tol / bound
    # the dual solver's scores are those of alpha(z), V - kappa g_V and P c = g_b: a
    # gradient below gtol keeps their effect on the margins and equalities under
    # GRAD_SHARE tol
    gtol = GRAD_SHARE * tol * min(1.0, bound) / (
        problem.kappa * np.sqrt(max(np.max(diag), 1e-300)) + 1.0)
    return primal, V, b, target, gtol


def _continuation(primal, problem, V, b, target, gtol, max_steps, relinearize=None,
                  descend_first=True):
    """The mu continuation of the smoothed-primal start from (V, b) down to ``target``:
    returns (V, b, F) of its last stage (``relinearize``: of every stage before the last,
    see `newton`; each stage may move each group again; the last stage solves the last
    linearization as it is, so that the step's solve certifies its point at once).  A
    steepest-descent step comes first from zero, and from a warm start with
    ``descend_first`` (see ``BALANCED_WARM_DESCENT``)."""
    bound = problem.max_abs_bound()
    shifted = len(problem.cap) and bool(np.any(problem.expand("lo") < 0))
    primal.mu = (SHIFTED_FIRST_MU_SHARE if shifted else FIRST_MU_SHARE) / bound
    # at the usual start V = 0 every term sits at its kink and would count as free: a
    # steepest-descent step first halves the terms the first Hessian sums
    # (benchmarks/results/tuned_constants.md)
    if descend_first or not np.any(V != 0):
        V, b = primal.gradient_step(V, b)
    while True:
        primal.mu = max(primal.mu, target)
        last = primal.mu <= target
        # the stages before the last only bring the active pattern near: loosely; each
        # stage after the first starts from the last solution's free pattern (100k
        # samples, d = 50, k = 10, C = 0.01: 61 -> 44 Newton steps, Reinforced)
        V, b, F = primal.newton(V, b, gtol if last else 1e3 * gtol,
                                min(NEWTON_MAX_ITER, max_steps), predict=True,
                                rtol=0.0 if last else STAGE_RTOL,
                                relinearize=None if last else relinearize)
        max_steps -= primal.steps
        if last or max_steps <= 0:
            return V, b, F
        primal.mu *= 0.1
        if primal.mu < LAST_STAGE_SNAP * target:
            primal.mu = target
        if relinearize is not None:
            relinearize.new_stage()


def smoothed_dc_start(base, shift, linearize, X, W, mu0, tol, diag, max_steps):
    """The DC iteration of a truncated model's grouped dual on its smoothed primal: a DC
    step's start that also chooses the step's linearization.

    ``base``: the unshifted capped dual; ``shift``: the linearization at the current
    function (``linearize(base, F)`` gives it at decision values F, msvm._dc); W, mu0: the
    current function's weights and multiplier (their shapes; the start is from zero); the
    rest as in `primal_start`.  The continuation from zero moves the boxes to the
    linearization at its iterate whenever the Newton steps of a stage before the last
    converge (`_Relinearizer`), the stage going on from there; the last stage solves the
    last linearization (relinearized there too, its Newton steps ran to their limit of 150
    at n = 20,000: 24.6 s against 18.4 s).  Returns (shift, alpha, mu): the last
    linearization and the dual point of that shifted problem (feasible for it), its
    multiplier.  The DC loop solves that problem to tol from there: this start changes
    which convex steps the loop takes, never how each is certified.
    """
    from ._problem import shifted
    problem = shifted(base, shift)
    # from zero, as the capped primal starts (a warm start at the last stage's mu from the
    # step's function took 30-150 Newton steps and did not converge: the zigzag)
    primal, V, b, target, gtol = _smoothed_setup(problem, X, np.zeros_like(W),
                                                 np.zeros_like(mu0), tol, diag)
    relinearize = _Relinearizer(primal, base, shift, linearize)
    V, b, F = _continuation(primal, problem, V, b, target, gtol, max_steps, relinearize)
    return relinearize.shift, primal.dual_point(F), np.ascontiguousarray(-b)


class _Relinearizer:
    """The boxes of a CappedPrimal moved to the DC linearization at its iterate (called by
    ``newton`` where its steps converged; see `smoothed_dc_start`).

    A group whose linearization changed RELINEARIZE_MAX_CHANGES times keeps it for the rest
    of the stage: the groups between two classes' pieces would otherwise be sent back and
    forth (the zigzag of the module note)."""

    def __init__(self, primal, base, shift, linearize):
        self.terms, self.base, self.linearize = primal.terms, base, linearize
        shape = self.terms.lo.shape
        lo, hi = base.expanded_bounds()
        self.lo0, self.hi0 = lo.reshape(shape), hi.reshape(shape)
        self.cap0 = np.asarray(base.cap, dtype=np.float64)
        self.restart(shift)

    def restart(self, shift):
        """Back to the linearization ``shift`` (no group changed yet)."""
        self.shift = np.array(shift, dtype=np.float64)
        self.changes = np.zeros(len(self.cap0), dtype=np.int64)
        self._move()

    def new_stage(self):
        """A new stage of the continuation: every group may move again."""
        self.changes[:] = 0

    def _move(self):
        s = self.shift.reshape(self.lo0.shape)
        self.terms.set_bounds(self.lo0 - s, self.hi0 - s, self.cap0 - s.sum(axis=1))

    def __call__(self, F):
        new = np.asarray(self.linearize(self.base, F)[0], dtype=np.float64)
        shape = self.lo0.shape
        moved = np.any(new.reshape(shape) != self.shift.reshape(shape), axis=1)
        moved &= self.changes < RELINEARIZE_MAX_CHANGES
        if not np.any(moved):
            return False
        self.changes[moved] += 1
        s, n = self.shift.reshape(shape), new.reshape(shape)
        s[moved] = n[moved]
        self._move()
        return True
