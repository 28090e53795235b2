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
 * Round 15 (pendigits, 4 KB pages: a fit's store faults were 20-25 ms of a 0.12-0.15 s fit):
 *
 * - The spare store: a released store is kept (one per process, its first spare_max bytes
 *   resident, the rest of what its fit touched given back with MADV_DONTNEED) and handed to
 *   the next store of at most its size and of the same kind (malloc'd or mapped), so that
 *   a process's later fits write into pages already faulted in.  What a store holds when it
 *   is claimed does not matter (every row is written before it is read), so the values
 *   are those of a fresh store.  The spare is taken and given back with the GIL held (the
 *   row sources' construction and deallocation), which orders every access to it.
 * - Populating ahead: the rows of a store in 4 KB pages are claimed from its start, and
 *   when they pass the part already faulted in, the next `populate` bytes are faulted in
 *   at once (madvise MADV_POPULATE_WRITE, Linux 5.14 on: one call instead of a fault per
 *   page; about a third of the cost of faulting them one at a time).  Where the call
 *   fails the pages fault in as before.  At most `populate` bytes more are resident.
 *
 * msvm_store_alloc(bytes, huge_min, &mapped, &ready) returns the store (NULL if none could
 * be had), sets mapped to the mapping's length (0: malloc'd) and ready to how many bytes
 * from its start are already resident (a reused spare's); msvm_store_reach(p, mapped,
 * bytes, ready, need) faults in ahead so that need bytes are, and returns the new ready;
 * msvm_store_free(p, mapped, bytes, touched) releases it (or keeps it as the spare).
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

/* the spare store (see above): at most one, taken and given back with the GIL held */
typedef struct {
    void* p;
    size_t mapped;      /* as msvm_store_alloc's */
    size_t bytes;       /* the store's size */
    size_t ready;       /* bytes from its start resident */
} msvm_spare_store;

static msvm_spare_store msvm_spare = {NULL, 0, 0, 0};
static size_t msvm_spare_max = (size_t)64 << 20;   /* 0: no spare kept */
static size_t msvm_populate = (size_t)2 << 20;     /* 0: no populating ahead */

#define MSVM_PAGE ((size_t)4096)

static void msvm_store_release(void* p, size_t mapped)
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

/* the spare store, if any, given back for good */
static void msvm_spare_drop(void)
{
    msvm_store_release(msvm_spare.p, msvm_spare.mapped);
    msvm_spare.p = NULL;
    msvm_spare.mapped = msvm_spare.bytes = msvm_spare.ready = 0;
}

/* the pages wholly inside [lo, hi) of memory the caller owns: madvise(advice) on them
 * (0 if there are none); -1 where it fails or off Linux */
static int msvm_advise_inside(char* lo, char* hi, int advice)
{
#ifdef MSVM_MAPPED_STORE
    uintptr_t a = ((uintptr_t)lo + MSVM_PAGE - 1) & ~(uintptr_t)(MSVM_PAGE - 1);
    uintptr_t b = (uintptr_t)hi & ~(uintptr_t)(MSVM_PAGE - 1);
    if (b <= a)
        return 0;
    return madvise((void*)a, (size_t)(b - a), advice);
#else
    (void)lo;
    (void)hi;
    (void)advice;
    return -1;
#endif
}

static void* msvm_store_alloc(size_t bytes, size_t huge_min, size_t* mapped, size_t* ready)
{
    int want_mapped = 0;
    *mapped = 0;
    *ready = 0;
#ifdef MSVM_MAPPED_STORE
    want_mapped = huge_min > 0 && bytes >= huge_min;
#endif
    if (msvm_spare.p != NULL && msvm_spare_max > 0) {
        if (msvm_spare.bytes >= bytes && (msvm_spare.mapped > 0) == want_mapped) {
            void* p = msvm_spare.p;
            *mapped = msvm_spare.mapped;
            *ready = msvm_spare.ready < bytes ? msvm_spare.ready : bytes;
            msvm_spare.p = NULL;
            msvm_spare.mapped = msvm_spare.bytes = msvm_spare.ready = 0;
            return p;
        }
        msvm_spare_drop();     /* too small, or of the other kind */
    }
#ifdef MSVM_MAPPED_STORE
    if (want_mapped) {
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

/* need bytes of a store in 4 KB pages about to be written: when they pass ready, the pages
 * up to need + msvm_populate bytes (at most bytes) are faulted in at once; the new ready
 * (need where populating is off or fails, so that it is not tried again for these rows) */
static size_t msvm_store_reach(void* p, size_t mapped, size_t bytes, size_t ready, size_t need)
{
    size_t upto;
    if (need <= ready)
        return ready;
    if (msvm_populate == 0 || mapped > 0 || p == NULL)
        return need;
    upto = need + msvm_populate;
    upto = upto < bytes ? upto : bytes;
#if defined(MSVM_MAPPED_STORE) && defined(MADV_POPULATE_WRITE)
    if (msvm_advise_inside((char*)p + ready, (char*)p + upto, MADV_POPULATE_WRITE) != 0)
        return need;
    return upto;
#else
    return need;
#endif
}

/* the store released, or kept as the spare (its first msvm_spare_max bytes resident) when
 * none is held and the setting allows one */
static void msvm_store_free(void* p, size_t mapped, size_t bytes, size_t touched)
{
    if (p == NULL)
        return;
    if (msvm_spare_max == 0 || msvm_spare.p != NULL) {
        msvm_store_release(p, mapped);
        return;
    }
    touched = touched < bytes ? touched : bytes;
    if (touched > msvm_spare_max) {
        /* the pages past the limit given back (they read as zeros if faulted in again) */
        if (msvm_advise_inside((char*)p + msvm_spare_max, (char*)p + touched,
#ifdef MSVM_MAPPED_STORE
                               MADV_DONTNEED
#else
                               0
#endif
                               ) != 0) {
            msvm_store_release(p, mapped);
            return;
        }
        touched = msvm_spare_max;
    }
    msvm_spare.p = p;
    msvm_spare.mapped = mapped;
    msvm_spare.bytes = bytes;
    msvm_spare.ready = touched;
}

#endif
