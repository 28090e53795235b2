"""The pattern step of the chunked fit's mu stages (``msvm._dask_passes.pattern_pass``).

Each mu stage after the first starts, as the in-memory smoothed-primal start does, with the
Newton step of the last stage's free pattern: the terms free at the iterate for the last
mu, recomputed on the workers from the iterate (the passes keep no state).  The pass's
pattern model is the in-memory one (``SmoothedPrimal.pattern_gradient``), its curvature
summary is the free terms' at the last mu, its true loss and gradient are those of the
plain gradient pass; the fit takes fewer Newton steps and passes and solves the same
problem (objective within tol of the in-memory fit, certified).
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import msvm
import msvm._dask as chunked
from _estimators import DASK_PATHS
from msvm._dask_passes import ChunkModel, gradient_pass, pattern_pass
from msvm._primal import SmoothedPrimal

da = pytest.importorskip("dask.array", reason="dask is an optional dependency (msvm[dask])")
pytest.importorskip("dask")

pytestmark = pytest.mark.usefixtures("dask_synchronous")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(400, 6, n_informative=5, n_redundant=0, n_classes=4,
                               random_state=3)
    return X, y


def _iterate(d, k, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(d, k)) * 0.4
    V -= V.mean(axis=1, keepdims=True)
    b = rng.normal(size=k) * 0.1
    return V, b - b.mean()


@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "ReinforcedMSVM", "AngleBasedMSVM"])
def test_pattern_pass_is_the_in_memory_pattern_model(data, name):
    """Summed over unequal chunks, the pattern pass gives the plain gradient pass's loss,
    X^T U and class sums at mu, the gradient pass's curvature summary at the last mu (the
    pattern's terms), and the in-memory pattern model's gradient (``pattern_gradient`` with
    the free terms tracked at the last mu)."""
    X, y = data
    k, mu, last = 4, 0.02, 0.2
    est = getattr(msvm, name)(kernel="linear")
    model = ChunkModel(clone(est), np.arange(k), np.ones(k), None, 1.0)
    V, b = _iterate(X.shape[1], k)
    cuts = [0, 130, 130, 290, 400]
    parts = [slice(a, c) for a, c in zip(cuts[:-1], cuts[1:])]
    got = [pattern_pass(model, X[s], y[s], None, V, b, mu, last, True) for s in parts]
    plain = [gradient_pass(model, X[s], y[s], None, V, b, mu, False) for s in parts]
    before = [gradient_pass(model, X[s], y[s], None, V, b, last, True) for s in parts]
    for i in range(3):
        assert np.allclose(sum(g[i] for g in got), sum(p[i] for p in plain), rtol=1e-12,
                           atol=1e-12)
    curv = [g[3] for g in got if g[3] is not None]
    want = [p[3] for p in before if p[3] is not None]
    assert np.allclose(sum(curv), sum(want), rtol=1e-12, atol=1e-12)
    # the in-memory pattern model at the same iterate
    problem = model.problem(y.astype(np.int32), np.ones(len(y)), X)
    primal = SmoothedPrimal(problem, np.ascontiguousarray(X))
    primal.mu = last
    F = primal.decision(V, b)
    primal.value_and_gradient(V, b, F, track_free=True)
    primal.mu = mu
    gV, gb = primal.pattern_gradient(V, b, F)
    XtUp, usump = sum(g[5] for g in got), sum(g[6] for g in got)
    assert np.allclose(XtUp - XtUp.mean(axis=1, keepdims=True) + V / problem.kappa, gV,
                       rtol=1e-10, atol=1e-10)
    if problem.equality:
        assert np.allclose(usump - usump.mean(), gb, rtol=1e-10, atol=1e-10)


def test_pattern_pass_of_an_empty_chunk_is_zero(data):
    """An empty chunk contributes zeros and no summary."""
    X, y = data
    model = ChunkModel(clone(msvm.WestonWatkinsMSVM()), np.arange(4), np.ones(4), None, 1.0)
    V, b = _iterate(X.shape[1], 4)
    out = pattern_pass(model, X[:0], y[:0], None, V, b, 0.01, 0.1, "sampled")
    assert out[0] == 0.0 and out[3] is None and out[4] == 0
    assert not np.any(out[1]) and not np.any(out[5]) and not np.any(out[6])


@pytest.mark.parametrize("route", ["dense", "cg"])
@pytest.mark.parametrize("name", ["WestonWatkinsMSVM", "AngleBasedMSVM"])
def test_pattern_steps_take_fewer_newton_steps_for_the_same_problem(data, route, name,
                                                                    monkeypatch):
    """With the pattern steps (the default) the chunked fit takes fewer Newton steps and
    passes than without them, certifies the same problem (objective within tol of the
    in-memory fit) on the dense and the conjugate-gradient route."""
    X, y = data
    if route == "cg":
        monkeypatch.setattr(chunked, "DENSE_MAX_UNKNOWNS", 0)
    params = dict(DASK_PATHS["nystroem"], tol=1e-3)
    ref = getattr(msvm, name)(**params).fit(X, y)
    Xd = da.from_array(X, chunks=(150, X.shape[1]))
    fits = {}
    for flag in (False, True):
        monkeypatch.setattr(chunked, "PATTERN_STEPS", flag)
        fits[flag] = est = getattr(msvm, name)(**params).fit(Xd, y)
        assert est.converged_ and est.stop_reason_ == "tol"
        assert abs(est.objective_ - ref.objective_) <= 2e-3 * abs(ref.objective_)
        assert np.mean(np.asarray(est.predict(X)) == ref.predict(X)) >= 0.97
    assert fits[True].n_iter_ < fits[False].n_iter_
    assert fits[True].n_passes_ < fits[False].n_passes_
