"""probability=True on the approximate-kernel path at scale (issue 25 item 4).

    python -m benchmarks.run_probability_scale --sizes 20000:200,20000:1000 --modes before,after
    python -m benchmarks.run_probability_scale --sizes 5000:linear --modes before,after
    python -m benchmarks.run_probability_scale --quick          # n = 2,000, a smoke run

(from the repository root)

Data as section 5 of benchmarks/results/probability.md: ``make_classification(n + 5000, 20,
n_informative=10, n_classes=5, n_clusters_per_class=1, random_state=0)``, the first n samples
for training and the last 5,000 for the log loss; ReinforcedMSVM(kernel_approximation=
'nystroem', n_components as listed, random_state=0), default C and tol, probability_grid=8.
A size N:linear is the linear-kernel case instead (ReinforcedMSVM(kernel='linear', C=10) on
``make_classification(n + 5000, 5, n_informative=5, n_redundant=0, ...)``, the same
otherwise): few explicit features, where the smoothed-primal start certifies a refit at once.
A size N:linear20 is the linear kernel (C = 10) on the d = 20 problem of the Nystroem cases.

For each size: one fit (``probability=False``) and, for each mode, ``probability=True``, all in
this process, so that ratios are of the same run:

- 'before': the code path of main at the start of round 9 (``msvm._plan.REFIT_DUAL_FIRST``
  off: a weighted refit starts from the smoothed primal wherever a fit from zero would; and
  no row source kept from one level of a chain to the next with a ``kernel_approximation``);
- 'main': the code path of main at the start of round 11 (b9f36a5): ``msvm._plan.
  REFIT_DUAL_FIRST = True`` (a chain's refit runs dual coordinate descent first where the
  primal start applies), ``msvm._primal.BALANCE_POWER = 0`` (the smoothed primal of a
  weighted refit smoothed with one mu, its bands set by the heaviest samples) and
  ``msvm._plan.REFIT_EXPLICIT_LINEAR = False`` (the linear kernel's chains on the kernel
  rows x_i^T X up to 2,000 samples, as a fit from zero);
- 'r11': the code path of main at the start of round 12 (3a47b86): ``msvm._plan.
  PRIMAL_SLOT_ROUTE = False`` (no smoothed-primal start above ``PRIMAL_MAX_UNKNOWNS`` =
  1,500 unknowns (d + 1) k, so none with 1,000 Nystroem components at k = 5, and the dense
  Newton route below) and ``msvm._primal.BALANCED_WARM_DESCENT = True`` (a weighted
  refit's start takes a steepest-descent step from its warm start); 'before' and 'main'
  have both too;
- 'after': as the library runs now (since round 12: above 1,500 unknowns, and for one-slot
  terms from 1,000, the start solves its Newton systems on the curvature's slot blocks,
  msvm/_newton_cg.py; since round 11: a chain's refit starts from the smoothed
  primal wherever a fit from zero would, smoothed with bands alike for all samples,
  ``msvm._primal._balanced``; the linear kernel's chains on explicit features from 500
  samples, ``msvm._plan.refit_rows``; the chain keeps its row source, so that a level's
  scores and kernel rows are not computed afresh and a chain stops where it is settled;
  since round 15: a calibration fold's fits on an approximate kernel's features solve on
  them from the smoothed primal where the fold's box bound C n / 1,000 reaches
  ``msvm._plan.REFIT_FOLD_MIN_BOUND``, ``msvm._plan.fold_overrides``, and a weighted
  refit's Newton steps compute dF = X s in single precision on the float32 features,
  ``msvm._primal.SINGLE_STEPS``; since round 16: their gradient's X^T U too,
  ``msvm._primal.SINGLE_GRADIENT``;
  in the sections of rounds 8 and 9, 'after' was the library of that round);
- 'r14': the code path of main at the start of round 15 (080c064): ``msvm._plan.
  REFIT_FOLD_PRIMAL = False`` (a calibration fold's fits on the features' Gram rows, as a
  fit from zero on 1,000 samples, whatever the weights n / 1,000 do to the box bound) and
  ``msvm._primal.SINGLE_STEPS = False`` (a weighted refit's Newton steps' dF = X s in double
  precision); 'before', 'main' and 'r11' have both too;
- 'r15': the code path of main at the end of round 15 (0fa54fe), measured in section
  "Round 15b" against 'after' = commit f39f460 of branch approxprob2 (kept on branch
  approxprob2-exact-passes): ``msvm._sequence.SKIP_SAME_MOVE`` (a solve's move to the dual
  the sequence holds skipped) and ``msvm._snapshot.SHARED_PASS`` (the explicit snapshot's
  X Wh and X W in one pass over float32 features), both exact; neither gained, so neither
  is in the library; since round 16 'r15' is main at the start of that round (bf63961):
  ``msvm._primal.SINGLE_GRADIENT = False`` (a balanced start's gradient X^T U converts each
  float32 block of the features to float64; 'before' to 'r14' have it too);
- 'r16': round 16's first change alone (section "Round 16"): ``msvm._primal.
  WEIGHTED_AS_BALANCED = False`` (a chain's levels whose boxes differ by at most
  ``BALANCE_MIN_RATIO`` start from the warm start with a steepest-descent step and double-
  precision steps, as a fit from zero would); 'r15' and earlier have it too;
- 'unshared': as 'after' with every fit scoring the held-out and test inputs through its own
  phi(X) (the path before the shared-map scoring of round 8);
- 'uncapped': as 'after' with the calibration folds' training parts not capped
  (``CALIBRATION_TRAIN_MAX = None``), the construction the cap approximates (its log loss is
  the reference of the +0.01 target).

Reported: CPU time (``time.process_time``; the machine is shared with other jobs, so wall time
means nothing), the ratio to one fit, the number of fits, where the time goes (the folds' own
fits, the top fits at the refits' C, the weighted chains on the full data and on the folds,
the held-out ratios of the folds), the epochs of the weighted refits, the held-out log loss
and whether the argmax of ``predict_proba`` is ``predict`` on the test and training samples.
Results are merged into benchmarks/results/probability_scale.json (keyed by section, size and
mode; ``--section`` names the section of this run) and the whole page rewritten to
probability_scale.md; timings are reported, never asserted.
"""

import argparse
import time
import warnings
from contextlib import contextmanager

import numpy as np

from benchmarks.harness import RESULTS, machine_info, markdown_table, to_json, write_json

SEED = 0
TEST = 5000
GRID = 8
STEM = "probability_scale"
MODES = ("before", "main", "r11", "r14", "r15", "r16", "after", "unshared", "uncapped")
LINEAR = 0          # the "components" of the linear-kernel case (a size N:linear)
LINEAR20 = -20      # the linear kernel on section 5's d = 20 problem (a size N:linear20)
LINEARS = (LINEAR, LINEAR20)
SECTION = "Round 8: shared-map scoring"   # of results stored without one


def label(components):
    return {LINEAR: "linear", LINEAR20: "linear20"}.get(components, components)


def data(n, components=None):
    """(X, y, X_test, y_test) of section 5's problem with n training samples (the d = 5
    problem of the linear case for ``components == LINEAR``)."""
    from sklearn.datasets import make_classification

    shape = (dict(n_features=5, n_informative=5, n_redundant=0) if components == LINEAR
             else dict(n_features=20, n_informative=10))
    X, y = make_classification(n + TEST, **shape, n_classes=5, n_clusters_per_class=1,
                               random_state=SEED)
    return X[:n], y[:n], X[n:], y[n:]


def estimator(components, **params):
    from msvm import ReinforcedMSVM

    if components in LINEARS:
        return ReinforcedMSVM(kernel="linear", C=10.0, random_state=SEED, **params)
    return ReinforcedMSVM(kernel_approximation="nystroem", n_components=components,
                          random_state=SEED, **params)


class StageClock:
    """CPU time per stage of a probability fit and one record per weighted refit, by
    wrapping the units of work of ``msvm._probability._ChainRunner`` (the same calls)."""

    def __init__(self, n):
        self.n, self.stages, self.refits, self.chains = n, {}, [], []

    def timed(self, name, function):
        def run(*args, **kwargs):
            cpu = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.stages[name] = self.stages.get(name, 0.0) + time.process_time() - cpu
        return run

    def chains_of(self, template, start, X, y, sample_weight, levels, labels, features=None,
                  checked=None):
        """``msvm._probability._task_chains`` itself (the chains of some classes on one X),
        its CPU time and, from the fits it returns (each once), every refit's epochs and
        start."""
        from msvm import _probability

        cpu = time.process_time()
        chains = _probability._task_chains(template, start, X, y, sample_weight, levels,
                                           labels, features, checked)
        cpu = time.process_time() - cpu
        fits = list({id(fit): fit for chain in chains for fit in chain[::-1]}.values())
        self.chains.append({"n": int(len(y)), "cpu": cpu, "refits": len(fits)})
        for est in fits:
            steps = est.solver_plan_.steps
            self.refits.append({"n": int(len(y)), "C": float(est.C), "epochs": int(est.n_iter_),
                                "primal_start": any(s.primal_start for s in steps),
                                "late_start": any(s.late_primal_start for s in steps)})
        return chains

    @contextmanager
    def installed(self, module):
        runner = module._ChainRunner
        saved = {name: runner.__dict__[name] for name in
                 ("task_chains", "own_fit", "top_fit", "ratios")}
        runner.task_chains = staticmethod(self.timed("chains", self.chains_of))
        runner.own_fit = staticmethod(self.timed("folds' own fits", module._own_fit))
        runner.top_fit = staticmethod(self.timed("top fits", module._top_fit))
        runner.ratios = staticmethod(self.timed("held-out ratios", module.bracketed_ratios))
        try:
            yield self
        finally:
            for name, value in saved.items():
                setattr(runner, name, value)

    def summary(self):
        out = {name: round(cpu, 3) for name, cpu in self.stages.items()}
        for name, full in (("full", True), ("folds", False)):
            rows = [r for r in self.refits if (r["n"] == self.n) == full]
            chains = [c for c in self.chains if (c["n"] == self.n) == full]
            out[f"{name} refits"] = len(rows)
            out[f"{name} chains CPU"] = round(sum(c["cpu"] for c in chains), 3)
            out[f"{name} refit epochs (mean)"] = (round(float(np.mean([r["epochs"] for r in rows])),
                                                        1) if rows else None)
            out[f"{name} refits from the primal"] = sum(r["primal_start"] for r in rows)
            out[f"{name} refits on from a late primal start"] = sum(r["late_start"] for r in rows)
        return out


@contextmanager
def mode_switches(mode):
    """The library as in ``mode`` (see the module note), restored on exit."""
    from msvm import _plan, _primal, _probability

    from msvm._base import BaseMSVM

    saved = (_probability._mapped_ratios, _probability.CALIBRATION_TRAIN_MAX,
             _plan.REFIT_DUAL_FIRST, BaseMSVM.__dict__["_row_source_key"],
             _plan.REFIT_EXPLICIT_LINEAR, _primal.BALANCE_POWER, _plan.PRIMAL_SLOT_ROUTE,
             _primal.BALANCED_WARM_DESCENT, _plan.REFIT_FOLD_PRIMAL, _primal.SINGLE_STEPS,
             _primal.SINGLE_GRADIENT, _primal.WEIGHTED_AS_BALANCED)
    if mode in ("before", "main", "r11", "r14", "r15", "r16"):
        _primal.WEIGHTED_AS_BALANCED = False
    if mode in ("before", "main", "r11", "r14", "r15"):
        _primal.SINGLE_GRADIENT = False
    if mode in ("before", "main", "r11", "r14"):
        _plan.REFIT_FOLD_PRIMAL = False
        _primal.SINGLE_STEPS = False
    if mode in ("before", "main", "r11"):
        _plan.PRIMAL_SLOT_ROUTE = False
        _primal.BALANCED_WARM_DESCENT = True
    if mode in ("before", "main"):
        _plan.REFIT_DUAL_FIRST = True
        _plan.REFIT_EXPLICIT_LINEAR = False
        _primal.BALANCE_POWER = 0.0
    if mode == "before":
        _plan.REFIT_DUAL_FIRST = False
        BaseMSVM._row_source_key = _no_kept_rows(BaseMSVM._row_source_key)
    if mode == "unshared":
        _probability._mapped_ratios = lambda *args: None
    if mode == "uncapped":
        _probability.CALIBRATION_TRAIN_MAX = None
    try:
        yield
    finally:
        (_probability._mapped_ratios, _probability.CALIBRATION_TRAIN_MAX,
         _plan.REFIT_DUAL_FIRST) = saved[:3]
        BaseMSVM._row_source_key = saved[3]
        (_plan.REFIT_EXPLICIT_LINEAR, _primal.BALANCE_POWER, _plan.PRIMAL_SLOT_ROUTE,
         _primal.BALANCED_WARM_DESCENT, _plan.REFIT_FOLD_PRIMAL, _primal.SINGLE_STEPS,
         _primal.SINGLE_GRADIENT, _primal.WEIGHTED_AS_BALANCED) = saved[4:]


def _no_kept_rows(key):
    """``BaseMSVM._row_source_key`` as on main before round 9: no row source kept with a
    ``kernel_approximation``."""
    def main_key(self, *args):
        return None if self.kernel_approximation is not None else key(self, *args)
    return main_key


def probability_fit(n, components, mode, X, y, X_test, y_test):
    """One probability fit in ``mode``: CPU, fits, stages, log loss, argmax agreement."""
    from sklearn.metrics import log_loss

    from msvm import _probability

    clock = StageClock(n)
    with mode_switches(mode), clock.installed(_probability):
        cpu = time.process_time()
        est = estimator(components, probability=True, probability_grid=GRID).fit(X, y)
        fit_cpu = time.process_time() - cpu
        cpu = time.process_time()
        proba = est.predict_proba(X_test)
        proba_cpu = time.process_time() - cpu
        train_proba = est.predict_proba(X)
    agree_test = float(np.mean(est.classes_[proba.argmax(1)] == est.predict(X_test)))
    agree_train = float(np.mean(est.classes_[train_proba.argmax(1)] == est.predict(X)))
    # the method's promise, checked on every sample (issue 25)
    assert agree_test == 1.0 and agree_train == 1.0, (mode, agree_test, agree_train)
    return est, proba, {
        "cpu": fit_cpu, "fits": int(est.n_probability_fits_),
        "C factor": est.probability_C_factor_, "exponent": est.probability_exponent_,
        "floor": est.probability_floor_, "predict_proba CPU (5000)": proba_cpu,
        "log loss": float(log_loss(y_test, proba, labels=est.classes_)),
        "argmax = predict (test)": agree_test, "argmax = predict (train)": agree_train,
        "stages": clock.summary()}


class StartCounter:
    """The smoothed-primal starts made while installed: per start its CPU time, Newton
    steps (over all stages) and conjugate-gradient products, by wrapping
    ``msvm._sequence.primal_start`` and ``msvm._primal.SmoothedPrimal.newton`` (the same
    calls)."""

    def __init__(self):
        self.starts, self._steps, self._products = [], 0, 0
        self._stages, self._first, self._last = [], None, None

    @contextmanager
    def installed(self):
        from msvm import _primal, _sequence

        start, newton = _sequence.primal_start, _primal.SmoothedPrimal.newton

        def counted_newton(primal, V, *args, **kwargs):
            before, cpu = primal.products, time.process_time()
            if self._first is None:
                self._first = np.array(V, dtype=np.float64)
            out = None
            try:
                out = newton(primal, V, *args, **kwargs)
                return out
            finally:
                self._steps += primal.steps
                self._products += primal.products - before
                self._stages.append((float(primal.mu), primal.steps,
                                     round(time.process_time() - cpu, 3)))
                if out is not None:
                    self._last = out[0]

        def counted_start(*args, **kwargs):
            self._steps = self._products = 0
            self._stages, self._first, self._last = [], None, None
            cpu = time.process_time()
            try:
                return start(*args, **kwargs)
            finally:
                self.starts.append({"cpu": round(time.process_time() - cpu, 3),
                                    "newton steps": self._steps,
                                    "products": self._products,
                                    "stages": self._stage_record(),
                                    "moved": self._moved()})

        _sequence.primal_start, _primal.SmoothedPrimal.newton = counted_start, counted_newton
        try:
            yield self
        finally:
            _sequence.primal_start, _primal.SmoothedPrimal.newton = start, newton


    def _stage_record(self):
        """Per smoothing stage of the last start: [mu over the last stage's mu, Newton
        steps, CPU s]."""
        last = self._stages[-1][0] if self._stages else 1.0
        return [[round(mu / last, 1), steps, cpu] for mu, steps, cpu in self._stages]

    def _moved(self):
        """||V_end - V_start|| / ||V_end|| of the last start (its first stage's V against
        its last stage's), None without a stage."""
        if self._first is None or self._last is None:
            return None
        end = np.asarray(self._last, dtype=np.float64)
        return round(float(np.linalg.norm(end - self._first) / max(np.linalg.norm(end),
                                                                     1e-300)), 4)


def one_fit(components, mode, X, y):
    """The estimator's own fit (``probability=False``) in ``mode``: (fit, CPU s, starts)."""
    counter = StartCounter()
    with mode_switches(mode), counter.installed():
        cpu = time.process_time()
        one = estimator(components).fit(X, y)
        return one, time.process_time() - cpu, counter.starts


def chain_profile(n, components, modes, label_=0, repeat=1):
    """One class's chain of weighted refits (``msvm._probability._weighted_chain`` at the
    refits' C and tol, from the estimator's own fit) per mode, in this process: its CPU
    time and per level the epochs of the dual solver after the start, and the start's
    Newton steps, products and CPU time.  Returns a dict per mode; with ``repeat`` > 1 the
    modes run that many rounds, alternating, keyed 'mode (round)'."""
    from msvm import _probability

    X, y, _, _ = data(n, components)
    own = estimator(components).fit(X, y)
    template = _probability._refit_template(_probability._with_params(
        _probability._fresh_copy(estimator(components)), warm_start=True, C=own.C_), 1.0)
    # as the probability fit marks its refits (``ProbabilityMixin``): no degenerate-fit
    # check of the training inputs (0.5 s a chain at n = 200,000 in the profiles of rounds
    # 15b and before, which the probability fit never spent)
    template._probability_refit = True
    features = own._kept_feature_state(X) if components not in LINEARS else None
    out = {}
    rounds = [(mode, mode if repeat == 1 else f"{mode} ({i + 1})")
              for i in range(repeat) for mode in modes]
    for mode, key in rounds:
        counter = StartCounter()
        with mode_switches(mode), counter.installed():
            cpu = time.process_time()
            fits, _ = _probability._weighted_chain(
                template, own, X, y, np.ones(len(y)), _probability.probability_levels(GRID),
                label_, features)
            cpu = time.process_time() - cpu
        unique = list({id(fit): fit for fit in fits[::-1]}.values())
        out[key] = {"cpu": round(cpu, 2), "levels": len(unique),
                    "epochs": [int(fit.n_iter_) for fit in unique],
                    "converged": all(fit.converged_ for fit in unique),
                    "starts": counter.starts}
        print(f"chain n={n} components={label(components)} {key}: {out[key]}", flush=True)
    return out


def measure(n, components, modes):
    """One fit per mode and a probability fit for each mode at (n, components)."""
    X, y, X_test, y_test = data(n, components)
    warnings.simplefilter("ignore")
    ones = {mode: one_fit(components, mode, X, y) for mode in modes}
    one, one_cpu, _ = ones["after" if "after" in ones else modes[0]]
    cpu = time.process_time()
    if components not in LINEARS:
        one.feature_map_.transform(X, dtype=np.float32)
    map_cpu = time.process_time() - cpu
    rows, probas = {}, {}
    for mode in modes:
        _, probas[mode], rows[mode] = probability_fit(n, components, mode, X, y, X_test, y_test)
        mode_one = ones[mode]
        rows[mode]["one fit CPU"] = mode_one[1]
        rows[mode]["one fit epochs"] = int(mode_one[0].n_iter_)
        rows[mode]["one fit starts"] = mode_one[2]
        rows[mode]["x one fit"] = rows[mode]["cpu"] / mode_one[1]
        print(f"n={n} components={label(components)} {mode}: {rows[mode]['cpu']:.1f} s CPU, "
              f"{rows[mode]['x one fit']:.1f}x one fit ({mode_one[1]:.2f} s)", flush=True)
    same = ({mode: bool(np.array_equal(probas[mode], probas["after"])) for mode in probas}
            if "after" in probas else {})
    largest = ({mode: float(np.abs(probas[mode] - probas["after"]).max()) for mode in probas}
               if "after" in probas else {})
    return {"n": n, "components": components, "section": SECTION, "one fit CPU": one_cpu,
            "one fit epochs": int(one.n_iter_), "one fit plan": str(one.solver_plan_),
            "feature map CPU": map_cpu, "modes": rows, "probabilities = after": same,
            "largest probability difference to after": largest}


def _section_lines(results, note):
    """The table and the breakdown of one section's results."""
    header = ["n", "components", "mode", "one fit CPU s", "probability=True CPU s",
              "x one fit", "fits", "C factor", "log loss (test)", "argmax = predict (test)",
              "argmax = predict (train)"]
    table = []
    ordered = sorted(results, key=lambda r: (r["components"] not in LINEARS,
                                             r["components"], r["n"]))
    for res in ordered:
        for mode in MODES:
            row = res["modes"].get(mode)
            if row is None:
                continue
            table.append([f"{res['n']:,}", label(res["components"]), mode,
                          f"{row.get('one fit CPU', res['one fit CPU']):.2f}",
                          f"{row['cpu']:.1f}",
                          f"{row['x one fit']:.1f}", row["fits"], f"{row['C factor']:g}",
                          f"{row['log loss']:.4f}", f"{row['argmax = predict (test)']:.3f}",
                          f"{row['argmax = predict (train)']:.3f}"])
    machines = sorted({(r["machine"].get("git"), r["machine"].get("date", "")[:16])
                       for r in results if r.get("machine")})
    lines = ["Runs: " + "; ".join(f"git {g}, {d}" for g, d in machines) + "."]
    lines += ["", note, ""] if note else [""]
    lines += [markdown_table(header, table), "", "Where the time goes (CPU s):", ""]
    for res in ordered:
        lines.append(f"n = {res['n']:,}, {label(res['components'])} components: one fit "
                     f"{res['one fit CPU']:.2f} s ({res['one fit epochs']} epochs; "
                     f"{res['one fit plan']}), feature map and phi(X) "
                     f"{res['feature map CPU']:.2f} s; probabilities equal to 'after': "
                     f"{res['probabilities = after']}" + (
                         f"; largest probability difference to 'after': "
                         f"{res['largest probability difference to after']}"
                         if "largest probability difference to after" in res else "") + ".")
        lines.append("")
        for mode, row in res["modes"].items():
            stages = "; ".join(f"{k} {v}" for k, v in row["stages"].items())
            own = ""
            if "one fit starts" in row:
                own = (f"; its own one fit {row['one fit CPU']:.2f} s, {row['one fit epochs']} "
                       f"epochs after the primal starts {row['one fit starts']}")
            lines.append(f"- {mode}: {stages}; predict_proba of the 5,000 test samples "
                         f"{row['predict_proba CPU (5000)']:.2f} s{own}.")
        lines.append("")
    return lines


def _chain_lines(chains):
    """The chain profiles of one section (``chain_profile``, one entry per size)."""
    lines = ["One class's chain (class 0, the refits' C and tol, from the own fit; CPU s; "
             "per level from t = 0.42 down: the dual solver's epochs after the start, and "
             "each start's CPU s, Newton steps and conjugate-gradient products):", ""]
    for entry in chains:
        lines.append(f"n = {entry['n']:,}, {label(entry['components'])} components "
                     f"(git {entry.get('git')}):")
        for mode, row in entry["modes"].items():
            starts = ", ".join(f"{s['cpu']} s / {s['newton steps']} / {s['products']}"
                               for s in row["starts"]) or "none"
            lines.append(f"- {mode}: {row['cpu']} s, {row['levels']} levels, converged "
                         f"{row['converged']}, epochs {row['epochs']}; starts: {starts}")
            if any("stages" in s for s in row["starts"]):
                stages = "; ".join(
                    " + ".join(f"{steps} at {ratio:g} mu_end ({cpu} s)"
                               for ratio, steps, cpu in s["stages"]) + f", moved {s['moved']}"
                    for s in row["starts"])
                lines.append(f"  per start, Newton steps per smoothing stage (mu over the "
                             f"last stage's) and ||V_end - V_start|| / ||V_end||: {stages}")
        lines.append("")
    return lines


def render(results, machine, notes, chains=None):
    """The Markdown page: the module note, then one section per ``section`` of the results
    (in the order of their first run), each with its note (``notes``)."""
    lines = ["# probability=True on the approximate-kernel path at scale (issue 25 item 4)\n",
             __doc__.split("(from the repository root)")[1].strip(),
             "", f"Machine: {machine.get('cpu')}, {machine.get('logical_cpus')} logical CPUs "
             f"shared with other jobs (CPU times; wall time would measure the load).", ""]
    chains = chains or {}
    sections = list(dict.fromkeys(r.get("section", SECTION) for r in results))
    for section in sections:
        lines += [f"## {section}", ""]
        lines += _section_lines([r for r in results if r.get("section", SECTION) == section],
                                notes.get(section))
        if chains.get(section):
            lines += _chain_lines(chains[section])
    return "\n".join(lines) + "\n"


def parse_sizes(text):
    """[(n, components)] from "N:COMPONENTS,..." (COMPONENTS 'linear': the linear case)."""
    sizes = []
    for item in filter(None, text.split(",")):      # "": no size (--note alone)
        n, components = item.split(":")
        linear = {"linear": LINEAR, "linear20": LINEAR20}
        sizes.append((int(n), linear[components] if components in linear
                      else int(components)))
    return sizes


def main(argv=None):
    global SECTION
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000:200", help="N:COMPONENTS,... (or N:linear)")
    parser.add_argument("--modes", default="before,after", help="of " + ",".join(MODES))
    parser.add_argument("--section", default="Round 11: the chains' start and rows",
                        help="the section of the page the results go to")
    parser.add_argument("--note", default=None,
                        help="the section's note (replaces the one stored for it)")
    parser.add_argument("--quick", action="store_true", help="n = 2,000, 100 components")
    parser.add_argument("--chain", action="store_true",
                        help="profile one class's chain per mode instead (chain_profile)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="with --chain: rounds of the modes, alternating")
    args = parser.parse_args(argv)
    SECTION = args.section
    sizes = [(2000, 100)] if args.quick else parse_sizes(args.sizes)
    modes = [m for m in args.modes.split(",") if m]
    unknown = set(modes) - set(MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}; use {', '.join(MODES)}")
    stem = "quick_" + STEM if args.quick else STEM
    json_path = RESULTS / f"{stem}.json"
    import json
    machine = machine_info()
    if args.chain:
        for n, components in sizes:
            entry = {"n": n, "components": components, "git": machine.get("git"),
                     "date": machine.get("date"), "modes": chain_profile(n, components, modes,
                                                          repeat=args.repeat)}
            stored = json.loads(json_path.read_text()) if json_path.exists() else {"results": []}
            stored.setdefault("chains", {}).setdefault(SECTION, []).append(entry)
            write_json(json_path, stored)
            (RESULTS / f"{stem}.md").write_text(render(stored["results"], machine,
                                                       stored.get("notes", {}),
                                                       stored.get("chains")))
        return
    if args.note is not None:
        stored = json.loads(json_path.read_text()) if json_path.exists() else {"results": []}
        stored.setdefault("notes", {})[SECTION] = args.note
        write_json(json_path, stored)
        (RESULTS / f"{stem}.md").write_text(render(stored["results"], machine,
                                                   stored["notes"], stored.get("chains")))
    for n, components in sizes:
        res = measure(n, components, modes)
        res["machine"] = machine
        # read again: another run of this script may have written meanwhile
        stored = json.loads(json_path.read_text()) if json_path.exists() else {"results": []}
        key = (SECTION, n, components)
        old = [r for r in stored["results"]
               if (r.get("section", "Round 8: shared-map scoring"), r["n"], r["components"])
               == key]
        if old:                      # keep the modes of an earlier run not measured now
            res["modes"] = {**old[0]["modes"], **res["modes"]}
        stored["results"] = [r for r in stored["results"] if r not in old] + [res]
        write_json(json_path, stored)
        (RESULTS / f"{stem}.md").write_text(render(stored["results"], machine,
                                                   stored.get("notes", {}),
                                                   stored.get("chains")))
        print(to_json(res)[:2000])


if __name__ == "__main__":
    main()
