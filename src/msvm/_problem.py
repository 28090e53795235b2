"""The data every model hands to the one compiled solver: a description of its dual QP.

A model of msvm is a sum of hinge terms, each one linear in the decision vector f(x_i):

    penalty + sum_v [a_v + <d_v, f(x_{i(v)})>]_+ * (weight folded into the box of alpha_v)

with f = b + h, h in the RKHS of the kernel and d_v a direction in class-slot space.  Its dual
(see the Design note of msvm/_core/_solver.pyx) has one variable per hinge term, a box
[lo_v, hi_v], optional group caps, a linear term a_v, and the k-1 equalities that unpenalized
intercepts create.  DC steps of the truncated models only move the boxes and linear terms.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass
class DualProblem:
    """Description of one dual QP for :func:`msvm._core._solver.solve`.

    Variables are stored sample by sample: those of sample ``i`` are
    ``var_ptr[i]:var_ptr[i + 1]``.

    Attributes
    ----------
    k : int
        Number of class slots.
    var_ptr : ndarray of int32, shape (n + 1,)
        Start of each sample's variables.
    slot1, coef1, slot2, coef2 : ndarrays, shape (n_vars,)
        Direction of each variable: ``coef1 * e_slot1 + coef2 * e_slot2`` (``slot2 = -1`` when
        the direction has a single slot).
    lin : ndarray, shape (n_vars,)
        Offset ``a_v`` of the hinge, the linear term of the dual.
    lo, hi : ndarray, shape (n_vars,)
        Box of each variable.
    group : ndarray of int32, shape (n_vars,)
        Group of each variable (-1 for none).  A group is a contiguous run of one sample's
        variables whose sum is capped by ``cap[group]``.
    cap : ndarray, shape (n_groups,)
        Group caps.
    kappa : float
        Scale of the slot metric ``M = kappa (I - 11^T / k)``: 1 for sum-to-zero models,
        ``k / (k - 1)`` for the angle-based simplex geometry.
    equality : bool
        Whether the intercepts are unpenalized (they then create the equalities ``P c = 0``).
    """

    k: int
    var_ptr: np.ndarray
    slot1: np.ndarray
    coef1: np.ndarray
    lin: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    slot2: np.ndarray = None
    coef2: np.ndarray = None
    group: np.ndarray = None
    cap: np.ndarray = field(default_factory=lambda: np.zeros(0))
    kappa: float = 1.0
    equality: bool = True

    def __post_init__(self):
        nv = len(self.lin)
        as_int = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
        as_float = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
        self.var_ptr = as_int(self.var_ptr)
        self.slot1 = as_int(self.slot1)
        self.coef1 = as_float(self.coef1)
        self.lin = as_float(self.lin)
        self.lo = as_float(self.lo)
        self.hi = as_float(self.hi)
        self.slot2 = as_int(np.full(nv, -1) if self.slot2 is None else self.slot2)
        self.coef2 = as_float(np.zeros(nv) if self.coef2 is None else self.coef2)
        self.group = as_int(np.full(nv, -1) if self.group is None else self.group)
        self.cap = as_float(self.cap)
        for name in ("slot1", "coef1", "lo", "hi", "slot2", "coef2", "group"):
            if len(getattr(self, name)) != nv:
                raise ValueError(f"DualProblem.{name} must have one entry per variable")
        if self.var_ptr[0] != 0 or self.var_ptr[-1] != nv or np.any(np.diff(self.var_ptr) < 0):
            raise ValueError("DualProblem.var_ptr must run from 0 to n_vars, non-decreasing")
        if np.any(self.lo > self.hi):
            raise ValueError("DualProblem: a lower bound exceeds its upper bound")

    @property
    def n_samples(self):
        return len(self.var_ptr) - 1

    def sample_of_var(self):
        """Sample index of every variable."""
        return np.repeat(np.arange(self.n_samples), np.diff(self.var_ptr))

    def directions(self):
        """Dense (n_vars, k) matrix of the directions d_v."""
        nv = len(self.lin)
        D = np.zeros((nv, self.k))
        D[np.arange(nv), self.slot1] += self.coef1
        two = self.slot2 >= 0
        D[np.flatnonzero(two), self.slot2[two]] += self.coef2[two]
        return D

    def slot_sums(self, alpha):
        """U (n, k): per sample, sum_v alpha_v d_v over its variables."""
        contrib = self.directions() * alpha[:, None]
        return np.add.reduceat(contrib, self.var_ptr[:-1], axis=0) if len(alpha) else contrib

    def clip_feasible(self, alpha):
        """Project a warm start into the box and scale down groups that exceed their cap."""
        alpha = np.clip(np.asarray(alpha, dtype=np.float64), self.lo, self.hi)
        if len(self.cap):
            grouped = self.group >= 0
            sums = np.bincount(self.group[grouped], weights=alpha[grouped],
                               minlength=len(self.cap))
            over = sums > self.cap
            if np.any(over):
                # move every member of an over-full group down by the same amount (kept in box)
                for g in np.flatnonzero(over):
                    members = np.flatnonzero(self.group == g)
                    excess = sums[g] - self.cap[g]
                    while excess > 1e-15 * max(1.0, abs(self.cap[g])):
                        room = alpha[members] - self.lo[members]
                        movable = members[room > 0]
                        if len(movable) == 0:
                            break
                        step = min(excess / len(movable), room[room > 0].min())
                        alpha[movable] -= step
                        excess -= step * len(movable)
        return np.ascontiguousarray(alpha)


def per_class_hinge_problem(y, k, lin_own, lin_other, coef_own, coef_other, hi_own, hi_other,
                            kappa=1.0, equality=True):
    """Problem with one variable per (sample, class slot), directions +-e_j.

    Variable (i, j) is the hinge term of sample i in slot j: for j == y_i it has direction
    ``coef_own * e_j``, offset ``lin_own`` and box ``[0, hi_own[i]]``; for j != y_i direction
    ``coef_other * e_j``, offset ``lin_other`` and box ``[0, hi_other[i]]``.  This is the layout
    of the Lee-Lin-Wahba, reinforced, truncated-LLW and angle-based losses.
    """
    y = np.asarray(y)
    n = len(y)
    own = np.zeros((n, k), dtype=bool)
    own[np.arange(n), y] = True
    slots = np.tile(np.arange(k, dtype=np.int32), n)
    own_f = own.ravel()
    hi = np.where(own, np.asarray(hi_own, dtype=float)[:, None],
                  np.asarray(hi_other, dtype=float)[:, None]).ravel()
    return DualProblem(
        k=k,
        var_ptr=np.arange(0, n * k + 1, k),
        slot1=slots,
        coef1=np.where(own_f, coef_own, coef_other),
        lin=np.where(own_f, lin_own, lin_other),
        lo=np.zeros(n * k),
        hi=hi,
        kappa=kappa,
        equality=equality,
    )
