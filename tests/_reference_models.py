"""Independent oracles for the robust, weighted and Weston-Watkins models (no msvm import).

Every model of docs/models.md here is `1/2 sum_j ||h_j||^2 + loss(F)` over sum-to-zero
functions f_j = b_j + h_j; `primal_fit` solves that primal with cvxpy + Clarabel for a loss
given as a cvxpy expression of the decision values F (n x k), with the same PSD square-root
parametrization as tests/_reference.py (h_j = sum_i V[i, j] K(x_i, .), V @ 1 = 0).  The
losses are written here in NumPy (for evaluating any function) and in cvxpy (for the primal),
both straight from the contract:

- Weston-Watkins: sum_i w_i sum_{j != y_i} [1 - (f_{y_i} - f_j)]_+;
- weighted robust: sum_i w_i sum_j U[y_i, j] T_s(g_j(f)), g_j(f) = min_{j' != j}(f_j - f_j'),
  T_s(u) = [1 - u]_+ - [s - u]_+ (s = None: no truncation);
- robust: sum_i w_i sum_{j != y_i} T_s(f_j), T_s(u) = [1 + u]_+ - [u - s]_+;
- the DC subproblems: the convex part minus the linearization of the concave part at the
  indicators beta (seed 001 eq. 3.5, seed 000 section 4).
"""

import numpy as np

C_TOL = 1e-10


def margins(F):
    """g_j(f) = f_j - max_{j' != j} f_j' for every row of F (n, k)."""
    F = np.asarray(F, dtype=np.float64)
    k = F.shape[1]
    out = np.empty_like(F)
    for j in range(k):
        out[:, j] = F[:, j] - np.delete(F, j, axis=1).max(axis=1)
    return out


def ww_loss(F, y, w):
    n, k = F.shape
    own = F[np.arange(n), y][:, None]
    terms = np.maximum(1.0 - (own - F), 0.0)
    terms[np.arange(n), y] = 0.0
    return float(np.dot(w, terms.sum(axis=1)))


def weighted_loss(F, y, w, U, s):
    M = margins(F)
    T = np.maximum(1.0 - M, 0.0)
    if s is not None:
        T = T - np.maximum(s - M, 0.0)
    return float(np.dot(w, (U[y] * T).sum(axis=1)))


def robust_loss(F, y, w, s):
    n, k = F.shape
    T = np.maximum(1.0 + F, 0.0)
    if s is not None:
        T = T - np.maximum(F - s, 0.0)
    T[np.arange(n), y] = 0.0
    return float(np.dot(w, T.sum(axis=1)))


def robust_beta(F, y, s):
    """beta_ij = [f_j(x_i) > s] for j != y_i (seed 001, after eq. 3.4)."""
    beta = F > s
    beta[np.arange(len(y)), y] = False
    return beta


def robust_linearized_loss(F, y, w, s, beta):
    """sum_i w_i sum_{j != y_i} ([1 + f_j]_+ - beta_ij (f_j - s)): the DC subproblem's loss."""
    n = len(y)
    T = np.maximum(1.0 + F, 0.0) - beta * (F - s)
    T[np.arange(n), y] = 0.0
    return float(np.dot(w, T.sum(axis=1)))


def weighted_beta(F, s):
    """(beta, jstar): beta_ij = [g_j(f(x_i)) < s] and j* = argmax_{j' != j} f_j'(x_i)."""
    n, k = F.shape
    jstar = np.empty((n, k), dtype=int)
    for j in range(k):
        G = F.copy()
        G[:, j] = -np.inf
        jstar[:, j] = np.argmax(G, axis=1)
    return margins(F) < s, jstar


def weighted_linearized_loss(F, y, w, U, s, beta, jstar):
    """sum_i w_i sum_j U[y_i, j] ([1 - g_j]_+ - beta_ij (s - f_j + f_{j*}))."""
    n, k = F.shape
    rows = np.arange(n)[:, None]
    lin = s - F + F[rows, jstar]
    T = np.maximum(1.0 - margins(F), 0.0) - beta * lin
    return float(np.dot(w, (U[y] * T).sum(axis=1)))


def penalty(V, K):
    """1/2 sum_j ||h_j||^2 for h_j = sum_i V[i, j] K(x_i, .)."""
    return 0.5 * float(np.einsum("ij,ik,kj->", V, K, V))


def primal_fit(K, k, loss_expr, sum_to_zero=True, intercept=True):
    """Minimize 1/2 sum_j ||h_j||^2 + loss_expr(F) over k functions with cvxpy + Clarabel,
    sum-to-zero unless told otherwise.

    Returns (V, b, F) at the solution (V row-centred and b centred exactly when sum-to-zero).
    """
    import cvxpy as cp

    K = 0.5 * (np.asarray(K, dtype=np.float64) + np.asarray(K, dtype=np.float64).T)
    n = K.shape[0]
    lam, Q = np.linalg.eigh(K)
    keep = lam > 1e-13 * max(lam.max(), 1e-300)
    lam, Q = lam[keep], Q[:, keep]
    R = np.sqrt(lam)[:, None] * Q.T
    Z = cp.Variable((R.shape[0], k))
    b = cp.Variable(k)
    F = R.T @ Z + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
    cons = [cp.sum(Z, axis=1) == 0, cp.sum(b) == 0] if sum_to_zero else []
    if not intercept:
        cons.append(b == 0)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(Z) + loss_expr(F)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=C_TOL, tol_gap_rel=C_TOL, tol_feas=C_TOL,
               max_iter=500)
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(f"reference solver status {prob.status}")
    V = Q @ (np.asarray(Z.value) / np.sqrt(lam)[:, None])
    bv = np.asarray(b.value)
    if sum_to_zero:
        V = V - V.mean(axis=1, keepdims=True)
        bv = bv - bv.mean()
    return V, bv, K @ V + bv


def cvx_ww_loss(y, w, C):
    import cvxpy as cp

    def loss(F):
        n, k = F.shape
        terms = []
        for i in range(n):
            for j in range(k):
                if j != y[i] and w[i] > 0:
                    terms.append(C * w[i] * cp.pos(1 - F[i, y[i]] + F[i, j]))
        return cp.sum(cp.hstack(terms))
    return loss


def cvx_weighted_loss(y, w, C, U, beta=None, jstar=None, s=None):
    """Convex weighted hinge, minus the DC linearization when beta is given."""
    import cvxpy as cp

    def loss(F):
        n, k = F.shape
        terms = []
        for i in range(n):
            for j in range(k):
                c = C * w[i] * U[y[i], j]
                if c <= 0:
                    continue
                hinge = cp.max(cp.hstack([1 - F[i, j] + F[i, jp] for jp in range(k) if jp != j]))
                term = cp.pos(hinge)
                if beta is not None and beta[i, j]:
                    term = term - (s - F[i, j] + F[i, jstar[i, j]])
                terms.append(c * term)
        return cp.sum(cp.hstack(terms))
    return loss


def cvx_robust_loss(y, w, C, beta, s):
    """sum_i C w_i sum_{j != y_i} ([1 + f_j]_+ - beta_ij (f_j - s))."""
    import cvxpy as cp

    def loss(F):
        n, k = F.shape
        terms = []
        for i in range(n):
            for j in range(k):
                if j == y[i] or w[i] <= 0:
                    continue
                term = cp.pos(1 + F[i, j])
                if beta is not None and beta[i, j]:
                    term = term - (F[i, j] - s)
                terms.append(C * w[i] * term)
        return cp.sum(cp.hstack(terms))
    return loss


def vertices(k):
    """Simplex vertices as columns (k-1, k), from seed 004's formula."""
    W = np.zeros((k - 1, k))
    one = np.ones(k - 1)
    W[:, 0] = one / np.sqrt(k - 1)
    for j in range(2, k + 1):
        e = np.zeros(k - 1)
        e[j - 2] = 1.0
        W[:, j - 1] = -(1 + np.sqrt(k)) / (k - 1) ** 1.5 * one + np.sqrt(k / (k - 1)) * e
    return W


def reinforced_loss(G, y, w, g):
    n, k = G.shape
    own = G[np.arange(n), y]
    other = np.maximum(1.0 + G, 0.0)
    other[np.arange(n), y] = 0.0
    return float(np.dot(w, g * np.maximum((k - 1) - own, 0.0) + (1 - g) * other.sum(axis=1)))


def cvx_angle_loss(y, w, C, g, k, u0_weights=None):
    """C sum_i w_i [g [(k-1) - <f, W_y>]_+ + (1-g) sum_{j != y} [1 + <f, W_j>]_+] on f (n, k-1)."""
    import cvxpy as cp

    W = vertices(k)

    def loss(F):
        G = F @ W
        n = G.shape[0]
        terms = []
        for i in range(n):
            if w[i] <= 0:
                continue
            t = g * cp.pos((k - 1) - G[i, y[i]])
            for j in range(k):
                if j != y[i]:
                    t = t + (1 - g) * cp.pos(1 + G[i, j])
            terms.append(C * w[i] * t)
        return cp.sum(cp.hstack(terms))
    return loss
