"""Sparse input: every estimator and kernel fits, predicts and scores scipy.sparse X.

The sparse rows go to the compiled core's sparse row sources (X is never densified), so a
fit on CSR or CSC data must equal the fit on the same data as a dense array: the arithmetic
is the same up to the order of the sums, and at a tight tol the decision values agree to
1e-8.  Prediction on sparse X after a dense fit (and the reverse) must agree too.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm.model_selection import TuningSetSearch, gamma_quartiles, lambda_grid
from _estimators import classes

# every public estimator (tests/_estimators.py); TargetedLocalMSVM's sparse input (its
# targeted column taken out of the sparse matrix) is tested in test_targeted.py
MODELS = [c for c in classes() if c.__name__ != "TargetedLocalMSVM"]
KERNELS = [dict(kernel="linear"), dict(kernel="rbf"), dict(kernel="rbf", gamma="median"),
           dict(kernel="poly", degree=2, coef0=1.0)]
ATOL = 1e-8


def _sparse_problem(n=60, d=40, density=0.2, k=3, seed=0):
    """CSR data with about `density` non-zeros and labels that depend on them."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = rng.normal(size=X.nnz)
    y = (np.asarray(X[:, :k].toarray()).argmax(axis=1) + rng.integers(0, 2, n)) % k
    return X, y


def _fit(model, X, y, **params):
    return model(C=10.0, tol=1e-10, random_state=0, **params).fit(X, y)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("params", KERNELS, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_fit_equals_dense_fit(model, params, fmt):
    X, y = _sparse_problem()
    dense = _fit(model, X.toarray(), y, **params)
    sparse = _fit(model, X.asformat(fmt), y, **params)
    np.testing.assert_allclose(sparse.decision_function(X.asformat(fmt)),
                               dense.decision_function(X.toarray()), atol=ATOL, rtol=0)
    # gamma='median' is computed on dense X after a shift (exact under an offset) and on
    # sparse X without one: gamma_ may differ by an ulp, and the fits by the solver's tol
    np.testing.assert_allclose(sparse.objective_, dense.objective_, rtol=1e-9)
    # predictions agree wherever the two largest decision values are not tied (a sample
    # with no non-zero feature sits at the intercepts, where rounding breaks a tie)
    top2 = np.sort(dense.decision_function(X.toarray()), axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-6
    assert np.array_equal(sparse.predict(X)[clear], dense.predict(X.toarray())[clear])
    if params["kernel"] == "linear":
        np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=ATOL, rtol=0)


@pytest.mark.parametrize("model", [ReinforcedMSVM, WestonWatkinsMSVM])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_prediction_accepts_either_storage(model, kernel):
    X, y = _sparse_problem(seed=1)
    est = _fit(model, X, y, kernel=kernel)
    X_test, _ = _sparse_problem(n=25, seed=2)
    for Xt in (X_test, X_test.tocsc(), X_test.toarray(), sp.coo_matrix(X_test)):
        np.testing.assert_allclose(est.decision_function(Xt),
                                   est.decision_function(X_test.toarray()), atol=1e-12)
    assert est.score(X_test, est.predict(X_test)) == 1.0


def test_sparse_fit_with_sample_weight_and_class_weight():
    X, y = _sparse_problem(seed=3)
    w = np.random.default_rng(3).uniform(0.2, 2.0, len(y))
    dense = _fit(ReinforcedMSVM, X.toarray(), y, class_weight="balanced").fit(
        X.toarray(), y, sample_weight=w)
    sparse = _fit(ReinforcedMSVM, X, y, class_weight="balanced").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(sparse.decision_function(X), dense.decision_function(X.toarray()),
                               atol=ATOL)


def test_sparse_input_is_not_densified_or_modified():
    X, y = _sparse_problem(seed=4)
    X.indices = X.indices.astype(np.int64)
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    est = _fit(WestonWatkinsMSVM, X, y, kernel="rbf")
    assert sp.issparse(X) and all(np.array_equal(a, b) for a, b in
                                  zip(before, (X.data, X.indices, X.indptr)))
    assert est.n_features_in_ == X.shape[1]


def test_unsorted_indices_and_explicit_zeros_give_the_same_fit():
    X, y = _sparse_problem(seed=5)
    messy = X.copy()
    order = np.arange(messy.nnz)[::-1]           # reverse every row's index order
    for start, stop in zip(messy.indptr[:-1], messy.indptr[1:]):
        seg = slice(start, stop)
        messy.indices[seg] = messy.indices[seg][::-1]
        messy.data[seg] = messy.data[seg][::-1]
    assert len(order) == X.nnz
    messy.has_sorted_indices = False
    with_zero = sp.csr_matrix((np.r_[X.data, 0.0], np.r_[X.indices, 0],
                               np.r_[X.indptr[:-1], X.indptr[-1] + 1]), shape=X.shape)
    reference = _fit(ReinforcedMSVM, X.toarray(), y, kernel="rbf").decision_function(X)
    for variant in (messy, with_zero):
        est = _fit(ReinforcedMSVM, variant, y, kernel="rbf")
        np.testing.assert_allclose(est.decision_function(X), reference, atol=ATOL)


def test_gamma_heuristics_equal_on_sparse_and_dense():
    X, y = _sparse_problem(seed=6)
    for gamma in ("scale", "auto", "median"):
        a = ReinforcedMSVM(C=10.0, gamma=gamma).fit(X, y).gamma_
        b = ReinforcedMSVM(C=10.0, gamma=gamma).fit(X.toarray(), y).gamma_
        assert a == pytest.approx(b, rel=1e-12)
    np.testing.assert_allclose(gamma_quartiles(X, y), gamma_quartiles(X.toarray(), y),
                               rtol=1e-12)


def test_tuning_set_search_on_sparse_input():
    X, y = _sparse_problem(n=80, seed=7)
    def make():
        return TuningSetSearch(ReinforcedMSVM(kernel="linear", tol=1e-10, random_state=0),
                               lambdas=lambda_grid(-6, 0), random_state=0)
    dense, sparse = make().fit(X.toarray(), y), make().fit(X, y)
    assert sparse.best_lambda_ == dense.best_lambda_
    np.testing.assert_allclose(sparse.results_["score"], dense.results_["score"])
    np.testing.assert_allclose(sparse.decision_function(X), dense.decision_function(X.toarray()),
                               atol=ATOL)


def test_precomputed_kernel_refuses_sparse_with_a_clear_error():
    X, y = _sparse_problem(seed=8)
    K = (X @ X.T).tocsr()
    with pytest.raises(TypeError, match="[Ss]parse"):
        ReinforcedMSVM(kernel="precomputed").fit(K, y)


def test_sparse_input_that_overflows_is_refused():
    X, y = _sparse_problem(seed=9)
    X = X * 1e300
    with pytest.raises(ValueError, match="[Rr]escale"):
        ReinforcedMSVM(kernel="rbf").fit(X, y)


def test_callable_kernel_receives_the_sparse_matrix():
    X, y = _sparse_problem(seed=10)
    seen = []

    def linear(A, B):
        seen.append(sp.issparse(A))
        return np.asarray((A @ B.T).toarray() if sp.issparse(A) else A @ B.T)

    a = _fit(ReinforcedMSVM, X, y, kernel=linear).decision_function(X)
    b = _fit(ReinforcedMSVM, X.toarray(), y, kernel=linear).decision_function(X.toarray())
    assert seen[0]                                  # the kernel saw sparse rows, not a copy
    np.testing.assert_allclose(a, b, atol=ATOL)
