"""A primal Newton start for the linear path where dual coordinate descent is slow.

Dual coordinate descent slows sharply as C grows when n >> d (the dual has many free
variables in a space of rank d k).  For explicit features (``kernel='linear'`` or an
approximate kernel) and duals without group caps, the fit then first solves the primal
smoothed by mu (Nesterov smoothing of each hinge term),

    min_{V, b}  1 / (2 kappa) ||V||^2 + sum_v l_v(z_v),   z_v = a_v + <d_v, b + V^T x_i>,
    l_v(z) = max_{lo_v <= a <= hi_v}  a z - mu / 2 a^2,

by Newton's method (the class-slot matrix V has rows summing to zero, b sums to zero when
the intercepts are unpenalized): the (d + 1) k x (d + 1) k Hessian is formed from the free
terms block by block over slot pairs and factored, and the step is the exact minimizer along
the Newton direction (the smoothed objective is piecewise quadratic there), with mu
decreasing by 10 from 1 / max|bound| to 0.5 tol / max|bound|.  Its
dual point alpha_v = clip(z_v / mu, lo_v, hi_v) is feasible, satisfies the equalities
P c(alpha) = 0 (the stationarity in b) and violates the KKT conditions of the exact dual by
at most mu max|bound| <= tol / 2 (margin units).  The compiled dual solver then starts from
it and certifies the duality gap as for any other start: the primal start changes where the
solver starts, never what it returns a solution for.
"""

import numpy as np
from threadpoolctl import threadpool_limits

from ._approx import rows_times, transposed_times
from ._slot_products import centered_slots

# The primal start is used when the largest box bound times the median ||x||^2 (the
# scale of the dual's curvature against its box) reaches this value (measured: below it,
# dual coordinate descent is faster) ...
PRIMAL_MIN_SCALE = 20.0
# ... and the samples outnumber the primal's unknowns ((d + 1) k) this many times over.
PRIMAL_MIN_RATIO = 4
NEWTON_MAX_ITER = 150
# the smoothing stops at mu = TOL_FLOOR / (2 max bound) even when tol is smaller
TOL_FLOOR = 1e-6
# largest number of primal unknowns (d + 1) k: the Newton system is formed and factored
PRIMAL_MAX_UNKNOWNS = 1500


def primal_start_applies(problem, X, diag):
    """Whether the fit should start from the smoothed primal (see the module note)."""
    if X is None or len(problem.cap) or problem.n_vars == 0:
        return False
    bound = problem.max_abs_bound()
    scale = bound * float(np.median(diag)) if len(diag) else 0.0
    unknowns = (X.shape[1] + 1) * problem.k
    return (scale >= PRIMAL_MIN_SCALE and unknowns <= PRIMAL_MAX_UNKNOWNS
            and X.shape[0] >= PRIMAL_MIN_RATIO * unknowns)


class SmoothedPrimal:
    """The smoothed primal of a DualProblem on explicit features X (see the module note)."""

    def __init__(self, problem, X):
        self.problem, self.X = problem, X
        self.k, self.kappa = problem.k, problem.kappa
        self.rows = problem.sample_of_var()
        self.two = np.flatnonzero(problem.slot2 >= 0)
        self.mu = 1.0

    # ----------------------------------------------------------------- pieces
    def _center(self, V, b):
        """Rows of V and b in range(P) (sum zero over the class slots)."""
        V = centered_slots(V)
        b = b - b.mean() if self.problem.equality else np.zeros(self.k)
        return V, b

    def _z(self, F):
        """z_v = a_v + <d_v, F_i> for the decision values F (n, k) at the samples."""
        return self.problem.lin + self._dz(F)

    def _dz(self, dF):
        """<d_v, dF_i> for every term v (the change of z for a change dF of F)."""
        p = self.problem
        dz = p.coef1 * dF[self.rows, p.slot1]
        if len(self.two):
            dz[self.two] += p.coef2[self.two] * dF[self.rows[self.two], p.slot2[self.two]]
        return dz

    def decision(self, V, b):
        return rows_times(self.X, V) + b

    def alpha(self, z):
        return np.clip(z / self.mu, self.problem.lo, self.problem.hi)

    def value(self, V, b, z=None):
        """The smoothed objective at (V, b)."""
        z = self._z(self.decision(V, b)) if z is None else z
        a = self.alpha(z)
        loss = float(np.sum(a * z - 0.5 * self.mu * a * a))
        return 0.5 / self.kappa * float(np.sum(V * V)) + loss

    def _back(self, U):
        """(X^T U P, P 1^T U): the map of slot sums U (n, k) to the (V, b) space."""
        gV = centered_slots(transposed_times(self.X, U))
        gb = U.sum(axis=0)
        gb = gb - gb.mean() if self.problem.equality else np.zeros(self.k)
        return gV, gb

    def gradient(self, V, b, z):
        gV, gb = self._back(self.problem.slot_sums(self.alpha(z)))
        return gV + V / self.kappa, gb

    def hessian(self, free):
        """The (generalized) Hessian in the layout of ``_flat`` at the active pattern free.

        Every free term v adds (x_i x_i^T) (x) (d_v d_v^T) / mu, with x_i extended by 1 for
        the intercepts; d_v has at most two slots, so the sum is taken block by block (slot
        pair j <= l) over the samples with free terms there, then projected by P on the slot
        axes.  The penalty adds I / kappa on the V rows; I (x) 11^T / k (the directions P
        removes, where nothing moves) and a tiny ridge on b make it positive definite."""
        p, k = self.problem, self.k
        m = self.n_rows
        v = np.flatnonzero(free)
        rows = self.rows[v]
        keys, weights = [p.slot1[v] * k + p.slot1[v]], [p.coef1[v] ** 2]
        two = v[p.slot2[v] >= 0]
        if len(two):
            s1, s2 = p.slot1[two], p.slot2[two]
            keys += [s2 * k + s2, np.minimum(s1, s2) * k + np.maximum(s1, s2)]
            weights += [p.coef2[two] ** 2, p.coef1[two] * p.coef2[two]]
            rows = np.concatenate([rows, self.rows[two], self.rows[two]])
        keys, weights = np.concatenate(keys), np.concatenate(weights) / self.mu
        H4 = np.zeros((m, k, m, k))
        n = self.X.shape[0]
        # the weight of every (slot pair, sample) cell, the cells sorted by slot pair
        cells, inverse = np.unique(keys.astype(np.int64) * n + rows, return_inverse=True)
        w = np.bincount(inverse, weights=weights)
        pairs, starts = np.unique(cells // n, return_index=True)
        for key, lo, hi in zip(pairs, starts, [*starts[1:], len(cells)]):
            B = self._weighted_gram(cells[lo:hi] - key * n, w[lo:hi])
            j, l = divmod(int(key), k)
            H4[:, j, :, l] += B
            if j != l:
                H4[:, l, :, j] += B.T
        H4 -= H4.mean(axis=1, keepdims=True)          # P on both slot axes
        H4 -= H4.mean(axis=3, keepdims=True)
        H = H4.reshape(m * k, m * k)
        d = self.X.shape[1]
        H[np.arange(d * k), np.arange(d * k)] += 1.0 / self.kappa
        H += np.kron(np.eye(m), np.full((k, k), 1.0 / k))
        if self.problem.equality:
            top = max(float(np.max(np.abs(np.diag(H)))), 1.0)
            H[np.arange(d * k, m * k), np.arange(d * k, m * k)] += 1e-10 * top
        return H

    def _weighted_gram(self, idx, w):
        """[X, 1]^T diag(w) [X, 1] over the rows idx (or X^T diag(w) X without intercepts)."""
        Xs = self.X[idx]
        Xs = Xs.toarray() if hasattr(Xs, "toarray") else np.asarray(Xs, dtype=np.float64)
        if self.problem.equality:
            Xs = np.hstack([Xs, np.ones((len(idx), 1))])
        return (Xs * w[:, None]).T @ Xs

    @property
    def n_rows(self):
        """Rows of the unknown block [V; b^T]: d, plus 1 with unpenalized intercepts."""
        return self.X.shape[1] + (1 if self.problem.equality else 0)

    def _flat(self, gV, gb):
        return (np.vstack([gV, gb[None, :]]) if self.problem.equality else gV).ravel()

    def _unflat(self, x):
        T = x.reshape(self.n_rows, self.k)
        d = self.X.shape[1]
        return T[:d], (T[d] if self.problem.equality else np.zeros(self.k))

    # ----------------------------------------------------------------- Newton
    def newton(self, V, b, gtol, max_steps=NEWTON_MAX_ITER):
        """Newton's method, each step the exact minimizer along the Newton direction, until
        the gradient norm is below gtol (at most max_steps steps; ``self.steps`` counts them)."""
        from scipy.linalg import cho_factor, cho_solve, LinAlgError, lstsq

        p = self.problem
        z = self._z(self.decision(V, b))
        f = self.value(V, b, z)
        self.steps = 0
        for _ in range(max_steps):
            self.steps += 1
            gV, gb = self.gradient(V, b, z)
            g = self._flat(gV, gb)
            if np.sqrt(g @ g) <= gtol:
                break
            # terms at a kink count as free (their curvature is what the step meets first)
            H = self.hessian((z >= self.mu * p.lo) & (z <= self.mu * p.hi))
            try:
                step_dir = cho_solve(cho_factor(H), g)
            except LinAlgError:
                step_dir = lstsq(H, g)[0]
            sV, sb = self._center(*self._unflat(step_dir))
            slope = float(gV.ravel() @ sV.ravel() + gb @ sb)
            if not slope > 0:
                sV, sb, slope = gV, gb, float(g @ g)
            dz = self._dz(self.decision(sV, sb if p.equality else 0.0))
            step = self._exact_step(V, sV, z, dz)
            V1, b1 = V - step * sV, b - step * sb
            z1 = z - step * dz
            f1 = self.value(V1, b1, z1)
            if not f1 < f:
                break                               # no decrease: rounding reached
            V, b, z, f = V1, b1, z1, f1
        return V, b, z

    def _exact_step(self, V, sV, z, dz):
        """The minimizer t > 0 of the objective along -(sV, sb): the derivative in t,
        (t ||sV||^2 - <V, sV>) / kappa - sum_v dz_v alpha_v(z_v - t dz_v), is increasing and
        piecewise linear (the smoothed hinge terms are piecewise quadratic), so its root is
        bracketed by doubling and found by bisection, O(n_vars) per evaluation."""
        a, c = float(np.sum(sV * sV)) / self.kappa, float(np.sum(V * sV)) / self.kappa

        def slope(t):
            return t * a - c - float(dz @ self.alpha(z - t * dz))

        lo, s_lo = 0.0, slope(0.0)
        hi, s_hi = 1.0, slope(1.0)
        while s_hi < 0 and hi < 1e12:
            lo, s_lo = hi, s_hi
            hi *= 2.0
            s_hi = slope(hi)
        if s_hi < 0:
            return hi
        # Illinois regula falsi on the increasing piecewise-linear derivative: a few steps
        # to within 1e-9 of its initial magnitude
        tol, side = 1e-9 * abs(slope(0.0)), 0
        for _ in range(50):
            t = lo - s_lo * (hi - lo) / (s_hi - s_lo) if s_hi != s_lo else 0.5 * (lo + hi)
            st = slope(t)
            if abs(st) <= tol or hi - lo <= 1e-14 * hi:
                return t
            if st < 0:
                lo, s_lo = t, st
                if side == -1:
                    s_hi *= 0.5
                side = -1
            else:
                hi, s_hi = t, st
                if side == 1:
                    s_lo *= 0.5
                side = 1
        return 0.5 * (lo + hi)


def primal_start(problem, X, W, mu0, tol, diag, max_steps):
    """A dual start (alpha, mu) from the smoothed primal (see the module note).

    ``W`` (d, k): the current weights X^T U of the row source (the warm start, or zeros);
    ``mu0`` (k): the current multiplier (intercept estimate -mu0); ``diag``: the squared
    norms of the rows of X; ``max_steps``: the Newton steps allowed over all stages (the
    fit's max_iter).  mu stops at TOL_FLOOR: below it the start gains nothing the dual solver
    cannot do from there, and the smoothed problem only grows stiffer.
    """
    # one BLAS thread: the Hessian blocks are products of a few million flops, and a
    # threaded OpenBLAS waiting for a busy second core took seconds over each of them
    # (measured: 1-3 s instead of 20 ms under a load of 3 on 2 cores), time in which
    # Ctrl-C could not stop the fit
    with threadpool_limits(limits=1, user_api="blas"):
        primal = SmoothedPrimal(problem, X)
        V, b = primal._center(-problem.kappa * np.asarray(W, dtype=np.float64),
                              -np.asarray(mu0, dtype=np.float64))
        bound = problem.max_abs_bound()
        tol = max(tol, TOL_FLOOR)
        target = 0.5 * tol / bound
        primal.mu = 1.0 / bound
        # the dual solver's scores are those of alpha(z), V - kappa g_V and P c = g_b: a
        # gradient below gtol keeps their effect on the margins and equalities under tol / 4
        gtol = 0.25 * tol * min(1.0, bound) / (
            problem.kappa * np.sqrt(max(np.max(diag), 1e-300)) + 1.0)
        while True:
            primal.mu = max(primal.mu, target)
            # the stages before the last only bring the active pattern near: loosely
            V, b, z = primal.newton(V, b, gtol if primal.mu <= target else 1e3 * gtol,
                                    min(NEWTON_MAX_ITER, max_steps))
            max_steps -= primal.steps
            if primal.mu <= target or max_steps <= 0:
                break
            primal.mu *= 0.1
        alpha = np.ascontiguousarray(primal.alpha(z))
    return alpha, np.ascontiguousarray(-b)
