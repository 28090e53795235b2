"""The finishing step timed by the solve's progress (``msvm._sequence.FINISH_RULE``, round 17).

    python -m benchmarks.finish_rule --parts cost,targeted,pendigits2k,pendigits,overhead
    python -m benchmarks.finish_rule --render      # the report again from the JSON

(from the repository root).  Every case is fitted in one process, alternating the arms
'main' (``FINISH_RULE = False``: main aae56db's fixed first budget and a step at every stop
where it is due) and 'rule' (``FINISH_RULE = True``), and for the pendigits probability fit
also 'rule, no fold override' (``msvm._plan.FOLD_FINISH_AFTER = 0`` as well); reported per
arm: the least CPU time (``time.process_time``) of ``--repeat`` runs, whether the fit
converged, its solver epochs, its objective, the exact finishing steps taken and their CPU
time, and for probability fits the test probabilities' quality.  Each part runs under a
wall-clock cap (``--cap`` seconds a case; a case over it is reported as such).  Parts are
merged into benchmarks/results/finish_rule.json; benchmarks/results/finish_rule.md is
rendered from it.  Timings are measured and reported, never asserted.
"""

import argparse
import contextlib
import json
import os
import subprocess
import time
import warnings
from datetime import datetime, timezone

import numpy as np

from benchmarks.harness import markdown_table, module_settings, pendigits_split
from benchmarks.probability_targeted import _capped

RESULTS = os.path.join(os.path.dirname(__file__), "results")
JSON = os.path.join(RESULTS, "finish_rule.json")
REPORT = os.path.join(RESULTS, "finish_rule.md")


# ------------------------------------------------------------------------------ arms
def arms(fold_arm=False):
    """{arm: settings} of a case (``module_settings`` triples)."""
    from msvm import _plan, _sequence

    out = {"main": [(_sequence, "FINISH_RULE", False)],
           "rule": [(_sequence, "FINISH_RULE", True)]}
    if fold_arm:
        out["rule, no fold override"] = [(_sequence, "FINISH_RULE", True),
                                         (_plan, "FOLD_FINISH_AFTER", 0)]
    return out


@contextlib.contextmanager
def counted_steps():
    """Count the exact finishing steps (msvm/_finish.py, msvm/_finish_groups.py) taken in
    the block and their CPU time: yields a dict."""
    from msvm import _sequence

    counts = {"steps": 0, "returned": 0, "cpu": 0.0}
    saved = {name: getattr(_sequence, name) for name in ("finish_dual", "finish_grouped")}

    def wrapped(function):
        def step(*args, **kwargs):
            start = time.process_time()
            out = function(*args, **kwargs)
            counts["cpu"] += time.process_time() - start
            counts["steps"] += 1
            counts["returned"] += out is not None
            return out
        return step

    for name, function in saved.items():
        setattr(_sequence, name, wrapped(function))
    try:
        yield counts
    finally:
        for name, function in saved.items():
            setattr(_sequence, name, function)


def one_run(make, X, y, settings, score):
    """One fit of ``make()`` under ``settings``: its row (and the estimator)."""
    est = make()
    with module_settings(*settings), counted_steps() as steps, \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        est.fit(X, y)
        cpu = time.process_time() - start
    row = {"cpu": cpu, "steps": steps["steps"], "steps_cpu": steps["cpu"],
           "converged": bool(getattr(est, "converged_", True)),
           "warned": sum("ConvergenceWarning" in type(c.message).__name__ for c in caught)}
    for name in ("n_solver_iter_", "n_iter_"):
        if hasattr(est, name):
            row["epochs"] = int(np.sum(getattr(est, name)))
            break
    objective = getattr(est, "objective_", None)
    if objective is None and hasattr(est, "objectives_"):
        objective = float(np.sum(est.objectives_))
    row["objective"] = None if objective is None else float(objective)
    if score is not None:
        row.update(score(est))
    return row, est


# ``--only``: the substrings of the case names to run (the others are left out)
ONLY = []


def wanted(name):
    """Whether the case ``name`` is run (``--only``)."""
    return not ONLY or any(part in name for part in ONLY)


def compare(make, X, y, repeat, fold_arm=False, score=None, proba_of=None):
    """Alternate the arms ``repeat`` times; per arm the run of least CPU time, and the
    largest difference of the arms' test probabilities from 'main' (``proba_of``)."""
    rows, probas = {}, {}
    for _ in range(repeat):
        for arm, settings in arms(fold_arm).items():
            row, est = one_run(make, X, y, settings, score)
            if arm not in rows or row["cpu"] < rows[arm]["cpu"]:
                rows[arm] = row
            if proba_of is not None:
                probas[arm] = proba_of(est)
    for arm in probas:
        rows[arm]["largest_diff"] = float(np.max(np.abs(probas[arm] - probas["main"])))
    return rows


# what the tables show, and what was tried and not kept (written after the runs)
SUMMARY = """\
The rule (`msvm._sequence.finish_timely`, `DualSequence._timely`, `_first_budget`): a
warm-started solve (not a DC step) stops first after the predicted cost of the step it then
takes, in epochs (the late smoothed-primal start where it applies: none, so `FINISH_MIN` =
10; else the exact finishing step on the start's free set), at most `FINISH_AFTER` = 100; a
cold start keeps 100.  At a stop the step that `_finish_due` allows is put off while the
epochs run have cost less than the step and either no decay of the KKT residual has been
measured yet (the first stop) or the decay per epoch since the previous stop predicts
convergence in fewer epochs than the step costs; a step put off comes at the next stop,
after the epochs still owed to its cost (at least 10, at most the doubled budget).  Before
the solver's last run the step is taken as before.  Costs are predicted from a model of CPU
seconds (`epoch_seconds`: 4e-7 s a variable plus 1e-10 s a multiply-add of n x width x k;
`step_epochs`: 6e-11 m^3 + 1e-4 m for msvm/_finish.py, 1.5e-9 m^3 + 4e-4 m for the grouped
step; fitted this round to the traces of the cases below), never from timings, so that
fits stay deterministic.

Results.  Where it should win it does: the cost-matrix duals whose solver converges by
itself soon after 100 epochs no longer pay the grouped step (n = 300, k = 4, C = 1: 2.08
-> 0.39 s and 2.00 -> 0.30 s; n = 100, k = 5: 2.03 -> 0.23 s); at C = 50 the step comes
later on a settled face (9.69 -> 5.92 s); TargetedLocalMSVM S2 one fit 1.94 -> 1.03 s,
probability fit 60.4 -> 25.7 s (MAE 0.0279 -> 0.0280, argmax = predict).  Nowhere else
does it move a fit measurably: pendigits 2,000 one fit and probability fit, pendigits 7,694
at C = 10 and C = 256 (gamma = 1/32: the same 551 epochs and two steps above MAX_FREE that
return at once, 0.01 s, on both arms), the linear cost-matrix case (the late primal start
at 100 epochs as before), and six of the eight slow converging cells of the convergence
matrix at n = 3,000 (the same epochs and objectives: there the exact step is most of the fit
and is taken where main takes it).  Where it loses: AdaptiveWeightedSVM's reweighting
refits (warm starts) take their exact step earlier, on poly at C = 1e8 9.60 -> 7.11 s but
at C = 1e4 7.96 -> 8.89 s (+12 %: the step at the refit's 10-epoch stop cost 8.4 s against
6.9 s at main's 100; the cost model, fitted on RBF and per-class duals, predicts these
poly steps far cheaper than they are); TargetedLocalMSVM S1's one fit 0.079 -> 0.098 s
(+24 %) and probability fit 1.96 -> 2.19 s (+12 %, least of 3; MAE 0.0498 -> 0.0495): its
warm grid solves that run past 10 epochs now take the late smoothed-primal start, which the
rule counts as free but which costs 5 ms there (36 ms on S2), about 15 epochs of S1's
(reruns 'matrix (recheck)', 'targeted (recheck)' and 'targeted (recheck, S1 one fit)').
The rule's own cost where no step is taken: 20 warm refits of 3 epochs 0.0708 -> 0.0714 s
(least of 3); a cold fit that converges within 100 epochs runs nothing new.  Fingerprint
(main's 38 fits): 38 of 38 identical.

The calibration folds' override (`msvm._plan.FOLD_FINISH_AFTER` = 400) is no longer needed
with the rule: without it the folds' own fits stop at 100 epochs, the step on about 2,000
free variables is put off, and the solver converges first (probability fit 2.14 s against
2.16 s with the override, log loss 0.03903 against 0.03897, largest probability difference
0.005).  It is kept, so that the probabilities stay those of main.

Not done (next): the late primal start's true cost in the model (5 ms on S1, 36 ms on S2
a start, measured by wrapping `DualSequence._late_primal_start`) against a true epoch cost
(the model's 4e-7 s a variable overestimates these small duals' epochs about 3-4x), which
would give S2's grid solves a first stop near 45 epochs and S1's near 15.  One ad hoc trial
(in one process, least of 3, the start modelled as 2e-3 s + 6e-7 n d k against the same
epoch model) moved nothing: S1 one fit 0.111 s against the rule's 0.113 s, S1 probability
fit 2.34 against 2.23 s, S2 one fit 1.00 against 0.99 s (main: 0.084, 2.05, 1.95 s): with
the epoch overestimated, both first stops stay at 10 epochs.  The parts 'cost',
'targeted' and 'pendigits2k' ran on commit 1de62d7, before DC steps were left out of the
early first stop and before `_exact_step` was split off (no DC step in those fits, the same
calls: the same code path).

Tried and not kept.  (1) A cold start's residual assumed 1 (the hinge's unit margin) at
epoch 0, so that the first stop already had a decay: the cost-matrix case n = 100, k = 5
stopped at a residual of 1.0007 and took main's step (2.16 s); waiting one stop for a
measured decay gives 0.23 s.  (2) The early first stop in DC steps as well: an exact step
from the 10-epoch stop of a DC step gave another of the step's optimal points, and the DC
path went on to another local minimum (WeightedRobustMSVM, linear, the data of
tests/test_intercept_solver.py: 78.136 against 78.061 of main and of its linprog twin,
failing that test; the fingerprint's robust-linear fit 39.80832 -> 39.80888, relative
1.4e-5); DC steps (`gap_scale` > 0) keep the first budget of 100.
"""


# ----------------------------------------------------------------------------- cases
def cost_cases():
    """The cost-matrix cases (benchmarks/run_grouped_cost_matrix.py's; six of them)."""
    from sklearn.datasets import make_blobs

    from benchmarks.run_grouped_cost_matrix import cost_matrix
    from msvm import WeightedRobustMSVM

    X3, y3 = make_blobs(n_samples=300, centers=4, n_features=3, random_state=0)
    specs = [(300, 4, 3, 1.0, "rbf", 0), (300, 4, 3, 50.0, "rbf", 0),
             (300, 4, 3, 1.0, "rbf", 1), (100, 5, 3, 1.0, "rbf", 2),
             (100, 3, 2, 1e4, "rbf", 3), (1000, 3, 2, 10.0, "linear", 5)]
    for n, k, d, C, kernel, seed in specs:
        X, y = ((X3, y3) if n == 300 else
                make_blobs(n_samples=n, centers=k, n_features=d, random_state=seed))
        cost = cost_matrix(k, seed)

        def make(C=C, cost=cost, kernel=kernel):
            return WeightedRobustMSVM(C=C, cost=cost, truncation=None, kernel=kernel,
                                      max_iter=3000)
        yield (f"WeightedRobustMSVM cost matrix (seed {seed}), blobs n = {n}, k = {k}, "
               f"{kernel}, C = {C:g}", make, X, y)


def part_cost(repeat, cap):
    return {name: _capped(cap, compare, make, X, y, repeat)
            for name, make, X, y in cost_cases() if wanted(name)}


def part_targeted(repeat, cap):
    """TargetedLocalMSVM S2 one fit and probability fit; S1 probability fit (C = 'auto')."""
    from benchmarks.probability_targeted import _scenario
    from msvm import TargetedLocalMSVM

    out = {}
    for scenario in ("S2", "S1"):
        X, y, X_test, truth = _scenario(scenario)

        def score(est, X_test=X_test, truth=truth):
            if not getattr(est, "probability", False):
                return {}
            proba = est.predict_proba(X_test)
            return {"mae": float(np.mean(np.abs(proba - truth))),
                    "agreement": float(np.mean(est.classes_[np.argmax(proba, axis=1)]
                                               == est.predict(X_test)))}

        def proba_of(est, X_test=X_test):
            return est.predict_proba(X_test) if est.probability else np.zeros(1)

        if not wanted(scenario):
            continue
        if scenario == "S2" or "S1 one fit" in ONLY:
            out[f"TargetedLocalMSVM {scenario} (n = {len(y)}) one fit"] = _capped(
                cap, compare, lambda: TargetedLocalMSVM(C="auto", random_state=0), X, y,
                repeat, False, score)
        out[f"TargetedLocalMSVM {scenario} (n = {len(y)}) probability fit"] = _capped(
            cap, compare, lambda: TargetedLocalMSVM(C="auto", probability=True,
                                                    random_state=0),
            X, y, repeat if scenario == "S1" else 1, False, score, proba_of)
    return out


def _pendigits_2000():
    from sklearn.model_selection import train_test_split

    X, X_test, y, y_test = pendigits_split(quick=False, seed=0)
    X2, _, y2, _ = train_test_split(X, y, train_size=2000, stratify=y, random_state=0)
    return X2, y2, X_test, y_test


def part_pendigits2k(repeat, cap):
    """Section 9l's setting: ReinforcedMSVM, C = 10, gamma 'scale', probability_grid 8."""
    from sklearn.metrics import log_loss

    from msvm import ReinforcedMSVM

    X, y, X_test, y_test = _pendigits_2000()

    def score(est):
        if not est.probability:
            return {}
        proba = est.predict_proba(X_test)
        return {"log_loss": float(log_loss(y_test, proba, labels=est.classes_)),
                "agreement": float(np.mean(est.classes_[np.argmax(proba, axis=1)]
                                           == est.predict(X_test)))}

    def proba_of(est):
        return est.predict_proba(X_test) if est.probability else np.zeros(1)

    def make(probability):
        return lambda: ReinforcedMSVM(C=10.0, gamma="scale", probability=probability,
                                      probability_grid=8)
    return {"ReinforcedMSVM pendigits 2,000, C = 10 one fit":
            _capped(cap, compare, make(False), X, y, repeat, False, score),
            "ReinforcedMSVM pendigits 2,000, C = 10 probability fit":
            _capped(cap, compare, make(True), X, y, repeat, True, score, proba_of)}


def part_pendigits(repeat, cap):
    """ReinforcedMSVM on the whole pendigits training set (7,694): C = 10 and C = 256,
    gamma = 1/32 (the C a tuning run selects)."""
    from msvm import ReinforcedMSVM

    X, _, y, _ = pendigits_split(quick=False, seed=0)
    return {f"ReinforcedMSVM pendigits 7,694, C = {C:g}, gamma = {g}":
            _capped(cap, compare, lambda C=C, g=g: ReinforcedMSVM(C=C, gamma=eval(g)), X, y,
                    repeat)
            for C, g in ((10.0, "1/16"), (256.0, "1/32"))}


def part_overhead(repeat, cap):
    """The rule's overhead where no finishing step is taken: pendigits 7,694 ReinforcedMSVM
    C = 10 (about 58 epochs) is in part 'pendigits'; here a small warm refit (make_blobs
    n = 500, k = 4, RBF, C = 10, then warm_start at C = 20) timed over 20 refits."""
    from sklearn.datasets import make_blobs

    from msvm import ReinforcedMSVM

    X, y = make_blobs(n_samples=500, centers=4, n_features=3, random_state=0)
    out = {}
    for arm, settings in arms().items():
        best = np.inf
        for _ in range(repeat):
            with module_settings(*settings):
                est = ReinforcedMSVM(C=10.0, warm_start=True).fit(X, y)
                start = time.process_time()
                for C in np.linspace(11.0, 30.0, 20):
                    est.set_params(C=float(C)).fit(X, y)
                best = min(best, time.process_time() - start)
        out[arm] = {"cpu": best, "epochs": int(est.n_iter_), "objective": float(est.objective_),
                    "converged": bool(est.converged_)}
    return {"ReinforcedMSVM warm refits, blobs n = 500, k = 4, C = 11 ... 30 (20 refits)": out}


# the slowest cells at n = 3,000 that converge in benchmarks/results/convergence_matrix.json
MATRIX_CELLS = (("WestonWatkinsMSVM", "poly", 1e4), ("WestonWatkinsMSVM", "poly", 1e6),
                ("WestonWatkinsMSVM", "poly", 1e8), ("AdaptiveWeightedSVM", "poly", 1e8),
                ("RobustMSVM", "rbf", 1e4), ("LLW", "rbf", 1e4),
                ("AdaptiveWeightedSVM", "poly", 1e4), ("WeightedRobustMSVM", "rbf", 1.0))


def part_matrix(repeat, cap):
    """The convergence matrix's slow cells at n = 3,000 that converge
    (benchmarks/run_convergence_matrix.py's data and estimators)."""
    from benchmarks.run_convergence_matrix import cell_data, make_estimator

    X, y, k = cell_data(3000)
    return {f"{model} {kernel} n = 3,000, C = {C:g}":
            _capped(cap, compare, lambda model=model, kernel=kernel, C=C:
                    make_estimator(model, C, kernel, k), X, y, repeat)
            for model, kernel, C in MATRIX_CELLS
            if wanted(f"{model} {kernel} n = 3,000, C = {C:g}")}


PARTS = {"matrix": part_matrix, "cost": part_cost, "targeted": part_targeted,
         "pendigits2k": part_pendigits2k, "pendigits": part_pendigits,
         "overhead": part_overhead}


# ---------------------------------------------------------------------------- report
def _fmt(row, arm):
    r = row.get(arm)
    if r is None:
        return None
    extra = []
    if "mae" in r:
        extra.append(f"MAE {r['mae']:.4f}")
    if "log_loss" in r:
        extra.append(f"log loss {r['log_loss']:.4f}")
    if "agreement" in r:
        extra.append(f"argmax = predict {r['agreement']:.4f}")
    if "largest_diff" in r and arm != "main":
        extra.append(f"largest diff {r['largest_diff']:.4f}")
    objective = "-" if r.get("objective") is None else f"{r['objective']:.8g}"
    return [arm, f"{r['cpu']:.2f}", str(r.get("converged", "")), str(r.get("epochs", "-")),
            objective, f"{r.get('steps', '-')} ({r.get('steps_cpu', 0.0):.2f} s)",
            "; ".join(extra)]


def render(res):
    lines = ["# The finishing step timed by the solve's progress (round 17)", "",
             __doc__.split("\n\n", 2)[2].strip(), "", SUMMARY]
    for part, run in res.items():
        lines += [f"## Part '{part}'", "",
                  f"Commit {run['commit']}, {run['date']}; load average (1 min) at the start "
                  f"and end: {run['load'][0]:.1f}, {run['load'][1]:.1f} (2 cores shared with "
                  f"five other engineers). CPU time, the least of {run['repeat']} "
                  f"(S2's probability fit: 1), arms alternating in one process; 'main' is "
                  f"main aae56db's behaviour restored in this process "
                  f"(`msvm._sequence.FINISH_RULE = False`).", ""]
        head = ["case", "arm", "CPU (s)", "converged", "epochs", "objective",
                "exact finishing steps (CPU)", "probabilities"]
        body = []
        for case, row in run["rows"].items():
            if row is None:
                body.append([case, "over the cap", "", "", "", "", "", ""])
                continue
            for arm in row:
                cells = _fmt(row, arm)
                body.append([case if arm == "main" else ""] + cells)
        lines += [markdown_table(head, body), ""]
        if run.get("notes"):
            lines += [run["notes"], ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--parts", default="cost,targeted,pendigits2k,pendigits,overhead")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--cap", type=int, default=600)
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated parts of case names")
    parser.add_argument("--tag", default="", help="store the parts as 'part (tag)'")
    args = parser.parse_args()
    ONLY.extend(filter(None, args.only.split(",")))
    res = json.load(open(JSON)) if os.path.exists(JSON) else {}
    if not args.render:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(__file__)).stdout.strip()
        for part in args.parts.split(","):
            load = [os.getloadavg()[0]]
            print(f"part {part}", flush=True)
            rows = PARTS[part](args.repeat, args.cap)
            load.append(os.getloadavg()[0])
            key = f"{part} ({args.tag})" if args.tag else part
            notes = res.get(key, {}).get("notes")
            res[key] = {"commit": commit, "repeat": args.repeat, "load": load, "rows": rows,
                         "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
            if notes:
                res[key]["notes"] = notes
            with open(JSON, "w") as f:
                json.dump(res, f, indent=1)
            print(json.dumps(rows, indent=1), flush=True)
    with open(REPORT, "w") as f:
        f.write(render(res) + "\n")


if __name__ == "__main__":
    main()
