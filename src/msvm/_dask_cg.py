"""The Newton direction of the chunked fit by preconditioned conjugate gradients.

Design
------
The chunked smoothed-primal Newton method (msvm/_dask.py) solves H s = g at each step, H the
Newton matrix of ``msvm._primal.newton_matrix``: (1 / mu) times the curvature sum
sum_i z_i z_i^T (x) T_i of the free terms (z_i = [x_i, 1] with unpenalized intercepts,
T_i = P S_i P the sample's k x k block, projected by the slot centering P), plus I / kappa on
the V rows, I (x) 11^T / k and a tiny ridge on b.  Formed densely, each chunk returns the
(m k)^2 sum (m = d + 1): 200 MB at m = 1001, k = 5, and k (k + 1) / 2 products of m x m over
its free rows.  Here the system is solved by conjugate gradients instead, each product H p
one pass over the chunks (msvm._dask_passes.hessian_pass: an (m, k) array and a k-vector
back from each chunk).  The preconditioner M is summed over the chunks by the gradient pass
(``factored_summary``), over a subsample of the rows (every stride-th row of a chunk, the
sums scaled by the stride: msvm._dask.SKETCH_ROWS rows in all, so that its cost per Newton
step does not grow with n; the products are exact, the subsample only sets how many CG
needs), in one of two forms (PRECONDITIONER):

- 'slots', block diagonal by class slot: M_j = A_j / mu + E / kappa + I / k (plus the
  ridge), A_j = sum_i (T_i)_jj z_i z_i^T, the diagonal blocks of the Newton matrix; k m^2
  values per chunk and k weighted products of the subsampled free rows, k Cholesky factors
  of m x m on the client;
- 'kronecker', M = (1 / mu) A (x) B / tr(B) + E / kappa (x) I + I (x) 11^T / k with
  A = sum_i tr(T_i) z_i z_i^T and B = sum_i T_i: exact when every T_i is a multiple of one
  matrix, applied exactly in the eigenbasis u_b of B (one m x m Cholesky factor per slot
  direction, sigma_b A / mu + E / kappa); m^2 + k^2 values per chunk and one product.

E is the identity on the V rows.  The direction is that of an inexact Newton method
(Dembo, Eisenstat and Steihaug 1982): CG stops once the residual is below CG_RTOL times the
gradient (or after CG_MAX_ITER products); CG from zero on a positive definite system always
gives a descent direction, and the exact line search, the stages and the certificate are
those of the dense route, so the fit's solution and its certificate mean the same.
"""

import numpy as np

# the conjugate-gradient solve stops at a residual of CG_RTOL times the gradient's norm
# (3,000 samples, n_components = 50, k = 5: 0.1 took 1831 passes, 0.3 1508, 0.6 1375 with
# the Kronecker preconditioner; 781, 528 and 493 with the slot blocks)
CG_RTOL = 0.3
# products H p (passes) per Newton direction at most
CG_MAX_ITER = 50
# the preconditioner: 'slots' (block diagonal by class slot: k m^2 per chunk) or
# 'kronecker' (m^2 + k^2 per chunk); see the module note and benchmarks/results/dask.md
PRECONDITIONER = "slots"


def preconditioner(kind, summary, mu, kappa, d):
    """The preconditioner ``kind`` from its summed summary (``factored_summary``)."""
    if kind == "slots":
        return SlotPreconditioner(summary, mu, kappa, d)
    return KroneckerPreconditioner(*summary, mu, kappa, d)


class SlotPreconditioner:
    """M^-1 for the block diagonal M of the Newton matrix by class slot: per slot j,
    A_j / mu + E / kappa + I / k (the diagonal blocks of the curvature term, of the penalty
    and of I (x) 11^T / k) and the ridge, each factored by Cholesky.

    Parameters
    ----------
    A : ndarray of shape (k, m, m)
        The sums of ``msvm._dask_passes.factored_summary`` (kind 'slots') over the chunks.
    mu, kappa : float
        The smoothing and the penalty's scale.
    d : int
        The number of feature rows of V (m = d + 1 with an intercept row, else d).
    """

    def __init__(self, A, mu, kappa, d):
        k, m = A.shape[0], A.shape[1]
        reg = np.zeros(m)
        reg[:d] = 1.0 / kappa
        reg += 1.0 / k
        top = max(float(np.max(np.einsum("jaa->ja", A), initial=0.0)) / mu, 1.0 / kappa, 1.0)
        self.factors = [_factor(A[j] / mu, reg + 1e-10 * top) for j in range(k)]

    def __call__(self, R):
        """M^-1 R for R of shape (m, k)."""
        return np.column_stack([_solve(f, R[:, j]) for j, f in enumerate(self.factors)])


class KroneckerPreconditioner:
    """M^-1 of the module note, from the summed (A, B) of the gradient pass.

    Parameters
    ----------
    A, B : ndarray of shape (m, m) and (k, k)
        The sums of ``msvm._dask_passes.factored_summary`` over the chunks.
    mu, kappa : float
        The smoothing and the penalty's scale.
    d : int
        The number of feature rows of V (m = d + 1 with an intercept row, else d).
    """

    def __init__(self, A, B, mu, kappa, d):
        m, k = A.shape[0], B.shape[0]
        # an orthonormal basis of the slot space whose first vector is 1 / sqrt(k): B is
        # diagonalized on its complement (B 1 = 0), where every T_i lives
        Q = np.linalg.qr(np.column_stack([np.ones(k), np.eye(k)[:, :k - 1]]))[0]
        scale = float(np.trace(B))
        Bn = B / scale if scale > 0 else np.zeros_like(B)
        sigma, W = np.linalg.eigh(Q[:, 1:].T @ Bn @ Q[:, 1:])
        self.basis = np.column_stack([Q[:, :1], Q[:, 1:] @ W])
        reg = np.zeros(m)
        reg[:d] = 1.0 / kappa
        top = max(float(np.max(np.diag(A), initial=0.0)) * float(np.max(sigma, initial=0.0))
                  / mu, 1.0 / kappa, 1.0)
        self.first = 1.0 / (reg + 1.0)                 # the 11^T / k direction: diagonal
        self.factors = [_factor((max(s, 0.0) / mu) * A, reg + 1e-10 * top) for s in sigma]

    def __call__(self, R):
        """M^-1 R for R of shape (m, k)."""
        C = R @ self.basis
        out = np.empty_like(C)
        out[:, 0] = self.first * C[:, 0]
        for j, f in enumerate(self.factors, start=1):
            out[:, j] = _solve(f, C[:, j])
        return out @ self.basis.T


def _factor(M, diagonal):
    """A factor of M + diag(diagonal) (symmetric positive semidefinite M): Cholesky's, or
    the pseudo-inverse where rounding makes it indefinite."""
    from scipy.linalg import LinAlgError, cho_factor
    M = M.copy()
    M[np.diag_indices(len(M))] += diagonal
    try:
        return "cho", cho_factor(M)
    except LinAlgError:
        return "pinv", np.linalg.pinv(M, hermitian=True)


def _solve(factor, r):
    from scipy.linalg import cho_solve
    kind, f = factor
    return cho_solve(f, r) if kind == "cho" else f @ r


def conjugate_gradients(product, g, precondition, rtol=CG_RTOL, max_iter=CG_MAX_ITER):
    """(s, products): an approximate solution of H s = g by preconditioned conjugate
    gradients from s = 0, stopped once ||g - H s|| <= rtol ||g|| or after ``max_iter``
    products ``product(p)`` = H p (arrays of g's shape), or where a direction has no
    positive curvature (H p = 0 on it: the steps so far are kept)."""
    s = np.zeros_like(g)
    r = g.copy()
    z = precondition(r)
    p = z.copy()
    rz = float(np.sum(r * z))
    goal = rtol * float(np.sqrt(np.sum(g * g)))
    used = 0
    while used < max_iter and rz > 0:
        Hp = product(p)
        used += 1
        curvature = float(np.sum(p * Hp))
        if not curvature > 0:
            break
        a = rz / curvature
        s += a * p
        r -= a * Hp
        if float(np.sqrt(np.sum(r * r))) <= goal:
            break
        z = precondition(r)
        rz, previous = float(np.sum(r * z)), rz
        p = z + (rz / previous) * p
    return s, used
