"""The dual QP of a DualProblem, written out densely and solved by cvxpy + Clarabel.

    minimize 1/2 alpha^T Q alpha - lin^T alpha,  Q_vw = K_{i(v) i(w)} d_v^T (kappa P) d_w,
    subject to lo <= alpha <= hi, group caps, and P c(alpha) = 0 when ``equality``,

the reference of the tests that check the compiled solver on problems handed to it directly.
``problem`` is any object with the arrays and methods of msvm's ``DualProblem`` (``k``,
``kappa``, ``lin``, ``lo``, ``hi``, ``cap``, ``group``, ``directions()``, ...): this module reads
them and imports nothing from msvm.
"""

import numpy as np

from .linalg import psd_sqrt


def _dual_matrix(K, problem):
    """Q (n_vars, n_vars) of the dual objective."""
    D = problem.directions()
    iv = problem.sample_of_var()
    P = np.eye(problem.k) - 1.0 / problem.k
    return (D @ (problem.kappa * P) @ D.T) * K[np.ix_(iv, iv)]


def dual_value(K, problem, alpha):
    """The dual objective 1/2 alpha^T Q alpha - lin^T alpha."""
    return 0.5 * alpha @ _dual_matrix(K, problem) @ alpha - problem.expand("lin") @ alpha


def reference_dual_value(K, problem):
    """The optimal dual objective, by cvxpy + Clarabel (tolerances 1e-9)."""
    import cvxpy as cp

    # 1/2 alpha^T Q alpha = 1/2 || L_K^T U L_M ||_F^2 with U = E diag(alpha) D (n x k),
    # K = L_K L_K^T and kappa P = L_M L_M^T (symmetric square roots)
    E = np.zeros((problem.n_samples, problem.n_vars))
    E[problem.sample_of_var(), np.arange(problem.n_vars)] = 1.0
    LK = psd_sqrt(K)
    LM = psd_sqrt(problem.kappa * (np.eye(problem.k) - 1.0 / problem.k))
    a = cp.Variable(problem.n_vars)
    cons = [a >= problem.expand("lo"), a <= problem.expand("hi")]
    if len(problem.cap):
        G = np.zeros((len(problem.cap), problem.n_vars))
        G[problem.expand("group"), np.arange(problem.n_vars)] = 1.0
        cons.append(G @ a <= problem.cap)
    if problem.equality:
        c = problem.directions().T @ a          # P c = 0: all class sums equal (k - 1 rows)
        cons.append(c[:-1] == c[-1])
    U = E @ cp.diag(a) @ problem.directions()
    lin = problem.expand("lin")
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(LK.T @ U @ LM) - lin @ a),
                      cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    assert prob.status == cp.OPTIMAL, f"the reference solver did not converge: {prob.status}"
    return prob.value
