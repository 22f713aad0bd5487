/*
 * load_time.c — times the load path of one model through the public API:
 * mopt_model_load, mopt_session_create and the first mopt_session_run
 * (which plans memory and binds kernels), wall clock, one thread. Written for
 * bench/load_time.py, which generates N-node chains and calls this once per
 * (model, opt level); not a test. Inputs are float32 zeros of the model's
 * shape (symbolic dims as 1).
 *
 * usage: load_time MODEL.onnx [--opt-level N] [--threads N]
 * Prints one JSON object: {"opt_level", "nodes_after", "load_s", "session_s",
 * "first_run_s", "total_s" (wall), "total_cpu_s" (process CPU time of the same
 * three steps)}. Exit status: 0 ok, 1 a libmopt error, 2 usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain_bench.h"

/* A zero-filled input of the model's dtype and shape. */
static mopt_status make_input(const mopt_model *m, size_t i, mopt_tensor **out) {
    int64_t dims[MOPT_MAX_RANK];
    int rank = chain_input_dims(m, i, dims);
    if (rank < 0) return MOPT_ERR_UNSUPPORTED;
    mopt_status st = mopt_tensor_create(mopt_model_io_dtype(m, MOPT_INPUT, i), rank, dims, out);
    if (!st) memset(mopt_tensor_data(*out), 0, mopt_tensor_size_bytes(*out));
    return st;
}

int main(int argc, char **argv) {
    const char *path = NULL;
    int opt_level = 3, threads = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--opt-level") == 0 && i + 1 < argc)
            opt_level = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (argv[i][0] == '-' || path)
            path = NULL, i = argc;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: load_time MODEL.onnx [--opt-level N] [--threads N]\n");
        return 2;
    }
    int rc = 0;
    chain_run ch = {0};
    mopt_status st = chain_options(&ch, opt_level, threads);
    if (st) return chain_fail("load_time", "options", st);
    double c0 = chain_clock_s(CLOCK_PROCESS_CPUTIME_ID), t0 = chain_clock_s(CLOCK_MONOTONIC);
    if ((st = mopt_model_load(path, ch.opts, &ch.model)) != MOPT_OK) {
        rc = chain_fail("load_time", "load", st);
        goto done;
    }
    double t1 = chain_clock_s(CLOCK_MONOTONIC);
    if ((st = mopt_session_create(ch.model, ch.opts, &ch.sess)) != MOPT_OK) {
        rc = chain_fail("load_time", "session", st);
        goto done;
    }
    double t2 = chain_clock_s(CLOCK_MONOTONIC), c2 = chain_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    ch.n_in = mopt_model_io_count(ch.model, MOPT_INPUT);
    ch.n_out = mopt_model_io_count(ch.model, MOPT_OUTPUT);
    if (ch.n_in > CHAIN_MAX_IO || ch.n_out > CHAIN_MAX_IO) {
        fprintf(stderr, "load_time: at most %d inputs and outputs\n", CHAIN_MAX_IO);
        rc = 1;
        goto done;
    }
    if ((rc = chain_make_inputs("load_time", ch.model, ch.n_in, make_input, ch.in))) goto done;
    double t3 = chain_clock_s(CLOCK_MONOTONIC), c3 = chain_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    st = mopt_session_run(ch.sess, ch.n_in, NULL, (const mopt_tensor *const *)ch.in, ch.n_out, NULL,
                          ch.out);
    double t4 = chain_clock_s(CLOCK_MONOTONIC), c4 = chain_clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (st) {
        rc = chain_fail("load_time", "run", st);
        goto done;
    }
    printf("{\"opt_level\": %d, \"nodes_after\": %zu, \"load_s\": %.6f, \"session_s\": %.6f, "
           "\"first_run_s\": %.6f, \"total_s\": %.6f, \"total_cpu_s\": %.6f}\n",
           opt_level, mopt_model_node_count(ch.model), t1 - t0, t2 - t1, t4 - t3,
           (t1 - t0) + (t2 - t1) + (t4 - t3), (c2 - c0) + (c4 - c3));
done:
    chain_release(&ch);
    return rc;
}
