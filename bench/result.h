/*
 * result.h — the figures measured for one configuration (bench_result),
 * filled by run.c and written out by report.c. Plain data, so that the
 * report code can be tested with made-up results.
 */
#ifndef MOPT_BENCH_RESULT_H
#define MOPT_BENCH_RESULT_H

#include <stdint.h>

#include "config.h"
#include "prof.h"
#include "stats.h"

/* One model input as it was fed. */
typedef struct bench_io {
    char name[128];
    char dtype[16];  /* "f32", "i64", ... */
    char source[16]; /* "random", "ones" or "file" */
    int rank;
    int64_t dims[BENCH_MAX_RANK];
} bench_io;

typedef struct bench_result {
    const bench_config *config; /* borrowed */
    int ok;                     /* 0: error says what failed */
    char error[1024];
    char label[256];
    /* effective settings (library defaults filled in) */
    char precision[32];
    char backend[32];
    int64_t threads;
    int64_t opt_level;
    bench_io io[16];
    int n_io;          /* inputs shown (at most 16) */
    int64_t items;     /* items per inference: the batch size */
    double load_ms;    /* mopt_model_load: parse + optimize */
    double session_ms; /* mopt_session_create */
    double first_run_ms;
    double measure_s; /* wall time of the measured runs */
    bench_latency latency_ms;
    double throughput_per_s;
    double items_per_s;
    int64_t peak_rss_bytes;
    int peak_rss_is_per_config; /* 1 if the peak was reset before this config */
    int64_t arena_bytes;
    int64_t peak_bytes;
    int64_t model_nodes;
    int64_t model_params;
    int profiled;
    bench_prof prof;      /* aggregated over the measured runs */
    char trace_path[512]; /* Chrome trace written, or "" */
} bench_result;

void bench_result_init(bench_result *r, const bench_config *c);
void bench_result_free(bench_result *r);

#endif
