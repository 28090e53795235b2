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
        for name in ("lin", "lo", "hi", "cap", "coef1", "coef2"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(
                    f"the dual's {'bounds' if name in ('lo', 'hi', 'cap') else 'terms'} are "
                    f"not finite: C times the sample weights overflows double precision. "
                    f"Use a smaller C or rescale sample_weight.")

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
        """U (n, k): per sample, sum_v alpha_v d_v over its variables.

        Summed by (sample, slot) index, in O(n_vars) memory (the dense directions would take
        n_vars x k)."""
        n, k = self.n_samples, self.k
        alpha = np.asarray(alpha, dtype=np.float64)
        cell = self.sample_of_var() * k
        U = np.bincount(cell + self.slot1, weights=self.coef1 * alpha, minlength=n * k)
        two = np.flatnonzero(self.slot2 >= 0)
        if len(two):
            U += np.bincount(cell[two] + self.slot2[two], weights=self.coef2[two] * alpha[two],
                             minlength=n * k)
        return U.reshape(n, k)

    def class_sums(self, alpha):
        """c(alpha) = sum_v alpha_v d_v (k values): the column sums of ``slot_sums``."""
        k, two = self.k, self.slot2 >= 0
        return (np.bincount(self.slot1, weights=self.coef1 * alpha, minlength=k)
                + np.bincount(self.slot2[two], weights=self.coef2[two] * alpha[two],
                              minlength=k))

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


def select_variables(problem, keep):
    """The same problem restricted to the variables where ``keep`` is true (groups kept)."""
    keep = np.asarray(keep, dtype=bool)
    counts = np.bincount(problem.sample_of_var()[keep], minlength=problem.n_samples)
    return DualProblem(
        k=problem.k, var_ptr=np.concatenate([[0], np.cumsum(counts)]),
        slot1=problem.slot1[keep], coef1=problem.coef1[keep], lin=problem.lin[keep],
        lo=problem.lo[keep], hi=problem.hi[keep], slot2=problem.slot2[keep],
        coef2=problem.coef2[keep], group=problem.group[keep], cap=problem.cap,
        kappa=problem.kappa, equality=problem.equality)


def shifted(problem, shift):
    """The DC subproblem: every variable's box and its group's cap moved down by ``shift``.

    A DC step linearizes the concave part of a truncated loss at the current function; the
    linear term it adds to the primal is absorbed by the substitution alpha' = alpha - shift
    (Wu and Liu 2007 eq. 3.10-3.12, Liu, Wu and He (2011) section 4): the box [lo, hi] becomes
    [lo - shift, hi - shift] and the cap of a group drops by the shifts of its members, while
    offsets and directions stay.  The original multipliers are alpha' + shift.
    """
    shift = np.asarray(shift, dtype=np.float64)
    cap = problem.cap.copy()
    grouped = problem.group >= 0
    if len(cap):
        cap -= np.bincount(problem.group[grouped], weights=shift[grouped], minlength=len(cap))
    return DualProblem(
        k=problem.k, var_ptr=problem.var_ptr, slot1=problem.slot1, coef1=problem.coef1,
        lin=problem.lin, lo=problem.lo - shift, hi=problem.hi - shift, slot2=problem.slot2,
        coef2=problem.coef2, group=problem.group, cap=cap, kappa=problem.kappa,
        equality=problem.equality)


def margin_problem(y, k, weights, utility):
    """Generalized-functional-margin hinge: sum_i sum_j w_i U[y_i, j] [1 - g_j(f(x_i))]_+.

    With g_j(f) = min_{j' != j} (f_j - f_j'), the hinge is max_{j' != j} [1 + f_j' - f_j]_+,
    so each (sample i, class j) with U[y_i, j] > 0 is a group of k - 1 variables
    alpha_{ijj'} (direction e_j' - e_j, offset 1) with sum_{j'} alpha_{ijj'} <= w_i U[y_i, j]
    (Liu, Wu and He 2011 section 4).  Variables are stored sample by sample, group by group.
    """
    y = np.asarray(y)
    weights = np.asarray(weights, dtype=np.float64)
    utility = np.asarray(utility, dtype=np.float64)
    n = len(y)
    others = np.array([[jp for jp in range(k) if jp != j] for j in range(k)], dtype=np.int32)
    active = utility[y] > 0                                   # n x k groups that exist
    gi, gj = np.nonzero(active)                               # group order: by sample, class
    caps = weights[gi] * utility[y[gi], gj]
    ng = len(gi)
    per_group = k - 1
    slot1 = others[gj].ravel()
    slot2 = np.repeat(gj, per_group).astype(np.int32)
    group = np.repeat(np.arange(ng), per_group)
    hi = np.repeat(caps, per_group)
    counts = np.bincount(gi, minlength=n) * per_group
    return DualProblem(
        k=k, var_ptr=np.concatenate([[0], np.cumsum(counts)]), slot1=slot1,
        coef1=np.ones(ng * per_group), slot2=slot2, coef2=-np.ones(ng * per_group),
        lin=np.ones(ng * per_group), lo=np.zeros(ng * per_group), hi=hi, group=group,
        cap=caps)


def pairwise_hinge_problem(y, k, weights):
    """Weston-Watkins hinge: sum_i w_i sum_{j != y_i} [1 - (f_{y_i}(x_i) - f_j(x_i))]_+.

    One variable per (i, j != y_i), direction e_j - e_{y_i}, offset 1, box [0, w_i].
    """
    y = np.asarray(y)
    n = len(y)
    mask = np.ones((n, k), dtype=bool)
    mask[np.arange(n), y] = False
    ii, jj = np.nonzero(mask)
    return DualProblem(
        k=k, var_ptr=np.arange(0, n * (k - 1) + 1, k - 1), slot1=jj,
        coef1=np.ones(len(ii)), slot2=y[ii], coef2=-np.ones(len(ii)), lin=np.ones(len(ii)),
        lo=np.zeros(len(ii)), hi=np.asarray(weights, dtype=np.float64)[ii])


def alpha_by_slots(problem, alpha, pairs=False):
    """Dual variables as an (n, k) array indexed by slot, or (n, k, k) by (slot2, slot1)."""
    n, k = problem.n_samples, problem.k
    rows = problem.sample_of_var()
    if pairs:
        out = np.zeros((n, k, k))
        out[rows, problem.slot2, problem.slot1] = alpha
    else:
        out = np.zeros((n, k))
        out[rows, problem.slot1] = alpha
    return out


def reinforced_problem(y, k, weights, gamma, kappa=1.0, equality=True):
    """The reinforced hinge dual (Liu and Yuan 2011; Kang, Lin and Zhang (2019) with the simplex metric kappa)."""
    return per_class_hinge_problem(
        y, k, lin_own=k - 1.0, lin_other=1.0, coef_own=-1.0, coef_other=1.0,
        hi_own=weights * gamma, hi_other=weights * (1.0 - gamma), kappa=kappa,
        equality=equality)
