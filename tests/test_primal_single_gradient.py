"""The gradient's X^T U in single precision on float32 features (round 16).

A weighted refit's smoothed-primal start on an approximate kernel's float32 features maps
the gradient's slot sums back by float32 products over row blocks, each block's sum added in
double (``msvm._primal.SINGLE_GRADIENT``, with ``SINGLE_STEPS``).  Checked here: that the
product is X^T U to single-precision rounding, that the chains' starts use it, and that
every level of a chain is still started from the primal and certified, its decision values
within 1e-4 of the double-precision gradient's (measured 3e-5: the same Newton steps a
level, each stopping at a slightly other point within the gradient tolerance).
"""

import numpy as np
from _approx_chain import full_data_chain

from msvm import _primal, _probability
from msvm._products import transposed_times


def test_mapped_back_is_x_transpose_u_to_single_rounding():
    """``mapped_back`` on a float32 X: X^T U within 1e-5 of the double product's size (the
    float64 conversion's product with the switch off, bit for bit)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30000, 40)).astype(np.float32)
    U = rng.standard_normal((30000, 5))
    primal = _primal.SmoothedPrimal.__new__(_primal.SmoothedPrimal)
    exact = transposed_times(X, U)
    primal.single_gradient = False
    np.testing.assert_array_equal(primal.mapped_back(X, U), exact)
    primal.single_gradient = True
    single = primal.mapped_back(X, U)
    assert single.dtype == np.float64
    assert not np.array_equal(single, exact)
    scale = np.abs(X).astype(np.float64).T @ np.abs(U)
    assert np.max(np.abs(single - exact) / scale) < 1e-5
    # a float64 X keeps the double product
    np.testing.assert_array_equal(primal.mapped_back(X.astype(np.float64), U),
                                  transposed_times(X.astype(np.float64), U))


def _chains_both_ways(monkeypatch, switch, seen, check, rtol):
    """One class's chain of ``full_data_chain`` with ``msvm._primal.<switch>`` off and on;
    ``check(on)`` is asserted after each (``seen`` cleared before it); then every level of
    the chain with the switch on is started from the primal and certified, its decision
    values within ``rtol`` of the chain's with it off (relative to their largest)."""
    X, y, X_test, est, template, levels, features = full_data_chain()
    chains = {}
    for on in (False, True):
        monkeypatch.setattr(_primal, switch, on)
        seen.clear()
        chains[on], _ = _probability._weighted_chain(
            template, est, X, y, np.ones(len(y)), levels, est.classes_[0], features)
        assert check(on)
    for fit, fit0 in zip(chains[True], chains[False]):
        assert any(step.primal_start for step in fit.solver_plan_.steps)
        assert fit.converged_ and fit.kkt_residual_ <= fit.tol
        G, G0 = fit.decision_values(X_test), fit0.decision_values(X_test)
        np.testing.assert_allclose(G, G0, atol=rtol * np.abs(G0).max())


def test_single_precision_gradient_leaves_the_chains_certified(monkeypatch):
    """On a chain of the full data (3,000 samples, the levels below t = 0.1 balanced) the
    balanced starts map the gradient back in single precision, every level is started from
    the smoothed primal and certified, and the decision values agree with the
    double-precision gradient's within 1e-4 of their size (measured 3e-5)."""
    used = []
    real = _primal.SmoothedPrimal.mapped_back

    def counted(primal, Xc, U):
        used.append(primal.single_gradient)
        return real(primal, Xc, U)

    monkeypatch.setattr(_primal.SmoothedPrimal, "mapped_back", counted)
    _chains_both_ways(monkeypatch, "SINGLE_GRADIENT", used, lambda on: any(used) == on, 1e-4)


def test_lightly_weighted_levels_start_as_the_balanced(monkeypatch):
    """A chain's levels whose boxes differ by at most ``BALANCE_MIN_RATIO`` (t = 0.42 and
    0.18 here) start as the balanced ones with ``msvm._primal.WEIGHTED_AS_BALANCED``: no
    steepest-descent step from the warm start, the single-precision steps; every level
    certified, the decision values within 1e-3 of the double-precision start's with its
    descent step (measured 3e-4 at n = 200,000)."""
    seen = []
    step, newton = _primal.SmoothedPrimal.gradient_step, _primal.SmoothedPrimal.newton

    def descent(primal, V, b):
        seen.append("descent")
        return step(primal, V, b)

    def counted(primal, *args, **kwargs):
        seen.append(primal.single_steps)
        return newton(primal, *args, **kwargs)

    monkeypatch.setattr(_primal.SmoothedPrimal, "gradient_step", descent)
    monkeypatch.setattr(_primal.SmoothedPrimal, "newton", counted)
    _chains_both_ways(monkeypatch, "WEIGHTED_AS_BALANCED", seen,
                      lambda on: ("descent" in seen) != on and all(seen) == on, 1e-3)
