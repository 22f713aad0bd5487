/*
 * pool_bench.c — N sessions of T threads each, closed loop on N threads,
 * with or without one shared mopt_threadpool, optionally beside a busy
 * background process (a forked busy loop pinned to the last CPU of this
 * process's affinity mask, as bench/realmodels.py's hog). Prints one line:
 * runs/s over all sessions, p50/p95/p99 latency of a run, the process's CPU
 * seconds per run and, with a pool, its peak threads at work, waited runs
 * and narrowed nodes. Inputs are made from the model's declared inputs:
 * symbolic axis 0 -> --batch, other symbolic axes -> --seq; integer inputs
 * get ids in [1, 1000) (1 for names containing "mask"), floats uniform in
 * [-1, 1) (fixed seed). Run by hand (not a test), e.g.:
 *   build/bench/pool_bench --model examples/models/bert_tiny.onnx \
 *       --sessions 4 --threads 2 --pool 2 --seconds 5 --hog
 * Public API only.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

#include "clock_bench.h"

#define MAX_IN 8
#define MAX_SESSIONS 64

typedef struct {
    const char *model_path;
    int sessions, threads, pool, hog;
    int64_t batch, seq;
    double seconds, warmup;
} config;

typedef struct {
    mopt_session *s;
    size_t n_in;
    const mopt_tensor *const *in;
    double t_start, t_end; /* the measured window */
    double *lat;
    size_t n_lat, cap_lat;
    int failed;
} client;

static void *client_main(void *p) {
    client *c = p;
    for (;;) {
        double t0 = bench_wall_s();
        if (t0 >= c->t_end) break;
        mopt_tensor *out[1] = {NULL};
        mopt_status st = mopt_session_run(c->s, c->n_in, NULL, c->in, 1, NULL, out);
        double t1 = bench_wall_s();
        mopt_tensor_destroy(out[0]);
        if (st) {
            fprintf(stderr, "run: %s\n", mopt_last_error());
            c->failed = 1;
            break;
        }
        if (t0 >= c->t_start && c->n_lat < c->cap_lat) c->lat[c->n_lat++] = t1 - t0;
    }
    return NULL;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double q) {
    if (!n) return 0;
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

/* A forked busy loop pinned to the last CPU we may use; its pid, or -1. */
static pid_t start_hog(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    int last = -1;
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &set)) last = i;
    pid_t pid = fork();
    if (pid == 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(last, &one);
        sched_setaffinity(0, sizeof one, &one);
        volatile uint64_t x = 0;
        for (;;)
            x++;
    }
    return pid;
}

static mopt_tensor *make_input(const mopt_model *m, size_t i, const config *cf, uint64_t *rng) {
    int rank = mopt_model_io_rank(m, MOPT_INPUT, i);
    int64_t dims[16];
    if (rank < 0 || rank > 16) return NULL;
    for (int a = 0; a < rank; a++) {
        int64_t d = mopt_model_io_dim(m, MOPT_INPUT, i, a);
        dims[a] = d >= 0 ? d : (a == 0 ? cf->batch : cf->seq);
    }
    mopt_dtype dt = mopt_model_io_dtype(m, MOPT_INPUT, i);
    mopt_tensor *t = NULL;
    if (mopt_tensor_create(dt, rank, dims, &t)) return NULL;
    size_t n = mopt_tensor_size_bytes(t) / mopt_dtype_size(dt);
    const char *name = mopt_model_io_name(m, MOPT_INPUT, i);
    int mask = name && strstr(name, "mask");
    void *d = mopt_tensor_data(t);
    for (size_t k = 0; k < n; k++) {
        *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(*rng >> 33);
        if (dt == MOPT_DTYPE_F32)
            ((float *)d)[k] = (float)r / 2147483648.0f * 2.0f - 1.0f;
        else if (dt == MOPT_DTYPE_I64)
            ((int64_t *)d)[k] = mask ? 1 : 1 + (int64_t)(r % 999);
        else if (dt == MOPT_DTYPE_I32)
            ((int32_t *)d)[k] = mask ? 1 : 1 + (int32_t)(r % 999);
        else {
            mopt_tensor_destroy(t);
            return NULL;
        }
    }
    return t;
}

static void usage(void) {
    fprintf(stderr, "usage: pool_bench --model PATH [--sessions N] [--threads T] [--pool P (0: "
                    "none)] [--batch B] [--seq S] [--seconds S] [--warmup S] [--hog]\n");
    exit(2);
}

int main(int argc, char **argv) {
    config cf = {NULL, 4, 2, 0, 0, 1, 64, 5.0, 1.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--hog")) {
            cf.hog = 1;
            continue;
        }
        if (!v) usage();
        if (!strcmp(a, "--model"))
            cf.model_path = v;
        else if (!strcmp(a, "--sessions"))
            cf.sessions = atoi(v);
        else if (!strcmp(a, "--threads"))
            cf.threads = atoi(v);
        else if (!strcmp(a, "--pool"))
            cf.pool = atoi(v);
        else if (!strcmp(a, "--batch"))
            cf.batch = atoll(v);
        else if (!strcmp(a, "--seq"))
            cf.seq = atoll(v);
        else if (!strcmp(a, "--seconds"))
            cf.seconds = atof(v);
        else if (!strcmp(a, "--warmup"))
            cf.warmup = atof(v);
        else
            usage();
        i++;
    }
    if (!cf.model_path || cf.sessions < 1 || cf.sessions > MAX_SESSIONS || cf.threads < 1 ||
        cf.pool < 0)
        usage();

    mopt_model *m = NULL;
    if (mopt_model_load(cf.model_path, NULL, &m)) {
        fprintf(stderr, "%s: %s\n", cf.model_path, mopt_last_error());
        return 1;
    }
    size_t n_in = mopt_model_io_count(m, MOPT_INPUT);
    if (n_in > MAX_IN) return 1;
    mopt_tensor *in[MAX_IN];
    uint64_t rng = 42;
    for (size_t i = 0; i < n_in; i++)
        if (!(in[i] = make_input(m, i, &cf, &rng))) {
            fprintf(stderr, "input %zu: unsupported dtype or rank\n", i);
            return 1;
        }
    mopt_threadpool *pool = NULL;
    if (cf.pool > 0 && mopt_threadpool_create(cf.pool, NULL, &pool)) {
        fprintf(stderr, "pool: %s\n", mopt_last_error());
        return 1;
    }
    mopt_options *o = NULL;
    if (mopt_options_create(&o) || mopt_options_set_int(o, "threads", cf.threads) ||
        mopt_options_set_threadpool(o, pool))
        return 1;
    client c[MAX_SESSIONS];
    pthread_t th[MAX_SESSIONS];
    size_t cap = (size_t)(cf.seconds * 200000.0) + 16;
    for (int k = 0; k < cf.sessions; k++) {
        memset(&c[k], 0, sizeof c[k]);
        if (mopt_session_create(m, o, &c[k].s)) {
            fprintf(stderr, "session: %s\n", mopt_last_error());
            return 1;
        }
        c[k].n_in = n_in;
        c[k].in = (const mopt_tensor *const *)in;
        c[k].lat = malloc(cap * sizeof(double));
        c[k].cap_lat = cap;
        if (!c[k].lat) return 1;
    }
    mopt_options_destroy(o);

    pid_t hog = cf.hog ? start_hog() : -1;
    if (cf.hog && hog < 0) {
        fprintf(stderr, "could not start the hog\n");
        return 1;
    }
    if (hog > 0) usleep(200000);
    double t0 = bench_wall_s();
    for (int k = 0; k < cf.sessions; k++) {
        c[k].t_start = t0 + cf.warmup;
        c[k].t_end = t0 + cf.warmup + cf.seconds;
    }
    double cpu0 = 0;
    for (int k = 0; k < cf.sessions; k++)
        pthread_create(&th[k], NULL, client_main, &c[k]);
    struct timespec ws = {(time_t)cf.warmup, (long)((cf.warmup - (double)(time_t)cf.warmup) * 1e9)};
    nanosleep(&ws, NULL);
    cpu0 = bench_cpu_s();
    for (int k = 0; k < cf.sessions; k++)
        pthread_join(th[k], NULL);
    double cpu1 = bench_cpu_s();
    if (hog > 0) {
        kill(hog, SIGKILL);
        waitpid(hog, NULL, 0);
    }

    size_t n = 0;
    int failed = 0;
    for (int k = 0; k < cf.sessions; k++) {
        n += c[k].n_lat;
        failed |= c[k].failed;
    }
    double *all = malloc((n ? n : 1) * sizeof(double));
    size_t j = 0;
    for (int k = 0; k < cf.sessions; k++) {
        memcpy(all + j, c[k].lat, c[k].n_lat * sizeof(double));
        j += c[k].n_lat;
    }
    qsort(all, n, sizeof(double), cmp_d);
    printf("%s batch %" PRId64 " seq %" PRId64 ": %d sessions x %d threads, %s%s: %.1f runs/s, "
           "p50 %.3f ms, p95 %.3f ms, p99 %.3f ms, cpu %.3f ms/run",
           cf.model_path, cf.batch, cf.seq, cf.sessions, cf.threads, pool ? "pool " : "no pool",
           cf.hog ? " + hog" : "", (double)n / cf.seconds, 1e3 * pct(all, n, 0.5),
           1e3 * pct(all, n, 0.95), 1e3 * pct(all, n, 0.99),
           n ? 1e3 * (cpu1 - cpu0) / (double)n : 0.0);
    if (pool) {
        mopt_threadpool_stats ps;
        memset(&ps, 0, sizeof ps);
        ps.struct_size = sizeof ps;
        if (mopt_threadpool_get_stats(pool, &ps) == MOPT_OK)
            printf(" [pool %d: peak %d threads at work, %" PRIu64 "/%" PRIu64
                   " runs waited, %" PRIu64 "/%" PRIu64 " parallel nodes narrowed]",
                   ps.threads, ps.peak_threads, ps.waited_runs, ps.runs, ps.narrowed_nodes,
                   ps.parallel_nodes);
    }
    printf("\n");
    free(all);
    for (int k = 0; k < cf.sessions; k++) {
        mopt_session_destroy(c[k].s);
        free(c[k].lat);
    }
    mopt_threadpool_destroy(pool);
    for (size_t i = 0; i < n_in; i++)
        mopt_tensor_destroy(in[i]);
    mopt_model_destroy(m);
    return failed;
}
