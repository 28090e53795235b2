"""Accuracy and fit time of every msvm model on four real data sets: the table of the
documentation's "which model when" guide (docs/guide.md includes the Markdown it writes).

    python -m benchmarks.run_guide_table            # the recorded run (a few minutes)
    python -m benchmarks.run_guide_table --quick    # smoke run: small subsamples (seconds)

(from the repository root)

Data sets (all offline): pendigits (bundled, ``msvm.datasets.load_pendigits``) and
scikit-learn's digits, wine and breast cancer (WDBC). Protocol, the same for every model and
data set: features standardized (scaler fitted on the training part), stratified 70/30
train/test splits (``--splits`` of them, random_state 0, 1, ...; pendigits one split, it is
large), RBF kernel with gamma = 'scale' (1 / (n_features * X_train.var())), C = 1, each
model's defaults otherwise (tol=1e-3). No tuning: the table compares the models at one common
setting, not each at its best. scikit-learn's ``SVC`` (one-vs-one, same C and gamma) is the
reference row.

Writes benchmarks/results/guide.md (included by the documentation) and guide.json; --quick
writes quick_guide.md and quick_guide.json instead. Timings are wall-clock fit times
(time.perf_counter), one fit each; they are measured, never asserted, and are not part of the
documentation build.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time

import numpy as np
import sklearn
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import msvm
from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.datasets import load_pendigits

from benchmarks.harness import RESULTS, git_commit, watch_fits, write_json

C = 1.0

MODELS = {
    "ReinforcedMSVM (reinforcement=0.5)": lambda: ReinforcedMSVM(C=C, kernel="rbf"),
    "ReinforcedMSVM (reinforcement=0, LLW)": lambda: ReinforcedMSVM(C=C, reinforcement=0.0,
                                                                     kernel="rbf"),
    "WestonWatkinsMSVM": lambda: WestonWatkinsMSVM(C=C, kernel="rbf"),
    "RobustMSVM (truncation=1)": lambda: RobustMSVM(C=C, kernel="rbf"),
    "WeightedRobustMSVM (identity utility)": lambda: WeightedRobustMSVM(C=C, kernel="rbf"),
    "AdaptiveWeightedSVM (one-step)": lambda: AdaptiveWeightedSVM(C=C, kernel="rbf"),
    "AngleBasedMSVM": lambda: AngleBasedMSVM(C=C, kernel="rbf"),
    "sklearn SVC (one-vs-one, reference)": lambda: SVC(C=C, kernel="rbf"),
}

DATASETS = {
    "pendigits": lambda: load_pendigits(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "breast cancer": lambda: load_breast_cancer(return_X_y=True),
}


def _splits(name, X, y, n_splits, quick):
    if quick:                      # a small stratified subsample keeps the smoke run short
        keep = min(len(y), 150)
        if keep < len(y):
            X, _, y, _ = train_test_split(X, y, train_size=keep, stratify=y, random_state=0)
    count = 1 if name == "pendigits" else n_splits
    for seed in range(count):
        X_train, X_test, y_train, y_test = train_test_split(
            X, y, test_size=0.3, stratify=y, random_state=seed)
        scaler = StandardScaler().fit(X_train)
        yield seed, scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def run(n_splits, quick):
    rows = []
    for data_name, load in DATASETS.items():
        X, y = load()
        X = np.asarray(X, dtype=np.float64)
        for seed, X_train, X_test, y_train, y_test in _splits(data_name, X, y, n_splits, quick):
            gamma = 1.0 / (X_train.shape[1] * X_train.var())
            for model_name, make in MODELS.items():
                est = make().set_params(gamma=gamma)
                with watch_fits() as watch:
                    start = time.perf_counter()
                    est.fit(X_train, y_train)
                    seconds = time.perf_counter() - start
                    watch.add(est)
                accuracy = float(est.score(X_test, y_test))
                # fits that did not converge (stop_reason_; SVC: its ConvergenceWarnings)
                unconverged = sum(watch.unconverged().values())
                rows.append({"data": data_name, "split": seed, "model": model_name,
                             "n_train": int(len(y_train)), "n_test": int(len(y_test)),
                             "n_features": int(X_train.shape[1]),
                             "n_classes": int(len(np.unique(y))), "gamma": gamma,
                             "accuracy": accuracy, "fit_seconds": seconds,
                             "convergence_warnings": int(unconverged)})  # unconverged fits
                print(f"{data_name:14s} split {seed}  {model_name:40s} "
                      f"acc {accuracy:.4f}  fit {seconds:8.3f} s"
                      + (f"  (not converged: {dict(watch.unconverged())})"
                         if unconverged else ""),
                      flush=True)
    return rows


def _cell(rows, data, model):
    sel = [r for r in rows if r["data"] == data and r["model"] == model]
    acc = np.array([r["accuracy"] for r in sel])
    sec = np.array([r["fit_seconds"] for r in sel])
    acc_text = f"{acc.mean():.3f}" + (f" ({acc.std(ddof=1):.3f})" if len(acc) > 1 else "")
    if any(r["convergence_warnings"] for r in sel):
        acc_text += " \\*"
    return acc_text, f"{np.median(sec):.2f}" if np.median(sec) >= 0.1 else f"{np.median(sec):.3f}"


def render(rows, meta):
    data_names = list(dict.fromkeys(r["data"] for r in rows))
    model_names = list(dict.fromkeys(r["model"] for r in rows))
    lines = ["Test accuracy (mean over the splits, sd in parentheses where there are several):",
             "", "| model | " + " | ".join(data_names) + " |",
             "|---|" + "---:|" * len(data_names)]
    for m in model_names:
        lines.append(f"| {m} | " + " | ".join(_cell(rows, d, m)[0] for d in data_names) + " |")
    lines += ["", "Fit time in seconds (median over the splits):", "",
              "| model | " + " | ".join(data_names) + " |",
              "|---|" + "---:|" * len(data_names)]
    for m in model_names:
        lines.append(f"| {m} | " + " | ".join(_cell(rows, d, m)[1] for d in data_names) + " |")
    shapes = []
    for d in data_names:
        r = next(r for r in rows if r["data"] == d)
        n_splits = len({s["split"] for s in rows if s["data"] == d})
        shapes.append(f"{d}: {r['n_train']} training / {r['n_test']} test samples, "
                      f"{r['n_features']} features, {r['n_classes']} classes, "
                      f"{n_splits} split{'s' if n_splits > 1 else ''}")
    lines += ["", "Data: " + "; ".join(shapes) + "."]
    if any(r["convergence_warnings"] for r in rows):
        lines += ["", "\\* at least one fit of this cell did not converge (it stopped before "
                  "its tolerance was met)."]
    lines += ["", f"Generated by `python -m benchmarks.run_guide_table"
              f"{' --quick' if meta['quick'] else ''}` on {meta['date']} (msvm {meta['msvm']}, "
              f"commit {meta['git']}, Python {meta['python']}, scikit-learn {meta['sklearn']}, "
              f"{meta['cpus']} logical CPUs); total wall time {meta['wall_seconds']:.0f} s. "
              f"Raw numbers: `benchmarks/results/{meta['stem']}.json`."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="smoke run on small subsamples; writes quick_guide.*")
    parser.add_argument("--splits", type=int, default=3,
                        help="train/test splits of the small data sets (default 3)")
    parser.add_argument("--render", action="store_true",
                        help="only re-render the Markdown from the existing JSON")
    args = parser.parse_args(argv)
    if args.render:
        stem = "quick_guide" if args.quick else "guide"
        saved = json.loads((RESULTS / f"{stem}.json").read_text())
        (RESULTS / f"{stem}.md").write_text(render(saved["rows"], saved["meta"]))
        print(f"wrote {RESULTS / (stem + '.md')}")
        return 0

    start = time.perf_counter()
    rows = run(1 if args.quick else args.splits, args.quick)
    stem = "quick_guide" if args.quick else "guide"
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "msvm": msvm.__version__, "git": git_commit() or "unknown",
            "python": platform.python_version(),
            "sklearn": sklearn.__version__, "cpus": os.cpu_count(), "quick": args.quick,
            "C": C, "kernel": "rbf", "gamma": "scale", "stem": stem,
            "wall_seconds": time.perf_counter() - start}
    write_json(RESULTS / f"{stem}.json", {"meta": meta, "rows": rows}, indent=1)
    (RESULTS / f"{stem}.md").write_text(render(rows, meta))
    print(f"wrote {RESULTS / (stem + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
