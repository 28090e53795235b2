"""A chain of weighted refits on an approximate kernel's features, small enough for tests.

``full_data_chain()`` gives the pieces of one class's chain on the full data (3,000 samples,
3 classes, 60 Nystroem components, C = 5: the levels below t = 0.1 are balanced starts from
the smoothed primal, ``msvm._primal._balanced``) for ``msvm._probability._weighted_chain``.
"""

from sklearn.datasets import make_classification

from msvm import ReinforcedMSVM, _probability


def full_data_chain():
    """(X, y, X_test, est, template, levels, features): the data, the estimator's own fit,
    the refits' template at its C, four levels and its kept feature state."""
    X, y = make_classification(3300, 20, n_informative=10, n_classes=3,
                               n_clusters_per_class=1, random_state=3)
    X, y, X_test = X[:3000], y[:3000], X[3000:]
    est = ReinforcedMSVM(kernel_approximation="nystroem", n_components=60, C=5.0,
                         random_state=0).fit(X, y)
    template = _probability._refit_template(_probability._with_params(
        ReinforcedMSVM(kernel_approximation="nystroem", n_components=60, random_state=0),
        C=est.C_, warm_start=True), 1.0)
    return (X, y, X_test, est, template, _probability.probability_levels(4),
            est._kept_feature_state(X))
