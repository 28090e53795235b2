"""Fits on Dask arrays on a distributed LocalCluster against the in-memory fit (issue 26).

Run from the repository root: ``python -m benchmarks.run_dask_benchmarks [--only linear-1m,...]
[--data DIR]``.  Writes ``benchmarks/results/dask.md`` and ``dask.json``.

Data: ``make_data`` writes a zarr store per case (float32 X, int labels, in chunks of rows,
each chunk drawn from its own seeded generator: k Gaussian classes in d dimensions whose
centres lie on a sphere of radius 2.5, unit noise), with a held-out test part.  Sections:

- ``linear-1m``: n = 1,000,000, d = 50, k = 10, C = 1, WestonWatkinsMSVM(kernel='linear');
  the chunked fit from zarr on 2 workers, and the in-memory fit of the same rows (each in a
  child process of its own); ``linear-50k``: the same at n = 50,000 (a smoke run);
- ``linear-10m``: n = 10,000,000 (2 GB of float32 on disk), the chunked fit only;
- ``nystroem-100k``: n = 100,000, d = 20, k = 5, the RBF kernel with
  kernel_approximation='nystroem' and n_components = 300 (features persisted on the
  workers; the map's CPU time per chunk, what each pass adds without persistence, timed
  apart), and the in-memory fit.

Every chunked run starts a fresh LocalCluster (2 worker processes, 1 thread each, the
memory limit of the case); reported: CPU time of the client and of the workers, wall time,
peak resident memory of each worker process (its ru_maxrss), passes over the data, Newton
steps, the bytes of the summaries one pass sends (per chunk, and reaching the client), the
objective, duality gap and test accuracy.  The machine is shared with other work: CPU times
are the measure, wall times are only indicative.
"""

import argparse
import copy
import os
import pathlib
import resource
import time

import numpy as np

from benchmarks.harness import (chosen_sections, git_commit, machine_info, markdown_table,
                                run_in_child, write_json)

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MD_PATH, JSON_PATH = RESULTS / "dask.md", RESULTS / "dask.json"
CASES = {
    "linear-50k": dict(n=50_000, d=50, k=10, chunk=12_500, approx=None, memory=True,
                       limit="2GiB"),
    "linear-1m": dict(n=1_000_000, d=50, k=10, chunk=125_000, approx=None, memory=True,
                      limit="2GiB"),
    "linear-10m": dict(n=10_000_000, d=50, k=10, chunk=500_000, approx=None, memory=False,
                       limit="2GiB"),
    # the Nystroem target (n = 2M, n_components = 1000): its per-row pass costs are
    # measured on the rows of one chunk and projected (the fit was not run: see the report)
    "nystroem-2m": dict(n=100_000, d=20, k=5, chunk=25_000, approx=1000, memory=False,
                        limit="1.5GiB", costs_only=True),
    # the per-row costs of the passes with Nystroem features kept factored (phi = K N never
    # formed), formed in every pass, and persisted, measured in one process
    "nystroem-factored-costs": dict(n=100_000, d=20, k=5, chunk=25_000, approx=1000,
                                    memory=False, limit="1.5GiB", costs_only="factored",
                                    data="nystroem-2m"),
    # Newton steps and passes without and with the pattern steps of the mu stages
    # (synchronous scheduler, in one process), on the first 20,000 rows
    "nystroem-pattern-steps": dict(n=100_000, d=20, k=5, chunk=25_000, approx=1000,
                                   memory=False, limit="1.5GiB", costs_only="pattern",
                                   data="nystroem1000-100k"),
    "nystroem-100k": dict(n=100_000, d=20, k=5, chunk=25_000, approx=300, memory=True,
                          limit="1.5GiB"),
    # persisted features (1.6 GB of float32, 800 MB per worker) above the memory limit
    # and, with the pass summaries (the gradient's 200 MB Newton curvature per chunk, three
    # in a pairwise sum), above what a worker may hold: whether the workers spill them to
    # disk and stay within the limit, and the time per sample against the in-memory path
    # (issue 26's Nystroem time target); at n = 300k and 1 GiB per worker the workers
    # were restarted by their nanny at 95 % (see the report)
    "nystroem-spill-400k": dict(n=400_000, d=20, k=5, chunk=25_000, approx=1000,
                                memory=True, limit="1.5GiB"),
    # the Newton systems by conjugate gradients (no (m k)^2 curvature per chunk): the
    # features persisted, against the in-memory fit of the same rows
    "nystroem1000-100k": dict(n=100_000, d=20, k=5, chunk=25_000, approx=1000, memory=True,
                              limit="1.5GiB"),
    "nystroem1000-200k": dict(n=200_000, d=20, k=5, chunk=25_000, approx=1000, memory=True,
                              limit="1.5GiB"),
    "nystroem1000-400k": dict(n=400_000, d=20, k=5, chunk=25_000, approx=1000, memory=True,
                              limit="1.5GiB"),
    # the same with the features mapped in every pass (not persisted)
    "nystroem1000-100k-mapped": dict(n=100_000, d=20, k=5, chunk=25_000, approx=1000,
                                     memory=False, limit="1.5GiB", persist=False,
                                     data="nystroem1000-100k"),
    "nystroem1000-200k-mapped": dict(n=200_000, d=20, k=5, chunk=25_000, approx=1000,
                                     memory=False, limit="1.5GiB", persist=False,
                                     data="nystroem1000-200k"),
    "nystroem1000-400k-mapped": dict(n=400_000, d=20, k=5, chunk=25_000, approx=1000,
                                     memory=False, limit="1.5GiB", persist=False,
                                     data="nystroem1000-400k"),
    # the in-memory reference of the 200k rows alone (the mapped run's accuracy and
    # objective are compared with it)
    "nystroem1000-200k-memory": dict(n=200_000, d=20, k=5, chunk=25_000, approx=1000,
                                     memory=True, limit="1.5GiB", chunked=False,
                                     data="nystroem1000-200k"),
    "nystroem1000-2m-mapped": dict(n=2_000_000, d=20, k=5, chunk=25_000, approx=1000,
                                   memory=False, limit="1.5GiB", persist=False),
    # the in-memory reference of the 2M rows (8 GB of float32 features in one process)
    "nystroem1000-2m-memory": dict(n=2_000_000, d=20, k=5, chunk=25_000, approx=1000,
                                   memory=True, limit="1.5GiB", chunked=False,
                                   data="nystroem1000-2m-mapped"),
}
TEST_ROWS = 100_000
TIMEOUT = 6 * 3600


def make_data(path, n, d, k, chunk, seed=0):
    """Write X (float32) and y of n training and TEST_ROWS test rows to the zarr store
    ``path`` (nothing done when it exists)."""
    import dask
    import dask.array as da
    if (path / "done").exists():
        return
    centres = np.random.default_rng(seed).normal(size=(k, d))
    centres *= 2.5 / np.linalg.norm(centres, axis=1, keepdims=True)

    def block(i, rows):
        rng = np.random.default_rng([seed, i])
        y = rng.integers(k, size=rows)
        return (centres[y] + rng.normal(size=(rows, d))).astype(np.float32), y

    for name, total, offset in (("train", n, 0), ("test", TEST_ROWS, 10 ** 6)):
        sizes = [min(chunk, total - s) for s in range(0, total, chunk)]
        parts = [dask.delayed(block)(offset + i, r) for i, r in enumerate(sizes)]
        X = da.concatenate([da.from_delayed(p[0], (r, d), np.float32)
                            for p, r in zip(parts, sizes)])
        y = da.concatenate([da.from_delayed(p[1], (r,), np.int64)
                            for p, r in zip(parts, sizes)])
        da.to_zarr(X, str(path / f"{name}_X.zarr"), overwrite=True)
        da.to_zarr(y, str(path / f"{name}_y.zarr"), overwrite=True)
    (path / "done").write_text("ok")


def _estimator(case, tol=1e-3):
    from msvm import WestonWatkinsMSVM
    if case["approx"] is None:
        return WestonWatkinsMSVM(kernel="linear", C=1.0, tol=tol)
    return WestonWatkinsMSVM(kernel="rbf", C=1.0, tol=tol, kernel_approximation="nystroem",
                             n_components=case["approx"], random_state=0)


def _worker_facts():
    import psutil
    times = psutil.Process().cpu_times()
    return times.user + times.system, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def chunked_run(path, case, persist=False):
    """One chunked fit on a fresh 2-worker LocalCluster (run in a child process)."""
    import dask
    import dask.array as da
    import distributed
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit=case["limit"], dashboard_address=None) as lc, \
            distributed.Client(lc) as client, \
            dask.config.set({"msvm.persist_features": persist}):
        X = da.from_zarr(str(path / "train_X.zarr"))
        y = da.from_zarr(str(path / "train_y.zarr"))
        pids = client.run(os.getpid)
        before = client.run(_worker_facts)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        est = _estimator(case).fit(X, y)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        after = client.run(_worker_facts)
        spill = client.run(_spill_facts)
        # a worker restarted by its nanny (memory above 95 % of the limit) has a new pid
        restarted = len(set(pids.values()) - set(client.run(os.getpid).values()))
        Xt = da.from_zarr(str(path / "test_X.zarr"))
        yt = np.asarray(da.from_zarr(str(path / "test_y.zarr")).compute())
        acc = float(np.mean(est.predict(Xt).compute() == yt))
        workers = sorted(after)
        return dict(
            client_cpu=cpu1 - cpu0, wall=wall1 - wall0,
            worker_cpu=[after[w][0] - before[w][0] for w in workers],
            worker_peak_mb=[after[w][1] / 1024 for w in workers],
            passes=est.n_passes_, newton_steps=est.n_iter_, objective=est.objective_,
            route=est.solver_plan_.steps[0].solver,
            products=getattr(est, "_chunked_products_", 0),
            sample_bytes=getattr(est, "_chunked_sample_bytes_", 0),
            persisted=bool(persist),
            gap=est.duality_gap_, converged=bool(est.converged_), accuracy=acc,
            chunks=len(X.chunks[0]), spill=[spill[w] for w in workers],
            workers_restarted=restarted,
            **_summary_bytes(est, case))


def _spill_facts(dask_worker):
    """A worker's spilling after the fit: the bytes and keys it holds on disk now, and its
    cumulative disk writes and reads (bytes, counts) from its metric digests."""
    data = dask_worker.data
    held = getattr(data, "spilled_total", None)
    out = dict(disk_bytes_now=int(held.disk) if held is not None else 0,
               disk_keys_now=len(getattr(data, "slow", ())))
    for key, value in getattr(dask_worker, "digests_total", {}).items():
        label = "/".join(str(part) for part in (key if isinstance(key, tuple) else (key,)))
        if "disk" in label:
            out[label] = float(value)
    return out


def _summary_bytes(est, case):
    """Bytes of one chunk's summary per kind of pass (float64 arrays) and of the
    arguments sent with each task: the gradient pass's curvature summary is the dense
    (m k)^2 sum or, on the conjugate-gradient route, k m^2 (the slot blocks of the
    preconditioner); a product pass returns (m + 1) k."""
    m = (case["approx"] or case["d"]) + 1
    k = case["k"]
    dense = est.solver_plan_.steps[0].solver == "chunked newton"
    curvature = 8 * ((m * k) ** 2 if dense else k * m * m)
    sample = getattr(est, "_chunked_sample_bytes_", 0)
    if sample:
        # the sampled Newton matrix's rows and blocks: the largest sample that reached the
        # client (all chunks' samples together; one chunk sends its share)
        curvature = sample
    return dict(gradient_bytes=curvature + 8 * ((m - 1) * k + k + 2),
                line_bytes=8 * 2 * 32, iterate_bytes=8 * 2 * m * k,
                product_bytes=8 * (m * k + k))


def memory_run(path, case):
    """The in-memory fit of the same rows (run in a child process)."""
    import dask.array as da
    X = np.asarray(da.from_zarr(str(path / "train_X.zarr")).compute(), dtype=np.float64)
    y = np.asarray(da.from_zarr(str(path / "train_y.zarr")).compute())
    from threadpoolctl import threadpool_limits
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # one BLAS thread, as each Dask worker (distributed starts them with one): a like-for-
    # like CPU time (two OpenBLAS threads cost 18 % more CPU at load 16: nystroem, 30k rows)
    with threadpool_limits(1, user_api="blas"):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        est = _estimator(case).fit(X, y)
        cpu1, wall1 = time.process_time(), time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    Xt = np.asarray(da.from_zarr(str(path / "test_X.zarr")).compute(), dtype=np.float64)
    yt = np.asarray(da.from_zarr(str(path / "test_y.zarr")).compute())
    return dict(cpu=cpu1 - cpu0, wall=wall1 - wall0, peak_mb=peak / 1024,
                above_data_mb=(peak - base) / 1024, objective=est.objective_,
                gap=est.duality_gap_, converged=bool(est.converged_),
                accuracy=float(np.mean(est.predict(Xt) == yt)),
                plan=str(est.solver_plan_))


def _child(kind, path, case, persist, queue):
    """The entry of a child process: one run, its dict (or the error) put on the queue."""
    try:
        queue.put(chunked_run(path, case, persist) if kind == "chunked"
                  else memory_run(path, case))
    except Exception as exc:            # reported in the results, not raised
        queue.put({"error": repr(exc)})


def _child_costs(path, case, queue):
    kinds = {"factored": factored_costs, "pattern": pattern_steps}
    try:
        queue.put(kinds.get(case["costs_only"], pass_costs)(path, case))
    except Exception as exc:            # reported in the results, not raised
        queue.put({"error": repr(exc)})


def _map_cost(path, case):
    """CPU seconds of the Nystroem map of one chunk (what a pass costs more per chunk when
    the features are not persisted)."""
    import dask.array as da

    from msvm._dask import _Rows
    est = _estimator(case)
    X = da.from_zarr(str(path / "train_X.zarr"))
    est.gamma_ = 0.05
    from msvm._approx import fit_feature_map
    fmap = fit_feature_map(est, _Rows(X), est.gamma_, check_scale=False)
    block = np.asarray(X.blocks[0].compute(), dtype=np.float64)
    cpu = time.process_time()
    fmap.transform(block, dtype=np.float32)
    return time.process_time() - cpu


def pass_costs(path, case, rows=10_000):
    """CPU seconds per row of each part of a pass at the case's n_components, measured on
    ``rows`` rows of its data in this process (one BLAS thread, as a worker): the Nystroem
    map, the gradient pass with the Newton matrix's curvature sum (at the first stage's
    iterate, V = 0, where every term is free: the most curvature work) and without it, and
    the line pass (22 steps).  Also the bytes of one chunk's gradient summary."""
    import dask.array as da
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    from msvm._approx import fit_feature_map
    from msvm._dask import FIRST_STEPS, _Rows
    from msvm._dask_passes import ChunkModel, gradient_pass, hessian_pass, line_pass
    from msvm._primal import FIRST_MU_SHARE
    est = _estimator(case)
    X = da.from_zarr(str(path / "train_X.zarr"))
    Xc = np.asarray(X[:rows].compute(), dtype=np.float64)
    yc = np.asarray(da.from_zarr(str(path / "train_y.zarr"))[:rows].compute())
    est.gamma_ = 1.0 / (Xc.shape[1] * Xc.var())
    k, m = case["k"], case["approx"]
    with threadpool_limits(1):
        fmap = fit_feature_map(est, _Rows(X), est.gamma_, check_scale=False)
        model = ChunkModel(clone(est), np.arange(k), np.ones(k), fmap, est.C)
        V, b, mu = np.zeros((m, k)), np.zeros(k), FIRST_MU_SHARE / est.C
        out = {}
        for label, call in (
                ("map", lambda: fmap.transform(Xc, dtype=np.float32)),
                ("gradient_curvature", lambda: gradient_pass(model, Xc, yc, None, V, b, mu,
                                                             True)),
                ("gradient", lambda: gradient_pass(model, Xc, yc, None, V, b, mu, False)),
                ("line", lambda: line_pass(model, Xc, yc, None, V, b, V + 1e-3, b, mu,
                                           FIRST_STEPS)),
                # the conjugate-gradient route: a product pass, and the gradient pass with
                # the slot blocks of the preconditioner over every 500th row (the stride of
                # SKETCH_ROWS = 4000 at n = 2M)
                ("product", lambda: hessian_pass(model, Xc, yc, None, V, b, mu, V + 1e-3,
                                                 b)),
                ("gradient_slots", lambda: gradient_pass(model, Xc, yc, None, V, b, mu,
                                                         "slots", 500))):
            cpu = time.process_time()
            result = call()
            out[f"{label}_us_per_row"] = 1e6 * (time.process_time() - cpu) / rows
            del result
    out["gradient_summary_mb"] = 8 * ((m * k) ** 2 + m * k + k + 2) / 1e6
    out["rows"] = rows
    return out


def factored_costs(path, case, rows=10_000, stride=250, repeats=2):
    """CPU microseconds per row of the conjugate-gradient route's passes (the gradient with
    the sampled rows of every ``stride``-th free sample: 8,000 of 2M rows; the line search's
    first pass of 22 steps; a Newton-matrix product) on ``rows`` rows in this process, one
    BLAS thread, at a random iterate, for the Nystroem features kept factored (each pass
    computes K(X_c, L) and multiplies it by N V), formed in every pass (the map, then the
    pass on the float32 features: the code before the factored passes) and persisted
    (the pass alone); and the kernel values K(X_c, L) and the map alone.  The best of
    ``repeats``."""
    import dask.array as da
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    from msvm._approx import fit_feature_map
    from msvm._dask import FIRST_STEPS, _Rows
    from msvm._dask_passes import ChunkModel, gradient_pass, hessian_pass, line_pass
    est = _estimator(case)
    X = da.from_zarr(str(path / "train_X.zarr"))
    Xc = np.asarray(X[:rows].compute(), dtype=np.float64)
    yc = np.asarray(da.from_zarr(str(path / "train_y.zarr"))[:rows].compute())
    k, m = case["k"], case["approx"]
    rng = np.random.default_rng(0)
    V = rng.normal(size=(m, k)) * 0.3
    V -= V.mean(axis=1, keepdims=True)
    sV, b, mu = rng.normal(size=(m, k)), np.zeros(k), 0.05

    def best(call):
        times = []
        for _ in range(repeats):
            cpu = time.process_time()
            call()
            times.append(time.process_time() - cpu)
        return 1e6 * min(times) / rows

    out = {"rows": rows, "stride": stride}
    with threadpool_limits(1):
        fmap = fit_feature_map(est, _Rows(X), 1.0 / (Xc.shape[1] * Xc.var()),
                               check_scale=False)
        factored = ChunkModel(clone(est), np.arange(k), np.ones(k), fmap, est.C)
        plain = ChunkModel(clone(est), np.arange(k), np.ones(k), None, est.C)
        phi = fmap.transform(Xc, dtype=np.float32)
        out["kernel_us"] = best(lambda: [fmap.pass_block(Xc[i:i + 2000])
                                         for i in range(0, rows, 2000)])
        out["kernel_before_us"] = best(lambda: [fmap.kernel_block(Xc[i:i + 2000])
                                                for i in range(0, rows, 2000)])
        out["map_us"] = best(lambda: fmap.transform(Xc, dtype=np.float32))
        # the factored passes with the kernel values of kernel_matrix (the code before
        # msvm._kernels.LandmarkRBF): a copy of the map whose pass blocks are those
        before_map = copy.copy(fmap)
        before_map.pass_block = before_map.kernel_block
        before = ChunkModel(clone(est), np.arange(k), np.ones(k), before_map, est.C)
        for model in (factored, before):
            model.factored = True
        for label, model, data in (("factored", factored, lambda: Xc),
                                   ("factored_before", before, lambda: Xc),
                                   ("formed", plain,
                                    lambda: fmap.transform(Xc, dtype=np.float32)),
                                   ("persisted", plain, lambda: phi)):
            out[label] = {
                "gradient": best(lambda: gradient_pass(model, data(), yc, None, V, b, mu,
                                                       "sampled", stride)),
                "line": best(lambda: line_pass(model, data(), yc, None, V, b, sV, b, mu,
                                               FIRST_STEPS)),
                "product": best(lambda: hessian_pass(model, data(), yc, None, V, b, mu, sV,
                                                     b))}
    return out


def pattern_steps(path, case, sizes=(20_000,), chunk=5_000):
    """Newton steps, passes and CPU of the chunked fit (synchronous scheduler, one BLAS
    thread, Nystroem features mapped in every pass) without and with the pattern steps of
    its mu stages (msvm._dask.PATTERN_STEPS), on the first n rows of the case's data for
    each n of ``sizes``, in chunks of ``chunk`` rows, beside the in-memory fit's objective
    and test accuracy."""
    import dask
    import dask.array as da
    from threadpoolctl import threadpool_limits

    import msvm._dask as chunked
    X = da.from_zarr(str(path / "train_X.zarr"))
    y = da.from_zarr(str(path / "train_y.zarr"))
    Xt = np.asarray(da.from_zarr(str(path / "test_X.zarr")).compute(), dtype=np.float64)
    yt = np.asarray(da.from_zarr(str(path / "test_y.zarr")).compute())
    out = []
    with threadpool_limits(1, user_api="blas"), dask.config.set(scheduler="synchronous"):
        for n in sizes:
            Xn = np.asarray(X[:n].compute(), dtype=np.float64)
            yn = np.asarray(y[:n].compute())
            cpu = time.process_time()
            ref = _estimator(case).fit(Xn, yn)
            row = dict(n=n, memory_cpu=time.process_time() - cpu,
                       memory_objective=ref.objective_,
                       memory_accuracy=float(np.mean(ref.predict(Xt) == yt)))
            for flag in (False, True):
                chunked.PATTERN_STEPS = flag
                cpu = time.process_time()
                est = _estimator(case).fit(da.from_array(Xn, chunks=(chunk, Xn.shape[1])),
                                           da.from_array(yn, chunks=chunk))
                row["pattern" if flag else "plain"] = dict(
                    cpu=time.process_time() - cpu, steps=est.n_iter_, passes=est.n_passes_,
                    products=getattr(est, "_chunked_products_", 0),
                    objective=est.objective_, gap=est.duality_gap_,
                    converged=bool(est.converged_),
                    accuracy=float(np.mean(np.asarray(est.predict(Xt)) == yt)))
            chunked.PATTERN_STEPS = True
            out.append(row)
    return dict(runs=out)


def run_case(name, data_dir):
    case = CASES[name]
    path = pathlib.Path(data_dir) / case.get("data", name)
    path.mkdir(parents=True, exist_ok=True)
    make_data(path, case["n"], case["d"], case["k"], case["chunk"])
    out = dict(case=name, **case)
    if case.get("costs_only"):
        out["pass_costs"] = run_in_child(_child_costs, (path, case), TIMEOUT)
        print(out, flush=True)
        return out
    if not case.get("chunked", True):
        pass                # the in-memory reference alone
    elif case["approx"] is None:
        out["chunked"] = run_in_child(_child, ("chunked", path, case, False), TIMEOUT)
    else:
        # mapping the features in every pass costs a Nystroem map of all rows per pass
        # (timed per chunk below); the run persists them unless the case says not
        persist = case.get("persist", True)
        label = "chunked_persisted" if persist else "chunked_mapped"
        out[label] = run_in_child(_child, ("chunked", path, case, persist), TIMEOUT)
        out["map_seconds_per_chunk"] = _map_cost(path, case)
    if case["memory"]:
        out["memory"] = run_in_child(_child, ("memory", path, case, False), TIMEOUT)
    print(out, flush=True)
    return out


NOTE = []        # extra lines of the report's head (--note)


def report(results):
    rows = []
    for r in results:
        for label in ("chunked", "chunked_persisted", "chunked_mapped", "memory"):
            f = r.get(label)
            if not isinstance(f, dict) or "error" in f:
                if isinstance(f, dict):
                    rows.append([r["case"], label, f["error"]] + [""] * 9)
                continue
            chunked = label != "memory"
            cpu = (f["client_cpu"] + sum(f["worker_cpu"])) if chunked else f["cpu"]
            per_pass = f"{cpu / f['passes']:.2f}" if chunked else ""
            rows.append([r["case"], label, f"{cpu:.1f}", per_pass, f"{f['wall']:.0f}",
                         ", ".join(f"{m:.0f}" for m in f["worker_peak_mb"]) if chunked
                         else f"{f['peak_mb']:.0f}",
                         f.get("passes", ""), f.get("newton_steps", ""),
                         f"{f['objective']:.8g}", f"{f['gap']:.3g}", f["converged"],
                         f"{f['accuracy']:.4f}"])
    head = ["case", "fit", "CPU s", "CPU s per pass", "wall s", "peak MB (per worker)", "passes",
            "Newton steps", "objective", "duality gap", "converged", "test accuracy"]
    info = machine_info()
    return "\n".join(["# Fits on Dask arrays (LocalCluster, 2 workers)", "",
                      f"Commit {git_commit()}; {info['cpu']}, {info['logical_cpus']} logical "
                      f"CPUs, {info['memory']}; {info['date']}.  The machine was shared with "
                      f"six other sessions: CPU times are the measure, wall times indicative.",
                      *NOTE, "", markdown_table(head, rows), ""])


def projection(result, workers=64, rows=100_000_000, bandwidth=1e9, latency=2e-3):
    """A projection of one chunked run to ``workers`` workers and ``rows`` rows: the
    measured worker CPU per row and pass, the passes of the run (the Newton steps grow
    little with n at a fixed tol), and per pass the summaries' transfer over a pairwise
    tree of the chunks (log2 of their number of hops, each ``latency`` plus the summary at
    ``bandwidth`` bytes/s)."""
    f = result.get("chunked") or result.get("chunked_persisted")
    if not isinstance(f, dict) or "error" in f or result["case"].startswith("nystroem1000"):
        return None
    per_row_pass = sum(f["worker_cpu"]) / (f["passes"] * result["n"])
    chunks = max(workers, rows // result["chunk"])
    hops = int(np.ceil(np.log2(chunks)))
    compute = per_row_pass * rows / workers
    transfer = hops * (latency + f["gradient_bytes"] / bandwidth)
    client = f["client_cpu"] / f["passes"]
    return dict(case=result["case"], per_row_pass_us=1e6 * per_row_pass,
                pass_seconds=compute + transfer + client, compute_seconds=compute,
                transfer_seconds=transfer, client_seconds=client, passes=f["passes"],
                fit_hours=(compute + transfer + client) * f["passes"] / 3600,
                gradient_bytes=f["gradient_bytes"], line_bytes=f["line_bytes"],
                chunks=chunks)


def projection_text(results):
    rows = []
    for r in results:
        p = projection(r)
        if p is None:
            continue
        rows.append([p["case"], f"{p['per_row_pass_us']:.2f}", p["chunks"],
                     f"{p['gradient_bytes'] / 1e6:.2f} MB", f"{p['line_bytes']} B",
                     f"{p['compute_seconds']:.1f}", f"{p['transfer_seconds']:.2f}",
                     f"{p['client_seconds']:.2f}", p["passes"], f"{p['fit_hours']:.2f}"])
    head = ["case", "worker CPU us per row and pass", "chunks at 100M", "gradient summary",
            "line summary", "compute s/pass", "tree transfer s/pass", "client s/pass",
            "passes", "projected fit h"]
    return "\n".join([
        "## Projection: 64 workers, 100M rows", "",
        "From the measured worker CPU per row and pass, the passes of the run, and per pass "
        "log2(chunks) hops of the gradient summary (the largest) at 1 GB/s plus 2 ms "
        "latency; the client's per-pass time as measured.  Not measured on a cluster.", "",
        markdown_table(head, rows), ""])


def targets_text(results):
    """The issue's targets against what ran (computed from the results at hand)."""
    by = {r["case"]: r for r in results}
    lines = ["## The issue's targets", ""]
    lines += _linear_10m_lines(by)
    lines += _nystroem_2m_lines(by)
    lines += ["- Accuracy and objective against the in-memory fit, memory per worker and "
              "time per pass: the table above.", ""]
    return "\n".join(lines)


def _linear_10m_lines(by):
    big = by.get("linear-10m", {}).get("chunked")
    if isinstance(big, dict) and "error" not in big:
        peak = max(big["worker_peak_mb"])
        return [f"- n = 10M linear (d = 50, k = 10, C = 1) from zarr, 2 GiB per worker: "
                f"peak {peak:.0f} MB per worker ({'met' if peak <= 2048 else 'missed'}), "
                f"{big['passes']} passes, {big['client_cpu'] + sum(big['worker_cpu']):.0f} s "
                f"CPU, test accuracy {big['accuracy']:.4f}, converged {big['converged']} "
                f"(no in-memory reference at 10M: 4 GB of float64 X)."]
    lin = by.get("linear-1m", {}).get("chunked")
    if not isinstance(lin, dict) or "error" in lin:
        return ["- n = 10M linear: not run."]
    per_row = sum(lin["worker_cpu"]) / (lin["passes"] * 1_000_000)
    return [f"- n = 10M linear (d = 50, k = 10, C = 1) from zarr, 2 GB per worker: not "
            f"completed. From linear-1m, {1e6 * per_row:.2f} us of worker CPU per row and "
            f"pass and {lin['passes']} passes: about {per_row * 1e7 * lin['passes'] / 3600:.1f}"
            f" CPU hours."]


def _factored_2m_lines(by):
    """The n = 2M Nystroem target from the factored passes' per-row costs and the passes of
    the largest n_components = 1000 run (mapped if one ran)."""
    costs = by.get("nystroem-factored-costs", {}).get("pass_costs")
    if not isinstance(costs, dict) or "error" in costs:
        return []
    runs = [(r, r.get(label)) for r in by.values() if r["case"].startswith("nystroem1000-")
            for label in ("chunked_mapped", "chunked_persisted")
            if isinstance(r.get(label), dict) and "error" not in r[label]]
    if not runs:
        return []
    r, f = max(runs, key=lambda rf: (not rf[1].get("persisted", True), rf[0]["n"]))
    c = costs["factored"]
    P, products = f["passes"], f["products"]
    per_row = ((P - products) * 0.5 * (c["gradient"] + c["line"]) + products * c["product"]) / P
    wall = P * (per_row * 1e-6 * 1_000_000 + f["client_cpu"] / P)
    peak = ", ".join(f"{m:.0f}" for m in f["worker_peak_mb"])
    formed = costs.get("formed", {})
    formed_row = 0.5 * (formed.get("gradient", np.nan) + formed.get("line", np.nan))
    loaded = sum(f["worker_cpu"]) / (P * r["n"])
    wall_loaded = P * (loaded * 1_000_000 + f["client_cpu"] / P)
    verdict = "met" if wall <= 3 * 560 else "missed"
    return [f"- n = 2M Nystroem (n_components = 1000, d = 20, k = 5), 1.5 GiB per worker, "
            f"features mapped in every pass: not run (time: the shared machine's load); "
            f"projected. The mapped passes keep the features factored (section \"Mapped "
            f"passes kept factored\"): {per_row:.1f} us of CPU per row and pass in one "
            f"process against {formed_row:.0f} with the map formed; a worker holds its chunks "
            f"of X and the passes' summaries (the n = {r['n']:,} "
            f"{'mapped' if not f.get('persisted', True) else 'persisted'} run: peak {peak} MB "
            f"per worker). With the {P} passes ({f['newton_steps']} Newton steps) of that run "
            f"and its {f['client_cpu'] / P:.2f} s of client CPU per pass, 2M rows on 2 idle "
            f"workers take about {wall / 60:.0f} min of wall time ({wall_loaded / 60:.0f} min "
            f"at the run's own {1e6 * loaded:.1f} us of worker CPU per row and pass, measured "
            f"under a load of about 10) against 3 x 560 s = 28 min for the 3x target (the "
            f"in-memory path's per-sample time at 1M, 282 s, doubled): {verdict} by this "
            f"projection, not by a run; the passes may grow at 2M (the sampled Newton matrix "
            f"then holds a subsample of the free samples, and conjugate-gradient products "
            f"add passes: 1 product in the n = {r['n']:,} run)."]


def _measured_2m_lines(by):
    """The n = 2M Nystroem target as run (nystroem1000-2m-mapped), against the in-memory
    fit of the same rows where that ran (nystroem1000-2m-memory)."""
    f = by.get("nystroem1000-2m-mapped", {}).get("chunked_mapped")
    if not isinstance(f, dict) or "error" in f:
        return []
    mem = by.get("nystroem1000-2m-memory", {}).get("memory")
    peak = max(f["worker_peak_mb"])
    cpu = f["client_cpu"] + sum(f["worker_cpu"])
    worker = max(f["worker_cpu"])
    line = (f"- n = 2M Nystroem (n_components = 1000, d = 20, k = 5), 1.5 GiB per worker, "
            f"features mapped in every pass: run. Peak {peak:.0f} MB per worker "
            f"({'met' if peak <= 1.5 * 1024 else 'missed'}: the in-memory path holds 8 GB "
            f"of features), {f['passes']} passes ({f['products']} of them conjugate-gradient "
            f"products, {f['newton_steps']} Newton steps), {cpu:.0f} s CPU "
            f"({worker:.0f} s on the busier worker, {f['client_cpu']:.0f} s on the client), "
            f"{f['wall']:.0f} s wall, test accuracy "
            f"{f['accuracy']:.4f}, converged {f['converged']}.")
    if isinstance(mem, dict) and "error" not in mem:
        acc = abs(f["accuracy"] - mem["accuracy"])
        mem_cpu = mem.get("cpu", np.nan)
        line += (f" In memory (one process, one BLAS thread, the same rows): {mem_cpu:.0f} s "
                 f"CPU, {mem['wall']:.0f} s wall, peak {mem['peak_mb']:.0f} MB, test accuracy "
                 f"{mem['accuracy']:.4f}: accuracy within {acc:.4f} "
                 f"({'met' if acc <= 0.002 else 'missed'}); wall time "
                 f"{f['wall'] / mem['wall']:.2f}x the in-memory fit's (each run's load: the head) "
                 f"({'met' if f['wall'] <= 3 * mem['wall'] else 'missed'} against 3x); on 2 "
                 f"idle workers the chunked fit's wall time is about its busier worker's CPU "
                 f"plus the client's, {(worker + f['client_cpu']) / 60:.0f} min, "
                 f"{(worker + f['client_cpu']) / mem_cpu:.2f}x the in-memory fit's CPU.")
    else:
        line += " The in-memory reference of the same rows did not run (see the head)."
    return [line]


def _nystroem_2m_lines(by):
    measured = _measured_2m_lines(by)
    if measured:
        return measured
    factored = _factored_2m_lines(by)
    if factored:
        return factored
    costs = by.get("nystroem-2m", {}).get("pass_costs")
    if not isinstance(costs, dict) or "error" in costs:
        return []
    per_row = max(costs["gradient_us_per_row"], costs["line_us_per_row"]) * 1e-6
    map_row = costs["map_us_per_row"] * 1e-6
    passes = 130
    return [
        f"- n = 2M Nystroem (n_components = 1000, d = 20, k = 5), 1.5 GiB per worker, "
        f"features recomputed per pass: not run (missed: time). Measured per row on "
        f"{costs['rows']} rows, one BLAS thread: the map {1e6 * map_row:.1f} us, a gradient "
        f"pass {costs['gradient_curvature_us_per_row']:.1f} us with the curvature sum at "
        f"V = 0 "
        f"({costs['gradient_us_per_row']:.1f} without), a line pass "
        f"{costs['line_us_per_row']:.1f} us, each including the map: the map is "
        f"{100 * map_row / per_row:.0f} % of a pass. At 2M rows a pass costs about "
        f"{per_row * 2e6:.0f} CPU s ({per_row * 1e6:.0f} s on each of 2 workers); assuming "
        f"{passes} passes (not measured at n_components = 1000; 46 at linear-1m; "
        f"nystroem-100k at n_components = 300 took 259 "
        f"before the one-pass line search) the fit needs about "
        f"{per_row * 2e6 * passes / 3600:.1f} CPU hours, {per_row * 1e6 * passes / 3600:.1f} h "
        f"on 2 idle workers, against about 560 s for the in-memory path at 2M by its "
        f"per-sample time (282 s wall at 1M, issue 26), which cannot run here (8 GB of "
        f"features): the 3x wall-time target is missed by about "
        f"{per_row * 1e6 * passes / (3 * 560):.0f}x with per-pass features. Persisting "
        f"them (8 GB across the workers) removes the map's share. Memory per worker is not "
        f"measured; one chunk's gradient summary is {costs['gradient_summary_mb']:.0f} MB "
        f"(the (5005)^2 Newton curvature), with 25k-row chunks (100 MB of float32 "
        f"features) a pairwise sum holds three summaries and a chunk: an estimated "
        f"0.8 GB, within 1.5 GiB (not measured)."]


def write_report(results):
    write_json(JSON_PATH, results)
    MD_PATH.write_text(report(results) + "\n" + projection_text(results) + "\n"
                       + targets_text(results) + spill_text(results) + cg_text(results)
                       + factored_text(results) + pattern_text(results))


def pattern_text(results):
    """The Newton steps and passes without and with the pattern steps of the mu stages
    (case nystroem-pattern-steps), or nothing."""
    by = {r["case"]: r for r in results}
    runs = by.get("nystroem-pattern-steps", {}).get("pass_costs")
    if not isinstance(runs, dict) or "error" in runs:
        return ""
    runs = runs["runs"]
    rows = []
    for run in runs:
        ref = run["memory_objective"]
        for label in ("plain", "pattern"):
            f = run[label]
            rows.append([f"{run['n']:,}", "with" if label == "pattern" else "without",
                         f["steps"], f["passes"], f["products"], f"{f['cpu']:.1f}",
                         f"{f['objective']:.8g}", f"{run['memory_objective']:.8g}",
                         f"{(f['objective'] - ref) / abs(ref):.1e}",
                         f"{f['gap']:.3g}", f["converged"], f"{f['accuracy']:.4f}",
                         f"{run['memory_accuracy']:.4f}"])
    head = ["n", "pattern steps", "Newton steps", "passes", "of them products", "CPU s",
            "objective", "in memory", "rel. diff.", "duality gap", "converged",
            "test accuracy", "in memory"]
    return "\n".join([
        "", "## Pattern steps of the mu stages", "",
        "The chunked fit (WestonWatkinsMSVM, n_components = 1000, d = 20, k = 5, C = 1, tol = "
        "1e-3, Nystroem features mapped in every pass, 5,000-row chunks) on the first n rows "
        "of the nystroem1000-100k data, synchronous scheduler in one process, one BLAS "
        "thread, without and with the pattern step that starts each mu stage after the first "
        "(msvm._dask.PATTERN_STEPS); CPU of the whole fit (the client's factoring of the "
        "sampled Newton matrix included); shared machine.", "",
        markdown_table(head, rows), ""])


def cg_text(results):
    """The conjugate-gradient route's runs (cases nystroem1000-*), preconditioned by the
    Newton matrix of a sample of the free terms: per run the passes and their kinds
    (products per Newton step), CPU per pass on the workers and the client, bytes per pass,
    memory per worker, and the comparison with the in-memory fit; then the projections to
    n = 2M on 2 workers and to 100M rows on 64 workers."""
    rows, runs, mem_cpu = [], [], {}
    for r in results:
        if r["case"].startswith("nystroem1000-") and isinstance(r.get("memory"), dict) \
                and "error" not in r["memory"]:
            mem_cpu[r["n"]] = r["memory"]
    for r in results:
        for label in ("chunked_persisted", "chunked_mapped"):
            f = r.get(label)
            if not r["case"].startswith("nystroem1000-") or not isinstance(f, dict) \
                    or "error" in f:
                continue
            runs.append((r, f))
            rows.append(_cg_row(r, f, mem_cpu.get(r["n"])))
    if not rows:
        return ""
    head = ["n", "features", "passes", "of them products", "Newton steps",
            "products per Newton step", "worker CPU s per pass", "client CPU s per pass",
            "sample per gradient pass", "product summary per chunk", "peak MB per worker",
            "chunked CPU us per sample", "in-memory CPU us per sample", "CPU ratio",
            "wall s", "test accuracy", "in memory", "objective rel. diff.", "converged"]
    return "\n".join(["", "## Nystroem n_components = 1000: the subsampled Newton "
                      "preconditioner", "",
                      "d = 20, k = 5, C = 1, tol = 1e-3, 25k-row chunks, 2 workers (1.5 GiB "
                      "each); CPU = client + both workers.  Conjugate gradients on the "
                      "Newton system preconditioned by the Newton matrix of a sample of "
                      "about 8 m free samples (their rows and k x k blocks sent by the "
                      "gradient pass; the client forms and factors the 5005^2 matrix), "
                      "exact (no products) when the sample holds every free sample.", "",
                      markdown_table(head, rows), "", *_projections(runs), ""])


def _cg_row(r, f, mem):
    cpu = f["client_cpu"] + sum(f["worker_cpu"])
    ok = isinstance(mem, dict)
    return [f"{r['n']:,}", "persisted" if f.get("persisted", True) else "mapped per pass",
            f["passes"], f["products"], f["newton_steps"],
            f"{f['products'] / max(f['newton_steps'], 1):.2f}",
            f"{sum(f['worker_cpu']) / f['passes']:.2f}", f"{f['client_cpu'] / f['passes']:.2f}",
            f"{f['gradient_bytes'] / 1e6:.1f} MB", f"{f['product_bytes'] / 1e3:.0f} kB",
            ", ".join(f"{m:.0f}" for m in f["worker_peak_mb"]),
            f"{1e6 * cpu / r['n']:.0f}", f"{1e6 * mem['cpu'] / r['n']:.0f}" if ok else "",
            f"{cpu / mem['cpu']:.2f}" if ok else "", f"{f['wall']:.0f}",
            f"{f['accuracy']:.4f}", f"{mem['accuracy']:.4f}" if ok else "",
            f"{(f['objective'] - mem['objective']) / abs(mem['objective']):.1e}" if ok
            else "", f["converged"]]


def _projections(runs, n=2_000_000, bandwidth=1e9, latency=2e-3):
    """The n = 2M fit on 2 workers and a 100M-row fit on 64 workers, projected from the
    largest persisted run and the largest run with the features mapped in every pass: its
    passes (assumed not to grow with n), worker CPU per row and pass (as measured: under
    the machine's load), client CPU per pass (the sampled matrix's forming and factoring:
    its size does not grow with n); per pass the sample's transfer through log2(chunks)
    hops of a pairwise tree."""
    out = []
    for persisted in (True, False):
        chosen = [(r, f) for r, f in runs if f.get("persisted", True) == persisted]
        if not chosen:
            continue
        r, f = max(chosen, key=lambda rf: rf[0]["n"])
        per_row = sum(f["worker_cpu"]) / (f["passes"] * r["n"])
        client = f["client_cpu"] / f["passes"]
        for rows, workers in ((n, 2), (100_000_000, 64)):
            hops = int(np.ceil(np.log2(max(workers, rows // r["chunk"]))))
            transfer = hops * (latency + f["gradient_bytes"] / bandwidth)
            wall = f["passes"] * (per_row * rows / workers + client + transfer)
            kind = (f"features persisted ({4 * rows * r['approx'] / workers / 1e9:.1f} GB per "
                    f"worker)" if persisted else "features mapped in every pass (factored)")
            out.append(f"- n = {rows:,} on {workers} workers, {kind}, from the n = "
                       f"{r['n']:,} run ({f['passes']} passes, {1e6 * per_row:.2f} us of "
                       f"worker CPU per row and pass, {client:.2f} s client CPU per pass, "
                       f"{transfer:.2f} s transfer per pass): about {wall / 60:.0f} min of "
                       f"wall time.")
    return ["Projections (workers as loaded as in the runs, the passes of the largest run "
            "of each kind; at larger n the sample of free samples is a subsample more "
            "often, and conjugate-gradient products add passes, not counted here):", "",
            *out]


def factored_text(results):
    """The per-row costs of the passes with Nystroem features kept factored, formed in
    every pass and persisted (case nystroem-factored-costs), and the fit time projected
    from them on idle workers."""
    by = {r["case"]: r for r in results}
    costs = by.get("nystroem-factored-costs", {}).get("pass_costs")
    if not isinstance(costs, dict) or "error" in costs:
        return ""
    labels = {"factored": "factored", "factored_before": "factored, kernel values as before",
              "formed": "formed", "persisted": "persisted"}
    rows = [[labels[label]] + [f"{costs[label][p]:.1f}" for p in ("gradient", "line",
                                                                  "product")]
            for label in labels if label in costs]
    head = ["features", "gradient pass (sampled rows)", "line pass (22 steps)",
            "product pass"]
    lines = ["", "## Mapped passes kept factored", "",
             f"CPU microseconds per row, one process, one BLAS thread, {costs['rows']:,} rows "
             f"of the nystroem-2m data (d = 20, k = 5, n_components = 1000), at a random "
             f"iterate, the gradient pass sampling every {costs['stride']}th free sample "
             f"(8,000 of 2M rows), best of 2; shared machine.  'factored': each pass "
             f"computes the kernel values K(X_c, L) ({costs['kernel_us']:.1f} us a row: one "
             f"product and the exponential, msvm._kernels.LandmarkRBF) and multiplies them by "
             f"N V, never forming phi; 'kernel values as before': the same with the kernel "
             f"values of kernel_matrix (squared_distances, "
             f"{costs.get('kernel_before_us', float('nan')):.1f} us a row); 'formed': the map "
             f"({costs['map_us']:.1f} us a row) then the pass on the float32 features (the "
             f"code before); 'persisted': the pass alone.", "",
             markdown_table(head, rows), ""]
    mapped = [(r, r["chunked_mapped"]) for r in results
              if r["case"].startswith("nystroem1000-") and isinstance(r.get("chunked_mapped"),
                                                                      dict)
              and "error" not in r["chunked_mapped"]]
    if mapped:
        r, f = max(mapped, key=lambda rf: rf[0]["n"])
        P, products = f["passes"], f["products"]
        client = f["client_cpu"] / P
        for label in ("factored", "persisted"):
            c = costs[label]
            per_row = ((P - products) * 0.5 * (c["gradient"] + c["line"])
                       + products * c["product"]) / P
            wall = P * (per_row * 1e-6 * 1_000_000 + client)
            lines.append(f"- n = 2,000,000 on 2 idle workers, features {label}: {P} passes "
                         f"(the n = {r['n']:,} mapped run's, {products} of them products) at "
                         f"{per_row:.1f} us a row and {client:.2f} s of client CPU each: "
                         f"about {wall / 60:.0f} min of wall time.")
        lines.append("")
    return "\n".join(lines)


def spill_text(results):
    """The spilling of persisted features (cases with ``spill`` facts), or nothing."""
    lines = []
    for r in results:
        f = r.get("chunked_persisted")
        mem = r.get("memory")
        if not isinstance(f, dict) or "spill" not in f:
            continue
        features_mb = 4 * r["n"] * r["approx"] / 2 ** 20
        lines += [f"## Persisted features above the memory limit: {r['case']}", "",
                  f"n = {r['n']:,}, n_components = {r['approx']}: {features_mb:.0f} MiB of "
                  f"float32 features over 2 workers, memory limit {r['limit']} each; worker "
                  f"peaks {', '.join(f'{m:.0f}' for m in f['worker_peak_mb'])} MB (of "
                  f"the worker processes alive at the end), workers restarted during the "
                  f"fit: {f.get('workers_restarted', 0)}.", ""]
        for i, facts in enumerate(f["spill"]):
            lines.append(f"- worker {i}: " + ", ".join(f"{k} = {v:.4g}" if isinstance(v, float)
                                                       else f"{k} = {v}"
                                                       for k, v in facts.items()))
        if isinstance(mem, dict) and "error" not in mem:
            cpu = f["client_cpu"] + sum(f["worker_cpu"])
            lines += ["", f"- CPU per sample: chunked {1e6 * cpu / r['n']:.0f} us, in memory "
                      f"{1e6 * mem['cpu'] / r['n']:.0f} us (ratio {cpu / mem['cpu']:.2f}); "
                      f"wall {f['wall']:.0f} s against {mem['wall']:.0f} s (ratio "
                      f"{f['wall'] / mem['wall']:.2f}, shared machine); {f['passes']} passes; "
                      f"test accuracy {f['accuracy']:.4f} against {mem['accuracy']:.4f}."]
        lines.append("")
    return "\n".join([""] + lines) if lines else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="linear-1m,nystroem-100k")
    parser.add_argument("--data", default=os.environ.get("MSVM_DASK_DATA", "/tmp/msvm-dask"))
    parser.add_argument("--from-log", default=None,
                        help="rebuild the report from the result lines a run printed")
    parser.add_argument("--note", action="append", default=[],
                        help="a line added to the report's head (repeatable)")
    parser.add_argument("--merge", default=None,
                        help="rebuild the report with the cases of results/MERGE.json "
                             "replacing the existing ones (nothing run)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the other cases' results of the existing .json")
    parser.add_argument("--name", default="dask",
                        help="the results' file name in benchmarks/results (.md, .json)")
    args = parser.parse_args()
    global MD_PATH, JSON_PATH
    MD_PATH, JSON_PATH = RESULTS / f"{args.name}.md", RESULTS / f"{args.name}.json"
    NOTE.extend(args.note)
    if args.merge:
        import json
        results = json.loads(JSON_PATH.read_text())
        for new in json.loads((RESULTS / f"{args.merge}.json").read_text()):
            results = [r for r in results if r["case"] != new["case"]] + [new]
    elif args.from_log:
        results = [eval(line, {"np": np}) for line in open(args.from_log)   # noqa: S307
                   if line.startswith("{'case'")]
    else:
        chosen = chosen_sections(parser, args.only, list(CASES))
        results = []
        if args.keep and JSON_PATH.exists():
            import json
            results = [r for r in json.loads(JSON_PATH.read_text()) if r["case"] not in chosen]
        for name in chosen:
            results.append(run_case(name, args.data))
            write_report(results)           # partial results kept after each case
    write_report(results)
    print(MD_PATH.read_text())


if __name__ == "__main__":
    main()
