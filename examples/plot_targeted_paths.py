"""
TargetedLocalMSVM: coefficients that vary with a targeted variable
==================================================================

Simulation S1 of Kang, Lin and Zhang (2019): a targeted variable U ~ Uniform(0, 1) (column 0
of X, "age", say) and two features whose class means move with U,
X | Y = y, U ~ N(beta(U) y, I_2) with beta(u) = (sin(4 pi u), 2 exp(-20 (u - 0.5)^2)).
A single linear classifier cannot follow the turning means;
:class:`~msvm.TargetedLocalMSVM` fits a local angle-based MSVM at every point of a grid
over U (samples weighted by a smoothing kernel around it), so its coefficients beta(u) are
functions of u.

Left: the fitted coefficient paths (:func:`msvm.plotting.plot_coef_path`): for each of the
k - 1 = 2 angle-based functions, the intercept and the two feature coefficients along u.
Right: one test point's class scores <f(u, x), W_j> as its u varies with x held fixed
(:func:`msvm.plotting.plot_inner_products`): the predicted class (the largest score)
changes with u. The title compares the test accuracy with the angle-based MSVM that uses U
as an ordinary feature.
"""

import matplotlib.pyplot as plt

from msvm import AngleBasedMSVM, TargetedLocalMSVM
from msvm.datasets import make_targeted_example
from msvm.plotting import plot_coef_path, plot_inner_products

X, y = make_targeted_example(n_samples=600, scenario="S1", random_state=0)
X_test, y_test = make_targeted_example(n_samples=3000, scenario="S1", random_state=1)

tlam = TargetedLocalMSVM(C=1.0, target=0, smoother="epanechnikov", n_grid=25,
                         kernel="linear").fit(X, y)
flat = AngleBasedMSVM(C=1.0, kernel="linear").fit(X, y)
print("grid:", tlam.grid_.round(2))
print("coefficient paths:", tlam.coef_path_.shape, "(grid points, k - 1, intercept + features)")

fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(13, 4.6), layout="constrained")
plot_coef_path(tlam, ax=ax0)
ax0.axhline(0, color="0.7", lw=0.8, zorder=0)
ax0.set_title(f"beta(u): TargetedLocalMSVM test accuracy {tlam.score(X_test, y_test):.3f}\n"
              f"(AngleBasedMSVM with U as a feature: {flat.score(X_test, y_test):.3f})",
              fontsize=10)
x = X_test[0, 1:]
plot_inner_products(tlam, x, ax=ax1)
ax1.set_title(f"class scores of the test point x = ({x[0]:.2f}, {x[1]:.2f}) as u varies",
              fontsize=10)
plt.show()
