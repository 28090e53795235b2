"""A start for a large exact-kernel solve from its dual solved on clusters of the samples.

The divide-and-conquer start of DC-SVM (Hsieh, Si and Dhillon 2014): partition the training
samples into c clusters (k-means on the inputs), solve the fit's own dual restricted to each
cluster's samples (its kernel rows have ``n / c`` entries, so a cluster costs about ``1 / c^2``
of the whole problem's kernel work and fits in the row cache), and concatenate the cluster
solutions as the start of the global solve.  The start is feasible for the global dual:

* the boxes (and group caps) are per sample, and every cluster's solution is inside its own;
* the equalities ``P c(alpha) = 0`` are linear in the slot sums c(alpha) = sum_v alpha_v d_v,
  which add up over clusters, so the sum of solutions that meet them meets them (each cluster
  is solved to its tolerance; the global solver's augmented Lagrangian takes the remainder).

A cluster whose samples have fewer than k classes is the same dual with fewer feasible
points: for the per-class hinges the slot sums of the missing classes only collect the
nonnegative "other class" variables, so the equalities force those to zero, and a cluster of
one class has only alpha = 0 (it is not solved).  The global solve then goes on from the
start under its own stopping rule (KKT residual and duality gap), so the fit solves the same
problem to the same tolerance as a fit from zero; only the path to the optimum changes.  Most
of the global support samples are near the class boundaries inside clusters, where the
cluster problems already place them: the global solve needs fewer epochs and, with an LRU row
cache smaller than the kernel matrix, fewer kernel rows.

Which fits use it is decided by :mod:`msvm._plan` (``SolvePlan.starts_from_clusters``): fits
from ``CLUSTER_MIN_SAMPLES`` samples.  Below that it does not pay (benchmarks/results/
cluster_start.md: the start replaces the global solve's first augmented-Lagrangian round,
about a third of its work, and costs about as much up to n = 40,000 and on pendigits); at
n = 80,000, where the plain fit's kernel rows outgrow the row cache, it saved 27 %.
"""

import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._core._solver import solve
from ._kernels import kernel_matrix, make_row_source
from ._products import chunk_rows
from ._problem import take_variables

# k-means is fitted on at most this many samples (then every sample is assigned): the
# clusters only need to group nearby samples, and k-means on all of a large n costs more than
# the cluster solves it saves.
KMEANS_SAMPLES = 20000

# The cluster duals are solved to this relative tolerance (or the fit's tol, if looser): a
# start, certified by nothing, whose remaining error the global solve removes.
CLUSTER_TOL = 1e-2


def restrict(problem, samples):
    """The dual ``problem`` restricted to the variables of ``samples`` (sorted indices).

    The result is the same model on those samples alone: their variables, directions, linear
    terms, boxes and group caps, with the k slots and the equalities of ``problem``.
    """
    samples = np.asarray(samples, dtype=np.int64)
    starts = problem.var_ptr[samples].astype(np.int64)
    counts = problem.var_ptr[samples + 1].astype(np.int64) - starts
    var_ptr = np.concatenate([[0], np.cumsum(counts)])
    variables = np.repeat(starts - var_ptr[:-1], counts) + np.arange(var_ptr[-1])
    group, cap = None, ()
    if problem.var_group is not None:
        old = problem.var_group[variables]
        used, renumbered = np.unique(old[old >= 0], return_inverse=True)
        group = np.full(len(old), -1, dtype=np.int32)
        group[old >= 0] = renumbered
        cap = problem.cap[used]
    return take_variables(problem, variables, var_ptr, group, cap)


def cluster_labels(X, n_clusters, random_state=None):
    """A cluster index (0..n_clusters-1) for every row of X: k-means fitted on at most
    ``KMEANS_SAMPLES`` rows drawn at random, then every row assigned to its nearest centre.
    Empty clusters are allowed (they are skipped)."""
    rng = check_random_state(random_state)
    n = X.shape[0]
    fit_rows = X if n <= KMEANS_SAMPLES else X[np.sort(rng.choice(n, KMEANS_SAMPLES,
                                                                  replace=False))]
    km = KMeans(n_clusters=min(n_clusters, fit_rows.shape[0]), n_init=1, max_iter=50,
                random_state=rng.randint(0, 2 ** 31 - 1))
    with warnings.catch_warnings():
        # fewer distinct points than clusters: k-means says so; the clusters only guide a start
        warnings.simplefilter("ignore", ConvergenceWarning)
        km.fit(fit_rows)
    return km.predict(X)


def _classes_of(problem):
    """How many distinct slots the own-class variables of ``problem`` use (its classes): for
    the per-class-hinge layout the own variable is the one with a negative coefficient."""
    slot1, coef1, _, _ = problem.expanded_directions()
    return len(np.unique(slot1[coef1 < 0]))


def cluster_start(problem, X, make_source, labels, *, tol, max_iter, shrinking, seed,
                  working_set=0):
    """The start of the global solve of ``problem``: its dual solved on each cluster.

    Parameters
    ----------
    problem : msvm._problem.DualProblem
        The fit's dual (one variable run per sample of X).
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        The training inputs.
    make_source : callable
        ``make_source(X_part)``: the row source of the fit's kernel on some of its rows.
    labels : ndarray of shape (n_samples,)
        The cluster of every sample (:func:`cluster_labels`).
    tol, max_iter, shrinking, seed, working_set
        The cluster solves' settings (``tol`` is raised to ``CLUSTER_TOL``).

    Returns
    -------
    alpha : ndarray of shape (n_vars,)
        The cluster solutions side by side, inside every box.
    mu : ndarray of shape (k,)
        The cluster multipliers' mean weighted by cluster size (sums to zero).
    solved : int
        Clusters solved (those with samples of at least two classes).
    """
    alpha = np.zeros(problem.n_vars)
    mu = np.zeros(problem.k)
    weight, solved = 0, 0
    sub_tol = max(float(tol), CLUSTER_TOL)
    for c in np.unique(labels):
        samples = np.flatnonzero(labels == c)
        sub = restrict(problem, samples)
        if len(samples) < 2 or _classes_of(sub) < 2:
            continue                 # one class: alpha = 0 is the only feasible point
        src = make_source(X[samples])
        diag = src.diagonal()
        rho = problem.kappa * float(np.median(diag)) if len(diag) else 1.0
        a, m = np.zeros(sub.n_vars), np.zeros(problem.k)
        solve(src, sub, a, m, tol=sub_tol, max_iter=max_iter, shrinking=shrinking,
              seed=int(seed), rho=rho if rho > 0 else 1.0, working_set=working_set)
        lo, hi = sub.expanded_bounds()
        np.clip(a, lo, hi, out=a)
        starts = problem.var_ptr[samples].astype(np.int64)
        counts = problem.var_ptr[samples + 1].astype(np.int64) - starts
        offsets = np.concatenate([[0], np.cumsum(counts)])
        alpha[np.repeat(starts - offsets[:-1], counts) + np.arange(offsets[-1])] = a
        mu += len(samples) * m
        weight += len(samples)
        solved += 1
    if weight:
        mu /= weight
    return alpha, mu - mu.mean(), solved


def start_from_clusters(estimator, sequence, problem, alpha0, mu0):
    """The start of an estimator's first solve of ``problem`` on ``sequence``: (alpha0, mu0)
    as given, or the cluster start where the sequence's plan makes one
    (``SolvePlan.starts_from_clusters``); the plan then records the clusters."""
    c = sequence.plan.starts_from_clusters(problem)
    if not c or sequence.inputs is None:
        return alpha0, mu0
    X = sequence.inputs
    rng = check_random_state(estimator.random_state)
    labels = cluster_labels(X, c, rng)
    est, src = estimator, sequence.src

    def make_source(part):
        """The fit's kernel on some of its rows, run by as many threads as the fit's."""
        rows = make_row_source(part, est.kernel, problem.k, gamma=src.gamma,
                               degree=src.degree, coef0=src.coef0, shift=src.shift,
                               cache_size=est.cache_size, cache_dtype=src.cache_dtype,
                               rows="kernel cache")
        rows.set_threads(int(src.n_threads))
        return rows

    alpha, mu, solved = cluster_start(
        problem, X, make_source, labels, tol=est.tol, max_iter=est.max_iter,
        shrinking=est.shrinking, seed=rng.randint(0, 2 ** 31 - 1),
        working_set=sequence.plan.working_set)
    sequence.plan = replace(sequence.plan, clusters=int(len(np.unique(labels))))
    _set_scores(sequence, problem, alpha, est)
    if sequence.verbose:
        print(f"[msvm] {sequence.owner}: start from the dual solved on {solved} of "
              f"{sequence.plan.clusters} clusters")
    return alpha, mu


def _set_scores(sequence, problem, alpha, estimator):
    """Make the sequence's row source hold the scores F = K U(alpha) of the start.

    The start has many support samples (most of those of the clusters' solutions); adding
    their kernel rows one at a time (``DualSequence.move_to``) costs more than the cluster
    solves (n = 10,000: 1.2 s of a 2.4 s fit).  Here K[:, S] U[S] (S the samples with a
    nonzero slot sum) is computed in blocks of rows with level-3 BLAS (summed in float64),
    written into the source's scores and declared with ``DualSequence.resume``."""
    src, X = sequence.src, sequence.inputs
    U = problem.slot_sums(alpha)
    support = np.flatnonzero(np.any(U != 0, axis=1))
    U_s = U[support]
    F = src.scores
    step = chunk_rows(len(support))
    blocks = _rbf_blocks(X, support, src) if estimator.kernel == "rbf" and not sp.issparse(X) \
        else _kernel_blocks(X, support, src, estimator.kernel)
    for a, block in blocks:
        F[a:a + step] = block.astype(np.float64, copy=False) @ U_s
    sequence.resume(problem, alpha)


def _kernel_blocks(X, support, src, kernel):
    """(first row, K[rows, support]) for blocks of ``chunk_rows`` rows."""
    step, X_s = chunk_rows(len(support)), X[support]
    for a in range(0, X.shape[0], step):
        block = kernel_matrix(X[a:a + step], X_s, kernel, src.gamma, src.degree, src.coef0)
        if src.shift:
            block += src.shift
        yield a, block


def _rbf_blocks(X, support, src):
    """The blocks of :func:`_kernel_blocks` for the RBF kernel on dense X, as
    exp(min(0, 2 gamma x.x' - gamma |x|^2 - gamma |x'|^2)) on X shifted by its mean (no
    cancellation under a common offset), in four passes over each block.  Computed in
    float32 where the source caches float32 rows (the plan judged that rounding of kernel
    values harmless at this tol and these bounds; it saves a third of the start's scores:
    n = 20,000, 16,000 support samples, 1.5 s instead of 2.3 s, the scores' largest error
    1.4e-7 of their largest value), in float64 otherwise; the caller sums in float64."""
    dtype = np.float32 if src.cache_dtype == "float32" else np.float64
    Xc = np.asarray(X - X.mean(axis=0), dtype=dtype)
    gamma = dtype(src.gamma)
    sq = np.einsum("ij,ij->i", Xc, Xc) * -gamma
    X_s, sq_s = Xc[support] * (2 * gamma), sq[support]
    step = chunk_rows(len(support))
    for a in range(0, X.shape[0], step):
        block = Xc[a:a + step] @ X_s.T
        block += sq[a:a + step, None]
        block += sq_s[None, :]
        np.minimum(block, 0.0, out=block)
        np.exp(block, out=block)
        if src.shift:
            block += src.shift
        yield a, block
