"""Section 9j of the probability benchmarks: TargetedLocalMSVM's probabilities on its own
simulated scenarios and a real set (issue 25 item 1, round 16).

In one process, for Kang, Lin and Zhang's scenarios S1 and S2 (``make_targeted_example``,
draw 0, 2000 test samples with their true probabilities) at the default parameters (C='auto',
n_grid=20) and at the README's C=1, and for wine (stratified 70/30 split, seed 0,
standardized, its first column targeted):

* one fit (``probability=False``), the least of 5 CPU times;
* the probability fit before (main 5c4386a's plan, restored by
  ``msvm.targeted.LEVELS_ON_LINEAR_ROWS = False``) and after, alternating, the least of 3;
* Platt scaling (``CalibratedClassifierCV(same estimator, method='sigmoid', cv=5)``);
* where a probability fit's CPU goes (one more fit of each side, counted): the weighted
  refits, the grid points solved, the CPU time of the smoothed-primal starts and of the
  grid solves.

Run ``python -m benchmarks.probability_targeted`` (``--quick``: S1 at n = 300 only, nothing
written; ``--no-S2``: S1 and wine; ``--render``: the section again from the JSON).  It
writes benchmarks/results/probability_targeted.json and puts the section into
benchmarks/results/probability.md after section 9h (or in place of an earlier 9j), leaving
the other sections as they are.

Round 16, later (issue 25 item 1, continued), two more parts of the section, each from its
own run and JSON, rendered after the parts above:

* ``--S2-after``: scenario S2 (n = 1,500, k = 5) on this commit only (no 'before'): one fit
  the least of 3, one probability fit, its refits and grid solves counted, MAE and argmax
  agreement, under a wall-clock cap (``S2_CAP`` seconds a row; a row over it is reported
  as capped).  probability_targeted_s2.json.
* ``--tried``: the alternatives to the refits' solves that were measured and not kept,
  against the default, alternating in one process, the least of 3 (S1 at C = 'auto' and
  1): ``msvm.targeted.FOLLOW_MOVED_BOUNDS`` (a grid point's start with its bound-held
  variables moved to the grown bounds) and ``WARM_LEVEL_PLAN`` with dual coordinate
  descent on the linear kernel's rows.  probability_targeted_tried.json.

Round 17 (issue 25 item 1, fewer grid solves), two more parts, each from its own run and
JSON:

* ``--grid-share``: where a probability fit's grid solves go, stage by stage (the own fit,
  the calibration folds' own fits, their top fits at 3 C, their chains, the full data's top
  fit and chains), and the probability fit before (main aae56db: every fold's fit on
  ``n_grid`` points, ``msvm.targeted.CALIBRATION_GRID_SHARE = None``) and after (the folds'
  fits on half the grid points), alternating in one process, the least of 3, on S1 at
  C = 'auto' and 1 and wine; S2 at C = 'auto' once per side under a wall-clock cap
  (``S2_SIDE_CAP``).  probability_targeted_grid.json (its run of 4b75b78 also measured the
  bracket-settled grid points, ``BRACKET_SETTLED_POINTS``, a switch since removed; its rows
  stay in the JSON and the section).
* ``--held``: ``msvm.targeted.SOLVE_ON_HELD_SAMPLES`` off (before) and on (after),
  alternating in one process, the least of 3: one fit and the probability fit on S1 at
  C = 'auto' and 1 and wine, S2 at C = 'auto' (its probability fit once a side, capped):
  CPU, grid solves, the largest differences of the decision values, objectives and
  probabilities, MAE, argmax = predict.  probability_targeted_held.json.

Round 18 (issue 25 item 1, where the CPU goes), one more part from its own run and JSON:

* ``--late-start``: where a probability fit's CPU goes on main c94be25 (stage by stage: the
  grid solves, in them the compiled solver, the late smoothed-primal starts, the exact
  finishing steps and the rest), and the probability fit before
  (``msvm.targeted.LATE_START_EPOCHS = 0``: a warm level's grid solve takes the late start
  at its first budget stop) and after (it weighs the start against its cost), alternating
  in one process, the least of 3 on S1 at C = 'auto' and 1, once a side on S2 (capped);
  the MAE against the truth over draws of S1 and S2.  probability_targeted_late.json.

Round 18, later (the late start's Python per Newton step), one more part:

* ``--lean-steps``: ``msvm._primal.LEAN_SMALL_STEPS`` off (before: main 57d2948's calls)
  and on, alternating in one process: the late smoothed-primal starts of one S1
  probability fit (C = 'auto') recorded and replayed (each start's CPU the least of 3, its
  dual point compared bit for bit), the S1 probability fit at C = 'auto' and 1 (the least
  of 3), S2's once a side (capped) and one ReinforcedMSVM linear fit on
  make_classification (n = 20,000, d = 20, k = 5, C = 1e3; the least of 3).
  probability_targeted_lean.json.
"""

import contextlib
import json
import pathlib
import signal
import sys
import time
import warnings

import numpy as np

from benchmarks.harness import git_commit, markdown_table, module_settings
from benchmarks.probability_lean import _cpu_fit, compare_row

RESULTS = pathlib.Path(__file__).parent / "results"
HEADING = "## 9j. TargetedLocalMSVM's weighted refits on the linear kernel's rows"
S2_CAP = 480            # seconds (wall) a row of --S2-after may take
S2_SIDE_CAP = 900       # seconds (wall) a side of --grid-share's S2 row may take
TRIED_REPEATS = 3


@contextlib.contextmanager
def main_plan():
    """main 5c4386a's probability fit: the refits on the plan's row source (explicit
    features with the smoothed-primal start at every grid point, from 500 samples)."""
    from msvm import targeted

    with module_settings((targeted, "LEVELS_ON_LINEAR_ROWS", False)):
        yield


def _sets(quick, scenarios=("S1", "S2")):
    """(name, C, X, y, X_test, y_test, truth) of the scenarios asked for, then wine."""
    from sklearn.datasets import load_wine
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from msvm.datasets import make_targeted_example

    runs = [(scenario, C) for scenario in scenarios for C in ("auto", 1.0)]
    if quick:
        runs = [("S1", "auto")]
    for scenario, C in runs:
        X, y = make_targeted_example(300 if quick else None, scenario, random_state=0)
        X_test, y_test = make_targeted_example(2000, scenario, random_state=1)
        yield (f"{scenario} (n = {len(y)})", C, X, y, X_test, y_test,
               targeted_proba(X_test, scenario))
    if not quick:
        X, y = load_wine(return_X_y=True)
        X, X_test, y, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                random_state=0)
        scaler = StandardScaler().fit(X)
        yield ("wine (n = 124)", "auto", scaler.transform(X), y, scaler.transform(X_test),
               y_test, None)


def targeted_proba(X, scenario):
    """P(Y = j | U, x) of ``make_targeted_example`` at the rows of X (column 0 is U): the
    score's class probabilities given U (its cuts the score's population quantiles, from
    10^6 draws) times the class's normal density of x given U, normalized."""
    from scipy.stats import norm

    from msvm.datasets._targeted_examples import _MU_S2, _eta

    k, sigma = (3, 1.0) if scenario == "S1" else (5, 2.0)
    rng = np.random.default_rng(0)
    draws = rng.uniform(size=10 ** 6)
    draws = draws ** 2 + draws - 1 + rng.normal(0.0, np.sqrt(0.1), size=draws.size)
    cuts = np.concatenate([[-np.inf], np.quantile(draws, np.arange(1, k) / k), [np.inf]])
    U, Z = X[:, 0], X[:, 1:]
    center = U ** 2 + U - 1
    prior = np.diff(norm.cdf((cuts[None, :] - center[:, None]) / np.sqrt(0.1)), axis=1)
    if scenario == "S1":
        beta = np.column_stack([np.sin(4 * np.pi * U), 2 * np.exp(-20 * (U - 0.5) ** 2)])
        means = [beta * (j + 1) for j in range(k)]
    else:
        means = [_MU_S2[j] * _eta(U) for j in range(k)]
    log_like = np.column_stack([-0.5 * np.sum((Z - m) ** 2, axis=1) / sigma ** 2
                                for m in means])
    log_post = np.log(np.maximum(prior, 1e-300)) + log_like
    post = np.exp(log_post - log_post.max(axis=1, keepdims=True))
    return post / post.sum(axis=1, keepdims=True)


def _maker(C):
    from msvm import TargetedLocalMSVM

    def make(probability):
        return TargetedLocalMSVM(C=C, probability=probability, random_state=0)
    return make


def _counted_fit(make, X, y):
    """A probability fit with its grid solves counted and its smoothed-primal starts and
    grid solves timed (CPU)."""
    from msvm import _sequence, targeted

    acc = {"grid_solves": 0, "solve_cpu": 0.0, "primal_starts": 0, "primal_cpu": 0.0}
    epochs = []
    solve, start = targeted.TargetedLocalMSVM._solve_grid_point, \
        _sequence.DualSequence._primal_start

    def timed_solve(self, *args, **kwargs):
        t = time.process_time()
        out = solve(self, *args, **kwargs)
        acc["grid_solves"] += 1
        acc["solve_cpu"] += time.process_time() - t
        epochs.append(out[0].n_iter)
        return out

    def timed_start(self, *args, **kwargs):
        t = time.process_time()
        out = start(self, *args, **kwargs)
        acc["primal_starts"] += bool(out[2])
        acc["primal_cpu"] += time.process_time() - t
        return out

    with module_settings((targeted.TargetedLocalMSVM, "_solve_grid_point", timed_solve),
                         (_sequence.DualSequence, "_primal_start", timed_start)):
        cpu, est = _cpu_fit(make(True), X, y)
    acc["cpu"] = cpu
    acc["refits"] = int(est.n_probability_fits_)
    # the grid solves' epochs: their median and how many ran 50 or more
    acc["epochs_median"] = float(np.median(epochs)) if epochs else 0.0
    acc["epochs_50"] = int(np.sum(np.asarray(epochs) >= 50))
    acc["estimator"] = est
    return acc


def compare(make, X, y, X_test, y_test, truth):
    """``compare_row`` (one fit, before and after alternating, Platt, scores) and the
    profile of one more probability fit of each side."""
    row = compare_row(make, X, y, X_test, y_test, truth, before=main_plan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, context in (("before", main_plan), ("after", contextlib.nullcontext)):
            with context():
                row[name]["profile"] = _counted_fit(make, X, y)
                del row[name]["profile"]["estimator"]
    return row


def bench(quick, scenarios=("S1", "S2")):
    import os

    rows = {}
    load = [os.getloadavg()[0]]
    for name, C, X, y, X_test, y_test, truth in _sets(quick, scenarios):
        print(f"{name}, C = {C}", flush=True)
        rows[f"{name}, C = {C}"] = row = compare(_maker(C), X, y, X_test, y_test, truth)
        print(f"  one {row['one_fit'] * 1e3:.1f} ms, before {row['before']['cpu']:.2f} s, "
              f"after {row['after']['cpu']:.2f} s, Platt {row['platt_cpu']:.2f} s, "
              f"largest diff {row['max_diff']:.2g}", flush=True)
        load.append(os.getloadavg()[0])
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "quick": quick, "rows": rows}


def _score(side, metric):
    return f"{metric} {side[metric]:.4f}"


def _metric(row):
    return "mae" if "mae" in row["after"] else "log_loss"


def _rows_table(rows):
    out = []
    for name, r in rows.items():
        b, a, metric = r["before"], r["after"], _metric(r)
        out.append([name, r["n"], f"{b['n_fits']} / {a['n_fits']}",
                    f"{r['one_fit'] * 1e3:.1f}", f"{b['cpu'] * 1e3:.0f} / {a['cpu'] * 1e3:.0f}",
                    f"{b['cpu'] / r['one_fit']:.1f}x / {a['cpu'] / r['one_fit']:.1f}x",
                    f"{r['platt_cpu'] * 1e3:.0f}",
                    f"{b['cpu'] / r['platt_cpu']:.2f}x / {a['cpu'] / r['platt_cpu']:.2f}x",
                    f"{_score(b, metric)} / {a[metric]:.4f} ({r['platt'][metric]:.4f})",
                    f"{r['max_diff']:.2g}", f"{a['agreement']:.4f}"])
    return markdown_table(["data, C", "n", "fits: before / after", "one fit (ms)",
                           "before / after (ms)", "x one fit: before / after", "Platt (ms)",
                           "x Platt: before / after", "score: before / after (Platt)",
                           "largest diff", "argmax = predict"], out)


def _profile_table(rows):
    out = []
    for name, r in rows.items():
        for side in ("before", "after"):
            p = r[side]["profile"]
            out.append([name, side, p["refits"], p["grid_solves"],
                        f"{p['grid_solves'] / max(p['refits'], 1):.1f}", p["primal_starts"],
                        f"{p['cpu']:.2f}", f"{p['solve_cpu']:.2f}", f"{p['primal_cpu']:.2f}",
                        f"{p['solve_cpu'] / max(p['grid_solves'], 1) * 1e3:.2f}"])
    return markdown_table(["data, C", "side", "fits", "grid points solved", "per fit",
                           "smoothed-primal starts", "CPU (s)", "in grid solves (s)",
                           "in primal starts (s)", "ms per grid solve"], out)


def _targets(rows):
    lines = []
    for name, r in rows.items():
        b, a, metric = r["before"], r["after"], _metric(r)
        limit = 0.002 if metric == "mae" else 0.01
        change = a[metric] - b[metric]
        ratio, platt = a["cpu"] / r["one_fit"], a["cpu"] / r["platt_cpu"]
        lines.append(
            f"- {name}: {ratio:.1f}x one fit ({'met' if ratio <= 10 else 'NOT met'}), "
            f"{platt:.2f}x Platt ({'met' if platt <= 2 else 'NOT met'}), {metric} "
            f"{change:+.4f} ({'met' if change <= limit else 'NOT met'}), argmax = predict "
            f"{a['agreement']:.4f}")
    return "\n".join(lines)


def _scenarios(rows):
    """The scenarios measured, in words (a run with ``--no-S2`` has S1 only)."""
    named = {"S1": "scenario S1 (k = 3)", "S2": "scenario S2 (k = 5)"}
    found = [text for key, text in named.items() if any(row.startswith(key) for row in rows)]
    return " and ".join(found) if found else "no scenario"


def render(res):
    load = ", ".join(f"{v:.1f}" for v in res["load"])
    return (
        f"{HEADING} (issue 25 item 1, round 16)\n\n"
        "TargetedLocalMSVM (linear kernel, n_grid = 20, probability_grid = 8, random_state = "
        f"0) on Kang, Lin and Zhang's {_scenarios(res['rows'])} of "
        "`make_targeted_example` (draw 0 at the default n; 2000 test samples of draw 1, MAE "
        "against their true probabilities) at the default C ('auto': k - 1) and the README's "
        "C = 1, and on wine (its first column targeted; log loss on the 30 % test part). "
        "Written by `benchmarks/probability_targeted.py`.\n\n"
        f"Commit {res['commit']}, {res['date']}; load average (1 min) at the start and after "
        f"each data set: {load} (2 cores shared with three other engineers' builds and "
        "benchmarks). CPU time (`time.process_time`); 'before' is main 5c4386a's fit restored "
        "in this process (`msvm.targeted.LEVELS_ON_LINEAR_ROWS = False`: a refit's grid points "
        "on explicit features, each from the smoothed primal), 'after' this branch (a warm "
        "refit's grid points by the dual solver on the linear kernel's rows from their "
        "previous solutions), alternating, the least of 3; one fit the least of 5; Platt: "
        "CalibratedClassifierCV(same estimator, method='sigmoid', cv=5). 'largest diff': of "
        "the test probabilities, before against after.\n\n"
        "#### Before and after\n\n" + _rows_table(res["rows"]) + "\n\n"
        "Targets of issue 25 (after):\n\n" + _targets(res["rows"]) + "\n\n"
        "#### Where a probability fit's CPU goes\n\n"
        "One more probability fit of each side, its grid solves counted and timed "
        "(`TargetedLocalMSVM._solve_grid_point`, `DualSequence._primal_start`); 'fits': "
        "`n_probability_fits_` (the own fit, the calibration folds' fits and the chains' "
        "levels, settled levels not counted).\n\n" + _profile_table(res["rows"]) + "\n")


def splice(report, section):
    """``report`` with ``section`` in place of its 9j section, or after its 9h section."""
    start = report.find(HEADING)
    if start < 0:
        nxt = report.find("\n## ", report.find("## 9h."))
        start = end = len(report) if nxt < 0 else nxt + 1
    else:
        nxt = report.find("\n## ", start + 1)
        end = len(report) if nxt < 0 else nxt + 1
    return report[:start] + section + ("\n" if end < len(report) else "") + report[end:]


def _s2_row(C, X, y, X_test, truth):
    """One row of ``--S2-after``: one fit (the least of 3) and one probability fit of this
    commit, the refits and grid solves counted, MAE and argmax = predict."""
    import os

    make = _maker(C)
    ones = [_cpu_fit(make(False), X, y)[0] for _ in range(3)]
    wall = time.time()
    profile = _counted_fit(make, X, y)
    wall = time.time() - wall
    est = profile.pop("estimator")
    proba = est.predict_proba(X_test)
    return {"one_fit": min(ones), "wall": wall, "profile": profile,
            "mae": float(np.mean(np.abs(proba - truth))),
            "agreement": float(np.mean(est.classes_[np.argmax(proba, axis=1)]
                                       == est.predict(X_test))),
            "load": os.getloadavg()[0]}


def _capped(seconds, function, *args):
    """``function(*args)``, or None when it runs longer than ``seconds`` (wall clock)."""
    def alarm(signum, frame):
        raise TimeoutError

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return function(*args)
    except TimeoutError:
        return None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _scenario(scenario):
    """(X, y, X_test, truth): draw 0 of ``scenario`` at the default n, 2000 test samples of
    draw 1 and their true probabilities."""
    from msvm.datasets import make_targeted_example

    X, y = make_targeted_example(None, scenario, random_state=0)
    X_test, _ = make_targeted_example(2000, scenario, random_state=1)
    return X, y, X_test, targeted_proba(X_test, scenario)


def bench_s2():
    """``--S2-after``: scenario S2 at C = 'auto' and 1, this commit only, capped."""
    import os

    X, y, X_test, truth = _scenario("S2")
    rows, load = {}, [os.getloadavg()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for C in ("auto", 1.0):
            print(f"S2, C = {C}", flush=True)
            rows[f"S2 (n = {len(y)}), C = {C}"] = _capped(S2_CAP, _s2_row, C, X, y, X_test,
                                                           truth)
            load.append(os.getloadavg()[0])
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "cap": S2_CAP, "rows": rows}


TRIED = {
    "default": (),
    "bounds followed": (("FOLLOW_MOVED_BOUNDS", True),),
    "cd on linear rows": (("WARM_LEVEL_PLAN", {"rows": "linear rows", "solver": "cd"}),),
}


def _tried_settings(name):
    from msvm import targeted

    return module_settings(*[(targeted, attr, value) for attr, value in TRIED[name]])


def bench_tried():
    """``--tried``: the default refits and the alternatives not kept, alternating in one
    process, the least of 3, on S1 at C = 'auto' and 1; the test probabilities compared
    with the default's."""
    import os

    X, y, X_test, truth = _scenario("S1")
    rows, load = {}, [os.getloadavg()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for C in ("auto", 1.0):
            make, row, probas = _maker(C), {}, {}
            for _ in range(TRIED_REPEATS):
                for name in TRIED:
                    with _tried_settings(name):
                        profile = _counted_fit(make, X, y)
                    est = profile.pop("estimator")
                    row.setdefault(name, {"cpu": [], "profile": profile})["cpu"].append(
                        profile["cpu"])
                    probas[name] = est.predict_proba(X_test)
                    row[name]["agreement"] = float(np.mean(
                        est.classes_[np.argmax(probas[name], axis=1)] == est.predict(X_test)))
            for name, side in row.items():
                side["mae"] = float(np.mean(np.abs(probas[name] - truth)))
                side["max_diff"] = float(np.max(np.abs(probas[name] - probas["default"])))
            rows[f"S1 (n = {len(y)}), C = {C}"] = row
            load.append(os.getloadavg()[0])
            print(f"S1, C = {C}: " + ", ".join(
                f"{name} {min(side['cpu']):.2f} s" for name, side in row.items()), flush=True)
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "rows": rows}


def _run_line(res):
    """The commit, date and load of a run (its JSON ``res``)."""
    load = ", ".join(f"{v:.1f}" for v in res["load"])
    return (f"Commit {res['commit']}, {res['date']}; load average (1 min) at the start and "
            f"after each row: {load}.")


def _s2_part(res):
    out = []
    for name, r in res["rows"].items():
        if r is None:
            out.append([name, f"over the cap ({res['cap']} s wall)", *[""] * 9])
            continue
        p = r["profile"]
        out.append([name, f"{r['one_fit'] * 1e3:.0f}", f"{p['cpu']:.2f}", f"{r['wall']:.0f}",
                    f"{p['cpu'] / r['one_fit']:.1f}x", p["refits"], p["grid_solves"],
                    f"{p['solve_cpu'] / max(p['grid_solves'], 1) * 1e3:.1f}",
                    f"{p.get('epochs_median', float('nan')):.0f} / {p.get('epochs_50', '-')}",
                    f"{r['mae']:.4f}", f"{r['agreement']:.4f}"])
    return (
        "#### Scenario S2, this commit only\n\n" + _run_line(res)
        + " Scenario S2 of `make_targeted_example` (k = 5, draw 0 at the "
        "default n = 1,500; MAE against the true probabilities of 2000 test samples of draw "
        "1), random_state = 0: one fit (probability=False) the least of 3 CPU times, one "
        "probability fit (CPU, and wall for scale), its refits (`n_probability_fits_`) and "
        f"grid points solved; each row under a wall-clock cap of {res['cap']} s. No 'before' "
        "and no Platt here: round 16's first run of all modes on S2 had not finished one row "
        "after 41 minutes at load 8-14. One fit is not pathological (every grid point "
        "converges); the probability fit's grid solves are: a warm-started solve of S2 costs "
        "20 times one of S1 (1.4-1.8 ms, 2 epochs the median), because most of them run as "
        "many epochs as a cold one (the one fit's grid points: about 100 epochs each), the "
        "warm start from the level before notwithstanding.\n\n"
        + markdown_table(["data, C", "one fit (ms)", "probability fit CPU (s)",
                          "its wall (s)", "x one fit", "fits", "grid points solved",
                          "ms a grid solve", "epochs a grid solve: median / 50 or more",
                          "MAE", "argmax = predict"], out) + "\n")


def _tried_part(res):
    out = []
    for name, row in res["rows"].items():
        for side_name, side in row.items():
            p = side["profile"]
            out.append([name, side_name, f"{min(side['cpu']):.2f}",
                        f"{min(side['cpu']) / min(row['default']['cpu']):.2f}", p["refits"],
                        p["grid_solves"], f"{side['mae']:.4f}", f"{side['max_diff']:.2g}",
                        f"{side['agreement']:.4f}"])
    return (
        "#### Tried and not kept: other starts and solvers for a refit's grid points\n\n"
        + _run_line(res) + " The probability fit of S1 (n = 1000, random_state = 0) with the "
        "default refits and with each alternative (`benchmarks/probability_targeted.py "
        "--tried`), alternating in one process, the least of "
        f"{TRIED_REPEATS} CPU times; refits and grid points solved from one fit. 'bounds "
        "followed': `msvm.targeted.FOLLOW_MOVED_BOUNDS = True` (every grid point starts from "
        "its previous dual with the variables at their upper bound moved to the grown bound: "
        "fewer epochs a solve, but fewer samples leave their bounds, so the chains settle "
        "later); 'cd on linear rows': `WARM_LEVEL_PLAN = {'rows': 'linear rows', 'solver': "
        "'cd'}` (dual coordinate descent instead of SMO on the same rows). 'largest diff': of "
        "the test probabilities against the default's. Not measured here: the same on "
        "explicit features without the smoothed-primal start (`{'rows': 'explicit "
        "features', 'solver': 'cd', 'primal_start': 'off'}`), 77 s against 2.0 s in a "
        "single trial (C = 'auto', load 10); every own fit keeping its grid (so that the "
        "first refits could take settled grid points as they are), the same 925 grid "
        "solves (the refits that solve every grid point are the top fits at the "
        "calibration's C, whose weights all change).\n\n"
        + markdown_table(["data, C", "variant", "CPU (s)", "/ default", "fits",
                          "grid points solved", "MAE", "largest diff", "argmax = predict"],
                         out) + "\n")


# --grid-share: the sides, as module settings of msvm.targeted
GRID_SIDES = {
    "before": (("CALIBRATION_GRID_SHARE", None),),
    "after": (),
}
# the draws' check only: 'after' on folds of any size
ANY_FOLD = (("CALIBRATION_GRID_MIN_SAMPLES", 0),)


def _grid_side(name):
    from msvm import targeted

    settings = ANY_FOLD if name == "after, folds of any size" else GRID_SIDES[name]
    return module_settings(*[(targeted, attr, value) for attr, value in settings])


@contextlib.contextmanager
def _stages(counts, timers=()):
    """Count the grid solves (and their CPU time) and the grid points kept as they are by
    the stage of the probability fit they belong to, into ``counts`` (stage -> dict);
    ``timers``: (label, owner, attribute) of functions whose CPU time (inclusive) and calls
    are summed by stage too, into ``counts[stage]['timers'][label]`` as [CPU, calls]."""
    from msvm import _probability as P
    from msvm import targeted

    where = ["estimator's own fit"]

    def timed(label, function):
        def run(*args, **kwargs):
            t = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                entry = counts.setdefault(where[0], {"solves": 0, "cpu": 0.0, "kept": 0})
                cell = entry.setdefault("timers", {}).setdefault(label, [0.0, 0])
                cell[0] += time.process_time() - t
                cell[1] += 1
        return run

    timing = [(owner, name, timed(label, getattr(owner, name)))
              for label, owner, name in timers]

    def staged(function, label):
        def run(template, start, X, *args, **kwargs):
            before, where[0] = where[0], label(template, X)
            try:
                return function(template, start, X, *args, **kwargs)
            finally:
                where[0] = before
        return run

    def fold(X, full):
        return "full data's" if X.shape[0] == full else "folds'"

    full = []
    solve, kept = targeted.TargetedLocalMSVM._solve_grid_point, targeted._SolvedGrid.reusable
    fit_model = targeted.TargetedLocalMSVM._fit_model

    def first_fit(self, X, *args, **kwargs):
        if not full:
            full.append(X.shape[0])         # the first fit: the estimator's own, on all of X
        return fit_model(self, X, *args, **kwargs)

    def counted_solve(self, *args, **kwargs):
        t = time.process_time()
        out = solve(self, *args, **kwargs)
        entry = counts.setdefault(where[0], {"solves": 0, "cpu": 0.0, "kept": 0})
        entry["solves"] += 1
        entry["cpu"] += time.process_time() - t
        entry.setdefault("epochs", []).append(int(out[0].n_iter))
        return out

    def counted_kept(solved, g, key, weights):
        out = kept(solved, g, key, weights)
        entry = counts.setdefault(where[0], {"solves": 0, "cpu": 0.0, "kept": 0})
        if out is not None:
            entry["kept"] += 1
        else:
            thin = _thin_moved_weights(solved, g, weights)
            if thin is not None:
                entry["thin"] = entry.get("thin", 0) + thin
        return out

    def own(template, X, *args, **kwargs):
        before, where[0] = where[0], "folds' own fits"
        try:
            return P._own_fit(template, X, *args, **kwargs)
        finally:
            where[0] = before

    top = staged(P._top_fit, lambda t, X: f"{fold(X, full[0])} top fits at 3 C")
    chain = staged(P._weighted_chain, lambda t, X: f"{fold(X, full[0])} chains")
    # module_settings restores what getattr read: the runner's static methods unwrapped,
    # which a fit after the block would call as bound methods
    runner = {name: P._ChainRunner.__dict__[name] for name in ("own_fit", "top_fit")}
    with _restored(P._ChainRunner, runner), module_settings(
            (targeted.TargetedLocalMSVM, "_fit_model", first_fit),
            (targeted.TargetedLocalMSVM, "_solve_grid_point", counted_solve),
            (targeted._SolvedGrid, "reusable", counted_kept),
            (P._ChainRunner, "own_fit", staticmethod(own)),
            (P._ChainRunner, "top_fit", staticmethod(top)),
            (P, "_weighted_chain", chain), *timing):
        yield


@contextlib.contextmanager
def _restored(owner, attributes):
    """Set ``attributes`` (name -> value) on ``owner`` again when the block ends."""
    try:
        yield
    finally:
        for name, value in attributes.items():
            setattr(owner, name, value)


THIN_WEIGHT = 0.1       # --grid-share: a grid point's moved samples' largest weight, relative


def _thin_moved_weights(solved, g, weights):
    """For grid point g of a refit that solves it: whether every sample at a moving bound
    whose weight grew has a weight below ``THIN_WEIGHT`` times the largest grown weight
    there (the brief's candidate 'kernel weights below a threshold'); None where the weights
    did not only grow."""
    if g >= len(solved.fits) or solved.fits[g].weighed is None:
        return None
    old = solved.weights[g]
    if old.shape != weights.shape or np.any(weights < old):
        return None
    grown = weights > old
    moved = grown & solved.fits[g].weighed
    if not np.any(moved):
        return None
    return bool(weights[moved].max() < THIN_WEIGHT * weights[grown].max())


STAGE_ORDER = ("estimator's own fit", "folds' own fits", "folds' top fits at 3 C",
               "folds' chains", "full data's top fits at 3 C", "full data's chains")


def _grid_row(make, X, y, X_test, y_test, truth):
    """One row of ``--grid-share``: one fit (the least of 5), every side of ``GRID_SIDES``
    alternating (the least of 3; grid solves, stages and scores from the last), Platt."""
    from benchmarks.probability_lean import _platt, _scores

    one = min(_cpu_fit(make(False), X, y)[0] for _ in range(5))
    row = {"n": len(y), "one_fit": one, "sides": {}}
    probas = {}
    for _ in range(TRIED_REPEATS):
        for name in GRID_SIDES:
            counts = {}
            with _grid_side(name), _stages(counts):
                cpu, est = _cpu_fit(make(True), X, y)
            side = row["sides"].setdefault(name, {"cpu": []})
            side["cpu"].append(cpu)
            probas[name] = est.predict_proba(X_test)
            side.update(stages=counts, refits=int(est.n_probability_fits_),
                        factor=float(est.probability_C_factor_),
                        **_scores(probas[name], y_test, est.classes_, est.predict(X_test),
                                  truth))
    for name, side in row["sides"].items():
        side["max_diff"] = float(np.max(np.abs(probas[name] - probas["before"])))
    row["platt_cpu"], platt = _platt(make, X, y)
    row["platt"] = _scores(platt.predict_proba(X_test), y_test, platt.classes_,
                           platt.predict(X_test), truth)
    return row


def _s2_grid_row(X, y, X_test, y_test, truth):
    """S2 at C = 'auto' for ``--grid-share``: one fit (the least of 3), one probability fit
    of 'before' and of 'after', each under ``S2_SIDE_CAP`` (None when over it)."""
    from benchmarks.probability_lean import _scores

    make = _maker("auto")
    row = {"n": len(y), "one_fit": min(_cpu_fit(make(False), X, y)[0] for _ in range(3)),
           "sides": {}}
    probas = {}

    def side(name):
        counts = {}
        with _grid_side(name), _stages(counts):
            cpu, est = _cpu_fit(make(True), X, y)
        probas[name] = est.predict_proba(X_test)
        return {"cpu": [cpu], "stages": counts, "refits": int(est.n_probability_fits_),
                "factor": float(est.probability_C_factor_),
                **_scores(probas[name], y_test, est.classes_, est.predict(X_test), truth)}

    for name in ("before", "after"):
        print(f"  S2 {name}", flush=True)
        row["sides"][name] = _capped(S2_SIDE_CAP, side, name)
    if len(probas) == 2:
        row["sides"]["after"]["max_diff"] = float(np.max(np.abs(probas["after"]
                                                                - probas["before"])))
    return row


# --grid-share: (n, C, draws, the side against 'before') of the MAE check over draws (n None:
# the default 1,000); n = 300 and 800 (folds of 200 and 533 samples, below
# CALIBRATION_GRID_MIN_SAMPLES) with every fold on the coarser grid
GRID_DRAWS = ((300, "auto", range(6), "after, folds of any size"),
              (800, 1.0, range(6), "after, folds of any size"),
              (None, "auto", range(10), "after"),
              (None, 1.0, range(4), "after"), (2000, "auto", range(3), "after"))


def _grid_draws():
    """Before and after on several draws of S1 (``GRID_DRAWS``; one probability fit a side
    and draw, before first): the MAE against the truth of 2000 test samples of draw 100, the
    CPU time and the grid solves."""
    from msvm.datasets import make_targeted_example

    X_test, _ = make_targeted_example(2000, "S1", random_state=100)
    truth = targeted_proba(X_test, "S1")
    rows = []
    for n, C, draws, after in GRID_DRAWS:
        for draw in draws:
            X, y = make_targeted_example(n, "S1", random_state=draw)
            row = {"n": len(y), "C": C, "draw": draw, "side": after}
            for name, side in (("before", "before"), ("after", after)):
                counts = {}
                with _stages(counts):
                    row[name] = _draw_fit(C, _grid_side(side), X, y, X_test, truth)
                row[name]["solves"] = sum(e["solves"] for e in counts.values())
            rows.append(_printed_draw(f"S1 n = {len(y)}, C = {C}, draw {draw}", row))
    return rows


def _draw_fit(C, side, X, y, X_test, truth):
    """One probability fit of a draw at C within the context ``side``: its CPU, MAE
    against ``truth`` at X_test and C factor."""
    with side:
        cpu, est = _cpu_fit(_maker(C)(True), X, y)
    proba = est.predict_proba(X_test)
    return {"cpu": cpu, "mae": float(np.mean(np.abs(proba - truth))),
            "factor": float(est.probability_C_factor_)}


def _printed_draw(label, row):
    """``row`` (a draw's 'before' and 'after'), its MAE change printed."""
    print(f"  {label}: MAE {row['after']['mae'] - row['before']['mae']:+.4f}", flush=True)
    return row


def bench_grid(with_s2=True):
    """``--grid-share``: S1 at C = 'auto' and 1 and wine (every side), then S2 at C = 'auto'
    (before and after, capped)."""
    import os

    rows, load = {}, [os.getloadavg()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, C, X, y, X_test, y_test, truth in _sets(False, ("S1",)):
            print(f"{name}, C = {C}", flush=True)
            rows[f"{name}, C = {C}"] = _grid_row(_maker(C), X, y, X_test, y_test, truth)
            load.append(os.getloadavg()[0])
        draws = _grid_draws()
        load.append(os.getloadavg()[0])
        if with_s2:
            from msvm.datasets import make_targeted_example

            X, y = make_targeted_example(None, "S2", random_state=0)
            X_test, y_test = make_targeted_example(2000, "S2", random_state=1)
            print("S2, C = auto", flush=True)
            rows[f"S2 (n = {len(y)}), C = auto"] = _s2_grid_row(
                X, y, X_test, y_test, targeted_proba(X_test, "S2"))
            load.append(os.getloadavg()[0])
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "cap": S2_SIDE_CAP, "rows": rows, "draws": draws}


def _draw_changes(rows):
    """A group of draws' cells: CPU after / before (median), MAE before (mean), MAE change
    (mean, range), draws over +0.002, draws whose C factor changed."""
    change = np.array([r["after"]["mae"] - r["before"]["mae"] for r in rows])
    cpu = np.array([r["after"]["cpu"] / r["before"]["cpu"] for r in rows])
    flips = sum(r["after"]["factor"] != r["before"]["factor"] for r in rows)
    return [f"{np.median(cpu):.2f}", f"{np.mean([r['before']['mae'] for r in rows]):.4f}",
            f"{change.mean():+.4f}", f"{change.min():+.4f} .. {change.max():+.4f}",
            int(np.sum(change > 0.002)), flips]


def _draws_table(draws):
    groups = {}
    for row in draws:
        groups.setdefault((row["n"], row["C"], row["side"]), []).append(row)
    out = []
    for (n, C, side), rows in groups.items():
        out.append([n, C, side, len(rows),
                    f"{np.mean([r['before']['solves'] for r in rows]):.0f} / "
                    f"{np.mean([r['after']['solves'] for r in rows]):.0f}",
                    *_draw_changes(rows)])
    return markdown_table(["n", "C", "side", "draws", "grid solves: before / after (mean)",
                           "CPU after / before (median)", "MAE before (mean)",
                           "MAE change (mean)", "MAE change (range)", "draws over +0.002",
                           "C factor changed"], out)


def _stage_table(res):
    out = []
    for name, row in res["rows"].items():
        for side_name in ("before", "after"):
            side = row["sides"].get(side_name)
            if side is None:
                continue
            cells = [f"{entry.get('solves', 0)} ({entry.get('kept', 0)}); "
                     f"{entry.get('cpu', 0.0):.2f} s"
                     for entry in (side["stages"].get(stage, {}) for stage in STAGE_ORDER)]
            total = sum(entry["solves"] for entry in side["stages"].values())
            cpu = sum(entry["cpu"] for entry in side["stages"].values())
            thin = sum(entry.get("thin", 0) for entry in side["stages"].values())
            out.append([name, side_name, *cells, total, f"{cpu:.2f}", thin])
    return markdown_table(["data, C", "side", *STAGE_ORDER, "grid solves", "CPU in them (s)",
                           f"thin (< {THIN_WEIGHT:g})"], out)


def _grid_table(res):
    out = []
    for name, row in res["rows"].items():
        before = row["sides"].get("before")
        for side_name, side in row["sides"].items():
            if side is None:
                out.append([name, side_name, f"over the cap ({res['cap']} s wall)",
                            *[""] * 8])
                continue
            metric = "mae" if "mae" in side else "log_loss"
            cpu = min(side["cpu"])
            platt = row.get("platt_cpu")
            change = "" if before is None else f" ({side[metric] - before[metric]:+.4f})"
            out.append([name, side_name, f"{cpu:.2f}", f"{cpu / row['one_fit']:.1f}x",
                        "" if platt is None else f"{cpu / platt:.2f}x", side["refits"],
                        sum(entry["solves"] for entry in side["stages"].values()),
                        f"{metric} {side[metric]:.4f}{change}",
                        f"{side.get('max_diff', float('nan')):.3g}",
                        f"{side['agreement']:.4f}", f"{side['factor']:g}"])
    return markdown_table(["data, C", "side", "CPU (s)", "x one fit", "x Platt", "fits",
                           "grid solves", "score (change)", "largest diff",
                           "argmax = predict", "C factor"], out)


def _cost_targets(name, row, after):
    """A row's line of targets, its cost part: the side ``after``'s least CPU against one
    fit (10x) and, where measured, against Platt scaling (2x)."""
    ratio = min(after["cpu"]) / row["one_fit"]
    text = f"- {name}: {ratio:.1f}x one fit ({'met' if ratio <= 10 else 'NOT met'})"
    if "platt_cpu" in row:
        platt = min(after["cpu"]) / row["platt_cpu"]
        text += f", {platt:.2f}x Platt ({'met' if platt <= 2 else 'NOT met'})"
    return text


def _grid_targets(res):
    lines = []
    for name, row in res["rows"].items():
        before, after = row["sides"].get("before"), row["sides"].get("after")
        if after is None:
            lines.append(f"- {name}: 'after' over the cap")
            continue
        metric = "mae" if "mae" in after else "log_loss"
        limit = 0.002 if metric == "mae" else 0.01
        text = _cost_targets(name, row, after)
        if before is not None:
            change = after[metric] - before[metric]
            text += f", {metric} {change:+.4f} ({'met' if change <= limit else 'NOT met'})"
        lines.append(text + f", argmax = predict {after['agreement']:.4f}")
    return "\n".join(lines)


def _targets_and_draws(targets, draws):
    """The end of a part: the issue's targets (lines) and, where there are any, the text
    and table of the draws."""
    return ("Targets of issue 25 (after):\n\n" + targets + "\n"
            + ("\n" + draws + "\n" if draws else ""))


def _grid_part(res):
    platts = ", ".join(f"{name} {row['platt_cpu'] * 1e3:.0f} ms"
                       for name, row in res["rows"].items() if "platt_cpu" in row)
    ones = ", ".join(f"{name} {row['one_fit'] * 1e3:.0f} ms"
                     for name, row in res["rows"].items())
    return (
        "#### Round 17: the calibration folds' fits on half the grid points\n\n"
        + _run_line(res) + " Written by `benchmarks/probability_targeted.py --grid-share`. "
        "CPU time (`time.process_time`). 'before': main aae56db restored in this process "
        "(`msvm.targeted.CALIBRATION_GRID_SHARE = None`: every calibration fold's fit on the "
        "estimator's n_grid = 20 points); 'after': this branch (a calibration fold's fits, "
        "its own fit, its top fits at 3 C and its chains, on round(0.5 n_grid) = 10 points "
        "over the fold's range of U, the bandwidth unchanged; the estimator's own fit and "
        "the full data's chains on 20); 'tried: bracket-settled points': 'after' with "
        "`msvm.targeted.BRACKET_SETTLED_POINTS = True` (a chain's next level also keeps a "
        "grid point where the previous level gave the up-weighted class a positive margin "
        "at every training sample whose interpolation reads it), not kept. S1 and wine: "
        "the sides alternating, the least of "
        f"{TRIED_REPEATS} CPU times, grid solves, stages and scores from the last fit of "
        "each side; one fit (probability=False) the least of 5 (" + ones + "); Platt: "
        "CalibratedClassifierCV(same estimator, method='sigmoid', cv=5) (" + platts + "). "
        "S2 (C = 'auto'): one probability fit a side, before then after, each under a "
        f"wall-clock cap of {res['cap']} s, one fit the least of 3. 'largest diff': of the "
        "test probabilities against 'before'. MAE against the true probabilities of 2000 "
        "test samples of draw 1; wine: log loss on its 30 % test part.\n\n"
        "Where the grid solves go: grid points solved in each stage of one probability fit "
        "(in brackets: grid points a warm-started refit took as they were, "
        "`_SolvedGrid.reusable`; then the CPU time of the stage's grid solves). "
        "A fold's stages are its own fit (cold), its top fit at "
        "3 C (every weight times 3: every grid point solved) and its chains at C and 3 C "
        "(each level's grid points where a sample of the up-weighted class sits at a bound "
        "that moves with its weight; a chain's first level from the own fit, which keeps "
        "no grid for a refit, solves every grid point); the full data's the same at the "
        "chosen C factor. 'thin': the chains' grid solves where every sample at a moving "
        f"bound whose weight grew has a weight below {THIN_WEIGHT:g} times the largest "
        "grown weight there (the grid points a threshold on the moved samples' smoothing "
        "weights could keep).\n\n"
        + _stage_table(res) + "\n\n" + _grid_table(res) + "\n\n"
        + _targets_and_draws(_grid_targets(res), res.get("draws") and (
           "The MAE against the truth over draws of S1 (draws 0, 1, ... of "
           "`make_targeted_example` at n; 2000 test samples of draw 100; one probability fit "
           "a side and draw, before first; CPU of that one fit each, so noisier than the "
           "table above). Folds of fewer than 600 training samples (n = 300: 200, n = 800: "
           "533) keep n_grid (`CALIBRATION_GRID_MIN_SAMPLES`): the n = 300 and 800 rows' "
           "side is every fold on the coarser grid (`CALIBRATION_GRID_MIN_SAMPLES = 0`), "
           "the reason for that rule.\n\n" + _draws_table(res["draws"]))))


# --held: the sides, as msvm.targeted.SOLVE_ON_HELD_SAMPLES
HELD_SIDES = (("before", False), ("after", True))
HELD_REPEATS = 3
HELD_MIN_SAMPLES = 500  # msvm.targeted.HELD_MIN_SAMPLES of the run (wine: below it)


def _held_side(on):
    from msvm import targeted

    return module_settings((targeted, "SOLVE_ON_HELD_SAMPLES", on),
                           (targeted, "HELD_MIN_SAMPLES", HELD_MIN_SAMPLES))


def _grid_solves(counter):
    """A ``_solve_grid_point`` that counts its calls in ``counter['solves']``."""
    from msvm import targeted

    solve = targeted.TargetedLocalMSVM._solve_grid_point

    def counted(self, *args, **kwargs):
        counter["solves"] += 1
        return solve(self, *args, **kwargs)
    return module_settings((targeted.TargetedLocalMSVM, "_solve_grid_point", counted))


def _held_fit(make, probability, on, X, y):
    """(CPU, grid solves, estimator) of one fit of the side ``on``."""
    counter = {"solves": 0}
    with _held_side(on), _grid_solves(counter):
        cpu, est = _cpu_fit(make(probability), X, y)
    return cpu, counter["solves"], est


def _held_one_fit(make, X, y, X_test):
    """One fit (probability=False) of both sides alternating, the least of
    ``HELD_REPEATS``: CPU, grid solves, and the test decision values', objectives' and
    predictions' differences."""
    sides, fits = {}, {}
    for _ in range(HELD_REPEATS):
        for name, on in HELD_SIDES:
            cpu, solves, est = _held_fit(make, False, on, X, y)
            sides.setdefault(name, {"cpu": [], "solves": solves})["cpu"].append(cpu)
            fits[name] = est
    before, after = fits["before"], fits["after"]
    objective = np.abs(after.objectives_ - before.objectives_) / np.maximum(
        np.abs(before.objectives_), 1e-300)
    return {"sides": sides,
            "decision_diff": float(np.max(np.abs(after.decision_values(X_test)
                                                 - before.decision_values(X_test)))),
            "objective_rel_diff": float(objective.max()),
            "predict_agreement": float(np.mean(after.predict(X_test)
                                               == before.predict(X_test)))}


def _held_probability(make, X, y, X_test, y_test, truth, repeats):
    """The probability fit of both sides alternating, the least of ``repeats`` CPU times;
    grid solves, refits and scores from the last fit of each side."""
    from benchmarks.probability_lean import _scores

    sides, probas = {}, {}
    for _ in range(repeats):
        for name, on in HELD_SIDES:
            cpu, solves, est = _held_fit(make, True, on, X, y)
            probas[name] = est.predict_proba(X_test)
            side = sides.setdefault(name, {"cpu": []})
            side["cpu"].append(cpu)
            side.update(solves=solves, refits=int(est.n_probability_fits_),
                        **_scores(probas[name], y_test, est.classes_, est.predict(X_test),
                                  truth))
    sides["after"]["max_diff"] = float(np.max(np.abs(probas["after"] - probas["before"])))
    return sides


def bench_held(with_s2=True):
    """``--held``: S1 at C = 'auto' and 1 and wine, then S2 at C = 'auto' (its probability
    fit once per side under ``S2_SIDE_CAP``)."""
    import os

    rows, load = {}, [os.getloadavg()[0]]
    sets = list(_sets(False, ("S1",)))
    if with_s2:
        X, y, X_test, truth = _scenario("S2")
        from msvm.datasets import make_targeted_example

        y_test = make_targeted_example(2000, "S2", random_state=1)[1]
        sets.append((f"S2 (n = {len(y)})", "auto", X, y, X_test, y_test, truth))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, C, X, y, X_test, y_test, truth in sets:
            print(f"{name}, C = {C}", flush=True)
            make = _maker(C)
            row = _held_one_fit(make, X, y, X_test)
            s2 = name.startswith("S2")
            row["probability"] = (_capped(S2_SIDE_CAP, _held_probability, make, X, y,
                                          X_test, y_test, truth, 1) if s2 else
                                  _held_probability(make, X, y, X_test, y_test, truth,
                                                    HELD_REPEATS))
            rows[f"{name}, C = {C}"] = row
            load.append(os.getloadavg()[0])
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "cap": S2_SIDE_CAP, "rows": rows, "min_samples": HELD_MIN_SAMPLES}


def _held_table(res):
    out = []
    for name, row in res["rows"].items():
        b, a = row["sides"]["before"], row["sides"]["after"]
        one = (f"{min(b['cpu']) * 1e3:.0f} -> {min(a['cpu']) * 1e3:.0f} "
               f"({min(a['cpu']) / min(b['cpu']):.2f}x)")
        prob = row["probability"]
        if prob is None:
            out.append([name, one, f"{b['solves']} / {a['solves']}",
                        f"{row['decision_diff']:.2g}", f"{row['objective_rel_diff']:.2g}",
                        f"{row['predict_agreement']:.4f}",
                        f"over the cap ({res['cap']} s wall)", "", "", "", ""])
            continue
        pb, pa = prob["before"], prob["after"]
        metric = "mae" if "mae" in pa else "log_loss"
        out.append([name, one, f"{b['solves']} / {a['solves']}",
                    f"{row['decision_diff']:.2g}", f"{row['objective_rel_diff']:.2g}",
                    f"{row['predict_agreement']:.4f}",
                    f"{min(pb['cpu']):.2f} -> {min(pa['cpu']):.2f} "
                    f"({min(pa['cpu']) / min(pb['cpu']):.2f}x)",
                    f"{pb['solves']} / {pa['solves']} ({pb['refits']} / {pa['refits']})",
                    f"{metric} {pb[metric]:.4f} / {pa[metric]:.4f}", f"{pa['max_diff']:.3g}",
                    f"{pb['agreement']:.4f} / {pa['agreement']:.4f}"])
    return markdown_table(["data, C", "one fit CPU (ms)", "grid solves", "largest decision diff",
                           "largest objective rel. diff", "predict agrees",
                           "probability fit CPU (s)", "grid solves (fits)", "score",
                           "largest proba diff", "argmax = predict"], out)


def _held_part(res):
    return (
        "#### Round 17, later: every grid point solved on its held samples only\n\n"
        + _run_line(res) + " Written by `benchmarks/probability_targeted.py --held`. "
        "CPU time (`time.process_time`). 'before': `msvm.targeted.SOLVE_ON_HELD_SAMPLES = "
        "False` (main 01872e7: every grid point's dual over all n samples on one row source); "
        "'after': `True` (a grid point whose epanechnikov weights hold m < n samples solved on "
        "a row source of those m rows, its dual and marks expanded back to n; SMO's epoch "
        "budgets scaled by n / m, the smoothed-primal start decided as on the n samples; "
        f"from {res.get('min_samples', 0)} training samples, `HELD_MIN_SAMPLES`). The sides "
        "alternate in one process; one fit and the "
        f"probability fit the least of {HELD_REPEATS} (S2's probability fit: once a side, "
        f"under a wall-clock cap of {res['cap']} s for both). Differences are after against "
        "before: the decision values and probabilities at 2000 test samples of draw 1 "
        "(wine: its 30 % test part), the grid points' objectives (relative), the predicted "
        "labels. Score: MAE against the true probabilities (wine: log loss), before / "
        "after.\n\n" + _held_table(res) + "\n")


# --late-start: the sides, as msvm.targeted.LATE_START_EPOCHS (0: main c94be25)
LATE_SIDES = (("before", 0), ("after", 60))
LATE_REPEATS = 3
# the parts of a stage's CPU that the profile times (inclusive CPU, summed by stage)
LATE_TIMERS = (("compiled solver", "_sequence", "DualSequence", "_run_solver"),
               ("late primal starts", "_sequence", "DualSequence", "_late_primal_start"),
               ("exact finishing steps", "_sequence", "DualSequence", "_exact_step"))
# (scenario, n, C, draws) of the MAE check over draws (n None: the scenario's default)
LATE_DRAWS = (("S1", None, "auto", range(6)), ("S1", None, 1.0, range(6)),
              ("S2", None, "auto", range(2)))


def _late_side(epochs):
    from msvm import targeted

    return module_settings((targeted, "LATE_START_EPOCHS", epochs))


def _late_timers():
    import importlib

    return [(label, getattr(importlib.import_module(f"msvm.{module}"), owner), name)
            for label, module, owner, name in LATE_TIMERS]


def _late_fit(make, epochs, X, y, X_test, y_test, truth):
    """One probability fit of the side ``epochs``: CPU, its stages (``_stages`` with the
    timers of ``LATE_TIMERS``), refits, C factor, scores and test probabilities."""
    from benchmarks.probability_lean import _scores

    counts = {}
    with _late_side(epochs), _stages(counts, _late_timers()):
        cpu, est = _cpu_fit(make(True), X, y)
    proba = est.predict_proba(X_test)
    for entry in counts.values():
        epochs_run = entry.pop("epochs", [])
        entry["epochs_median"] = float(np.median(epochs_run)) if epochs_run else 0.0
    side = {"cpu": [cpu], "stages": counts, "refits": int(est.n_probability_fits_),
            "factor": float(est.probability_C_factor_),
            **_scores(proba, y_test, est.classes_, est.predict(X_test), truth)}
    return side, proba


def _late_row(C, X, y, X_test, y_test, truth, repeats, platt=True):
    """One row of ``--late-start``: one fit (the least of 5, of 3 with one repeat), the
    sides alternating (the least of ``repeats`` CPU times; stages and scores from the
    last), Platt where asked."""
    from benchmarks.probability_lean import _platt, _scores

    make = _maker(C)
    one = min(_cpu_fit(make(False), X, y)[0] for _ in range(5 if repeats > 1 else 3))
    row = {"n": len(y), "one_fit": one, "sides": {}}
    probas = {}
    for _ in range(repeats):
        for name, epochs in LATE_SIDES:
            side, probas[name] = _late_fit(make, epochs, X, y, X_test, y_test, truth)
            if name in row["sides"]:
                side["cpu"] = row["sides"][name]["cpu"] + side["cpu"]
            row["sides"][name] = side
    row["sides"]["after"]["max_diff"] = float(np.max(np.abs(probas["after"]
                                                            - probas["before"])))
    if platt:
        row["platt_cpu"], fitted = _platt(make, X, y)
        row["platt"] = _scores(fitted.predict_proba(X_test), y_test, fitted.classes_,
                               fitted.predict(X_test), truth)
    return row


def _late_draws():
    """Before and after on several draws (``LATE_DRAWS``; one probability fit a side and
    draw, before first): MAE against the truth of 2000 test samples of draw 100, CPU."""
    from msvm.datasets import make_targeted_example

    rows = []
    for scenario, n, C, draws in LATE_DRAWS:
        X_test, _ = make_targeted_example(2000, scenario, random_state=100)
        truth = targeted_proba(X_test, scenario)
        for draw in draws:
            X, y = make_targeted_example(n, scenario, random_state=draw)
            row = {"scenario": scenario, "n": len(y), "C": C, "draw": draw}
            for name, epochs in LATE_SIDES:
                row[name] = _draw_fit(C, _late_side(epochs), X, y, X_test, truth)
            rows.append(_printed_draw(f"{scenario} n = {len(y)}, C = {C}, draw {draw}", row))
    return rows


def bench_late(with_s2=True):
    """``--late-start``: S1 at C = 'auto' and 1 (the least of ``LATE_REPEATS``), S2 at
    C = 'auto' (once a side, under ``S2_SIDE_CAP``), then the draws."""
    import os

    rows, load = {}, [os.getloadavg()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for scenario in ("S1", "S2") if with_s2 else ("S1",):
            X, y, X_test, truth = _scenario(scenario)
            from msvm.datasets import make_targeted_example

            y_test = make_targeted_example(2000, scenario, random_state=1)[1]
            for C in ("auto", 1.0) if scenario == "S1" else ("auto",):
                name = f"{scenario} (n = {len(y)}), C = {C}"
                print(name, flush=True)
                rows[name] = (_late_row(C, X, y, X_test, y_test, truth, LATE_REPEATS)
                              if scenario == "S1" else
                              _capped(S2_SIDE_CAP, _late_row, C, X, y, X_test, y_test,
                                      truth, 1, False))
                load.append(os.getloadavg()[0])
        draws = _late_draws() if with_s2 else []
        load.append(os.getloadavg()[0])
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "cap": S2_SIDE_CAP, "rows": rows, "draws": draws,
            "sides": dict(LATE_SIDES)}


LATE_STAGES = ("estimator's own fit", "folds' own fits", "folds' top fits at 3 C",
               "folds' chains", "full data's top fits at 3 C", "full data's chains")


def _late_profile_table(res):
    out = []
    labels = [label for label, *_ in LATE_TIMERS]
    for name, row in res["rows"].items():
        if row is None:
            continue
        for side_name, side in row["sides"].items():
            for stage in LATE_STAGES:
                entry = side["stages"].get(stage)
                if entry is None:
                    continue
                timers = entry.get("timers", {})
                parts = [timers.get(label, [0.0, 0]) for label in labels]
                rest = entry["cpu"] - sum(part[0] for part in parts)
                out.append([name, side_name, stage, entry["solves"], entry.get("kept", 0),
                            f"{entry['cpu']:.2f}",
                            *[f"{cpu:.2f} ({calls})" for cpu, calls in parts],
                            f"{rest:.2f}", f"{entry.get('epochs_median', 0.0):g}"])
    return markdown_table(["data, C", "side", "stage", "grid solves", "kept", "CPU in them (s)",
                           *[f"{label} (s, calls)" for label in labels],
                           "rest (s)", "epochs a solve (median)"], out)


def _late_table(res):
    out = []
    for name, row in res["rows"].items():
        if row is None:
            out.append([name, f"over the cap ({res['cap']} s wall)", *[""] * 9])
            continue
        before = row["sides"]["before"]
        for side_name, side in row["sides"].items():
            metric = "mae" if "mae" in side else "log_loss"
            cpu = min(side["cpu"])
            platt = row.get("platt_cpu")
            solves = sum(entry["solves"] for entry in side["stages"].values())
            change = side[metric] - before[metric]
            out.append([name, side_name, f"{cpu:.2f}", f"{cpu / row['one_fit']:.1f}x",
                        "" if platt is None else f"{cpu / platt:.2f}x", side["refits"], solves,
                        f"{metric} {side[metric]:.4f} ({change:+.4f})",
                        f"{side.get('max_diff', 0.0):.3g}", f"{side['agreement']:.4f}",
                        f"{side['factor']:g}"])
    return markdown_table(["data, C", "side", "CPU (s)", "x one fit", "x Platt", "fits",
                           "grid solves", "score (change)", "largest diff",
                           "argmax = predict", "C factor"], out)


def _late_draws_table(draws):
    groups = {}
    for row in draws:
        groups.setdefault((row["scenario"], row["n"], row["C"]), []).append(row)
    out = []
    for (scenario, n, C), rows in groups.items():
        out.append([scenario, n, C, len(rows), *_draw_changes(rows)])
    return markdown_table(["scenario", "n", "C", "draws", "CPU after / before (median)",
                           "MAE before (mean)", "MAE change (mean)", "MAE change (range)",
                           "draws over +0.002", "C factor changed"], out)


def _late_targets(res):
    lines = []
    for name, row in res["rows"].items():
        if row is None:
            lines.append(f"- {name}: over the cap")
            continue
        after, before = row["sides"]["after"], row["sides"]["before"]
        metric = "mae" if "mae" in after else "log_loss"
        limit = 0.002 if metric == "mae" else 0.01
        text = _cost_targets(name, row, after)
        change = after[metric] - before[metric]
        verdict = "met" if change <= limit else "NOT met"
        text += (f", {metric} {change:+.4f} on this draw ({verdict})"
                 f", argmax = predict {after['agreement']:.4f}")
        lines.append(text)
    return "\n".join(lines)


def _late_part(res):
    ones = ", ".join(f"{name} {row['one_fit'] * 1e3:.0f} ms"
                     for name, row in res["rows"].items() if row is not None)
    platts = ", ".join(f"{name} {row['platt_cpu'] * 1e3:.0f} ms"
                       for name, row in res["rows"].items()
                       if row is not None and "platt_cpu" in row)
    return (
        "#### Round 18: where the CPU goes, and the late smoothed-primal start weighed\n\n"
        + _run_line(res) + " Written by `benchmarks/probability_targeted.py --late-start`. "
        "CPU time (`time.process_time`). 'before': main c94be25 "
        "(`msvm.targeted.LATE_START_EPOCHS = 0`: a warm level's grid solve on its held "
        "samples takes the late smoothed-primal start at its first budget stop, after "
        "`FINISH_MIN` = 10 epochs); 'after': "
        f"`LATE_START_EPOCHS = {res['sides']['after']}` (it runs on while the residual's "
        "decay predicts convergence within that many epochs, the start's cost, unless the "
        "same grid point's previous fit took the start). S1: the sides alternating, the "
        f"least of {LATE_REPEATS} CPU times, stages and scores from the last fit of each "
        "side; one fit (probability=False) the least of 5 (" + ones + "); Platt: "
        "CalibratedClassifierCV(same estimator, method='sigmoid', cv=5) (" + platts + "). "
        "S2: one probability fit a side, before first, under a wall-clock cap of "
        f"{res['cap']} s, one fit the least of 3. 'largest diff': of the test "
        "probabilities against 'before'. MAE against the true probabilities of 2000 test "
        "samples of draw 1.\n\n"
        "Where the CPU goes: each stage's grid solves (`_solve_grid_point`, inclusive), and "
        "in them the compiled solver's runs (`DualSequence._run_solver`), the late "
        "smoothed-primal starts (`_late_primal_start`: the Newton continuation of "
        "msvm/_primal.py, called at a budget stop; calls that found the start not to apply "
        "counted too) and the exact finishing steps (`_exact_step`); 'rest': the Python "
        "around them (the problems, the held samples' row sources, the score moves, the "
        "snapshots). 'kept': grid points a refit took as they were. Epochs in epochs of the "
        "n samples (a held solve's scaled by m / n).\n\n"
        + _late_profile_table(res) + "\n\n" + _late_table(res) + "\n\n"
        + _targets_and_draws(_late_targets(res), res.get("draws") and (
            "The MAE against the truth over draws (draws 0, 1, ... of "
            "`make_targeted_example` at the default n; 2000 test samples of draw 100; one "
            "probability fit a side and draw, before first; CPU of that one fit each).\n\n"
            + _late_draws_table(res["draws"]))))


# --lean-steps: the sides, as msvm._primal.LEAN_SMALL_STEPS (False: main 57d2948)
LEAN_SIDES = (("before", False), ("after", True))
LEAN_REPEATS = 3


def _lean_side(on):
    from msvm import _primal

    return module_settings((_primal, "LEAN_SMALL_STEPS", on))


def _recorded_starts(X, y):
    """The arguments of every smoothed-primal start of one S1 probability fit (C = 'auto')."""
    from msvm import _primal, _sequence

    calls = []

    def recorded(problem, X, W, mu0, tol, diag, max_steps, out=None):
        calls.append((problem, X, np.array(W), np.array(mu0), tol, np.array(diag), max_steps))
        return _primal.primal_start(problem, X, W, mu0, tol, diag, max_steps, out)

    with module_settings((_sequence, "primal_start", recorded)):
        _maker("auto")(True).fit(X, y)
    return calls


def _replayed_starts(calls, on):
    """(CPU of each start, its (alpha, mu)) on the side ``on``."""
    from msvm import _primal

    times, points = [], []
    with _lean_side(on):
        for call in calls:
            start = time.process_time()
            points.append(_primal.primal_start(*call))
            times.append(time.process_time() - start)
    return np.array(times), points


def _lean_starts(X, y):
    """The late starts' row: the least CPU of each start over the sides' alternating
    replays, its median and sum, and the starts whose dual points differ."""
    calls = _recorded_starts(X, y)
    times = {name: [] for name, _ in LEAN_SIDES}
    points = {}
    for _ in range(LEAN_REPEATS):
        for name, on in LEAN_SIDES:
            t, points[name] = _replayed_starts(calls, on)
            times[name].append(t)
    pairs = list(zip(points["before"], points["after"]))
    differ = sum(not (np.array_equal(a0, a1) and np.array_equal(m0, m1))
                 for (a0, m0), (a1, m1) in pairs)
    largest = max((float(np.max(np.abs(a0 - a1), initial=0.0)) for (a0, _), (a1, _) in pairs),
                  default=0.0)
    row = {"starts": len(calls), "differ": differ, "largest_alpha_diff": largest}
    for name, t in times.items():
        least = np.min(t, axis=0)
        row[name] = {"median_ms": float(np.median(least)) * 1e3, "sum": float(least.sum())}
    return row


def _lean_fit_row(make, X, y, X_test, repeats):
    """CPU of ``make()``'s fit, the sides alternating (the least of ``repeats``), and the
    largest difference of the test probabilities (or decision values) between them."""
    cpu, out = {name: [] for name, _ in LEAN_SIDES}, {}
    for _ in range(repeats):
        for name, on in LEAN_SIDES:
            with _lean_side(on):
                seconds, est = _cpu_fit(make(), X, y)
            cpu[name].append(seconds)
            out[name] = (est.predict_proba(X_test) if hasattr(est, "predict_proba")
                         and getattr(est, "probability", False) else est.decision_function(X_test))
    diff = float(np.max(np.abs(out["before"] - out["after"])))
    return {**{name: min(c) for name, c in cpu.items()}, "largest_diff": diff}


def _linear_case():
    from sklearn.datasets import make_classification

    from msvm import ReinforcedMSVM

    X, y = make_classification(n_samples=20000, n_features=20, n_informative=10,
                               n_classes=5, random_state=0)
    return (lambda: ReinforcedMSVM(kernel="linear", C=1e3)), X, y, X[:2000]


def bench_lean(with_s2=True):
    """``--lean-steps``: see the module note."""
    import os

    rows, load = {}, [os.getloadavg()[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y, X_test, _ = _scenario("S1")
        print("late starts", flush=True)
        rows["late starts of one S1 probability fit, C = auto"] = _lean_starts(X, y)
        load.append(os.getloadavg()[0])
        for C in ("auto", 1.0):
            print(f"S1, C = {C}", flush=True)
            rows[f"S1 (n = {len(y)}) probability fit, C = {C}"] = _lean_fit_row(
                lambda C=C: _maker(C)(True), X, y, X_test, LEAN_REPEATS)
            load.append(os.getloadavg()[0])
        if with_s2:
            X2, y2, X2_test, _ = _scenario("S2")
            print("S2", flush=True)
            rows[f"S2 (n = {len(y2)}) probability fit, C = auto"] = _capped(
                S2_SIDE_CAP, _lean_fit_row, lambda: _maker("auto")(True), X2, y2, X2_test, 1)
            load.append(os.getloadavg()[0])
        print("linear", flush=True)
        make, XL, yL, XL_test = _linear_case()
        rows["ReinforcedMSVM linear, n = 20,000, d = 20, k = 5, C = 1e3"] = _lean_fit_row(
            make, XL, yL, XL_test, LEAN_REPEATS)
        load.append(os.getloadavg()[0])
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": load, "cap": S2_SIDE_CAP, "rows": rows}


def _lean_table(res):
    table = []
    for name, row in res["rows"].items():
        if row is None:
            table.append([name, f"over {res['cap']} s", "", "", ""])
        elif "starts" in row:
            before, after = row["before"], row["after"]
            table.append([f"{name}: one start, median ms ({row['starts']} starts)",
                          f"{before['median_ms']:.2f}", f"{after['median_ms']:.2f}",
                          f"{after['median_ms'] / before['median_ms']:.2f}x",
                          f"{row['differ']} differ, largest {row['largest_alpha_diff']:.1e}"])
            table.append([f"{name}: all starts, s", f"{before['sum']:.3f}",
                          f"{after['sum']:.3f}", f"{after['sum'] / before['sum']:.2f}x", ""])
        else:
            table.append([f"{name}, s", f"{row['before']:.3f}", f"{row['after']:.3f}",
                          f"{row['after'] / row['before']:.2f}x",
                          f"{row['largest_diff']:.1e}"])
    return markdown_table(["", "before (CPU)", "after (CPU)", "after / before",
                           "largest diff"], table)


def _lean_part(res):
    return (
        "#### Round 18, later: the late start's Python per Newton step\n\n"
        + _run_line(res) + " Written by `benchmarks/probability_targeted.py --lean-steps`. "
        "CPU time (`time.process_time`), the sides alternating in one process. 'before': "
        "main 57d2948 (`msvm._primal.LEAN_SMALL_STEPS = False`); 'after': "
        "`LEAN_SMALL_STEPS = True`: the Newton matrix's slot means by ufunc reductions "
        "instead of `np.mean`, its I (x) 11^T / k formed once per shape instead of by "
        "`np.kron` at every step, the Cholesky factorization and solve by LAPACK's potrf and "
        "potrs directly (what `scipy.linalg.cho_factor` and `cho_solve` call, without their "
        "checks), a curvature block's symmetric copy with one `np.triu` fewer. The same "
        "iterates bit for bit. Late starts: every smoothed-primal start of one S1 "
        "probability fit (C = 'auto') recorded, then replayed on each side "
        f"{LEAN_REPEATS} times, each start's CPU the least of its replays; 'largest diff' "
        "the dual points' (starts whose point or multiplier differ in any bit counted). "
        f"Fits: the least of {LEAN_REPEATS} (S2: once a side, under a wall-clock cap of "
        f"{res['cap']} s); 'largest diff': of the probabilities (the linear fit: of the "
        "decision values) on 2000 test samples.\n\n"
        + _lean_table(res) + "\n\n"
        "The rest of a step's Python is the curvature's block updates (`_add_blocks`: two "
        "`np.unique`, one syrk per slot pair and sign) and the compiled passes' wrappers; "
        "a compiled small-primal step was not attempted in this round. S2's single fits "
        "a side move with the load more than S1's least of 3.\n")


def render_all(res):
    """The section: :func:`render` and, where their runs wrote them, the S2 and 'tried'
    parts."""
    text = render(res)
    for name, part in (("probability_targeted_s2.json", _s2_part),
                       ("probability_targeted_tried.json", _tried_part),
                       ("probability_targeted_grid.json", _grid_part),
                       ("probability_targeted_held.json", _held_part),
                       ("probability_targeted_late.json", _late_part),
                       ("probability_targeted_lean.json", _lean_part)):
        path = RESULTS / name
        if path.exists():
            text += "\n" + part(json.loads(path.read_text()))
    return text


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    md = RESULTS / "probability.md"
    for flag, run, name in (("--S2-after", bench_s2, "probability_targeted_s2.json"),
                            ("--tried", bench_tried, "probability_targeted_tried.json"),
                            ("--grid-share", lambda: bench_grid("--no-S2" not in argv),
                             "probability_targeted_grid.json"),
                            ("--held", lambda: bench_held("--no-S2" not in argv),
                             "probability_targeted_held.json"),
                            ("--late-start", lambda: bench_late("--no-S2" not in argv),
                             "probability_targeted_late.json"),
                            ("--lean-steps", lambda: bench_lean("--no-S2" not in argv),
                             "probability_targeted_lean.json")):
        if flag in argv:
            (RESULTS / name).write_text(json.dumps(run(), indent=2) + "\n")
            argv = [*argv, "--render"]
    if "--render" in argv:
        # the section again from the last runs' numbers (probability_targeted*.json)
        res = json.loads((RESULTS / "probability_targeted.json").read_text())
        md.write_text(splice(md.read_text(), render_all(res)))
        return 0
    quick = "--quick" in argv
    # --no-S2: S1 and wine only (S2's rows took over 20 minutes at a load of 10)
    res = bench(quick, ("S1",) if "--no-S2" in argv else ("S1", "S2"))
    print(render(res))
    if quick:
        return 0
    (RESULTS / "probability_targeted.json").write_text(json.dumps(res, indent=2) + "\n")
    md.write_text(splice(md.read_text(), render_all(res)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
