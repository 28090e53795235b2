"""The exact finishing step of msvm/_finish.py extended to duals with group caps.

The grouped margin dual (WeightedRobustMSVM, AdaptiveWeightedSVM: variables alpha_{ijj'} with
caps sum_{j'} alpha_{ijj'} <= C w_i U[y_i, j]) is, at a large C, nearly a linear program: its
optimum is -C times the least hinge loss plus a term of lower order, and the quadratic part
(a kernel of low rank, e.g. the linear kernel in d = 1 or 2) is flat along most directions.
There the first-order solvers crawl along the flat faces of the caps: measured on
WeightedRobustMSVM with a utility matrix, k = 4, n = 5, d = 1, linear, C = 1e5, the SMO's
first augmented-Lagrangian round ran all 10,000 epochs with its inner violation stuck near
7 (free variables with gradients of 3-6 margin units in groups far below their caps), its
dual value still 27 % above the optimum (-9.4e5 against -1.29e6, which scales as -12.9 C):
each pair or single step is exact along its own two coordinates, but the descent directions
of an almost linear objective run across many variables of several samples at once, so the
steps zig-zag along a face, their length bounded by the face's curvature of rounding size.

`finish_grouped` solves the dual exactly by a primal active-set method, as `finish_dual` does
(Nocedal and Wright 2006, ch. 16.5), with the caps as further constraints: a cap whose group
sum reached it is active, one more equality on the free set (the sum of the group's free
variables stays put: the step is projected onto those moves by subtracting each such group's
mean, an orthogonal projection).  Each step works with a pivoted Cholesky factor K ~ L L^T of
the kernel (grown on demand; the linear kernel in d dimensions needs d columns), so that the
free block of the Hessian is B B^T with B of m x r (k - 1), and one SVD of that size gives
either a direction of zero curvature along which the objective falls (the QP on the free set
is unbounded: followed to the first bound, as a simplex step is) or the Newton step to the
minimizer nearest to the current point (the equalities met first, the curvature minimized on
their null space).  The step is cut at the first box bound or inactive cap it meets (which
joins the active set); after a full Newton step the reduced gradients
r_v = z_v + <d_v, s> + u_g(v) of the fixed variables are checked (u_g: an active cap's
multiplier, the mean over its free members, or with every member fixed the least u_g >= 0 its
members at the lower bound allow), and the fixed variables violating by at least half the
worst are freed, or the active cap with the most negative multiplier released.  Upper bounds
that a cap implies are dropped (in the margin dual every hi_v is its cap): freeing one of two
copies of the same constraint let nothing move and the loop cycled.  At a degenerate vertex
the multipliers of equalities that the free set does not span are a choice, and a release may
let no step move (every step of length 0): such releases are marked stuck and skipped
(STUCK_IF_STILL; marking those after which the worst violation did not fall stuck ordinary
releases and ended far from the optimum), and when only stuck ones are left every violation
is released at once (up to MAX_RESETS times).  The result is a proposal certified by the
compiled solver's own stopping rule, as for `finish_dual`; one BLAS thread (the products are
m x r k).

Measured (CPU time on a shared machine at load 10-15): the n = 5 case above converges in 101
epochs (0.02-0.06 s); blobs with 3 classes, n = 5,000, d = 2, linear, WeightedRobustMSVM
(truncation=None) at C = 1e2 ... 1e8 converges in 3.2-3.4 s at every C (before: max_iter
at every C, relative gap up to 1); benchmarks/results/grouped_large_c.md.

The factor's formulation is cheap only while the factor is narrow.  An RBF kernel's factor
has about one column per free sample: make_blobs n = 1,000, d = 3, RBF at C = 1e6 and 1e8
(WeightedRobustMSVM(truncation=None), AdaptiveWeightedSVM) gave 143-192 free variables at
every budget stop and factors of rank 170-310, so that each step's SVD (m x p (k - 1)) took
about 4.6 ms, its work model (m (p k + k)^2 a step, MAX_WORK) ran out after 95-165 steps
(0.5 s) where the loop needed 800-850, every finishing step returned nothing, and the
solver crawled: 35 s CPU to converge at C = 1e6, max_iter after 89 s at C = 1e8 (finishing
steps 2.7 s of them).  Such steps are therefore solved on the free set's m x m block
(`_Route`, msvm/_grouped_face.py: the bordered KKT system with the active caps, updated by
Schur complements as variables and caps change), restored onto the constraints exactly
(`_onto_constraints`), with the free samples' scores updated from the held kernel columns
(`_Scores.on_rows`) and all scores at the checks (`_Scores.from_held`): the same fits
converge in 2-3 s (C = 1e6) and 4-10 s (C = 1e8) CPU, the first finishing step settling
in 1-3 s; benchmarks/results/rbf_large_c.md.

At n = 4,000 (make_blobs, RBF, C = 1e6, WeightedRobustMSVM(truncation=None)) that face did
not settle: from 815 free variables at the first budget stop its loop freed every violation
above half the worst at once (up to 1,762 free), took 3,645 steps and 261 factorizations of
730 rows on average (up to 428 of them active caps' multiplier rows), ran out of FACE_FLOPS
with 2,526 violations left, and returned nothing; so did every later stop (13-14 s each,
thrown away), and the fit stopped at max_iter after 499 s.  WestonWatkinsMSVM's box-
constrained face on the same data settles from 934 free variables in 3,454 steps whose
systems hold 200 rows on average (6.3 s).  Hence (round 13): at most RELEASE_BATCH
violations are released at a check, the active caps' among them (CAP_BATCH), as
msvm._finish releases bounds; where the budgets run out the point of the last check is
proposed (RETURN_REACHED), as msvm._finish does; and the face is solved on the moves that
keep the active caps (`MoveFace`: no multiplier row per cap, m - caps + k - 1 rows).  From
that stop the step settles in 5,500-5,800 steps, 3.4-3.7e9 flops, 16.5-18.3 s CPU, and the
fit converges in 17-22 s.  At C = 1e8 the loop needed more than 30,000 steps from the stops
at 100-800 epochs (its worst violation falling to about 1 and jumping back by 1e2-1e5), and
the fit stopped at max_iter.

Round 14: the loop was not monotone.  From the stop at 100 epochs of make_blobs n = 4,000,
C = 1e8, 835 of its 10,000 steps raised the dual objective (by up to 38 times its size: it
ended at +3.2e12 from -2.4e7), and at n = 600, C = 1e6, 13 of 303, by up to 4.7 times:
bordered solves with tens of changes on a face of condition about 1 / REG drifted, and the
step along the drifted direction, cut at a bound, was kept, as was the face's removal of the
start's class-sum residual (23 at n = 600) through its regularized system, along directions
of zero curvature.  Which way the loop then went hung on rounding, hence its sensitivity to
RELEASE_BATCH.  Now the face is solved for the descent step alone (SPLIT_RESIDUAL: the
residual removed by the least change, as the factor's steps do) and a face step that raised
the objective is undone and solved again on a fresh factorization (DESCENT_GUARD; the test
is exact for a quadratic: the mean of the gradients before and after times the move, the
gradients being the free samples' exact scores).  The n = 4,000, C = 1e8 start settles in
5,062 steps (264 undone), 15-17 s, and the fits converge at n = 4,000 for C = 1e4, 1e6 and
1e8; benchmarks/results/rbf_large_c.md, Round 14.  A free set going back and forth across
FACE_MIN, one release onto the face fixed again at once by a step of length 0 there and the
factor's step going on below it, made a loop crawl (2,729 steps where 100 sufficed): the
face is now left only below FACE_LEAVE free variables.  Between two exact updates the
free samples' scores are updated through the kernel entries among them gathered once
(`_Block`).

Round 18 (the convergence matrix's odd cells, benchmarks/results/grouped_cost_matrix.md).
At a degenerate vertex of a nearly linear dual (AdaptiveWeightedSVM, linear, n = 3,000,
C = 0.01) a batch of releases may be sent straight back by steps of length 0 and a full step
of rounding size on the old face; that step counted as a move, so the same release came back
at every check until the step budget ran out (13.5 s of a 13.6 s fit).  A release is now
stuck where alpha did not move since it (STILL_BY_POINT), and the loop proposes its point
after STALL_CHECKS stuck checks in a row or FLAT_CHECKS checks whose worst violation did not
fall (caps of multipliers -1.4e3 released and refilled for thousands of steps).  On the
cost-matrix duals (WeightedRobustMSVM with U[y, j] > 0 off the diagonal, RBF) the face's
steps run along directions of nearly zero curvature, and steps solved on fresh factors raise
the objective by up to 8e-2 of sum |z_v dx_v|: the descent guard, meant for bordered solves
that drift, refactored and got the same step back (n = 1,000, C = 100: 217 of 1,461 face
steps, 10.1 s where the same steps without the guard took 6.7 s); guarding only borders of
10 changes or more cut such a step's factorizations from 230 to 61 but left one fit
unconverged at max_iter (make_blobs n = 300, k = 4, RBF, a cost matrix, C = 50): measured,
not kept.
"""

import warnings

import numpy as np
import scipy.linalg

from ._thread_pools import one_blas_thread
from ._finish import MAX_SCALE, ColumnsOverBudget, _Columns, _Layout, _slot_basis, _snapped
from ._grouped_face import GroupedFace, MoveFace

# active-set iterations (each one a least-squares solve on the free set): at most
# STEPS_PER_VAR per dual variable plus MIN_STEPS, and never more than MAX_STEPS ...
MAX_STEPS = 10000
# (the most measured in a loop that settled: 3.7 per variable, 123 steps for 33 variables;
# a loop that cycles, as on a linear kernel whose entries reach 1e301 with bounds near
# 1e-289, spent 10,000 steps of 1.7 ms on 16 variables in each of its 7 calls, 30 s for an
# 8-sample fit that stopped at max_iter either way)
STEPS_PER_VAR = 20
MIN_STEPS = 100
# ... and their work, the sum of m p^2 + STEP_WORK (m free variables, p columns of the
# factored Hessian, STEP_WORK for each step's fixed cost; a few seconds on one core)
MAX_WORK = 4e9
STEP_WORK = 2e5
# the largest rank of the kernel's factor (columns fetched)
MAX_RANK = 400
# the steps on the free set's m x m block (msvm/_grouped_face.py): used from FACE_MIN free
# variables where the factor is as wide as the free set, within FACE_FLOPS flops (1e10 ran
# out in four of six finishing steps at make_blobs n = 2,000, RBF, C = 1e6, 131-195 free
# variables, 3-4 s each, and the fit took 90 s CPU; with 1e11 they settled, 3-7 s each,
# and the fit took 26 s)
USE_FACE = True
# the face's steps on the moves that keep the active caps' sums (`MoveFace`: a system of
# m - caps + k - 1 rows) instead of with a multiplier row per active cap (`GroupedFace`:
# m + caps + k - 1 rows)
ELIMINATE_CAPS = True
FACE_MIN = 50
# ... and left for the factor's steps only where the free set falls below FACE_LEAVE (FACE_MIN:
# at make_blobs n = 600, seed 5, C = 1e6, RELEASE_BATCH 50, the free set went back and forth
# across FACE_MIN, each check releasing one variable onto the face and a step of length 0
# there fixing it again, and the loop took 2,729 steps where batches of 25 and 100 took 97)
FACE_LEAVE = 25
FACE_FLOPS = 1e11
# the factor stops where every residual diagonal is below this fraction of max K_ii
FACTOR_RTOL = 1e-13
# singular values of the free set's constraint-and-curvature matrix below this fraction of
# the largest are zero
SVD_RTOL = 1e-10
# a gradient whose part outside that matrix's range exceeds this fraction of it makes the
# QP on the free set unbounded: the step follows that part (zero curvature) to a bound
DESCENT_RTOL = 1e-8
# times every violation left (all of them stuck) is released at once before the loop gives
# its point to the solver
MAX_RESETS = 3
# a release is stuck where the steps after it moved nothing (a degenerate vertex: every step
# of length 0); False: where the worst violation at the next check was not lower, which
# marked ordinary releases stuck (an active-set method lowers the objective, not the worst
# violation, from step to step) and, after MAX_RESETS, returned points far from the optimum
# (make_blobs n = 2,000, RBF, C = 1e8: 73 variables and 8 caps stuck, worst violation 4.2,
# relative gap 0.07, which the solver did not certify at any of its budget stops)
STUCK_IF_STILL = True
# ... and "nothing moved" is read on the point, not on the steps: a release is stuck where
# alpha at the next check is within STILL_RTOL of alpha at the release (False: where no step
# after it had t > 0 and a nonzero x, so that a full step of rounding size on the old face,
# after zero-length steps had fixed every release again, counted as a move and the same
# release came back at every check: AdaptiveWeightedSVM, make_blobs n = 3,000, linear,
# C = 0.01, 1,426 checks releasing the same 23 variables and 27 caps, 8,556 steps of
# length 0, the step budget of 10,000 spent twice, 13.5 s of the fit's 13.6 s)
STILL_BY_POINT = True
STILL_RTOL = 1e-12
# checks in a row whose previous release was stuck after which the loop proposes the point
# it reached (None: no such stop).  At a degenerate vertex of a nearly linear dual every
# batch of violations released may be sent straight back (same case with STILL_BY_POINT:
# batch after batch of about 50 marked stuck, 45,227 releases, the step budget of 10,000
# spent in one call, 9.6 s), where the solver alone converges in 0.06 s
STALL_CHECKS = 5
# ... and after FLAT_CHECKS checks in a row whose worst violation stayed above FLAT_SHARE of
# the least one seen (None: no such stop).  Same case, another random_state (3): from a
# proposal that left the solver at a KKT residual of 690, each of three finishing steps
# released 50 active caps of multipliers -1.4e3 (-3.9e5) at every check, the next steps
# filled them again at length 0 and moved 1-2 variables by 1e-4 of their step, and the same
# violation came back: 2,740-3,890 steps, 4-5 s each, 14.4 s of the fit's 14.4 s
FLAT_CHECKS = 50
FLAT_SHARE = 0.999
# the factor's steps restored onto the active caps and equalities (`_onto_constraints`), as
# the face's are: the SVD's basis holds the rows that the caps' projection zeroed only to
# rounding, which the step's 1 / S^2 on the smallest kept singular values (SVD_RTOL) blew up
# (AdaptiveWeightedSVM, n = 700, RBF, C = 1e6: 2.8e21 on the only free member of an active
# cap, whose sum went 7.3e5 over the cap; the loop went on to a proposal with relative gap
# 1.0 that the solver did not certify)
PROJECT_FACTOR_STEP = True
# step components below this fraction of the step's largest are rounding (set to 0)
NOISE = 1e-9
# the fixed variables released together: those violating by this share of the worst ...
RELEASE_SHARE = 0.5
# ... at most RELEASE_BATCH of them, the most violating (None: all of them), the active
# caps whose multipliers violate among them (CAP_BATCH; False: the most violating cap alone,
# and only where it is the worst violation).  make_blobs, RBF, WeightedRobustMSVM
# (truncation=None), CPU time of the fit: n = 4,000, C = 1e6: None max_iter (the face did
# not settle), 50 16.9-22.3 s, 100 15.8 s; n = 2,000, C = 1e8: None 6.6 s, 50 8.1-9.1 s,
# 100 6.6 s; but n = 4,000, C = 1e4: 50 9.8-10.6 s (one finishing step, 1,924 steps), 100
# 61.6-64.5 s (three, the first two ending at the step budget unsettled)
RELEASE_BATCH = 50
CAP_BATCH = True
# where the budgets (FACE_FLOPS, the steps) run out, the point of the last check (a full
# step that settled its face: every step since the start lowered the objective) is the
# proposal, as msvm._finish returns it (False: nothing is proposed)
RETURN_REACHED = True
# the face's step solved with the equalities' residual left out, that residual then
# removed by the least change (`_onto_constraints`), as the factor's step does (False: the
# face's regularized system removes it, which ran its step along directions of zero
# curvature, |x| about the residual / REG: from make_blobs n = 600, RBF, C = 1e6's first
# budget stop, with a class-sum residual of 23, the first 32 steps were cut at t of 0.01,
# fixed one variable each, removed 2 of the 23 and raised the objective by up to 4.7 times
# its size)
SPLIT_RESIDUAL = True
# a face step that raised the objective by more than RISE_RTOL of sum |z_v dx_v| is undone
# and solved again on a fresh factorization (a bordered solve with tens of changes on an
# ill-conditioned face drifts: from that stop 13 of 303 steps raised the objective, by up to
# 1.7 times its size, each time after 27-58 bordered changes)
DESCENT_GUARD = True
RISE_RTOL = 1e-6
# the face's score updates between two exact ones through the entries among the samples
# free at the first of them, gathered once (`_Block`; False: the entries between the free
# and the moved samples gathered at every step)
BLOCK_ROWS = True
# kernel columns read at a time for an exact update of the scores
CHUNK = 256
# a group whose sum is within this fraction of (1 + cap) of its cap is full (the compiled
# solver's CAP_RTOL)
CAP_RTOL = 1e-12


class _Groups:
    """The group structure of a problem: members of each group, their caps."""

    def __init__(self, problem):
        self.of = problem.expand("group")
        self.cap = problem.cap
        grouped = self.of >= 0
        self.vars = np.flatnonzero(grouped)
        self.ids = self.of[self.vars]

    def sums(self, alpha):
        """The sum of every group's variables."""
        return np.bincount(self.ids, weights=alpha[self.vars], minlength=len(self.cap))

    def full(self, alpha):
        """Whether every group's sum is at its cap (within rounding)."""
        return self.sums(alpha) >= self.cap - CAP_RTOL * (1.0 + np.abs(self.cap))

    def rates(self, x, idx):
        """The change of every group's sum along a step x of the variables idx."""
        g = self.of[idx]
        grouped = g >= 0
        return np.bincount(g[grouped], weights=x[grouped], minlength=len(self.cap))


def _implied_upper_bounds(lay, groups):
    """Drop the upper bounds that a cap implies (hi_v >= cap - the other members' lower
    bounds: in the margin dual every hi_v is its group's cap): a member at such a bound
    sits on a vertex where its bound and the cap are the same constraint twice, and freeing
    the one while the other holds would not let it move (the active set would cycle)."""
    g = groups.of
    grouped = g >= 0
    lo_sum = np.bincount(g[grouped], weights=lay.lo[grouped], minlength=len(groups.cap))
    implied = np.zeros(len(g), dtype=bool)
    gg = g[grouped]
    implied[grouped] = lay.hi[grouped] >= groups.cap[gg] - (lo_sum[gg] - lay.lo[grouped])
    lay.hi = np.where(implied, np.inf, lay.hi)


class _Factor:
    """A pivoted Cholesky factor K ~ L L^T of the kernel (n, r), its rank grown on demand
    until every sample asked for has a residual diagonal below ``rtol`` max K_ii
    (FACTOR_RTOL here; a linear kernel in d dimensions needs d columns; the factor never
    needs more than the samples of the free variables).  ``cols.block(samples)`` gives the
    kernel columns K[:, samples].  Also the factor of the kernel-factor start
    (msvm/_kernel_factor.py), grown over all samples with a looser ``rtol``."""

    def __init__(self, cols, diag, rtol=FACTOR_RTOL):
        self.cols, self.diag = cols, np.asarray(diag, dtype=np.float64)
        self.resid = self.diag.copy()
        self._buf = np.zeros((len(self.diag), 0))
        self.L = self._buf
        self.floor = rtol * max(float(self.diag.max(initial=0.0)), 1e-300)
        self.too_wide = False

    def rows(self, samples, max_rank=MAX_RANK):
        """The factor's rows of ``samples``, pivots added until their residual is small;
        None when that would take more than ``max_rank`` columns (``too_wide`` is then
        set) or K is not positive."""
        self.too_wide = False
        while len(samples):
            j = samples[int(np.argmax(self.resid[samples]))]
            if self.resid[j] <= self.floor:
                break
            if self.L.shape[1] >= max_rank:
                self.too_wide = True
                return None
            col = self.cols.block(np.array([j]))[:, 0]
            if not abs(col[j] - self.diag[j]) <= 1e-9 * max(abs(col[j]), 1.0):
                return None                        # the diagonal is not this kernel's
            piv = (col - self.L @ self.L[j]) / np.sqrt(self.resid[j])
            self._add_column(piv, max_rank)
            self.resid = np.maximum(self.resid - piv ** 2, 0.0)
            self.resid[j] = 0.0
        return self.L

    def _add_column(self, piv, max_rank):
        """Append the pivot column to L, in a buffer whose width doubles (at most
        ``max_rank``) so that growing to rank r copies O(n r), not O(n r^2), entries."""
        r = self.L.shape[1]
        if r == self._buf.shape[1]:
            grown = np.zeros((len(self.diag), max(min(2 * r, max_rank), r + 1, 8)))
            grown[:, :r] = self.L
            self._buf = grown
        self._buf[:, r] = piv
        self.L = self._buf[:, :r + 1]


class _Scores:
    """The scores F = K U(alpha) along the active set's steps: between exact updates (from
    the kernel columns of every sample moved since, `exact`) each step is added through the
    factor, L (L^T dU) in O((n + m) r k), where the exact update would read a kernel column
    of every moved sample (O(n m) a step)."""

    def __init__(self, lay, columns, alpha, F):
        self.lay, self.cols = lay, columns
        self.base, self.F0, self.F = alpha.copy(), F, F.copy()
        self.block = None

    def step(self, dx, D, Lf, L):
        """Add the step dx of variables with directions D (m, k) and factor rows Lf."""
        self.F = self.F + L @ (Lf.T @ (dx[:, None] * D))

    def gradient(self, idx, D):
        """z on the variables idx (directions D): the dual's gradient Q alpha - a."""
        lay, F = self.lay, self.F
        Fi = F[lay.sample[idx]]
        return lay.kappa * (np.einsum("mk,mk->m", D, Fi) - D.sum(axis=1) * Fi.mean(axis=1)) \
            - lay.lin[idx]

    def exact(self, alpha):
        """The exact scores of alpha, from the kernel columns of the samples moved since the
        last exact update, CHUNK at a time and not kept (there may be thousands)."""
        samples, dU = self.lay.slot_change(alpha, self.base)
        changed = np.any(dU != 0.0, axis=1)
        samples, dU = samples[changed], dU[changed]
        for at in range(0, len(samples), CHUNK):
            part = slice(at, at + CHUNK)
            self.F0 = self.F0 + (np.asarray(self.cols(samples[part]), dtype=np.float64)
                                 @ dU[part])
        self.base, self.F = alpha.copy(), self.F0.copy()
        return self.F

    def on_rows(self, alpha, cols, rows):
        """The scores of alpha exact on the samples ``rows`` (the others left as they are),
        from the held columns ``cols`` (an `msvm._finish._Columns`): the entries between
        them and the samples moved since the last exact update (the face's steps need the
        free samples' scores only; a product with all n rows a step, with the held buffer
        compacted to the moved samples, took most of the step's time).  Between two exact
        updates the free set only shrinks (the releases come with them), so that the
        entries among the first call's rows serve every later call (`_Block`, BLOCK_ROWS)
        with a product instead of a gather."""
        samples, dU = self.lay.slot_change(alpha, self.base)
        if not BLOCK_ROWS:
            self.F[rows] = self.F0[rows] + cols.entries(rows, samples) @ dU
            return self.F
        if self.block is None or self.block.base is not self.base \
                or not self.block.holds(rows, samples):
            self.block = _Block(self.base, np.union1d(rows, samples), cols)
        self.F[self.block.rows] = self.F0[self.block.rows] + self.block.times(samples, dU)
        return self.F

    def from_held(self, alpha, cols):
        """The exact scores of alpha from the held columns ``cols`` (an
        `msvm._finish._Columns`) of the samples moved since the last exact update."""
        samples, dU = self.lay.slot_change(alpha, self.base)
        if len(samples):
            self.F0 = self.F0 + cols.block(samples) @ dU
        self.base, self.F = alpha.copy(), self.F0.copy()
        return self.F


class _Block:
    """The kernel entries K[rows][:, rows] among the samples free since an exact update of
    the scores (``base``), gathered once: a step's update of their scores is then one
    product with the moved samples' changes placed in a zero block."""

    def __init__(self, base, rows, cols):
        self.base, self.rows = base, rows
        self.K = cols.entries(rows, rows)

    def holds(self, rows, samples):
        """Whether the block covers ``rows`` and ``samples`` (sorted sample ids)."""
        return bool(np.all(np.isin(rows, self.rows)) and np.all(np.isin(samples, self.rows)))

    def times(self, samples, dU):
        """K[self.rows][:, samples] @ dU."""
        full = np.zeros((len(self.rows), dU.shape[1]))
        full[np.searchsorted(self.rows, samples)] = dU
        return self.K @ full


def _cap_segments(groups, full, idx):
    """The free variables idx in active caps: their positions and, per position, its
    group's segment (a group's variables are contiguous and idx is sorted), with each
    segment's start and size."""
    gid = groups.of[idx]
    active = gid >= 0
    active[active] = full[gid[active]]
    pos = np.flatnonzero(active)
    starts = np.ones(len(pos), dtype=bool)
    starts[1:] = gid[pos[1:]] != gid[pos[:-1]]
    first = np.flatnonzero(starts)
    return pos, np.cumsum(starts) - 1, first, np.diff(np.append(first, len(pos)))


def _project_caps(rows, segments):
    """rows (m, c) projected onto the moves that keep every active cap's sum: the mean over
    each such group's free members subtracted (an orthogonal projection)."""
    pos, seg, first, size = segments
    if len(pos):
        means = np.add.reduceat(rows[pos], first, axis=0) / size[:, None]
        rows[pos] -= means[seg]
    return rows


def _range_basis(W):
    """An orthonormal basis of W's range (singular values above SVD_RTOL of the largest),
    with the SVD's factors on it: (U, S, Vt)."""
    U, S, Vt = np.linalg.svd(W, full_matrices=False)
    r = int(np.sum(S > SVD_RTOL * S[0])) if len(S) and S[0] > 0 else 0
    return U[:, :r], S[:r], Vt[:r]


def _kkt_step(lay, c_eq, z, D, Lf, segments, E):
    """The step on the free variables (directions D, factor rows Lf, gradient z, the
    segments of their active caps): ('newton', x, s) to the minimizer of the QP on the
    free set nearest to the current point (equalities and active caps held, the class sums'
    residual c_eq = E^T c removed), or ('descent', x, 0) along the steepest direction of zero
    curvature (the QP unbounded on the free set: x is followed to the first bound).  Both
    are the limits of the step of the QP with a proximal term delta ||x||^2 / 2 as delta
    goes to 0, which moves a variable freed for its violating reduced gradient into its
    box (Nocedal and Wright 2006, theorem 16.5).  The equalities are met first (x0, the
    least change that removes their residual), the curvature is then minimized on their
    null space N."""
    k, m = lay.k, len(z)
    if m == 0:
        # nothing is free (every variable at a bound): no step; the releases decide
        return "newton", np.zeros(0), np.zeros(k)
    Ed = D @ E
    ne = k - 1 if lay.equality else 0
    B = _project_caps(np.sqrt(lay.kappa) * (Lf[:, :, None] * Ed[:, None, :]).reshape(m, -1),
                      segments)
    Ua, Sa, Vta = _range_basis(_project_caps(Ed[:, :ne].copy(), segments))
    BN = B - Ua @ (Ua.T @ B)                       # N B, N = P_caps - Ua Ua^T
    U, S, Vt = _range_basis(BN)
    g = _project_caps(z[:, None].copy(), segments)[:, 0]
    gN = g - Ua @ (Ua.T @ g)
    descent = U @ (U.T @ gN) - gN
    if np.linalg.norm(descent) > DESCENT_RTOL * np.linalg.norm(z):
        return "descent", descent, np.zeros(k)
    x0 = Ua @ ((Vta @ -c_eq[:ne]) / Sa)
    g = g + B @ (B.T @ x0)
    gN = g - Ua @ (Ua.T @ g)
    x = x0 - U @ ((U.T @ gN) / S ** 2)             # B_N^T y = -a with gN = B_N a, y in range
    grad = g + B @ (B.T @ (x - x0))                 # the free set's gradient at the step
    t = -(Vta.T @ ((Ua.T @ grad) / Sa))            # P_caps (grad + A t) = 0
    s = E[:, :ne] @ t if ne else np.zeros(k)
    return "newton", x, s


def _step_length(alpha, x, idx, lay, groups, full, limit):
    """The largest t <= limit keeping alpha + t x (on idx) in the boxes and under the
    inactive caps; the free positions and the groups it stops at."""
    lo, hi, a = lay.lo[idx], lay.hi[idx], alpha[idx]
    # components at the rounding level of the direction's own size do not block it
    x[np.abs(x) <= NOISE * np.abs(x).max(initial=0.0)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(x > 0, (hi - a) / x, np.where(x < 0, (lo - a) / x, np.inf))
        rate = groups.rates(x, idx)
        slack = np.maximum(groups.cap - groups.sums(alpha), 0.0)
        groom = np.where((rate > 0) & ~full, slack / rate, np.inf)
    t = min(limit, float(room.min(initial=np.inf)), float(groom.min(initial=np.inf)))
    t = max(t, 0.0)
    return t, np.flatnonzero(room <= t), np.flatnonzero(groom <= t)


def _cap_multipliers(r, alpha, lay, groups, full, free):
    """u_g of every active cap (0 elsewhere) from the reduced gradients r without them: minus
    the mean of r over the group's free members (equal after a Newton step), or, with every
    member fixed, the least u >= 0 with r_v + u >= 0 for its members at the lower bound."""
    g = groups.of
    n_groups = len(groups.cap)
    grouped = g >= 0
    on_free = grouped & free
    count = np.bincount(g[on_free], minlength=n_groups)
    mean = np.bincount(g[on_free], weights=r[on_free], minlength=n_groups) / np.maximum(count, 1)
    u = np.zeros(n_groups)
    pick = grouped & (alpha <= lay.lo) & (lay.hi > lay.lo) & ~free
    np.maximum.at(u, g[pick], -r[pick])
    u = np.where(count > 0, -mean, u)
    u[~full] = 0.0
    return u, np.flatnonzero(full & (count > 0))


def _violators(alpha, r, lay, free, fixed_ok, u, rows, bar):
    """The fixed variables and active caps violating by more than bar."""
    viol = np.where(alpha <= lay.lo, -r, np.where(alpha >= lay.hi, r, 0.0))
    viol[free | ~fixed_ok] = 0.0
    return np.flatnonzero(viol > bar), rows[u[rows] < -bar]


def _worst(alpha, r, lay, free, fixed_ok, u, rows):
    """The largest violation of a fixed variable or an active cap's multiplier."""
    viol = np.where(alpha <= lay.lo, -r, np.where(alpha >= lay.hi, r, 0.0))
    viol[free | ~fixed_ok] = 0.0
    return max(float(viol.max(initial=0.0)), float(-u[rows].min(initial=0.0)))


def _worst_violation(alpha, r, lay, free, fixed_ok, rows, u_rows, stuck, stuck_caps):
    """The largest violation of a fixed variable or an active cap's multiplier, and what
    to release: (worst, variables, caps).  The fixed variables and active caps violating by
    at least RELEASE_SHARE of the worst are released together (several at once: where the
    free set does not span every equality, the multipliers of the others are a choice, a
    single freed variable may have no feasible move, and freeing one at a time cycled), at
    most RELEASE_BATCH of them, the most violating (`_most_violating`).  ``stuck``
    (``stuck_caps``): variables (caps) whose release let nothing move (their multipliers are
    a choice at a degenerate vertex), left to the solver."""
    viol = np.where(alpha <= lay.lo, -r, np.where(alpha >= lay.hi, r, 0.0))
    viol[free | ~fixed_ok | stuck] = 0.0
    cap_viol = np.where(stuck_caps[rows], 0.0, -u_rows)
    worst = max(float(viol.max(initial=0.0)), float(cap_viol.max(initial=0.0)))
    if not CAP_BATCH:
        if float(cap_viol.max(initial=0.0)) > float(viol.max(initial=0.0)):
            return worst, np.zeros(0, dtype=np.intp), rows[[int(np.argmax(cap_viol))]]
        cap_viol = np.zeros(0)
    return (worst,) + _most_violating(viol, cap_viol, rows, RELEASE_SHARE * worst)


def _most_violating(viol, cap_viol, rows, bar):
    """The fixed variables and the caps (``rows``, their violations ``cap_viol``) violating
    by at least bar, at most RELEASE_BATCH of them together, the most violating."""
    var = np.flatnonzero(viol >= bar)
    caps = np.flatnonzero(cap_viol >= bar)
    if RELEASE_BATCH is not None and len(var) + len(caps) > RELEASE_BATCH:
        both = np.concatenate([viol[var], cap_viol[caps]])
        keep = np.zeros(len(both), dtype=bool)
        keep[np.argpartition(-both, RELEASE_BATCH - 1)[:RELEASE_BATCH]] = True
        var, caps = var[keep[:len(var)]], caps[keep[len(var):]]
    return var, rows[caps]


class _Releases:
    """The checks after full Newton steps: which fixed variables or active caps to release,
    and the bookkeeping of releases that did not help (`_worst_violation`)."""

    def __init__(self, fixed_ok, n_groups):
        self.fixed_ok = fixed_ok
        self.stuck = np.zeros(len(fixed_ok), dtype=bool)
        self.stuck_caps = np.zeros(n_groups, dtype=bool)
        self.last, self.released, self.resets = np.inf, None, 0
        self.cap_released = np.zeros(0, dtype=np.intp)
        self.moved = True
        self.at_release = None
        # checks in a row whose previous release was stuck
        self.stalled = 0
        # checks in a row whose worst violation was not below FLAT_SHARE of the least one
        self.flat, self.least = 0, np.inf

    def step_taken(self, t, x):
        """Note a step of length t along x (after the releases: whether anything moved)."""
        self.moved = self.moved or (t > 0.0 and bool(np.any(x)))

    def _stuck(self, alpha, r, lay, free, u, rows):
        """Whether the last release did not help (see STUCK_IF_STILL)."""
        if self.released is None:
            return False
        if STUCK_IF_STILL:
            if STILL_BY_POINT and self.at_release is not None:
                return _still(alpha, self.at_release)
            return not self.moved
        return _worst(alpha, r, lay, free, self.fixed_ok, u, rows) >= 0.999 * self.last

    def given_up(self):
        """Whether the loop should propose the point it reached: STALL_CHECKS stuck checks in
        a row, or FLAT_CHECKS checks whose worst violation did not fall."""
        return ((STALL_CHECKS is not None and self.stalled >= STALL_CHECKS)
                or (FLAT_CHECKS is not None and self.flat >= FLAT_CHECKS))

    def settled(self, alpha, r, lay, free, full, u, rows, bar):
        """Whether the point is optimal within bar (or only stuck violations are left after
        MAX_RESETS releases of all of them); otherwise release (free / full updated)."""
        ok = self.fixed_ok
        if self._stuck(alpha, r, lay, free, u, rows):
            self.stuck[self.released] = True
            self.stuck_caps[self.cap_released] = True
            self.stalled += 1
        else:
            self.stalled = 0
        viol, release, caps = _worst_violation(alpha, r, lay, free, ok, rows, u[rows],
                                            self.stuck, self.stuck_caps)
        self.flat = 0 if viol < FLAT_SHARE * self.least else self.flat + 1
        self.least = min(self.least, viol)
        if viol <= bar:
            if not (self.stuck.any() or self.stuck_caps.any()) or self.resets >= MAX_RESETS:
                return True
            # only stuck violations are left: release every violation at once
            self.resets, self.released = self.resets + 1, None
            self.stuck[:], self.stuck_caps[:] = False, False
            free_vars, caps = _violators(alpha, r, lay, free, ok, u, rows, bar)
            free[free_vars], full[caps] = True, False
            return False
        self.last, self.released, self.cap_released = viol, release, caps
        self.moved = False
        self.at_release = alpha.copy() if STILL_BY_POINT else None
        free[release] = True
        full[caps] = False
        return False


def _still(alpha, before):
    """Whether alpha is within STILL_RTOL (of its largest entry) of ``before``."""
    scale = max(float(np.abs(alpha).max(initial=0.0)), 1e-300)
    return float(np.abs(alpha - before).max(initial=0.0)) <= STILL_RTOL * scale


def finish_grouped(problem, alpha, F, columns, tol, diag):
    """Solve a dual with group caps exactly by active-set steps from ``alpha``.

    Parameters
    ----------
    problem : msvm._problem.DualProblem
        The dual (with group caps).
    alpha : ndarray of shape (n_vars,)
        The solver's iterate, within the boxes and caps.
    F : ndarray of shape (n, k)
        Its scores K U(alpha).
    columns : callable
        ``columns(samples)``: the kernel columns K[:, samples], shape (n, len(samples)).
    tol : float
        The solve's tol; the reduced gradients of the result are within tol / 100 of
        optimality (margin units) when it succeeds.
    diag : ndarray of shape (n,)
        The kernel's diagonal (the pivots of its factor; its largest entry times the largest
        bound must stay below MAX_SCALE, see `msvm._finish.finish_dual`).

    Returns
    -------
    (alpha, mu) or None
        The proposed dual point and its equality multiplier, or None when the step does not
        apply (no caps, a free set above MAX_FREE, products near overflow) or does not settle.
    """
    max_diag = float(np.max(diag, initial=0.0))
    if problem.var_group is None or problem.n_vars == 0 \
            or not problem.max_abs_bound() * max(max_diag, 1.0) <= MAX_SCALE:
        return None
    # one BLAS thread: the products are small (m x p), where a second thread waiting for a
    # busy core spent 0.2 s of CPU time per SVD of a 400 x 100 matrix (load 15 on 2 cores)
    with np.errstate(all="ignore"), warnings.catch_warnings(), one_blas_thread():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        try:
            found = _active_set(problem, alpha, F, columns, tol, diag)
        except (np.linalg.LinAlgError, ColumnsOverBudget):
            return None
    if found is None or not (np.all(np.isfinite(found[0])) and np.all(np.isfinite(found[1]))):
        return None
    return _within_caps(problem, *found)


def _within_caps(problem, alpha, s):
    """(alpha, s) with every group's rounding excess over its cap taken off its largest
    member, so that the proposal is feasible as the solver requires."""
    groups = _Groups(problem)
    lo = problem.expand("lo")
    excess = groups.sums(alpha) - groups.cap
    for g in np.flatnonzero(excess > 0):
        members = groups.vars[groups.ids == g]
        v = members[int(np.argmax(alpha[members] - lo[members]))]
        alpha[v] = max(alpha[v] - excess[g], lo[v])
    return alpha, s


def step_budget(n_vars):
    """The active-set iterations one call of `finish_grouped` may take on a dual of n_vars
    variables: a loop that has not settled by then cycles on rounding, and the solver goes on
    from its own iterate (the step proposes nothing)."""
    return min(MAX_STEPS, MIN_STEPS + STEPS_PER_VAR * int(n_vars))


def _active_set(problem, alpha, F, columns, tol, diag):
    """The loop of `finish_grouped`: (alpha, s) or None.  Each step is solved through the
    kernel's factor (`_kkt_step`) while it is narrow, and on the free set's m x m block
    (`msvm._grouped_face.GroupedFace`) once the free set holds at least FACE_MIN variables
    and the factor is as wide as it (p (k - 1) >= m) or needs more than MAX_RANK columns;
    the face's steps update the scores exactly from its held columns."""
    lay, groups, alpha, scores = _start(problem, alpha, F, columns)
    cols = _Columns(columns, problem.n_samples)
    factor = _Factor(cols, diag)
    D_all = lay.directions(np.arange(problem.n_vars))
    fixed_ok = lay.hi > lay.lo
    free = (alpha > lay.lo) & (alpha < lay.hi)
    full = groups.full(alpha)
    E = _slot_basis(lay.k)
    Face = MoveFace if ELIMINATE_CAPS else GroupedFace
    face = Face(lay, cols, E, groups.of, D_all) if USE_FACE else None
    route, releases = _Route(factor, face), _Releases(fixed_ok, len(full))
    reached = None
    for _ in range(step_budget(problem.n_vars)):
        idx = np.flatnonzero(free)
        D, c_eq = D_all[idx], E.T @ problem.class_sums(alpha)
        chosen = route.choose(lay, idx)
        if chosen is None or (face is not None and face.flops > FACE_FLOPS):
            return reached
        on_face, L = chosen
        segments, z = _cap_segments(groups, full, idx), scores.gradient(idx, D)
        if on_face:
            kind, (t, x, s) = "newton", _face_move(face, scores, alpha, idx, z, D, c_eq,
                                                   (lay, groups, free, full, segments, E))
        else:
            Lf = L[lay.sample[idx]]
            kind, x, s = _factor_step(lay, c_eq, z, D, Lf, segments, E)
            old = alpha[idx]
            t = _take_step(alpha, x, idx, lay, groups, free, full,
                           1.0 if kind == "newton" else np.inf)
            if t is not None:
                scores.step(alpha[idx] - old, D, Lf, L)
        if t is None:
            return None
        releases.step_taken(t, x)
        if t < 1.0 or kind != "newton":
            continue
        exact = scores.from_held(alpha, cols) if on_face else scores.exact(alpha)
        r = lay.gradient(exact) + lay.shift(s)
        u, rows = _cap_multipliers(r, alpha, lay, groups, full, free)
        grouped = groups.of >= 0
        r[grouped] += u[groups.of[grouped]]
        if on_face and np.abs(r[idx]).max(initial=0.0) > 0.01 * tol and face.refine():
            continue                # the face's solve went astray: step again from here
        reached = (alpha.copy(), s) if RETURN_REACHED else None
        if releases.settled(alpha, r, lay, free, full, u, rows, 0.01 * tol):
            return alpha, s
        if releases.given_up():
            return reached
    return reached


def _face_move(face, scores, alpha, idx, z, D, c_eq, where):
    """One step on the face (``where``: lay, groups, free, full, segments, E), taken
    (`_take_step`) with the free samples' scores updated exactly: (t, x, s).  The face is
    solved for the descent step with the equalities' residual c_eq left out (SPLIT_RESIDUAL)
    and that residual removed by the least change (`_onto_constraints`).  A step that raised
    the objective (`_rise`: its bordered solve drifted) is undone and solved again on a fresh
    factorization (DESCENT_GUARD), once."""
    lay, groups, free, full, segments, E = where
    rows = np.unique(lay.sample[idx])
    caps = _active_caps(groups, full, idx)
    for attempt in range(2 if DESCENT_GUARD else 1):
        x, s = face.solve(idx, z, 0.0 * c_eq if SPLIT_RESIDUAL else c_eq, caps)
        x = _onto_constraints(x, D @ E[:, :face.ne], c_eq[:face.ne], segments)
        old, was_free, was_full = alpha[idx].copy(), free.copy(), full.copy()
        t = _take_step(alpha, x, idx, lay, groups, free, full, 1.0)
        if t is None:
            return None, x, s
        face.steps += 1
        if t == 0.0:
            return t, x, s                  # nothing moved: the scores hold
        scores.on_rows(alpha, face.cols, rows)
        if attempt or not DESCENT_GUARD or face.base is None \
                or not _rise(z, scores.gradient(idx, D), alpha[idx] - old):
            return t, x, s
        face.undone += 1
        alpha[idx], free[:], full[:] = old, was_free, was_full
        scores.on_rows(alpha, face.cols, rows)
        face.base = None                    # refactor: the next solve starts afresh
    return t, x, s


def _rise(z0, z1, dx):
    """Whether the move dx, between points with gradients z0 and z1, raised the objective
    by more than rounding: the change (z0 + z1) dx / 2 is exact for a quadratic."""
    change = 0.5 * float((z0 + z1) @ dx)
    return change > RISE_RTOL * float(np.abs(z0) @ np.abs(dx))


def _start(problem, alpha, F, columns):
    """The loop's start: the layout (upper bounds that a cap implies dropped), the groups,
    alpha snapped onto the bounds it is within rounding of, and its exact scores."""
    lay, groups = _Layout(problem), _Groups(problem)
    start = np.asarray(alpha, dtype=np.float64)
    alpha = _snapped(lay, start, problem.max_abs_bound())
    scores = _Scores(lay, columns, start, np.asarray(F, dtype=np.float64))
    scores.exact(alpha)
    _implied_upper_bounds(lay, groups)
    return lay, groups, alpha, scores


def _take_step(alpha, x, idx, lay, groups, free, full, limit):
    """Move alpha (on idx) along x as far as `_step_length` allows, up to limit; the
    variables and caps it stops at become fixed and active (free, full updated).  The
    length taken, or None where no bound stops an unbounded step."""
    t, stops, capped = _step_length(alpha, x, idx, lay, groups, full, limit)
    if not np.isfinite(t):
        return None
    alpha[idx] = np.clip(alpha[idx] + t * x, lay.lo[idx], lay.hi[idx])
    if t < limit:
        hit = idx[stops]
        alpha[hit] = np.where(x[stops] > 0, lay.hi[hit], lay.lo[hit])
        free[hit] = False
        full[capped] = True
    return t


def _factor_step(lay, c_eq, z, D, Lf, segments, E):
    """`_kkt_step`, its x restored onto the active caps and the equalities
    (`_onto_constraints`; a descent step keeps them, a Newton step removes their residual
    c_eq) where PROJECT_FACTOR_STEP is set."""
    kind, x, s = _kkt_step(lay, c_eq, z, D, Lf, segments, E)
    if PROJECT_FACTOR_STEP:
        ne = lay.k - 1 if lay.equality else 0
        x = _onto_constraints(x, D @ E[:, :ne], c_eq[:ne] if kind == "newton"
                              else np.zeros(ne), segments)
    return kind, x, s


def _onto_constraints(x, A, c, segments):
    """The step x with its constraints restored exactly: the least change that keeps every
    active cap's sum (``segments``) and takes the equalities' residual c to zero
    (A^T x = -c).  The face's step runs far along a direction of zero curvature where the
    face QP is unbounded (|x| about 1 / REG times the bounds), and its Schur-updated solves
    hold the constraints only to about 1e-8 of |x|: cut at a bound, that error stayed in the
    equalities and grew from step to step (make_blobs n = 1,000, RBF, C = 1e6: a class-sum
    residual of 35 where the factor's steps left 4e-8)."""
    x = _project_caps(x[:, None].copy(), segments)[:, 0]
    if A.shape[1] == 0:
        return x
    PA = _project_caps(A.copy(), segments)
    w = np.linalg.lstsq(A.T @ PA, -c - A.T @ x, rcond=None)[0]
    return x + PA @ w


class _Route:
    """Which formulation solves each step: the kernel's factor (`_kkt_step`, an SVD of the
    free block's m x p (k - 1) factor: exact where the face QP is singular, cheap where the
    factor is narrow) or the free set's m x m block (``face``, a `GroupedFace`).  The face
    serves once the free set holds FACE_MIN variables and the factor is at least as wide as
    it (it stays while the free set is that large), and at any size where the factor would
    need more than MAX_RANK columns or the factor's steps have spent MAX_WORK (charged
    m (p k + k)^2 + STEP_WORK a step).  Without a face those two end the loop (None)."""

    def __init__(self, factor, face):
        self.factor, self.face = factor, face
        self.on_face, self.work = False, 0.0

    def choose(self, lay, idx):
        """(True, None): step on the face; (False, L): through the factor L; None: stop."""
        m, k = len(idx), lay.k
        if self.face is not None and (self.work > MAX_WORK
                                      or (self.on_face and m >= FACE_LEAVE)):
            return True, None
        # with a face, the factor is grown only while it is narrower than the free set
        wide = -(-m // max(k - 1, 1)) if self.face is not None and m >= FACE_MIN else MAX_RANK
        L = self.factor.rows(lay.sample[idx], min(wide, MAX_RANK))
        if L is not None and self.face is not None and m >= FACE_MIN \
                and L.shape[1] * (k - 1) >= m:
            L = None
        if L is None:
            self.on_face = self.face is not None and (self.factor.too_wide or m >= FACE_MIN)
            return (True, None) if self.on_face else None
        self.work += STEP_WORK + m * (L.shape[1] * k + k) ** 2
        if self.work > MAX_WORK:
            self.on_face = self.face is not None
            return (True, None) if self.on_face else None
        self.on_face = False
        return False, L


def _active_caps(groups, full, idx):
    """The active caps with free members among idx (sorted group ids)."""
    g = groups.of[idx]
    g = g[g >= 0]
    return np.unique(g[full[g]])
