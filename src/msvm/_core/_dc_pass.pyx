# Design
# ======
# The work of a DC step (msvm/_dc.py) around its compiled solve that reads every variable:
# the linearization of the truncated loss at the current decision values (the step's box
# shift and the truncated samples, the models' ``_dc_shift``) and the samples whose weights
# the step's solve read (``msvm._dc.weighed_samples``: a variable at a bound that grows with
# the sample's weight, in a group at its nonzero cap, or shifted).  In NumPy each is 10 to
# 25 calls over (n_vars,) and (n, k) temporaries: about 20 us (RobustMSVM) and 45 us
# (WeightedRobustMSVM) a call at 400 samples and k = 3, some 300 calls a probability fit.
# Here each is one pass over the samples and their variables, no temporaries but the
# outputs.
#
# * ``truncation_shift``: the shift and the truncated mask of the linearization, for the
#   two forms of truncated term: a hinge on one decision value (RobustMSVM: truncated where
#   f_j(x_i) > s, the shift the variable's upper bound) and a hinge on a generalized margin
#   (WeightedRobustMSVM: the group (i, j) truncated where f_j - max_{j' != j} f_j' < s, the
#   shift the group's cap on its variable whose j' is the first attaining that max).
# * ``weighed_marks``: the marks above, or-ed into the caller's array.
#
# Every value is the one NumPy forms, bit for bit: comparisons, one product by 1.0 or 0.0
# (NumPy's bool-to-float product), one difference, the group sums in the order of the
# variables (np.bincount), the first maximum of a row as np.argmax finds it (a NaN counts
# as the largest).  Where the NumPy step would index outside the arrays (a variable without
# a group or a second slot in the margin form) the pass returns None and the caller keeps
# its NumPy step.  The passes count their work and poll Python's signal handlers (``tick``,
# as the solver's loops do): Ctrl-C stays prompt.

import numpy as np
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free

from ._types cimport Prob, v_s1, v_s2, v_hi, v_grp
from ._problem cimport ProblemArrays
from ._bounds cimport at_moving_bound, group_sums as group_sums_of
from ._signals cimport tick, reraise

# the work counted per variable of a pass, in the solver's units (about a multiply-add; a
# check every CHECK_WORK units)
DEF VAR_WORK = 16
DEF INTERRUPTED = -2
DEF REFUSED = -1


cdef inline int _first_max(const double[:, :] G, int i, int k, int skip) noexcept nogil:
    """np.argmax of row i of G with column ``skip`` taken as -inf (skip < 0: none): the first
    index of the largest value, a NaN counting as the largest (NumPy's ``!(v <= max)``)."""
    cdef int j, at = 0
    cdef double best = -INFINITY if skip == 0 else G[i, 0]
    cdef double v
    if best != best:
        return 0
    for j in range(1, k):
        v = -INFINITY if j == skip else G[i, j]
        if not (v <= best):
            best = v
            at = j
            if v != v:
                break
    return at


cdef int _hinge_shift(const Prob* p, const double[:, :] G, double s, double* shift,
                      unsigned char* truncated, long long* work) noexcept nogil:
    """One decision value per term: beta_v = f_{slot1(v)}(x_i) > s, shift hi_v beta_v."""
    cdef int i, v
    cdef bint beta
    for i in range(p.n):
        truncated[i] = 0
        for v in range(p.ptr[i], p.ptr[i + 1]):
            beta = G[i, v_s1(p, v)] > s
            shift[v] = v_hi(p, v) * (1.0 if beta else 0.0)
            if beta:
                truncated[i] = 1
        if tick(work, VAR_WORK * (p.ptr[i + 1] - p.ptr[i]) + p.k):
            return INTERRUPTED
    return 0


cdef int _margin_shift(const Prob* p, const double[:, :] G, double s, double* shift,
                       unsigned char* truncated, long long* work) noexcept nogil:
    """One generalized margin per group (i, j = slot2(v)): beta = f_j - max_{j' != j} f_j'
    < s; the shift the group's cap on its variable whose slot1(v) is the first j' attaining
    that max (``msvm.weighted._group_margins_truncated``'s values)."""
    cdef int i, v, g, own, top, runner, jstar, k = p.k
    cdef double best_other
    cdef bint beta
    for i in range(p.n):
        truncated[i] = 0
        top = _first_max(G, i, k, -1)
        runner = _first_max(G, i, k, top)
        for v in range(p.ptr[i], p.ptr[i + 1]):
            own = v_s2(p, v)
            g = v_grp(p, v)
            if own < 0 or g < 0:
                return REFUSED
            if own == top:
                best_other = -INFINITY if runner == top else G[i, runner]
                jstar = runner
            else:
                best_other = G[i, top]
                jstar = top
            beta = G[i, own] - best_other < s
            shift[v] = p.cap[g] if (beta and v_s1(p, v) == jstar) else 0.0
            if beta:
                truncated[i] = 1
        if tick(work, VAR_WORK * (p.ptr[i + 1] - p.ptr[i]) + 2 * k):
            return INTERRUPTED
    return 0


def truncation_shift(problem, const double[:, :] G, double s, bint margin):
    """The linearization of a truncated model's loss at decision values G: (shift,
    truncated), the box shift of every variable of ``problem`` (the untruncated dual) and
    the samples with a truncated term, as the model's ``_dc_shift`` forms them (see the
    Design note); None where a variable has no group or second slot in the margin form
    (the caller's NumPy step decides).

    Parameters
    ----------
    problem : msvm._problem.DualProblem
        The untruncated dual the shift moves.
    G : ndarray of shape (n_samples, k)
        The decision values (any strides).
    s : float
        The truncation point.
    margin : bool
        The margin form (WeightedRobustMSVM) instead of one decision value per term
        (RobustMSVM).

    Returns
    -------
    shift : ndarray of shape (n_vars,)
    truncated : ndarray of bool, shape (n_samples,)
    """
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int status
    cdef long long work = 0
    if G.shape[0] != p.n or G.shape[1] != p.k:
        raise ValueError("the decision values do not match the problem")
    if margin and (p.grp == NULL or p.ngroups == 0 or p.k < 2):
        return None
    shift = np.empty(p.nv)
    truncated = np.empty(p.n, dtype=bool)
    cdef double[::1] sh = shift
    cdef unsigned char[::1] tr = truncated.view(np.uint8)
    with nogil:
        if margin:
            status = _margin_shift(p, G, s, &sh[0] if p.nv else NULL,
                                   &tr[0] if p.n else NULL, &work)
        else:
            status = _hinge_shift(p, G, s, &sh[0] if p.nv else NULL,
                                  &tr[0] if p.n else NULL, &work)
    if status == INTERRUPTED:
        reraise()
    if status == REFUSED:
        return None
    return shift, truncated


cdef int _marks(const Prob* p, const double* alpha, const double* shift,
                unsigned char* marks, double* group_sums, long long* work) noexcept nogil:
    """marks[i] |= a variable of sample i at a nonzero bound it reached, in a group at its
    nonzero cap, or with a nonzero shift (``shift`` NULL: none)."""
    cdef int i, v
    group_sums_of(p, alpha, group_sums)
    for i in range(p.n):
        if marks[i]:
            continue
        for v in range(p.ptr[i], p.ptr[i + 1]):
            if (at_moving_bound(p, alpha, v, group_sums)
                    or (shift != NULL and shift[v] != 0.0)):
                marks[i] = 1
                break
        if tick(work, VAR_WORK * (p.ptr[i + 1] - p.ptr[i])):
            return INTERRUPTED
    return 0


def weighed_marks(problem, const double[::1] alpha, shift, unsigned char[::1] marks):
    """Or into ``marks`` (uint8, one per sample) the samples whose weights a solve read at
    its solution ``alpha`` of ``problem``: ``problem.at_moving_bounds(alpha)``, and with
    ``shift`` (float64, n_vars; None: none) the samples with a shifted variable
    (``msvm._dc.weighed_samples``'s values)."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef const double[::1] sh
    cdef const double* sp = NULL
    cdef int status
    cdef long long work = 0
    if alpha.shape[0] != p.nv or marks.shape[0] != p.n:
        raise ValueError("the arrays do not match the problem")
    if shift is not None:
        sh = shift
        if sh.shape[0] != p.nv:
            raise ValueError("the shift does not match the problem")
        sp = &sh[0] if p.nv else NULL
    cdef double* sums = <double*> malloc(p.ngroups * sizeof(double) + 1)
    if sums == NULL:
        raise MemoryError()
    with nogil:
        status = _marks(p, &alpha[0] if p.nv else NULL, sp, &marks[0] if p.n else NULL,
                        sums, &work)
    free(sums)
    if status == INTERRUPTED:
        reraise()


cdef inline double _max0(double x) noexcept nogil:
    """np.maximum(x, 0.0): x where x > 0 or x is NaN, else +0.0."""
    return x if (x > 0.0 or x != x) else 0.0


cdef int _losses(const double[:, :] G, const Py_ssize_t[::1] y, double s, bint truncated,
                 const double[:, :] U, bint margin, double* out, double* row,
                 long long* work) noexcept nogil:
    """Each sample's loss into ``out``: the sum over its row of ``row`` (see
    :func:`sample_losses`), one value after another from the first (NumPy's sum of a row
    of fewer than 8 values); REFUSED where a label is outside [0, k) or, in the margin
    form, a decision value is NaN."""
    cdef Py_ssize_t i, n = G.shape[0]
    cdef int j, top, k = G.shape[1], yi
    cdef double g, first, second, total
    for i in range(n):
        yi = <int> y[i]
        if y[i] < 0 or y[i] >= k:
            return REFUSED
        if margin:
            top = 0
            for j in range(k):
                if G[i, j] != G[i, j]:
                    return REFUSED
                if G[i, j] > G[i, top]:
                    top = j
            first = G[i, top]
            second = -INFINITY
            for j in range(k):
                if j != top and G[i, j] > second:
                    second = G[i, j]
            for j in range(k):
                # the generalized margin g_j = f_j - max_{j' != j} f_j' (``margins``)
                g = G[i, j] - (second if j == top else first)
                row[j] = _max0(1.0 - g) - _max0(s - g) if truncated else _max0(1.0 - g)
                row[j] = U[yi, j] * row[j]
        else:
            for j in range(k):
                if j == yi:
                    row[j] = 0.0
                else:
                    g = G[i, j]
                    row[j] = _max0(1.0 + g) - _max0(g - s) if truncated else _max0(1.0 + g)
        total = row[0]
        for j in range(1, k):
            total += row[j]
        out[i] = total
        if tick(work, VAR_WORK * k):
            return INTERRUPTED
    return 0


def sample_losses(const double[:, :] G, y, s, utility=None):
    """The truncated models' loss of each sample at decision values G, as NumPy forms it
    (``msvm._losses``; see the Design note): without ``utility``, sum_{j != y_i}
    T_s(f_j(x_i)) with T_s(u) = [1 + u]_+ - [u - s]_+ (``truncated_hinge_loss``,
    RobustMSVM); with the utility matrix U, sum_j U[y_i, j] ([1 - g_j]_+ - [s - g_j]_+)
    over the generalized margins g (``utility_margin_loss``, WeightedRobustMSVM).  ``s``
    None: no truncation.  Returns an ndarray of shape (n_samples,), or None where NumPy's
    step decides (a label outside the classes, k of 8 or more, a NaN in the margin form).
    """
    cdef Py_ssize_t n = G.shape[0]
    cdef int k = G.shape[1], status
    cdef long long work = 0
    cdef bint margin = utility is not None, truncated = s is not None
    cdef double cut = float(s) if truncated else 0.0
    cdef const Py_ssize_t[::1] labels = np.ascontiguousarray(y, dtype=np.intp)
    cdef const double[:, :] U
    if labels.shape[0] != n:
        raise ValueError("the labels do not match the decision values")
    if k < 1 or k >= 8:
        return None
    U = np.ascontiguousarray(utility, dtype=np.float64) if margin else np.zeros((1, 1))
    if margin and (U.shape[0] != k or U.shape[1] != k):
        raise ValueError("the utility matrix does not match the decision values")
    out = np.empty(n)
    cdef double[::1] o = out
    cdef double row[8]
    with nogil:
        status = _losses(G, labels, cut, truncated, U, margin, &o[0] if n else NULL, row,
                         &work)
    if status == INTERRUPTED:
        reraise()
    if status == REFUSED:
        return None
    return out
