"""``python -m msvm demo``: what msvm is for, side by side with scikit-learn's SVC, in seconds.

Every figure the demo prints is measured in that run (CPU time of each fit, test accuracy, log
loss, average utility); the wording that compares two figures is chosen from the figures
themselves.  The first three parts use the bundled pendigits data; the utility part uses
Example 1 of Liu, Wu and He (2011), three overlapping Gaussian classes: a utility can only
change predictions where the classes overlap, and pendigits' classes hardly do (SVC scores
above 0.99 there), so on pendigits a utility-weighted fit has nothing to gain and the figures
would compare noise.  Sizes are kept small so that the whole demo takes a few seconds of CPU:
the probability fits (about 5 (1 + k m) weighted fits) use a 300-sample subsample and
``probability_grid=4``.
"""

import time
import warnings

import numpy as np

N_TRAIN = 2000          # the side-by-side fits
N_SMALL = 1000          # label noise
N_PROBABILITY = 300     # the probability fits
N_TEST = 2000
NOISE = 0.2             # share of flipped training labels
# the utility part: Example 1 of Liu, Wu and He (2011) with their utility matrix U_{3,a}
# (a sample of class 1 or 2 predicted as class 0 earns a, every correct prediction 1): the
# utility Bayes rule earns about 2 points of average utility more than the accuracy Bayes
# rule here, so a fit that follows the utility has something to win
N_UTILITY = 800         # the paper's size for Gaussian-kernel fits
N_UTILITY_TEST = 20000
UTILITY_KIND, UTILITY_A = 3, 0.6


def _data(seed):
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from .datasets import load_pendigits

    X, y = load_pendigits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, train_size=N_TRAIN, test_size=N_TEST, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def _subsample(X, y, n, seed):
    from sklearn.model_selection import train_test_split

    X_small, _, y_small, _ = train_test_split(X, y, train_size=n, stratify=y, random_state=seed)
    return X_small, y_small


def _fit(est, X, y):
    """The fitted estimator and its fit's CPU time (time.process_time)."""
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the demo reports figures, not warnings
        est.fit(X, y)
    return est, time.process_time() - start


def _flip(y, share, seed):
    """y with a random ``share`` of labels replaced by another class, and the mask."""
    rng = np.random.default_rng(seed)
    classes = np.unique(y)
    flipped = rng.random(len(y)) < share
    codes = np.searchsorted(classes, y)
    codes[flipped] = (codes[flipped] + rng.integers(1, len(classes), flipped.sum())) \
        % len(classes)
    return classes[codes], flipped


def _side_by_side(X, Xt, y, yt):
    from sklearn.svm import SVC

    from . import ReinforcedMSVM, WestonWatkinsMSVM

    rows = []
    for name, est in (("SVC()", SVC()), ("WestonWatkinsMSVM()", WestonWatkinsMSVM()),
                      ("ReinforcedMSVM()", ReinforcedMSVM())):
        est, seconds = _fit(est, X, y)
        C = getattr(est, "C_", est.C)
        rows.append({"model": name, "C": C, "seconds": seconds, "accuracy": est.score(Xt, yt)})
    return rows


def _probabilities(X, Xt, y, yt):
    from sklearn.metrics import log_loss
    from sklearn.svm import SVC

    from . import WestonWatkinsMSVM

    rows = []
    for name, est in (("SVC(probability=True)", SVC(probability=True, random_state=0)),
                      ("WestonWatkinsMSVM(probability=True)",
                       WestonWatkinsMSVM(probability=True, probability_grid=4))):
        est, seconds = _fit(est, X, y)
        P = est.predict_proba(Xt)
        agree = np.mean(est.classes_[np.argmax(P, axis=1)] == est.predict(Xt))
        rows.append({"model": name, "seconds": seconds, "accuracy": est.score(Xt, yt),
                     "log_loss": log_loss(yt, P, labels=est.classes_), "argmax_agrees": agree})
    return rows


def _label_noise(X, Xt, y, yt, seed):
    from sklearn.svm import SVC

    from . import RobustMSVM, WeightedRobustMSVM

    y_noisy, _ = _flip(y, NOISE, seed)
    rows = []
    for name, est in (("SVC()", SVC()), ("RobustMSVM()", RobustMSVM()),
                      ("WeightedRobustMSVM()", WeightedRobustMSVM())):
        est, seconds = _fit(est, X, y_noisy)
        rows.append({"model": name, "seconds": seconds, "accuracy": est.score(Xt, yt)})
    return rows


def _bayes_utility_rule(X, U):
    """The utility Bayes rule argmax_j sum_l U[l, j] P(Y = l | x) of Example 1 (equal priors,
    N(mu_l, 0.7^2 I) classes: the posterior is known), the best any classifier can do."""
    from .datasets._robust_examples import _UTILITY_MEANS

    logits = -((X[:, None, :] - _UTILITY_MEANS[None]) ** 2).sum(axis=2) / (2 * 0.7 ** 2)
    P = np.exp(logits - logits.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    return np.argmax(P @ U, axis=1)


def _utility(seed):
    from sklearn.svm import SVC

    from . import WeightedRobustMSVM
    from .datasets import make_utility_example, utility_matrix

    X, y = make_utility_example(N_UTILITY, example=1, random_state=seed)
    Xt, yt = make_utility_example(N_UTILITY_TEST, example=1, random_state=seed + 1)
    U = utility_matrix(UTILITY_KIND, UTILITY_A)
    rows = []
    for name, est in (("SVC()", SVC()), ("WeightedRobustMSVM()", WeightedRobustMSVM()),
                      ("WeightedRobustMSVM(utility=U)", WeightedRobustMSVM(utility=U))):
        est, seconds = _fit(est, X, y)
        pred = est.predict(Xt)
        rows.append(_utility_row(name, seconds, pred, yt, U))
    rows.append(_utility_row("utility Bayes rule (true P(y | x))", 0.0,
                             _bayes_utility_rule(Xt, U), yt, U))
    return rows


def _utility_row(name, seconds, pred, yt, U):
    from .metrics import average_utility

    return {"model": name, "seconds": seconds, "accuracy": float(np.mean(pred == yt)),
            "utility": average_utility(yt, pred, utility=U, labels=[0, 1, 2]),
            "class_0": float(np.mean(pred == 0))}


def _table(rows, columns):
    """Plain-text table of ``rows`` (dicts) with ``columns`` (title, key, format)."""
    cells = [[title for title, _, _ in columns]]
    cells += [[format(row[key], spec) for _, key, spec in columns] for row in rows]
    widths = [max(len(r[c]) for r in cells) for c in range(len(columns))]
    lines = []
    for i, r in enumerate(cells):
        lines.append("  " + "  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                                      for c, (cell, w) in enumerate(zip(r, widths))))
        if i == 0:
            lines.append("  " + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _compare(a, b, key):
    """'above', 'below' or 'equal to': the value a[key] against b[key]."""
    if np.isclose(a[key], b[key], rtol=0, atol=1e-12):
        return "equal to"
    return "above" if a[key] > b[key] else "below"


def _report_side_by_side(rows):
    svc, ww, rein = rows
    print(_table(rows, [("model", "model", "s"), ("C", "C", "g"), ("fit CPU s", "seconds", ".3f"),
                        ("test accuracy", "accuracy", ".4f")]))
    print(f"  WestonWatkinsMSVM fits in {ww['seconds'] / max(svc['seconds'], 1e-9):.1f}x SVC's "
          f"CPU time, accuracy {100 * (ww['accuracy'] - svc['accuracy']):+.1f} points; "
          f"ReinforcedMSVM at its default C='auto' (C = k = {rein['C']:g}) "
          f"{rein['seconds'] / max(svc['seconds'], 1e-9):.0f}x, "
          f"{100 * (rein['accuracy'] - svc['accuracy']):+.1f} points.")


def _report_probabilities(rows):
    svc, ww = rows
    print(_table(rows, [("model", "model", "s"), ("fit CPU s", "seconds", ".2f"),
                        ("test accuracy", "accuracy", ".4f"), ("log loss", "log_loss", ".3f"),
                        ("argmax = predict", "argmax_agrees", ".2%")]))
    print(f"  msvm's argmax of predict_proba is predict on {ww['argmax_agrees']:.0%} of the test "
          f"samples (by construction), SVC's Platt scaling on {svc['argmax_agrees']:.1%}; "
          f"msvm's log loss is {_compare(ww, svc, 'log_loss')} SVC's "
          f"(lower is better).")


def _report_noise(rows):
    svc = rows[0]
    print(_table(rows, [("model", "model", "s"), ("fit CPU s", "seconds", ".2f"),
                        ("clean test accuracy", "accuracy", ".4f")]))
    print("  " + "; ".join(f"{row['model']} {100 * (row['accuracy'] - svc['accuracy']):+.1f} "
                           f"points against SVC" for row in rows[1:]) + ".")


def _report_utility(rows):
    svc, plain, weighted, bayes = rows
    print(_table(rows, [("model", "model", "s"), ("fit CPU s", "seconds", ".2f"),
                        ("test accuracy", "accuracy", ".4f"),
                        ("predicted class 0", "class_0", ".1%"),
                        ("average utility", "utility", ".4f")]))
    print(f"  The utility-weighted fit's average utility is "
          f"{_compare(weighted, svc, 'utility')} SVC's "
          f"({weighted['utility'] - svc['utility']:+.4f}) and "
          f"{_compare(weighted, plain, 'utility')} the same model's without the utility "
          f"({weighted['utility'] - plain['utility']:+.4f}); it predicts class 0 for "
          f"{weighted['class_0']:.1%} of the test samples (SVC {svc['class_0']:.1%}, the "
          f"utility Bayes rule {bayes['class_0']:.1%}), at an accuracy "
          f"{_compare(weighted, svc, 'accuracy')} SVC's "
          f"({weighted['accuracy'] - svc['accuracy']:+.4f}): the utility, not the accuracy, "
          f"is the target. The Bayes rule's {bayes['utility']:.4f} is the best any classifier "
          f"can do here.")


def demo(seed=0):
    """Fit msvm's models and scikit-learn's SVC on pendigits and print what each does.

    Four parts: on stratified subsamples of the bundled pendigits data (standardized, the
    same 2,000 test samples), the models side by side at their defaults, class probabilities
    and fits under label noise; then a utility-weighted fit on the three overlapping classes
    of Liu, Wu and He (2011, Example 1), against SVC and the same model without the utility,
    all judged by the average utility, with the utility Bayes rule as the ceiling.  Every
    figure is measured in this run (fit times are CPU times).

    Parameters
    ----------
    seed : int, default=0
        Seed of the subsamples and of the flipped labels.

    Returns
    -------
    results : dict
        The measured rows of each part: 'side_by_side', 'probabilities', 'label_noise',
        'utility' (lists of dicts).
    """
    X, Xt, y, yt = _data(seed)
    X_small, y_small = _subsample(X, y, N_SMALL, seed)
    X_prob, y_prob = _subsample(X, y, N_PROBABILITY, seed)
    print(f"pendigits (bundled): {N_TRAIN} training samples, {N_TEST} test samples, 16 "
          f"features, 10 classes; standardized; fit times are CPU seconds of this run.\n")
    results = {}
    print(f"1. Side by side at the defaults (RBF kernel, gamma='scale'; {N_TRAIN} samples)")
    results["side_by_side"] = rows = _side_by_side(X, Xt, y, yt)
    _report_side_by_side(rows)
    print(f"\n2. Class probabilities ({N_PROBABILITY} training samples: the estimate takes "
          f"about 5 (1 + k m) weighted fits; probability_grid m = 4)")
    results["probabilities"] = rows = _probabilities(X_prob, Xt, y_prob, yt)
    _report_probabilities(rows)
    print(f"\n3. Label noise: {NOISE:.0%} of {N_SMALL} training labels flipped to another "
          f"class at random; tested on clean labels")
    results["label_noise"] = rows = _label_noise(X_small, Xt, y_small, yt, seed)
    _report_noise(rows)
    print(f"\n4. Utility: three overlapping Gaussian classes (Example 1 of Liu, Wu and He "
          f"2011; pendigits' classes hardly overlap, so no utility could change its "
          f"predictions); U = identity plus {UTILITY_A:g} for a class-1 or class-2 sample "
          f"predicted as class 0 (their U_3,{UTILITY_A:g}); {N_UTILITY} training and "
          f"{N_UTILITY_TEST} test samples, every model at its defaults, judged by this U")
    results["utility"] = rows = _utility(seed)
    _report_utility(rows)
    return results
