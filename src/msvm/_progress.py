"""Feedback on long fits: one line per step of a sequence of solves, and an optional progress bar.

Every sequence of warm-started solves (the DC steps, the adaptive reweighting, the grid of
TargetedLocalMSVM, the lambda path of TuningSetSearch) reports through one :class:`StepLog`:

* ``verbose >= 1`` prints one line per step, all in one format (:func:`step_line`): the step,
  the objective, the KKT residual and the time elapsed since the sequence started; and,
  during a single long solve, a line every ``REPORT_INTERVAL`` seconds (:class:`fit_progress`:
  the elapsed time, the solver's epochs so far, its current violation and the dual value of
  its current point, an estimate of the objective), printed from the
  compiled solver's periodic signal check (``msvm._core._signals.progress_reports``), so
  that ``verbose=0`` costs nothing;
* ``verbose >= 2`` also lets the compiled solver print its internals (:func:`solver_verbose`);
* ``progress_bar=True`` shows a ``tqdm`` bar over the steps (an optional dependency:
  ``pip install tqdm``); the lines are then written through the bar, so they do not break it.
"""

import math
import time

from ._core._signals import progress_reports

TQDM_INSTALL = "pip install tqdm"
# Seconds between two progress lines of one long solve (verbose >= 1).
REPORT_INTERVAL = 10.0


def verbosity(verbose):
    """The level of a ``verbose`` parameter (``False`` is 0, ``True`` is 1)."""
    return int(verbose) if verbose else 0


def solver_verbose(verbose):
    """The compiled solver's ``verbose`` argument: its internals are printed at level 2."""
    return 1 if verbosity(verbose) >= 2 else 0


def n_epochs(n):
    """``'1 epoch'``, ``'12 epochs'``: the solver work of one step, for a line's detail."""
    return f"{n} epoch" if n == 1 else f"{n} epochs"


def step_line(owner, step, objective, resid, elapsed, detail=""):
    """One progress line: ``[msvm] Owner step: objective ..., KKT residual ..., ... s``."""
    detail = f", {detail}" if detail else ""
    return (f"[msvm] {owner} {step}: objective {objective:.10g}, KKT residual {resid:.3e}"
            f"{detail}, elapsed {elapsed:.3f} s")


def progress_bar(total, desc):
    """A ``tqdm`` bar of ``total`` steps, or an ImportError naming the extra that installs it."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        raise ImportError(f"progress_bar=True needs tqdm, which is not installed: "
                          f"{TQDM_INSTALL}") from None
    return tqdm(total=total, desc=desc, leave=False)


class StepLog:
    """Reports the steps of one sequence of solves (see the module docstring).

    Parameters
    ----------
    owner : str
        Who is working (the estimator's class name), first on every line.
    verbose : bool or int
        The estimator's ``verbose``; lines are printed at 1 and above.
    total : int, default=None
        Number of steps, for the progress bar.
    bar : bool, default=False
        Show a ``tqdm`` progress bar (ImportError without tqdm, raised here, before any work).

    Use it as a context manager so that the bar is closed however the work ends.
    """

    def __init__(self, owner, verbose, total=None, bar=False):
        self.owner = owner
        self.level = verbosity(verbose)
        self.bar = progress_bar(total, owner) if bar else None
        self.start = time.perf_counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def elapsed(self):
        """Seconds since the sequence started."""
        return time.perf_counter() - self.start

    def step(self, step, objective, resid, detail="", advance=False):
        """Report one step (a line at verbose >= 1); ``advance`` moves the bar one step."""
        if self.level >= 1:
            line = step_line(self.owner, step, objective, resid, self.elapsed(), detail)
            if self.bar is not None:
                self.bar.write(line)
            else:
                print(line, flush=True)
        if advance and self.bar is not None:
            self.bar.update(1)


def progress_line(owner, elapsed, epochs, violation, objective=float("nan")):
    """One line of a running solve: ``[msvm] Owner: solving, epochs ..., violation ...,
    dual objective ..., elapsed ...``.

    ``objective`` is the dual value of the solve's current point (NaN: not measured);
    it approaches the solve's objective and is within the duality gap of it at the end.
    """
    shown = f"{violation:.3e}" if violation >= 0 else "not measured yet"
    value = f"{objective:.8g}" if math.isfinite(objective) else "not measured yet"
    return (f"[msvm] {owner}: solving, {epochs:.1f} epochs so far, violation {shown}, "
            f"dual objective {value}, elapsed {elapsed:.1f} s")


class fit_progress:
    """Context manager: at ``verbose >= 1``, a progress line every ``interval`` seconds.

    Printed during the compiled solves of one fit (:func:`progress_line`), from the solver's
    periodic signal checks; the epochs are those of the running solve (a fit of several
    solves, e.g. the DC steps, restarts the count at each), the violation its latest KKT
    violation, the dual objective the dual value of its current point (for a DC model, of
    the running convex step, which majorizes the model's objective).  At ``verbose=0`` the
    block does nothing.

    Parameters
    ----------
    owner : str
        The estimator's class name, first on every line.
    verbose : bool or int
        The estimator's ``verbose``.
    interval : float, default=None
        Seconds between two lines; None is ``REPORT_INTERVAL``.
    """

    def __init__(self, owner, verbose, interval=None):
        self.owner = owner
        self.on = verbosity(verbose) >= 1
        self.interval = REPORT_INTERVAL if interval is None else float(interval)
        self.reports = None

    def _line(self, epochs, violation, objective):
        print(progress_line(self.owner, time.perf_counter() - self.start, epochs, violation,
                            objective), flush=True)

    def __enter__(self):
        self.start = time.perf_counter()
        if self.on:
            self.reports = progress_reports(self._line, self.interval)
            self.reports.__enter__()
        return self

    def __exit__(self, *exc):
        if self.reports is not None:
            self.reports.__exit__(*exc)
            self.reports = None
        return False
