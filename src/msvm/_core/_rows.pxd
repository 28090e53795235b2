# Row sources: the one seam between the solver and where rows come from (see _rows.pyx).

# a part of a loop over samples run by one thread (_threads.h)
ctypedef void (*range_fn)(void* ctx, int part, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil

cdef int thread_parts(Py_ssize_t n, int threads) noexcept nogil
cdef void run_parts(Py_ssize_t n, int parts, int threads, range_fn fn, void* ctx) noexcept nogil

cdef extern from "_threads.h":
    # a loop handed to the pool while the caller works on (begin_parts / end_parts)
    ctypedef struct msvm_job_t:
        int pooled

cdef void begin_parts(msvm_job_t* job, Py_ssize_t n, int parts, int threads, range_fn fn,
                      void* ctx) noexcept nogil
cdef void end_parts(msvm_job_t* job) noexcept nogil


cdef struct GatherTask:
    # a working set's kernel block from its cached rows (CachedRows.block_entries)
    const void* store
    bint single
    const Py_ssize_t* offs      # m: the store offsets of the block's rows
    const int* idx
    int m
    int parts
    bint upper                  # only the entries b >= a, each written to (a, b) and (b, a)
    double* out                 # m x m



cdef class RowSource:
    cdef readonly int n, d, k
    # work units (about one multiply-add each) of fetching one kernel row, and of one
    # coordinate-descent visit or score update of a sample: the solver's signal-check meter
    cdef readonly long long row_cost, visit_cost
    # kernel rows the source can hold at once (n for a Gram matrix, 0 without kernel rows)
    cdef readonly Py_ssize_t capacity
    cdef readonly long long n_computed, n_requests
    # threads of the SMO path's row batches, score updates and scans (set_threads)
    cdef readonly int n_threads
    cdef double[::1] kdiag
    cdef double[::1] sqnorm

    cdef int _setup(self, int n, int d, int k) except -1
    cdef double diag(self, int i) noexcept nogil
    cdef void get_scores(self, int i, double* out) noexcept nogil
    cdef void apply(self, int i, const double* du) noexcept nogil
    cdef void reset_scores(self) noexcept nogil
    cdef bint has_rows(self) noexcept nogil
    cdef const double* row(self, int i) noexcept nogil
    cdef void prefetch(self, const int* idx, int m) noexcept nogil
    cdef int demote(self, const unsigned char* idle, const int* keep) noexcept nogil
    cdef bint cached(self, int i) noexcept nogil
    cdef void row_entries(self, int i, const int* idx, int m, double* out) noexcept nogil
    cdef void block_entries(self, const int* idx, int m, double* out) noexcept nogil
    cdef void block_entries_begin(self, const int* idx, int m, double* out) noexcept nogil
    cdef void block_entries_end(self) noexcept nogil
    cdef void row_axpys(self, int i, const double* coef, double** ys, int m) noexcept nogil
    cdef const void* row_ref(self, int i, bint* single) noexcept nogil
    cdef Py_ssize_t update_tile(self) noexcept nogil
    cdef void rows_axpys(self, const int* idx, int m, const double* coef, int ld, double** ys,
                         int nt, double* S=*) noexcept nogil
    cdef double* slot_scores(self) noexcept nogil


cdef class ScoreRows(RowSource):
    cdef double[:, ::1] Ft          # k x n: the scores F = K U, slot-major

    cdef int _init_scores(self) except -1


cdef class GramRows(ScoreRows):
    cdef const double[:, ::1] K


cdef struct KernelSpec:
    int kernel, degree
    double gamma, coef0, shift


cdef struct RowTask:
    # m kernel rows computed together (CachedRows._fill), split by samples between threads:
    # their dot products (from the panels P of X and from X; P NULL: already in `block`),
    # kernel values and stored copies
    const double* P
    const double* X
    const double* xb        # m x d: the m samples
    Py_ssize_t n, d
    int m
    double* block           # m x n
    const double* sq
    const int* idx
    const KernelSpec* ks
    void* store
    bint single
    const Py_ssize_t* offs  # m: where each row goes in the store
    double* tiles           # parts x m x tile: each part's dot products of a tile (P set)
    Py_ssize_t tile         # samples a tile (ROW_TILE)


cdef class CachedRows(ScoreRows):
    cdef int kernel
    cdef KernelSpec spec
    cdef readonly double gamma, coef0, shift
    cdef readonly int degree
    cdef readonly str cache_dtype
    cdef bint single                # rows stored as float32
    cdef void* store                # capacity rows of n values (float64 or float32)
    cdef size_t store_mapped        # the store's mapping length (0: malloc'd; _row_store.h)
    cdef size_t store_bytes         # its size
    cdef size_t store_ready         # the bytes from its start already faulted in
    cdef double* scratch            # n: a float32 row converted, or a row being computed
    cdef int* slot_of
    cdef int* row_of
    cdef int* prv
    cdef int* nxt
    cdef int head, tail, used
    cdef int batch                  # rows computed together by prefetch
    cdef double* block              # batch x n: their dot products, then kernel values
                                    # (unless dots_in_tiles)
    cdef bint dots_in_tiles         # the dot products computed a tile at a time (_rows_part)
    cdef bint symmetric             # K[i, j] == K[j, i] to the last bit by construction
    cdef double* tiles              # the parts' tiles of a batch (_tile_buffer)
    cdef Py_ssize_t tiles_size
    cdef int* pending               # capacity: the rows prefetch has to compute
    cdef Py_ssize_t* offs           # batch: the store offsets of the rows being computed
    cdef Py_ssize_t* boffs          # capacity: the store offsets of a block's rows
    cdef GatherTask gather          # a block gather under way (block_entries_begin / _end)
    cdef msvm_job_t gather_job

    cdef void dots(self, int i, double* out) noexcept nogil
    cdef void dots_block(self, const int* idx, int m, double* out) noexcept nogil
    cdef void _kernel_values(self, int i, double* row) noexcept nogil
    cdef void _compute(self, int i, double* out) noexcept nogil
    cdef void _fill(self, const int* idx, int m) noexcept nogil
    cdef void _dots_task(self, const int* idx, int m, RowTask* w) noexcept nogil
    cdef Py_ssize_t _cached(self, int i) noexcept nogil
    cdef void _store_row(self, Py_ssize_t off, const double* row) noexcept nogil
    cdef double* _tile_buffer(self, Py_ssize_t size) noexcept nogil
    cdef int _claim(self, int i) noexcept nogil
    cdef size_t _claimed_bytes(self) noexcept nogil
    cdef void _unlink(self, int s) noexcept nogil
    cdef void _push_front(self, int s) noexcept nogil


cdef class DenseKernelRows(CachedRows):
    cdef const double[:, ::1] X
    cdef double[::1] P              # X in panels of 16 samples (_dense_dots.h: msvm_panels)
    cdef double* xb                 # batch x d: the samples of one dots_block


cdef class SparseKernelRows(CachedRows):
    cdef const double[::1] data
    cdef const int[::1] indices, indptr
    cdef double* dense_i            # d: sample i scattered


cdef class WeightRows(RowSource):
    cdef double[:, ::1] W           # d x k: W = X^T U
    cdef readonly double features_per_row   # d (dense) or the mean nonzeros of a row (CSR)

    cdef int _init_weights(self, double mean_nnz) except -1


cdef class DenseLinearRows(WeightRows):
    cdef const double[:, ::1] X


cdef class DenseLinearRows32(WeightRows):
    cdef const float[:, ::1] X


cdef class SparseLinearRows(WeightRows):
    cdef const double[::1] data
    cdef const int[::1] indices, indptr
