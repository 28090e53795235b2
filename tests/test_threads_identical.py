"""The solver's threads (``n_threads``) change nothing but the time a fit takes.

The SMO path splits the samples between threads for the kernel rows of a working set, the
score update after it and the scan for the next one (msvm/_core/_threads.h); every value is
computed by one thread with the same operations in the same order, so a fit with two threads
must equal the fit with one to the last bit: dual coefficients, intercepts, objective,
epochs.  The samples must exceed two parts of 1024 for a split to happen at all, so these
fits use n >= 2,500.
"""

import threading

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import (AngleBasedMSVM, ReinforcedMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm._core._rows import make_row_source, threads_available

pytestmark = pytest.mark.skipif(not threads_available(),
                                reason="the compiled core has no threads here")


def _data(n=2600, k=4, seed=0):
    X, y = make_classification(n_samples=n, n_features=10, n_informative=6, n_classes=k,
                               n_clusters_per_class=1, random_state=seed)
    return X, y


def _same_fit(a, b):
    """Whether two fitted estimators are identical to the last bit."""
    return (np.array_equal(a.dual_coef_, b.dual_coef_)
            and np.array_equal(a.intercept_, b.intercept_)
            and a.objective_ == b.objective_ and a.n_iter_ == b.n_iter_)


@pytest.mark.parametrize("make", [
    lambda t: ReinforcedMSVM(C=1.0, n_threads=t),
    lambda t: ReinforcedMSVM(C=1.0, reinforcement=0.0, cache_dtype="float64", n_threads=t),
    # a cache of a fifth of the rows: the working sets recompute rows (evicting others)
    lambda t: ReinforcedMSVM(C=1.0, cache_size=5.5, cache_dtype="float64", n_threads=t),
    lambda t: WestonWatkinsMSVM(C=1.0, n_threads=t),
    lambda t: WeightedRobustMSVM(C=1.0, truncation=None, n_threads=t),
    lambda t: AngleBasedMSVM(C=1.0, n_threads=t),
], ids=["reinforced", "llw-float64", "small-cache", "weston-watkins", "weighted", "angle"])
def test_two_threads_fit_identically_to_one(make):
    """dual_coef_, intercept_, objective_ and n_iter_ with 2 threads equal those with 1."""
    X, y = _data()
    one = make(1).fit(X, y)
    two = make(2).fit(X, y)
    assert _same_fit(one, two)


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear-rows"])
def test_row_batches_and_updates_do_not_depend_on_threads(kernel, cache_dtype):
    """Kernel rows computed in batches (prefetch) and a working set's score update
    (add_rows) with 3 threads equal those with 1, for n not a multiple of the parts."""
    X, _ = _data(n=3333)
    rng = np.random.default_rng(1)
    idx = rng.choice(len(X), 40, replace=False)
    coef = rng.standard_normal((40, 5)) * (rng.random((40, 5)) < 0.6)
    out = []
    for threads in (1, 3):
        src = make_row_source(kernel, 4, X=np.ascontiguousarray(X), gamma=0.1, capacity=64,
                              cache_dtype=cache_dtype)
        src.set_threads(threads)
        src.prefetch_rows(idx[:20])
        src.prefetch_rows(idx[:1])
        rows = np.array([src.kernel_row(int(i)) for i in idx[:20]])
        ys = np.tile(np.linspace(-1.0, 1.0, len(X)), (5, 1))
        src.add_rows(idx, coef, ys)
        out.append((rows, ys, src.n_computed))
    assert np.array_equal(out[0][0], out[1][0])
    assert np.array_equal(out[0][1], out[1][1])
    assert out[0][2] == out[1][2]


def test_concurrent_fits_with_threads_fit_as_alone():
    """Two fits with n_threads=2 running at once in two Python threads (one of them finds
    the process's thread pool busy and runs its parts alone) equal the fit alone."""
    X, y = _data()
    alone = ReinforcedMSVM(C=1.0, n_threads=1).fit(X, y)
    fits = [ReinforcedMSVM(C=1.0, n_threads=2) for _ in range(2)]
    workers = [threading.Thread(target=est.fit, args=(X, y)) for est in fits]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all(_same_fit(alone, est) for est in fits)


def test_n_threads_values():
    """n_threads = -1 (every processor) fits like 1; 0 is refused with the rule; a row
    source refuses fewer than one thread."""
    X, y = _data(n=300, k=3)
    assert _same_fit(ReinforcedMSVM(n_threads=1).fit(X, y),
                     ReinforcedMSVM(n_threads=-1).fit(X, y))
    with pytest.raises(ValueError, match="n_threads"):
        ReinforcedMSVM(n_threads=0).fit(X, y)
    src = make_row_source("rbf", 3, X=np.ascontiguousarray(X), capacity=10)
    with pytest.raises(ValueError, match="n_threads"):
        src.set_threads(0)
    src.set_threads(1000)
    assert src.n_threads == 64


def test_parallel_workers_fit_with_one_thread(monkeypatch):
    """Fits run in parallel joblib workers (the probability estimate's, TuningSetSearch's
    paths) use one solver thread each, whatever the estimator's n_threads: n_jobs workers
    times n_threads threads would oversubscribe the cores.  With n_jobs=1 they keep it."""
    import joblib

    import msvm._probability as probability
    import msvm.model_selection as model_selection
    from msvm.datasets import make_reinforced_example
    from msvm.model_selection import TuningSetSearch

    seen = []
    own_fit, lambda_path = probability._own_fit, model_selection._lambda_path

    def record_own(template, *args):
        seen.append(("probability", template.n_threads))
        return own_fit(template, *args)

    def record_path(estimator, *args, **kwargs):
        seen.append(("tuning", estimator.n_threads))
        return lambda_path(estimator, *args, **kwargs)

    # the runner holds its fit functions as attributes (Dask input swaps them)
    monkeypatch.setattr(probability._ChainRunner, "own_fit", staticmethod(record_own))
    monkeypatch.setattr(model_selection, "_lambda_path", record_path)
    X, y = make_reinforced_example(60, random_state=0)
    Xt, yt = make_reinforced_example(60, random_state=1)
    with joblib.parallel_backend("threading"):
        for n_jobs in (2, 1):
            ReinforcedMSVM(C=1.0, probability=True, probability_grid=2, n_jobs=n_jobs,
                           n_threads=2).fit(X, y)
            TuningSetSearch(ReinforcedMSVM(n_threads=2), lambdas=[1e-2, 1e-1],
                            param_grid={"gamma": [0.1, 1.0]}, n_jobs=n_jobs).fit(
                                X, y, X_tune=Xt, y_tune=yt)
    half = len(seen) // 2
    assert seen[:half] and {threads for _, threads in seen[:half]} == {1}
    assert {threads for _, threads in seen[half:]} == {2}
    assert {kind for kind, _ in seen} == {"probability", "tuning"}
