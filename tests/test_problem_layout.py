"""The compact dual layout (entries shared through var_entry) describes the same dual as the
explicit per-variable layout, and the solver treats both the same, to the last bit."""

import numpy as np
import pytest

from msvm._core._solver import make_row_source, solve
from msvm._kernels import kernel_matrix
from msvm._problem import (DualProblem, alpha_by_slots, margin_problem,
                           pairwise_hinge_problem, per_class_hinge_problem, select_variables,
                           shifted)


def _explicit(problem):
    """The same problem with every attribute stored per variable."""
    return problem.replace()


def _data(seed, n=60, k=4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    return rng, y, k, rng.uniform(0.1, 3.0, n)


def _builders():
    return {
        "weston-watkins": lambda y, k, w, rng: pairwise_hinge_problem(y, k, w),
        "per-class": lambda y, k, w, rng: per_class_hinge_problem(
            y, k, lin_own=k - 1.0, lin_other=1.0, coef_own=-1.0, coef_other=1.0,
            hi_own=0.3 * w, hi_other=0.7 * w),
        "margin": lambda y, k, w, rng: margin_problem(
            y, k, w, np.where(rng.uniform(size=(k, k)) < 0.7, rng.uniform(0.5, 2, (k, k)),
                              0.0) * (1 - np.eye(k))),
    }


def _reference_layout(name, y, k, w, utility=None):
    """The explicit per-variable arrays these builders produced before the compact layout."""
    n = len(y)
    if name == "weston-watkins":
        mask = np.ones((n, k), dtype=bool)
        mask[np.arange(n), y] = False
        ii, jj = np.nonzero(mask)
        return dict(slot1=jj, coef1=np.ones(len(ii)), slot2=y[ii], coef2=-np.ones(len(ii)),
                    lin=np.ones(len(ii)), lo=np.zeros(len(ii)), hi=w[ii])
    if name == "per-class":
        own = np.zeros((n, k), dtype=bool)
        own[np.arange(n), y] = True
        own = own.ravel()
        return dict(slot1=np.tile(np.arange(k), n), coef1=np.where(own, -1.0, 1.0),
                    slot2=np.full(n * k, -1), coef2=np.zeros(n * k),
                    lin=np.where(own, k - 1.0, 1.0), lo=np.zeros(n * k),
                    hi=np.where(own.reshape(n, k), 0.3 * w[:, None], 0.7 * w[:, None]).ravel())
    raise ValueError(name)


@pytest.mark.parametrize("name", ["weston-watkins", "per-class"])
@pytest.mark.parametrize("seed", [0, 1])
def test_compact_builders_list_the_same_variables(name, seed):
    rng, y, k, w = _data(seed)
    problem = _builders()[name](y, k, w, rng)
    assert problem.var_entry is not None
    for attr, expected in _reference_layout(name, y, k, w).items():
        np.testing.assert_array_equal(problem.expand(attr), expected, err_msg=attr)


@pytest.mark.parametrize("name", ["weston-watkins", "per-class", "margin"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_helpers_agree_with_the_explicit_layout(name, seed):
    rng, y, k, w = _data(seed)
    problem = _builders()[name](y, k, w, rng)
    explicit = _explicit(problem)
    nv = problem.n_vars
    alpha = np.where(rng.uniform(size=nv) < 0.4, 0.0, rng.uniform(-1, 4, nv))
    D = explicit.directions()
    U = np.zeros((problem.n_samples, k))
    np.add.at(U, problem.sample_of_var(), alpha[:, None] * D)
    np.testing.assert_allclose(problem.slot_sums(alpha), U, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(problem.class_sums(alpha), U.sum(axis=0), rtol=1e-13,
                               atol=1e-13)
    clipped = problem.clip_feasible(alpha)
    np.testing.assert_array_equal(clipped, explicit.clip_feasible(alpha))
    np.testing.assert_array_equal(
        np.flatnonzero(problem.support_mask(alpha)),
        np.unique(problem.sample_of_var()[alpha != 0]))
    pairs = problem.has_pairs
    assert pairs == bool(np.any(explicit.expand("slot2") >= 0))
    out = np.zeros((problem.n_samples, k, k)) if pairs else np.zeros((problem.n_samples, k))
    if pairs:
        out[problem.sample_of_var(), explicit.expand("slot2"), explicit.expand("slot1")] = alpha
    else:
        out[problem.sample_of_var(), explicit.expand("slot1")] = alpha
    np.testing.assert_array_equal(alpha_by_slots(problem, alpha, pairs=pairs), out)
    lo, hi = explicit.expanded_bounds()
    assert problem.max_abs_bound() == max(np.abs(lo).max(), np.abs(hi).max())
    # derived problems keep the layout and describe the same variables
    keep = rng.uniform(size=nv) < 0.7
    for derived, reference in (
            (select_variables(problem, keep), select_variables(explicit, keep)),
            (shifted(problem, 0.1 * hi), shifted(explicit, 0.1 * hi))):
        for attr in ("slot1", "coef1", "slot2", "coef2", "lin", "lo", "hi", "group"):
            np.testing.assert_array_equal(derived.expand(attr), reference.expand(attr),
                                          err_msg=attr)
        np.testing.assert_array_equal(derived.cap, reference.cap)
        np.testing.assert_array_equal(derived.var_ptr, reference.var_ptr)


def test_a_lower_bound_above_its_upper_bound_is_refused():
    _, y, k, w = _data(0)
    problem = pairwise_hinge_problem(y, k, w)
    with pytest.raises(ValueError, match="lower bound exceeds"):
        DualProblem(k=k, var_ptr=problem.var_ptr, var_entry=problem.var_entry,
                    slot1=problem.entry_slot1, coef1=problem.entry_coef1,
                    lin=problem.entry_lin, slot2=problem.entry_slot2,
                    coef2=problem.entry_coef2, lo=np.full(len(problem.entry_lin), 5.0),
                    lo_per_entry=True, hi=problem.box_hi)


@pytest.mark.parametrize("name", ["weston-watkins", "per-class", "margin"])
@pytest.mark.parametrize("method", ["smo", "cd"])
def test_the_solver_gives_the_same_iterates_on_both_layouts(name, method):
    rng, y, k, w = _data(3, n=80)
    X = rng.normal(size=(len(y), 3))
    K = kernel_matrix(X, X, "rbf", 0.5, 3, 0.0)
    problem = _builders()[name](y, k, w, rng)
    results = []
    for p in (problem, _explicit(problem)):
        alpha, mu = np.zeros(p.n_vars), np.zeros(k)
        src = make_row_source("precomputed", k, K=K)
        out = solve(src, p, alpha, mu, tol=1e-8, max_iter=10 ** 5, method=method, seed=7)
        results.append((alpha, mu, out))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_expansion_is_an_explicit_call_with_a_named_value():
    """Per-variable values are read through ``expand`` (no attribute expands on access): the
    compact layout gives a new array equal to the explicit layout's stored one, the explicit
    layout its stored array itself, and an unknown name is refused with the valid names."""
    _, y, k, w = _data(0)
    problem = pairwise_hinge_problem(y, k, w)
    explicit = _explicit(problem)
    for name in ("slot1", "coef1", "slot2", "coef2", "lin", "lo", "hi", "group"):
        assert not hasattr(problem, name)
        np.testing.assert_array_equal(problem.expand(name), explicit.expand(name))
    assert explicit.expand("lin") is explicit.entry_lin
    assert problem.expand("slot1") is not problem.entry_slot1
    lo, hi = problem.expanded_bounds()
    np.testing.assert_array_equal(lo, problem.expand("lo"))
    np.testing.assert_array_equal(hi, problem.expand("hi"))
    with pytest.raises(ValueError, match="unknown name 'box'.*'coef1'"):
        problem.expand("box")
