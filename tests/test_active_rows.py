"""The active-first column layout of the SMO path's row cache (_smo.pyx, Design note 5).

Properties: a fit with the layout engaged (its relayouts and syncs counted in the verbose
report) reaches the same point as without it up to rounding (same steps and epochs,
objective and decision values to 1e-9 relative); the suffix's deferred updates leave every
sample's score exact at the end (the certified residual and gap hold); two threads give the
same bits as one.
"""

import contextlib
import io
import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm._core import _smo

LAYOUT = re.compile(r"\[msvm\] smo: steps (\d+), blocks (\d+).*layout: (\d+) relayouts "
                    r"\((\d+) for unsettled samples\), (\d+) syncs")


@pytest.fixture
def data():
    X, y = make_classification(n_samples=2400, n_features=8, n_informative=6, n_classes=4,
                               random_state=1)
    return (X - X.mean(0)) / X.std(0), y


def _fit(make, X, y, layout, slack=1.0, **kw):
    _smo._set_layout(layout, slack)
    try:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            est = make(random_state=0, verbose=2, **kw).fit(X, y)
    finally:
        _smo._set_layout(True)
    return est, buf.getvalue()


@pytest.mark.parametrize("make", [lambda **kw: ReinforcedMSVM(C=10.0, **kw),
                                  lambda **kw: WestonWatkinsMSVM(C=10.0, **kw)])
def test_layout_reaches_the_same_point_up_to_rounding(data, make):
    """With relayouts forced often (slack 0.01), the fit takes main's steps and reaches its
    objective and decision values to rounding; the residual stays certified."""
    X, y = data
    off, _ = _fit(make, X, y, False)
    on, text = _fit(make, X, y, True, slack=0.01)
    m = LAYOUT.search(text)
    assert m is not None and int(m.group(3)) > 0 and int(m.group(5)) > 0, text[-400:]
    assert on.n_iter_ == off.n_iter_
    assert on.objective_ == pytest.approx(off.objective_, rel=1e-9)
    np.testing.assert_allclose(on.decision_function(X), off.decision_function(X),
                               rtol=1e-7, atol=1e-7)
    assert on.converged_ and on.kkt_residual_ <= 1e-3


def test_layout_fits_identically_with_two_threads(data):
    """n_threads = 2 gives the bits of n_threads = 1 with the layout engaged."""
    X, y = data
    one, _ = _fit(lambda **kw: ReinforcedMSVM(C=10.0, **kw), X, y, True, slack=0.01,
                  n_threads=1)
    two, _ = _fit(lambda **kw: ReinforcedMSVM(C=10.0, **kw), X, y, True, slack=0.01,
                  n_threads=2)
    assert one.objective_ == two.objective_
    np.testing.assert_array_equal(one.decision_function(X), two.decision_function(X))
