"""Independent test oracles for msvm, written from docs/models.md and nothing else.

Nothing in this module imports msvm: the kernels, the objective and the reference QP are
written from the formulas of the model contract, so the tests compare the compiled solver with
code that shares no line with it.

ReinforcedMSVM solves (classes coded 0..k-1, g = reinforcement in [0, 1])::

    minimize  1/2 sum_j ||h_j||^2
              + C sum_i w_i [ g [(k-1) - f_{y_i}(x_i)]_+ + (1-g) sum_{j != y_i} [1 + f_j(x_i)]_+ ]
    subject to f_j = b_j + h_j,  sum_j h_j = 0,  sum_j b_j = 0.

By the representer theorem h_j = sum_i V[i, j] K(x_i, .); sum_j h_j = 0 can be imposed as
V @ 1 = 0 without loss of generality (any V whose row sums lie in the null space of K gives
the same functions as its row-centred version), and ||h_j||^2 = v_j^T K v_j = ||R v_j||^2 with
K = R^T R a PSD square root.
"""

import numpy as np

__all__ = [
    "linear_kernel",
    "poly_kernel",
    "rbf_kernel",
    "kernel_matrix",
    "resolve_gamma",
    "hinge_margins",
    "loss_weights",
    "reinforced_objective",
    "reference_fit",
    "signed_dual",
    "dual_objective",
    "make_problem",
]


# --------------------------------------------------------------------------------------------
# Kernels (from the formulas in the contract, not from msvm or scikit-learn)
# --------------------------------------------------------------------------------------------
def linear_kernel(A, B):
    """K[a, b] = <A_a, B_b>."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    return A @ B.T


def poly_kernel(A, B, gamma, degree, coef0):
    """K[a, b] = (gamma <A_a, B_b> + coef0) ** degree."""
    return (gamma * linear_kernel(A, B) + coef0) ** degree


def _sq_dists(A, B):
    """Pairwise squared Euclidean distances from explicit differences (exact, no cancellation)."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    diff = A[:, None, :] - B[None, :, :]
    return np.einsum("abd,abd->ab", diff, diff)


def rbf_kernel(A, B, gamma):
    """K[a, b] = exp(-gamma ||A_a - B_b||^2)."""
    return np.exp(-gamma * _sq_dists(A, B))


def kernel_matrix(A, B, kernel, gamma=None, degree=3, coef0=0.0):
    """Gram matrix for 'linear', 'poly' or 'rbf' with an already resolved float gamma."""
    if kernel == "linear":
        return linear_kernel(A, B)
    if kernel == "poly":
        return poly_kernel(A, B, gamma, degree, coef0)
    if kernel == "rbf":
        return rbf_kernel(A, B, gamma)
    raise ValueError(f"unknown kernel {kernel!r}")


def resolve_gamma(gamma, X, y=None):
    """'scale' -> 1/(d Var(X)), 'auto' -> 1/d, 'median' -> 1/(2 sigma^2) with sigma the median
    of the between-class pairwise Euclidean distances; a float is returned unchanged."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    if gamma == "scale":
        return 1.0 / (d * X.var())
    if gamma == "auto":
        return 1.0 / d
    if gamma == "median":
        y = np.asarray(y)
        dist = np.sqrt(_sq_dists(X, X))
        between = y[:, None] != y[None, :]
        sigma = np.median(dist[np.triu(between, 1)])
        return 1.0 / (2.0 * sigma**2)
    return float(gamma)


# --------------------------------------------------------------------------------------------
# Objective and margins
# --------------------------------------------------------------------------------------------
def hinge_margins(F, y):
    """The arguments of the hinges: m[i, y_i] = (k-1) - F[i, y_i], m[i, j] = 1 + F[i, j] otherwise.

    The loss of sample i is g [m[i, y_i]]_+ + (1-g) sum_{j != y_i} [m[i, j]]_+.
    """
    F = np.asarray(F, dtype=np.float64)
    n, k = F.shape
    y = np.asarray(y)
    m = 1.0 + F
    own = np.arange(n), y
    m[own] = (k - 1) - F[own]
    return m


def loss_weights(y, k, w, C, g):
    """Per-hinge weights C w_i g (own slot) and C w_i (1-g) (other slots): the upper bounds of
    the dual variables alpha_ij that multiply these hinges."""
    y = np.asarray(y)
    w = np.asarray(w, dtype=np.float64)
    n = len(y)
    U = np.repeat((C * w * (1.0 - g))[:, None], k, axis=1)
    U[np.arange(n), y] = C * w * g
    return U


def reinforced_objective(F, y, w, C, g, penalty):
    """penalty + C sum_i w_i [ g [(k-1) - F[i,y_i]]_+ + (1-g) sum_{j!=y_i} [1 + F[i,j]]_+ ].

    F: (n, k) decision values f_j(x_i); y: labels coded 0..k-1; w: sample weights;
    penalty: the value of 1/2 sum_j ||h_j||^2.
    """
    F = np.asarray(F, dtype=np.float64)
    k = F.shape[1]
    m = hinge_margins(F, y)
    U = loss_weights(y, k, w, C, g)
    return float(penalty) + float(np.sum(U * np.maximum(m, 0.0)))


# --------------------------------------------------------------------------------------------
# Reference QP
# --------------------------------------------------------------------------------------------
def reference_fit(K, y, w, C, g, k=None, tol=1e-10, return_dual=False):
    """Solve the reinforced MSVM primal over (V, b) with cvxpy + Clarabel.

    Parameters
    ----------
    K : (n, n) Gram matrix of the training inputs.
    y : (n,) integer labels in 0..k-1.
    w : (n,) nonnegative sample weights.
    C, g : the C and reinforcement of the model.
    k : number of classes (default: max(y) + 1).

    Returns
    -------
    objective : float
        The objective evaluated in NumPy at the returned feasible point (V row-centred and b
        centred exactly, so the value is an upper bound of the optimum up to rounding).
    V : (n, k) expansion coefficients, h_j(x) = sum_i V[i, j] K(x_i, x); rows sum to 0.
    b : (k,) intercepts, summing to 0.
    F : (n, k) decision values on the training points, K V + b.
    alpha : (n, k), only with return_dual=True
        The multipliers of the hinge constraints (alpha[i, j] for hinge j of sample i), read
        from the solver's constraint duals.
    """
    import cvxpy as cp

    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    n = K.shape[0]
    if k is None:
        k = int(y.max()) + 1
    # PSD square root restricted to the numerical range of K: K ~= R^T R with R (r x n) of full
    # row rank. Writing Z = R V (r x k), h_j(x_i) = (R^T Z)_ij and v_j^T K v_j = ||z_j||^2, and
    # V = R^+ Z recovers the expansion. Directions of K with eigenvalue below 1e-13 * max are
    # dropped: they carry no function value and would make the QP singular.
    K = 0.5 * (K + K.T)
    lam, Q = np.linalg.eigh(K)
    keep = lam > 1e-13 * max(lam.max(), 1e-300)
    lam, Q = lam[keep], Q[:, keep]
    R = np.sqrt(lam)[:, None] * Q.T
    r = R.shape[0]

    U = loss_weights(y, k, w, C, g)
    own = np.zeros((n, k))
    own[np.arange(n), y] = 1.0
    U_own = (U * own).sum(axis=1)
    U_other = U * (1.0 - own)

    Z = cp.Variable((r, k))
    b = cp.Variable(k)
    F = R.T @ Z + np.ones((n, 1)) @ cp.reshape(b, (1, k), order="C")
    Fflat = cp.vec(F, order="C")  # Fflat[i * k + j] = F[i, j]
    # One slack per hinge with a positive weight (zero-weight hinges do not enter the objective).
    own_idx = np.flatnonzero(U_own > 0)
    own_pos = own_idx * k + y[own_idx]
    oth_pos = np.flatnonzero(U_other.ravel() > 0)
    objective = 0.5 * cp.sum_squares(Z)
    constraints = [cp.sum(Z, axis=1) == 0, cp.sum(b) == 0]
    hinge_own = hinge_oth = None
    if len(own_pos):
        xi = cp.Variable(len(own_pos))
        objective = objective + U_own[own_idx] @ xi
        hinge_own = xi >= (k - 1) - Fflat[own_pos]
        constraints += [xi >= 0, hinge_own]
    if len(oth_pos):
        eta = cp.Variable(len(oth_pos))
        objective = objective + U_other.ravel()[oth_pos] @ eta
        hinge_oth = eta >= 1 + Fflat[oth_pos]
        constraints += [eta >= 0, hinge_oth]
    prob = cp.Problem(cp.Minimize(objective), constraints)
    prob.solve(
        solver=cp.CLARABEL,
        tol_gap_abs=tol,
        tol_gap_rel=tol,
        tol_feas=tol,
        tol_ktratio=1e-8,
        max_iter=500,
    )
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(f"reference solver status {prob.status}")

    Vv = Q @ (np.asarray(Z.value) / np.sqrt(lam)[:, None])
    bv = np.asarray(b.value)
    # Project onto the constraints exactly, then evaluate the objective in NumPy.
    Vv = Vv - Vv.mean(axis=1, keepdims=True)
    bv = bv - bv.mean()
    Fv = K @ Vv + bv
    penalty = 0.5 * float(np.einsum("ij,ik,kj->", Vv, K, Vv))
    obj = reinforced_objective(Fv, y, w, C, g, penalty)
    if not return_dual:
        return obj, Vv, bv, Fv
    alpha = np.zeros(n * k)
    if hinge_own is not None:
        alpha[own_pos] = hinge_own.dual_value
    if hinge_oth is not None:
        alpha[oth_pos] = hinge_oth.dual_value
    return obj, Vv, bv, Fv, alpha.reshape(n, k)


def signed_dual(alpha, y):
    """c[i, j] = alpha[i, j] on the own slot (j = y_i), -alpha[i, j] on the other slots.

    Stationarity in h gives h_j = sum_i (c[i, j] - mean_j' c[i, j']) K(x_i, .), and
    stationarity in the unpenalized b (with sum_j b_j = 0) says the column sums of c are equal.
    """
    c = -np.array(alpha, dtype=np.float64)
    n = c.shape[0]
    c[np.arange(n), y] *= -1.0
    return c


def dual_objective(K, y, alpha):
    """Lagrange dual function of the reinforced MSVM at alpha, ignoring the intercept condition:

        D(alpha) = (k-1) sum_i alpha[i, y_i] + sum_{j != y_i} alpha[i, j]
                   - 1/2 sum_j c~_j^T K c~_j,      c~ = c - row means of c.

    For alpha in the box [0, C w_i g] x [0, C w_i (1-g)] with equal column sums of c (see
    `signed_dual`), D(alpha) <= optimum (weak duality). Returns (D, column-sum spread).
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    n, k = alpha.shape
    y = np.asarray(y)
    own = np.zeros((n, k), dtype=bool)
    own[np.arange(n), y] = True
    linear = (k - 1) * alpha[own].sum() + alpha[~own].sum()
    c = signed_dual(alpha, y)
    ct = c - c.mean(axis=1, keepdims=True)
    quad = 0.5 * float(np.einsum("ij,ik,kj->", ct, K, ct))
    s = c.sum(axis=0)
    return float(linear - quad), float(s.max() - s.min())


# --------------------------------------------------------------------------------------------
# Random problems
# --------------------------------------------------------------------------------------------
def make_problem(seed, n, k, d, weights="random", separation=1.0):
    """A random k-class problem with every class present.

    Class centres are drawn at `separation` times a standard normal; points are centre plus
    standard normal noise. weights: 'ones', 'random' (uniform in [0.2, 3]), 'zeros' (random with
    about 15% exact zeros, never a whole class), 'integers' (1..3).
    """
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)])
    rng.shuffle(y)
    centres = separation * rng.standard_normal((k, d))
    X = centres[y] + rng.standard_normal((n, d))
    if weights == "ones":
        w = np.ones(n)
    elif weights == "random":
        w = rng.uniform(0.2, 3.0, size=n)
    elif weights == "integers":
        w = rng.integers(1, 4, size=n).astype(np.float64)
    elif weights == "zeros":
        w = rng.uniform(0.2, 3.0, size=n)
        zero = rng.random(n) < 0.15
        # keep at least one positive weight in every class
        for c in range(k):
            members = np.flatnonzero(y == c)
            zero[members[0]] = False
        w[zero] = 0.0
    else:
        raise ValueError(weights)
    return X, y, w
