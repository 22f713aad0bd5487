/*
 * run.h — running one configuration through libmopt's public API and
 * measuring it: load, first run, warm-up, timed runs, memory, profile.
 */
#ifndef MOPT_BENCH_RUN_H
#define MOPT_BENCH_RUN_H

#include "config.h"
#include "result.h"

typedef struct bench_run_opts {
    int progress; /* draw a progress bar on stderr */
} bench_run_opts;

/* Runs c and fills r (bench_result_init is done here). Returns 0 on success,
 * -1 with r->error set on failure. Never exits. */
int bench_run(const bench_config *c, const bench_run_opts *opts, bench_result *r);

#endif
