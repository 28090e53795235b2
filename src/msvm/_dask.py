"""Fit and predict on Dask arrays: the linear and approximate-kernel paths as reductions.

Every estimator on ``kernel='linear'`` or with a ``kernel_approximation`` accepts a
``dask.array`` (or a dask DataFrame) X chunked by rows in ``fit``, ``predict``,
``decision_function``, ``decision_values``, ``score`` and ``predict_proba``; y and
sample_weight are NumPy or Dask, aligned to X's row chunks here.  NumPy input never comes
here (``is_dask_collection`` is the only test the estimators make).

Design
------
A fit is the smoothed-primal Newton method of msvm/_primal.py, with every pass over the
samples a reduction over the chunks run where the chunks live (msvm/_dask_passes.py): the
gradient pass returns the loss, X^T U (m x k), the slot sums of U (k) and the curvature sum
of the free terms (m k x m k, the Newton matrix before its projection), a line-search
evaluation returns two numbers, and the client only forms and factors the (m k) Newton
system.  Beyond DENSE_MAX_UNKNOWNS unknowns the system is solved by preconditioned
conjugate gradients instead, one pass per product of the Newton matrix with a direction
(an (m, k) array per chunk), the gradient pass returning the preconditioner's summary: a
sample of the free terms' rows and k x k blocks, of which the client forms and factors the
Newton matrix (subsampled Newton; the exact Newton matrix when the sample holds every free
term, then with no product), or the k m x m slot blocks summed over a subsample of the
rows (msvm/_dask_cg.py).  The chunks' sums are
added pairwise in a tree on the workers, so one summary per
pass reaches the client whatever the number of chunks.  The mu stages are those of the
in-memory start (``msvm._primal.primal_start``), each a Newton method.  Every pass is
stateless (the in-memory start's incremental Hessian updates keep per-variable state), so a
worker lost between passes costs nothing but its chunk's recomputation, which distributed
does by itself from the graph.  As in memory, each stage after the first starts with the
Newton step of the last stage's free pattern (``PATTERN_STEPS``): the pattern is a function
of the iterate and the last mu, recomputed on the workers in the stage's first gradient
pass (msvm._dask_passes.pattern_pass), which returns its curvature summary and the gradient
of its quadratic model beside the true gradient; without it each tenfold drop of mu shrank
the free set tenfold, and it grew back a few dozen terms a step (20-30 steps a stage).

The exactness step.  In memory the dual solver takes the last stage's dual point
alpha = clip(z / mu, lo, hi) and first checks it against its stopping rule; it needs the
rows of X one at a time, which a chunked fit does not have (a dual coordinate pass per chunk
run in parallel is not a coordinate descent on the whole dual; chained chunk by chunk it is,
but serial and one pass over the data per sweep).  The chunked fit checks the same point
with the same certificate instead: the duality gap of alpha (msvm._core._gap, the in-memory
certificate, summed over chunks: its equality term |P c|_1 |b|_inf is added once from the
summed class sums), at the fitted function -kappa W P, W = X^T U(alpha), and the Newton
iterate's intercepts.  While the relative gap exceeds tol, mu falls by 10 and Newton goes on
(each stage halves the distance to the exact solution's margins); the fit stops when the gap
is certified (``stop_reason_='tol'``) or max_iter Newton steps are spent ('max_iter', with a
ConvergenceWarning).  The objective is then within tol (relative) of the optimum, as the
in-memory fit's; ``duality_gap_`` is the absolute certificate, as there.  RobustMSVM's and
WeightedRobustMSVM's DC steps are a sequence of such solves (msvm/_dask_dc.py),
AdaptiveWeightedSVM's refits too (msvm/_dask_reweight.py), and TargetedLocalMSVM fits one per
grid point (msvm/_dask_grid.py); the group caps of the generalized-margin hinge are smoothed
per group (msvm/_dask_groups.py).  The intercepts are
those of the in-memory exact intercept step where it makes one (``ChunkedNewton.intercepts``:
the breakpoints gathered in a window), else the smoothed problem's KKT estimate.

The fitted attributes of size n (``alpha_``, ``dual_coef_``, ``support_``) are not stored:
the function is ``coef_`` (``feature_coef_``) and ``intercept_``.  ``kkt_residual_`` is the
bound mu max|bound| of the dual point's KKT violation through the smoothing.

Features of an approximate kernel are recomputed from X in every pass by default (memory:
one chunk of features per running task; Nystroem features on the conjugate-gradient route
are kept factored, K(X_c, L) times the map's normalization, never formed: see
msvm/_dask_passes.py); with ``dask.config.set({'msvm.persist_features':
True})`` they are mapped once and persisted in the workers' memory (float32).
"""

import copy
import functools
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from ._core._signals import raise_lost_ctrl_c
from ._thread_pools import one_blas_thread
from ._dask_passes import (ChunkModel, breakpoint_pass, certificate_pass, gradient_pass,
                           line_pass, merge_breakpoints, merge_setup, setup_pass,
                           stats_pass)

EXTRA = "pip install 'msvm[dask]'"
PERSIST_KEY = "msvm.persist_features"
# the Newton system of the chunked fit is formed densely (each chunk returns its (m k)^2
# curvature sum, the client factors it) up to this many unknowns (m + 1) k; beyond, it is
# solved by conjugate gradients with one pass per product (msvm/_dask_cg.py), the chunks
# returning k m^2 preconditioner values per Newton step (msvm/_dask_cg.py).  At 1005
# unknowns (5,000 samples, n_components = 200, k = 5, synchronous scheduler, shared machine)
# the dense route took 183 passes and 7.8 s CPU, conjugate gradients 851 passes (613 of
# them products) and 10.4 s; the dense route's cost grows with (m k)^2 per free row, the
# other's with m k per row: the routes cross at about 1.3 times that size (and a
# distributed pass costs more than a synchronous one, which favours the dense route)
DENSE_MAX_UNKNOWNS = 1500
# the conjugate-gradient route's preconditioner is factored on the client: at most this
# many rows m + 1 (a 6000 x 6000 Gram is 288 MB, k - 1 Cholesky factors of it)
MAX_FEATURES = 6000
# rows of the subsample the conjugate-gradient route's preconditioner is summed over
# (benchmarks/results/dask.md)
SKETCH_ROWS = 4000
# the sampled route (msvm/_dask_cg.py) factors the Newton matrix of a fresh sample at every
# Newton step (None), or, given a number, only at the first step of each mu stage and after
# a direction that took more than that many products, the last factor preconditioning the
# next direction otherwise.  Reuse (1) trades a factoring (m k = 5005: about 2.5 s of client
# CPU with the forming) for products, and took more than it saved: n = 10k,
# n_components = 300, k = 5: 218 products and 406 passes in 75 Newton steps against 3 and
# 178 in 69 (the free set moves between steps: a stale factor needs ~3 products)
REUSE_PRODUCTS = None
# each mu stage after the first starts with the Newton step of the last stage's free
# pattern (``ChunkedNewton.newton``), as the in-memory start does (benchmarks/results/dask.md)
PATTERN_STEPS = True
# continuation stages after the in-memory start's last mu (each 10 times smaller) while the
# certificate is not met
MAX_EXTRA_STAGES = 6
# the line search's evaluations in its first pass (one product X [V, sV] and one compiled
# pass over the terms per step: a step costs about 1/40 of the pass's products at d = 50):
# a geometric spread from 4^-10 (the first stage's steps are as small as 1e-5) to 0.05,
# evenly spaced steps of 0.086 from there to 1 (where the roots of most Newton steps lie)
# and a few beyond 1; the root is then taken from the bracket they give (LINE_PASSES).
# 100k samples, d = 50, k = 10: 22 steps gave 102 passes and 10.4 s CPU, 60 steps 96
# passes and 17.3 s, 16 steps 108 passes and 9.7 s (synchronous scheduler)
FIRST_STEPS = tuple(sorted(set(np.geomspace(4.0 ** -10, 0.05, 6).tolist())
                           | set(np.linspace(0.05, 1.0, 12)[1:].tolist())
                           | {1.25, 1.5, 2.0, 3.0, 4.0}))
# steps per later pass (a bracket from a pass beyond the first): the tangents' roots, the
# secant's, and this many evenly spaced points of the bracket
BRACKET_POINTS = 14
# the bracket's secant point is taken once the bracket is this narrow (hi <= NARROW lo)
# and the objective is sure to fall there (``_descends``), or after LINE_PASSES passes with
# a bracket: its error is a small part of the step, and the next gradient pass measures the
# derivative there anyway
NARROW = 2.0
LINE_PASSES = 3
# the exact intercept step's first window of intercepts, b +- INTERCEPT_WINDOW (1 + max|b|),
# widened 10-fold at most INTERCEPT_TRIES - 1 times
INTERCEPT_WINDOW = 1e-2
INTERCEPT_TRIES = 4
# gamma='median' is estimated from at most this many rows (a seeded uniform sample)
MEDIAN_SAMPLE = 5000


def is_dask_collection(obj):
    """Whether obj is a Dask collection (array, DataFrame, Series), without importing Dask."""
    module = getattr(type(obj), "__module__", "") or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(obj, "__dask_graph__")


def require_dask():
    """Import dask (and dask.array); an ImportError naming the ``msvm[dask]`` extra if absent."""
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"Dask inputs need the optional dependency Dask: install it with "
                          f"{EXTRA}") from exc
    return dask


# ---------------------------------------------------------------------------- inputs
def as_row_chunks(X):
    """X as a dask array chunked by rows only (known chunk sizes, one chunk of columns)."""
    require_dask()
    import dask.array as da
    if hasattr(X, "to_dask_array"):                      # dask DataFrame or Series
        X = X.to_dask_array(lengths=True)
    elif not isinstance(X, da.Array):
        X = da.from_array(np.asarray(X))
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.ndim == 2 and len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    return X


def aligned(v, rows, name):
    """A 1-D y or sample_weight as a dask array with the row chunks ``rows`` (or None)."""
    if v is None:
        return None
    import dask.array as da
    v = as_row_chunks(v) if is_dask_collection(v) else da.from_array(np.asarray(v))
    if v.ndim != 1 or v.shape[0] != sum(rows):
        raise ValueError(f"{name} must be 1-D with one entry per row of X ({sum(rows)}); "
                         f"got shape {v.shape}")
    return v if v.chunks[0] == tuple(rows) else v.rechunk((tuple(rows),))


def _blocks(X, y, sw):
    """The delayed chunks (X_c, y_c, sw_c) of the rows."""
    xs = X.to_delayed().ravel()
    ys = y.to_delayed().ravel()
    ws = [None] * len(xs) if sw is None else sw.to_delayed().ravel()
    return list(zip(xs, ys, ws))


def _add(a, b):
    """Sum of two pass results (arrays, floats, tuples of them; None counts as zero)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(_add(x, z) for x, z in zip(a, b))
    return a + b


def reduce_chunks(blocks, fn, *args, combine=_add):
    """``combine`` of ``fn(*args, X_c, y_c, sw_c)`` over the chunks, added pairwise on the
    workers (a tree: one summary reaches the client), computed by the current scheduler
    (``args[0]``: the delayed ChunkModel, shared by every task of the pass).
    An interrupt (Ctrl-C) or error cancels the running tasks of a distributed client."""
    from dask import delayed
    parts = [delayed(fn, pure=True)(args[0], *block, *args[1:]) for block in blocks]
    while len(parts) > 1:
        parts = [delayed(combine, pure=True)(*parts[i:i + 2]) if i + 1 < len(parts)
                 else parts[i] for i in range(0, len(parts), 2)]
    return _compute(parts[0])


def _compute(task):
    try:
        from distributed import default_client
        client = default_client()
    except (ImportError, ValueError):
        result = task.compute()
        raise_lost_ctrl_c()         # (see below)
        return result
    future = client.compute(task)
    try:
        result = future.result()
        # a Ctrl-C whose KeyboardInterrupt Python code swallowed while the client waited
        # (e.g. the scheduler's garbage collector callback) stops the fit here
        raise_lost_ctrl_c()
        return result
    except BaseException:
        client.cancel(future, force=True)
        raise


# ---------------------------------------------------------------------------- predict
def chunkwise(method):
    """Decorator of a predict-side method ``method(self, X)``: a Dask X is answered as a
    Dask array computed chunk by chunk of rows by the NumPy method (any fitted estimator:
    its fitted function holds no training data of size n on the explicit paths)."""
    @functools.wraps(method)
    def wrapper(self, X, *args, **kwargs):
        if not is_dask_collection(X):
            return method(self, X, *args, **kwargs)
        return _map_rows(self, method, X)
    return wrapper


def _map_rows(est, method, X):
    from sklearn.utils.validation import check_is_fitted
    check_is_fitted(est)
    X = as_row_chunks(X)
    names = getattr(est, "feature_names_in_", None)
    probe = method(est, _as_frame(np.zeros((1, X.shape[1]), dtype=X.dtype), names))
    tail = probe.shape[1:]

    def block(Xb):
        if Xb.shape[0] == 0:
            return np.empty((0, *tail), dtype=probe.dtype)
        return method(est, _as_frame(Xb, names))

    if tail:
        return X.map_blocks(block, dtype=probe.dtype, chunks=(X.chunks[0], tail))
    return X.map_blocks(block, dtype=probe.dtype, drop_axis=1)


def _as_frame(Xb, names):
    if names is None:
        return Xb
    import pandas as pd
    return pd.DataFrame(Xb, columns=names)


def dask_score(est, X, y, sample_weight=None):
    """Weighted accuracy of ``est.predict`` on Dask X (computed chunk by chunk)."""
    pred = est.predict(X)
    y = aligned(y, pred.chunks[0], "y")
    hit = (pred == y).astype(np.float64)
    if sample_weight is None:
        return float(hit.mean().compute())
    w = aligned(sample_weight, pred.chunks[0], "sample_weight").astype(np.float64)
    return float(((hit * w).sum() / w.sum()).compute())


# ---------------------------------------------------------------------------- fit
def check_dask_fit(est):
    """Refuse a fit that the chunked path cannot make, naming the remedy (before any work)."""
    if not est._explicit_features() or callable(est.kernel):
        raise ValueError(
            f"{type(est).__name__}(kernel={est.kernel!r}) cannot be fitted on Dask input: "
            f"an exact kernel needs the whole kernel matrix in one process. Use "
            f"kernel='linear' or set kernel_approximation ('nystroem' or 'rff'), or fit the "
            f"exact kernel on a subsample brought into memory with .compute()")
    kind = _chunked_kind(est)
    if kind in REFUSED:
        raise NotImplementedError(
            f"{type(est).__name__} cannot be fitted on Dask input: {REFUSED[kind]}. "
            f"{DASK_MODELS} fit on Dask input; fit this model on a subsample brought into "
            f"memory with .compute()")
    if est.warm_start:
        raise ValueError("warm_start=True is not supported with Dask input (the chunked fit "
                         "keeps no dual variables); fit with warm_start=False")


# the estimators whose fit runs chunked (named in the refusals)
DASK_MODELS = ("WestonWatkinsMSVM, ReinforcedMSVM, AngleBasedMSVM, RobustMSVM, "
               "WeightedRobustMSVM, AdaptiveWeightedSVM and TargetedLocalMSVM")
# why the chunked path refuses a model (see ``_chunked_kind``)
REFUSED = {
    "other": "it solves a sequence of duals that the chunked path does not run",
}


def _chunked_kind(est):
    """How the chunked path fits ``est``: 'convex' (one solve: the base class's
    ``_fit_dual``), or the model's own ``_dask_fit`` class attribute: 'dc' (the DC steps of
    RobustMSVM and WeightedRobustMSVM, msvm/_dask_dc.py), 'reweight' (AdaptiveWeightedSVM's
    refits, msvm/_dask_reweight.py), 'grid' (TargetedLocalMSVM's local fits, run by
    msvm/_dask_grid.py from its own fit) or a key of REFUSED; 'other' for any other
    sequence of duals."""
    kind = type(est).__dict__.get("_dask_fit")
    if kind is not None:
        return kind
    if type(est)._fit_dual.__qualname__ == "BaseMSVM._fit_dual":
        return "convex"
    return "other"


def fit_dask(est, X, y, sample_weight=None, start=None):
    """The model step of ``fit`` on Dask input (see the module note).

    ``start``: an estimator fitted on Dask input to the same rows (the weighted fits of
    ``probability=True``, msvm/_dask_probability.py): the solve starts from its last Newton
    iterate (``_chunked_iterate_``) and keeps its feature map; None for a cold fit."""
    from ._fit_state import reset_fit_state
    require_dask()
    check_dask_fit(est)
    if _chunked_kind(est) == "grid":
        # TargetedLocalMSVM: its own model step runs the grid (msvm/_dask_grid.py)
        return est._fit_model(X, y, sample_weight)
    est._check_approximation()
    reset_fit_state(est)
    names = _feature_names(X)
    X = as_row_chunks(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got {X.ndim} dimensions")
    y = aligned(y, X.chunks[0], "y")
    sw = aligned(sample_weight, X.chunks[0], "sample_weight")
    blocks = _blocks(X, y, sw)
    est.classes_, factors, facts = _check_data(est, X, blocks)
    est.n_features_in_ = X.shape[1]
    if names is not None:
        est.feature_names_in_ = names
    est.gamma_ = _gamma(est, X, y, facts)
    est.C_ = est._resolve_C(len(est.classes_))
    template = clone(est)
    for one in (est, template):
        # the model's own fitted settings of its dual (WeightedRobustMSVM: utility_)
        getattr(one, "_prepare_dual", lambda k: None)(len(est.classes_))
    model = ChunkModel(template, est.classes_, factors, None, est.C_)
    phi = None
    if est.kernel_approximation is not None:
        phi = _map_features(est, X, start)
        model.feature_map = est.feature_map_
        if phi is not None:
            blocks, model.feature_map = _blocks(phi, y, sw), None
    # one BLAS thread for the client's Newton systems and for passes run in this process
    # (synchronous or threaded scheduler), as the in-memory solves (msvm._thread_pools);
    # distributed's worker processes start with one BLAS thread each
    with one_blas_thread():
        solver = ChunkedNewton(blocks, model, est)
        kind = _chunked_kind(est)
        if kind == "dc":
            reason, attributes = _fit_dc(solver, est, X, y, sw, model)
        elif kind == "reweight":
            from ._dask_reweight import fit_reweighted
            raw = copy.copy(model)          # from X and the map, never persisted features
            raw.feature_map = getattr(est, "feature_map_", None)
            reason, attributes = fit_reweighted(solver, est, _blocks(X, y, sw), raw,
                                                X.chunks[0])
        else:
            iterate = getattr(start, "_chunked_iterate_", (None, None))
            solver.solve(*iterate)
            reason, attributes = None, {"_chunked_settle_": solver.settle}
    solver.store(est, reason, attributes)
    # the last Newton iterate: the start of a warm-started chunked fit (a few (m, k) values)
    est._chunked_iterate_ = (solver.V, solver.b)
    # the passes that were Newton-matrix products (the conjugate-gradient route's)
    est._chunked_products_ = solver.products
    # the largest sample of free terms a gradient pass brought to the client (bytes)
    est._chunked_sample_bytes_ = solver.sample_bytes
    del phi
    return est


def _map_features(est, X, start):
    """``feature_map_`` (``start``'s when given: a map depends on neither y nor the
    weights) and, with ``msvm.persist_features``, the mapped chunks persisted in the
    workers' memory (else None: each pass maps its chunk)."""
    fmap = getattr(start, "feature_map_", None)
    if fmap is None:
        _fit_map(est, X)
    else:
        est.feature_map_, est.n_components_ = fmap, fmap.n_components_
    if not _persist_features():
        return None
    fmap = est.feature_map_
    phi = X.map_blocks(lambda b: fmap.transform(b, dtype=np.float32),
                       dtype=np.float32, chunks=(X.chunks[0], (fmap.n_components_,)))
    # the returned ``phi`` holds the persisted chunks (a distributed client's futures) until
    # the fit returns: the delayed blocks alone would let them be released
    return phi.persist()


def _fit_dc(solver, est, X, y, sw, model):
    """The DC loop of a truncated model (msvm/_dask_dc.py): (stop reason, attributes),
    ``truncated_`` among them (computed from X and the feature map, never from persisted
    features, which the estimator must not keep alive)."""
    import dask.array as da
    from ._dask_dc import ChunkedDC
    loop = ChunkedDC(solver, est)
    reason, attributes = loop.run()
    if est._truncation_value(solver.k) is None:
        attributes["truncated_"] = da.zeros(X.shape[0], chunks=(X.chunks[0],), dtype=bool)
    else:
        raw = copy.copy(model)
        raw.feature_map = getattr(est, "feature_map_", None)
        attributes["truncated_"] = loop.truncated(_blocks(X, y, sw), raw, X.chunks[0])
    return reason, attributes


def _persist_features():
    import dask
    return bool(dask.config.get(PERSIST_KEY, False))


def _feature_names(X):
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return np.asarray(list(columns), dtype=object)


def _merge_stats(a, b):
    labels = np.union1d(a["labels"], b["labels"])
    out = {}
    for key in ("counts", "weighted"):
        total = np.zeros(len(labels))
        for part in (a, b):
            total[np.searchsorted(labels, part["labels"])] += part[key]
        out[key] = total
    out.update(labels=labels, finite=a["finite"] and b["finite"],
               weights_ok=a["weights_ok"] and b["weights_ok"])
    for key, op in (("sqnorm", max), ("top", max), ("rows", int.__add__)):
        out[key] = op(a[key], b[key])
    (na, ma, sa), (nb, mb, sb) = a["moments"], b["moments"]
    n = na + nb
    delta = mb - ma
    out["moments"] = (n, ma + delta * nb / n if n else 0.0,
                      sa + sb + (delta * delta * na * nb / n if n else 0.0))
    return out


def _check_data(est, X, blocks):
    """(classes, per-class factors of class_weight, facts of X) from one pass over the
    chunks, with the checks of the in-memory fit's input validation."""
    from ._kernels import TINY
    from ._validation import (check_class_labels, class_weight_factors, label_repr,
                              weights_name)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"Found array with shape {X.shape}: {type(est).__name__} needs at "
                         f"least one sample and one feature")
    facts = reduce_chunks(blocks, _stats, None, combine=_merge_stats)
    if not facts["finite"]:
        raise ValueError("Input X contains NaN or infinity.")
    if not facts["weights_ok"]:
        raise ValueError("sample_weight contains NaN, infinity or negative values; give "
                         "finite, nonnegative weights")
    if facts["sqnorm"] < TINY and facts["top"] > 0.0:
        raise ValueError("the kernel underflows double precision on X: rescale X (e.g. with "
                         "sklearn.preprocessing.StandardScaler) before fitting.")
    classes = facts["labels"]
    check_class_labels(classes)
    if len(classes) < 2:
        raise ValueError(f"{type(est).__name__} needs samples of at least 2 classes; "
                         f"got 1 class ({label_repr(classes[0])})")
    counts = facts["counts"].astype(np.int64)
    y_rep = np.repeat(np.arange(len(classes)), counts)
    factors = class_weight_factors(getattr(est, "class_weight", None), classes, y_rep)
    factors = factors[np.cumsum(counts) - counts]
    weighted = np.flatnonzero((facts["weighted"] > 0) & (factors > 0))
    if len(weighted) < 2:
        raise ValueError(f"{weights_name(est)} is positive for samples of at most one class: "
                         f"a classifier needs weighted samples of at least 2 classes")
    return classes, factors, facts


def _stats(_, Xc, yc, swc):
    facts = stats_pass(Xc, yc, swc)
    sw = None if swc is None else np.asarray(swc, dtype=np.float64)
    facts["weights_ok"] = sw is None or bool(np.all(np.isfinite(sw)) and np.all(sw >= 0))
    return facts


class _Rows:
    """Row access to a dask array for the landmark draw (``msvm._approx``): the rows asked
    for are computed, never the whole array."""

    def __init__(self, X):
        self.X, self.shape, self.dtype = X, X.shape, X.dtype

    def __getitem__(self, idx):
        idx = np.asarray(idx)
        return np.asarray(self.X[idx].compute(), dtype=np.float64)


def _gamma(est, X, y, facts):
    """``gamma_`` as the in-memory fit resolves it: 'scale' from the variance of all entries
    (the stats pass's moments), 'median' from at most MEDIAN_SAMPLE rows (seeded), 'auto'
    and floats as they are."""
    from ._kernels import resolve_gamma
    if est.kernel not in ("rbf", "poly"):
        return None
    if est.gamma == "scale":
        size, _, m2 = facts["moments"]
        var = m2 / size
        d = X.shape[1]
        if not (np.isfinite(var) and var >= 0):
            raise ValueError("gamma='scale' gives no finite value on this X: rescale X or "
                             "give gamma as a positive float")
        return 1.0 / (d * var) if var > 0 else 1.0
    n = X.shape[0]
    rows = np.arange(n) if n <= MEDIAN_SAMPLE else np.sort(
        np.random.default_rng(0).choice(n, MEDIAN_SAMPLE, replace=False))
    Xs = _Rows(X)[rows]
    labels = np.asarray(y[rows].compute()) if est.gamma == "median" else np.zeros(len(rows))
    return resolve_gamma(est.gamma, est.kernel, Xs, labels)


def _fit_map(est, X):
    """``feature_map_`` fitted on the rows the in-memory fit would draw (the same seeded
    landmarks or frequencies); X's scale was checked by the stats pass."""
    from ._approx import fit_feature_map
    est.feature_map_ = fit_feature_map(est, _Rows(X), est.gamma_, check_scale=False)
    est.n_components_ = est.feature_map_.n_components_


class ChunkedNewton:
    """The smoothed-primal Newton method of ``msvm._primal.primal_start`` with every pass a
    reduction over the chunks, then the certificate (see the module note).

    Parameters
    ----------
    blocks : list of (Delayed, Delayed, Delayed or None)
        The chunks (X_c, y_c, sw_c).
    model : ChunkModel
        The chunks' model (put in the graph once; its ``factored`` is set by the route).
    est : BaseMSVM
        The estimator (tol, max_iter, verbose).
    d : int or None, default=None
        The number of features of the chunks' rows (None: ``n_components_`` or
        ``n_features_in_`` of est; TargetedLocalMSVM's rows have a constant feature more).
    """

    def __init__(self, blocks, model, est, d=None):
        self.blocks, self.model, self.est = blocks, model, est
        from dask import delayed
        k = model.k
        probe = model.problem(np.arange(k, dtype=np.int32), np.ones(k), None)
        self.k, self.kappa, self.equality = k, probe.kappa, probe.equality
        self.pairs = bool(probe.has_pairs)
        if d is None:
            d = est.n_components_ if est.kernel_approximation is not None \
                else est.n_features_in_
        self.d = int(d)
        # the Newton system: formed densely while small, else solved by conjugate gradients,
        # where Nystroem features stay factored (msvm._products.FactoredRows)
        self.curvature = _route(self.d + 1, k)
        model.factored = self.curvature != "dense"
        self.task = delayed(model)
        self.bound, self.diag, caps, n_rows = reduce_chunks(blocks, setup_pass, self.task,
                                                            combine=merge_setup)
        # a dual with group caps is smoothed per group (msvm/_dask_groups.py)
        self.grouped = bool(caps)
        if self.d + 1 > MAX_FEATURES:
            raise ValueError(f"the chunked fit factors a preconditioner of (features + 1)^2 "
                             f"= {self.d + 1}^2 entries, more than {MAX_FEATURES}^2; use "
                             f"fewer n_components (at most {MAX_FEATURES - 1})")
        # the preconditioner's summary is taken over every stride-th row (at most about
        # SKETCH_ROWS rows: its cost per Newton step does not grow with n); the sampled
        # Newton matrix's over every stride-th free sample, the stride set by the last
        # gradient pass's count of free samples (``_sample_stride``)
        self.stride = 1 if self.curvature == "dense" else max(1, int(n_rows) // SKETCH_ROWS)
        if self.curvature == "sampled":
            self.stride = self._sample_stride(int(n_rows))
        # products H p run, and the largest sample of the sampled Newton matrix (bytes); the
        # sampled route's last factor and the products of the last direction
        self.products, self.sample_bytes = 0, 0
        self.factor, self.last_products = None, 0
        self.steps, self.passes, self.solves, self.converged = 0, 0, 0, False
        self.tol, self.gap_scale = float(est.tol), 0.0

    def _sample_stride(self, free):
        """The stride over the free samples that keeps about SAMPLED_ROWS_PER_FEATURE times
        the rows m of the Newton matrix's sample (msvm/_dask_cg.py) when ``free`` samples
        have a free term."""
        from ._dask_cg import SAMPLED_ROWS_PER_FEATURE
        budget = SAMPLED_ROWS_PER_FEATURE * (self.d + 1)
        return max(1, -(-int(free) // budget))

    def use(self, model):
        """Solve ``model``'s problem from now on (a DC step: the boxes shifted)."""
        from dask import delayed
        self.model, self.task = model, delayed(model)
        self.factor = None

    def _summary_kind(self):
        """The curvature summary the next gradient pass returns: the route's, except on
        the sampled route while the last factored sample may serve again (``REUSE``)."""
        if self.curvature != "sampled" or self.factor is None:
            return self.curvature
        if REUSE_PRODUCTS is None or self.factor.mu != self.mu \
                or self.last_products > REUSE_PRODUCTS:
            return self.curvature
        return False

    def function(self):
        """The fitted function (coef (n_outputs, m), intercept (n_outputs,)) of the last
        certified point, on the solver's features."""
        from ._products import feature_weights
        T = self.est._output_map(self.k)
        return feature_weights(self.W, self.kappa, T), T @ self.b_slot

    SOLUTION = ("V", "b", "mu", "state", "W", "b_slot", "gap", "loss", "objective",
                "relative_gap", "support", "predicted", "converged", "model", "task")

    def save(self):
        """The last solution (the attributes of ``SOLUTION``), for ``restore``."""
        return {name: getattr(self, name) for name in self.SOLUTION}

    def restore(self, saved):
        """Go back to a solution kept by ``save``."""
        for name, value in saved.items():
            setattr(self, name, value)
        self.factor = None

    def reduce(self, fn, *args, **kwargs):
        """``reduce_chunks`` of the pass ``fn`` over the chunks with the current model."""
        return reduce_chunks(self.blocks, fn, self.task, *args, **kwargs)

    # ------------------------------------------------------------- small algebra
    def _center(self, V, b):
        V = V - V.mean(axis=1, keepdims=True)
        return V, (b - b.mean() if self.equality else np.zeros(self.k))

    def _flat(self, gV, gb):
        return (np.vstack([gV, gb[None, :]]) if self.equality else gV).ravel()

    def _unflat(self, x):
        T = x.reshape(-1, self.k)
        return T[:self.d], (T[self.d] if self.equality else np.zeros(self.k))

    # ------------------------------------------------------------- passes
    def gradient(self, V, b, curvature):
        """(f, gV, gb, curvature summary, X^T U, class sums) at (V, b): one pass
        (``curvature``: False, or the summary of ``self.curvature``: 'dense', or the
        preconditioner's of the conjugate-gradient route, 'slots' or 'kronecker')."""
        self.passes += 1
        loss, XtU, usum, curv, _ = reduce_chunks(self.blocks, gradient_pass, self.task, V, b,
                                                 self.mu, curvature, self.stride)
        f = 0.5 / self.kappa * float(np.sum(V * V)) + loss
        gV, gb = self._assembled(V, XtU, usum)
        return f, gV, gb, self._summary(curvature, curv), XtU, usum

    def pattern_gradient(self, V, b, pattern_mu):
        """``gradient`` at the first iterate of a stage, with the gradient of the quadratic
        model of the last stage's free pattern (the terms free at (V, b) for
        ``pattern_mu``) and that pattern's curvature summary: one pass (``pattern_pass``).
        Returns (f, gV, gb, curvature summary, X^T U, class sums, model's flat gradient)."""
        from ._dask_passes import pattern_pass
        self.passes += 1
        kind = self.curvature
        out = reduce_chunks(self.blocks, pattern_pass, self.task, V, b, self.mu, pattern_mu,
                            kind, self.stride)
        loss, XtU, usum, curv, _, XtUp, usump = out
        f = 0.5 / self.kappa * float(np.sum(V * V)) + loss
        gV, gb = self._assembled(V, XtU, usum)
        curv = self._summary(kind, curv)
        model = self._flat(*self._assembled(V, XtUp, usump))
        return f, gV, gb, curv, XtU, usum, model

    def _assembled(self, V, XtU, usum):
        """The gradient (gV, gb) from X^T U and the class sums of U."""
        gV = XtU - XtU.mean(axis=1, keepdims=True) + V / self.kappa
        gb = usum - usum.mean() if self.equality else np.zeros(self.k)
        return gV, gb

    def _summary(self, kind, curv):
        """The summed curvature summary of ``kind`` (zeros where no chunk had a free term;
        the sampled route's stride and largest sample updated)."""
        m = self.d + (1 if self.equality else 0)
        if kind == "slots" and curv is None:
            curv = np.zeros((self.k, m, m))
        elif kind == "kronecker" and curv is None:
            curv = np.zeros((m, m)), np.zeros((self.k, self.k))
        elif kind == "sampled":
            from ._dask_passes import SampledRows
            if curv is None:
                curv = SampledRows(np.zeros((0, self.d)), np.zeros((0, self.k, self.k)), 0,
                                   True)
            self.stride = self._sample_stride(curv.free)
            self.sample_bytes = max(self.sample_bytes, curv.nbytes)
        elif kind and curv is None:
            curv = np.zeros((m, self.k, m, self.k))
        return curv

    def hessian_times(self, V, b, P, free_mu=None):
        """The Newton matrix at (V, b) times P (m, k) in the layout of ``_flat`` reshaped
        (rows [sV; sb]): one pass (``hessian_pass``), then what ``newton_matrix`` adds to
        the curvature sum (mu, the projection, I / kappa, I (x) 11^T / k, the ridge).
        ``free_mu``: of the terms free at (V, b) for that mu (a pattern step's)."""
        from ._dask_passes import hessian_pass
        self.passes += 1
        self.products += 1
        sV, sb = self._center(*self._unflat(P.ravel()))
        out = reduce_chunks(self.blocks, hessian_pass, self.task, V, b, self.mu, sV, sb,
                            free_mu)
        XtU, usum = out if out is not None else (np.zeros((self.d, self.k)), np.zeros(self.k))
        rows = [XtU, usum[None, :]] if self.equality else [XtU]
        H = np.vstack(rows) / self.mu
        H -= H.mean(axis=1, keepdims=True)
        H[:self.d] += P[:self.d] / self.kappa
        H += P.mean(axis=1, keepdims=True)
        if self.equality:
            H[self.d] += 1e-10 * P[self.d]
        return H

    def direction(self, V, b, g, curv, free_mu=None):
        """The Newton direction (flat) at (V, b) for the gradient g: the dense system's
        solution, or conjugate gradients' (msvm/_dask_cg.py) beyond DENSE_MAX_UNKNOWNS
        (``free_mu``: the curvature's terms are those free for that mu, a pattern step's)."""
        from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq
        if self.curvature != "dense":
            from ._dask_cg import conjugate_gradients, preconditioner
            if curv is None:
                # the sampled route's last factor, from an earlier iterate (``_summary_kind``)
                M = self.factor
            else:
                M = preconditioner(self.curvature, curv, self.mu, self.kappa, self.d,
                                   self.equality)
                if self.curvature == "sampled":
                    self.factor = M
                    if M.exact:
                        # the sample holds every free term: M is the Newton matrix here
                        self.last_products = 0
                        return M(g.reshape(-1, self.k)).ravel()
            s, self.last_products = conjugate_gradients(
                lambda P: self.hessian_times(V, b, P, free_mu), g.reshape(-1, self.k), M)
            return s.ravel()
        from ._primal import newton_matrix
        H = newton_matrix(curv, self.mu, self.d, self.kappa, self.equality)
        try:
            return cho_solve(cho_factor(H), g)
        except LinAlgError:
            return lstsq(H, g)[0]

    def exact_step(self, V, b, sV, sb, s0):
        """The minimizer t > 0 along -(sV, sb) (the derivative is increasing and piecewise
        linear, as in ``SmoothedPrimal._exact_step``), with several steps evaluated per pass:
        first FIRST_STEPS (t = 1, where a Newton step usually lands, and a spread that
        brackets the root), then the tangents' roots from both ends of the bracket, its
        secant point and BRACKET_POINTS more inside.  After a pass the root is taken without
        another one where the derivative is known to be linear across the bracket (both
        ends on one piece: the same slope, and the tangent of one end meets the other), or
        as the bracket's secant point once the bracket is narrow (NARROW) and the objective
        surely falls there (at most LINE_PASSES passes): the line search only has to lower
        the objective; the fit's exactness is the duality-gap certificate's."""
        from ._primal import LINE_MAX_EVALS, LINE_RTOL
        a, c = float(np.sum(sV * sV)) / self.kappa, float(np.sum(V * sV)) / self.kappa
        tol = LINE_RTOL * abs(s0)
        lo, hi = (0.0, s0, 0.0), (np.inf, np.inf, 0.0)     # (t, derivative, its slope)
        move = max(float(np.max(np.abs(sV), initial=0.0)), float(np.max(np.abs(sb))))
        size = 1.0 + max(float(np.max(np.abs(V), initial=0.0)), float(np.max(np.abs(b))))
        steps, bracketed = FIRST_STEPS, 0
        for _ in range(LINE_MAX_EVALS):
            self.passes += 1
            sums = reduce_chunks(self.blocks, line_pass, self.task, V, b, sV, sb, self.mu,
                                 steps)
            for t, (slope, curv) in sorted(zip(steps, sums), key=lambda pair: pair[0]):
                point = (t, t * a - c - slope, a + curv)
                if abs(point[1]) <= tol:
                    return t
                if point[1] < 0 and t > lo[0]:
                    lo = point
                elif point[1] > 0 and t < hi[0]:
                    hi = point
            if hi[0] == np.inf:
                steps = _beyond_steps(lo)
                continue
            if lo[0] == 0 and hi[0] * move <= 1e-16 * size:
                # the root lies below the iterate's rounding (a kink at t = 0): no step
                return 0.0
            bracketed += 1
            if _one_piece(lo, hi, tol):
                return lo[0] - lo[1] / lo[2]
            t = _secant(lo, hi)
            if _descends(lo, hi, t) and (hi[0] <= NARROW * lo[0] or bracketed >= LINE_PASSES):
                return t
            if lo[0] > 0 and (bracketed >= LINE_PASSES or hi[0] - lo[0] <= 1e-14 * hi[0]):
                return lo[0]
            steps = _bracket_steps(lo, hi)
        return lo[0] if hi[0] == np.inf else _secant(lo, hi)

    # ------------------------------------------------------------- the method
    def gradient_step(self, V, b):
        """(V, b) moved to the minimizer along the negative gradient."""
        _, gV, gb, *_ = self.gradient(V, b, False)
        s0 = -float(np.sum(gV * gV) + gb @ gb)
        if not s0 < 0:
            return V, b
        t = self.exact_step(V, b, gV, gb, s0)
        return V - t * gV, b - t * gb

    def newton(self, V, b, gtol, max_steps, rtol=0.0, pattern=None):
        """``SmoothedPrimal.newton``: the Newton direction from the free terms' curvature at
        each iterate (``direction``).  ``pattern``: the last stage's mu, whose free pattern
        at (V, b) (its solution) gives the first step, as ``predict`` does in memory: the
        Newton step of that pattern's quadratic model at the current mu (``pattern_pass``:
        the pattern is recomputed from (V, b) on the workers, no state is kept between
        passes), in the pass that the first gradient takes anyway."""
        model = None
        if pattern is not None:
            *state, model = self.pattern_gradient(V, b, pattern)
        else:
            state = self.gradient(V, b, self._summary_kind())
        gtol = max(gtol, rtol * float(np.linalg.norm(self._flat(*state[1:3]))))
        steps = 0
        for _ in range(max_steps):
            steps += 1
            f, gV, gb, curv = state[:4]
            g = self._flat(gV, gb)
            gnorm = float(np.sqrt(g @ g))
            if gnorm <= gtol:
                break
            rhs, free_mu, model = (g, None, None) if model is None else (model, pattern, None)
            sV, sb = self._center(*self._unflat(self.direction(V, b, rhs, curv, free_mu)))
            slope = float(gV.ravel() @ sV.ravel() + gb @ sb)
            if not slope > 0:
                sV, sb, slope = gV, gb, float(g @ g)
            t = self.exact_step(V, b, sV, sb, -slope)
            V1, b1 = V - t * sV, b - t * sb
            new = self.gradient(V1, b1, self._summary_kind())
            if not (new[0] < f or np.linalg.norm(self._flat(*new[1:3])) < gnorm):
                break
            V, b, state = V1, b1, new
        self.steps += steps
        self.state = state
        return V, b, steps

    def solve(self, V=None, b=None, tol=None, gap_scale=0.0):
        """The mu stages of ``msvm._primal.primal_start`` from (V, b) (zero by default; a
        DC step starts from the last step's iterate), then the certificate, and more stages
        (mu / 10 each) while it is not met and Newton steps remain.  ``tol``: the relative
        duality gap to certify (the estimator's by default); ``gap_scale``: the least size
        of the objective it is measured against (a DC step's, as in msvm._dc)."""
        from ._primal import (FIRST_MU_SHARE, GRAD_SHARE, LAST_STAGE_SNAP, NEWTON_MAX_ITER,
                              STAGE_RTOL, TARGET_SHARE, TOL_FLOOR)
        est = self.est
        self.tol = float(est.tol) if tol is None else float(tol)
        self.gap_scale = float(gap_scale)
        bound = max(self.bound, 1e-300)
        tol = max(self.tol, TOL_FLOOR)
        target = TARGET_SHARE * tol / bound
        gtol = GRAD_SHARE * tol * min(1.0, bound) / (
            self.kappa * np.sqrt(max(self.diag, 1e-300)) + 1.0)
        budget = int(est.max_iter)
        self.mu = FIRST_MU_SHARE / bound
        if V is None:
            V, b = np.zeros((self.d, self.k)), np.zeros(self.k)
        self.factor = None
        V, b = self.gradient_step(*self._center(V, b))
        extra, best, pattern = 0, None, None
        while True:
            self.mu = max(self.mu, target)
            last = self.mu <= target
            V, b, used = self.newton(V, b, gtol if last else 1e3 * gtol,
                                     min(NEWTON_MAX_ITER, budget),
                                     rtol=0.0 if last else STAGE_RTOL,
                                     pattern=pattern)
            budget -= used
            # the next stage starts with this one's free pattern (not per group: caps)
            pattern = self.mu if PATTERN_STEPS and not self.grouped else None
            if last:
                self.V, self.b = V, b
                self.certify()
                if best is not None and self.relative_gap >= best["relative_gap"]:
                    # a smaller mu certified worse: the margins are resolved no finer than
                    # rounding (weights spanning orders of magnitude); the best point is kept
                    self.restore(best)
                    break
                best = self.save()
                if self.relative_gap <= self.tol or budget <= 0 or extra >= MAX_EXTRA_STAGES:
                    break
                target, gtol, extra = 0.1 * target, 0.1 * gtol, extra + 1
            elif budget <= 0:
                self.V, self.b = V, b
                self.certify()
                break
            self.mu *= 0.1
            if self.mu < LAST_STAGE_SNAP * target:
                self.mu = target
        self.converged = bool(self.relative_gap <= self.tol)
        self.solves += 1
        if not self.converged:
            warnings.warn(f"{type(est).__name__}: a chunked solve stopped after "
                          f"{est.max_iter - budget} Newton steps with a relative duality gap "
                          f"of {self.relative_gap:.3g} > tol = {self.tol:g}; increase "
                          f"max_iter, or tol where smaller smoothing certified no better "
                          f"(large ratios of sample weights)", ConvergenceWarning)

    def intercepts(self, W):
        """The slot intercepts of the fitted function -kappa W P: the exact intercept step of
        the in-memory fit (``msvm._intercept.exact_intercepts``) where it makes one (every
        loss term on one slot, intercepts summing to zero), else the Newton iterate's b.

        The breakpoints are gathered in a window around b only (few: the margins near the
        kink), with the slopes below it summed on the workers; the search's result is exact
        when it lies inside the window, which is widened 10-fold (one more pass) until it
        does.  After INTERCEPT_TRIES windows the iterate's b is kept (as the in-memory step
        keeps the KKT estimate where the loss is flat to infinity)."""
        from ._intercept import slot_intercepts_from_breakpoints
        b = self.b
        solver = getattr(self.est, "intercept_solver", "exact")
        if not self.equality or self.pairs or solver != "exact":
            return b
        Wh = np.ascontiguousarray(-self.kappa * (W - W.mean(axis=1, keepdims=True)))
        width = INTERCEPT_WINDOW * (1.0 + float(np.max(np.abs(b))))
        for _ in range(INTERCEPT_TRIES):
            self.passes += 1
            lo, hi = b - width, b + width
            base, below, ts, rises = reduce_chunks(self.blocks, breakpoint_pass, self.task,
                                                   Wh, lo, hi, combine=merge_breakpoints)
            slots = []
            for j in range(self.k):
                order = np.argsort(ts[j])
                cum = np.concatenate([[0.0], np.cumsum(rises[j][order])]) + base[j] + below[j]
                slots.append((ts[j][order], cum))
            try:
                exact = slot_intercepts_from_breakpoints(slots, b)
            except RuntimeError:
                exact = None
            if exact is not None and np.all((lo < exact) & (exact < hi)):
                return exact
            width *= 10.0
        return b

    def certify(self):
        """The certificate of the last stage's dual point (one pass): the fitted weights
        W = X^T U(alpha), the absolute and relative duality gap at the intercepts b, the
        objective, the support and the training predictions per class."""
        self.passes += 1
        W, usum = self.state[4], self.state[5]
        b = self.b_slot = self.intercepts(W)
        sums = reduce_chunks(self.blocks, certificate_pass, self.task, self.V, self.b,
                             self.mu, W, b)
        value, gap, size, loss = sums[:4]
        if self.equality:
            pc, s = usum - usum.mean(), -b
            gap += float(pc @ s) + float(np.sum(np.abs(pc))) * float(np.max(np.abs(s)))
        from ._snapshot import feature_penalty
        self.W, self.gap, self.loss = W, gap, loss
        self.objective = feature_penalty(W, self.kappa, self.est._output_map(self.k)) + loss
        size = max(size, self.gap_scale)
        self.relative_gap = gap / size if size > 0 else (0.0 if gap <= 0 else np.inf)
        k = self.k
        self.support = sums[4:4 + k].astype(np.int32)
        self.predicted = sums[4 + k:4 + 2 * k]
        # what a weighted refit's chain needs to tell whether larger weights of a class
        # keep this solution (msvm._dask_probability.settled)
        self.settle = (sums[4 + 2 * k:4 + 3 * k], sums[4 + 3 * k:], float(gap), float(size),
                       float(self.tol))

    def store(self, est, stop_reason=None, attributes=None):
        """The fitted attributes (see the module note) and the fit's warnings: those of the
        last solution, with the stop reason of the loop around the solves (``stop_reason``,
        by default the last solve's) and the loop's own ``attributes`` (a dict)."""
        from ._plan import SolvePlan, SolveStep
        from ._validation import check_finite_objective
        weights, est.intercept_ = self.function()
        if est.kernel_approximation is None:
            est.coef_ = weights
        else:
            est.feature_coef_ = weights
        est.objective_ = check_finite_objective(est, self.objective, "the objective")
        est.duality_gap_ = float(self.gap)
        est.kkt_residual_ = float(self.mu * self.bound)
        est.n_iter_ = self.steps
        est.n_passes_ = self.passes
        est.n_support_ = self.support
        est.stop_reason_ = stop_reason or ("tol" if self.converged else "max_iter")
        est.converged_ = est.stop_reason_ == "tol"
        name = "chunked newton" + ("" if self.curvature == "dense" else "-cg")
        est.solver_plan_ = SolvePlan("explicit features", "float64", "chunked newton", "on",
                                     steps=(SolveStep(name, 0, True),) * self.solves)
        for name, value in (attributes or {}).items():
            setattr(est, name, value)
        if np.count_nonzero(self.predicted) == 1:
            from ._validation import label_repr
            from .exceptions import DegenerateFitWarning
            cause, remedy = est._degenerate_cause()
            label = est.classes_[int(np.flatnonzero(self.predicted)[0])]
            warnings.warn(f"{type(est).__name__} predicts class {label_repr(label)} for every "
                          f"training sample: {cause}; {remedy}", DegenerateFitWarning)


def _route(m, k):
    """How the chunked fit solves its Newton systems of m k unknowns (m the rows of V with
    the intercepts): 'dense' up to DENSE_MAX_UNKNOWNS (the curvature summed over the
    chunks), else conjugate gradients preconditioned by msvm._dask_cg.PRECONDITIONER
    ('sampled' falls back to 'slots' beyond SAMPLED_MAX_UNKNOWNS, whose (m k)^2 matrix the
    client forms and factors)."""
    from ._dask_cg import PRECONDITIONER, SAMPLED_MAX_UNKNOWNS
    if m * k <= DENSE_MAX_UNKNOWNS:
        return "dense"
    if PRECONDITIONER == "sampled" and m * k > SAMPLED_MAX_UNKNOWNS:
        return "slots"
    return PRECONDITIONER


def _bracket_steps(lo, hi):
    """The next steps of the line search within the bracket (lo, hi) of (t, derivative,
    slope) points: the tangents' roots from both ends and the secant's (the derivative is
    linear between them when they lie on one piece), and BRACKET_POINTS evenly spaced; below
    hi when no step with a negative derivative is known, BRACKET_POINTS powers of 4 below
    it."""
    if lo[0] == 0:
        # the root lies below every step tried: powers of 4 below hi's
        return tuple(hi[0] * 4.0 ** -np.arange(1, BRACKET_POINTS + 1))
    out = set()
    for t, s, h in (lo, hi):
        if h > 0 and lo[0] < t - s / h < hi[0]:
            out.add(t - s / h)
    out.add(_secant(lo, hi))
    out.update(np.linspace(lo[0], hi[0], BRACKET_POINTS + 2)[1:-1].tolist())
    return tuple(sorted(t for t in out if lo[0] < t < hi[0]))


def _beyond_steps(lo):
    """Steps beyond the largest tried (no root bracketed yet): 2, 4, ..., 2^8 times it."""
    return tuple(max(lo[0], 1.0) * 2.0 ** np.arange(1, 9))


def _secant(lo, hi):
    """The root of the chord of the derivative between lo and hi (inside the bracket)."""
    return lo[0] - lo[1] * (hi[0] - lo[0]) / (hi[1] - lo[1])


def _descends(lo, hi, t):
    """Whether the objective at step t in the bracket (lo, hi) is surely below its value at
    0: the derivative is increasing, so the change is at most lo's derivative times lo plus
    hi's derivative times (t - lo)."""
    return lo[0] > 0 and lo[1] * lo[0] + hi[1] * (t - lo[0]) < 0


def _one_piece(lo, hi, tol):
    """Whether the derivative is linear between lo and hi (t, derivative, slope): the same
    slope at both ends, and the tangent at lo meets hi's derivative (to tol and rounding);
    lo at t = 0 has no known slope."""
    h = lo[2]
    if not (h > 0 and lo[0] > 0):
        return False
    same_slope = abs(hi[2] - h) <= 1e-9 * h
    meets = abs(lo[1] + h * (hi[0] - lo[0]) - hi[1]) <= tol + 1e-9 * (abs(lo[1]) + abs(hi[1]))
    return same_slope and meets
