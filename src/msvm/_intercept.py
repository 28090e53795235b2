"""The intercept step as a linear program (scipy.optimize.linprog, HiGHS).

With the functions h fixed, the intercepts minimize the loss part of the primal.  In terms of a
DualProblem, each variable v (box [lo_v, hi_v]) stands for the convex piecewise-linear term
max_{alpha in box} alpha * z_v with z_v = a_v + <d_v, h(x_i) + b>, and a group g adds the cap
sum alpha <= cap_g; by LP duality the loss is

    min  sum_v (hi_v t_v - lo_v s_v) + sum_g cap_g eta_g
    s.t. t_v - s_v + eta_{g(v)} = a_v + <d_v, H_i + b>,   t, s, eta >= 0,   sum_j b_j = 0,

an LP in (b, t, s, eta).  The fitted models take b from the KKT multipliers of an exactly solved
dual (cheaper); this LP is the oracle for them in the tests and the intercept step for losses
whose multipliers are not at hand.  It is generic, not fast: HiGHS needs seconds at n k ~ 1e4.
"""

import numpy as np
from scipy import sparse
from scipy.optimize import linprog


def lp_intercepts(problem, H):
    """Optimal intercepts b (k,) for slot-space function values H (n, k) at the training points.

    Parameters
    ----------
    problem : DualProblem
        The model's dual description (boxes, caps, directions, offsets).
    H : ndarray of shape (n_samples, k)
        h(x_i) in class-slot coordinates, without intercepts.

    Returns
    -------
    b : ndarray of shape (k,)
        Intercepts minimizing the loss, summing to zero when ``problem.equality``.
    loss : float
        The minimal loss value.
    """
    k = problem.k
    nv = len(problem.lin)
    ng = len(problem.cap)
    D = problem.directions()                                  # nv x k
    rows = problem.sample_of_var()
    offset = problem.lin + np.einsum("vj,vj->v", D, H[rows])  # z_v without b
    # variables: [b (k) | t (nv) | s (nv) | eta (ng)]
    cost = np.concatenate([np.zeros(k), problem.hi, -problem.lo, problem.cap])
    eye = sparse.identity(nv, format="csr")
    grouped = np.flatnonzero(problem.group >= 0)
    G = sparse.csr_matrix((np.ones(len(grouped)), (grouped, problem.group[grouped])),
                          shape=(nv, ng))
    A = sparse.hstack([-sparse.csr_matrix(D), eye, -eye, G], format="csr")
    rhs = offset
    if problem.equality:
        sum_row = sparse.csr_matrix(np.concatenate([np.ones(k), np.zeros(2 * nv + ng)]))
        A = sparse.vstack([A, sum_row], format="csr")
        rhs = np.append(rhs, 0.0)
    bounds = [(None, None)] * k + [(0, None)] * (2 * nv + ng)
    res = linprog(cost, A_eq=A, b_eq=rhs, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"intercept LP failed: {res.message}")
    return res.x[:k], float(res.fun)
