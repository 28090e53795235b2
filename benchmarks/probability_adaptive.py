"""Section 9q of the probability benchmarks: AdaptiveWeightedSVM's probability chains with
frozen weights (issue 25 item 1, round 18).

Once the one-step weights v of ``msvm.weighted.FROZEN_WEIGHTS_MOVES`` successive levels of a
chain each differ from those of the level above by less than ``FROZEN_WEIGHTS_BELOW`` on
average, the levels below take the last v and skip their solve at v = 1.  In one process:

* where a probability fit's CPU time goes, part by part, on Liu and Yuan's examples 4.1.1
  and 4.1.2 (n = 400), before (main c94be25's refits, ``FROZEN_WEIGHTS_BELOW = None``) and
  after, alternating, the fit of least CPU time of 3 each;
* the probability fit before and after on those, wine and breast cancer (C = 1), against one
  fit and Platt scaling (``benchmarks.probability_lean.compare_row``);
* every variant (before, after, one small move, other thresholds) over three draws of each
  set: fits, compiled solves, the score (MAE against the true probabilities on the
  examples, log loss on the real sets), argmax = predict; before and after on six more
  draws of the examples.

Run through ``python -m benchmarks.run_probability_benchmarks --only 9q``.
"""

import contextlib
import os
import warnings

import numpy as np

from benchmarks.harness import markdown_table, module_settings
from benchmarks.probability_lean import _conditions, _scores
from benchmarks.probability_paths import (ADAPTIVE_PARTS, _brier, _change_cells, _counted,
                                          _dc_section, _dc_split_sets, _fit_parts, _maker,
                                          _parts_table, _rows_and_targets)

ESTIMATOR = "AdaptiveWeightedSVM"
# (label, (threshold, moves)): ``msvm.weighted.FROZEN_WEIGHTS_BELOW`` and
# ``FROZEN_WEIGHTS_MOVES`` of each variant; "before" is main c94be25's refits (threshold
# None), "after" this branch's defaults
VARIANTS = (("before", (None, 2)), ("after", "default"),
            ("one small move (not kept)", (0.15, 1)), ("threshold 0.05", (0.05, 2)),
            ("threshold 0.3", (0.3, 2)))
# the parts of section 9m with the frozen levels' own fit
PARTS = ADAPTIVE_PARTS[:-3] + (
    (None, "_frozen_weights_fit", "rest of a frozen level's fit"),) + ADAPTIVE_PARTS[-3:]


@contextlib.contextmanager
def frozen_at(setting):
    """``msvm.weighted.FROZEN_WEIGHTS_BELOW`` and ``FROZEN_WEIGHTS_MOVES`` set to
    ``setting`` (threshold, moves) for the block ("default": left as they are)."""
    from msvm import weighted

    if setting == "default":
        yield
        return
    with module_settings((weighted, "FROZEN_WEIGHTS_BELOW", setting[0]),
                         (weighted, "FROZEN_WEIGHTS_MOVES", setting[1])):
        yield


def main_refits():
    """main c94be25's chain refits in this process: every level solved at v = 1 first."""
    return frozen_at(VARIANTS[0][1])


def adaptive_frozen_parts(make, X, y, repeats=3):
    """Exclusive CPU time per part (``PARTS``) of one probability fit, before and after
    alternating, with the refits and the compiled solves counted."""
    return _fit_parts(make, X, y, PARTS, main_refits, repeats)


def variant_fit(make, X, y, X_test, y_test, truth, setting):
    """One probability fit at ``setting`` (:func:`frozen_at`): its fits, refits and
    compiled solves, the test probabilities and scores."""
    from msvm import _base, _sequence

    counts = {}
    with warnings.catch_warnings(), frozen_at(setting), _counted(
            counts, (_base.BaseMSVM, "_fit_model"), (_sequence.DualSequence, "_solve_and_finish")):
        warnings.simplefilter("ignore")
        est = make(True).fit(X, y)
    proba = est.predict_proba(X_test)
    return proba, {"n_fits": int(est.n_probability_fits_), "refits": counts["_fit_model"],
                   "solves": counts["_solve_and_finish"],
                   "brier": _brier(proba, y_test, est.classes_),
                   **_scores(proba, y_test, est.classes_, est.predict(X_test), truth)}


def variant_scores(quick, seeds=(0, 1, 2)):
    """Every variant of ``VARIANTS`` on three draws of each set (``_dc_split_sets``)."""
    out = []
    for data, seed, gamma, X, y, X_test, y_test, truth in _dc_split_sets(quick, seeds):
        make = _maker(ESTIMATOR, 1.0, gamma)
        row, probas = {"data": data, "seed": seed}, {}
        for label, setting in VARIANTS:
            probas[label], row[label] = variant_fit(make, X, y, X_test, y_test, truth,
                                                    setting)
            row[label]["max_diff"] = float(np.max(np.abs(probas[label] - probas["before"])))
        out.append(row)
        print(f"  9q variants: {data} seed {seed}", flush=True)
    return out


def more_draws(quick, seeds=(3, 4, 5, 6, 7, 8)):
    """Before and after on six more draws of each example (n = 400, 2000 test samples: the
    examples of ``_dc_split_sets``)."""
    out = []
    for data, seed, gamma, X, y, X_test, y_test, truth in _dc_split_sets(quick, seeds):
        if truth is None:
            continue
        make = _maker(ESTIMATOR, 1.0, gamma)
        row = {"data": data, "seed": seed}
        for label, setting in VARIANTS[:2]:
            row[label] = variant_fit(make, X, y, X_test, y_test, truth, setting)[1]
        out.append(row)
        print(f"  9q more draws: {data} seed {seed}", flush=True)
    return out


def bench_adaptive_frozen(quick):
    """Section 9q: the part table on the examples, the before / after rows on the four sets,
    the variants over three draws and before / after over six more draws of the examples."""
    res = _dc_section(quick, "9q", (ESTIMATOR,), main_refits, adaptive_frozen_parts,
                      load_after=("example 4.1.2",))
    res["variants"] = variant_scores(quick)
    res["draws"] = more_draws(quick)
    res["load"].append(os.getloadavg()[0])
    return res


def _variants_table(rows):
    head = ["data", "variant", "fits (mean)", "compiled solves (mean)",
            "score: mean [least, largest]", "change of the mean (limit)", "largest change",
            "Brier (mean)", "largest diff", "argmax = predict (least)"]
    body = []
    for data in dict.fromkeys(r["data"] for r in rows):
        mine = [r for r in rows if r["data"] == data]
        key, limit = ("mae", 0.002) if "mae" in mine[0]["before"] else ("log_loss", 0.01)
        before = np.array([r["before"][key] for r in mine])
        for label, _ in VARIANTS:
            side = [r[label] for r in mine]
            score = np.array([s[key] for s in side])
            body.append([data, label, f"{np.mean([s['n_fits'] for s in side]):.0f}",
                         f"{np.mean([s['solves'] for s in side]):.0f}",
                         f"{key.replace('_', ' ')} {score.mean():.4f} [{score.min():.4f}, "
                         f"{score.max():.4f}]",
                         *_change_cells(before, score, limit),
                         f"{np.mean([s['brier'] for s in side]):.4f}",
                         f"{max(s['max_diff'] for s in side):.2g}",
                         f"{min(s['agreement'] for s in side):.4f}"])
    return markdown_table(head, body)


def _draws_table(draws):
    head = ["data", "draws", "compiled solves: before / after (mean)",
            "mae: before / after, mean [least, largest]", "change of the mean (limit)",
            "largest change", "draws with a lower mae", "argmax = predict (after, least)"]
    body = []
    for data in dict.fromkeys(r["data"] for r in draws):
        rows = [r for r in draws if r["data"] == data]
        b, a = (np.array([r[side]["mae"] for r in rows]) for side in ("before", "after"))
        solves = [np.mean([r[side]["solves"] for r in rows]) for side in ("before", "after")]
        body.append([data, ", ".join(str(r["seed"]) for r in rows),
                     f"{solves[0]:.0f} / {solves[1]:.0f}",
                     f"{b.mean():.4f} [{b.min():.4f}, {b.max():.4f}] / {a.mean():.4f} "
                     f"[{a.min():.4f}, {a.max():.4f}]", *_change_cells(b, a, 0.002),
                     f"{int(np.sum(a < b))} of {len(rows)}",
                     f"{min(r['after']['agreement'] for r in rows):.4f}"])
    return markdown_table(head, body)


def render_adaptive_frozen(res):
    from msvm import weighted

    conditions = _conditions(res, "five", "main c94be25's refits restored in this process "
                    "(`msvm.weighted.FROZEN_WEIGHTS_BELOW = None`: every chain level solved "
                    "at v = 1 first), 'after' this branch "
                    f"(`FROZEN_WEIGHTS_BELOW = {weighted.FROZEN_WEIGHTS_BELOW}`, "
                    f"`FROZEN_WEIGHTS_MOVES = {weighted.FROZEN_WEIGHTS_MOVES}`)").rstrip()
    if res.get("date"):
        conditions = conditions.replace(f"Commit {res['commit']};",
                                        f"Commit {res['commit']}, {res['date']};", 1)
    return (
        conditions + " C = 1, scheme 'one-step', default parameters otherwise (random_state "
        "None; gamma 'median' on the examples (n = 400, 5000 test samples), 'scale' on the "
        "real sets). 'largest diff': the largest difference of the test probabilities, before "
        "against after.\n\n"
        "#### Where an AdaptiveWeightedSVM probability fit's time goes, per part\n\n"
        "One probability fit (the least CPU time of 3, before and after alternating), each "
        "part's exclusive CPU time (timing wrappers, about 2 us a call, counted in the "
        "parts); a part that does not run on a side reads 0.\n\n"
        + _parts_table(res["profiles"], PARTS) + "\n\n"
        + _rows_and_targets(res["rows"]) + "\n\n"
        "#### Every variant over three draws (n = 400 and 2000 test samples on the examples, "
        "stratified 70/30 splits of the real sets; seeds 0, 1, 2)\n\n"
        "'threshold x': `FROZEN_WEIGHTS_BELOW = x` (two small moves); 'one small move': "
        "the levels below freeze after one level whose v moved by less than 0.15 on average "
        "(`FROZEN_WEIGHTS_MOVES = 1`). 'change of the mean': the variant's mean "
        "score minus 'before''s (limits of issue 25: MAE +0.002, log loss +0.01); 'largest "
        "change': the largest per-draw change.\n\n"
        + _variants_table(res["variants"]) + "\n\n"
        "#### Before and after on six more draws of the examples (n = 400, 2000 test "
        "samples)\n\n" + _draws_table(res["draws"]) + "\n\n" + NOT_KEPT)


# measured once each on an experimental branch of this round's code (uncommitted switches,
# load 7-18, alternating in one process, the least of 2 CPU times, random_state None), over
# the draws 0-5 of the examples and the splits 0-5 of the real sets
NOT_KEPT = (
    "#### Measured, not kept\n\n"
    "Over six draws of each example and six splits of each real set (the least CPU time of 2 "
    "each, alternating; means over the draws), against main's refits:\n\n"
    "- A chain level's solve at v = 1 at twice the refits' tol (0.6): example 4.1.1 329 -> "
    "301 ms (448 -> 360 epochs), MAE 0.0386 -> 0.0368; 4.1.2 401 -> 342 ms, MAE 0.0459 -> "
    "0.0459; wine log loss +0.0026; breast cancer -0.0033. At three times (0.9) it was "
    "faster still (4.1.1 -18 %, 4.1.2 -13 %) but over the MAE limit on 4.1.2 (+0.0023 on the "
    "mean of three draws). With frozen weights (one small move, threshold 0.1) it added little "
    "(4.1.1 249 -> 246 ms, 4.1.2 306 -> 293 ms) for a looser fit: not kept.\n"
    "- Frozen weights after one small move (`FROZEN_WEIGHTS_MOVES = 1`, in the table above): "
    "faster on the examples (six draws: 4.1.1 338 -> 242 ms, 4.1.2 414 -> 305 ms against "
    "275 and 329 ms with two moves; MAE -0.0017 and -0.0007 on the mean) but on breast "
    "cancer's split 0 (section 9m's) the log loss rose 0.1564 -> 0.1818 (+0.025; +0.0046 on "
    "the mean of six splits): the frozen levels of the calibration folds' chains moved the "
    "chosen exponent from 0.61 to 4.0 (its bound) and the floor from 0.0001 to 0.03; frozen "
    "levels in the full data's chains alone gave 0.1426. With two moves: 0.1573 there, "
    "0.1212 against 0.1210 on the mean of six splits.\n"
    "- A level's solve at v = 1 from the level above's solution with the variables of the "
    "up-weighted samples at a moving bound scaled by their weight ratio (the weighted SVM's "
    "path, where those stay at their bound): 448 -> 410 epochs on 4.1.1 but more fits (89 -> "
    "92, its near-bound samples marked) and 4.1.2's MAE +0.0012 (6 draws): not kept.\n"
    "- The reweighted solve from the level's v = 1 solution scaled by v (the dual at weights "
    "sw v, needing no clip and so no settled marks for the clip): fewer fits (89 -> 81 on "
    "4.1.1) but as many epochs, and slower on breast cancer (68 -> 95 ms, three splits): not "
    "kept.\n"
    "- Frozen weights on the largest move of a sample (max |v - v_above| < 0.05 to 0.2) "
    "instead of the mean: the early levels move some sample's v by 0.3 to 0.45 and the last "
    "fitted ones by 0.06 to 0.075, so almost no level froze (178 -> 176 compiled solves on "
    "4.1.1).\n\n"
    "Why the 10x target stays out of reach on the examples: a chain level's solves are 1 to "
    "3 epochs each (about 0.35 ms an epoch at n = 400, k = 3), already near the floor of one "
    "epoch per solve, and the Python around a refit (1.3 ms, section 9m) is spread over the "
    "snapshots, starts, checks and attributes; one fit is 14 to 20 ms.")
