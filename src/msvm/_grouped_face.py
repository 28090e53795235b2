"""The grouped finishing step's face system on the m x m Hessian block of the free variables.

`msvm._finish_groups` steps through the active sets of a dual with group caps; its first
formulation works on a pivoted Cholesky factor K ~ L L^T of the kernel, the free block of the
Hessian B B^T with B of m x p (k - 1), one SVD of B a step.  That is cheap where the factor
is narrow (a linear kernel in d dimensions: p = d), but an RBF kernel's factor has about one
column per free sample, B is wider than it is tall, and each step costs O(m^2 p k) for a
change of one variable (make_blobs n = 1,000, d = 3, RBF, C = 1e6: 143-192 free variables,
factor rank 170-310, 4.6 ms a step, 800-850 steps from the solver's iterate at 100 epochs).

`GroupedFace` solves the same step on the m x m block instead, as `msvm._finish` does for
the duals without caps: the bordered (KKT) system of the free set F and its active caps G,

    [ Q_FF + reg I   A     C_G     ] [ x   ]   [ -z_F    ]
    [ A^T          -reg I   0      ] [ t   ] = [ -E^T c  ]
    [ C_G^T          0    -reg I   ] [ u   ]   [  0      ]

(A = D E: the k - 1 class-sum equalities, C_G: the indicators of the free members of each
active cap, so that their sum stays put; reg = REG x the largest diagonal entry: the system
is quasi-definite, hence nonsingular for any free set, and where Q_FF is singular on the
constraints' null space the step runs far along the direction of zero curvature and is cut
at its first bound, as the SVD route's descent step is).  It is factored once for a base
(free set, caps) and bordered by one column per change since (a variable freed or fixed, a
cap made active or released: a unit column on the base variable or the base cap's
multiplier row removes it), the Schur complement kept by `msvm._finish._Border`; past
REFACTOR changes the current set becomes the base.  A step then costs O((m + c)^2 + (m + c)
p) for p changes, not a new factorization.
"""

import numpy as np
import scipy.linalg

from ._finish import REG, _Border, border_with, hessian_corner

# changes bordered on the base system before it is refactored
REFACTOR = 120
# steps of iterative refinement on one face before a bordered system is refactored (0: a
# bordered system whose full step left the free reduced gradients above tol / 100 is
# refactored at once.  One refinement step first was measured and not kept: make_blobs
# n = 1,000, RBF, C = 1e8, same process, alternating: WeightedRobustMSVM(truncation=None)
# 6.0 -> 12.1 s CPU, AdaptiveWeightedSVM 10.0-11.1 -> 15.3-15.7 s; C = 1e6 2.1 s both)
REFINE_STEPS = 0


class GroupedFace:
    """The bordered system of a grouped dual's free set and active caps (see the module
    docstring), its base factored once and updated by Schur complements.

    Parameters
    ----------
    lay : msvm._finish._Layout
        The problem's per-variable arrays.
    cols : msvm._finish._Columns
        The kernel columns of the free samples, fetched once and held.
    E : ndarray of shape (k, k - 1)
        An orthonormal basis of the vectors that sum to zero (the equalities' rows).
    group_of : ndarray of shape (n_vars,)
        Every variable's group (-1 for none).
    D : ndarray of shape (n_vars, k)
        Every variable's direction d_v (``lay.directions``).
    """

    def __init__(self, lay, cols, E, group_of, D):
        self.lay, self.cols, self.group_of, self.D = lay, cols, group_of, D
        self.ne = lay.k - 1 if lay.equality else 0
        self.E = E[:, :self.ne]
        self.base, self.flops, self.refined = None, 0.0, 0
        # steps taken on the face, and those undone for raising the objective
        self.steps, self.undone = 0, 0

    def _q(self, rows, cols):
        """The Hessian block Q[rows][:, cols] (variable indices)."""
        lay = self.lay
        Dr, Dc = self.D[rows], self.D[cols]
        Q = Dr @ (Dc - Dc.sum(axis=1, keepdims=True) / lay.k).T
        Q *= self.cols.entries(lay.sample[rows], lay.sample[cols])
        Q *= lay.kappa
        return Q

    def _factor(self, free_idx, caps):
        """Make (free_idx, caps) the base: form and factor its bordered matrix."""
        m, ne, c = len(free_idx), self.ne, len(caps)
        Q = self._q(free_idx, free_idx)
        self.reg = REG * max(float(np.abs(np.diag(Q)).max(initial=0.0)), 1e-300)
        Q[np.diag_indices(m)] += self.reg
        A = self.D[free_idx] @ self.E
        G = (self.group_of[free_idx][:, None] == caps[None, :]).astype(np.float64)
        M0 = np.block([[Q, A, G],
                       [A.T, -self.reg * np.eye(ne), np.zeros((ne, c))],
                       [G.T, np.zeros((c, ne)), -self.reg * np.eye(c)]])
        self._base_on(M0, free_idx)
        self.base_caps = caps
        self.pos = {int(v): j for j, v in enumerate(free_idx)}
        self.cap_pos = {int(g): m + ne + j for j, g in enumerate(caps)}

    def _base_on(self, M0, base):
        """Factor the bordered matrix M0 of ``base`` and start its border afresh (no
        changes: ``extra`` lists them as (kind, id) pairs in column order)."""
        self.lu = scipy.linalg.lu_factor(M0, check_finite=False)
        self.flops += 2.0 * float(M0.shape[0]) ** 3 / 3.0
        self.base, self.size, self.extra = base, M0.shape[0], []
        self.border = _Border(self.size)

    def _column(self, kind, i):
        """The base rows N[:, j] of a new border column."""
        col = np.zeros(self.size)
        if kind == "fix":
            col[self.pos[i]] = 1.0
        elif kind == "uncap":
            col[self.cap_pos[i]] = 1.0
        elif kind == "cap":
            col[:len(self.base)] = self.group_of[self.base] == i
        else:
            m, v = len(self.base), np.array([i])
            col[:m] = self._q(self.base, v)[:, 0]
            col[m:m + self.ne] = self.D[i] @ self.E
            g = int(self.group_of[i])
            if g in self.cap_pos:
                col[self.cap_pos[g]] = 1.0
        return col

    def _corner(self, left, right):
        """C[left][:, right]: the border block between two lists of new columns (Hessian
        entries between freed variables, a freed variable's membership of a new cap, and
        -reg (+reg) on the diagonal of new caps (freed variables) when left is right)."""
        C, _ = hessian_corner(self._q, left, right)
        for a, b, flip in ((left, right, False), (right, left, True)):
            for j, (kind, v) in enumerate(a):
                if kind != "var":
                    continue
                for jj, (kind2, g) in enumerate(b):
                    if kind2 == "cap" and int(self.group_of[v]) == g:
                        C[(jj, j) if flip else (j, jj)] = 1.0
        if left is right:
            for j, (kind, _) in enumerate(left):
                C[j, j] += self.reg if kind == "var" else (-self.reg if kind == "cap" else 0.0)
        return C

    def _sync(self, free_idx, caps):
        """Border the base system so that it describes (free_idx, caps); refactor where it
        differs from the base by more than REFACTOR changes."""
        if self.base is None:
            self._factor(free_idx, caps)
            return
        want, base = set(free_idx.tolist()), set(self.pos)
        want_caps, base_caps = set(caps.tolist()), set(self.cap_pos)
        extra = ([("fix", v) for v in sorted(base - want)]
                 + [("uncap", g) for g in sorted(base_caps - want_caps)]
                 + [("var", v) for v in sorted(want - base)]
                 + [("cap", g) for g in sorted(want_caps - base_caps)])
        if set(extra) != set(self.extra):
            self.refined = 0            # another face: its refinement starts anew
        if len(extra) > REFACTOR:
            self._factor(free_idx, caps)
            return
        border_with(self, extra)

    def solve(self, free_idx, z, c_eq, caps):
        """The step on the free variables free_idx (sorted; z their gradient) to the
        minimizer of the QP on the face (equalities with residual c_eq = E^T c removed,
        the active caps ``caps`` held), and the shift s of the equalities: (x, s)."""
        if len(free_idx) == 0:
            # nothing is free (every variable at a bound): no step; the releases decide
            return np.zeros(0), np.zeros(self.lay.k)
        self._sync(free_idx, caps)
        m, ne = len(self.base), self.ne
        z_of = dict(zip(free_idx.tolist(), z))
        r0 = np.zeros(self.size)
        r0[:m] = [-z_of.get(int(v), 0.0) for v in self.base]
        r0[m:m + ne] = -c_eq[:ne]
        y = scipy.linalg.lu_solve(self.lu, r0, check_finite=False)
        self.flops += 2.0 * self.size ** 2
        step = dict(zip(self.base.tolist(), y[:m]))
        p = len(self.extra)
        if p:
            rn = np.array([-z_of[i] if kind == "var" else 0.0 for kind, i in self.extra])
            xn, flops = self.border.solve(rn, y)
            self.flops += flops + 2.0 * self.size * p
            y = y - self.border.YT[:p].T @ xn
            step = dict(zip(self.base.tolist(), y[:m]))
            step.update((i, value) for (kind, i), value in zip(self.extra, xn)
                        if kind == "var")
        return np.array([step[int(v)] for v in free_idx]), self.E @ y[m:m + ne]

    def refine(self):
        """After a full step whose free variables' reduced gradients are not settled:
        whether to step again on the same face.  The next step, solved from the exact
        gradient, is a step of iterative refinement with the same factors; after
        REFINE_STEPS of them in a row a bordered system is refactored (its Schur updates
        lost too many digits) and a fresh one is left as it is (False)."""
        self.refined += 1
        if self.refined <= REFINE_STEPS:
            return True
        if self.base is not None and self.extra:
            self.base, self.refined = None, 0
            return True
        return False


class MoveFace(GroupedFace):
    """`GroupedFace` with the active caps eliminated: the same step, solved on the moves that
    keep every active cap's sum instead of with one multiplier row per cap.

    A free variable outside the active caps moves alone (the move (v, -1)); in an active cap
    with free members a_0 < a_1 < ... the first, the anchor, takes the opposite of every
    other's change (the moves (a_j, a_0), j >= 1), so that x = N w holds the caps' sums by
    construction and the bordered system is

        [ N^T Q_FF N + reg I   N^T A ] [ w ]   [ -N^T z_F ]
        [ A^T N               -reg I ] [ t ] = [ -E^T c   ]

    of size m - (active caps with free members) + k - 1 where `GroupedFace`'s is m + caps +
    k - 1.  At a large C about half the free variables of the grouped margin dual sit in
    full caps (make_blobs n = 4,000, RBF, C = 1e8: bordered systems of 470 rows on average
    for about 300 free variables, where WestonWatkinsMSVM's box-constrained face on the same
    data has 200), and the factorizations, repeated wherever a bordered solve drifts, cost
    the cube of that size.  Changes are bordered as moves: a move added ('var') or a base
    move removed ('fix'); a new anchor (the old one fixed) changes its cap's moves.
    """

    def _moves(self, free_idx, caps):
        """The moves of (free_idx, caps), sorted: keys v (n_vars + 1) + a + 1 of the
        variable v and its anchor a (-1: none)."""
        g = self.group_of[free_idx]
        capped = np.isin(g, caps) & (g >= 0)
        anchor = np.full(len(free_idx), -1, dtype=np.int64)
        keep = np.ones(len(free_idx), dtype=bool)
        pos = np.flatnonzero(capped)
        if len(pos):
            gp = g[pos]
            first = np.ones(len(pos), dtype=bool)
            first[1:] = gp[1:] != gp[:-1]          # free_idx is sorted: groups contiguous
            anchor[pos] = free_idx[pos[first]][np.cumsum(first) - 1]
            keep[pos[first]] = False
        return np.sort(free_idx[keep] * self.stride + anchor[keep] + 1)

    @property
    def stride(self):
        """The key of move (v, a) is v stride + a + 1."""
        return len(self.group_of) + 1

    def _split(self, keys):
        """(variables, anchors or -1) of the move keys."""
        keys = np.asarray(keys, dtype=np.int64)
        return keys // self.stride, keys % self.stride - 1

    def _q(self, rows, cols):
        """N^T Q N between the moves ``rows`` and ``cols`` (keys)."""
        (rv, ra), (cv, ca) = self._split(rows), self._split(cols)
        q = super()._q
        Q = q(rv, cv)
        rh, ch = ra >= 0, ca >= 0
        if np.any(ch):
            Q[:, ch] -= q(rv, ca[ch])
        if np.any(rh):
            Q[rh] -= q(ra[rh], cv)
            if np.any(ch):
                Q[np.ix_(rh, ch)] += q(ra[rh], ca[ch])
        return Q

    def _a(self, keys):
        """The equalities' rows N^T A of the moves (p, k - 1)."""
        v, a = self._split(keys)
        A = self.D[v] @ self.E
        h = a >= 0
        A[h] -= self.D[a[h]] @ self.E
        return A

    def _factor(self, moves, caps=None):
        """Make ``moves`` (sorted keys) the base: form and factor its bordered matrix."""
        m, ne = len(moves), self.ne
        Q = self._q(moves, moves)
        self.reg = REG * max(float(np.abs(np.diag(Q)).max(initial=0.0)), 1e-300)
        Q[np.diag_indices(m)] += self.reg
        A = self._a(moves)
        self._base_on(np.block([[Q, A], [A.T, -self.reg * np.eye(ne)]]), moves)

    def _column(self, kind, key):
        """The base rows N[:, j] of a new border column."""
        col = np.zeros(self.size)
        if kind == "fix":
            col[np.searchsorted(self.base, key)] = 1.0
            return col
        m, mv = len(self.base), np.array([key])
        col[:m] = self._q(self.base, mv)[:, 0]
        col[m:m + self.ne] = self._a(mv)[0]
        return col

    def _corner(self, left, right):
        """C[left][:, right]: the Hessian entries between added moves (+reg on the diagonal
        when left is right)."""
        C, li = hessian_corner(self._q, left, right)
        if li and left is right:
            C[li, li] += self.reg
        return C

    def _sync(self, moves):
        """Border the base system so that it describes ``moves``; refactor where it differs
        from the base by more than REFACTOR changes."""
        if self.base is None:
            self._factor(moves)
            return
        fixes = np.setdiff1d(self.base, moves, assume_unique=True)
        frees = np.setdiff1d(moves, self.base, assume_unique=True)
        extra = ([("fix", int(key)) for key in fixes] + [("var", int(key)) for key in frees])
        if set(extra) != set(self.extra):
            self.refined = 0            # another face: its refinement starts anew
        if len(extra) > REFACTOR:
            self._factor(moves)
            return
        border_with(self, extra)

    def solve(self, free_idx, z, c_eq, caps):
        """As `GroupedFace.solve`: (x on free_idx, s)."""
        if len(free_idx) == 0:
            return np.zeros(0), np.zeros(self.lay.k)
        moves = self._moves(free_idx, caps)
        self._sync(moves)
        m, ne = len(self.base), self.ne
        v, a = self._split(moves)
        pv, pa = np.searchsorted(free_idx, v), np.searchsorted(free_idx, a)
        held = a >= 0
        z_move = z[pv] - np.where(held, z[np.minimum(pa, len(z) - 1)], 0.0)
        in_base = np.searchsorted(self.base, moves)
        in_base = np.minimum(in_base, m - 1)
        on_base = self.base[in_base] == moves
        r0 = np.zeros(self.size)
        r0[in_base[on_base]] = -z_move[on_base]
        r0[m:m + ne] = -c_eq[:ne]
        y = scipy.linalg.lu_solve(self.lu, r0, check_finite=False)
        self.flops += 2.0 * self.size ** 2
        w = np.zeros(len(moves))
        p = len(self.extra)
        if p:
            added = np.array([kind == "var" for kind, _ in self.extra])
            keys = np.array([key for _, key in self.extra], dtype=np.int64)
            at = np.searchsorted(moves, keys[added])
            rn = np.zeros(p)
            rn[added] = -z_move[at]
            xn, flops = self.border.solve(rn, y)
            self.flops += flops + 2.0 * self.size * p
            y = y - self.border.YT[:p].T @ xn
            w[at] = xn[added]
        w[on_base] = y[in_base[on_base]]
        x = np.zeros(len(free_idx))
        np.add.at(x, pv, w)
        np.subtract.at(x, pa[held], w[held])
        return x, self.E @ y[m:m + ne]
