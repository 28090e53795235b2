"""Accuracy and fit time of every msvm model at its defaults on five real data sets: the table
of the documentation's "which model when" guide (docs/guide.md includes the Markdown it writes).

    python -m benchmarks.run_guide_table            # the recorded run (several minutes)
    python -m benchmarks.run_guide_table --quick    # smoke run: small subsamples (seconds)

(from the repository root)

Data sets (all offline): pendigits (bundled, ``msvm.datasets.load_pendigits``) and
scikit-learn's digits, wine, iris and breast cancer (WDBC). Protocol, the same for every model
and data set: features standardized (scaler fitted on the training part), stratified 70/30
train/test splits (``--splits`` of them, random_state 0, 1, ...; pendigits one split, it is
large), every estimator at its defaults (RBF kernel, gamma = 'scale', ``C='auto'``: C = k for
the sum-to-zero per-class-hinge models, k - 1 for the angle-based one, 1 for the
Weston-Watkins-type ones; RobustMSVM's ``truncation='auto'``), scikit-learn's ``SVC`` at its
defaults (C = 1, gamma = 'scale', one-vs-one) as the reference row. No tuning. In the same
run every msvm model is also fitted at the previous defaults (C = 1; RobustMSVM truncation
= 1), for the before/after comparison of accuracy and fit time.

Writes benchmarks/results/guide.md (included by the documentation) and guide.json; --quick
writes quick_guide.md and quick_guide.json instead. Timings are CPU times of one fit
(time.process_time, all threads of the process); they are measured, never asserted, and are
not part of the documentation build. The machine may be shared: read the ratios, measured in
the same run, rather than the seconds.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time

import warnings

import numpy as np
import sklearn
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import msvm
from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.datasets import load_pendigits
from msvm.exceptions import DegenerateFitWarning

from benchmarks.harness import RESULTS, git_commit, watch_fits, write_json

SVC_NAME = "sklearn SVC (one-vs-one, reference)"

# every model at its defaults; the second entry: the previous defaults (C = 1, truncation = 1)
MODELS = {
    "ReinforcedMSVM (reinforcement=0.5)": (lambda: ReinforcedMSVM(), {"C": 1.0}),
    "ReinforcedMSVM (reinforcement=0, LLW)": (lambda: ReinforcedMSVM(reinforcement=0.0),
                                              {"C": 1.0}),
    "WestonWatkinsMSVM": (lambda: WestonWatkinsMSVM(), {"C": 1.0}),
    "RobustMSVM": (lambda: RobustMSVM(), {"C": 1.0, "truncation": 1.0}),
    "WeightedRobustMSVM (identity utility)": (lambda: WeightedRobustMSVM(), {"C": 1.0}),
    "AdaptiveWeightedSVM (one-step)": (lambda: AdaptiveWeightedSVM(), {"C": 1.0}),
    "AngleBasedMSVM": (lambda: AngleBasedMSVM(), {"C": 1.0}),
    SVC_NAME: (lambda: SVC(), None),
}

DATASETS = {
    "pendigits": lambda: load_pendigits(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "iris": lambda: load_iris(return_X_y=True),
    "breast cancer": lambda: load_breast_cancer(return_X_y=True),
}


def _fit(est, X_train, y_train, X_test, y_test):
    """(accuracy, CPU seconds, unconverged fits, C_) of one fit."""
    with watch_fits() as watch:
        start = time.process_time()
        est.fit(X_train, y_train)
        seconds = time.process_time() - start
        watch.add(est)
    return (float(est.score(X_test, y_test)), seconds, int(sum(watch.unconverged().values())),
            float(getattr(est, "C_", getattr(est, "C", np.nan))))


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
            for model_name, (make, previous) in MODELS.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DegenerateFitWarning)
                    acc, sec, unconv, C_ = _fit(make(), X_train, y_train, X_test, y_test)
                    before = (None if previous is None else
                              _fit(make().set_params(**previous), X_train, y_train, X_test,
                                   y_test))
                row = {"data": data_name, "split": seed, "model": model_name,
                       "n_train": int(len(y_train)), "n_test": int(len(y_test)),
                       "n_features": int(X_train.shape[1]),
                       "n_classes": int(len(np.unique(y))), "C_": C_,
                       "accuracy": acc, "fit_seconds": sec, "convergence_warnings": unconv}
                if before is not None:
                    row.update(previous_accuracy=before[0], previous_fit_seconds=before[1],
                               previous_convergence_warnings=before[2])
                rows.append(row)
                print(f"{data_name:14s} split {seed}  {model_name:40s} C_ {C_:<4g} "
                      f"acc {acc:.4f}  cpu {sec:8.3f} s"
                      + ("" if before is None else
                         f"   previous: acc {before[0]:.4f}  cpu {before[1]:8.3f} s")
                      + (f"  (not converged: {unconv})" if unconv else ""), flush=True)
    return rows


def _selected(rows, data, model):
    return [r for r in rows if r["data"] == data and r["model"] == model]


def _mean_sd(values, flag=False):
    values = np.asarray(values, dtype=float)
    text = f"{values.mean():.3f}" + (f" ({values.std(ddof=1):.3f})" if len(values) > 1 else "")
    return text + (" \\*" if flag else "")


def _seconds(values):
    value = float(np.median(values))
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


def _cells(rows, data, model):
    """(accuracy, C_, accuracy minus SVC's, previous accuracy, CPU s, CPU ratio new/previous)."""
    sel = _selected(rows, data, model)
    svc = {r["split"]: r["accuracy"] for r in _selected(rows, data, SVC_NAME)}
    acc = _mean_sd([r["accuracy"] for r in sel], any(r["convergence_warnings"] for r in sel))
    C_ = "/".join(sorted({f"{r['C_']:g}" for r in sel}))
    gap = f"{100 * np.mean([r['accuracy'] - svc[r['split']] for r in sel]):+.1f}"
    if "previous_accuracy" not in sel[0]:
        return acc, C_, gap, "", _seconds([r["fit_seconds"] for r in sel]), ""
    previous = _mean_sd([r["previous_accuracy"] for r in sel],
                        any(r["previous_convergence_warnings"] for r in sel))
    ratio = np.median([r["fit_seconds"] / max(r["previous_fit_seconds"], 1e-9) for r in sel])
    return (acc, C_, gap, previous, _seconds([r["fit_seconds"] for r in sel]),
            f"{ratio:.1f}")


def _table(rows, data_names, model_names, column, heading):
    lines = ["", heading, "", "| model | " + " | ".join(data_names) + " |",
             "|---|" + "---:|" * len(data_names)]
    for m in model_names:
        lines.append(f"| {m} | "
                     + " | ".join(_cells(rows, d, m)[column] for d in data_names) + " |")
    return lines


def render(rows, meta):
    data_names = list(dict.fromkeys(r["data"] for r in rows))
    model_names = list(dict.fromkeys(r["model"] for r in rows))
    msvm_names = [m for m in model_names if m != SVC_NAME]
    lines = ["Every estimator at its defaults (RBF kernel, gamma = 'scale'; msvm's `C='auto'`, "
             "`SVC`'s C = 1).", ""]
    lines += _table(rows, data_names, model_names, 0,
                    "Test accuracy (mean over the splits, sd in parentheses where there are "
                    "several):")[1:]
    lines += _table(rows, data_names, msvm_names, 2,
                    "Accuracy minus `SVC`'s, in points (mean over the splits):")
    lines += _table(rows, data_names, msvm_names, 1, "The C of `C='auto'` (`C_`):")
    lines += _table(rows, data_names, msvm_names, 3,
                    "Before: test accuracy at the previous defaults (C = 1; RobustMSVM "
                    "truncation = 1), same splits:")
    lines += _table(rows, data_names, model_names, 4,
                    "Fit time, CPU seconds (median over the splits):")
    lines += _table(rows, data_names, msvm_names, 5,
                    "Fit time at the defaults over fit time at the previous defaults (median "
                    "over the splits of the ratio, both measured in this run):")
    shapes = []
    for d in data_names:
        r = next(r for r in rows if r["data"] == d)
        n_splits = len({s["split"] for s in rows if s["data"] == d})
        shapes.append(f"{d}: {r['n_train']} training / {r['n_test']} test samples, "
                      f"{r['n_features']} features, {r['n_classes']} classes, "
                      f"{n_splits} split{'s' if n_splits > 1 else ''}")
    lines += ["", "Data: " + "; ".join(shapes) + "."]
    if any(r["convergence_warnings"] or r.get("previous_convergence_warnings")
           for r in rows):
        lines += ["", "\\* at least one fit of this cell did not converge (it stopped before "
                  "its tolerance was met)."]
    lines += ["", f"Generated by `python -m benchmarks.run_guide_table"
              f"{' --quick' if meta['quick'] else ''}` on {meta['date']} (msvm {meta['msvm']}, "
              f"commit {meta['git']}, Python {meta['python']}, scikit-learn {meta['sklearn']}, "
              f"{meta['cpus']} logical CPUs, shared with other jobs: read the ratios); total "
              f"wall time {meta['wall_seconds']:.0f} s. "
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
            "C": "auto", "kernel": "rbf", "gamma": "scale", "stem": stem,
            "wall_seconds": time.perf_counter() - start}
    write_json(RESULTS / f"{stem}.json", {"meta": meta, "rows": rows}, indent=1)
    (RESULTS / f"{stem}.md").write_text(render(rows, meta))
    print(f"wrote {RESULTS / (stem + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
