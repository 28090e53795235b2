"""An exact finishing step for duals on which the first-order solvers crawl.

At a large C the dual's box is wide and its Hessian of low rank (linear or low-degree kernels:
rank at most (d + 1) k), so the working-set SMO and coordinate descent move the free
variables by tiny steps along nearly flat directions: measured at n = 60, C = 1e6 (blobs,
3 classes, d = 3), 10,000 epochs leave the objective 1.3-3.5x above the optimum, and 1e6
epochs still 0.9 %.  The iterate's active set (the variables at their bounds) is nearly right
long before its free variables are, and the free set is small (the margin support vectors).

`finish_dual` therefore solves the dual restricted to its free variables exactly, as a
primal active-set method does (Nocedal and Wright 2006, ch. 16.5): with the variables at their
bounds fixed, the equality-constrained QP on the free set F

    minimize   1/2 alpha_F^T Q_FF alpha_F + g_F^T alpha_F     subject to  E^T c(alpha) = 0

(Q_vw = K(x_i(v), x_i(w)) d_v^T M d_w, the k - 1 equalities P c = 0 written with an
orthonormal basis E of range(P), their multiplier t giving the shift s = E t) is one
bordered (KKT) linear system, slightly regularized because Q_FF is singular.  The step to its
solution is cut at the first bound it meets (that variable joins the fixed set); after a full
step, the fixed variables whose reduced gradient z_v + <d_v, s> points into the box are freed,
and the loop repeats.  Each step needs the kernel columns of the free samples only (the
scores F = K U of all samples are updated with them, so the reduced gradients stay exact).

The bordered system is factored once for a base free set and then updated by Schur
complements as variables are fixed and freed (`_FaceSystem`; refactored after REFACTOR
changes), so that a step costs O(m^2) rather than a new O(m^3) factorization.  On RBF
problems at large C the free set holds 1,000-2,500 variables and the active set needs
hundreds of steps (make_blobs n = 2,000, d = 5, C = 1e5: 435 steps from the solver's
iterate at 6,400 epochs, 4.4 s CPU with Schur updates; a fresh factorization per step took
0.5 s a step).  Where the work bound MAX_FLOPS runs out after full steps were taken, the
point reached is returned as the proposal (each step lowers the objective), so that the
solver, and the next finishing step, go on from there.  A released variable that the next
step sends straight back to its bound is not released again until a step moves (the release
cycled otherwise: AngleBasedMSVM, same problem, 1,471 times until MAX_STEPS), and a
Schur-updated face whose full step leaves the free variables' reduced gradients above
tol / 100 is refactored and the step repeated.  With these and the scores updated from the
held columns (`_Scores`), that problem's finishing steps take 4-5 s (ReinforcedMSVM, from
1,248 free variables) and 0.5-4 s (AngleBasedMSVM); the fits converge in 20 s and 30 s CPU
(benchmarks/results/kernel_speed.md). At make_blobs n = 5,000, C = 1e5 the free set holds
4,400-6,200 variables at the early budget stops (above MAX_FREE: not finished) and 1,884 at
6,400 epochs, where MAX_FLOPS ran out after 125 steps; given LAST_CUBES m^3 flops before the
solver's last run the step settles that face (1,131 steps, 21 s CPU) and the fit converges in
83.3 s CPU, 6,401 epochs (before: max_iter, 106.6 s, KKT residual 0.33; kernel_speed_5000.md).

Measured for the free sets above MAX_FREE, and not kept (branch largefree, shared machine, CPU
time). The face there is nearly singular: the RBF kernel of that problem has 2,235 eigenvalues
above 1e-10 of its largest and 3,685 above 1e-13 (of 5,000), so a factor of K_FF is not of low
rank and conjugate gradients on the face meet a condition number near 1e13, while the dense
factorization costs 2-5 s at 5,876 variables (LU at about 50 GFlop/s on one core). With that
factorization and MAX_FREE raised to 8,000, from the solver's iterate at 800 epochs (5,876 free
variables): the Newton step of each face runs 1e7-1e9 times past the first bound, each ratio
step fixed one variable (0.1 s a step; refactorizations every REFACTOR changes took two thirds
of it); replacing the short ratio steps by the best point of the projected Newton path fixed
3-15 variables a step, and with refactorizations after m / 8 changes 3,000 steps took 273 s to
reach 872 free variables, and 800 epochs of the solver later the free set was back at 2,479:
the path's bound hits, decided by nearly flat directions, were not the optimum's active set. At
n = 2,000 (the case above) the projected path gave no gain (25.1 s CPU against the 20.1 s of
kernel_speed.md, another run; the same 3,201 epochs).

Free sets above MAX_FREE before the solver's last run (LLW, i.e. ReinforcedMSVM with
reinforcement 0, at n = 5,000, C = 1e5: 5,581 free variables at 6,400 epochs, 4,461-6,773
at every budget stop of ReinforcedMSVM at C = 1e6, so neither got a finishing step) are
settled on the face regularized by a proximal term, the minimizer of the face QP +
sigma / 2 ||x - x_k||^2 (the same bordered system with sigma added to the diagonal of Q_FF:
well conditioned where sigma is not tiny, so that its steps do not run 1e7-1e9 past the
first bound as the Newton step does).  A cut step is projected onto the box instead, every
variable it pushes out fixed at once and the equalities restored by a least-norm change of
the others (`_projected_step`; step lengths 1, 1/4, 1/16 tried, kept only where the exact
objective falls), else cut at its first bound as before; sigma starts at PROX_START x the
largest diagonal entry and is divided by PROX_SHRINK after PROX_FULL full steps in a row,
down to 0 (the face QP itself).  From that LLW iterate (CPU time, shared machine at load
9-14): sigma = 1e-2 took the free set from 5,581 to 4,759 in about 100 projected steps of
5-90 fixed variables (35 s); at 1e-3 without the shorter step lengths most projections
raised the objective and the steps fell back to one fixed variable (0.3 s each, 4,277 free
after 170 s), with them they went on fixing 2-10 variables a step (4,759 to 2,549 in 90 s,
1,595 free at sigma = 1e-5 after 240 s, still settling).  The whole fit with this step
before its last run converges: 255.8 s CPU, 6,401 epochs, KKT residual 3.1e-6, objective
177,262,903 (before: max_iter, 69.5 s, KKT residual 4.9, objective 575,980,440, 3.25x the
optimum; benchmarks/results/kernel_speed_5000_llw_prox.md).  Its cost is bounded by
PROX_CUBES m^3 flops of factorizations and PROX_STEPS steps.

The settling budgets (LAST_CUBES, the proximal route) were first spent only before the
solver's last run, after 6,400 epochs at the default max_iter, so that the time of a large-C
fit grew with C until its free set settled there.  LAST_CUBES is now given wherever the
finishing step is tried on a large free set (``settle``: the sequence tries it where the
free set shrank since the previous budget stop, and before the last run), so that a fit
whose face up to MAX_FREE settles with it stops there.  The proximal route stays for the
last run (``last``): given at every shrinking stop, it spent more than 250 s CPU on the
7,879 free variables of ReinforcedMSVM n = 10,000, C = 1e5 at 1,600 epochs without
returning (its whole fit takes 318 s), and at n = 5,000, C = 1e6 186 s passed without a
finishing step returning (the fit had stopped at max_iter after 101 s).  Measured at that
change (one BLAS thread, CPU time, shared machine): the proximal steps were made cheaper
where a profile
showed waste (from the LLW iterate above at 3,200 epochs, 5,805 free variables, 100 steps:
20.8 s before, 18.0 s with the first three of these, same free set and objective): the
inverse of the Schur complement is updated by block formulas (`_Border`) instead of a
factorization of it per step, the border is kept in growing row buffers instead of being
stacked again at every step, Q_FF is gathered from the held columns in one pass, the held
columns are compacted to the samples that move (`_Columns.times`), and a rejected projection
restores the scores from a checkpoint instead of a kernel product.

At C = 1e8 (make_blobs n = 2,000, d = 3, RBF) the step from the first budget stop (476 free
variables, ReinforcedMSVM) ran out of MAX_STEPS with 1,114 bounds still violated (largest
reduced gradient 43 against tol / 100): its points were exact on their faces (reduced
gradients of the free variables 7e-7, equalities 1e-6, float64 rows) but their active sets
were far from the optimum's, whose 282 free and 321 upper-bound variables are reached from
zero by thousands of bound changes; the solver went on from them, its free set grew again,
and the fit stopped at max_iter.  Released one bound a step, the face settled only after
more than 14,500 steps (33 s CPU, the flops ran out first); the RELEASE_BATCH most violating
bounds released at once settle it in 5,114 steps (5.9 s), with LAST_STEPS_PER_FREE steps a
free variable of the start allowed, and the solver certifies the point in one epoch.  The
held columns are kept as rows (K transposed) and a product with the columns of a few
samples gathers their rows: the copies of the whole held block that moved the asked columns
to the front took 38 % of that step's time.

The result is only a proposal: the caller hands it to the compiled solver, whose own stopping
rule (KKT residual and duality gap) certifies it or goes on from it.  Problems with group caps
are left to the solver (None is returned), as are free sets above MAX_FREE variables
without ``settle`` (above PROX_FREE, or PROX_PER_SAMPLE per sample, always) (the
dense system would cost more than the iterations it saves).
"""

import warnings

import numpy as np
import scipy.linalg

# free sets up to FRESH_FREE: a fresh factorization of the bordered system per step (m^3 / 3
# flops), at most SMALL_STEPS steps and SMALL_FLOPS flops (about 0.3 s on one core), None
# when the free set grows past SMALL_FREE.  FRESH_FREE is the size at which SMALL_STEPS fresh
# factorizations fit in SMALL_FLOPS: above it the fresh steps ran out of their flops after
# ten to thirty steps, returned nothing, and the solver crawled on to max_iter (make_blobs
# n = 1,000, d = 3, RBF, C = 1e6-1e8: 426-624 free variables at every budget stop, 5 of 10
# fits of the per-class models stopped at max_iter, KKT residual 2-8); from there up the
# Schur-updated face system below serves (one factorization, O(m^2) a step), and those fits
# converge in 101-201 epochs.  Where the face is settled (``settle``, every try from the
# solver's sequence) the fresh steps get LAST_STEPS_PER_FREE steps per free variable of the
# start, at least SMALL_STEPS, within SMALL_FLOPS (`_system_for`).  SMALL_STEPS alone ran
# out: precomputed linear Gram, make_blobs n = 300, d = 3, cluster_std 2, C = 1e4-1e6
# (ReinforcedMSVM, AngleBasedMSVM): 913-989 steps (4e7 flops) from 135-147 free variables
# to 8 free and 184 at the upper bound, so every try returned nothing and the fits stopped
# at max_iter (3.1-4.1 s CPU, relative duality gap 0.67); now the first try settles the
# face and the fit converges in 101 epochs (0.3 s).  The Schur-updated steps' settling
# budget (at least MAX_STEPS steps and MAX_FLOPS) was tried and not kept: at n = 3,000,
# C = 100 the tries from 28-53 free variables ran 3,000 steps each without settling (the
# optimum has 2,421 variables at the upper bound) and the fit took 8.2 s CPU instead of
# 4.6 s; with this budget 5.3-5.5 s, the same 3,201 epochs.  SETTLE_FRESH False restores
# main 5c4386a's budget (SMALL_STEPS, SMALL_FLOPS) for benchmarks.
SETTLE_FRESH = True
SMALL_FREE = 600
SMALL_STEPS = 400
SMALL_FLOPS = 1e9
FRESH_FREE = int((3.0 * SMALL_FLOPS / SMALL_STEPS) ** (1.0 / 3.0))
# larger free sets (a start above SMALL_FREE): Schur-complement updates (_FaceSystem), up
# to MAX_FREE variables (2 m^3 / 3 flops a factorization: about 1 s on one core at 2,500),
# MAX_STEPS steps and MAX_FLOPS flops (a few seconds on one core)
MAX_FREE = 2500
MAX_STEPS = 3000
MAX_FLOPS = 1e10
# where the face is settled (``settle``): LAST_CUBES m^3 flops for a start of m free variables
# where that is more (make_blobs n = 5,000, C = 1e5, from 1,884 free variables at 6,400
# epochs: MAX_FLOPS ran out after 125 steps, 3.2 s; the face settled in 1,131 steps, 3.1e10
# flops, 20.9 s CPU)
LAST_CUBES = 10.0
# ... and LAST_STEPS_PER_FREE steps per free variable of the start where that is more than
# MAX_STEPS (make_blobs n = 2,000, C = 1e8, ReinforcedMSVM from 476 free variables at the
# first budget stop: 5,114 steps, 282 free variables at the optimum; MAX_STEPS ran out
# with 1,114 bounds still violated, and the solver did not settle the point returned)
LAST_STEPS_PER_FREE = 20
# free sets above MAX_FREE before the solver's last run: the face regularized by a proximal
# term sigma/2 ||x - x_k||^2 (sigma = PROX_START x the largest diagonal entry of Q_FF at
# first, divided by PROX_SHRINK after PROX_FULL full steps in a row that leave the face
# unsettled), its cut steps projected onto the box (PROX_ARC step lengths 1, 1/4, ...), up
# to PROX_FREE variables, PROX_STEPS steps and PROX_CUBES m^3 flops; refactored after
# m / PROX_REFACTOR changes; and only while m is at most PROX_PER_SAMPLE x the number of
# samples: with many classes and few samples the face is far larger than the data it
# describes (70 classes of 2 samples, C = 100: free sets of 2,500-8,000 variables over 140
# samples, where the proximal step spent 66 s CPU without settling the face, against 1.4 s
# for the whole fit without it)
PROX_FREE = 8000
PROX_PER_SAMPLE = 2
PROX_FULL = 2
PROX_ARC = 3
PROX_START = 1e-2
PROX_SHRINK = 10.0
PROX_STEPS = 20000
PROX_CUBES = 10.0
PROX_REFACTOR = 8
# a variable within this fraction of its box width of a bound is at the bound
BOUND_RTOL = 1e-12
# the fixed variables released at once after a full step: the RELEASE_BATCH most violating
RELEASE_BATCH = 50
# the largest (largest bound) x (largest kernel diagonal) the dense system is formed for
MAX_SCALE = 1e100
# the regularization of the free block, relative to its largest diagonal entry
REG = 1e-11
# changes of the free set the factored base system is bordered with before it is refactored
REFACTOR = 120
# `_Columns.times` multiplies the held span where the asked samples are at least this
# share of it, else their gathered rows
GATHER_SHARE = 0.5
# the residual of a Schur-complement solve through its updated inverse, relative to
# |S| |x| + |rhs|, above which the inverse is recomputed
BORDER_RTOL = 1e-9
# the most memory the held kernel columns (n float64 entries each) may take: a finishing step
# that needs more columns proposes nothing (at n = 100,000 Nystroem features, an uncapped
# buffer of 4,096 columns held 3.3 GB, 11x the features; at 2M rows the fit ran out of memory)
COLUMNS_MAX_BYTES = 1 << 30


class ColumnsOverBudget(Exception):
    """The held kernel columns would exceed COLUMNS_MAX_BYTES: the step does not apply."""


def hessian_corner(q, left, right):
    """The border block C (len(left), len(right)) between two lists of new columns
    ((kind, index) pairs) with the Hessian entries ``q(vars, vars)`` between their freed
    variables ('var') and zeros elsewhere, and the positions of left's freed variables."""
    C = np.zeros((len(left), len(right)))
    li = [j for j, (kind, _) in enumerate(left) if kind == "var"]
    ri = [j for j, (kind, _) in enumerate(right) if kind == "var"]
    if li and ri:
        C[np.ix_(li, ri)] = q(np.array([left[j][1] for j in li]),
                              np.array([right[j][1] for j in ri]))
    return C, li


def border_with(system, extra):
    """Border a factored face system (`_FaceSystem`, `msvm._grouped_face.GroupedFace`) with
    the changes ``extra`` from its base ((kind, index) pairs): the bordered columns it holds
    for them are kept, the others appended through its Schur complement (``system.border``),
    and its flop count charged."""
    wanted = set(extra)
    keep = [j for j, e in enumerate(system.extra) if e in wanted]
    kept = [system.extra[j] for j in keep]
    had = set(system.extra)
    new = [e for e in extra if e not in had]
    system.flops += system.border.keep(np.asarray(keep, dtype=np.int64))
    if new:
        Nn = np.stack([system._column(kind, v) for kind, v in new], axis=1)
        Yn = scipy.linalg.lu_solve(system.lu, Nn, check_finite=False)
        system.flops += 2.0 * system.size * (system.size + len(kept) + len(new)) * len(new)
        system.flops += system.border.append(Nn, Yn, system._corner(kept, new),
                                             system._corner(new, new))
    system.extra = kept + new


class _Layout:
    """The per-variable arrays of a problem, expanded once."""

    def __init__(self, problem):
        self.k, self.kappa, self.equality = problem.k, problem.kappa, problem.equality
        self.n_samples = problem.n_samples
        self.sample = problem.sample_of_var()
        self.slot1, self.coef1, self.slot2, self.coef2 = problem.expanded_directions()
        self.two = np.flatnonzero(self.slot2 >= 0)
        self.lin = problem.expand("lin")
        self.lo, self.hi = problem.expanded_bounds()

    def directions(self, idx):
        """Dense directions d_v (len(idx), k) of the variables idx."""
        D = np.zeros((len(idx), self.k))
        rows = np.arange(len(idx))
        D[rows, self.slot1[idx]] += self.coef1[idx]
        s2 = self.slot2[idx]
        two = s2 >= 0
        D[rows[two], s2[two]] += self.coef2[idx][two]
        return D

    def along(self, values):
        """<d_v, values[i(v)]> for every variable v; values (n, k)."""
        out = self.coef1 * values[self.sample, self.slot1]
        two = self.two
        out[two] += self.coef2[two] * values[self.sample[two], self.slot2[two]]
        return out

    def gradient(self, F):
        """The dual's gradient Q alpha - a per variable from the scores F = K U (n, k)."""
        return self.along(self.kappa * (F - F.mean(axis=1, keepdims=True))) - self.lin

    def slot_change(self, alpha, base):
        """U(alpha) - U(base) on the samples whose variables moved: (samples, dU), the
        samples sorted and dU (len(samples), k)."""
        moved = np.flatnonzero(alpha != base)
        samples, where = np.unique(self.sample[moved], return_inverse=True)
        dU = np.zeros((len(samples), self.k))
        np.add.at(dU, where, (alpha[moved] - base[moved])[:, None] * self.directions(moved))
        return samples, dU

    def shift(self, s):
        """<d_v, s> for every variable v, s (k,)."""
        out = self.coef1 * s[self.slot1]
        two = self.two
        out[two] += self.coef2[two] * s[self.slot2[two]]
        return out


def _slot_basis(k):
    """An orthonormal basis (k, k - 1) of the vectors that sum to zero."""
    q, _ = np.linalg.qr(np.eye(k) - 1.0 / k)
    return q[:, :k - 1]


class _Columns:
    """Kernel columns K[:, i] of the samples asked for, each fetched once, kept as the rows
    of one (capacity, n) buffer that doubles when full.

    A product with the columns of some samples (`times`) multiplies the buffer's leading
    span that holds them where they fill most of it, else the rows of the asked samples
    gathered (contiguous copies: the buffer holds K transposed).  The buffer held the
    columns of K (n, capacity) before, whose gathers are strided: there the asked columns
    were moved to the front of the buffer (one copy of the whole held block) when the span
    held many others, and in the active-set steps of make_blobs n = 2,000, C = 1e8, which
    move a few samples each, those copies took 38 % of the finishing step's time."""

    def __init__(self, columns, n):
        self._columns = columns
        self._where = np.full(n, -1, dtype=np.int64)
        self._KT = np.empty((16, n))
        self._m = 0

    @staticmethod
    def most(n):
        """The most columns of n entries held within COLUMNS_MAX_BYTES (at least 16)."""
        return max(COLUMNS_MAX_BYTES // (8 * max(n, 1)), 16)

    def _fetch(self, samples):
        """Fetch the columns of the samples not held yet; their buffer positions."""
        samples = np.asarray(samples, dtype=np.int64)
        new = np.unique(samples[self._where[samples] < 0])
        if len(new):
            need = self._m + len(new)
            if need > len(self._KT):
                most = self.most(self._KT.shape[1])
                if need > most:
                    raise ColumnsOverBudget
                grown = np.empty((min(max(need, 2 * len(self._KT)), most), self._KT.shape[1]))
                grown[:self._m] = self._KT[:self._m]
                self._KT = grown
            self._KT[self._m:need] = np.asarray(self._columns(new), dtype=np.float64).T
            self._where[new] = np.arange(self._m, need)
            self._m = need
        return self._where[samples]

    def entries(self, rows, samples):
        """K[rows][:, samples] (len(rows), len(samples)), gathered from the buffer in one
        pass (no (n, len(samples)) block first)."""
        where = self._fetch(samples)
        return self._KT[np.ix_(where, np.asarray(rows, dtype=np.int64))].T

    def block(self, samples):
        """K[:, samples] (n, len(samples))."""
        where = self._fetch(samples)      # first: it may replace the buffer
        return self._KT[where].T

    def times(self, samples, rows):
        """K[:, samples] @ rows (n, rows.shape[1]) for distinct samples: the buffer's span
        up to the last of them times the rows in its order (the samples held but not asked
        for meet zero rows) where the asked samples are at least GATHER_SHARE of that span,
        else their gathered rows times ``rows``."""
        where = self._fetch(samples)
        span = int(where.max(initial=-1)) + 1
        if len(where) < GATHER_SHARE * span:
            return self._KT[where].T @ rows
        W = np.zeros((span, rows.shape[1]))
        W[where] = rows
        return self._KT[:span].T @ W


class _FreshSystem:
    """The bordered system of the free set formed and solved afresh at every step (small
    free sets: the same interface as `_FaceSystem`)."""

    def __init__(self, lay, cols, E):
        self.lay, self.cols, self.E = lay, cols, E
        self.flops, self.reg, self.prox_rel, self.full_run = 0.0, 0.0, 0.0, 0

    def charge(self, m):
        """Count the factorization of a free set of m variables before it is formed."""
        self.flops += (m + self.lay.k) ** 3 / 3.0

    def solve(self, free, z, c):
        """The step on the free variables to the minimizer of the equality-constrained QP
        with the other variables fixed, and the shift s of its equalities."""
        lay, E, k = self.lay, self.E, self.lay.k
        iv = lay.sample[free]
        Dd = lay.directions(free)
        Q = lay.kappa * self.cols.block(iv)[iv] * (Dd @ (Dd - Dd.sum(axis=1, keepdims=True)
                                                         / k).T)
        m = len(free)
        reg = self.reg = REG * max(float(np.abs(np.diag(Q)).max()) if m else 0.0, 1e-300)
        if lay.equality:
            A = Dd @ E
            kkt = np.block([[Q + reg * np.eye(m), A], [A.T, -reg * np.eye(k - 1)]])
            rhs = np.concatenate([-z[free], -(E.T @ c)])
        else:
            kkt, rhs = Q + reg * np.eye(m), -z[free]
        sol = scipy.linalg.solve(kkt, rhs, assume_a="sym", check_finite=False)
        s = E @ sol[m:] if lay.equality else np.zeros(k)
        return sol[:m], s


class _FaceSystem:
    """The bordered (KKT) system of the free set, factored once and updated by Schur
    complements (Gill, Murray, Saunders and Wright 1990) while the free set changes.

    A base set F0 is factored (LU of [[Q_00 + reg I, A_0], [A_0^T, -reg I]], A = D E); a
    free set F differing from it is the base system bordered by one column per change: a
    variable outside F0 that was freed (its Hessian column and equality row), or a unit
    constraint x_v = 0 for a base variable that was fixed.  A solve then costs two solves
    with the base factors and one with the small Schur complement S = C - N^T M0^{-1} N
    (O(m^2 + m p) for p changes) instead of a new O(m^3 / 3) factorization: the active
    set's steps each change one variable, and a free set of 1,000 variables takes hundreds of
    them.  Past REFACTOR changes the current free set becomes the new base.
    """

    def __init__(self, lay, cols, E, refactor=REFACTOR):
        self.lay, self.cols, self.E = lay, cols, E
        self.base = None
        self.flops = 0.0
        self.refactor = refactor
        self.prox_rel = 0.0               # the proximal weight, relative to max diag Q_FF
        self.prox = 0.0
        self.full_run = 0                 # full (uncut) steps in a row

    def set_prox(self, prox_rel):
        """Set the proximal weight (relative to the largest diagonal entry of Q_FF; 0: the
        face QP itself) and refactor at the next solve."""
        self.prox_rel, self.base = float(prox_rel), None

    def charge(self, m):
        """Nothing: the factorizations and solves are counted as they are made."""

    def _q(self, rows, cols):
        """The Hessian block Q[rows][:, cols] (variable indices)."""
        lay, k = self.lay, self.lay.k
        Dr, Dc = lay.directions(rows), lay.directions(cols)
        Q = Dr @ (Dc - Dc.sum(axis=1, keepdims=True) / k).T
        Q *= self.cols.entries(lay.sample[rows], lay.sample[cols])
        Q *= lay.kappa
        return Q

    def _factor(self, free_idx):
        """Make free_idx the base: form and factor its bordered matrix."""
        lay, m, k1 = self.lay, len(free_idx), self.lay.k - 1
        Q = self._q(free_idx, free_idx)
        top = max(float(np.abs(np.diag(Q)).max()) if m else 0.0, 1e-300)
        self.reg, self.prox = REG * top, self.prox_rel * top
        Q[np.diag_indices(m)] += self.reg + self.prox
        if lay.equality:
            A = lay.directions(free_idx) @ self.E
            M0 = np.block([[Q, A], [A.T, -self.reg * np.eye(k1)]])
        else:
            M0 = Q
        self.lu = scipy.linalg.lu_factor(M0, check_finite=False)
        self.flops += (M0.shape[0]) ** 3 * 2.0 / 3.0
        self.base = free_idx
        self.size = M0.shape[0]
        self.extra = []                   # ('var', v) or ('fix', v), in column order
        self.border = _Border(self.size)

    def _column(self, kind, v):
        """The base rows N[:, j] of a new border column."""
        col = np.zeros(self.size)
        if kind == "fix":
            col[np.searchsorted(self.base, v)] = 1.0
            return col
        m = len(self.base)
        col[:m] = self._q(self.base, np.array([v]))[:, 0]
        if self.lay.equality:
            col[m:] = (self.lay.directions(np.array([v])) @ self.E)[0]
        return col

    def _corner(self, left, right):
        """C[left][:, right]: the border block between two lists of new columns (Hessian
        entries between freed variables, plus reg on the diagonal when left is right)."""
        C, li = hessian_corner(self._q, left, right)
        if li and left is right:
            C[li, li] += self.reg + self.prox
        return C

    def _sync(self, free_idx):
        """Border the base system so that it describes free_idx (sorted; refactor when it
        differs from the base by more than REFACTOR changes)."""
        if self.base is None:
            self._factor(np.asarray(free_idx, dtype=np.int64))
            return
        fixes = np.setdiff1d(self.base, free_idx, assume_unique=True)
        frees = np.setdiff1d(free_idx, self.base, assume_unique=True)
        if len(fixes) + len(frees) > self.refactor:
            self._factor(np.asarray(free_idx, dtype=np.int64))
            return
        extra = [("fix", int(v)) for v in fixes] + [("var", int(v)) for v in frees]
        border_with(self, extra)

    def solve(self, free_idx, z, c):
        """The step on free_idx (sorted) to the minimizer of the equality-constrained QP
        with the other variables fixed, and the shift s of its equalities.  The base
        variables that are fixed keep their gradient entries in the right-hand side: they
        cancel against their unit constraints in exact arithmetic, but the bordered solve
        of a nearly singular face lost the step with them set to 0 (make_blobs n = 2,000,
        C = 1e8: the objective rose by orders of magnitude)."""
        lay, k = self.lay, self.lay.k
        self._sync(free_idx)
        m = len(self.base)
        zb = z[self.base]
        r0 = np.concatenate([-zb, -(self.E.T @ c)]) if lay.equality else -zb
        y0 = scipy.linalg.lu_solve(self.lu, r0, check_finite=False)
        p = len(self.extra)
        self.flops += 2.0 * self.size ** 2 + 4.0 * self.size * p
        held, values, tail = self.base, y0[:m], y0[m:]
        if p:
            kinds = np.array([kind == "var" for kind, _ in self.extra])
            extra_v = np.array([v for _, v in self.extra], dtype=np.int64)
            rn = np.where(kinds, -z[extra_v], 0.0)
            xn, flops = self.border.solve(rn, y0)
            self.flops += flops
            y = y0 - self.border.YT[:p].T @ xn
            held = np.concatenate([self.base, extra_v[kinds]])
            values, tail = np.concatenate([y[:m], xn[kinds]]), y[m:]
        s = self.E @ tail if lay.equality else np.zeros(k)
        order = np.argsort(held, kind="stable")
        return values[order[np.searchsorted(held[order], free_idx)]], s


class _Border:
    """The border of a factored base system M0 (size x size): one column of N per change
    of the free set, Y = M0^{-1} N, the Schur complement S = C - N^T Y and its inverse.

    N and Y are kept as rows (N^T, Y^T) in buffers that grow, so that appending changes
    copies only the new ones (stacking the whole border again at every step took a tenth
    of the proximal finishing step's time).  The inverse of S is updated by the block
    formulas as changes are appended (O(p^2 q) for q changes on p) and removed (O(p^2 r)),
    so that a step solves with S in O(p^2) instead of factoring it (O(p^3): a quarter of
    the proximal step's time at p of 300-700, LLW n = 5,000, C = 1e5); a solve whose
    residual exceeds BORDER_RTOL of its scale recomputes the inverse from S."""

    def __init__(self, size):
        self.NT = np.empty((16, size))
        self.YT = np.empty((16, size))
        self.S = np.zeros((0, 0))
        self.S_inv = np.zeros((0, 0))

    @property
    def p(self):
        """The number of changes."""
        return len(self.S)

    def keep(self, keep):
        """Keep the changes ``keep`` (sorted positions), drop the others; the flops."""
        p = self.p
        if len(keep) == p:
            return 0.0
        drop = np.setdiff1d(np.arange(p), keep)
        if self.S_inv is not None:       # None: recomputed at the next solve
            A = self.S_inv[np.ix_(keep, keep)]
            B = self.S_inv[np.ix_(keep, drop)]
            try:
                self.S_inv = A - B @ np.linalg.solve(self.S_inv[np.ix_(drop, drop)], B.T)
            except np.linalg.LinAlgError:
                self.S_inv = None
        self.S = self.S[np.ix_(keep, keep)]
        self.NT[:len(keep)] = self.NT[keep]
        self.YT[:len(keep)] = self.YT[keep]
        return 2.0 * p * p * len(drop) + float(len(drop)) ** 3

    def append(self, Nn, Yn, Ckn, Cnn):
        """Append q changes: their columns Nn and Yn = M0^{-1} Nn (size, q), and their
        blocks of C with the kept changes (p, q) and with themselves (q, q); the flops."""
        p, q = self.p, Nn.shape[1]
        if p + q > len(self.NT):
            grow = max(p + q, 2 * len(self.NT))
            self.NT = np.resize(self.NT, (grow, self.NT.shape[1]))
            self.YT = np.resize(self.YT, (grow, self.YT.shape[1]))
        Skn = Ckn - self.NT[:p] @ Yn
        Snn = Cnn - Nn.T @ Yn
        self.NT[p:p + q], self.YT[p:p + q] = Nn.T, Yn.T
        self.S = np.block([[self.S, Skn], [Skn.T, Snn]])
        flops = 2.0 * Nn.shape[0] * (p + q) * q
        if self.S_inv is not None:
            Z = self.S_inv @ Skn
            try:
                Ti = np.linalg.inv(Snn - Skn.T @ Z)
            except np.linalg.LinAlgError:
                self.S_inv = None
                return flops
            ZT = Z @ Ti
            self.S_inv = np.block([[self.S_inv + ZT @ Z.T, -ZT], [-ZT.T, Ti]])
            flops += 6.0 * p * p * q + 2.0 * float(q) ** 3
        return flops

    def solve(self, rn, y0):
        """x with S x = rn - N^T y0, and the flops."""
        p = self.p
        rhs = rn - self.NT[:p] @ y0
        flops = 2.0 * self.NT.shape[1] * p + 4.0 * p * p
        if self.S_inv is not None:
            x = self.S_inv @ rhs
            scale = np.abs(self.S).max() * np.abs(x).max() + np.abs(rhs).max()
            if np.abs(self.S @ x - rhs).max() <= BORDER_RTOL * scale:
                return x, flops
        self.S_inv = np.linalg.inv(self.S)
        return self.S_inv @ rhs, flops + 2.0 * float(p) ** 3


def _ratio(alpha, step, lo, hi):
    """The largest t <= 1 keeping alpha + t step in the box, and the variables it stops at."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(step > 0, (hi - alpha) / step,
                        np.where(step < 0, (lo - alpha) / step, np.inf))
    t = min(1.0, float(room.min())) if len(room) else 1.0
    return max(t, 0.0), np.flatnonzero(room <= t)


class _Scores:
    """The scores F = K U(alpha) (n, k) along the active set's steps: ``exact`` adds
    K (U(alpha) - U(base)) from the kernel columns of the samples moved since its last call,
    as one product with the held columns (`_Columns.times`; gathering the moved samples'
    columns into a new array first took half of the finishing step's time)."""

    def __init__(self, lay, cols, alpha, F):
        self.lay, self.cols = lay, cols
        self.base, self.F = np.array(alpha, dtype=np.float64), np.array(F, dtype=np.float64)

    def exact(self, alpha):
        """The scores of alpha."""
        samples, dU = self.lay.slot_change(alpha, self.base)
        if len(samples):
            self.F += self.cols.times(samples, dU)
            self.base = alpha.copy()
        return self.F

    def checkpoint(self):
        """The current (base, scores), for `restore`."""
        return self.base.copy(), self.F.copy()

    def restore(self, point):
        """Go back to a `checkpoint` without a kernel product."""
        self.base, self.F = point[0].copy(), point[1].copy()


def _snapped(lay, alpha, bound):
    """alpha with the variables within BOUND_RTOL of a bound moved onto it."""
    near = BOUND_RTOL * max(bound, 1e-300)
    return np.where(alpha - lay.lo <= near, lay.lo,
                    np.where(lay.hi - alpha <= near, lay.hi, alpha))


def finish_dual(problem, alpha, F, columns, tol, max_diag, settle=False, last=False):
    """Solve the dual exactly on its free set by active-set steps from ``alpha``.

    Parameters
    ----------
    problem : msvm._problem.DualProblem
        The dual (without group caps).
    alpha : ndarray of shape (n_vars,)
        The solver's iterate, within the boxes.
    F : ndarray of shape (n, k)
        Its scores K U(alpha).
    columns : callable
        ``columns(samples)``: the kernel columns K[:, samples], shape (n, len(samples)).
    tol : float
        The solve's tol; the reduced gradients of the result are within tol / 100 of
        optimality (margin units) when it succeeds.
    max_diag : float
        The largest kernel diagonal entry: where it times the largest bound exceeds
        MAX_SCALE (products near overflow), the step does not apply.
    settle : bool, default=False
        Whether the step may spend LAST_CUBES m^3 flops and LAST_STEPS_PER_FREE m steps
        on a start of m > FRESH_FREE free variables where those exceed MAX_FLOPS and
        MAX_STEPS.  The solver's sequence passes True wherever it tries the step
        (`msvm._sequence._finish_due`).
    last : bool, default=False
        Whether the solver's last run follows: above MAX_FREE the proximal route applies
        (with ``settle``).

    Returns
    -------
    (alpha, mu) or None
        The proposed dual point and its equality multiplier (the shift s, summing to zero),
        or None when the finishing step does not apply or does not settle.
    """
    if problem.var_group is not None or problem.n_vars == 0 \
            or not problem.max_abs_bound() * max(max_diag, 1.0) <= MAX_SCALE:
        return None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        try:
            found = _active_set(problem, alpha, F, columns, tol, settle, last)
        except (np.linalg.LinAlgError, ColumnsOverBudget):
            return None
    if found is None or not (np.all(np.isfinite(found[0])) and np.all(np.isfinite(found[1]))):
        return None
    return found


def _active_set(problem, alpha, F, columns, tol, settle=False, last=False):
    """The loop of `finish_dual`: (alpha, s) or None.  A start with at most FRESH_FREE free
    variables is solved with fresh factorizations within the SMALL_* bounds; a larger one
    with Schur-complement updates within the MAX_* bounds, and where those run out after full
    steps were taken, the point reached (every step lowers the objective on the face and
    keeps the equalities of its start) and the last shift are returned as the proposal:
    the solver goes on from there, and the next finishing step from the solver's point.

    The scores, hence the gradient z, are brought up to date after every step by one product
    of the held kernel columns with the slot sums' change (`_Scores`): a gradient carried
    along the steps through the Newton system instead (tau Q_FF x = -tau (z_F + <d_v, s> +
    reg x)) drifted from the true one by up to its own size within 20 Schur-updated steps
    (n = 2,000 RBF, C = 1e5: the bordered solves of a nearly singular face lose about as
    many digits as its condition number has), and the steps taken with it went astray."""
    lay = _Layout(problem)
    lo, hi = lay.lo, lay.hi
    cols = _Columns(columns, problem.n_samples)
    alpha0 = np.asarray(alpha, dtype=np.float64)
    alpha = _snapped(lay, alpha0, problem.max_abs_bound())
    scores = _Scores(lay, cols, alpha0, F)
    z = lay.gradient(scores.exact(alpha))
    fixed_ok = hi > lo
    free = (alpha > lo) & (alpha < hi)
    if len(np.unique(lay.sample[free])) > _Columns.most(lay.n_samples):
        return None     # the free samples' columns alone would exceed COLUMNS_MAX_BYTES
    system, max_free, max_flops, steps = _system_for(lay, cols, int(free.sum()), settle, last)
    reached, stuck = None, np.zeros(len(alpha), dtype=bool)
    large = isinstance(system, _FaceSystem)
    for _ in range(steps):
        idx = np.flatnonzero(free)
        system.charge(len(idx))
        if len(idx) > max_free or system.flops > max_flops:
            return reached
        step, s = system.solve(idx, z, problem.class_sums(alpha))
        t, stops = _ratio(alpha[idx], step, lo[idx], hi[idx])
        if t < 1.0 and system.prox_rel > 0.0:
            moved = _projected_step(lay, system.E, alpha, z, idx, step, scores)
            if moved is not None:
                alpha, z = moved
                free = (alpha > lo) & (alpha < hi)
                reached, stuck[:] = (alpha.copy(), s), False
                continue
        alpha[idx] += t * step
        if t < 1.0:
            hit = idx[stops]
            alpha[hit] = np.where(step[stops] > 0, hi[hit], lo[hit])
            free[hit] = False
        np.clip(alpha, lo, hi, out=alpha)
        z = lay.gradient(scores.exact(alpha))
        # a released variable sent straight back to its bound is not released again until
        # a step moves (at a degenerate point, or with a step off by rounding, the most
        # violating release cycled: release, zero step, release)
        if t == 0.0:
            stuck[idx[stops]] = True
        else:
            stuck[:] = False
        system.full_run = system.full_run + 1 if t == 1.0 else 0
        if system.prox_rel > 0.0 and t > 0.0:
            reached = alpha.copy(), s        # every proximal step lowers the objective
        if t < 1.0:
            continue
        r = z + lay.shift(s)
        if not _settled_on_face(r[idx], system, tol):
            continue
        if large:
            reached = alpha.copy(), s
        viol = _violations(alpha, r, lo, hi, free | ~fixed_ok | stuck)
        released = _most_violating(viol, 0.01 * tol)
        if not len(released):
            return alpha, s
        free[released] = True
    return reached


def _system_for(lay, cols, m, settle, last):
    """The face system for a start of m free variables and its bounds: (system, largest
    free set, flop budget, steps).  Up to FRESH_FREE a fresh factorization per step; up to
    MAX_FREE Schur updates; above (``settle`` and ``last`` only, up to PROX_FREE) Schur
    updates of the proximally regularized face (see `_settled_on_face`), while m is at most
    PROX_PER_SAMPLE per sample.  Where the face is settled (``settle``) the Schur-updated
    system gets max(MAX_FLOPS, LAST_CUBES m^3) flops and max(MAX_STEPS, LAST_STEPS_PER_FREE
    m) steps, the fresh one SMALL_FLOPS and max(SMALL_STEPS, LAST_STEPS_PER_FREE m) steps:
    the steps a start needs follow the bound changes to the optimum, not the size of its
    free set (see SMALL_STEPS)."""
    E = _slot_basis(lay.k)
    if m <= FRESH_FREE:
        if settle and SETTLE_FRESH:
            return (_FreshSystem(lay, cols, E), SMALL_FREE, SMALL_FLOPS,
                    max(SMALL_STEPS, LAST_STEPS_PER_FREE * m))
        return _FreshSystem(lay, cols, E), SMALL_FREE, SMALL_FLOPS, SMALL_STEPS
    if m <= MAX_FREE or not (settle and last) or m > PROX_PER_SAMPLE * lay.n_samples:
        if not settle:
            return _FaceSystem(lay, cols, E), MAX_FREE, MAX_FLOPS, MAX_STEPS
        return (_FaceSystem(lay, cols, E), MAX_FREE, max(MAX_FLOPS, LAST_CUBES * float(m) ** 3),
                max(MAX_STEPS, LAST_STEPS_PER_FREE * m))
    system = _FaceSystem(lay, cols, E, refactor=max(REFACTOR, m // PROX_REFACTOR))
    system.set_prox(PROX_START)
    return system, PROX_FREE, PROX_CUBES * float(m) ** 3, PROX_STEPS


def _projected_step(lay, E, alpha, z, idx, step, scores, rounds=4):
    """The proximal step projected onto the box, the variables it pushes out fixed at their
    bounds all at once: (alpha, z) after it, or None where no projection keeps the
    equalities and lowers the objective (the caller then cuts the step at its first bound).
    The projections of alpha + beta step are tried for beta = 1, 1/4, ... (PROX_ARC of
    them).  The clipped part of the step changes the slot sums; the least-norm change of
    the unclipped variables along their equality rows A = D E restores them (clipped again,
    at most ``rounds`` times).  The objective's change is exact: (z + z_new) / 2 . dx."""
    A = lay.directions(idx) @ E
    start = scores.checkpoint()
    for arc in range(PROX_ARC):
        x = _projection(lay.lo[idx], lay.hi[idx], A, alpha[idx] + 0.25 ** arc * step, rounds)
        if x is None:
            continue
        new = alpha.copy()
        new[idx] = x
        z_new = lay.gradient(scores.exact(new))
        if 0.5 * float((z + z_new) @ (new - alpha)) < 0.0:
            return new, z_new
    scores.restore(start)
    return None


def _projection(lo, hi, A, point, rounds):
    """point clipped to [lo, hi] with its equality values A^T point restored by least-norm
    changes of the unclipped entries, or None."""
    x = np.clip(point, lo, hi)
    target = A.T @ point
    for _ in range(rounds):
        resid = target - A.T @ x
        if np.abs(resid).max(initial=0.0) <= 1e-12 * max(np.abs(x).max(initial=0.0), 1.0):
            return x
        inside = (x > lo) & (x < hi)
        Ai = A[inside]
        if not len(Ai):
            return None
        w = np.linalg.lstsq(Ai.T @ Ai, resid, rcond=None)[0]
        x[inside] = np.clip(x[inside] + Ai @ w, lo[inside], hi[inside])
    return None


def _settled_on_face(r_free, system, tol):
    """Whether a full step reached the minimizer on its face (reduced gradients of the free
    variables within tol / 100).  A Schur-updated system whose solves went astray (a nearly
    singular face, many changes bordered on its base) is refactored and the step repeated.
    On a proximally regularized face (weight sigma > 0) a full step is the proximal point,
    not the face's minimizer: the next step goes on from it with the same sigma (a proximal
    point iteration, whose cut steps still fix bounds), and after PROX_FULL full steps in a
    row sigma is divided by PROX_SHRINK (0 below REG) and the face refactored."""
    if np.abs(r_free).max(initial=0.0) <= 0.01 * tol:
        return True
    prox = system.prox_rel
    if prox > 0.0:
        if system.full_run < PROX_FULL:
            return False
        system.set_prox(prox / PROX_SHRINK if prox / PROX_SHRINK > REG else 0.0)
        return False
    if not getattr(system, "extra", None):
        return True
    system.base = None
    return False


def _most_violating(viol, limit):
    """The (at most RELEASE_BATCH) variables of largest violation above ``limit``."""
    over = np.flatnonzero(viol > limit)
    if len(over) > RELEASE_BATCH:
        over = over[np.argpartition(-viol[over], RELEASE_BATCH - 1)[:RELEASE_BATCH]]
    return over


def _violations(alpha, r, lo, hi, skip):
    """How far each fixed variable's reduced gradient r points into its box (0 where it
    does not, and for the variables ``skip``)."""
    viol = np.where(alpha <= lo, -r, np.where(alpha >= hi, r, 0.0))
    viol[skip] = 0.0
    return np.maximum(viol, 0.0)

