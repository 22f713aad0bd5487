/*
 * batcher_bench.c — closed-loop throughput and latency of N client threads
 * sending single requests to a BERT-like model (inputs input_ids and
 * attention_mask of shape [1, len]), either through one mopt_batcher
 * (--mode batcher) or each on its own session (--mode sessions, batching
 * off). Prints one line per run: requests/s, p50/p99 latency, CPU time per
 * request (user + system of the process over the measured window: on a
 * shared machine throughput mostly measures the share of the cores the
 * process gets, CPU per request what each request costs), mean batch.
 * Run by hand (not a test), e.g.:
 *   build/bench/batcher_bench --model examples/models/bert_tiny.onnx \
 *       --mode batcher --clients 16 --max-batch 16 --delay-us 2000 --seconds 5
 * Public API only.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

#include "clock_bench.h"

typedef struct {
    const char *model_path;
    int batcher; /* 1: mode batcher, 0: mode sessions */
    int clients, session_threads, max_batch, workers;
    int64_t delay_us;
    double seconds, warmup;
    int64_t lens[16];
    int n_lens;
    int64_t buckets[16];
    int n_buckets;
} config;

static int parse_list(const char *s, int64_t *out, int cap) {
    int n = 0;
    while (*s && n < cap) {
        char *end;
        out[n++] = strtoll(s, &end, 10);
        if (*end != ',') break;
        s = end + 1;
    }
    return n;
}

typedef struct {
    const config *cfg;
    const mopt_model *model;
    mopt_batcher *b;
    int id;
    atomic_int *go; /* 0 wait, 1 warmup, 2 measure, 3 stop */
    double *lat;    /* latencies (s) of measured requests */
    size_t n_lat, cap_lat;
    long errors;
} client;

static void *client_main(void *p) {
    client *c = p;
    const config *cfg = c->cfg;
    mopt_session *s = NULL;
    if (!cfg->batcher) {
        mopt_options *o = NULL;
        if (mopt_options_create(&o) || mopt_options_set_int(o, "threads", cfg->session_threads) ||
            mopt_session_create(c->model, o, &s)) {
            fprintf(stderr, "session: %s\n", mopt_last_error());
            c->errors++;
            mopt_options_destroy(o);
            return NULL;
        }
        mopt_options_destroy(o);
    }
    int64_t ids[1024], mask[1024];
    uint64_t rng = 0x9e3779b97f4a7c15ull * (uint64_t)(c->id + 1);
    while (atomic_load(c->go) == 0) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    for (long k = 0;; k++) {
        int phase = atomic_load(c->go);
        if (phase == 3) break;
        int64_t len = cfg->lens[(c->id + k) % cfg->n_lens];
        for (int64_t i = 0; i < len; i++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            ids[i] = 1 + (int64_t)(rng % 999);
            mask[i] = 1;
        }
        int64_t dims[2] = {1, len};
        mopt_tensor *in[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
        if (mopt_tensor_wrap(MOPT_DTYPE_I64, 2, dims, ids, (size_t)len * 8, &in[0]) ||
            mopt_tensor_wrap(MOPT_DTYPE_I64, 2, dims, mask, (size_t)len * 8, &in[1])) {
            c->errors++;
            break;
        }
        double t0 = bench_wall_s();
        mopt_status st =
            cfg->batcher
                ? mopt_batcher_run(c->b, 2, NULL, (const mopt_tensor *const *)in, 2, NULL, out, 0)
                : mopt_session_run(s, 2, NULL, (const mopt_tensor *const *)in, 2, NULL, out);
        double dt = bench_wall_s() - t0;
        if (st) {
            c->errors++;
        } else if (phase == 2) {
            if (c->n_lat == c->cap_lat) {
                c->cap_lat = c->cap_lat ? 2 * c->cap_lat : 4096;
                c->lat = realloc(c->lat, c->cap_lat * sizeof *c->lat);
            }
            c->lat[c->n_lat++] = dt;
        }
        for (int j = 0; j < 2; j++) {
            mopt_tensor_destroy(in[j]);
            mopt_tensor_destroy(out[j]);
        }
    }
    mopt_session_destroy(s);
    return NULL;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void usage(void) {
    fprintf(stderr, "usage: batcher_bench --model PATH [--mode batcher|sessions] [--clients N]\n"
                    "       [--session-threads T] [--max-batch B] [--delay-us D] [--workers W]\n"
                    "       [--lens 16,32] [--buckets 16,32,64] [--seconds S] [--warmup S]\n");
}

int main(int argc, char **argv) {
    config cfg = {.model_path = NULL,
                  .batcher = 1,
                  .clients = 4,
                  .session_threads = 1,
                  .max_batch = 8,
                  .workers = 1,
                  .delay_us = 2000,
                  .seconds = 5,
                  .warmup = 1,
                  .lens = {32},
                  .n_lens = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        i++;
        if (!strcmp(a, "--model"))
            cfg.model_path = v;
        else if (!strcmp(a, "--mode"))
            cfg.batcher = strcmp(v, "sessions") != 0;
        else if (!strcmp(a, "--clients"))
            cfg.clients = atoi(v);
        else if (!strcmp(a, "--session-threads"))
            cfg.session_threads = atoi(v);
        else if (!strcmp(a, "--max-batch"))
            cfg.max_batch = atoi(v);
        else if (!strcmp(a, "--delay-us"))
            cfg.delay_us = atoll(v);
        else if (!strcmp(a, "--workers"))
            cfg.workers = atoi(v);
        else if (!strcmp(a, "--seconds"))
            cfg.seconds = atof(v);
        else if (!strcmp(a, "--warmup"))
            cfg.warmup = atof(v);
        else if (!strcmp(a, "--lens"))
            cfg.n_lens = parse_list(v, cfg.lens, 16);
        else if (!strcmp(a, "--buckets"))
            cfg.n_buckets = parse_list(v, cfg.buckets, 16);
        else {
            usage();
            return 2;
        }
    }
    if (!cfg.model_path || cfg.clients < 1 || cfg.clients > 256 || cfg.n_lens < 1) {
        usage();
        return 2;
    }
    for (int i = 0; i < cfg.n_lens; i++)
        if (cfg.lens[i] < 1 || cfg.lens[i] > 1024) {
            fprintf(stderr, "lengths are 1..1024\n");
            return 2;
        }
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    mopt_batcher *b = NULL;
    if (mopt_options_create(&o) || mopt_options_set_int(o, "threads", cfg.session_threads) ||
        mopt_model_load(cfg.model_path, o, &m)) {
        fprintf(stderr, "load: %s\n", mopt_last_error());
        return 1;
    }
    if (cfg.batcher) {
        mopt_batcher_config bc;
        memset(&bc, 0, sizeof bc);
        bc.struct_size = sizeof bc;
        bc.max_batch = cfg.max_batch;
        bc.max_delay_us = cfg.delay_us;
        bc.queue_capacity = 1024;
        bc.workers = cfg.workers;
        bc.seq_buckets = cfg.n_buckets ? cfg.buckets : NULL;
        bc.n_seq_buckets = (size_t)cfg.n_buckets;
        if (mopt_batcher_create(m, o, &bc, &b)) {
            fprintf(stderr, "batcher: %s\n", mopt_last_error());
            return 1;
        }
    }
    atomic_int go = 0;
    client *cl = calloc((size_t)cfg.clients, sizeof *cl);
    pthread_t *th = calloc((size_t)cfg.clients, sizeof *th);
    for (int i = 0; i < cfg.clients; i++) {
        cl[i] = (client){.cfg = &cfg, .model = m, .b = b, .id = i, .go = &go};
        pthread_create(&th[i], NULL, client_main, &cl[i]);
    }
    atomic_store(&go, 1);
    struct timespec w = {(time_t)cfg.warmup,
                         (long)((cfg.warmup - (double)(time_t)cfg.warmup) * 1e9)};
    nanosleep(&w, NULL);
    mopt_batcher_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1};
    if (b && mopt_batcher_get_stats(b, &s0)) return 1;
    double t0 = bench_wall_s(), c0 = bench_cpu_s();
    atomic_store(&go, 2);
    struct timespec d = {(time_t)cfg.seconds,
                         (long)((cfg.seconds - (double)(time_t)cfg.seconds) * 1e9)};
    nanosleep(&d, NULL);
    atomic_store(&go, 3);
    double elapsed = bench_wall_s() - t0, cpu = bench_cpu_s() - c0;
    if (b && mopt_batcher_get_stats(b, &s1)) return 1;
    size_t n = 0;
    long errors = 0;
    for (int i = 0; i < cfg.clients; i++) {
        pthread_join(th[i], NULL);
        n += cl[i].n_lat;
        errors += cl[i].errors;
    }
    double *all = malloc((n + 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < cfg.clients; i++) {
        memcpy(all + k, cl[i].lat, cl[i].n_lat * sizeof *all);
        k += cl[i].n_lat;
        free(cl[i].lat);
    }
    qsort(all, n, sizeof *all, cmp_double);
    double p50 = n ? all[n / 2] : 0, p99 = n ? all[(size_t)((double)(n - 1) * 0.99)] : 0;
    double mean_batch = 0;
    if (b) {
        uint64_t reqs = 0, batches = s1.batches - s0.batches;
        for (int j = 0; j < 64; j++)
            reqs += (uint64_t)(j + 1) * (s1.batch_size_hist[j] - s0.batch_size_hist[j]);
        mean_batch = batches ? (double)reqs / (double)batches : 0;
    }
    printf("mode=%s clients=%d session_threads=%d workers=%d max_batch=%d delay_us=%" PRId64
           " lens=%" PRId64 "%s: %.1f req/s, p50 %.2f ms, p99 %.2f ms, cpu %.3f ms/req, "
           "mean batch %.2f, errors %ld\n",
           cfg.batcher ? "batcher" : "sessions", cfg.clients, cfg.session_threads,
           cfg.batcher ? cfg.workers : cfg.clients, cfg.batcher ? cfg.max_batch : 1,
           cfg.batcher ? cfg.delay_us : 0, cfg.lens[0], cfg.n_lens > 1 ? "..." : "",
           (double)n / elapsed, p50 * 1e3, p99 * 1e3, n ? cpu * 1e3 / (double)n : 0.0, mean_batch,
           errors);
    free(all);
    free(cl);
    free(th);
    mopt_batcher_destroy(b);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
    return errors ? 1 : 0;
}
