"""Random problems across C = 1e-4 .. 1e8 for the large-C convergence properties
(test_objective_accuracy.py for the per-class, Weston-Watkins and angle layouts,
test_grouped_large_c.py for the grouped margin dual).

``large_C_cases`` draws (model, k, n, d, kernel, C, seed); ``case_data`` builds the case's
separated Gaussian classes and sample weights; ``fit_converged`` fits with every
ConvergenceWarning an error; ``assert_within_tol`` compares ``objective_`` with the reference
optimum; ``dual_objective`` is a dual problem's objective through its slot sums.
"""

import warnings

import numpy as np
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

from msvm._finish import _Layout
from msvm.exceptions import DegenerateFitWarning

KERNELS = ["linear", "rbf", "poly", "precomputed"]


@st.composite
def large_C_cases(draw, models, max_n, max_d):
    """(model, k, n, d, kernel, C, seed): k in 2..4, n in max(5, k)..max_n, d in 1..max_d,
    log10 C uniform in [-4, 8]."""
    model = draw(st.sampled_from(models))
    k = draw(st.integers(2, 4))
    n = draw(st.integers(max(5, k), max_n))
    d = draw(st.integers(1, max_d))
    kernel = draw(st.sampled_from(KERNELS))
    log_C = draw(st.floats(-4.0, 8.0))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    return model, k, n, d, kernel, 10.0 ** log_C, seed


def case_data(case):
    """(X, y, w, K_lin, rng) of a case: every class present, class j shifted by 1.5 along
    axis j, weights in [0.2, 2]; rng goes on from the draws made (further data of a test)."""
    _, k, n, d, _, _, seed = case
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
    X = rng.normal(size=(n, d)) + 1.5 * np.eye(k, d)[y]
    w = rng.uniform(0.2, 2.0, n)
    return X, y, w, X @ X.T, rng


def fit_converged(est, case, X, y, w, K_lin):
    """Fit est on the case (its linear Gram for kernel='precomputed') and assert that no
    ConvergenceWarning was raised and converged_ is True."""
    model, k, n, _, kernel, C, _ = case
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", DegenerateFitWarning)
        warnings.simplefilter("always", ConvergenceWarning)
        est.fit(K_lin if kernel == "precomputed" else X, y, sample_weight=w)
    messages = [str(c.message) for c in caught if issubclass(c.category, ConvergenceWarning)]
    assert not messages, f"{model} C={C:.3g} {kernel} n={n} k={k}: {messages}"
    assert est.converged_


def assert_within_tol(est, optimum, tol, case):
    """objective_ at most optimum + tol |optimum| (1e-12 at least)."""
    model, _, _, _, kernel, C, _ = case
    scale = max(abs(optimum), 1e-12)
    assert est.objective_ <= optimum + tol * scale, (
        f"{model} C={C:.3g} {kernel}: objective_ {est.objective_:.10g} vs optimum "
        f"{optimum:.10g} (relative excess {(est.objective_ - optimum) / scale:.2e})")


def dual_objective(problem, K):
    """The dual objective 1/2 alpha^T Q alpha - lin^T alpha of ``problem`` with kernel K, as
    a function of alpha (through the slot sums U: O(n^2 k), no n_vars x n_vars matrix)."""
    lay = _Layout(problem)

    def dual(v):
        U = problem.slot_sums(v)
        h = K @ U
        return 0.5 * lay.kappa * float(np.sum(U * (h - h.mean(axis=1, keepdims=True)))) \
            - float(lay.lin @ v)
    return dual
