"""
Decision boundaries of every model
==================================

Each model fitted on one training sample of the nonlinear three-class example of Liu and Yuan
(2011, section 4.1.2; Bayes error 0.288): Gaussian mixtures with standard deviation 1.5,
class 1 split into two clusters above and below the others. All use the Gaussian kernel with
the papers' median heuristic (``gamma='median'``) and the same ``C``; the title gives the
accuracy on a large test sample. The regions are the predicted classes, the points the
training sample (the regions drawn by scikit-learn's
:class:`~sklearn.inspection.DecisionBoundaryDisplay`); the last panel is the Bayes rule.

One common ``C`` is not each model's best: the truncated ``RobustMSVM`` in particular is the
least accurate here, its nonconvex objective wants ``C`` tuned (see :doc:`/guide`), which
:class:`msvm.model_selection.TuningSetSearch` does the papers' way.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.inspection import DecisionBoundaryDisplay

from msvm import (AdaptiveWeightedSVM, AngleBasedMSVM, ReinforcedMSVM, RobustMSVM,
                  WeightedRobustMSVM, WestonWatkinsMSVM)
from msvm.datasets import make_reinforced_example

X, y = make_reinforced_example(n_samples=300, example="4.1.2", random_state=0)
X_test, y_test = make_reinforced_example(n_samples=5000, example="4.1.2", random_state=1)

C = 1.0
models = {
    "ReinforcedMSVM (reinforcement=0.5)": ReinforcedMSVM(C=C, reinforcement=0.5),
    "ReinforcedMSVM (reinforcement=0): LLW": ReinforcedMSVM(C=C, reinforcement=0.0),
    "WestonWatkinsMSVM": WestonWatkinsMSVM(C=C),
    "RobustMSVM (truncation=1)": RobustMSVM(C=C, truncation=1.0),
    "WeightedRobustMSVM (identity utility)": WeightedRobustMSVM(C=C),
    "AdaptiveWeightedSVM (one-step)": AdaptiveWeightedSVM(C=C),
    "AngleBasedMSVM": AngleBasedMSVM(C=C),
}

xx, yy = np.meshgrid(np.linspace(-6, 6, 150), np.linspace(-6, 6, 150))
grid = np.c_[xx.ravel(), yy.ravel()]
colors = np.array(["tab:blue", "tab:orange", "tab:green"])

fig, axes = plt.subplots(2, 4, figsize=(13, 6.8), sharex=True, sharey=True,
                         layout="constrained")
for ax, (name, est) in zip(axes.flat, models.items()):
    est.set_params(kernel="rbf", gamma="median").fit(X, y)
    DecisionBoundaryDisplay.from_estimator(est, grid, ax=ax, response_method="predict",
                                           grid_resolution=150, eps=0, alpha=0.25,
                                           multiclass_colors=list(colors))
    ax.scatter(X[:, 0], X[:, 1], c=colors[y], s=8, edgecolors="none")
    ax.set_title(f"{name}\ntest accuracy {est.score(X_test, y_test):.3f}", fontsize=9)
    ax.set_aspect("equal")

# the last panel: the Bayes rule of the mixture (means and sd from the generator), drawn on
# the same grid by hand (it is a function, not an estimator)
MEANS = [[(2.0, 0.0)], [(0.0, 2.0), (0.0, -2.0)], [(-2.0, 0.0)]]


def bayes_rule(points):
    """argmax_j of the class densities (equal priors, covariance 1.5^2 I)."""
    density = [np.mean([np.exp(-((points - m) ** 2).sum(1) / (2 * 1.5 ** 2)) for m in ms],
                       axis=0) for ms in MEANS]
    return np.argmax(density, axis=0)


ax = axes.flat[-1]
bayes = bayes_rule(grid).reshape(xx.shape)
ax.contourf(xx, yy, bayes, levels=[-0.5, 0.5, 1.5, 2.5], colors=colors, alpha=0.25)
ax.contour(xx, yy, bayes, levels=[0.5, 1.5], colors="k", linewidths=0.8)
ax.scatter(X[:, 0], X[:, 1], c=colors[y], s=8, edgecolors="none")
ax.set_title(f"Bayes rule\ntest accuracy {np.mean(bayes_rule(X_test) == y_test):.3f}",
             fontsize=9)
ax.set_aspect("equal")
plt.show()
