"""Benchmarks of msvm's class probabilities (probability=True) against Platt scaling.

    python -m benchmarks.run_probability_benchmarks               # everything (10 min CPU)
    python -m benchmarks.run_probability_benchmarks --only 2      # one section
    python -m benchmarks.run_probability_benchmarks --quick       # tiny smoke run

(from the repository root)

Three ways to get class probabilities from the same classifier, side by side in one process:
msvm's ``probability=True`` (weighted refits and bracketing, msvm._probability), Platt
scaling of the same msvm estimator (scikit-learn's ``CalibratedClassifierCV(method='sigmoid')``,
5 folds) and ``sklearn.svm.SVC(probability=True)`` (libsvm's one-vs-one SVMs with Platt
scaling and pairwise coupling) with the same C and kernel width.

1. Liu and Yuan's (2011) simulated examples 4.1.1 and 4.1.2, whose true probabilities are
   known (``msvm.datasets.reinforced_example_proba``): n = 400 training samples, 5000 test
   samples, R = 5 repetitions (3 for the cross-validated C); ReinforcedMSVM (reinforcement 0.5,
   gamma='median') at C = 1,
   at C = 10, and with each method's C chosen by its own 5-fold cross-validated log loss
   from {0.1, 1, 10, 30}.
   Mean absolute error against the true probabilities, log loss, Brier score, agreement of
   the argmax with ``predict``, fit times.  Target: lower mean absolute error than Platt.
2. Pendigits (bundled; standardized 70/30 split of ``benchmarks.harness.pendigits_split``),
   a stratified 2000-sample part of the training set, the whole test set (3298 samples),
   ReinforcedMSVM(C=10, gamma='scale'): log loss, Brier score, argmax agreement, fit time and
   CPU time, and the probability fit again with n_jobs=2 (wall time, identity).  Targets:
   log loss at most Platt's + 0.05; argmax = predict on >= 97 %.
3. Breast cancer (scikit-learn's Wisconsin diagnostic data, k = 2), a second real set:
   the same comparison at C = 1.
4. The approximate-kernel path: one chain of weighted fits with the feature map kept along
   it against the map fitted again in every weighted fit (CPU time, identity).
5. The approximate-kernel path at scale (``--only 5 --approx 5000:300:before,50000:300``):
   probability=True against one fit, the feature map shared by every chain of the same X
   against fitted in every chain (CPU time, held-out log loss, identity).
6. The calibration folds' training parts capped (``msvm._probability.CALIBRATION_TRAIN_MAX``)
   against uncapped, in one process: pendigits at 2,000 and 7,694 samples, breast cancer,
   the simulated examples at n = 400 and 3,000 (CPU time, log loss, Brier, MAE, identity).
7. Chains that stop where their fit is settled (``msvm._probability._settled``) and the
   same-C warm start kept, against every level refitted, on the data of section 6.
8. The chains of a group of classes on one row source with one storage of kernel rows, and
   one BLAS thread, against a row source per chain, on the data of section 7 (3 draws of
   each example).
9. Lean refits (validation once per data set, no clone per chain, faster exact intercepts,
   the small-data calibration) against main's probability fit: the examples at n = 400,
   breast cancer, wine, digits (3 draws each) and pendigits; and three cheaper calibrations
   of small data (the C factor 1 only, the folds' chains on every other level, the factor
   decided on the first fold) measured against every fit on the same sets.
9d. The chains of the DC, reweighting and targeted models stop where settled
   (``msvm._probability._path_settled``) against main's rule (they never stopped early):
   four estimators on wine, breast cancer and example 4.1.1, and the rule checked against
   every level refitted (``benchmarks/probability_paths.py``).

Every table also has CalibratedClassifierCV(method='isotonic'); times are CPU time on a
machine shared with other jobs, ratios measured in the same run.

The full run writes benchmarks/results/probability.md and probability.json; --quick writes
quick_probability.md and quick_probability.json (n = 200, 1000 test samples, one repetition,
pendigits on 500 training samples).  Timings are reported, never asserted.
"""

import contextlib
import warnings

import numpy as np

from benchmarks.probability_lean import (bench_fixed_cost, bench_fold_finish,
                                         bench_lean_levels, bench_level_loop,
                                         bench_level_steps, bench_small_solve,
                                         render_fixed_cost, render_fold_finish,
                                         render_level_loop, render_lean_levels,
                                         render_level_steps, render_small_solve)
from benchmarks.probability_adaptive import bench_adaptive_frozen, render_adaptive_frozen
from benchmarks.probability_paths import (bench_adaptive_lean, bench_chain_dc, bench_dc_fixed,
                                          bench_dc_levels, bench_dc_loop, bench_level_tol,
                                          bench_paths, render_adaptive_lean, render_chain_dc,
                                          render_dc_fixed, render_dc_levels, render_dc_loop,
                                          render_level_tol, render_paths)
from benchmarks import probability_dclevel
from benchmarks.harness import (fmt, markdown_table, pendigits_split, sectioned_main,
                                sectioned_report, wall_cpu_fit)

SEED = 0
PROBABILITY_GRID = 8
CV_FOLDS = 5
C_GRID = (0.1, 1.0, 10.0, 30.0)
MAE_MARGIN = 0.0          # target: our MAE below Platt's
LOG_LOSS_MARGIN = 0.05    # target: our log loss at most Platt's + 0.05 on real data
AGREEMENT_TARGET = 0.97
REPS_CV = 3               # repetitions of the rows with C chosen by cross-validation (slow)
PENDIGITS_C = 10.0
METHODS = ("msvm", "platt", "isotonic", "svc")
LABELS = {"msvm": "msvm probability=True", "platt": "CalibratedClassifierCV(sigmoid)",
          "isotonic": "CalibratedClassifierCV(isotonic)", "svc": "SVC(probability=True)",
          "previous": "msvm probability=True, previous settings"}
# The previous run (2026-11-23, git 819719f, before issue 25): msvm's mean absolute error
# against the truth and CPU time over one fit on each simulated row, and pendigits.
BEFORE = {
    "simulated": {("4.1.1", "1"): (0.0296, 167), ("4.1.1", "10"): (0.0335, 446),
                  ("4.1.1", "cv"): (0.0315, 219), ("4.1.2", "1"): (0.0460, 452),
                  ("4.1.2", "10"): (0.0428, 947), ("4.1.2", "cv"): (0.0450, 512)},
    "pendigits": {"log_loss": 0.0392, "brier": 0.0125, "n_fits": 568, "cpu": 144.54,
                  "cpu_ratio": 196.6, "platt_ratio": 20.4},
}
# This round's before (issue 25, per-fit overhead): main at git 8b55e2c, the run of this script
# of 2026-11-27T00:59 (shared machine): msvm's probability fit CPU s, x one fit, x Platt, log
# loss
ROUND_BEFORE = {"pendigits": (18.53, 36.4, 6.9, 0.0410),
                "breast_cancer": (0.60, 106.8, 1.5, 0.1470)}
PARALLEL_JOBS = 2
ONE_FIT_REPEATS = 5        # fits of under 0.1 s: the least of this many CPU times
FOLD_CAP_REPS = 2         # repetitions of section 6's simulated rows at n = 400
# msvm._probability's constants before this round (git 34e0e2e), for the same-run comparison
PREVIOUS_SETTINGS = {"REFIT_TOL_FACTOR": 10.0, "REFIT_TOL_MAX": np.inf, "FACTOR_SE": 0.0}


def _refitted_folds():
    """msvm's calibration settings: ``refitted_folds`` and the refits' tolerance and factor
    rule (``msvm._probability``), as keyword arguments of a section's results."""
    from msvm import _probability

    return {"refitted_folds": _probability.REFITTED_FOLDS,
            "refit_tol_factor": _probability.REFIT_TOL_FACTOR,
            "refit_tol_max": _probability.REFIT_TOL_MAX, "factor_se": _probability.FACTOR_SE}


@contextlib.contextmanager
def probability_constants(values):
    """msvm._probability's module constants set to ``values`` (name -> value) within the
    block, and restored after it."""
    from msvm import _probability

    saved = {name: getattr(_probability, name) for name in values}
    for name, value in values.items():
        setattr(_probability, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(_probability, name, value)


def previous_settings():
    """msvm's probability fit as before this round (2026-11-26, git 34e0e2e): weighted fits
    at 10 times the estimator's tol and the C factor of the smallest held-out log loss."""
    return probability_constants(PREVIOUS_SETTINGS)


def brier(y_enc, proba):
    """Multiclass Brier score: mean over samples of sum_j (p_j - 1{y = j})^2."""
    onehot = np.eye(proba.shape[1])[y_enc]
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def proba_digest(estimator, X):
    """A hash of ``estimator.predict_proba(X)``'s bytes (identity of two fits' estimates)."""
    import hashlib

    return hashlib.sha256(np.ascontiguousarray(estimator.predict_proba(X)).tobytes()).hexdigest()


def _evaluate(proba, y_enc, predicted, truth=None):
    """Scores of one method's probabilities on a test set (y_enc, predicted: class indices)."""
    from sklearn.metrics import log_loss

    out = {"log_loss": float(log_loss(y_enc, proba, labels=np.arange(proba.shape[1]))),
           "brier": brier(y_enc, proba),
           "agreement": float(np.mean(np.argmax(proba, axis=1) == predicted))}
    if truth is not None:
        out["mae"] = float(np.mean(np.abs(proba - truth)))
    return out


def compare(make_msvm, svc_params, Cs, X, y, X_test, y_test, truth=None):
    """Fit the three methods on (X, y) and score them on the test set.

    ``make_msvm(probability, C)`` returns the msvm estimator, ``Cs`` maps each method to its
    C.  Platt scaling calibrates ``make_msvm(False, Cs['platt'])``; its agreement is measured
    against that estimator refitted on all of (X, y), the classifier whose probabilities it
    is meant to give.  ``one_fit`` is one fit of ``make_msvm(False, Cs['msvm'])``.
    """
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.svm import SVC

    classes = np.unique(y)
    y_enc = np.searchsorted(classes, y_test)
    res = {"C": dict(Cs)}
    wall, cpu, _ = wall_cpu_fit(make_msvm(False, Cs["msvm"]), X, y)
    res["one_fit"] = {"wall": wall, "cpu": cpu}
    base = make_msvm(False, Cs["platt"]).fit(X, y)
    base_pred = np.searchsorted(classes, base.predict(X_test))

    wall, cpu, ours = wall_cpu_fit(make_msvm(True, Cs["msvm"]), X, y)
    res["msvm"] = {"wall": wall, "cpu": cpu, "n_fits": int(ours.n_probability_fits_),
                   "digest": proba_digest(ours, X_test),
                   **_evaluate(ours.predict_proba(X_test), y_enc,
                               np.searchsorted(classes, ours.predict(X_test)), truth)}
    with previous_settings():
        wall, cpu, prev = wall_cpu_fit(make_msvm(True, Cs["msvm"]), X, y)
    res["previous"] = {"wall": wall, "cpu": cpu, "n_fits": int(prev.n_probability_fits_),
                       **_evaluate(prev.predict_proba(X_test), y_enc,
                                   np.searchsorted(classes, prev.predict(X_test)), truth)}
    wall, cpu, platt = wall_cpu_fit(
        CalibratedClassifierCV(make_msvm(False, Cs["platt"]), method="sigmoid", cv=CV_FOLDS),
        X, y)
    res["platt"] = {"wall": wall, "cpu": cpu, "n_fits": CV_FOLDS,
                    **_evaluate(platt.predict_proba(X_test), y_enc, base_pred, truth)}
    wall, cpu, iso = wall_cpu_fit(
        CalibratedClassifierCV(make_msvm(False, Cs["platt"]), method="isotonic",
                               cv=CV_FOLDS), X, y)
    res["isotonic"] = {"wall": wall, "cpu": cpu, "n_fits": CV_FOLDS,
                       **_evaluate(np.clip(iso.predict_proba(X_test), 1e-15, 1), y_enc,
                                   base_pred, truth)}
    with warnings.catch_warnings():
        # scikit-learn 1.9 deprecates SVC(probability=True); it is the comparator asked for
        warnings.simplefilter("ignore", FutureWarning)
        wall, cpu, svc = wall_cpu_fit(SVC(probability=True, random_state=SEED, C=Cs["svc"],
                                          **svc_params), X, y)
    res["svc"] = {"wall": wall, "cpu": cpu,
                  **_evaluate(svc.predict_proba(X_test), y_enc,
                              np.searchsorted(classes, svc.predict(X_test)), truth)}
    return res


# --------------------------------------------------------------------------- 1. simulated
def _cv_Cs(make_msvm, gamma, X, y):
    """Each method's C from C_GRID by 5-fold cross-validated log loss (its own probabilities)."""
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    candidates = {
        "msvm": (make_msvm(True, 1.0), "C"),
        "platt": (CalibratedClassifierCV(make_msvm(False, 1.0), method="sigmoid",
                                         cv=CV_FOLDS), "estimator__C"),
        "svc": (SVC(probability=True, random_state=SEED, gamma=gamma), "C"),
    }
    Cs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method, (est, name) in candidates.items():
            search = GridSearchCV(est, {name: list(C_GRID)}, cv=CV_FOLDS,
                                  scoring="neg_log_loss").fit(X, y)
            Cs[method] = float(search.best_params_[name])
    Cs["isotonic"] = Cs["platt"]          # the same estimator, calibrated otherwise
    return Cs


def _make_reinforced(probability, C):
    from msvm import ReinforcedMSVM

    return ReinforcedMSVM(C=C, gamma="median", probability=probability,
                          probability_grid=PROBABILITY_GRID)


def bench_simulated(quick):
    from msvm import ReinforcedMSVM
    from msvm.datasets import make_reinforced_example, reinforced_example_proba

    n, n_test, reps = (200, 1000, 1) if quick else (400, 5000, 5)
    rows = []
    for example in ("4.1.1", "4.1.2"):
        for setting in ("1", "10", "cv"):
            runs = []
            for rep in range(min(reps, REPS_CV) if setting == "cv" else reps):
                X, y = make_reinforced_example(n, example, random_state=rep)
                X_test, y_test = make_reinforced_example(n_test, example,
                                                         random_state=1000 + rep)
                truth = reinforced_example_proba(X_test, example)
                gamma = ReinforcedMSVM(gamma="median").fit(X, y).gamma_
                Cs = (_cv_Cs(_make_reinforced, gamma, X, y) if setting == "cv"
                      else dict.fromkeys(METHODS, float(setting)))
                res = compare(_make_reinforced, {"gamma": gamma}, Cs, X, y, X_test, y_test,
                              truth)
                runs.append(res)
                print(f"  1: {example} C={setting} rep {rep}: MAE "
                      + " / ".join(f"{res[m]['mae']:.4f}" for m in METHODS)
                      + " (C " + " / ".join(f"{Cs[m]:g}" for m in METHODS) + ")", flush=True)
            rows.append({"example": example, "setting": setting, "n": n, "n_test": n_test,
                         "reps": len(runs), "runs": runs, "summary": _summary(runs)})
    return {"rows": rows, **_refitted_folds()}


def _summary(runs):
    """Mean of every metric over the repetitions, per method; time ratios against ours."""
    out = {}
    for m in (*METHODS, "previous"):
        out[m] = {key: float(np.mean([r[m][key] for r in runs]))
                  for key in runs[0][m] if key not in ("n_fits", "digest")}
    out["one_fit"] = {key: float(np.mean([r["one_fit"][key] for r in runs]))
                      for key in ("wall", "cpu")}
    out["C"] = {m: [r["C"][m] for r in runs] for m in METHODS}
    return out


def render_simulated(section):
    names = "msvm / Platt / isotonic / SVC"
    header = ["example", "C", "reps", f"MAE vs truth: {names}", "MAE previous settings",
              "MAE 2026-11-23", "target MAE < Platt", "MAE <= previous + 0.002",
              f"log loss: {names}", f"Brier: {names}", f"argmax = predict: {names}",
              "fit CPU s: one fit / msvm / previous / Platt",
              "msvm CPU / one fit (previous; 2026-11-23)", "msvm CPU / Platt",
              "msvm wall / Platt"]
    rows, met, kept = [], 0, 0
    for row in section["rows"]:
        s = row["summary"]
        ok = s["msvm"]["mae"] < s["platt"]["mae"] - MAE_MARGIN
        met += ok
        within = s["msvm"]["mae"] <= s["previous"]["mae"] + 0.002
        kept += within
        C = ("by CV log loss: " + "; ".join(
            f"{m} " + ", ".join(f"{c:g}" for c in s["C"][m]) for m in ("msvm", "platt", "svc"))
             if row["setting"] == "cv" else row["setting"])
        key = (row["example"], row["setting"])
        before = BEFORE["simulated"].get(key, (None, None))
        rows.append([
            row["example"], C, row["reps"],
            " / ".join(fmt(s[m]["mae"], ".4f") for m in METHODS),
            fmt(s["previous"]["mae"], ".4f"), fmt(before[0], ".4f"),
            "met" if ok else "NOT met", "met" if within else "NOT met",
            " / ".join(fmt(s[m]["log_loss"], ".4f") for m in METHODS),
            " / ".join(fmt(s[m]["brier"], ".4f") for m in METHODS),
            " / ".join(fmt(s[m]["agreement"], ".3f") for m in METHODS),
            " / ".join(fmt(v, ".2f") for v in (s["one_fit"]["cpu"], s["msvm"]["cpu"],
                                               s["previous"]["cpu"], s["platt"]["cpu"])),
            f"{s['msvm']['cpu'] / s['one_fit']['cpu']:.0f}x "
            f"({s['previous']['cpu'] / s['one_fit']['cpu']:.0f}x; {fmt(before[1], 'd')}x)",
            f"{s['msvm']['cpu'] / s['platt']['cpu']:.1f}x",
            f"{s['msvm']['wall'] / s['platt']['wall']:.1f}x"])
    return (markdown_table(header, rows)
            + f"\n\n{_folds_line(section)}"
            + f"\n\nTarget (msvm's MAE against the true probabilities below Platt scaling's): "
              f"met in {met} of {len(rows)} rows. MAE at most the previous settings' + 0.002 "
              f"(issue 25): met in {kept} of {len(rows)} rows.")


# --------------------------------------------------------------------------- 2. pendigits
def bench_pendigits(quick):
    from sklearn.model_selection import train_test_split

    from msvm import ReinforcedMSVM

    X, X_test, y, y_test = pendigits_split(quick=False, seed=SEED)
    n = 500 if quick else 2000
    X, _, y, _ = train_test_split(X, y, train_size=n, stratify=y, random_state=SEED)

    def make(probability, C):
        return ReinforcedMSVM(C=C, probability=probability, probability_grid=PROBABILITY_GRID)

    gamma = 1.0 / (X.shape[1] * X.var())                # gamma='scale', as SVC resolves it
    res = compare(make, {"gamma": gamma}, dict.fromkeys(METHODS, PENDIGITS_C), X, y, X_test,
                  y_test)
    res.update(n=n, n_test=len(y_test), **_refitted_folds())
    # the same probability fit with n_jobs=2: wall time (the machine is shared) and identity
    wall, cpu, par = wall_cpu_fit(make(True, PENDIGITS_C).set_params(n_jobs=PARALLEL_JOBS),
                                  X, y)
    res["parallel"] = {"n_jobs": PARALLEL_JOBS, "wall": wall, "parent_cpu": cpu,
                       "identical": proba_digest(par, X_test) == res["msvm"]["digest"]}
    for m in METHODS:
        print(f"  2: {LABELS[m]}: log loss {res[m]['log_loss']:.4f}, Brier "
              f"{res[m]['brier']:.4f}, agreement {res[m]['agreement']:.4f}, fit "
              f"{res[m]['wall']:.2f} s", flush=True)
    return res


def render_pendigits(res):
    return _render_real(res, "ReinforcedMSVM") + _render_parallel_and_before(res)


def _folds_line(section):
    """Which calibration of msvm a section measured, and what 'previous settings' means."""
    return (f"msvm's calibration refitted {section.get('refitted_folds', 1)} of 3 folds "
            f"(`msvm._probability.REFITTED_FOLDS`); its weighted fits stop at "
            f"{section.get('refit_tol_factor', 10):g} times the estimator's tol (at most "
            f"{section.get('refit_tol_max', float('inf')):g}) and 3 C is chosen over C when it "
            f"lowers the held-out log loss{_factor_rule(section.get('factor_se', 0))}. "
            f"'Previous settings': the same fit as before this round (git "
            f"34e0e2e: 10 times tol, 3 C whenever its held-out log loss is lower), in the "
            f"same run.")


def _factor_rule(factor_se):
    """How much 3 C must lower the held-out log loss to be chosen (``FACTOR_SE``)."""
    return f" by more than {factor_se:g} standard errors" if factor_se else ""


def _render_real(res, name):
    """The table and targets of a real data set's section (``compare`` results)."""
    rows = [[LABELS[m], fmt(res[m]["log_loss"], ".4f"), fmt(res[m]["brier"], ".4f"),
             fmt(res[m]["agreement"], ".4f"), fmt(res[m].get("n_fits"), "d"),
             fmt(res[m]["wall"], ".2f"), fmt(res[m]["cpu"], ".2f"),
             fmt(res[m]["wall"] / res["one_fit"]["wall"], ".1f"),
             fmt(res[m]["cpu"] / res["one_fit"]["cpu"], ".1f")]
            for m in (*METHODS, "previous")]
    rows.append([f"one {name} fit (probability=False)", "-", "-", "-", "1",
                 fmt(res["one_fit"]["wall"], ".2f"), fmt(res["one_fit"]["cpu"], ".2f"), "1.0",
                 "1.0"])
    table = markdown_table(["method", "log loss", "Brier", "argmax = predict", "fits",
                            "fit wall s", "fit CPU s", "wall / one fit", "CPU / one fit"],
                           rows)
    ll_ok = res["msvm"]["log_loss"] <= res["platt"]["log_loss"] + LOG_LOSS_MARGIN
    ag_ok = res["msvm"]["agreement"] >= AGREEMENT_TARGET
    return (table + f"\n\n{_folds_line(res)}\n\nTargets: log loss at most Platt's + "
            f"{LOG_LOSS_MARGIN}: "
            f"{'met' if ll_ok else 'NOT met'} ({res['msvm']['log_loss']:.4f} against "
            f"{res['platt']['log_loss']:.4f}); argmax = predict on >= "
            f"{AGREEMENT_TARGET:.0%} of the test samples: {'met' if ag_ok else 'NOT met'} "
            f"({res['msvm']['agreement']:.2%}). Time ratios: msvm / Platt "
            f"{res['msvm']['wall'] / res['platt']['wall']:.1f}x, msvm / SVC "
            f"{res['msvm']['wall'] / res['svc']['wall']:.0f}x (wall); msvm / Platt "
            f"{res['msvm']['cpu'] / res['platt']['cpu']:.1f}x, msvm / SVC "
            f"{res['msvm']['cpu'] / max(res['svc']['cpu'], 1e-9):.0f}x (CPU). msvm CPU / one "
            f"fit: {res['msvm']['cpu'] / res['one_fit']['cpu']:.0f}x (target at most 10x: "
            f"{'met' if res['msvm']['cpu'] <= 10 * res['one_fit']['cpu'] else 'NOT met'}).")


def _render_parallel_and_before(res):
    """The n_jobs line and the before/after line of the pendigits section."""
    par, before = res["parallel"], BEFORE["pendigits"]
    ours, one = res["msvm"], res["one_fit"]

    def verdict(ok):
        return "met" if ok else "NOT met"

    return (f"\n\nn_jobs={par['n_jobs']}: wall {par['wall']:.1f} s against "
            f"{res['msvm']['wall']:.1f} s with n_jobs=1 "
            f"({res['msvm']['wall'] / par['wall']:.2f}x faster; the machine was shared, so "
            f"wall times are indicative); probabilities identical to n_jobs=1: "
            f"{'yes' if par['identical'] else 'NO'}.\n\nBefore (2026-11-23, git 819719f): log "
            f"loss {before['log_loss']:.4f}, Brier {before['brier']:.4f}, {before['n_fits']} "
            f"fits, {before['cpu']:.1f} s CPU = {before['cpu_ratio']:.0f}x one fit and "
            f"{before['platt_ratio']:.1f}x Platt; now log loss {res['msvm']['log_loss']:.4f}, "
            f"{res['msvm']['cpu']:.1f} s CPU = "
            f"{res['msvm']['cpu'] / res['one_fit']['cpu']:.0f}x one fit and "
            f"{res['msvm']['cpu'] / res['platt']['cpu']:.1f}x Platt. The previous settings "
            f"in the same run: log loss {res['previous']['log_loss']:.4f}, "
            f"{res['previous']['n_fits']} fits, {res['previous']['cpu']:.1f} s CPU = "
            f"{res['previous']['cpu'] / one['cpu']:.0f}x one fit and "
            f"{res['previous']['cpu'] / res['platt']['cpu']:.1f}x Platt (now "
            f"{res['previous']['cpu'] / ours['cpu']:.2f}x faster). Targets of issue 25: at "
            f"most 10x one fit: {verdict(ours['cpu'] <= 10 * one['cpu'])}; at most 2x Platt: "
            f"{verdict(ours['cpu'] <= 2 * res['platt']['cpu'])}; log loss at most before + "
            f"0.01: {verdict(ours['log_loss'] <= before['log_loss'] + 0.01)}; at most the "
            f"previous settings' + 0.01: "
            f"{verdict(ours['log_loss'] <= res['previous']['log_loss'] + 0.01)}."
            + _round_before_line(res, "pendigits"))


def _round_before_line(res, name):
    """This round's before (``ROUND_BEFORE``, another run of this script) against now."""
    cpu, ratio, platt, log_loss = ROUND_BEFORE[name]
    ours, one = res["msvm"], res["one_fit"]
    return (f"\n\nThis round's before (main at git 8b55e2c, the run of 2026-11-27T00:59, not "
            f"this run): {cpu:.2f} s CPU = {ratio:.0f}x one fit and {platt:.1f}x Platt, log "
            f"loss {log_loss:.4f}; now {ours['cpu']:.2f} s = {ours['cpu'] / one['cpu']:.0f}x "
            f"one fit and {ours['cpu'] / res['platt']['cpu']:.1f}x Platt, log loss "
            f"{ours['log_loss']:.4f} (same fits; the per-fit overhead cut: docs/probability.md, "
            f"Cost).")



# --------------------------------------------------------------------------- 3. breast cancer
def bench_breast_cancer(quick):
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from msvm import ReinforcedMSVM

    X, y = load_breast_cancer(return_X_y=True)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.3, stratify=y, random_state=SEED)
    scaler = StandardScaler().fit(X)
    X, X_test = scaler.transform(X), scaler.transform(X_test)

    def make(probability, C):
        return ReinforcedMSVM(C=C, probability=probability, probability_grid=PROBABILITY_GRID)

    gamma = 1.0 / (X.shape[1] * X.var())
    res = compare(make, {"gamma": gamma}, dict.fromkeys(METHODS, 1.0), X, y, X_test, y_test)
    res.update(n=len(y), n_test=len(y_test), **_refitted_folds())
    for m in METHODS:
        print(f"  3: {LABELS[m]}: log loss {res[m]['log_loss']:.4f}, CPU {res[m]['cpu']:.2f} s",
              flush=True)
    return res


def render_breast_cancer(res):
    prev = res["previous"]
    ok = res["msvm"]["log_loss"] <= prev["log_loss"] + 0.01
    return (_render_real(res, "ReinforcedMSVM")
            + f"\n\nThe previous settings in the same run: log loss {prev['log_loss']:.4f}, "
            f"{prev['cpu'] / res['one_fit']['cpu']:.0f}x one fit, "
            f"{prev['cpu'] / res['platt']['cpu']:.1f}x Platt (CPU); log loss at most theirs + "
            f"0.01: {'met' if ok else 'NOT met'}." + _round_before_line(res, "breast_cancer"))


# --------------------------------------------------------------------------- 4. approximate
def bench_feature_map(quick):
    """One class's chain of weighted fits on the Nystroem path, with the feature map kept
    along the chain and with it fitted again in every weighted fit, in one process."""
    import time

    from sklearn.base import clone
    from sklearn.datasets import make_classification

    from msvm import ReinforcedMSVM
    from msvm import _probability
    from msvm._base import BaseMSVM

    n, components, m = (600, 200, 2) if quick else (3000, 1000, 4)
    X, y = make_classification(n, 20, n_informative=10, n_classes=5, n_clusters_per_class=1,
                               random_state=SEED)
    params = dict(kernel_approximation="nystroem", n_components=components, random_state=SEED)
    t0 = time.process_time()
    est = ReinforcedMSVM(**params).fit(X, y)
    one = time.process_time() - t0
    refit = _probability._refit_template(
        clone(est).set_params(warm_start=True, C=est.C_, gamma=est.gamma_), 1.0)
    levels, sw = _probability.probability_levels(m), np.ones(len(y))
    cpu, chains = {}, {}
    for mode in ("kept", "refitted"):
        key = BaseMSVM._feature_map_key
        if mode == "refitted":          # what every weighted fit did before the map was kept
            BaseMSVM._feature_map_key = lambda self, X, dtype: None
        try:
            t0 = time.process_time()
            chains[mode], _ = _probability._weighted_chain(refit, est, X, y, sw, levels, 0)
            cpu[mode] = time.process_time() - t0
        finally:
            BaseMSVM._feature_map_key = key
    same = all(np.array_equal(a.decision_values(X), b.decision_values(X))
               for a, b in zip(chains["kept"], chains["refitted"]))
    print(f"  4: one fit {one:.2f} s, chain kept {cpu['kept']:.2f} s, refitted "
          f"{cpu['refitted']:.2f} s, identical {same}", flush=True)
    return {"n": n, "n_components": components, "m": m, "one_fit_cpu": one,
            "chain_cpu": cpu, "identical": bool(same)}


def render_feature_map(res):
    rows = [["feature map kept along the chain", fmt(res["chain_cpu"]["kept"], ".2f"),
             fmt(res["chain_cpu"]["kept"] / res["one_fit_cpu"], ".2f")],
            ["feature map fitted in every weighted fit (before)",
             fmt(res["chain_cpu"]["refitted"], ".2f"),
             fmt(res["chain_cpu"]["refitted"] / res["one_fit_cpu"], ".2f")],
            ["one fit (probability=False)", fmt(res["one_fit_cpu"], ".2f"), "1.00"]]
    return (markdown_table(["", "CPU s", "CPU / one fit"], rows)
            + f"\n\nThe chain's fits are identical either way: "
              f"{'yes' if res['identical'] else 'NO'}; the kept map is "
              f"{res['chain_cpu']['refitted'] / res['chain_cpu']['kept']:.2f}x faster. The "
              f"machine was shared (CPU time).")

# ---------------------------------------------------------------- 5. approximate, at scale
# (n, n_components, with the before run) of section 5: set by --approx (default 5000:300)
APPROX_RUNS = [(5000, 300, True)]
APPROX_TEST = 5000


def _approx_data(n):
    from sklearn.datasets import make_classification

    X, y = make_classification(n + APPROX_TEST, 20, n_informative=10, n_classes=5,
                               n_clusters_per_class=1, random_state=SEED)
    return X[:n], y[:n], X[n:], y[n:]


def _approx_probability_fit(make, X, y, X_test, y_test, shared):
    """CPU time, fits, held-out log loss, argmax agreement and test probabilities of a
    probability=True fit; ``shared=False``: every chain fits the feature map again (before)."""
    import time

    from sklearn.metrics import log_loss

    from msvm import _probability

    real = _probability._ChainRunner._shared_features
    if not shared:
        _probability._ChainRunner._shared_features = lambda self, tasks: [()] * len(tasks)
    try:
        t0 = time.process_time()
        est = make(True).fit(X, y)
        cpu = time.process_time() - t0
    finally:
        _probability._ChainRunner._shared_features = real
    proba = est.predict_proba(X_test)
    agree = float(np.mean(est.classes_[np.argmax(proba, axis=1)] == est.predict(X_test)))
    return {"cpu": cpu, "n_fits": int(est.n_probability_fits_), "agreement": agree,
            "log_loss": float(log_loss(y_test, proba, labels=est.classes_))}, proba


def bench_approx(quick):
    """probability=True against one fit on the Nystroem path at the sizes of --approx: the
    feature map shared by the chains of the same X (after) and fitted in every chain (before)."""
    import time

    from msvm import ReinforcedMSVM

    runs = [(600, 50, True)] if quick else APPROX_RUNS
    rows = []
    for n, components, before in runs:
        X, y, X_test, y_test = _approx_data(n)

        def make(probability, components=components):
            return ReinforcedMSVM(kernel_approximation="nystroem", n_components=components,
                                  random_state=SEED, probability=probability)

        t0 = time.process_time()
        make(False).fit(X, y)
        row = {"n": n, "n_components": components, "one_fit_cpu": time.process_time() - t0}
        row["after"], proba = _approx_probability_fit(make, X, y, X_test, y_test, True)
        if before:
            row["before"], old = _approx_probability_fit(make, X, y, X_test, y_test, False)
            row["identical"] = bool(np.array_equal(old, proba))
        print(f"  5: {row}", flush=True)
        rows.append(row)
    return {"rows": rows}


def render_approx(res):
    out = []
    for row in res["rows"]:
        for name in ("before", "after"):
            if name not in row:
                continue
            r = row[name]
            out.append([f"{row['n']:,}", str(row["n_components"]),
                        "feature map per chain (before)" if name == "before"
                        else "feature map per X (after)", str(r["n_fits"]),
                        fmt(row["one_fit_cpu"], ".1f"), fmt(r["cpu"], ".1f"),
                        fmt(r["cpu"] / row["one_fit_cpu"], ".1f"), fmt(r["log_loss"], ".4f"),
                        fmt(r["agreement"], ".3f")])
    same = [f"n = {row['n']:,}: {'yes' if row['identical'] else 'NO'}"
            for row in res["rows"] if "identical" in row]
    return (markdown_table(["n", "components", "probability=True", "fits", "one fit CPU s",
                            "CPU s", "x one fit", "log loss (test)", "argmax = predict"],
                           out)
            + "\n\nProbabilities before and after identical: " + ("; ".join(same) or "-")
            + ". CPU time (`time.process_time`) of one fit each, on a machine shared with "
              "other jobs (load about 11 on 2 cores): ratios are from the same run.")


# --------------------------------------------------------------------------- 6. fold cap
@contextlib.contextmanager
def fold_cap(value):
    """msvm's probability fit with ``CALIBRATION_TRAIN_MAX`` = value (None: the folds of
    before this round, 2/3 of the samples each, however many)."""
    from msvm import _probability

    saved = _probability.CALIBRATION_TRAIN_MAX
    _probability.CALIBRATION_TRAIN_MAX = value
    try:
        yield
    finally:
        _probability.CALIBRATION_TRAIN_MAX = saved


def _fold_cap_row(make, X, y, X_test, y_test, truth=None, before=lambda: fold_cap(None),
                  section="6"):
    """One fit, the probability fit before (in the context ``before()``: for section 6
    uncapped calibration folds) and after (as it is now), and Platt scaling, all in this
    process: CPU times and test scores."""
    from sklearn.calibration import CalibratedClassifierCV

    classes = np.unique(y)
    y_enc = np.searchsorted(classes, y_test)
    row = {"n": len(y), "one_fit": _one_fit_cpu(make, X, y)}
    probas = []
    for name, context in (("before", before), ("after", contextlib.nullcontext)):
        with context():
            _, cpu, est = wall_cpu_fit(make(True), X, y)
        probas.append(est.predict_proba(X_test))
        row[name] = {"cpu": cpu, "n_fits": int(est.n_probability_fits_),
                     "factor": float(est.probability_C_factor_),
                     "digest": proba_digest(est, X_test),
                     **_evaluate(probas[-1], y_enc,
                                 np.searchsorted(classes, est.predict(X_test)), truth)}
    row["max_diff"] = float(np.max(np.abs(probas[0] - probas[1])))
    _, cpu, platt = wall_cpu_fit(CalibratedClassifierCV(make(False), method="sigmoid",
                                                        cv=CV_FOLDS), X, y)
    row["platt"] = {"cpu": cpu, **_evaluate(platt.predict_proba(X_test), y_enc,
                                            np.searchsorted(classes, platt.predict(X_test)),
                                            truth)}
    row["identical"] = row["before"]["digest"] == row["after"]["digest"]
    print(f"  {section}: n={len(y)}: CPU one {row['one_fit']:.2f}, before "
          f"{row['before']['cpu']:.2f}"
          f", after {row['after']['cpu']:.2f}, Platt {cpu:.2f}; log loss "
          f"{row['before']['log_loss']:.4f} -> {row['after']['log_loss']:.4f}", flush=True)
    return row


def _one_fit_cpu(make, X, y):
    """CPU time of one fit (probability=False): the least of ONE_FIT_REPEATS fits when the
    first takes under 0.1 s (a single fit of 10 ms read 0.009 to 0.019 s on the shared
    machine, which moved the ratios to it by a factor of two), else of the first."""
    times = [wall_cpu_fit(make(False), X, y)[1]]
    while times[0] < 0.1 and len(times) < ONE_FIT_REPEATS:
        times.append(wall_cpu_fit(make(False), X, y)[1])
    return min(times)


def _real_sets(quick):
    """(name, C, X, y, X_test, y_test) of section 6's real data: pendigits at 2,000 samples
    and all 7,694, breast cancer."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, X_test, y, y_test = pendigits_split(quick=False, seed=SEED)
    sizes = (500, 1500) if quick else (2000, len(y))
    for n in sizes:
        part = (X, y) if n == len(y) else train_test_split(
            X, y, train_size=n, stratify=y, random_state=SEED)[::2]
        yield f"pendigits {n:,}", PENDIGITS_C, *part, X_test, y_test
    Xb, yb = load_breast_cancer(return_X_y=True)
    Xb, Xb_test, yb, yb_test = train_test_split(Xb, yb, test_size=0.3, stratify=yb,
                                                random_state=SEED)
    scaler = StandardScaler().fit(Xb)
    yield "breast cancer", 1.0, scaler.transform(Xb), yb, scaler.transform(Xb_test), yb_test


def bench_fold_cap(quick):
    """Section 6: the calibration folds' training parts capped (``CALIBRATION_TRAIN_MAX``)."""
    from msvm import _probability

    return {"rows": _before_after_rows(quick, lambda: fold_cap(None), "6"),
            "cap": _probability.CALIBRATION_TRAIN_MAX}


def _before_after_rows(quick, before, section, reps=None):
    """Sections 6 to 8: the rows of :func:`_fold_cap_row` on the real sets and the
    simulated examples, the probability fit before in the context ``before()``; ``reps``:
    the repetitions of the examples at n = 400 and 3,000 (default: FOLD_CAP_REPS and 1)."""
    from msvm import ReinforcedMSVM
    from msvm.datasets import make_reinforced_example, reinforced_example_proba

    rows = []
    for name, C, X, y, X_test, y_test in _real_sets(quick):
        def make(probability, C=C):
            return ReinforcedMSVM(C=C, probability=probability,
                                  probability_grid=PROBABILITY_GRID)

        rows.append({"data": name, "C": C, **_fold_cap_row(make, X, y, X_test, y_test,
                                                           before=before, section=section)})
    reps = (FOLD_CAP_REPS, 1) if reps is None else reps
    sizes = ((200, 1), (1600, 1)) if quick else ((400, reps[0]), (3000, reps[1]))
    for n, reps in sizes:
        for example in ("4.1.1", "4.1.2"):
            for C in (1.0, 10.0):
                runs = []
                for rep in range(reps):
                    X, y = make_reinforced_example(n, example, random_state=rep)
                    X_test, y_test = make_reinforced_example(1000 if quick else 5000, example,
                                                             random_state=1000 + rep)
                    runs.append(_fold_cap_row(lambda p, C=C: _make_reinforced(p, C), X, y,
                                              X_test, y_test,
                                              reinforced_example_proba(X_test, example),
                                              before=before, section=section))
                rows.append({"data": f"example {example}", "C": C, "reps": reps,
                             **_mean_runs(runs)})
    return rows


def _mean_runs(runs):
    """Section 6's row of several repetitions: the mean of every number, identity of all."""
    out = {"n": runs[0]["n"], "one_fit": float(np.mean([r["one_fit"] for r in runs])),
           "identical": all(r["identical"] for r in runs)}
    for name in ("before", "after", "platt"):
        out[name] = {key: float(np.mean([r[name][key] for r in runs]))
                     for key in runs[0][name] if key != "digest"}
    return out


def _before_after_table(res_rows):
    """Sections 6 and 7's table: before / after / Platt on every row."""
    rows = []
    for r in res_rows:
        b, a, p, one = r["before"], r["after"], r["platt"], r["one_fit"]
        mae = ("-" if "mae" not in a else
               f"{b['mae']:.4f} / {a['mae']:.4f} / {p['mae']:.4f}")
        rows.append([r["data"], f"{r['n']:,}", f"{r['C']:g}", str(r.get("reps", 1)),
                     f"{b['n_fits']:.0f} / {a['n_fits']:.0f}",
                     f"{b['factor']:g} / {a['factor']:g}",
                     f"{one:.3f}", f"{b['cpu']:.2f} / {a['cpu']:.2f} / {p['cpu']:.2f}",
                     f"{b['cpu'] / one:.0f}x / {a['cpu'] / one:.0f}x",
                     f"{b['cpu'] / p['cpu']:.1f}x / {a['cpu'] / p['cpu']:.1f}x",
                     f"{b['log_loss']:.4f} / {a['log_loss']:.4f} / {p['log_loss']:.4f}",
                     f"{b['brier']:.4f} / {a['brier']:.4f} / {p['brier']:.4f}", mae,
                     f"{a['agreement']:.4f}", "yes" if r["identical"] else "no"])
    table = markdown_table(
        ["data", "n", "C", "reps", "fits: before / after", "C factor: before / after",
         "one fit CPU s", "CPU s: before / after / Platt", "x one fit: before / after",
         "x Platt: before / after", "log loss: before / after / Platt",
         "Brier: before / after / Platt", "MAE vs truth: before / after / Platt",
         "argmax = predict (after)", "identical"], rows)
    return table


def render_fold_cap(res):
    return (_before_after_table(res["rows"])
            + f"\n\n'before': the calibration folds of before this round (train on "
            f"2/3 of the samples, hold out 1/3); 'after': their training parts capped at "
            f"{res['cap']} samples (`msvm._probability.CALIBRATION_TRAIN_MAX`), every other "
            f"sample held out; below 1,500 samples the two are the same fits ('identical': "
            f"the probabilities' bytes). CPU time (`time.process_time`) of one fit each, "
            f"means over the repetitions, on a machine shared with four other jobs (load 6 "
            f"to 12 on 2 cores): ratios are from the same run. Sections 1 to 5 were run "
            f"before the cap: it does not act in sections 1 and 3 (at most 1,500 samples) "
            f"nor 4 (one chain, no calibration); section 2's msvm row and section 5 "
            f"(5,000 samples) are uncapped fits ('before' here for pendigits 2,000).")


# --------------------------------------------------------------------------- 7. settled chains
@contextlib.contextmanager
def every_level():
    """msvm's probability fit as before this round: every chain refitted at every level
    (``SETTLED_CHAINS`` off) and a warm start at the same C rescaled and its equalities
    restored (``msvm._sequence.rescaled_start``, the warm start of every refit before)."""
    from msvm import _base, _probability, _sequence

    saved = _probability.SETTLED_CHAINS, _base.path_start
    _probability.SETTLED_CHAINS, _base.path_start = False, _sequence.rescaled_start
    try:
        yield
    finally:
        _probability.SETTLED_CHAINS, _base.path_start = saved


def bench_settled(quick):
    """Section 7: chains that stop where they settle, the same-C warm start kept."""
    return {"rows": _before_after_rows(quick, every_level, "7")}


def _targets_line(r):
    """Issue 25's targets on one row of section 7 (after): x one fit, x Platt, log loss
    and MAE against before."""
    b, a, p, one = r["before"], r["after"], r["platt"], r["one_fit"]
    out = [f"{r['data']} (n = {r['n']:,}, C = {r['C']:g}): {a['cpu'] / one:.1f}x one fit "
           f"({'met' if a['cpu'] <= 10 * one else 'NOT met'}), {a['cpu'] / p['cpu']:.2f}x "
           f"Platt ({'met' if a['cpu'] <= 2 * p['cpu'] else 'NOT met'})"]
    if "mae" in a:
        out.append(f"MAE {a['mae'] - b['mae']:+.4f} "
                   f"({'met' if a['mae'] <= b['mae'] + 0.002 else 'NOT met'})")
    else:
        out.append(f"log loss {a['log_loss'] - b['log_loss']:+.4f} "
                   f"({'met' if a['log_loss'] <= b['log_loss'] + 0.01 else 'NOT met'})")
    out.append(f"argmax = predict {a['agreement']:.4f}")
    return ", ".join(out)


def _render_before_after(rows, note):
    """A before/after section: the table, ``note`` (what 'before' and 'after' are, how
    measured) and each row's targets of issue 25."""
    lines = "\n".join(f"- {_targets_line(r)}" for r in rows)
    return (_before_after_table(rows) + "\n\n" + note + "\n\n"
            "Targets of issue 25 (after: at most 10x one fit, at most 2x Platt, log loss "
            "at most before + 0.01 on real data, MAE at most before + 0.002 on the "
            "examples, argmax = predict):\n\n" + lines)


def render_settled(res):
    return _render_before_after(
        res["rows"],
        "'before': every class's chain refitted at every level, each warm start "
        "at the same C rescaled and its equalities restored (the fit of section 6's "
        "'after'); 'after': a chain stops at the level where its fit is settled (no "
        "variable of the up-weighted class at a bound that moves with its weight: "
        "`msvm._probability._settled`), the levels below holding that fit (counted "
        "once in 'fits'), and a warm start at the same C is the previous dual itself "
        "(`msvm._sequence.path_start`). CPU time (`time.process_time`) of one fit "
        "each, means over the repetitions, on a machine shared with six other "
        "engineers' jobs (2 cores): ratios are from the same run.")


# --------------------------------------------------------------------------- 8. shared rows
SHARED_ROWS_REPS = (3, 3)   # repetitions of section 8's examples at n = 400 and 3,000


@contextlib.contextmanager
def own_row_sources():
    """msvm's probability fit as before this round: every class's chain on a row source of
    its own (``CHAIN_GROUP_CLASSES`` = 1), the storage of its kernel rows resolved at every
    level from that level's weights (with cache_dtype='auto' the row source was rebuilt
    where it changed), and the caller's BLAS threads.  The held-out scoring is this round's
    in both (the same values to rounding)."""
    from msvm import _probability

    saved = (_probability.CHAIN_GROUP_CLASSES, _probability.resolve_cache_dtype,
             _probability.one_blas_thread)
    _probability.CHAIN_GROUP_CLASSES = 1
    _probability.resolve_cache_dtype = lambda cache_dtype, *args: cache_dtype
    _probability.one_blas_thread = contextlib.nullcontext
    try:
        yield
    finally:
        (_probability.CHAIN_GROUP_CLASSES, _probability.resolve_cache_dtype,
         _probability.one_blas_thread) = saved


def bench_shared_rows(quick):
    """Section 8: the chains of a group of classes on one row source, one storage of kernel
    rows per chain, one BLAS thread."""
    return {"rows": _before_after_rows(quick, own_row_sources, "8", reps=SHARED_ROWS_REPS)}


def render_shared_rows(res):
    return _render_before_after(
        res["rows"],
        "'before': every class's chain on a row source of its own, its kernel "
        "rows stored as the plan resolves cache_dtype='auto' at each level's weights "
        "(float64 past C / t = 100: the row source rebuilt in the middle of the chain), "
        "the caller's BLAS threads (the fit of section 7's 'after'); 'after': the "
        "chains of up to 5 classes on one X run one after another on one row source "
        "(`msvm._probability._task_chains`; each chain's first fit reuses the kernel "
        "rows the last one cached and moves its scores to the start), the storage "
        "resolved once for the chains' start, and one BLAS thread during the "
        "probability fit. Both score the held-out samples with this round's single "
        "kernel block over the union of the fits' supports (before it, section 7, "
        "the scoring took about twice as long: 0.50 against 0.25 s of pendigits "
        "2,000's fit in a profile). CPU time (`time.process_time`) of one fit "
        "each (one fit of the estimator: the least of 5 where it takes under 0.1 s), "
        "means over the repetitions (3 draws of each example at both sizes), on "
        "a machine shared with five other engineers' jobs (2 cores): ratios are from "
        "the same run.")


# --------------------------------------------------------------------------- 9. lean refits
LEAN_REPS = 3              # draws of each example (n = 400) and splits of the small real sets
LEAN_REAL = (("breast cancer", "load_breast_cancer", 1.0), ("wine", "load_wine", 1.0),
             ("digits", "load_digits", 10.0))


@contextlib.contextmanager
def main_refits():
    """msvm's probability fit as on main before this round (git 0774a35), for the same-run
    timing: every weighted refit, own fit and top fit through the public ``fit`` (its
    parameters validated), a ``clone`` (``get_params``) for every chain, template, own and
    top fit, X and y validated once per chain and once per own and top fit, the exact
    intercepts' search as before (a binary search over at most 256 candidates, the shift
    bisected with NumPy).  The fits are the same bit for bit (the fingerprint of
    ``benchmarks.objectives_fingerprint``); the base fit's objective, computed twice per
    fit on main, is computed once in both."""
    from sklearn.base import clone

    from msvm import _base, _intercept, _probability

    first_reaching, chain = _intercept._first_reaching, _probability._weighted_chain
    saved = (_base.BaseMSVM._refit, _probability._fresh_copy, _probability._with_params,
             _probability._ChainRunner._checked, _intercept.SCALAR_SHIFT_SLOTS,
             _intercept._first_reaching, _probability._weighted_chain)
    _base.BaseMSVM._refit = lambda est, X, y, sw=None: est.fit(X, y, sample_weight=sw)
    _probability._fresh_copy = clone
    _probability._with_params = lambda template, **params: clone(template).set_params(**params)
    _probability._ChainRunner._checked = lambda runner, X, y: (None,)
    _intercept.SCALAR_SHIFT_SLOTS = 0
    _intercept._first_reaching = (lambda slots, lo, hi, reaches, reaches_all=None:
                                  first_reaching(slots, lo, hi, reaches))
    _probability._weighted_chain = lambda *args, checked=None: chain(*args)
    try:
        yield
    finally:
        (_base.BaseMSVM._refit, _probability._fresh_copy, _probability._with_params,
         _probability._ChainRunner._checked, _intercept.SCALAR_SHIFT_SLOTS,
         _intercept._first_reaching, _probability._weighted_chain) = saved


def _lean_row(make, X, y, X_test, y_test, truth=None):
    """:func:`_fold_cap_row` with ``main_refits`` as before."""
    return _fold_cap_row(make, X, y, X_test, y_test, truth, before=main_refits, section="9")


def _lean_sets(quick):
    """(name, C, gamma, [(X, y, X_test, y_test, truth) per draw]) of section 9."""
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from msvm.datasets import make_reinforced_example, reinforced_example_proba

    reps = 1 if quick else LEAN_REPS
    n, n_test = (200, 1000) if quick else (400, 5000)
    for example in ("4.1.1", "4.1.2"):
        for C in (1.0, 10.0):
            draws = []
            for rep in range(reps):
                X, y = make_reinforced_example(n, example, random_state=rep)
                X_test, y_test = make_reinforced_example(n_test, example,
                                                         random_state=1000 + rep)
                draws.append((X, y, X_test, y_test,
                              reinforced_example_proba(X_test, example)))
            yield f"example {example}", C, "median", draws
    for name, loader, C in LEAN_REAL:
        X, y = getattr(datasets, loader)(return_X_y=True)
        draws = []
        for seed in range(reps):
            X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y,
                                                      random_state=seed)
            scaler = StandardScaler().fit(X_tr)
            draws.append((scaler.transform(X_tr), y_tr, scaler.transform(X_te), y_te, None))
        yield name, C, "scale", draws
    for name, C, X, y, X_test, y_test in _real_sets(quick):
        if name.startswith("pendigits"):
            yield name, C, "scale", [(X, y, X_test, y_test, None)]


def bench_lean_refits(quick):
    """Section 9: lean refits, validation once per data set, the faster exact intercepts
    against main's probability fit."""
    from msvm import ReinforcedMSVM

    rows = []
    for name, C, gamma, draws in _lean_sets(quick):
        def make(probability, C=C, gamma=gamma):
            return ReinforcedMSVM(C=C, gamma=gamma, probability=probability,
                                  probability_grid=PROBABILITY_GRID)

        runs = [_lean_row(make, *draw) for draw in draws]
        row = {"data": name, "C": C, "reps": len(runs), **_mean_runs(runs),
               "max_diff": max(r["max_diff"] for r in runs)}
        rows.append(row)
    return {"rows": rows}


def render_lean_refits(res):
    rows = res["rows"]
    diffs = "\n".join(f"- {r['data']} (C = {r['C']:g}): {r['max_diff']:.2g}" for r in rows)
    return _render_before_after(
        rows,
        "'before': main's probability fit before this round (git 0774a35: "
        "`main_refits` restores it in this process): every refit through the public "
        "`fit` (its parameters validated), a `clone` for every chain, template, own and "
        "top fit, X and y validated per chain and per own and top fit, the exact "
        "intercepts' plain search; 'after': lean refits (`BaseMSVM._refit`), X and y "
        "validated once per data set, copies instead of clones, the exact intercepts' "
        "candidates tested at once and the shift bisected on Python floats (the same "
        "bits). CPU time (`time.process_time`) of one fit each (one fit of "
        "the estimator: the least of 5 where it takes under 0.1 s), means over the "
        "draws (3 of each example at n = 400, 3 stratified 70/30 splits of breast cancer, "
        "wine and digits, one of pendigits), on a machine shared with four other "
        "engineers' jobs (2 cores, load 5 to 10): ratios are from the same run.") + (
        "\n\nLargest absolute difference between the test probabilities before and after "
        "(over the draws):\n\n" + diffs) + _render_fewer_fits(res.get("fewer"))


# ------------------------------------------------------------- 9 (continued). fewer fits
# The small-data calibrations measured in round 10 with the SMALL_DATA_* knobs of
# msvm._probability at commit a7ce215 (removed after it: none was kept), in the order of the
# table; their rows stay in probability.json, from the run that made them
FEWER_FITS = ("every fit (kept)", "C factor 1 only", "folds' chains on every other level",
              "C factor decided on the first fold")


def _render_fewer_fits(rows):
    """The fewer-fits table of section 9 from the stored measurement, or nothing."""
    if not rows:
        return ""
    return ("\n\n### Fewer calibration fits on small data (measured, not kept)\n\n"
            "The probability fit with every calibration fit (the library's) against three "
            "cheaper calibrations, in one process, on the small sets above (3 draws each): "
            "the calibration folds' chains at C only (not at 3 C as well); on every other "
            "level of the grid (t_1, t_3, t_5, t_7); the C factor chosen on the first "
            "fold's held-out samples, the second fold refitted at that factor only "
            "(measured at commit a7ce215, whose SMALL_DATA_* knobs of msvm._probability "
            "were removed after it).\n\n" + render_fewer_fits({"rows": rows}))


def render_fewer_fits(res):
    rows, base = [], next(iter(FEWER_FITS))
    for r in res["rows"]:
        score = "mae" if "mae" in r[base] else "log_loss"
        for variant in FEWER_FITS:
            v = r[variant]
            delta = v[score] - r[base][score]
            limit = 0.002 if score == "mae" else 0.01
            rows.append([r["data"], f"{r['C']:g}", f"{r['n']:,}", variant,
                         f"{v['n_fits']:.0f}", f"{v['ratio']:.1f}x",
                         f"{v[score]:.4f} ({'MAE' if score == 'mae' else 'log loss'})",
                         f"{delta:+.4f}" + ("" if variant == base else
                                            (" (within)" if delta <= limit else " (OVER)")),
                         f"{v['agreement']:.4f}"])
    return markdown_table(["data", "C", "n", "calibration", "fits", "x one fit",
                           "score", "vs every fit", "argmax = predict"], rows) + (
        "\n\nMeans over the draws (3 of each example at n = 400, 3 splits of the real "
        "sets); 'x one fit' is the mean of the per-draw ratios of CPU time "
        "(`time.process_time`, one fit each; one fit of the estimator the least of 5), "
        "on a machine shared with four other engineers' jobs (2 cores). Limits of issue "
        "25: MAE against the truth at most +0.002, log loss at most +0.01. None of the "
        "three is kept in `msvm._probability`.")


SETUPS = {
    "1": ("1. Simulated examples with known probabilities (Liu and Yuan 2011, 4.1.1 and 4.1.2)",
          "Training data `make_reinforced_example(n, example, random_state=rep)`, test data of "
          "5000 samples with random_state = 1000 + rep, true probabilities "
          "`reinforced_example_proba` (equal priors, Gaussian class densities). "
          "ReinforcedMSVM(reinforcement=0.5, gamma='median'), probability_grid=8 (1 + 3 x 8 "
          "= 25 fits; with f refitted calibration folds at C and 3 C, 25 + f x 50 fits, one "
          "more when 3 C is chosen; f is stated under the table); Platt: "
          "CalibratedClassifierCV(ReinforcedMSVM(same C), "
          "method='sigmoid', cv=5); isotonic: the same with method='isotonic'; "
          "SVC(probability=True) with the same C and the resolved median gamma. C fixed at 1 "
          "or 10 for all, or chosen for each method by its "
          "own 5-fold cross-validated log loss (`GridSearchCV(scoring='neg_log_loss')` on the "
          "training data) from {0.1, 1, 10, 30} (the C of each repetition listed; 3 "
          "repetitions instead of 5, to bound the run time). MAE = mean over test "
          "samples and classes of |p_hat - p|; Brier = mean of sum_j (p_hat_j - 1{y = j})^2; "
          "argmax = predict: share of test samples whose most probable class is the "
          "classifier's prediction (for Platt, the prediction of the msvm estimator refitted "
          "on all the training data). Means over the repetitions; fit times are CPU time "
          "(`time.process_time`, one fit each) unless marked wall, on a machine shared with "
          "other jobs; the ratio columns divide msvm's probability fit by the others'. "
          "'before (3 folds)' is the run of 2026-11-26 (git b03e985, three refitted "
          "calibration folds), '2026-11-23' the run before issue 25 (git 819719f)."),
    "2": ("2. Pendigits",
          "Standardized stratified 70/30 split of pendigits, a stratified 2000-sample part of "
          "the training set (random_state=0), the whole test set. ReinforcedMSVM(C=10, "
          "gamma='scale'), probability_grid=8 (1 + 10 x 8 = 81 fits, "
          "81 + f x 162 (+1) with f refitted calibration folds, stated under the table); Platt: "
          "CalibratedClassifierCV(ReinforcedMSVM(C=10), method='sigmoid', cv=5) and "
          "method='isotonic'; SVC(probability=True, C=10, same gamma); the msvm "
          "probability fit again with n_jobs=2. Wall time (`time.perf_counter`) and CPU "
          "time (`time.process_time`) of one fit each."),
    "3": ("3. Breast cancer (Wisconsin diagnostic, k = 2)",
          "scikit-learn's `load_breast_cancer` (569 x 30), standardized stratified 70/30 split "
          "(random_state=0): 398 training and 171 test samples. ReinforcedMSVM(C=1, "
          "gamma='scale'), probability_grid=8 (1 + 2 x 8 = 17 fits, 17 + f x 34 (+1) with f "
          "refitted calibration folds); Platt and isotonic: "
          "CalibratedClassifierCV(ReinforcedMSVM(C=1), cv=5); SVC(probability=True, C=1, same "
          "gamma). CPU time (`time.process_time`) of one fit each, on a shared machine."),
    "4": ("4. Approximate kernel: the feature map kept along a chain",
          "`make_classification(3000, 20, n_informative=10, n_classes=5, "
          "n_clusters_per_class=1, random_state=0)`, ReinforcedMSVM(kernel_approximation="
          "'nystroem', n_components=1000, random_state=0): the chain of class 0's weighted "
          "fits at 4 levels (the refit template of probability=True: C_, 10 tol) with the "
          "feature map and phi(X) kept from one level to the next, and with the map fitted "
          "again in every weighted fit (what the fits did before), in one process; CPU time "
          "(`time.process_time`), on a machine shared with other jobs."),
    "5": ("5. Approximate kernel at scale: probability=True against one fit",
          "`make_classification(n + 5000, 20, n_informative=10, n_classes=5, "
          "n_clusters_per_class=1, random_state=0)`, the first n samples for training and the "
          "last 5000 for the log loss; ReinforcedMSVM(kernel_approximation='nystroem', "
          "n_components as listed, random_state=0), default C and tol, probability_grid=8. "
          "'before': every chain of weighted fits (and every top fit at 3 C) fitted the "
          "feature map and phi(X) again; 'after': the chains and top fits on the same X "
          "reuse the map and phi(X) of the own fit on that X (3 maps instead of 30). Sizes "
          "by `--approx N:COMPONENTS[:before],...`."),
    "6": ("6. Calibration folds capped in size (issue 25 item 1)",
          "The probability fit before and after this round's change in one process: "
          "pendigits (the split of section 2) at 2,000 samples and all 7,694 (C = 10), breast "
          "cancer (section 3, C = 1), and Liu and Yuan's examples 4.1.1 and 4.1.2 at C = 1 and "
          "10 with n = 400 (2 repetitions, as in section 1: the cap does not act there) and "
          "n = 3,000 (one repetition: the cap acts), 5000 test samples; "
          "ReinforcedMSVM (gamma='scale' on the real data, 'median' on the examples), "
          "probability_grid=8; Platt: CalibratedClassifierCV(same estimator, "
          "method='sigmoid', cv=5)."),
    "7": ("7. Chains that stop where they settle (issue 25 item 1)",
          "The probability fit before and after this round's change in one process, on the "
          "data of section 6: pendigits (the split of section 2) at 2,000 samples and all "
          "7,694 (C = 10), breast cancer (section 3, C = 1), and Liu and Yuan's examples "
          "4.1.1 and 4.1.2 at C = 1 and 10 with n = 400 (2 repetitions) and n = 3,000 (one "
          "repetition), 5000 test samples; ReinforcedMSVM (gamma='scale' on the real data, "
          "'median' on the examples), probability_grid=8; Platt: "
          "CalibratedClassifierCV(same estimator, method='sigmoid', cv=5)."),
    "8": ("8. Chains on one row source per group of classes (issue 25 item 1)",
          "The probability fit before and after this round's change in one process, on the "
          "data of section 7 with 3 draws of each example at n = 400 and at n = 3,000 "
          "(means over the draws): pendigits at 2,000 samples and all 7,694 (C = 10), "
          "breast cancer (C = 1), Liu and Yuan's examples 4.1.1 and 4.1.2 at C = 1 and 10; "
          "ReinforcedMSVM (gamma='scale' on the real data, 'median' on the examples), "
          "probability_grid=8; Platt: CalibratedClassifierCV(same estimator, "
          "method='sigmoid', cv=5)."),
    "9": ("9. Lean refits on small data (issue 25 item 1)",
          "The probability fit before (main before this round) and after in one process: "
          "Liu and Yuan's examples 4.1.1 and 4.1.2 at C = 1 and 10 with n = 400 (3 draws, "
          "5000 test samples), breast cancer (C = 1), wine (k = 3, 124 training samples, "
          "C = 1) and digits (k = 10, 1,257 training samples, C = 10), each on 3 "
          "stratified 70/30 splits (seeds 0-2, standardized), and pendigits at 2,000 "
          "samples and all 7,694 (C = 10, the split of section 2); ReinforcedMSVM "
          "(gamma='scale' on the real data, 'median' on the examples), "
          "probability_grid=8; Platt: CalibratedClassifierCV(same estimator, "
          "method='sigmoid', cv=5)."),
}
SETUPS["9b"] = (
    "9b. The fixed cost of a refit on small data (issue 25 item 1, round 13)",
    "Where a probability fit's CPU time goes on wine (124 training samples, k = 3), breast "
    "cancer (398, k = 2) and Liu and Yuan's example 4.1.1 (n = 400, k = 3), all at C = 1, "
    "before and after; then the probability fit before and after on the examples 4.1.1 and "
    "4.1.2 at n = 400 (draw 0, 5000 test samples) at C = 1 and 10, breast cancer, wine and "
    "digits (the stratified 70/30 split of seed 0, standardized; C = 1, 1, 10) and "
    "pendigits at 2,000 samples (C = 10, the split of section 2), ReinforcedMSVM "
    "(gamma='median' on the examples, 'scale' on the real data); and every estimator with a "
    "probability estimate on wine (C = 1, default parameters otherwise). Written by "
    "`benchmarks/probability_lean.py`.")
SETUPS["9c"] = (
    "9c. Weight levels as lean steps on a kept state (issue 25 item 1, round 14)",
    "Where a probability fit's CPU time goes on wine (124 training samples, k = 3), breast "
    "cancer (398, k = 2) and Liu and Yuan's example 4.1.1 (n = 400, k = 3), all at C = 1, "
    "with a refit of the estimator at every weight level (main 10578f8) and with the "
    "levels as lean steps on one kept state per group of classes (msvm/_level_chain.py); "
    "then the probability fit before and after on the sets of section 9b (ReinforcedMSVM) "
    "and WestonWatkinsMSVM and AngleBasedMSVM on wine and example 4.1.1 at C = 1. Written "
    "by `benchmarks/probability_lean.py`.")
SETUPS["9d"] = (
    "9d. The DC, reweighting and targeted models' chains stop where settled (issue 25 item 1, "
    "round 14)",
    "RobustMSVM, WeightedRobustMSVM, AdaptiveWeightedSVM and TargetedLocalMSVM: the "
    "probability fit before (main 10578f8's: its settled rule, every targeted grid point "
    "solved in every refit) and after on wine (124 training "
    "samples, k = 3), breast cancer (398, k = 2) and Liu and Yuan's example 4.1.1 (n = 400, "
    "k = 3, 5000 test samples) at C = 1; then the settled rule checked against every level "
    "refitted on those and example 4.1.2 at C = 1 and 10. Written by "
    "`benchmarks/probability_paths.py`.")
SETUPS["9e"] = (
    "9e. The rest of a small-data probability fit's fixed cost (issue 25 item 1, round 14)",
    "Where a probability fit's CPU time goes on wine, breast cancer and example 4.1.1 (as in "
    "section 9c) before (main d3d7ab4) and after two cheaper paths to the same numbers: the "
    "held-out blocks' squared distances formed without scikit-learn's input checks "
    "(`msvm._kernels.FAST_DISTANCES`) and whether a row source's scores can drift found "
    "once per source instead of twice per solve; then the probability fit before and after "
    "on the sets of section 9b (ReinforcedMSVM). Written by "
    "`benchmarks/probability_lean.py`.")
SETUPS["9f"] = (
    "9f. A lean level's work around its solve compiled (issue 25 item 1, round 15)",
    "Where a probability fit's CPU time goes on wine, breast cancer and example 4.1.1 (as in "
    "section 9c) before (main 080c064: the Python level step) and after (the scores moved "
    "to a level's start and its exact intercepts, coefficients, support and settled test "
    "formed in compiled calls, msvm/_core/_level_loop.pyx); then the probability fit "
    "before and after on the sets of section 9b (ReinforcedMSVM) and WestonWatkinsMSVM and "
    "AngleBasedMSVM on wine, breast cancer and the examples 4.1.1 and 4.1.2 at C = 1 and "
    "10. Written by `benchmarks/probability_lean.py`.")
SETUPS["9g"] = (
    "9g. The DC models' refits with a lean fixed cost (issue 25 item 1, round 15)",
    "RobustMSVM and WeightedRobustMSVM (truncation 'auto'), and AdaptiveWeightedSVM (its "
    "first solve's dual kept, the penalty and seed kept): where a probability fit's CPU "
    "time goes on Liu and Yuan's examples 4.1.1 and 4.1.2 (n = 400) at C = 1, and the "
    "probability fit before (main 51483cd) and after the lean DC steps (msvm/_dc.py: the "
    "steps' problems as copies with moved bounds, a chain's untruncated duals as one kept "
    "dual with scaled bounds, the solutions formed by the compiled level tail, the "
    "solver's penalty and seed kept for a chain) on those, wine and breast cancer. Written "
    "by `benchmarks/probability_paths.py`.")
SETUPS["9h"] = (
    "9h. The warm solve of a probability level at small n (issue 25 item 1, round 15)",
    "The block loop of the compiled SMO over every solve of a probability fit (the weight "
    "levels' warm solves at n = 83-400) on example 4.1.1 (C = 1 and 10), breast cancer and "
    "wine (ReinforcedMSVM; WestonWatkinsMSVM and AngleBasedMSVM on example 4.1.1), before "
    "(main 0fa54fe's block load) and after (the working set's kernel block gathered whole "
    "on rows under 1,024 entries instead of its triangle and mirror; the block's variables "
    "picked with the problem's fields in locals); then pendigits ReinforcedMSVM one fit. "
    "Written by `benchmarks/probability_lean.py`.")
SETUPS["9i"] = (
    "9i. A DC model's refits as lean steps on the kept sequence (issue 25 item 1, round 16)",
    "RobustMSVM and WeightedRobustMSVM (truncation 'auto'): where a probability fit's CPU "
    "time goes, part by part, on Liu and Yuan's examples 4.1.1 and 4.1.2 (n = 400) at C = 1, "
    "and the probability fit before (main 5c4386a) and after the DC steps as lean solves "
    "(msvm/_dc.py `LEAN_DC_LOOP`: the scores moved by one compiled pass where two duals "
    "share their directions, the inner solver found once per fit, the checks of "
    "`DualSequence.solve` that cannot apply skipped, a step's duality gap formed only "
    "where it is read, a chain's penalty and drift test kept also without an integer "
    "random_state) on those, wine and breast cancer. Written by "
    "`benchmarks/probability_paths.py`.")
SETUPS["9k"] = (
    "9k. A DC chain's levels from the previous level's last step (issue 25 item 1, round 16)",
    "RobustMSVM and WeightedRobustMSVM (truncation 'auto'): the probability fit before "
    "(main 107ffe2: every level of a chain refitted from an untruncated solve) and after "
    "(msvm/_dc.py `CHAIN_DC_START`: a level's DC path starts from the previous level's last "
    "step, its linearization with this level's bounds and the up-weighted class "
    "untruncated) on Liu and Yuan's examples 4.1.1 and 4.1.2 (n = 400), wine and breast "
    "cancer at C = 1, the refits and solves counted, and the scores over three splits. "
    "Written by `benchmarks/probability_paths.py`.")
SETUPS["9l"] = (
    "9l. The calibration folds' first finishing step on pendigits 2,000 (issue 25 item 1, "
    "round 16)",
    "ReinforcedMSVM, WestonWatkinsMSVM and AngleBasedMSVM on a stratified 2,000-sample part "
    "of pendigits (the split of section 9b, C = 10, gamma 'scale'; ReinforcedMSVM also on "
    "all 7,694 samples): where ReinforcedMSVM's probability fit spends its CPU time by "
    "phase (the estimator's own fit, the calibration folds' own fits and chains, the "
    "held-out scoring, the shape fit, the full data's chains; the compiled solves, exact "
    "finishing steps and epochs of each), and the probability fit before (main 7372d01: a "
    "fold's fits take their first exact finishing step after 100 epochs) and after "
    "(`msvm._plan.FOLD_FINISH_AFTER`: after 400 epochs on kernel rows, on folds of at "
    "least 2,000 samples times classes). Written by "
    "`benchmarks/probability_lean.py`.")
SETUPS["9m"] = (
    "9m. AdaptiveWeightedSVM's reweighted solves as lean solves (issue 25 item 1, round 16)",
    "AdaptiveWeightedSVM (scheme 'one-step'): where a probability fit's CPU time goes, part "
    "by part, on Liu and Yuan's examples 4.1.1 and 4.1.2 (n = 400) at C = 1, and the "
    "probability fit before (main ff4354d) and after the reweighted solve as a lean solve "
    "(msvm/weighted.py `LEAN_REWEIGHT`: a chain's reweighted dual as its kept dual scaled, "
    "so the scores move by the compiled pass; the start clipped with the over-full "
    "groups' moves made at once, round by round, `msvm._sequence.clipped_start`; the solve "
    "`msvm._dc.lean_solve`; the objective formed only where the log prints) on those, wine "
    "and breast cancer. Written by `benchmarks/probability_paths.py`.")
SETUPS["9n"] = (
    "9n. A DC chain's levels stop on a decrease within the refit's tol (issue 25 item 1, "
    "round 17)",
    "RobustMSVM and WeightedRobustMSVM (truncation 'auto'): the probability fit before "
    "(main aae56db: a chain level's DC loop stops on a decrease below dc_tol, in practice "
    "on a step that rose within tol and is dropped) and after (msvm/_dc.py `LEVEL_DC_TOL`: "
    "a probability chain's refit stops once an accepted step lowers the objective by at "
    "most max(dc_tol, tol) of it, the bound within which the loop already accepts a rise) "
    "on Liu and Yuan's examples 4.1.1 and 4.1.2 (n = 400), wine and breast cancer at C = 1, "
    "the refits and solves counted, and over three splits the scores of the variants "
    "measured and not kept (a cap of DC steps on a chain's later levels, "
    "`LEVEL_DC_STEPS`; RobustMSVM's levels from the previous level's last step). Written "
    "by `benchmarks/probability_paths.py`.")
SETUPS["9o"] = (
    "9o. The DC models' refits read again the values they formed (issue 25 item 1, round "
    "17)",
    "RobustMSVM and WeightedRobustMSVM (truncation 'auto'): where a probability fit's CPU "
    "time goes, part by part (with the refit's own steps around its DC fit), on Liu and "
    "Yuan's examples 4.1.1 and 4.1.2 (n = 400) at C = 1, now that a chain level takes about "
    "two compiled solves (section 9n), and the probability fit before (main ebff6f7) and "
    "after the DC fits keep values they have formed (msvm/_dc.py `DC_KEPT_VALUES`: the "
    "returned solution's objective read by `_store_solution` instead of formed again, its "
    "truncated mask taken from the loop's last linearization where that was read at it, "
    "the lean snapshot's identity output map made once; msvm/weighted.py "
    "`SAMPLE_MARGINS_SHIFT`: WeightedRobustMSVM's linearization from each sample's two "
    "largest decision values) on those, wine and breast cancer. "
    "Written by `benchmarks/probability_paths.py`.")
SETUPS["9p"] = (probability_dclevel.TITLE, probability_dclevel.SETUP)
SETUPS["9q"] = (
    "9q. AdaptiveWeightedSVM's chain levels at frozen weights (issue 25 item 1, round 18)",
    "AdaptiveWeightedSVM (scheme 'one-step'): where a probability fit's CPU time goes, part "
    "by part, on Liu and Yuan's examples 4.1.1 and 4.1.2 (n = 400) at C = 1, and the "
    "probability fit before (main c94be25) and after a chain's levels below two successive "
    "ones whose adaptive weights v each moved from the level above's by less than a "
    "threshold on average take the last v and skip their solve at v = 1 (msvm/weighted.py "
    "`FROZEN_WEIGHTS_BELOW`, `FROZEN_WEIGHTS_MOVES`: each such level is the one reweighted "
    "solve, from the level above's solution) on "
    "those, wine and breast cancer; the scores of every variant over three draws of each "
    "set and before / after over six more draws of the examples. Written by "
    "`benchmarks/probability_adaptive.py`.")
RENDER = {"1": render_simulated, "2": render_pendigits, "3": render_breast_cancer,
          "4": render_feature_map, "5": render_approx, "6": render_fold_cap,
          "7": render_settled, "8": render_shared_rows, "9": render_lean_refits,
          "9b": render_lean_levels, "9c": render_level_steps,
          "9d": render_paths, "9e": render_fixed_cost, "9f": render_level_loop,
          "9g": render_dc_levels, "9h": render_small_solve, "9i": render_dc_loop,
          "9k": render_chain_dc, "9l": render_fold_finish, "9m": render_adaptive_lean,
          "9n": render_level_tol, "9o": render_dc_fixed,
          "9p": probability_dclevel.render_dc_passes, "9q": render_adaptive_frozen}


def render_report(data):
    report = sectioned_report(
        data, "msvm class-probability benchmark results",
        "python -m benchmarks.run_probability_benchmarks", SETUPS, RENDER,
        extra="The method is described in `docs/probability.md`.",
        quick_note="tiny sizes; the numbers say nothing about accuracy.")
    return report if data.get("quick") else with_targeted_section(report)


def with_targeted_section(report):
    """``report`` with section 9j, which `benchmarks/probability_targeted.py` writes from its
    own results file (probability_targeted.json), in its place before section 9k: a report
    rendered from probability.json alone would drop it."""
    import json
    import pathlib

    from benchmarks import probability_targeted as targeted

    path = pathlib.Path(__file__).parent / "results" / "probability_targeted.json"
    if targeted.HEADING in report or not path.exists():
        return report
    section = targeted.render_all(json.loads(path.read_text())).rstrip("\n") + "\n\n"
    at = report.find("\n## 9k.")
    at = len(report) if at < 0 else at + 1
    return report[:at] + section + report[at:]


def _approx_runs(text):
    """--approx N:COMPONENTS[:before],...: the sizes of section 5 (n, components, before)."""
    runs = []
    for item in text.split(","):
        parts = item.split(":")
        runs.append((int(parts[0]), int(parts[1]) if len(parts) > 1 else 1000,
                     len(parts) > 2 and parts[2] == "before"))
    return runs


def main(argv=None):
    import argparse
    import sys

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--approx", default=None,
                     help="section 5's sizes, N:COMPONENTS[:before],... (default 5000:300:before)")
    args, rest = pre.parse_known_args(sys.argv[1:] if argv is None else argv)
    if args.approx is not None:
        APPROX_RUNS[:] = _approx_runs(args.approx)
    return sectioned_main(rest, __doc__.split("\n\n")[0], "probability",
                          {"1": bench_simulated, "2": bench_pendigits,
                           "3": bench_breast_cancer, "4": bench_feature_map,
                           "5": bench_approx, "6": bench_fold_cap, "7": bench_settled,
                           "8": bench_shared_rows, "9": bench_lean_refits,
                           "9b": bench_lean_levels, "9c": bench_level_steps,
                           "9d": bench_paths, "9e": bench_fixed_cost,
                           "9f": bench_level_loop, "9g": bench_dc_levels,
                           "9h": bench_small_solve, "9i": bench_dc_loop,
                           "9k": bench_chain_dc, "9l": bench_fold_finish,
                           "9m": bench_adaptive_lean, "9n": bench_level_tol,
                           "9o": bench_dc_fixed,
                           "9p": probability_dclevel.bench_dc_passes,
                           "9q": bench_adaptive_frozen},
                          SETUPS, RENDER, render_report)


if __name__ == "__main__":
    raise SystemExit(main())
