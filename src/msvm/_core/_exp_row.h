/* The exponential of a row of arguments, in place: the exp(-gamma ||x_i - x_r||^2) of a whole
 * RBF kernel row at once (msvm/_core/_rows.pyx).
 *
 * libm's exp is called once per value and cannot be vectorized; this loop is branch-free, so
 * the compiler vectorizes it (on x86-64 Linux with GCC also for AVX2+FMA and AVX-512, chosen
 * at load time: 0.5-1 ns a value against libm's 2.6 ns on this project's test machine).
 * Method (Cody and Waite):
 * x = m ln2 + r with m an integer and |r| <= ln2/2; exp(r) from a polynomial of degree 11,
 * times 2^m built from the exponent bits.  The polynomial interpolates exp at the 12
 * Chebyshev nodes of [-1.0001 ln2/2, 1.0001 ln2/2] (solved in exact rational arithmetic
 * from 60-digit values, the coefficients then rounded): 1.6e-17 relative error with its
 * rounded coefficients evaluated exactly, against 5e-18 for the Taylor polynomial of degree
 * 13 it replaced (round 13: two fused multiply-adds fewer a value; 3.3e-16 at degree 10).
 * Accuracy: within 2 ulp of libm's exp (tests/test_row_sources.py; 1 ulp measured).  Below
 * -708 the result is 0 (the true value is under 3.3e-308, a subnormal number); the RBF
 * kernel's arguments are never positive, and values are clamped at 709 all the same.
 */
#ifndef MSVM_EXP_ROW_H
#define MSVM_EXP_ROW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "_clones.h"

/* no trapping math inside this loop, so that its selects vectorize (they raise no
 * floating-point exception that anything here would read) */
#define MSVM_EXP_CLONES MSVM_CLONED(("no-trapping-math"))

/* result = exp(v) (0.0 below -708): the body of msvm_exp_row's and msvm_rbf_row32's loops,
 * one text so that both compile to the same operations. */
#define MSVM_EXP_OF(v_in, result)                                                           \
    do {                                                                                    \
        const double log2e = 1.4426950408889634;                                            \
        const double ln2_hi = 6.93147180369123816490e-01; /* trailing zeros: m ln2_hi exact */ \
        const double ln2_lo = 1.90821492927058770002e-10;                                   \
        const double shifter = 6755399441055744.0;     /* 1.5 2^52: rounds to an integer */ \
        double v = (v_in), t, m, r, p, scale;                                               \
        uint64_t bits;                                                                      \
        double under = v < -708.0 ? 0.0 : 1.0;                                              \
        v = v < -708.0 ? -708.0 : v;                                                        \
        v = v > 709.0 ? 709.0 : v;                                                          \
        t = v * log2e + shifter;                    /* m + shifter, m = round(v / ln2) */  \
        m = t - shifter;                                                                    \
        r = (v - m * ln2_hi) - m * ln2_lo;                                                  \
        p = 2.511004920481866e-08;                  /* ~ 1/11! */                           \
        p = p * r + 2.763265472252779e-07;                                                  \
        p = p * r + 2.755724088722987e-06;                                                  \
        p = p * r + 2.4801485441561313e-05;                                                 \
        p = p * r + 0.00019841269890076403;                                                 \
        p = p * r + 0.0013888888952352863;                                                  \
        p = p * r + 0.008333333333319589;                                                   \
        p = p * r + 0.04166666666648795;                                                    \
        p = p * r + 0.1666666666666668;                                                     \
        p = p * r + 0.5000000000000019;                                                     \
        p = p * r + 1.0;                                                                    \
        p = p * r + 1.0;                                                                    \
        memcpy(&bits, &t, sizeof bits);             /* low bits: m + 2^51 */                \
        bits = (bits + 1023) << 52;                 /* 2^m (the 2^51 shifts out) */         \
        memcpy(&scale, &bits, sizeof scale);                                                \
        (result) = p * scale * under;                                                       \
    } while (0)

MSVM_EXP_CLONES
static void msvm_exp_row(double *x, ptrdiff_t n)
{
    ptrdiff_t i;
    for (i = 0; i < n; i++)
        MSVM_EXP_OF(x[i], x[i]);
}

/* dst[r] = (float) (exp(-gamma max(sq_i + sq[r] - 2 dots[r], 0)) + shift) for r < n: an RBF
 * row from its dot products into single-precision storage in one pass, every value that of
 * msvm_rbf_args, msvm_exp_row, the shift (added to a value >= 0, so adding 0.0 changes
 * nothing) and msvm_store32 in turn: 2 dots[r] is written dots[r] + dots[r] (the same exact
 * value) so that no product is there to contract with the sum, as msvm_rbf_args forbids. */
MSVM_EXP_CLONES
static void msvm_rbf_row32(const double *dots, const double *sq, double sq_i, double gamma,
                           double shift, float *dst, ptrdiff_t n)
{
    ptrdiff_t r;
    for (r = 0; r < n; r++) {
        double dist = (sq_i + sq[r]) - (dots[r] + dots[r]), e;
        MSVM_EXP_OF(dist < 0.0 ? 0.0 : -gamma * dist, e);
        dst[r] = (float)(e + shift);
    }
}

/* The RBF exponent from the dot products, in place: x[r] = -gamma max(sq_i + sq[r] - 2 x[r], 0)
 * for r < n (0.0 for a negative distance).  The operations and their order are the plain
 * loop's, with no contraction into fused multiply-adds, so every value is that of the
 * baseline (SSE2) build whatever clone runs (the kernel matrix keeps its exact symmetry).
 * Vectorized for AVX-512 / AVX2 (n = 40,000, d = 20: this pass and the store below were a
 * quarter of computing a row in the compiled Cython loops). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define MSVM_ARGS_CLONES MSVM_CLONED(("no-trapping-math", "fp-contract=off"))

MSVM_ARGS_CLONES
static void msvm_rbf_args(double *x, const double *sq, double sq_i, double gamma, ptrdiff_t n)
{
    ptrdiff_t r;
    for (r = 0; r < n; r++) {
        double dist = sq_i + sq[r] - 2.0 * x[r];
        x[r] = dist < 0.0 ? 0.0 : -gamma * dist;
    }
}

/* dst[r] = (float) src[r] for r < n: a kernel row stored in single precision (rounded to
 * nearest, as one conversion at a time). */
MSVM_ARGS_CLONES
static void msvm_store32(float *dst, const double *src, ptrdiff_t n)
{
    ptrdiff_t r;
    for (r = 0; r < n; r++)
        dst[r] = (float)src[r];
}

#endif
