"""Round 11's check that small data does not get worse (issue 25 item 4, "no loss elsewhere").

    python -m benchmarks.run_probability_small_check

(from the repository root)

``probability=True`` on two small sets, 'main' (the code of b9f36a5, through the switches of
``benchmarks.run_probability_scale.mode_switches``) and 'after' (the library as it runs now),
alternating in one process, best CPU time (``time.process_time``) of 3 runs each:

- breast cancer (scikit-learn's Wisconsin diagnostic data, standardized, 70/30 stratified
  split, seed 0), ReinforcedMSVM(C=1) on the RBF kernel (the exact-kernel path: round 11
  changes nothing there; the probabilities must be identical) and on the linear kernel (398
  training samples: the chains' refits now on explicit features from the smoothed primal,
  where the estimator's own fit keeps the kernel rows x_i^T X);
- wine (standardized, the same split), ReinforcedMSVM(kernel='linear', C=10);
- make_classification(1,300, 5, n_informative=5, n_redundant=0, n_classes=5,
  n_clusters_per_class=1, random_state=0), the first 1,000 samples for training and the
  rest for the log loss, ReinforcedMSVM(kernel='linear', C=10) (the d = 5 case of
  benchmarks/results/probability_scale.md at 1,000 samples: kernel rows for the
  estimator's own fit, explicit features for the chains on the full data; the folds' 667
  samples too).

Reported: CPU time, the held-out log loss, argmax = predict, whether the probabilities are
identical to 'main'.  Written to benchmarks/results/probability_small_check.md and .json;
timings are reported, never asserted.
"""

import time
import warnings

import numpy as np

from benchmarks.harness import RESULTS, machine_info, markdown_table, write_json
from benchmarks.run_probability_scale import mode_switches

STEM = "probability_small_check"
REPEATS = 3


def _sets():
    from sklearn.datasets import load_breast_cancer, load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    out = {}
    for name, loader in (("breast cancer", load_breast_cancer), ("wine", load_wine)):
        X, y = loader(return_X_y=True)
        X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                            random_state=0)
        scaler = StandardScaler().fit(X_train)
        out[name] = scaler.transform(X_train), y_train, scaler.transform(X_test), y_test
    from sklearn.datasets import make_classification

    X, y = make_classification(1300, 5, n_informative=5, n_redundant=0, n_classes=5,
                               n_clusters_per_class=1, random_state=0)
    out["d = 5, 1,000 samples"] = X[:1000], y[:1000], X[1000:], y[1000:]
    return out


CASES = (("breast cancer", "rbf", 1.0), ("breast cancer", "linear", 1.0),
         ("wine", "linear", 10.0), ("d = 5, 1,000 samples", "linear", 10.0))


def _fit(kernel, C, X, y):
    from msvm import ReinforcedMSVM

    cpu = time.process_time()
    est = ReinforcedMSVM(kernel=kernel, C=C, probability=True).fit(X, y)
    return est, time.process_time() - cpu


def main():
    from sklearn.metrics import log_loss

    warnings.simplefilter("ignore")
    sets = _sets()
    rows, results = [], []
    for name, kernel, C in CASES:
        X, y, X_test, y_test = sets[name]
        cpu = {"main": [], "after": []}
        fits = {}
        for _ in range(REPEATS):
            for mode in ("main", "after"):
                with mode_switches(mode):
                    fits[mode], seconds = _fit(kernel, C, X, y)
                cpu[mode].append(seconds)
        proba = {mode: fit.predict_proba(X_test) for mode, fit in fits.items()}
        for mode, fit in fits.items():
            agree = float(np.mean(fit.classes_[proba[mode].argmax(1)] == fit.predict(X_test)))
            res = {"set": name, "kernel": kernel, "C": C, "mode": mode,
                   "cpu": min(cpu[mode]), "fits": int(fit.n_probability_fits_),
                   "log loss": float(log_loss(y_test, proba[mode], labels=fit.classes_)),
                   "argmax = predict": agree,
                   "identical to main": bool(np.array_equal(proba[mode], proba["main"]))}
            results.append(res)
            rows.append([name, kernel, f"{C:g}", mode, f"{res['cpu']:.3f}", res["fits"],
                         f"{res['log loss']:.4f}", f"{agree:.3f}", res["identical to main"]])
            print(rows[-1], flush=True)
    machine = machine_info()
    header = ["set", "kernel", "C", "mode", "CPU s (best of 3)", "fits", "log loss (test)",
              "argmax = predict", "identical to main"]
    text = ["# Round 11: small data before and after (issue 25 item 4)", "",
            __doc__.split("(from the repository root)")[1].strip(), "",
            f"Run: git {machine.get('git')}, {machine.get('date', '')[:16]}; "
            f"{machine.get('cpu')}, shared with other jobs (CPU times).", "",
            markdown_table(header, rows), ""]
    (RESULTS / f"{STEM}.md").write_text("\n".join(text))
    write_json(RESULTS / f"{STEM}.json", {"machine": machine, "results": results})


if __name__ == "__main__":
    main()
