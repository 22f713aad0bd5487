/*
 * threadpool.c — mopt_threadpool: a budget of T cores that sessions share,
 * so that N sessions never run more than T compute threads at once across
 * our own kernels (cpu_pool.c) and the OpenMP regions of oneDNN/OpenBLAS.
 *
 * A run takes a seat (one core, for its calling thread) before its first
 * node and gives it back after its last; when all T are held it waits, in
 * arrival order (a core given back goes straight to the oldest waiter, so a
 * session that loops on runs cannot take it again first). At
 * each node that would run on more than one thread it then takes up to
 * threads - 1 more cores WITHOUT waiting (only while no run waits for a
 * seat, so a waiting run is never starved by widening ones), runs the node
 * on 1 + what it got, and gives them back after the node. A node that gets
 * nothing runs on its calling thread alone: the caller always does the work
 * itself rather than wait for a worker. Each run's thread is bound to the
 * pool's cpu_meter, which counts the threads actually at work (the caller,
 * cpu_pool workers in a chunk, OpenMP teams at their size), for stats.
 *
 * The pool is reference-counted: mopt_threadpool_destroy drops the
 * caller's reference, every session (and every mopt_options) holding the
 * pool has its own, and the last release frees it.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "runtime/runtime.h"

mopt_threadpool *rt_pool_create(int threads) {
    mopt_threadpool *p = mopt_calloc(1, sizeof *p);
    if (!p) return NULL;
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        mopt_free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->seat_free, NULL) != 0) {
        pthread_mutex_destroy(&p->mu);
        mopt_free(p);
        return NULL;
    }
    p->threads = threads;
    p->free_cores = threads;
    atomic_init(&p->refs, 1);
    atomic_init(&p->sessions, 0);
    atomic_init(&p->meter.active, 0);
    atomic_init(&p->meter.peak, 0);
    return p;
}

void rt_pool_retain(mopt_threadpool *p) {
    if (p) atomic_fetch_add(&p->refs, 1);
}

void rt_pool_release(mopt_threadpool *p) {
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1) return;
    pthread_cond_destroy(&p->seat_free);
    pthread_mutex_destroy(&p->mu);
    mopt_free(p);
}

/* The pool this thread holds a seat of, and how deeply (a nested session's
 * run, inside its enclosing run on the same thread, reuses the seat). */
static _Thread_local mopt_threadpool *tl_pool;
static _Thread_local int tl_depth;
static _Thread_local cpu_meter *tl_saved_meter;

/* Hands n cores that came free to the runs waiting for a seat, oldest
 * first, and keeps the rest (mu held). */
static void give_back(mopt_threadpool *p, int n) {
    int handed = 0;
    while (n > 0 && p->granted < p->tickets) {
        p->granted++;
        n--;
        handed++;
    }
    p->free_cores += n;
    if (handed) pthread_cond_broadcast(&p->seat_free);
}

mopt_threadpool *rt_pool_enter(mopt_threadpool *p) {
    if (tl_pool) { /* nested: the enclosing run's seat (and pool) serve */
        tl_depth++;
        return tl_pool;
    }
    if (!p) return NULL;
    pthread_mutex_lock(&p->mu);
    p->runs++;
    if (p->free_cores > 0 && p->granted == p->tickets) {
        p->free_cores--;
    } else { /* first come, first served: a core freed is handed to the oldest waiter */
        int64_t t0 = mopt_now_ns();
        uint64_t mine = p->tickets++;
        p->waited_runs++;
        while (mine >= p->granted)
            pthread_cond_wait(&p->seat_free, &p->mu);
        p->wait_ns += (uint64_t)(mopt_now_ns() - t0);
    }
    pthread_mutex_unlock(&p->mu);
    tl_pool = p;
    tl_depth = 1;
    tl_saved_meter = cpu_meter_bind(&p->meter);
    cpu_meter_add(&p->meter, 1); /* the calling thread */
    return p;
}

void rt_pool_leave(mopt_threadpool *p) {
    if (!p) return;
    if (--tl_depth > 0) return;
    cpu_meter_add(&p->meter, -1);
    cpu_meter_bind(tl_saved_meter);
    tl_saved_meter = NULL;
    tl_pool = NULL;
    pthread_mutex_lock(&p->mu);
    give_back(p, 1);
    pthread_mutex_unlock(&p->mu);
}

int rt_pool_widen(mopt_threadpool *p, int want) {
    if (!p || want <= 0) return 0;
    pthread_mutex_lock(&p->mu);
    int got = p->granted < p->tickets ? 0 : (want < p->free_cores ? want : p->free_cores);
    p->free_cores -= got;
    p->parallel_nodes++;
    if (got < want) p->narrowed_nodes++;
    pthread_mutex_unlock(&p->mu);
    return got;
}

void rt_pool_narrow(mopt_threadpool *p, int got) {
    if (!p || got <= 0) return;
    pthread_mutex_lock(&p->mu);
    give_back(p, got);
    pthread_mutex_unlock(&p->mu);
}

void rt_pool_stats(mopt_threadpool *p, rt_pool_counts *c) {
    pthread_mutex_lock(&p->mu);
    c->runs = p->runs;
    c->waited_runs = p->waited_runs;
    c->wait_ns = p->wait_ns;
    c->parallel_nodes = p->parallel_nodes;
    c->narrowed_nodes = p->narrowed_nodes;
    c->cores_in_use = p->threads - p->free_cores;
    pthread_mutex_unlock(&p->mu);
    c->active_threads = atomic_load(&p->meter.active);
    c->peak_threads = atomic_load(&p->meter.peak);
    c->sessions = atomic_load(&p->sessions);
}
