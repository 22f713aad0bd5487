/*
 * threadpool.c (api) — the public mopt_threadpool calls: create, destroy,
 * attach to options, statistics. The pool itself is lib/runtime/threadpool.c.
 */
#include <stddef.h>
#include <string.h>

#include "core/error.h"
#include "runtime/runtime.h"

#define POOL_MAX_THREADS 1024

mopt_status mopt_threadpool_create(int threads, const void *reserved, mopt_threadpool **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_threadpool_create: out is NULL");
    *out = NULL;
    if (reserved)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_threadpool_create: reserved must be NULL");
    if (threads < 0 || threads > POOL_MAX_THREADS)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_threadpool_create: threads %d is out of range (0..%d; 0: the "
                         "cores of this process)",
                         threads, POOL_MAX_THREADS);
    if (threads == 0) threads = rt_default_threads();
    mopt_threadpool *p = rt_pool_create(threads);
    if (!p) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating a thread pool");
    *out = p;
    return MOPT_OK;
}

void mopt_threadpool_destroy(mopt_threadpool *pool) { rt_pool_release(pool); }

mopt_status mopt_options_set_threadpool(mopt_options *opts, mopt_threadpool *pool) {
    mopt_clear_error();
    if (!opts)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_options_set_threadpool: opts is NULL");
    rt_pool_retain(pool);
    rt_pool_release(opts->pool);
    opts->pool = pool;
    return MOPT_OK;
}

mopt_status mopt_threadpool_get_stats(const mopt_threadpool *pool, mopt_threadpool_stats *stats) {
    mopt_clear_error();
    if (!pool || !stats)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_threadpool_get_stats: NULL argument");
    size_t min = offsetof(mopt_threadpool_stats, peak_threads) + sizeof stats->peak_threads;
    if (stats->struct_size < min)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_threadpool_get_stats: struct_size %zu is smaller than %zu",
                         stats->struct_size, min);
    rt_pool_counts c;
    rt_pool_stats((mopt_threadpool *)pool, &c);
    mopt_threadpool_stats full = {
        .struct_size = stats->struct_size,
        .threads = pool->threads,
        .sessions = c.sessions,
        .cores_in_use = c.cores_in_use,
        .active_threads = c.active_threads,
        .peak_threads = c.peak_threads,
        .runs = c.runs,
        .waited_runs = c.waited_runs,
        .wait_ns = c.wait_ns,
        .parallel_nodes = c.parallel_nodes,
        .narrowed_nodes = c.narrowed_nodes,
    };
    size_t n = stats->struct_size < sizeof full ? stats->struct_size : sizeof full;
    memcpy(stats, &full, n);
    return MOPT_OK;
}
