"""Shared pieces of the Liu and Yuan (2011) scripts (reinforced MSVM, section 4.1).

Used by ``liu_yuan_2011_table1.py`` (Example 4.1.1), ``liu_yuan_2011_table2.py`` (Example 4.1.2) and
``liu_yuan_2011_figure3.py``.  One repetition of a table draws, for each training size n, a
training set and an independent tuning set of size n, and one test set per repetition
(shared by both sizes, every kernel and every method); every method is tuned along the
lambda grid on the tuning set and its selected fit is scored on the test set.

Methods (the 13 rows of Tables 1 and 2, in the paper's order):

- ``ReinforcedMSVM`` with reinforcement gamma = 0, 0.1, ..., 1, tuned by
  :class:`msvm.model_selection.TuningSetSearch` (C = 1 / (n lambda), the library's scaling of
  the paper's ``lambda J(f) + (1/n) sum loss`` with ``J = (1/2) sum_j ||h_j||^2``);
- ``WestonWatkinsMSVM`` (WW-SVM), tuned the same way;
- one-versus-rest (OVR): scikit-learn ``OneVsRestClassifier(SVC(...))``, three binary SVMs
  sharing one C, tuned by the small loop :func:`ovr_path`.  The binary SVM of the paper
  (section 2) is ``lambda ||w||^2 + (1/n) sum_i [1 - y_i f(x_i)]_+``; dividing by
  ``2 lambda`` gives SVC's ``(1/2) ||w||^2 + C sum_i [.]_+`` with ``C = 1 / (2 n lambda)``.
  That is a factor 2 (one grid step) away from the MSVMs' mapping, which only matters when
  the selection hits an end of the grid.  The paper does not say how OVR was tuned; we use
  one lambda for the three binary problems, chosen by the multiclass error on the tuning set
  (ties: largest lambda, as ``TuningSetSearch``).

Test errors on 10^5 points are computed from one Gram matrix between the test set and the
training set per (repetition, size, kernel), shared by all methods (every fit's decision
values are ``K[:, support_] @ dual_coef_.T + intercept_``); each fit's decision values on
the first test points are checked against its own ``decision_function``.
"""

import math
import time
import warnings

import numpy as np
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from benchmarks.harness import watch_fits
from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, lambda_grid, median_gamma

REINFORCEMENTS = [round(0.1 * i, 1) for i in range(11)]
METHODS = [f"gamma={g:g}" for g in REINFORCEMENTS] + ["WW-SVM", "OVR"]
SIZES = (50, 100)
TEST_SIZE = 100_000
PAPER_REPS = 100

# kernel name -> estimator parameters (the papers' (1 + <u, v>)^2 is SVC's poly with
# gamma = 1, coef0 = 1, degree = 2; 'median' is 1 / (2 sigma^2), sigma the median
# between-class pairwise distance of the training inputs)
KERNELS = {
    "linear": dict(kernel="linear"),
    "poly2": dict(kernel="poly", degree=2, gamma=1.0, coef0=1.0),
    "gauss": dict(kernel="rbf", gamma="median"),
}
KERNEL_LABEL = {"linear": "Lin", "poly2": "poly2", "gauss": "Gauss"}

SD = 1.5
MEANS = {
    "4.1.1": [[(0.0, 2.0)], [(-math.sqrt(3.0), -1.0)], [(math.sqrt(3.0), -1.0)]],
    "4.1.2": [[(2.0, 0.0)], [(0.0, 2.0), (0.0, -2.0)], [(-2.0, 0.0)]],
}


# ---------------------------------------------------------------- the true model
def log_class_densities(X, example):
    """log p(x | y = j) (up to a common constant) for j = 0, 1, 2, shape (len(X), 3).

    With equal priors the Bayes rule is the argmax of these.
    """
    X = np.asarray(X, dtype=np.float64)
    out = np.empty((len(X), 3))
    for j, comps in enumerate(MEANS[example]):
        logs = np.stack([-((X - np.asarray(mu)) ** 2).sum(axis=1) / (2 * SD ** 2)
                         for mu in comps])
        m = logs.max(axis=0)
        out[:, j] = m + np.log(np.exp(logs - m).mean(axis=0))
    return out


def bayes_predict(X, example):
    return np.argmax(log_class_densities(X, example), axis=1)


# ---------------------------------------------------------------- seeds and data
def seed_for(*keys):
    """A reproducible 32-bit seed from integer keys (base seed, repetition, role, ...)."""
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1)[0])


ROLE_TRAIN, ROLE_TUNE, ROLE_TEST = 1, 2, 3


def draw(example, n, *keys):
    return make_reinforced_example(n, example=example, random_state=seed_for(*keys))


# ---------------------------------------------------------------- methods
def msvm_estimator(method, kernel):
    params = dict(KERNELS[kernel])
    if method == "WW-SVM":
        return WestonWatkinsMSVM(**params)
    return ReinforcedMSVM(reinforcement=float(method.split("=")[1]), **params)


def ovr_path(X, y, X_tune, y_tune, kernel, gamma_value, lambdas):
    """OVR SVC along the lambda grid (C = 1/(2 n lambda)); returns (best fit, lambda, n_warn),
    n_warn the number of ConvergenceWarnings (SVC has no stop-reason attributes).

    Largest lambda first; a later lambda replaces the best only with a strictly better tuning
    accuracy (ties: largest lambda).
    """
    n = len(X)
    params = dict(KERNELS[kernel])
    if params["kernel"] == "rbf":
        params["gamma"] = gamma_value
    best = None
    n_warn = 0
    for lam in np.sort(np.asarray(lambdas))[::-1]:
        with watch_fits() as watch:
            clf = watch.add(OneVsRestClassifier(SVC(C=1.0 / (2.0 * n * lam), tol=1e-3,
                                                    max_iter=10**7, **params)).fit(X, y))
        n_warn += sum(watch.unconverged().values())
        for w in watch.other_warnings():
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        score = float(np.mean(clf.predict(X_tune) == y_tune))
        if best is None or score > best[0]:
            best = (score, lam, clf)
    return best[2], best[1], n_warn


def tuning_accuracy(est, X, y):
    """Accuracy on the tuning set: the default scorer without scikit-learn's target checks
    (which cost more than a fit at these sizes)."""
    return float(np.mean(est.predict(X) == y))


def tuned_msvm(method, kernel, X, y, X_tune, y_tune, lambdas):
    """TuningSetSearch of one MSVM; returns (best fit, lambda, n fits that did not converge)."""
    with watch_fits() as watch:
        search = TuningSetSearch(msvm_estimator(method, kernel), lambdas=lambdas,
                                 scoring=tuning_accuracy, refit=False)   # the paper's fit
        watch.add(search.fit(X, y, X_tune=X_tune, y_tune=y_tune))
    for w in watch.other_warnings():
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    n_warn = sum(watch.unconverged().values())
    return search.best_estimator_, float(search.best_lambda_), n_warn


def fit_method(method, kernel, X, y, X_tune, y_tune, lambdas, gamma_value):
    if method == "OVR":
        return ovr_path(X, y, X_tune, y_tune, kernel, gamma_value, lambdas)
    return tuned_msvm(method, kernel, X, y, X_tune, y_tune, lambdas)


# ---------------------------------------------------------------- fast test predictions
def test_gram(kernel, X_test, X_train, gamma_value):
    """K(test, train) for a kernel, or None for the linear kernel (coef_ is used)."""
    if kernel == "linear":
        return None
    if kernel == "poly2":
        return polynomial_kernel(X_test, X_train, degree=2, gamma=1.0, coef0=1.0)
    return rbf_kernel(X_test, X_train, gamma=gamma_value)


def decision_values(fit, kernel, X_test, K_test):
    """Decision values of a fitted MSVM or OVR on the test set (shape (m, 3)).

    Kernel fits: ``K_test @ A + b`` with A the (n_train, 3) matrix of dual coefficients
    (zero off the support), one BLAS product instead of copying the support columns of K.
    """
    if isinstance(fit, OneVsRestClassifier):
        if kernel == "linear":
            W = np.column_stack([est.coef_[0] for est in fit.estimators_])
            return X_test @ W + np.array([est.intercept_[0] for est in fit.estimators_])
        A = np.zeros((K_test.shape[1], len(fit.estimators_)))
        for j, est in enumerate(fit.estimators_):
            A[est.support_, j] = est.dual_coef_[0]
        return K_test @ A + np.array([est.intercept_[0] for est in fit.estimators_])
    if kernel == "linear":
        return X_test @ fit.coef_.T + fit.intercept_
    A = np.zeros((K_test.shape[1], fit.dual_coef_.shape[0]))
    A[fit.support_] = fit.dual_coef_.T
    return K_test @ A + fit.intercept_


def test_error(fit, kernel, X_test, y_test, K_test, check=200):
    D = decision_values(fit, kernel, X_test, K_test)
    ref = fit.decision_function(X_test[:check])
    scale = max(1.0, float(np.abs(ref).max()))
    if not np.allclose(D[:check], ref, rtol=1e-7, atol=1e-8 * scale):
        raise RuntimeError(f"fast decision values disagree with decision_function for "
                           f"{type(fit).__name__}")
    pred = fit.classes_[np.argmax(D, axis=1)]
    return float(np.mean(pred != y_test))


# ---------------------------------------------------------------- one table
def run_table(example, kernels, reps, base_seed, lambdas, test_size, log=None):
    """Run every (size, kernel) column for ``reps`` repetitions.

    Returns ``{column: {method: {"errors": [...], "lambdas": [...], "warnings": int}}}``
    with columns named ``f"{kernel} n={n}"``, plus the Bayes rule's test errors and timings.
    """
    ex_id = int(example.replace(".", ""))
    columns = [(kernel, n) for kernel in kernels for n in SIZES]
    res = {f"{k} n={n}": {m: {"errors": [], "lambdas": [], "warnings": 0} for m in METHODS}
           for k, n in columns}
    bayes_errors, rep_times = [], []
    with threadpool_limits(1):      # one BLAS thread: the machine's cores are shared
        _run_reps(example, ex_id, kernels, reps, base_seed, lambdas, test_size, log, res,
                  bayes_errors, rep_times)
    return res, bayes_errors, rep_times


def _run_reps(example, ex_id, kernels, reps, base_seed, lambdas, test_size, log, res,
              bayes_errors, rep_times):
    for r in range(reps):
        t0 = time.perf_counter()
        X_test, y_test = draw(example, test_size, base_seed, ex_id, r, ROLE_TEST)
        bayes_errors.append(float(np.mean(bayes_predict(X_test, example) != y_test)))
        for n in SIZES:
            X, y = draw(example, n, base_seed, ex_id, r, ROLE_TRAIN, n)
            X_tune, y_tune = draw(example, n, base_seed, ex_id, r, ROLE_TUNE, n)
            for kernel in kernels:
                gamma_value = median_gamma(X, y) if kernel == "gauss" else None
                K_test = test_gram(kernel, X_test, X, gamma_value)
                cell = res[f"{kernel} n={n}"]
                for method in METHODS:
                    fit, lam, n_warn = fit_method(method, kernel, X, y, X_tune, y_tune,
                                                  lambdas, gamma_value)
                    cell[method]["errors"].append(test_error(fit, kernel, X_test, y_test,
                                                             K_test))
                    cell[method]["lambdas"].append(lam)
                    cell[method]["warnings"] += n_warn
                del K_test
        rep_times.append(time.perf_counter() - t0)
        if log is not None:
            log(f"rep {r + 1}/{reps}: {rep_times[-1]:.1f} s")


def lambda_grid_for(args):
    """The paper's grid 2^-16 .. 2^15, or a coarse 5-point grid in --quick mode."""
    return lambda_grid(-6, 6)[::3] if args.quick else lambda_grid(-16, 15)


def endpoint_counts(lams, lambdas):
    lams = np.asarray(lams)
    return int(np.sum(np.isclose(lams, np.min(lambdas)))), \
        int(np.sum(np.isclose(lams, np.max(lambdas))))


# ---------------------------------------------------------------- the table scripts' main
def column_label(column):
    kernel, n = column.split(" ")
    return f"{KERNEL_LABEL[kernel]} {n.replace('=', ' = ')}"


def run_table_script(argv, *, name, description, example, kernels, paper, paper_kind,
                     bayes_paper, title, protocol, notes):
    """Parse the command line, run the table, print and write the comparison.

    ``paper`` maps each column ``f"{kernel} n={n}"`` to 13 (mean, spread) pairs in the order
    of ``METHODS``; ``paper_kind`` is 'se' or 'sd'.
    """
    import sys

    from benchmarks.reproduce._common import (compare, comparison_row, fmt, markdown_table,
                                              parse_args, provenance, summarize, write_outputs)

    started = time.perf_counter()
    args = parse_args(description, argv, default_reps=PAPER_REPS)
    reps = args.reps if args.reps is not None else (2 if args.quick else PAPER_REPS)
    test_size = 2000 if args.quick else TEST_SIZE
    lambdas = lambda_grid_for(args)

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    res, bayes_errors, rep_times = run_table(example, kernels, reps, args.seed, lambdas,
                                             test_size, log=log)

    rows, comparisons = [], {}
    for column, cells in res.items():
        comparisons[column] = {}
        for i, method in enumerate(METHODS):
            p_mean, p_spread = paper[column][i]
            cmp = compare(cells[method]["errors"], p_mean, p_spread, PAPER_REPS, paper_kind)
            low, high = endpoint_counts(cells[method]["lambdas"], lambdas)
            cmp.update(lambda_at_smallest=low, lambda_at_largest=high,
                       convergence_warnings=cells[method]["warnings"])
            comparisons[column][method] = cmp
            rows.append(comparison_row(f"{column_label(column)}, {method}", cmp))
    bayes = compare(bayes_errors, bayes_paper, None, PAPER_REPS, paper_kind)
    rows.append(comparison_row("Bayes rule (test error of the true posterior)", bayes))
    spread_word = "s.e." if paper_kind == "se" else "sd"
    header = ["setting", "ours mean (sd)", f"paper mean ({spread_word})", "z", "flag"]

    # the paper's layout: methods x columns, ours (s.e.) / paper (s.e.)
    wide_header = ["method"] + [column_label(c) + ": ours / paper" for c in res]
    wide_rows = []
    for method in METHODS:
        row = [method]
        for column in res:
            c = comparisons[column][method]
            row.append(f"{fmt(c['mean'], c['se'])} / {fmt(c['paper_mean'], c['paper_spread'])}")
        wide_rows.append(row)

    n_flag = sum(bool(c["differs"]) for col in comparisons.values() for c in col.values())
    n_cells = sum(len(col) for col in comparisons.values())
    lines = [f"# {title}", ""]
    if reps < PAPER_REPS:
        lines += [f"**Only {reps} of the paper's {PAPER_REPS} repetitions were run"
                  f"{' (quick mode)' if args.quick else ' (time budget)'}.**", ""]
    lines += [protocol.strip() + f" Here: {reps} repetitions, test sets of {test_size} "
              f"points, lambda grid of {len(lambdas)} values "
              f"({lambdas.min():g} .. {lambdas.max():g}). Our sd is across repetitions "
              f"(our s.e. = sd / sqrt({reps})); the paper's parentheses are "
              f"{'standard errors' if paper_kind == 'se' else 'standard deviations'}. "
              f"A cell is flagged when |ours - paper| > 2 s.e. of the difference.", "",
              markdown_table(header, rows), "",
              f"{n_flag} of {n_cells} cells flagged.", "",
              "Side by side in the paper's layout, both with standard errors in parentheses:",
              "", markdown_table(wide_header, wide_rows), "",
              provenance(args, started), "", "## Notes", ""]
    warn_total = {m: sum(res[c][m]["warnings"] for c in res) for m in METHODS}
    if any(warn_total.values()):
        lines.append("- Fits that did not converge (summed over columns and repetitions, each "
                     "fit of the lambda path counted; the OVR SVC by its ConvergenceWarnings): "
                     + ", ".join(
                         f"{m}: {w}" for m, w in warn_total.items() if w) + ".")
    else:
        lines.append("- Every fit of every lambda path converged (all methods).")
    ends = [f"{column_label(c)} {m}: {comparisons[c][m]['lambda_at_smallest']}/"
            f"{comparisons[c][m]['lambda_at_largest']}"
            for c in res for m in METHODS
            if comparisons[c][m]["lambda_at_smallest"] or comparisons[c][m]["lambda_at_largest"]]
    lines.append("- Selected lambda at the smallest / largest grid value (repetitions): "
                 + ("; ".join(ends) if ends else "never") + ".")
    b_mean, b_sd, _, _ = summarize(bayes_errors)
    lines.append(f"- The Bayes rule's error on our test sets: {b_mean:.4f} (sd {b_sd:.4f}); "
                 f"the paper's estimate {bayes_paper}.")
    lines.append(f"- Time per repetition: mean {np.mean(rep_times):.1f} s, "
                 f"max {np.max(rep_times):.1f} s.")
    lines += [f"- {note}" for note in notes]
    markdown = "\n".join(lines)
    print(markdown)
    payload = {"paper": "Liu and Yuan (2011), JCGS 20(4)", "example": example,
               "reps": reps, "test_size": test_size, "lambdas": lambdas,
               "seed": args.seed, "methods": METHODS, "comparisons": comparisons,
               "bayes": bayes, "errors": {c: {m: res[c][m]["errors"] for m in METHODS}
                                          for c in res},
               "selected_lambdas": {c: {m: res[c][m]["lambdas"] for m in METHODS}
                                    for c in res},
               "rep_times": rep_times, "provenance": provenance(args, started)}
    write_outputs(args, name, markdown, payload)
    return payload
