/* The row cache's store (msvm/_core/_rows.pyx: CachedRows): capacity kernel rows in one block.
 *
 * The store is claimed row by row from its start (a fit touches only the rows it computes),
 * so its memory is faulted in as the rows are first written.  With the 4 KB pages of a
 * plain malloc a fit pays one page fault every 4 KB of rows it computes: on pendigits
 * (WestonWatkinsMSVM, about 1,150 rows of 7,694 float32 values, 35 MB) some 8,600 faults,
 * a sixth of the fit's CPU time.  Here a store of at least `huge_min` bytes is instead an
 * anonymous mapping aligned to 2 MB and marked MADV_HUGEPAGE, so that where the kernel's
 * transparent huge pages are "madvise" or "always" each fault brings in (and zeroes) 2 MB
 * at once: the same memory touched in 512 times fewer faults.  The values stored do not
 * depend on the pages.  Where THP is "never", or madvise fails, the mapping simply gets
 * 4 KB pages; elsewhere than Linux (or below huge_min, or huge_min 0) the store is malloc'd.
 * The memory resident is the rows touched rounded up to 2 MB (the rows are claimed from the
 * store's start), so a fit's peak memory moves by at most 2 MB.
 *
 * By default only from n = 20,000 samples on (_rows.pyx: HUGE_STORE_SAMPLES): on a virtual
 * machine whose balloon reports
 * free blocks of 2 MB and more to the host (virtio-balloon free page reporting, order 9),
 * the host discards those blocks, and a huge page taken from one is faulted in again by the
 * host, 4 KB at a time: a third of the pendigits fits measured lost 50-100 ms where the
 * warm ones gained 20-25 ms.  4 KB pages mostly come from the guest's warm low-order lists.
 *
 * msvm_store_alloc(bytes, huge_min, &mapped) returns the store (NULL if none could be had)
 * and sets mapped to the mapping's length (0: malloc'd); msvm_store_free(p, mapped)
 * releases it.
 */
#ifndef MSVM_ROW_STORE_H
#define MSVM_ROW_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__linux__)
#include <sys/mman.h>
#define MSVM_MAPPED_STORE 1
#endif

#define MSVM_HUGE_PAGE ((size_t)2 << 20)

static void* msvm_store_alloc(size_t bytes, size_t huge_min, size_t* mapped)
{
    *mapped = 0;
#ifdef MSVM_MAPPED_STORE
    if (huge_min > 0 && bytes >= huge_min) {
        size_t len = (bytes + MSVM_HUGE_PAGE - 1) & ~(MSVM_HUGE_PAGE - 1);
        /* one huge page more than needed, then the unaligned head and the tail cut off */
        char* raw = (char*)mmap(NULL, len + MSVM_HUGE_PAGE, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw != (char*)MAP_FAILED) {
            uintptr_t start = ((uintptr_t)raw + MSVM_HUGE_PAGE - 1)
                              & ~(uintptr_t)(MSVM_HUGE_PAGE - 1);
            size_t head = (size_t)(start - (uintptr_t)raw);
            if (head > 0)
                munmap(raw, head);
            if (MSVM_HUGE_PAGE - head > 0)
                munmap((char*)start + len, MSVM_HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
            madvise((void*)start, len, MADV_HUGEPAGE);   /* failing: 4 KB pages */
#endif
            *mapped = len;
            return (void*)start;
        }
    }
#endif
    return malloc(bytes + 1);
}

static void msvm_store_free(void* p, size_t mapped)
{
    if (p == NULL)
        return;
#ifdef MSVM_MAPPED_STORE
    if (mapped > 0) {
        munmap(p, mapped);
        return;
    }
#endif
    free(p);
}

#endif
