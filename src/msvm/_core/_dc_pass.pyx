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

from ._types cimport Prob, v_s1, v_s2, v_lo, v_hi, v_grp
from ._problem cimport ProblemArrays
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
    cdef int i, v, g
    cdef double a, lo, hi
    for g in range(p.ngroups):
        group_sums[g] = 0.0
    for v in range(p.nv):
        g = v_grp(p, v)
        if g >= 0:
            group_sums[g] += alpha[v]
    for i in range(p.n):
        if marks[i]:
            continue
        for v in range(p.ptr[i], p.ptr[i + 1]):
            a = alpha[v]
            lo, hi = v_lo(p, v), v_hi(p, v)
            g = v_grp(p, v)
            if ((a >= hi and hi != 0.0) or (a <= lo and lo != 0.0)
                    or (g >= 0 and group_sums[g] >= p.cap[g] and p.cap[g] != 0.0)
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
