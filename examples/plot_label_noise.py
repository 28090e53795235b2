"""
Flipped labels: accuracy and support vectors
============================================

The truncated hinge loss of :class:`~msvm.RobustMSVM` (Wu and Liu 2007) caps the loss of a
point far on the wrong side of the boundary, so a mislabelled point stops pulling once it is
far enough: the paper's claims are fewer support vectors and less sensitivity to such
points.  Here a share of the training labels of the three-class example of Liu and Yuan
(2011, section 4.1.1; Bayes error 0.204) is flipped to another class at random
(:func:`msvm.datasets.flip_labels`), and three models are fitted on each noisy training set
of 200 samples: ``RobustMSVM`` (truncation s = 1, the paper's T_1), the convex
:class:`~msvm.ReinforcedMSVM` and scikit-learn's SVC.  All use the same Gaussian kernel (the
papers' median heuristic, resolved once on clean data) and the same ``C``; the test set of
5,000 samples is never flipped.  Left: test accuracy; right: the number of support samples
(a training sample with a nonzero dual coefficient), each averaged over a few draws.

Under labels flipped uniformly at random, as here, the gain of the truncation is in the
support set more than in the accuracy; read the table the script prints for the figures of
this run.
"""

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from msvm import ReinforcedMSVM, RobustMSVM
from msvm.datasets import flip_labels, make_reinforced_example
from msvm.exceptions import DegenerateFitWarning

X_test, y_test = make_reinforced_example(n_samples=5000, example="4.1.1", random_state=100)
X0, y0 = make_reinforced_example(n_samples=200, example="4.1.1", random_state=0)
gamma = ReinforcedMSVM(gamma="median").fit(X0, y0).gamma_     # one kernel width for all
shares = [0.0, 0.1, 0.2, 0.3, 0.4]
repeats = 3
C = 10.0
models = {
    "RobustMSVM (truncation=1)": lambda: RobustMSVM(C=C, gamma=gamma, truncation=1.0),
    "ReinforcedMSVM": lambda: ReinforcedMSVM(C=C, gamma=gamma),
    "SVC (one-vs-one)": lambda: SVC(C=C, gamma=gamma),
}


def n_support(est):
    """Training samples with a nonzero dual coefficient."""
    return int(est.n_support_.sum()) if isinstance(est, SVC) else len(est.support_)


accuracy = {name: np.zeros((repeats, len(shares))) for name in models}
support = {name: np.zeros((repeats, len(shares))) for name in models}
for rep in range(repeats):
    X, y = make_reinforced_example(n_samples=200, example="4.1.1", random_state=rep)
    for s, share in enumerate(shares):
        y_noisy = flip_labels(y, share, n_classes=3, random_state=rep)
        for name, make in models.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateFitWarning)
                est = make().fit(X, y_noisy)
            accuracy[name][rep, s] = est.score(X_test, y_test)
            support[name][rep, s] = n_support(est)

print(f"{'share flipped':26s}" + "".join(f"{share:>8.0%}" for share in shares))
for label, table in (("test accuracy", accuracy), ("support samples", support)):
    print(label)
    for name, values in table.items():
        print(f"  {name:24s}" + "".join(f"{v:8.3g}" for v in values.mean(axis=0)))

fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
for ax, table, label in ((axes[0], accuracy, "accuracy on clean test data"),
                         (axes[1], support, "support samples (of 200)")):
    for name, values in table.items():
        ax.errorbar(100 * np.array(shares), values.mean(axis=0),
                    yerr=values.std(axis=0) / np.sqrt(repeats), marker="o", capsize=3,
                    label=name)
    ax.set_xlabel("training labels flipped (%)")
    ax.set_ylabel(label)
axes[0].axhline(1 - 0.204, color="0.5", linestyle=":", label="Bayes rule")
axes[0].legend(fontsize=8)
axes[0].set_title(f"mean over {repeats} training sets (bars: one standard error)")
plt.show()
