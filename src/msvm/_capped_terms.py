"""The smoothed terms of a dual with group caps: the smoothed-primal Newton start of such duals,
in memory (msvm/_primal.py, ``CappedPrimal``) and chunk by chunk on Dask (msvm/_dask_passes.py).

The generalized-margin hinge of WeightedRobustMSVM and AdaptiveWeightedSVM (Liu, Wu and He
2011) is a max-type loss: group g of sample i carries max_{j' != j} [1 + f_j' - f_j]_+
times its weight, whose dual is a group of k - 1 variables in [lo, hi] with one cap
sum_v alpha_v <= cap_g (msvm._problem.margin_problem; a DC step moves the boxes and caps,
msvm._problem.shifted).  The compiled smoothed terms of the in-memory primal start
(msvm._core._smoothed) have no caps; this module smooths these groups in NumPy, vectorized
over the groups of a problem (the whole training set in memory, one chunk on Dask).

Design
------
Smoothing a group by mu (Nesterov) gives

    l_g(z) = max { <a, z> - mu / 2 |a|^2 : lo <= a <= hi, sum a <= cap },

whose maximizer a(z) is the Euclidean projection of z / mu onto that capped box: clip(z / mu,
lo, hi) when its sum is within the cap, else clip(z / mu - lambda, lo, hi) with the lambda > 0
at which the sum is the cap (the sum is piecewise linear and decreasing in lambda: its
2 (k - 1) breakpoints are sorted per group and walked to the piece where the sum crosses the
cap, O(k log k) per group, compiled: msvm._core._smoothed.capped_project). The gradient of l_g
in z is a(z), so a is the dual point (feasible for the capped dual by construction: the
certificate of the chunked fit is the in-memory one, msvm._core._gap), and the generalized
Hessian in z is (1 / mu) times the identity on the projection's free set F (a term strictly
inside its box, or at a bound, as the compiled terms count kinks) minus 1_F 1_F^T / |F| when
the cap binds. The Newton matrix's curvature sum is then, per sample, the k x k matrix S_i =
sum_g D_g^T (mu J_g) D_g (D_g: the directions e_j' - e_j of the group's variables), and sum_i
[x_i, 1][x_i, 1]^T (x) S_i is formed by one weighted product per slot pair over the samples
with a free term. The line search's derivative along a direction is piecewise linear as before
(the projection is piecewise linear in t); its slope there is the Hessian's quadratic form
(one compiled pass per step, ``capped_line``).

In memory (``msvm._primal.CappedPrimal``) the terms cover all the training groups; the
smoothed-primal start then hands its dual point to the compiled dual solver, which certifies
it with its own stopping rule.
"""

import numpy as np

from ._core._smoothed import capped_line, capped_project


def capped_terms_possible(problem):
    """Whether :class:`CappedTerms` can smooth ``problem``: group caps, every variable in a
    group, all groups of one size and stored contiguously, two-slot directions (the layout
    of msvm._problem.margin_problem and of its DC shifts)."""
    ng = len(problem.cap)
    if ng == 0 or problem.n_vars == 0 or problem.n_vars % ng:
        return False
    p = problem.n_vars // ng
    if not np.array_equal(problem.expand("group"), np.repeat(np.arange(ng), p)):
        return False
    return bool(np.all(problem.expanded_directions()[2] >= 0))


class CappedTerms:
    """The smoothed terms of a chunk's dual problem with group caps (see the module note).

    Every variable must lie in a group and every group hold the same number p of variables
    stored contiguously (the layout of msvm._problem.margin_problem and of its DC shifts).

    Parameters
    ----------
    problem : DualProblem
        The chunk's dual (with caps).
    mu : float
        The smoothing.
    """

    def __init__(self, problem, mu):
        self.k, self.n, self.mu = problem.k, problem.n_samples, float(mu)
        group = problem.expand("group")
        ng = len(problem.cap)
        p = problem.n_vars // ng if ng else 0
        if ng == 0 or p * ng != problem.n_vars or np.any(group != np.repeat(np.arange(ng), p)):
            raise NotImplementedError("group caps are smoothed only where every variable "
                                      "lies in a group of one common size")
        shape = (ng, p)
        self.sample = problem.sample_of_var()[::p]
        slot1, coef1, slot2, coef2 = (np.asarray(a).reshape(shape)
                                      for a in problem.expanded_directions())
        if np.any(slot2 < 0):
            raise NotImplementedError("group caps are smoothed only for two-slot "
                                      "directions (the generalized-margin hinge)")
        self.slot1, self.coef1, self.slot2, self.coef2 = slot1, coef1, slot2, coef2
        self.lin = problem.expand("lin").reshape(shape)
        lo, hi = problem.expanded_bounds()
        self.lo = np.ascontiguousarray(lo.reshape(shape), dtype=np.float64)
        self.hi = np.ascontiguousarray(hi.reshape(shape), dtype=np.float64)
        self.cap = np.ascontiguousarray(problem.cap, dtype=np.float64)

    def set_bounds(self, lo, hi, cap):
        """Move the boxes (G, p) and caps (G,) (a DC step's new linearization)."""
        self.lo = np.ascontiguousarray(lo, dtype=np.float64)
        self.hi = np.ascontiguousarray(hi, dtype=np.float64)
        self.cap = np.ascontiguousarray(cap, dtype=np.float64)

    def dual_point(self, F):
        """The dual point a(z) at F, one value per variable in the problem's order."""
        return self.project(self.along(F))[0].ravel()

    # ----------------------------------------------------------------- pieces
    def along(self, F, lin=True):
        """z = a + <d, F_i> per variable (G, p) at decision values F (n, k) (without the
        offsets a when ``lin`` is false: the change of z along a direction dF)."""
        rows = self.sample[:, None]
        z = self.coef1 * F[rows, self.slot1] + self.coef2 * F[rows, self.slot2]
        return z + self.lin if lin else z

    def project(self, z):
        """(a, free, binding): the projection a of z / mu onto the capped boxes, the
        variables of its free set, and whether each group's cap binds (compiled:
        ``msvm._core._smoothed.capped_project``)."""
        return capped_project(np.ascontiguousarray(z, dtype=np.float64), self.mu, self.lo,
                              self.hi, self.cap)

    def slot_sums(self, a):
        """U (n, k): per sample, sum_v a_v d_v."""
        k = self.k
        rows = self.sample[:, None]
        flat = np.concatenate([(rows * k + self.slot1).ravel(), (rows * k + self.slot2).ravel()])
        weights = np.concatenate([(self.coef1 * a).ravel(), (self.coef2 * a).ravel()])
        return np.bincount(flat, weights=weights, minlength=self.n * k).reshape(self.n, k)

    # ----------------------------------------------------------------- passes
    def value_and_slot_sums(self, F):
        """(sum of l_g at F, slot sums U (n, k) of the dual point, its projection's
        (free, binding))."""
        z = self.along(F)
        a, free, binding = self.project(z)
        value = float(np.sum(a * z) - 0.5 * self.mu * np.sum(a * a))
        return value, self.slot_sums(a), (free, binding)


    def sample_curvature(self, free, binding):
        """(samples, S (len(samples), k, k)): the samples with a free term and their k x k
        blocks sum_g D_g^T (mu J_g) D_g of the generalized Hessian (times mu)."""
        k = self.k
        groups = np.flatnonzero(free.any(axis=1))
        if not len(groups):
            return np.zeros(0, dtype=np.intp), np.zeros((0, k, k))
        f = free[groups].astype(np.float64)
        p = f.shape[1]
        D = np.zeros((len(groups), p, k))
        g_idx, v_idx = np.arange(len(groups))[:, None], np.arange(p)[None, :]
        D[g_idx, v_idx, self.slot1[groups]] += self.coef1[groups]
        D[g_idx, v_idx, self.slot2[groups]] += self.coef2[groups]
        M = np.einsum("gv,gvj,gvl->gjl", f, D, D)
        tied = binding[groups]
        if np.any(tied):
            s = np.einsum("gv,gvj->gj", f[tied], D[tied])
            M[tied] -= s[:, :, None] * s[:, None, :] / f[tied].sum(axis=1)[:, None, None]
        # the groups of a sample are contiguous: their blocks are summed run by run
        owner = self.sample[groups]
        starts = np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]]))
        return owner[starts], np.add.reduceat(M, starts, axis=0)

    def line_sums(self, z, dz, steps):
        """``line_slope_and_curvature`` at every step of ``steps`` (array (len(steps), 2)):
        the groups whose variables all stay below their lower bounds over the steps' range
        (their projection is lo throughout: the derivative is linear in z there) add the
        constant sum dz lo and no curvature, and only the others are projected per step."""
        steps = np.asarray(steps, dtype=np.float64)
        t0, t1 = float(steps.min()), float(steps.max())
        floor = self.mu * self.lo
        pinned = np.all((z - t0 * dz < floor) & (z - t1 * dz < floor), axis=1)
        constant = float(np.sum(dz[pinned] * self.lo[pinned]))
        rest = np.flatnonzero(~pinned)
        out = np.zeros((len(steps), 2))
        out[:, 0] = constant
        if len(rest):
            part = _Subset(self, rest)
            zr, dzr = z[rest], dz[rest]
            for i, t in enumerate(steps):
                slope, curv = part.line_slope_and_curvature(zr, dzr, float(t))
                out[i, 0] += slope
                out[i, 1] = curv
        return out

    def line_slope_and_curvature(self, z, dz, t):
        """(sum_v dz_v a_v(z - t dz), the derivative's slope sum_g dz_g^T J_g dz_g / mu) at
        step t along dz (both (G, p), z with its offsets; compiled:
        ``msvm._core._smoothed.capped_line``)."""
        return capped_line(np.ascontiguousarray(z, dtype=np.float64),
                           np.ascontiguousarray(dz, dtype=np.float64), float(t), self.mu,
                           self.lo, self.hi, self.cap)

class CappedLine:
    """The loss part of the line search's derivative along -dF from F, and its slope, at any
    step t (``CappedTerms.line_slope_and_curvature``), called as line(t): the margins z and
    their change dz are formed once per line search, each evaluation is one compiled pass."""

    def __init__(self, terms, F, dF):
        self.terms = terms
        self.z, self.dz = terms.along(F), terms.along(dF, lin=False)

    def __call__(self, t):
        return self.terms.line_slope_and_curvature(self.z, self.dz, t)

class _Subset(CappedTerms):
    """The groups ``rows`` of a CappedTerms (the bounds and caps the projection reads)."""

    def __init__(self, terms, rows):
        self.k, self.n, self.mu = terms.k, terms.n, terms.mu
        self.lo, self.hi, self.cap = (np.ascontiguousarray(a[rows])
                                      for a in (terms.lo, terms.hi, terms.cap))


def curvature_sum(X, samples, S, equality):
    """sum_i [x_i, 1] [x_i, 1]^T (x) S_i over ``samples`` (rows of X) as (m, k, m, k), m the
    features plus 1 with unpenalized intercepts (the layout of msvm._primal's curvature
    sum): one weighted product per slot pair j <= l."""
    d, k = X.shape[1], S.shape[1]
    m = d + (1 if equality else 0)
    out = np.zeros((m, k, m, k))
    if not len(samples):
        return out
    Z = np.empty((len(samples), m))
    rows = X[samples]
    Z[:, :d] = rows.toarray() if hasattr(rows, "toarray") else rows
    if equality:
        Z[:, d] = 1.0
    for j in range(k):
        for r in range(j, k):
            w = S[:, j, r]
            if not np.any(w):
                continue
            B = (Z * w[:, None]).T @ Z
            out[:, j, :, r] = B
            if j != r:
                out[:, r, :, j] = B.T
    return out

