"""Kernel columns between a scoring set and the training samples, kept across a lambda path."""

import numpy as np
import scipy.sparse as sp

from ._fit_state import data_fingerprint
from ._kernels import kernel_matrix


class KernelColumns:
    """The kernel between one scoring set and the training samples, computed once per sample.

    A lambda path (``msvm.model_selection``) scores 32 fits on the same tuning set; their
    support vectors are mostly the same training samples, so the kernel column of training
    sample i, K(X_tune, x_i), is computed the first time i is a support vector and kept.
    A column is reused only for the same scoring inputs (a hash of their bytes), the same
    kernel and parameters, and the same training row x_i (compared exactly); the block is
    kept only while it fits in the estimator's ``cache_size``.

    Parameters
    ----------
    n_train : int
        Number of training samples (the fits' ``support_`` index them).
    """

    def __init__(self, n_train):
        self.n_train = int(n_train)
        self.key = None

    def columns(self, estimator, X):
        """K(X, x_i) for every training sample i (n_samples, n_train), or None.

        The columns of the estimator's support vectors are exact; the others are zero or
        those of earlier fits (the caller multiplies them by zero coefficients).  None when
        the block cannot be kept (sparse inputs, or larger than ``cache_size``).
        """
        sv, support = estimator.support_vectors_, estimator.support_
        if sp.issparse(X) or sp.issparse(sv) \
                or X.shape[0] * self.n_train * 8 > estimator.cache_size * 2 ** 20 \
                or (len(support) and support.max() >= self.n_train):
            return None
        key = (estimator.kernel, estimator.gamma_, estimator.degree, estimator.coef0,
               data_fingerprint(X))
        if key != self.key:
            self.key = key
            self.K = np.zeros((X.shape[0], self.n_train))
            self.rows = np.full((self.n_train, X.shape[1]), np.nan)
        new = ~np.all(self.rows[support] == sv, axis=1)
        if np.any(new):
            self.K[:, support[new]] = kernel_matrix(X, sv[new], estimator.kernel,
                                                    estimator.gamma_, estimator.degree,
                                                    estimator.coef0)
            self.rows[support[new]] = sv[new]
        return self.K
