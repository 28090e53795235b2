/* The score update of a working set (msvm/_core/_rows.pyx: rows_axpys):
 *     y_t += sum_a c[a, t] K[a, :]     for every target t (the k score rows and their sums),
 * with the kernel rows K[a, :] of the samples whose variables changed, in float64 or float32.
 *
 * One axpy per (sample, target) streams the target row through the caches once per sample.
 * Here each target takes GROUP of its samples together: the target row is read and written
 * once per group, y + c_0 K_0 + c_1 K_1 + ...  (GROUP 8 from round 15, 4 before: pendigits
 * measurements in benchmarks/results/per_class_speed.md, r15.)
 *
 * The values are those of the one-sample axpys to the last bit: every entry still receives
 * its terms one at a time in the samples' order, each product rounded and then added (no
 * contraction into fused multiply-adds), so a fit's iterates do not depend on the grouping or
 * on which compiled version (AVX-512, AVX2, baseline) the machine runs.  Zero coefficients
 * are skipped, as the one-sample updates skip them.  With several threads (n_threads) the
 * samples are split between them (_threads.h): each entry is still updated by one thread
 * with the same terms in the same order, so the values do not depend on the threads.
 */
#ifndef MSVM_ROW_UPDATES_H
#define MSVM_ROW_UPDATES_H

#include <stddef.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "_clones.h"
#include "_threads.h"

#define MSVM_UPDATE_ATTR MSVM_CLONED(("no-trapping-math", "fp-contract=off"))
#define MSVM_UPDATE_GROUP 8

/* the most terms a target takes per pass (1 to MSVM_UPDATE_GROUP; 4 was round 14's: the same
 * values, each entry's terms still added one at a time in the samples' order) */
static int msvm_update_group = MSVM_UPDATE_GROUP;

/* NAME(y, R, c, g, n): y += c[0] R[0] + ... + c[g-1] R[g-1], the terms added one at a time
 * (1 <= g <= GROUP), for kernel rows of TYPE (float32 values widened to double before their
 * products); one loop per g, each a plain stream the compiler vectorizes. */
#define MSVM_T(j) + c##j * (double)r##j[r]
#define MSVM_R(T, j) const T *r##j = R[g > j ? j : 0];
#define MSVM_C(j) const double c##j = c[g > j ? j : 0];
#define MSVM_GROUP_AXPY(NAME, TYPE)                                                        \
    MSVM_UPDATE_ATTR                                                                       \
    static void NAME(double *y, const TYPE *const *R, const double *c, int g, ptrdiff_t n) \
    {                                                                                      \
        ptrdiff_t r;                                                                       \
        MSVM_R(TYPE, 0) MSVM_R(TYPE, 1) MSVM_R(TYPE, 2) MSVM_R(TYPE, 3)                    \
        MSVM_R(TYPE, 4) MSVM_R(TYPE, 5) MSVM_R(TYPE, 6) MSVM_R(TYPE, 7)                    \
        MSVM_C(0) MSVM_C(1) MSVM_C(2) MSVM_C(3) MSVM_C(4) MSVM_C(5) MSVM_C(6) MSVM_C(7)    \
        switch (g) {                                                                       \
        case 1:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = y[r] MSVM_T(0);                                                     \
            break;                                                                         \
        case 2:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = (y[r] MSVM_T(0)) MSVM_T(1);                                         \
            break;                                                                         \
        case 3:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = ((y[r] MSVM_T(0)) MSVM_T(1)) MSVM_T(2);                             \
            break;                                                                         \
        case 4:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = (((y[r] MSVM_T(0)) MSVM_T(1)) MSVM_T(2)) MSVM_T(3);                 \
            break;                                                                         \
        case 5:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = ((((y[r] MSVM_T(0)) MSVM_T(1)) MSVM_T(2)) MSVM_T(3)) MSVM_T(4);     \
            break;                                                                         \
        case 6:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = (((((y[r] MSVM_T(0)) MSVM_T(1)) MSVM_T(2)) MSVM_T(3)) MSVM_T(4))    \
                       MSVM_T(5);                                                          \
            break;                                                                         \
        case 7:                                                                            \
            for (r = 0; r < n; r++)                                                        \
                y[r] = ((((((y[r] MSVM_T(0)) MSVM_T(1)) MSVM_T(2)) MSVM_T(3)) MSVM_T(4))   \
                        MSVM_T(5)) MSVM_T(6);                                              \
            break;                                                                         \
        default:                                                                           \
            for (r = 0; r < n; r++)                                                        \
                y[r] = (((((((y[r] MSVM_T(0)) MSVM_T(1)) MSVM_T(2)) MSVM_T(3)) MSVM_T(4))  \
                         MSVM_T(5)) MSVM_T(6)) MSVM_T(7);                                  \
            break;                                                                         \
        }                                                                                  \
    }

MSVM_GROUP_AXPY(msvm_group_axpy64, double)
MSVM_GROUP_AXPY(msvm_group_axpy32, float)

#undef MSVM_GROUP_AXPY
#undef MSVM_T
#undef MSVM_R
#undef MSVM_C

/* ys[t][lo:hi] += sum_a coef[a * ld + t] rows[a][lo:hi] for t < nt, a < m (rows: m kernel
 * rows of length n, float32 if single, else float64).  Each target takes its own nonzero
 * terms in the samples' order, GROUP at a time, so that the groups fill also where a sample
 * changes only some of the slots (pendigits: ReinforcedMSVM 9 %, WestonWatkinsMSVM 7 % less
 * time than with groups of four consecutive samples).  Each entry's terms and their order
 * do not depend on [lo, hi): any split of the samples gives the same values. */
static void msvm_rows_axpys_range(const void *const *rows, int single, int m,
                                  const double *coef, int ld, double *const *ys, int nt,
                                  ptrdiff_t lo, ptrdiff_t hi)
{
    const void *R[MSVM_UPDATE_GROUP];
    double c[MSVM_UPDATE_GROUP];
    size_t size = single ? sizeof(float) : sizeof(double);
    int a, g, t, group = msvm_update_group;
    if (group < 1 || group > MSVM_UPDATE_GROUP)
        group = MSVM_UPDATE_GROUP;
    if (hi <= lo)
        return;
    for (t = 0; t < nt; t++) {
        g = 0;
        for (a = 0; a <= m; a++) {
            if (g == group || (a == m && g > 0)) {
                if (single)
                    msvm_group_axpy32(ys[t] + lo, (const float *const *)R, c, g, hi - lo);
                else
                    msvm_group_axpy64(ys[t] + lo, (const double *const *)R, c, g, hi - lo);
                g = 0;
            }
            if (a < m && coef[(ptrdiff_t)a * ld + t] != 0.0) {
                R[g] = (const char *)rows[a] + (size_t)lo * size;
                c[g] = coef[(ptrdiff_t)a * ld + t];
                g++;
            }
        }
    }
}

/* S[lo:hi] = ys[0][lo:hi] + ... + ys[nt-1][lo:hi], the targets added in order (the row sums
 * of the scores, formed afresh). */
static void msvm_sums_range(double *const *ys, int nt, double *S, ptrdiff_t lo, ptrdiff_t hi)
{
    ptrdiff_t r;
    int t;
    if (nt <= 0) {
        for (r = lo; r < hi; r++)
            S[r] = 0.0;
        return;
    }
    for (r = lo; r < hi; r++)
        S[r] = ys[0][r];
    for (t = 1; t < nt; t++)
        for (r = lo; r < hi; r++)
            S[r] += ys[t][r];
}

typedef struct {
    const void *const *rows;
    const double *coef;
    double *const *ys;
    double *S;
    int single, m, ld, nt;
    ptrdiff_t tile;
} msvm_axpys_task;

/* A thread's samples [lo, hi), in column tiles of w->tile samples (all of them at once when
 * 0): within a tile every target takes its terms as above, so that the tile of a changed
 * row, read again for each of its nonzero slots, is still in the core's cache the second
 * time (the same values: each entry's terms and their order do not depend on the range). */
static void msvm_axpys_part(void *ctx, int part, ptrdiff_t lo, ptrdiff_t hi)
{
    const msvm_axpys_task *w = (const msvm_axpys_task *)ctx;
    ptrdiff_t t0, t1, step = w->tile > 0 ? w->tile : hi - lo;
    (void)part;
    for (t0 = lo; t0 < hi; t0 = t1) {
        t1 = hi - t0 > step ? t0 + step : hi;
        msvm_rows_axpys_range(w->rows, w->single, w->m, w->coef, w->ld, w->ys, w->nt, t0, t1);
        if (w->S != NULL)
            msvm_sums_range(w->ys, w->nt, w->S, t0, t1);
    }
}

/* The score update ys[t] += sum_a coef[a * ld + t] rows[a] over all n samples, split
 * between `threads` threads by samples (_threads.h; the same values for every split), each
 * thread's samples in column tiles of `tile` samples (0: one pass over them); with S not
 * NULL, then S = ys[0] + ... + ys[nt-1] (each thread its own samples). */
static void msvm_rows_axpys(const void *const *rows, int single, int m, const double *coef,
                            int ld, double *const *ys, int nt, ptrdiff_t n, double *S,
                            int threads, ptrdiff_t tile)
{
    msvm_axpys_task w;
    w.rows = rows;
    w.coef = coef;
    w.ys = ys;
    w.S = S;
    w.single = single;
    w.m = m;
    w.ld = ld;
    w.nt = nt;
    w.tile = tile;
    msvm_parallel(n, msvm_parts(n, threads), 16, threads, msvm_axpys_part, &w);
}

#endif
