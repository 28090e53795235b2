"""Warnings and errors specific to msvm."""

__all__ = ["DegenerateFitWarning"]


class DegenerateFitWarning(UserWarning):
    """A fit whose result is degenerate, e.g. a constant classifier.

    Raised when a fitted classifier predicts one class for every training sample although the
    training labels hold several, and by :class:`msvm.TargetedLocalMSVM` when some grid points
    have no local data to fit.  The fit itself is valid (it minimizes the model's objective, or
    reaches a DC fixed point of it); the warning names the cause and the remedy, usually a
    larger ``C`` (tuned with :class:`msvm.model_selection.TuningSetSearch`).
    """
