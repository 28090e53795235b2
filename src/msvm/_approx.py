"""Approximate kernels: explicit feature maps handed to the linear path.

With ``kernel_approximation`` set, an estimator does not solve its dual over the n x n kernel:
it maps every input to ``n_components`` explicit features phi(x) with
phi(x)^T phi(x') ~ K(x, x') and fits the linear model on them (the coordinate-descent path on
explicit weights, O(n_components * k) per update).  Prediction maps the new inputs in chunks of
rows and applies the fitted weights: O(n_components) per sample, whatever n was.

Two maps:

* Nystroem (Williams and Seeger 2001): m landmarks z_1..z_m taken from the training inputs,
  phi(x) = K_mm^{-1/2} (K(z_1, x), .., K(z_m, x)), the inverse square root through an
  eigendecomposition K_mm = U diag(lambda) U^T that drops eigenvalues at most
  ``EIGEN_RTOL * max(lambda)`` (negative ones included: an indefinite callable kernel is
  projected on its positive part).  Then phi(x)^T phi(x') = K_xm K_mm^+ K_mx', which is K
  itself at the landmarks.  Any kernel of the estimator (linear, poly, rbf, callable).
  Landmarks are a uniform sample without replacement ('uniform') or the k-means++ seeding
  of Arthur and Vassilvitskii (2007) ('kmeans++': each next landmark drawn with probability
  proportional to its squared Euclidean distance to the landmarks so far; no Lloyd
  iterations), run on a uniform subsample of at most ``KMEANS_MAX_SAMPLES`` rows.
* Random Fourier features (Rahimi and Recht 2007), RBF kernel only:
  phi(x) = sqrt(2 / m) cos(W^T x + b), W_ij ~ N(0, 2 gamma), b_j ~ U[0, 2 pi), whose inner
  products are an unbiased estimate of exp(-gamma ||x - x'||^2) with O(1 / sqrt(m)) error.

Both maps are computed in float64 in chunks of rows (``msvm._products.CHUNK_ENTRIES``
entries per block), for dense or scipy.sparse (CSR) inputs.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh
from sklearn.cluster import kmeans_plusplus
from sklearn.utils import check_random_state

from ._fit_state import user_stacklevel
from ._kernels import (LandmarkRBF, check_kernel_scale, dense, kernel_matrix,
                       kernel_overflow_message, largest_sqnorm, typical_point)
from ._products import chunk_rows
from ._validation import check_finite_decision

APPROXIMATIONS = ("nystroem", "rff")
LANDMARK_RULES = ("uniform", "kmeans++")

# Eigenvalues of the landmark Gram matrix at most this fraction of the largest are dropped.
EIGEN_RTOL = 1e-12
# The k-means++ seeding runs on a uniform subsample of at most this many training rows.
KMEANS_MAX_SAMPLES = 50_000


def check_approximation(method, kernel):
    """Refuse combinations of ``kernel_approximation`` and ``kernel`` that have no map."""
    if method is None:
        return
    if kernel == "precomputed":
        raise ValueError(f"kernel_approximation={method!r} needs the inputs, not a Gram "
                         f"matrix: it cannot be used with kernel='precomputed' (pass the "
                         f"kernel as a callable instead)")
    if method == "rff" and kernel != "rbf":
        name = "a callable" if callable(kernel) else repr(kernel)
        raise ValueError(f"kernel_approximation='rff' (random Fourier features) approximates "
                         f"the 'rbf' kernel only; got kernel={name}. Use "
                         f"kernel_approximation='nystroem' for this kernel")


class FeatureMap:
    """A fitted explicit feature map phi; subclasses give ``_block`` (phi of a few rows).

    Attributes
    ----------
    n_components_ : int
        Number of features of phi(x).
    """

    n_components_ = 0

    def _block(self, X):
        raise NotImplementedError

    def _block_into(self, X, out):
        """Write phi(X) into ``out`` (its rows of the output, any float dtype)."""
        out[...] = self._block(X)

    def _width(self, X):
        return max(self.n_components_, X.shape[1])

    def transform(self, X, dtype=np.float64):
        """phi(X), shape (n_samples, n_components_), computed in chunks of rows (in float64;
        stored as ``dtype``: float32 halves the memory of training features)."""
        out = np.empty((X.shape[0], self.n_components_), dtype=dtype)
        step = chunk_rows(self._width(X))
        for start in range(0, X.shape[0], step):
            self._block_into(X[start:start + step], out[start:start + step])
        return out

    def apply(self, X, weights):
        """phi(X) @ weights.T for weights of shape (q, n_components_), in chunks of rows.

        Never holds more than one chunk of features: memory O(chunk * n_components_ + n * q).
        """
        out = np.empty((X.shape[0], weights.shape[0]))
        for rows, Z in self.blocks(X):
            out[rows] = Z @ weights.T
        return out

    def blocks(self, X):
        """(rows, phi(X[rows])) for the chunks of rows that ``apply`` maps, in order (a
        slice and a float64 block of at most ``CHUNK_ENTRIES`` entries)."""
        step = chunk_rows(self._width(X))
        for start in range(0, X.shape[0], step):
            yield slice(start, start + step), self._block(X[start:start + step])


def shared_map_decision_values(estimators, X):
    """Decision values of fits that share one feature map (the same ``feature_map_`` object,
    explicit weights ``feature_coef_``), block by block of rows, phi of each block computed
    once for all of them; None when they do not share one.

    Each fit's ``decision_values`` computes phi(X) itself (``FeatureMap.apply``): scoring
    the calibration folds' held-out samples and the X of ``predict_proba`` by the own fit
    and the k m (+ 1) weighted fits of a probability estimate (msvm/_probability.py) mapped
    X that many times (Nystroem: n x n_components kernel values and an n_components-square
    product each).  Here phi(X) is mapped once, in the blocks ``apply`` maps, and each fit's
    values are that block times its weights as ``apply`` multiplies them: the same values.

    Parameters
    ----------
    estimators : list of fitted estimators
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Validated inputs.

    Returns
    -------
    blocks : iterator of (rows, values), or None
        ``rows`` a slice of X's rows, ``values`` a list of (len(rows), k) decision values,
        one per estimator.
    """
    fmap = getattr(estimators[0], "feature_map_", None) if estimators else None
    if fmap is None or any(getattr(est, "feature_map_", None) is not fmap
                           or getattr(est, "feature_coef_", None) is None for est in estimators):
        return None
    return ((rows, [est._decision_from_output(check_finite_decision(
        Z @ est.feature_coef_.T + est.intercept_)) for est in estimators])
        for rows, Z in fmap.blocks(X))


class NystroemMap(FeatureMap):
    """phi(x) = K(x, landmarks) @ normalization, normalization = U_+ diag(lambda_+)^{-1/2}.

    Parameters
    ----------
    landmarks : ndarray of shape (m, n_features)
        The landmark inputs (dense).
    normalization : ndarray of shape (m, n_components_)
        Eigenvectors of the landmark Gram matrix divided by the square roots of their kept
        eigenvalues.
    kernel, gamma, degree, coef0
        The estimator's kernel and its resolved parameters.
    """

    def __init__(self, landmarks, normalization, kernel, gamma, degree, coef0):
        self.landmarks = landmarks
        self.normalization = normalization
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.n_components_ = normalization.shape[1]

    def _width(self, X):
        return max(len(self.landmarks), X.shape[1])

    def _block(self, X):
        return self.kernel_block(X) @ self.normalization

    def kernel_block(self, X):
        """K(X, landmarks) (float64, len(X) x m): phi(X) = kernel_block(X) @ normalization.
        A chunked fit multiplies it by (m, k)-sized factors instead of forming phi(X), an
        m x n_components product per row (msvm._products.FactoredRows)."""
        return kernel_matrix(X, self.landmarks, self.kernel, self.gamma, self.degree,
                             self.coef0)

    def pass_block(self, X):
        """``kernel_block(X)`` for the passes of a chunked fit (msvm._products.FactoredRows,
        a block per block of rows in every pass): the same values, for the RBF kernel on
        dense rows through :class:`msvm._kernels.LandmarkRBF` (the landmarks' shift, norms
        and sorted norms kept between blocks; no scan of the block for lost digits)."""
        if self.kernel != "rbf" or sp.issparse(X) or sp.issparse(self.landmarks):
            return self.kernel_block(X)
        lean = self.__dict__.get("_lean")
        if lean is None:
            lean = self._lean = LandmarkRBF(self.landmarks, self.gamma)
        return lean(X)

    def __getstate__(self):
        # the kept LandmarkRBF is rebuilt where it is used (a chunked fit's workers)
        state = dict(self.__dict__)
        state.pop("_lean", None)
        return state


class FourierMap(FeatureMap):
    """phi(x) = sqrt(2 / m) cos(x @ weights + offsets) (random Fourier features of the RBF).

    Parameters
    ----------
    weights : ndarray of shape (n_features, m)
        Frequencies, i.i.d. N(0, 2 gamma).
    offsets : ndarray of shape (m,)
        Phases, i.i.d. uniform on [0, 2 pi).
    """

    def __init__(self, weights, offsets):
        self.weights, self.offsets = weights, offsets
        self.n_components_ = weights.shape[1]

    def _block(self, X):
        Z = np.empty((X.shape[0], self.n_components_))
        self._block_into(X, Z)
        return Z

    def _block_into(self, X, out):
        # as scikit-learn's RBFSampler.transform: one product, then in place, here in the
        # output's own rows, so that no chunk is copied (benchmarks/run_feature_map_speed.py);
        # a float32 output gets the last step's product rounded, the steps before it done
        # in a float64 chunk
        if out.dtype == np.float64 and not sp.issparse(X):
            Z = np.matmul(X, self.weights, out=out)
        else:
            Z = dense(X @ self.weights)
        Z += self.offsets
        np.cos(Z, out=Z)
        np.multiply(Z, np.sqrt(2.0 / self.n_components_), out=out, casting="same_kind")


def uniform_landmarks(n, m, rng):
    """Indices of m of the n training rows, uniformly without replacement (sorted)."""
    return np.sort(rng.choice(n, m, replace=False))


def kmeanspp_landmarks(X, m, rng):
    """Indices of m rows of X chosen by k-means++ seeding (D^2 sampling), no Lloyd steps.

    scikit-learn's ``sklearn.cluster.kmeans_plusplus`` with ``n_local_trials=1`` (the plain
    seeding of Arthur and Vassilvitskii 2007, seeded from ``rng``): the first index is
    uniform; each next one is drawn with probability proportional to the squared Euclidean
    distance of a row to its nearest chosen row.  Dense X is shifted by its coordinate-wise
    median first (:func:`msvm._kernels.typical_point`; the distances are the same), so that
    a large common offset does not cancel the distances' digits.  Indices drawn twice
    (possible only at distance zero: every remaining row duplicates a chosen one) are
    replaced by distinct rows drawn uniformly among those not chosen yet.  Runs on a uniform
    subsample of at most KMEANS_MAX_SAMPLES rows (the indices returned are rows of X).
    """
    n = X.shape[0]
    pool = np.arange(n)
    if n > KMEANS_MAX_SAMPLES:
        pool = np.sort(rng.choice(n, KMEANS_MAX_SAMPLES, replace=False))
    S = X[pool]
    if sp.issparse(S):
        S = S.tocsr().astype(np.float64)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            S = np.ascontiguousarray(S - typical_point(S), dtype=np.float64)
    seed = int(rng.integers(np.iinfo(np.int32).max))
    _, chosen = kmeans_plusplus(S, m, random_state=seed, n_local_trials=1)
    chosen = np.unique(chosen)
    if len(chosen) < m:
        rest = np.setdiff1d(np.arange(len(pool)), chosen)
        chosen = np.concatenate([chosen, rng.choice(rest, m - len(chosen), replace=False)])
    return np.sort(pool[chosen])


def nystroem_map(X, m, kernel, gamma, degree, coef0, landmarks, rng, check_scale=True):
    """Fit a :class:`NystroemMap` of m landmarks on the training inputs X (``check_scale``:
    refuse an X whose kernel overflows; False where the caller checked, msvm/_dask.py)."""
    idx = (kmeanspp_landmarks(X, m, rng) if landmarks == "kmeans++"
           else uniform_landmarks(X.shape[0], m, rng))
    L = X[idx]
    L = L.toarray() if sp.issparse(L) else np.array(L, dtype=np.float64)
    # every feature is a kernel value against the landmarks: for the RBF kernel, distances
    # computed after a shift by the landmarks' typical point (as `squared_distances` does)
    center = typical_point(L) if kernel == "rbf" and not sp.issparse(X) and len(L) else None
    if check_scale:
        check_kernel_scale(X, kernel, center)
    with np.errstate(over="ignore", invalid="ignore"):
        K = kernel_matrix(L, L, kernel, gamma, degree, coef0)
    if not np.all(np.isfinite(K)):
        raise ValueError(kernel_overflow_message(largest_sqnorm(L, center)) if not
                         callable(kernel) else
                         "kernel_approximation='nystroem': the callable kernel's values on "
                         "the landmarks are infinite or NaN; rescale X or fix the kernel")
    lam, U = eigh(0.5 * (K + K.T))
    top = float(lam.max()) if len(lam) else 0.0
    if not (np.isfinite(top) and top > 0):
        raise ValueError("kernel_approximation='nystroem': the kernel's Gram matrix of the "
                         "landmarks has no positive eigenvalue, so the kernel gives no "
                         "features on these data")
    keep = lam > EIGEN_RTOL * top
    return NystroemMap(L, np.ascontiguousarray(U[:, keep] / np.sqrt(lam[keep])), kernel,
                       gamma, degree, coef0)


def fourier_map(n_features, m, gamma, rng):
    """Draw a :class:`FourierMap` of m random Fourier features of exp(-gamma ||x - x'||^2)."""
    weights = rng.normal(scale=np.sqrt(2.0 * gamma), size=(n_features, m))
    offsets = rng.uniform(0.0, 2.0 * np.pi, size=m)
    return FourierMap(weights, offsets)


def fit_feature_map(estimator, X, gamma, check_scale=True):
    """The feature map of ``estimator.kernel_approximation`` fitted on the training inputs X.

    Nystroem uses at most n_samples landmarks: a larger ``n_components`` is clipped to
    n_samples with a UserWarning.  The estimator's ``random_state`` seeds the landmarks or
    the random frequencies.  X needs only ``shape`` and row indexing by an index array
    (a chunked fit passes its row access, msvm/_dask.py, with ``check_scale=False``: it
    checked X's scale over the chunks).
    """
    method, m = estimator.kernel_approximation, int(estimator.n_components)
    check_approximation(method, estimator.kernel)
    rng = np.random.default_rng(check_random_state(estimator.random_state)
                                .randint(np.iinfo(np.int32).max))
    if method == "rff":
        # cos(x^T w + b) is computed from x itself (not shifted): X whose squared norms
        # overflow is refused as the exact RBF path refuses it
        if check_scale:
            check_kernel_scale(X, "rbf")
        return fourier_map(X.shape[1], m, gamma, rng)
    n = X.shape[0]
    if m > n:
        warnings.warn(f"{type(estimator).__name__}: n_components={m} is larger than the "
                      f"{n} training samples; the Nystroem map uses all {n} as landmarks",
                      UserWarning, stacklevel=user_stacklevel())
        m = n
    return nystroem_map(X, m, estimator.kernel, gamma, estimator.degree, estimator.coef0,
                        estimator.landmarks, rng, check_scale)
