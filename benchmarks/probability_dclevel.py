"""Section 9p of the probability benchmarks: a DC step's passes over the variables compiled
(issue 25 item 1, round 18).

RobustMSVM and WeightedRobustMSVM (truncation 'auto'), C = 1: where a probability fit's CPU
time goes, part by part (the parts of section 9o), on Liu and Yuan's examples 4.1.1 and 4.1.2
(n = 400), and the probability fit before (main c94be25, restored in this process by
:func:`main_c94be25`) and after, alternating, the least of 3 CPU times each, on those, wine
and breast cancer, against one fit and Platt scaling.

'After' is this branch: a DC step's linearization, its weighed-sample marks and the models'
per-sample loss each one compiled pass (msvm/_core/_dc_pass.pyx; ``msvm._dc.
COMPILED_DC_PASSES``, ``COMPILED_DC_LOSSES``), and WeightedRobustMSVM's steps through the
lean snapshot with their duality gaps deferred (``msvm._dc.KKT_STEP_SOLUTIONS``), and the
gap of every converged solve of a DC fit formed only where it is read
(``DEFERRED_START_GAPS``), and a chain refit's first solve (its untruncated start, or
WeightedRobustMSVM's step from the previous level) a lean solve (``LEAN_LEVEL_STARTS``),
and a chain's inner solver found once for its refits (``KEPT_INNER_SOLVER``).

Run ``python -m benchmarks.probability_dclevel`` (``--quick``: tiny sizes, printed only;
``--calls``: only the CPU time of one call of each compiled pass, added to the stored
section).
It adds section 9p to ``benchmarks/results/probability.json`` and renders
``probability.md`` from it (``benchmarks.run_probability_benchmarks.render_report``) without
touching the other sections or the machine table.
"""

import contextlib
import json
import pathlib

from benchmarks.harness import machine_info, module_settings, write_json
from benchmarks.probability_paths import (DC_FIXED_PARTS, DC_LOOP_ESTIMATORS, _dc_section,
                                          _fit_parts, _render_dc_parts)

RESULTS = pathlib.Path(__file__).parent / "results"
SECTION = "9p"
TITLE = ("9p. A DC step's passes over the variables compiled (issue 25 item 1, round 18)")
SETUP = (
    "RobustMSVM and WeightedRobustMSVM (truncation 'auto'): where a probability fit's CPU "
    "time goes, part by part (the parts of section 9o), on Liu and Yuan's examples 4.1.1 "
    "and 4.1.2 (n = 400) at C = 1, and the probability fit before (main c94be25) and after "
    "a DC step's work over every variable is one compiled pass each (msvm/_core/"
    "_dc_pass.pyx: the linearization at the decision values and its truncated samples, "
    "`msvm._dc.COMPILED_DC_PASSES`; the samples whose weights a solve read, the same "
    "switch; the models' loss of each sample, `COMPILED_DC_LOSSES`) and WeightedRobustMSVM's "
    "steps take the lean snapshot (V from the compiled level tail, the steps' duality gaps "
    "deferred, `KKT_STEP_SOLUTIONS`) and the duality gap of every converged solve of a DC "
    "fit formed only where it is read (`DEFERRED_START_GAPS`), a chain refit's first solve "
    "a lean solve (`LEAN_LEVEL_STARTS`) and a chain's inner solver found once "
    "(`KEPT_INNER_SOLVER`) on those, wine and breast cancer. Written by "
    "`benchmarks/probability_dclevel.py`.")

# the parts of section 9o, with this round's functions: the in-place marks of a DC step, the
# lean solve (a DC step's, and a chain refit's first solve with LEAN_LEVEL_STARTS) and a
# chain refit's lean start (the warm start of ``BaseMSVM._start``)
DC_PASS_PARTS = (DC_FIXED_PARTS[:6]
                 + (("msvm._dc", "lean_solve", "rest of a lean solve (steps, chain starts)"),)
                 + DC_FIXED_PARTS[6:9]
                 + (("msvm._dc", "mark_weighed", "settled marks (in place)"),)
                 + DC_FIXED_PARTS[9:12]
                 + (("msvm._dc", "_level_start", "a chain refit's lean start (warm start)"),)
                 + DC_FIXED_PARTS[12:])
# the switches of this round: off is main c94be25
SWITCHES = ("COMPILED_DC_PASSES", "COMPILED_DC_LOSSES", "KKT_STEP_SOLUTIONS",
            "DEFERRED_START_GAPS", "LEAN_LEVEL_STARTS", "KEPT_INNER_SOLVER")


@contextlib.contextmanager
def main_c94be25():
    """main c94be25's DC steps in this process: the linearization, the marks and the loss in
    NumPy, WeightedRobustMSVM's steps through ``msvm._snapshot.snapshot`` (every switch of
    ``SWITCHES`` off)."""
    from msvm import _dc

    with module_settings(*[(_dc, name, False) for name in SWITCHES]):
        yield


def dc_pass_parts(make, X, y, repeats=3):
    """Exclusive CPU time per part of one probability fit (``DC_PASS_PARTS``), before (main
    c94be25) and after alternating, the fit of least CPU time of ``repeats``."""
    return _fit_parts(make, X, y, DC_PASS_PARTS, main_c94be25, repeats)


def bench_dc_passes(quick):
    """Section 9p: the before / after rows on the four sets, the part table on the
    examples and the CPU time of one call of each compiled pass (:func:`pass_calls`)."""
    res = _dc_section(quick, SECTION, DC_LOOP_ESTIMATORS, main_c94be25, dc_pass_parts,
                      load_after=("example 4.1.2",))
    res["calls"] = pass_calls()
    return res


def _pass_case(name, n=400, k=3, seed=0):
    """A model of ``name`` set up for k classes, its untruncated dual at random weights,
    decision values G, labels y and a feasible dual alpha with zeros (n samples)."""
    import numpy as np

    import msvm

    rng = np.random.default_rng(seed)
    est = getattr(msvm, name)()
    est.classes_ = np.arange(k)
    if name == "WeightedRobustMSVM":
        est._prepare_dual(k)
    y = rng.integers(0, k, n)
    problem = est._dual_problem(y, k, rng.uniform(0.5, 2.0, n))
    alpha = problem.clip_feasible(rng.normal(size=problem.n_vars))
    alpha[rng.random(problem.n_vars) < 0.3] = 0.0
    return est, problem, rng.normal(size=(n, k)), y, alpha


def pass_calls(calls=500, repeats=5):
    """CPU time (us) of one call of each pass a DC step makes (the linearization
    ``_dc_shift``, the in-place marks ``mark_weighed``, the loss of each sample ``_loss``),
    before (``main_c94be25``) and after, at n = 400 and k = 3: the least over ``repeats``
    of the mean of ``calls`` calls, alternating."""
    import time

    import numpy as np

    from msvm import _dc

    out = []
    for name in DC_LOOP_ESTIMATORS:
        est, problem, G, y, alpha = _pass_case(name)
        shift = est._dc_shift(problem, G, y)[0]
        marks = np.zeros(len(y), dtype=bool)
        passes = (("linearization (_dc_shift)", lambda: est._dc_shift(problem, G, y)),
                  ("weighed marks (mark_weighed)",
                   lambda: _dc.mark_weighed(marks, problem, alpha, shift)),
                  ("loss of each sample (_loss)", lambda: est._loss(G, y)))
        for label, call in passes:
            best = {}
            for _ in range(repeats):
                for side, context in (("before", main_c94be25),
                                      ("after", contextlib.nullcontext)):
                    with context():
                        start = time.process_time()
                        for _ in range(calls):
                            call()
                        spent = (time.process_time() - start) / calls
                    best[side] = min(best.get(side, spent), spent)
            out.append({"estimator": name, "pass": label,
                        **{side: 1e6 * value for side, value in best.items()}})
    return out


def _calls_table(calls):
    from benchmarks.harness import markdown_table

    return markdown_table(["estimator", "pass", "before (us)", "after (us)"],
                          [[c["estimator"], c["pass"], f"{c['before']:.1f}",
                            f"{c['after']:.1f}"] for c in calls])


def render_dc_passes(res):
    text = _render_dc_parts(res, "five", "main c94be25's DC steps restored in this process "
                            "(`msvm._dc.COMPILED_DC_PASSES`, `COMPILED_DC_LOSSES`, "
                            "`KKT_STEP_SOLUTIONS`, `DEFERRED_START_GAPS`, "
                            "`LEAN_LEVEL_STARTS` and `KEPT_INNER_SOLVER` False), 'after' "
                            "this branch",
                            DC_PASS_PARTS)
    if "calls" in res:
        text += ("\n\n#### One call of each compiled pass (n = 400, k = 3; CPU, the least of 5 "
                 "means of 500 calls, before and after alternating)\n\n"
                 + _calls_table(res["calls"]))
    return text


def add_section(res, json_path=RESULTS / "probability.json",
                md_path=RESULTS / "probability.md"):
    """Add the section's results to ``json_path`` (the other sections and the machine table
    as they are) and render ``md_path`` from it."""
    from benchmarks.run_probability_benchmarks import render_report

    data = json.loads(json_path.read_text())
    data["benchmarks"][SECTION] = res
    write_json(json_path, data)
    md_path.write_text(render_report(data))


def main(argv=None):
    import argparse
    import time

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes; printed, not written")
    parser.add_argument("--calls", action="store_true",
                        help="only the table of one call of each pass, added to the "
                             "section's stored results")
    args = parser.parse_args(argv)
    if args.calls:
        data = json.loads((RESULTS / "probability.json").read_text())
        res = data["benchmarks"][SECTION]
        res["calls"] = pass_calls()
        print(_calls_table(res["calls"]), flush=True)
        add_section(res)
        return 0
    start = time.perf_counter()
    res = bench_dc_passes(args.quick)
    res["date"] = machine_info()["date"]
    res["wall_time"] = time.perf_counter() - start
    print(render_dc_passes(res), flush=True)
    if not args.quick:
        add_section(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
