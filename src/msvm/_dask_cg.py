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
back from each chunk).  The preconditioner M comes from the gradient pass, in one of three
forms (PRECONDITIONER):

- 'sampled' (the default), subsampled Newton: M is the Newton matrix itself with the
  curvature sum taken over a sample of the samples with a free term (every stride-th one of
  each chunk, its block scaled by the chunk's free samples per sample taken; the stride is
  set from the last gradient pass's count of free samples so that about
  SAMPLED_ROWS_PER_FEATURE m samples are taken).  Each chunk sends the sampled rows (in the
  features' dtype) and k x k blocks; the client forms M (``sampled_newton_matrix``: per slot
  pair one symmetric product over the rows whose Laplacian weight is nonzero, and the
  blocks' row sums, zero for Weston-Watkins) and factors it by Cholesky
  (m k = 5005: about 1 s and 200 MB).  M keeps every coupling of the class slots, which
  the block-diagonal forms below drop (the Newton matrix's off-diagonal slot blocks are
  as large as its diagonal ones where a term couples the sample's class with another);
  a uniform sample of several m rows approximates the Newton matrix's spectrum (the
  subsampled Newton methods of Roosta-Khorasani and Mahoney 2016, used here as a
  preconditioner with exact products), so CG needs few products; where the
  sample holds every free sample (late stages: few terms are free) M is the Newton matrix
  and M^-1 g the Newton direction, with no product at all.  Beyond SAMPLED_MAX_UNKNOWNS
  the slot blocks are used instead.
- the block-diagonal forms, summed over the chunks by the gradient pass
  (``factored_summary``) over a subsample of the rows (every stride-th row of a chunk, the
  sums scaled by the stride: msvm._dask.SKETCH_ROWS rows in all, so that its cost per
  Newton step does not grow with n; the products are exact, the subsample only sets how
  many CG needs):

  - 'slots', block diagonal by class slot: M_j = A_j / mu + E / kappa + I / k (plus the
    ridge), A_j = sum_i (T_i)_jj z_i z_i^T, the diagonal blocks of the Newton matrix; k m^2
    values per chunk and k weighted products of the subsampled free rows, k Cholesky
    factors of m x m on the client;
  - 'kronecker', M = (1 / mu) A (x) B / tr(B) + E / kappa (x) I + I (x) 11^T / k with
    A = sum_i tr(T_i) z_i z_i^T and B = sum_i T_i: exact when every T_i is a multiple of
    one matrix, applied exactly in the eigenbasis u_b of B (one m x m Cholesky factor per
    slot direction, sigma_b A / mu + E / kappa); m^2 + k^2 values per chunk and one
    product.

E is the identity on the V rows.  The direction is that of an inexact Newton method
(Dembo, Eisenstat and Steihaug 1982): CG stops once the residual is below CG_RTOL times the
gradient (or after CG_MAX_ITER products); CG from zero on a positive definite system always
gives a descent direction, and the exact line search, the stages and the certificate are
those of the dense route, so the fit's solution and its certificate mean the same.
"""

import numpy as np

# the conjugate-gradient solve stops at a residual of CG_RTOL times the gradient's norm
# (3,000 samples, n_components = 50, k = 5: 0.1 took 1831 passes, 0.3 1508, 0.6 1375 with
# the Kronecker preconditioner; 781, 528 and 493 with the slot blocks; measured before the
# sampled Newton matrix)
CG_RTOL = 0.3
# products H p (passes) per Newton direction at most
CG_MAX_ITER = 50
# the preconditioner: 'sampled' (the Newton matrix of a sample of the free terms: rows and
# k x k blocks per chunk), 'slots' (block diagonal by class slot: k m^2 per chunk) or
# 'kronecker' (m^2 + k^2 per chunk); see the module note and benchmarks/results/dask.md
PRECONDITIONER = "sampled"
# the sampled Newton matrix's sample: about this many free samples per row m of V
SAMPLED_ROWS_PER_FEATURE = 8
# the sampled Newton matrix is formed and factored on the client up to this many unknowns
# m k (a 12000^2 float64 matrix is 1.15 GB); beyond, the slot blocks are used
SAMPLED_MAX_UNKNOWNS = 12000
# the sampled Newton matrix's blocks: a row sum at most this fraction of its block's largest
# entry is rounding (a Weston-Watkins block's rows sum to zero), not a diagonal part
ROW_SUM_RTOL = 1e-12


def preconditioner(kind, summary, mu, kappa, d, equality=True):
    """The preconditioner ``kind`` from its summed summary (``factored_summary``)."""
    if kind == "sampled":
        return SampledPreconditioner(summary, mu, kappa, d, equality)
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


class SampledPreconditioner:
    """M^-1 for M the Newton matrix of a sample of the free terms (subsampled Newton): the
    matrix of ``msvm._primal.newton_matrix`` with the curvature sum taken over the sampled
    samples' rows and blocks (each block scaled up to its chunk's free samples), factored by
    Cholesky on the client.  It holds every coupling of the class slots that the Newton
    matrix has; where the sample holds every free sample (``exact``) it is the Newton matrix
    itself and M^-1 g the Newton direction.

    Parameters
    ----------
    sample : SampledRows
        The summed sample of ``msvm._dask_passes.sampled_rows`` (None: no free sample).
    mu, kappa : float
        The smoothing and the penalty's scale.
    d : int
        The number of feature rows of V (m = d + 1 with an intercept row, else d).
    equality : bool
        Whether the intercepts are unpenalized (the rows are extended by a constant 1).
    k : int, optional
        The number of class slots (read from the sample's blocks when it has any).
    """

    def __init__(self, sample, mu, kappa, d, equality, k=None):
        from scipy.linalg import LinAlgError, cho_factor
        k = sample.blocks.shape[1] if k is None else k
        self.exact, self.mu = sample.exact, mu
        self.m, self.k = d + (1 if equality else 0), k
        args = (sample.rows, sample.blocks, mu, kappa, d, equality)
        try:
            self.factor = "cho", cho_factor(sampled_newton_matrix(*args), overwrite_a=True,
                                            check_finite=False)
        except LinAlgError:
            # rounding made it indefinite: formed again, and Cholesky's or the pseudo-inverse
            H = sampled_newton_matrix(*args)
            self.factor = _factor(H, 1e-9 * max(float(np.max(np.diag(H))), 1.0), True)

    def __call__(self, R):
        """M^-1 R for R of shape (m, k)."""
        return _solve(self.factor, R.ravel()).reshape(R.shape)


def sampled_newton_matrix(rows, blocks, mu, kappa, d, equality):
    """``msvm._primal.newton_matrix`` of the curvature sum sum_i z_i z_i^T (x) S_i over the
    given rows (z_i = [x_i, 1] with unpenalized intercepts) and blocks S_i (k x k, before
    the projection), formed in place (one (m k)^2 array).

    Each block is split as S_i = sum_{j<l} c_jl (e_j - e_l)(e_j - e_l)^T + diag(S_i 1) with
    c_jl = -(S_i)_jl: a Laplacian, which the slot centering P leaves as it is, and the
    diagonal of the row sums (zero, to rounding, for a Weston-Watkins sample, whose every
    term is on e_j - e_y; ROW_SUM_RTOL).  So per slot pair one symmetric product (syrk) over
    the rows with c_jl != 0 fills four blocks, and the diagonal part k more, projected
    block by block: at m k = 5005, 8008 rows, every term free (one BLAS thread, shared
    machine), 0.90 s instead of 3.15 s for one weighted product per entry (j, l) of the
    blocks, where the diagonal entries' products ran over every row."""
    s, k = blocks.shape[0], blocks.shape[1]
    m = d + (1 if equality else 0)
    H4 = np.zeros((m, k, m, k))
    if s:
        Z = np.empty((s, m))
        Z[:, :d] = rows
        if equality:
            Z[:, d] = 1.0
        for j in range(k):
            for i in range(j + 1, k):
                W = _weighted_gram(Z, -blocks[:, j, i])
                if W is None:
                    continue
                H4[:, j, :, j] += W
                H4[:, i, :, i] += W
                H4[:, j, :, i] -= W
                H4[:, i, :, j] -= W
        _add_projected_diagonal(H4, Z, blocks)
        H4 /= mu
    H = H4.reshape(m * k, m * k)
    diagonal = np.arange(m * k)
    H[diagonal[:d * k], diagonal[:d * k]] += 1.0 / kappa
    for j in range(k):                                # I (x) 11^T / k
        H4[np.arange(m), j, np.arange(m), :] += 1.0 / k
    if equality:
        top = max(float(np.max(np.abs(np.diag(H)))), 1.0)
        H[diagonal[d * k:], diagonal[d * k:]] += 1e-10 * top
    return H


def _add_projected_diagonal(H4, Z, blocks):
    """Add sum_i z_i z_i^T (x) P diag(S_i 1) P to H4 (m, k, m, k): with D_j the sum of
    (S_i 1)_j z_i z_i^T, block (a, b) gets delta_ab D_a - (D_a + D_b) / k + sum_j D_j / k^2.
    Row sums within ROW_SUM_RTOL of their block's largest entry count as zero."""
    k = blocks.shape[1]
    r = blocks.sum(axis=2)
    r[np.abs(r) <= ROW_SUM_RTOL * np.abs(blocks).max(axis=(1, 2))[:, None]] = 0.0
    D = [_weighted_gram(Z, r[:, j]) for j in range(k)]
    if all(G is None for G in D):
        return
    D = [np.zeros((Z.shape[1],) * 2) if G is None else G for G in D]
    total = sum(D) / (k * k)
    for a in range(k):
        for b in range(k):
            H4[:, a, :, b] += total - (D[a] + D[b]) / k
        H4[:, a, :, a] += D[a]


def _weighted_gram(Z, w):
    """sum_i w_i z_i z_i^T over the rows with w_i != 0 (None if there is none): one
    symmetric product Zs^T Zs (syrk) per sign of the weights, Zs = Z sqrt|w|."""
    out = None
    for sign in (1.0, -1.0):
        idx = np.flatnonzero(sign * w > 0)
        if not len(idx):
            continue
        Zs = Z[idx] * np.sqrt(sign * w[idx])[:, None]
        G = Zs.T @ Zs
        out = sign * G if out is None else out + sign * G
    return out


def _factor(M, diagonal, overwrite=False):
    """A factor of M + diag(diagonal) (symmetric positive semidefinite M): Cholesky's, or
    the pseudo-inverse where rounding makes it indefinite."""
    from scipy.linalg import LinAlgError, cho_factor
    if not overwrite:
        M = M.copy()
    M[np.diag_indices(len(M))] += diagonal
    try:
        return "cho", cho_factor(M, overwrite_a=overwrite, check_finite=False)
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
