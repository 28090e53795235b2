# A DualProblem (msvm/_problem.py) held as typed views, with the Prob struct over them.

from ._types cimport Prob


cdef class ProblemArrays:
    cdef const int[::1] ptr, ent, s1, s2, grp
    cdef const double[::1] c1, c2, lin, lo, hi, cap
    cdef Prob p
