/* The solver's threads (the estimators' n_threads): a loop over samples split into
 * contiguous parts shared between threads, for the kernel rows of a working set, the score
 * update after it (msvm/_core/_rows.pyx, _row_updates.h) and the global scan (_smo.pyx).
 *
 * msvm_parallel(n, parts, align, threads, fn, ctx) calls fn(ctx, t, lo, hi) once for every
 * part t < parts, [lo, hi) the t-th of `parts` contiguous ranges of [0, n) (msvm_part: equal
 * lengths rounded up to a multiple of `align`, the last shorter), on up to `threads` threads.
 * The parts depend on n, parts and align only, never on which thread runs them: a
 * computation whose every value comes from one sample's own terms (a score, a kernel value,
 * a sample's violation) gets the same values to the last bit whatever the number of
 * threads, and per-part results (maxima, candidate lists) combined in part order are those
 * of one pass in sample order.
 *
 * Method: one process-wide pool of worker threads (POSIX threads), created at the first
 * call that asks for them and asleep on a condition variable between calls.  The calling
 * thread takes parts itself from the start (a shared counter hands out the next part), and
 * the workers it wakes take the others as they come, so a call never waits for a thread
 * that is not running: on a loaded machine (more runnable threads than cores), a worker the
 * scheduler has not woken yet simply takes no part, and the caller does them all, at one
 * thread's cost and no more.  This is why the pool is not an OpenMP parallel region, whose
 * closing barrier waits for every thread of the team and whose waiting threads spin
 * (libgomp's default): under a load of 12 on 2 cores a fit took 13x its CPU time and 13x
 * its wall time with 2 OpenMP threads, against 1.0x with this pool.  Workers sleep rather
 * than spin, so idle threads cost no CPU time between the solver's calls.  One call at a
 * time uses the pool (another thread's fit meanwhile runs its parts alone, the same
 * values); a forked child starts without workers.  Workers block every signal: Ctrl-C
 * reaches the calling thread, which checks for it between calls (a call lasts
 * milliseconds).  Without POSIX threads (Windows), the parts run one after another in the
 * calling thread (msvm_threads_available() is 0).
 *
 * msvm_parallel is msvm_parallel_begin (the parts handed to the workers, returning at once)
 * then msvm_parallel_end (the caller takes the parts left, waits for the rest).  Between the
 * two the caller may do work of its own that touches nothing the parts touch: the SMO path
 * gathers a working set's scores and variables while the workers gather its kernel block
 * (_smo.pyx: _load_block).  A job ends before the caller begins another; with one thread or
 * the pool busy, msvm_parallel_end runs every part in the calling thread.
 */
#ifndef MSVM_THREADS_H
#define MSVM_THREADS_H

#include <stddef.h>
#include <time.h>

#if !defined(_WIN32) && (defined(__unix__) || defined(__APPLE__))
#define MSVM_POSIX_THREADS 1
#include <pthread.h>
#include <signal.h>
#endif

/* the least samples a part gets, and parts per thread (for balance: the caller starts at
 * once, a worker after its wake-up) */
#define MSVM_PART_MIN 1024
#define MSVM_PARTS_PER_THREAD 4
#define MSVM_MAX_PARTS 256

typedef void (*msvm_range_fn)(void *ctx, int part, ptrdiff_t lo, ptrdiff_t hi);

/* How many parts a loop over n samples takes with `threads` threads: 1 for one thread, else
 * up to MSVM_PARTS_PER_THREAD per thread, at most one per MSVM_PART_MIN samples. */
static int msvm_parts(ptrdiff_t n, int threads)
{
    ptrdiff_t most = n / MSVM_PART_MIN, want = (ptrdiff_t)threads * MSVM_PARTS_PER_THREAD;
    if (threads <= 1 || most <= 1)
        return 1;
    if (want > MSVM_MAX_PARTS)
        want = MSVM_MAX_PARTS;
    return (int)(most < want ? most : want);
}

/* [lo, hi): part t of `parts` of [0, n), lengths a multiple of align (but the last). */
static void msvm_part(ptrdiff_t n, int parts, int t, ptrdiff_t align, ptrdiff_t *lo,
                      ptrdiff_t *hi)
{
    ptrdiff_t chunk = (n + parts - 1) / parts;
    chunk = (chunk + align - 1) / align * align;
    *lo = (ptrdiff_t)t * chunk < n ? (ptrdiff_t)t * chunk : n;
    *hi = *lo + chunk < n ? *lo + chunk : n;
}

/* Seconds on the calling thread's CPU clock (thread_cpu) or the monotonic wall clock (for
 * the solver's profile, _smo.pyx: PROFILE); 0 where the clock is missing. */
static double msvm_clock(int thread_cpu)
{
#if defined(CLOCK_THREAD_CPUTIME_ID) && defined(CLOCK_MONOTONIC)
    struct timespec ts;
    if (clock_gettime(thread_cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#else
    (void)thread_cpu;
    return 0.0;
#endif
}

/* A loop handed out by msvm_parallel_begin: its parts, and whether the pool took it. */
typedef struct {
    msvm_range_fn fn;
    void *ctx;
    ptrdiff_t n, align;
    int parts, pooled;
} msvm_job_t;

static void msvm_job_record(msvm_job_t *job, ptrdiff_t n, int parts, ptrdiff_t align,
                            msvm_range_fn fn, void *ctx)
{
    job->fn = fn;
    job->ctx = ctx;
    job->n = n;
    job->parts = parts;
    job->align = align;
    job->pooled = 0;
}

/* part t of a job */
static void msvm_job_part(const msvm_job_t *job, int t)
{
    ptrdiff_t lo, hi;
    msvm_part(job->n, job->parts, t, job->align, &lo, &hi);
    job->fn(job->ctx, t, lo, hi);
}

/* every part of a job, one after another, in the calling thread */
static void msvm_job_serial(const msvm_job_t *job)
{
    int t;
    for (t = 0; t < job->parts; t++)
        msvm_job_part(job, t);
}

#ifdef MSVM_POSIX_THREADS

#define MSVM_MAX_WORKERS 255

typedef struct {
    pthread_mutex_t lock;       /* guards every field below */
    pthread_cond_t wake;        /* workers: parts to take */
    pthread_cond_t done;        /* the caller: its last part finished */
    pthread_mutex_t busy;       /* one call at a time */
    int workers;                /* started */
    int forked;                 /* pthread_atfork handler installed */
    msvm_job_t job;             /* the current call */
    int next, finished, seats;
    /* the timeline: the workers' wall time inside parts, summed, while timing is on */
    int timing;
    double worker_busy;
} msvm_pool_t;

static msvm_pool_t msvm_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
                                0, 0, {NULL, NULL, 0, 1, 0, 0}, 0, 0, 0, 0, 0.0};

static void *msvm_worker(void *arg)
{
    msvm_pool_t *P = &msvm_pool;
    msvm_job_t job;
    int t, timing;
    double t0 = 0.0;
    (void)arg;
    pthread_mutex_lock(&P->lock);
    for (;;) {
        while (P->next >= P->job.parts || P->seats <= 0)
            pthread_cond_wait(&P->wake, &P->lock);
        P->seats--;
        while (P->next < P->job.parts) {
            t = P->next++;
            job = P->job;
            timing = P->timing;
            pthread_mutex_unlock(&P->lock);
            if (timing)
                t0 = msvm_clock(0);
            msvm_job_part(&job, t);
            pthread_mutex_lock(&P->lock);
            if (timing)
                P->worker_busy += msvm_clock(0) - t0;
            if (++P->finished == P->job.parts)
                pthread_cond_signal(&P->done);
        }
    }
    return NULL;
}

/* in a forked child the workers are gone (and a lock may be held): start afresh */
static void msvm_pool_after_fork(void)
{
    msvm_pool_t *P = &msvm_pool;
    pthread_mutex_init(&P->lock, NULL);
    pthread_mutex_init(&P->busy, NULL);
    pthread_cond_init(&P->wake, NULL);
    pthread_cond_init(&P->done, NULL);
    P->workers = 0;
    P->job.parts = 0;
    P->next = 0;
    P->finished = 0;
    P->seats = 0;
}

/* Start workers up to `want` (under the lock); those that fail to start are not counted. */
static void msvm_pool_grow(int want)
{
    msvm_pool_t *P = &msvm_pool;
    pthread_t id;
    pthread_attr_t attr;
    sigset_t all, old;
    if (want > MSVM_MAX_WORKERS)
        want = MSVM_MAX_WORKERS;
    if (P->workers >= want)
        return;
    if (!P->forked) {
        pthread_atfork(NULL, NULL, msvm_pool_after_fork);
        P->forked = 1;
    }
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);      /* the workers inherit: no signals there */
    while (P->workers < want && pthread_create(&id, &attr, msvm_worker, NULL) == 0)
        P->workers++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
}

static int msvm_threads_available(void)
{
    return 1;
}

/* The workers' busy seconds since the last call (then reset to 0); on: timing from now on
 * (1), off (0), unchanged (-1). */
static double msvm_worker_seconds(int on)
{
    msvm_pool_t *P = &msvm_pool;
    double busy;
    pthread_mutex_lock(&P->lock);
    busy = P->worker_busy;
    P->worker_busy = 0.0;
    if (on >= 0)
        P->timing = on;
    pthread_mutex_unlock(&P->lock);
    return busy;
}

/* Hand the parts of a loop to the pool's workers and return at once (job: its record, on
 * the caller's stack until msvm_parallel_end): the caller meanwhile does work of its own
 * that touches nothing the parts touch, then msvm_parallel_end takes the parts no worker
 * has taken yet and waits for the others.  With one thread, or with the pool busy (another
 * call under way), nothing is handed out: msvm_parallel_end runs every part in the calling
 * thread. */
static void msvm_parallel_begin(msvm_job_t *job, ptrdiff_t n, int parts, ptrdiff_t align,
                                int threads, msvm_range_fn fn, void *ctx)
{
    msvm_pool_t *P = &msvm_pool;
    msvm_job_record(job, n, parts, align, fn, ctx);
    if (parts < 1 || threads <= 1 || pthread_mutex_trylock(&P->busy) != 0)
        return;
    job->pooled = 1;
    pthread_mutex_lock(&P->lock);
    msvm_pool_grow(threads - 1);
    P->job = *job;
    P->next = 0;
    P->finished = 0;
    P->seats = threads - 1;
    pthread_cond_broadcast(&P->wake);
    pthread_mutex_unlock(&P->lock);
}

/* The end of a job begun by msvm_parallel_begin: every part has run when it returns. */
static void msvm_parallel_end(msvm_job_t *job)
{
    msvm_pool_t *P = &msvm_pool;
    int t;
    if (!job->pooled) {
        msvm_job_serial(job);
        return;
    }
    pthread_mutex_lock(&P->lock);
    while (P->next < job->parts) {
        t = P->next++;
        pthread_mutex_unlock(&P->lock);
        msvm_job_part(job, t);
        pthread_mutex_lock(&P->lock);
        P->finished++;
    }
    while (P->finished < job->parts)
        pthread_cond_wait(&P->done, &P->lock);
    P->seats = 0;
    pthread_mutex_unlock(&P->lock);
    pthread_mutex_unlock(&P->busy);
    job->pooled = 0;
}

#else

static int msvm_threads_available(void)
{
    return 0;
}

static double msvm_worker_seconds(int on)
{
    (void)on;
    return 0.0;
}

static void msvm_parallel_begin(msvm_job_t *job, ptrdiff_t n, int parts, ptrdiff_t align,
                                int threads, msvm_range_fn fn, void *ctx)
{
    (void)threads;
    msvm_job_record(job, n, parts, align, fn, ctx);
}

static void msvm_parallel_end(msvm_job_t *job)
{
    msvm_job_serial(job);
}

#endif

/* fn(ctx, t, lo, hi) for every part t < parts of [0, n) (msvm_part), on up to `threads`
 * threads: the caller takes parts too, and returns when every part has run.  One part, or
 * one thread: the calling thread alone. */
static void msvm_parallel(ptrdiff_t n, int parts, ptrdiff_t align, int threads,
                          msvm_range_fn fn, void *ctx)
{
    msvm_job_t job;
    msvm_parallel_begin(&job, n, parts, align, parts <= 1 ? 1 : threads, fn, ctx);
    msvm_parallel_end(&job);
}

#endif
