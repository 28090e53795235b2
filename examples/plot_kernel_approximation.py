"""
Approximate kernels on a large training set
===========================================

An exact kernel fit needs kernel rows between all training samples: its cost grows faster
than n.  With ``kernel_approximation='nystroem'`` (or ``'rff'``, random Fourier features) an
msvm model replaces the kernel by the inner products of ``n_components`` explicit features and
fits the linear model on them, its own objective for that approximate kernel; the map is kept
in ``feature_map_`` and prediction costs O(n_components) per sample.  scikit-learn composes
the same idea as ``Pipeline(Nystroem(), LinearSVC())`` (LinearSVC: one-vs-rest).

A synthetic four-class set (``make_classification``, 20 features) of up to 12,000 training
samples; the pipelines use 250 Nystroem components of the same Gaussian kernel.  The figure
gives the CPU time of the fit and the test accuracy against n.  (The documentation is built on
a shared machine: the times are CPU seconds of this run, comparable with each other.)
"""

import time

import matplotlib.pyplot as plt
from sklearn.datasets import make_classification
from sklearn.kernel_approximation import Nystroem
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from msvm import ReinforcedMSVM, WestonWatkinsMSVM

X_all, y_all = make_classification(n_samples=16000, n_features=20, n_informative=10,
                                   n_classes=4, n_clusters_per_class=2, class_sep=1.0,
                                   random_state=0)
X_all = StandardScaler().fit_transform(X_all)
X_test, y_test = X_all[12000:], y_all[12000:]
gamma, components = 1.0 / 20, 250
sizes = [1000, 4000, 12000]

models = {
    "ReinforcedMSVM (nystroem)": lambda: ReinforcedMSVM(
        gamma=gamma, kernel_approximation="nystroem", n_components=components, random_state=0),
    "WestonWatkinsMSVM (nystroem)": lambda: WestonWatkinsMSVM(
        gamma=gamma, kernel_approximation="nystroem", n_components=components, random_state=0),
    "Pipeline(Nystroem, LinearSVC)": lambda: make_pipeline(
        Nystroem(gamma=gamma, n_components=components, random_state=0), LinearSVC()),
}

seconds = {name: [] for name in models}
accuracy = {name: [] for name in models}
for n in sizes:
    X, y = X_all[:n], y_all[:n]
    for name, make in models.items():
        est = make()
        start = time.process_time()
        est.fit(X, y)
        seconds[name].append(time.process_time() - start)
        accuracy[name].append(est.score(X_test, y_test))

print(f"{'n':>6s}  " + "  ".join(f"{name:>30s}" for name in models))
for i, n in enumerate(sizes):
    print(f"{n:6d}  " + "  ".join(f"{seconds[name][i]:8.2f} s CPU, acc {accuracy[name][i]:.3f}"
                                  for name in models))

fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
for name in models:
    axes[0].loglog(sizes, seconds[name], marker="o", label=name)
    axes[1].semilogx(sizes, accuracy[name], marker="o", label=name)
axes[0].set_xlabel("training samples")
axes[0].set_ylabel("fit time (CPU seconds)")
axes[1].set_xlabel("training samples")
axes[1].set_ylabel("test accuracy (4,000 samples)")
axes[0].legend(fontsize=8)
plt.show()
