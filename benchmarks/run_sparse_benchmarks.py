"""Sparse input: msvm's linear and kernel fits on a CSR matrix, side by side with scikit-learn.

Run from the repository root: ``python -m benchmarks.run_sparse_benchmarks [--quick]
[--only linear kernel equal]``. Writes ``benchmarks/results/sparse.md`` and ``sparse.json``.

Sections:

- ``linear``: n = 20,000 training samples, d = 10,000 features, 1 % density (about 100
  non-zeros per row), k = 5 classes from a sparse linear rule with label noise; every convex
  msvm model with ``kernel='linear'`` and ``LinearSVC(multi_class='crammer_singer')`` (and the
  one-vs-rest LinearSVC) fitted on the same CSR matrix at the same C, each in its own child
  process: CPU time, the ratio to crammer_singer, test accuracy, peak memory above the data,
  and how the fit stopped.
- ``kernel``: the RBF kernel on a 4,000-sample part of the same data (sparse kernel rows,
  never densified) against ``SVC`` on the same CSR matrix.
- ``equal``: the sparse fit against the dense fit of the same data (2,000 x 10,000, dense
  160 MB): largest difference of the decision values and the CPU times of both.
"""

import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from benchmarks.harness import (fmt, git_commit, markdown_table, measured_fit, run_in_child,
                                run_sections)

RESULTS = pathlib.Path(__file__).resolve().parent / "results"
MD_PATH, JSON_PATH = RESULTS / "sparse.md", RESULTS / "sparse.json"
C_LINEAR, C_KERNEL, K, SEED = 0.1, 10.0, 5, 0
MSVM_MODELS = ("ReinforcedMSVM", "WestonWatkinsMSVM", "AngleBasedMSVM")


def sparse_classification(n, d, density, k, seed):
    """CSR X (n, d) with about ``density`` non-zeros, labels from a sparse linear rule.

    Each class has a sparse weight vector (5 % of the features); y is the argmax of X W plus
    Gumbel noise, so the Bayes rule is linear and about 10-20 % of labels are not its argmax.
    """
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed,
                  data_rvs=lambda size: rng.normal(size=size))
    W = sp.random(d, k, density=0.05, random_state=seed + 1,
                  data_rvs=lambda size: rng.normal(size=size)).toarray()
    scores = np.asarray(X @ W)
    scores /= scores.std()
    y = np.argmax(3.0 * scores + rng.gumbel(size=scores.shape), axis=1)
    return X, y


def make_estimator(name, C, kernel):
    import msvm
    from sklearn.svm import SVC, LinearSVC

    if name == "LinearSVC(crammer_singer)":
        return LinearSVC(C=C, multi_class="crammer_singer", random_state=SEED)
    if name == "LinearSVC(ovr)":
        return LinearSVC(C=C, random_state=SEED)
    if name == "SVC":
        return SVC(C=C, kernel=kernel, gamma="scale")
    return getattr(msvm, name)(C=C, kernel=kernel, random_state=SEED)


def fit_in_child(name, C, kernel, path, n_train, queue):
    """Load the CSR data from ``path``, fit one estimator, report time, accuracy, memory."""
    data = np.load(path)
    X = sp.csr_matrix((data["data"], data["indices"], data["indptr"]), shape=tuple(data["shape"]))
    y = data["y"]
    X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    est = make_estimator(name, C, kernel)
    res = measured_fit(est, X_train, y_train)
    del res["convergence_warnings"]
    res.update({"accuracy": float(est.score(X_test, y_test)),
                "data_mb": (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20,
                "sparse_kept": bool(sp.issparse(X_train))})
    queue.put(res)


def _save(X, y, directory):
    path = pathlib.Path(directory) / "data.npz"
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr, shape=np.array(X.shape),
             y=y)
    return str(path)


def _compare(names, C, kernel, X, y, n_train, timeout, reference):
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = _save(X, y, tmp)
        for name in names:
            print(f"  {name} ...", flush=True)
            rows[name] = run_in_child(fit_in_child, (name, C, kernel, path, n_train), timeout)
            print(f"    {rows[name]}", flush=True)
    ref = rows[reference].get("cpu")
    for name, res in rows.items():
        if "cpu" in res and ref:
            res["ratio"] = res["cpu"] / ref
    return rows


def run_linear(quick):
    n, d = (4000, 2000) if quick else (20000, 10000)
    X, y = sparse_classification(n + n // 4, d, 0.01, K, SEED)
    names = (*MSVM_MODELS, "LinearSVC(crammer_singer)", "LinearSVC(ovr)")
    rows = _compare(names, C_LINEAR, "linear", X, y, n, 1800, "LinearSVC(crammer_singer)")
    return {"n": n, "d": d, "density": 0.01, "nnz_per_row": X.nnz / X.shape[0], "k": K,
            "C": C_LINEAR, "rows": rows}


def run_kernel(quick):
    n, d = (1000, 2000) if quick else (4000, 10000)
    X, y = sparse_classification(n + n // 4, d, 0.01, K, SEED)
    names = (*MSVM_MODELS, "SVC")
    rows = _compare(names, C_KERNEL, "rbf", X, y, n, 1800, "SVC")
    return {"n": n, "d": d, "density": 0.01, "k": K, "C": C_KERNEL, "rows": rows}


def run_equal(quick):
    import msvm

    n, d = (500, 2000) if quick else (2000, 10000)
    X, y = sparse_classification(n, d, 0.01, K, SEED)
    Xd = X.toarray()
    rows = {}
    for name in MSVM_MODELS:
        for kernel in ("linear", "rbf"):
            times, dec = {}, {}
            for label, data in (("sparse", X), ("dense", Xd)):
                est = getattr(msvm, name)(C=C_KERNEL, kernel=kernel, tol=1e-8,
                                          random_state=SEED)
                start = time.process_time()
                est.fit(data, y)
                times[label] = time.process_time() - start
                dec[label] = est.decision_function(data)
            rows[f"{name} {kernel}"] = {
                "max_abs_diff": float(np.abs(dec["sparse"] - dec["dense"]).max()),
                "cpu_sparse": times["sparse"], "cpu_dense": times["dense"]}
            print(f"  {name} {kernel}: {rows[f'{name} {kernel}']}", flush=True)
    return {"n": n, "d": d, "rows": rows}


def _render_compare(res, reference):
    header = ["estimator", "CPU s", f"CPU / {reference}", "test accuracy",
              "peak memory above data (MB)", "stop"]
    table = []
    for name, r in res["rows"].items():
        if "error" in r:
            table.append([name, r["error"], "-", "-", "-", "-"])
            continue
        table.append([name, fmt(r["cpu"], ".2f"), fmt(r.get("ratio"), ".2f"),
                      fmt(r["accuracy"], ".4f"), fmt(r["peak_above_data_mb"], ".0f"),
                      r["stop"]])
    data_mb = next((r["data_mb"] for r in res["rows"].values() if "data_mb" in r), None)
    return (markdown_table(header, table)
            + f"\n\nCSR data (training and test parts): {fmt(data_mb, '.1f')} MB.\n")


def render_linear(res):
    return _render_compare(res, "crammer_singer")


def render_kernel(res):
    return _render_compare(res, "SVC")


def render_equal(res):
    table = [[name, fmt(r["max_abs_diff"], ".1e"), fmt(r["cpu_sparse"], ".2f"),
              fmt(r["cpu_dense"], ".2f")] for name, r in res["rows"].items()]
    return markdown_table(["fit", "largest difference of decision values, sparse - dense",
                           "CPU s sparse", "CPU s dense"], table) + "\n"


SETUPS = {
    "linear": ("Linear models on a sparse matrix (against LinearSVC)",
               "Synthetic CSR data (`sparse_classification`: 1 % density, k = 5, labels from a "
               "sparse linear rule with Gumbel noise), 80/20 train/test split, C = 0.1 for "
               "every estimator, default tol, each fit in its own child process (CPU time; "
               "peak memory: the largest resident set size during the fit, sampled every "
               "5 ms, minus its value before the fit, when the data are loaded). "
               "Ratio: CPU time / CPU time of "
               "LinearSVC(multi_class='crammer_singer') on the same CSR matrix. `stop`: msvm's "
               "`stop_reason_` (or, for scikit-learn, whether it raised a ConvergenceWarning)."),
    "kernel": ("RBF kernel on a sparse matrix (against SVC)",
               "The same generator, a smaller n; gamma='scale', C = 10; msvm computes the "
               "kernel rows from the CSR rows (sparse dot products), never densifying X; "
               "SVC (one-vs-one, libsvm's sparse path) on the same CSR matrix."),
    "equal": ("Sparse fit against the dense fit of the same data",
              "tol = 1e-8, C = 10, random_state = 0; the dense copy is X.toarray()."),
}
RUNNERS = {"linear": run_linear, "kernel": run_kernel, "equal": run_equal}
RENDER = {"linear": render_linear, "kernel": render_kernel, "equal": render_equal}


def render_report(data):
    m = data["machine"]
    parts = ["# Sparse input benchmarks\n",
             f"Written by `python -m benchmarks.run_sparse_benchmarks"
             f"{' --quick' if data['quick'] else ''}` "
             f"(commit {m.get('git') or git_commit()}), {m['date']}, "
             f"on {m.get('cpu', '?')} ({m.get('logical_cpus', '?')} logical CPUs, "
             "shared with other work: "
             "CPU times, not wall-clock, are compared).\n"]
    for name in ("linear", "kernel", "equal"):
        res = data["benchmarks"].get(name)
        if res is None:
            continue
        title, setup = SETUPS[name]
        size = f"n = {res['n']}, d = {res['d']}"
        parts.append(f"## {title}\n\n{setup} ({size}.)\n\n{RENDER[name](res)}")
    return "\n".join(parts)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--only", nargs="+", choices=sorted(RUNNERS), default=sorted(RUNNERS))
    args = parser.parse_args(argv)
    runners = {name: (lambda f=f: f(args.quick)) for name, f in RUNNERS.items()}
    run_sections(args.only, runners, SETUPS, RENDER, render_report, MD_PATH, JSON_PATH,
                 args.quick)


if __name__ == "__main__":
    sys.exit(main())
