"""How many dual variables the per-class-hinge models' solutions carry, against SVC and a
one-vs-rest SVC, on pendigits (issue 24 item 1: what a target in multiples of SVC's fit asks).

The SMO's work grows with the dual variables it must move off zero and settle (free, or at
their bound).  SVC solves k (k - 1) / 2 small one-vs-one problems; a one-vs-rest SVC
(scikit-learn's OneVsRestClassifier(SVC)) solves k problems on all n samples, the structure
of the per-class hinges without their sum-to-zero coupling.  For each model at the two
settings of issue 24 (RBF C = 10, gamma = 1/16; C = 256, gamma = 1/32, the C a tuning run
selects), one BLAS thread, CPU time (time.process_time, the least of `repeats` fits, the
fits alternating): the fit's CPU, and of its solution the nonzero dual variables, those at
their bound (per variable kind: the own class's slot and the other slots, each against the
largest value of its kind, unit sample weights), the free ones (the rest), and the support
samples; for SVC and OneVsRestClassifier(SVC) the CPU and the support vectors (summed over
the k binary problems for the one-vs-rest).

    python -m benchmarks.per_class_support            # writes results/per_class_support.md
"""

import argparse
import os
import time

import numpy as np

from benchmarks.harness import git_commit, markdown_table, to_json

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = ((10.0, 1 / 16), (256.0, 1 / 32))


def _pendigits_train():
    from benchmarks.run_per_class_speed import _pendigits_train as train
    return train()


def _models(C, gamma):
    import msvm
    common = dict(C=C, gamma=gamma)
    return {
        "ReinforcedMSVM": lambda: msvm.ReinforcedMSVM(**common),
        "LLW (reinforcement=0)": lambda: msvm.ReinforcedMSVM(reinforcement=0.0, **common),
        "AngleBasedMSVM": lambda: msvm.AngleBasedMSVM(**common),
        "WestonWatkinsMSVM": lambda: msvm.WestonWatkinsMSVM(**common),
    }


def _baselines(C, gamma):
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import SVC
    return {
        "SVC": lambda: SVC(C=C, gamma=gamma),
        "OneVsRestClassifier(SVC)": lambda: OneVsRestClassifier(SVC(C=C, gamma=gamma)),
    }


def _cpu_fit(make, X, y):
    est = make()
    start = time.process_time()
    est.fit(X, y)
    return time.process_time() - start, est


def _dual_counts(est, y):
    """Nonzero, at-bound and free dual variables of a fitted msvm estimator (unit weights:
    each kind's bound is the largest value of its kind, where some variable reaches it)."""
    alpha = np.asarray(est.alpha_, dtype=float)
    nonzero = alpha > 0.0
    if alpha.ndim == 2 and alpha.shape[1] == len(est.classes_):
        own = np.zeros(alpha.shape, dtype=bool)
        own[np.arange(len(y)), np.searchsorted(est.classes_, y)] = True
        at_bound = np.zeros(alpha.shape, dtype=bool)
        for kind in (own, ~own):
            top = alpha[kind].max() if kind.any() else 0.0
            at_bound |= kind & (alpha >= top * (1 - 1e-9)) & nonzero
    else:                           # another layout: bounds not per variable, not counted
        at_bound = None
    return {
        "variables": int(alpha.size),
        "nonzero": int(nonzero.sum()),
        "at_bound": None if at_bound is None else int(at_bound.sum()),
        "free": None if at_bound is None else int((nonzero & ~at_bound).sum()),
        "support_samples": int(len(est.support_)),
        "epochs": int(est.n_iter_) if np.ndim(est.n_iter_) == 0 else None,
    }


def _baseline_counts(est):
    if hasattr(est, "estimators_"):
        return {"support_vectors": int(sum(e.n_support_.sum() for e in est.estimators_))}
    return {"support_vectors": int(est.n_support_.sum())}


def run(repeats):
    from threadpoolctl import threadpool_limits
    X, y = _pendigits_train()
    rows = []
    with threadpool_limits(1):
        for C, gamma in SETTINGS:
            makers = {**_baselines(C, gamma), **_models(C, gamma)}
            times = {name: [] for name in makers}
            fitted = {}
            for _ in range(repeats):
                for name, make in makers.items():
                    cpu, est = _cpu_fit(make, X, y)
                    times[name].append(cpu)
                    fitted[name] = est
            svc = min(times["SVC"])
            for name, est in fitted.items():
                counts = _baseline_counts(est) if name in ("SVC", "OneVsRestClassifier(SVC)") \
                    else _dual_counts(est, y)
                rows.append({"C": C, "gamma": gamma, "model": name,
                             "cpu_s": min(times[name]), "x_svc": min(times[name]) / svc,
                             **counts})
    return {"commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load": os.getloadavg()[0], "n": len(y), "repeats": repeats, "rows": rows}


def _cell(value, spec):
    return "" if value is None else format(value, spec)


def render(data):
    lines = [__doc__.split("\n\n    python")[0].strip(), "",
             f"Commit {data['commit']}, {data['date']}, load average {data['load']:.1f} at "
             f"the start; pendigits' training part ({data['n']} x 16, k = 10, standardized); "
             f"the least of {data['repeats']} fits.", ""]
    header = ["C", "gamma", "model", "CPU s", "x SVC", "support vectors (SVC) / support "
              "samples", "dual variables nonzero", "at bound", "free", "epochs"]
    for C, gamma in SETTINGS:
        body = []
        for r in data["rows"]:
            if r["C"] != C:
                continue
            sv = r.get("support_vectors", r.get("support_samples"))
            body.append([f"{C:g}", f"1/{round(1 / gamma)}", r["model"], f"{r['cpu_s']:.3f}",
                         f"{r['x_svc']:.1f}", str(sv), _cell(r.get("nonzero"), "d"),
                         _cell(r.get("at_bound"), "d"), _cell(r.get("free"), "d"),
                         _cell(r.get("epochs"), "d")])
        lines += [markdown_table(header, body), ""]
    lines += [_reading(data), ""]
    return "\n".join(lines)


def _reading(data):
    """The ratios the table implies: CPU per nonzero dual variable against the one-vs-rest
    SVC's CPU per support vector."""
    out = ["What it says (CPU per nonzero dual variable, against the one-vs-rest SVC's CPU per "
           "support vector, at each setting):", ""]
    for C, gamma in SETTINGS:
        rows = {r["model"]: r for r in data["rows"] if r["C"] == C}
        ovr = rows["OneVsRestClassifier(SVC)"]
        per_sv = ovr["cpu_s"] / ovr["support_vectors"]
        parts = []
        for name, r in rows.items():
            if "nonzero" in r and r["nonzero"]:
                parts.append(f"{name} {r['cpu_s'] / r['nonzero'] / per_sv:.2f}x "
                             f"({r['nonzero'] / ovr['support_vectors']:.1f}x the support "
                             f"vectors)")
        out.append(f"- C = {C:g}, gamma = 1/{round(1 / gamma)}: one-vs-rest SVC "
                   f"{ovr['x_svc']:.1f}x SVC with {ovr['support_vectors']} support vectors; "
                   + "; ".join(parts) + ".")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    data = run(args.repeats)
    stem = os.path.join(HERE, "results", "per_class_support")
    with open(stem + ".json", "w") as f:
        f.write(to_json(data))
    with open(stem + ".md", "w") as f:
        f.write(render(data))
    print(render(data))


if __name__ == "__main__":
    main()
