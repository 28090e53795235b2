"""The cluster (DC-SVM) start of a large exact-kernel fit (msvm/_cluster_start.py): the fit
solves the same problem to the same certificate as a fit from zero, the start is feasible
(boxes per sample, equalities adding up over clusters) also for clusters that miss classes
and under sample weights, and the plan makes it only where it is meant to."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs, make_classification
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from msvm import AngleBasedMSVM, ReinforcedMSVM, WestonWatkinsMSVM
from msvm._cluster_start import cluster_start, restrict, start_from_clusters
from msvm._kernels import make_row_source
from msvm._plan import CLUSTER_MIN_SAMPLES, CLUSTER_SIZE, n_clusters, plan_solve
from msvm._problem import reinforced_problem
from msvm._sequence import DualSequence

MODELS = {
    "reinforced": lambda **kw: ReinforcedMSVM(**kw),
    "llw": lambda **kw: ReinforcedMSVM(reinforcement=0.0, **kw),
    "angle": lambda **kw: AngleBasedMSVM(**kw),
}


def _pair(make, X, y, sample_weight=None, cluster_size=40, **kw):
    """The same fit from zero and from the cluster start (forced, small clusters)."""
    plain = make(random_state=0, **kw)
    plain._plan_overrides = {"cluster_start": "off"}
    plain.fit(X, y, sample_weight=sample_weight)
    started = make(random_state=0, **kw)
    started._plan_overrides = {"cluster_start": "on", "cluster_size": cluster_size}
    started.fit(X, y, sample_weight=sample_weight)
    return plain, started


def _same_optimum(plain, started, rel):
    assert started.converged_ and plain.converged_
    assert started.solver_plan_.clusters >= 2 and plain.solver_plan_.clusters == 0
    assert started.objective_ == pytest.approx(plain.objective_, rel=rel)
    assert "clusters" in str(started.solver_plan_)


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("seed", [0, 1])
def test_cluster_started_fit_reaches_the_plain_fits_objective(name, seed):
    """On small random problems (the clusters forced with the test hook), the fit started
    from the clusters' duals converges to the plain fit's objective within its tol."""
    X, y = make_classification(n_samples=240, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=seed)
    plain, started = _pair(MODELS[name], X, y, C=2.0, tol=1e-5)
    _same_optimum(plain, started, rel=1e-4)


def test_clusters_missing_classes_give_a_feasible_start_and_the_same_optimum():
    """Samples in clusters of one class (alpha = 0 is their only feasible point) and of two of
    three classes: the concatenated start is inside every box and meets the equalities to
    the cluster solves' tolerance, and the fit reaches the plain optimum."""
    # three well-separated groups: two pure (classes 0 and 1), one mixing classes 1 and 2
    X, _ = make_blobs(n_samples=[60, 60, 80], centers=[[-6, 0], [6, 0], [0, 6]],
                      cluster_std=1.0, random_state=0)
    y = np.r_[np.zeros(60), np.ones(60), np.where(np.arange(80) % 2 == 0, 1, 2)].astype(int)
    labels = np.repeat([0, 1, 2], [60, 60, 80])
    problem = reinforced_problem(y, 3, np.ones(len(y)), 0.5)
    alpha, mu, solved = cluster_start(
        problem, X, lambda part: make_row_source(part, "rbf", 3, gamma=0.5), labels,
        tol=1e-3, max_iter=1000, shrinking=True, seed=0)
    assert solved == 1                               # the pure clusters are not solved
    lo, hi = problem.expanded_bounds()
    assert np.all(alpha >= lo) and np.all(alpha <= hi)
    assert not np.any(alpha[: 120 * 3])              # one class: alpha = 0
    assert np.any(alpha[120 * 3:])
    c = problem.class_sums(alpha)
    assert np.abs(c - c.mean()).max() <= 1e-2 * hi.max() * len(y)
    assert mu.sum() == pytest.approx(0.0, abs=1e-12)
    plain, started = _pair(MODELS["reinforced"], X, y, cluster_size=70, C=10.0, gamma=0.5,
                           tol=1e-5)
    _same_optimum(plain, started, rel=1e-4)


def test_sample_weights_are_kept_in_the_cluster_problems():
    """Under sample weights (zeros among them) the cluster problems keep each sample's box,
    and the started fit reaches the plain weighted fit's objective."""
    X, y = make_classification(n_samples=200, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=3)
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    w[::17] = 0.0
    problem = reinforced_problem(y, 3, w, 0.5)
    samples = np.flatnonzero(np.arange(len(y)) % 3 == 1)
    sub = restrict(problem, samples)
    direct = reinforced_problem(y[samples], 3, w[samples], 0.5)
    for got, want in zip(sub.expanded_bounds() + sub.expanded_directions(),
                         direct.expanded_bounds() + direct.expanded_directions()):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(sub.expand("lin"), direct.expand("lin"))
    plain, started = _pair(MODELS["reinforced"], X, y, sample_weight=w, C=3.0, tol=1e-5)
    _same_optimum(plain, started, rel=1e-4)


@pytest.mark.parametrize("kernel, kw, dtype, rel", [
    ("rbf", dict(gamma=0.3), "float64", 1e-9),
    ("rbf", dict(gamma=0.3), "float32", 1e-6),
    ("poly", dict(gamma=0.2, degree=2, coef0=1.0), "float64", 1e-9)])
def test_start_scores_are_the_kernel_times_the_slot_sums(kernel, kw, dtype, rel):
    """The scores the start writes into the row source are K U(alpha) of the start (what
    computing them row by row would give; to float32 rounding where the cache holds float32
    rows), and the sequence is declared at that start."""
    X, y = make_classification(n_samples=150, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=2)
    X = X + 50.0                                     # a common offset: no cancellation
    est = ReinforcedMSVM(kernel=kernel, C=1.0, random_state=0, **kw)     # its settings
    problem = reinforced_problem(y, 3, np.ones(len(y)), 0.5)
    src = make_row_source(X, kernel, 3, gamma=est.gamma, degree=est.degree, coef0=est.coef0,
                          cache_dtype=dtype)
    plan = plan_solve(kernel, len(y), kernel=kernel,
                      overrides={"cluster_start": "on", "cluster_size": 50})
    sequence = DualSequence(src, None, "test", tol=1e-3, max_iter=1000, shrinking=True,
                            verbose=0, random_state=0, plan=plan, inputs=X)
    alpha, _ = start_from_clusters(est, sequence, problem, np.zeros(problem.n_vars),
                                   np.zeros(3))
    assert sequence.plan.clusters == 3 and sequence.alpha is alpha and np.any(alpha)
    K = (rbf_kernel(X, gamma=0.3) if kernel == "rbf"
         else polynomial_kernel(X, degree=2, gamma=0.2, coef0=1.0))
    want = K @ problem.slot_sums(alpha)
    np.testing.assert_allclose(src.scores, want, rtol=rel, atol=rel * np.abs(want).max())


def test_plan_makes_the_cluster_start_for_large_kernel_cache_fits_only():
    """'auto' (the default on kernel cache rows) makes the start from CLUSTER_MIN_SAMPLES
    samples on computed kernel rows, for per-class-hinge problems without group caps, never
    for explicit features or a Gram matrix; the overrides force it or lower the cluster
    size, and bad ones are refused."""
    y = np.arange(9) % 3
    per_class = reinforced_problem(y, 3, np.ones(9), 0.5)
    big = reinforced_problem(np.arange(CLUSTER_MIN_SAMPLES) % 3, 3,
                             np.ones(CLUSTER_MIN_SAMPLES), 0.5)
    auto = plan_solve("rbf", CLUSTER_MIN_SAMPLES)
    assert auto.cluster_start == "auto"
    assert auto.starts_from_clusters(big) == n_clusters(CLUSTER_MIN_SAMPLES) >= 2
    assert auto.starts_from_clusters(per_class) == 0          # too few samples
    for source in ("linear", "precomputed"):
        plan = plan_solve(source, 10 ** 5, overrides={"cluster_start": "auto"})
        assert plan.starts_from_clusters(big) == 0
    forced = plan_solve("rbf", 9, overrides={"cluster_start": "on", "cluster_size": 3})
    assert forced.starts_from_clusters(per_class) == 3
    assert plan_solve("rbf", 9, overrides={"cluster_start": "off"}).starts_from_clusters(
        big) == 0
    assert n_clusters(10 ** 5) == round(10 ** 5 / CLUSTER_SIZE)
    with pytest.raises(ValueError, match="cluster_start='yes'"):
        plan_solve("rbf", 9, overrides={"cluster_start": "yes"})
    with pytest.raises(ValueError, match="cluster_size"):
        plan_solve("rbf", 9, overrides={"cluster_size": 0})


def test_pairwise_hinges_are_never_started_from_clusters():
    """The Weston-Watkins dual (directions with two slots) keeps its start from zero even when
    the start is forced."""
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=0)
    est = WestonWatkinsMSVM(random_state=0)
    est._plan_overrides = {"cluster_start": "on", "cluster_size": 30}
    est.fit(X, y)
    assert est.solver_plan_.clusters == 0 and est.converged_


def test_cluster_started_fit_does_not_depend_on_the_threads():
    """The cluster solves run on as many threads as the fit; the fit is the same with 1 or 2."""
    X, y = make_classification(n_samples=240, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, n_clusters_per_class=1, random_state=4)
    fits = []
    for threads in (1, 2):
        est = ReinforcedMSVM(C=2.0, random_state=0, n_threads=threads)
        est._plan_overrides = {"cluster_start": "on", "cluster_size": 60}
        fits.append(est.fit(X, y))
    assert fits[0].solver_plan_.clusters == fits[1].solver_plan_.clusters == 4
    assert fits[0].objective_ == fits[1].objective_
    np.testing.assert_array_equal(fits[0].alpha_, fits[1].alpha_)
