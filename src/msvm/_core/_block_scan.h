/* The two passes over a bucket of a working set that the local SMO repeats at every step
 * (msvm/_core/_smo.pyx, problems without groups): the bucket's extreme candidates and the
 * second-order choice of a pair's partner.  On pendigits ReinforcedMSVM at C = 256 they are
 * about 45 % of a fit's CPU: a block of 512 samples takes thousands of steps, each passing
 * over a tenth of the block's variables twice.
 *
 * Each pass is split into loops the compiler vectorizes (gathers of the block's scores
 * through the variables' local samples, the divisions of the gains): one loop of
 * independent iterations computing every value, one reduction to the extreme value, and one
 * search for the first position holding it.  The results are those of the one-loop versions
 * to the last bit: every value comes from the same operations in the same order (no
 * contraction into fused multiply-adds, on every compiled version: AVX-512, AVX2,
 * baseline), and "the first position with the extreme value" is what a running extreme
 * with a strict comparison returns.  Values that are not numbers (a non-finite state, which
 * the next scan reports) make the search fail; then the one-loop version decides.
 */
#ifndef MSVM_BLOCK_SCAN_H
#define MSVM_BLOCK_SCAN_H

#include <math.h>
#include <stddef.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "_clones.h"

/* The reductions to an extreme value run with finite-math-only and no-signed-zeros (which
 * let them vectorize) over arrays that hold no NaN, where they change no value: they only
 * pick among values, and a zero of either sign is then found by the search (0.0 == -0.0).
 * Every other loop keeps IEEE semantics. */
#define MSVM_SCAN_PLAIN MSVM_CLONED(("no-trapping-math", "fp-contract=off"))
#define MSVM_SCAN_REDUCE MSVM_CLONED(("no-trapping-math", "fp-contract=off", \
                                      "finite-math-only", "no-signed-zeros"))

/* z[x] for the block variables x = i0 .. i1 - 1 of one bucket:
 *     kappa (Fp[l] - cs S[l]) + sconst + off[x] (+ kappa br Fq[l] when Fq is not NULL),
 * l = li[x] their local sample, the operations in this order; and, if masks, the
 * candidates' values for the extremes: vu[x] = z[x] if U[x] < Uhi[x] (else +inf), vl[x] = z[x] if
 * U[x] > Ulo[x] (else -inf), a NaN z counted as neither. */
MSVM_SCAN_PLAIN
static void msvm_bucket_z(const double *restrict Fp, const double *restrict Fq,
                          const double *restrict S, const int *restrict li,
                          const double *restrict off, const double *restrict U,
                          const double *restrict Ulo, const double *restrict Uhi,
                          double *restrict z, double *restrict vu, double *restrict vl,
                          int i0, int i1, double kappa, double br, double cs, double sconst,
                          int masks)
{
    int x, l;
    double zx;
    if (Fq == NULL) {
        for (x = i0; x < i1; x++)
            z[x] = kappa * (Fp[li[x]] - cs * S[li[x]]) + sconst + off[x];
    } else {
        for (x = i0; x < i1; x++) {
            l = li[x];
            z[x] = kappa * (Fp[l] - cs * S[l]) + sconst + off[x] + kappa * br * Fq[l];
        }
    }
    for (x = i0; x < i1 && masks; x++) {
        zx = z[x];
        vu[x] = (U[x] < Uhi[x] && zx == zx) ? zx : INFINITY;
        vl[x] = (U[x] > Ulo[x] && zx == zx) ? zx : -INFINITY;
    }
}

/* the smallest of vu[i0:i1] and the largest of vl[i0:i1] (i1 > i0, no NaN among them) */
MSVM_SCAN_REDUCE
static void msvm_min_max(const double *restrict vu, const double *restrict vl, int i0, int i1,
                         double *umin, double *lmax)
{
    int x;
    double u = vu[i0], l = vl[i0];
    for (x = i0 + 1; x < i1; x++) {
        u = vu[x] < u ? vu[x] : u;
        l = vl[x] > l ? vl[x] : l;
    }
    *umin = u;
    *lmax = l;
}

/* the largest of g[i0:i1] (i1 > i0, no NaN among them) */
MSVM_SCAN_REDUCE
static double msvm_max(const double *restrict g, int i0, int i1)
{
    int x;
    double m = g[i0];
    for (x = i0 + 1; x < i1; x++)
        m = g[x] > m ? g[x] : m;
    return m;
}

/* the first x in [i0, i1) with v[x] == value, or -1 */
static int msvm_first(const double *v, int i0, int i1, double value)
{
    int x;
    for (x = i0; x < i1; x++)
        if (v[x] == value)
            return x;
    return -1;
}

/* The bucket's extremes (i1 > i0, after msvm_bucket_z): the smallest z among the variables
 * below their upper bound (*up_z at *up_at; +inf and -1 if none) and the largest among those
 * above their lower bound (*lo_z at *lo_at; -inf and -1), each at the first position of its
 * value: what a running extreme with strict comparisons over z finds. */
static void msvm_bucket_extremes(const double *z, const double *vu, const double *vl, int i0,
                                 int i1, double *up_z, int *up_at, double *lo_z, int *lo_at)
{
    double u, l;
    msvm_min_max(vu, vl, i0, i1, &u, &l);
    *up_at = u < INFINITY ? msvm_first(vu, i0, i1, u) : -1;
    *lo_at = l > -INFINITY ? msvm_first(vl, i0, i1, l) : -1;
    *up_z = *up_at >= 0 ? z[*up_at] : INFINITY;
    *lo_z = *lo_at >= 0 ? z[*lo_at] : -INFINITY;
}

/* The second-order partner of a pair step in one bucket (Fan, Chen and Lin 2005): among the
 * block variables x = i0 .. i1 - 1 (i1 > i0) other than `skip`, below their upper bound and
 * with z[x] < za, the first with the largest gain (za - z[x])^2 / curv[x],
 *     curv[x] = max(kpn2 (Kaa + kd[l] - 2 row[l]), curv_min),   l = li[x]
 * (a NaN gain is never chosen).  Returns its position (-1 if there is none) and its gain in
 * *best_gain (-1 if none): what a running maximum with a strict comparison, starting from
 * -1, finds.  gain: scratch, written at i0 .. i1 - 1. */
MSVM_SCAN_PLAIN
static void msvm_partner_gains(const double *restrict z, const double *restrict U,
                               const double *restrict Uhi, const int *restrict li,
                               const double *restrict kd, const double *restrict row, int i0,
                               int i1, int skip, double za, double kpn2, double Kaa,
                               double curv_min, double *restrict gain)
{
    int x, l;
    double c, d, g;
    for (x = i0; x < i1; x++) {
        l = li[x];
        c = kpn2 * (Kaa + kd[l] - 2.0 * row[l]);
        c = curv_min > c ? curv_min : c;
        d = za - z[x];
        g = d * d / c;
        gain[x] = (x != skip && z[x] < za && U[x] < Uhi[x] && g == g) ? g : -1.0;
    }
}

static int msvm_bucket_partner(const double *z, const double *U, const double *Uhi,
                               const int *li, const double *kd, const double *row, int i0,
                               int i1, int skip, double za, double kpn2, double Kaa,
                               double curv_min, double *gain, double *best_gain)
{
    double m;
    msvm_partner_gains(z, U, Uhi, li, kd, row, i0, i1, skip, za, kpn2, Kaa, curv_min, gain);
    m = msvm_max(gain, i0, i1);
    if (!(m > -1.0)) {
        *best_gain = -1.0;
        return -1;
    }
    *best_gain = m;
    return msvm_first(gain, i0, i1, m);
}

/* The block's score updates of one step: y += t x (msvm_block_axpy) and y = (y + ta xa) +
 * tb xb (msvm_block_axpy2), each product rounded and then added, on every compiled version
 * (the Cython loops they replace ran on the baseline's two-wide vectors: at C = 256 on
 * pendigits the steps' updates were 15-20 % of the fit).  y never overlaps the x rows. */
MSVM_SCAN_PLAIN
static void msvm_block_axpy(double *restrict y, const double *restrict x, double t,
                            ptrdiff_t n)
{
    ptrdiff_t r;
    for (r = 0; r < n; r++)
        y[r] = y[r] + t * x[r];
}

MSVM_SCAN_PLAIN
static void msvm_block_axpy2(double *restrict y, const double *restrict xa, double ta,
                             const double *restrict xb, double tb, ptrdiff_t n)
{
    ptrdiff_t r;
    for (r = 0; r < n; r++)
        y[r] = (y[r] + ta * xa[r]) + tb * xb[r];
}

#endif
