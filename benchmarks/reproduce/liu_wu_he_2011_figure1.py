"""Liu, Wu and He (2011), Figure 1: how the decision boundaries move with the utility.

Paper's protocol (section 5.1, Example 1).  Y uniform on three classes, X | Y = y ~
N(mu_y, 0.7^2 I_2) with mu_1 = (1, 0), mu_2 = (-1/2, sqrt(3)/2), mu_3 = (-1/2, -sqrt(3)/2)
(no label noise); linear learning with n = 1600; three panels for U_{1,a}, U_{2,a},
U_{3,a} (eq. (16)), each showing the decision boundaries for several a.  The paper's text:
with U_{1,a} the class 1 region shrinks and the class 2 region grows as a increases; with
U_{2,a} the regions of classes 2 and 3 grow at the expense of class 1; with U_{3,a} class 1
grows at the expense of classes 2 and 3.

Choices where the paper is silent or ambiguous (ours):

- Values of a: 0, 0.2, 0.4, 0.6, 0.8 (the paper's Table 1 values; the figure's own values
  are not legible in the text; a = 0 is U_0, the same fit in every panel).
- Method: the weighted RSVM, ``WeightedRobustMSVM(utility=U, truncation='auto')`` (s = -1/2,
  the paper's recommendation), linear kernel, one training set shared by all fits.
- lambda: fixed at 2^-8 (C = 1/(n lambda) = 0.16), not tuned: the figure illustrates the
  boundary shifts, and a tuning set on noiseless data often selects a near-zero fit (large
  lambda) whose boundaries are still defined but arbitrary in scale.
- A second row (not in the paper) draws the utility Bayes rule argmax_j sum_l U_lj p_l(x)
  for the same U and a, the boundaries the fits should approach.
"""

import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from benchmarks.reproduce import _common, _liu_wu_he_2011  # noqa: E402
from msvm import WeightedRobustMSVM  # noqa: E402
from msvm.datasets import make_utility_example, utility_matrix  # noqa: E402
from oracle import weighted_loss  # noqa: E402

NAME = "liu_wu_he_2011_figure1"
N_TRAIN = 1600
A_VALUES = (0.0, 0.2, 0.4, 0.6, 0.8)
LAMBDA = 2.0 ** -8
LIM = 2.6


def draw_boundaries(ax, xx, yy, scores, color, lw=1.6, ls="-"):
    """Contour f_i - f_j = 0 where i, j are the two largest of the three scores."""
    for i, j in ((0, 1), (0, 2), (1, 2)):
        k = 3 - i - j
        d = scores[..., i] - scores[..., j]
        mask = scores[..., k] > np.maximum(scores[..., i], scores[..., j])
        if np.all(mask):
            continue
        ax.contour(xx, yy, np.ma.array(d, mask=mask), levels=[0.0], colors=[color],
                   linewidths=lw, linestyles=ls)


def truncated_objective(coef, intercept, X, y, U, C, s):
    """The WRSVM objective (1/2) sum ||w_j||^2 + C sum_i sum_j U_{y_i j} T_s(g_j) of a linear f."""
    F = X @ coef.T + intercept
    return 0.5 * float(np.sum(coef ** 2)) + C * weighted_loss(F, y, np.ones(len(y)), U, s)


def region_shares(scores):
    """Fraction of the plotted square assigned to each class."""
    lab = np.argmax(scores, axis=-1)
    return [float(np.mean(lab == c)) for c in range(3)]


def main(argv=None):
    started = time.perf_counter()
    args = _common.parse_args(__doc__.splitlines()[0], argv, default_reps=1)
    n = 150 if args.quick else N_TRAIN
    X, y = make_utility_example(n, example=1, random_state=_liu_wu_he_2011.rep_seeds(args.seed, 0,
                                                                              1)[0])
    grid = np.linspace(-LIM, LIM, 120 if args.quick else 400)
    xx, yy = np.meshgrid(grid, grid)
    G = np.column_stack([xx.ravel(), yy.ravel()])
    cmap = plt.get_cmap("viridis")
    colors = {a: cmap(0.9 * i / (len(A_VALUES) - 1)) for i, a in enumerate(A_VALUES)}
    log = _liu_wu_he_2011.WarningLog()
    C = 1.0 / (n * LAMBDA)

    fits, models = {}, {}
    for a in A_VALUES:
        for kind in ((1, 2, 3) if a > 0 else (0,)):
            U = utility_matrix(kind, a)
            with log.catch("WRSVM") as count:
                est = count(WeightedRobustMSVM(C=C, utility=U, truncation="auto",
                                               kernel="linear").fit(X, y))
            fits[(kind, a)] = est.decision_function(G).reshape(xx.shape + (3,))
            models[(kind, a)] = est

    # DC finds a local minimum: check whether another fit of the same panel (or U_0's) has a
    # lower objective under this U than the fit itself
    local = []
    for (kind, a), est in models.items():
        if kind == 0:
            continue
        U = utility_matrix(kind, a)
        own = est.objective_
        others = [(truncated_objective(other.coef_, other.intercept_, X, y, U, C,
                                       est.truncation_), key)
                  for key, other in models.items()
                  if key[0] in (0, kind) and key != (kind, a)]
        val, key = min(others)
        if val < own - 1e-6 * max(1.0, abs(own)):
            local.append((kind, a, key, own, val))

    fig, axes = plt.subplots(2, 3, figsize=(13.5, 9.2), sharex=True, sharey=True)
    shares = {}
    marker_colors = ["tab:red", "tab:blue", "tab:green"]
    for col, kind in enumerate((1, 2, 3)):
        ax, axb = axes[0, col], axes[1, col]
        for c in range(3):
            ax.scatter(X[y == c, 0], X[y == c, 1], s=4, alpha=0.25, color=marker_colors[c],
                       linewidths=0)
        for a in A_VALUES:
            key = (0, 0.0) if a == 0 else (kind, a)
            U = utility_matrix(*key)
            draw_boundaries(ax, xx, yy, fits[key], colors[a])
            bayes = (_liu_wu_he_2011.posterior(G, 1, 0.0) @ U).reshape(xx.shape + (3,))
            draw_boundaries(axb, xx, yy, bayes, colors[a])
            shares[f"U_{kind},{a:g}"] = {"fit": region_shares(fits[key]),
                                         "bayes": region_shares(bayes)}
        for axis in (ax, axb):
            for c, mu in enumerate(_liu_wu_he_2011._MEANS):
                axis.text(*(1.7 * mu), str(c + 1), fontsize=15, weight="bold",
                          color=marker_colors[c], ha="center", va="center")
            axis.set_xlim(-LIM, LIM)
            axis.set_ylim(-LIM, LIM)
            axis.set_aspect("equal")
        ax.set_title(f"WRSVM, $U_{{{kind},a}}$")
        axb.set_title(f"utility Bayes rule, $U_{{{kind},a}}$")
    handles = [plt.Line2D([], [], color=colors[a], lw=2, label=f"a = {a:g}") for a in A_VALUES]
    fig.legend(handles=handles, loc="lower center", ncol=len(A_VALUES), frameon=False)
    fig.suptitle(f"Liu, Wu and He (2011) Figure 1 (Example 1, linear WRSVM, s = -1/2, n = {n}, "
                 f"lambda = 2^{int(np.log2(LAMBDA))}); bottom row: Bayes rule (ours)")
    fig.tight_layout(rect=(0, 0.04, 1, 0.96))
    path = _common.figure_path(args, NAME)
    fig.savefig(path, dpi=90 if args.quick else 120)
    plt.close(fig)
    print(f"wrote {path}", file=sys.stderr)

    rows = []
    for kind in (1, 2, 3):
        for a in A_VALUES:
            s = shares[f"U_{kind},{a:g}"]
            rows.append([f"U_{{{kind},{a:g}}}" if a > 0 else "U_0",
                         " / ".join(f"{v:.2f}" for v in s["fit"]),
                         " / ".join(f"{v:.2f}" for v in s["bayes"])])
    md = ["# Liu, Wu and He (2011), Figure 1: decision boundaries vs the utility matrix", "",
          f"Example 1 (three Gaussian classes, no label noise), n = {n}, linear WRSVM "
          f"(s = -1/2) at the fixed lambda = 2^{int(np.log2(LAMBDA))} (C = {C:.3g}; not "
          f"tuned, our choice), a = {', '.join(f'{a:g}' for a in A_VALUES)}; panels "
          f"U_{{1,a}}, U_{{2,a}}, U_{{3,a}}. Figure: `{path.name}` (top: our fits; bottom, "
          f"not in the paper: the utility Bayes rule). The table gives the share of the "
          f"plotted square [-{LIM}, {LIM}]^2 assigned to classes 1 / 2 / 3 — the paper "
          f"describes these shifts only in words (section 5.1).", "",
          _common.markdown_table(["utility", "fit: class 1 / 2 / 3", "Bayes: class 1 / 2 / 3"],
                                 rows), "",
          _common.provenance(args, started), "", "## Notes", ""]
    notes = ["The paper's expectations: U_{1,a}: class 1 shrinks, class 2 grows; U_{2,a}: "
             "classes 2 and 3 grow, class 1 shrinks; U_{3,a}: class 1 grows, 2 and 3 shrink."
             ] + [
        f"U_{{{k},{a:g}}}: the DC fit (objective {own:.2f}) is a local minimum: the fit for "
        + (f"U_{{{kk},{aa:g}}}" if kk else "U_0") + f" has the lower objective {val:.2f} "
        f"under U_{{{k},{a:g}}} (the DC algorithm starts from the untruncated solution, as "
        f"in the paper's section 4)." for k, a, (kk, aa), own, val in local] + log.notes(
            ["WRSVM"])
    md += [f"- {x}" for x in notes]
    _common.write_outputs(args, NAME, "\n".join(md),
                          {"figure": path.name, "n_train": n, "lambda": LAMBDA, "C": C,
                           "region_shares": shares, "quick": args.quick,
                           "dc_local_minima": [{"utility": [k, a], "better_fit": list(key),
                                                "objective": own, "other_objective": val}
                                               for k, a, key, own, val in local],
                           **log.payload()})


if __name__ == "__main__":
    main()
