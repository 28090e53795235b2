# Design
# ======
# Working-set SMO for kernel problems whose variables have directions d_v = sigma_v e_v with
# sigma_v = +-1 and e_v a canonical direction: one slot e_p (the Lee-Lin-Wahba / reinforced /
# truncated layouts) or two slots e_p + r e_q with r = +-1 (e_j' - e_j: Weston-Watkins and the
# generalized-margin hinges), with or without group caps sum_{v in g} alpha_v <= cap_g.
#
# The equalities P c = 0 (class sums c = sum_v alpha_v d_v with one common value) are handled by
# the same augmented Lagrangian as the coordinate-descent path: multiplier mu, penalty rho,
# shift s = mu + rho P c.  Write U_v = sigma_v alpha_v; its gradient is
#     z_v = kappa (F_ip + r F_iq - (1 + r) S_i / k) + s_p + r s_q - sigma_v a_v
# (F = K U in slot space, S its row sums).  Each inner problem (boxes and caps only) is solved
# by a decomposition in the manner of SVMlight / ThunderSVM:
#
# 1. a global scan of every variable (O(n k), no kernel rows) measures the violation of the
#    inner KKT conditions per sample: z >= 0 where U can only increase, z <= 0 where it can
#    only decrease, z = 0 for free variables (room counted with the group caps), and, in a
#    full group, max g <= min g over the members that can decrease / increase (g = sigma z);
#    with groups in one pass over a sample's variables, each group's room and pair test
#    formed as the pass goes (_grouped_violation_fused; pendigits WeightedRobustMSVM
#    0.137 -> 0.133 s, the same values).  Shrinking (libsvm's rule): a sample that does not violate, whose variables are all at a
#    bound and further from violating than the last scan's largest violation, and whose
#    groups are below their caps (a full group moves by pairs: never settled), is settled and
#    left out of the scans until the next full one (every SHRINK_EVERY scans, at the start of
#    every inner solve, and before convergence is declared); without groups, so is every
#    variable settled by the same rule at its sample's last scan (and not moved since: the
#    samples of free variables are never settled, their variables at bounds mostly are;
#    pendigits ReinforcedMSVM 7 % less time).  On per-class-hinge problems (every direction
#    on one slot, no groups, at least SETTLE_ZERO_MIN_N samples) the margin is 0 after an
#    inner solve's first scan (_settle_margin): a variable at a bound is settled as soon as
#    its z points out of the box (pendigits RBF C = 10, CPU, three alternating fits each on
#    a shared machine: ReinforcedMSVM 2.56-2.70 -> 2.43-2.61 s, Lee-Lin-Wahba 4.87-4.98 ->
#    4.50-4.65 s, AngleBasedMSVM 2.95-3.09 -> 2.61-2.80 s; C = 256 unchanged;
#    WestonWatkinsMSVM, whose directions have two slots, was 6 % slower with it and keeps
#    libsvm's rule).  The scores
#    of every sample stay current, so a full scan reconstructs nothing;
# 2. the (at most q; MULTI_GROUP_QMAX where a sample holds several group caps: a cost
#    matrix) samples with the largest violation, topped up with the previous working
#    set, form the working set B; their kernel block K_BB (q x q), scores and variables are
#    copied out, less the variables settled by the same rule (at a bound, outside a full
#    group, z pointing out of the box by more than the margin of step 1: most of a sample's
#    variables; pendigits and 26 classes 13-15 % less time, the same iterates there);
# 3. a local SMO solves the subproblem on B (everything else fixed), each step O(q):
#    * same-bucket pairs (a, b) of one canonical direction: U_a -= t, U_b += t, which leave c
#      and s unchanged; a has the largest z that can decrease, b maximizes the second-order
#      gain (z_a - z_b)^2 / curvature (Fan, Chen and Lin 2005), curvature
#      kappa ||P e||^2 (K_aa + K_bb - 2 K_ab).  These are the directions along which a kernel
#      dual is ill conditioned, where single-variable steps crawl;
#    * single-variable Newton steps (curvature (kappa K_ii + rho) ||P e||^2), which move c;
#    * in a full group, pair steps alpha_a -= t, alpha_b += t inside the group;
#    each round scans the block once and then takes one step per violating bucket and group;
#    the bucket's passes (its z and extremes, a pair's second-order partner) and a step's
#    block updates are vectorized C loops (_block_scan.h) with the values and choices of
#    the plain loops (pendigits ReinforcedMSVM at C = 256: 44 % of the fit before); with
#    groups the same passes read each variable's group room (cap - gsum, +inf for none)
#    from an array the block keeps current, with each group's fullness, after every move of
#    the group's sum (_sync_group; _group_block.h), and the group pair steps visit the full
#    groups only (GROUPED_VECTOR; n = 4,000 RBF C = 1e6, WeightedRobustMSVM: 100 epochs
#    2.14 -> 0.64 s CPU with the products below);
#    a block that leaves violating samples out is solved to a tenth of its own starting
#    violation only (BLOCK_TOL_FRACTION, ThunderSVM's local tolerance), one holding them all
#    to the round's eps;
#    * grouped blocks still violating after pair steps worth one: a Newton step on the free
#      variables (projected conjugate gradients on the free block of the Hessian, keeping
#      every full group's sum, then an exact line search within boxes and caps).  A
#      rank-deficient kernel at large C leaves a flat dual valley about C long along which
#      the pair steps zig-zag with steps bounded by their own curvature (epochs growing
#      linearly with C); the Newton step crosses it at once (_free_newton_step).  Its
#      products with the block run over the samples holding a free variable and those
#      where the direction is nonzero only (SPARSE_HMUL: the same sums less their zero
#      terms; n = 4,000 RBF C = 1e6, WeightedRobustMSVM: 100 epochs 4.07 -> 2.11 s CPU),
#      with GROUPED_VECTOR over a transposed copy of the free samples' kernel block
#      gathered once per Newton step, the vectors across its rows and each sum's terms in
#      the plain loop's order (msvm_free_block_product);
# 4. the scores of all n samples are updated once with the kernel rows of the samples whose
#    variables changed: F += K[:, B] dU_B (O(n) per changed (sample, slot)), each score row
#    read and written once per four of its changed samples (_rows.pyx: rows_axpys).
#
# A sample whose violation is at or below its rounding floor (InnerSolver.floor, where the
# caller sets one: msvm/_score_floor.py; round 18) counts as not violating in the scans of
# step 1, so it is neither a candidate nor a reason to go on.
#
# The kernel rows of B come from the row source (Gram matrix or LRU cache); q never exceeds
# the cache capacity, so the rows fetched in step 2 are still cached in step 4.  Where the
# cache cannot hold every row, step 2 hands it the settled samples, whose rows it evicts
# first (RowSource.demote: no value depends on what is cached).  The scores
# are the row source's own (held slot-major, F^T, k x n); the solver keeps their row sums S.
# The augmented-Lagrangian rounds around the inner problems are _alm.pyx's.
#
# Not kept (issue 24, round 9; benchmarks/results/per_class_speed.md, r9): an active-first
# column layout of the cached rows, step 4 over the prefix of samples the blocks need
# current and the suffix's changes summed until the next full scan.  Exact, but 0-15 %
# slower on pendigits: the full scans (every SHRINK_EVERY scans) need the suffix current,
# which halves what the deferral saves, and each new layout is a pass over the whole cache
# while the active set churns from one full scan to the next.
#
# Not built (issue 24, round 10; per_class_speed.md, r10): libsvm's kernel rows over the
# unsettled samples only, the settled samples' scores rebuilt at the full scans.  Counted on
# make_classification (d = 20, k = 5, C = 1, ReinforcedMSVM): at n = 40,000 a full scan
# comes every 10 blocks (81 a fit) and leaves 18.7k samples (47 %) unsettled, 12.6k of them
# settled at some scan since the last one; 1,717 distinct samples change between two full
# scans, about the 1,969 rows computed over the interval.  Rows over the unsettled columns
# (and twice as many cached: 124k rows instead of 154k) plus the rebuild (the changed
# samples' rows over the settled columns) come to 5.3e9 kernel values against 6.2e9: 15 %.
# Full scans only where the rules need them (start of a solve, before convergence): 50
# instead of 81, but 1,225 blocks instead of 821 and 2,310 changed samples an interval: 5.4e9
# against 6.1e9.  At n = 80,000: 114 full scans, 24.5k unsettled, 12.3k unsettled again.
#
# Threads (the row source's n_threads; _threads.h): the scans, the kernel rows, the kernel
# block and the score update are split between threads by samples, every value computed as
# with one thread.  With 2 threads the workers gather the kernel block while this thread
# gathers the block's scores and picks its variables (GATHER_OVERLAP; its gain was not
# resolved on a shared machine).  The local SMO (step 3), the choice of the block's
# variables and the candidates' sort stay on this thread: on pendigits (round 15,
# benchmarks/results/threads.md) about a quarter of the 1-thread time (the local SMO 16 %),
# so the calling thread keeps at least about 0.6 of it.
#
# Not kept (issue 24, round 15; threads.md, r15-overlap and r15-blockthreads; removed in
# round 16, the code on branch blockthreads): the blocks overlapped, block t's local SMO on
# this thread while the workers applied block t - 1's changes to every score and scanned,
# so block t + 1 was chosen from scores one block late (its own scores caught up exactly,
# convergence declared only on a full scan of current scores).  Correct, but the late
# choice made weaker blocks: pendigits ReinforcedMSVM took about twice the blocks (2,470-
# 2,831 against 1,380) and 68-71 epochs against 58, more work than the overlap hid; three
# variants of the choice (the last block's samples left out, the top candidates rechecked
# on current scores, both) took 71, 78 and 119 epochs.
#
# Not kept (issue 25 item 1, round 15; probability.md, 9h): convergence confirmed by the
# rest of a full scan (the settled samples and the unsettled ones holding a settled
# variable) where the scan of the unsettled samples found none above eps.  Exact, but at
# the probability levels' n nearly every sample is settled or holds a settled variable: the
# scans' CPU did not move (example 4.1.1, 6.7-6.9 ms a probability fit either way).
#
# Round 17 (issue 24 item 1; benchmarks/results/per_class_speed.md, r17-large-c and r17):
# at the C a tuning run selects (pendigits RBF C = 256, gamma = 1/32, 551 epochs against 58
# at C = 10) the augmented Lagrangian is not what costs: rho stays 1, the equality residual
# is below tol from 200 epochs on, and the KKT violation meets tol only at the last scan,
# decaying about linearly with 2,000-2,800 samples above the round's eps until the last 30
# epochs.  The blocks draw from ~3,500 samples (each in a median 215 of the 1,550 blocks),
# which is about what the float64 row cache holds (3,407 rows: C > 100 stores float64,
# msvm/_plan.py), yet that cache size (under half of n) made CACHED_BOOST weigh the
# candidates: the samples becoming support vectors, whose rows were not cached yet, waited
# for a 4x larger violation.  The boost now waits until the cache has turned over
# (BOOST_TURNOVER: 2x its rows computed): 551 -> 444 epochs there.
from libc.math cimport fabs, INFINITY
from libc.stdlib cimport malloc, free
from libc.string cimport memmove

from ._types cimport (Prob, State, STATUS_CONVERGED, STATUS_MAX_ITER, STATUS_NONFINITE,
                      STATUS_INTERRUPTED, CURV_MIN, CAP_RTOL, MAX_CLASSES, SHRINK_EVERY,
                      all_finite, v_s1, v_c1, v_s2, v_c2, v_lin, v_lo, v_hi, v_grp)
from ._state cimport (move_sums, pair_pnorm2, group_full, group_end, group_pair,
                      sums_finite)
from ._signals cimport tick, progress_note
from ._rows cimport RowSource, thread_parts, run_parts
from ._problem cimport ProblemArrays
from ._state cimport DualState

cdef extern from "_block_scan.h":
    void msvm_bucket_z(const double* Fp, const double* Fq, const double* S, const int* li,
                       const double* off, const double* U, const double* Ulo,
                       const double* Uhi, double* z, double* vu, double* vl, int i0, int i1,
                       double kappa, double br, double cs, double sconst,
                       int masks) noexcept nogil
    void msvm_bucket_extremes(const double* z, const double* vu, const double* vl, int i0,
                              int i1, double* up_z, int* up_at, double* lo_z,
                              int* lo_at) noexcept nogil
    int msvm_bucket_partner(const double* z, const double* U, const double* Uhi,
                            const int* li, const double* kd, const double* row, int i0,
                            int i1, int skip, double za, double kpn2, double Kaa,
                            double curv_min, double* gain, double* best_gain) noexcept nogil
    void msvm_block_axpy(double* y, const double* x, double t, Py_ssize_t n) noexcept nogil
    void msvm_block_axpy2(double* y, const double* xa, double ta, const double* xb, double tb,
                          Py_ssize_t n) noexcept nogil

cdef extern from "_threads.h":
    double msvm_clock(int thread_cpu) noexcept nogil

cdef extern from "_group_block.h":
    void msvm_group_masks(const double* z, const double* U, const double* Ulo,
                          const double* Uhi, const double* gru, const double* grd, int i0,
                          int i1, double* vu, double* vl) noexcept nogil
    int msvm_group_partner(const double* z, const double* U, const double* Uhi,
                           const double* gru, const int* li, const double* kd,
                           const double* row, int i0, int i1, int skip, double za,
                           double kpn2, double Kaa, double curv_min, double* gain,
                           double* best_gain) noexcept nogil
    void msvm_free_block_product(const double* KT, const double* D, double* dFt, int ni,
                                 int k) noexcept nogil


cdef inline int _block_group_end(const Prob* p, const Block* B, int x0) noexcept nogil:
    """One past the last block position of x0's group (x0 + 1 without a group): the block
    lists a group's variables contiguously."""
    cdef int g = v_grp(p, B.gv[B.pos[x0]]), x1 = x0 + 1
    while x1 < B.nb and g >= 0 and v_grp(p, B.gv[B.pos[x1]]) == g:
        x1 += 1
    return x1


cdef inline double st_rho_eq(const Prob* p, const State* st) noexcept nogil:
    """The penalty rho of the equalities (0 without them)."""
    return st.rho if p.equality else 0.0


# grouped blocks: a Newton step on the free variables (_free_newton_step) whenever the pair
# steps since the last have cost about as much as one (up to NEWTON_CG_STEPS products with
# the q x q block: _block_smo)
cdef enum:
    NEWTON_CG_STEPS = 100
# a block that leaves violating samples out stops its local solve at BLOCK_TOL_FRACTION of
# the block's starting violation (or at the round's eps, whichever is larger), as
# ThunderSVM's local SMO does: the steps that would drive one block far below the violation
# left elsewhere are wasted once the next blocks move the scores.  A block holding every
# violating sample is solved to eps (the rule has nothing to gain there).  Pendigits RBF
# C = 10 (CPU, one run each, shared machine): ReinforcedMSVM 3.68 -> 3.21 s (69 -> 57
# epochs), Lee-Lin-Wahba 6.5 -> 6.1 s (153 -> 135); 0.05 / 0.2 / 0.3 measured 3.58 / 3.62 /
# 3.59 s
cdef double BLOCK_TOL_FRACTION = 0.1
# the zero settling margin of per-class-hinge problems (_settle_margin) from this many samples
# on, where the scans and gathers it saves are a large part of a fit; on small problems it
# cost epochs at tight tolerances (TargetedLocalMSVM, 200 samples, tol 1e-6: a warm start's
# 112 epochs became 155, a cold start's 101 became 177)
cdef int SETTLE_ZERO_MIN_N = 2000
# the Newton step's block products (_hmul) run over the block's samples that hold a free
# variable and those where the direction is nonzero, not over all q x q: the same sums less
# their zero terms, so the same iterates.  Round 13 (benchmarks/results/rbf_large_c.md, "the
# grouped SMO's epoch cost"): make_blobs n = 4,000, RBF, C = 1e6, WeightedRobustMSVM with
# truncation=None spent most of its SMO epochs in the full q x q products
cdef bint SPARSE_HMUL = True
# grouped blocks: the extremes' and partners' passes vectorized with the group caps' rooms,
# and the Newton step's products over a gathered copy of the free samples' kernel block
# (_group_block.h), every value the plain loops' (off: main 10578f8's plain loops).  Round
# 14 (benchmarks/results/grouped_smo_cost.md)
cdef bint GROUPED_VECTOR = True
# the multiply-adds a grouped local step counts as in the Newton steps' schedule
# (_block_smo)
cdef long long NEWTON_MADDS = 8192
# the working set of a dual whose samples hold several groups (WeightedRobustMSVM with a
# cost or utility matrix: one cap per (sample, class j) with U[y_i, j] > 0) holds at most
# MULTI_GROUP_QMAX samples (0: no bound, main fd47237).  There most of the optimum's groups
# are full and ~10 % of them split between tied members; the local SMO's moves are then
# group pair steps, and at q = 256 a block took its whole budget of 50 q steps (make_blobs
# n = 300, k = 4, RBF, C = 1: 541,523 group steps in 22,258 rounds, 2.26 s CPU without the
# finishing step) while its Newton step on the free set, priced at q^2 k a product, came
# every ~3,200 steps.  Small blocks take a cheap Newton step every round: 8 samples, the
# same fit in 51,152 steps, 0.39 s (benchmarks/results/grouped_cost_matrix.md)
cdef int MULTI_GROUP_QMAX = 8
# a conjugate-gradient direction of curvature below CG_FLAT ||p||^2 max(kappa K_ii) is flat
cdef double CG_FLAT = 1e-12
# with 2 threads, the working set's kernel block gathered by the pool's workers while the
# calling thread gathers the block's scores and variables (_load_block; the same values).
# Off: the gather first, then the rest (main 080c064's order)
cdef bint GATHER_OVERLAP = True
# the block loop's profile (for benchmarks: run_threads --timeline, probability_lean --only
# 9h), summed over every solve of the process while PROFILE is on (one fit at a time: the
# sums are process-wide, unguarded; off, one test of the flag per phase and count): the
# calling thread's wall and CPU time per phase (_tl_mark), the loop's counts (_bp_count) and
# the working set's load split in parts, CPU time of the calling thread (_bp_time)
cdef bint PROFILE = False
cdef enum:
    TL_SCAN = 0          # scans
    TL_LOAD = 1          # the working set: rows, kernel block, scores, variables
    TL_SMO = 2           # the local SMO
    TL_UPDATE = 3        # the score update
    TL_PHASES = 4
cdef enum:
    BP_RUNS = 0          # inner solves (SMOSolver.run)
    BP_SCANS = 1         # scans
    BP_FULL = 2          # full scans
    BP_BLOCKS = 3        # working sets
    BP_Q = 4             # their samples
    BP_QQ = 5            # their kernel blocks' entries
    BP_NB = 6            # their variables
    BP_STEPS = 7         # local SMO steps
    BP_CHANGED = 8       # samples changed (score-update rows)
    BP_PAIR = 9          # local steps: same-bucket pairs,
    BP_PAIR_CLIP = 10    # those cut at a bound or cap,
    BP_PAIR_FLAT = 11    # those of no curvature (one sample's opposite variables),
    BP_SINGLE = 12       # single-variable Newton steps,
    BP_GROUP = 13        # pair steps inside a full group,
    BP_NEWTON = 14       # Newton steps on the free set
    BP_ROUNDS = 15       # local SMO rounds
    BP_KEPT = 16         # block samples that were in the previous block too
    BP_COUNTS = 17
cdef enum:
    BP_T_ROWS = 0        # the block's missing rows (prefetch)
    BP_T_PICK = 1        # its scores, diagonal and variables (_block_variables)
    BP_T_GATHER = 2      # its kernel block (the gather's end)
    BP_TIMES = 3
cdef double TL_WALL[TL_PHASES]
cdef double TL_CPU[TL_PHASES]
cdef double TL_MARK[2]
cdef long long BP_COUNT[BP_COUNTS]
cdef double BP_TIME[BP_TIMES]
# the profile's keys (_profile): phases (wall, CPU), counts, and the load's parts (CPU)
PROFILE_PHASES = ("scan", "load", "local SMO", "update")
PROFILE_COUNTS = ("runs", "scans", "full scans", "blocks", "block samples", "block entries",
                  "block variables", "steps", "changed samples", "pair steps", "pair steps to a bound",
                  "flat pair steps", "single steps", "group pair steps", "Newton steps",
                  "local rounds", "block samples kept")
PROFILE_LOAD_PARTS = ("load: rows", "load: scores and variables", "load: kernel block")


# per sample, the blocks it was in and the last of them (PROFILE; _profile_visits)
cdef int* PV_COUNT = NULL
cdef long long* PV_LAST = NULL
cdef int PV_N = 0
cdef long long PV_BLOCK = 0
_SCAN_LOG = []      # per scan (PROFILE): steps so far, violation, candidates, full scan


cdef void _pv_note(const int* cand, int qb, int n) noexcept nogil:
    """Count a working set's samples in PV_COUNT, and in BP_KEPT those that were in the
    previous working set (PROFILE only; the arrays sized to n on first use)."""
    global PV_COUNT, PV_LAST, PV_N, PV_BLOCK
    cdef int a, i
    if PV_N != n:
        free(PV_COUNT)
        free(PV_LAST)
        PV_COUNT = <int*> malloc(n * sizeof(int) + 1)
        PV_LAST = <long long*> malloc(n * sizeof(long long) + 1)
        PV_N = n if PV_COUNT != NULL and PV_LAST != NULL else 0
        for i in range(PV_N):
            PV_COUNT[i] = 0
            PV_LAST[i] = -2
    if PV_N == 0:
        return
    PV_BLOCK += 1
    for a in range(qb):
        i = cand[a]
        if PV_LAST[i] == PV_BLOCK - 1:
            BP_COUNT[BP_KEPT] += 1
        PV_COUNT[i] += 1
        PV_LAST[i] = PV_BLOCK


def _profile_scans():
    """The block loop's scans since the last call (PROFILE on): (steps, violation,
    candidates, full) tuples of every inner solve in turn, then reset."""
    out = list(_SCAN_LOG)
    _SCAN_LOG.clear()
    return out


def _profile_visits():
    """Per sample, the working sets it was in since the last call (PROFILE on), then
    reset: a list (empty when nothing was counted)."""
    global PV_BLOCK
    cdef int i
    out = [PV_COUNT[i] for i in range(PV_N)]
    for i in range(PV_N):
        PV_COUNT[i] = 0
        PV_LAST[i] = -2
    PV_BLOCK = 0
    return out


cdef void _tl_mark(int phase) noexcept nogil:
    """The calling thread's wall and CPU time since the last mark counted to ``phase``
    (none when negative), when PROFILE is on."""
    cdef double w, c
    if not PROFILE:
        return
    w = msvm_clock(0)
    c = msvm_clock(1)
    if phase >= 0:
        TL_WALL[phase] += w - TL_MARK[0]
        TL_CPU[phase] += c - TL_MARK[1]
    TL_MARK[0] = w
    TL_MARK[1] = c


cdef inline void _bp_count(int what, long long by) noexcept nogil:
    if PROFILE:
        BP_COUNT[what] += by


cdef inline double _bp_time(int what, double since) noexcept nogil:
    """The calling thread's CPU time since ``since`` counted to ``what``; returns now (0
    when PROFILE is off)."""
    cdef double c
    if not PROFILE:
        return 0.0
    c = msvm_clock(1)
    if what >= 0:
        BP_TIME[what] += c - since
    return c


def _profile(on=None):
    """The block loop's profile since the last call, then reset; PROFILE switched on or off
    where ``on`` is given.  One dict: per phase (PROFILE_PHASES) the calling thread's
    (wall, CPU) seconds, per count (PROFILE_COUNTS) an int, per part of the working set's
    load (PROFILE_LOAD_PARTS) the calling thread's CPU seconds."""
    global PROFILE
    cdef int t
    out = {PROFILE_PHASES[t]: (TL_WALL[t], TL_CPU[t]) for t in range(TL_PHASES)}
    out.update({PROFILE_COUNTS[t]: BP_COUNT[t] for t in range(BP_COUNTS)})
    out.update({PROFILE_LOAD_PARTS[t]: BP_TIME[t] for t in range(BP_TIMES)})
    for t in range(TL_PHASES):
        TL_WALL[t] = 0.0
        TL_CPU[t] = 0.0
    for t in range(BP_COUNTS):
        BP_COUNT[t] = 0
    for t in range(BP_TIMES):
        BP_TIME[t] = 0.0
    if on is not None:
        PROFILE = bool(on)
    return out


# without groups, the working set's variables picked by _flat_block_variables (the loop
# invariants in locals, as _flat_violation): the same variables as _settled_variable's rule
# (example 4.1.1 probability fit: the block's scores and variables 3.4 ms of 72).  Off: the
# rule per variable (main 0fa54fe)
cdef bint FLAT_PICK = True


cdef int _flat_block_variables(const Prob* p, const State* st, const Canon* cn, Block* B,
                               const int* cand, double margin, int* bv) noexcept nogil:
    """SMOSolver._block_variables's first pass on problems without groups: the variables of
    the block's samples cand[:B.q] with a box that SMOSolver._settled_variable keeps (not
    at a bound with z pointing out of its box by more than ``margin``), into bv in order,
    each counted in B.start[bucket + 1]; returns how many.  The same tests on the same
    values, with the problem's fields held in locals."""
    cdef int a, v, e, i, nb = 0
    cdef const int* ent = p.ent
    cdef const int* cent = cn.ent
    cdef const int* bucket = cn.bucket
    cdef const double* csg = cn.sg
    cdef const double* lin = p.lin
    cdef const double* plo = p.lo
    cdef const double* phi = p.hi
    cdef const double* alpha = st.alpha
    cdef bint lo_ent = p.lo_ent, hi_ent = p.hi_ent, keep
    cdef double lo, hi, sig, U, rup, rdown, z
    for a in range(B.q):
        i = cand[a]
        for v in range(p.ptr[i], p.ptr[i + 1]):
            e = v if ent == NULL else ent[v]
            lo = plo[e if lo_ent else v]
            hi = phi[e if hi_ent else v]
            if not hi > lo:
                continue
            e = v if cent == NULL else cent[v]
            sig = csg[e]
            U = sig * alpha[v]
            rup = (hi if sig > 0 else -lo) - U
            rdown = U - (lo if sig > 0 else -hi)
            if rup > 0.0 and rdown > 0.0:
                keep = True
            else:
                z = _zval(p, st, cn, v, B.Ft, B.S, B.q, a, -sig * v_lin(p, v))
                keep = not (z > margin if rup > 0.0 else -z > margin)
            if keep:
                bv[nb] = v
                nb += 1
                B.start[bucket[e] + 1] += 1
    return nb


# with groups, the working set's variables picked by _grouped_block_variables (each group's
# fullness and room formed once, the loop invariants in locals): the same variables as
# _settled_variable's rule (pendigits WeightedRobustMSVM: the working sets' load 37.9 ->
# 36.1 ms a fit).  Off: the rule per variable (main 5c4386a)
cdef bint GROUPED_PICK = True


cdef int _grouped_block_variables(const Prob* p, const State* st, const Canon* cn, Block* B,
                                  const int* cand, double margin, int* bv) noexcept nogil:
    """SMOSolver._block_variables's first pass on problems with groups: the variables of
    the block's samples cand[:B.q] with a box that SMOSolver._settled_variable keeps (in
    a full group, or able to move both ways, or at a bound with z pointing out of its box
    by at most ``margin``), into bv in order, each counted in B.start[bucket + 1]; returns
    how many.  The same tests on the same values, each group's fullness and room
    (cap - gsum) formed once per sample's run of its variables."""
    cdef int a, v, e, g, gprev, i, nb = 0
    cdef const int* ent = p.ent
    cdef const int* grp = p.grp
    cdef const int* bucket = cn.bucket
    cdef const double* csg = cn.sg
    cdef const double* lin = p.lin
    cdef const double* plo = p.lo
    cdef const double* phi = p.hi
    cdef const double* alpha = st.alpha
    cdef bint lo_ent = p.lo_ent, hi_ent = p.hi_ent, keep, full = False, up, down
    cdef double lo, hi, sig, U, z, groom = 0.0
    for a in range(B.q):
        i = cand[a]
        gprev = -2
        for v in range(p.ptr[i], p.ptr[i + 1]):
            e = v if ent == NULL else ent[v]
            lo = plo[e if lo_ent else v]
            hi = phi[e if hi_ent else v]
            if not hi > lo:
                continue
            g = -1 if grp == NULL else grp[v]
            if g != gprev:
                full = group_full(p, st, g)
                if g >= 0:
                    groom = p.cap[g] - st.gsum[g]
                gprev = g
            sig = csg[e]
            U = sig * alpha[v]
            up = _has_room((hi if sig > 0 else -lo) - U, groom, g >= 0 and sig > 0)
            down = _has_room(U - (lo if sig > 0 else -hi), groom, g >= 0 and sig < 0)
            if full or (up and down):
                keep = True
            else:
                z = _z_canon(p.kappa, B.Ft, B.q, a, cn.p[e], cn.q[e], cn.r[e], B.S[a] / p.k,
                             st.s, -sig * lin[e])
                keep = not (z > margin if up else -z > margin)
            if keep:
                bv[nb] = v
                nb += 1
                B.start[bucket[e] + 1] += 1
    return nb


def _grouped_pick(value=None):
    """GROUPED_PICK (SMOSolver._block_variables), set where given; returns the previous
    value."""
    global GROUPED_PICK
    old = GROUPED_PICK
    if value is not None:
        GROUPED_PICK = bool(value)
    return old


def _flat_pick(value=None):
    """FLAT_PICK (SMOSolver._block_variables), set where given; returns the previous
    value."""
    global FLAT_PICK
    old = FLAT_PICK
    if value is not None:
        FLAT_PICK = bool(value)
    return old


def _gather_overlap(value=None):
    """GATHER_OVERLAP (_load_block), set where given (for benchmarks: off, the kernel
    block gathered before the block's scores and variables); returns the previous value."""
    global GATHER_OVERLAP
    old = GATHER_OVERLAP
    if value is not None:
        GATHER_OVERLAP = bool(value)
    return old


# where the row cache holds under half the rows, a candidate of the working set whose kernel
# row is cached counts with this many times its violation (_load_block).  make_classification
# n = 40,000, d = 20, k = 5, ReinforcedMSVM C = 1 (CPU, one fit each, shared machine):
# factor 1 (plain choice) 154,374 rows computed, 821 blocks, 27.7 s; 2: 112,345, 811, 21.7 s;
# 4: 98,781, 790, 20.4 s; 11: 92,487, 857, 20.4 s.  n = 10,000 (cache holding every row
# but 5 % at float32) is outside the rule
cdef double CACHED_BOOST = 4.0
# the boost only once the cache has computed more than BOOST_TURNOVER times the rows it holds
# (_boost_applies; 0: from the first block, main aae56db's rule).  Where the rows the blocks
# draw from fit in the cache, a new candidate's row, once computed, stays, and the boost only
# delays the candidate: pendigits RBF C = 256, gamma = 1/32 (float64 rows, 3,407 of 7,694
# cached, 4,137 rows computed in the whole fit without the boost) took 551 epochs with it and
# 444 without (benchmarks/results/per_class_speed.md, r17).  At n = 40,000 (the measurement
# above: 99k-154k rows computed, 1,310 cached) it applies after the first 2,620 rows
cdef double BOOST_TURNOVER = 2.0


cdef inline double _room_up(const Prob* p, const State* st, const Canon* cn, int v, double U,
                            double Uhi) noexcept nogil:
    """How far U_v can increase (box and, when alpha grows, the group cap)."""
    cdef double room = Uhi - U, g_room
    cdef int g = v_grp(p, v)
    if g >= 0 and cn.sg[ce(cn, v)] > 0:
        g_room = p.cap[g] - st.gsum[g]
        if g_room < room:
            room = g_room
    return room if room > 0.0 else 0.0


cdef inline double _room_down(const Prob* p, const State* st, const Canon* cn, int v, double U,
                              double Ulo) noexcept nogil:
    """How far U_v can decrease (box and, when alpha grows, the group cap)."""
    cdef double room = U - Ulo, g_room
    cdef int g = v_grp(p, v)
    if g >= 0 and cn.sg[ce(cn, v)] < 0:
        g_room = p.cap[g] - st.gsum[g]
        if g_room < room:
            room = g_room
    return room if room > 0.0 else 0.0


cdef inline double _z_canon(double kappa, const double* Ft, Py_ssize_t ld, int i, int a,
                            int b, double r, double Si, const double* s,
                            double off) noexcept nogil:
    """The U-space gradient of a variable of sample i with canonical slots a, b (b < 0:
    none) and ratio r (read only with b), Si = S[i] / k, shifts s and offset off: one text
    of the operations for _zval and the scans' loops."""
    if b >= 0:
        return (kappa * (Ft[<Py_ssize_t> a * ld + i] + r * Ft[<Py_ssize_t> b * ld + i]
                         - (1.0 + r) * Si) + s[a] + r * s[b] + off)
    return kappa * (Ft[<Py_ssize_t> a * ld + i] - Si) + s[a] + off


cdef inline double _zval(const Prob* p, const State* st, const Canon* cn, int v,
                         const double* Ft, const double* S, int ld, int i,
                         double off) noexcept nogil:
    """U-space gradient z_v of variable v of sample i (scores F^T with leading dimension ld)."""
    cdef int e = ce(cn, v)
    return _z_canon(p.kappa, Ft, ld, i, cn.p[e], cn.q[e], cn.r[e], S[i] / p.k, st.s, off)


cdef void _apply_u(const Prob* p, State* st, const Canon* cn, int v, double t, double* Ft,
                   double* S, const double* row, int ld) noexcept nogil:
    """U_v += t inside a block: its scores (one kernel row, leading dimension ld) and the
    sums (move_sums, with alpha_v moving by sigma_v t)."""
    cdef int a = cn.p[ce(cn, v)], b = cn.q[ce(cn, v)]
    cdef double r = cn.r[ce(cn, v)], tot = t
    msvm_block_axpy(Ft + <Py_ssize_t> a * ld, row, t, ld)
    if b >= 0:
        msvm_block_axpy(Ft + <Py_ssize_t> b * ld, row, r * t, ld)
        tot += r * t
    if tot != 0.0:
        msvm_block_axpy(S, row, tot, ld)
    move_sums(p, st, v, cn.sg[ce(cn, v)] * t)


cdef void _apply_pair(const Prob* p, State* st, const Canon* cn, int va, int vb, double t,
                      double* Ft, double* S, const double* rowa, const double* rowb,
                      int ld) noexcept nogil:
    """U_va -= t and U_vb += t for two variables of one bucket (one canonical direction):
    _apply_u of each in one pass per score row, the same values."""
    cdef int a = cn.p[ce(cn, va)], b = cn.q[ce(cn, va)]
    cdef double r = cn.r[ce(cn, va)], tot_a = -t, tot_b = t
    msvm_block_axpy2(Ft + <Py_ssize_t> a * ld, rowa, -t, rowb, t, ld)
    if b >= 0:
        msvm_block_axpy2(Ft + <Py_ssize_t> b * ld, rowa, r * -t, rowb, r * t, ld)
        tot_a += r * -t
        tot_b += r * t
    if tot_a != 0.0:
        msvm_block_axpy2(S, rowa, tot_a, rowb, tot_b, ld)
    move_sums(p, st, va, cn.sg[ce(cn, va)] * -t)
    move_sums(p, st, vb, cn.sg[ce(cn, vb)] * t)


cdef inline void _bucket_terms(const Prob* p, const State* st, const Canon* cn, const Block* B,
                               int j, const double** Fp, const double** Fq, double* br,
                               double* cs, double* sconst) noexcept nogil:
    """Shared parts of z for bucket j: z = kappa (Fp + br Fq - cs S) + sconst + off."""
    cdef int v = B.gv[B.start[j]], a = cn.p[ce(cn, v)], b = cn.q[ce(cn, v)]
    Fp[0] = B.Ft + <Py_ssize_t> a * B.q
    br[0] = cn.r[ce(cn, v)]
    sconst[0] = st.s[a]
    if b >= 0:
        Fq[0] = B.Ft + <Py_ssize_t> b * B.q
        sconst[0] += br[0] * st.s[b]
    else:
        Fq[0] = NULL
    cs[0] = (1.0 + br[0]) / p.k


cdef void _top_q(double* score, int* idx, int m, int q) noexcept nogil:
    """Partially reorder (score, idx)[0:m] so that the q largest scores come first."""
    cdef int lo = 0, hi = m - 1, i, j, ti
    cdef double pivot, ts
    while lo < hi:
        pivot = score[(lo + hi) // 2]
        i = lo
        j = hi
        while i <= j:
            while score[i] > pivot:
                i += 1
            while score[j] < pivot:
                j -= 1
            if i <= j:
                ts = score[i]; score[i] = score[j]; score[j] = ts
                ti = idx[i]; idx[i] = idx[j]; idx[j] = ti
                i += 1
                j -= 1
        if q - 1 <= j:
            hi = j
        elif q - 1 >= i:
            lo = i
        else:
            break


cdef inline int _bucket_key(const Canon* cn, int e, int k) noexcept nogil:
    """Key of entry e's canonical direction (slots p < q, coefficient r): one per bucket."""
    return (cn.p[e] * (k + 1) + cn.q[e] + 1) * 3 + <int> (cn.r[e] + 1.0)


cdef int _canonical(const Prob* p, Canon* cn) noexcept nogil:
    """Canonical directions and buckets of every entry; -1 if out of memory."""
    cdef int e, v, a, b, key, nkeys = p.k * (p.k + 1) * 3
    cdef double c1, c2, r
    cdef int* ids = <int*> malloc(nkeys * sizeof(int))
    if ids == NULL:
        return -1
    for key in range(nkeys):
        ids[key] = -1
    cn.ent = p.ent
    cn.nbuckets = 0
    for e in range(p.ne):
        c1 = p.c1[e]
        a = p.s1[e]
        b = p.s2[e]
        if b < 0:
            cn.p[e] = a
            cn.q[e] = -1
            cn.r[e] = 0.0
            cn.sg[e] = c1
        else:
            c2 = p.c2[e]
            if a < b:
                cn.p[e] = a
                cn.q[e] = b
                cn.sg[e] = c1
                cn.r[e] = c2 / c1
            else:
                cn.p[e] = b
                cn.q[e] = a
                cn.sg[e] = c2
                cn.r[e] = c1 / c2
        r = cn.r[e]
        cn.pn2[e] = 1.0 + r * r - (1.0 + r) * (1.0 + r) / p.k
    # buckets numbered in the order the variables first use them (the order of a block's
    # rounds); an entry no variable reads may have none (-1)
    for v in range(p.nv):
        key = _bucket_key(cn, ce(cn, v), p.k)
        if ids[key] < 0:
            ids[key] = cn.nbuckets
            cn.nbuckets += 1
    for e in range(p.ne):
        cn.bucket[e] = ids[_bucket_key(cn, e, p.k)]
    free(ids)
    return 0


cdef double _flat_violation(const Prob* p, const State* st, const Canon* cn, const double* Ft,
                            const double* S, Py_ssize_t n, Py_ssize_t col,
                            unsigned char* vsettled, int i, bint skip_vars,
                            bint shrinking, double last_viol, double* margin) noexcept nogil:
    """A sample's violation and margin (as SMOSolver._sample_violation's) for problems
    without groups; skip_vars: pass over settled variables.  Sample i's scores are
    Ft[j * n + col] and S[col] (the global ones: n = p.n, col = i).  Every loop invariant is held
    in a local (the stores to
    vsettled, unsigned char, may alias anything, so the compiler reloaded the problem's
    fields for every variable; pendigits ReinforcedMSVM: the scans were 20 % of the fit)."""
    cdef int v, e, v0 = p.ptr[i], v1 = p.ptr[i + 1]
    cdef const int* ent = p.ent
    cdef const int* cp = cn.p
    cdef const int* cq = cn.q
    cdef const double* cr = cn.r
    cdef const double* csg = cn.sg
    cdef const double* lin = p.lin
    cdef const double* plo = p.lo
    cdef const double* phi = p.hi
    cdef const double* alpha = st.alpha
    cdef const double* s = st.s
    cdef bint lo_ent = p.lo_ent, hi_ent = p.hi_ent, up, down
    cdef double kappa = p.kappa, Si = S[col] / p.k, sc = 0.0, room = INFINITY
    cdef double lo, hi, sig, z, off, al, t
    for v in range(v0, v1):
        if skip_vars and vsettled[v]:
            continue
        e = v if ent == NULL else ent[v]        # v_ent, and ce (Canon.ent is Prob.ent)
        lo = plo[e if lo_ent else v]
        hi = phi[e if hi_ent else v]
        if hi <= lo:
            continue
        sig = csg[e]
        off = -sig * lin[e]
        z = _z_canon(kappa, Ft, n, <int> col, cp[e], cq[e], cr[e], Si, s, off)
        al = alpha[v]
        up = al < hi if sig > 0 else al > lo
        down = al > lo if sig > 0 else al < hi
        # without branches on the data (pendigits ReinforcedMSVM at C = 10: the fit 3 %
        # faster than with if / elif, the same values): sc grows to -z where U can grow and
        # to z where it can shrink; t is the variable's distance from violating (-inf when
        # free), which lowers the margin and settles the variable when above last_viol
        t = -z if up else -INFINITY
        sc = t if t > sc else sc
        t = z if down else -INFINITY
        sc = t if t > sc else sc
        if up or down:
            t = (-INFINITY if down else z) if up else -z
            room = t if t < room else room
            vsettled[v] = shrinking and t > last_viol
    margin[0] = room
    return sc


# SMOSolver._sample_violation by _grouped_violation (True) or by its loops of round 14 (False:
# each variable's z formed again in a full group's pair test, and its group's fullness
# tested per variable); the same values (_grouped_scan switches it, for benchmarks)
cdef bint GROUPED_SCAN_ONCE = True


cdef inline void _grouped_variable(const Prob* p, const State* st, const Canon* cn, int v,
                                   double z, double U, double Uhi, double Ulo, int full,
                                   double* sc, double* room) noexcept nogil:
    """One variable's part of a grouped sample's violation sc and margin room
    (SMOSolver._sample_violation): z its U-space gradient, U in [Ulo, Uhi]; full whether
    its group's cap is active (-1: not known yet, tested here when needed)."""
    if z < -sc[0] and _room_up(p, st, cn, v, U, Uhi) > 0.0:
        sc[0] = -z
    elif z > sc[0] and _room_down(p, st, cn, v, U, Ulo) > 0.0:
        sc[0] = z
    if room[0] == -INFINITY:
        return
    if full < 0:
        full = group_full(p, st, v_grp(p, v))
    # a full group moves by pairs inside it: such a sample is never settled; below its cap
    # a variable's room is its box's
    if full or (U < Uhi and U > Ulo):
        room[0] = -INFINITY
    elif U < Uhi:
        room[0] = min(room[0], z)
    elif U > Ulo:
        room[0] = min(room[0], -z)


cdef double _grouped_violation(const Prob* p, const State* st, const Canon* cn,
                               const double* Ft, const double* S, int i, int* gvars,
                               double* zg, double* ag, double* margin) noexcept nogil:
    """SMOSolver._sample_violation's value and margin (problems with groups) with each
    variable's z formed once, kept (gvars, zg, ag: maxper entries, from the sample's first
    variable on) for the pair test of its group when full, each group's fullness tested
    once (a sample's variables of one group are contiguous) and, as in _flat_violation,
    every loop invariant held in a local (S[i] / k was divided anew for every variable,
    and the problem's fields reloaded after every store to the buffers).  Every z (the
    operations of _zval, in its order), comparison and minimum is the plain loops' (the z
    of a fixed variable, hi <= lo, is only read by its full group's pair test, as there)."""
    cdef int v, e, g, w, va, vb, gprev = -2, n = p.n, v0 = p.ptr[i], v1 = p.ptr[i + 1]
    cdef const int* ent = p.ent
    cdef const int* grp = p.grp
    cdef const int* cp = cn.p
    cdef const int* cq = cn.q
    cdef const double* cr = cn.r
    cdef const double* csg = cn.sg
    cdef const double* lin = p.lin
    cdef const double* plo = p.lo
    cdef const double* phi = p.hi
    cdef const double* alpha = st.alpha
    cdef const double* s = st.s
    cdef bint lo_ent = p.lo_ent, hi_ent = p.hi_ent, full = False
    cdef double kappa = p.kappa, Si = S[i] / p.k
    cdef double sc = 0.0, z, sig, gv, lo, hi, room = INFINITY, off, al
    for v in range(v0, v1):
        e = v if ent == NULL else ent[v]        # v_ent, and ce (Canon.ent is Prob.ent)
        sig = csg[e]
        off = -sig * lin[e]
        z = _z_canon(kappa, Ft, n, i, cp[e], cq[e], cr[e], Si, s, off)
        al = alpha[v]
        gvars[v - v0] = v
        zg[v - v0] = sig * z
        ag[v - v0] = al
        g = -1 if grp == NULL else grp[v]
        if g != gprev:
            full = group_full(p, st, g)
            gprev = g
        lo = plo[e if lo_ent else v]
        hi = phi[e if hi_ent else v]
        if hi <= lo:
            continue
        _grouped_variable(p, st, cn, v, z, sig * al, hi if sig > 0 else -lo,
                          lo if sig > 0 else -hi, full, &sc, &room)
    margin[0] = room
    v = v0
    while v < v1:
        g = v_grp(p, v)
        w = group_end(p, v, v1)
        if group_full(p, st, g):
            gv = group_pair(p, gvars + (v - v0), w - v, zg + (v - v0), ag + (v - v0), &va,
                            &vb)
            if gv > sc:
                sc = gv
        v = w
    return sc


# SMOSolver._sample_violation by _grouped_violation_fused (True: one pass over a sample's
# variables, each group's room and pair test kept in locals) or by _grouped_violation
# (False: round 15's two passes); the same values (_grouped_scan_fused switches it, for
# benchmarks)
cdef bint GROUPED_SCAN_FUSED = True


cdef inline double _pair_closed(double sc, bint full, double ga, double gb, int xa,
                                int xb) noexcept nogil:
    """sc raised to a full group's pair violation ga - gb (group_pair's value: 0 without
    two distinct members xa, xb), as _grouped_violation's second pass raises it."""
    cdef double gv
    if not full:
        return sc
    gv = 0.0 if xa < 0 or xb < 0 or xa == xb else ga - gb
    return gv if gv > sc else sc


cdef inline bint _has_room(double room, double groom, bint capped) noexcept nogil:
    """Whether a variable can move (_room_up / _room_down > 0): its box room, lowered to its
    group's room groom (cap - gsum) where the move grows the group's sum (capped)."""
    if capped and groom < room:
        room = groom
    return room > 0.0


cdef double _grouped_violation_fused(const Prob* p, const State* st, const Canon* cn,
                                     const double* Ft, const double* S, int i,
                                     double* margin) noexcept nogil:
    """_grouped_violation's value and margin in one pass over sample i's variables: each
    group's fullness and room (cap - gsum) formed once when the pass enters the group (a
    sample's variables of one group are contiguous), a full group's pair extremes kept in
    locals as the pass goes (group_pair's tests on the same alpha-space gradients, in its
    order) and closed when it leaves the group.  Every z, room, comparison and minimum is
    _grouped_violation's (the largest violation does not depend on the order in which its
    candidates are met: they only raise it, on strict comparisons)."""
    cdef int v, e, g, gprev = -2, xa = -1, xb = -1, n = p.n, v0 = p.ptr[i], v1 = p.ptr[i + 1]
    cdef const int* ent = p.ent
    cdef const int* grp = p.grp
    cdef const int* cp = cn.p
    cdef const int* cq = cn.q
    cdef const double* cr = cn.r
    cdef const double* csg = cn.sg
    cdef const double* lin = p.lin
    cdef const double* plo = p.lo
    cdef const double* phi = p.hi
    cdef const double* alpha = st.alpha
    cdef const double* s = st.s
    cdef bint lo_ent = p.lo_ent, hi_ent = p.hi_ent, full = False, grouped = False
    cdef double kappa = p.kappa, Si = S[i] / p.k
    cdef double sc = 0.0, z, sig, gz, lo, hi, room = INFINITY, off, al, U, Uhi, Ulo
    cdef double groom = 0.0, ga = -INFINITY, gb = INFINITY
    for v in range(v0, v1):
        e = v if ent == NULL else ent[v]        # v_ent, and ce (Canon.ent is Prob.ent)
        sig = csg[e]
        off = -sig * lin[e]
        z = _z_canon(kappa, Ft, n, i, cp[e], cq[e], cr[e], Si, s, off)
        al = alpha[v]
        g = -1 if grp == NULL else grp[v]
        lo = plo[e if lo_ent else v]
        hi = phi[e if hi_ent else v]
        if g != gprev:
            sc = _pair_closed(sc, full, ga, gb, xa, xb)
            full = group_full(p, st, g)
            grouped = g >= 0
            if grouped:
                groom = p.cap[g] - st.gsum[g]
            ga = -INFINITY
            gb = INFINITY
            xa = -1
            xb = -1
            gprev = g
        if full:
            # group_pair's tests, on the gradient _grouped_violation keeps (zg)
            gz = sig * z
            if al > lo and gz > ga:
                ga = gz
                xa = v
            if al < hi and gz < gb:
                gb = gz
                xb = v
        if hi <= lo:
            continue
        # _grouped_variable, with the group's room formed once
        U = sig * al
        Uhi = hi if sig > 0 else -lo
        Ulo = lo if sig > 0 else -hi
        if z < -sc and _has_room(Uhi - U, groom, grouped and sig > 0):
            sc = -z
        elif z > sc and _has_room(U - Ulo, groom, grouped and sig < 0):
            sc = z
        if room == -INFINITY:
            continue
        if full or (U < Uhi and U > Ulo):
            room = -INFINITY
        elif U < Uhi:
            room = min(room, z)
        elif U > Ulo:
            room = min(room, -z)
    margin[0] = room
    return _pair_closed(sc, full, ga, gb, xa, xb)


def _grouped_scan_fused(value=None):
    """GROUPED_SCAN_FUSED, set where given (for benchmarks: the values do not depend on
    it); returns the previous value."""
    global GROUPED_SCAN_FUSED
    old = GROUPED_SCAN_FUSED
    if value is not None:
        GROUPED_SCAN_FUSED = bool(value)
    return old


def _grouped_scan(value=None):
    """GROUPED_SCAN_ONCE, set where given (for benchmarks: the values do not depend on it);
    returns the previous value."""
    global GROUPED_SCAN_ONCE
    old = GROUPED_SCAN_ONCE
    if value is not None:
        GROUPED_SCAN_ONCE = bool(value)
    return old


cdef void _scan_part(void* ctx, int t, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Samples lo .. hi - 1 of a ScanTask, as SMOSolver._scan_samples's loop does them."""
    cdef ScanTask* w = <ScanTask*> ctx
    cdef Py_ssize_t i
    cdef int m = 0
    cdef long long skipped = 0, vars_seen = 0, scanned = 0, active = 0, unsettled = 0
    cdef double sc, margin, viol = 0.0, Ssum = 0.0, raw = 0.0
    cdef unsigned char was
    for i in range(lo, hi):
        if not w.full and w.settled[i]:
            skipped += 1
            continue
        scanned += 1
        vars_seen += w.p.ptr[i + 1] - w.p.ptr[i]
        sc = _flat_violation(w.p, w.st, w.cn, w.Ft, w.S, w.p.n, i, w.vsettled, <int> i,
                             w.skip_vars,
                             w.shrinking, w.thr, &margin)
        if w.floor != NULL:
            raw = sc if sc > raw else raw
            if sc <= w.floor[i]:
                sc = 0.0
        Ssum += w.S[i]
        if w.shrinking:
            was = w.settled[i]
            w.settled[i] = sc == 0.0 and margin > w.thr
            if not w.settled[i]:
                active += 1
                if was:
                    unsettled += 1
        if sc > viol:
            viol = sc
        if sc > w.eps:
            w.score[lo + m] = sc
            w.cand[lo + m] = <int> i
            m += 1
    w.active[t] = active
    w.unsettled[t] = unsettled
    w.viol[t] = viol
    w.raw[t] = raw if w.floor != NULL else viol
    w.Ssum[t] = Ssum
    w.m[t] = m
    w.first[t] = lo
    w.skipped[t] = skipped
    w.vars_seen[t] = vars_seen
    w.scanned[t] = scanned


cdef inline bint _sums_afresh(bint sums_moved, int changed, int k) noexcept nogil:
    """Whether a score update forms the row sums afresh from the scores (k passes over
    them) rather than adding every changed sample's row to them (pendigits
    ReinforcedMSVM: 3 % less time)."""
    return sums_moved and changed >= 2 * k


def _block_choices(const double[::1] z, double[::1] U, double[::1] Ulo, double[::1] Uhi,
                   int[::1] li, double[::1] kd, double[::1] row, int skip, double za,
                   double kpn2, double Kaa, double curv_min):
    """The local SMO's choices on one bucket holding all of z (for tests): the extremes
    (up_at, up_z, lo_at, lo_z) and the second-order partner (best, best_gain) that the
    vectorized passes of _block_scan.h pick.  Every array has len(z) entries, but kd and
    row, indexed by li."""
    import numpy as np
    cdef int x, nb = z.shape[0], up_at = -1, lo_at = -1, best = -1
    cdef double up_z = INFINITY, lo_z = -INFINITY, best_gain = -1.0
    if (U.shape[0] != nb or Ulo.shape[0] != nb or Uhi.shape[0] != nb or li.shape[0] != nb
            or nb == 0):
        raise ValueError("z, U, Ulo, Uhi and li need one common, nonzero length")
    for x in range(nb):
        if li[x] < 0 or li[x] >= kd.shape[0] or li[x] >= row.shape[0]:
            raise ValueError("li indexes kd and row")
    vu = np.empty(nb)
    vl = np.empty(nb)
    gain = np.empty(nb)
    zc = np.empty(nb)
    cdef double[::1] vu_v = vu, vl_v = vl, gain_v = gain, zc_v = zc
    cdef double[::1] zero = np.zeros(nb), mzero = np.full(nb, -0.0)
    cdef int[::1] ident = np.arange(nb, dtype=np.int32)
    # z through msvm_bucket_z itself: kappa 1, no sums, -0.0 added (which keeps every value,
    # signed zeros included), each variable its own sample
    msvm_bucket_z(&z[0], NULL, &zero[0], &ident[0], &mzero[0], &U[0], &Ulo[0], &Uhi[0],
                  &zc_v[0], &vu_v[0], &vl_v[0], 0, nb, 1.0, 0.0, 0.0, -0.0, True)
    msvm_bucket_extremes(&zc_v[0], &vu_v[0], &vl_v[0], 0, nb, &up_z, &up_at, &lo_z, &lo_at)
    best = msvm_bucket_partner(&zc_v[0], &U[0], &Uhi[0], &li[0], &kd[0], &row[0], 0, nb, skip,
                               za, kpn2, Kaa, curv_min, &gain_v[0], &best_gain)
    return up_at, up_z, lo_at, lo_z, best, best_gain


def _free_block_product(const double[:, ::1] KT, const double[:, ::1] D):
    """msvm_free_block_product on a gathered block (for tests): KT (m x m, the block
    transposed), D (m x k); returns the k x m products, slot-major."""
    import numpy as np
    cdef int m = KT.shape[0], k = D.shape[1]
    if KT.shape[1] != m or D.shape[0] != m or m == 0 or k == 0:
        raise ValueError("KT must be m x m and D m x k, m and k nonzero")
    out = np.empty((k, m))
    cdef double[:, ::1] o = out
    msvm_free_block_product(&KT[0, 0], &D[0, 0], &o[0, 0], m, k)
    return out


def _cached_boost(value=None):
    """CACHED_BOOST (_load_block), set where given (for benchmarks); returns the previous
    value."""
    global CACHED_BOOST
    old = CACHED_BOOST
    if value is not None:
        CACHED_BOOST = _checked_least(value, 1.0, "boost")
    return old


def _boost_turnover(value=None):
    """BOOST_TURNOVER (_boost_applies), set where given (0: main aae56db's rule); returns
    the previous value."""
    global BOOST_TURNOVER
    old = BOOST_TURNOVER
    if value is not None:
        BOOST_TURNOVER = _checked_least(value, 0.0, "turnover")
    return old


def _grouped_vector(value=None):
    """GROUPED_VECTOR (the grouped blocks' vectorized passes), set where given (for
    benchmarks and tests: off, main 10578f8's plain loops); returns the previous value."""
    global GROUPED_VECTOR
    old = GROUPED_VECTOR
    if value is not None:
        GROUPED_VECTOR = bool(value)
    return old


def _checked_least(value, least, what):
    """``value`` as a float, a ValueError where it is below ``least`` (or NaN)."""
    if not value >= least:
        raise ValueError(f"the {what} must be >= {least}")
    return float(value)


def _checked_count(value, least, what):
    """``value`` as an int, a ValueError where it is below ``least``."""
    return int(_checked_least(value, least, what))


def _newton_madds(value=None):
    """NEWTON_MADDS (_block_smo's Newton schedule), set where given (for experiments);
    returns the previous value."""
    global NEWTON_MADDS
    old = NEWTON_MADDS
    if value is not None:
        NEWTON_MADDS = _checked_count(value, 1, "count")
    return old


def _multi_group_qmax(value=None):
    """MULTI_GROUP_QMAX (the working-set bound of duals with several groups per sample),
    set where given (for benchmarks and tests; 0: no bound, main fd47237's blocks); returns
    the previous value."""
    global MULTI_GROUP_QMAX
    old = MULTI_GROUP_QMAX
    if value is not None:
        MULTI_GROUP_QMAX = _checked_count(value, 0, "bound")
    return old


cdef bint _several_groups_per_sample(const Prob* p) noexcept nogil:
    """Whether some sample's variables belong to more than one group cap."""
    cdef int i, v
    for i in range(p.n):
        for v in range(p.ptr[i] + 1, p.ptr[i + 1]):
            if v_grp(p, v) != v_grp(p, p.ptr[i]):
                return True
    return False


def _sparse_hmul(value=None):
    """SPARSE_HMUL (_hmul), set where given (for benchmarks and tests: off, the Newton
    step's products run over the whole block); returns the previous value."""
    global SPARSE_HMUL
    old = SPARSE_HMUL
    if value is not None:
        SPARSE_HMUL = bool(value)
    return old


def smo_applies(RowSource src, problem):
    """Whether the working-set SMO path serves this source and problem: kernel rows, and
    directions whose coefficients are +-1 on each slot."""
    import numpy as np
    if not src.has_rows():
        return False
    # the entries some variable reads (no per-variable expansion)
    c1 = np.asarray(problem._used(problem.entry_coef1))
    s2 = np.asarray(problem._used(problem.entry_slot2))
    c2 = np.asarray(problem._used(problem.entry_coef2))
    return bool(np.all(np.abs(c1) == 1.0)) and bool(np.all((s2 < 0) | (np.abs(c2) == 1.0)))


cdef void _hmul_samples(const Block* B, int k, int qmax, const double* free_,
                        const double* D, int* rows_i, int* cols_l, int* ni,
                        int* nl) noexcept nogil:
    """The block samples _hmul reads: rows_i[:ni], those holding a free variable b
    (free_[b] != 0), and cols_l[:nl], those whose slot sums D are not all zero, each in
    increasing order (the order of the plain product's sums); every sample of the block
    in both when SPARSE_HMUL is off.  A skipped column adds K_il * 0 = 0 to each sum
    (the block's kernel values are finite), so the sums are the plain product's."""
    cdef int q = B.q, nb = B.nb, b, i, j
    cdef unsigned char* need = <unsigned char*> (cols_l + qmax)
    ni[0] = 0
    nl[0] = 0
    for i in range(q):
        need[i] = 0 if SPARSE_HMUL else 1
    for b in range(nb):
        if free_[b] != 0.0:
            need[B.li[b]] = 1
    for i in range(q):
        if need[i]:
            rows_i[ni[0]] = i
            ni[0] += 1
        for j in range(k):
            if D[i * k + j] != 0.0 or not SPARSE_HMUL:
                cols_l[nl[0]] = i
                nl[0] += 1
                break


cdef class SMOSolver(InnerSolver):
    """Working-set SMO on kernel problems with +-1 directions (see the Design note)."""

    def __cinit__(self):
        self.S = NULL
        self.vsettled = NULL
        self.settled = NULL
        self.stamp = NULL
        self.drift = NULL
        self.KT = NULL
        self.fD = NULL
        self.fF = NULL
        self.frows = NULL
        self.fidx = NULL
        self.nfree = 0
        self.interrupted = False

    def __init__(self, RowSource src, ProblemArrays pa, DualState ds, long long max_steps,
                 int qmax, bint shrinking=True):
        cdef const Prob* p = &pa.p
        cdef int n = p.n, k = p.k, nv = p.nv, maxper = p.maxper, nkeys, i, v, j
        if not src.has_rows():
            raise ValueError("the SMO path needs a row source with kernel rows")
        self._bind(src, pa, ds)
        self.max_steps = max_steps
        self.steps = 0
        self.blocks = 0
        self.skipped = 0
        self.full_scans = 0
        self.active_sum = 0
        self.unsettled_sum = 0
        self.changed_sum = 0
        self.nprev = 0
        qmax = min(qmax, n, src.capacity)
        if MULTI_GROUP_QMAX > 0 and _several_groups_per_sample(p):
            qmax = min(qmax, MULTI_GROUP_QMAX)
        self.qmax = max(qmax, 1)
        qmax = self.qmax
        nkeys = k * (k + 1) * 3
        cdef Py_ssize_t nbmax = <Py_ssize_t> qmax * maxper + 1
        self.Ft = src.slot_scores()
        self.S = <double*> malloc(n * sizeof(double) + 1)
        self.score = <double*> malloc(n * sizeof(double) + 1)
        self.cand = <int*> malloc(n * sizeof(int) + 1)
        self.prev = <int*> malloc(qmax * sizeof(int))
        self.sample = <int*> malloc(nv * sizeof(int) + sizeof(int))
        self.settled = <unsigned char*> malloc(n + 1)
        self.stamp = <int*> malloc(n * sizeof(int) + 1)
        self.vsettled = <unsigned char*> malloc(nv + 1)
        self.bv = <int*> malloc(nbmax * sizeof(int))
        self.dU = <double*> malloc(<Py_ssize_t> qmax * (k + 1) * sizeof(double))
        self.zg = <double*> malloc((maxper + 1) * sizeof(double))
        self.ag = <double*> malloc((maxper + 1) * sizeof(double))
        self.gvars = <int*> malloc((maxper + 1) * sizeof(int))
        self.drift = <double*> malloc((5 * nbmax + 2 * <Py_ssize_t> qmax * k
                                       + 2 * <Py_ssize_t> qmax + 1)
                                      * sizeof(double))
        self.ex.l = <double*> malloc(nkeys * sizeof(double))
        self.ex.u = <double*> malloc(nkeys * sizeof(double))
        self.ex.la = <int*> malloc(nkeys * sizeof(int))
        self.ex.ua = <int*> malloc(nkeys * sizeof(int))
        self.cn.p = <int*> malloc(p.ne * sizeof(int) + sizeof(int))
        self.cn.q = <int*> malloc(p.ne * sizeof(int) + sizeof(int))
        self.cn.r = <double*> malloc(p.ne * sizeof(double) + sizeof(double))
        self.cn.sg = <double*> malloc(p.ne * sizeof(double) + sizeof(double))
        self.cn.pn2 = <double*> malloc(p.ne * sizeof(double) + sizeof(double))
        self.cn.bucket = <int*> malloc(p.ne * sizeof(int) + sizeof(int))
        self.B.K = <double*> malloc(<Py_ssize_t> qmax * qmax * sizeof(double))
        self.B.kd = <double*> malloc(qmax * sizeof(double))
        self.B.Ft = <double*> malloc(<Py_ssize_t> k * qmax * sizeof(double))
        self.B.S = <double*> malloc(qmax * sizeof(double))
        self.B.loc = <int*> malloc(n * sizeof(int) + 1)
        self.B.start = <int*> malloc((nkeys + 1) * sizeof(int))
        self.B.U = <double*> malloc(nbmax * sizeof(double))
        self.B.Ulo = <double*> malloc(nbmax * sizeof(double))
        self.B.Uhi = <double*> malloc(nbmax * sizeof(double))
        self.B.off = <double*> malloc(nbmax * sizeof(double))
        self.B.z = <double*> malloc(nbmax * sizeof(double))
        self.B.vu = <double*> malloc(nbmax * sizeof(double))
        self.B.vl = <double*> malloc(nbmax * sizeof(double))
        self.B.gain = <double*> malloc(nbmax * sizeof(double))
        self.B.li = <int*> malloc(nbmax * sizeof(int))
        self.B.gv = <int*> malloc(nbmax * sizeof(int))
        self.B.pos = <int*> malloc(nbmax * sizeof(int))
        self.B.gu = <int*> malloc(nbmax * sizeof(int))
        self.B.gd = <int*> malloc(nbmax * sizeof(int))
        self.B.gx = <int*> malloc((nbmax + 1) * sizeof(int))
        self.B.gg = <int*> malloc(nbmax * sizeof(int))
        self.B.bg = <int*> malloc(nbmax * sizeof(int))
        self.B.gru = <double*> malloc(nbmax * sizeof(double))
        self.B.grd = <double*> malloc(nbmax * sizeof(double))
        self.B.gfull = <unsigned char*> malloc(nbmax)
        self.B.ng = 0
        if (self.B.gu == NULL or self.B.gd == NULL or self.B.gx == NULL or self.B.gg == NULL
                or self.B.bg == NULL or self.B.gru == NULL or self.B.grd == NULL
                or self.B.gfull == NULL):
            raise MemoryError("cannot allocate the solver's work arrays")
        if (self.S == NULL or self.score == NULL or self.cand == NULL or self.prev == NULL
                or self.vsettled == NULL
                or self.sample == NULL or self.settled == NULL or self.bv == NULL
                or self.stamp == NULL
                or self.dU == NULL
                or self.zg == NULL or self.ag == NULL or self.gvars == NULL
                or self.drift == NULL
                or self.ex.l == NULL or self.ex.u == NULL or self.ex.la == NULL
                or self.ex.ua == NULL or self.cn.p == NULL or self.cn.q == NULL
                or self.cn.r == NULL or self.cn.sg == NULL or self.cn.pn2 == NULL
                or self.cn.bucket == NULL or self.B.K == NULL or self.B.kd == NULL
                or self.B.Ft == NULL or self.B.S == NULL or self.B.loc == NULL
                or self.B.start == NULL or self.B.U == NULL or self.B.Ulo == NULL
                or self.B.Uhi == NULL or self.B.off == NULL or self.B.z == NULL
                or self.B.vu == NULL or self.B.vl == NULL or self.B.gain == NULL
                or self.B.li == NULL or self.B.gv == NULL or self.B.pos == NULL
                or _canonical(p, &self.cn) < 0):
            raise MemoryError("cannot allocate the solver's work arrays")
        self.grouped = False
        self.per_class = n >= SETTLE_ZERO_MIN_N     # until a group or a two-slot direction
        for v in range(nv):
            if v_grp(p, v) >= 0:
                self.grouped = True
                self.per_class = False
            if self.cn.q[ce(&self.cn, v)] >= 0:
                self.per_class = False
        if self.grouped:
            # the Newton step's gathered free block (_gather_free_block)
            self.KT = <double*> malloc(<Py_ssize_t> qmax * qmax * sizeof(double))
            self.fD = <double*> malloc(<Py_ssize_t> qmax * k * sizeof(double))
            self.fF = <double*> malloc(<Py_ssize_t> qmax * k * sizeof(double))
            self.frows = <int*> malloc(qmax * sizeof(int))
            self.fidx = <int*> malloc(qmax * sizeof(int))
            if (self.KT == NULL or self.fD == NULL or self.fF == NULL or self.frows == NULL
                    or self.fidx == NULL):
                raise MemoryError("cannot allocate the solver's work arrays")
        self.shrinking = shrinking
        self.since_full = SHRINK_EVERY
        self.last_viol = INFINITY
        for i in range(n):
            self.S[i] = 0.0
            self.B.loc[i] = -1
            self.settled[i] = 0
            self.stamp[i] = -1
            for v in range(p.ptr[i], p.ptr[i + 1]):
                self.sample[v] = i
                self.vsettled[v] = 0
            for j in range(k):
                self.S[i] += self.Ft[<Py_ssize_t> j * n + i]
        for j in range(qmax * (k + 1)):
            self.dU[j] = 0.0

    def __dealloc__(self):
        free(self.S); free(self.score); free(self.cand); free(self.prev); free(self.sample)
        free(self.settled)
        free(self.stamp)
        free(self.vsettled)
        free(self.bv); free(self.dU); free(self.zg); free(self.ag); free(self.gvars)
        free(self.drift)
        free(self.ex.l); free(self.ex.u); free(self.ex.la); free(self.ex.ua)
        free(self.cn.p); free(self.cn.q); free(self.cn.r); free(self.cn.sg); free(self.cn.pn2)
        free(self.cn.bucket)
        free(self.B.K); free(self.B.kd); free(self.B.Ft); free(self.B.S); free(self.B.loc)
        free(self.B.start); free(self.B.U); free(self.B.Ulo); free(self.B.Uhi)
        free(self.B.off); free(self.B.z); free(self.B.li); free(self.B.gv); free(self.B.pos)
        free(self.B.vu); free(self.B.vl); free(self.B.gain)
        free(self.B.gu); free(self.B.gd)
        free(self.B.gx); free(self.B.gg); free(self.B.bg); free(self.B.gru); free(self.B.grd)
        free(self.B.gfull)
        free(self.KT); free(self.fD); free(self.fF); free(self.frows); free(self.fidx)

    cdef void end_round(self) noexcept nogil:
        self.steps += 1                 # an augmented-Lagrangian round is work too

    cdef bint exhausted(self) noexcept nogil:
        return self.steps >= self.max_steps

    cdef long epochs(self):
        cdef long long n = max(self.p.n, 1)
        return (self.steps + n - 1) // n

    cdef str progress(self):
        return (f"steps {self.steps}, blocks {self.blocks}, settled visits {self.skipped}, "
                f"full scans {self.full_scans}, unsettled at full scans {self.active_sum}, "
                f"unsettling {self.unsettled_sum}, changed between full scans "
                f"{self.changed_sum}")

    # ------------------------------------------------------------------ 1. global scan
    cdef inline double _settle_margin(self) noexcept nogil:
        """How far a variable at a bound must be from violating (z pointing out of its box)
        to be settled: the last scan's largest violation (libsvm's rule; infinite at the
        first scan of an inner solve, which settles nothing), or, after that first scan, 0
        on per-class-hinge problems (every direction on one slot, no groups, at least
        SETTLE_ZERO_MIN_N samples; see the Design note, 1).  A settled variable is still
        checked by every full scan, so the stopping rule is the same."""
        if self.per_class and self.last_viol < INFINITY:
            return 0.0
        return self.last_viol

    cdef double _sample_violation(self, int i, double* margin) noexcept nogil:
        """Largest violation of the inner KKT conditions among sample i's variables and
        groups (problems with groups; without them: _flat_violation).  margin: how far the
        sample is from violating, the smallest |z| over its variables at a bound with z
        pointing out of the box (-inf when a variable is free or in a full group: then the
        sample is never settled).  _grouped_violation by default (GROUPED_SCAN_ONCE)."""
        cdef const Prob* p = self.p
        cdef const State* st = self.st
        cdef const Canon* cn = &self.cn
        cdef int v, v0 = p.ptr[i], v1 = p.ptr[i + 1], g, w, va, vb, n = p.n
        cdef double sc = 0.0, z, sig, gv, lo, hi, room = INFINITY
        if GROUPED_SCAN_ONCE and GROUPED_SCAN_FUSED:
            return _grouped_violation_fused(p, st, cn, self.Ft, self.S, i, margin)
        if GROUPED_SCAN_ONCE:
            return _grouped_violation(p, st, cn, self.Ft, self.S, i, self.gvars, self.zg,
                                      self.ag, margin)
        for v in range(v0, v1):
            lo = v_lo(p, v)
            hi = v_hi(p, v)
            if hi <= lo:
                continue
            sig = cn.sg[ce(cn, v)]
            z = _zval(p, st, cn, v, self.Ft, self.S, n, i, -sig * v_lin(p, v))
            _grouped_variable(p, st, cn, v, z, sig * st.alpha[v], hi if sig > 0 else -lo,
                              lo if sig > 0 else -hi, -1, &sc, &room)
        margin[0] = room
        v = v0
        while v < v1:
            g = v_grp(p, v)
            w = group_end(p, v, v1)
            if group_full(p, st, g):
                for va in range(v, w):
                    self.gvars[va - v] = va
                    sig = cn.sg[ce(cn, va)]
                    self.zg[va - v] = sig * _zval(p, st, cn, va, self.Ft, self.S, n, i,
                                                  -sig * v_lin(p, va))
                    self.ag[va - v] = st.alpha[va]
                gv = group_pair(p, self.gvars, w - v, self.zg, self.ag, &va, &vb)
                if gv > sc:
                    sc = gv
            v = w
        return sc

    cdef int _scan_samples(self, double eps, double* viol, int* m, bint full) noexcept nogil:
        """Every sample's violation (only the unsettled ones unless ``full``); the
        candidates (> eps) into score / cand.  A sample is settled when it does not violate
        and every variable at a bound is further from violating than the last scan's largest
        violation (libsvm's shrinking rule): it stays out of the scans until the next full
        one.  Scores are kept for every sample, so a full scan needs no reconstruction."""
        cdef int i, n = self.p.n, scanned = 0
        cdef long long vars_seen = 0
        cdef double sc, margin, Ssum = 0.0, thr = self.last_viol, raw = 0.0
        cdef bint now
        if not self.grouped:
            return self._scan_flat(eps, viol, m, full)
        viol[0] = 0.0
        m[0] = 0
        for i in range(n):
            if not full and self.settled[i]:
                self.skipped += 1
                continue
            scanned += 1
            vars_seen += self.p.ptr[i + 1] - self.p.ptr[i]
            sc = self._sample_violation(i, &margin)
            if self.floor != NULL:
                raw = sc if sc > raw else raw
                if sc <= self.floor[i]:
                    sc = 0.0
            Ssum += self.S[i]
            if self.shrinking:
                now = sc == 0.0 and margin > thr
                if full and not now:
                    self.active_sum += 1
                    self.unsettled_sum += self.settled[i]
                self.settled[i] = now
            if sc > viol[0]:
                viol[0] = sc
            if sc > eps:
                self.score[m[0]] = sc
                self.cand[m[0]] = i
                m[0] += 1
        self.last_viol = viol[0]
        self.raw_viol = raw if self.floor != NULL else viol[0]
        self.full_scans += full
        return self._scan_end(viol[0], Ssum, vars_seen + scanned)

    cdef int _scan_end(self, double viol, double Ssum, long long work) noexcept nogil:
        """The end of a scan: NONFINITE when the sums or the scan's values overflowed,
        INTERRUPTED when a signal is pending after ``work`` units, else CONVERGED."""
        if not sums_finite(self.p, self.st, viol) or not all_finite(Ssum):
            return STATUS_NONFINITE
        if tick(&self.work, work):
            return STATUS_INTERRUPTED
        return STATUS_CONVERGED

    cdef int _scan_flat(self, double eps, double* viol, int* m, bint full) noexcept nogil:
        """_scan_samples without groups (_scan_part over the samples, split between the row
        source's n_threads threads; one part, in this thread, with one): every sample's
        values as in one pass, the parts' candidates joined in sample order, the largest
        violation the largest of theirs.  Between full scans the unsettled samples' settled
        variables are passed over too."""
        cdef ScanTask w
        cdef int parts = self._scan_parts()
        self._scan_task(&w, eps, full)
        run_parts(self.p.n, parts, self.src.n_threads, _scan_part, &w)
        return self._scan_joined(&w, parts, full, viol, m)

    cdef int _scan_parts(self) noexcept nogil:
        """The parts of a scan over the samples."""
        return min(thread_parts(self.p.n, self.src.n_threads), MAX_SCAN_PARTS)

    cdef void _scan_task(self, ScanTask* w, double eps, bint full) noexcept nogil:
        """A scan's inputs (_scan_flat)."""
        w.p = self.p
        w.st = self.st
        w.cn = &self.cn
        w.Ft = self.Ft
        w.S = self.S
        w.vsettled = self.vsettled
        w.settled = self.settled
        w.score = self.score
        w.cand = self.cand
        w.skip_vars = not full and self.shrinking
        w.shrinking = self.shrinking
        w.full = full
        w.eps = eps
        w.thr = self._settle_margin()
        w.floor = self.floor

    cdef int _scan_joined(self, ScanTask* w, int parts, bint full, double* viol,
                          int* m) noexcept nogil:
        """The end of a scan whose parts have run: the largest violation, the candidates
        joined in sample order, the counts, and _scan_end's status."""
        cdef int t
        cdef long long vars_seen = 0, scanned = 0
        cdef double Ssum = 0.0
        viol[0] = 0.0
        m[0] = 0
        self.raw_viol = 0.0
        for t in range(parts):
            viol[0] = max(viol[0], w.viol[t])
            self.raw_viol = max(self.raw_viol, w.raw[t])
            if w.first[t] != m[0]:
                memmove(self.score + m[0], self.score + w.first[t], w.m[t] * sizeof(double))
                memmove(self.cand + m[0], self.cand + w.first[t], w.m[t] * sizeof(int))
            m[0] += w.m[t]
            Ssum += w.Ssum[t]
            self.skipped += w.skipped[t]
            vars_seen += w.vars_seen[t]
            scanned += w.scanned[t]
            if full:
                self.active_sum += w.active[t]
                self.unsettled_sum += w.unsettled[t]
        self.full_scans += full
        self.last_viol = viol[0]
        return self._scan_end(viol[0], Ssum, vars_seen + scanned)

    cdef int _scan(self, double eps, double* viol, int* m) noexcept nogil:
        """Step 1: the violations and candidates (_scan_samples): a full scan every
        SHRINK_EVERY scans and before any convergence is declared, the unsettled samples in
        between."""
        cdef bint full = not self.shrinking or self.since_full >= SHRINK_EVERY
        cdef int status = self._scan_samples(eps, viol, m, full)
        _bp_count(BP_SCANS, 1)
        _bp_count(BP_FULL, full)
        if status == STATUS_CONVERGED and not full and viol[0] <= eps:
            full = True
            status = self._scan_samples(eps, viol, m, True)
            _bp_count(BP_SCANS, 1)
            _bp_count(BP_FULL, 1)
        self.since_full = 0 if full else self.since_full + 1
        return status

    # ------------------------------------------------------------------ 2. working set
    cdef inline bint _boost_applies(self) noexcept nogil:
        """Whether CACHED_BOOST weighs the candidates: the row cache holds under half the
        rows and (BOOST_TURNOVER > 0) has computed more than BOOST_TURNOVER times the rows it
        holds, so that the rows the blocks draw from do not stay cached."""
        if 2 * self.src.capacity >= self.p.n:
            return False
        return self.src.n_computed > BOOST_TURNOVER * self.src.capacity

    cdef int _load_block(self, int m) noexcept nogil:
        """Step 2: the working set (the m candidates' most violating, topped up with the
        previous working set) and its kernel block and scores.  Where the row cache holds
        under half the rows (large n) and has turned over (_boost_applies), a candidate
        whose kernel row is cached counts with CACHED_BOOST times its violation in that
        choice: most new rows of a block were computed anew there, and a near-top violator
        already cached is nearly as good a choice for a fraction of the cost (the scans
        still decide convergence)."""
        cdef Block* B = &self.B
        cdef int a, i, j, n = self.p.n, k = self.p.k, qmax = self.qmax, qb
        cdef int keep = qmax - self.nprev // 2
        cdef double bp_at
        if m > keep:
            if self._boost_applies():
                # the cache holds under half the rows and has turned over: a candidate
                # whose row is cached counts with CACHED_BOOST times its violation
                # (_load_block's docstring)
                for a in range(m):
                    if self.src.cached(self.cand[a]):
                        self.score[a] *= CACHED_BOOST
            _top_q(self.score, self.cand, m, keep)
            m = keep
        for a in range(m):
            B.loc[self.cand[a]] = a
        for a in range(self.nprev):
            if m >= qmax:
                break
            i = self.prev[a]
            if B.loc[i] < 0:
                B.loc[i] = m
                self.cand[m] = i
                m += 1
        qb = m
        B.q = qb
        _bp_count(BP_BLOCKS, 1)
        _bp_count(BP_Q, qb)
        _bp_count(BP_QQ, <long long> qb * qb)
        if PROFILE:
            _pv_note(self.cand, qb, n)
        bp_at = _bp_time(-1, 0.0)
        # the block's missing rows computed together (_rows.pyx: prefetch); its kernel block
        # gathered by the pool's workers (with 2 threads) while this thread gathers the
        # block's scores and variables, which read no row (block_entries_begin / _end)
        self.src.prefetch(self.cand, qb)
        bp_at = _bp_time(BP_T_ROWS, bp_at)
        self.src.block_entries_begin(self.cand, qb, B.K)
        if not GATHER_OVERLAP:
            self.src.block_entries_end()
        for a in range(qb):
            i = self.cand[a]
            if tick(&self.work, self.src.row_cost):
                if GATHER_OVERLAP:
                    self.src.block_entries_end()
                return STATUS_INTERRUPTED
            B.kd[a] = self.src.diag(i)
            for j in range(k):
                B.Ft[j * qb + a] = self.Ft[<Py_ssize_t> j * n + i]
            B.S[a] = self.S[i]
        if self.src.capacity < n:
            # the cache cannot hold every row: the rows of settled samples outside the block
            # are evicted first (partial scans pass over settled samples, so none enters a
            # working set before the next full scan but as one of this block's samples kept;
            # exact: no value depends on what is cached).  make_classification n = 10,000,
            # ReinforcedMSVM C = 1: 15,496 -> 11,542 rows computed; n = 40,000: 159,502 ->
            # 154,374
            self.src.demote(self.settled, B.loc)
        self._block_variables()
        _bp_count(BP_NB, self.B.nb)
        bp_at = _bp_time(BP_T_PICK, bp_at)
        if GATHER_OVERLAP:
            self.src.block_entries_end()
            _bp_time(BP_T_GATHER, bp_at)
        return STATUS_CONVERGED

    cdef bint _settled_variable(self, int v, int a) noexcept nogil:
        """Whether variable v (of the block's sample a) sits at a bound, outside a full group, with z
        pointing out of its box by more than _settle_margin: it stays out of
        the working set's rounds (there it would become a candidate, or a pair's partner,
        only once its z moved by more than that margin; the scans still check it)."""
        cdef const Prob* p = self.p
        cdef const Canon* cn = &self.cn
        cdef double sig = cn.sg[ce(cn, v)], U, z, rup, rdown, lo = v_lo(p, v), hi = v_hi(p, v)
        if self.grouped and group_full(p, self.st, v_grp(p, v)):
            return False
        U = sig * self.st.alpha[v]
        rup = _room_up(p, self.st, cn, v, U, hi if sig > 0 else -lo)
        rdown = _room_down(p, self.st, cn, v, U, lo if sig > 0 else -hi)
        if rup > 0.0 and rdown > 0.0:
            return False
        z = _zval(p, self.st, cn, v, self.B.Ft, self.B.S, self.B.q, a, -sig * v_lin(p, v))
        if rup > 0.0:
            return z > self._settle_margin()
        return -z > self._settle_margin()

    cdef void _block_variables(self) noexcept nogil:
        """The working set's variables (those with a box, less the settled ones), sorted by
        bucket (B.start), with their U-space boxes and offsets; B.pos keeps the problem's
        own order."""
        cdef const Prob* p = self.p
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int nbk = cn.nbuckets, a, b, j, v, x, g, nb = 0
        cdef double sig
        for j in range(nbk + 1):
            B.start[j] = 0
        if FLAT_PICK and not self.grouped:
            nb = _flat_block_variables(p, self.st, cn, B, self.cand, self._settle_margin(),
                                       self.bv)
        elif GROUPED_PICK and self.grouped:
            nb = _grouped_block_variables(p, self.st, cn, B, self.cand,
                                          self._settle_margin(), self.bv)
        else:
            for a in range(B.q):
                for v in range(p.ptr[self.cand[a]], p.ptr[self.cand[a] + 1]):
                    if v_hi(p, v) > v_lo(p, v) and not self._settled_variable(v, a):
                        self.bv[nb] = v
                        nb += 1
                        B.start[cn.bucket[ce(cn, v)] + 1] += 1
        for j in range(nbk):
            B.start[j + 1] += B.start[j]
        for x in range(nb):
            v = self.bv[x]
            j = cn.bucket[ce(cn, v)]
            b = B.start[j]
            B.start[j] += 1
            sig = cn.sg[ce(cn, v)]
            B.gv[b] = v
            B.pos[x] = b
            B.li[b] = B.loc[self.sample[v]]
            B.U[b] = sig * self.st.alpha[v]
            B.Ulo[b] = v_lo(p, v) if sig > 0 else -v_hi(p, v)
            B.Uhi[b] = v_hi(p, v) if sig > 0 else -v_lo(p, v)
            B.off[b] = -sig * v_lin(p, v)
            g = v_grp(p, v)
            B.gu[b] = g if sig > 0 else -1
            B.gd[b] = g if sig < 0 else -1
        for j in range(nbk, 0, -1):
            B.start[j] = B.start[j - 1]
        B.start[0] = 0
        B.nb = nb
        if self.grouped and GROUPED_VECTOR:
            self._block_groups()

    cdef void _block_groups(self) noexcept nogil:
        """The block's groups (Block: ng, gx, gg, bg) and its variables' group rooms (gru,
        grd), from the problem's order of the block variables (B.pos)."""
        cdef const Prob* p = self.p
        cdef Block* B = &self.B
        cdef int x = 0, x1, g, t = 0
        while x < B.nb:
            g = v_grp(p, B.gv[B.pos[x]])
            x1 = _block_group_end(p, B, x)
            B.gx[t] = x
            B.gg[t] = g
            while x < x1:
                B.bg[B.pos[x]] = t
                x += 1
            t += 1
        B.gx[t] = B.nb
        B.ng = t
        for t in range(B.ng):
            self._sync_group(B.pos[B.gx[t]])

    cdef void _sync_group(self, int b) noexcept nogil:
        """The group rooms (B.gru, B.grd) of the members of block variable b's group, after
        its sum moved (a no-op without GROUPED_VECTOR): cap - gsum where the member's move
        grows the group's sum, +inf elsewhere."""
        cdef const Prob* p = self.p
        cdef Block* B = &self.B
        cdef int t, x, bb, g
        cdef double room
        if not (self.grouped and GROUPED_VECTOR):
            return
        t = B.bg[b]
        g = B.gg[t]
        room = p.cap[g] - self.st.gsum[g] if g >= 0 else INFINITY
        B.gfull[t] = group_full(p, self.st, g)
        for x in range(B.gx[t], B.gx[t + 1]):
            bb = B.pos[x]
            B.gru[bb] = room if B.gu[bb] >= 0 else INFINITY
            B.grd[bb] = room if B.gd[bb] >= 0 else INFINITY

    cdef int _next_full_group(self, int x0, int* x1) noexcept nogil:
        """The first full group of the block at or after position x0 (of B.pos, a group's
        first): its first position, and one past its last into x1; B.nb if none.  With
        GROUPED_VECTOR from the block's group list and the fullness _sync_group keeps
        (group_full's value when the group's sum last moved), else by group_full."""
        cdef const Prob* p = self.p
        cdef Block* B = &self.B
        cdef int t
        if GROUPED_VECTOR:
            if x0 >= B.nb:
                return B.nb
            t = B.bg[B.pos[x0]]
            while t < B.ng and not B.gfull[t]:
                t += 1
            if t == B.ng:
                return B.nb
            x1[0] = B.gx[t + 1]
            return B.gx[t]
        while x0 < B.nb:
            x1[0] = _block_group_end(p, B, x0)
            if group_full(p, self.st, v_grp(p, B.gv[B.pos[x0]])):
                return x0
            x0 = x1[0]
        return B.nb

    # ------------------------------------------------------------------ 3. local solve
    cdef double _bucket_extremes(self) noexcept nogil:
        """Per bucket, the extreme candidates (Extremes); returns the block's violation."""
        cdef const Prob* p = self.p
        cdef const State* st = self.st
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef Extremes* ex = &self.ex
        cdef bint grouped = self.grouped
        cdef int j, idx, lo_at, up_at
        cdef double z, viol = 0.0, br, cs, sconst, kappa = p.kappa, lo_z, up_z
        cdef const double* Fp
        cdef const double* Fq
        for j in range(cn.nbuckets):
            # z first, in a pass of independent iterations (msvm_bucket_z: 4-8 % less time
            # per fit than with the running extremes in the same loop); with groups the
            # running extremes stay in locals (the block's arrays are written nowhere in
            # this loop, but the compiler cannot know that through the pointers)
            lo_z = -INFINITY
            up_z = INFINITY
            lo_at = -1
            up_at = -1
            if B.start[j] < B.start[j + 1] and not grouped:
                # without groups: vectorized passes, the same values (_block_scan.h)
                _bucket_terms(p, st, cn, B, j, &Fp, &Fq, &br, &cs, &sconst)
                msvm_bucket_z(Fp, Fq, B.S, B.li, B.off, B.U, B.Ulo, B.Uhi, B.z, B.vu, B.vl,
                              B.start[j], B.start[j + 1], kappa, br, cs, sconst, True)
                msvm_bucket_extremes(B.z, B.vu, B.vl, B.start[j], B.start[j + 1], &up_z,
                                     &up_at, &lo_z, &lo_at)
                viol = max(viol, -up_z, lo_z)
            elif B.start[j] < B.start[j + 1] and GROUPED_VECTOR:
                # with groups: the rooms count the group caps, then the same passes
                _bucket_terms(p, st, cn, B, j, &Fp, &Fq, &br, &cs, &sconst)
                msvm_bucket_z(Fp, Fq, B.S, B.li, B.off, B.U, B.Ulo, B.Uhi, B.z, B.vu, B.vl,
                              B.start[j], B.start[j + 1], kappa, br, cs, sconst, False)
                msvm_group_masks(B.z, B.U, B.Ulo, B.Uhi, B.gru, B.grd, B.start[j],
                                 B.start[j + 1], B.vu, B.vl)
                msvm_bucket_extremes(B.z, B.vu, B.vl, B.start[j], B.start[j + 1], &up_z,
                                     &up_at, &lo_z, &lo_at)
                viol = max(viol, -up_z, lo_z)
            elif B.start[j] < B.start[j + 1]:
                _bucket_terms(p, st, cn, B, j, &Fp, &Fq, &br, &cs, &sconst)
                msvm_bucket_z(Fp, Fq, B.S, B.li, B.off, B.U, B.Ulo, B.Uhi, B.z, B.vu, B.vl,
                              B.start[j], B.start[j + 1], kappa, br, cs, sconst, False)
                # with groups: the room counts the group caps
                for idx in range(B.start[j], B.start[j + 1]):
                    z = B.z[idx]
                    if z < up_z and _room_up(p, st, cn, B.gv[idx], B.U[idx], B.Uhi[idx]) > 0.0:
                        up_z = z
                        up_at = idx
                    if z > lo_z and _room_down(p, st, cn, B.gv[idx], B.U[idx],
                                               B.Ulo[idx]) > 0.0:
                        lo_z = z
                        lo_at = idx
                viol = max(viol, -up_z, lo_z)
            ex.l[j] = lo_z
            ex.u[j] = up_z
            ex.la[j] = lo_at
            ex.ua[j] = up_at
        return viol

    cdef void _group_values(self, int x0, int x1) noexcept nogil:
        """Members (global indices), alpha-space gradients and alphas of the block group at
        B.pos[x0:x1], into gvars / zg / ag."""
        cdef Block* B = &self.B
        cdef const Canon* cn = &self.cn
        cdef int x, b, v
        for x in range(x0, x1):
            b = B.pos[x]
            v = B.gv[b]
            self.gvars[x - x0] = v
            self.zg[x - x0] = cn.sg[ce(cn, v)] * _zval(self.p, self.st, cn, v, B.Ft, B.S, B.q,
                                                B.li[b], B.off[b])
            self.ag[x - x0] = cn.sg[ce(cn, v)] * B.U[b]

    cdef double _group_violation(self, double viol) noexcept nogil:
        """The block's violation including the pair conditions of its full groups."""
        cdef const Prob* p = self.p
        cdef Block* B = &self.B
        cdef int x0, x1 = 0, va, vb
        x0 = self._next_full_group(0, &x1)
        while x0 < B.nb:
            self._group_values(x0, x1)
            viol = max(viol, group_pair(p, self.gvars, x1 - x0, self.zg, self.ag, &va, &vb))
            x0 = self._next_full_group(x1, &x1)
        return viol

    cdef int _partner(self, int j, int la, double za, const double* row, double Kaa,
                      double pn2, double* zb, double* bestgain) noexcept nogil:
        """The second-order partner of la in bucket j (Fan, Chen and Lin 2005): the variable
        that can increase, with z below za, of the largest gain (za - z)^2 / curvature
        (curvature kappa ||P e||^2 (K_aa + K_bb - 2 K_ab), at least CURV_MIN), the first of
        them on ties; -1 if none.  Its z into zb and its gain into bestgain (-1 if none)."""
        cdef const Prob* p = self.p
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int idx, ib, best = -1
        cdef double kappa = p.kappa, z, curv, gain, br, cs, sconst
        cdef const double* Fp
        cdef const double* Fq
        bestgain[0] = -1.0
        _bucket_terms(p, self.st, cn, B, j, &Fp, &Fq, &br, &cs, &sconst)
        if not self.grouped:
            # the z of the bucket's variables (S moved with every step of the round), then
            # the gains: vectorized passes, the same choice (_block_scan.h)
            msvm_bucket_z(Fp, Fq, B.S, B.li, B.off, B.U, B.Ulo, B.Uhi, B.z, B.vu, B.vl,
                          B.start[j], B.start[j + 1], kappa, br, cs, sconst, False)
            best = msvm_bucket_partner(B.z, B.U, B.Uhi, B.li, B.kd, row, B.start[j],
                                       B.start[j + 1], la, za, kappa * pn2, Kaa, CURV_MIN,
                                       B.gain, bestgain)
            if best >= 0:
                zb[0] = B.z[best]
            return best
        if GROUPED_VECTOR:
            # the same passes with the rooms of the group caps (_group_block.h)
            msvm_bucket_z(Fp, Fq, B.S, B.li, B.off, B.U, B.Ulo, B.Uhi, B.z, B.vu, B.vl,
                          B.start[j], B.start[j + 1], kappa, br, cs, sconst, False)
            best = msvm_group_partner(B.z, B.U, B.Uhi, B.gru, B.li, B.kd, row, B.start[j],
                                      B.start[j + 1], la, za, kappa * pn2, Kaa, CURV_MIN,
                                      B.gain, bestgain)
            if best >= 0:
                zb[0] = B.z[best]
            return best
        for idx in range(B.start[j], B.start[j + 1]):
            if idx == la:
                continue
            ib = B.li[idx]
            z = kappa * (Fp[ib] - cs * B.S[ib]) + sconst + B.off[idx]
            if Fq != NULL:
                z += kappa * br * Fq[ib]
            # the room (a group cap's lookup) only for the candidates that could gain
            if z >= za or not _room_up(p, self.st, cn, B.gv[idx], B.U[idx], B.Uhi[idx]) > 0.0:
                continue
            curv = max(kappa * pn2 * (Kaa + B.kd[ib] - 2.0 * row[ib]), CURV_MIN)
            gain = (za - z) * (za - z) / curv
            if gain > bestgain[0]:
                bestgain[0] = gain
                best = idx
                zb[0] = z
        return best

    cdef bint _bucket_step(self, int j, double eps) noexcept nogil:
        """One step in bucket j: the best same-bucket pair (second-order choice) or a single
        Newton step on its most violating variable, whichever gains more.  Whether it moved."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int q = B.q, la = self.ex.la[j], ua = self.ex.ua[j], a, b, best = -1, vs = -1
        cdef int ia, ib
        cdef double kappa = p.kappa, za = -INFINITY, zu = INFINITY, zb = 0.0, z, curv
        cdef double bestgain, room, t, Kaa = 0.0, single = 0.0, gain_pair = 0.0
        cdef double gain_single = 0.0, pn2
        cdef const double* row = NULL
        if la >= 0:
            za = _zval(p, st, cn, B.gv[la], B.Ft, B.S, q, B.li[la], B.off[la])
        if ua >= 0:
            zu = _zval(p, st, cn, B.gv[ua], B.Ft, B.S, q, B.li[ua], B.off[ua])
        if za > single:
            single = za
            vs = la
        if -zu > single:
            single = -zu
            vs = ua
        pn2 = cn.pn2[ce(cn, B.gv[la if la >= 0 else ua])]
        if la >= 0 and za - zu > 0.0:
            ia = B.li[la]
            row = B.K + <Py_ssize_t> ia * q
            Kaa = B.kd[ia]
            best = self._partner(j, la, za, row, Kaa, pn2, &zb, &bestgain)
            gain_pair = 0.5 * bestgain
        if vs >= 0:
            curv = (kappa * B.kd[B.li[vs]] + st.rho * p.equality) * pn2
            gain_single = 0.5 * single * single / max(curv, CURV_MIN)
        if best < 0 and vs < 0:
            return False
        if best >= 0 and gain_pair >= gain_single:
            a = la
            b = best
            ib = B.li[b]
            curv = kappa * pn2 * (Kaa + B.kd[ib] - 2.0 * row[ib])
            room = min(_room_down(p, st, cn, B.gv[a], B.U[a], B.Ulo[a]),
                       _room_up(p, st, cn, B.gv[b], B.U[b], B.Uhi[b]))
            t = room
            _bp_count(BP_PAIR, 1)
            if curv <= CURV_MIN:
                _bp_count(BP_PAIR_FLAT, 1)
            if curv > CURV_MIN and (za - zb) / curv < room:
                t = (za - zb) / curv
            else:
                _bp_count(BP_PAIR_CLIP, 1)
            B.U[a] -= t
            B.U[b] += t
            _apply_pair(p, st, cn, B.gv[a], B.gv[b], t, B.Ft, B.S, row,
                        B.K + <Py_ssize_t> ib * q, q)
            self._sync_group(a)
            self._sync_group(b)
            return True
        # single Newton step on the bucket's most violating variable (moves c and s)
        _bp_count(BP_SINGLE, 1)
        ia = B.li[vs]
        curv = (kappa * B.kd[ia] + st.rho * p.equality) * pn2
        z = za if vs == la else zu
        if z < 0.0:
            room = _room_up(p, st, cn, B.gv[vs], B.U[vs], B.Uhi[vs])
            t = room if curv <= CURV_MIN or -z / curv > room else -z / curv
        else:
            room = _room_down(p, st, cn, B.gv[vs], B.U[vs], B.Ulo[vs])
            t = -room if curv <= CURV_MIN or z / curv > room else -z / curv
        B.U[vs] += t
        _apply_u(p, st, cn, B.gv[vs], t, B.Ft, B.S, B.K + <Py_ssize_t> ia * q, q)
        self._sync_group(vs)
        return True

    cdef bint _transversal(self, const int* cand, double sign, double eps) noexcept nogil:
        """One exact step along "U_v += sign t for one variable v of every class slot".

        For single-slot problems (one bucket per slot): moving one variable of every slot by
        the same t changes the class sums c by t 1, so P c and the equality penalty stay put;
        it is the move that changes the common value of c (the intercepts' level).  On
        near-duplicate samples it has almost no curvature while each single step sees the
        penalty rho, so the single steps of the k buckets cancel and crawl; this step goes
        straight to the minimum along the joint direction.  cand[j] is bucket j's most
        violating candidate that can move in the direction ``sign`` (-1 if none).  Returns
        whether a step was taken.
        """
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int j, a, b, ia, ib
        cdef double grad = 0.0, curv = 0.0, room, t = INFINITY, cross = 0.0
        for j in range(cn.nbuckets):
            a = cand[j]
            if a < 0:
                return False
            grad += _zval(p, st, cn, B.gv[a], B.Ft, B.S, B.q, B.li[a], B.off[a])
            room = (_room_up(p, st, cn, B.gv[a], B.U[a], B.Uhi[a]) if sign > 0 else
                    _room_down(p, st, cn, B.gv[a], B.U[a], B.Ulo[a]))
            t = min(t, room)
        if sign * grad >= -eps or t <= 0.0:
            return False
        for j in range(cn.nbuckets):
            ia = B.li[cand[j]]
            curv += B.kd[ia]
            for b in range(cn.nbuckets):
                ib = B.li[cand[b]]
                cross += B.K[<Py_ssize_t> ia * B.q + ib]
        curv = p.kappa * (curv - cross / p.k)
        if curv > CURV_MIN and -sign * grad / curv < t:
            t = -sign * grad / curv
        for j in range(cn.nbuckets):
            a = cand[j]
            B.U[a] += sign * t
            _apply_u(p, st, cn, B.gv[a], sign * t, B.Ft, B.S,
                     B.K + <Py_ssize_t> B.li[a] * B.q, B.q)
        return True

    cdef long long _group_steps(self, double eps, long long budget) noexcept nogil:
        """One pair step inside every violating full group of the block; the steps taken."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int x0, x1 = 0, va, vb, pa, pb, a, b, ia
        cdef long long steps = 0
        cdef double gv, curv, room, t
        cdef const double* row
        x0 = self._next_full_group(0, &x1)
        while x0 < B.nb and steps < budget:
            self._group_values(x0, x1)
            gv = group_pair(p, self.gvars, x1 - x0, self.zg, self.ag, &va, &vb)
            if gv > eps:
                steps += 1
                _bp_count(BP_GROUP, 1)
                pa = B.pos[x0 + va]
                pb = B.pos[x0 + vb]
                a = self.gvars[va]
                b = self.gvars[vb]
                ia = B.li[pa]
                curv = (p.kappa * B.kd[ia] + st.rho * p.equality) * pair_pnorm2(p, a, b)
                room = min(self.ag[va] - v_lo(p, a), v_hi(p, b) - self.ag[vb])
                t = room
                if curv > CURV_MIN and gv / curv < room:
                    t = gv / curv
                if t > 0.0:
                    # alpha_a -= t, alpha_b += t (U = sigma alpha)
                    B.U[pa] -= cn.sg[ce(cn, a)] * t
                    B.U[pb] += cn.sg[ce(cn, b)] * t
                    row = B.K + <Py_ssize_t> ia * B.q
                    _apply_u(p, st, cn, a, -cn.sg[ce(cn, a)] * t, B.Ft, B.S, row, B.q)
                    _apply_u(p, st, cn, b, cn.sg[ce(cn, b)] * t, B.Ft, B.S, row, B.q)
                    self._sync_group(pa)
            x0 = self._next_full_group(x1, &x1)
        return steps

    cdef void _gather_free_block(self, const double* free_) noexcept nogil:
        """At the start of a Newton step (GROUPED_VECTOR, SPARSE_HMUL): the block samples
        holding a free variable (frows[:nfree], in increasing order, the rows _hmul reads),
        the compact index of every block sample (fidx) and their kernel block transposed,
        KT[c nfree + a] = K[frows[a], frows[c]]: every product of the step runs over it
        (_hmul_free_block)."""
        cdef Block* B = &self.B
        cdef int q = B.q, b, i, a, c, ni = 0
        cdef const double* Kc
        for i in range(q):
            self.fidx[i] = 0
        for b in range(B.nb):
            if free_[b] != 0.0:
                self.fidx[B.li[b]] = 1
        for i in range(q):
            if self.fidx[i]:
                self.fidx[i] = ni
                self.frows[ni] = i
                ni += 1
            else:
                self.fidx[i] = -1
        self.nfree = ni
        for c in range(ni):
            Kc = B.K + self.frows[c]
            for a in range(ni):
                self.KT[<Py_ssize_t> c * ni + a] = Kc[<Py_ssize_t> self.frows[a] * q]

    cdef bint _hmul_free_block(self, const double* free_, const double* D, const double* ds,
                               double* out) noexcept nogil:
        """_hmul's product and result over the gathered free block (_gather_free_block)
        when the slot sums D of the direction are finite and zero outside the free samples
        (every caller's direction is zero off the free variables): the plain loop's sums,
        term for term, less zero terms (msvm_free_block_product).  False (nothing written)
        otherwise: then the plain loop runs.  ds: the class sums' part (_hmul's)."""
        cdef const Prob* p = self.p
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int q = B.q, k = p.k, ni = self.nfree, i, j, b, a, c
        cdef double sF, r, kappa = p.kappa
        cdef double* dF = self.fF
        for i in range(q):
            c = self.fidx[i]
            for j in range(k):
                if not all_finite(D[i * k + j]) or (c < 0 and D[i * k + j] != 0.0):
                    return False
                if c >= 0:
                    self.fD[c * k + j] = D[i * k + j]
        msvm_free_block_product(self.KT, self.fD, dF, ni, k)
        for b in range(B.nb):
            if free_[b] == 0.0:
                out[b] = 0.0
                continue
            a = ce(cn, B.gv[b])
            c = self.fidx[B.li[b]]
            sF = 0.0
            for j in range(k):
                sF += dF[j * ni + c]
            r = cn.r[a]
            out[b] = kappa * dF[cn.p[a] * ni + c] + ds[cn.p[a]]
            if cn.q[a] >= 0:
                out[b] += r * (kappa * dF[cn.q[a] * ni + c] + ds[cn.q[a]])
            out[b] -= kappa * (1.0 + r) * sF / k
        return True

    cdef void _hmul(self, const double* v, const double* free_, double* out) noexcept nogil:
        """out = H v for a direction v of the block's variables (U-space), zero off the
        free ones (``free_``, _free_newton_step's mask): the inner objective's Hessian,
        kappa K (x) P on the slot sums of each sample plus rho P on the class sums, on the
        rows of the free variables (0 elsewhere with SPARSE_HMUL: the callers read no
        other row).  The block product runs over the samples holding a free variable and
        those where v is nonzero only (SPARSE_HMUL; every sample of the block when off):
        the same sums, term for term, less the zero terms.  self.drift's scratch holds the
        per-sample slot sums and their scores, and the two lists of samples."""
        cdef const Prob* p = self.p
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int q = B.q, k = p.k, nb = B.nb, x, b, i, l, j, a, ni = 0, nl = 0, ii, ll
        cdef double* D = self.drift + 5 * <Py_ssize_t> (self.qmax * p.maxper + 1)
        cdef double* dF = D + <Py_ssize_t> q * k
        cdef int* rows_i = <int*> (D + 2 * <Py_ssize_t> self.qmax * k)
        cdef int* cols_l = rows_i + self.qmax
        cdef double dc[MAX_CLASSES]
        cdef double ds[MAX_CLASSES]
        cdef double Kil, tot = 0.0, sF, r
        cdef double* dFi
        cdef const double* Ki
        for x in range(q * k):
            D[x] = 0.0
            dF[x] = 0.0
        for j in range(k):
            dc[j] = 0.0
        for b in range(nb):
            if v[b] == 0.0:
                continue
            a = ce(cn, B.gv[b])
            i = B.li[b]
            D[i * k + cn.p[a]] += v[b]
            dc[cn.p[a]] += v[b]
            if cn.q[a] >= 0:
                D[i * k + cn.q[a]] += cn.r[a] * v[b]
                dc[cn.q[a]] += cn.r[a] * v[b]
        for j in range(k):
            tot += dc[j]
        for j in range(k):
            ds[j] = st_rho_eq(p, self.st) * (dc[j] - tot / k)
        if (GROUPED_VECTOR and SPARSE_HMUL and self.nfree > 0
                and self._hmul_free_block(free_, D, ds, out)):
            return
        _hmul_samples(B, k, self.qmax, free_, D, rows_i, cols_l, &ni, &nl)
        for ii in range(ni):
            i = rows_i[ii]
            dFi = dF + <Py_ssize_t> i * k
            Ki = B.K + <Py_ssize_t> i * q
            for ll in range(nl):
                l = cols_l[ll]
                Kil = Ki[l]
                if Kil != 0.0:
                    for j in range(k):
                        dFi[j] += Kil * D[l * k + j]
        for b in range(nb):
            if free_[b] == 0.0 and SPARSE_HMUL:
                out[b] = 0.0
                continue
            a = ce(cn, B.gv[b])
            i = B.li[b]
            sF = 0.0
            for j in range(k):
                sF += dF[i * k + j]
            r = cn.r[a]
            out[b] = p.kappa * dF[i * k + cn.p[a]] + ds[cn.p[a]]
            if cn.q[a] >= 0:
                out[b] += r * (p.kappa * dF[i * k + cn.q[a]] + ds[cn.q[a]])
            out[b] -= p.kappa * (1.0 + r) * sF / k

    cdef void _project_full(self, double* v, const double* free_) noexcept nogil:
        """Project v (a direction of the block's variables, zero off the free ones) onto
        the moves that keep the sum of every full group: sum sigma_b v_b = 0 over its free
        members (sigma = +-1), so that the pair moves inside a full group take part."""
        cdef const Prob* p = self.p
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int x, x0 = 0, x1, g, m, b
        cdef double tot, sg
        while x0 < B.nb:
            g = v_grp(p, B.gv[B.pos[x0]])
            x1 = _block_group_end(p, B, x0)
            if group_full(p, self.st, g):
                m = 0
                tot = 0.0
                for x in range(x0, x1):
                    b = B.pos[x]
                    if free_[b] != 0.0:
                        m += 1
                        tot += cn.sg[ce(cn, B.gv[b])] * v[b]
                if m > 0:
                    for x in range(x0, x1):
                        b = B.pos[x]
                        if free_[b] != 0.0:
                            sg = cn.sg[ce(cn, B.gv[b])]
                            v[b] -= sg * tot / m
            x0 = x1

    cdef bint _free_newton_step(self) noexcept nogil:
        """A Newton step on the block's free variables; whether it moved.

        Where the dual is flat along a combination of variables (a rank-deficient kernel
        with large boxes: the linear kernel in d = 2, C = 1e4), the pair steps zig-zag
        along it, each limited to (z_a - z_b) / curvature by its own curvature while the
        valley floor is O(C) long, so their number grows with C.  This step solves the
        inner problem restricted to the free variables (strictly inside their boxes; in a
        full group, moves that keep its sum: _project_full) by projected conjugate gradients
        on H_FF x = -z_F (a direction of zero curvature is followed to a bound), then takes
        the exact minimum along x within its boxes and the caps of every group (a full
        group's with its rounding tolerance as room; the full step when nothing blocks).  It
        is taken only when x descends, so the inner objective never rises.
        WeightedRobustMSVM, 5 samples, linear kernel: 195 epochs at C = 1e2 and max_iter
        (10,000) from C = 1e4 before; 4 epochs at every C from 1e2 to 1e8 with it."""
        cdef const Prob* p = self.p
        cdef State* st = self.st
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int nb = B.nb, b, x, x0, x1, g, it, nf = 0
        cdef Py_ssize_t nbmax = self.qmax * p.maxper + 1
        cdef double* X = self.drift
        cdef double* R = self.drift + nbmax
        cdef double* Pv = self.drift + 2 * nbmax
        cdef double* Hp = self.drift + 3 * nbmax
        cdef double* free_ = self.drift + 4 * nbmax
        cdef double rr, rr0, rr_new, pHp, pp, step, gd = 0.0, tmax = INFINITY, t, rate
        cdef double newU, d, room
        cdef double hscale = 1.0, xHx = 0.0
        for b in range(nb):
            X[b] = 0.0
            R[b] = 0.0
            free_[b] = 0.0
            if B.U[b] > B.Ulo[b] and B.U[b] < B.Uhi[b]:
                R[b] = -_zval(p, st, cn, B.gv[b], B.Ft, B.S, B.q, B.li[b], B.off[b])
                free_[b] = 1.0
                nf += 1
        self._project_full(R, free_)
        for b in range(nb):
            Pv[b] = R[b]
        rr = 0.0
        for b in range(nb):
            rr += R[b] * R[b]
        rr0 = rr
        self.nfree = 0
        if nf == 0 or rr == 0.0:
            return False
        if GROUPED_VECTOR and SPARSE_HMUL:
            self._gather_free_block(free_)
        for b in range(nb):
            if free_[b] != 0.0:
                hscale = max(hscale, p.kappa * B.kd[B.li[b]])
        for it in range(min(nf, NEWTON_CG_STEPS)):
            self._hmul(Pv, free_, Hp)
            pHp = 0.0
            pp = 0.0
            for b in range(nb):
                Hp[b] *= free_[b]               # H_FF: the rows of the free variables
            self._project_full(Hp, free_)
            for b in range(nb):
                pHp += Pv[b] * Hp[b]
                pp += Pv[b] * Pv[b]
            if pHp <= CG_FLAT * pp * hscale:
                # (almost) no curvature along Pv: the objective is about linear there (the
                # floor of a flat valley); follow Pv (a descent direction) as far as the line
                # search below allows.  Pv may be small (1e-13) and t large (1e11): the line
                # search bounds every group, full ones included, so that the rounding of a
                # full group's sum is not carried past its cap (it was, by 0.27, in a
                # DC-shifted WeightedRobustMSVM step before)
                for b in range(nb):
                    X[b] = Pv[b]
                break
            step = rr / pHp
            rr_new = 0.0
            for b in range(nb):
                X[b] += step * Pv[b]
                R[b] -= step * Hp[b]
                rr_new += R[b] * R[b]
            if rr_new <= 1e-20 * rr0:
                break
            for b in range(nb):
                Pv[b] = R[b] + (rr_new / rr) * Pv[b]
            rr = rr_new
        # X is a sum of projected vectors; project it once more so that a full group's sum
        # moves by rounding of X itself, not of the CG recurrences
        self._project_full(X, free_)
        for b in range(nb):
            gd += X[b] * _zval(p, st, cn, B.gv[b], B.Ft, B.S, B.q, B.li[b], B.off[b])
            if X[b] > 0.0:
                tmax = min(tmax, (B.Uhi[b] - B.U[b]) / X[b])
            elif X[b] < 0.0:
                tmax = min(tmax, (B.Ulo[b] - B.U[b]) / X[b])
        if not gd < 0.0:
            return False
        x0 = 0
        while x0 < nb:
            g = v_grp(p, B.gv[B.pos[x0]])
            x1 = x0 + 1
            while x1 < nb and g >= 0 and v_grp(p, B.gv[B.pos[x1]]) == g:
                x1 += 1
            if g >= 0:
                # a full group's sum stays put up to rounding (_project_full); its rounding
                # rate still bounds t, with the cap's tolerance as room, so that a long step
                # along a flat direction cannot carry it past the cap
                rate = 0.0
                for x in range(x0, x1):
                    rate += cn.sg[ce(cn, B.gv[B.pos[x]])] * X[B.pos[x]]
                room = p.cap[g] - st.gsum[g]
                if group_full(p, st, g):
                    room = max(room + CAP_RTOL * (1.0 + fabs(p.cap[g])), 0.0)
                if rate > 0.0:
                    tmax = min(tmax, room / rate)
            x0 = x1
        # the exact minimum along X (1 for a converged CG solve), within the boxes and caps
        self._hmul(X, free_, Hp)
        for b in range(nb):
            xHx += X[b] * Hp[b]
        t = tmax
        if xHx > 0.0 and -gd / xHx < t:
            t = -gd / xHx
        if not (t > 0.0 and t < INFINITY):
            return False
        for b in range(nb):
            if X[b] != 0.0:
                newU = max(B.Ulo[b], min(B.Uhi[b], B.U[b] + t * X[b]))
                d = newU - B.U[b]
                B.U[b] = newU
                _apply_u(p, st, cn, B.gv[b], d, B.Ft, B.S,
                         B.K + <Py_ssize_t> B.li[b] * B.q, B.q)
                self._sync_group(b)
        return True

    cdef long long _block_smo(self, double eps, long long max_steps,
                              bint partial) noexcept nogil:
        """Step 3: rounds of pair / single / transversal / group-pair steps on the working
        set until its violation is <= eps or max_steps steps are taken.  ``partial``: the
        scan left violating samples out of the block; then the block stops at
        max(eps, BLOCK_TOL_FRACTION times its violation at the start) instead (the global
        scan, not the block, decides convergence: the round's eps holds for every sample
        when the solver stops)."""
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef Extremes* ex = &self.ex
        cdef int j, nbk = cn.nbuckets
        cdef long long steps = 0, round_start, newton_at
        # a Newton step costs up to min(nb, NEWTON_CG_STEPS) products with the q x q block
        # (q^2 k each): one is taken after every min(nb, 100) q^2 k / 8192 pair steps (every
        # round on blocks of up to about 30 samples, every few thousand steps at q = 256).
        # Tuned, not derived: 5-sample to 20-sample grouped cases, linear, C = 1e2 .. 1e8 (13
        # of 13 converge, 3-775 epochs) and pendigits RBF C = 10 (0.2 s CPU, 2.26 s before)
        cdef long long newton_cost = max((<long long> min(B.nb, NEWTON_CG_STEPS) * B.q * B.q
                                          * self.p.k) // NEWTON_MADDS, 1)
        newton_at = newton_cost
        cdef double viol
        # transversal steps: every variable on one slot and every slot a bucket of its own
        cdef bint transversal = nbk == self.p.k and not self.grouped
        for j in range(nbk):
            if not transversal:
                break
            if B.start[j] == B.start[j + 1] or cn.q[ce(cn, B.gv[B.start[j]])] >= 0:
                transversal = False
        while True:
            viol = self._bucket_extremes()
            if self.grouped:
                viol = self._group_violation(viol)
            if partial and steps == 0 and BLOCK_TOL_FRACTION * viol > eps:
                # the block is solved to a fraction of its own starting violation, not to
                # the round's eps (_block_smo's docstring)
                eps = BLOCK_TOL_FRACTION * viol
            if viol <= eps or steps >= max_steps:
                break
            round_start = steps
            _bp_count(BP_ROUNDS, 1)
            for j in range(nbk):
                if (ex.l[j] <= eps and ex.u[j] >= -eps) or steps >= max_steps:
                    continue
                if self._bucket_step(j, eps):
                    steps += 1
            if transversal and steps < max_steps:
                if self._transversal(ex.ua, 1.0, eps):
                    steps += 1
                if self._transversal(ex.la, -1.0, eps):
                    steps += 1
            if self.grouped:
                steps += self._group_steps(eps, max_steps - steps)
                # a block still violating after pair steps worth a Newton step: a Newton
                # step on its free variables (_free_newton_step)
                if steps >= newton_at:
                    newton_at = steps + newton_cost
                    if self._free_newton_step():
                        steps += 1
                        _bp_count(BP_NEWTON, 1)
                    # its conjugate gradients are many block products: check for signals
                    # here, not only after the block (Ctrl-C within a Newton step's time)
                    if tick(&self.work, newton_cost * NEWTON_MADDS):
                        self.interrupted = True
                        break
            if steps == round_start:
                break              # no move possible (e.g. non-finite values): the caller sees it
        return steps

    # ------------------------------------------------------------------ 4. write back
    cdef int _write_back(self) noexcept nogil:
        """Step 4: the block's alphas, and every score updated once with the kernel rows of
        the samples that changed (one grouped pass, RowSource.rows_axpys).  INTERRUPTED
        (after the update is complete) or CONVERGED."""
        cdef bint sums_moved = False
        cdef int changed = self._collect_changes(&sums_moved)
        _bp_count(BP_CHANGED, changed)
        if changed == 0:
            return STATUS_CONVERGED
        self._apply_changes(changed, sums_moved)
        if tick(&self.work, changed * self.src.row_cost):
            return STATUS_INTERRUPTED
        return STATUS_CONVERGED

    cdef int _collect_changes(self, bint* sums_moved) noexcept nogil:
        """The block's alphas written back (its samples cand[:q], in block order) and the
        changed samples compacted in block order into cand and their rows into the first
        rows of dU, each with its row sum (the change of S) in column k; whether a row sum
        moved into sums_moved.  Returns how many changed."""
        cdef const Canon* cn = &self.cn
        cdef Block* B = &self.B
        cdef int b, v, a, i, j, k = self.p.k, ld = self.p.k + 1, changed = 0
        cdef double d, tot
        cdef double* du
        for b in range(B.nb):
            v = B.gv[b]
            d = B.U[b] - cn.sg[ce(cn, v)] * self.st.alpha[v]
            if d != 0.0:
                self.vsettled[v] = 0
                self.st.alpha[v] = cn.sg[ce(cn, v)] * B.U[b]
                self.dU[B.li[b] * ld + cn.p[ce(cn, v)]] += d
                if cn.q[ce(cn, v)] >= 0:
                    self.dU[B.li[b] * ld + cn.q[ce(cn, v)]] += cn.r[ce(cn, v)] * d
        self.nprev = B.q
        sums_moved[0] = False
        for a in range(B.q):
            i = self.cand[a]
            self.prev[a] = i
            B.loc[i] = -1
            du = self.dU + <Py_ssize_t> a * ld
            tot = 0.0
            for j in range(k):
                tot += du[j]
            du[k] = tot
            sums_moved[0] = sums_moved[0] or tot != 0.0
            for j in range(ld):
                if du[j] != 0.0:
                    break
            else:
                continue
            if changed < a:
                for j in range(ld):
                    self.dU[<Py_ssize_t> changed * ld + j] = du[j]
                    du[j] = 0.0
            self.cand[changed] = i
            changed += 1
            if self.stamp[i] != self.full_scans:
                self.stamp[i] = <int> self.full_scans
                self.changed_sum += 1
        return changed

    cdef void _apply_changes(self, int changed, bint sums_moved) noexcept nogil:
        """Every score (and row sum) updated with the changes dU[:changed] of the samples
        cand[:changed] (_collect_changes's rows), then those rows of dU zeroed."""
        cdef int j, n = self.p.n, k = self.p.k, ld = self.p.k + 1
        cdef const int* idx = self.cand
        cdef double* dU = self.dU
        cdef double* ys[MAX_CLASSES + 1]
        for j in range(k):
            ys[j] = self.Ft + <Py_ssize_t> j * n
        ys[k] = self.S
        if _sums_afresh(sums_moved, changed, k):
            self.src.rows_axpys(idx, changed, dU, ld, ys, k, self.S)
        else:
            self.src.rows_axpys(idx, changed, dU, ld, ys, ld)
        for j in range(changed * ld):
            dU[j] = 0.0

    cdef int run(self, double eps, double* viol) noexcept nogil:
        """Working-set rounds until the violation is <= eps: CONVERGED, MAX_ITER (the step
        budget is spent), NONFINITE or INTERRUPTED."""
        cdef int m, status
        cdef long long budget, taken
        cdef bint partial
        self.since_full = SHRINK_EVERY       # the shift s moved: every sample is scanned
        self.last_viol = INFINITY
        _tl_mark(-1)
        _bp_count(BP_RUNS, 1)
        while True:
            status = self._scan(eps, viol, &m)
            _tl_mark(TL_SCAN)
            if PROFILE:
                with gil:
                    _SCAN_LOG.append((self.steps, viol[0], m, self.since_full == 0))
            progress_note(self.steps / <double> max(self.p.n, 1), viol[0], self.src, self.p,
                          self.st)
            if status != STATUS_CONVERGED:
                return status
            if viol[0] <= eps:
                return STATUS_CONVERGED
            if self.steps >= self.max_steps:
                return STATUS_MAX_ITER
            # the working set leaves candidates out (_load_block keeps at most this many)
            partial = m > self.qmax - self.nprev // 2
            status = self._load_block(m)
            _tl_mark(TL_LOAD)
            if status != STATUS_CONVERGED:
                return status
            # every round counts at least one step of work
            budget = min(self.max_steps - self.steps, 50 * <long long> self.B.q + 100)
            taken = self._block_smo(eps, budget, partial)
            _tl_mark(TL_SMO)
            self.steps += taken if taken > 0 else 1
            self.blocks += 1
            _bp_count(BP_STEPS, taken)
            if self.interrupted or tick(&self.work, (taken + 1) * self.B.q):
                return STATUS_INTERRUPTED
            status = self._write_back()
            _tl_mark(TL_UPDATE)
            if status != STATUS_CONVERGED:
                return status

