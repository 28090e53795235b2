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
- a chain stops at the level where its fit is settled (:func:`settled`), as the in-memory
  chains do, by the same rule stated for a certified point: the certificate pass counts,
  per class, the samples with a dual variable at a bound that grows with their weight and
  sums the class's weighted loss, so the client can tell whether the fit's gap stays within
  tol at the levels below (no pass of its own);
- the fits run one after another (``n_jobs`` is not used, nor a joblib backend): each
  one's passes run on all the workers.

``predict_proba`` maps over the chunks of its X (``msvm._dask.chunkwise``).
"""

import numpy as np
from sklearn.base import clone

from ._dask import _chunked_kind, as_row_chunks, fit_dask


def settled(est, label, growth):
    """Whether the chunked weighted fit ``est`` is also a fit, to its tolerance, at every
    weight of the samples of class ``label`` up to ``growth`` times theirs (the levels below
    its own in the chain), so that the chain may stop there.

    The rule of the in-memory chains (``msvm._probability._settled``), for a certified
    point instead of an exact one: the fit's dual point alpha has no variable of the class
    at a bound that grows with the weight (its certificate pass counts them,
    ``_chunked_settle_``), so alpha stays feasible, with the same dual value, when those
    weights grow by ``growth``; the primal value of the same function grows by
    (growth - 1) times the class's weighted loss (the hinge terms inside the smoothing band
    are not quite zero).  The fit is settled when its duality gap plus that growth stays
    within its tolerance of the size it was measured against (which only grows with the
    weights).  Only a converged fit of one convex solve (not a DC model's, a reweighting's
    or a grid's).
    """
    state = getattr(est, "_chunked_settle_", None)
    if state is None or not getattr(est, "converged_", False):
        return False
    moving, class_loss, gap, size, tol = state
    j = int(np.searchsorted(est.classes_, label))
    if moving[j] > 0:
        return False
    return gap + (growth - 1.0) * class_loss[j] <= tol * size


class ChunkedFits:
    """The fits, fold rows and held-out ratios of ``msvm._probability``'s runner on Dask X
    (see the module note).

    Parameters
    ----------
    ratios : callable
        ``ratios(own_fit, chains, levels, X)``: the bracketed ratios at in-memory rows X
        (``msvm._probability.bracketed_ratios``), applied here chunk by chunk.
    settle : bool, default=True
        Whether a chain stops at the level where its fit is settled (:func:`settled`;
        ``msvm._probability.SETTLED_CHAINS``).
    """

    def __init__(self, ratios, settle=True):
        self._ratios = ratios
        self._settle = settle

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

    def weighted_chain(self, template, start, X, y, sample_weight, levels, label):
        """The weighted fits of class ``label`` along the levels (t_m first, each from the
        last fit), as ``msvm._probability._weighted_chain``: the m fits, t_1 first; with
        ``settle``, the chain stops at the level where its fit is settled (:func:`settled`)
        and the levels below hold that fit."""
        is_label = np.asarray(y == label)
        chain = []
        for t in levels[::-1]:
            start = self.top_fit(template, start, X, y,
                                 sample_weight * np.where(is_label, 1.0 / t, 1.0))
            chain.append(start)
            if self._settle and settled(start, label, t / levels[0]):
                break                       # the levels below have this fit's solution
        chain += [chain[-1]] * (len(levels) - len(chain))
        return chain[::-1]

    def task_chains(self, template, start, X, y, sample_weight, levels, labels):
        """The chains of the classes ``labels`` (:meth:`weighted_chain`), one after
        another, as ``msvm._probability._task_chains``."""
        return [self.weighted_chain(template, start, X, y, sample_weight, levels, label)
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
