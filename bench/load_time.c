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
#include <time.h>

#include <mopt/mopt.h>

#define MAX_IO 16

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, mopt_status st) {
    fprintf(stderr, "load_time: %s: %s: %s\n", what, mopt_status_string(st), mopt_last_error());
    return 1;
}

static mopt_status make_input(const mopt_model *m, size_t i, mopt_tensor **out) {
    int rank = mopt_model_io_rank(m, MOPT_INPUT, i);
    int64_t dims[MOPT_MAX_RANK];
    if (rank < 0 || rank > MOPT_MAX_RANK) return MOPT_ERR_UNSUPPORTED;
    for (int a = 0; a < rank; a++) {
        int64_t d = mopt_model_io_dim(m, MOPT_INPUT, i, a);
        dims[a] = d > 0 ? d : 1;
    }
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
    mopt_options *opts = NULL;
    mopt_model *model = NULL;
    mopt_session *sess = NULL;
    mopt_tensor *in[MAX_IO] = {0}, *out[MAX_IO] = {0};
    size_t n_in = 0, n_out = 0;
    mopt_status st = mopt_options_create(&opts);
    if (!st) st = mopt_options_set_int(opts, "opt_level", opt_level);
    if (!st) st = mopt_options_set_int(opts, "threads", threads);
    if (st) return fail("options", st);
    double c0 = cpu_s(), t0 = now_s();
    if ((st = mopt_model_load(path, opts, &model)) != MOPT_OK) {
        rc = fail("load", st);
        goto done;
    }
    double t1 = now_s();
    if ((st = mopt_session_create(model, opts, &sess)) != MOPT_OK) {
        rc = fail("session", st);
        goto done;
    }
    double t2 = now_s(), c2 = cpu_s();
    n_in = mopt_model_io_count(model, MOPT_INPUT);
    n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    if (n_in > MAX_IO || n_out > MAX_IO) {
        fprintf(stderr, "load_time: at most %d inputs and outputs\n", MAX_IO);
        rc = 1;
        goto done;
    }
    for (size_t i = 0; i < n_in; i++)
        if ((st = make_input(model, i, &in[i])) != MOPT_OK) {
            rc = fail("input", st);
            goto done;
        }
    double t3 = now_s(), c3 = cpu_s();
    st = mopt_session_run(sess, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL, out);
    double t4 = now_s(), c4 = cpu_s();
    if (st) {
        rc = fail("run", st);
        goto done;
    }
    printf("{\"opt_level\": %d, \"nodes_after\": %zu, \"load_s\": %.6f, \"session_s\": %.6f, "
           "\"first_run_s\": %.6f, \"total_s\": %.6f, \"total_cpu_s\": %.6f}\n",
           opt_level, mopt_model_node_count(model), t1 - t0, t2 - t1, t4 - t3,
           (t1 - t0) + (t2 - t1) + (t4 - t3), (c2 - c0) + (c4 - c3));
done:
    for (size_t i = 0; i < MAX_IO; i++) {
        mopt_tensor_destroy(in[i]);
        mopt_tensor_destroy(out[i]);
    }
    mopt_session_destroy(sess);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
    return rc;
}
