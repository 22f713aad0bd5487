/*
 * cpu_pool.c — cpu_parallel_for on the library's own worker threads (not
 * OpenMP), built for machines where other processes hold cores:
 *  - the calling thread takes part: it claims chunks like the workers;
 *  - chunks are claimed one at a time (an atomic counter), so a worker that
 *    is descheduled holds up at most the chunk it claimed;
 *  - the caller never waits for a worker to *start*: chunks nobody claimed
 *    it runs itself, and it waits only for claimed chunks to finish. A
 *    worker that wakes late finds the job gone (or all chunks claimed) and
 *    sleeps again;
 *  - idle workers sleep on a condition variable (no spinning, so they take
 *    no CPU from other processes).
 * One job at a time: a second caller (another session's thread) arriving
 * while a job runs does its range alone. Workers are started on first use,
 * up to the largest thread count asked for (at most POOL_MAX), and live
 * until the process exits.
 *
 * Metering: a job carries the caller's cpu_meter (cpu_meter.h: its
 * mopt_threadpool's count of threads at work, NULL outside one). A worker
 * counts itself in it around each chunk it runs and leaves it before the
 * chunk is marked finished, so once the caller returns (and its run hands
 * the cores back to the pool) none of its workers is still counted. The
 * caller itself is counted by the runtime for its whole run.
 *
 * cpu_parallel_for_omp (at the end) splits the same chunks on the OpenMP
 * team instead, for kernels that run between oneDNN nodes (cpu_kernels.h).
 *
 * Claiming: `claim` packs the job's generation (high 32 bits) with the next
 * chunk index (low 32 bits). A worker copies a job's description under the
 * lock, then claims only with a compare-exchange that still sees its
 * generation, so it can never take a chunk of a later job. The caller
 * returns only when every chunk of its job is done, so the job (on the
 * caller's stack) is never read after that.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/cpu_meter.h"

#define POOL_MAX 63
/* Chunks per thread: enough that one descheduled thread stalls at most a
 * small slice of the op, few enough that claiming stays cheap next to a
 * chunk's work. */
#define CHUNKS_PER_THREAD 8

typedef struct pool_job {
    cpu_range_fn fn;
    void *arg;
    int64_t n, nc;
    cpu_meter *meter; /* the caller's, or NULL */
} pool_job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;      /* workers: a job was posted */
    pthread_cond_t done;      /* caller: the last chunk finished */
    const pool_job *job;      /* the open job, NULL when none (mu) */
    uint32_t gen;             /* the open job's generation (mu) */
    int seats;                /* workers that may still join the open job (mu) */
    int workers;              /* started (mu) */
    _Atomic uint64_t claim;   /* gen << 32 | next chunk */
    _Atomic int64_t finished; /* chunks done of the open job */
} g_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};

/* Claims the next chunk of generation gen, or -1 when none is left (or the
 * job is another generation's). */
static int64_t claim(uint32_t gen, int64_t nc) {
    uint64_t cur = atomic_load_explicit(&g_pool.claim, memory_order_relaxed);
    for (;;) {
        if ((uint32_t)(cur >> 32) != gen || (int64_t)(cur & 0xffffffffu) >= nc) return -1;
        if (atomic_compare_exchange_weak_explicit(&g_pool.claim, &cur, cur + 1,
                                                  memory_order_acq_rel, memory_order_relaxed))
            return (int64_t)(cur & 0xffffffffu);
    }
}

static _Thread_local cpu_meter *tl_meter;

cpu_meter *cpu_meter_bound(void) { return tl_meter; }

cpu_meter *cpu_meter_bind(cpu_meter *m) {
    cpu_meter *old = tl_meter;
    tl_meter = m;
    return old;
}

void cpu_meter_add(cpu_meter *m, int k) {
    if (!m || k == 0) return;
    int now = atomic_fetch_add_explicit(&m->active, k, memory_order_acq_rel) + k;
    int peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(
                             &m->peak, &peak, now, memory_order_acq_rel, memory_order_relaxed)) {
    }
}

/* Runs chunks of job j (generation gen) until none is left; true when this
 * thread finished the job's last chunk. `worker`: count each chunk in the
 * job's meter (the caller is counted already). */
static bool run_chunks(const pool_job *j, uint32_t gen, bool worker) {
    bool last = false;
    cpu_meter *m = worker ? j->meter : NULL;
    for (int64_t c; (c = claim(gen, j->nc)) >= 0;) {
        cpu_meter_add(m, 1);
        j->fn(j->arg, j->n * c / j->nc, j->n * (c + 1) / j->nc);
        cpu_meter_add(m, -1);
        if (atomic_fetch_add_explicit(&g_pool.finished, 1, memory_order_acq_rel) + 1 == j->nc)
            last = true;
    }
    return last;
}

static void *worker(void *unused) {
    (void)unused;
    uint32_t seen = 0;
    pthread_mutex_lock(&g_pool.mu);
    for (;;) {
        while (!g_pool.job || g_pool.gen == seen || g_pool.seats == 0)
            pthread_cond_wait(&g_pool.wake, &g_pool.mu);
        seen = g_pool.gen;
        g_pool.seats--;
        pool_job j = *g_pool.job; /* a copy: the caller's may be gone later */
        pthread_mutex_unlock(&g_pool.mu);
        bool last = run_chunks(&j, seen, true);
        pthread_mutex_lock(&g_pool.mu);
        if (last) pthread_cond_signal(&g_pool.done);
    }
    return NULL;
}

/* fork(): the child has none of the workers and none of the other threads'
 * jobs. prepare takes mu so that the child's copy is consistent. */
static void atfork_prepare(void) { pthread_mutex_lock(&g_pool.mu); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_pool.mu); }
static void atfork_child(void) {
    g_pool.job = NULL;
    g_pool.seats = 0;
    g_pool.workers = 0;
    pthread_mutex_unlock(&g_pool.mu);
}
static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;
static void atfork_register(void) { pthread_atfork(atfork_prepare, atfork_parent, atfork_child); }

/* Starts workers up to `want` (under mu); fewer when the system refuses
 * (the caller then runs more chunks itself). Workers block every signal, so
 * the host's signals go to its own threads. */
static void ensure_workers(int want) {
    if (want > POOL_MAX) want = POOL_MAX;
    if (g_pool.workers >= want) return;
    pthread_once(&g_atfork_once, atfork_register);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    while (g_pool.workers < want) {
        pthread_t t;
        pthread_attr_t at;
        if (pthread_attr_init(&at) != 0) break;
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&t, &at, worker, NULL);
        pthread_attr_destroy(&at);
        if (rc != 0) break;
        g_pool.workers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The threads (returned) and chunks (*nc) for n items in chunks of at
 * least `grain`, up to CHUNKS_PER_THREAD per thread; 1 thread: run it
 * directly. */
static int64_t split(int threads, int64_t n, int64_t grain, int64_t *nc) {
    int64_t most = n / (grain < 1 ? 1 : grain); /* chunks of at least `grain` items */
    int64_t nt = most < threads ? most : threads;
    if (nt > POOL_MAX + 1) nt = POOL_MAX + 1;
    *nc = nt * CHUNKS_PER_THREAD < most ? nt * CHUNKS_PER_THREAD : most;
    if (*nc > 0x7fffffff) *nc = 0x7fffffff;
    return nt;
}

void cpu_parallel_for(int threads, int64_t n, int64_t grain, cpu_range_fn fn, void *arg) {
    if (n <= 0) return;
    int64_t nc, nt = split(threads, n, grain, &nc);
    if (nt <= 1) {
        fn(arg, 0, n);
        return;
    }
    pthread_mutex_lock(&g_pool.mu); /* held only for bookkeeping, never for work */
    if (g_pool.job) {               /* another thread's job is running: do this one alone */
        pthread_mutex_unlock(&g_pool.mu);
        fn(arg, 0, n);
        return;
    }
    pool_job j = {fn, arg, n, nc, tl_meter};
    ensure_workers((int)nt - 1);
    uint32_t gen = ++g_pool.gen;
    if (gen == 0) gen = ++g_pool.gen; /* 0 is a worker's "seen nothing" */
    atomic_store_explicit(&g_pool.finished, 0, memory_order_relaxed);
    atomic_store_explicit(&g_pool.claim, (uint64_t)gen << 32, memory_order_release);
    g_pool.job = &j;
    g_pool.seats = (int)nt - 1;
    if (g_pool.workers > 0) pthread_cond_broadcast(&g_pool.wake);
    pthread_mutex_unlock(&g_pool.mu);

    run_chunks(&j, gen, false);

    pthread_mutex_lock(&g_pool.mu);
    /* every chunk is claimed; wait for the ones other threads still run */
    while (atomic_load_explicit(&g_pool.finished, memory_order_acquire) < nc)
        pthread_cond_wait(&g_pool.done, &g_pool.mu);
    g_pool.job = NULL;
    g_pool.seats = 0;
    pthread_mutex_unlock(&g_pool.mu);
}

void cpu_parallel_for_omp(int threads, int64_t n, int64_t grain, cpu_range_fn fn, void *arg) {
#ifdef _OPENMP
    if (n <= 0) return;
    int64_t nc, nt = split(threads, n, grain, &nc);
    if (nt <= 1) {
        fn(arg, 0, n);
        return;
    }
    /* the team's other threads are at work for the caller's meter (as
     * mopt_omp_enter counts a oneDNN call's); num_threads leaves the
     * caller's OpenMP settings as they are */
    cpu_meter_add(tl_meter, (int)nt - 1);
#pragma omp parallel for num_threads((int)nt) schedule(dynamic, 1)
    for (int64_t c = 0; c < nc; c++)
        fn(arg, n * c / nc, n * (c + 1) / nc);
    cpu_meter_add(tl_meter, -((int)nt - 1));
#else
    cpu_parallel_for(threads, n, grain, fn, arg);
#endif
}
