/* batch_shim.c — dynamic batching over the public session API (see
 * batch_shim.h): a bounded queue, worker threads with one session each, which
 * coalesce up to max_batch requests (waiting at most max_delay_us after the
 * first) along axis 0, zero-padding a ragged axis 1 to the longest (or to a
 * bucket), and hand each request its own slice of the outputs (with the
 * padded length). A batch that fails is rerun request by request, so a bad
 * request fails alone. */
#include "batch_shim.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sb_req {
    size_t n_inputs, n_outputs;
    const char *const *input_names;
    const mopt_tensor *const *inputs;
    const char *const *output_names;
    mopt_tensor **outputs;
    int64_t deadline_ns; /* 0: none */
    mopt_status status;
    int done;
    pthread_cond_t cv;
} sb_req;

struct serve_batcher {
    pthread_mutex_t mu;
    pthread_cond_t cv_work;
    serve_batcher_config cfg;
    int64_t *buckets;
    sb_req **ring;
    size_t head, count;
    int stopping;
    int n_workers;
    pthread_t *threads;
    mopt_session **sessions;
    serve_batcher_stats st;
};

typedef struct worker_arg {
    serve_batcher *b;
    int index;
} worker_arg;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void finish(serve_batcher *b, sb_req *r, mopt_status st) {
    /* called with b->mu held */
    r->status = st;
    r->done = 1;
    if (st == MOPT_OK)
        b->st.completed++;
    else if (st == MOPT_ERR_CANCELLED)
        b->st.timed_out++;
    else
        b->st.failed++;
    pthread_cond_signal(&r->cv);
}

static int same_names(const char *const *a, const char *const *b, size_t n) {
    if (a == b) return 1;
    if (!a || !b) return 0;
    for (size_t k = 0; k < n; k++)
        if (strcmp(a[k], b[k]) != 0) return 0;
    return 1;
}

/* Can r join a batch led by l? Same names, dtypes, ranks (>= 2 when ragged)
 * and dims apart from axes 0 and 1; axis 0 must be 1. */
static int compatible(const sb_req *l, const sb_req *r) {
    if (l->n_inputs != r->n_inputs || l->n_outputs != r->n_outputs ||
        !same_names(l->input_names, r->input_names, l->n_inputs) ||
        !same_names(l->output_names, r->output_names, l->n_outputs))
        return 0;
    for (size_t i = 0; i < l->n_inputs; i++) {
        const mopt_tensor *a = l->inputs[i], *c = r->inputs[i];
        int rank = mopt_tensor_rank(a);
        if (mopt_tensor_dtype(a) != mopt_tensor_dtype(c) || rank != mopt_tensor_rank(c) ||
            rank < 1 || mopt_tensor_dim(a, 0) != 1 || mopt_tensor_dim(c, 0) != 1)
            return 0;
        for (int ax = 2; ax < rank; ax++)
            if (mopt_tensor_dim(a, ax) != mopt_tensor_dim(c, ax)) return 0;
    }
    for (size_t o = 0; o < l->n_outputs; o++)
        if (l->outputs[o] || r->outputs[o]) return 0; /* caller-provided outputs: run alone */
    return 1;
}

static size_t dtype_size(mopt_dtype t) {
    int64_t one = 1;
    mopt_tensor *x = NULL;
    if (mopt_tensor_create(t, 1, &one, &x) != MOPT_OK) return 0;
    size_t s = mopt_tensor_size_bytes(x);
    mopt_tensor_destroy(x);
    return s;
}

static mopt_status run_alone(mopt_session *s, sb_req *r) {
    return mopt_session_run(s, r->n_inputs, r->input_names, r->inputs, r->n_outputs,
                            r->output_names, r->outputs);
}

/* Runs reqs[0..n) (compatible, n >= 2) as one batch. */
static mopt_status run_batch(serve_batcher *b, mopt_session *s, sb_req **reqs, size_t n) {
    const sb_req *l = reqs[0];
    size_t ni = l->n_inputs, no = l->n_outputs;
    mopt_tensor **bin = calloc(ni, sizeof *bin);
    mopt_tensor **bout = calloc(no, sizeof *bout);
    mopt_status st = bin && bout ? MOPT_OK : MOPT_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; st == MOPT_OK && i < ni; i++) {
        const mopt_tensor *t0 = l->inputs[i];
        int rank = mopt_tensor_rank(t0);
        int64_t dims[16];
        if (rank > 16) {
            st = MOPT_ERR_UNSUPPORTED;
            break;
        }
        memcpy(dims, mopt_tensor_dims(t0), (size_t)rank * sizeof *dims);
        dims[0] = (int64_t)n;
        int64_t longest = rank >= 2 ? 0 : 1;
        for (size_t k = 0; rank >= 2 && k < n; k++)
            if (mopt_tensor_dim(reqs[k]->inputs[i], 1) > longest)
                longest = mopt_tensor_dim(reqs[k]->inputs[i], 1);
        if (rank >= 2) {
            for (size_t k = 0; k < b->cfg.n_seq_buckets; k++)
                if (b->buckets[k] >= longest) {
                    longest = b->buckets[k];
                    break;
                }
            dims[1] = longest;
        }
        st = mopt_tensor_create(mopt_tensor_dtype(t0), rank, dims, &bin[i]);
        if (st != MOPT_OK) break;
        size_t inner = dtype_size(mopt_tensor_dtype(t0));
        for (int ax = 2; ax < rank; ax++)
            inner *= (size_t)dims[ax];
        char *dst = mopt_tensor_data(bin[i]);
        for (size_t k = 0; k < n; k++) {
            const mopt_tensor *t = reqs[k]->inputs[i];
            size_t bytes = mopt_tensor_size_bytes(t);
            if (bytes) memcpy(dst + k * (size_t)longest * inner, mopt_tensor_data_const(t), bytes);
        }
    }
    if (st == MOPT_OK)
        st = mopt_session_run(s, ni, l->input_names, (const mopt_tensor *const *)bin, no,
                              l->output_names, bout);
    for (size_t o = 0; st == MOPT_OK && o < no; o++) {
        int rank = mopt_tensor_rank(bout[o]);
        if (rank < 1 || rank > 16 || mopt_tensor_dim(bout[o], 0) != (int64_t)n) {
            st = MOPT_ERR_SHAPE;
            break;
        }
        int64_t dims[16];
        memcpy(dims, mopt_tensor_dims(bout[o]), (size_t)rank * sizeof *dims);
        dims[0] = 1;
        size_t slice = mopt_tensor_size_bytes(bout[o]) / n;
        const char *src = mopt_tensor_data_const(bout[o]);
        for (size_t k = 0; st == MOPT_OK && k < n; k++) {
            st = mopt_tensor_create(mopt_tensor_dtype(bout[o]), rank, dims, &reqs[k]->outputs[o]);
            if (st == MOPT_OK && slice)
                memcpy(mopt_tensor_data(reqs[k]->outputs[o]), src + k * slice, slice);
        }
    }
    if (st != MOPT_OK)
        for (size_t k = 0; k < n; k++)
            for (size_t o = 0; o < no; o++) {
                mopt_tensor_destroy(reqs[k]->outputs[o]);
                reqs[k]->outputs[o] = NULL;
            }
    for (size_t i = 0; bin && i < ni; i++)
        mopt_tensor_destroy(bin[i]);
    for (size_t o = 0; bout && o < no; o++)
        mopt_tensor_destroy(bout[o]);
    free(bin);
    free(bout);
    return st;
}

static sb_req *pop(serve_batcher *b) {
    sb_req *r = b->ring[b->head];
    b->head = (b->head + 1) % b->cfg.queue_capacity;
    b->count--;
    return r;
}

static void *worker(void *arg) {
    worker_arg *wa = arg;
    serve_batcher *b = wa->b;
    mopt_session *s = b->sessions[wa->index];
    free(wa);
    size_t cap = (size_t)b->cfg.max_batch;
    sb_req **batch = calloc(cap, sizeof *batch);
    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->count && !b->stopping)
            pthread_cond_wait(&b->cv_work, &b->mu);
        if (!b->count && b->stopping) break;
        /* Wait for company: up to max_delay after the first request is seen. */
        if (b->count < cap && b->cfg.max_delay_us > 0 && !b->stopping) {
            int64_t until = now_ns() + b->cfg.max_delay_us * 1000;
            struct timespec ts;
            while (b->count < cap && !b->stopping) {
                int64_t t = now_ns();
                if (t >= until) break;
                clock_gettime(CLOCK_REALTIME, &ts);
                int64_t abs = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (until - t);
                ts.tv_sec = abs / 1000000000;
                ts.tv_nsec = abs % 1000000000;
                pthread_cond_timedwait(&b->cv_work, &b->mu, &ts);
            }
            if (!b->count) continue; /* another worker took them */
        }
        size_t n = 0;
        int64_t t = now_ns();
        while (b->count && n < cap) {
            sb_req *r = b->ring[b->head];
            if (r->deadline_ns && t > r->deadline_ns) {
                pop(b);
                finish(b, r, MOPT_ERR_CANCELLED);
                continue;
            }
            if (n && !compatible(batch[0], r)) break;
            batch[n++] = pop(b);
        }
        if (!n) continue;
        b->st.batches++;
        b->st.batch_size_hist[n > 64 ? 63 : n - 1]++;
        b->st.queue_depth = b->count;
        pthread_mutex_unlock(&b->mu);
        mopt_status st[64];
        if (n == 1) {
            st[0] = run_alone(s, batch[0]);
        } else if (run_batch(b, s, batch, n) == MOPT_OK) {
            for (size_t k = 0; k < n; k++)
                st[k] = MOPT_OK;
        } else {
            for (size_t k = 0; k < n; k++)
                st[k] = run_alone(s, batch[k]);
        }
        pthread_mutex_lock(&b->mu);
        for (size_t k = 0; k < n; k++)
            finish(b, batch[k], st[k]);
    }
    pthread_mutex_unlock(&b->mu);
    free(batch);
    return NULL;
}

mopt_status serve_batcher_create(const mopt_model *model, const mopt_options *opts,
                                 const serve_batcher_config *config, serve_batcher **out) {
    if (!model || !out) return MOPT_ERR_INVALID_ARGUMENT;
    *out = NULL;
    serve_batcher_config cfg = {sizeof cfg, 8, 2000, 256, 1, NULL, 0};
    if (config) cfg = *config;
    if (cfg.max_batch < 1 || cfg.max_batch > 64 || cfg.max_delay_us < 0 || cfg.queue_capacity < 1 ||
        cfg.workers < 1 || cfg.workers > 64)
        return MOPT_ERR_INVALID_ARGUMENT;
    serve_batcher *b = calloc(1, sizeof *b);
    if (!b) return MOPT_ERR_OUT_OF_MEMORY;
    b->cfg = cfg;
    b->st.struct_size = sizeof b->st;
    b->ring = calloc(cfg.queue_capacity, sizeof *b->ring);
    b->threads = calloc((size_t)cfg.workers, sizeof *b->threads);
    b->sessions = calloc((size_t)cfg.workers, sizeof *b->sessions);
    if (cfg.n_seq_buckets) {
        b->buckets = malloc(cfg.n_seq_buckets * sizeof *b->buckets);
        if (b->buckets) memcpy(b->buckets, cfg.seq_buckets, cfg.n_seq_buckets * sizeof *b->buckets);
    }
    mopt_status st = b->ring && b->threads && b->sessions && (b->buckets || !cfg.n_seq_buckets)
                         ? MOPT_OK
                         : MOPT_ERR_OUT_OF_MEMORY;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv_work, NULL);
    for (int w = 0; st == MOPT_OK && w < cfg.workers; w++)
        st = mopt_session_create(model, opts, &b->sessions[w]);
    for (int w = 0; st == MOPT_OK && w < cfg.workers; w++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) {
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        wa->b = b;
        wa->index = w;
        if (pthread_create(&b->threads[w], NULL, worker, wa) != 0) {
            free(wa);
            st = MOPT_ERR_OUT_OF_MEMORY;
            break;
        }
        b->n_workers++;
    }
    if (st != MOPT_OK) {
        serve_batcher_destroy(b);
        return st;
    }
    *out = b;
    return MOPT_OK;
}

void serve_batcher_destroy(serve_batcher *b) {
    if (!b) return;
    pthread_mutex_lock(&b->mu);
    b->stopping = 1;
    pthread_cond_broadcast(&b->cv_work);
    pthread_mutex_unlock(&b->mu);
    for (int w = 0; w < b->n_workers; w++)
        pthread_join(b->threads[w], NULL);
    for (int w = 0; b->sessions && w < b->cfg.workers; w++)
        mopt_session_destroy(b->sessions[w]);
    pthread_cond_destroy(&b->cv_work);
    pthread_mutex_destroy(&b->mu);
    free(b->sessions);
    free(b->threads);
    free(b->ring);
    free(b->buckets);
    free(b);
}

mopt_status serve_batcher_run(serve_batcher *b, size_t n_inputs, const char *const *input_names,
                              const mopt_tensor *const *inputs, size_t n_outputs,
                              const char *const *output_names, mopt_tensor **outputs,
                              int64_t timeout_us) {
    if (!b || !inputs || !outputs) return MOPT_ERR_INVALID_ARGUMENT;
    sb_req r = {.n_inputs = n_inputs,
                .n_outputs = n_outputs,
                .input_names = input_names,
                .inputs = inputs,
                .output_names = output_names,
                .outputs = outputs,
                .deadline_ns = timeout_us > 0 ? now_ns() + timeout_us * 1000 : 0};
    pthread_cond_init(&r.cv, NULL);
    pthread_mutex_lock(&b->mu);
    b->st.requests++;
    if (b->stopping || b->count >= b->cfg.queue_capacity) {
        b->st.rejected_full++;
        pthread_mutex_unlock(&b->mu);
        pthread_cond_destroy(&r.cv);
        return MOPT_ERR_BUSY;
    }
    b->ring[(b->head + b->count) % b->cfg.queue_capacity] = &r;
    b->count++;
    b->st.queue_depth = b->count;
    pthread_cond_signal(&b->cv_work);
    while (!r.done)
        pthread_cond_wait(&r.cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
    pthread_cond_destroy(&r.cv);
    return r.status;
}

mopt_status serve_batcher_get_stats(const serve_batcher *cb, serve_batcher_stats *stats) {
    if (!cb || !stats) return MOPT_ERR_INVALID_ARGUMENT;
    serve_batcher *b = (serve_batcher *)cb;
    pthread_mutex_lock(&b->mu);
    *stats = b->st;
    stats->queue_depth = b->count;
    pthread_mutex_unlock(&b->mu);
    return MOPT_OK;
}
