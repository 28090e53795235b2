"""Kernel rows computed in batches, as the SMO path's prefetch does: CPU ns a kernel value.

    python -m benchmarks.run_row_batches --tag after                # n = 10k, 20k, 40k, 80k
    python -m benchmarks.run_row_batches --tag before --n 80000     # (another build's venv)
    python -m benchmarks.run_row_batches --tag tile-512 --row-tile 512
    python -m benchmarks.run_row_batches --render-only

(from the repository root; run it with the venv of the build to measure: the msvm imported
is the one measured, and its repository's commit is recorded.)

make_classification(n, 20 features, 5 classes), standardized; a DenseKernelRows source as
a fit at cache_size = 200 MB builds it (float32 rows, that many rows cached), gamma = 1/20
('scale' on standardized data).  Each call prefetches the next ``--rows`` samples of a fixed
permutation (192: about the rows a 512-sample working set misses at n = 40,000-80,000), so
that every row is computed and stored, evicting older ones as in a fit (after an untimed
pass that fills the store once).  Kinds: 'rbf' (dot products, exponent pass, exponentials,
float32 stores) and 'linear-rows' (dot products and stores: the linear kernel's rows).
One thread, CPU time (time.process_time) of the prefetch calls; per (kind, n) the median
over ``--rounds`` rounds of ``--calls`` calls.
Each invocation appends its rounds to its tag, so that two builds can be run alternately
(before, after, before, after) and each tag's median taken over all its invocations.
Results: benchmarks/results/row_batches.md and .json.
"""

import argparse
import json
import os
import subprocess
import time

import numpy as np

from benchmarks.harness import RESULTS, markdown_table, write_json

STEM = "row_batches"


def build_commit():
    """``git describe --always --dirty`` of the repository of the msvm imported."""
    import msvm
    where = os.path.dirname(os.path.abspath(msvm.__file__))
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=where,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def _source(n, kind, cache_size=200.0):
    from sklearn.datasets import make_classification

    from msvm import _plan
    from msvm._core._rows import make_row_source
    X, _ = make_classification(n_samples=n, n_features=20, n_informative=10, n_classes=5,
                               random_state=0)
    X = np.ascontiguousarray((X - X.mean(0)) / X.std(0))
    capacity = min(n, _plan.cache_rows(cache_size, "float32", n))
    return make_row_source(kind, 5, X=X, gamma=1 / 20, capacity=capacity,
                           cache_dtype="float32")


def add_row_switches(parser):
    """The switches of round 13's kernel-row changes (msvm._core._rows), for runs of this
    build with other behaviour: --three-pass and --gather-all (the same values; round 13's
    fused multiply-adds were removed in round 14)."""
    parser.add_argument("--three-pass", action="store_true",
                        help="RBF rows stored in float32 by the exponent pass, the "
                             "exponentials and the store in turn instead of one pass")
    parser.add_argument("--gather-all", action="store_true",
                        help="a working set's kernel block gathered entry by entry instead "
                             "of on and above its diagonal, then mirrored")


def apply_row_switches(args):
    """Set the switches of add_row_switches; returns the names of those set."""
    from msvm._core import _rows
    if args.three_pass:
        _rows._rbf_one_pass(False)
    if args.gather_all:
        _rows._gather_upper(False)
    return [name for name in ("three_pass", "gather_all")
            if getattr(args, name)]


def measure(n, kind, rows, calls, rounds):
    """ns a kernel value of each round (calls prefetches of `rows` new rows each)."""
    src = _source(n, kind)
    rows = min(rows, src.capacity)
    order = np.random.default_rng(0).permutation(n).astype(np.int32)
    at = [0]

    def call():
        if at[0] + rows > n:
            at[0] = 0
        idx = order[at[0]:at[0] + rows]
        at[0] += rows
        start = time.process_time()
        src.prefetch_rows(idx)
        return time.process_time() - start

    # untimed: every slot of the row store written once (its pages touched)
    for _ in range(-(-src.capacity // rows)):
        call()
    out = []
    for _ in range(rounds):
        computed = src.n_computed
        spent = sum(call() for _ in range(calls))
        out.append(spent / ((src.n_computed - computed) * n) * 1e9)
    return out


def render(runs):
    lines = ["# Kernel rows in batches: CPU ns a kernel value", "",
             "\n\n".join(__doc__.split("\n\n")[3:]).split("Results:")[0].strip(), ""]
    for tag, run in runs.items():
        lines += [f"## {tag}", "", f"Build {run['commit']}; {run['date']}; load average at "
                  f"the start of each invocation: "
                  + ", ".join(f"{x:.1f}" for x in run["loads"]) + ".", ""]
        head = ["kind", "n", "ns a value (median)", "min", "rounds"]
        body = []
        for key, vals in run["values"].items():
            kind, n = key.split(":")
            body.append([kind, int(n), f"{np.median(vals):.2f}", f"{min(vals):.2f}",
                         len(vals)])
        lines += [markdown_table(head, body), ""]
        if run.get("note"):
            lines += [run["note"], ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default="current")
    parser.add_argument("--n", type=int, nargs="+", default=[10_000, 20_000, 40_000, 80_000])
    parser.add_argument("--kinds", nargs="+", default=["rbf", "linear-rows"])
    parser.add_argument("--rows", type=int, default=192)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--row-tile", type=int,
                        help="the column tile of a batch (msvm._core._rows._tiles; "
                             "default: the build's)")
    parser.add_argument("--block-rows", type=int,
                        help="the most rows of a batch (msvm._core._rows._batches; default: "
                             "the build's), their values at most 8 bytes a value times it")
    add_row_switches(parser)
    parser.add_argument("--note", help="a sentence under the tag's table")
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args(argv)
    path = os.path.join(RESULTS, STEM + ".json")
    runs = {}
    if os.path.exists(path):
        with open(path) as fh:
            runs = json.load(fh)["runs"]
    if not args.render_only:
        from threadpoolctl import threadpool_limits

        from msvm._core import _rows
        if args.row_tile:
            _rows._tiles(row_tile=args.row_tile)
        if args.block_rows:
            _rows._batches(block_rows=args.block_rows)
        apply_row_switches(args)
        run = runs.setdefault(args.tag, {"values": {}, "loads": []})
        run.update(commit=build_commit(), date=time.strftime("%Y-%m-%d %H:%M UTC",
                                                              time.gmtime()))
        run["loads"].append(os.getloadavg()[0])
        if args.note:
            run["note"] = args.note
        with threadpool_limits(1):
            for kind in args.kinds:
                for n in args.n:
                    vals = measure(n, kind, args.rows, args.calls, args.rounds)
                    run["values"].setdefault(f"{kind}:{n}", []).extend(vals)
                    print(args.tag, kind, n, [round(v, 3) for v in vals], flush=True)
        write_json(path, {"runs": runs})
    with open(os.path.join(RESULTS, STEM + ".md"), "w") as fh:
        fh.write(render(runs) + "\n")


if __name__ == "__main__":
    main()
