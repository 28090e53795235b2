"""Kernels of the model contract (``docs/models.md``, "Every estimator"), written from their
formulas, not from msvm or scikit-learn."""

import numpy as np

# Pairwise differences are formed in row blocks of at most this many float64 numbers (32 MB).
_BLOCK = 4_000_000


def linear_kernel(A, B):
    """K[a, b] = <A_a, B_b>."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    return A @ B.T


def poly_kernel(A, B, gamma, degree, coef0):
    """K[a, b] = (gamma <A_a, B_b> + coef0) ** degree."""
    return (gamma * linear_kernel(A, B) + coef0) ** degree


def sq_dists(A, B):
    """Pairwise squared Euclidean distances ||A_a - B_b||^2 from explicit differences.

    Exact (no cancellation, unlike ||a||^2 + ||b||^2 - 2 <a, b>); the differences are formed a
    block of rows at a time, so the memory stays bounded for large inputs.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    out = np.empty((A.shape[0], B.shape[0]))
    step = max(1, _BLOCK // max(1, B.shape[0] * A.shape[1]))
    for start in range(0, A.shape[0], step):
        diff = A[start:start + step, None, :] - B[None, :, :]
        out[start:start + step] = np.einsum("abd,abd->ab", diff, diff)
    return out


def rbf_kernel(A, B, gamma):
    """K[a, b] = exp(-gamma ||A_a - B_b||^2)."""
    return np.exp(-gamma * sq_dists(A, B))


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
    """The kernel coefficient of the contract.

    'scale' -> 1/(d Var(X)), 'auto' -> 1/d, 'median' -> 1/(2 sigma^2) with sigma the median of
    the between-class pairwise Euclidean distances; a float is returned unchanged.
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    if gamma == "scale":
        return 1.0 / (d * X.var())
    if gamma == "auto":
        return 1.0 / d
    if gamma == "median":
        y = np.asarray(y)
        dist = np.sqrt(sq_dists(X, X))
        between = y[:, None] != y[None, :]
        sigma = np.median(dist[np.triu(between, 1)])
        return 1.0 / (2.0 * sigma**2)
    return float(gamma)


def smoothing_kernel(name, t):
    """The smoothing kernels K of the targeted model (K_h(u) = K(u / h) / h), at the points t.

    'epanechnikov', 'gaussian', 'uniform', 'triangular' and 'biweight' (``docs/models.md``,
    TargetedLocalMSVM).
    """
    t = np.asarray(t, dtype=np.float64)
    a = np.abs(t)
    return {"epanechnikov": np.where(a <= 1, 0.75 * (1 - t * t), 0.0),
            "gaussian": np.exp(-0.5 * t * t) / np.sqrt(2 * np.pi),
            "uniform": np.where(a <= 1, 0.5, 0.0),
            "triangular": np.maximum(1 - a, 0.0),
            "biweight": np.where(a <= 1, 15 / 16 * (1 - t * t) ** 2, 0.0)}[name]
