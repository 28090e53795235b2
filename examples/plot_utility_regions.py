"""
Utility-weighted regions
========================

:class:`~msvm.WeightedRobustMSVM` (Liu, Wu and He 2011) takes a utility matrix U (row = true
class, column = predicted class): ``U[l, j]`` is the gain of predicting class j for a point of
class l. The identity treats every error alike; the matrices of the paper's eq. (16)
(:func:`msvm.datasets.utility_matrix`) add a gain ``a`` for some errors:

- U_{1,a}: predicting class 2 for a class-1 point earns ``a``, so class 2's region grows into
  class 1's;
- U_{2,a}: predicting class 2 or 3 for a class-1 point earns ``a``: class 1 shrinks;
- U_{3,a} (the transpose): predicting class 1 for a class-2 or class-3 point earns ``a``:
  class 1 grows.

Each panel fits the linear weighted robust MSVM (``truncation='auto'``, s = -1/2) on one
sample of the paper's Example 1 (three Gaussian classes, standard deviation 0.7) and colours
the predicted regions; the dashed lines are the utility Bayes rule
argmax_j sum_l U[l, j] p(l | x), the regions the fit should approach. The average utility
(:func:`msvm.metrics.average_utility`) on a test sample is in each title.
"""

import matplotlib.pyplot as plt
import numpy as np

from msvm import WeightedRobustMSVM
from msvm.datasets import make_utility_example, utility_matrix
from msvm.metrics import average_utility

X, y = make_utility_example(n_samples=600, example=1, random_state=0)
X_test, y_test = make_utility_example(n_samples=5000, example=1, random_state=1)
C = 1.0 / (len(y) * 2.0 ** -8)              # lambda = 2^-8 in the papers' scaling

a = 0.6
utilities = {"U_0 (identity)": utility_matrix(0), f"U_1,a (a = {a})": utility_matrix(1, a),
             f"U_2,a (a = {a})": utility_matrix(2, a), f"U_3,a (a = {a})": utility_matrix(3, a)}

MEANS = np.array([[1.0, 0.0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]])


def utility_bayes(points, U):
    """argmax_j sum_l U[l, j] p(l | x) for Example 1 (equal priors, sd 0.7)."""
    logp = -((points[:, None, :] - MEANS[None]) ** 2).sum(-1) / (2 * 0.7 ** 2)
    p = np.exp(logp - logp.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return np.argmax(p @ U, axis=1)


lim = 2.6
xx, yy = np.meshgrid(np.linspace(-lim, lim, 200), np.linspace(-lim, lim, 200))
grid = np.c_[xx.ravel(), yy.ravel()]
colors = np.array(["tab:blue", "tab:orange", "tab:green"])

fig, axes = plt.subplots(1, 4, figsize=(15, 4.3), sharey=True, layout="constrained")
for ax, (name, U) in zip(axes, utilities.items()):
    est = WeightedRobustMSVM(C=C, utility=U, kernel="linear").fit(X, y)
    regions = est.predict(grid).reshape(xx.shape)
    ax.contourf(xx, yy, regions, levels=[-0.5, 0.5, 1.5, 2.5], colors=colors, alpha=0.25)
    ax.contour(xx, yy, regions, levels=[0.5, 1.5], colors="k", linewidths=1)
    bayes = utility_bayes(grid, U).reshape(xx.shape)
    ax.contour(xx, yy, bayes, levels=[0.5, 1.5], colors="k", linewidths=1, linestyles="--")
    ax.scatter(X[:, 0], X[:, 1], c=colors[y], s=5, edgecolors="none", alpha=0.7)
    score = average_utility(y_test, est.predict(X_test), utility=U)
    ax.set_title(f"{name}\naverage test utility {score:.3f}", fontsize=10)
    ax.set_aspect("equal")
axes[0].legend(handles=[plt.Line2D([], [], color=c, marker="o", ls="", label=f"class {j + 1}")
                        for j, c in enumerate(colors)]
               + [plt.Line2D([], [], color="k", label="fit"),
                  plt.Line2D([], [], color="k", ls="--", label="utility Bayes rule")],
               loc="lower left", fontsize=8, framealpha=0.9)
plt.show()
