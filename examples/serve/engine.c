/* engine.c — model, toy tokenizer and batched mean-pooled embeddings for
 * examples/serve (see engine.h). */
#include "engine.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct engine {
    mopt_model *model;
    mopt_batcher *batcher;
    size_t dim;
    size_t n_inputs; /* 2, or 3 with token_type_ids */
    int64_t vocab, max_tokens;
    char name[128];
};

/* token_type_ids (all zeros) is fed when the model has it (MiniLM/BERT
 * exports from transformers); bert_tiny takes the first two only. */
static const char *const k_inputs[] = {"input_ids", "attention_mask", "token_type_ids"};
static const char *const k_outputs[] = {"last_hidden_state"};

static mopt_status embed_session(mopt_session *s, size_t n_inputs, int64_t n, mopt_tensor **out) {
    int64_t dims[2] = {1, n};
    mopt_tensor *in[3] = {NULL, NULL, NULL};
    mopt_status st = MOPT_OK;
    for (size_t i = 0; i < n_inputs && st == MOPT_OK; i++)
        st = mopt_tensor_create(MOPT_DTYPE_I64, 2, dims, &in[i]);
    if (st == MOPT_OK) {
        int64_t *m = mopt_tensor_data(in[1]);
        for (int64_t k = 0; k < n; k++)
            m[k] = 1;
        st = mopt_session_run(s, n_inputs, k_inputs, (const mopt_tensor *const *)in, 1, k_outputs,
                              out);
    }
    for (size_t i = 0; i < 3; i++)
        mopt_tensor_destroy(in[i]);
    return st;
}

engine *engine_create(const engine_config *cfg, char *err, size_t errsz) {
    engine *e = calloc(1, sizeof *e);
    mopt_options *opts = NULL;
    mopt_session *probe = NULL;
    mopt_tensor *out = NULL;
    if (!e) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    e->vocab = cfg->vocab;
    e->max_tokens = cfg->max_tokens;
    const char *base = strrchr(cfg->model_path, '/');
    base = base ? base + 1 : cfg->model_path;
    snprintf(e->name, sizeof e->name, "%s", base);
    char *dot = strrchr(e->name, '.');
    if (dot && dot != e->name) *dot = '\0';
    mopt_status st = mopt_options_create(&opts);
    if (st == MOPT_OK) st = mopt_options_set_int(opts, "threads", cfg->threads);
    if (st == MOPT_OK) st = mopt_model_load(cfg->model_path, opts, &e->model);
    size_t idx;
    e->n_inputs =
        st == MOPT_OK && mopt_model_io_find(e->model, MOPT_INPUT, "token_type_ids", &idx) == MOPT_OK
            ? 3
            : 2;
    if (st != MOPT_OK) {
        snprintf(err, errsz, "cannot load %s: %s (%s)", cfg->model_path, mopt_status_string(st),
                 mopt_last_error());
        goto fail;
    }
    /* Probe: the hidden size, and that the model takes the longest sequence
     * and the largest id we will accept. */
    st = mopt_session_create(e->model, opts, &probe);
    if (st == MOPT_OK) st = embed_session(probe, e->n_inputs, cfg->max_tokens, &out);
    if (st != MOPT_OK || mopt_tensor_rank(out) != 3) {
        snprintf(err, errsz,
                 "%s is not a BERT-like model taking input_ids/attention_mask [1,%lld] and "
                 "giving last_hidden_state [1,seq,dim]: %s (%s)",
                 cfg->model_path, (long long)cfg->max_tokens, mopt_status_string(st),
                 st != MOPT_OK ? mopt_last_error() : "rank");
        goto fail;
    }
    e->dim = (size_t)mopt_tensor_dim(out, 2);
    mopt_tensor_destroy(out);
    out = NULL;
    mopt_session_destroy(probe);
    probe = NULL;

    mopt_batcher_config bc;
    memset(&bc, 0, sizeof bc);
    bc.struct_size = sizeof bc;
    bc.max_batch = cfg->batch ? cfg->max_batch : 1;
    bc.max_delay_us = cfg->batch ? cfg->max_delay_us : 0;
    bc.queue_capacity = cfg->queue_capacity;
    bc.workers = cfg->workers;
    bc.seq_buckets = cfg->seq_buckets;
    bc.n_seq_buckets = cfg->n_seq_buckets;
    bc.no_padding = cfg->no_padding;
    st = mopt_batcher_create(e->model, opts, &bc, &e->batcher);
    if (st != MOPT_OK) {
        snprintf(err, errsz, "cannot create the batcher: %s (%s)", mopt_status_string(st),
                 mopt_last_error());
        goto fail;
    }
    mopt_options_destroy(opts);
    return e;
fail:
    mopt_tensor_destroy(out);
    mopt_session_destroy(probe);
    mopt_options_destroy(opts);
    engine_destroy(e);
    return NULL;
}

void engine_destroy(engine *e) {
    if (!e) return;
    mopt_batcher_destroy(e->batcher);
    mopt_model_destroy(e->model);
    free(e);
}

size_t engine_dim(const engine *e) { return e->dim; }
const char *engine_model_name(const engine *e) { return e->name; }
int64_t engine_vocab(const engine *e) { return e->vocab; }
int64_t engine_max_tokens(const engine *e) { return e->max_tokens; }

static int64_t word_id(const engine *e, const unsigned char *w, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < n; k++) {
        h ^= (unsigned char)tolower(w[k]);
        h *= 1099511628211ull;
    }
    return 3 + (int64_t)(h % (uint64_t)(e->vocab - 3));
}

size_t engine_tokenize(const engine *e, const char *text, size_t len, int64_t *ids, size_t max) {
    const unsigned char *s = (const unsigned char *)text;
    size_t n = 0;
#define EMIT(v)                                                                                    \
    do {                                                                                           \
        if (n < max) ids[n] = (v);                                                                 \
        n++;                                                                                       \
    } while (0)
    EMIT(1);
    size_t k = 0;
    while (k < len) {
        unsigned char c = s[k];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            k++;
        } else if (c < 0x80 && !isalnum(c)) {
            EMIT(word_id(e, s + k, 1));
            k++;
        } else {
            size_t start = k;
            while (k < len && (s[k] >= 0x80 || isalnum(s[k])))
                k++;
            EMIT(word_id(e, s + start, k - start));
        }
    }
    EMIT(2);
#undef EMIT
    return n;
}

mopt_status engine_embed(engine *e, const int64_t *ids, size_t n, float *out, int64_t timeout_us) {
    int64_t dims[2] = {1, (int64_t)n};
    mopt_tensor *in[3] = {NULL, NULL, NULL}, *hidden = NULL;
    int64_t *mask = malloc(2 * n * sizeof *mask); /* the mask (ones), then token types (zeros) */
    if (!mask) return MOPT_ERR_OUT_OF_MEMORY;
    for (size_t k = 0; k < n; k++) {
        mask[k] = 1;
        mask[n + k] = 0;
    }
    const int64_t *data[3] = {ids, mask, mask + n};
    mopt_status st = MOPT_OK;
    for (size_t i = 0; i < e->n_inputs && st == MOPT_OK; i++)
        st = mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, dims, data[i], n * sizeof *ids, &in[i]);
    if (st == MOPT_OK)
        st = mopt_batcher_run(e->batcher, e->n_inputs, k_inputs, (const mopt_tensor *const *)in, 1,
                              k_outputs, &hidden, timeout_us);
    /* hidden is [1, L, dim] (the batcher crops padding; L > n would be
     * padding too): the mean over the request's own n positions. */
    if (st == MOPT_OK &&
        (mopt_tensor_rank(hidden) != 3 || mopt_tensor_dim(hidden, 1) < (int64_t)n ||
         mopt_tensor_dim(hidden, 2) != (int64_t)e->dim))
        st = MOPT_ERR_SHAPE;
    if (st == MOPT_OK) {
        const float *h = mopt_tensor_data_const(hidden);
        for (size_t d = 0; d < e->dim; d++) {
            double acc = 0;
            for (size_t k = 0; k < n; k++)
                acc += h[k * e->dim + d];
            out[d] = (float)(acc / (double)n);
        }
    }
    mopt_tensor_destroy(hidden);
    for (size_t i = 0; i < 3; i++)
        mopt_tensor_destroy(in[i]);
    free(mask);
    return st;
}

void engine_get_stats(engine *e, engine_stats *s) {
    mopt_batcher_stats bs;
    memset(&bs, 0, sizeof bs);
    bs.struct_size = sizeof bs;
    memset(s, 0, sizeof *s);
    if (mopt_batcher_get_stats(e->batcher, &bs) != MOPT_OK) return;
    s->requests = bs.requests;
    s->completed = bs.completed;
    s->failed = bs.failed;
    s->rejected_full = bs.rejected_full;
    s->timed_out = bs.timed_out;
    s->batches = bs.batches;
    memcpy(s->batch_size_hist, bs.batch_size_hist, sizeof s->batch_size_hist);
    s->queue_depth = bs.queue_depth;
    s->reruns = bs.reruns;
    s->padded_elements = bs.padded_elements;
    s->input_elements = bs.input_elements;
}
