"""The data every model hands to the one compiled solver: a description of its dual QP.

A model of msvm is a sum of hinge terms, each one linear in the decision vector f(x_i):

    penalty + sum_v [a_v + <d_v, f(x_{i(v)})>]_+ * (weight folded into the box of alpha_v)

with f = b + h, h in the RKHS of the kernel and d_v a direction in class-slot space.  Its dual
(see the Design note of msvm/_core/_solver.pyx) has one variable per hinge term, a box
[lo_v, hi_v], optional group caps, a linear term a_v, and the k-1 equalities that unpenalized
intercepts create.  DC steps of the truncated models only move the boxes and linear terms.
"""

import numpy as np

from ._core._problem import (box_crossings, clip_to_boxes, samples_with_nonzero,
                            scatter_by_slots, slot_sums, used_entries)


class DualProblem:
    """Description of one dual QP for :func:`msvm._core._solver.solve`.

    Variables are stored sample by sample: those of sample ``i`` are
    ``var_ptr[i]:var_ptr[i + 1]``.  The per-variable attributes below can be stored
    compactly: with ``var_entry`` given, ``slot1``, ``coef1``, ``slot2``, ``coef2`` and
    ``lin`` are passed per *entry* and variable ``v`` reads entry ``var_entry[v]`` (the
    variables of every sample of one class then share one template of entries), and ``lo``
    (``hi``) too when ``lo_per_entry`` (``hi_per_entry``).  They are stored as
    ``entry_slot1``, ..., ``box_lo``, ``box_hi`` and ``var_group``; their values per
    variable are explicit calls, :meth:`expand`, :meth:`expanded_bounds` and
    :meth:`expanded_directions`, which allocate an O(n_vars) array when the layout is
    compact: a caller expands once and keeps the result (the fit path uses
    :meth:`slot_sums`, :meth:`clip_feasible` and :meth:`support_mask` instead, which
    allocate nothing per variable).

    Parameters and attributes
    -------------------------
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
        Group of each variable (-1 for none; None when no variable has a group).  A group is
        a contiguous run of one sample's variables whose sum is capped by ``cap[group]``.
    cap : ndarray, shape (n_groups,)
        Group caps.
    kappa : float
        Scale of the slot metric ``M = kappa (I - 11^T / k)``: 1 for sum-to-zero models,
        ``k / (k - 1)`` for the angle-based simplex geometry.
    equality : bool
        Whether the intercepts are unpenalized (they then create the equalities ``P c = 0``).
    var_entry : ndarray of int32, shape (n_vars,), optional
        Entry of each variable (None: entry v is variable v).
    lo_per_entry, hi_per_entry : bool
        Whether ``lo`` (``hi``) is given per entry rather than per variable.
    """

    def __init__(self, k, var_ptr, slot1, coef1, lin, lo, hi, slot2=None, coef2=None,
                 group=None, cap=(), kappa=1.0, equality=True, var_entry=None,
                 lo_per_entry=False, hi_per_entry=False):
        as_int = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
        as_float = lambda a: np.ascontiguousarray(a, dtype=np.float64)  # noqa: E731
        self.k = int(k)
        self.kappa = float(kappa)
        self.equality = bool(equality)
        self.var_ptr = as_int(var_ptr)
        self.var_entry = None if var_entry is None else as_int(var_entry)
        self.entry_slot1 = as_int(slot1)
        self.entry_coef1 = as_float(coef1)
        self.entry_lin = as_float(lin)
        ne = len(self.entry_lin)
        self.entry_slot2 = as_int(np.full(ne, -1) if slot2 is None else slot2)
        self.entry_coef2 = as_float(np.zeros(ne) if coef2 is None else coef2)
        self.lo_per_entry = bool(lo_per_entry) and self.var_entry is not None
        self.hi_per_entry = bool(hi_per_entry) and self.var_entry is not None
        self.box_lo = as_float(lo)
        self.box_hi = as_float(hi)
        self.var_group = None if group is None else as_int(group)
        if self.var_group is not None and not np.any(self.var_group >= 0):
            self.var_group = None
        self.cap = as_float(cap)
        self._check()

    def _check(self):
        nv = self.n_vars
        ne = len(self.entry_lin)
        if len(self.var_ptr) < 1 or self.var_ptr[0] != 0 or np.any(np.diff(self.var_ptr) < 0):
            raise ValueError("DualProblem.var_ptr must run from 0 to n_vars, non-decreasing")
        if self.var_entry is None and ne != nv:
            raise ValueError("DualProblem.lin must have one entry per variable")
        if self.var_entry is not None:
            if len(self.var_entry) != nv:
                raise ValueError("DualProblem.var_entry must have one entry per variable")
            if nv and (self.var_entry.min() < 0 or self.var_entry.max() >= ne):
                raise ValueError("DualProblem.var_entry must index the entries")
        for name in ("entry_slot1", "entry_coef1", "entry_slot2", "entry_coef2"):
            if len(getattr(self, name)) != ne:
                raise ValueError(f"DualProblem.{name[6:]} must have one entry per variable")
        for name, per_entry in (("box_lo", self.lo_per_entry), ("box_hi", self.hi_per_entry)):
            if len(getattr(self, name)) != (ne if per_entry else nv):
                raise ValueError(f"DualProblem.{name[4:]} must have one entry per variable")
        if self.var_group is not None and len(self.var_group) != nv:
            raise ValueError("DualProblem.group must have one entry per variable")
        for name in ("entry_lin", "box_lo", "box_hi", "cap", "entry_coef1", "entry_coef2"):
            if not np.all(np.isfinite(getattr(self, name))):
                raise ValueError(
                    f"the dual's {'bounds' if name in ('box_lo', 'box_hi', 'cap') else 'terms'}"
                    f" are not finite: C times the sample weights overflows double precision. "
                    f"Use a smaller C or rescale sample_weight.")
        if box_crossings(self):
            raise ValueError("DualProblem: a lower bound exceeds its upper bound")

    def replace(self, **changes):
        """A new problem with the given attributes (per-variable arrays) replaced; the
        result stores every attribute per variable."""
        slot1, coef1, slot2, coef2 = self.expanded_directions()
        lo, hi = self.expanded_bounds()
        fields = dict(k=self.k, var_ptr=self.var_ptr, slot1=slot1, coef1=coef1,
                      lin=self.expand("lin"), lo=lo, hi=hi, slot2=slot2, coef2=coef2,
                      group=self.var_group, cap=self.cap, kappa=self.kappa,
                      equality=self.equality)
        fields.update(changes)
        return DualProblem(**fields)

    # ------------------------------------------------------------------ per-variable values
    # name -> (stored array, whether it is per entry: always, or by its flag attribute)
    _EXPANDABLE = {"slot1": ("entry_slot1", None), "coef1": ("entry_coef1", None),
                   "slot2": ("entry_slot2", None), "coef2": ("entry_coef2", None),
                   "lin": ("entry_lin", None), "lo": ("box_lo", "lo_per_entry"),
                   "hi": ("box_hi", "hi_per_entry")}

    @property
    def n_vars(self):
        return int(self.var_ptr[-1])

    def expand(self, name):
        """The values of ``name`` per variable, shape (n_vars,).

        ``name`` is one of 'slot1', 'coef1', 'slot2', 'coef2', 'lin', 'lo', 'hi' or 'group'.
        A new O(n_vars) array when the values are stored per entry (or, for 'group', when
        no variable has a group: all -1), else the stored array itself (read it, do not
        write it).  Expand once and keep the result rather than expanding in a loop.
        """
        if name == "group":
            return np.full(self.n_vars, -1, dtype=np.int32) if self.var_group is None \
                else self.var_group
        if name not in self._EXPANDABLE:
            raise ValueError(f"DualProblem.expand: unknown name {name!r}; use one of "
                             f"{sorted([*self._EXPANDABLE, 'group'])}")
        stored, flag = self._EXPANDABLE[name]
        values = getattr(self, stored)
        per_entry = True if flag is None else getattr(self, flag)
        if self.var_entry is None or not per_entry:
            return values
        return values[self.var_entry]

    def expanded_bounds(self):
        """(lo, hi): the box of every variable, each of shape (n_vars,) (see :meth:`expand`)."""
        return self.expand("lo"), self.expand("hi")

    def expanded_directions(self):
        """(slot1, coef1, slot2, coef2) per variable, each of shape (n_vars,) (see
        :meth:`expand`): the direction of variable v is ``coef1 e_slot1 + coef2 e_slot2``
        (``slot2 = -1``: one slot)."""
        return (self.expand("slot1"), self.expand("coef1"), self.expand("slot2"),
                self.expand("coef2"))

    def _used(self, values):
        """The entries of ``values`` (per entry) that some variable reads (which entries:
        computed once, ``var_entry`` is not changed once the problem is built)."""
        if self.var_entry is None:
            return values
        if getattr(self, "_used_entries", None) is None:
            self._used_entries = used_entries(self)
        return values[self._used_entries]

    @property
    def has_pairs(self):
        """Whether some direction has two slots (computed once: the directions of a
        problem are not changed once it is built)."""
        if getattr(self, "_has_pairs", None) is None:
            self._has_pairs = bool(np.any(self._used(self.entry_slot2) >= 0))
        return self._has_pairs

    def max_abs_bound(self):
        """The largest |lo_v| or |hi_v| (0 without variables)."""
        if self.n_vars == 0:
            return 0.0
        lo = self._used(self.box_lo) if self.lo_per_entry else self.box_lo
        hi = self._used(self.box_hi) if self.hi_per_entry else self.box_hi
        return float(max(np.abs(lo).max(), np.abs(hi).max()))

    @property
    def n_samples(self):
        return len(self.var_ptr) - 1

    def sample_of_var(self):
        """Sample index of every variable (computed once and read-only: the variables of a
        problem are not changed once it is built)."""
        if getattr(self, "_sample_of_var", None) is None:
            samples = np.repeat(np.arange(self.n_samples, dtype=np.int32), np.diff(self.var_ptr))
            samples.flags.writeable = False
            self._sample_of_var = samples
        return self._sample_of_var

    def samples_with(self, var_mask):
        """Boolean (n,): the samples with some variable in ``var_mask`` (boolean, n_vars)."""
        marked = np.zeros(self.n_samples, dtype=bool)
        marked[self.sample_of_var()[var_mask]] = True
        return marked

    def directions(self):
        """Dense (n_vars, k) matrix of the directions d_v."""
        nv = self.n_vars
        slot1, coef1, slot2, coef2 = self.expanded_directions()
        D = np.zeros((nv, self.k))
        D[np.arange(nv), slot1] += coef1
        two = slot2 >= 0
        D[np.flatnonzero(two), slot2[two]] += coef2[two]
        return D

    def slot_sums(self, alpha):
        """U (n, k): per sample, sum_v alpha_v d_v over its variables (O(n k) memory)."""
        return slot_sums(self, np.ascontiguousarray(alpha, dtype=np.float64))

    def support_mask(self, alpha):
        """Boolean (n,): the samples with a nonzero dual variable."""
        return samples_with_nonzero(self, np.ascontiguousarray(alpha, dtype=np.float64))

    def at_moving_bounds(self, alpha):
        """Boolean (n,): the samples with a variable at a bound that grows with the sample's
        weight (a nonzero upper or lower bound) or in a group at its nonzero cap.

        Every bound and cap is a multiple of its sample's weight (a DC step's shifted ones
        too: msvm._dc), so a zero one stays zero at every weight.  The weights enter the
        dual only through the nonzero ones: a solution none of whose samples in a set is
        marked here meets the optimality conditions of every larger weight of that set with
        the same residual (``msvm._probability._settled``).
        """
        alpha = np.asarray(alpha, dtype=np.float64)
        lo, hi = self.expanded_bounds()
        at = ((alpha >= hi) & (hi != 0)) | ((alpha <= lo) & (lo != 0))
        if len(self.cap):
            group = self.expand("group")
            grouped = group >= 0
            sums = np.bincount(group[grouped], weights=alpha[grouped], minlength=len(self.cap))
            full = np.zeros(self.n_vars, dtype=bool)
            cap = self.cap[group[grouped]]
            full[grouped] = (sums[group[grouped]] >= cap) & (cap != 0)
            at |= full
        return self.samples_with(at)

    def class_sums(self, alpha):
        """c(alpha) = sum_v alpha_v d_v (k values), summed per entry first."""
        k = self.k
        alpha = np.asarray(alpha, dtype=np.float64)
        A = alpha if self.var_entry is None else \
            np.bincount(self.var_entry, weights=alpha, minlength=len(self.entry_lin))
        two = self.entry_slot2 >= 0
        return (np.bincount(self.entry_slot1, weights=self.entry_coef1 * A, minlength=k)
                + np.bincount(self.entry_slot2[two], weights=self.entry_coef2[two] * A[two],
                              minlength=k))

    def clip_feasible(self, alpha):
        """Project a warm start into the box and scale down groups that exceed their cap."""
        alpha = np.array(alpha, dtype=np.float64)
        clip_to_boxes(self, alpha)
        if len(self.cap):
            lo, group = self.expand("lo"), self.expand("group")
            grouped = group >= 0
            sums = np.bincount(group[grouped], weights=alpha[grouped],
                               minlength=len(self.cap))
            over = sums > self.cap
            if np.any(over):
                # move every member of an over-full group down by the same amount (kept in box)
                for g in np.flatnonzero(over):
                    members = np.flatnonzero(group == g)
                    excess = sums[g] - self.cap[g]
                    while excess > 1e-15 * max(1.0, abs(self.cap[g])):
                        room = alpha[members] - lo[members]
                        movable = members[room > 0]
                        if len(movable) == 0:
                            break
                        step = min(excess / len(movable), room[room > 0].min())
                        alpha[movable] -= step
                        excess -= step * len(movable)
        return alpha


def _checked_var_ptr(var_ptr):
    """var_ptr (int64), refused when its variables exceed the solver's int32 indices."""
    if var_ptr[-1] >= 2 ** 31:
        raise ValueError(f"the dual has {int(var_ptr[-1])} variables, more than the solver's "
                         f"2^31; fit on fewer samples")
    return var_ptr


def _class_templates(y, k, per_class):
    """var_ptr and var_entry of a layout whose sample i has the template of class y_i:
    ``per_class`` entries per class, entries of class c at c * per_class."""
    y = np.asarray(y, dtype=np.int32)
    n = len(y)
    var_ptr = _checked_var_ptr(np.arange(0, n * per_class + 1, per_class, dtype=np.int64))
    var_entry = (y[:, None] * per_class
                 + np.arange(per_class, dtype=np.int32)[None, :]).ravel()
    return var_ptr, var_entry


def per_class_hinge_problem(y, k, lin_own, lin_other, coef_own, coef_other, hi_own, hi_other,
                            kappa=1.0, equality=True):
    """Problem with one variable per (sample, class slot), directions +-e_j.

    Variable (i, j) is the hinge term of sample i in slot j: for j == y_i it has direction
    ``coef_own * e_j``, offset ``lin_own`` and box ``[0, hi_own[i]]``; for j != y_i direction
    ``coef_other * e_j``, offset ``lin_other`` and box ``[0, hi_other[i]]``.  This is the layout
    of the Lee-Lin-Wahba, reinforced, truncated-LLW and angle-based losses.  Stored compactly:
    the k x k entries (class, slot) and the upper bounds per variable.
    """
    y = np.asarray(y)
    n = len(y)
    var_ptr, var_entry = _class_templates(y, k, k)
    own = np.eye(k, dtype=bool).ravel()            # entry (c, j) is the own slot when j == c
    hi = np.empty((n, k))
    hi[...] = np.asarray(hi_other, dtype=float)[:, None] if np.ndim(hi_other) else hi_other
    hi[np.arange(n), y] = hi_own if not np.ndim(hi_own) else np.asarray(hi_own, dtype=float)
    return DualProblem(
        k=k, var_ptr=var_ptr, var_entry=var_entry,
        slot1=np.tile(np.arange(k, dtype=np.int32), k),
        coef1=np.where(own, coef_own, coef_other),
        lin=np.where(own, lin_own, lin_other),
        lo=np.zeros(k * k), lo_per_entry=True,
        hi=hi.ravel(),
        kappa=kappa,
        equality=equality,
    )


def select_variables(problem, keep):
    """The same problem restricted to the variables where ``keep`` is true (groups kept)."""
    keep = np.asarray(keep, dtype=bool)
    counts = np.bincount(problem.sample_of_var()[keep], minlength=problem.n_samples)
    group = None if problem.var_group is None else problem.var_group[keep]
    return take_variables(problem, keep, np.concatenate([[0], np.cumsum(counts)]), group,
                          problem.cap)


def take_variables(problem, variables, var_ptr, group, cap):
    """The problem of the ``variables`` (indices or a mask) of ``problem``: their directions,
    linear terms and boxes, with the k slots and the equalities of ``problem``.

    ``var_ptr`` gives the kept variables' samples and ``group`` / ``cap`` their groups; shared
    by :func:`select_variables` and the cluster start's ``msvm._cluster_start.restrict``.
    """
    compact = problem.var_entry is not None

    def kept(name, stored, per_entry):
        """The stored values when they stay per entry, else those of the kept variables."""
        return stored if per_entry else problem.expand(name)[variables]

    return DualProblem(
        k=problem.k, var_ptr=var_ptr,
        var_entry=problem.var_entry[variables] if compact else None,
        slot1=kept("slot1", problem.entry_slot1, compact),
        coef1=kept("coef1", problem.entry_coef1, compact),
        lin=kept("lin", problem.entry_lin, compact),
        slot2=kept("slot2", problem.entry_slot2, compact),
        coef2=kept("coef2", problem.entry_coef2, compact),
        lo=kept("lo", problem.box_lo, problem.lo_per_entry),
        hi=kept("hi", problem.box_hi, problem.hi_per_entry),
        lo_per_entry=problem.lo_per_entry, hi_per_entry=problem.hi_per_entry,
        group=group, cap=cap, kappa=problem.kappa, equality=problem.equality)


def shifted(problem, shift):
    """The DC subproblem: every variable's box and its group's cap moved down by ``shift``.

    A DC step linearizes the concave part of a truncated loss at the current function; the
    linear term it adds to the primal is absorbed by the substitution alpha' = alpha - shift
    (Wu and Liu 2007 eq. 3.10-3.12, Liu, Wu and He (2011) section 4): the box [lo, hi] becomes
    [lo - shift, hi - shift] and the cap of a group drops by the shifts of its members, while
    offsets and directions stay.  The original multipliers are alpha' + shift.
    """
    lo, hi, cap = shifted_bounds(problem, shift)
    return DualProblem(
        k=problem.k, var_ptr=problem.var_ptr, var_entry=problem.var_entry,
        slot1=problem.entry_slot1, coef1=problem.entry_coef1, lin=problem.entry_lin,
        slot2=problem.entry_slot2, coef2=problem.entry_coef2,
        lo=lo, hi=hi, group=problem.var_group, cap=cap,
        kappa=problem.kappa, equality=problem.equality)


def shifted_bounds(problem, shift):
    """(lo, hi, cap) of :func:`shifted`: every variable's box (per variable) and its group's
    cap moved down by ``shift``; new arrays."""
    shift = np.asarray(shift, dtype=np.float64)
    cap = problem.cap.copy()
    if len(cap):
        group = problem.expand("group")
        grouped = group >= 0
        cap -= np.bincount(group[grouped], weights=shift[grouped], minlength=len(cap))
    lo, hi = problem.expanded_bounds()
    return lo - shift, hi - shift, cap


def margin_problem(y, k, weights, utility):
    """Generalized-functional-margin hinge: sum_i sum_j w_i U[y_i, j] [1 - g_j(f(x_i))]_+.

    With g_j(f) = min_{j' != j} (f_j - f_j'), the hinge is max_{j' != j} [1 + f_j' - f_j]_+,
    so each (sample i, class j) with U[y_i, j] > 0 is a group of k - 1 variables
    alpha_{ijj'} (direction e_j' - e_j, offset 1) with sum_{j'} alpha_{ijj'} <= w_i U[y_i, j]
    (Liu, Wu and He 2011 section 4).  Variables are stored sample by sample, group by group;
    directions and offsets as one template per class.
    """
    y = np.asarray(y)
    weights = np.asarray(weights, dtype=np.float64)
    utility = np.asarray(utility, dtype=np.float64)
    per_group = k - 1
    others = np.array([[jp for jp in range(k) if jp != j] for j in range(k)], dtype=np.int32)
    active = utility > 0                                      # class c's groups: active[c]
    # entries: class c's template lists its active groups j, each with k - 1 directions
    tc, tj = np.nonzero(active)
    t_start = np.concatenate([[0], np.cumsum(active.sum(axis=1))]) * per_group
    gi, gj = np.nonzero(active[y])                            # group order: by sample, class
    caps = weights[gi] * utility[y[gi], gj]
    ng = len(gi)
    counts = active.sum(axis=1)[y] * per_group
    var_ptr = _checked_var_ptr(np.concatenate([[0], np.cumsum(counts)]))
    first = np.repeat(t_start[y] - var_ptr[:-1], counts)
    var_entry = first + np.arange(var_ptr[-1])
    return DualProblem(
        k=k, var_ptr=var_ptr, var_entry=var_entry, slot1=others[tj].ravel(),
        coef1=np.ones(len(tj) * per_group), slot2=np.repeat(tj, per_group),
        coef2=-np.ones(len(tj) * per_group), lin=np.ones(len(tj) * per_group),
        lo=np.zeros(len(tj) * per_group), lo_per_entry=True,
        hi=np.repeat(caps, per_group), group=np.repeat(np.arange(ng), per_group), cap=caps)


def pairwise_hinge_problem(y, k, weights):
    """Weston-Watkins hinge: sum_i w_i sum_{j != y_i} [1 - (f_{y_i}(x_i) - f_j(x_i))]_+.

    One variable per (i, j != y_i), direction e_j - e_{y_i}, offset 1, box [0, w_i]; the
    directions are stored as one template of k - 1 entries per class.
    """
    y = np.asarray(y)
    n = len(y)
    var_ptr, var_entry = _class_templates(y, k, k - 1)
    others = np.array([[j for j in range(k) if j != c] for c in range(k)], dtype=np.int32)
    per = k - 1
    return DualProblem(
        k=k, var_ptr=var_ptr, var_entry=var_entry, slot1=others.ravel(),
        coef1=np.ones(k * per), slot2=np.repeat(np.arange(k, dtype=np.int32), per),
        coef2=-np.ones(k * per), lin=np.ones(k * per), lo=np.zeros(k * per),
        lo_per_entry=True,
        hi=np.repeat(np.asarray(weights, dtype=np.float64), per) if n else np.zeros(0))


def alpha_by_slots(problem, alpha, pairs=False):
    """Dual variables as an (n, k) array indexed by slot, or (n, k, k) by (slot2, slot1)."""
    return scatter_by_slots(problem, np.ascontiguousarray(alpha, dtype=np.float64), pairs)


def reinforced_problem(y, k, weights, gamma, kappa=1.0, equality=True):
    """The reinforced hinge dual (Liu and Yuan 2011; with the simplex metric kappa, Kang, Lin
    and Zhang 2019)."""
    return per_class_hinge_problem(
        y, k, lin_own=k - 1.0, lin_other=1.0, coef_own=-1.0, coef_other=1.0,
        hi_own=weights * gamma, hi_other=weights * (1.0 - gamma), kappa=kappa,
        equality=equality)
