"""
Class weights on an imbalanced set
==================================

With one class much rarer than the others, a classifier that minimizes the total loss gives
the rare class little room.  ``class_weight`` multiplies each sample's loss by the weight of
its class (a fit with ``class_weight`` equals the fit with those ``sample_weight``);
``'balanced'`` weighs class j by ``n / (k n_j)``, so that every class carries the same total
weight.  Three Gaussian classes with 600, 300 and 30 training samples; the reinforced MSVM
with the Gaussian kernel, without and with balanced weights, and scikit-learn's SVC with
balanced weights.  Each panel (:class:`~sklearn.inspection.DecisionBoundaryDisplay`) gives the
recall of each class and the balanced accuracy on a test set with the same proportions.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.inspection import DecisionBoundaryDisplay
from sklearn.metrics import balanced_accuracy_score, recall_score
from sklearn.svm import SVC

from msvm import ReinforcedMSVM

CENTERS = np.array([[0.0, 0.0], [2.5, 0.5], [1.2, 2.2]])
SIZES = [600, 300, 30]


def draw(scale, seed):
    """Gaussian classes around CENTERS, SIZES * scale samples each."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(center, 1.0, size=(int(size * scale), 2))
                   for center, size in zip(CENTERS, SIZES)])
    y = np.repeat(np.arange(3), [int(size * scale) for size in SIZES])
    return X, y


X, y = draw(1, 0)
X_test, y_test = draw(10, 1)
models = {
    "ReinforcedMSVM": ReinforcedMSVM(C=10.0),
    "ReinforcedMSVM(class_weight='balanced')": ReinforcedMSVM(C=10.0, class_weight="balanced"),
    "SVC(class_weight='balanced')": SVC(C=10.0, class_weight="balanced"),
}

fig, axes = plt.subplots(1, 3, figsize=(14, 4.8), sharex=True, sharey=True,
                         layout="constrained")
colors = np.array(["tab:blue", "tab:orange", "tab:green"])
for ax, (name, est) in zip(axes, models.items()):
    est.fit(X, y)
    predicted = est.predict(X_test)
    recall = recall_score(y_test, predicted, average=None)
    balanced = balanced_accuracy_score(y_test, predicted)
    print(f"{name:42s} recall per class {np.round(recall, 3)}, balanced accuracy "
          f"{balanced:.3f}")
    DecisionBoundaryDisplay.from_estimator(est, X, ax=ax, response_method="predict",
                                           grid_resolution=150, alpha=0.25,
                                           multiclass_colors=list(colors))
    ax.scatter(X[:, 0], X[:, 1], c=colors[y], s=np.where(y == 2, 18, 4), edgecolors="none")
    ax.set_title(f"{name}\nrecall {' / '.join(f'{r:.2f}' for r in recall)}, "
                 f"balanced accuracy {balanced:.3f}", fontsize=9)
    ax.set_aspect("equal")
plt.show()
