"""The smoothed primal's Newton direction without its (d + 1) k-square matrix.

Design
------
The smoothed-primal start (msvm/_primal.py) solves H s = g at every Newton step, H the
Newton matrix of ``msvm._primal.newton_matrix``: on the slot-centred unknowns (the rows of
[V; b^T] sum to zero over the class slots) it is P (C / mu + E / kappa + ridge) P, C the
curvature sum over the free terms v of (z_i z_i^T) (x) (d_v d_v^T), z_i = [x_i, 1] with
unpenalized intercepts, E the identity on the V rows and P the slot centring.  Formed and
factored densely it costs ((d + 1) k)^3 / 3 flops and ((d + 1) k)^2 floats a step: 4.2e10
and 200 MB at 1,000 Nystroem components and k = 5, against about 1e8 for a pass over
20,000 samples; so the dense route stops at ``msvm._plan.PRIMAL_MAX_UNKNOWNS`` unknowns.

Above it (``slot_route``) the curvature is kept as its k diagonal slot blocks only,
A_j = sum over the free terms of (d_v)_j^2 z_i z_i^T (k m^2 floats, m = d + 1, updated by
the terms that entered or left the free set as the dense sum is), and the system is solved
by conjugate gradients (``msvm._dask_cg.conjugate_gradients``, shared with the chunked fit)
with the products H p through the features (two passes over X per product, in row chunks,
float32 features kept float32: ``msvm._products``) and the block-Jacobi preconditioner of
those slot blocks with the slot-sum constraint solved exactly (``ProjectedSlotBlocks``):
M_j = A_j / mu + E / kappa + ridge, and for R in the centred space the x with
M_j x_j = R_j - lambda (every slot j) and sum_j x_j = 0, lambda = S^-1 sum_j M_j^-1 R_j,
S = sum_j M_j^-1.  That is P M P inverted on the centred space, k + 1 factorizations of
m x m (k (m^3 / 3 + m^3) + m^3 / 3 flops: 5e9 at m = 1001, k = 5, eight times fewer than the
dense factorization).  Where every direction has one slot (the per-class hinge duals:
ReinforcedMSVM, LLW, their DC steps; ``problem.has_pairs`` false) C is block diagonal by
slot and M is the Newton matrix itself: its solve is the Newton direction, with no product
(``exact``).  Two-slot directions (Weston-Watkins, the generalized margins) couple the slots;
M drops that coupling and CG makes up for it with products.  The chunked fit's own
slot-block preconditioner (msvm._dask_cg.SlotPreconditioner) has no constraint solve: its CG
restores the slot sums with products.

The line search, the stages and the dual solver's certificate are those of the dense route:
only how the direction is computed changes, never what the start is certified against.
"""

import numpy as np

from ._dask_cg import CG_MAX_ITER, _factor, _solve, conjugate_gradients
from ._products import rows_times, transposed_times

# the conjugate-gradient solve of a direction stops at this residual times the gradient's
# norm (an inexact Newton method: the exact line search makes any descent direction safe)
CG_RTOL = 0.1
# the slot route's largest number of rows m = d + 1 of a slot block: k blocks and their
# inverses of m^2 floats each (m = 4001: 128 MB each)
SLOT_MAX_ROWS = 4001


def slot_route_possible(problem, d):
    """Whether the slot route can solve the Newton systems of ``problem``'s smoothed primal
    on d explicit features: terms without group caps (one per variable) and slot blocks of
    at most SLOT_MAX_ROWS rows."""
    return not len(problem.cap) and d + 1 <= SLOT_MAX_ROWS


class ProjectedSlotBlocks:
    """The inverse of P M P on the slot-centred space, M block diagonal by class slot.

    Parameters
    ----------
    A : ndarray of shape (m, m, k), Fortran order
        The slot blocks of the curvature sum (before the division by mu), their upper
        triangles.
    mu, kappa : float
        The smoothing and the penalty's scale.
    d : int
        The rows of V (m = d + 1 with an intercept row, else d).
    ridge : float
        What is added to the intercept row's diagonal (the dense route's 1e-10 times the
        largest diagonal entry of the Newton matrix).
    """

    def __init__(self, A, mu, kappa, d, ridge):
        m, k = A.shape[0], A.shape[2]
        reg = np.zeros(m)
        reg[:d] = 1.0 / kappa
        reg[d:] = ridge
        # the upper triangles of the inverses (Fortran order, as LAPACK and BLAS read them)
        self.inverses = [_upper_inverse(_slot_matrix(A, j, mu, reg)) for j in range(k)]
        S = np.zeros((m, m), order="F")
        for inverse in self.inverses:
            S += inverse
        # Cholesky's factor of S (its upper triangle), or the pseudo-inverse where rounding
        # makes it indefinite (msvm._dask_cg's factor, on S made whole)
        self.schur = _factor(_symmetric(S), 0.0, overwrite=True)

    def __call__(self, R):
        """x (m, k) with slots summing to zero and P M x = R, for R (m, k) slot-centred."""
        from scipy.linalg.blas import dsymv
        Y = np.column_stack([dsymv(1.0, inverse, np.ascontiguousarray(R[:, j]))
                             for j, inverse in enumerate(self.inverses)])
        lam = _solve(self.schur, Y.sum(axis=1))
        return Y - np.column_stack([dsymv(1.0, inverse, lam) for inverse in self.inverses])


def _slot_matrix(A, j, mu, reg):
    """M_j = A_j / mu + diag(reg) (Fortran order, the upper triangle read), A the slot blocks
    (m, m, k) whose upper triangles hold the curvature."""
    M = np.asfortranarray(A[:, :, j] / mu)
    M[np.diag_indices(len(reg))] += reg
    return M


def _symmetric(U):
    """The symmetric matrix whose upper triangle is U's."""
    return np.triu(U) + np.triu(U, 1).T


def _upper_inverse(M):
    """The inverse of the symmetric positive semidefinite M (its upper triangle read and the
    inverse's written; Fortran order): LAPACK potrf and potri (m^3 flops in all), or the
    pseudo-inverse where rounding makes M indefinite."""
    from scipy.linalg.lapack import dpotrf, dpotri
    c, info = dpotrf(M, lower=False, clean=False)
    if info == 0:
        inv, info = dpotri(c, lower=False, overwrite_c=True)
        if info == 0:
            return inv
    return np.asfortranarray(np.linalg.pinv(_symmetric(M), hermitian=True))


def newton_cg_direction(primal, g):
    """The Newton direction (flat, the layout of ``SmoothedPrimal._flat``) of ``primal``
    (a SmoothedPrimal on the slot route, its slot blocks and free membership up to date)
    for the gradient g: the preconditioner's solve where it is the Newton matrix, else
    conjugate gradients with products through the features (see the module note).
    ``primal.products`` counts the products."""
    k, m, d = primal.k, primal.n_rows, primal.X.shape[1]
    diag = np.einsum("aaj->aj", primal._curvature) / primal.mu
    diag[:d] += 1.0 / primal.kappa
    ridge = (1e-10 * max(float(np.max(np.abs(diag))) + 1.0, 1.0)
             if primal.problem.equality else 0.0)
    M = ProjectedSlotBlocks(primal._curvature, primal.mu, primal.kappa, d, ridge)
    G = g.reshape(m, k)
    if not primal.problem.has_pairs:
        return M(G).ravel()
    product = _FreeTermProduct(primal, ridge)
    s, used = conjugate_gradients(product, G, M, rtol=CG_RTOL, max_iter=CG_MAX_ITER)
    primal.products += used
    return s.ravel()


class _FreeTermProduct:
    """P (C / mu + E / kappa + ridge) P times a slot-centred direction (m, k), C the
    curvature sum over the terms the primal's free membership holds: dF = X sV + sb, each
    free term's d_v d_v^T dF_i summed into U' (n, k), then X^T U' (two passes over X)."""

    def __init__(self, primal, ridge):
        problem = primal.problem
        free = np.flatnonzero(primal._free)
        slot1, coef1, slot2, coef2 = (a[free] for a in problem.expanded_directions())
        self.rows = problem.sample_of_var()[free]
        self.slot1, self.coef1 = slot1, coef1
        two = slot2 >= 0
        self.two, self.slot2, self.coef2 = np.flatnonzero(two), slot2[two], coef2[two]
        self.primal, self.ridge = primal, ridge

    def __call__(self, P):
        primal = self.primal
        k, d, n = primal.k, primal.X.shape[1], primal.X.shape[0]
        sV, sb = P[:d], (P[d] if primal.problem.equality else np.zeros(k))
        dF = rows_times(primal.X, sV)
        dF += sb
        rows, two = self.rows, self.two
        z = self.coef1 * dF[rows, self.slot1]
        z[two] += self.coef2 * dF[rows[two], self.slot2]
        cells = np.concatenate([rows * k + self.slot1, rows[two] * k + self.slot2])
        weights = np.concatenate([self.coef1 * z, self.coef2 * z[two]])
        U = np.bincount(cells, weights=weights, minlength=n * k).reshape(n, k)
        parts = [transposed_times(primal.X, U)]
        if primal.problem.equality:
            parts.append(U.sum(axis=0)[None, :])
        H = np.vstack(parts) / primal.mu
        H -= H.mean(axis=1, keepdims=True)
        H[:d] += P[:d] / primal.kappa
        if primal.problem.equality:
            H[d] += self.ridge * P[d]
        return H
