"""The state one fit hands to the next: warm-start duals, a kept row source, a path's reuse.

An estimator keeps what a later fit may start from in objects of the types below, written and
read only through its own methods (:class:`WarmStartMixin`: ``_warm_start_state``,
``_start_from``, ``_join_path``, ``_leave_path``), never by other modules setting its
attributes:

- :class:`DualStart`: the dual solution of a base model's fit (one convex dual), the start of
  a ``warm_start`` refit and of the next weighted fit of a probability chain;
- :class:`GridStart`: ``TargetedLocalMSVM``'s, one dual per grid point;
- :class:`KeptRows`: the row source (scores and kernel-row cache) kept between the fits of a
  lambda path, with the key that says which fits may reuse it;
- :class:`PathReuse`: what a lambda path (``msvm.model_selection``) asks of the estimator it
  walks: keep the row source between its fits, and score on the tuning set with kernel
  columns computed once.

The arrays of a state are never written once the state is made (the solver copies a start
before moving it; see ``DualSequence.solve``), so a state may be shared between estimators.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class DualStart:
    """The dual solution of one fit of a base model: where a refit at another C starts.

    It belongs to the training problems with its number of samples and shape of dual
    variables: a refit on such a problem starts from it (rescaled from ``C`` to the new C by
    ``msvm._sequence.path_start``); any other starts from zero.  A start, not a claim on the
    data: the solver makes the refit exact whatever the inputs are.

    Attributes
    ----------
    alpha : ndarray of shape (n_vars,)
        The dual variables (shared, never written).
    mu : ndarray of shape (k,)
        The multipliers of the equalities (the intercepts' estimate).
    C : float
        The C of the fit.
    n_samples : int
        Number of training samples of the fit.
    """

    alpha: np.ndarray
    mu: np.ndarray
    C: float
    n_samples: int

    def fits(self, problem):
        """Whether a dual ``problem`` (a ``DualProblem``) can start from this state."""
        return (self.alpha.shape == (problem.n_vars,) and self.mu.shape == (problem.k,)
                and self.n_samples == problem.n_samples)


@dataclass(frozen=True, eq=False)
class GridStart:
    """The duals of a ``TargetedLocalMSVM`` fit, one per grid point: a refit's starts.

    A refit with the same number of grid points starts grid point g from ``alphas[g]``
    rescaled from ``C`` to its C (every box is proportional to C), when the shapes agree;
    otherwise from its neighbour's solution, as a cold fit does.

    Attributes
    ----------
    alphas : ndarray of shape (n_grid, n_vars)
        The dual variables at every grid point (zero where a grid point held no sample).
    C : float
        The C of the fit.
    solved : object, default=None
        What a refit needs to take a grid point's fit as it is (``msvm.targeted``'s
        ``_SolvedGrid``: the fits, the weights they were solved at, the data and parameters
        they are of), or None.
    """

    alphas: np.ndarray
    C: float
    solved: object = None

    def at(self, g, n_grid, problem):
        """The previous dual of grid point g of ``n_grid``, or None when it does not fit."""
        if len(self.alphas) != n_grid or self.alphas[g].shape != (problem.n_vars,):
            return None
        return self.alphas[g]


@dataclass(frozen=True, eq=False)
class KeptRows:
    """A row source kept for the next fit of a lambda path, with the dual its scores hold.

    Attributes
    ----------
    key : tuple
        What a fit must match to reuse it (``BaseMSVM._row_source_key``: kernel, its
        parameters, cache, a hash of the training inputs).
    source : object
        The row source (a compiled ``RowSource``).
    problem : DualProblem
        The dual problem whose variables ``alpha`` the scores of ``source`` are of.
    alpha : ndarray
        Those variables.
    """

    key: tuple
    source: object
    problem: object
    alpha: np.ndarray


@dataclass(frozen=True)
class PathReuse:
    """What a lambda path asks of the estimator it fits again and again.

    Attributes
    ----------
    keep_rows : bool
        Keep the row source between warm-started fits (``KeptRows``).
    columns : KernelColumns or None
        The tuning set's kernel columns, computed once per training sample and reused by
        ``decision_values`` (None: computed afresh at every call).
    """

    keep_rows: bool = False
    columns: object = None


class WarmStartMixin:
    """The private protocol by which an estimator hands its state to the next fit.

    A base of every msvm estimator (``BaseMSVM``).  Other modules read and write the state
    only through these methods:

    - ``_warm_start_state()`` / ``_start_from(state)``: the state a ``warm_start`` refit
      starts from, of the estimator's ``_warm_state_type`` (``DualStart``; ``GridStart``
      for TargetedLocalMSVM); a fit stores its own with ``_start_from``, and a probability
      chain hands each fit's state to the next estimator;
    - ``_join_path(keep_rows, columns)`` / ``_leave_path()``: a lambda path's reuse
      (:class:`PathReuse`), read by the fit through ``_path()``;
    - ``_solved_dual()``: the dual a fit on such a path solved last and its solution (a
      probability chain asks whether its next levels can change it).
    """

    # the type of the warm start of a refit (``_warm_start_state``)
    _warm_state_type = DualStart
    # private fit state removed with the fitted attributes when a fit fails
    # (``reset_fit_state``): the warm start of a refit and the kept row source (KeptRows)
    _fit_state = ("_warm_state", "_row_state")
    # private state never copied nor pickled (``BaseMSVM.__getstate__``) and dropped by
    # ``_leave_path``: the kept row source and what a lambda path asks of the estimator
    _transient_state = ("_row_state", "_path_reuse")

    def _warm_start_state(self):
        """The state a later fit may start from (a ``_warm_state_type``), or None (unfitted).

        Shared, not copied: a state is never written once made (``msvm._warm_start``).
        """
        return getattr(self, "_warm_state", None)

    def _start_from(self, state):
        """Make ``state`` (another fit's ``_warm_start_state()``, or None) this estimator's
        warm start: its next fit starts from it when ``warm_start`` is set (and the state
        fits the problem), as if it had made that fit itself.  Returns self."""
        if state is not None and not isinstance(state, self._warm_state_type):
            raise TypeError(f"{type(self).__name__} starts from a "
                            f"{self._warm_state_type.__name__}; got {type(state).__name__}")
        self._warm_state = state
        return self

    def _join_path(self, keep_rows=False, columns=None):
        """Fit as one estimator of a lambda path (``msvm.model_selection``) until
        ``_leave_path``.

        ``keep_rows``: a warm-started refit reuses the previous fit's row source (see
        ``_row_source_key``).  ``columns``: a ``KernelColumns`` through which
        ``decision_values`` scores the tuning set.  Neither is copied nor pickled.
        """
        self._path_reuse = PathReuse(bool(keep_rows), columns)
        return self

    def _leave_path(self):
        """Drop what a lambda path kept on the estimator (the row source, the columns)."""
        for name in self._transient_state:
            self.__dict__.pop(name, None)
        return self

    def _solved_dual(self):
        """(problem, alpha): the dual the last fit solved last and its solution, as the
        row source kept on a path (``_join_path(keep_rows=True)``) holds them; None when
        no row source is kept.  Read, never written (see ``KeptRows``)."""
        kept = getattr(self, "_row_state", None)
        return None if kept is None else (kept.problem, kept.alpha)

    def _kept_rows(self):
        """The row source a fit on a path kept (``KeptRows``), or None; to hand to another
        estimator's next fit (``_take_rows``)."""
        return getattr(self, "_row_state", None)

    def _take_rows(self, kept):
        """Make another estimator's ``_kept_rows()`` (or None) this one's: its next fit on
        a path with ``keep_rows`` reuses that row source (its kernel-row cache; its scores,
        moved to the start of the fit) when the key matches (``_row_source_key``), as if it
        had made that estimator's last fit itself.  The source is then this estimator's
        alone: the other must not fit on it again.  Returns self."""
        if kept is not None:
            self._row_state = kept
        return self

    def _path(self):
        """The ``PathReuse`` of the lambda path the estimator is on (default: none)."""
        return getattr(self, "_path_reuse", None) or PathReuse()
