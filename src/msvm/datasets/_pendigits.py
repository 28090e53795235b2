"""The bundled UCI pen-based handwritten digits data set."""

import gzip
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

_DATA_FILE = "pendigits.csv.gz"

# The 16 attributes are the (x, y) coordinates of 8 points resampled along the pen trajectory.
FEATURE_NAMES = [f"{axis}{i}" for i in range(1, 9) for axis in ("x", "y")]

DESCR = """\
.. _pendigits_dataset:

Pen-Based Recognition of Handwritten Digits
-------------------------------------------

**Data Set Characteristics:**

:Number of Instances: 10992 (the UCI training part, 7494 rows, and test part, 3498 rows,
    combined)
:Number of Attributes: 16 integer attributes in 0..100 and the digit class
:Attribute Information: x1, y1, ..., x8, y8: the coordinates of 8 points spaced regularly
    in arc length along the pen trajectory, each writing rescaled to 0..100
:Classes: 10 (digits 0-9), 1055 to 1144 samples each
:Creators: E. Alpaydin and Fevzi Alimoglu, Bogazici University, Istanbul
:License: Creative Commons Attribution 4.0 International (CC BY 4.0)

250 samples from each of 44 writers on a pressure-sensitive tablet, resampled to 8 points per
digit. This is the data set of Liu, Wu and He (2011, section 5.2): its classes 3, 6 and 9
together have the 3166 observations reported there.

.. rubric:: References

- Alimoglu, F. and Alpaydin, E. (1996). Methods of combining multiple classifiers based on
  different representations for pen-based handwritten digit recognition. Proceedings of the
  Fifth Turkish Artificial Intelligence and Artificial Neural Networks Symposium (TAINN 96).
- Alpaydin, E. and Alimoglu, F. Pen-Based Recognition of Handwritten Digits [Dataset].
  UCI Machine Learning Repository.
  https://archive.ics.uci.edu/dataset/81/pen+based+recognition+of+handwritten+digits
"""


def load_pendigits(return_X_y=False, as_frame=False):
    """Load the UCI pen-based handwritten digits data set (10 classes, bundled).

    The UCI training and test parts are combined: 10992 samples of 16 integer features in
    0..100 (stored as float64) and the digit label 0..9. The file ships inside the package,
    so this works offline and from an installed wheel.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True, ``data`` is a pandas DataFrame and ``target`` a pandas Series, and the
        Bunch also holds ``frame`` (both together). Requires pandas.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with attributes

        data : ndarray of shape (10992, 16), dtype float64, or DataFrame
            The features x1, y1, ..., x8, y8.
        target : ndarray of shape (10992,), dtype int64, or Series
            The digit, 0..9.
        frame : DataFrame of shape (10992, 17) or None
            Data and target together, only with ``as_frame=True``.
        feature_names : list of str
            ``['x1', 'y1', ..., 'x8', 'y8']``.
        target_names : ndarray of shape (10,)
            The digits 0..9.
        DESCR : str
            Description of the data set, its license (CC BY 4.0) and how to cite it.

    (data, target) : tuple if ``return_X_y`` is True

    Notes
    -----
    License: CC BY 4.0. Cite Alimoglu and Alpaydin (1996) and the UCI Machine Learning
    Repository data set (see ``DESCR``).

    Examples
    --------
    >>> from msvm.datasets import load_pendigits
    >>> X, y = load_pendigits(return_X_y=True)
    >>> X.shape, y.shape
    ((10992, 16), (10992,))
    """
    source = resources.files(__package__).joinpath("data", _DATA_FILE)
    with source.open("rb") as raw, gzip.open(raw, "rt") as text:
        table = np.loadtxt(text, delimiter=",", dtype=np.int64)
    data = table[:, :-1].astype(np.float64)
    target = table[:, -1]

    frame = None
    if as_frame:
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("load_pendigits(as_frame=True) requires pandas") from exc
        frame = pd.DataFrame(data, columns=FEATURE_NAMES)
        frame["digit"] = target
        data, target = frame[FEATURE_NAMES], frame["digit"]

    if return_X_y:
        return data, target
    return Bunch(data=data, target=target, frame=frame, feature_names=list(FEATURE_NAMES),
                 target_names=np.arange(10), DESCR=DESCR)
