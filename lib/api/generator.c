/*
 * generator.c — mopt_generator: token generation over a decoder exported
 * with past_key_values inputs and present outputs (see mopt.h for the
 * naming rules and the cache). Drives one session; owns the cache buffers
 * (two per past input, swapped after every step), the tensors that borrow
 * them (made once, re-pointed per step: no allocation per step) and the
 * token history that prefix reuse compares new prompts with. Sampling is
 * sampling.c. Must not reach below the runtime's public surface except to
 * re-point its own tensors and to register bf16 tile caches
 * (kv_cache_dtype=bf16: one buffer per cache holding bf16 tiles, kernels.h
 * kn_kvt_*, that the session's KVAppend writes and DecodeAttention reads;
 * the tensors still describe f32 rows, which nothing reads).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/sampling.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "kernels/kernels.h"
#include "runtime/runtime.h"

#define GEN_MAX_STOP 64
#define GEN_MAX_SEQ ((int64_t)1 << 20)
#define GEN_NAME_CAP 96

typedef struct gen_cache {
    char in_name[GEN_NAME_CAP];  /* past_key_values.N.key */
    char out_name[GEN_NAME_CAP]; /* present.N.key */
    float *buf[2];               /* heads * max_seq * head_dim each (bf16 tiles: one
                                    buffer of kn_kvt_elems bf16 values) */
    mopt_tensor *past, *present; /* borrow buf[cur] and buf[1 - cur] */
} gen_cache;

struct mopt_generator {
    mopt_session *session;
    mopt_run_options *run_options; /* its terminate flag is the cancel flag */
    int64_t max_seq, vocab, heads, head_dim;
    int layers;
    int cur; /* which buffer of every cache holds the valid past */

    /* inputs other than the cache */
    mopt_dtype ids_dtype, mask_dtype, pos_dtype; /* UNDEFINED: the model has none */
    void *ids, *mask, *pos;                      /* max_seq entries each */
    mopt_tensor *ids_t, *mask_t, *pos_t, *logits_t;
    float *logits;      /* logits_cap * vocab */
    int64_t logits_cap; /* positions logits can hold */
    int64_t last_row;   /* the row of logits that mopt_generator_logits gives, -1 = none */

    gen_cache *caches; /* 2 * layers: N.key, N.value */
    const char **in_names, **out_names;
    const mopt_tensor **in_tensors;
    mopt_tensor **out_tensors;
    size_t n_in, n_out;

    int64_t *history; /* tokens whose keys/values are in the cache */
    int64_t n_cached;
    int32_t *counts; /* per vocabulary entry: occurrences in the context */
    gen_cand *scratch;

    gen_sampling sampling;
    int64_t stop[GEN_MAX_STOP];
    size_t n_stop;

    int64_t reused, prefilled, generated, steps, prefill_ns, last_step_ns;
    int64_t last_step_plans, last_step_heap; /* memory plans made / heap intermediates */
    int64_t last_step_inferred;              /* nodes whose shapes the step inferred */
    int seq_axis;                            /* the past inputs' sequence axis */
    bool capacity_planned;                   /* plan_capacity's warm-up ran */
    bool kv_bf16;                            /* kv_cache_dtype=bf16: the caches are tiles */
    int64_t tile_cap;                        /* their capacity: max_seq in whole tiles */
    int64_t cache_bytes;                     /* of every cache buffer together */
};

/* ---- discovery ---- */

/* "past_key_values.N.key" -> N, 0 (key) / 1 (value); false when not that form. */
static bool parse_past(const char *name, const char *prefix, int64_t *layer, int *kind) {
    size_t lp = strlen(prefix);
    if (strncmp(name, prefix, lp) != 0) return false;
    const char *p = name + lp;
    if (*p < '0' || *p > '9') return false;
    char *end;
    errno = 0;
    long long n = strtoll(p, &end, 10);
    if (errno || n < 0 || n > 4096) return false;
    if (strcmp(end, ".key") == 0)
        *kind = 0;
    else if (strcmp(end, ".value") == 0)
        *kind = 1;
    else
        return false;
    *layer = n;
    return true;
}

static mopt_status check_int_input(const mopt_model *m, size_t i, const char *name,
                                   mopt_dtype *dt) {
    mopt_dtype d = mopt_model_io_dtype(m, MOPT_INPUT, i);
    if (d != MOPT_DTYPE_I64 && d != MOPT_DTYPE_I32)
        return mopt_fail(MOPT_ERR_TYPE,
                         "mopt_generator_create: input '%s' is %s; it must be i64 or i32", name,
                         mopt_dtype_name(d));
    int r = mopt_model_io_rank(m, MOPT_INPUT, i);
    if (r != 2)
        return mopt_fail(MOPT_ERR_SHAPE,
                         "mopt_generator_create: input '%s' has rank %d; it must be [batch, seq]",
                         name, r);
    *dt = d;
    return MOPT_OK;
}

static mopt_status find_present(const mopt_model *m, int64_t layer, int kind, char *out,
                                size_t *index) {
    static const char *const prefixes[] = {"present.", "present_key_values."};
    for (size_t p = 0; p < 2; p++) {
        snprintf(out, GEN_NAME_CAP, "%s%" PRId64 ".%s", prefixes[p], layer, kind ? "value" : "key");
        if (mopt_model_io_find(m, MOPT_OUTPUT, out, index) == MOPT_OK) return MOPT_OK;
    }
    mopt_clear_error();
    return mopt_fail(MOPT_ERR_NOT_FOUND,
                     "mopt_generator_create: the model has input 'past_key_values.%" PRId64
                     ".%s' but no output 'present.%" PRId64 ".%s' (or "
                     "'present_key_values.%" PRId64 ".%s') to read the grown cache from",
                     layer, kind ? "value" : "key", layer, kind ? "value" : "key", layer,
                     kind ? "value" : "key");
}

/* heads and head_dim of a rank-4 f32 cache value, fixed numbers, and its
 * sequence axis: 2 as exported ([batch, heads, seq, head_dim]), 1 when the
 * kv_cache pass made it token-major ([batch, seq, heads, head_dim]). */
static mopt_status cache_dims(const mopt_model *m, mopt_io_kind io, size_t i, const char *name,
                              int64_t *heads, int64_t *head_dim, int *seq_axis) {
    mopt_dtype d = mopt_model_io_dtype(m, io, i);
    if (d != MOPT_DTYPE_F32)
        return mopt_fail(MOPT_ERR_TYPE,
                         "mopt_generator_create: '%s' is %s; the generator keeps f32 caches only",
                         name, mopt_dtype_name(d));
    int r = mopt_model_io_rank(m, io, i);
    if (r != 4)
        return mopt_fail(MOPT_ERR_SHAPE,
                         "mopt_generator_create: '%s' has rank %d; a cache is [batch, heads, "
                         "seq, head_dim]",
                         name, r);
    *seq_axis = mopt_model_io_dim(m, io, i, 1) <= 0 && mopt_model_io_dim(m, io, i, 2) > 0 ? 1 : 2;
    *heads = mopt_model_io_dim(m, io, i, *seq_axis == 1 ? 2 : 1);
    *head_dim = mopt_model_io_dim(m, io, i, 3);
    if (*heads <= 0 || *head_dim <= 0)
        return mopt_fail(MOPT_ERR_SHAPE,
                         "mopt_generator_create: '%s' needs fixed heads and head_dim (axes 1 and "
                         "3, or 2 and 3 token-major); they are %s and %s",
                         name, *heads > 0 ? "fixed" : "symbolic or 0",
                         *head_dim > 0 ? "fixed" : "symbolic or 0");
    return MOPT_OK;
}

static mopt_status discover(mopt_generator *g, const mopt_model *m) {
    size_t n_in = mopt_model_io_count(m, MOPT_INPUT), n_out = mopt_model_io_count(m, MOPT_OUTPUT);
    int64_t max_layer = -1, n_past = 0;
    bool have_ids = false;
    mopt_status st;
    for (size_t i = 0; i < n_in; i++) {
        const char *name = mopt_model_io_name(m, MOPT_INPUT, i);
        int64_t layer;
        int kind;
        if (strcmp(name, "input_ids") == 0) {
            if ((st = check_int_input(m, i, name, &g->ids_dtype))) return st;
            have_ids = true;
        } else if (strcmp(name, "attention_mask") == 0) {
            if ((st = check_int_input(m, i, name, &g->mask_dtype))) return st;
        } else if (strcmp(name, "position_ids") == 0) {
            if ((st = check_int_input(m, i, name, &g->pos_dtype))) return st;
        } else if (parse_past(name, "past_key_values.", &layer, &kind)) {
            n_past++;
            if (layer > max_layer) max_layer = layer;
        } else {
            return mopt_fail(MOPT_ERR_UNSUPPORTED,
                             "mopt_generator_create: input '%s' is not one the generator can feed "
                             "(input_ids, attention_mask, position_ids, past_key_values.N.key, "
                             "past_key_values.N.value)",
                             name);
        }
    }
    if (!have_ids)
        return mopt_fail(MOPT_ERR_NOT_FOUND, "mopt_generator_create: the model has no input "
                                             "'input_ids'");
    if (n_past == 0)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "mopt_generator_create: the model has no 'past_key_values.N.key/value' "
                         "inputs: it is not a decoder exported with a KV cache (export it 'with "
                         "past')");
    if (n_past != 2 * (max_layer + 1))
        return mopt_fail(MOPT_ERR_NOT_FOUND,
                         "mopt_generator_create: %" PRId64 " past_key_values inputs for layers "
                         "0..%" PRId64 "; every layer needs both .key and .value, numbered "
                         "without gaps",
                         n_past, max_layer);
    g->layers = (int)(max_layer + 1);
    g->caches = mopt_calloc((size_t)n_past, sizeof *g->caches);
    if (!g->caches) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (generator)");
    g->heads = -1;
    for (int64_t l = 0; l <= max_layer; l++) {
        for (int kind = 0; kind < 2; kind++) {
            gen_cache *c = &g->caches[2 * l + kind];
            snprintf(c->in_name, sizeof c->in_name, "past_key_values.%" PRId64 ".%s", l,
                     kind ? "value" : "key");
            size_t ii, oi;
            if (mopt_model_io_find(m, MOPT_INPUT, c->in_name, &ii) != MOPT_OK) {
                mopt_clear_error();
                return mopt_fail(MOPT_ERR_NOT_FOUND,
                                 "mopt_generator_create: the model has no input '%s' (every "
                                 "layer needs both .key and .value)",
                                 c->in_name);
            }
            if ((st = find_present(m, l, kind, c->out_name, &oi))) return st;
            int64_t h, d, ho, dout;
            int ax, axo;
            if ((st = cache_dims(m, MOPT_INPUT, ii, c->in_name, &h, &d, &ax))) return st;
            if ((st = cache_dims(m, MOPT_OUTPUT, oi, c->out_name, &ho, &dout, &axo))) return st;
            if (l == 0 && kind == 0) g->seq_axis = ax;
            if (ax != axo || ax != g->seq_axis)
                return mopt_fail(MOPT_ERR_SHAPE,
                                 "mopt_generator_create: '%s' and '%s' differ in layout from "
                                 "layer 0 (every cache [batch, heads, seq, head_dim], or every "
                                 "one token-major [batch, seq, heads, head_dim])",
                                 c->in_name, c->out_name);
            if (ho != h || dout != d)
                return mopt_fail(MOPT_ERR_SHAPE,
                                 "mopt_generator_create: '%s' has heads %" PRId64 ", head_dim "
                                 "%" PRId64 " but '%s' has %" PRId64 ", %" PRId64,
                                 c->in_name, h, d, c->out_name, ho, dout);
            if (g->heads < 0) {
                g->heads = h;
                g->head_dim = d;
            } else if (h != g->heads || d != g->head_dim) {
                return mopt_fail(MOPT_ERR_SHAPE,
                                 "mopt_generator_create: '%s' has heads %" PRId64 ", head_dim "
                                 "%" PRId64 " but layer 0 has %" PRId64 ", %" PRId64,
                                 c->in_name, h, d, g->heads, g->head_dim);
            }
        }
    }
    /* logits: the output so named, else the first */
    size_t li = 0;
    if (mopt_model_io_find(m, MOPT_OUTPUT, "logits", &li) != MOPT_OK) mopt_clear_error();
    const char *lname = mopt_model_io_name(m, MOPT_OUTPUT, li);
    if (!lname || n_out == 0)
        return mopt_fail(MOPT_ERR_NOT_FOUND, "mopt_generator_create: the model has no output");
    if (mopt_model_io_dtype(m, MOPT_OUTPUT, li) != MOPT_DTYPE_F32 ||
        mopt_model_io_rank(m, MOPT_OUTPUT, li) != 3 ||
        (g->vocab = mopt_model_io_dim(m, MOPT_OUTPUT, li, 2)) <= 0 || g->vocab > INT32_MAX)
        return mopt_fail(MOPT_ERR_SHAPE,
                         "mopt_generator_create: logits output '%s' must be f32 [batch, seq, "
                         "vocab] with a fixed vocab",
                         lname);
    g->n_in = 1 + (g->mask_dtype != MOPT_DTYPE_UNDEFINED) + (g->pos_dtype != MOPT_DTYPE_UNDEFINED) +
              (size_t)n_past;
    g->n_out = 1 + (size_t)n_past;
    g->in_names = mopt_calloc(g->n_in, sizeof *g->in_names);
    g->out_names = mopt_calloc(g->n_out, sizeof *g->out_names);
    g->in_tensors = mopt_calloc(g->n_in, sizeof *g->in_tensors);
    g->out_tensors = mopt_calloc(g->n_out, sizeof *g->out_tensors);
    if (!g->in_names || !g->out_names || !g->in_tensors || !g->out_tensors)
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (generator)");
    g->out_names[0] = lname;
    return MOPT_OK;
}

static void plan_capacity(mopt_generator *g);

/* ---- buffers ---- */

static mopt_status view(mopt_dtype dt, mopt_tensor **out) {
    int64_t dims[4] = {1, 1, 1, 1};
    return rt_tensor_new(dt, 2, dims, NULL, 0, false, out);
}

static void *alloc_bytes(size_t count, size_t elem, mopt_status *st) {
    size_t n;
    if (!mopt_mul_overflow(count, elem, &n)) {
        *st = mopt_fail(MOPT_ERR_LIMIT, "mopt_generator_create: cache size overflows size_t");
        return NULL;
    }
    void *p = mopt_aligned_alloc(n ? n : 1);
    if (!p)
        *st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY,
                        "mopt_generator_create: out of memory for %zu bytes of cache", n);
    return p;
}

static mopt_status setup(mopt_generator *g) {
    mopt_status st = MOPT_OK;
    size_t ms = (size_t)g->max_seq;
    size_t cache_elems;
    if (!mopt_mul_overflow((size_t)(g->heads * g->head_dim), ms, &cache_elems))
        return mopt_fail(MOPT_ERR_LIMIT, "mopt_generator_create: cache size overflows size_t");
    size_t k = 0, o = 1;
    g->in_names[k] = "input_ids";
    if (!(g->ids = alloc_bytes(ms, 8, &st)) || (st = view(g->ids_dtype, &g->ids_t))) return st;
    g->in_tensors[k++] = g->ids_t;
    if (g->mask_dtype != MOPT_DTYPE_UNDEFINED) {
        if (!(g->mask = alloc_bytes(ms, 8, &st)) || (st = view(g->mask_dtype, &g->mask_t)))
            return st;
        for (size_t i = 0; i < ms; i++) { /* every cached position is attended */
            if (g->mask_dtype == MOPT_DTYPE_I64)
                ((int64_t *)g->mask)[i] = 1;
            else
                ((int32_t *)g->mask)[i] = 1;
        }
        g->in_names[k] = "attention_mask";
        g->in_tensors[k++] = g->mask_t;
    }
    if (g->pos_dtype != MOPT_DTYPE_UNDEFINED) {
        if (!(g->pos = alloc_bytes(ms, 8, &st)) || (st = view(g->pos_dtype, &g->pos_t))) return st;
        g->in_names[k] = "position_ids";
        g->in_tensors[k++] = g->pos_t;
    }
    /* bf16 tiles: the capacity in whole tiles, zeroed (a tile's keys past
     * the cache are read with weight 0, and must be finite) */
    g->tile_cap = (g->max_seq + KN_KVT_ALIGN - 1) / KN_KVT_ALIGN * KN_KVT_ALIGN;
    size_t tile_elems; /* kn_kvt_elems(tile_cap, heads, head_dim) */
    if (!mopt_mul_overflow((size_t)(g->heads * kn_kvt_dpad(g->head_dim)), (size_t)g->tile_cap,
                           &tile_elems))
        return mopt_fail(MOPT_ERR_LIMIT, "mopt_generator_create: cache size overflows size_t");
    g->cache_bytes = 0;
    for (int c = 0; c < 2 * g->layers; c++) {
        gen_cache *ca = &g->caches[c];
        /* token-major: one buffer, grown in place; else two, swapped */
        for (int b = 0; b < (g->seq_axis == 1 ? 1 : 2); b++) {
            const size_t n = g->kv_bf16 ? tile_elems : cache_elems;
            const size_t esz = g->kv_bf16 ? sizeof(uint16_t) : sizeof(float);
            if (!(ca->buf[b] = alloc_bytes(n, esz, &st))) return st;
            if (g->kv_bf16) memset(ca->buf[b], 0, n * esz);
            g->cache_bytes += (int64_t)(n * esz);
        }
        if (g->seq_axis == 1) ca->buf[1] = ca->buf[0];
        int64_t dims[4] = {1, g->heads, 0, g->head_dim};
        if (g->seq_axis == 1) dims[1] = 0, dims[2] = g->heads;
        if ((st = rt_tensor_new(MOPT_DTYPE_F32, 4, dims, ca->buf[0], 0, false, &ca->past)) ||
            (st = rt_tensor_new(MOPT_DTYPE_F32, 4, dims, ca->buf[1], 0, false, &ca->present)))
            return st;
        g->in_names[k] = ca->in_name;
        g->in_tensors[k++] = ca->past;
        g->out_names[o] = ca->out_name;
        g->out_tensors[o++] = ca->present;
    }
    int64_t ldims[3] = {1, 1, g->vocab};
    if ((st = rt_tensor_new(MOPT_DTYPE_F32, 3, ldims, NULL, 0, false, &g->logits_t))) return st;
    g->out_tensors[0] = g->logits_t;
    g->logits_cap = 0;
    g->last_row = -1;
    if (!(g->history = alloc_bytes(ms, sizeof(int64_t), &st))) return st;
    if (!(g->counts = alloc_bytes((size_t)g->vocab, sizeof(int32_t), &st))) return st;
    if (!(g->scratch = alloc_bytes((size_t)g->vocab, sizeof(gen_cand), &st))) return st;
    return MOPT_OK;
}

void mopt_generator_destroy(mopt_generator *g) {
    if (!g) return;
    mopt_session_destroy(g->session);
    mopt_run_options_destroy(g->run_options);
    if (g->caches) {
        for (int c = 0; c < 2 * g->layers; c++) {
            if (g->caches[c].buf[1] != g->caches[c].buf[0]) mopt_aligned_free(g->caches[c].buf[1]);
            mopt_aligned_free(g->caches[c].buf[0]);
            mopt_tensor_destroy(g->caches[c].past);
            mopt_tensor_destroy(g->caches[c].present);
        }
        mopt_free(g->caches);
    }
    mopt_tensor_destroy(g->ids_t);
    mopt_tensor_destroy(g->mask_t);
    mopt_tensor_destroy(g->pos_t);
    mopt_tensor_destroy(g->logits_t);
    mopt_aligned_free(g->ids);
    mopt_aligned_free(g->mask);
    mopt_aligned_free(g->pos);
    mopt_aligned_free(g->logits);
    mopt_aligned_free(g->history);
    mopt_aligned_free(g->counts);
    mopt_aligned_free(g->scratch);
    mopt_free(g->in_names);
    mopt_free(g->out_names);
    mopt_free(g->in_tensors);
    mopt_free(g->out_tensors);
    mopt_free(g);
}

/* The option kv_cache_dtype: f32 (default) or bf16, which needs the
 * token-major caches of kv_cache=1. */
static mopt_status read_kv_dtype(mopt_generator *g, const mopt_options *opts) {
    const char *dt = "f32";
    if (opts && mopt_options_get_string(opts, "kv_cache_dtype", &dt) != MOPT_OK)
        return mopt_fail(MOPT_ERR_INTERNAL, "mopt_generator_create: cannot read kv_cache_dtype");
    if (strcmp(dt, "f32") == 0) return MOPT_OK;
    if (strcmp(dt, "bf16") != 0)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_generator_create: kv_cache_dtype '%s' is not f32 or bf16", dt);
    if (g->seq_axis != 1)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "mopt_generator_create: kv_cache_dtype=bf16 needs token-major caches read "
                         "by mopt.DecodeAttention: load the model with the option kv_cache=1 (its "
                         "caches are as exported, [batch, heads, seq, head_dim])");
    g->kv_bf16 = true;
    return MOPT_OK;
}

/* Tells the session that every cache buffer holds bf16 tiles (refused
 * unless only KVAppend and DecodeAttention touch them). */
static mopt_status register_tiles(mopt_generator *g) {
    const int n = 2 * g->layers;
    const char **past = mopt_calloc((size_t)n, sizeof *past);
    const char **present = mopt_calloc((size_t)n, sizeof *present);
    void **bufs = mopt_calloc((size_t)n, sizeof *bufs);
    bool *value = mopt_calloc((size_t)n, sizeof *value);
    mopt_status st = MOPT_OK;
    if (!past || !present || !bufs || !value) {
        st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (generator)");
    } else {
        for (int c = 0; c < n; c++) {
            past[c] = g->caches[c].in_name;
            present[c] = g->caches[c].out_name;
            bufs[c] = g->caches[c].buf[0];
            value[c] = c % 2 == 1;
        }
        st = rt_session_kv_tiles(g->session, n, past, present, bufs, value, g->tile_cap, g->heads,
                                 g->head_dim);
        if (st) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", mopt_last_error());
            st = mopt_fail(st, "mopt_generator_create: kv_cache_dtype=bf16: %s", msg);
        }
    }
    mopt_free(past);
    mopt_free(present);
    mopt_free(bufs);
    mopt_free(value);
    return st;
}

mopt_status mopt_generator_create(const mopt_model *model, const mopt_options *opts,
                                  int64_t max_seq, mopt_generator **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_create: out is NULL");
    *out = NULL;
    if (!model) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_create: model is NULL");
    if (max_seq < 1 || max_seq > GEN_MAX_SEQ)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_generator_create: max_seq %" PRId64 " is outside 1..%" PRId64,
                         max_seq, GEN_MAX_SEQ);
    mopt_generator *g = mopt_calloc(1, sizeof *g);
    if (!g) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory (generator)");
    g->max_seq = max_seq;
    g->seq_axis = 2;
    g->sampling = (gen_sampling){
        .temperature = 0, .top_k = 0, .top_p = 1.0, .repetition_penalty = 1.0, .seed = 0};
    mopt_status st = discover(g, model);
    if (!st) st = read_kv_dtype(g, opts);
    if (!st && g->seq_axis == 2 && model->config.verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt_generator: the caches are as exported ([batch, heads, seq, head_dim]): "
                 "every step copies the past (Concat) and its attention products change shape; "
                 "load the model with the option kv_cache=1 for caches appended in place and "
                 "one mopt.DecodeAttention per layer");
    if (!st) st = setup(g);
    if (!st) st = mopt_run_options_create(&g->run_options);
    if (!st) st = mopt_session_create(model, opts, &g->session);
    if (!st && g->kv_bf16) st = register_tiles(g);
    if (!st && g->kv_bf16 && model->config.verbose)
        mopt_log(MOPT_LOG_INFO,
                 "mopt_generator: kv_cache_dtype=bf16: %d caches of %" PRId64
                 " positions as bf16 tiles, %" PRId64 " bytes (f32 rows: %" PRId64 ")",
                 2 * g->layers, g->max_seq, g->cache_bytes,
                 (int64_t)2 * g->layers * g->max_seq * g->heads * g->head_dim * 4);
    if (!st) plan_capacity(g);
    if (st) {
        /* keep the message of the failure, not of the clean-up */
        mopt_generator_destroy(g);
        return st;
    }
    *out = g;
    return MOPT_OK;
}

/* ---- settings ---- */

mopt_status mopt_generator_set_double(mopt_generator *g, const char *key, double v) {
    mopt_clear_error();
    if (!g || !key)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_set: NULL argument");
    if (v != v) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_set: '%s' is NaN", key);
    if (strcmp(key, "temperature") == 0) {
        if (v < 0 || v > 1e6)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "temperature %g is outside [0, 1e6]", v);
        g->sampling.temperature = v;
    } else if (strcmp(key, "top_p") == 0) {
        if (!(v > 0 && v <= 1))
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "top_p %g is outside (0, 1]", v);
        g->sampling.top_p = v;
    } else if (strcmp(key, "repetition_penalty") == 0) {
        if (!(v > 0 && v <= 1e6))
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "repetition_penalty %g is outside (0, 1e6]",
                             v);
        g->sampling.repetition_penalty = v;
    } else if (strcmp(key, "top_k") == 0 || strcmp(key, "seed") == 0) {
        if (v != (double)(int64_t)v)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "'%s' needs an integer, got %g", key, v);
        return mopt_generator_set_int(g, key, (int64_t)v);
    } else {
        return mopt_fail(MOPT_ERR_NOT_FOUND,
                         "unknown generator setting '%s' (known: temperature, top_k, top_p, "
                         "repetition_penalty, seed)",
                         key);
    }
    return MOPT_OK;
}

mopt_status mopt_generator_set_int(mopt_generator *g, const char *key, int64_t v) {
    mopt_clear_error();
    if (!g || !key)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_set: NULL argument");
    if (strcmp(key, "top_k") == 0) {
        if (v < 0) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "top_k %" PRId64 " < 0", v);
        g->sampling.top_k = v;
        return MOPT_OK;
    }
    if (strcmp(key, "seed") == 0) {
        g->sampling.seed = (uint64_t)v;
        return MOPT_OK;
    }
    return mopt_generator_set_double(g, key, (double)v);
}

mopt_status mopt_generator_set_stop_tokens(mopt_generator *g, const int64_t *tokens, size_t n) {
    mopt_clear_error();
    if (!g || (n && !tokens))
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_set_stop_tokens: NULL "
                                                    "argument");
    if (n > GEN_MAX_STOP)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_generator_set_stop_tokens: %zu tokens; at most %d", n, GEN_MAX_STOP);
    for (size_t i = 0; i < n; i++)
        g->stop[i] = tokens[i];
    g->n_stop = n;
    return MOPT_OK;
}

mopt_status mopt_generator_set_cancel(mopt_generator *g, int cancel) {
    if (!g) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_set_cancel: NULL");
    return mopt_run_options_set_terminate(g->run_options, cancel);
}

static bool cancelled(const mopt_generator *g) {
    return atomic_load(&g->run_options->terminate) != 0;
}

/* ---- running ---- */

/* Keeps the first `keep` positions of the cache: the [heads, n, head_dim]
 * layout packs heads by the past length, so shrinking it moves heads 1.. */
static void truncate_cache(mopt_generator *g, int64_t keep) {
    if (keep >= g->n_cached) return;
    if (g->seq_axis == 1) { /* token-major: the prefix is where it was */
        g->n_cached = keep;
        return;
    }
    size_t row = (size_t)g->head_dim;
    for (int c = 0; c < 2 * g->layers; c++) {
        float *b = g->caches[c].buf[g->cur];
        for (int64_t h = 1; h < g->heads && keep > 0; h++)
            memmove(b + (size_t)h * (size_t)keep * row, b + (size_t)h * (size_t)g->n_cached * row,
                    (size_t)keep * row * sizeof(float));
    }
    g->n_cached = keep;
}

static void put_int(mopt_dtype dt, void *base, int64_t i, int64_t v) {
    if (dt == MOPT_DTYPE_I64)
        ((int64_t *)base)[i] = v;
    else
        ((int32_t *)base)[i] = (int32_t)v;
}

static void point(mopt_tensor *t, int rank, const int64_t *dims, void *data, size_t elem) {
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        n *= (size_t)dims[i];
    }
    t->rank = rank;
    t->data = data;
    t->nbytes = n * elem;
}

/* Feeds tokens[0..n) after the cached positions; on success the cache holds
 * them too and logits row n - 1 is the next token's. A warm-up (create)
 * runs one token at position 0 after `past` positions of whatever the
 * cache holds, only so that the session plans the largest decode shapes,
 * and changes nothing the generator keeps. */
static mopt_status run_step(mopt_generator *g, const int64_t *tokens, int64_t n, int64_t past,
                            bool warm_up) {
    int64_t total = past + n;
    if (n > g->logits_cap) {
        mopt_status st = MOPT_OK;
        float *nl = alloc_bytes((size_t)n * (size_t)g->vocab, sizeof(float), &st);
        if (!nl) return st;
        mopt_aligned_free(g->logits);
        g->logits = nl;
        g->logits_cap = n;
        g->last_row = -1;
    }
    size_t isz = g->ids_dtype == MOPT_DTYPE_I64 ? 8 : 4;
    for (int64_t i = 0; i < n; i++)
        put_int(g->ids_dtype, g->ids, i, tokens[i]);
    int64_t d2[2] = {1, n};
    point(g->ids_t, 2, d2, g->ids, isz);
    if (g->pos_t) {
        for (int64_t i = 0; i < n; i++)
            put_int(g->pos_dtype, g->pos, i, warm_up ? 0 : past + i);
        point(g->pos_t, 2, d2, g->pos, g->pos_dtype == MOPT_DTYPE_I64 ? 8 : 4);
    }
    if (g->mask_t) {
        int64_t dm[2] = {1, total};
        point(g->mask_t, 2, dm, g->mask, g->mask_dtype == MOPT_DTYPE_I64 ? 8 : 4);
    }
    for (int c = 0; c < 2 * g->layers; c++) {
        gen_cache *ca = &g->caches[c];
        int64_t dp[4] = {1, g->heads, past, g->head_dim}, dn[4] = {1, g->heads, total, g->head_dim};
        if (g->seq_axis == 1) {
            dp[1] = past, dp[2] = g->heads;
            dn[1] = total, dn[2] = g->heads;
        }
        point(ca->past, 4, dp, ca->buf[g->cur], sizeof(float));
        point(ca->present, 4, dn, ca->buf[1 - g->cur], sizeof(float));
    }
    int64_t dl[3] = {1, n, g->vocab};
    point(g->logits_t, 3, dl, g->logits, sizeof(float));
    g->last_row = -1;
    int64_t plans0 = g->session->plans_recorded, heap0 = g->session->heap_tensors;
    int64_t t0 = mopt_now_ns();
    mopt_status st = mopt_session_run_v2(g->session, g->run_options, g->n_in, g->in_names,
                                         g->in_tensors, g->n_out, g->out_names, g->out_tensors);
    int64_t t1 = mopt_now_ns();
    if (st || warm_up) return st;
    g->last_step_ns = t1 - t0;
    g->last_step_plans = g->session->plans_recorded - plans0;
    g->last_step_heap = g->session->heap_tensors - heap0;
    g->last_step_inferred = g->session->run_inferred;
    if (g->seq_axis != 1) g->cur = 1 - g->cur;
    memcpy(g->history + past, tokens, (size_t)n * sizeof *tokens);
    g->n_cached = total;
    g->last_row = n - 1;
    g->steps++;
    return MOPT_OK;
}

static mopt_status step(mopt_generator *g, const int64_t *tokens, int64_t n) {
    return run_step(g, tokens, n, g->n_cached, false);
}

/* Decode steps see a new past length every time: the session is told that
 * the past and total dims are elastic and plans them once, at the cache's
 * capacity (one warm-up step), so that every later step reuses that plan
 * (no planning, no allocation). A model whose warm-up fails (positions
 * beyond the model's table, say) still generates, planning per step. */
static void plan_capacity(mopt_generator *g) {
    mopt_status st = MOPT_OK;
    for (int c = 0; c < 2 * g->layers && !st; c++)
        st = rt_session_elastic_dim(g->session, g->caches[c].in_name, g->seq_axis);
    if (!st && g->mask_t) st = rt_session_elastic_dim(g->session, "attention_mask", 1);
    if (!st && g->max_seq > 1) {
        int64_t tok = 0;
        st = run_step(g, &tok, 1, g->max_seq - 1, true);
    }
    g->capacity_planned = st == MOPT_OK && g->max_seq > 1;
    mopt_clear_error();
}

static bool is_stop(const mopt_generator *g, int64_t t) {
    for (size_t i = 0; i < g->n_stop; i++)
        if (g->stop[i] == t) return true;
    return false;
}

mopt_status mopt_generator_generate(mopt_generator *g, const int64_t *prompt, size_t n_prompt,
                                    size_t max_new, mopt_token_callback cb, void *user,
                                    size_t *n_generated) {
    mopt_clear_error();
    if (n_generated) *n_generated = 0;
    if (!g || !prompt || n_prompt == 0)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_generator_generate: NULL generator or empty prompt");
    for (size_t i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= g->vocab)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_generator_generate: prompt token %zu is %" PRId64
                             ", outside the vocabulary [0, %" PRId64 ")",
                             i, prompt[i], g->vocab);
    if ((int64_t)n_prompt > g->max_seq)
        return mopt_fail(MOPT_ERR_LIMIT,
                         "mopt_generator_generate: the prompt has %zu tokens; max_seq is %" PRId64,
                         n_prompt, g->max_seq);
    g->generated = 0;
    g->prefilled = 0;
    if (cancelled(g))
        return mopt_fail(MOPT_ERR_CANCELLED, "mopt_generator_generate: cancelled before the "
                                             "prefill");
    /* prefix reuse: keep what the cache shares with the prompt, but always
     * feed the prompt's last token so that its logits are computed */
    int64_t common = 0, lim = g->n_cached < (int64_t)n_prompt ? g->n_cached : (int64_t)n_prompt;
    while (common < lim && g->history[common] == prompt[common])
        common++;
    if (common == (int64_t)n_prompt) common--;
    truncate_cache(g, common);
    g->reused = common;
    memset(g->counts, 0, (size_t)g->vocab * sizeof *g->counts);
    for (size_t i = 0; i < n_prompt; i++)
        g->counts[prompt[i]]++;
    uint64_t rng = g->sampling.seed;
    int64_t t0 = mopt_now_ns();
    mopt_status st = step(g, prompt + common, (int64_t)n_prompt - common);
    if (st) return st;
    g->prefill_ns = mopt_now_ns() - t0;
    g->prefilled = (int64_t)n_prompt - common;
    for (size_t i = 0; i < max_new; i++) {
        const float *row = g->logits + (size_t)g->last_row * (size_t)g->vocab;
        int64_t tok = gen_sample(row, g->vocab, g->counts, &g->sampling, g->scratch, &rng);
        if (is_stop(g, tok)) break;
        g->generated++;
        if (n_generated) *n_generated = (size_t)g->generated;
        g->counts[tok]++;
        if (cb && cb(user, tok, i) != 0) break;
        if (i + 1 == max_new || g->n_cached >= g->max_seq) break;
        if (cancelled(g))
            return mopt_fail(MOPT_ERR_CANCELLED,
                             "mopt_generator_generate: cancelled after %zu tokens", i + 1);
        if ((st = step(g, &tok, 1))) return st;
    }
    return MOPT_OK;
}

const float *mopt_generator_logits(const mopt_generator *g) {
    if (!g || g->last_row < 0) return NULL;
    return g->logits + (size_t)g->last_row * (size_t)g->vocab;
}

void mopt_generator_reset(mopt_generator *g) {
    if (!g) return;
    g->n_cached = 0;
}

mopt_status mopt_generator_get_stat(const mopt_generator *g, const char *key, int64_t *value) {
    mopt_clear_error();
    if (!g || !key || !value)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_generator_get_stat: NULL argument");
    static const char *const keys[] = {"layers",           "heads",
                                       "head_dim",         "vocab",
                                       "max_seq",          "cached_tokens",
                                       "reused_tokens",    "prefill_tokens",
                                       "generated_tokens", "steps",
                                       "prefill_ns",       "last_step_ns",
                                       "last_step_plans",  "last_step_heap_tensors",
                                       "capacity_planned", "last_step_inferred_nodes",
                                       "kv_cache_bf16",    "kv_cache_bytes"};
    const int64_t vals[] = {
        g->layers,          g->heads,          g->head_dim,         g->vocab,
        g->max_seq,         g->n_cached,       g->reused,           g->prefilled,
        g->generated,       g->steps,          g->prefill_ns,       g->last_step_ns,
        g->last_step_plans, g->last_step_heap, g->capacity_planned, g->last_step_inferred,
        g->kv_bf16,         g->cache_bytes};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(key, keys[i]) == 0) {
            *value = vals[i];
            return MOPT_OK;
        }
    return mopt_fail(MOPT_ERR_NOT_FOUND,
                     "unknown generator statistic '%s' (known: layers, heads, head_dim, vocab, "
                     "max_seq, cached_tokens, reused_tokens, prefill_tokens, generated_tokens, "
                     "steps, prefill_ns, last_step_ns, last_step_plans, last_step_heap_tensors, "
                     "capacity_planned, last_step_inferred_nodes, kv_cache_bf16, "
                     "kv_cache_bytes)",
                     key);
}
