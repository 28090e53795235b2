"""
Choosing C on a tuning set
==========================

The papers choose the regularization on a separate tuning set: fit on the training set for
every lambda of a grid (``C = 1 / (n lambda)``), score each fit on the tuning set, keep the
best.  :class:`~msvm.model_selection.TuningSetSearch` does this along the grid from the
largest lambda down, each fit warm-started from the previous one, over a grid of kernel widths
too (``param_grid``).  Here the reinforced MSVM on the nonlinear three-class example of Liu and
Yuan (2011, section 4.1.2; Bayes error 0.288), training and tuning sets of 200 samples each.

The left panel is the validation curve (tuning accuracy against lambda, one line per kernel
width) drawn from ``results_``; the right panel the selected model's regions
(:class:`~sklearn.inspection.DecisionBoundaryDisplay`) with its test accuracy.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.inspection import DecisionBoundaryDisplay

from msvm import ReinforcedMSVM
from msvm.datasets import make_reinforced_example
from msvm.model_selection import TuningSetSearch, lambda_grid

X, y = make_reinforced_example(n_samples=200, example="4.1.2", random_state=0)
X_tune, y_tune = make_reinforced_example(n_samples=200, example="4.1.2", random_state=1)
X_test, y_test = make_reinforced_example(n_samples=5000, example="4.1.2", random_state=2)

lambdas = lambda_grid(-12, 2)                  # 2^-12 .. 2^2
search = TuningSetSearch(ReinforcedMSVM(kernel="rbf"), lambdas=lambdas,
                         param_grid={"gamma": [0.05, 0.2, 1.0]})
search.fit(X, y, X_tune=X_tune, y_tune=y_tune)
best = search.best_estimator_
print(f"selected: lambda = 2^{np.log2(search.best_lambda_):.0f}, "
      f"C = {search.best_params_['C']:.4g}, gamma = {search.best_params_['gamma']}")
print(f"tuning accuracy {search.best_score_:.3f}, test accuracy {best.score(X_test, y_test):.3f}")

# %%
# Left, the validation curve, from ``results_`` (one entry per fit); right, the selected
# model.

fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
ax = axes[0]
results = search.results_
gammas = np.array([params["gamma"] for params in results["params"]])
for gamma in np.unique(gammas):
    mine = gammas == gamma
    ax.plot(np.log2(results["lambda"][mine]), results["score"][mine], marker="o",
            markersize=3, label=f"gamma = {gamma:g}")
ax.axvline(np.log2(search.best_lambda_), color="0.5", linestyle=":", label="selected")
ax.set_xlabel("log2(lambda)   (C = 1 / (n lambda))")
ax.set_ylabel("tuning-set accuracy")
ax.set_title("validation curve")
ax.legend(fontsize=8)

ax = axes[1]
colors = np.array(["tab:blue", "tab:orange", "tab:green"])
DecisionBoundaryDisplay.from_estimator(best, X, ax=ax, response_method="predict",
                                       grid_resolution=150, alpha=0.25,
                                       multiclass_colors=list(colors))
ax.scatter(X[:, 0], X[:, 1], c=colors[y], s=10, edgecolors="none")
ax.set_title(f"selected ReinforcedMSVM: test accuracy {best.score(X_test, y_test):.3f}")
ax.set_aspect("equal")
plt.show()
