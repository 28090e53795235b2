"""Helpers shared by the Liu, Wu and He (2011) scripts (utility-based weighted robust MSVM).

The weighted RSVM (WRSVM) is ``WeightedRobustMSVM(utility=U, truncation='auto')`` (s =
-1/(k-1) = -1/2 for k = 3, the paper's recommendation in section 3.2) and the weighted SVM
(WSVM) is the same estimator with ``truncation=None`` (the convex problem (7)).  lambda is
chosen on an independent tuning set along the paper's grid 2^-16 .. 2^15 (C = 1/(n lambda))
by :class:`msvm.model_selection.TuningSetSearch`, scored by the average utility on the tuning
set (our reading: the paper only says "selected over a grid using an independent tuning data
set").
"""

import contextlib
import sys
from collections import Counter, defaultdict

import numpy as np

from benchmarks.harness import format_counts, watch_fits
from msvm import WeightedRobustMSVM
from msvm.metrics import make_utility_scorer
from msvm.model_selection import TuningSetSearch, lambda_grid

METHODS = {"WRSVM": "auto", "WSVM": None}     # method name -> truncation

FULL_LAMBDAS = lambda_grid(-16, 15)
QUICK_LAMBDAS = lambda_grid(-6, 6)[::4]       # 2^-6, 2^-2, 2^2, 2^6: smoke test only


def rep_seeds(base_seed, rep, count):
    """``count`` independent integer seeds for repetition ``rep`` of a run seeded ``base_seed``."""
    return [int(s) for s in
            np.random.SeedSequence([int(base_seed), int(rep)]).generate_state(count)]


class WarningLog:
    """Count the fits inside ``with log.catch(method) as count:`` per method.

    ``count(est)`` registers a fitted estimator; fits that did not converge are counted by
    their stop reason (`benchmarks.harness.FitWatch.unconverged`); other warnings are counted
    per (method, category, message) and re-listed in the script's Notes, so nothing is
    suppressed silently.
    """

    def __init__(self):
        self.unconverged = defaultdict(Counter)
        self.other = Counter()

    @contextlib.contextmanager
    def catch(self, method):
        with watch_fits() as watch:
            yield watch.add
        self.unconverged[method].update(watch.unconverged())
        for rec in watch.other_warnings():
            self.other[(method, rec.category.__name__, str(rec.message)[:120])] += 1

    def notes(self, methods):
        lines = ["Fits that did not converge (over all fits): " + ", ".join(
            f"{m} {sum(self.unconverged[m].values())}" for m in methods) + "."]
        reasons = [f"{m}: {format_counts(self.unconverged[m])}" for m in methods
                   if self.unconverged[m]]
        if reasons:
            lines.append("Their stop reasons: " + "; ".join(reasons) + ".")
        for (method, cat, msg), count in sorted(self.other.items()):
            lines.append(f"{method}: {count} x {cat}: {msg}")
        return lines

    def payload(self):
        return {"unconverged_fits": {m: dict(c) for m, c in self.unconverged.items()},
                "other_warnings": [{"method": m, "category": c, "message": s, "count": n}
                                   for (m, c, s), n in self.other.items()]}


def tuned_fit(U, X, y, X_tune, y_tune, *, truncation, lambdas, log, method, **est_params):
    """TuningSetSearch of WeightedRobustMSVM(utility=U, truncation=...) selected by utility."""
    est = WeightedRobustMSVM(utility=U, truncation=truncation, **est_params)
    search = TuningSetSearch(est, lambdas=lambdas, scoring=make_utility_scorer(U),
                             refit=False)     # the paper's protocol: the training fit
    with log.catch(method) as count:
        count(search.fit(X, y, X_tune=X_tune, y_tune=y_tune))
    return search


def lambda_edge_note(selected, lambdas):
    """How often the selected lambda sat at either end of the grid, per method/setting key."""
    lo, hi = float(np.min(lambdas)), float(np.max(lambdas))
    parts = []
    for key, lams in selected.items():
        lams = np.asarray(lams, dtype=float)
        n_lo, n_hi = int(np.sum(lams == lo)), int(np.sum(lams == hi))
        if n_lo or n_hi:
            parts.append(f"{key}: smallest {n_lo}/{len(lams)}, largest {n_hi}/{len(lams)}")
    if not parts:
        return "The selected lambda was never at an end of the grid."
    return "Selected lambda at an end of the grid: " + "; ".join(parts) + "."


def log2_median(lams):
    return float(np.median(np.log2(np.asarray(lams, dtype=float))))


# ----------------------------------------------------------------------------------------
# Bayes rules of the simulated examples (reference values for the tables, not in the paper)

_MEANS = np.array([[1.0, 0.0], [-0.5, np.sqrt(3.0) / 2.0], [-0.5, -np.sqrt(3.0) / 2.0]])


def _flipped(p_clean, flip):
    """P(Y = j | x) after the label flips: (1 - flip) p~_j + flip/2 (1 - p~_j) for k = 3."""
    return (1.0 - flip) * p_clean + 0.5 * flip * (1.0 - p_clean)


def posterior(X, example, flip):
    """P(Y = j | X = x) of make_utility_example's Examples 1-3 (with the label flips)."""
    X = np.asarray(X, dtype=float)
    if example == 3:
        x1, x2 = X[:, 0], X[:, 1]
        logits = np.column_stack([-20 * x1 + 2 * x1 ** 2 - x2 ** 2 + 2,
                                  -4 * x1 ** 2 + 2 * x2 ** 2 - 4,
                                  20 * x1 + 2 * x1 ** 2 - x2 ** 2 + 2])
    else:
        logits = -((X[:, None, :] - _MEANS[None]) ** 2).sum(axis=2) / (2 * 0.7 ** 2)
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return _flipped(P, flip)


def bayes_predict(X, U, example, flip):
    """The utility Bayes rule argmax_j sum_l U_lj p_l(x) (Liu, Wu and He 2011, section 3.2)."""
    return np.argmax(posterior(X, example, flip) @ np.asarray(U, dtype=float), axis=1)


def best_constant_utility(y_test, U):
    """Average utility of the best rule that predicts one class everywhere, max_j mean U[y, j]."""
    U = np.asarray(U, dtype=float)
    return float(np.max(U[np.asarray(y_test)].mean(axis=0)))


def pop_max_iter(argv):
    """Take ``--max-iter N`` (solver epochs per convex solve; default: the library's 10000)
    out of the command line, so the rest goes to ``_common.parse_args``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    max_iter = None
    for i, arg in enumerate(argv):
        if arg == "--max-iter" and i + 1 < len(argv):
            max_iter = int(argv[i + 1])
            del argv[i:i + 2]
            break
        if arg.startswith("--max-iter="):
            max_iter = int(arg.split("=", 1)[1])
            del argv[i]
            break
    return argv, max_iter
