/*
 * chain_bench.h — what the single-file chain benchmarks (load_time.c,
 * node_overhead.c) share: a clock reading, a libmopt failure message, an
 * input's shape with symbolic dims taken as 1, the options, making the
 * inputs and releasing what they created (chain_run). Public API only.
 */
#ifndef MOPT_BENCH_CHAIN_BENCH_H
#define MOPT_BENCH_CHAIN_BENCH_H

#include <stdio.h>
#include <time.h>

#include <mopt/mopt.h>

/* Most inputs and outputs a model may have. */
#define CHAIN_MAX_IO 16

/* The clock's reading in nanoseconds, and in seconds. */
static inline double chain_clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline double chain_clock_s(clockid_t clock) { return chain_clock_ns(clock) * 1e-9; }

/* Prints "prog: what: status: last error" and returns 1 (the exit status). */
static inline int chain_fail(const char *prog, const char *what, mopt_status st) {
    fprintf(stderr, "%s: %s: %s: %s\n", prog, what, mopt_status_string(st), mopt_last_error());
    return 1;
}

/* Input i's rank, its dims in dims[] (symbolic ones as 1); -1 when the rank
 * is unknown or above MOPT_MAX_RANK. */
static inline int chain_input_dims(const mopt_model *m, size_t i, int64_t *dims) {
    int rank = mopt_model_io_rank(m, MOPT_INPUT, i);
    if (rank < 0 || rank > MOPT_MAX_RANK) return -1;
    for (int a = 0; a < rank; a++) {
        int64_t d = mopt_model_io_dim(m, MOPT_INPUT, i, a);
        dims[a] = d > 0 ? d : 1;
    }
    return rank;
}

/* Makes inputs 0..n_in-1 with make; 0, or 1 after chain_fail when one
 * cannot be made. */
static inline int chain_make_inputs(const char *prog, const mopt_model *m, size_t n_in,
                                    mopt_status (*make)(const mopt_model *, size_t, mopt_tensor **),
                                    mopt_tensor **in) {
    for (size_t i = 0; i < n_in; i++) {
        mopt_status st = make(m, i, &in[i]);
        if (st != MOPT_OK) return chain_fail(prog, "input", st);
    }
    return 0;
}

/* What a chain benchmark creates: options, model, session, the inputs it
 * makes and the outputs of its runs (n_in, n_out of each). */
typedef struct chain_run {
    mopt_options *opts;
    mopt_model *model;
    mopt_session *sess;
    mopt_tensor *in[CHAIN_MAX_IO], *out[CHAIN_MAX_IO];
    size_t n_in, n_out;
} chain_run;

/* Creates r->opts with opt_level and threads set. */
static inline mopt_status chain_options(chain_run *r, int opt_level, int threads) {
    mopt_status st = mopt_options_create(&r->opts);
    if (!st) st = mopt_options_set_int(r->opts, "opt_level", opt_level);
    if (!st) st = mopt_options_set_int(r->opts, "threads", threads);
    return st;
}

/* Destroys what r holds (NULLs allowed): the tensors, the session, the model
 * and the options. */
static inline void chain_release(chain_run *r) {
    for (size_t i = 0; i < CHAIN_MAX_IO; i++) {
        mopt_tensor_destroy(r->in[i]);
        mopt_tensor_destroy(r->out[i]);
    }
    mopt_session_destroy(r->sess);
    mopt_model_destroy(r->model);
    mopt_options_destroy(r->opts);
}

#endif
