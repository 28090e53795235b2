"""``probability=True`` on Dask input: the weighted fits of the estimate as chunked fits.

The probability estimate (msvm/_probability.py: Wang, Shen and Liu 2008; Wu, Zhang and Liu
2010) is a schedule of fits: the estimator's own fit, for each class a chain of weighted fits
along the levels t, each started from the last, and the same on the training part of the
calibration folds, whose held-out ratios choose the refits' C, an exponent and a floor.  The
schedule is that module's; its runner asks an object for the fits, the rows of a fold and
the ratios at held-out rows.  :class:`ChunkedFits` answers these on Dask input.

Design
------
- a fit is the chunked fit of msvm/_dask.py (every pass a reduction over the chunks); a
  weighted fit of a chain starts from the last fit's Newton iterate (``fit_dask``'s
  ``start``: the (m, k) iterate and the feature map) where the in-memory chain starts from
  the last dual point, which a chunked fit does not keep; its certificate makes it the same
  problem's solution within tol (RobustMSVM's DC steps start cold; TargetedLocalMSVM's
  grid points each from the last fit's iterate at the same grid point,
  ``msvm._dask_grid.fit_grid_dask``).  The loose tol of the weighted refits (300 times tol)
  lets them stop at other points of their certified gap than the in-memory refits: the
  probabilities agree as far as the estimate is insensitive to that (docs/distributed.md,
  its probability section: up to about 0.07 at the default tol where the calibration
  chooses the same C factor, within 5e-3 with the refits at 1e-4);
- the calibration folds are the folds of the in-memory fit (the same stratified split of the
  labels, which ``fit`` holds in memory as it holds the weights: n values each), taken from
  X as row subsets of its chunks (``X[rows]`` with sorted rows keeps the chunking);
- the held-out ratios are computed chunk by chunk from the small fitted functions and
  gathered (n_held_out x k values) for the exponent and floor, a two-parameter fit;
- the fits run one after another (``n_jobs`` is not used, nor a joblib backend): each
  one's passes run on all the workers.

``predict_proba`` maps over the chunks of its X (``msvm._dask.chunkwise``).
"""

import numpy as np
from sklearn.base import clone

from ._dask import _chunked_kind, as_row_chunks, fit_dask


class ChunkedFits:
    """The fits, fold rows and held-out ratios of ``msvm._probability``'s runner on Dask X
    (see the module note).

    Parameters
    ----------
    ratios : callable
        ``ratios(own_fit, chains, levels, X)``: the bracketed ratios at in-memory rows X
        (``msvm._probability.bracketed_ratios``), applied here chunk by chunk.
    """

    def __init__(self, ratios):
        self._ratios = ratios

    @staticmethod
    def own_fit(template, X, y, sample_weight):
        """A cold chunked fit of ``template``."""
        return clone(template).set_params(warm_start=False).fit(X, y, sample_weight)

    @staticmethod
    def top_fit(template, start, X, y, sample_weight):
        """A chunked fit of ``template`` started from the fitted ``start`` (its Newton
        iterate and feature map)."""
        est = clone(template).set_params(warm_start=False)
        est._validate_params()
        if _chunked_kind(est) == "grid":
            # TargetedLocalMSVM: each grid point from start's iterate there
            return est._fit_model(X, y, sample_weight, start=start)
        return fit_dask(est, X, y, sample_weight, start=start)

    @classmethod
    def weighted_chain(cls, template, start, X, y, sample_weight, levels, label):
        """The weighted fits of class ``label`` along the levels (t_m first, each from the
        last fit), as ``msvm._probability._weighted_chain``: the m fits, t_1 first."""
        is_label = np.asarray(y == label)
        chain = []
        for t in levels[::-1]:
            start = cls.top_fit(template, start, X, y,
                                sample_weight * np.where(is_label, 1.0 / t, 1.0))
            chain.append(start)
        return chain[::-1]

    @classmethod
    def task_chains(cls, template, start, X, y, sample_weight, levels, labels):
        """The chains of the classes ``labels`` (:meth:`weighted_chain`), one after
        another, as ``msvm._probability._task_chains``."""
        return [cls.weighted_chain(template, start, X, y, sample_weight, levels, label)
                for label in labels]

    @staticmethod
    def rows(X):
        """X as a dask array chunked by rows."""
        return as_row_chunks(X)

    @staticmethod
    def split(template, X, y, rows, train=None):
        """(X[rows], y[rows]): ``rows`` sorted, so each chunk keeps its own rows."""
        rows = np.asarray(rows)
        if np.any(np.diff(rows) < 0):
            raise ValueError("the rows of a calibration fold must be sorted")
        return X[rows], np.asarray(y)[rows]

    def ratios(self, own_fit, chains, levels, X, n_train=None):
        """The bracketed ratios at the rows of X, computed chunk by chunk and gathered."""
        k = len(own_fit.classes_)
        ratios = self._ratios

        def block(Xb):
            if Xb.shape[0] == 0:
                return np.empty((0, k))
            return ratios(own_fit, chains, levels, Xb)

        out = X.map_blocks(block, dtype=np.float64, chunks=(X.chunks[0], (k,)))
        return np.asarray(out.compute())
