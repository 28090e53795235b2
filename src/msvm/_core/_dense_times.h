/* F = X V for a dense X (n x d, row-major) and a narrow V (d x k, k the class slots): the
 * decision values of the linear path (msvm/_core/_dense.pyx).
 *
 * A BLAS dgemm packs all of X into panels for every such product, which with k of about 10
 * costs as much as the multiply-adds (100k x 50 rows, k = 10: 4.4 ms against 2.7 ms here on
 * this project's test machine, one thread).  Here blocks of MSVM_TIMES_ROWS rows are
 * transposed into a small buffer (d x MSVM_TIMES_ROWS, in cache) and every pair of class
 * slots is accumulated over the features for the whole block at once, so that X is read
 * once and each value is a sum over the features in their order.  GCC on x86-64 Linux also
 * compiles it for AVX2 and AVX-512 machines, chosen at load time.
 */
#ifndef MSVM_DENSE_TIMES_H
#define MSVM_DENSE_TIMES_H

#include <stddef.h>

#include "_clones.h"

#define MSVM_TIMES_ROWS 32

/* F (n x k) = X (n x d) V (d x k), all row-major; T: d * MSVM_TIMES_ROWS doubles. */
MSVM_CLONED(("no-trapping-math"))
static void msvm_rows_times(const double *X, ptrdiff_t n, ptrdiff_t d, const double *V,
                            ptrdiff_t k, double *F, double *T)
{
    ptrdiff_t i0, j, c, r;
    for (i0 = 0; i0 + MSVM_TIMES_ROWS <= n; i0 += MSVM_TIMES_ROWS) {
        for (r = 0; r < MSVM_TIMES_ROWS; r++)
            for (j = 0; j < d; j++)
                T[j * MSVM_TIMES_ROWS + r] = X[(i0 + r) * d + j];
        for (c = 0; c + 2 <= k; c += 2) {
            double a0[MSVM_TIMES_ROWS] = {0.0}, a1[MSVM_TIMES_ROWS] = {0.0};
            for (j = 0; j < d; j++) {
                const double v0 = V[j * k + c], v1 = V[j * k + c + 1];
                const double *t = T + j * MSVM_TIMES_ROWS;
                for (r = 0; r < MSVM_TIMES_ROWS; r++) {
                    a0[r] += t[r] * v0;
                    a1[r] += t[r] * v1;
                }
            }
            for (r = 0; r < MSVM_TIMES_ROWS; r++) {
                F[(i0 + r) * k + c] = a0[r];
                F[(i0 + r) * k + c + 1] = a1[r];
            }
        }
        for (; c < k; c++) {
            double a0[MSVM_TIMES_ROWS] = {0.0};
            for (j = 0; j < d; j++) {
                const double v0 = V[j * k + c];
                const double *t = T + j * MSVM_TIMES_ROWS;
                for (r = 0; r < MSVM_TIMES_ROWS; r++)
                    a0[r] += t[r] * v0;
            }
            for (r = 0; r < MSVM_TIMES_ROWS; r++)
                F[(i0 + r) * k + c] = a0[r];
        }
    }
    for (; i0 < n; i0++)
        for (c = 0; c < k; c++) {
            double a = 0.0;
            for (j = 0; j < d; j++)
                a += X[i0 * d + j] * V[j * k + c];
            F[i0 * k + c] = a;
        }
}

#endif
