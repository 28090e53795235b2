# Design
# ======
# A model is data: a DualProblem (msvm/_problem.py) lists, per dual variable v, the sample
# i(v) it belongs to (variables ptr[i]:ptr[i+1]), its direction d_v in class-slot space (at
# most two nonzero slots), its linear term, its box and optionally a group with a cap.
# Directions and linear terms live in entries shared through var_entry (the variables of
# every sample of one class read the same template), boxes per variable or per entry: a
# million samples then cost 12 bytes per variable instead of 52.  ProblemArrays checks the
# arrays once and exposes them to the solver modules as the Prob struct (_types.pxd), whose
# accessors v_s1 ... v_grp hide the layout.  The helpers below are the O(n_vars) reductions
# the Python layer needs, done here so that they allocate nothing per variable.

import numpy as np
from libc.stdlib cimport malloc, free

from ._types cimport (Prob, MAX_CLASSES, v_s1, v_c1, v_s2, v_c2, v_lin, v_lo, v_hi, v_grp)


cdef class ProblemArrays:
    """A DualProblem's arrays held as typed views, and the solver's Prob struct over them."""

    def __init__(self, problem, int k):
        cdef int i, nv, ne
        self.ptr = problem.var_ptr
        self.s1 = problem.entry_slot1
        self.c1 = problem.entry_coef1
        self.s2 = problem.entry_slot2
        self.c2 = problem.entry_coef2
        self.lin = problem.entry_lin
        self.lo = problem.box_lo
        self.hi = problem.box_hi
        self.cap = problem.cap
        nv = problem.n_vars
        ne = self.lin.shape[0]
        if k > MAX_CLASSES:
            raise ValueError(f"the compiled solver supports at most {MAX_CLASSES} class slots "
                             f"(got {k}): merge rare classes, or fit a hierarchy of "
                             f"classifiers over groups of classes")
        if self.ptr.shape[0] < 1 or self.ptr[self.ptr.shape[0] - 1] != nv:
            raise ValueError("problem arrays disagree in length")
        if problem.var_entry is not None:
            self.ent = problem.var_entry
            if self.ent.shape[0] != nv:
                raise ValueError("problem arrays disagree in length")
        elif ne != nv:
            raise ValueError("problem arrays disagree in length")
        if (self.s1.shape[0] != ne or self.c1.shape[0] != ne or self.s2.shape[0] != ne
                or self.c2.shape[0] != ne
                or self.lo.shape[0] != (ne if problem.lo_per_entry else nv)
                or self.hi.shape[0] != (ne if problem.hi_per_entry else nv)):
            raise ValueError("problem arrays disagree in length")
        if problem.var_group is not None:
            self.grp = problem.var_group
            if self.grp.shape[0] != nv:
                raise ValueError("problem arrays disagree in length")
        self.p.n = self.ptr.shape[0] - 1
        self.p.k = k
        self.p.nv = nv
        self.p.ne = ne
        self.p.ptr = &self.ptr[0]
        self.p.ent = &self.ent[0] if problem.var_entry is not None and nv else NULL
        self.p.s1 = &self.s1[0] if ne else NULL
        self.p.c1 = &self.c1[0] if ne else NULL
        self.p.s2 = &self.s2[0] if ne else NULL
        self.p.c2 = &self.c2[0] if ne else NULL
        self.p.lin = &self.lin[0] if ne else NULL
        self.p.lo = &self.lo[0] if self.lo.shape[0] else NULL
        self.p.hi = &self.hi[0] if self.hi.shape[0] else NULL
        self.p.lo_ent = 1 if problem.lo_per_entry else 0
        self.p.hi_ent = 1 if problem.hi_per_entry else 0
        self.p.grp = &self.grp[0] if problem.var_group is not None and nv else NULL
        self.p.cap = &self.cap[0] if self.cap.shape[0] > 0 else NULL
        self.p.ngroups = self.cap.shape[0]
        self.p.gap_scale = 0.0
        self.p.kappa = float(problem.kappa)
        self.p.equality = 1 if problem.equality else 0
        self.p.maxper = 0
        for i in range(self.p.n):
            if self.ptr[i + 1] - self.ptr[i] > self.p.maxper:
                self.p.maxper = self.ptr[i + 1] - self.ptr[i]


def slot_sums(problem, const double[::1] alpha):
    """U (n, k): per sample, sum_v alpha_v d_v over its variables (no per-variable memory)."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    if alpha.shape[0] != p.nv:
        raise ValueError("alpha does not match the problem")
    U = np.zeros((p.n, p.k))
    cdef double[:, ::1] u = U
    cdef int i, v, j2
    cdef double a
    with nogil:
        for i in range(p.n):
            for v in range(p.ptr[i], p.ptr[i + 1]):
                a = alpha[v]
                if a == 0.0:
                    continue
                u[i, v_s1(p, v)] += a * v_c1(p, v)
                j2 = v_s2(p, v)
                if j2 >= 0:
                    u[i, j2] += a * v_c2(p, v)
    return U


def clip_to_boxes(problem, double[::1] alpha):
    """Clip alpha into the boxes [lo_v, hi_v], in place."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int v
    if alpha.shape[0] != p.nv:
        raise ValueError("alpha does not match the problem")
    with nogil:
        for v in range(p.nv):
            alpha[v] = min(max(alpha[v], v_lo(p, v)), v_hi(p, v))


def samples_with_nonzero(problem, const double[::1] alpha):
    """Boolean mask (n,): the samples with at least one nonzero alpha_v."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    if alpha.shape[0] != p.nv:
        raise ValueError("alpha does not match the problem")
    mask = np.zeros(p.n, dtype=bool)
    cdef unsigned char[::1] m = mask.view(np.uint8)
    cdef int i, v
    with nogil:
        for i in range(p.n):
            for v in range(p.ptr[i], p.ptr[i + 1]):
                if alpha[v] != 0.0:
                    m[i] = 1
                    break
    return mask


def box_crossings(problem):
    """Number of variables whose lower bound exceeds their upper bound."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int v
    cdef long long bad = 0
    with nogil:
        for v in range(p.nv):
            if v_lo(p, v) > v_hi(p, v):
                bad += 1
    return bad


def scatter_by_slots(problem, const double[::1] alpha, bint pairs):
    """alpha as an (n, k) array indexed by slot1, or (n, k, k) indexed by (slot2, slot1)."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int i, v, k = p.k
    if alpha.shape[0] != p.nv:
        raise ValueError("alpha does not match the problem")
    cdef int n = p.n
    out = np.zeros((n, k, k)) if pairs else np.zeros((n, k))
    cdef double[::1] flat = out.reshape(-1)
    with nogil:
        for i in range(p.n):
            for v in range(p.ptr[i], p.ptr[i + 1]):
                if pairs:
                    flat[(<Py_ssize_t> i * k + v_s2(p, v)) * k + v_s1(p, v)] = alpha[v]
                else:
                    flat[<Py_ssize_t> i * k + v_s1(p, v)] = alpha[v]
    return out


def used_entries(problem):
    """Boolean mask over the entries: those some variable reads."""
    cdef const int[::1] ent = problem.var_entry
    cdef Py_ssize_t v, nv = ent.shape[0]
    mask = np.zeros(len(problem.entry_lin), dtype=bool)
    cdef unsigned char[::1] m = mask.view(np.uint8)
    with nogil:
        for v in range(nv):
            m[ent[v]] = 1
    return mask


def slot_breakpoints(problem, const double[:, ::1] H):
    """Per slot j, the breakpoints in b_j of the loss terms of the one-slot variables of a
    problem (directions sigma_v e_j, no second slot), for the exact intercept step: where
    z_v(b) = a_v + sigma_v (H_ij + b_j) changes sign, t_v = -sigma_v a_v - H_ij (sigma_v
    = sign of the coefficient), the rise hi_v - lo_v of the slope of max_{lo <= a <= hi} a z_v
    there, and the slope below every breakpoint, the sum of lo_v (sigma_v > 0) or -hi_v.

    Returns (t, rise, base): lists of k arrays (the slot's variables in their order) and the
    (k,) slopes below.  Two passes over the variables (a count, then the values)."""
    cdef ProblemArrays pa = ProblemArrays(problem, problem.k)
    cdef const Prob* p = &pa.p
    cdef int i, v, j, k = p.k
    cdef double c, sig
    if H.shape[0] != p.n or H.shape[1] != k:
        raise ValueError("H must be (n_samples, k)")
    counts = np.zeros(k, dtype=np.intp)
    base = np.zeros(k)
    cdef Py_ssize_t[::1] cnt = counts
    cdef double[::1] bs = base
    with nogil:
        for v in range(p.nv):
            if v_s2(p, v) >= 0:
                with gil:
                    raise ValueError("slot_breakpoints needs one-slot directions")
            cnt[v_s1(p, v)] += 1
    ts = [np.empty(counts[j]) for j in range(k)]
    rises = [np.empty(counts[j]) for j in range(k)]
    cdef double** tp = <double**> malloc(k * sizeof(double*) + 1)
    cdef double** rp = <double**> malloc(k * sizeof(double*) + 1)
    cdef double[::1] view
    if tp == NULL or rp == NULL:
        free(tp)
        free(rp)
        raise MemoryError("cannot allocate the breakpoint pointers")
    for j in range(k):
        view = ts[j] if counts[j] else np.empty(1)
        tp[j] = &view[0]
        view = rises[j] if counts[j] else np.empty(1)
        rp[j] = &view[0]
        cnt[j] = 0
    with nogil:
        for i in range(p.n):
            for v in range(p.ptr[i], p.ptr[i + 1]):
                j = v_s1(p, v)
                c = v_c1(p, v)
                sig = (c > 0.0) - (c < 0.0)
                tp[j][cnt[j]] = -sig * v_lin(p, v) - H[i, j]
                rp[j][cnt[j]] = v_hi(p, v) - v_lo(p, v)
                bs[j] += v_lo(p, v) if sig > 0.0 else -v_hi(p, v)
                cnt[j] += 1
    free(tp)
    free(rp)
    return ts, rises, base
