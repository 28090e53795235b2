# Design
# ======
# A RowSource is the solver's only way to rows and scores, as lightning's RowDataset and
# libsvm's PREFIX(node) are: the inner solvers see one typed interface (_rows.pxd) and never
# where the rows come from.  The solver works with the unnormalised scores F = K U (n x k),
# U[i] the slot-space sum of sample i's dual variables times their directions:
#
#   get_scores(i, out)  F[i] (k values)
#   apply(i, du)        U[i] += du, so F += K[:, i] du^T
#   row(i), diag(i)     kernel row i (n values) and K(x_i, x_i), for sources with rows
#   slot_scores()       F held slot-major (k x n), for the SMO path
#
# Two families:
#
# * ScoreRows keep F explicitly (slot-major, k x n) and update it with kernel rows:
#   - GramRows: rows of a Gram matrix the caller holds (a precomputed kernel);
#   - CachedRows: rows computed on demand from X into an LRU cache of at most `capacity`
#     rows (sized by the caller from cache_size), so a fit never holds an n x n matrix
#     beyond that bound.  `cache_dtype` 'float32' stores the rows in single precision
#     (twice the rows per MB); scores and sums stay float64.  The rows are claimed from the
#     store's start; a store of HUGE_STORE_MIN bytes or more is mapped in 2 MB pages
#     (_row_store.h: Linux's transparent huge pages; by default from n = 20,000 on, see
#     HUGE_STORE_MIN), so the rows a fit touches fault in 512 times fewer pages.  Besides row(i) (a float32 row
#     converted into a scratch buffer), two primitives read the stored row in place:
#     row_entries(i, idx) gathers K[i, idx] (a working set's block) and row_axpys(i, c, y)
#     does y_t += c_t K[i, :] for several targets (a score update), so the SMO path never
#     converts a whole float32 row.  DenseKernelRows compute x_i . x_r from a dense X,
#     SparseKernelRows from a CSR X (sample i scattered into a dense vector: O(nnz) per
#     row).  The kernels: 'rbf'
#     exp(-gamma ||x - x'||^2), 'poly' (gamma x.x' + coef0)^degree, 'linear' x.x', each plus
#     a constant `shift` (a penalised intercept as a constant feature).  An RBF row's
#     exponentials are taken together by a vectorized exp (_exp_row.h), 3-5x libm's speed.
#     A batch of rows (up to 64) is computed in column tiles (ROW_TILE: every pass over a
#     tile while it is in the core's cache), its dot products from X laid out in panels of
#     16 samples (_dense_dots.h: a product rounded, then added, in feature order whatever
#     the path, so the kernel matrix is exactly symmetric), an RBF row stored in float32 in one
#     pass (_exp_row.h), and where the cache cannot hold every row a score update can run in
#     column tiles too (UPDATE_TILE; off by default from round 15), a changed row read
#     from memory once for all its slots; demote(idle) moves the rows of samples the solver will not read for a while
#     to the evicting end of the LRU list.  A dense X's kernel matrix is exactly symmetric
#     by construction, so a working set's block is gathered on and above its diagonal.
# * WeightRows keep the weights W = X^T U (d x k) of the linear kernel instead: F[i] = x_i W
#   costs O(d k) (O(nnz_i k) for CSR rows) and no kernel row is ever formed.
#   DenseLinearRows (float64 X), DenseLinearRows32 (float32 X: the features of an
#   approximate kernel, half the memory; products accumulated in double) and SparseLinearRows
#   differ only in how they walk x_i.  A constant feature, if any, is a column the caller
#   appends.
#
# Threads (set_threads, the estimators' n_threads): the SMO path's batches of kernel rows
# (prefetch: dot products, kernel values and storage), a working set's kernel block
# (block_entries) and its score update (rows_axpys, with the row sums) are split between
# threads by samples (block rows for the block), on the process's one pool of _threads.h;
# the LRU bookkeeping stays in the calling thread, in the order of one thread.  The block's
# gather can be begun and ended apart (block_entries_begin / _end, begin_parts / end_parts):
# the calling thread works on meanwhile, on nothing that fetches a row (which could evict
# one the gather reads).  Each value
# is computed by one thread from the same operations, so every thread count gives the same
# values; the coordinate-descent path (apply, row) runs one thread.
#
# Every source refuses, at construction, an X whose kernel values would overflow double
# precision (bounds through the squared norms, O(nnz)).

from libc.math cimport exp, fabs, sqrt
from libc.stdlib cimport malloc, free, realloc
from libc.string cimport memcpy, memset

from ._types cimport MAX_CLASSES

cdef extern from "_exp_row.h":
    void msvm_exp_row(double* x, Py_ssize_t n) noexcept nogil
    void msvm_rbf_args(double* x, const double* sq, double sq_i, double gamma,
                       Py_ssize_t n) noexcept nogil
    void msvm_store32(float* dst, const double* src, Py_ssize_t n) noexcept nogil
    void msvm_rbf_row32(const double* dots, const double* sq, double sq_i, double gamma,
                        double shift, float* dst, Py_ssize_t n) noexcept nogil

cdef extern from "_row_updates.h":
    int msvm_update_group
    int MSVM_UPDATE_GROUP
    void msvm_rows_axpys(const void** rows, int single, int m, const double* coef, int ld,
                         double** ys, int nt, Py_ssize_t n, double* S,
                         int threads, Py_ssize_t tile) noexcept nogil

cdef extern from "_row_store.h":
    size_t msvm_spare_max
    size_t msvm_populate
    void* msvm_store_alloc(size_t bytes, size_t huge_min, size_t* mapped,
                           size_t* ready) noexcept nogil
    size_t msvm_store_reach(void* p, size_t mapped, size_t bytes, size_t ready,
                            size_t need) noexcept nogil
    void msvm_store_free(void* p, size_t mapped, size_t bytes, size_t touched) noexcept nogil
    void msvm_spare_drop() noexcept nogil

cdef extern from "_threads.h":
    int msvm_threads_available() noexcept nogil
    int msvm_parts(Py_ssize_t n, int threads) noexcept nogil
    void msvm_parallel(Py_ssize_t n, int parts, Py_ssize_t align, int threads, range_fn fn,
                       void* ctx) noexcept nogil
    void msvm_parallel_begin(msvm_job_t* job, Py_ssize_t n, int parts, Py_ssize_t align,
                             int threads, range_fn fn, void* ctx) noexcept nogil
    void msvm_parallel_end(msvm_job_t* job) noexcept nogil
    double msvm_worker_seconds(int on) noexcept nogil

cdef extern from "_dense_dots.h":
    void msvm_sqnorms(const double* X, Py_ssize_t n, Py_ssize_t d,
                      double* out) noexcept nogil
    void msvm_dots_row(const double* X, Py_ssize_t n, Py_ssize_t d, const double* xi,
                       double* out) noexcept nogil
    void msvm_panels(const double* X, Py_ssize_t n, Py_ssize_t d, double* P) noexcept nogil
    void msvm_dots_rows(const double* P, const double* X, Py_ssize_t d, const double* xb,
                        int m, double* out, Py_ssize_t ld, Py_ssize_t lo,
                        Py_ssize_t hi) noexcept nogil

import numpy as np

cdef enum:
    KERNEL_LINEAR = 0
    KERNEL_RBF = 1
    KERNEL_POLY = 2

cdef double DOUBLE_MAX = 1.7e308
# most threads of a row source (the SMO path's scans keep per-thread results for as many)
cdef int MAX_THREADS = 64
# the least entries of a working set's kernel block a thread gathers (block_entries)
cdef Py_ssize_t BLOCK_PART_MIN = 16384
# a working set's kernel block gathered on and above its diagonal only, then mirrored, where
# the source's kernel matrix is exactly symmetric (CachedRows.block_entries); False: every
# entry gathered (for benchmarks: the same values)
cdef bint GATHER_UPPER = True
# ... on rows of at least UPPER_MIN_N entries: shorter rows (a block's rows within the core's
# caches) gather every entry faster than the triangle and its mirror (the same values).
# ReinforcedMSVM RBF, one process, alternating: the probability fit's kernel blocks
# (example 4.1.1, n = 267-400) 3.77 -> 3.08 ms, breast cancer 0.98 -> 0.56, wine 0.27 ->
# 0.19; one fit on pendigits samples (q = 256), every entry against the triangle: 15.6
# against 20.0 ms at n = 1,000, 48.0 against 44.2 at 2,000, 503 against 338 at 7,694
cdef Py_ssize_t UPPER_MIN_N = 1024
# the mirror of such a block in square tiles of MIRROR_TILE entries a side (each tile's
# column-wise reads within a few kB; 0: one row at a time across the block, round 14's,
# reading every entry of a 256-sample block's column 2 kB from the last).  Pendigits
# WestonWatkinsMSVM (82 blocks of 256), one process, 11 alternating rounds, load 4: tiles
# of 0 / 16 / 32 / 64: 0.1112 / 0.1066 / 0.1086 / 0.1101 s a fit (the same values)
cdef int MIRROR_TILE = 16
# an RBF row stored in float32 from its dot products in one pass (_exp_row.h: msvm_rbf_row32,
# the same values as the exponent pass, the exponentials and the store in turn); False: the
# three passes (for benchmarks)
cdef bint RBF_ONE_PASS = True
# prefetch computes at most BLOCK_ROWS kernel rows together (a multiple of the four rows of
# _dense_dots.h's blocks where there are four or more).  Each panel of X is read from memory
# once per batch (the rows' blocks of four then find it in the core's cache: ROW_TILE), so
# the more rows a batch the less X is read a value: at n = 80,000 the 4 MB of r10 allowed 6
# rows (4 + 2, the two in a block of four), r12's 16 MB 16.  From round 13 a dense X's dot
# products go to a buffer of one tile per part (m x ROW_TILE values: 512 KB at 64 rows, in
# the core's L2 cache) instead of a batch x n block (10 MB at 80,000), so that only a sparse
# X's batch (its dot products held whole) is bounded by BLOCK_BYTES; 16 -> 64 rows, RBF
# rows, d = 20, float32 store (benchmarks/run_row_batches.py, one machine, alternating):
# n = 80,000 2.29-2.44 -> 2.16-2.21 ns a value, 10,000 2.13-2.19 -> 2.01-2.29 (32 rows:
# 2.21-2.26 and 2.08-2.11; 96: 2.10-2.19 and 2.09-2.47; 128 in tiles of 512: 2.19-2.23)
cdef int BLOCK_ROWS = 64
cdef Py_ssize_t BLOCK_BYTES = 16 << 20
# a batch's dot products, kernel values and stores are done ROW_TILE samples at a time (a
# multiple of the 16 samples of msvm_dots_rows' blocks), so that a tile's values stay in the
# core's L1 / L2 cache between the passes instead of going out to L3 and back three times:
# n = 40,000, d = 20, RBF, float32 rows in batches of 13, 4.89 -> 4.09 ns a value (CPU,
# medians of 4 alternating rounds, shared machine; tiles of 256 / 512 / 2048: 4.30 / 4.18 /
# 4.37 ns)
cdef Py_ssize_t ROW_TILE = 1024
# where the row cache cannot hold every row (so that it fills its 200 MB, more than the
# core's caches), a score update runs in column tiles of UPDATE_TILE samples (_row_updates.h):
# a changed row's tile is read from memory once for all its slots.  make_classification
# d = 20, float32 rows, a 512-sample working set, 80 % of it changed over 60 % of the slots
# (CPU, shared machine): n = 80,000 (655 rows cached) 42.2 -> 25.7 ms an update, n = 40,000
# 17.7 -> 13.5 ms, n = 10,000 1.83 -> 1.62 ms (tiles of 256 / 512 / 2048: 32 / 27 / 28 ms
# at 80,000).  Where every row is cached (pendigits) updates run untiled, as r5 measured
# tiles slower there.  Round 15: no longer (UPDATE_TILE 0, one pass: 1024 is round 14's).
# Pendigits's cache does not hold every row (6,814 float32 rows of 7,694), so its updates
# ran in tiles too, and whole fits measured faster untiled at every size (CPU, one
# process, modes alternating, the same values; load 3-5): pendigits WestonWatkinsMSVM
# 0.1083 -> 0.1036 s and WeightedRobustMSVM 0.1361 -> 0.1318 s (medians of 11),
# ReinforcedMSVM 2.25 -> 2.05 s (of 3); make_classification ReinforcedMSVM n = 10,000
# 0.787 -> 0.754 s, n = 20,000 3.52 -> 3.13 s, n = 40,000 13.7 -> 12.5 s (of 3 / 3 / 2),
# n = 80,000 68.5 -> 66.5 s (one pair); WestonWatkinsMSVM n = 10,000 0.954 -> 0.899 s
cdef Py_ssize_t UPDATE_TILE = 0

# The smallest row store (bytes) mapped in 2 MB pages (_row_store.h; 0: every store
# malloc'd, in 4 KB pages).  On pendigits a fit touches 35-40 MB of its store: 8,600-9,800
# faults of 4 KB pages (20-25 ms of a 0.13 s fit) against 17-20 of 2 MB, and a fit whose
# huge pages come warm gains those 20-25 ms; but on a virtual machine whose balloon reports
# free 2 MB blocks to the host (free page reporting, order 9), a third of the fits got cold
# huge pages and lost 50-100 ms (benchmarks/results/per_class_speed.md, r14-pages).  From
# n = 20,000 on, where the store is touched whole and read again and again, 2 MB pages won
# every time measured (n = 20,000 3.67 -> 3.47 s, n = 80,000 70-72 -> 66-69 s), so the
# store is mapped only for HUGE_STORE_SAMPLES samples or more.
cdef size_t HUGE_STORE_MIN = 16 << 20
cdef Py_ssize_t HUGE_STORE_SAMPLES = 20000


cdef int _batch_rows(Py_ssize_t capacity, Py_ssize_t n, bint in_tiles) noexcept nogil:
    """Rows prefetch computes together: at most BLOCK_ROWS and the capacity and, where the
    batch's dot products are held whole (not in_tiles: sparse X), BLOCK_BYTES of values;
    rounded down to a multiple of four where there are four or more."""
    cdef Py_ssize_t rows = min(BLOCK_ROWS, capacity)
    if not in_tiles:
        rows = min(rows, BLOCK_BYTES // (8 * max(n, 1)))
    if rows >= 4:
        rows -= rows % 4
    return <int> max(1, rows)


cdef inline double _ipow(double base, int e) noexcept nogil:
    cdef double out = 1.0
    while e > 0:
        if e & 1:
            out *= base
        base *= base
        e >>= 1
    return out


cdef inline int _nonzero_slots(const double* du, int k, int* js, double* dv) noexcept nogil:
    """The slots j with du[j] != 0 (js) and their values (dv); returns how many."""
    cdef int j, nz = 0
    for j in range(k):
        if du[j] != 0.0:
            js[nz] = j
            dv[nz] = du[j]
            nz += 1
    return nz


ctypedef fused real:
    float
    double


cdef void _dense_sqnorms(const real[:, ::1] X, double[::1] out) noexcept nogil:
    """out[i] = ||X[i]||^2 for a dense X (float64 or float32 entries, summed in double)."""
    cdef Py_ssize_t i, f
    cdef double acc, xf
    for i in range(X.shape[0]):
        acc = 0.0
        for f in range(X.shape[1]):
            xf = X[i, f]
            acc += xf * xf
        out[i] = acc


cdef void _csr_sqnorms(const double[::1] data, const int[::1] indptr,
                       double[::1] out) noexcept nogil:
    """out[i] = ||X[i]||^2 for a CSR X (its data and indptr)."""
    cdef Py_ssize_t i, t
    cdef double acc
    for i in range(indptr.shape[0] - 1):
        acc = 0.0
        for t in range(indptr[i], indptr[i + 1]):
            acc += data[t] * data[t]
        out[i] = acc


cdef inline double _kernel_value(int kernel, double gamma, double coef0, int degree,
                                 double shift, double dot, double sq_i,
                                 double sq_r) noexcept nogil:
    """Kernel value from the dot product and the two squared norms (inlined into the row
    loop, where the kernel is the same for every entry)."""
    cdef double dist
    if kernel == KERNEL_RBF:
        dist = sq_i + sq_r - 2.0 * dot
        if dist < 0.0:
            dist = 0.0
        return exp(-gamma * dist) + shift
    if kernel == KERNEL_POLY:
        return _ipow(gamma * dot + coef0, degree) + shift
    return dot + shift


cdef inline void _axpy(double* y, const real* x, double t, Py_ssize_t n) noexcept nogil:
    """y += t x (x float64, or float32 rows read in place)."""
    cdef Py_ssize_t r
    for r in range(n):
        y[r] += t * x[r]



cdef void _values_range(const KernelSpec* ks, double sq_i, const double* sq, double* row,
                        Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Dot products x_i . x_r into kernel values K(x_i, x_r) in place, for lo <= r < hi
    (every value from its own entry: the same for any range)."""
    cdef Py_ssize_t r
    cdef double gamma = ks.gamma, coef0 = ks.coef0, shift = ks.shift
    cdef int kernel = ks.kernel, degree = ks.degree
    if kernel == KERNEL_RBF:
        # exp(-gamma ||x_i - x_r||^2) + shift, the arguments and the exponentials a whole
        # range at a time (_exp_row.h)
        msvm_rbf_args(row + lo, sq + lo, sq_i, gamma, hi - lo)
        msvm_exp_row(row + lo, hi - lo)
        if shift != 0.0:
            for r in range(lo, hi):
                row[r] += shift
    else:
        for r in range(lo, hi):
            row[r] = _kernel_value(kernel, gamma, coef0, degree, shift, row[r], sq_i, sq[r])


cdef void _rows_part(void* ctx, int part, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Samples lo .. hi - 1 of a RowTask's rows: dot products, kernel values, storage, a
    tile of w.tile samples at a time (every value from its own entry: the same values as
    in one pass, _values_range).  The dot products of a tile go to the part's own tile
    buffer (m x w.tile values) where the task has panels (w.P), else they are in w.block."""
    cdef const RowTask* w = <const RowTask*> ctx
    cdef Py_ssize_t n = w.n, t0, t1, ld
    cdef int b
    cdef double* rows
    cdef float* rows32 = <float*> w.store
    t0 = lo
    while t0 < hi:
        t1 = min(t0 + w.tile, hi)
        if w.P != NULL:
            rows = w.tiles + <Py_ssize_t> part * w.m * w.tile
            ld = w.tile
            if w.m == 1:
                msvm_dots_row(w.X + t0 * w.d, t1 - t0, w.d, w.xb, rows)
            else:
                msvm_dots_rows(w.P, w.X, w.d, w.xb, w.m, rows, ld, t0, t1)
        else:
            rows = w.block + t0
            ld = n
        for b in range(w.m):
            if w.single and w.ks.kernel == KERNEL_RBF and RBF_ONE_PASS:
                # the kernel values and their float32 stores in one pass (_exp_row.h)
                msvm_rbf_row32(rows + b * ld, w.sq + t0, w.sq[w.idx[b]], w.ks.gamma,
                               w.ks.shift, rows32 + w.offs[b] + t0, t1 - t0)
                continue
            _values_range(w.ks, w.sq[w.idx[b]], w.sq + t0, rows + b * ld, 0, t1 - t0)
            if w.single:
                msvm_store32(rows32 + w.offs[b] + t0, rows + b * ld, t1 - t0)
            else:
                memcpy(<double*> w.store + w.offs[b] + t0, rows + b * ld,
                       (t1 - t0) * sizeof(double))
        t0 = t1


cdef int thread_parts(Py_ssize_t n, int threads) noexcept nogil:
    """Parts of a loop over n samples run on `threads` threads (_threads.h: msvm_parts)."""
    return msvm_parts(n, threads)


cdef void run_parts(Py_ssize_t n, int parts, int threads, range_fn fn,
                    void* ctx) noexcept nogil:
    """fn(ctx, t, lo, hi) for the `parts` parts of [0, n), on up to `threads` threads of the
    process's one pool (_threads.h: msvm_parallel; parts aligned to 16 samples)."""
    msvm_parallel(n, parts, 16, threads, fn, ctx)


cdef void begin_parts(msvm_job_t* job, Py_ssize_t n, int parts, int threads, range_fn fn,
                      void* ctx) noexcept nogil:
    """Hand the parts of run_parts's loop to the pool's workers and return at once: the
    caller works on meanwhile (on nothing the parts touch), then end_parts(job) takes the
    parts left and waits for the rest (_threads.h: msvm_parallel_begin; one thread or a busy
    pool: every part runs in end_parts)."""
    msvm_parallel_begin(job, n, parts, 16, threads, fn, ctx)


cdef void end_parts(msvm_job_t* job) noexcept nogil:
    """The end of a begin_parts job: every part has run when it returns."""
    msvm_parallel_end(job)


cdef inline Py_ssize_t _upper_row(int m, int parts, int t) noexcept nogil:
    """The first block row of part t of `parts` when only the entries on and above the
    diagonal are read: rows [r_t, r_t+1) hold about equal shares of the triangle."""
    if t >= parts:
        return m
    return <Py_ssize_t> (m * (1.0 - sqrt(1.0 - t / <double> parts)))


cdef void _mirror_upper(double* out, int m, int tile) noexcept nogil:
    """out[a, b] = out[b, a] for b < a (out: m x m, its entries on and above the diagonal
    set): copies only, in square tiles of `tile` entries a side (0: a row at a time)."""
    cdef int a, b, a0, b0, a1, b1
    if tile <= 0:
        tile = m
    a0 = 0
    while a0 < m:
        a1 = min(a0 + tile, m)
        b0 = 0
        while b0 < a1:
            b1 = min(b0 + tile, a1)
            for a in range(a0, a1):
                for b in range(b0, min(b1, a)):
                    out[<Py_ssize_t> a * m + b] = out[<Py_ssize_t> b * m + a]
            b0 = b1
        a0 = a1


cdef void _gather_part(void* ctx, int part, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """Rows lo .. hi - 1 of a GatherTask's block; where w.upper, the part's rows of equal
    shares of the triangle (_upper_row) from the diagonal on, each entry also written to
    its mirror (b, a): every entry of the block written once, by the part of its row or
    column on and above the diagonal, so the parts write disjoint entries.  A block in one
    part (one thread) is mirrored after its gather instead, in tiles (block_entries_end:
    faster than these strided writes on one thread)."""
    cdef const GatherTask* w = <const GatherTask*> ctx
    cdef Py_ssize_t a
    cdef int b, m = w.m
    cdef const float* row32
    cdef const double* row64
    cdef double* out
    if w.upper:
        lo = _upper_row(m, w.parts, part)
        hi = _upper_row(m, w.parts, part + 1)
    for a in range(lo, hi):
        out = w.out + a * m
        if w.single:
            row32 = <const float*> w.store + w.offs[a]
            for b in range(a if w.upper else 0, m):
                out[b] = row32[w.idx[b]]
        else:
            row64 = <const double*> w.store + w.offs[a]
            for b in range(a if w.upper else 0, m):
                out[b] = row64[w.idx[b]]
        if w.upper and w.parts > 1:
            for b in range(a + 1, m):
                w.out[<Py_ssize_t> b * m + a] = out[b]


def _worker_seconds(on=None):
    """The pool's workers' wall time inside parts since the last call (for the solver's
    timeline: benchmarks.run_threads --timeline), then reset; timing switched on or off
    where ``on`` is given."""
    return msvm_worker_seconds(-1 if on is None else int(bool(on)))


def threads_available():
    """Whether the compiled core runs n_threads > 1 on threads (POSIX threads; False on
    Windows, where the solver runs one thread)."""
    return bool(msvm_threads_available())


cdef class RowSource:
    """Rows and scores for the dual solver (see the module's Design note).

    Not instantiated directly: use :func:`make_row_source` or a subclass.
    """

    def __init__(self, *args, **kwargs):
        raise TypeError("RowSource is abstract: use make_row_source(...) or a subclass")

    cdef int _setup(self, int n, int d, int k) except -1:
        self.n = n
        self.d = d
        self.k = k
        self.n_computed = 0
        self.n_requests = 0
        self.capacity = 0
        self.n_threads = 1
        self.kdiag = np.zeros(n)
        self.sqnorm = np.zeros(n)
        return 0

    def _check_bound(self, double bound, double top):
        if not bound <= DOUBLE_MAX:
            raise ValueError(
                f"the kernel overflows double precision on X: squared norms of the samples "
                f"reach {top:.3g}, so kernel values are infinite or NaN. Rescale X (e.g. with "
                f"sklearn.preprocessing.StandardScaler) before fitting.")

    def _largest_norm(self):
        """Largest squared norm or |diagonal| (inf if any is not finite)."""
        cdef Py_ssize_t i
        cdef double top = 0.0
        for i in range(self.n):
            if not (fabs(self.kdiag[i]) <= DOUBLE_MAX and self.sqnorm[i] <= DOUBLE_MAX):
                return float("inf")
            top = max(top, self.sqnorm[i], fabs(self.kdiag[i]))
        return top

    def diagonal(self):
        """Kernel diagonal K(x_i, x_i) (with the shift) as a NumPy array."""
        return np.array(self.kdiag)

    def set_threads(self, int n_threads):
        """Threads for the SMO path's kernel rows, score updates and scans (n_threads >= 1,
        at most 64; one without threads: threads_available).  The values computed do not
        depend on it."""
        if n_threads < 1:
            raise ValueError(f"n_threads must be >= 1 here; got {n_threads}")
        self.n_threads = min(n_threads, MAX_THREADS) if msvm_threads_available() else 1

    def prefetch_rows(self, idx):
        """Compute rows idx together, as the SMO path's prefetch does (for tests)."""
        cdef int[::1] rows = np.ascontiguousarray(idx, dtype=np.int32)
        if not self.has_rows():
            raise ValueError(f"{type(self).__name__} holds weights, not kernel rows")
        if len(np.unique(rows)) != len(rows) or len(rows) > max(self.capacity, 1) \
                or (len(rows) and not (0 <= min(rows) and max(rows) < self.n)):
            raise ValueError("prefetch needs distinct row indices, at most the cache capacity")
        if len(rows):
            self.prefetch(&rows[0], len(rows))

    def demote_rows(self, idle, keep=None):
        """Move the cached rows of the samples flagged in ``idle`` (n booleans) and not in
        ``keep`` (sample indices) to the least recently used end, as the SMO path does for
        settled samples (for tests); how many rows moved."""
        cdef unsigned char[::1] flags = np.ascontiguousarray(idle, dtype=np.uint8)
        cdef int[::1] loc = np.full(self.n + 1, -1, dtype=np.int32)
        if flags.shape[0] != self.n:
            raise ValueError("idle needs one flag per sample")
        if keep is not None:
            for i in np.asarray(keep, dtype=np.intp):
                loc[i] = 0
        return self.demote(&flags[0], &loc[0]) if self.n else 0

    def kernel_row(self, int i):
        """A copy of kernel row i (for tests and diagnostics; the solver reads it in place)."""
        cdef const double* r
        if not self.has_rows():
            raise ValueError(f"{type(self).__name__} holds weights, not kernel rows")
        if not 0 <= i < self.n:
            raise IndexError("row index out of range")
        r = self.row(i)
        return np.array(<double[:self.n]> r)

    def add_rows(self, idx, coef, ys):
        """ys[t] += sum_a coef[a, t] K[idx[a], :], in place: the SMO path's score update of a
        working set (rows_axpys; for tests).  idx: m distinct samples (at most the cache
        capacity), coef: (m, nt), ys: (nt, n) float64, C-contiguous, nt <= MAX_CLASSES + 1."""
        cdef int[::1] rows = np.ascontiguousarray(idx, dtype=np.int32)
        cdef const double[:, ::1] c = np.ascontiguousarray(coef, dtype=np.float64)
        cdef double[:, ::1] y = ys
        cdef double* targets[MAX_CLASSES + 1]
        cdef int t, m = rows.shape[0]
        if not self.has_rows():
            raise ValueError(f"{type(self).__name__} holds weights, not kernel rows")
        if len(np.unique(rows)) != m or m > max(self.capacity, 1) \
                or (m and not (0 <= min(rows) and max(rows) < self.n)):
            raise ValueError("add_rows needs distinct row indices, at most the cache capacity")
        if c.shape[0] != m or c.shape[1] != y.shape[0] or y.shape[1] != self.n \
                or y.shape[0] > MAX_CLASSES + 1:
            raise ValueError("coef must be (len(idx), nt) and ys (nt, n), nt <= MAX_CLASSES + 1")
        for t in range(y.shape[0]):
            targets[t] = &y[t, 0]
        if m:
            self.rows_axpys(&rows[0], m, &c[0, 0], c.shape[1], targets, y.shape[0])

    def sample_scores(self, int i):
        """F[i] (k values), as the solver reads it."""
        out = np.empty(self.k)
        cdef double[::1] view = out
        if not 0 <= i < self.n:
            raise IndexError("row index out of range")
        self.get_scores(i, &view[0])
        return out

    @property
    def scores(self):
        """F = K U (n x k) for sources that keep scores; None for the linear source."""
        return None

    @property
    def weights(self):
        """W = X^T U (d x k) for the linear source; None otherwise."""
        return None

    cdef double diag(self, int i) noexcept nogil:
        return self.kdiag[i]

    cdef void get_scores(self, int i, double* out) noexcept nogil:
        pass

    cdef void apply(self, int i, const double* du) noexcept nogil:
        pass

    cdef void reset_scores(self) noexcept nogil:
        pass

    cdef bint has_rows(self) noexcept nogil:
        return False

    cdef const double* row(self, int i) noexcept nogil:
        return NULL

    cdef void prefetch(self, const int* idx, int m) noexcept nogil:
        """A hint that rows idx[0:m] are about to be read (sources that compute rows)."""
        pass

    cdef int demote(self, const unsigned char* idle, const int* keep) noexcept nogil:
        """A hint that the rows of the samples i with idle[i] and keep[i] < 0 will not be
        read for a while (sources that cache rows evict them first); how many it moved."""
        return 0

    cdef bint cached(self, int i) noexcept nogil:
        """Whether kernel row i can be read without computing it."""
        return self.has_rows()

    cdef void row_entries(self, int i, const int* idx, int m, double* out) noexcept nogil:
        """out[b] = K[i, idx[b]] for b < m (sources with rows)."""
        cdef const double* r = self.row(i)
        cdef int b
        for b in range(m):
            out[b] = r[idx[b]]

    cdef void block_entries(self, const int* idx, int m, double* out) noexcept nogil:
        """out[a * m + b] = K[idx[a], idx[b]] for a, b < m: a working set's kernel block
        (row_entries of each row in turn; sources with rows, m <= capacity)."""
        cdef int a
        for a in range(m):
            self.row_entries(idx[a], idx, m, out + <Py_ssize_t> a * m)

    cdef void block_entries_begin(self, const int* idx, int m, double* out) noexcept nogil:
        """block_entries begun: where the source splits the gather between threads, the
        pool's workers start on it and this returns at once; block_entries_end (always
        called next, before out, idx or the rows are read or changed) completes it.  The
        caller may meanwhile work on anything else but the row cache's rows (no row
        fetched, so none evicted).  Here: block_entries, whole."""
        self.block_entries(idx, m, out)

    cdef void block_entries_end(self) noexcept nogil:
        """The end of block_entries_begin: the block is complete when it returns."""
        pass

    cdef void row_axpys(self, int i, const double* coef, double** ys, int m) noexcept nogil:
        """ys[t] += coef[t] K[i, :] for t < m (sources with rows)."""
        cdef const double* r = self.row(i)
        cdef int t
        for t in range(m):
            _axpy(ys[t], r, coef[t], self.n)

    cdef const void* row_ref(self, int i, bint* single) noexcept nogil:
        """Kernel row i where the source holds it (float32 when ``single``), or NULL."""
        return NULL

    cdef Py_ssize_t update_tile(self) noexcept nogil:
        """The column tile of a score update (_row_updates.h): UPDATE_TILE samples where
        the cache cannot hold every row, else 0 (one pass)."""
        return UPDATE_TILE if self.capacity < self.n else 0

    cdef void rows_axpys(self, const int* idx, int m, const double* coef, int ld, double** ys,
                         int nt, double* S=NULL) noexcept nogil:
        """ys[t] += sum_a coef[a * ld + t] K[idx[a], :] for t < nt (sources with rows; the
        samples in order, zero coefficients skipped): a working set's score update.  Rows
        the source holds (row_ref; m <= capacity, so that fetching one never evicts
        another) are added by _row_updates.h, several per pass and the samples split
        between n_threads threads; others one at a time.  With S, then S = ys[0] + ... +
        ys[nt - 1] (the row sums of the scores formed afresh, the targets in order)."""
        cdef int a, t, nz
        cdef Py_ssize_t r
        cdef bint single = False
        cdef double c[MAX_CLASSES + 1]
        cdef double* y[MAX_CLASSES + 1]
        cdef const void** refs = NULL
        if m <= self.capacity:
            refs = <const void**> malloc(m * sizeof(void*) + 1)
        if refs != NULL:
            for a in range(m):
                refs[a] = self.row_ref(idx[a], &single)
                if refs[a] == NULL:
                    break
            else:
                msvm_rows_axpys(refs, single, m, coef, ld, ys, nt, self.n, S, self.n_threads,
                                self.update_tile())
                free(refs)
                return
            free(refs)
        for a in range(m):
            nz = 0
            for t in range(nt):
                if coef[<Py_ssize_t> a * ld + t] != 0.0:
                    c[nz] = coef[<Py_ssize_t> a * ld + t]
                    y[nz] = ys[t]
                    nz += 1
            if nz > 0:
                self.row_axpys(idx[a], c, y, nz)
        if S != NULL:
            for r in range(self.n):
                S[r] = ys[0][r] if nt > 0 else 0.0
            for t in range(1, nt):
                for r in range(self.n):
                    S[r] += ys[t][r]

    cdef double* slot_scores(self) noexcept nogil:
        return NULL


# ---------------------------------------------------------------------- explicit scores
cdef class ScoreRows(RowSource):
    """Scores F kept explicitly (slot-major) and updated with kernel rows."""

    cdef int _init_scores(self) except -1:
        self.Ft = np.zeros((self.k, self.n))
        self.visit_cost = <long long> self.n * (self.k + 1)
        return 0

    @property
    def scores(self):
        return np.asarray(self.Ft).T

    cdef bint has_rows(self) noexcept nogil:
        return True

    cdef double* slot_scores(self) noexcept nogil:
        return &self.Ft[0, 0] if self.n > 0 else NULL

    cdef void get_scores(self, int i, double* out) noexcept nogil:
        cdef int j
        for j in range(self.k):
            out[j] = self.Ft[j, i]

    cdef void apply(self, int i, const double* du) noexcept nogil:
        cdef int j, m = 0
        cdef double coef[MAX_CLASSES]
        cdef double* ys[MAX_CLASSES]
        for j in range(self.k):
            if du[j] != 0.0:
                coef[m] = du[j]
                ys[m] = &self.Ft[j, 0]
                m += 1
        if m > 0:
            self.row_axpys(i, coef, ys, m)

    cdef void reset_scores(self) noexcept nogil:
        if self.n > 0:
            memset(&self.Ft[0, 0], 0, <size_t> self.k * self.n * sizeof(double))

    def scale_scores(self, double factor):
        """F *= factor: the scores of factor * U (the scores are linear in U), O(n k)."""
        cdef Py_ssize_t j, r
        with nogil:
            for j in range(self.k):
                for r in range(self.n):
                    self.Ft[j, r] *= factor


cdef class GramRows(ScoreRows):
    """Kernel rows from a Gram matrix the caller holds (``kernel='precomputed'``)."""

    def __init__(self, const double[:, ::1] K, int k):
        cdef Py_ssize_t i
        if K.shape[0] != K.shape[1]:
            raise ValueError("the Gram matrix must be square")
        self._setup(K.shape[0], 0, k)
        self.K = K
        for i in range(self.n):
            self.kdiag[i] = K[i, i]
        self._check_bound(self._largest_norm(), self._largest_norm())
        self.capacity = self.n
        self.row_cost = 0
        self._init_scores()

    @property
    def gram(self):
        """The Gram matrix K itself (a read-only view, no copy): the snapshot forms the
        decision values at the training points from it as prediction does."""
        view = np.asarray(self.K).view()
        view.flags.writeable = False
        return view

    cdef const double* row(self, int i) noexcept nogil:
        self.n_requests += 1
        return &self.K[i, 0]

    cdef const void* row_ref(self, int i, bint* single) noexcept nogil:
        single[0] = False
        return self.row(i)


cdef class CachedRows(ScoreRows):
    """Kernel rows computed on demand into an LRU cache (abstract: see the subclasses)."""

    def __cinit__(self):
        self.store = NULL
        self.store_mapped = 0
        self.store_bytes = 0
        self.store_ready = 0
        self.scratch = NULL
        self.block = NULL
        self.tiles = NULL
        self.tiles_size = 0
        self.pending = NULL
        self.offs = NULL
        self.boffs = NULL
        self.slot_of = NULL
        self.row_of = NULL
        self.prv = NULL
        self.nxt = NULL

    def __dealloc__(self):
        msvm_store_free(self.store, self.store_mapped, self.store_bytes,
                        max(self.store_ready, self._claimed_bytes()))
        free(self.scratch)
        free(self.block)
        free(self.tiles)
        free(self.pending)
        free(self.offs)
        free(self.boffs)
        free(self.slot_of)
        free(self.row_of)
        free(self.prv)
        free(self.nxt)

    def _configure(self, str kernel, double gamma, double coef0, int degree, double shift,
                   Py_ssize_t capacity, str cache_dtype):
        """Kernel parameters, the diagonal, the overflow check and the cache (after the
        subclass has set n, d and the squared norms)."""
        cdef Py_ssize_t i, itemsize
        cdef double top, bound
        if kernel == "linear":
            self.kernel = KERNEL_LINEAR
        elif kernel == "rbf":
            self.kernel = KERNEL_RBF
        elif kernel == "poly":
            self.kernel = KERNEL_POLY
        else:
            raise ValueError(f"unknown kernel {kernel!r} for computed rows")
        if cache_dtype not in ("float64", "float32"):
            raise ValueError(f"cache_dtype must be 'float64' or 'float32'; got {cache_dtype!r}")
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.shift = shift
        self.cache_dtype = cache_dtype
        self.single = cache_dtype == "float32"
        self.spec.kernel = self.kernel
        self.spec.degree = degree
        self.spec.gamma = gamma
        self.spec.coef0 = coef0
        self.spec.shift = shift
        for i in range(self.n):
            self.kdiag[i] = _kernel_value(self.kernel, self.gamma, self.coef0, self.degree,
                                          self.shift, self.sqnorm[i], self.sqnorm[i],
                                          self.sqnorm[i])
        top = self._largest_norm()
        if self.kernel == KERNEL_RBF:
            bound = 4.0 * top
        elif self.kernel == KERNEL_POLY:
            bound = _ipow(gamma * top + fabs(coef0), degree) + fabs(shift)
        else:
            bound = top + fabs(shift)
        self._check_bound(bound, top)
        capacity = min(max(capacity, 2), self.n)
        self.capacity = capacity
        itemsize = sizeof(float) if self.single else sizeof(double)
        self.store_bytes = capacity * self.n * itemsize
        self.store = msvm_store_alloc(self.store_bytes,
                                      HUGE_STORE_MIN if self.n >= HUGE_STORE_SAMPLES else 0,
                                      &self.store_mapped, &self.store_ready)
        self.scratch = <double*> malloc(self.n * sizeof(double) + 1)
        self.batch = _batch_rows(capacity, self.n, self.dots_in_tiles)
        # the batch's dot products, where they are not computed a tile at a time (_rows_part)
        self.block = <double*> malloc((0 if self.dots_in_tiles else
                                       <Py_ssize_t> self.batch * self.n) * sizeof(double) + 1)
        self.pending = <int*> malloc(capacity * sizeof(int) + 1)
        self.offs = <Py_ssize_t*> malloc(self.batch * sizeof(Py_ssize_t) + 1)
        self.boffs = <Py_ssize_t*> malloc(capacity * sizeof(Py_ssize_t) + 1)
        self.slot_of = <int*> malloc(self.n * sizeof(int) + 1)
        self.row_of = <int*> malloc(capacity * sizeof(int) + 1)
        self.prv = <int*> malloc(capacity * sizeof(int) + 1)
        self.nxt = <int*> malloc(capacity * sizeof(int) + 1)
        if (self.store == NULL or self.scratch == NULL or self.slot_of == NULL
                or self.row_of == NULL or self.prv == NULL or self.nxt == NULL
                or self.block == NULL or self.pending == NULL or self.offs == NULL
                or self.boffs == NULL):
            raise MemoryError("cannot allocate the kernel row cache; lower cache_size")
        for i in range(self.n):
            self.slot_of[i] = -1
        self.head = -1
        self.tail = -1
        self.used = 0
        self._init_scores()

    cdef void dots(self, int i, double* out) noexcept nogil:
        pass

    cdef void dots_block(self, const int* idx, int m, double* out) noexcept nogil:
        """out[b * n + r] = x_{idx[b]} . x_r for b < m: one row at a time here."""
        cdef int b
        for b in range(m):
            self.dots(idx[b], out + <Py_ssize_t> b * self.n)

    cdef void _kernel_values(self, int i, double* row) noexcept nogil:
        """Dot products x_i . x_r into kernel values K(x_i, x_r), in place."""
        _values_range(&self.spec, self.sqnorm[i], &self.sqnorm[0], row, 0, self.n)
        self.n_computed += 1

    cdef void _compute(self, int i, double* out) noexcept nogil:
        self.dots(i, out)
        self._kernel_values(i, out)

    cdef void prefetch(self, const int* idx, int m) noexcept nogil:
        """Rows idx[0:m] (distinct samples, m <= capacity) into the cache: the cached ones
        become the most recent first (so that computing the others cannot evict them), then
        the missing ones are computed `batch` at a time (_fill)."""
        cdef int a, s, nb, nmiss = 0
        for a in range(m):
            s = self.slot_of[idx[a]]
            if s < 0:
                self.pending[nmiss] = idx[a]
                nmiss += 1
            elif self.head != s:
                self._unlink(s)
                self._push_front(s)
        a = 0
        while a < nmiss:
            nb = min(self.batch, nmiss - a)
            self._fill(self.pending + a, nb)
            a += nb

    cdef bint cached(self, int i) noexcept nogil:
        return self.slot_of[i] >= 0

    cdef int demote(self, const unsigned char* idle, const int* keep) noexcept nogil:
        """The cached rows of the samples i with idle[i] and keep[i] < 0 moved to the
        least recently used end of the cache, in their order, so that the next rows computed
        take their slots before any other's (O(capacity)).  Which rows are cached never
        changes a value read: a row is computed the same whenever it is computed."""
        cdef int s = self.head, nxt, moved = 0, last = self.tail, i
        if s < 0:
            return 0
        while True:
            nxt = self.nxt[s]
            i = self.row_of[s]
            if idle[i] and keep[i] < 0 and s != self.tail:
                self._unlink(s)
                self.prv[s] = self.tail
                self.nxt[s] = -1
                self.nxt[self.tail] = s
                self.tail = s
                moved += 1
            if s == last or nxt < 0:
                break
            s = nxt
        return moved

    cdef void _fill(self, const int* idx, int m) noexcept nogil:
        """Rows idx[0:m] (m <= batch, none cached) computed together into cache slots of
        their own (claimed first, in order), the samples split between n_threads threads:
        dot products (_dots_task), kernel values and storage (_rows_part)."""
        cdef RowTask w
        cdef int b, parts
        for b in range(m):
            self.offs[b] = <Py_ssize_t> self._claim(idx[b]) * self.n
        w.P = NULL
        w.X = NULL
        w.xb = NULL
        w.tiles = NULL
        w.tile = ROW_TILE
        w.n = self.n
        w.d = self.d
        w.m = m
        w.block = self.block
        w.sq = &self.sqnorm[0]
        w.idx = idx
        w.ks = &self.spec
        w.store = self.store
        w.single = self.single
        w.offs = self.offs
        parts = msvm_parts(self.n, self.n_threads)
        self._dots_task(idx, m, &w)
        if w.P != NULL:
            w.tiles = self._tile_buffer(<Py_ssize_t> parts * m * w.tile)
            if w.tiles == NULL:
                # no memory for the tiles: one row at a time (the same values)
                for b in range(m):
                    self._compute(idx[b], self.scratch)
                    self._store_row(self.offs[b], self.scratch)
                return
        run_parts(self.n, parts, self.n_threads, _rows_part, &w)
        self.n_computed += m

    cdef void _dots_task(self, const int* idx, int m, RowTask* w) noexcept nogil:
        """The dot products of rows idx[0:m] into the block here, before the threads start
        (a subclass may leave them to _rows_part instead)."""
        self.dots_block(idx, m, self.block)

    cdef Py_ssize_t _cached(self, int i) noexcept nogil:
        """Offset in the store of kernel row i, computed into the cache on a miss (a float32
        row through the scratch buffer)."""
        cdef int s = self.slot_of[i]
        cdef Py_ssize_t off
        self.n_requests += 1
        if s >= 0:
            if self.head != s:
                self._unlink(s)
                self._push_front(s)
            return <Py_ssize_t> s * self.n
        s = self._claim(i)
        off = <Py_ssize_t> s * self.n
        if not self.single:
            self._compute(i, <double*> self.store + off)
            return off
        self._compute(i, self.scratch)
        self._store_row(off, self.scratch)
        return off

    cdef void _store_row(self, Py_ssize_t off, const double* row) noexcept nogil:
        """A computed row (n values) into the store at offset off."""
        if self.single:
            msvm_store32(<float*> self.store + off, row, self.n)
        else:
            memcpy(<double*> self.store + off, row, self.n * sizeof(double))

    cdef double* _tile_buffer(self, Py_ssize_t size) noexcept nogil:
        """A buffer of at least size doubles for the parts' tiles of a batch (_rows_part),
        grown when needed; NULL if it cannot be."""
        cdef double* grown
        if size > self.tiles_size:
            grown = <double*> realloc(self.tiles, size * sizeof(double))
            if grown == NULL:
                return NULL
            self.tiles = grown
            self.tiles_size = size
        return self.tiles

    cdef const double* row(self, int i) noexcept nogil:
        """Kernel row i (length n) from the cache, computed on a miss.  A float32 row is
        converted into a scratch buffer, valid until the next call."""
        cdef Py_ssize_t r, off = self._cached(i)
        cdef const float* row32
        if not self.single:
            return <double*> self.store + off
        row32 = <float*> self.store + off
        for r in range(self.n):
            self.scratch[r] = row32[r]
        return self.scratch

    cdef void row_entries(self, int i, const int* idx, int m, double* out) noexcept nogil:
        cdef Py_ssize_t off = self._cached(i)
        cdef const float* row32 = <float*> self.store + off
        cdef const double* row64 = <double*> self.store + off
        cdef int b
        if self.single:
            for b in range(m):
                out[b] = row32[idx[b]]
        else:
            for b in range(m):
                out[b] = row64[idx[b]]

    cdef void block_entries(self, const int* idx, int m, double* out) noexcept nogil:
        """block_entries_begin, then block_entries_end."""
        self.block_entries_begin(idx, m, out)
        self.block_entries_end()

    cdef void block_entries_begin(self, const int* idx, int m, double* out) noexcept nogil:
        """The block's rows looked up (or computed) in order, as row_entries does them, then
        their entries gathered with the block's rows split between n_threads threads
        (_gather_part; at least BLOCK_PART_MIN entries a part), the workers started here and
        the calling thread's share taken in block_entries_end.  Where the kernel matrix is
        exactly symmetric by construction (self.symmetric: a dense X's rows, whatever their
        path, tests/test_dense_dots.py and test_row_batches.py) and rows have at least
        UPPER_MIN_N entries, only the entries on and above the diagonal are gathered: the
        same values, half the reads of rows mostly out of the core's caches (n = 40,000: the
        gather was 10 % of a fit).  In several parts (threads) they are parts of equal
        shares of the triangle, each writing its entries' mirrors too; in one part the
        block is mirrored in tiles in block_entries_end."""
        cdef GatherTask* w = &self.gather
        cdef int a, parts = 1
        for a in range(m):
            self.boffs[a] = self._cached(idx[a])
        w.store = self.store
        w.single = self.single
        w.offs = self.boffs
        w.idx = idx
        w.m = m
        w.upper = self.symmetric and GATHER_UPPER and self.n >= UPPER_MIN_N
        w.out = out
        if self.n_threads > 1:
            parts = max(1, min(4 * self.n_threads, <int> ((<Py_ssize_t> m * m) // BLOCK_PART_MIN)))
        w.parts = parts
        begin_parts(&self.gather_job, m, parts, self.n_threads, _gather_part, w)

    cdef void block_entries_end(self) noexcept nogil:
        """The gather begun by block_entries_begin completed (the parts no worker took run
        here); a block gathered in one part is mirrored here, in tiles (_mirror_upper)."""
        cdef GatherTask* w = &self.gather
        end_parts(&self.gather_job)
        if w.upper and w.parts == 1:
            _mirror_upper(w.out, w.m, MIRROR_TILE)

    cdef void row_axpys(self, int i, const double* coef, double** ys, int m) noexcept nogil:
        cdef Py_ssize_t off = self._cached(i)
        cdef int t
        if self.single:
            for t in range(m):
                _axpy(ys[t], <float*> self.store + off, coef[t], self.n)
        else:
            for t in range(m):
                _axpy(ys[t], <double*> self.store + off, coef[t], self.n)

    cdef const void* row_ref(self, int i, bint* single) noexcept nogil:
        """The cached row in place (computed on a miss into the least recently used slot)."""
        single[0] = self.single
        if self.single:
            return <float*> self.store + self._cached(i)
        return <double*> self.store + self._cached(i)

    cdef int _claim(self, int i) noexcept nogil:
        """A cache slot for row i: a free one, or the least recently used one."""
        cdef int s
        if self.used < self.capacity:
            s = self.used
            self.used += 1
            self.store_ready = msvm_store_reach(self.store, self.store_mapped, self.store_bytes,
                                                self.store_ready, self._claimed_bytes())
        else:
            s = self.tail
            self._unlink(s)
            self.slot_of[self.row_of[s]] = -1
        self.row_of[s] = i
        self.slot_of[i] = s
        self._push_front(s)
        return s

    cdef size_t _claimed_bytes(self) noexcept nogil:
        """The bytes of the store's slots claimed so far (they are claimed from its start)."""
        return <size_t> self.used * self.n * (sizeof(float) if self.single else sizeof(double))

    cdef void _unlink(self, int s) noexcept nogil:
        if self.prv[s] >= 0:
            self.nxt[self.prv[s]] = self.nxt[s]
        else:
            self.head = self.nxt[s]
        if self.nxt[s] >= 0:
            self.prv[self.nxt[s]] = self.prv[s]
        else:
            self.tail = self.prv[s]

    cdef void _push_front(self, int s) noexcept nogil:
        self.prv[s] = -1
        self.nxt[s] = self.head
        if self.head >= 0:
            self.prv[self.head] = s
        self.head = s
        if self.tail < 0:
            self.tail = s


cdef class DenseKernelRows(CachedRows):
    """Kernel rows computed from a dense X (n x d, C order), dot products by _dense_dots.h."""

    def __cinit__(self):
        self.xb = NULL

    def __dealloc__(self):
        free(self.xb)

    def __init__(self, const double[:, ::1] X, int k, str kernel, double gamma=1.0,
                 double coef0=0.0, int degree=3, double shift=0.0, Py_ssize_t capacity=2,
                 str cache_dtype="float64"):
        self._setup(X.shape[0], X.shape[1], k)
        self.X = X
        self.P = np.empty((self.n // 16) * 16 * self.d + 1)
        self.dots_in_tiles = self.d > 0
        self.symmetric = True
        if self.n > 0 and self.d > 0:
            msvm_sqnorms(&X[0, 0], self.n, self.d, &self.sqnorm[0])
            msvm_panels(&X[0, 0], self.n, self.d, &self.P[0])
        self.row_cost = <long long> self.n * (self.d + 1)
        self._configure(kernel, gamma, coef0, degree, shift, capacity, cache_dtype)
        self.xb = <double*> malloc(<Py_ssize_t> self.batch * self.d * sizeof(double) + 1)
        if self.xb == NULL:
            raise MemoryError("cannot allocate the kernel row cache; lower cache_size")

    cdef void dots(self, int i, double* out) noexcept nogil:
        if self.d == 0:
            memset(out, 0, self.n * sizeof(double))
            return
        msvm_dots_row(&self.X[0, 0], self.n, self.d, &self.X[i, 0], out)

    cdef void _dots_task(self, const int* idx, int m, RowTask* w) noexcept nogil:
        """The dot products are left to the threads (_rows_part), each its own samples a
        tile at a time."""
        cdef int b, f, d = self.d
        if d == 0:
            CachedRows._dots_task(self, idx, m, w)
            return
        for b in range(m):
            for f in range(d):
                self.xb[b * d + f] = self.X[idx[b], f]
        w.P = &self.P[0]
        w.X = &self.X[0, 0]
        w.xb = self.xb


cdef class SparseKernelRows(CachedRows):
    """Kernel rows computed from a CSR X (data, indices, indptr; int32 indices)."""

    def __cinit__(self):
        self.dense_i = NULL

    def __dealloc__(self):
        free(self.dense_i)

    def __init__(self, X, int k, str kernel, double gamma=1.0, double coef0=0.0,
                 int degree=3, double shift=0.0, Py_ssize_t capacity=2,
                 str cache_dtype="float64"):
        self._setup(X.shape[0], X.shape[1], k)
        self.data = X.data
        self.indices = X.indices
        self.indptr = X.indptr
        _csr_sqnorms(self.data, self.indptr, self.sqnorm)
        self.dense_i = <double*> malloc(self.d * sizeof(double) + 1)
        if self.dense_i == NULL:
            raise MemoryError()
        memset(self.dense_i, 0, self.d * sizeof(double))
        self.row_cost = <long long> self.n + self.indptr[self.n]
        self._configure(kernel, gamma, coef0, degree, shift, capacity, cache_dtype)

    cdef void dots(self, int i, double* out) noexcept nogil:
        cdef Py_ssize_t r, t
        cdef double acc
        for t in range(self.indptr[i], self.indptr[i + 1]):
            self.dense_i[self.indices[t]] = self.data[t]
        for r in range(self.n):
            acc = 0.0
            for t in range(self.indptr[r], self.indptr[r + 1]):
                acc += self.data[t] * self.dense_i[self.indices[t]]
            out[r] = acc
        for t in range(self.indptr[i], self.indptr[i + 1]):
            self.dense_i[self.indices[t]] = 0.0


# ---------------------------------------------------------------------- explicit weights
cdef class WeightRows(RowSource):
    """Scores through the weights W = X^T U of the linear kernel (abstract)."""

    cdef int _init_weights(self, double mean_nnz) except -1:
        cdef Py_ssize_t i
        self.W = np.zeros((self.d, self.k))
        self.features_per_row = mean_nnz
        for i in range(self.n):
            self.kdiag[i] = self.sqnorm[i]
        top = self._largest_norm()
        self._check_bound(top, top)
        self.row_cost = 0
        self.visit_cost = 2 * <long long> (mean_nnz + 1) * self.k
        return 0

    @property
    def weights(self):
        return np.asarray(self.W)

    cdef void reset_scores(self) noexcept nogil:
        if self.d > 0:
            memset(&self.W[0, 0], 0, <size_t> self.d * self.k * sizeof(double))

    def scale_scores(self, double factor):
        """W *= factor: the weights (hence scores) of factor * U, O(d k)."""
        cdef Py_ssize_t f, j
        with nogil:
            for f in range(self.d):
                for j in range(self.k):
                    self.W[f, j] *= factor


cdef inline void _dense_row_scores(const real* x, int d, const double* W, int k,
                                   double* out) noexcept nogil:
    """out = x W for one dense row x (d values, float32 or float64) and W (d x k, C order),
    accumulated in double."""
    cdef int j, f
    cdef double xf
    cdef const double* w
    for j in range(k):
        out[j] = 0.0
    for f in range(d):
        xf = x[f]
        if xf != 0.0:
            w = &W[f * k]
            for j in range(k):
                out[j] += xf * w[j]


cdef inline void _dense_row_apply(const real* x, int d, double* W, int k,
                                  const double* du) noexcept nogil:
    """W += x^T du for one dense row x: only the nonzero slots of du are touched."""
    cdef int t, f, nz
    cdef int js[MAX_CLASSES]
    cdef double dv[MAX_CLASSES]
    cdef double xf
    cdef double* w
    nz = _nonzero_slots(du, k, js, dv)
    if nz == 0:
        return
    for f in range(d):
        xf = x[f]
        if xf != 0.0:
            w = &W[f * k]
            for t in range(nz):
                w[js[t]] += xf * dv[t]


cdef class DenseLinearRows(WeightRows):
    """The linear kernel on a dense X (n x d, C order), weights held explicitly."""

    def __init__(self, const double[:, ::1] X, int k):
        self._setup(X.shape[0], X.shape[1], k)
        self.X = X
        _dense_sqnorms(X, self.sqnorm)
        self._init_weights(self.d)

    cdef void get_scores(self, int i, double* out) noexcept nogil:
        if self.d > 0:
            _dense_row_scores(&self.X[i, 0], self.d, &self.W[0, 0], self.k, out)
        else:
            memset(out, 0, self.k * sizeof(double))

    cdef void apply(self, int i, const double* du) noexcept nogil:
        if self.d > 0:
            _dense_row_apply(&self.X[i, 0], self.d, &self.W[0, 0], self.k, du)


cdef class DenseLinearRows32(WeightRows):
    """The linear kernel on a dense float32 X (n x d, C order), weights held in float64.

    For explicit feature maps (kernel_approximation): half the memory and memory traffic of
    float64 rows; every product is accumulated in double."""

    def __init__(self, const float[:, ::1] X, int k):
        self._setup(X.shape[0], X.shape[1], k)
        self.X = X
        _dense_sqnorms(X, self.sqnorm)
        self._init_weights(self.d)

    cdef void get_scores(self, int i, double* out) noexcept nogil:
        if self.d > 0:
            _dense_row_scores(&self.X[i, 0], self.d, &self.W[0, 0], self.k, out)
        else:
            memset(out, 0, self.k * sizeof(double))

    cdef void apply(self, int i, const double* du) noexcept nogil:
        if self.d > 0:
            _dense_row_apply(&self.X[i, 0], self.d, &self.W[0, 0], self.k, du)


cdef class SparseLinearRows(WeightRows):
    """The linear kernel on a CSR X (int32 indices), weights held explicitly."""

    def __init__(self, X, int k):
        self._setup(X.shape[0], X.shape[1], k)
        self.data = X.data
        self.indices = X.indices
        self.indptr = X.indptr
        _csr_sqnorms(self.data, self.indptr, self.sqnorm)
        self._init_weights(self.indptr[self.n] / max(self.n, 1))

    cdef void get_scores(self, int i, double* out) noexcept nogil:
        cdef int j, t
        cdef double xf
        cdef double* w
        for j in range(self.k):
            out[j] = 0.0
        for t in range(self.indptr[i], self.indptr[i + 1]):
            xf = self.data[t]
            w = &self.W[self.indices[t], 0]
            for j in range(self.k):
                out[j] += xf * w[j]

    cdef void apply(self, int i, const double* du) noexcept nogil:
        cdef int u, t, nz
        cdef int js[MAX_CLASSES]
        cdef double dv[MAX_CLASSES]
        cdef double xf
        cdef double* w
        nz = _nonzero_slots(du, self.k, js, dv)
        if nz == 0:
            return
        for t in range(self.indptr[i], self.indptr[i + 1]):
            xf = self.data[t]
            w = &self.W[self.indices[t], 0]
            for u in range(nz):
                w[js[u]] += xf * dv[u]


# ---------------------------------------------------------------------- construction
def _csr(X):
    """X as CSR with float64 data and int32 indices, sorted and without duplicates."""
    import scipy.sparse as sp
    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    if X.nnz > np.iinfo(np.int32).max:
        raise ValueError("sparse X has more than 2**31 - 1 stored values; split the data")
    X.indices = np.ascontiguousarray(X.indices, dtype=np.int32)
    X.indptr = np.ascontiguousarray(X.indptr, dtype=np.int32)
    X.data = np.ascontiguousarray(X.data)
    return X


def make_row_source(str kind, int k, X=None, K=None, double gamma=1.0, double coef0=0.0,
                    int degree=3, double shift=0.0, Py_ssize_t capacity=0,
                    str cache_dtype="float64"):
    """The row source for a solve.

    Parameters
    ----------
    kind : {'linear', 'precomputed', 'rbf', 'poly', 'linear-rows'}
        'linear' keeps the weights W = X^T U (no kernel rows); 'precomputed' takes rows of the
        Gram matrix ``K``; 'rbf', 'poly' and 'linear-rows' (the linear kernel as rows, for the
        SMO path on small n) compute kernel rows from ``X`` into an LRU cache of ``capacity``
        rows stored as ``cache_dtype``.
    k : int
        Number of class slots.
    X : ndarray of shape (n, d) or scipy.sparse matrix
        The training inputs (dense C-ordered float64, or any sparse format: converted to CSR);
        for 'linear', dense C-ordered float32 too (explicit feature maps).
    """
    import scipy.sparse as sp
    if kind == "precomputed":
        return GramRows(np.ascontiguousarray(K, dtype=np.float64), k)
    if shift != 0.0 and kind == "linear":
        raise ValueError("shift applies to kernel rows only; append a constant column instead")
    sparse = sp.issparse(X)
    if kind == "linear":
        if sparse:
            return SparseLinearRows(_csr(X), k)
        return DenseLinearRows32(X, k) if X.dtype == np.float32 else DenseLinearRows(X, k)
    kernel = "linear" if kind == "linear-rows" else kind
    if kernel not in ("rbf", "poly", "linear"):
        raise ValueError(f"unknown row source kind {kind!r}")
    cls = SparseKernelRows if sparse else DenseKernelRows
    return cls(_csr(X) if sparse else X, k, kernel, gamma=gamma, coef0=coef0, degree=degree,
               shift=shift, capacity=capacity, cache_dtype=cache_dtype)


def _tiles(row_tile=None, update_tile=None):
    """The column tiles of a batch of kernel rows (ROW_TILE) and of a score update where
    the cache cannot hold every row (UPDATE_TILE; 0: one pass), set where given (for
    benchmarks: the values computed do not depend on them); returns the previous pair."""
    global ROW_TILE, UPDATE_TILE
    old = (ROW_TILE, UPDATE_TILE)
    if row_tile is not None:
        if row_tile < 16 or row_tile % 16:
            raise ValueError("row_tile must be a positive multiple of 16")
        ROW_TILE = row_tile
    if update_tile is not None:
        UPDATE_TILE = _at_least(update_tile, 0, "update_tile")
    return old


def _at_least(value, low, name):
    """value, checked: a ValueError naming it below low."""
    if value < low:
        raise ValueError(f"{name} must be >= {low}")
    return value


def _batches(block_rows=None, block_bytes=None):
    """The most rows of a batch (BLOCK_ROWS) and of their values (BLOCK_BYTES) for the
    sources built from now on, set where given (for benchmarks: the values computed and the
    rows cached do not depend on them); returns the previous pair."""
    global BLOCK_ROWS, BLOCK_BYTES
    old = (BLOCK_ROWS, BLOCK_BYTES)
    if block_rows is not None:
        BLOCK_ROWS = _at_least(block_rows, 1, "block_rows")
    if block_bytes is not None:
        BLOCK_BYTES = block_bytes
    return old


def _upper_min_n(value=None):
    """UPPER_MIN_N (CachedRows.block_entries_begin), set where given (for benchmarks and
    tests: the same values either way; 0: the triangle at every n, main 0fa54fe's rule);
    returns the previous value."""
    global UPPER_MIN_N
    old = UPPER_MIN_N
    if value is not None:
        UPPER_MIN_N = int(value)
    return old


def _gather_upper(flag=None):
    """GATHER_UPPER (CachedRows.block_entries), set where given (for benchmarks: the same
    values either way); returns the previous setting."""
    global GATHER_UPPER
    old = bool(GATHER_UPPER)
    if flag is not None:
        GATHER_UPPER = bool(flag)
    return old


def _rbf_one_pass(flag=None):
    """RBF_ONE_PASS (_rows_part), set where given (for benchmarks: the same values either
    way); returns the previous setting."""
    global RBF_ONE_PASS
    old = bool(RBF_ONE_PASS)
    if flag is not None:
        RBF_ONE_PASS = bool(flag)
    return old


def _huge_store(min_bytes=None, min_samples=None):
    """HUGE_STORE_MIN and HUGE_STORE_SAMPLES, the smallest row store (bytes; 0: none) and
    the fewest samples mapped in 2 MB pages, set where given for the sources built from now
    on (for benchmarks and tests: the values computed do not depend on them); returns the
    previous pair."""
    global HUGE_STORE_MIN, HUGE_STORE_SAMPLES
    old = (HUGE_STORE_MIN, HUGE_STORE_SAMPLES)
    if min_bytes is not None:
        HUGE_STORE_MIN = _at_least(min_bytes, 0, "min_bytes")
    if min_samples is not None:
        HUGE_STORE_SAMPLES = _at_least(min_samples, 0, "min_samples")
    return old


def _store_reuse(spare_max=None, populate=None):
    """The spare store's limit (bytes of a released store kept resident for the next one;
    0: none kept or used: the one held, if any, stays aside until the limit is raised again
    or _drop_spare_store()) and how far ahead a store in 4 KB pages is faulted in (bytes; 0:
    not at all), set where given (_row_store.h; for benchmarks and tests: the values
    computed do not depend on them); returns the previous pair."""
    global msvm_spare_max, msvm_populate
    old = (msvm_spare_max, msvm_populate)
    if spare_max is not None:
        msvm_spare_max = _at_least(spare_max, 0, "spare_max")
    if populate is not None:
        msvm_populate = _at_least(populate, 0, "populate")
    return old


def _drop_spare_store():
    """The spare store, if one is held, released (_row_store.h)."""
    msvm_spare_drop()


def _update_group(group=None):
    """The most terms a score target takes per pass (_row_updates.h: msvm_update_group, 1
    to 8; 4 was round 14's), set where given (for benchmarks: the same values); returns the
    previous value."""
    global msvm_update_group
    old = msvm_update_group
    if group is not None:
        if not 1 <= group <= MSVM_UPDATE_GROUP:
            raise ValueError(f"group must be within 1 and {MSVM_UPDATE_GROUP}")
        msvm_update_group = group
    return old


def _mirror_tile(tile=None):
    """MIRROR_TILE (CachedRows.block_entries), set where given (for benchmarks: the same
    values); returns the previous value."""
    global MIRROR_TILE
    old = MIRROR_TILE
    if tile is not None:
        MIRROR_TILE = _at_least(tile, 0, "tile")
    return old


def _mirror_block(double[:, ::1] out, int tile):
    """_mirror_upper on a square array in place (for tests)."""
    if out.shape[0] != out.shape[1]:
        raise ValueError("out must be square")
    _mirror_upper(&out[0, 0] if out.shape[0] else NULL, <int> out.shape[0], tile)


def _store_ready(CachedRows source):
    """The bytes from the store's start already resident (faulted in), for tests."""
    return source.store_ready


def _store_mapped(CachedRows source):
    """The length of the source's store mapping (0: malloc'd), for tests."""
    return source.store_mapped
