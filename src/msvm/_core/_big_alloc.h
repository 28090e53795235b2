/* Memory for the kernel row cache (msvm/_core/_rows.pyx): on Linux, a block of 4 MB or more
 * is aligned to 2 MB and marked for transparent huge pages, so that the first touch of its
 * rows faults once per 2 MB instead of once per 4 kB page (pendigits: about 9,000 page faults
 * per fit, 8-15 % of its time in the kernel).  Release with free().  Elsewhere: malloc. */
#ifndef MSVM_BIG_ALLOC_H
#define MSVM_BIG_ALLOC_H

#include <stdlib.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

static void *msvm_big_alloc(size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (bytes >= 2 * huge) {
        void *p = NULL;
        size_t rounded = (bytes + huge - 1) / huge * huge;
        if (posix_memalign(&p, huge, rounded) != 0)
            return NULL;
        madvise(p, rounded, MADV_HUGEPAGE);   /* advice only: failure changes nothing */
        return p;
    }
#endif
    return malloc(bytes);
}

#endif
