# Design
# ======
# A model is data: a DualProblem (msvm/_problem.py) lists, per dual variable v, the sample
# i(v) it belongs to (variables ptr[i]:ptr[i+1]), its direction d_v in class-slot space (at
# most two nonzero slots), its linear term, its box and optionally a group with a cap.
# ProblemArrays checks the arrays once and exposes them to the solver modules as the Prob
# struct (_types.pxd).

from ._types cimport MAX_CLASSES


cdef class ProblemArrays:
    """A DualProblem's arrays held as typed views, and the solver's Prob struct over them."""

    def __init__(self, problem, int k):
        cdef int i, nv
        self.ptr = problem.var_ptr
        self.s1 = problem.slot1
        self.c1 = problem.coef1
        self.s2 = problem.slot2
        self.c2 = problem.coef2
        self.lin = problem.lin
        self.lo = problem.lo
        self.hi = problem.hi
        self.grp = problem.group
        self.cap = problem.cap
        nv = self.lin.shape[0]
        if k > MAX_CLASSES:
            raise ValueError(f"the compiled solver supports at most {MAX_CLASSES} classes")
        if (self.s1.shape[0] != nv or self.c1.shape[0] != nv or self.s2.shape[0] != nv
                or self.c2.shape[0] != nv or self.lo.shape[0] != nv or self.hi.shape[0] != nv
                or self.grp.shape[0] != nv):
            raise ValueError("problem arrays disagree in length")
        self.p.n = self.ptr.shape[0] - 1
        self.p.k = k
        self.p.nv = nv
        self.p.ptr = &self.ptr[0]
        self.p.s1 = &self.s1[0] if nv else NULL
        self.p.c1 = &self.c1[0] if nv else NULL
        self.p.s2 = &self.s2[0] if nv else NULL
        self.p.c2 = &self.c2[0] if nv else NULL
        self.p.lin = &self.lin[0] if nv else NULL
        self.p.lo = &self.lo[0] if nv else NULL
        self.p.hi = &self.hi[0] if nv else NULL
        self.p.grp = &self.grp[0] if nv else NULL
        self.p.cap = &self.cap[0] if self.cap.shape[0] > 0 else NULL
        self.p.ngroups = self.cap.shape[0]
        self.p.kappa = float(problem.kappa)
        self.p.equality = 1 if problem.equality else 0
        self.p.maxper = 0
        for i in range(self.p.n):
            if self.ptr[i + 1] - self.ptr[i] > self.p.maxper:
                self.p.maxper = self.ptr[i + 1] - self.ptr[i]
