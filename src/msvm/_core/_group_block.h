/* The grouped working set's passes (msvm/_core/_smo.pyx, blocks whose variables have group
 * caps), vectorized as _block_scan.h does for blocks without groups: the rooms of a bucket's
 * variables with their group caps (from which the extremes and the pair partner are chosen
 * by _block_scan.h's reductions), and the Newton step's products with the block over the
 * samples that hold a free variable (_free_newton_step, _hmul).
 *
 * Every value is the one of the plain Cython loops they replace, to the last bit: the same
 * operations in the same order (no contraction into fused multiply-adds), the comparisons of
 * the plain loops, and, in the product, each sum in the plain loop's order of terms, the
 * vectors running across the rows of the block instead of along a sum.  The plain loops
 * stay in _smo.pyx behind the switch GROUPED_VECTOR (tests compare the two).
 */
#ifndef MSVM_GROUP_BLOCK_H
#define MSVM_GROUP_BLOCK_H

#include <math.h>
#include <stddef.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "_clones.h"
#include "_block_scan.h"     /* msvm_max, msvm_first */

#define MSVM_GROUP_PLAIN MSVM_CLONED(("no-trapping-math", "fp-contract=off"))

/* The extremes' candidate values of a grouped bucket, x = i0 .. i1 - 1 (after
 * msvm_bucket_z without masks): vu[x] = z[x] where the variable can increase, else +inf;
 * vl[x] = z[x] where it can decrease, else -inf; a NaN z counted as neither (then
 * msvm_bucket_extremes picks what the plain running extremes pick).  The room upward is
 * the box's, Uhi - U, lowered to gru[x] (the cap - gsum of the group whose sum that move
 * grows; +inf for none) where that is smaller, as _smo.pyx's _room_up forms it; downward
 * likewise with U - Ulo and grd.  A variable can move where its room is positive. */
MSVM_GROUP_PLAIN
static void msvm_group_masks(const double *restrict z, const double *restrict U,
                             const double *restrict Ulo, const double *restrict Uhi,
                             const double *restrict gru, const double *restrict grd, int i0,
                             int i1, double *restrict vu, double *restrict vl)
{
    int x;
    double zx, ru, rd;
    for (x = i0; x < i1; x++) {
        zx = z[x];
        ru = Uhi[x] - U[x];
        ru = gru[x] < ru ? gru[x] : ru;
        rd = U[x] - Ulo[x];
        rd = grd[x] < rd ? grd[x] : rd;
        vu[x] = (ru > 0.0 && zx == zx) ? zx : INFINITY;
        vl[x] = (rd > 0.0 && zx == zx) ? zx : -INFINITY;
    }
}

/* msvm_partner_gains with the room upward of each variable, its group's counted (as in
 * msvm_group_masks), in place of U[x] < Uhi[x]. */
MSVM_GROUP_PLAIN
static void msvm_group_partner_gains(const double *restrict z, const double *restrict U,
                                     const double *restrict Uhi, const double *restrict gru,
                                     const int *restrict li, const double *restrict kd,
                                     const double *restrict row, int i0, int i1, int skip,
                                     double za, double kpn2, double Kaa, double curv_min,
                                     double *restrict gain)
{
    int x, l;
    double c, d, g, ru;
    for (x = i0; x < i1; x++) {
        ru = Uhi[x] - U[x];
        ru = gru[x] < ru ? gru[x] : ru;
        l = li[x];
        c = kpn2 * (Kaa + kd[l] - 2.0 * row[l]);
        c = curv_min > c ? curv_min : c;
        d = za - z[x];
        g = d * d / c;
        gain[x] = (x != skip && z[x] < za && ru > 0.0 && g == g) ? g : -1.0;
    }
}

/* The partner of a grouped pair step: msvm_bucket_partner's choice over the gains above. */
static int msvm_group_partner(const double *z, const double *U, const double *Uhi,
                              const double *gru, const int *li, const double *kd,
                              const double *row, int i0, int i1, int skip, double za,
                              double kpn2, double Kaa, double curv_min, double *gain,
                              double *best_gain)
{
    double m;
    msvm_group_partner_gains(z, U, Uhi, gru, li, kd, row, i0, i1, skip, za, kpn2, Kaa,
                             curv_min, gain);
    m = msvm_max(gain, i0, i1);
    if (!(m > -1.0)) {
        *best_gain = -1.0;
        return -1;
    }
    *best_gain = m;
    return msvm_first(gain, i0, i1, m);
}

/* dFt[j * ni + a] = sum over c = 0 .. ni - 1 of KT[c * ni + a] D[c * k + j] (slot-major
 * result, ni x ni block KT transposed: KT[c * ni + a] = K[a][c]), each sum's terms added in
 * the order of c from a zero start, the terms with D = 0 left out (they add a zero of
 * either sign to a sum that never holds -0: no value changes).  The plain loop runs each
 * sum on its own; here the vectors run across a. */
MSVM_GROUP_PLAIN
static void msvm_free_block_product(const double *restrict KT, const double *restrict D,
                                    double *restrict dFt, int ni, int k)
{
    int a, c, j;
    double d;
    const double *restrict col;
    double *restrict y;
    for (a = 0; a < ni * k; a++)
        dFt[a] = 0.0;
    for (c = 0; c < ni; c++) {
        col = KT + (ptrdiff_t) c * ni;
        for (j = 0; j < k; j++) {
            d = D[(ptrdiff_t) c * k + j];
            if (d == 0.0)
                continue;
            y = dFt + (ptrdiff_t) j * ni;
            for (a = 0; a < ni; a++)
                y[a] = y[a] + col[a] * d;
        }
    }
}

#endif
