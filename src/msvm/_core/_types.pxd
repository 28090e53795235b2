# Types and constants shared by every module of the compiled core: the problem and state
# structs, the augmented-Lagrangian schedule, the status codes and the numerical constants.
# Everything here is a declaration or an inline function, so any module can cimport it.

cdef extern from *:
    """
    /* Numerical constants of the msvm dual solver (see msvm/_core/_types.pxd). */
    #define MSVM_MAX_CLASSES 1024
    #define MSVM_WORKING_SET 256
    #define MSVM_WORKING_SET_LARGE 512
    #define MSVM_LARGE_SCAN 200000
    #define MSVM_SHRINK_EVERY 10
    #define MSVM_CHECK_WORK (((long long) 1) << 24)
    #define MSVM_EPS_START 0.1
    #define MSVM_KKT_FLOOR 1e-13
    #define MSVM_FEAS_FLOOR 1e-15
    #define MSVM_GAP_FLOOR 1e-8
    #define MSVM_RHO_MAX 1e6
    #define MSVM_CURV_MIN 1e-12
    #define MSVM_CAP_RTOL 1e-12
    """
    # most class slots of a problem: per-sample work arrays of this size live on the stack
    # (8 KB of doubles each, a few per frame); every loop over them runs to k, not to this
    # bound, so a larger bound costs fits with few classes nothing
    enum: MAX_CLASSES "MSVM_MAX_CLASSES"
    # largest working set (samples) of the SMO path; never more than the row cache holds.
    # WORKING_SET_LARGE where a working set's fixed costs dominate: the row cache holds
    # under half the rows (each block recomputes rows), or the scan covers LARGE_SCAN or
    # more sample-slot pairs (n k)
    enum: WORKING_SET "MSVM_WORKING_SET"
    enum: WORKING_SET_LARGE "MSVM_WORKING_SET_LARGE"
    enum: LARGE_SCAN "MSVM_LARGE_SCAN"
    # the SMO path's scans skip settled samples (shrinking) and look at every sample once in
    # SHRINK_EVERY scans and before declaring convergence
    enum: SHRINK_EVERY "MSVM_SHRINK_EVERY"
    # work units (about one multiply-add each) between two signal checks: ~10 ms of work
    const long long CHECK_WORK "MSVM_CHECK_WORK"
    # inner tolerance of the first augmented-Lagrangian round
    const double EPS_START "MSVM_EPS_START"
    # floors of the KKT and equality tolerances while the duality-gap rule lowers them
    # (rounding dominates below; the class sums round far less than the gradients)
    const double KKT_FLOOR "MSVM_KKT_FLOOR"
    const double FEAS_FLOOR "MSVM_FEAS_FLOOR"
    # the relative duality gap is certified down to GAP_FLOOR (below it its own sums round)
    const double GAP_FLOOR "MSVM_GAP_FLOOR"
    # largest augmented-Lagrangian penalty for boxes of size ~1 (RHO_MAX / scale below 1)
    const double RHO_MAX "MSVM_RHO_MAX"
    # curvature below which a step goes to the bound instead of a Newton step
    const double CURV_MIN "MSVM_CURV_MIN"
    # a group is full when its sum is within CAP_RTOL (1 + |cap|) of its cap
    const double CAP_RTOL "MSVM_CAP_RTOL"


# Solver status codes (returned by the inner solvers and the driver; `solve` turns them into
# return values, warnings or errors).  Python reads them under their names from
# msvm._core._solver.Status, built from these constants (no other copy).
cdef enum:
    STATUS_CONVERGED = 0
    STATUS_MAX_ITER = 1
    STATUS_NONFINITE = 2
    STATUS_INTERRUPTED = 3
    STATUS_GAP_FLOOR = 4
    STATUS_NO_MEMORY = -1


cdef struct Prob:
    # A DualProblem's arrays (msvm/_problem.py): variables ptr[i]:ptr[i+1] belong to sample i;
    # variable v has direction c1 e_{s1} (+ c2 e_{s2} if s2 >= 0), linear term lin, box
    # [lo, hi] and group grp (-1: none) with cap[grp].  Direction and linear term are stored
    # per entry: variable v reads entry ent[v] (ent NULL: entry v), so that the variables of
    # all samples of one class share one template.  lo and hi are stored per variable, or per
    # entry when lo_ent (hi_ent) is set; grp is per variable (NULL: no groups).  Read them
    # through the accessors below, never directly.
    int n, k, nv
    int ne            # entries (nv when ent is NULL)
    const int* ptr
    const int* ent
    const int* s1
    const double* c1
    const int* s2
    const double* c2
    const double* lin
    const double* lo
    const double* hi
    const int* grp
    const double* cap
    int lo_ent        # lo is indexed by entry (1) or by variable (0)
    int hi_ent
    double kappa
    int equality
    int maxper        # most variables of one sample
    int ngroups       # number of groups (0: every variable has only its box)
    double gap_scale  # least size of the objective a relative duality gap is measured
                      # against (_gap.pyx: scores_gap; 0 unless the caller sets one)


cdef inline int v_ent(const Prob* p, int v) noexcept nogil:
    """The entry (direction, linear term) of variable v."""
    return v if p.ent == NULL else p.ent[v]


cdef inline int v_s1(const Prob* p, int v) noexcept nogil:
    return p.s1[v_ent(p, v)]


cdef inline double v_c1(const Prob* p, int v) noexcept nogil:
    return p.c1[v_ent(p, v)]


cdef inline int v_s2(const Prob* p, int v) noexcept nogil:
    return p.s2[v_ent(p, v)]


cdef inline double v_c2(const Prob* p, int v) noexcept nogil:
    return p.c2[v_ent(p, v)]


cdef inline double v_lin(const Prob* p, int v) noexcept nogil:
    return p.lin[v_ent(p, v)]


cdef inline double v_lo(const Prob* p, int v) noexcept nogil:
    return p.lo[v_ent(p, v) if p.lo_ent else v]


cdef inline double v_hi(const Prob* p, int v) noexcept nogil:
    return p.hi[v_ent(p, v) if p.hi_ent else v]


cdef inline int v_grp(const Prob* p, int v) noexcept nogil:
    return -1 if p.grp == NULL else p.grp[v]


cdef struct State:
    double* alpha
    double* gsum      # per group: sum of alpha
    double* c         # k: sum_v alpha_v d_v
    double* s         # k: mu + rho * P c  (the intercept estimate is -s)
    double* mu        # k
    double rho


cdef struct Schedule:
    double tol        # target of the relative duality gap (tol, at least GAP_FLOOR)
    double kkt_tol    # tolerance of the projected-gradient violation (lowered while the gap
                      # exceeds tol)
    double feas_tol   # tolerance of the equality violation (lowered with kkt_tol)
    double eps_in     # inner tolerance of the current round
    double feas_prev  # equality violation after the previous round
    double scale      # largest box bound (equalities are measured relative to it)
    double gap        # relative duality gap at its last evaluation
    double resid      # KKT residual after the last round


cdef inline unsigned long long rng_next(unsigned long long* state) noexcept nogil:
    """xorshift64*: the next pseudo-random number of the stream ``state``."""
    cdef unsigned long long x = state[0]
    x ^= x >> 12
    x ^= x << 25
    x ^= x >> 27
    state[0] = x
    return x * 2685821657736338717ULL


cdef inline bint all_finite(double x) noexcept nogil:
    """False when x is NaN or infinite (a sum of many values: one non-finite spoils it)."""
    return x - x == 0.0
