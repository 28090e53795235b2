"""Independent reference implementations (oracles) of the msvm models, for tests and benchmarks.

Nothing in this package imports msvm: the kernels, the losses, the objectives and the primal
solvers are written from the formulas of the model contract, ``docs/models.md``, and nothing
else, so the tests and benchmarks compare the compiled solver with code that shares no line with
it. The package is not installed with msvm (it is not in the wheel); the tests and the
benchmarks import it from the repository root.

Modules
-------
kernels
    The kernels of the contract (linear, poly, rbf), the resolution of ``gamma`` and the
    smoothing kernels of the targeted model.
linalg
    Square roots of positive semidefinite matrices.
losses
    Every model's loss, margins and objective in plain NumPy, and the DC linearizations.
primal
    The primal problems solved by cvxpy + Clarabel: accurate reference solves for the tests and
    the generic-solver baselines of the benchmarks.
dual
    The Lagrange dual of the reinforced MSVM (a lower bound, for checking the primal solver).
dual_qp
    The dual QP of a dual-problem description, written out densely and solved by cvxpy +
    Clarabel (the reference of the tests that hand problems to the compiled solver directly).
problems
    Random small classification problems for property tests.
"""

from .dual import dual_objective, signed_dual
from .kernels import (kernel_matrix, linear_kernel, poly_kernel, rbf_kernel, resolve_gamma,
                      smoothing_kernel, sq_dists)
from .linalg import psd_sqrt, range_factor
from .losses import (hinge_margins, loss_weights, margins, penalty, reinforced_loss,
                     reinforced_losses, reinforced_objective, robust_beta, robust_linearized_loss,
                     robust_loss, robust_losses, vertices, weighted_beta,
                     weighted_linearized_loss, weighted_loss, weighted_losses, ww_loss, ww_losses)
from .primal import (C_TOL, cvx_angle_loss, cvx_robust_loss, cvx_weighted_loss, cvx_ww_loss,
                     fit_generic, fit_generic_angle, fit_generic_margin, primal_fit,
                     reference_fit)
from .problems import make_problem

__all__ = [
    "C_TOL", "cvx_angle_loss", "cvx_robust_loss", "cvx_weighted_loss", "cvx_ww_loss",
    "dual_objective", "fit_generic", "fit_generic_angle", "fit_generic_margin", "hinge_margins",
    "kernel_matrix", "linear_kernel", "loss_weights", "make_problem", "margins", "penalty",
    "poly_kernel", "primal_fit", "psd_sqrt", "range_factor", "rbf_kernel", "reference_fit",
    "reinforced_loss", "reinforced_losses", "reinforced_objective", "resolve_gamma",
    "robust_beta", "robust_linearized_loss", "robust_loss", "robust_losses", "signed_dual",
    "smoothing_kernel", "sq_dists", "vertices", "weighted_beta", "weighted_linearized_loss",
    "weighted_loss", "weighted_losses", "ww_loss", "ww_losses",
]
