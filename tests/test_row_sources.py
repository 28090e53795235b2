"""The row sources of the compiled core: every storage gives the same rows, scores and solves.

Dense and CSR inputs, float64 and float32 row caches, a Gram matrix and rows computed on
demand, a full cache and a two-row one must agree (to rounding, or to float32's precision
for float32 rows), and the solver must reach the same solution through each of them.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from msvm._core._rows import RowSource
from msvm._core._solver import init_scores, make_row_source, solve
from msvm._kernels import kernel_matrix
from msvm._problem import pairwise_hinge_problem, reinforced_problem


def _sparse_data(n=40, d=30, density=0.2, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    return X, rng.integers(0, 3, size=n)


@pytest.mark.parametrize("kernel,params", [("rbf", dict(gamma=0.3)),
                                           ("poly", dict(gamma=0.5, coef0=1.0, degree=2)),
                                           ("linear-rows", {})])
@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
def test_kernel_rows_agree_across_storage(kernel, params, cache_dtype):
    X, _ = _sparse_data()
    Xd = X.toarray()
    name = "linear" if kernel == "linear-rows" else kernel
    K = kernel_matrix(Xd, Xd, name, params.get("gamma"), params.get("degree", 3),
                      params.get("coef0", 0.0))
    rtol = 1e-6 if cache_dtype == "float32" else 1e-12
    for data in (Xd, X):
        src = make_row_source(kernel, 3, X=data, capacity=3, cache_dtype=cache_dtype,
                              **params)
        np.testing.assert_allclose(src.diagonal(), np.diag(K), rtol=1e-12, atol=1e-12)
        for i in (0, 5, 0, 17, 39, 5):          # misses, hits and evictions of a 3-row cache
            np.testing.assert_allclose(src.kernel_row(i), K[i], rtol=rtol, atol=rtol)
        assert src.n_computed >= 4


def test_scores_agree_across_sources():
    X, _ = _sparse_data(seed=1)
    Xd = X.toarray()
    U = np.random.default_rng(2).normal(size=(X.shape[0], 3))
    expected = Xd @ (Xd.T @ U)
    sources = [make_row_source("linear", 3, X=Xd), make_row_source("linear", 3, X=X),
               make_row_source("linear-rows", 3, X=Xd, capacity=40),
               make_row_source("linear-rows", 3, X=X, capacity=2),
               make_row_source("precomputed", 3, K=Xd @ Xd.T)]
    for src in sources:
        init_scores(src, U)
        got = np.array([src.sample_scores(i) for i in range(X.shape[0])])
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)
    assert sources[0].scores is None and sources[0].weights.shape == (30, 3)
    np.testing.assert_allclose(sources[2].scores, expected, rtol=1e-10, atol=1e-10)


def test_float32_linear_source_matches_float64():
    """The float32 dense linear source (explicit feature maps) accumulates in double: on
    float32-representable data it gives the float64 source's scores and solve, bit for bit."""
    X, y = _sparse_data(seed=3)
    X32 = np.ascontiguousarray(X.toarray(), dtype=np.float32)
    X64 = X32.astype(np.float64)
    src32, src64 = make_row_source("linear", 3, X=X32), make_row_source("linear", 3, X=X64)
    assert type(src32).__name__ == "DenseLinearRows32"
    np.testing.assert_array_equal(src32.diagonal(), src64.diagonal())
    problem = reinforced_problem(y, 3, np.full(len(y), 0.5), 0.5)
    alphas = []
    for src in (src32, src64):
        alpha, mu = np.zeros(problem.n_vars), np.zeros(3)
        solve(src, problem, alpha, mu, tol=1e-8, seed=0, method="cd")
        alphas.append(alpha)
    np.testing.assert_array_equal(alphas[0], alphas[1])
    np.testing.assert_array_equal(src32.weights, src64.weights)


def _reinforced(y, k, w):
    return reinforced_problem(y, k, w, 0.5)


@pytest.mark.parametrize("builder", [_reinforced, pairwise_hinge_problem])
@pytest.mark.parametrize("method", ["smo", "cd"])
def test_solve_through_every_source(builder, method):
    """One problem solved through a Gram matrix, dense and CSR rows, float32 rows and a tiny
    cache: the same dual objective (to the solver's tol) and the same scores as K U."""
    X, y = _sparse_data(n=30, d=12, density=0.4, seed=3)
    Xd = X.toarray()
    K = Xd @ Xd.T
    problem = builder(y, 3, np.full(len(y), 0.5))
    objectives = []
    kinds = [("precomputed", dict(K=K)), ("linear-rows", dict(X=Xd, capacity=30)),
             ("linear-rows", dict(X=X, capacity=2)),
             ("linear-rows", dict(X=X, capacity=30, cache_dtype="float32"))]
    if method == "cd":
        kinds += [("linear", dict(X=Xd)), ("linear", dict(X=X))]
    for kind, kw in kinds:
        src = make_row_source(kind, 3, **kw)
        alpha = np.zeros(problem.n_vars)
        mu = np.zeros(3)
        _, resid, status, gap = solve(src, problem, alpha, mu, tol=1e-8, method=method,
                                      max_iter=100000)
        assert status == 0, (kind, kw)
        U = problem.slot_sums(alpha)
        PU = U - U.mean(axis=1, keepdims=True)
        objectives.append(0.5 * problem.kappa * np.sum(PU * (K @ U))
                          - problem.expand("lin") @ alpha)
        if src.scores is not None:
            np.testing.assert_allclose(src.scores, K @ U, atol=1e-5 if "cache_dtype" in kw
                                       else 1e-9)
    np.testing.assert_allclose(objectives, objectives[0], rtol=1e-6, atol=1e-8)


def test_row_source_is_abstract_and_checks_input():
    with pytest.raises(TypeError, match="abstract"):
        RowSource()
    with pytest.raises(ValueError, match="cache_dtype"):
        make_row_source("rbf", 2, X=np.zeros((3, 2)), cache_dtype="float16")
    with pytest.raises(ValueError, match="overflows"):
        make_row_source("linear", 2, X=sp.csr_matrix(np.full((3, 2), 1e200)))


@pytest.mark.parametrize("gamma", [2.0 ** -10, 0.25, 2.0, 64.0])
def test_rbf_rows_match_numpy_exp_to_the_last_bits(gamma):
    # the rows' exponentials come from a vectorized exp (_exp_row.h): within 2 ulp of
    # NumPy's exp of the same arguments wherever the value is a normal number, exactly 1 on
    # the diagonal, 0 below exp(-708) (where NumPy gives subnormal numbers).  Small integer
    # features and a power-of-2 gamma make every argument exact in both computations.
    rng = np.random.default_rng(4)
    X = rng.integers(-3, 4, size=(300, 5)).astype(float)
    src = make_row_source("rbf", 3, X=X, gamma=gamma, capacity=300)
    for i in (0, 7, 150, 299):
        expected = np.exp(-gamma * np.sum((X - X[i]) ** 2, axis=1))
        row = src.kernel_row(i)
        assert row[i] == 1.0
        normal = expected >= np.exp(-708.0)
        assert np.all(np.abs(row[normal] - expected[normal]) <= 2 * np.spacing(expected[normal]))
        assert np.all(row[~normal] == 0.0)
    assert src.n_computed == 4


@pytest.mark.parametrize("cache_dtype", ["float64", "float32"])
@pytest.mark.parametrize("kernel,params", [("rbf", dict(gamma=0.7)),
                                           ("poly", dict(gamma=0.5, coef0=1.0, degree=3))])
def test_rows_computed_together_equal_rows_computed_alone(kernel, params, cache_dtype):
    # the SMO path computes a working set's missing rows together (X^T read once per four
    # rows); every value must be the one-row value to the last bit, so that K stays
    # exactly symmetric with its exact diagonal
    rng = np.random.default_rng(7)
    X = rng.normal(size=(103, 9))
    rows = [5, 0, 77, 102, 31, 64, 12, 9, 50]           # two blocks of four and one row
    together = make_row_source(kernel, 3, X=X, capacity=20, cache_dtype=cache_dtype, **params)
    together.prefetch_rows(rows)
    assert together.n_computed == len(rows)
    alone = make_row_source(kernel, 3, X=X, capacity=20, cache_dtype=cache_dtype, **params)
    for i in rows:
        np.testing.assert_array_equal(together.kernel_row(i), alone.kernel_row(i))
    assert together.n_computed == len(rows)             # the prefetched rows were cached
    K = np.array([alone.kernel_row(i) for i in rows])
    np.testing.assert_array_equal(K[:, rows], K[:, rows].T)
    np.testing.assert_array_equal(np.diag(K[:, rows]), alone.diagonal()[rows]
                                  if cache_dtype == "float64"
                                  else alone.diagonal()[rows].astype(np.float32))


@pytest.mark.parametrize("source", ["rbf-float64", "rbf-float32", "sparse-rbf",
                                    "precomputed"])
def test_grouped_score_update_equals_one_row_at_a_time(source):
    # the SMO path adds a working set's kernel rows to the scores four rows per pass over
    # each score row (_row_updates.h); every value must be the one-row-at-a-time value to
    # the last bit (each product rounded, then added, the samples in order; zeros skipped)
    rng = np.random.default_rng(11)
    n, nt = 57, 6
    X = rng.normal(size=(n, 5))
    if source == "precomputed":
        src = make_row_source("precomputed", 3, K=kernel_matrix(X, X, "rbf", 0.4, 3, 0.0))
    else:
        dtype = "float32" if source == "rbf-float32" else "float64"
        data = sp.csr_matrix(X) if source == "sparse-rbf" else X
        src = make_row_source("rbf", 3, X=data, gamma=0.4, capacity=30, cache_dtype=dtype)
    idx = [3, 50, 7, 7 + 1, 21, 44, 0, 12, 33, 56, 18]       # groups of 4, 4 and 3 rows
    coef = rng.normal(size=(len(idx), nt)) * 10.0 ** rng.integers(-8, 8, size=(len(idx), nt))
    coef[rng.random(coef.shape) < 0.4] = 0.0
    coef[2] = 0.0                                              # an unchanged sample
    ys = rng.normal(size=(nt, n))
    expected = ys.copy()
    for a, i in enumerate(idx):
        row = src.kernel_row(i)
        for t in range(nt):
            if coef[a, t] != 0.0:
                expected[t] = expected[t] + coef[a, t] * row
    src.add_rows(idx, coef, ys)
    np.testing.assert_array_equal(ys, expected)
    with pytest.raises(ValueError, match="distinct"):
        src.add_rows([1, 1], np.ones((2, nt)), ys)
    with pytest.raises(ValueError, match="coef must be"):
        src.add_rows([1, 2], np.ones((2, nt + 1)), ys)
