/* MSVM_CLONED(("option", ...)): the attributes of a vectorized loop of the compiled core
 * (_exp_row.h, _dense_dots.h).  GCC on x86-64 Linux compiles it again for AVX-512 and
 * AVX2+FMA machines (x86-64-v4 and -v3; AVX2 before GCC 12) besides the baseline one, chosen
 * at load time; GCC anywhere takes the given optimize options (e.g. no-trapping-math, so
 * that selects vectorize).  Other compilers: the plain function. */
#ifndef MSVM_CLONES_H
#define MSVM_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && __GNUC__ >= 12
#define MSVM_CLONED(opts) __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", \
                                                       "default"), optimize opts))
#elif defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define MSVM_CLONED(opts) __attribute__((target_clones("avx2", "default"), optimize opts))
#elif defined(__GNUC__) && !defined(__clang__)
#define MSVM_CLONED(opts) __attribute__((optimize opts))
#else
#define MSVM_CLONED(opts)
#endif

#endif
