"""Square roots of symmetric positive semidefinite matrices.

The primal problems of the oracles write the penalty 1/2 sum_j v_j' K v_j of a kernel
expansion h_j = sum_i V[i, j] K(x_i, .) as 1/2 ||R V||_F^2 with K = R' R, which makes the
quadratic form the identity (strictly convex) instead of the numerically singular K.
"""

import numpy as np


def _eigh(A):
    """Eigenvalues and eigenvectors of the symmetric part of A."""
    A = np.asarray(A, dtype=np.float64)
    return np.linalg.eigh(0.5 * (A + A.T))


def psd_sqrt(A):
    """The symmetric PSD square root S of A (S S = A; negative eigenvalues clipped to 0).

    Parameters
    ----------
    A : ndarray of shape (n, n)
        A symmetric matrix (its symmetric part is used).

    Returns
    -------
    S : ndarray of shape (n, n)
        Symmetric, with S @ S = A up to rounding when A is PSD.
    """
    lam, Q = _eigh(A)
    return (Q * np.sqrt(np.clip(lam, 0.0, None))) @ Q.T


def range_factor(A, rtol=1e-13):
    """A square root of A restricted to its numerical range: A ~= R' R, R of full row rank.

    Eigenvalues below ``rtol`` times the largest are dropped: their directions carry no
    function value and would make a QP in R V singular.

    Parameters
    ----------
    A : ndarray of shape (n, n)
        A symmetric PSD matrix (its symmetric part is used).
    rtol : float, default=1e-13
        Relative threshold of the kept eigenvalues.

    Returns
    -------
    R : ndarray of shape (r, n)
        The factor, R = diag(sqrt(lam)) Q'.
    Q : ndarray of shape (n, r)
        The kept eigenvectors.
    lam : ndarray of shape (r,)
        The kept eigenvalues; V = Q (Z / sqrt(lam)) recovers V from Z = R V.
    """
    lam, Q = _eigh(A)
    keep = lam > rtol * max(lam.max(), 1e-300)
    lam, Q = lam[keep], Q[:, keep]
    return np.sqrt(lam)[:, None] * Q.T, Q, lam
