"""Shared pieces of the Wu and Liu (2013) scripts (adaptively weighted large-margin
classifiers: SVM vs one-step (OWSVM) vs iterative (IWSVM) weighting)."""

import time

import numpy as np

from msvm import AdaptiveWeightedSVM, WeightedRobustMSVM
from msvm.model_selection import TuningSetSearch

from benchmarks.harness import count_unconverged

METHODS = ("SVM", "OWSVM", "IWSVM")


def make_method(name, max_iter=10000):
    """The three classifiers, linear kernel f(x) = w'x + b (the slides' setting).

    SVM: the plain (unweighted) hinge in the generalized-margin form,
    ``WeightedRobustMSVM(truncation=None)``; for k = 2 it is the binary SVM with
    f = F/2, i.e. sklearn's SVC at C_svc = 2 C (checked by the WDBC script), so on the
    grid lambda = 2^j it selects the same fits as a binary SVM shifted by one grid step.
    OWSVM / IWSVM: ``AdaptiveWeightedSVM(scheme='one-step' / 'iterative')``, the IWSVM with
    the default truncation s = -1/(k-1) (-1 for k = 2).
    """
    common = dict(kernel="linear", max_iter=max_iter)
    if name == "SVM":
        return WeightedRobustMSVM(truncation=None, **common)
    if name == "OWSVM":
        return AdaptiveWeightedSVM(scheme="one-step", **common)
    if name == "IWSVM":
        return AdaptiveWeightedSVM(scheme="iterative", **common)
    raise ValueError(name)


def tune(name, X, y, X_tune, y_tune, grid, counter, max_iter=10000):
    """TuningSetSearch over the lambda grid; returns (search, wall time of the grid)."""
    t0 = time.perf_counter()
    with count_unconverged(counter) as count:
        search = count(TuningSetSearch(make_method(name, max_iter), lambdas=grid,
                                       refit=False).fit(      # the paper's training fit
            X, y, X_tune=X_tune, y_tune=y_tune))
    return search, time.perf_counter() - t0


def paired_rows(results, keys, label_fn):
    """Mean (se) of the paired differences OWSVM - SVM and IWSVM - SVM per setting."""
    rows = []
    for key in keys:
        base = np.asarray(results[(*key, "SVM")]["error"])
        cells = [label_fn(key)]
        for other in ("OWSVM", "IWSVM"):
            d = np.asarray(results[(*key, other)]["error"]) - base
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
            cells.append(f"{d.mean():+.4f} ({se:.4f})")
        rows.append(cells)
    return rows
