"""Liu and Yuan (2011), reinforced MSVM, Figure 3: typical classification boundaries.

Paper's figure (section 4.1, Liu and Yuan (2011)): boundaries of the reinforced MSVMs with gamma =
0, 0.5, 1.  Left panel: linear kernel, Example 4.1.1, n = 50.  Right panel: Gaussian kernel,
Example 4.1.2, n = 100 (sigma the median between-class pairwise distance of the training
inputs).  The paper draws the Bayes boundary as well; lambda is tuned as in Tables 1 and 2.

What we draw: the training points of one data set coloured by class, the Bayes boundary
(argmax of the known class densities with equal priors: N(mu_j, 1.5^2 I), the middle class of
4.1.2 the equal mixture of N((0, 2)) and N((0, -2))) and the boundaries of ReinforcedMSVM with
gamma = 0, 0.5 and 1, each with lambda in 2^-16..2^15 chosen on an independent tuning set of
the same size (``TuningSetSearch``).  Boundaries are the zero sets of f_a - f_b where a or
b is the predicted class, evaluated on a grid.  The data set is the one of repetition 1 of
the corresponding table script (same seeds), so the paper's "typical" is ours by
construction, not by selection; the legend gives each fit's test error on that
repetition's 10^5-point test set.

Run ``python -m benchmarks.reproduce.liu_yuan_2011_figure3 [--quick] [--seed S]``; writes
liu_yuan_2011_figure3.png (and a short .md/.json with the selected lambdas and test errors).
"""

import sys
import time

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from benchmarks.reproduce import _liu_yuan_2011 as S  # noqa: E402
from benchmarks.reproduce._common import (figure_path, markdown_table, parse_args,  # noqa: E402
                                          provenance, write_outputs)
from msvm.model_selection import median_gamma  # noqa: E402

PANELS = [("4.1.1", 50, "linear", "Example 4.1.1, linear kernel, n = 50"),
          ("4.1.2", 100, "gauss", "Example 4.1.2, Gaussian kernel, n = 100")]
SHOWN = ["gamma=0", "gamma=0.5", "gamma=1"]
STYLES = {"bayes": dict(color="black", linestyle="-", linewidth=2.2),
          "gamma=0": dict(color="tab:red", linestyle="--", linewidth=1.6),
          "gamma=0.5": dict(color="tab:blue", linestyle="-", linewidth=1.6),
          "gamma=1": dict(color="tab:green", linestyle=":", linewidth=2.0)}
CLASS_STYLE = [dict(color="tab:orange", marker="o"), dict(color="tab:purple", marker="^"),
               dict(color="tab:cyan", marker="s")]


def draw_boundaries(ax, xx, yy, F, style):
    """Zero sets of F_a - F_b restricted to where a or b is the argmax (each pair once)."""
    label = np.argmax(F, axis=-1)
    for a in range(3):
        for b in range(a + 1, 3):
            diff = F[..., a] - F[..., b]
            mask = (label != a) & (label != b)
            if not mask.all():
                ax.contour(xx, yy, np.ma.masked_where(mask, diff), levels=[0.0], **_cs(style))


def _cs(style):
    return dict(colors=style["color"], linestyles=style["linestyle"],
                linewidths=style["linewidth"])


def main(argv=None):
    started = time.perf_counter()
    args = parse_args("Liu & Yuan (2011) Figure 3: RMSVM boundaries, gamma = 0, 0.5, 1.",
                      argv)
    lambdas = S.lambda_grid_for(args)
    test_size = 2000 if args.quick else S.TEST_SIZE
    resolution = 120 if args.quick else 400
    fig, axes = plt.subplots(1, 2, figsize=(12, 7.2))
    rows, payload = [], {"panels": []}
    with threadpool_limits(1):
        for ax, (example, n, kernel, title) in zip(axes, PANELS):
            ex_id = int(example.replace(".", ""))
            X, y = S.draw(example, n, args.seed, ex_id, 0, S.ROLE_TRAIN, n)
            X_tune, y_tune = S.draw(example, n, args.seed, ex_id, 0, S.ROLE_TUNE, n)
            X_test, y_test = S.draw(example, test_size, args.seed, ex_id, 0, S.ROLE_TEST)
            gamma_value = median_gamma(X, y) if kernel == "gauss" else None
            K_test = S.test_gram(kernel, X_test, X, gamma_value)
            lim = float(np.ceil(np.abs(X).max() + 0.5))
            g = np.linspace(-lim, lim, resolution)
            xx, yy = np.meshgrid(g, g)
            grid = np.column_stack([xx.ravel(), yy.ravel()])
            bayes = S.log_class_densities(grid, example).reshape(resolution, resolution, 3)
            bayes_err = float(np.mean(S.bayes_predict(X_test, example) != y_test))
            draw_boundaries(ax, xx, yy, bayes, STYLES["bayes"])
            handles = [Line2D([], [], **STYLES["bayes"],
                              label=f"Bayes (test error {bayes_err:.3f})")]
            panel = {"example": example, "n": n, "kernel": kernel, "gamma_kernel": gamma_value,
                     "bayes_test_error": bayes_err, "fits": {}}
            for method in SHOWN:
                fit, lam, n_warn = S.tuned_msvm(method, kernel, X, y, X_tune, y_tune, lambdas)
                err = S.test_error(fit, kernel, X_test, y_test, K_test)
                F = fit.decision_function(grid).reshape(resolution, resolution, 3)
                draw_boundaries(ax, xx, yy, F, STYLES[method])
                handles.append(Line2D([], [], **STYLES[method],
                                      label=f"RMSVM {method.replace('gamma', 'γ')} "
                                            f"(test error {err:.3f})"))
                panel["fits"][method] = {"lambda": lam, "test_error": err,
                                         "convergence_warnings": n_warn}
                rows.append([title, method, f"2^{np.log2(lam):.0f}", f"{err:.4f}", str(n_warn)])
            for j in range(3):
                ax.scatter(*X[y == j].T, s=22, edgecolors="k", linewidths=0.4,
                           label=f"class {j + 1}", **CLASS_STYLE[j])
            ax.set_xlim(-lim, lim)
            ax.set_ylim(-lim, lim)
            ax.set_aspect("equal")
            ax.set_title(title)
            ax.set_xlabel("$x_1$")
            ax.set_ylabel("$x_2$")
            pts = ax.get_legend_handles_labels()[0]
            ax.legend(handles=handles + pts, loc="upper center", bbox_to_anchor=(0.5, -0.1),
                      ncol=2, fontsize=8.5, frameon=False)
            payload["panels"].append(panel)
    fig.suptitle("Liu & Yuan (2011), Figure 3: reinforced MSVM boundaries, γ = 0, 0.5, 1 "
                 "(λ tuned on a tuning set)", fontsize=11)
    fig.tight_layout()
    png = figure_path(args, "liu_yuan_2011_figure3")
    fig.savefig(png, dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"wrote {png}", file=sys.stderr)

    md = "\n".join([
        "# Liu & Yuan (2011), Figure 3: typical RMSVM boundaries", "",
        "Left: Example 4.1.1, linear kernel, n = 50; right: Example 4.1.2, Gaussian kernel "
        "(median between-class sigma), n = 100. Training points by class, the Bayes boundary "
        "(black), and ReinforcedMSVM with gamma = 0, 0.5, 1, lambda in "
        f"{lambdas.min():g}..{lambdas.max():g} chosen on an independent tuning set; data of "
        f"repetition 1 of the table scripts, test errors on {test_size} test points.", "",
        f"![Figure 3]({png.name})", "",
        markdown_table(["panel", "method", "selected lambda", "test error",
                        "fits not converged"], rows), "",
        provenance(args, started)])
    print(md)
    payload["provenance"] = provenance(args, started)
    write_outputs(args, "liu_yuan_2011_figure3", md, payload)
    return payload


if __name__ == "__main__":
    main()
