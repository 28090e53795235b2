"""The active-first column layout of the SMO path's row cache (issue 24, round 9): the same
build with the layout engaged and not, alternating in one process (CPU time, one thread).

    python -m benchmarks.run_active_layout [--repeats 3]

(from the repository root).  The layout was not kept: this needs the build of the
prototype, commit 3be2293 (``git checkout 3be2293 -- src/msvm/_core tests/test_active_rows.py``
and a rebuild), whose msvm._core._smo has _set_layout; on any other build it says so and
stops.  Fits: pendigits (as benchmarks/run_per_class_speed.py) RBF C = 10,
gamma = 1/16 for ReinforcedMSVM, Lee-Lin-Wahba, AngleBasedMSVM and WestonWatkinsMSVM, C = 256
at gamma = 1/32 for ReinforcedMSVM, and make_classification n = 10,000 (d = 20, k = 5,
C = 1: the largest size of the scaling runs whose cache holds half the rows, where the
layout engages).  Counters from the solver's verbose report: relayouts, syncs and the
score-update terms of the prefix (every block) and of the suffix (at the syncs).  The
machine may be shared: read the ratios of one run.  Results go to
benchmarks/results/active_layout.md and .json.
"""

import argparse
import contextlib
import io
import re
import time

import numpy as np

from benchmarks.harness import RESULTS, git_commit, machine_info, markdown_table, write_json
from benchmarks.run_per_class_speed import _models, _pendigits_train

LAYOUT = re.compile(r"\[msvm\] smo: .*layout: (\d+) relayouts "
                    r"\((\d+) for unsettled samples\), (\d+) syncs, terms (\d+) \+ (\d+)")
SMO = re.compile(r"\[msvm\] smo: steps (\d+), blocks (\d+)")


def _fit(make, X, y, on):
    from msvm._core import _smo
    _smo._set_layout(on)
    est = make()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        t = time.process_time()
        est.fit(X, y)
        cpu = time.process_time() - t
    text = buf.getvalue()
    row = {"cpu_s": cpu, "epochs": int(est.n_iter_), "objective": float(est.objective_),
           "steps": sum(int(m.group(1)) for m in SMO.finditer(text)),
           "blocks": sum(int(m.group(2)) for m in SMO.finditer(text)),
           "relayouts": 0, "prefix_terms": 0, "suffix_terms": 0, "syncs": 0}
    for m in LAYOUT.finditer(text):
        row["relayouts"] += int(m.group(1))
        row["syncs"] += int(m.group(3))
        row["prefix_terms"] += int(m.group(4))
        row["suffix_terms"] += int(m.group(5))
    return row


def _cases():
    from sklearn.datasets import make_classification

    from msvm import ReinforcedMSVM
    Xp, yp = _pendigits_train()
    models = _models()
    cases = [(f"pendigits {name}, C = 10",
              (lambda make=make: make(C=10.0, gamma=1 / 16, random_state=0, verbose=2)),
              Xp, yp)
             for name, make in models.items()
             if name in ("ReinforcedMSVM", "LLW (reinforcement=0)", "AngleBasedMSVM",
                         "WestonWatkinsMSVM")]
    cases.append(("pendigits ReinforcedMSVM, C = 256, gamma = 1/32",
                  lambda: models["ReinforcedMSVM"](C=256.0, gamma=1 / 32, random_state=0,
                                                   verbose=2), Xp, yp))
    X, y = make_classification(n_samples=10_000, n_features=20, n_informative=10,
                               n_classes=5, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    cases.append(("make_classification n = 10,000, ReinforcedMSVM C = 1",
                  lambda: ReinforcedMSVM(C=1.0, random_state=0, verbose=2), X, y))
    return cases


def _cell(value):
    if isinstance(value, float):
        return f"{value:.6f}" if value > 1000 else f"{value:.3f}"
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from msvm._core import _smo
    if not hasattr(_smo, "_set_layout"):
        raise SystemExit("this build has no active-first layout (not kept): build commit "
                         "3be2293's src/msvm/_core to rerun this benchmark")
    out = []
    for name, make, X, y in _cases():
        fits = {False: [], True: []}
        for _ in range(args.repeats):
            for on in (False, True):
                fits[on].append(_fit(make, X, y, on))
        off, on = fits[False], fits[True]
        row = {"case": name,
               "off_cpu_s": float(np.median([f["cpu_s"] for f in off])),
               "on_cpu_s": float(np.median([f["cpu_s"] for f in on]))}
        row["ratio"] = row["on_cpu_s"] / row["off_cpu_s"]
        last = on[-1]
        row.update({k: last[k] for k in ("epochs", "blocks", "relayouts", "syncs")})
        row["update_terms_off"] = off[-1]["prefix_terms"] or None
        row["prefix_terms"] = last["prefix_terms"]
        row["suffix_terms"] = last["suffix_terms"]
        row["objective_off"] = off[-1]["objective"]
        row["objective_on"] = last["objective"]
        row["same_steps"] = off[-1]["steps"] == last["steps"]
        out.append(row)
        print(row, flush=True)
    info = {"commit": git_commit(), "machine": machine_info(), "repeats": args.repeats,
            "rows": out}
    write_json(RESULTS / "active_layout.json", info)
    cols = ["case", "off_cpu_s", "on_cpu_s", "ratio", "epochs", "blocks", "relayouts",
            "syncs", "prefix_terms", "suffix_terms", "objective_off", "objective_on",
            "same_steps"]
    text = (f"# Active-first column layout (issue 24, round 9)\n\nCommit {info['commit']}; "
            f"medians of {args.repeats} alternating fits each; CPU time; the machine was "
            f"shared.\n\n" + markdown_table(cols, [[_cell(r[c]) for c in cols] for r in out])
            + "\n")
    (RESULTS / "active_layout.md").write_text(text)


if __name__ == "__main__":
    main()
