"""Checks of a fit's inputs (labels, sample and class weights) and of its outputs.

Every check raises a ValueError that names the problem and the remedy.  Input checks run
before any work of a fit; output checks refuse decision values or objectives that overflow
double precision, and :func:`degenerate_fit_message` explains a fit that predicts one class.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets

from ._kernels import is_constant


def check_class_labels(y, name="y"):
    """``check_classification_targets``, with labels of mixed types refused by name.

    scikit-learn sorts the labels to classify them, which fails with a bare TypeError
    ("'<' not supported between instances of 'int' and 'str'") when strings and numbers are
    mixed, or calls some such mixtures 'unknown'; both become this ValueError.
    """
    y = np.asarray(y)
    if y.dtype == object:
        kinds = {type(v) for v in y.ravel()}
        if any(issubclass(t, str) for t in kinds) and not all(issubclass(t, str)
                                                              for t in kinds):
            names = sorted(t.__name__ for t in kinds)
            raise ValueError(f"{name} mixes class labels of types {names}, which cannot be "
                             f"ordered into classes_; use labels of one type (e.g. all "
                             f"strings)")
    try:
        check_classification_targets(y)
    except TypeError as exc:
        names = sorted({type(v).__name__ for v in y.ravel()})
        raise ValueError(f"{name} holds class labels of types {names} that cannot be "
                         f"compared ({exc}); use labels of one type") from None


def check_fit_sample_weight(sample_weight, n_samples):
    """Validated sample weights (float64, shape (n_samples,); ones for None).

    The one contract of every ``fit``: a 1-D array of n_samples finite, nonnegative weights,
    not all zero.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    sw = np.asarray(sample_weight)
    if sw.ndim != 1 or sw.shape[0] != n_samples:
        raise ValueError(f"sample_weight must be a 1-D array of length n_samples = "
                         f"{n_samples}; got shape {sw.shape}")
    try:
        sw = sw.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"sample_weight must be numeric; got dtype {sw.dtype}") from None
    if not np.all(np.isfinite(sw)):
        raise ValueError("sample_weight contains NaN or infinity")
    if np.any(sw < 0):
        raise ValueError("sample_weight must be nonnegative")
    if not np.any(sw > 0):
        raise ValueError("sample_weight is zero for every sample")
    return sw


def class_weight_factors(class_weight, classes, y):
    """Per-sample factors ``class_weight[y_i]`` (float64, shape (n_samples,)).

    ``class_weight`` is None (all ones), ``'balanced'`` (``n_samples / (n_classes *
    bincount(y))``, scikit-learn's ``compute_class_weight``) or a dict {label: weight} whose
    keys are labels of ``classes`` (a class it omits keeps weight 1), with finite,
    nonnegative weights.  ``y`` holds the encoded labels (indices into ``classes``).
    """
    y = np.asarray(y)
    if class_weight is None:
        return np.ones(len(y))
    counts = np.bincount(y, minlength=len(classes))
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict; got "
                             f"{class_weight!r}")
        return (len(y) / (len(classes) * counts.astype(np.float64)))[y]
    if not isinstance(class_weight, dict):
        raise ValueError(f"class_weight must be None, 'balanced' or a dict; got "
                         f"{type(class_weight).__name__}")

    def plain(label):           # NumPy scalars as Python values, so that 3 finds np.int64(3)
        return label.item() if isinstance(label, np.generic) else label

    slot = {plain(label): j for j, label in enumerate(classes)}
    unknown = [key for key in class_weight if plain(key) not in slot]
    if unknown:
        raise ValueError(f"class_weight has labels that are not classes of y: "
                         f"{', '.join(label_repr(key) for key in unknown)} (the classes are "
                         f"{', '.join(label_repr(c) for c in classes)})")
    factors = np.ones(len(classes))
    for key, weight in class_weight.items():
        try:
            weight = float(weight)
        except (TypeError, ValueError):
            raise ValueError(f"class_weight[{label_repr(key)}] must be a number; got "
                             f"{weight!r}") from None
        if not (np.isfinite(weight) and weight >= 0):
            raise ValueError(f"class_weight[{label_repr(key)}] must be finite and "
                             f"nonnegative; got {weight!r}")
        factors[slot[plain(key)]] = weight
    return factors[y]


def check_fit_weights(estimator, sample_weight, y):
    """The weights of a fit: validated ``sample_weight`` times the estimator's class_weight.

    ``y`` holds the encoded labels (indices into ``estimator.classes_``).  The product obeys
    the sample-weight contract (not zero for every sample).
    """
    sw = check_fit_sample_weight(sample_weight, len(y))
    class_weight = getattr(estimator, "class_weight", None)
    if class_weight is None:
        return sw
    sw = sw * class_weight_factors(class_weight, estimator.classes_, y)
    if not np.any(sw > 0):
        raise ValueError("sample_weight times class_weight is zero for every sample")
    return sw


def weights_name(estimator):
    """How error messages name a fit's weights: sample_weight, times class_weight if given."""
    return ("sample_weight" if getattr(estimator, "class_weight", None) is None
            else "sample_weight times class_weight")


def check_weighted_classes(sw, y_enc, classes, what="sample_weight"):
    """Refuse weights ``sw`` positive on samples of one class only (encoded labels y_enc)."""
    weighted = np.unique(y_enc[sw > 0])
    if len(weighted) < 2:
        raise ValueError(f"{what} is positive for samples of one class only "
                         f"({label_repr(classes[weighted[0]])}): a classifier needs weighted "
                         f"samples of at least 2 classes")
    return sw


def label_repr(label):
    """repr of a class label, NumPy scalars as the Python value (``0``, not ``np.int64(0)``)."""
    return repr(label.item() if isinstance(label, np.generic) else label)


def check_finite_decision(values):
    """Refuse non-finite decision values (inputs whose kernel overflows), naming the remedy."""
    if not np.all(np.isfinite(values)):
        raise ValueError("decision values are not finite: the kernel overflows double "
                         "precision on these inputs. Rescale X the way the training data "
                         "were scaled (e.g. with sklearn.preprocessing.StandardScaler).")
    return values


def check_finite_objective(estimator, value, what):
    """Refuse a fit whose objective (or penalty) overflows double precision.

    With a huge C (or huge sample weights) the dual variables, hence the fitted functions and
    their norms, can exceed the range of double precision although every bound is finite;
    reporting such a fit (NaN once turned into a penalty of 0) would be silently wrong.
    """
    if not np.isfinite(value):
        raise ValueError(
            f"{type(estimator).__name__}: {what} of the fit is {value} (it overflows double "
            f"precision): C times the sample weights is too large for this kernel and X. Use "
            f"a smaller C or smaller sample weights, or rescale X.")
    return value


def degenerate_fit_message(estimator, y_pred, y, X=None):
    """Text of a :class:`~msvm.exceptions.DegenerateFitWarning`, or None.

    A fit is degenerate when its predictions ``y_pred`` of the training samples are one class
    although their labels ``y`` hold several.  The cause and the remedy come from the
    training inputs ``X`` when they explain it (see :func:`input_degeneracy`), else from the
    estimator's ``_degenerate_cause()`` when it has one.
    """
    predicted = np.unique(y_pred)
    if len(predicted) != 1 or len(np.unique(y)) < 2:
        return None
    explain = getattr(estimator, "_degenerate_cause", None)
    found = input_degeneracy(estimator, X, y) if X is not None else None
    cause, remedy = found or (explain() if explain is not None else (
        "the fit is a constant classifier", "use a larger C"))
    return (f"{type(estimator).__name__} predicts class {label_repr(predicted[0])} for every "
            f"training sample although y holds {len(np.unique(y))} classes: {cause}. Remedy: "
            f"{remedy}.")


# input_degeneracy looks for identical inputs with different labels up to this many entries
# of X (np.unique over the rows: it runs only once a fit has turned out degenerate)
_DUPLICATE_SEARCH_ENTRIES = 5 * 10 ** 7


def input_degeneracy(estimator, X, y):
    """(cause, remedy) of a constant fit that no C can change, or None.

    In order: the constant kernel 'poly' with ``degree=0``; a constant precomputed Gram
    matrix; every training sample the same (an all-zero sparse X included); most samples
    sharing their inputs with samples of other classes (no function separates those).
    ``X`` holds the training inputs (the Gram matrix for 'precomputed'), ``y`` the labels.
    """
    kernel = estimator.kernel
    if kernel == "poly" and estimator.degree == 0:
        return ("kernel='poly' with degree=0 is the constant kernel (gamma <x, x'> + "
                "coef0)^0 = 1, so every fitted function is constant whatever C",
                "use degree >= 1")
    if kernel == "precomputed":
        if X.size and np.all(X == X.flat[0]):
            return (f"the precomputed Gram matrix is constant (every entry "
                    f"{X.flat[0]:.3g}), so every fitted function is constant whatever C",
                    "check the kernel that computed it")
        return None
    if is_constant(X):
        what = ("X is all zero (a sparse X with no stored entry)"
                if sp.issparse(X) and X.nnz == 0 else "every training sample has the same X")
        return (f"{what}, so the kernel cannot tell the samples apart and every fitted "
                f"function is constant whatever C", "check X: its features carry no "
                "information about y")
    if sp.issparse(X) or X.size > _DUPLICATE_SEARCH_ENTRIES:
        return None
    _, group = np.unique(X, axis=0, return_inverse=True)
    group = group.ravel()
    pairs = np.unique(np.stack([group, np.asarray(np.unique(y, return_inverse=True)[1])
                                .ravel()]), axis=1)
    mixed = np.flatnonzero(np.bincount(pairs[0]) > 1)
    shared = int(np.isin(group, mixed).sum())
    if 2 * shared < len(group):
        return None
    return (f"{shared} of the {len(group)} training samples share their X with samples of "
            f"other classes (identical inputs, different labels), which no function can "
            f"separate", "check X and y for duplicated inputs with conflicting labels (e.g. "
            "features lost in preprocessing)")
