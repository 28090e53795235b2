"""One class's chain of weighted refits, main against after (round 11, issue 25 item 4).

    python -m benchmarks.run_probability_chain --n 20000 --components 200
    python -m benchmarks.run_probability_chain --n 1000 --components linear --factor 3

(from the repository root)

The data and estimator of benchmarks/run_probability_scale.py (a size n, Nystroem components
or the linear case); the estimator's own fit, then ``msvm._probability._weighted_chain`` of
one class (``--label``) at the refits' C (times ``--factor``: 3 is the other C factor of the
calibration, from the unweighted fit at 3 C) and tol, once per mode, in one process: 'main'
(b9f36a5: dual coordinate descent first, one smoothing parameter) and 'after' (the library
now), through ``benchmarks.run_probability_scale.mode_switches``.  Reported per mode: CPU
time (``time.process_time``), and per level (t = 0.42 down to 0.001) the epochs and the
Newton steps of the smoothed-primal start (counted by wrapping
``msvm._primal.SmoothedPrimal.newton``).  Appended to benchmarks/results/
probability_chain.md; timings are reported, never asserted.
"""

import argparse
import time
import warnings

import numpy as np

from benchmarks.harness import RESULTS, machine_info
from benchmarks.run_probability_scale import LINEAR, data, estimator, mode_switches


def chain(n, components, label, factor, modes):
    from msvm import _primal, _probability

    X, y, _, _ = data(n, components)
    cpu = time.process_time()
    own = estimator(components).fit(X, y)
    lines = [f"n = {n:,}, components {components if components != LINEAR else 'linear'}, "
             f"class {label}, C factor {factor:g}: one fit {time.process_time() - cpu:.2f} s "
             f"CPU ({own.n_iter_} epochs; {own.solver_plan_})"]
    template = _probability._refit_template(_probability._with_params(
        _probability._fresh_copy(estimator(components)), warm_start=True, C=own.C_), factor)
    if factor != 1.0:
        own = _probability._top_fit(template, own, X, y, np.ones(len(y)))
    features = own._kept_feature_state(X) if components != LINEAR else None
    newton, steps = _primal.SmoothedPrimal.newton, []

    def counted(self, *args, **kwargs):
        result = newton(self, *args, **kwargs)
        steps.append(self.steps)
        return result

    _primal.SmoothedPrimal.newton = counted
    try:
        for mode in modes:
            steps.clear()
            with mode_switches(mode):
                cpu = time.process_time()
                fits, _ = _probability._weighted_chain(
                    template, own, X, y, np.ones(len(y)), _probability.probability_levels(8),
                    label, features)
                cpu = time.process_time() - cpu
            unique = list({id(fit): fit for fit in fits[::-1]}.values())
            lines.append(f"- {mode}: {cpu:.2f} s CPU, {len(unique)} levels, epochs "
                         f"{[int(fit.n_iter_) for fit in unique]}, Newton steps of the primal "
                         f"starts {steps}")
            print(lines[-1], flush=True)
    finally:
        _primal.SmoothedPrimal.newton = newton
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--components", default="200")
    parser.add_argument("--label", type=int, default=0)
    parser.add_argument("--factor", type=float, default=1.0)
    parser.add_argument("--modes", default="main,after")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    components = LINEAR if args.components == "linear" else int(args.components)
    lines = chain(args.n, components, args.label, args.factor, args.modes.split(","))
    machine = machine_info()
    path = RESULTS / "probability_chain.md"
    head = "" if path.exists() else ("# One class's chain of weighted refits, main against "
                                     "after (round 11)\n\n" + __doc__.split(
                                         "(from the repository root)")[1].strip() + "\n\n")
    with path.open("a") as out:
        out.write(head + f"Run: git {machine.get('git')}, {machine.get('date', '')[:16]}, "
                  f"shared machine (CPU times).\n\n" + "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
