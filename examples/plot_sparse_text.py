"""
Sparse, text-like input
=======================

msvm's linear solvers take scipy.sparse matrices as they are (CSR rows, no densifying), as
for bag-of-words text.  The documents here are synthetic, so that the example runs offline:
each of four topics draws words from its own Zipf-like distribution over a 5,000-word
vocabulary, mixed with a shared background distribution, with Poisson document lengths; the
counts are TF-IDF weighted (scikit-learn's ``TfidfTransformer``) into a CSR matrix that is
under 1% nonzero.

Linear-kernel :class:`~msvm.WestonWatkinsMSVM` and :class:`~msvm.ReinforcedMSVM` are compared
with scikit-learn's ``LinearSVC`` (one-vs-rest).  Left: the test accuracy against the
regularization (``C``, the papers' ``1 / (n lambda)``); right: the ten words with the
largest coefficients ``coef_[j]`` of each topic in the Weston-Watkins fit at the best C,
against the words that define the topic (marked).
"""

import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.svm import LinearSVC

from msvm import ReinforcedMSVM, WestonWatkinsMSVM
from msvm.exceptions import DegenerateFitWarning

rng = np.random.default_rng(0)
n_topics, vocabulary, n_docs = 4, 5000, 1500
SIGNAL = 0.06                      # the share of a document's words drawn from its topic
background = 1.0 / np.arange(1, vocabulary + 1)            # Zipf over the whole vocabulary
background /= background.sum()
topic_words = [rng.choice(vocabulary, 50, replace=False) for _ in range(n_topics)]
topics = []
for words in topic_words:
    p = (1 - SIGNAL) * background
    weights = np.linspace(2, 0.1, len(words))
    p[words] += SIGNAL * weights / weights.sum()
    topics.append(p / p.sum())


def documents(n, seed):
    """n documents (CSR word counts) and their topics."""
    draw = np.random.default_rng(seed)
    y = draw.integers(n_topics, size=n)
    lengths = draw.poisson(40, size=n) + 5
    rows = [np.bincount(draw.choice(vocabulary, length, p=topics[label]), minlength=vocabulary)
            for label, length in zip(y, lengths)]
    return sp.csr_matrix(np.array(rows, dtype=np.float64)), y


counts, y = documents(n_docs, 1)
counts_test, y_test = documents(2000, 2)
tfidf = TfidfTransformer().fit(counts)
X, X_test = tfidf.transform(counts), tfidf.transform(counts_test)
print(f"X: {X.shape[0]} x {X.shape[1]} CSR, {X.nnz / np.prod(X.shape):.2%} nonzero")

Cs = [0.01, 0.1, 1.0, 10.0]
models = {
    "WestonWatkinsMSVM": lambda C: WestonWatkinsMSVM(kernel="linear", C=C),
    "ReinforcedMSVM": lambda C: ReinforcedMSVM(kernel="linear", C=C),
    "LinearSVC (one-vs-rest)": lambda C: LinearSVC(C=C),
}
accuracy = {name: [] for name in models}
fits = {}
for name, make in models.items():
    for C in Cs:
        start = time.process_time()
        with warnings.catch_warnings():
            # at the smallest C a model may predict one topic everywhere (accuracy 0.25):
            # msvm says so with a DegenerateFitWarning; the table shows it
            warnings.simplefilter("ignore", DegenerateFitWarning)
            est = make(C).fit(X, y)
        seconds = time.process_time() - start
        accuracy[name].append(est.score(X_test, y_test))
        fits[name, C] = est
        print(f"{name:24s} C = {C:6g}: test accuracy {accuracy[name][-1]:.3f}, "
              f"fit {seconds:.2f} s CPU")

fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
for name in models:
    axes[0].semilogx(Cs, accuracy[name], marker="o", label=name)
axes[0].set_xlabel("C")
axes[0].set_ylabel("test accuracy (2,000 documents)")
axes[0].legend(fontsize=8)

best_C = Cs[int(np.argmax(accuracy["WestonWatkinsMSVM"]))]
coef = fits["WestonWatkinsMSVM", best_C].coef_
ax = axes[1]
for j in range(n_topics):
    top = np.argsort(coef[j])[::-1][:10]
    defining = np.isin(top, topic_words[j])
    ax.scatter(np.full(10, j), np.arange(10), c=np.where(defining, "tab:green", "tab:red"),
               s=30)
    for rank, word in enumerate(top):
        ax.annotate(f"w{word}", (j, rank), xytext=(6, -3), textcoords="offset points",
                    fontsize=7)
ax.set_xticks(range(n_topics), [f"topic {j}" for j in range(n_topics)])
ax.set_xlim(-0.5, n_topics)
ax.set_ylim(9.7, -0.7)
ax.set_ylabel("rank of the coefficient")
ax.set_title(f"top words, WestonWatkinsMSVM at C = {best_C:g}\n"
             "(green: a word that defines the topic)")
plt.show()
