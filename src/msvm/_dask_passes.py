"""The per-chunk passes of a fit on Dask arrays (msvm/_dask.py): what runs on the workers.

Each function here takes one chunk of rows (inputs, encoded labels, weights) and the current
small iterate (V (m, k), b (k,): m the features, k the class slots), builds the chunk's own
:class:`msvm._problem.DualProblem` (the model's dual restricted to the chunk's samples: every
model's dual has one block of variables per sample, so the chunk problems are the blocks of
the whole one) and returns sums over the chunk's samples only: scalars, k-vectors, (m, k)
products and, for the Newton matrix, the (m, k, m, k) curvature of the chunk's free terms.
Sums of these over the chunks are the sums of the in-memory fit over all samples.  Nothing
of size n leaves a worker.  The compiled per-term kernels are those of the in-memory fit
(msvm._core._smoothed, msvm._core._gap), the smoothed primal's own class
(msvm._primal.SmoothedPrimal) on the chunk.

A DC step of a truncated model (RobustMSVM) solves the model's dual with boxes shifted by
the linearization of its concave part at the last step's function (msvm._dc); the shift of
a sample depends on that function's decision values at the sample only, so each chunk
computes its own from the small function (``ChunkModel.linearized``) and its problem is
again the block of the whole shifted dual.

Nystroem features that are not persisted are never formed for a pass: ``ChunkModel.rows``
gives the chunk as ``msvm._products.FactoredRows`` (phi = K(X_c, L) N), whose products with
the (m, k)-sized iterate and slot sums cost its kernel values and two m k products per row
instead of the m x n_components product of the map.  The gradient and product passes need
phi V on the way in and phi^T U on the way out: both are made block by block of rows from
one computation of the block's kernel values (``_block_sums``); the rows of the sampled
Newton matrix (a few per chunk) are mapped.  On the dense route (at most DENSE_MAX_UNKNOWNS
unknowns: a few hundred features) the curvature sum needs every free row's features, so
the chunk is mapped as before (``ChunkModel.factored`` is False).  The factored products
are those of the float64 features, which the persisted float32 features round: fits agree
to that rounding (the float32 features' own distance from the exact map).  Random Fourier
features have no such factor (phi = cos(X W + b)): their map, m d flops and m cosines per
row, is made in every pass.

An empty chunk (or one whose samples all have weight zero) contributes zeros.
"""

import copy

import numpy as np

from ._core._gap import primal_dual
from ._dask_groups import CappedTerms, curvature_sum
from ._losses import losses_in_blocks
from ._primal import SmoothedPrimal
from ._problem import shifted
from ._products import (NARROW_FEATURES, FactoredRows, centered_slots, chunk_rows,
                        rows_times, transposed_times)


class ChunkModel:
    """What a pass needs to turn a chunk into its dual problem: the (unfitted) estimator, its
    classes, the per-class factors of class_weight, C, and the fitted feature map (None:
    the chunk's rows are the features, of the linear kernel or mapped and persisted).

    Parameters
    ----------
    estimator : BaseMSVM
        An unfitted clone (its ``_dual_problem``, ``_loss``, ``_output_map`` and
        ``_decision_from_output`` are used).
    classes : ndarray
        The sorted class labels of the whole training set.
    class_factors : ndarray of shape (k,)
        ``class_weight`` of each class (ones without class_weight).
    feature_map : FeatureMap or None
        Applied to every chunk of inputs (float32 features, as the in-memory fit stores).
    C : float
        The fit's resolved C (``C_``: ``C='auto'`` resolved for the fit's classes).
    linearized : tuple (coef, intercept) or None, default=None
        A DC step's linearization point: the fitted function (``coef`` (n_outputs, m) on the
        features, ``intercept`` (n_outputs,)) at whose decision values the model's
        ``_dc_shift`` shifts the boxes; None for the unshifted (convex) dual.
    reweighted : tuple (coef, intercept) or None, default=None
        A refit's function (AdaptiveWeightedSVM): the samples' weights are multiplied by
        the model's ``next_weights`` at its decision values; None for no reweighting.
    """

    def __init__(self, estimator, classes, class_factors, feature_map, C, linearized=None,
                 reweighted=None):
        self.estimator, self.classes = estimator, classes
        self.class_factors, self.feature_map = class_factors, feature_map
        self.k, self.C = len(classes), float(C)
        self.linearized, self.reweighted = linearized, reweighted
        # Nystroem features kept factored (FactoredRows): set by the solver on the
        # conjugate-gradient route (msvm._dask.ChunkedNewton); on the dense route the
        # curvature sum needs every free row's features, and the chunk is mapped
        self.factored = False

    def rows(self, Xc, yc, swc):
        """(features, encoded labels int32, weights sw * class_weight) of one chunk."""
        y = np.asarray(yc)
        y_enc = np.searchsorted(self.classes, y).astype(np.int32)
        if len(y) and not np.array_equal(self.classes[np.minimum(y_enc, self.k - 1)], y):
            raise ValueError("a chunk of y holds a label that is not a class of the fit")
        sw = np.ones(len(y)) if swc is None else np.asarray(swc, dtype=np.float64)
        sw = sw * self.class_factors[y_enc]
        if self.factored and hasattr(self.feature_map, "kernel_block"):
            # Nystroem: the factored features (never formed whole; msvm._products)
            X = FactoredRows(np.asarray(Xc, dtype=np.float64), self.feature_map)
        elif self.feature_map is not None:
            X = self.feature_map.transform(np.asarray(Xc, dtype=np.float64), dtype=np.float32)
        elif np.asarray(Xc).dtype == np.float32:
            X = np.asarray(Xc)                   # float32 X, or mapped features persisted
        else:
            X = np.ascontiguousarray(Xc, dtype=np.float64)
        if isinstance(X, np.ndarray) and X.dtype == np.float32 \
                and X.shape[1] <= NARROW_FEATURES:
            # a narrow float32 chunk (X read from disk) converted once per pass (at most
            # 512 bytes a row), not in every product, which then runs compiled
            X = np.ascontiguousarray(X, dtype=np.float64)
        if self.reweighted is not None and len(y):
            sw = sw * self.adaptive_weights(X, y_enc, self.reweighted)
        return X, y_enc, sw

    def decision(self, X, function):
        """The model's decision values G (n, k) of the chunk's features X at ``function``
        = (coef (n_outputs, m), intercept (n_outputs,))."""
        coef, intercept = function
        f = np.asarray(rows_times(X, np.ascontiguousarray(coef.T)), dtype=np.float64)
        return self.estimator._decision_from_output(f + intercept)

    def adaptive_weights(self, X, y_enc, function):
        """The weights v of a refit at ``function`` (the model's ``next_weights``)."""
        return self.estimator.next_weights(self.decision(X, function), y_enc)

    def problem(self, y_enc, sw, X):
        """The chunk's dual problem (box bounds C * weights, shifted at ``linearized``)."""
        base = self.estimator._dual_problem(y_enc, self.k, self.C * sw)
        if self.linearized is None:
            return base
        return shifted(base, self.dc_shift(base, X, y_enc, self.linearized)[0])

    def dc_shift(self, base, X, y_enc, function):
        """(box shift, truncated mask) of the chunk's unshifted dual ``base`` linearized at
        ``function`` = (coef, intercept) (the model's ``_dc_shift``)."""
        return self.estimator._dc_shift(base, self.decision(X, function), y_enc)


def _decision(X, V, b):
    F = np.ascontiguousarray(rows_times(X, V), dtype=np.float64)
    F += b
    return F


def gradient_pass(model, Xc, yc, swc, V, b, mu, curvature, stride=1):
    """Sums over the chunk at the smoothed primal's iterate (V, b) and mu: (loss, X^T U,
    U summed over the samples, the curvature summary of the free terms or None, the number
    of samples) with U the slot sums of the dual point alpha(z) = clip(z / mu, lo, hi).
    ``curvature``: False for none, True (or 'dense') for the (m, k, m, k) sum of the Newton
    matrix, 'slots' or 'kronecker' for the sums of that preconditioner of the
    conjugate-gradient route (``factored_summary`` of every ``stride``-th row of the chunk;
    msvm/_dask_cg.py), 'sampled' for every ``stride``-th of the chunk's samples with a free
    term, their rows and curvature blocks (``sampled_rows``)."""
    X, y, sw = model.rows(Xc, yc, swc)
    k = model.k
    if not len(y):
        return 0.0, np.zeros((X.shape[1], k)), np.zeros(k), None, 0
    problem = model.problem(y, sw, X)
    if isinstance(X, FactoredRows) and (curvature is True or curvature == "dense"):
        X = X.features()          # the dense curvature sum needs every free row's features
    if len(problem.cap):
        return _capped_gradient(problem, X, V, b, mu, curvature, stride)
    primal = SmoothedPrimal(problem, X)
    primal.mu = mu
    terms, n = primal.terms, len(y)
    U = np.empty((n, k))
    if not curvature:
        def fill(G, start, stop):
            return terms.value_and_slot_sums(G, U[start:stop], start, stop)
        loss, XtU = _block_sums(X, V, b, U, fill)
        return float(loss), XtU, U.sum(axis=0), None, n
    if curvature in ("slots", "kronecker", "sampled"):
        # every free term listed from an all-zero membership (no (m k)^2 sum allocated)
        free, parts = np.zeros(problem.n_vars, dtype=np.uint8), []

        def fill(G, start, stop):
            part, changes = terms.value_sums_and_changes(G, U[start:stop], free, start, stop)
            parts.append(changes)
            return part
        loss, XtU = _block_sums(X, V, b, U, fill)
        changes = [np.concatenate(c) for c in zip(*parts)]
        summary = factored_summary(X, *sample_blocks(k, *changes), problem.equality, curvature,
                                   stride)
        return float(loss), XtU, U.sum(axis=0), summary, n
    F = _decision(X, V, b)
    primal._reset_curvature()
    loss, changes = terms.value_sums_and_changes(F, U, primal._free, 0, n)
    primal._add_changes(changes)
    return float(loss), transposed_times(X, U), U.sum(axis=0), primal._curvature, n


def pattern_pass(model, Xc, yc, swc, V, b, mu, pattern_mu, curvature, stride=1):
    """``gradient_pass`` at the first iterate of a new mu stage, with the free pattern of
    the last stage's solution (the chunked form of ``SmoothedPrimal.newton``'s ``predict``).

    The terms free at (V, b) for the last stage's ``pattern_mu`` (mu lo_v <= z_v <= mu hi_v
    there: a function of the iterate, so the pass stays stateless) are the pattern.
    Returns (loss, X^T U, U summed, the curvature summary of the pattern's terms (as
    ``gradient_pass`` returns it for the free terms; None for none), the number of samples,
    X^T U_p, U_p summed): U the slot sums of the dual point at ``mu``, U_p those of the
    pattern's quadratic model at ``mu`` (``pattern_slot_sums``: alpha_v = z_v / mu
    unclipped on the pattern's terms).  A Newton step with the pattern's curvature at mu on
    the model's gradient goes to the new stage's solution at once where the pattern is
    still the solution's.  Every X^T product of a block is one, of [U, U_p]."""
    X, y, sw = model.rows(Xc, yc, swc)
    k = model.k
    if not len(y):
        zero = np.zeros((X.shape[1], k))
        return 0.0, zero, np.zeros(k), None, 0, zero, np.zeros(k)
    problem = model.problem(y, sw, X)
    if isinstance(X, FactoredRows) and (curvature is True or curvature == "dense"):
        X = X.features()
    primal = SmoothedPrimal(problem, X)
    terms, n = primal.terms, len(y)
    both = np.empty((n, 2 * k))
    free, parts = np.zeros(problem.n_vars, dtype=np.uint8), []

    def fill(G, start, stop):
        U = np.empty((stop - start, k))
        terms.mu = pattern_mu
        parts.append(terms.free_changes(G, free, start, stop))
        terms.mu = mu
        loss = terms.value_and_slot_sums(G, U, start, stop)
        both[start:stop, :k] = U
        terms.pattern_slot_sums(G, U, free, start, stop)
        both[start:stop, k:] = U
        return loss
    loss, XtU = _block_sums(X, V, b, both, fill)
    changes = [np.concatenate(c) for c in zip(*parts)]
    if curvature in ("slots", "kronecker", "sampled"):
        summary = factored_summary(X, *sample_blocks(k, *changes), problem.equality, curvature,
                                   stride)
    else:
        primal._reset_curvature()
        primal._add_changes(changes)
        summary = primal._curvature
    sums = both.sum(axis=0)
    return float(loss), XtU[:, :k], sums[:k], summary, n, XtU[:, k:], sums[k:]


def _block_sums(X, V, b, U, fill):
    """(the sum of ``fill``'s values, X^T U): the decision values G = X V + b and the rows
    start:stop of U (n, q), which ``fill(G, start, stop)`` writes from them (returning, say,
    their loss), in one block for an array X, block by block of kernel values for
    FactoredRows (each block's kernel values computed once, for G and for X^T U)."""
    if not isinstance(X, FactoredRows):
        G = _decision(X, V, b)
        total = fill(G, 0, X.shape[0])
        return total, transposed_times(X, U)
    G, NV = np.empty((X.shape[0], V.shape[1])), X.inner(V)
    A, total = np.zeros((NV.shape[0], U.shape[1])), 0.0
    for rows, K in X.blocks():
        np.matmul(K, NV, out=G[rows])
        G[rows] += b
        total += fill(G, rows.start, rows.stop)
        A += K.T @ U[rows]
    return total, X.outer(A)


def _capped_gradient(problem, X, V, b, mu, curvature, stride):
    """``gradient_pass`` of a chunk whose dual has group caps (msvm/_dask_groups.py)."""
    terms = CappedTerms(problem, mu)
    loss, U, (free, binding) = terms.value_and_slot_sums(_decision(X, V, b))
    curv = None
    if curvature in ("slots", "kronecker", "sampled"):
        curv = factored_summary(X, *terms.sample_curvature(free, binding), problem.equality,
                                curvature, stride)
    elif curvature:
        curv = curvature_sum(X, *terms.sample_curvature(free, binding), problem.equality)
    return loss, transposed_times(X, U), U.sum(axis=0), curv, len(U)


def sample_blocks(k, rows, s1, c1, s2, c2, sign):
    """(samples, S (len(samples), k, k)): per sample with a listed term, the sum of
    sign_v d_v d_v^T over its terms (the lists of ``SmoothedTerms.free_changes``, which
    lists every free term with sign +1 from an all-zero membership)."""
    samples, inverse = np.unique(rows, return_inverse=True)
    base = inverse.astype(np.int64) * (k * k)
    keys, weights = [base + s1 * (k + 1)], [sign * c1 * c1]
    two = np.flatnonzero(s2 >= 0)
    if len(two):
        t1, t2, w = s1[two], s2[two], sign[two] * c1[two] * c2[two]
        keys += [base[two] + t2 * (k + 1), base[two] + t1 * k + t2, base[two] + t2 * k + t1]
        weights += [sign[two] * c2[two] ** 2, w, w]
    S = np.bincount(np.concatenate(keys), weights=np.concatenate(weights),
                    minlength=len(samples) * k * k)
    return samples, S.reshape(len(samples), k, k)


def _projected(S):
    """P S_i P of every block (P = I - 11^T / k: the slot-centering projection)."""
    return (S - S.mean(axis=1, keepdims=True) - S.mean(axis=2, keepdims=True)
            + S.mean(axis=(1, 2), keepdims=True))


def _extended(X, rows, equality):
    """The rows of X as float64, with a column of ones with unpenalized intercepts."""
    Z = np.empty((len(rows), X.shape[1] + (1 if equality else 0)))
    Z[:, :X.shape[1]] = X[rows]
    if equality:
        Z[:, X.shape[1]] = 1.0
    return Z


def factored_summary(X, samples, S, equality, kind, stride=1):
    """The chunk's summary of its free terms for the preconditioner ``kind`` of the
    conjugate-gradient route (msvm/_dask_cg.py), with T_i = P S_i P (the sample's curvature
    block, projected) and z_i = [x_i, 1]: for 'slots' the k diagonal blocks
    A_j = sum_i (T_i)_jj z_i z_i^T (k, m, m) (k weighted products of the free rows, where the
    dense sum takes k (k + 1) / 2); for 'kronecker' (A, B) with A = sum_i tr(T_i) z_i z_i^T
    (m, m) and B = sum_i T_i (k, k) (one product).  Summed over chunks as k m^2 (or m^2)
    values instead of (m k)^2.  With ``stride`` > 1 the sums run over the rows whose index
    in the chunk is a multiple of it, times ``stride`` (a subsample: the preconditioner's
    cost per Newton step is bounded whatever n, its accuracy only sets CG's products).
    For 'sampled' the ``SampledRows`` of every ``stride``-th sample with a free term."""
    if kind == "sampled":
        return sampled_rows(X, samples, S, stride)
    m = X.shape[1] + (1 if equality else 0)
    if stride > 1:
        pick = samples % stride == 0
        samples, S = samples[pick], S[pick] * float(stride)
    T = _projected(S)
    if kind == "slots":
        weights = np.einsum("ijj->ji", T)
    else:
        weights = np.einsum("ijj->i", T)[None, :]
    A = np.zeros((len(weights), m, m))
    step = chunk_rows(m)
    for j, w in enumerate(weights):
        keep = np.flatnonzero(w > 0)
        for start in range(0, len(keep), step):
            sel = keep[start:start + step]
            Z = _extended(X, samples[sel], equality)
            Z *= np.sqrt(w[sel])[:, None]
            A[j] += Z.T @ Z
    return A if kind == "slots" else (A[0], T.sum(axis=0))


class SampledRows:
    """A sample of the free terms' rows and curvature blocks, for the conjugate-gradient
    route's subsampled Newton matrix (msvm._dask_cg.SampledPreconditioner): the rows x_i
    (in the features' own dtype: float32 features cross the network as they are) and the
    blocks S_i (k x k, before the projection) of the samples taken, each block scaled by the
    number of its chunk's free samples per sample taken; ``free`` counts the free samples
    of the chunks summed, ``exact`` whether every one of them was taken.  ``+`` joins two
    chunks' samples (the pairwise sums of msvm._dask.reduce_chunks).

    Parameters
    ----------
    rows : ndarray of shape (s, d)
    blocks : ndarray of shape (s, k, k)
    free : int
    exact : bool
    """

    def __init__(self, rows, blocks, free, exact):
        self.rows, self.blocks, self.free, self.exact = rows, blocks, int(free), bool(exact)

    def __add__(self, other):
        return SampledRows(np.concatenate([self.rows, other.rows]),
                           np.concatenate([self.blocks, other.blocks]),
                           self.free + other.free, self.exact and other.exact)

    @property
    def nbytes(self):
        """The bytes of the sample (what a chunk sends)."""
        return self.rows.nbytes + self.blocks.nbytes


def sampled_rows(X, samples, S, stride=1):
    """``SampledRows`` of the chunk: every ``stride``-th of its samples with a free term
    (``samples``, in order, with their blocks ``S``), the blocks scaled so that their sum
    estimates the chunk's (exact at stride 1)."""
    stride = max(1, int(stride))
    take = slice(None, None, stride)
    picked, blocks = samples[take], S[take]
    if len(picked):
        blocks = blocks * (len(samples) / len(picked))
    rows = np.ascontiguousarray(X[picked])
    if rows.dtype not in (np.float32, np.float64):
        rows = rows.astype(np.float64)
    return SampledRows(rows, blocks, len(samples), len(picked) == len(samples))


def hessian_pass(model, Xc, yc, swc, V, b, mu, sV, sb, free_mu=None):
    """The chunk's part of the Newton matrix times a direction (sV, sb) (slot-centered) at
    the iterate (V, b): (X^T U', U' summed over the samples) with U'_i = S_i (dF_i), dF =
    X sV + sb and S_i the sample's sum of d_v d_v^T over its terms free at (V, b) (the
    curvature sum of ``gradient_pass`` times the direction, before the division by mu and
    the projection, which the client applies).  ``free_mu``: the terms free at (V, b) for
    that mu instead (the last stage's pattern, ``pattern_pass``; not for group caps).  None
    for an empty chunk."""
    X, y, sw = model.rows(Xc, yc, swc)
    if not len(y):
        return None
    k = model.k
    problem = model.problem(y, sw, X)
    U = np.zeros((len(y), k))
    if len(problem.cap):
        both = _decision(X, np.hstack([V, sV]), np.concatenate([b, sb]))
        F, dF = np.ascontiguousarray(both[:, :k]), both[:, k:]
        terms = CappedTerms(problem, mu)
        samples, S = terms.sample_curvature(*terms.value_and_slot_sums(F)[2])
        U[samples] = np.einsum("ijl,il->ij", S, dF[samples])
        return transposed_times(X, U), U.sum(axis=0)
    primal = SmoothedPrimal(problem, X)
    primal.mu = mu if free_mu is None else free_mu
    free = np.zeros(problem.n_vars, dtype=np.uint8)
    F = np.empty((len(y), k))

    def fill(both, start, stop):
        # U'_i = S_i dF_i for the samples start:stop with a free term at F
        F[start:stop] = both[start:stop, :k]
        samples, S = sample_blocks(k, *primal.terms.free_changes(F, free, start, stop))
        U[samples] = np.einsum("ijl,il->ij", S, both[samples, k:])
        return 0.0
    XtU = _block_sums(X, np.hstack([V, sV]), np.concatenate([b, sb]), U, fill)[1]
    return XtU, U.sum(axis=0)


def line_pass(model, Xc, yc, swc, V, b, sV, sb, mu, steps):
    """The loss part of the line search's derivative along -(sV, sb) at each step t of
    ``steps``, and its slope (``SmoothedTerms.line_slope_and_curvature``), summed over the
    chunk: an array (len(steps), 2).  Several steps per pass: the products X V and X sV, the
    pass's main cost, are made once for all of them."""
    X, y, sw = model.rows(Xc, yc, swc)
    out = np.zeros((len(steps), 2))
    if not len(y):
        return out
    problem = model.problem(y, sw, X)
    k = model.k
    # one product X [V, sV]: X read (and a float32 X converted) once
    both = _decision(X, np.hstack([V, sV]), np.concatenate([b, sb]))
    F, dF = np.ascontiguousarray(both[:, :k]), np.ascontiguousarray(both[:, k:])
    del both
    if len(problem.cap):
        capped = CappedTerms(problem, mu)
        return capped.line_sums(capped.along(F), capped.along(dF, lin=False), steps)
    primal = SmoothedPrimal(problem, X)
    primal.mu = mu
    terms = primal.terms
    # one pass over all the terms at the largest step keeps those whose piece can change
    # below it (``keep``: at most the memory of one (n, k) array); the other steps read
    # those alone (a quarter to a half of a full pass each)
    top = int(np.argmax(steps))
    try:
        out[top] = terms.line_slope_and_curvature(F, dF, float(steps[top]), keep=True)
        for i, t in enumerate(steps):
            if i == top:
                continue
            if 0.0 <= t <= terms.kept_step:
                out[i] = terms.kept_line_slope_and_curvature(float(t))
            else:
                out[i] = terms.line_slope_and_curvature(F, dF, float(t), keep=False)
    finally:
        terms.release_line()
    return out


def certificate_pass(model, Xc, yc, swc, V, b, mu, W, b_slot):
    """Sums over the chunk for the fitted function and its certificate.

    The dual point alpha(z) of the iterate (V, b) at mu (the point the in-memory fit hands to
    the dual solver), with W = X^T U(alpha) summed over all chunks: its primal value, duality
    gap without the equalities' term and size (``primal_dual`` on the chunk's problem with
    the equalities left out; msvm._core._gap), the model's weighted loss at the decision
    values of the fitted function (coefficients -kappa W P, intercepts b_slot, the output
    map), the samples with a nonzero dual variable per class, the training predictions
    per class, the samples per class with a variable at a bound that grows with their weight
    (``DualProblem.at_moving_bounds``) and the weighted loss per class.  Returns an array
    [primal, gap, size, loss, support (k), predicted (k), at moving bounds (k), loss (k)].
    """
    X, y, sw = model.rows(Xc, yc, swc)
    k, est = model.k, model.estimator
    if not len(y):
        return np.zeros(4 + 4 * k)
    problem = model.problem(y, sw, X)
    if len(problem.cap):
        alpha = CappedTerms(problem, mu).dual_point(_decision(X, V, b))
    else:
        primal = SmoothedPrimal(problem, X)
        primal.mu = mu
        alpha = primal.terms.dual_point(_decision(X, V, b))
    free_b = copy.copy(problem)
    free_b.equality = False          # the equalities' term is added once, over all chunks
    scores = np.ascontiguousarray(rows_times(X, W), dtype=np.float64)
    value, gap, size = primal_dual(free_b, alpha, scores,
                                   np.ascontiguousarray(b_slot, dtype=np.float64))
    T = est._output_map(k)
    Wh = -problem.kappa * centered_slots(W)
    f = rows_times(X, np.ascontiguousarray(Wh @ T.T)) + T @ b_slot
    G = est._decision_from_output(f)
    with np.errstate(over="ignore", invalid="ignore"):
        losses = losses_in_blocks(est._loss, G, y)
        loss = model.C * float(np.dot(sw, losses))
        class_loss = model.C * np.bincount(y, weights=sw * losses, minlength=k)
    support = np.bincount(y[problem.support_mask(alpha)], minlength=k)
    predicted = np.bincount(np.argmax(G, axis=1), minlength=k)
    moving = np.bincount(y[problem.at_moving_bounds(alpha)], minlength=k)
    return np.concatenate([[value, gap, size, loss], support, predicted, moving, class_loss])


def stats_pass(Xc, yc, swc):
    """Facts of one chunk for the checks of a fit: its labels and their counts, the counts
    of positively weighted samples per label, the largest squared row norm and |entry|,
    whether every entry is finite, the number, mean and sum of squared deviations of its
    entries (combined over chunks by Chan, Golub and LeVeque's (1979) update), and its
    number of rows."""
    X = np.asarray(Xc, dtype=np.float64)
    y = np.asarray(yc)
    labels, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    sw = None if swc is None else np.asarray(swc)
    weighted = counts if sw is None else np.bincount(inverse.ravel(), weights=(sw > 0),
                                                     minlength=len(labels))
    finite = bool(np.all(np.isfinite(X)))
    with np.errstate(over="ignore", invalid="ignore"):
        sq = float(np.max(np.einsum("ij,ij->i", X, X))) if X.size else 0.0
        top = float(np.max(np.abs(X))) if X.size else 0.0
        mean = float(X.mean()) if X.size else 0.0
        m2 = float(np.sum((X - mean) ** 2)) if X.size else 0.0
    return dict(labels=labels, counts=counts, weighted=np.asarray(weighted), sqnorm=sq,
                top=top, finite=finite, moments=(X.size, mean, m2), rows=X.shape[0])


def setup_pass(model, Xc, yc, swc):
    """[largest |box bound| of the chunk's dual, largest squared norm of its feature rows,
    whether its dual has group caps, its number of rows]: the scale of the smoothing and of
    the gradient tolerance (``msvm._primal.primal_start``), whether the terms are smoothed
    per group (msvm/_dask_groups.py) and n (``merge_setup`` combines the chunks')."""
    X, y, sw = model.rows(Xc, yc, swc)
    if not len(y):
        return np.zeros(4)
    problem = model.problem(y, sw, X)
    if isinstance(X, FactoredRows):
        sqnorm = X.max_sqnorm()
    else:
        X64 = X.astype(np.float64) if X.dtype != np.float64 else X
        sqnorm = float(np.max(np.einsum("ij,ij->i", X64, X64)))
    return np.array([problem.max_abs_bound(), sqnorm, float(len(problem.cap) > 0),
                     float(len(y))])


def merge_setup(a, b):
    """Two chunks' ``setup_pass`` results as one (the largest values, the rows summed)."""
    return np.concatenate([np.maximum(a[:3], b[:3]), a[3:] + b[3:]])


def breakpoint_pass(model, Xc, yc, swc, Wh, lo_edge, hi_edge):
    """The chunk's part of the exact intercept step in the window [lo_edge, hi_edge] of
    intercepts (k each): per slot the slope of its loss below every breakpoint, the rises
    of the breakpoints below the window (they only add to the slope at its lower edge), and
    the breakpoints inside it with their rises (``slot_breakpoints`` of msvm._core._problem
    at the slot functions X Wh).  Returns (base (k,), below (k,), list of k arrays t, list of
    k arrays of rises)."""
    from ._core._problem import slot_breakpoints
    X, y, sw = model.rows(Xc, yc, swc)
    k = model.k
    if not len(y):
        return np.zeros(k), np.zeros(k), [np.empty(0)] * k, [np.empty(0)] * k
    H = np.ascontiguousarray(rows_times(X, Wh), dtype=np.float64)
    ts, rises, bases = slot_breakpoints(model.problem(y, sw, X), H)
    below, t_in, r_in = np.zeros(k), [], []
    for j in range(k):
        under = ts[j] < lo_edge[j]
        inside = ~under & (ts[j] <= hi_edge[j])
        below[j] = float(rises[j][under].sum())
        t_in.append(ts[j][inside])
        r_in.append(rises[j][inside])
    return np.asarray(bases, dtype=np.float64), below, t_in, r_in


def merge_breakpoints(a, b):
    """Two chunks' ``breakpoint_pass`` results as one (sums, and the breakpoints joined)."""
    return (a[0] + b[0], a[1] + b[1], [np.concatenate(p) for p in zip(a[2], b[2])],
            [np.concatenate(p) for p in zip(a[3], b[3])])


def dc_pass(model, Xc, yc, swc, coef, intercept):
    """[the number of the chunk's dual variables whose DC shift at the function (coef,
    intercept) differs from their shift in ``model`` (zero where it is unshifted), the
    number of its samples truncated there]: whether the next DC step is a new problem."""
    X, y, sw = model.rows(Xc, yc, swc)
    if not len(y):
        return np.zeros(2)
    base = model.estimator._dual_problem(y, model.k, model.C * sw)
    new, truncated = model.dc_shift(base, X, y, (coef, intercept))
    old = (np.zeros_like(new) if model.linearized is None
           else model.dc_shift(base, X, y, model.linearized)[0])
    return np.array([float(np.count_nonzero(new != old)), float(np.count_nonzero(truncated))])


def truncated_block(model, Xc, yc, swc, coef, intercept):
    """The truncated mask of the chunk's samples at the function (coef, intercept)."""
    X, y, sw = model.rows(Xc, yc, swc)
    if not len(y):
        return np.zeros(0, dtype=bool)
    base = model.estimator._dual_problem(y, model.k, model.C * sw)
    return np.asarray(model.dc_shift(base, X, y, (coef, intercept))[1], dtype=bool)


def reweight_pass(model, Xc, yc, swc, function):
    """[the number of the chunk's samples whose refit weight at ``function`` differs from
    their weight in ``model`` (1 without reweighting)]: whether the iterative scheme of
    AdaptiveWeightedSVM has reached its fixed point."""
    X, y, _ = model.rows(Xc, yc, swc)
    if not len(y):
        return np.zeros(1)
    new = model.adaptive_weights(X, y, function)
    old = (np.ones(len(y)) if model.reweighted is None
           else model.adaptive_weights(X, y, model.reweighted))
    return np.array([float(np.count_nonzero(new != old))])


def weights_block(model, Xc, yc, swc, function):
    """The refit weights v of the chunk's samples at ``function`` (ones for None)."""
    X, y, _ = model.rows(Xc, yc, swc)
    if function is None:
        return np.ones(len(y))
    return model.adaptive_weights(X, y, function) if len(y) else np.zeros(0)
