"""Methods that exist only with ``probability=True``, and an AttributeError naming the remedy.

scikit-learn's ``available_if`` turns the check's error into its own bare "This 'X' has no
attribute 'predict_proba'"; this descriptor raises the check's message instead.  It is still
an AttributeError, so ``hasattr(est, 'predict_proba')`` stays False and scikit-learn's tools
(``check_estimator``, ``VotingClassifier(voting='soft')``, scorers) see the method as absent.
"""

import functools
import types


class _ProbabilityMethod:
    """Descriptor of a method available only when the estimator's ``probability`` is True."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __get__(self, obj, owner=None):
        if obj is None:
            return self.fn              # the class attribute: the function (docs, inspection)
        if not obj.probability:
            name = type(obj).__name__
            raise AttributeError(
                f"{name}.{self.fn.__name__} is not available: the estimator has "
                f"probability=False (the default). Set probability=True and fit again, e.g. "
                f"{name}(probability=True).fit(X, y), to fit the class-probability estimate.")
        return types.MethodType(self.fn, obj)


def probability_method(fn):
    """Decorator: ``fn`` is a method only when ``probability=True``; otherwise accessing it
    raises an AttributeError that says so and names the remedy."""
    return _ProbabilityMethod(fn)
