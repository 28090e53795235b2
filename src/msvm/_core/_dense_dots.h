/* Dot products of dense rows for the kernel rows of msvm/_core/_rows.pyx (DenseKernelRows).
 *
 * Every value is summed over the features in their order, with no contraction into fused
 * multiply-adds, so that a row computed alone (msvm_dots_row), a row computed with others
 * (msvm_dots_rows) and a squared norm (msvm_sqnorms) agree to the last bit: the kernel
 * matrix stays exactly symmetric and its diagonal exactly K(x_i, x_i).  msvm_dots_rows
 * reads X in panels of 16 samples (msvm_panels: a panel's d x 16 features one contiguous
 * stretch), four rows at a time against a panel, the 4 x 16 sums held in registers.
 * The order of operations fixes the cost at one multiply and one add a feature and value
 * (1.0 ns a value, d = 20, with the data in L1 on this project's test machine, AVX-512);
 * the rest is reading X from memory, once a batch of rows (_rows.pyx: ROW_TILE, BLOCK_ROWS).
 * The dot products alone, n = 80,000, d = 20, the caches flushed between batches as a fit's
 * row stores do (a C loop): 3.5 ns a value for r10's loop (from X^T, d x n, in batches of 6
 * rows), 2.2 with the sums in registers, 1.5 from panels, 1.2 from panels in batches of 16
 * rows; a batch's rows and their stores (benchmarks/run_row_batches.py, linear kernel):
 * 5.6 -> 2.2 ns a value at n = 80,000, 2.4 -> 1.9 at 10,000.  GCC on x86-64 Linux also
 * compiles them for AVX2 and AVX-512 machines, chosen at load time.
 * Fused multiply-adds (one rounding a feature, exactly symmetric too) were built and
 * measured in round 13 and removed in round 14: on this project's AMD Zen 4 machine, which
 * runs a multiply and an add as fast as one fused multiply-add, they gained 0.1 of 2.4 ns a
 * value and moved the iterates of 8 of the 38 fits of the behaviour fingerprint.
 */
#ifndef MSVM_DENSE_DOTS_H
#define MSVM_DENSE_DOTS_H

#include <stddef.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "_clones.h"

#define MSVM_DOTS_ATTR MSVM_CLONED(("no-trapping-math", "fp-contract=off"))

/* out[i] = ||X[i]||^2 for X (n x d, row-major). */
MSVM_DOTS_ATTR
static void msvm_sqnorms(const double *X, ptrdiff_t n, ptrdiff_t d, double *out)
{
    ptrdiff_t i, f;
    for (i = 0; i < n; i++) {
        double acc = 0.0;
        for (f = 0; f < d; f++)
            acc += X[i * d + f] * X[i * d + f];
        out[i] = acc;
    }
}

/* out[r] = xi . X[r] for r < n: four samples at a time (four independent sums), each summed
 * over the features in order from 0.0, a product rounded, then added. */
MSVM_DOTS_ATTR
static void msvm_dots_row(const double *X, ptrdiff_t n, ptrdiff_t d, const double *xi,
                          double *out)
{
    ptrdiff_t r = 0, f;
    for (; r + 4 <= n; r += 4) {
        const double *x0 = X + r * d;
        double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
        for (f = 0; f < d; f++) {
            const double v = xi[f];
            a0 += v * x0[f];
            a1 += v * x0[d + f];
            a2 += v * x0[2 * d + f];
            a3 += v * x0[3 * d + f];
        }
        out[r] = a0;
        out[r + 1] = a1;
        out[r + 2] = a2;
        out[r + 3] = a3;
    }
    for (; r < n; r++) {
        double a = 0.0;
        for (f = 0; f < d; f++)
            a += xi[f] * X[r * d + f];
        out[r] = a;
    }
}

/* X (n x d, row-major) in panels of 16 samples, for msvm_dots_rows: panel q holds samples
 * 16q .. 16q + 15, feature-major (P[(q * d + f) * 16 + s] = X[16q + s, f]), so that the 16
 * samples of a block of msvm_dots_rows are one contiguous stretch of 128 d bytes; the last
 * n % 16 samples have no panel (msvm_dots_rows reads them from X). */
static void msvm_panels(const double *X, ptrdiff_t n, ptrdiff_t d, double *P)
{
    ptrdiff_t q, f, s;
    for (q = 0; q < n / 16; q++)
        for (f = 0; f < d; f++)
            for (s = 0; s < 16; s++)
                P[(q * d + f) * 16 + s] = X[(q * 16 + s) * d + f];
}

/* The dot products of 4 rows (p[0..3], d values each) with the 16 samples of a panel into
 * o[b][0..15] (o[b] NULL: not stored), each summed over the features in order from 0.0, a
 * product rounded, then added (no contraction).
 *
 * GCC and clang: msvm_dots_panel_v4d and _v2d, 2w samples at a time as two vectors of w = 4
 * or 2 doubles, the 4 x 2w sums held in vector registers: _v4d in the AVX2 and AVX-512
 * clones (_clones.h; MSVM_WIDE_SUMS), _v2d elsewhere (SSE2, NEON).  A plain array of sums
 * (msvm_dots_panel, for other compilers) GCC keeps on the stack, a load and a store per sum
 * and feature: r10's loop so compiled took 1.4 ns a value against 1.0 for _v4d (AVX-512,
 * the data in cache); the vectors of 4 doubles in the baseline clone GCC keeps in memory,
 * 10x slower than _v2d there. */
#define MSVM_DOTS_PANEL(name, vec)                                                          \
    static inline __attribute__((always_inline)) void                                       \
    name(const double *panel, ptrdiff_t d, const double *const *p, double *const *o)        \
    {                                                                                       \
        const int w = (int)(sizeof(vec) / sizeof(double));                                 \
        int h, b;                                                                           \
        for (h = 0; h < 16; h += 2 * w) {                                                   \
            vec a[4][2], x0, x1;                                                            \
            const double *x = panel + h;                                                    \
            ptrdiff_t f;                                                                    \
            for (b = 0; b < 4; b++)                                                         \
                a[b][0] = a[b][1] = (vec){0};                                               \
            for (f = 0; f < d; f++, x += 16) {                                              \
                memcpy(&x0, x, sizeof x0);                                                  \
                memcpy(&x1, x + w, sizeof x1);                                              \
                for (b = 0; b < 4; b++) {                                                   \
                    a[b][0] += p[b][f] * x0;                                                \
                    a[b][1] += p[b][f] * x1;                                                \
                }                                                                           \
            }                                                                               \
            for (b = 0; b < 4; b++)                                                         \
                if (o[b]) {                                                                 \
                    memcpy(o[b] + h, &a[b][0], sizeof x0);                                  \
                    memcpy(o[b] + h + w, &a[b][1], sizeof x1);                              \
                }                                                                           \
        }                                                                                   \
    }

#if defined(__GNUC__) || defined(__clang__)
typedef double msvm_v4d __attribute__((vector_size(32)));
typedef double msvm_v2d __attribute__((vector_size(16)));
MSVM_DOTS_PANEL(msvm_dots_panel_v4d, msvm_v4d)
MSVM_DOTS_PANEL(msvm_dots_panel_v2d, msvm_v2d)
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && __GNUC__ >= 12
#define MSVM_WIDE_SUMS() __builtin_cpu_supports("x86-64-v3")
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MSVM_WIDE_SUMS() __builtin_cpu_supports("avx2")
#else
#define MSVM_WIDE_SUMS() 0
#endif
#else
static void msvm_dots_panel(const double *panel, ptrdiff_t d, const double *const *p,
                            double *const *o)
{
    double acc[4][16];
    int b, s;
    ptrdiff_t f;
    for (b = 0; b < 4; b++)
        for (s = 0; s < 16; s++)
            acc[b][s] = 0.0;
    for (f = 0; f < d; f++, panel += 16)
        for (b = 0; b < 4; b++)
            for (s = 0; s < 16; s++)
                acc[b][s] += p[b][f] * panel[s];
    for (b = 0; b < 4; b++)
        if (o[b])
            for (s = 0; s < 16; s++)
                o[b][s] = acc[b][s];
}
#define MSVM_WIDE_SUMS() 0
#define msvm_dots_panel_v4d msvm_dots_panel
#define msvm_dots_panel_v2d msvm_dots_panel
#endif

/* out[b * ld + r - base] = p[b] . X[r] for b < mb, lo <= r < hi (base <= lo): one sample at
 * a time, from X. */
static inline void msvm_dots_samples(const double *const *p, int mb, const double *X,
                                     ptrdiff_t d, ptrdiff_t lo, ptrdiff_t hi, double *out,
                                     ptrdiff_t ld, ptrdiff_t base)
{
    ptrdiff_t r, f;
    int b;
    for (r = lo; r < hi; r++)
        for (b = 0; b < mb; b++) {
            double a = 0.0;
            for (f = 0; f < d; f++)
                a += p[b][f] * X[r * d + f];
            out[b * ld + r - base] = a;
        }
}

/* out[b * ld + r - lo] = xb[b] . X[r] for b < m, lo <= r < hi, from the panels P of X
 * (msvm_panels) and X itself (the samples of the range outside its whole panels: one at a
 * time), for the m rows xb (m x d): blocks of 4 rows times a panel.  Fewer than four rows
 * left: the four-row block all the same, the missing rows' places taking the first row
 * again (their sums not stored), so that the sums stay in registers: a loop over the rows
 * left ran 4x slower per value (r10, batches of 6 or 7 rows).  Every value is the same for
 * any range (the threads' parts of the samples, _threads.h; the tiles of _rows.pyx) and the
 * same as msvm_dots_row's. */
MSVM_DOTS_ATTR
static void msvm_dots_rows(const double *P, const double *X, ptrdiff_t d, const double *xb,
                           int m, double *out, ptrdiff_t ld, ptrdiff_t lo, ptrdiff_t hi)
{
    const int wide = MSVM_WIDE_SUMS();
    const double *p[4];
    double *o[4];
    int b0, b, mb;
    ptrdiff_t q, q0 = (lo + 15) / 16, q1 = hi / 16;
    if (q1 < q0)
        q1 = q0;                                 /* no whole panel in the range */
    for (b0 = 0; b0 < m; b0 += 4) {
        mb = m - b0 < 4 ? m - b0 : 4;
        for (b = 0; b < 4; b++)
            p[b] = xb + (b0 + (b < mb ? b : 0)) * d;
        for (q = q0; q < q1; q++) {
            for (b = 0; b < 4; b++)
                o[b] = b < mb ? out + (b0 + b) * ld + (q * 16 - lo) : NULL;
            if (wide)
                msvm_dots_panel_v4d(P + q * d * 16, d, p, o);
            else
                msvm_dots_panel_v2d(P + q * d * 16, d, p, o);
        }
        if (q1 > q0) {
            msvm_dots_samples(p, mb, X, d, lo, q0 * 16, out + b0 * ld, ld, lo);
            msvm_dots_samples(p, mb, X, d, q1 * 16, hi, out + b0 * ld, ld, lo);
        } else {
            msvm_dots_samples(p, mb, X, d, lo, hi, out + b0 * ld, ld, lo);
        }
    }
}

#endif
