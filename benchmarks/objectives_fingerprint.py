"""The objectives (and a hash of the fitted functions) of a fixed set of fits, for refactors.

A behaviour-preserving change of the Python layer must leave every iterate and objective as
it was: run this before and after the change and compare the two files
(``python -m benchmarks.objectives_fingerprint --out before.json``, then ``--compare
before.json``).  The fits cover every estimator on the exact kernel paths (linear rows, RBF,
precomputed), the linear path with its smoothed-primal start, an approximate kernel, sparse
input, the DC and reweighting loops, warm starts, class probabilities, the targeted grid and
a tuning path.  ``objective_`` is compared bitwise; the hash covers ``decision_function`` on
held-out points, rounded to 12 significant digits.
"""

import argparse
import hashlib
import json
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_blobs, make_classification

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  TargetedLocalMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.datasets import utility_matrix
from msvm.model_selection import TuningSetSearch, lambda_grid


def _data(n, k=3, d=4, seed=0):
    X, y = make_blobs(n_samples=n + 60, centers=k, n_features=d, cluster_std=2.0,
                      random_state=seed)
    return X[:n], y[:n], X[n:]


def _cases():
    X, y, Xt = _data(120)
    Xl, yl = make_classification(n_samples=3000, n_features=10, n_informative=6,
                                 n_classes=4, random_state=1)
    Xlt = Xl[:50]
    estimators = {
        "reinforced": ReinforcedMSVM, "weston_watkins": WestonWatkinsMSVM,
        "angle": AngleBasedMSVM, "robust": RobustMSVM,
        "weighted_robust": WeightedRobustMSVM, "adaptive": AdaptiveWeightedSVM,
    }
    for name, cls in estimators.items():
        for kernel in ("linear", "rbf"):
            yield f"{name}-{kernel}", cls(C=1.0, kernel=kernel, random_state=0), X, y, Xt
        yield f"{name}-rbf-C100", cls(C=100.0, kernel="rbf", random_state=0), X, y, Xt
        yield f"{name}-linear-n3000", cls(C=1.0, kernel="linear", random_state=0), Xl, yl, Xlt
        yield (f"{name}-nystroem", cls(C=1.0, kernel="rbf", kernel_approximation="nystroem",
                                       n_components=50, random_state=0), X, y, Xt)
    K = X @ X.T
    yield ("reinforced-precomputed", ReinforcedMSVM(kernel="precomputed", random_state=0), K, y,
           Xt @ X.T)
    Xs = sp.random(200, 30, density=0.1, format="csr", random_state=0)
    ys = np.arange(200) % 3
    yield "weston_watkins-sparse", WestonWatkinsMSVM(kernel="rbf", random_state=0), Xs, ys, Xs[:20]
    yield ("weighted_robust-utility", WeightedRobustMSVM(utility=utility_matrix(1, 0.5),
                                                         kernel="linear", random_state=0),
           X, y, Xt)
    yield ("adaptive-iterative", AdaptiveWeightedSVM(scheme="iterative", kernel="rbf",
                                                     random_state=0), X, y, Xt)
    yield ("reinforced-probability", ReinforcedMSVM(kernel="rbf", probability=True,
                                                    probability_grid=3, random_state=0),
           X, y, Xt)
    Xg = np.column_stack([np.linspace(0, 1, len(X)), X])
    yield ("targeted", TargetedLocalMSVM(n_grid=5, random_state=0), Xg, y,
           np.column_stack([np.linspace(0, 1, len(Xt)), Xt]))


def _fingerprint(est, X, Xt):
    F = np.asarray(est.decision_function(Xt), dtype=np.float64)
    rounded = np.array([float(f"{v:.12g}") for v in F.ravel()])
    digest = hashlib.sha1(rounded.tobytes()).hexdigest()[:16]
    return {"objective": repr(float(getattr(est, "objective_", np.nan))),
            "n_iter": repr(getattr(est, "n_iter_", None)), "decision": digest}


def run():
    out = {}
    warnings.simplefilter("ignore")
    for name, est, X, y, Xt in _cases():
        est.fit(X, y)
        out[name] = _fingerprint(est, X, Xt)
        if name == "reinforced-rbf":        # a warm-started refit at another C
            est.set_params(warm_start=True, C=10.0).fit(X, y)
            out[name + "-warm"] = _fingerprint(est, X, Xt)
        if name == "reinforced-probability":
            P = est.predict_proba(Xt)
            out[name]["proba"] = hashlib.sha1(np.round(P, 12).tobytes()).hexdigest()[:16]
    X, y, Xt = _data(120)
    Xv, yv, _ = _data(120, seed=5)
    search = TuningSetSearch(ReinforcedMSVM(kernel="rbf", random_state=0),
                             lambdas=lambda_grid(-4, 4))
    search.fit(X, y, X_tune=Xv, y_tune=yv)
    out["tuning"] = {"best_lambda": repr(float(search.best_lambda_)),
                     **_fingerprint(search.best_estimator_, X, Xt)}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fingerprints to this JSON file")
    parser.add_argument("--compare", help="compare against this JSON file")
    args = parser.parse_args()
    result = run()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f)
        diff = [name for name in sorted(set(before) | set(result))
                if before.get(name) != result.get(name)]
        for name in diff:
            print(f"DIFFERS {name}: before {before.get(name)} after {result.get(name)}")
        print(f"{len(result) - len(diff)} of {len(result)} fits identical")
        raise SystemExit(1 if diff else 0)
    if not args.out:
        print(json.dumps(result, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
