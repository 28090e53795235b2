"""
Class probabilities against Platt scaling and calibration
=========================================================

``probability=True`` makes an msvm model estimate P(Y = j | x) from weighted refits of the
model itself (Wang, Shen and Liu 2008; Wu, Zhang and Liu 2010), with one property that
scikit-learn's SVC cannot promise: the argmax of ``predict_proba`` is ``predict``.  Here the
reinforced MSVM is compared, on the three-class example of Liu and Yuan (2011, section 4.1.2),
whose true class probabilities are known, with

- ``CalibratedClassifierCV(SVC(), ensemble=False)``: Platt scaling (a sigmoid per class of
  the SVC's scores, fitted on cross-validated scores) of one SVC fitted on all the data, what
  ``SVC(probability=True)`` did before scikit-learn 1.9 deprecated it for this;
- ``CalibratedClassifierCV(SVC())``: the same scaling averaged over five SVCs, each fitted on
  four folds and calibrated on the fifth.

The table gives the test log loss, the mean absolute error against the true probabilities,
the share of test points whose probability argmax differs from the classifier's own
prediction (the msvm model's ``predict``; for the calibrated SVCs, the prediction of the SVC
fitted on all the training data, the classifier they calibrate), and the fit time
(CPU seconds; the docs are built on a shared machine, so read the times as rough ratios).  The
reliability diagram pools the three classes: a point (predicted probability, observed
frequency) on the diagonal is a calibrated estimate.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import log_loss
from sklearn.svm import SVC

from msvm import ReinforcedMSVM
from msvm.datasets import make_reinforced_example, reinforced_example_proba

X, y = make_reinforced_example(n_samples=300, example="4.1.2", random_state=0)
X_test, y_test = make_reinforced_example(n_samples=3000, example="4.1.2", random_state=1)
truth = reinforced_example_proba(X_test, example="4.1.2")

models = {
    "ReinforcedMSVM(probability=True)": ReinforcedMSVM(gamma="median", probability=True,
                                                       random_state=0),
    "CalibratedClassifierCV(SVC(), ensemble=False)": CalibratedClassifierCV(SVC(),
                                                                            ensemble=False),
    "CalibratedClassifierCV(SVC())": CalibratedClassifierCV(SVC()),
}

svc_predict = SVC().fit(X, y).predict(X_test)
rows, probas = [], {}
for name, est in models.items():
    start = time.process_time()
    est.fit(X, y)
    seconds = time.process_time() - start
    proba = est.predict_proba(X_test)
    probas[name] = proba
    own = est.predict(X_test) if name.startswith("Reinforced") else svc_predict
    disagree = np.mean(est.classes_[proba.argmax(axis=1)] != own)
    rows.append((name, log_loss(y_test, proba), np.abs(proba - truth).mean(), disagree,
                 seconds))

print(f"{'model':46s} {'log loss':>9s} {'|p - p_true|':>13s} {'argmax != own':>14s}"
      f" {'fit CPU s':>10s}")
for name, loss, error, disagree, seconds in rows:
    print(f"{name:46s} {loss:9.4f} {error:13.4f} {disagree:14.2%} {seconds:10.2f}")
print(f"{'true probabilities':46s} {log_loss(y_test, truth):9.4f}")

# %%
# Left, the reliability diagram, pooled over the classes: bins of the predicted probability
# of each class against the observed frequency of that class in the bin.  Right, the
# estimated probability of class 1 (the two-cluster class) along the vertical line x1 = 0,
# against the truth.

bins = np.linspace(0, 1, 11)
onehot = np.eye(3)[y_test].ravel()
fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), layout="constrained")
ax = axes[0]
ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", label="calibrated")
for name, proba in probas.items():
    p = proba.ravel()
    which = np.clip(np.digitize(p, bins) - 1, 0, len(bins) - 2)
    filled = [b for b in range(len(bins) - 1) if np.any(which == b)]
    ax.plot([p[which == b].mean() for b in filled], [onehot[which == b].mean() for b in filled],
            marker="o", label=name)
ax.set_xlabel("predicted probability")
ax.set_ylabel("observed frequency")
ax.set_title("reliability (3,000 test points, three classes pooled)")
ax.legend(fontsize=8)

line = np.c_[np.zeros(200), np.linspace(-6, 6, 200)]
ax = axes[1]
ax.plot(line[:, 1], reinforced_example_proba(line, example="4.1.2")[:, 1], color="k",
        linewidth=2, label="true P(Y = 1 | x)")
for name, est in models.items():
    ax.plot(line[:, 1], est.predict_proba(line)[:, 1], label=name)
ax.set_xlabel("x2 (x1 = 0)")
ax.set_ylabel("P(Y = 1 | x)")
ax.set_title("class 1 along x1 = 0")
ax.legend(fontsize=8)
plt.show()
