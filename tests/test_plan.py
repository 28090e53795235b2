"""The solver plan: one function decides the row source, cache storage, inner solver, working
set and primal start with the tuned thresholds; a fit records what ran in ``solver_plan_``;
the core names its statuses and returns a named result."""

import inspect
import pickle

import numpy as np
import pytest
from sklearn.datasets import make_classification

from msvm import (AngleBasedMSVM, ReinforcedMSVM, RobustMSVM, TargetedLocalMSVM,
                  WestonWatkinsMSVM)
from msvm._core import _solver
from msvm._core._solver import SolveResult, Status, auto_working_set
from msvm._kernels import make_row_source
from msvm._plan import (FLOAT32_CACHE_TOL, FLOAT32_MAX_BOUND, LINEAR_ROWS_MAX_SAMPLES,
                        SolvePlan, SolveStep, plan_solve, source_plan)
from msvm._sequence import SOLVER_STOP_REASONS, DualSequence
from msvm.datasets import make_reinforced_example


def _rows(source, n, **kw):
    return plan_solve(source, n, **kw).rows


def test_linear_rows_up_to_the_sample_limit_and_a_full_cache():
    """The linear kernel is solved on kernel rows up to LINEAR_ROWS_MAX_SAMPLES samples whose
    rows all fit in the cache, on explicit features above."""
    n = LINEAR_ROWS_MAX_SAMPLES
    assert _rows("linear", n) == "linear rows"
    assert _rows("linear", n + 1) == "explicit features"
    full = n * n * 8 / 2 ** 20                  # MB of every float64 row
    assert _rows("linear", n, cache_size=full) == "linear rows"
    assert _rows("linear", n, cache_size=0.99 * full) == "explicit features"
    # float32 rows need half the memory
    assert _rows("linear", n, cache_size=0.6 * full, cache_dtype="float32") == "linear rows"
    assert _rows("rbf", 10 ** 6) == _rows("poly", 3) == "kernel cache"
    assert _rows("precomputed", 50) == "precomputed"


@pytest.mark.parametrize("kw, dtype", [
    (dict(kernel="rbf"), "float32"),
    (dict(kernel="rbf", tol=FLOAT32_CACHE_TOL), "float32"),
    (dict(kernel="rbf", tol=0.5 * FLOAT32_CACHE_TOL), "float64"),
    (dict(kernel="rbf", C=FLOAT32_MAX_BOUND), "float32"),
    (dict(kernel="rbf", C=2.0, weights=np.array([1.0, 0.6 * FLOAT32_MAX_BOUND])), "float64"),
    (dict(kernel="poly"), "float64"),
    (dict(kernel="rbf", cache_dtype="float64"), "float64"),
    (dict(kernel="poly", cache_dtype="float32"), "float32"),
])
def test_auto_cache_dtype_is_float32_for_rbf_rows_at_moderate_tol_and_bounds(kw, dtype):
    """'auto' stores rows in float32 for the RBF kernel from FLOAT32_CACHE_TOL up with every
    C * weight at most FLOAT32_MAX_BOUND; an explicit cache_dtype is kept."""
    kw = dict(dict(cache_dtype="auto"), **kw)
    assert plan_solve("rbf", 100, **kw).cache_dtype == dtype


def test_primal_start_and_solver_rules_follow_the_rows():
    """Explicit features: coordinate descent with the primal-start rule; kernel rows: SMO
    where it applies, no primal start."""
    explicit = plan_solve("linear", 5000)
    assert (explicit.solver, explicit.primal_start) == ("cd", "auto")
    for source in ("rbf", "precomputed"):
        plan = plan_solve(source, 5000)
        assert (plan.solver, plan.primal_start) == ("auto", "off")
    # linear rows: no start from the primal, but its rule for the late start from the
    # solver's iterate
    assert plan_solve("linear", 100).primal_start == "auto"


def test_linear_rows_go_on_from_the_late_primal_start(monkeypatch):
    """A linear-kernel fit on kernel rows (n <= 2,000) that its first epoch budget stops,
    and whose finishing step does not settle, goes on from the smoothed primal computed from
    its iterate (one step, then certified), not from a crawl of the solver: the late start
    was lost when the plan was written (n = 1,500, C = 54: 18 s instead of 0.4 s).  The
    finishing step is switched off here: on these data its Schur-updated face settles the
    first stop itself since round 10 (210 free variables), so the late start is not needed."""
    import msvm._sequence as sequence
    monkeypatch.setattr(sequence, "finish_dual", lambda *args, **kwargs: None)
    X, y = make_classification(n_samples=200, n_features=7, n_informative=5, n_classes=5,
                               random_state=0)
    late = AngleBasedMSVM(kernel="linear", C=54.0).fit(X, y)
    off = AngleBasedMSVM(kernel="linear", C=54.0)
    off._plan_overrides = {"primal_start": "off"}
    off.fit(X, y)
    assert late.converged_ and off.converged_
    assert late.solver_plan_.primal_start == "auto"
    assert late.n_iter_ < off.n_iter_ / 4
    assert late.objective_ == pytest.approx(off.objective_, rel=2e-3)


@pytest.mark.parametrize("overrides, message", [
    ({"rows": "kernel cache"}, "rows='kernel cache' is not possible"),
    ({"solver": "newton"}, "solver='newton'"),
    ({"speed": 1}, "unknown plan overrides"),
    ({"working_set": -1}, "working_set"),
    ({"primal_start": "on"}, "needs explicit features"),
])
def test_impossible_overrides_are_refused(overrides, message):
    """A forced plan that cannot run is refused with the reason (on a 100-sample RBF fit
    the rows cannot be changed and there are no explicit features)."""
    with pytest.raises(ValueError, match=message):
        plan_solve("rbf", 100, overrides=overrides)


def test_smo_cannot_be_forced_on_explicit_features():
    with pytest.raises(ValueError, match="solver='smo' needs kernel rows"):
        plan_solve("linear", 5000, overrides={"solver": "smo"})


def _data(n=150, seed=0):
    return make_reinforced_example(n, random_state=seed)


@pytest.mark.parametrize("make, rows, solver", [
    (lambda: ReinforcedMSVM(), "kernel cache", "smo"),
    (lambda: ReinforcedMSVM(kernel="linear"), "linear rows", "smo"),
    (lambda: WestonWatkinsMSVM(kernel="poly", degree=2), "kernel cache", "smo"),
    (lambda: AngleBasedMSVM(kernel="precomputed"), "precomputed", "smo"),
    (lambda: ReinforcedMSVM(kernel="rbf", kernel_approximation="nystroem", n_components=20),
     "linear rows", "smo"),
    (lambda: TargetedLocalMSVM(kernel="rbf", n_grid=3, bandwidth=2.0), "kernel cache", "smo"),
], ids=["rbf", "linear", "poly", "precomputed", "nystroem", "targeted"])
@pytest.mark.filterwarnings("ignore::msvm.exceptions.DegenerateFitWarning")
def test_fitted_plan_records_the_source_and_every_solve(make, rows, solver):
    """``solver_plan_`` names the row source the fit used and one step per convex solve."""
    X, y = _data()
    est = make()
    if est.kernel == "precomputed":
        X = X @ X.T
    est.fit(X, y)
    plan = est.solver_plan_
    assert plan.rows == rows
    n_solves = len(est.grid_) if isinstance(est, TargetedLocalMSVM) else 1
    assert len(plan.steps) == n_solves
    assert all(step.solver == solver and step.working_set > 0 and not step.primal_start
               for step in plan.steps)
    assert str(plan).startswith(f"rows={rows}")
    assert pickle.loads(pickle.dumps(plan)) == plan


def test_dc_fit_records_one_step_per_convex_solve():
    """A DC fit records as many solves as it ran (n_iter_: the start and the DC steps)."""
    X, y = _data()
    est = RobustMSVM(C=10.0, kernel="rbf").fit(X, y)
    assert len(est.solver_plan_.steps) >= est.n_iter_ > 1
    assert f"of {len(est.solver_plan_.steps)} solves" in str(est.solver_plan_)


def test_large_linear_fit_records_the_primal_start():
    """On explicit features with a large C and n >> d the fit starts from the smoothed
    primal, and the plan says so; forcing it off gives the dual coordinate-descent path (which
    at this C runs past its first epoch budget and goes on from an exact finishing step)."""
    X, y = make_classification(n_samples=3000, n_features=5, n_informative=4, n_redundant=0,
                               n_classes=3, random_state=0)
    est = ReinforcedMSVM(kernel="linear", C=1.0, random_state=0).fit(X, y)
    assert est.solver_plan_.rows == "explicit features"
    assert est.solver_plan_.steps == (SolveStep("cd", 0, True),)
    assert "made in 1 of 1 solve" in str(est.solver_plan_)
    off = ReinforcedMSVM(kernel="linear", C=1.0, random_state=0)
    off._plan_overrides = {"primal_start": "off"}
    off.fit(X, y)
    (step,) = off.solver_plan_.steps
    assert (step.solver, step.working_set, step.primal_start) == ("cd", 0, False)
    assert off.objective_ == pytest.approx(est.objective_, rel=1e-3)


def test_working_set_is_chosen_from_the_row_source():
    """The SMO working set is that of ``auto_working_set`` on the built source (512 when the
    cache holds under half the rows), unless the plan forces one."""
    X, y = _data(n=400)
    small = ReinforcedMSVM(cache_size=100 * 400 * 8 / 2 ** 20, cache_dtype="float64")
    small.fit(X, y)
    assert small.solver_plan_.steps[0].working_set == auto_working_set(100, 400, 3) == 512
    forced = ReinforcedMSVM(cache_size=small.cache_size, cache_dtype="float64")
    forced._plan_overrides = {"working_set": 64}
    forced.fit(X, y)
    assert forced.solver_plan_.steps[0].working_set == 64


def test_forced_cd_on_kernel_rows_gives_the_same_optimum():
    """The plan's solver override reaches the core: coordinate descent on kernel rows."""
    X, y = _data()
    smo = ReinforcedMSVM(tol=1e-8, random_state=0).fit(X, y)
    cd = ReinforcedMSVM(tol=1e-8, random_state=0)
    cd._plan_overrides = {"solver": "cd"}
    cd.fit(X, y)
    step = cd.solver_plan_.steps[0]
    assert (step.solver, step.working_set, step.primal_start) == ("cd", 0, False)
    assert cd.objective_ == pytest.approx(smo.objective_, rel=1e-6)


def test_sequence_without_a_plan_describes_its_source():
    """A DualSequence built directly on a row source takes the plan of that source."""
    X, y = _data(n=60)
    for kind, rows in (("rbf", "kernel cache"), ("linear", "linear rows")):
        src = make_row_source(X, kind, 3, gamma=0.5)
        assert source_plan(src, kind == "linear").rows == rows
    src = make_row_source(X @ X.T, "precomputed", 3)
    assert source_plan(src, False).rows == "precomputed"
    src = make_row_source(X, "linear", 3, rows="explicit features")
    assert source_plan(src, True) == SolvePlan("explicit features", "float64", "cd", "auto")


def test_sequence_has_no_solver_injection_point():
    """The compiled solve is called directly: DualSequence takes no ``solver`` argument."""
    assert "solver" not in inspect.signature(DualSequence).parameters


def test_core_status_names_and_named_result():
    """The core exports its status codes as ``Status`` and ``solve`` returns a
    ``SolveResult``; the sequence's stop reasons are keyed by those names."""
    assert {s.name: int(s) for s in Status} == {
        "CONVERGED": 0, "MAX_ITER": 1, "NONFINITE": 2, "INTERRUPTED": 3, "GAP_FLOOR": 4,
        "NO_MEMORY": -1}
    assert set(SOLVER_STOP_REASONS) == {Status.CONVERGED, Status.MAX_ITER, Status.GAP_FLOOR}
    X, y = _data(n=60)
    est = ReinforcedMSVM(gamma=0.5)
    problem = est._dual_problem(y.astype(np.int32) - y.min(), 3, np.ones(len(y)))
    src = make_row_source(X, "rbf", 3, gamma=0.5)
    alpha, mu = np.zeros(problem.n_vars), np.zeros(3)
    result = _solver.solve(src, problem, alpha, mu, tol=1e-6)
    assert isinstance(result, SolveResult) and result.status is Status.CONVERGED
    n_iter, residual, status, gap = result
    assert (n_iter, residual, gap) == (result.n_iter, result.residual, result.gap)
    assert residual <= 1e-6 and status == 0
    capped = _solver.solve(src, problem, np.zeros(problem.n_vars), np.zeros(3), tol=1e-12,
                           max_iter=1)
    assert capped.status is Status.MAX_ITER
