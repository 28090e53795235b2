/* Dot products of dense rows for the kernel rows of msvm/_core/_rows.pyx (DenseKernelRows).
 *
 * Every value is summed over the features in their order, with no contraction into fused
 * multiply-adds, so that a row computed alone (msvm_dots_row), a row computed with others
 * (msvm_dots_rows) and a squared norm (msvm_sqnorms) agree to the last bit: the kernel
 * matrix stays exactly symmetric and its diagonal exactly K(x_i, x_i).  msvm_dots_rows
 * reads the features transposed (X^T, d x n), four rows at a time against 16 samples held in
 * registers, so that X^T is read once per four rows: about 2.3x faster per value than one
 * row at a time on this project's test machine (where X no longer fits in cache).  GCC on
 * x86-64 Linux also compiles them for AVX2 and AVX-512 machines, chosen at load time.
 */
#ifndef MSVM_DENSE_DOTS_H
#define MSVM_DENSE_DOTS_H

#include <stddef.h>

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

/* out[r] = xi . X[r] for r < n: four samples at a time (four independent sums). */
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

/* out[b * n + r] = xb[b] . X[r] for b < m, lo <= r < hi, from XT = X^T (d x n, row-major)
 * and the m rows xb (m x d): blocks of 4 rows times 16 samples.  Every value is the same for
 * any range (the threads' parts of the samples, _threads.h). */
MSVM_DOTS_ATTR
static void msvm_dots_rows(const double *XT, ptrdiff_t n, ptrdiff_t d, const double *xb,
                           int m, double *out, ptrdiff_t lo, ptrdiff_t hi)
{
    enum { W = 16 };
    int b0, b, mb;
    ptrdiff_t r0, r, f;
    for (b0 = 0; b0 < m; b0 += 4) {
        mb = m - b0 < 4 ? m - b0 : 4;
        for (r0 = lo; r0 + W <= hi; r0 += W) {
            double acc[4][W];
            for (b = 0; b < 4; b++)
                for (r = 0; r < W; r++)
                    acc[b][r] = 0.0;
            {
                /* fewer than four rows left: the four-row loop all the same, the missing
                 * rows' places taking the first row again (their sums are not stored), so
                 * that the sums stay in registers; each stored sum has the same terms in
                 * the same order.  A loop over the mb rows instead ran 4x slower per value
                 * than four rows (n = 66,000-80,000: batches of 6 or 7 rows, 11-13 ns a
                 * kernel value against 3 ns at batches of 8) */
                const double *p0 = xb + b0 * d;
                const double *p1 = mb > 1 ? p0 + d : p0, *p2 = mb > 2 ? p0 + 2 * d : p0;
                const double *p3 = mb > 3 ? p0 + 3 * d : p0;
                for (f = 0; f < d; f++) {
                    const double *x = XT + f * n + r0;
                    const double v0 = p0[f], v1 = p1[f], v2 = p2[f], v3 = p3[f];
                    for (r = 0; r < W; r++) {
                        acc[0][r] += v0 * x[r];
                        acc[1][r] += v1 * x[r];
                        acc[2][r] += v2 * x[r];
                        acc[3][r] += v3 * x[r];
                    }
                }
            }
            for (b = 0; b < mb; b++)
                for (r = 0; r < W; r++)
                    out[(b0 + b) * n + r0 + r] = acc[b][r];
        }
        for (; r0 < hi; r0++)
            for (b = 0; b < mb; b++) {
                double a = 0.0;
                for (f = 0; f < d; f++)
                    a += xb[(b0 + b) * d + f] * XT[f * n + r0];
                out[(b0 + b) * n + r0] = a;
            }
    }
}

#endif
