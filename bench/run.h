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

/* bench_run in steps, for callers that interleave the timed runs of several
 * configurations (mopt tune). bench_open: options, load, session, inputs,
 * first run and warm-up (r gets load/session/first-run times, and the peak
 * RSS at the end of the warm-up); 0, or -1 with r->error set and nothing
 * left open. bench_time: n timed runs, their times in ms into samples_ms
 * (and the profile, when c->profile asks for it). bench_finish: latency,
 * throughput and session statistics of samples into r (r->ok = 1). Both 0
 * or -1 with r->error. bench_close frees l (NULL is fine). */
typedef struct bench_live bench_live;
int bench_open(const bench_config *c, const bench_run_opts *opts, bench_result *r, bench_live **l);
int bench_time(bench_live *l, bench_result *r, size_t n, double *samples_ms);
int bench_finish(bench_live *l, bench_result *r, const double *samples, size_t n, double measure_s);
void bench_close(bench_live *l, bench_result *r);

/* A text progress bar: width characters, '#' for the done fraction frac
 * (clamped to [0, 1]) and '.' for the rest, then a NUL (bar holds width + 1). */
void bench_progress_bar(char *bar, int width, double frac);
/* The loaded model (to save it) and the session (to read the profile of the
 * last run), or NULL. */
struct mopt_model;
struct mopt_session;
const struct mopt_model *bench_live_model(const bench_live *l);
const struct mopt_session *bench_live_session(const bench_live *l);

#endif
