"""Feedback on long fits: one line per step of a sequence of solves, and an optional progress bar.

Every sequence of warm-started solves (the DC steps, the adaptive reweighting, the grid of
TargetedLocalMSVM, the lambda path of TuningSetSearch) reports through one :class:`StepLog`:

* ``verbose >= 1`` prints one line per step, all in one format (:func:`step_line`): the step,
  the objective, the KKT residual and the time elapsed since the sequence started;
* ``verbose >= 2`` also lets the compiled solver print its internals (:func:`solver_verbose`);
* ``progress_bar=True`` shows a ``tqdm`` bar over the steps (an optional dependency: the
  ``progress`` extra); the lines are then written through the bar, so they do not break it.
"""

import time

PROGRESS_EXTRA = 'pip install "msvm[progress]"'


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
                          f"{PROGRESS_EXTRA} (or pip install tqdm)") from None
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
