"""The rounding floor of the kernel solver's KKT residual (issue 23 item 1, pattern 2).

The SMO path measures a variable's violation from its sample's scores F_i = sum_j K_ij U_j
(U the slot sums of alpha), through z = kappa (F_ip - S_i / k) + ... (or F_ip + r F_iq for
two-slot directions).  At large C on a kernel with large entries these sums cancel: on a
linear Gram matrix with max K_ii = 330 at C = 1e8 the terms K_ij U_jp reach 3e10 while the
scores of the support samples stay near 1, so that the scores computed exactly once carry a
rounding error of up to 0.03 (measured against extended precision: 2-17 eps sum_j
|K_ij| |U_jp|, n = 3,000, 2,400-2,800 support samples) and the violation the solver reads
(0.017 at the kernel-factor start, relative duality gap 2.6e-4) cannot fall below tol =
1e-3 in double precision.  The stopping rule then asked for less than the scores' own
rounding and the solver wandered off the optimum to max_iter.

The floor of sample i bounds that rounding: with A_ip = sum_j |K_ij| |U_jp| and m the
number of support samples (the terms of each sum), the rounding of a recursive sum of m
terms is at most about sqrt(m) eps times the sum of their magnitudes (the probabilistic
bound of Higham and Mary 2019; the deterministic one, m eps, is reached only by
adversarial orderings), and z adds at most two scores and the mean of the k, so

    floor_i = sqrt(m) eps kappa (2 max_p A_ip + 2 mean_p A_ip).

A violation at or below its sample's floor counts as none in the SMO path's scans
(msvm/_core/_smo.pyx); the duality-gap certificate is unchanged, so a solve still converges
only where its relative gap is within tol.  The floor applies only where some sample's
floor exceeds tol (:func:`floor_needed`, an O(n k) bound tested first): nowhere on
ordinary fits, whose floors are many orders below tol (RBF: K_ii = 1).
"""

import numpy as np

EPS = np.finfo(np.float64).eps
# support samples whose kernel columns form one product of :func:`score_floor`
FLOOR_BLOCK = 512


def _rounding_scale(problem, U):
    """sqrt(m) eps kappa for slot sums U (m: the support samples, at least 1)."""
    m = max(int(np.count_nonzero(np.any(U != 0, axis=1))), 1)
    return np.sqrt(m) * EPS * problem.kappa


def floor_bound(problem, alpha, diagonal):
    """An upper bound of the largest floor of :func:`score_floor` in O(n k): |K_ij| <=
    sqrt(K_ii K_jj) on a positive semidefinite kernel, so A_ip <= sqrt(K_ii) sum_j
    sqrt(K_jj) |U_jp|."""
    U = np.abs(problem.slot_sums(alpha))
    root = np.sqrt(np.maximum(np.asarray(diagonal, dtype=np.float64), 0.0))
    if not len(root):
        return 0.0
    largest = float(np.max(root @ U, initial=0.0)) * float(root.max())
    return 4.0 * _rounding_scale(problem, U) * largest


def score_floor(problem, alpha, absolute_times):
    """The floor of every sample's violation (n,) at ``alpha`` (see the module docstring).

    ``absolute_times(V)`` bounds the magnitudes summed in K V for V >= 0 (n x k): |K| V on
    kernel rows (:func:`absolute_kernel_times`), |X| (|X|^T V) on explicit features, whose
    scores are formed through W = X^T U (:func:`absolute_feature_times`)."""
    U = np.abs(problem.slot_sums(alpha))
    A = np.asarray(absolute_times(U))
    return 2.0 * _rounding_scale(problem, U) * (A.max(axis=1, initial=0.0) + A.mean(axis=1))


def absolute_kernel_times(columns, V):
    """|K| V (n x k) from the kernel columns ``columns(samples)`` = K[:, samples], read for
    the rows of V that are not zero only, FLOOR_BLOCK at a time."""
    support = np.flatnonzero(np.any(V != 0, axis=1))
    out = np.zeros_like(V)
    for start in range(0, len(support), FLOOR_BLOCK):
        block = support[start:start + FLOOR_BLOCK]
        out += np.abs(columns(block)) @ V[block]
    return out


def absolute_feature_times(X, V):
    """|X| (|X|^T V) (n x k), dense or sparse X: the magnitudes behind the scores
    X (X^T U) of explicit features, in O(n d k)."""
    absolute = abs(X)
    return np.asarray(absolute @ np.asarray(absolute.T @ V))


def floor_needed(problem, alpha, diagonal, tol):
    """Whether some sample's floor may exceed tol (:func:`floor_bound`)."""
    return floor_bound(problem, alpha, diagonal) > tol
