"""The one harness of the msvm benchmarks: timing, child processes, convergence counts, reports.

Every benchmark script (``python -m benchmarks.run_benchmarks`` and its siblings, and the paper
reproductions ``python -m benchmarks.reproduce.<script>``, run from the repository root) takes
these pieces from here instead of from each other:

- timing: `timed_fit` (wall clock, fast fits repeated, the median), `cpu_fit` (CPU time of one
  fit), `wall_cpu_fit` (both, of one fit);
- child processes: `run_in_child` (a spawned process with a timeout, for solvers that may run
  for long or need a fresh process's memory accounting);
- convergence: `stop_reasons` reads how each fit stopped from the estimators' machine-readable
  attributes (``converged_`` and ``stop_reason_``; for ``TuningSetSearch`` its ``results_``
  entries ``'converged'`` and ``'stop_reason'``, one per grid point), `watch_fits` and
  `count_unconverged` count the fits that did not converge by their stop reason, and
  `recording_scorer` reaches the fits inside a scikit-learn ``GridSearchCV``. An estimator
  without those attributes (another library's) is counted by the category of the warnings
  its fit raised (``ConvergenceWarning``), never by their text;
- reports: `markdown_table`, `fmt`, `machine_info`, `git_commit`, `write_json`,
  `chosen_sections` (the ``--only`` argument), `run_sections` (run the chosen sections,
  rewrite the Markdown and JSON results after each), `sectioned_report` (the Markdown of
  such a run), `sectioned_main` (the command line of such a script);
- shared data: `pendigits_split`.

Timings are measured and reported, never asserted.
"""

import contextlib
import datetime
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import threading
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
REPEATS = 3             # fits faster than FAST_SECONDS are repeated, the median is reported
FAST_SECONDS = 20.0

# The stop reasons an msvm estimator reports in ``stop_reason_``.
STOP_REASONS = ("tol", "max_iter", "gap_floor", "max_dc_iter", "dc_objective_rose",
                "max_reweight")
# The label of a fit counted by the category of its warnings (no stop-reason attribute).
WARNING_LABEL = "ConvergenceWarning"


# --------------------------------------------------------------------------- convergence
def stop_reasons(estimator):
    """How each fit of a fitted estimator stopped, from its machine-readable attributes.

    Parameters
    ----------
    estimator : estimator
        A fitted estimator. ``TuningSetSearch`` reports one fit per grid point (its
        ``results_['converged']`` and ``results_['stop_reason']``); ``TargetedLocalMSVM`` one
        fit per grid point (its ``grid_stop_reasons_``, as each grid point's solve warns on
        its own); every other msvm estimator one fit (``converged_`` and ``stop_reason_``,
        one of `STOP_REASONS`); a scikit-learn ``Pipeline`` reports its final step's.

    Returns
    -------
    stops : list of (bool, str) or None
        ``(converged, stop_reason)`` per fit, or None when the estimator does not have the
        attributes (an estimator of another library, or an msvm build from before them).
    """
    if hasattr(estimator, "steps"):                 # a Pipeline: its final estimator
        estimator = estimator.steps[-1][1]
    results = getattr(estimator, "results_", None)
    if isinstance(results, dict):
        if "converged" in results and "stop_reason" in results:
            return [(bool(c), str(r)) for c, r in zip(results["converged"],
                                                      results["stop_reason"])]
        return None
    grid = getattr(estimator, "grid_stop_reasons_", None)
    if grid is not None:
        return [(str(r) == "tol", str(r)) for r in grid]
    if hasattr(estimator, "converged_") and hasattr(estimator, "stop_reason_"):
        return [(bool(estimator.converged_), str(estimator.stop_reason_))]
    return None


class FitWatch:
    """The fits made inside `watch_fits`: the estimators added and the warnings raised.

    Attributes
    ----------
    estimators : list
        The fitted estimators given to `add`.
    warnings : list of warnings.WarningMessage
        Every warning raised inside the block.
    """

    def __init__(self):
        self.estimators = []
        self.warnings = []

    def add(self, estimator):
        """Count this fitted estimator's fits; returns it."""
        self.estimators.append(estimator)
        return estimator

    def unconverged(self):
        """Counter of the fits that did not converge, by stop reason.

        From the attributes (`stop_reasons`) when every added estimator has them; otherwise
        (or when none was added) the number of ``ConvergenceWarning`` warnings raised in the
        block, under the label ``'ConvergenceWarning'``.
        """
        from sklearn.exceptions import ConvergenceWarning

        stops = [stop_reasons(est) for est in self.estimators]
        if stops and all(s is not None for s in stops):
            return Counter(reason for s in stops for converged, reason in s if not converged)
        n = sum(issubclass(w.category, ConvergenceWarning) for w in self.warnings)
        return Counter({WARNING_LABEL: n}) if n else Counter()

    def n_fits(self):
        """Number of fits the added estimators report (None without the attributes)."""
        stops = [stop_reasons(est) for est in self.estimators]
        if not stops or any(s is None for s in stops):
            return None
        return sum(len(s) for s in stops)

    def other_warnings(self):
        """The warnings raised in the block that are not a ``ConvergenceWarning``."""
        from sklearn.exceptions import ConvergenceWarning

        return [w for w in self.warnings if not issubclass(w.category, ConvergenceWarning)]


@contextlib.contextmanager
def module_settings(*settings):
    """Set module attributes for the block and restore them after: ``settings`` are
    (module, name, value) triples (a benchmark's "before": a library switch turned off)."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in settings]
    for module, name, value in settings:
        setattr(module, name, value)
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


@contextlib.contextmanager
def watch_fits():
    """Record the warnings of the fits made in the block; yields a `FitWatch`.

    Register each fitted estimator with ``watch.add(est)``; afterwards
    ``watch.unconverged()`` counts the fits that did not converge by stop reason.
    """
    watch = FitWatch()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield watch
    watch.warnings = list(caught)


@contextlib.contextmanager
def count_unconverged(counter):
    """Add the unconverged fits of the block to ``counter`` (a Counter) by stop reason.

    Yields the `FitWatch`'s ``add``: call it with every fitted estimator. Warnings other than
    ``ConvergenceWarning`` are re-emitted after the block, so none is suppressed silently.
    """
    with watch_fits() as watch:
        yield watch.add
    counter.update(watch.unconverged())
    for w in watch.other_warnings():
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def recording_scorer(scoring, watch):
    """A scorer that adds every estimator it scores to ``watch`` (a `FitWatch`).

    Given to ``GridSearchCV(scoring=...)`` (with ``n_jobs=1``), it reaches the fit of every
    fold, which the search does not keep.
    """
    from sklearn.metrics import check_scoring

    def score(estimator, X, y):
        watch.add(estimator)
        return check_scoring(estimator, scoring=scoring)(estimator, X, y)
    return score


def format_counts(counter):
    """'3 max_iter, 1 max_dc_iter' (sorted by label), or 'none'."""
    if not counter:
        return "none"
    return ", ".join(f"{v} {k}" for k, v in sorted(counter.items()))


# --------------------------------------------------------------------------- timing
def timed_fit(make, X, y, repeats=REPEATS, fast_seconds=FAST_SECONDS):
    """Fit ``make()`` on (X, y), repeating fits faster than ``fast_seconds``.

    Parameters
    ----------
    make : callable
        Returns a new unfitted estimator.
    X, y : array-like
        Training data.
    repeats : int, default=REPEATS
        Number of fits when the first is faster than ``fast_seconds``.
    fast_seconds : float, default=FAST_SECONDS
        A first fit at least this long is not repeated.

    Returns
    -------
    seconds : float
        Median wall-clock fit time (``time.perf_counter``).
    runs : int
        Number of fits timed.
    model : estimator
        The last fitted estimator.
    notes : list of str
        Sorted, distinct: ``'<Estimator>: not converged (<stop reason>)'`` for every fit that
        did not converge (see `FitWatch.unconverged`) and ``'<Estimator>: <Category>:
        <message>'`` for every other warning.
    """
    times, notes = [], set()
    while True:
        model = make()
        with watch_fits() as watch:
            start = time.perf_counter()
            model.fit(X, y)
            times.append(time.perf_counter() - start)
            watch.add(model)
        name = type(model).__name__
        notes.update(f"{name}: not converged ({reason})" for reason in watch.unconverged())
        notes.update(f"{name}: {w.category.__name__}: {w.message}"
                     for w in watch.other_warnings())
        if len(times) >= repeats or times[0] >= fast_seconds:
            break
    return statistics.median(times), len(times), model, sorted(notes)


def cpu_fit(make, X, y):
    """CPU time (``time.process_time``) of one fit of ``make()``; returns (seconds, model).

    Warnings are ignored: a timing loop that runs the same fit again and again would repeat them.
    """
    est = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.process_time()
        est.fit(X, y)
        return time.process_time() - start, est


def wall_cpu_fit(estimator, X, y):
    """Fit ``estimator`` once; returns (wall seconds, CPU seconds, the fitted estimator).

    Wall clock is ``time.perf_counter``, CPU time ``time.process_time`` (this process, all
    its threads).  Warnings pass through.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    estimator.fit(X, y)
    return time.perf_counter() - wall, time.process_time() - cpu, estimator


def run_in_child(target, args, timeout=None):
    """Run ``target(*args, queue)`` in a spawned process and return what it puts on the queue.

    After ``timeout`` seconds (None: no limit) the child is terminated and an error dict
    (``error``, ``timed_out``) is returned instead. ``wall_time`` (seconds) is added. The target
    must be importable by module name (the child is a fresh interpreter).
    """
    import queue as queue_module

    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, out))
    start = time.perf_counter()
    proc.start()
    try:
        res = out.get(timeout=timeout)
    except queue_module.Empty:
        res = {"error": f"timeout: no result after {timeout:.0f} s (child terminated)",
               "timed_out": True}
        proc.terminate()
    proc.join()
    res["wall_time"] = time.perf_counter() - start
    return res


def measured_fit(estimator, X, y):
    """Fit ``estimator`` on (X, y) and measure it (run it in a child for a clean memory peak).

    Returns a dict: ``cpu`` and ``wall`` seconds, ``peak_above_data_mb`` (`PeakMemory` above
    its value before the fit), ``stop`` (the first fit's stop reason, or for an estimator
    without the attributes whether it warned) and ``convergence_warnings`` (how many
    ConvergenceWarnings the fit raised).
    """
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught, PeakMemory() as memory:
        warnings.simplefilter("always")
        cpu, wall = time.process_time(), time.perf_counter()
        estimator.fit(X, y)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    unconverged = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    stops = stop_reasons(estimator)
    if stops is None:
        stop = "ConvergenceWarning" if unconverged else "converged"
    else:
        stop = stops[0][1]
    return {"cpu": cpu, "wall": wall, "peak_above_data_mb": memory.above_start, "stop": stop,
            "convergence_warnings": unconverged}


class PeakMemory:
    """Largest resident set size (MB) above its value at entry, sampled every 5 ms.

    ``with PeakMemory() as memory: ...`` then ``memory.above_start`` (MB).
    """

    def __enter__(self):
        import psutil

        self._proc = psutil.Process()
        self.start = self.peak = self._proc.memory_info().rss / 2**20
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._proc.memory_info().rss / 2**20)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._proc.memory_info().rss / 2**20)

    @property
    def above_start(self):
        return self.peak - self.start


# --------------------------------------------------------------------------- data
def pendigits_split(quick, seed=0):
    """Standardized stratified 70/30 split of pendigits (scaler fitted on the training part).

    ``quick``: a stratified 1000-sample part of the training set (smoke runs).
    Returns (X_train, X_test, y_train, y_test).
    """
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from msvm.datasets import load_pendigits

    X, y = load_pendigits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=seed)
    if quick:
        X_train, _, y_train, _ = train_test_split(
            X_train, y_train, train_size=1000, stratify=y_train, random_state=seed)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


# --------------------------------------------------------------------------- reports
def fmt(value, spec):
    """``format(value, spec)``; '-' for None, strings unchanged."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return format(value, spec)


def markdown_table(header, rows):
    """A Markdown table of a header and rows of cells (any objects, shown with ``str``)."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def sectioned_main(argv, description, stem, benches, setups, render, render_report):
    """The command line of a benchmark script made of sections: ``--only`` and ``--quick``.

    Parameters
    ----------
    argv : list of str or None
        The arguments (None: ``sys.argv``).
    description : str
        The script's one-line description.
    stem : str
        The results' file name: ``<stem>.md`` and ``.json``, ``quick_<stem>.*`` for --quick.
    benches : dict
        Section name -> callable of ``quick`` returning the section's results.
    setups, render, render_report
        As for `run_sections`.

    Returns
    -------
    status : int
        0, for ``raise SystemExit(main())``.
    """
    import argparse

    names = ", ".join(sorted(render))
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--only", default=",".join(sorted(render)),
                        help=f"comma-separated subset of {names}")
    parser.add_argument("--quick", action="store_true",
                        help=f"tiny smoke run; writes quick_{stem}.md / .json")
    args = parser.parse_args(argv)
    only = chosen_sections(parser, args.only, render)
    if args.quick:
        stem = f"quick_{stem}"
    runners = {name: (lambda bench=bench: bench(args.quick)) for name, bench in benches.items()}
    run_sections(only, runners, setups, render, render_report, RESULTS / f"{stem}.md",
                 RESULTS / f"{stem}.json", args.quick)
    return 0


def sectioned_report(data, heading, command, setups, render, extra="", quick_note=""):
    """The Markdown report of a benchmark script made of sections (see `run_sections`).

    Parameters
    ----------
    data : dict
        What `run_sections` returns (``machine``, ``quick``, ``json_name``, ``benchmarks``).
    heading : str
        The report's title.
    command : str
        The command that generates it (``--quick`` is appended for a smoke run).
    setups, render : dict
        Section name -> (title, setup text), and -> the section's Markdown renderer.
    extra : str, default=""
        A sentence after the generation line.
    quick_note : str, default=""
        What a quick smoke run's note says after "**Quick smoke run**:".

    Returns
    -------
    report : str
    """
    m = data["machine"]
    lines = [f"# {heading}", "",
             f"Generated by `{command}" + (" --quick" if data.get("quick") else "")
             + f"`; the raw numbers are in `{data['json_name']}`." + (f" {extra}" if extra
                                                                      else ""), "",
             "## Machine", "",
             markdown_table(["item", "value"], [[k, v] for k, v in m.items()]), ""]
    if data.get("quick"):
        lines += [f"**Quick smoke run**: {quick_note}", ""]
    for name in sorted(data["benchmarks"]):
        section = data["benchmarks"][name]
        title, setup = setups[name]
        lines += [f"## {title}", "", setup, "", render[name](section), ""]
        if section.get("wall_time") is not None:
            lines += [f"Section wall time: {section['wall_time']:.0f} s.", ""]
    return "\n".join(lines)


def git_commit():
    """``git describe --always --dirty`` of the repository, or None outside a checkout."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=HERE,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def machine_info():
    """Date, CPU, memory, OS and the versions of everything that is timed."""
    import clarabel
    import cvxpy
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    import msvm

    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    memory = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    memory = f"{int(line.split()[1]) / 2 ** 20:.1f} GiB"
                    break
    except OSError:
        pass
    blas = [f"{p.get('internal_api')} {p.get('version')} ({p.get('num_threads')} threads)"
            for p in threadpool_info() if p.get("user_api") == "blas"]
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "msvm": msvm.__version__,
        "git": git_commit(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "cvxpy": cvxpy.__version__,
        "clarabel": clarabel.__version__,
        "blas": ", ".join(blas) or None,
    }


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Counter):
        return dict(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def to_json(data, indent=2):
    """JSON text of ``data``; NumPy scalars and arrays become numbers and lists."""
    return json.dumps(data, indent=indent, default=_json_default)


def write_json(path, data, indent=2):
    """Write ``to_json(data)`` to ``path`` (parents created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_json(data, indent) + "\n")
    return path


def chosen_sections(parser, only, names):
    """The section names of a comma-separated ``--only`` value; ``parser.error`` on unknown ones.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The script's parser (its ``error`` exits with the usage).
    only : str
        The ``--only`` value, e.g. ``'1,2'``.
    names : iterable of str
        The script's section names.

    Returns
    -------
    only : list of str
    """
    chosen = [s.strip() for s in only.split(",") if s.strip()]
    unknown = set(chosen) - set(names)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {sorted(names)}")
    return chosen


def run_sections(only, runners, setups, render, render_report, md_path, json_path, quick):
    """Run the chosen sections in order; print each and rewrite the report after each one.

    Parameters
    ----------
    only : list of str
        The section names to run.
    runners : dict
        Section name -> callable returning the section's results (a dict).
    setups : dict
        Section name -> (title, setup text).
    render : dict
        Section name -> callable rendering the section's results as Markdown.
    render_report : callable
        The whole report (Markdown) of the data dict.
    md_path, json_path : pathlib.Path
        Where the report and the raw numbers go; sections not run keep their previous
        results from ``json_path``.
    quick : bool
        A smoke run (recorded in the data).

    Returns
    -------
    data : dict
        ``machine``, ``quick``, ``json_name`` and ``benchmarks`` (section name -> results).
    """
    machine = machine_info()
    data = {"machine": machine, "quick": quick, "json_name": json_path.name, "benchmarks": {}}
    if json_path.exists() and set(only) != set(render):
        data["benchmarks"] = json.loads(json_path.read_text()).get("benchmarks", {})
    print("Machine: " + ", ".join(f"{k}={v}" for k, v in machine.items()), flush=True)
    total = time.perf_counter()
    for name in sorted(only):
        print(f"\n=== {setups[name][0]}", flush=True)
        start = time.perf_counter()
        section = runners[name]()
        section["date"] = machine["date"]
        section["wall_time"] = time.perf_counter() - start
        data["benchmarks"][name] = section
        print("\n" + render[name](section), flush=True)
        print(f"({section['wall_time']:.0f} s)", flush=True)
        write_json(json_path, data)                 # after every section
        md_path.write_text(render_report(data))
    print(f"\nWrote {md_path} and {json_path} ({time.perf_counter() - total:.0f} s)")
    return data
