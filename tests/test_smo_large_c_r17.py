"""Round 17 (issue 24 item 1): the cached-row boost of the SMO's working-set choice applies
only once the row cache has turned over (_smo.BOOST_TURNOVER), and the solver's traces
(_alm._round_trace, _smo._profile_scans, _smo._profile_visits) move no value."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from msvm import ReinforcedMSVM
from msvm._core import _alm, _smo
from msvm._plan import cache_rows


@pytest.fixture
def switches():
    """Round 17's switch and the boost restored after the test."""
    old = (_smo._boost_turnover(), _smo._cached_boost())
    yield
    _smo._boost_turnover(old[0])
    _smo._cached_boost(old[1])


def _blobs():
    # 2,400 samples, few support vectors (245 at C = 200): a cache of 10 MB holds 546
    # float64 rows, under half of them but more than the fit computes
    X, y = make_blobs(n_samples=2400, n_features=4, centers=4, cluster_std=1.2,
                      random_state=0)
    return X, y


def _fit(X, y, **kw):
    params = dict(C=200.0, gamma=0.2, cache_size=10, random_state=0)
    params.update(kw)
    return ReinforcedMSVM(**params).fit(X, y)


def test_blobs_case_is_the_rules_case():
    X, _ = _blobs()
    rows = cache_rows(10, "float64", X.shape[0])
    assert 2 * rows < X.shape[0]          # main's rule boosts here


def test_boost_left_out_where_the_cache_does_not_turn_over(switches):
    """With BOOST_TURNOVER 2 the fit is the one without any boost (the cache never computes
    twice the rows it holds), to the last bit; main's rule (0) boosts and moves the
    iterates."""
    X, y = _blobs()
    _smo._boost_turnover(2.0)
    new = _fit(X, y)
    _smo._boost_turnover(0.0)
    main = _fit(X, y)
    _smo._cached_boost(1.0)
    plain = _fit(X, y)
    assert "float64 cache" in str(new.solver_plan_)
    assert new.objective_ == plain.objective_
    assert new.n_iter_ == plain.n_iter_
    np.testing.assert_array_equal(new.dual_coef_, plain.dual_coef_)
    assert main.objective_ != plain.objective_
    assert new.converged_ and main.converged_


def test_boost_kept_where_the_cache_turns_over(switches):
    """Where the cache computes far more rows than it holds (40 rows here) the boost still
    applies: the fit is main's, and differs from the unboosted one."""
    X, y = _blobs()
    _smo._boost_turnover(0.0)
    main = _fit(X, y, cache_size=0.75)
    _smo._boost_turnover(2.0)
    small = _fit(X, y, cache_size=0.75)
    _smo._cached_boost(1.0)
    plain = _fit(X, y, cache_size=0.75)
    assert cache_rows(0.75, "float64", X.shape[0]) < 245
    assert small.converged_
    assert small.objective_ != plain.objective_
    assert abs(small.objective_ - main.objective_) <= 1e-3 * abs(main.objective_)


def test_objective_within_tol_of_the_optimum(switches):
    """The rule moves the iterates, not the stopping rule: the objective is within 1e-3
    (relative) of a fit to tol 1e-7."""
    X, y = _blobs()
    _smo._boost_turnover(2.0)
    fit = _fit(X, y)
    ref = _fit(X, y, tol=1e-7, cache_size=200)
    assert fit.converged_ and ref.converged_
    assert abs(fit.objective_ - ref.objective_) <= 1e-3 * abs(ref.objective_)


def test_traces_move_no_value():
    """A fit with the round trace and the block loop's profile on is the fit without them,
    to the last bit; the trace has a row per augmented-Lagrangian round, the visits add up
    to the profile's block samples and the scans end at the fit's last violation."""
    X, y = _blobs()
    plain = _fit(X, y)
    _alm._round_trace(True)
    _smo._profile(True)
    _smo._profile_visits()
    _smo._profile_scans()
    try:
        traced = _fit(X, y)
    finally:
        rounds = _alm._round_trace(False)
        prof = _smo._profile(False)
        scans = _smo._profile_scans()
        visits = _smo._profile_visits()
    assert traced.objective_ == plain.objective_
    np.testing.assert_array_equal(traced.dual_coef_, plain.dual_coef_)
    assert len(rounds) >= 1
    assert {"solve", "violation", "equality", "rho", "gap", "eps_in", "kkt_tol",
            "rows_computed"} <= set(rounds[0])
    last = rounds[-1]
    assert last["violation"] <= traced.tol and last["gap"] <= traced.tol
    assert sum(visits) == prof["block samples"]
    assert prof["block samples kept"] <= prof["block samples"]
    assert 1 <= len(scans) <= prof["scans"]          # one per block-loop scan
    assert scans[-1][1] <= traced.tol
    assert _alm._round_trace() == [] and _smo._profile_scans() == []
