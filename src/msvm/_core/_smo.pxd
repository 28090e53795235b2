from ._alm cimport InnerSolver
from ._types cimport Prob, State


cdef struct Canon:
    # per entry of the problem (variable v reads entry ent[v], see _types.pxd): canonical
    # direction e = e_p + r e_q (q = -1, r = 0 for one slot), orientation sigma (d = sigma e),
    # ||P e||^2 and the bucket of its canonical direction.  Read them through ce(cn, v).
    const int* ent
    int* p
    int* q
    double* r
    double* sg
    double* pn2
    int* bucket
    int nbuckets


cdef struct Block:
    int q              # samples in the working set
    int nb             # variables in the working set
    double* K          # q x q kernel block, row-major
    double* kd         # q: kernel diagonal
    double* Ft         # k x q: scores F of the block, slot-major
    double* S          # q: row sums of F
    int* loc           # n: local index of a global sample (-1 outside the block)
    int* start         # nbuckets + 1: the block's variables are sorted by bucket
    # per block variable, in bucket order
    double* U          # sigma alpha
    double* Ulo
    double* Uhi
    double* off        # -sigma a
    double* z          # z, written by each extremes pass and each partner search
    double* vu         # z of the variables that can increase (+inf for the others)
    double* vl         # z of the variables that can decrease (-inf for the others)
    double* gain       # a partner search's gains
    int* li            # local sample
    int* gv            # global variable
    int* pos           # nb: block variables in the problem's own order (sample, group)
    # grouped blocks, per block variable: the group whose sum grows when U increases (gu)
    # and when it decreases (gd), -1 for none
    int* gu
    int* gd
    # grouped blocks (GROUPED_VECTOR): the block's groups, in the problem's order: group t
    # holds the block variables B.pos[gx[t]:gx[t + 1]] of group gg[t] (-1: one variable
    # without a group), ng of them; bg: the block group of every block variable; and per
    # block variable the room cap - gsum of its group gu (gru) and gd (grd), +inf for
    # none, kept current by _sync_group after every move of the group's sum
    int ng
    int* gx
    int* gg
    int* bg
    double* gru
    double* grd
    unsigned char* gfull   # ng: the group was full when its sum last moved (group_full)


cdef struct Extremes:
    # per bucket, during a block round: the largest z among variables that can decrease
    # (l, at la) and the smallest among those that can increase (u, at ua)
    double* l
    double* u
    int* la
    int* ua


# most parts of a scan split between threads (_threads.h: MSVM_MAX_PARTS)
cdef enum:
    MAX_SCAN_PARTS = 256


cdef struct ScanTask:
    # a scan of the samples without groups, split between threads (SMOSolver._scan_flat):
    # its inputs, and per part t its largest violation, candidates (written into score /
    # cand from the part's first sample on), sum of S and counts
    const Prob* p
    const State* st
    const Canon* cn
    const double* Ft
    const double* S
    unsigned char* vsettled
    unsigned char* settled
    double* score
    int* cand
    bint skip_vars, shrinking, full
    double eps, thr
    const double* floor        # n: SMOSolver.floor (NULL: none)
    double raw[MAX_SCAN_PARTS]  # per part: the largest violation before the floor
    double viol[MAX_SCAN_PARTS]
    double Ssum[MAX_SCAN_PARTS]
    int m[MAX_SCAN_PARTS]
    Py_ssize_t first[MAX_SCAN_PARTS]
    long long skipped[MAX_SCAN_PARTS]
    long long vars_seen[MAX_SCAN_PARTS]
    long long scanned[MAX_SCAN_PARTS]
    long long active[MAX_SCAN_PARTS]
    long long unsettled[MAX_SCAN_PARTS]


cdef inline int ce(const Canon* cn, int v) noexcept nogil:
    """The Canon index of variable v."""
    return v if cn.ent == NULL else cn.ent[v]


cdef class SMOSolver(InnerSolver):
    cdef readonly long long steps, blocks
    cdef readonly long long skipped   # sample visits the scans left out (settled samples)
    # the full scans, the samples left unsettled by them (summed), the settled samples they
    # unsettled (summed), and the distinct samples changed between two full scans (summed)
    cdef readonly long long full_scans, active_sum, unsettled_sum, changed_sum
    cdef int* stamp            # n: the full scan after which the sample last changed
    cdef long long max_steps
    cdef int qmax, nprev
    cdef bint grouped
    cdef bint shrinking        # skip settled samples between full scans (see _scan)
    cdef int since_full        # scans since the last full one
    cdef double last_viol      # the violation of the last scan
    cdef bint per_class        # one slot per direction, no groups, n >= SETTLE_ZERO_MIN_N
    cdef unsigned char* settled  # n: the sample was settled at the last full or partial scan
    cdef unsigned char* vsettled  # nv: the variable was settled when its sample was last scanned
    cdef double* Ft            # the row source's scores, k x n (slot-major)
    cdef double* S             # n: row sums of F
    cdef double* score         # n: violation of the candidate samples
    cdef int* cand             # n: candidate samples; the working set
    cdef int* prev             # qmax: the previous working set
    cdef int* sample           # nv: the sample of every variable
    cdef int* bv               # the working set's variables, in the problem's order
    cdef double* dU            # qmax x (k + 1): the block's change of U and its row sums
    cdef double* zg            # maxper + 1: a group's gradients
    cdef double* ag            # maxper + 1: a group's alphas
    cdef int* gvars            # maxper + 1: a group's variables
    cdef double* drift         # grouped blocks: the work arrays of _free_newton_step (5 of
                               # the block's variables, 2 of q x k, 2 q for _hmul's samples)
    # grouped blocks, during a Newton step (_free_newton_step): the block samples holding a
    # free variable (frows[:nfree], increasing), the compact index of each block sample
    # (fidx, -1 outside), their kernel block transposed (KT, nfree x nfree) and the
    # products' compact slot sums and results (fD, fF: qmax x k each)
    cdef double* KT
    cdef double* fD
    cdef double* fF
    cdef int* frows
    cdef int* fidx
    cdef int nfree
    cdef bint interrupted      # a signal check inside _block_smo (after a Newton step) saw
                               # a signal: the round stops as INTERRUPTED
    cdef Canon cn
    cdef Block B
    cdef Extremes ex

    cdef double _settle_margin(self) noexcept nogil
    cdef double _sample_violation(self, int i, double* margin) noexcept nogil
    cdef int _scan_samples(self, double eps, double* viol, int* m, bint full) noexcept nogil
    cdef int _scan_end(self, double viol, double Ssum, long long work) noexcept nogil
    cdef int _scan_flat(self, double eps, double* viol, int* m, bint full) noexcept nogil
    cdef int _scan(self, double eps, double* viol, int* m) noexcept nogil
    cdef bint _boost_applies(self) noexcept nogil
    cdef int _load_block(self, int m) noexcept nogil
    cdef bint _settled_variable(self, int v, int a) noexcept nogil
    cdef void _block_variables(self) noexcept nogil
    cdef void _block_groups(self) noexcept nogil
    cdef void _sync_group(self, int b) noexcept nogil
    cdef int _next_full_group(self, int x0, int* x1) noexcept nogil
    cdef double _bucket_extremes(self) noexcept nogil
    cdef double _group_violation(self, double viol) noexcept nogil
    cdef int _partner(self, int j, int la, double za, const double* row, double Kaa,
                      double pn2, double* zb, double* bestgain) noexcept nogil
    cdef bint _bucket_step(self, int j, double eps) noexcept nogil
    cdef bint _transversal(self, const int* cand, double sign, double eps) noexcept nogil
    cdef long long _group_steps(self, double eps, long long budget) noexcept nogil
    cdef long long _block_smo(self, double eps, long long max_steps,
                              bint partial) noexcept nogil
    cdef int _write_back(self) noexcept nogil
    cdef int _collect_changes(self, bint* sums_moved) noexcept nogil
    cdef void _apply_changes(self, int changed, bint sums_moved) noexcept nogil
    cdef int _scan_parts(self) noexcept nogil
    cdef void _scan_task(self, ScanTask* w, double eps, bint full) noexcept nogil
    cdef int _scan_joined(self, ScanTask* w, int parts, bint full, double* viol,
                          int* m) noexcept nogil
    cdef void _group_values(self, int x0, int x1) noexcept nogil
    cdef bint _free_newton_step(self) noexcept nogil
    cdef void _project_full(self, double* v, const double* free_) noexcept nogil
    cdef void _gather_free_block(self, const double* free_) noexcept nogil
    cdef bint _hmul_free_block(self, const double* v, const double* free_, const double* D,
                               double* out) noexcept nogil
    cdef void _hmul(self, const double* v, const double* free_, double* out) noexcept nogil
