"""Random Fourier features: msvm's map against scikit-learn's ``RBFSampler`` (issue 28, item 8).

CPU time (``time.process_time``, best of ``REPEATS`` interleaved rounds, one BLAS thread) of
phi(X) for 20,000 x 20 Gaussian rows and 1,000 components, measured in one run:

- ``RBFSampler.transform`` (one product X @ W, then the offsets, cos and the scale in place);
- msvm's ``FourierMap.transform`` in float64 (chunks of rows, each computed in place in its
  rows of the output) and in float32 (the storage of the training features of a fit);
- the previous msvm transform, rebuilt here from the map's ``_block`` (each chunk computed
  into a new array, then copied into the output), as the before figure of the same run.

Also checks that every msvm variant equals RBFSampler's features for the same frequencies and
phases (largest absolute difference).  Run from the repository root:
``python -m benchmarks.run_feature_map_speed``; writes benchmarks/results/feature_map_speed.md
and .json.  Timings are reported, never asserted.
"""

import gc
import sys
import time

import numpy as np
from sklearn.kernel_approximation import RBFSampler
from threadpoolctl import threadpool_limits

from benchmarks.harness import RESULTS, machine_info, markdown_table, write_json
from msvm._approx import FourierMap
from msvm._products import chunk_rows

N, D, M, SEED, REPEATS = 20_000, 20, 1000, 0, 9


def _best_cpu(fs):
    """Best CPU time of REPEATS calls of each f of ``fs`` (a dict), interleaved round by round
    so that the load of the shared machine falls on all alike (one BLAS thread); and each
    f's last result."""
    times, outs = {name: [] for name in fs}, {}
    with threadpool_limits(limits=1, user_api="blas"):
        for _ in range(REPEATS):
            for name, f in fs.items():
                gc.collect()
                time.sleep(0.1)
                cpu = time.process_time()
                outs[name] = f()
                times[name].append(time.process_time() - cpu)
    return {name: float(min(t)) for name, t in times.items()}, outs


def copying_transform(fmap, X):
    """The transform before this change: each chunk into a new array, then copied."""
    out = np.empty((X.shape[0], fmap.n_components_))
    step = chunk_rows(fmap._width(X))
    for start in range(0, X.shape[0], step):
        out[start:start + step] = fmap._block(X[start:start + step])
    return out


def measure(n=N, d=D, m=M):
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(n, d))
    sampler = RBFSampler(gamma=1.0 / d, n_components=m, random_state=SEED).fit(X)
    fmap = FourierMap(sampler.random_weights_, sampler.random_offset_)
    fs = {"RBFSampler.transform": lambda: sampler.transform(X),
          "msvm transform, float64": lambda: fmap.transform(X),
          "msvm transform, float32": lambda: fmap.transform(X, np.float32),
          "msvm before (chunk, then copy), float64": lambda: copying_transform(fmap, X)}
    cpu, outs = _best_cpu(fs)
    ref = outs["RBFSampler.transform"]
    rows = {name: (cpu[name], float(np.max(np.abs(outs[name] - ref)))) for name in fs}
    for name, (seconds, _) in rows.items():
        print(f"{name}: {seconds:.3f} s CPU, {seconds / cpu['RBFSampler.transform']:.2f}x",
              flush=True)
    return {"n": n, "d": d, "m": m, "repeats": REPEATS,
            "rows": {k: {"cpu": t, "max_abs_diff": e} for k, (t, e) in rows.items()}}


def render(data):
    ref = data["rows"]["RBFSampler.transform"]["cpu"]
    table = markdown_table(
        ["transform", "CPU s", "ratio to RBFSampler",
         "largest difference from RBFSampler's features"],
        [[k, f"{r['cpu']:.3f}", f"{r['cpu'] / ref:.2f}x", f"{r['max_abs_diff']:.1e}"]
         for k, r in data["rows"].items()])
    info = data["machine"]
    return (f"# Random Fourier features: msvm against RBFSampler\n\n"
            f"{data['n']:,} x {data['d']} Gaussian rows, {data['m']:,} components (the same "
            f"frequencies and phases for both). CPU time (`time.process_time`), best of "
            f"{data['repeats']} interleaved rounds, one BLAS thread, all rows measured in the "
            f"same run; the machine was shared with other jobs (2 cores), so the ratios are "
            f"the figures to read. float32 is the storage of a fit's training features "
            f"(computed in float64, stored in single precision: its difference is float32 "
            f"rounding).\n\n"
            f"{table}\n\n"
            f"`python -m benchmarks.run_feature_map_speed` at {info['git']}, {info['date']}, "
            f"{info['cpu']}, numpy {info['numpy']}, scikit-learn {info['scikit-learn']}, "
            f"BLAS {info['blas']}.\n")


def main(argv=None):
    data = measure()
    data["machine"] = machine_info()
    write_json(RESULTS / "feature_map_speed.json", data)
    (RESULTS / "feature_map_speed.md").write_text(render(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
