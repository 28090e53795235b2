"""The defaults a new user meets: C='auto' (resolved into C_), RobustMSVM's truncation='auto',
the AttributeError of predict_proba without probability=True, and the demo."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  TargetedLocalMSVM, WeightedRobustMSVM, WestonWatkinsMSVM)

# the documented value of C='auto' for k classes
AUTO_C = {
    ReinforcedMSVM: lambda k: k, RobustMSVM: lambda k: k,
    AngleBasedMSVM: lambda k: k - 1, TargetedLocalMSVM: lambda k: k - 1,
    WestonWatkinsMSVM: lambda k: 1, WeightedRobustMSVM: lambda k: 1,
    AdaptiveWeightedSVM: lambda k: 1,
}


def _data(k, n=90, seed=0):
    X, y = make_blobs(n_samples=n, centers=k, n_features=3, cluster_std=2.5,
                      random_state=seed)
    return X, y


@pytest.mark.filterwarnings("ignore::msvm.exceptions.DegenerateFitWarning")
@pytest.mark.parametrize("cls", list(AUTO_C), ids=lambda c: c.__name__)
def test_default_C_is_auto_and_resolves_to_the_documented_formula(cls):
    """C defaults to 'auto'; a fit resolves it into C_ by the model's coding and k."""
    assert cls().get_params()["C"] == "auto"
    for k in (2, 3, 5):
        X, y = _data(k)
        est = cls(tol=1e-6).fit(X, y)
        assert est.C_ == AUTO_C[cls](k)
        assert clone(est).get_params()["C"] == "auto"


@pytest.mark.parametrize("cls", [ReinforcedMSVM, RobustMSVM, AngleBasedMSVM,
                                 WestonWatkinsMSVM, AdaptiveWeightedSVM],
                         ids=lambda c: c.__name__)
def test_auto_fit_is_the_fit_at_the_resolved_C(cls):
    """C='auto' fits exactly what C=C_ given as a number fits (same objective_, same
    decision values): 'auto' only chooses the papers' C, it changes no objective."""
    X, y = _data(4)
    auto = cls(random_state=0).fit(X, y)
    given = cls(C=auto.C_, random_state=0).fit(X, y)
    assert given.C_ == auto.C_
    assert auto.objective_ == given.objective_
    np.testing.assert_array_equal(auto.decision_function(X), given.decision_function(X))


def test_a_number_is_used_as_given():
    """C given as a number is the C of the fit, whatever k is."""
    X, y = _data(5)
    for C in (0.5, 3, 100.0):
        assert ReinforcedMSVM(C=C).fit(X, y).C_ == float(C)


@pytest.mark.parametrize("cls", [ReinforcedMSVM, AngleBasedMSVM], ids=lambda c: c.__name__)
def test_two_classes_at_auto_is_svc_at_its_default(cls):
    """For k = 2 the per-class-hinge models at C='auto' solve SVC()'s problem: the same
    decision function (to the solvers' tolerance) and the same predictions."""
    X, y = _data(2, n=120)
    ours = cls(tol=1e-8).fit(X, y)
    svc = SVC(tol=1e-8).fit(X, y)
    f, g = ours.decision_function(X), svc.decision_function(X)
    np.testing.assert_allclose(f, g, atol=1e-4 * np.abs(g).max())
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))


def test_warm_start_rescales_from_the_resolved_C():
    """A warm-started refit from a C='auto' fit to another C starts from the dual rescaled
    by C / C_ and reaches the cold fit's objective."""
    X, y = _data(3)
    est = ReinforcedMSVM(warm_start=True, tol=1e-6).fit(X, y)
    assert est.C_ == 3.0
    est.set_params(C=12.0).fit(X, y)
    cold = ReinforcedMSVM(C=12.0, tol=1e-6).fit(X, y)
    assert est.C_ == 12.0
    assert est.objective_ == pytest.approx(cold.objective_, rel=1e-5)


def test_probability_fit_at_auto_is_the_fit_at_the_resolved_C():
    """probability=True at C='auto' makes the same weighted fits as at C=C_ given as a
    number (same number of fits, same probabilities), and its argmax is predict."""
    X, y = _data(3, n=60)
    auto = WestonWatkinsMSVM(probability=True, probability_grid=2).fit(X, y)
    given = WestonWatkinsMSVM(C=auto.C_, probability=True, probability_grid=2).fit(X, y)
    assert auto.n_probability_fits_ == given.n_probability_fits_
    assert auto.probability_C_factor_ == given.probability_C_factor_
    P = auto.predict_proba(X)
    np.testing.assert_array_equal(P, given.predict_proba(X))
    np.testing.assert_array_equal(auto.classes_[P.argmax(axis=1)], auto.predict(X))


def test_an_unknown_C_string_is_refused_with_the_options():
    """C='something' is refused before any work, naming 'auto' and the numbers allowed."""
    X, y = _data(3)
    with pytest.raises(InvalidParameterError, match="'C' parameter.*'auto'"):
        ReinforcedMSVM(C="large").fit(X, y)


def test_robust_truncation_auto_is_half_the_own_class_target():
    """RobustMSVM's truncation='auto' is s = (k - 1)/2 (the paper's T_1 at k = 3)."""
    assert RobustMSVM().get_params()["truncation"] == "auto"
    for k in (3, 5):
        X, y = _data(k)
        auto = RobustMSVM(random_state=0).fit(X, y)
        given = RobustMSVM(truncation=(k - 1) / 2, random_state=0).fit(X, y)
        assert auto.objective_ == given.objective_
        np.testing.assert_array_equal(auto.truncated_, given.truncated_)


@pytest.mark.parametrize("method", ["predict_proba", "predict_log_proba"])
def test_predict_proba_without_probability_names_the_remedy(method):
    """Without probability=True the probability methods are absent (hasattr False, as
    scikit-learn's tools expect) and the AttributeError says to set probability=True."""
    X, y = _data(3)
    est = ReinforcedMSVM().fit(X, y)
    assert not hasattr(est, method)
    with pytest.raises(AttributeError, match=r"probability=True") as info:
        getattr(est, method)(X)
    assert f"ReinforcedMSVM.{method}" in str(info.value)
    assert callable(getattr(ReinforcedMSVM, method))      # the class still documents it


def test_demo_reports_what_it_measured(monkeypatch, capsys):
    """The demo's printed figures are the ones it measured (small sizes here), and msvm's
    probabilities agree with its predictions on every test sample."""
    from msvm import _demo
    from msvm.__main__ import main

    for name, value in (("N_TRAIN", 400), ("N_SMALL", 300), ("N_PROBABILITY", 100),
                        ("N_TEST", 300), ("N_UTILITY", 200), ("N_UTILITY_TEST", 2000)):
        monkeypatch.setattr(_demo, name, value)
    results = _demo.demo(seed=1)
    out = capsys.readouterr().out
    assert set(results) == {"side_by_side", "probabilities", "label_noise", "utility"}
    for rows in results.values():
        for row in rows:
            assert row["model"] in out and f"{row['accuracy']:.4f}" in out
    svc, msvm_prob = results["probabilities"]
    assert msvm_prob["argmax_agrees"] == 1.0
    assert f"{msvm_prob['log_loss']:.3f}" in out
    assert [r["C"] for r in results["side_by_side"]] == [1.0, 1.0, 10.0]
    for row in results["utility"]:
        assert f"{row['utility']:.4f}" in out and f"{row['class_0']:.1%}" in out
    # the ceiling is the utility Bayes rule: no fit's average utility is far above it
    *fits, bayes = results["utility"]
    assert bayes["model"].startswith("utility Bayes rule")
    assert all(row["utility"] <= bayes["utility"] + 0.02 for row in fits)
    # the command line runs this demo with its seed (the run itself is checked above)
    calls = []
    monkeypatch.setattr(_demo, "demo", lambda seed=0: calls.append(seed))
    monkeypatch.setattr("sys.argv", ["msvm"])
    assert main(["demo", "--seed", "1"]) == 0 and calls == [1]
