/*
 * node_overhead.c — per-node cost of the executor: runs a model of many tiny
 * nodes (bench/node_overhead.py writes a chain of 1,000 Add/Relu/Mul on a
 * [1, 8] tensor) many times through the public API and prints the median run
 * time divided by the node count of the loaded model. With work this small,
 * that is what the executor spends per node (dispatch, bookkeeping, shape
 * checks, allocation), not arithmetic. Not a test: run it by hand (a smoke run
 * in the meson suite "bench" only checks that it still works).
 *
 * Each sample times a batch of back-to-back runs with clock_gettime: the
 * calling thread's CPU time (the headline figure: with one thread the whole
 * run happens on the calling thread, and other processes on a shared machine
 * do not count) and the wall clock. A batch lasts at least ~100 us (one run
 * of the 1,000-node chain; ~100 runs of a 1-node one), so that the clock's
 * own cost (a system call for the CPU-time clock) stays out of the figure.
 * Inputs are seeded uniform [-1, 1) floats; the outputs the first run
 * creates are reused by every later run. Uses only <mopt/mopt.h>.
 *
 * usage: node_overhead MODEL.onnx [--opt-level N] [--threads N] [--iterations N]
 *                      [--warmup N] [--batch K] [--json]
 * --iterations: timed samples (default 2000); --batch: runs per sample
 * (default 0: chosen as above); --json prints one JSON object instead of the
 * text lines.
 * Exit status: 0 ok, 1 a libmopt error, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain_bench.h"

typedef struct sample {
    double cpu_ns, wall_ns;
} sample;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n sorted values, nearest rank below. */
static double quantile(const double *sorted, size_t n, double q) {
    return sorted[(size_t)(q * (double)(n - 1))];
}

static int usage(void) {
    fprintf(stderr, "usage: node_overhead MODEL.onnx [--opt-level N] [--threads N] "
                    "[--iterations N] [--warmup N] [--json]\n");
    return 2;
}

/* A float32 input of the model's shape (symbolic dims taken as 1), seeded. */
static mopt_status make_input(const mopt_model *m, size_t i, mopt_tensor **out) {
    int64_t dims[MOPT_MAX_RANK];
    int rank = chain_input_dims(m, i, dims);
    if (rank < 0 || mopt_model_io_dtype(m, MOPT_INPUT, i) != MOPT_DTYPE_F32) {
        fprintf(stderr, "node_overhead: input %zu: only float32 inputs of known rank\n", i);
        return MOPT_ERR_UNSUPPORTED;
    }
    mopt_status st = mopt_tensor_create(MOPT_DTYPE_F32, rank, dims, out);
    if (st) return st;
    float *x = mopt_tensor_data(*out);
    uint32_t s = 2463534242u + (uint32_t)i;
    for (int64_t k = 0; k < mopt_tensor_element_count(*out); k++) {
        s ^= s << 13, s ^= s >> 17, s ^= s << 5;
        x[k] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    return MOPT_OK;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int opt_level = 0, threads = 1, json = 0;
    long iterations = 2000, warmup = 100, batch = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--opt-level") == 0 && i + 1 < argc) {
            opt_level = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            iterations = atol(argv[++i]);
        } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            warmup = atol(argv[++i]);
        } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            batch = atol(argv[++i]);
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' || path) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    if (!path || iterations < 1 || warmup < 0 || batch < 0 || threads < 0) return usage();

    int rc = 0;
    chain_run ch = {0};
    sample *s = calloc((size_t)iterations, sizeof *s);
    double *v = calloc((size_t)iterations, sizeof *v);
    mopt_status st = s && v ? chain_options(&ch, opt_level, threads) : MOPT_ERR_OUT_OF_MEMORY;
    if (st) {
        rc = chain_fail("node_overhead", "options", st);
        goto done;
    }
    double t0 = chain_clock_ns(CLOCK_MONOTONIC);
    st = mopt_model_load(path, ch.opts, &ch.model);
    double load_ms = (chain_clock_ns(CLOCK_MONOTONIC) - t0) * 1e-6;
    if (st) {
        rc = chain_fail("node_overhead", "load", st);
        goto done;
    }
    if ((st = mopt_session_create(ch.model, ch.opts, &ch.sess)) != MOPT_OK) {
        rc = chain_fail("node_overhead", "session", st);
        goto done;
    }
    ch.n_in = mopt_model_io_count(ch.model, MOPT_INPUT);
    ch.n_out = mopt_model_io_count(ch.model, MOPT_OUTPUT);
    if (ch.n_in > CHAIN_MAX_IO || ch.n_out > CHAIN_MAX_IO || ch.n_out == 0) {
        fprintf(stderr, "node_overhead: %zu inputs, %zu outputs: at most %d, at least 1 output\n",
                ch.n_in, ch.n_out, CHAIN_MAX_IO);
        rc = 1;
        goto done;
    }
    if ((rc = chain_make_inputs("node_overhead", ch.model, ch.n_in, make_input, ch.in))) goto done;
    size_t nodes = mopt_model_node_count(ch.model);
    /* the first run (plans, allocates the outputs), then the batch size */
    for (int r = 0; r < 2; r++) {
        double w0 = chain_clock_ns(CLOCK_MONOTONIC);
        st = mopt_session_run(ch.sess, ch.n_in, NULL, (const mopt_tensor *const *)ch.in, ch.n_out,
                              NULL, ch.out);
        if (st) {
            rc = chain_fail("node_overhead", "run", st);
            goto done;
        }
        double w = chain_clock_ns(CLOCK_MONOTONIC) - w0;
        if (r == 1 && batch == 0) batch = w >= 1e5 ? 1 : w < 10 ? 10000 : (long)(1e5 / w) + 1;
    }
    for (long r = 0; r < warmup + iterations; r++) {
        double c0 = chain_clock_ns(CLOCK_THREAD_CPUTIME_ID), w0 = chain_clock_ns(CLOCK_MONOTONIC);
        for (long b = 0; b < batch && st == MOPT_OK; b++)
            st = mopt_session_run(ch.sess, ch.n_in, NULL, (const mopt_tensor *const *)ch.in,
                                  ch.n_out, NULL, ch.out);
        double w1 = chain_clock_ns(CLOCK_MONOTONIC), c1 = chain_clock_ns(CLOCK_THREAD_CPUTIME_ID);
        if (st) {
            rc = chain_fail("node_overhead", "run", st);
            goto done;
        }
        if (r >= warmup)
            s[r - warmup] = (sample){(c1 - c0) / (double)batch, (w1 - w0) / (double)batch};
    }
    size_t n = (size_t)iterations;
    for (size_t i = 0; i < n; i++)
        v[i] = s[i].cpu_ns;
    qsort(v, n, sizeof *v, cmp_double);
    double cpu_p10 = quantile(v, n, 0.1), cpu_p50 = quantile(v, n, 0.5);
    double cpu_p90 = quantile(v, n, 0.9);
    for (size_t i = 0; i < n; i++)
        v[i] = s[i].wall_ns;
    qsort(v, n, sizeof *v, cmp_double);
    double wall_p50 = quantile(v, n, 0.5);
    double per_node = nodes ? cpu_p50 / (double)nodes : 0;
    if (json) {
        printf("{\"opt_level\": %d, \"threads\": %d, \"nodes\": %zu, "
               "\"iterations\": %ld, \"batch\": %ld, \"warmup\": %ld, \"load_ms\": %.3f, "
               "\"run_cpu_ns\": {\"p10\": %.0f, \"p50\": %.0f, \"p90\": %.0f}, "
               "\"run_wall_ns_p50\": %.0f, \"ns_per_node\": %.2f, \"wall_ns_per_node\": %.2f, "
               "\"mopt_version\": \"%s\"}\n",
               opt_level, threads, nodes, iterations, batch, warmup, load_ms, cpu_p10, cpu_p50,
               cpu_p90, wall_p50, per_node, nodes ? wall_p50 / (double)nodes : 0, mopt_version());
    } else {
        printf("%s: opt_level %d, %d thread%s, %zu nodes after load (%.1f ms), %ld samples of "
               "%ld run%s\n",
               path, opt_level, threads, threads == 1 ? "" : "s", nodes, load_ms, iterations, batch,
               batch == 1 ? "" : "s");
        printf("  run (thread CPU time, per run): median %.2f us, p10 %.2f us, p90 %.2f us; "
               "wall median %.2f us\n",
               cpu_p50 * 1e-3, cpu_p10 * 1e-3, cpu_p90 * 1e-3, wall_p50 * 1e-3);
        printf("  per node: %.1f ns (median run / nodes)\n", per_node);
    }
done:
    chain_release(&ch);
    free(s);
    free(v);
    return rc;
}
