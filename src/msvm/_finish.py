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

The result is only a proposal: the caller hands it to the compiled solver, whose own stopping
rule (KKT residual and duality gap) certifies it or goes on from it.  Problems with group caps
are left to the solver (None is returned), as are free sets above MAX_FREE variables (the
dense system would cost more than the iterations it saves).
"""

import warnings

import numpy as np
import scipy.linalg

# the largest free set whose bordered system is formed and factored (m^3 / 3 flops)
MAX_FREE = 600
# active-set iterations (each one dense solve) ...
MAX_STEPS = 400
# ... and the flops of their factorizations (sum of m^3 / 3; about 0.3 s on one core)
MAX_FLOPS = 1e9
# a variable within this fraction of its box width of a bound is at the bound
BOUND_RTOL = 1e-12
# the largest (largest bound) x (largest kernel diagonal) the dense system is formed for
MAX_SCALE = 1e100
# the regularization of the free block, relative to its largest diagonal entry
REG = 1e-11


class _Layout:
    """The per-variable arrays of a problem, expanded once."""

    def __init__(self, problem):
        self.k, self.kappa, self.equality = problem.k, problem.kappa, problem.equality
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
    """Kernel columns K[:, i] of the samples asked for, fetched once each."""

    def __init__(self, columns, n):
        self._columns = columns
        self._index = {}
        self._K = np.zeros((n, 0))

    def block(self, samples):
        """K[:, samples] (n, len(samples))."""
        new = [int(i) for i in np.unique(samples) if int(i) not in self._index]
        if new:
            cols = np.asarray(self._columns(np.array(new)), dtype=np.float64)
            base = self._K.shape[1]
            self._K = np.hstack([self._K, cols])
            for j, i in enumerate(new):
                self._index[i] = base + j
        return self._K[:, [self._index[int(i)] for i in samples]]


def _newton_step(lay, problem, alpha, z, free, cols, E):
    """The step on the free variables to the minimizer of the equality-constrained QP with
    the other variables fixed, and the shift s of its equalities."""
    k = lay.k
    iv = lay.sample[free]
    Dd = lay.directions(free)
    Q = lay.kappa * cols.block(iv)[iv] * (Dd @ (Dd - Dd.sum(axis=1, keepdims=True) / k).T)
    m = len(free)
    reg = REG * max(float(np.abs(np.diag(Q)).max()) if m else 0.0, 1e-300)
    if lay.equality:
        A = Dd @ E
        kkt = np.block([[Q + reg * np.eye(m), A], [A.T, -reg * np.eye(k - 1)]])
        rhs = np.concatenate([-z[free], -(E.T @ problem.class_sums(alpha))])
    else:
        kkt, rhs = Q + reg * np.eye(m), -z[free]
    sol = scipy.linalg.solve(kkt, rhs, assume_a="sym", check_finite=False)
    s = E @ sol[m:] if lay.equality else np.zeros(k)
    return sol[:m], s


def _ratio(alpha, step, lo, hi):
    """The largest t <= 1 keeping alpha + t step in the box, and the variables it stops at."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(step > 0, (hi - alpha) / step,
                        np.where(step < 0, (lo - alpha) / step, np.inf))
    t = min(1.0, float(room.min())) if len(room) else 1.0
    return max(t, 0.0), np.flatnonzero(room <= t)


def _score_change(lay, cols, old, new):
    """K (U(new) - U(old)) (n, k), from the kernel columns of the samples that moved."""
    moved = np.flatnonzero(new != old)
    if len(moved) == 0:
        return 0.0
    samples, where = np.unique(lay.sample[moved], return_inverse=True)
    dU = np.zeros((len(samples), lay.k))
    np.add.at(dU, where, (new[moved] - old[moved])[:, None] * lay.directions(moved))
    return cols.block(samples) @ dU


def _snapped(lay, alpha, bound):
    """alpha with the variables within BOUND_RTOL of a bound moved onto it."""
    near = BOUND_RTOL * max(bound, 1e-300)
    return np.where(alpha - lay.lo <= near, lay.lo,
                    np.where(lay.hi - alpha <= near, lay.hi, alpha))


def finish_dual(problem, alpha, F, columns, tol, max_diag):
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
            found = _active_set(problem, alpha, F, columns, tol)
        except np.linalg.LinAlgError:
            return None
    if found is None or not (np.all(np.isfinite(found[0])) and np.all(np.isfinite(found[1]))):
        return None
    return found


def _active_set(problem, alpha, F, columns, tol):
    """The loop of `finish_dual`: (alpha, s) or None."""
    lay = _Layout(problem)
    lo, hi = lay.lo, lay.hi
    cols = _Columns(columns, problem.n_samples)
    start = np.asarray(alpha, dtype=np.float64)
    alpha = _snapped(lay, start, problem.max_abs_bound())
    F = np.asarray(F, dtype=np.float64) + _score_change(lay, cols, start, alpha)
    fixed_ok = hi > lo
    free = (alpha > lo) & (alpha < hi)
    E = _slot_basis(lay.k)
    flops = 0.0
    for _ in range(MAX_STEPS):
        idx = np.flatnonzero(free)
        flops += (len(idx) + lay.k) ** 3 / 3.0
        if len(idx) > MAX_FREE or flops > MAX_FLOPS:
            return None
        step, s = _newton_step(lay, problem, alpha, lay.gradient(F), idx, cols, E)
        t, stops = _ratio(alpha[idx], step, lo[idx], hi[idx])
        old = alpha.copy()
        alpha[idx] += t * step
        if t < 1.0:
            hit = idx[stops]
            alpha[hit] = np.where(step[stops] > 0, hi[hit], lo[hit])
            free[hit] = False
        np.clip(alpha, lo, hi, out=alpha)
        F = F + _score_change(lay, cols, old, alpha)
        if t < 1.0:
            continue
        r = lay.gradient(F) + lay.shift(s)
        viol = np.where(alpha <= lo, -r, np.where(alpha >= hi, r, 0.0))
        viol[free | ~fixed_ok] = 0.0
        worst = int(np.argmax(viol))
        if viol[worst] <= 0.01 * tol:
            return alpha, s
        free[worst] = True           # the most violating bound is released
    return None
