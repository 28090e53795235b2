/* Dot products of dense rows by fused multiply-adds, for the kernel rows of
 * msvm/_core/_rows.pyx (DenseKernelRows) where a source asks for them (FUSED_DOTS, off by
 * default: the iterates move with the values; per_class_speed.md, r13) and the machine has
 * them (x86-64 with AVX2 and FMA, GCC on Linux: msvm_fused_available).
 *
 * Every value x . y is the chain acc = fma(x[f], y[f], acc) over the features in their order
 * from acc = 0.0: one rounding a feature instead of two.  fma(a, b, c) is the exact a b + c
 * rounded once, so fma(a, b, c) = fma(b, a, c) to the last bit: x_i . x_r and x_r . x_i are
 * the same chain, and a row computed alone (msvm_dots_row_fused), a row of a batch
 * (msvm_dots_rows_fused, its panels or its samples outside whole panels, any range) and a
 * squared norm (msvm_sqnorms_fused) agree to the last bit: the kernel matrix stays exactly
 * symmetric and its diagonal exactly K(x_i, x_i), as with _dense_dots.h's plain loops (a
 * product rounded, then added), whose values differ from these by rounding only.  A source
 * keeps one arithmetic for its life (_rows.pyx: DenseKernelRows.fused).
 *
 * The panel loop is _dense_dots.h's (four rows against a panel of 16 samples, 4 x 8 sums in
 * eight vectors of four doubles), its multiply and add one instruction.
 */
#ifndef MSVM_FUSED_DOTS_H
#define MSVM_FUSED_DOTS_H

#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MSVM_FUSED_DOTS 1
#include <immintrin.h>

#define MSVM_FUSED_ATTR __attribute__((target("avx2,fma")))

/* 1 where the fused loops can run (AVX2 and FMA), else 0. */
static int msvm_fused_available(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* x . y as the chain of fused multiply-adds over f = 0 .. d - 1 from 0.0. */
MSVM_FUSED_ATTR
static inline double msvm_fused_dot(const double *x, const double *y, ptrdiff_t d)
{
    double acc = 0.0;
    ptrdiff_t f;
    for (f = 0; f < d; f++)
        acc = __builtin_fma(x[f], y[f], acc);
    return acc;
}

/* out[i] = ||X[i]||^2 for X (n x d, row-major). */
MSVM_FUSED_ATTR
static void msvm_sqnorms_fused(const double *X, ptrdiff_t n, ptrdiff_t d, double *out)
{
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        out[i] = msvm_fused_dot(X + i * d, X + i * d, d);
}

/* a + b c rounded once */
#define MSVM_FUSED_MADD(a, b, c) __builtin_fma((b), (c), (a))

/* out[r] = xi . X[r] for r < n: four samples at a time (four independent chains). */
MSVM_FUSED_ATTR
static void msvm_dots_row_fused(const double *X, ptrdiff_t n, ptrdiff_t d, const double *xi,
                                double *out)
{
    MSVM_DOTS_ROW_BODY(MSVM_FUSED_MADD);
}

/* The dot products of 4 rows (p[0..3]) with the 16 samples of a panel (_dense_dots.h:
 * msvm_panels) into o[b][0..15] (o[b] NULL: not stored), 8 samples at a time. */
MSVM_FUSED_ATTR
static inline __attribute__((always_inline)) void
msvm_fused_panel(const double *panel, ptrdiff_t d, const double *const *p, double *const *o)
{
    int h, b;
    for (h = 0; h < 16; h += 8) {
        __m256d a[4][2], x0, x1, v;
        const double *x = panel + h;
        ptrdiff_t f;
        for (b = 0; b < 4; b++)
            a[b][0] = a[b][1] = _mm256_setzero_pd();
        for (f = 0; f < d; f++, x += 16) {
            x0 = _mm256_loadu_pd(x);
            x1 = _mm256_loadu_pd(x + 4);
            for (b = 0; b < 4; b++) {
                v = _mm256_broadcast_sd(p[b] + f);
                a[b][0] = _mm256_fmadd_pd(v, x0, a[b][0]);
                a[b][1] = _mm256_fmadd_pd(v, x1, a[b][1]);
            }
        }
        for (b = 0; b < 4; b++)
            if (o[b]) {
                _mm256_storeu_pd(o[b] + h, a[b][0]);
                _mm256_storeu_pd(o[b] + h + 4, a[b][1]);
            }
    }
}

/* out[b * ld + r - base] = p[b] . X[r] for b < mb, lo <= r < hi (base <= lo): one sample at
 * a time, from X. */
MSVM_FUSED_ATTR
static inline void msvm_fused_samples(const double *const *p, int mb, const double *X,
                                      ptrdiff_t d, ptrdiff_t lo, ptrdiff_t hi, double *out,
                                      ptrdiff_t ld, ptrdiff_t base)
{
    ptrdiff_t r;
    int b;
    for (r = lo; r < hi; r++)
        for (b = 0; b < mb; b++)
            out[b * ld + r - base] = msvm_fused_dot(p[b], X + r * d, d);
}

/* out[b * ld + r - lo] = xb[b] . X[r] for b < m, lo <= r < hi: _dense_dots.h's msvm_dots_rows
 * (blocks of four rows against the panels P of X, fewer than four padded with the first; the
 * samples outside whole panels from X), by fused multiply-adds. */
MSVM_FUSED_ATTR
static void msvm_dots_rows_fused(const double *P, const double *X, ptrdiff_t d,
                                 const double *xb, int m, double *out, ptrdiff_t ld,
                                 ptrdiff_t lo, ptrdiff_t hi)
{
    MSVM_DOTS_ROWS_BODY(msvm_fused_panel, msvm_fused_samples);
}

#else
#define MSVM_FUSED_DOTS 0

static int msvm_fused_available(void)
{
    return 0;
}
#endif

#endif
