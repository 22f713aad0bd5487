/*
 * test_generator.c — mopt_generator on the committed tiny decoder
 * (examples/generate/kjv-tiny.onnx): cached generation equals recomputing
 * the whole prefix without a cache, seeded sampling repeats, top-k / top-p /
 * repetition penalty act as documented (by construction on the sampler and
 * statistically), the callback stops, stop tokens stop, cancellation from
 * the callback and from another thread, prefix reuse equals a fresh run,
 * and the argument errors. kv_cache_dtype=bf16 (the caches as bf16 tiles):
 * greedy tokens equal the f32 cache's over a prompt set, logits cosine,
 * half the cache bytes, no allocation per step, prefix reuse, the bad
 * option values refused, and the session refusing tiles for caches that
 * anything but KVAppend and DecodeAttention reads. Run from the project
 * root.
 */
#define MOPT_EXPERIMENTAL_API
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <mopt/mopt.h>

#include "../test_main.h"
#include "api/sampling.h"
#include "core/alloc.h"
#include "runtime/runtime.h"

#define MODEL "examples/generate/kjv-tiny.onnx"
#define VOCAB 256
#define MAXT 64

static mopt_model *g_model;    /* as exported: the recomputation oracle */
static mopt_model *g_model_kv; /* kv_cache=1: token-major caches, appended in place */
static mopt_model *g_gen;      /* the model make() builds generators on */

static int setup(void **state) {
    (void)state;
    mopt_options *o = NULL;
    if (mopt_options_create(&o) != MOPT_OK) return -1;
    if (mopt_options_set_int(o, "threads", 1) != MOPT_OK) return -1;
    mopt_status st = mopt_model_load(MODEL, o, &g_model);
    if (st == MOPT_OK) st = mopt_options_set_int(o, "kv_cache", 1);
    if (st == MOPT_OK) st = mopt_model_load(MODEL, o, &g_model_kv);
    mopt_options_destroy(o);
    if (st != MOPT_OK) fprintf(stderr, "load %s: %s\n", MODEL, mopt_last_error());
    g_gen = g_model_kv;
    return st == MOPT_OK ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    mopt_model_destroy(g_model);
    mopt_model_destroy(g_model_kv);
    return 0;
}

/* A generator on m, 1 thread, the KV cache stored as dtype (NULL: the
 * default). */
static mopt_generator *make_dtype(const mopt_model *m, const char *dtype, int64_t max_seq) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    if (dtype) assert_int_equal(mopt_options_set_string(o, "kv_cache_dtype", dtype), MOPT_OK);
    mopt_generator *g = NULL;
    mopt_status st = mopt_generator_create(m, o, max_seq, &g);
    if (st != MOPT_OK) fprintf(stderr, "%s\n", mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    mopt_options_destroy(o);
    return g;
}

static mopt_generator *make(int64_t max_seq) { return make_dtype(g_gen, NULL, max_seq); }

/* what the callback saw */
typedef struct seen {
    int64_t tok[MAXT];
    float logits[MAXT][VOCAB];
    size_t n;
    size_t stop_at; /* return 1 at this index (SIZE_MAX: never) */
    size_t cancel_at;
    mopt_generator *gen;
} seen;

static int record(void *user, int64_t token, size_t index) {
    seen *s = user;
    assert_int_equal(index, s->n);
    assert_true(s->n < MAXT);
    s->tok[s->n] = token;
    const float *l = mopt_generator_logits(s->gen);
    assert_non_null(l);
    memcpy(s->logits[s->n], l, sizeof s->logits[0]);
    s->n++;
    if (index == s->cancel_at) assert_int_equal(mopt_generator_set_cancel(s->gen, 1), MOPT_OK);
    return index == s->stop_at;
}

static size_t encode(const char *text, int64_t *ids) {
    size_t n = strlen(text);
    for (size_t i = 0; i < n; i++)
        ids[i] = (unsigned char)text[i];
    return n;
}

static void run(mopt_generator *g, const int64_t *p, size_t n, size_t max_new, seen *s) {
    memset(s->tok, 0, sizeof s->tok);
    s->n = 0;
    s->gen = g;
    size_t got = 0;
    mopt_status st = mopt_generator_generate(g, p, n, max_new, record, s, &got);
    if (st != MOPT_OK) fprintf(stderr, "%s\n", mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    assert_int_equal(got, s->n);
}

/* Runs the model over the whole sequence with empty past tensors: the
 * logits of its last position. */
static void recompute(const int64_t *seq, int64_t n, float *out) {
    mopt_session *ss = NULL;
    assert_int_equal(mopt_session_create(g_model, NULL, &ss), MOPT_OK);
    size_t n_in = mopt_model_io_count(g_model, MOPT_INPUT);
    const char *names[16];
    mopt_tensor *ins[16];
    int64_t *mask = malloc((size_t)n * 8), *pos = malloc((size_t)n * 8);
    for (int64_t i = 0; i < n; i++)
        mask[i] = 1, pos[i] = i;
    int64_t d2[2] = {1, n};
    static float dummy[1];
    for (size_t i = 0; i < n_in; i++) {
        names[i] = mopt_model_io_name(g_model, MOPT_INPUT, i);
        const void *data = seq;
        if (strcmp(names[i], "attention_mask") == 0) data = mask;
        if (strcmp(names[i], "position_ids") == 0) data = pos;
        if (strncmp(names[i], "past_key_values.", 16) == 0) {
            int64_t d4[4] = {1, mopt_model_io_dim(g_model, MOPT_INPUT, i, 1), 0,
                             mopt_model_io_dim(g_model, MOPT_INPUT, i, 3)};
            assert_int_equal(mopt_tensor_wrap_const(MOPT_DTYPE_F32, 4, d4, dummy, 0, &ins[i]),
                             MOPT_OK);
        } else {
            assert_int_equal(
                mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, d2, data, (size_t)n * 8, &ins[i]),
                MOPT_OK);
        }
    }
    const char *oname = "logits";
    mopt_tensor *logits = NULL;
    assert_int_equal(
        mopt_session_run(ss, n_in, names, (const mopt_tensor *const *)ins, 1, &oname, &logits),
        MOPT_OK);
    assert_int_equal(mopt_tensor_dim(logits, 1), n);
    memcpy(out, (const float *)mopt_tensor_data_const(logits) + (size_t)(n - 1) * VOCAB,
           VOCAB * sizeof(float));
    mopt_tensor_destroy(logits);
    for (size_t i = 0; i < n_in; i++)
        mopt_tensor_destroy(ins[i]);
    free(mask);
    free(pos);
    mopt_session_destroy(ss);
}

static int64_t argmax(const float *l) {
    int64_t b = 0;
    for (int64_t i = 1; i < VOCAB; i++)
        if (l[i] > l[b]) b = i;
    return b;
}

/* Greedy tokens with the cache are the tokens of recomputing the whole
 * prefix each step, and the logits agree within float rounding: on the
 * model as exported (a Concat per cache, two buffers swapped) and with
 * kv_cache=1 (token-major, appended in place). */
static void cache_equals_recompute(mopt_model *model) {
    g_gen = model;
    mopt_generator *g = make(256);
    g_gen = g_model_kv;
    int64_t stat = -1;
    assert_int_equal(mopt_generator_get_stat(g, "vocab", &stat), MOPT_OK);
    assert_int_equal(stat, VOCAB);
    int64_t seq[256];
    size_t n = encode("And God said, Let there be", seq);
    seen *s = calloc(1, sizeof *s);
    s->stop_at = s->cancel_at = SIZE_MAX;
    run(g, seq, n, 40, s);
    assert_int_equal(s->n, 40);
    float ref[VOCAB];
    for (size_t i = 0; i < s->n; i++) {
        recompute(seq, (int64_t)(n + i), ref);
        float worst = 0;
        for (int v = 0; v < VOCAB; v++)
            worst = fmaxf(worst, fabsf(ref[v] - s->logits[i][v]));
        if (worst > 1e-3f) fail_msg("step %zu: logits differ by %g from recomputation", i, worst);
        assert_int_equal(argmax(ref), s->tok[i]);
        seq[n + i] = s->tok[i];
    }
    assert_int_equal(mopt_generator_get_stat(g, "cached_tokens", &stat), MOPT_OK);
    assert_int_equal(stat, (int64_t)(n + 39)); /* the last token is not fed */
    free(s);
    mopt_generator_destroy(g);
}

/* One run of model with batch B, past P (random), S new tokens: logits and
 * present.0.value, head-major [B, H, P+S, D] whatever the model's layout.
 * in_place: the token-major present is bound to past's buffer (grown in
 * place, batch rows moving). */
#define KB 2
#define KP 5
#define KS 3
#define KH 4
#define KD 24
static void run_batch(mopt_model *model, bool token_major, bool in_place, bool padded,
                      float *logits, float *present) {
    mopt_session *ss = NULL;
    assert_int_equal(mopt_session_create(model, NULL, &ss), MOPT_OK);
    const int64_t T = KP + KS, n_cache = KB * T * KH * KD;
    static int64_t ids[KB * KS], mask[KB * (KP + KS)], pos[KB * KS];
    for (int b = 0; b < KB; b++) {
        for (int i = 0; i < KS; i++)
            ids[b * KS + i] = 'a' + 7 * b + i, pos[b * KS + i] = KP + i;
        for (int i = 0; i < T; i++)
            mask[b * T + i] = 1;
    }
    if (padded) /* batch 1 padded on the left, and a hole in batch 0's past */
        mask[T] = mask[T + 1] = 0, mask[3] = 0;
    size_t n_in = mopt_model_io_count(model, MOPT_INPUT),
           n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    const char *names[16];
    mopt_tensor *ins[16], *outs[16] = {0};
    float *bufs[16] = {0};
    for (size_t i = 0; i < n_in; i++) {
        names[i] = mopt_model_io_name(model, MOPT_INPUT, i);
        int64_t d2[2] = {KB, KS}, dm[2] = {KB, T};
        if (strcmp(names[i], "attention_mask") == 0) {
            assert_int_equal(
                mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, dm, mask, sizeof mask, &ins[i]), MOPT_OK);
        } else if (strncmp(names[i], "past_key_values.", 16) == 0) {
            /* the same values in both layouts: element (b, h, p, d) */
            float *buf = bufs[i] = calloc((size_t)n_cache, sizeof(float));
            for (int b = 0; b < KB; b++)
                for (int h = 0; h < KH; h++)
                    for (int p = 0; p < KP; p++)
                        for (int d = 0; d < KD; d++) {
                            float v = (float)sin(0.37 * (double)(((b * 7 + h) * 13 + p) * 29 + d) +
                                                 (double)i);
                            size_t at = token_major ? (((size_t)b * KP + p) * KH + h) * KD + d
                                                    : (((size_t)b * KH + h) * KP + p) * KD + d;
                            buf[at] = v;
                        }
            int64_t d4[4] = {KB, KH, KP, KD};
            if (token_major) d4[1] = KP, d4[2] = KH;
            assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, 4, d4, buf,
                                              (size_t)(KB * KP * KH * KD) * sizeof(float), &ins[i]),
                             MOPT_OK);
            if (in_place) {
                char oname[64];
                size_t o = 0;
                snprintf(oname, sizeof oname, "present.%s", names[i] + 16);
                assert_int_equal(mopt_model_io_find(model, MOPT_OUTPUT, oname, &o), MOPT_OK);
                int64_t dn[4] = {KB, T, KH, KD};
                assert_int_equal(mopt_tensor_wrap(MOPT_DTYPE_F32, 4, dn, buf,
                                                  (size_t)n_cache * sizeof(float), &outs[o]),
                                 MOPT_OK);
            }
        } else {
            const int64_t *data = strcmp(names[i], "position_ids") == 0 ? pos : ids;
            assert_int_equal(
                mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, d2, data, sizeof ids, &ins[i]), MOPT_OK);
        }
    }
    mopt_status st =
        mopt_session_run(ss, n_in, names, (const mopt_tensor *const *)ins, n_out, NULL, outs);
    if (st != MOPT_OK) fprintf(stderr, "%s\n", mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    size_t li = 0, pi = 0;
    assert_int_equal(mopt_model_io_find(model, MOPT_OUTPUT, "logits", &li), MOPT_OK);
    assert_int_equal(mopt_model_io_find(model, MOPT_OUTPUT, "present.0.value", &pi), MOPT_OK);
    memcpy(logits, mopt_tensor_data_const(outs[li]), (size_t)(KB * KS * VOCAB) * sizeof(float));
    const float *pv = mopt_tensor_data_const(outs[pi]);
    for (int b = 0; b < KB; b++)
        for (int h = 0; h < KH; h++)
            for (int t = 0; t < T; t++)
                for (int d = 0; d < KD; d++)
                    present[(((size_t)b * KH + h) * T + t) * KD + d] =
                        pv[token_major ? (((size_t)b * T + t) * KH + h) * KD + d
                                       : (((size_t)b * KH + h) * T + t) * KD + d];
    for (size_t i = 0; i < n_out; i++)
        mopt_tensor_destroy(outs[i]);
    for (size_t i = 0; i < n_in; i++) {
        mopt_tensor_destroy(ins[i]);
        free(bufs[i]);
    }
    mopt_session_destroy(ss);
}

/* The kv_cache rewrite computes what the exported graph computes, for a
 * batch of 2 with a past and several new tokens: separate buffers, and
 * present bound to past's buffer (batch 1's rows move up in place); with an
 * attention_mask of ones and with padding (the causal mask folded into
 * DecodeAttention: query positions and the key mask). */
MOPT_TEST(generator_kv_cache_rewrite_is_exact) {
    static float l0[KB * KS * VOCAB], l1[KB * KS * VOCAB], l2[KB * KS * VOCAB];
    static float p0[KB * KH * (KP + KS) * KD], p1[KB * KH * (KP + KS) * KD],
        p2[KB * KH * (KP + KS) * KD];
    static float l3[KB * KS * VOCAB];
    for (int padded = 0; padded < 2; padded++) {
        run_batch(g_model, false, false, padded, l0, p0);
        run_batch(g_model_kv, true, false, padded, l1, p1);
        run_batch(g_model_kv, true, true, padded, l2, p2);
        assert_memory_equal(p0, p1, sizeof p0); /* the same bytes, moved */
        assert_memory_equal(p0, p2, sizeof p0);
        float worst = 0;
        for (size_t i = 0; i < KB * KS * VOCAB; i++) {
            worst = fmaxf(worst, fabsf(l0[i] - l1[i]));
            assert_true(l1[i] == l2[i]);
        }
        if (worst > 1e-4f) fail_msg("kv_cache logits differ by %g (padded %d)", worst, padded);
        if (!padded) memcpy(l3, l0, sizeof l3);
    }
    /* the padding changed the logits (it is not ignored by both) */
    float moved = 0;
    for (size_t i = 0; i < KB * KS * VOCAB; i++)
        moved = fmaxf(moved, fabsf(l3[i] - l0[i]));
    assert_true(moved > 1e-3f);
}

MOPT_TEST(generator_cache_equals_recompute) { cache_equals_recompute(g_model); }

/* kv_cache=1: the pass report has its row (every cache rewritten: no
 * Concat copies the past any more), the caches are token-major, and the
 * generation equals recomputation. */
MOPT_TEST(generator_kv_cache_in_place) {
    size_t n = mopt_model_pass_count(g_model_kv), row = n;
    for (size_t i = 0; i < n; i++)
        if (strcmp(mopt_model_pass_name(g_model_kv, i), "kv_cache") == 0) row = i;
    assert_true(row < n);
    assert_int_equal(mopt_model_pass_rewrites(g_model_kv, row), 4); /* 2 layers x key, value */
    assert_non_null(strstr(mopt_model_pass_note(g_model_kv, row), "KVAppend"));
    /* both layers' attention fused over the caches (no CacheMatMul left) */
    assert_non_null(strstr(mopt_model_pass_note(g_model_kv, row), "2 DecodeAttention"));
    assert_null(strstr(mopt_model_pass_note(g_model_kv, row), "CacheMatMul"));
    /* and their causal mask folded into them (no mask nodes run per step) */
    assert_non_null(strstr(mopt_model_pass_note(g_model_kv, row), "2 causal masks folded"));
    size_t pi = 0;
    assert_int_equal(mopt_model_io_find(g_model_kv, MOPT_INPUT, "past_key_values.1.value", &pi),
                     MOPT_OK);
    assert_int_equal(mopt_model_io_dim(g_model_kv, MOPT_INPUT, pi, 2), 4);  /* heads */
    assert_int_equal(mopt_model_io_dim(g_model_kv, MOPT_INPUT, pi, 3), 24); /* head_dim */
    assert_int_equal(mopt_model_pass_count(g_model) > 0, 1);
    for (size_t i = 0; i < mopt_model_pass_count(g_model); i++)
        assert_string_not_equal(mopt_model_pass_name(g_model, i), "kv_cache");
    cache_equals_recompute(g_model_kv);
}

/* what a decode step cost the session: per token index, the allocations
 * (every mopt_* block, kernels' scratch included) since the previous
 * callback, the memory plans it made and its intermediates on the heap */
typedef struct step_costs {
    mopt_generator *gen;
    uint64_t last_count;
    int64_t allocs[MAXT], plans[MAXT], heap[MAXT], inferred[MAXT];
    size_t n;
} step_costs;

static int note_costs(void *user, int64_t token, size_t index) {
    (void)token;
    step_costs *c = user;
    uint64_t now = mopt_alloc_count();
    assert_true(index < MAXT);
    c->allocs[index] = (int64_t)(now - c->last_count);
    assert_int_equal(mopt_generator_get_stat(c->gen, "last_step_plans", &c->plans[index]), MOPT_OK);
    assert_int_equal(mopt_generator_get_stat(c->gen, "last_step_heap_tensors", &c->heap[index]),
                     MOPT_OK);
    assert_int_equal(
        mopt_generator_get_stat(c->gen, "last_step_inferred_nodes", &c->inferred[index]), MOPT_OK);
    c->n = index + 1;
    c->last_count = mopt_alloc_count();
    return 0;
}

/* A decode step reuses the plan made at the cache's capacity when the
 * generator was created: no memory plan, no heap intermediate, not one
 * allocation, although the past length is new at every step. */
MOPT_TEST(generator_decode_steps_allocate_nothing) {
    const int64_t max_seq = 1024; /* the model's position table */
    mopt_generator *g = make(max_seq);
    int64_t planned = 0;
    assert_int_equal(mopt_generator_get_stat(g, "capacity_planned", &planned), MOPT_OK);
    assert_int_equal(planned, 1);
    int64_t p[32];
    size_t n = encode("In the beginning", p);
    step_costs *c = calloc(1, sizeof *c);
    c->gen = g;
    c->last_count = mopt_alloc_count();
    size_t got = 0;
    assert_int_equal(mopt_generator_generate(g, p, n, MAXT, note_costs, c, &got), MOPT_OK);
    assert_int_equal(got, MAXT);
    assert_int_equal(c->n, MAXT);
    /* index 0 follows the prefill (a new prompt length plans once) */
    for (size_t i = 1; i < c->n; i++) {
        if (c->allocs[i] || c->plans[i] || c->heap[i])
            fail_msg("decode step %zu (past %zu): %lld allocations, %lld plans, %lld heap tensors",
                     i, n + i - 1, (long long)c->allocs[i], (long long)c->plans[i],
                     (long long)c->heap[i]);
    }
    /* the same counters do see a step that plans: the prefill (a new
     * prompt length) plans, and infers every node's shapes; a decode step
     * infers only the nodes whose shapes follow the past length (the
     * attention's, the mask's), the others' come from the plan */
    assert_true(c->plans[0] == 1 && c->heap[0] > 0);
    for (size_t i = 1; i < c->n; i++) {
        assert_true(c->inferred[i] > 0);
        assert_true(2 * c->inferred[i] < c->inferred[0]);
    }
    fprintf(stderr, "decode step: %lld of %lld nodes infer their shapes\n",
            (long long)c->inferred[1], (long long)c->inferred[0]);
    free(c);
    mopt_generator_destroy(g);
}

MOPT_TEST(generator_seeded_sampling_repeats) {
    mopt_generator *g = make(128);
    assert_int_equal(mopt_generator_set_double(g, "temperature", 1.0), MOPT_OK);
    int64_t p[32];
    size_t n = encode("In the beginning", p);
    seen *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b), *c = calloc(1, sizeof *c);
    a->stop_at = b->stop_at = c->stop_at = SIZE_MAX;
    a->cancel_at = b->cancel_at = c->cancel_at = SIZE_MAX;
    assert_int_equal(mopt_generator_set_int(g, "seed", 42), MOPT_OK);
    run(g, p, n, 48, a);
    mopt_generator_reset(g);
    run(g, p, n, 48, b);
    assert_memory_equal(a->tok, b->tok, sizeof a->tok);
    assert_int_equal(mopt_generator_set_int(g, "seed", 43), MOPT_OK);
    run(g, p, n, 48, c);
    assert_memory_not_equal(a->tok, c->tok, sizeof a->tok);
    /* a second generator with the same seed: the same tokens */
    mopt_generator *h = make(128);
    assert_int_equal(mopt_generator_set_double(h, "temperature", 1.0), MOPT_OK);
    assert_int_equal(mopt_generator_set_int(h, "seed", 42), MOPT_OK);
    run(h, p, n, 48, c);
    assert_memory_equal(a->tok, c->tok, sizeof a->tok);
    /* top_k 1 at any temperature is greedy */
    assert_int_equal(mopt_generator_set_int(h, "top_k", 1), MOPT_OK);
    assert_int_equal(mopt_generator_set_double(h, "temperature", 5.0), MOPT_OK);
    run(h, p, n, 24, c);
    for (size_t i = 0; i < c->n; i++)
        assert_int_equal(c->tok[i], argmax(c->logits[i]));
    /* through the generator on the real model: with top_k 3 every token is
     * among the 3 largest logits it was drawn from; with top_p 0.5 (top_k
     * off) inside the nucleus of its softmax */
    assert_int_equal(mopt_generator_set_int(h, "top_k", 3), MOPT_OK);
    assert_int_equal(mopt_generator_set_double(h, "temperature", 1.0), MOPT_OK);
    run(h, p, n, 48, c);
    for (size_t i = 0; i < c->n; i++) {
        int above = 0;
        for (int v = 0; v < VOCAB; v++)
            above += c->logits[i][v] > c->logits[i][c->tok[i]];
        assert_true(above < 3);
    }
    assert_int_equal(mopt_generator_set_int(h, "top_k", 0), MOPT_OK);
    assert_int_equal(mopt_generator_set_double(h, "top_p", 0.5), MOPT_OK);
    run(h, p, n, 48, c);
    for (size_t i = 0; i < c->n; i++) {
        const float *l = c->logits[i];
        float mx = l[argmax(l)];
        double z = 0, above = 0;
        for (int v = 0; v < VOCAB; v++)
            z += exp((double)(l[v] - mx));
        for (int v = 0; v < VOCAB; v++)
            if (l[v] > l[c->tok[i]]) above += exp((double)(l[v] - mx)) / z;
        /* the tokens more likely than it hold less than top_p */
        assert_true(above < 0.5 + 1e-6);
    }
    free(a), free(b), free(c);
    mopt_generator_destroy(g);
    mopt_generator_destroy(h);
}

/* The sampler itself: top-k and top-p support by construction, the draw
 * frequencies statistically, the repetition penalty's rule. */
MOPT_TEST(generator_sampler_support) {
    float logits[8] = {0.1f, 2.0f, -1.0f, 1.5f, 0.0f, 1.0f, -3.0f, 0.5f};
    gen_cand scratch[8];
    uint64_t rng = 7;
    gen_sampling cfg = {.temperature = 1.0, .top_k = 3, .top_p = 1.0, .repetition_penalty = 1.0};
    int hist[8] = {0};
    const int draws = 20000;
    for (int i = 0; i < draws; i++)
        hist[gen_sample(logits, 8, NULL, &cfg, scratch, &rng)]++;
    /* only the three largest (ids 1, 3, 5) */
    for (int t = 0; t < 8; t++)
        if (t != 1 && t != 3 && t != 5) assert_int_equal(hist[t], 0);
    double z = exp(2.0) + exp(1.5) + exp(1.0);
    const int ids[3] = {1, 3, 5};
    const double lg[3] = {2.0, 1.5, 1.0};
    for (int k = 0; k < 3; k++) {
        double p = exp(lg[k]) / z, want = p * draws, sd = sqrt(draws * p * (1 - p));
        if (fabs(hist[ids[k]] - want) > 5 * sd)
            fail_msg("top_k: id %d drawn %d times, expected %.0f +- %.0f", ids[k], hist[ids[k]],
                     want, sd);
    }
    /* top_p: probabilities of ids 1, 3, 5, 7 ... ; the nucleus 0.6 holds
     * ids 1 and 3 (p1 = 0.39 < 0.6 <= p1 + p3 = 0.63) */
    cfg.top_k = 0;
    cfg.top_p = 0.6;
    memset(hist, 0, sizeof hist);
    for (int i = 0; i < draws; i++)
        hist[gen_sample(logits, 8, NULL, &cfg, scratch, &rng)]++;
    for (int t = 0; t < 8; t++)
        if (t != 1 && t != 3) assert_int_equal(hist[t], 0);
    assert_true(hist[1] > hist[3] && hist[3] > draws / 5);
    /* greedy with the repetition penalty: 2.0 / 2 = 1.0 < 1.5 */
    cfg = (gen_sampling){.temperature = 0, .top_p = 1.0, .repetition_penalty = 2.0};
    int32_t counts[8] = {0, 1, 0, 0, 0, 0, 0, 0};
    assert_int_equal(gen_sample(logits, 8, counts, &cfg, scratch, &rng), 3);
    assert_int_equal(gen_sample(logits, 8, NULL, &cfg, scratch, &rng), 1);
    /* a negative logit is multiplied: -3 * 2 stays below; make id 6 the
     * only candidate above 0 after the others are penalized */
    float neg[3] = {-1.0f, -0.9f, -2.0f};
    int32_t c2[3] = {0, 1, 0};
    /* -0.9 * 2 = -1.8 < -1.0: id 0 wins */
    assert_int_equal(gen_sample(neg, 3, c2, &cfg, scratch, &rng), 0);
}

MOPT_TEST(generator_callback_stop_and_stop_tokens) {
    mopt_generator *g = make(128);
    int64_t p[32];
    size_t n = encode("The LORD is my", p);
    seen *s = calloc(1, sizeof *s);
    s->stop_at = s->cancel_at = SIZE_MAX;
    run(g, p, n, 30, s);
    int64_t all[MAXT];
    memcpy(all, s->tok, sizeof all);
    /* the callback stops at index 4: five tokens */
    s->stop_at = 4;
    run(g, p, n, 30, s);
    assert_int_equal(s->n, 5);
    assert_memory_equal(s->tok, all, 5 * sizeof(int64_t));
    int64_t v = 0;
    assert_int_equal(mopt_generator_get_stat(g, "generated_tokens", &v), MOPT_OK);
    assert_int_equal(v, 5);
    /* a stop token: generation ends before its first occurrence */
    size_t first = 0;
    while (first < 29 && all[first] == all[0])
        first++; /* a token that does not start the run */
    int64_t stop = all[first];
    size_t k = 0;
    while (all[k] != stop)
        k++;
    assert_int_equal(mopt_generator_set_stop_tokens(g, &stop, 1), MOPT_OK);
    s->stop_at = SIZE_MAX;
    run(g, p, n, 30, s);
    assert_int_equal(s->n, k);
    assert_int_equal(mopt_generator_set_stop_tokens(g, NULL, 0), MOPT_OK);
    run(g, p, n, 30, s);
    assert_int_equal(s->n, 30);
    free(s);
    mopt_generator_destroy(g);
}

static void *cancel_later(void *arg) {
    struct timespec ts = {0, 3 * 1000 * 1000};
    nanosleep(&ts, NULL);
    if (mopt_generator_set_cancel(arg, 1) != MOPT_OK) abort();
    return NULL;
}

static int count_only(void *user, int64_t token, size_t index) {
    (void)token, (void)index;
    (*(size_t *)user)++;
    return 0;
}

MOPT_TEST(generator_cancellation) {
    mopt_generator *g = make(1024);
    int64_t p[32];
    size_t n = encode("For God so loved", p);
    seen *s = calloc(1, sizeof *s);
    s->stop_at = SIZE_MAX;
    s->cancel_at = 3; /* set from the callback: the next step does not run */
    s->gen = g;
    size_t got = 99;
    assert_int_equal(mopt_generator_generate(g, p, n, 30, record, s, &got), MOPT_ERR_CANCELLED);
    assert_int_equal(got, 4);
    assert_non_null(strstr(mopt_last_error(), "cancelled"));
    /* still set: the next request fails at once; cleared: it runs */
    assert_int_equal(mopt_generator_generate(g, p, n, 30, NULL, NULL, &got), MOPT_ERR_CANCELLED);
    assert_int_equal(got, 0);
    assert_int_equal(mopt_generator_set_cancel(g, 0), MOPT_OK);
    s->cancel_at = SIZE_MAX;
    run(g, p, n, 10, s);
    assert_int_equal(s->n, 10);
    /* from another thread, during a long generation */
    mopt_generator_reset(g);
    size_t count = 0;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, cancel_later, g), 0);
    mopt_status st = mopt_generator_generate(g, p, n, 1000, count_only, &count, &got);
    pthread_join(th, NULL);
    if (st == MOPT_OK) {
        /* the machine was too slow to start the thread in time: all done */
        assert_int_equal(got, 1000);
    } else {
        assert_int_equal(st, MOPT_ERR_CANCELLED);
        assert_true(got < 1000);
        assert_int_equal(got, count);
    }
    assert_int_equal(mopt_generator_set_cancel(g, 0), MOPT_OK);
    free(s);
    mopt_generator_destroy(g);
}

/* A prompt that extends the previous request reuses its cache and gives
 * exactly what a fresh generator gives; so does one that diverges. */
MOPT_TEST(generator_prefix_reuse) {
    mopt_generator *g = make(256), *fresh = make(256);
    int64_t p[256];
    size_t n = encode("Blessed are the meek: for they", p);
    seen *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    a->stop_at = b->stop_at = a->cancel_at = b->cancel_at = SIZE_MAX;
    run(g, p, n, 20, a);
    /* the new prompt: the old prompt, 12 of its tokens and more text */
    size_t m = n;
    for (size_t i = 0; i < 12; i++)
        p[m++] = a->tok[i];
    m += encode(" shall", p + m);
    /* the cache holds the old prompt and the 19 tokens fed after it (the
     * 20th was sampled, never fed); " shall" may share its start with them */
    size_t expect = n + 12;
    while (expect < m - 1 && expect - n < 19 && p[expect] == a->tok[expect - n])
        expect++;
    run(g, p, m, 20, a);
    int64_t reused = 0, prefilled = 0;
    assert_int_equal(mopt_generator_get_stat(g, "reused_tokens", &reused), MOPT_OK);
    assert_int_equal(mopt_generator_get_stat(g, "prefill_tokens", &prefilled), MOPT_OK);
    assert_int_equal(reused, (int64_t)expect);
    assert_int_equal(prefilled, (int64_t)(m - expect));
    run(fresh, p, m, 20, b);
    assert_memory_equal(a->tok, b->tok, sizeof a->tok);
    for (size_t i = 0; i < a->n; i++)
        for (int v = 0; v < VOCAB; v++)
            assert_float_equal(a->logits[i][v], b->logits[i][v], 1e-4);
    /* the same prompt again: only its last token is fed */
    run(g, p, m, 20, a);
    assert_int_equal(mopt_generator_get_stat(g, "prefill_tokens", &prefilled), MOPT_OK);
    assert_int_equal(prefilled, 1);
    assert_memory_equal(a->tok, b->tok, sizeof a->tok);
    /* a prompt that diverges after 10 tokens: the cache is cut back */
    p[10] = 'X';
    run(g, p, m, 20, a);
    assert_int_equal(mopt_generator_get_stat(g, "reused_tokens", &reused), MOPT_OK);
    assert_int_equal(reused, 10);
    mopt_generator_reset(fresh);
    run(fresh, p, m, 20, b);
    assert_memory_equal(a->tok, b->tok, sizeof a->tok);
    for (size_t i = 0; i < a->n; i++)
        for (int v = 0; v < VOCAB; v++)
            assert_float_equal(a->logits[i][v], b->logits[i][v], 1e-4);
    free(a), free(b);
    mopt_generator_destroy(g);
    mopt_generator_destroy(fresh);
}

MOPT_TEST(generator_argument_errors) {
    mopt_generator *g = NULL;
    assert_int_equal(mopt_generator_create(NULL, NULL, 16, &g), MOPT_ERR_INVALID_ARGUMENT);
    assert_null(g);
    assert_int_equal(mopt_generator_create(g_model, NULL, 0, &g), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "max_seq"));
    assert_int_equal(mopt_generator_create(g_model, NULL, 16, NULL), MOPT_ERR_INVALID_ARGUMENT);
    g = make(16);
    int64_t p[32];
    size_t n = encode("0123456789abcdefgh", p); /* 18 > 16 */
    size_t got = 5;
    assert_int_equal(mopt_generator_generate(g, p, n, 4, NULL, NULL, &got), MOPT_ERR_LIMIT);
    assert_int_equal(got, 0);
    assert_int_equal(mopt_generator_generate(g, p, 0, 4, NULL, NULL, &got),
                     MOPT_ERR_INVALID_ARGUMENT);
    p[0] = 300;
    assert_int_equal(mopt_generator_generate(g, p, 4, 4, NULL, NULL, &got),
                     MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "vocabulary"));
    /* the cache fills up: generation ends at max_seq, OK */
    p[0] = 'a';
    assert_int_equal(mopt_generator_generate(g, p, 10, 100, NULL, NULL, &got), MOPT_OK);
    assert_int_equal(got, 7); /* 10 + 6 fed = 16 positions, plus the last sampled */
    assert_int_equal(mopt_generator_set_double(g, "temperature", -1), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_generator_set_double(g, "top_p", 0), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_generator_set_double(g, "top_p", 1.5), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_generator_set_double(g, "repetition_penalty", 0),
                     MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_generator_set_int(g, "top_k", -1), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_generator_set_int(g, "beam_width", 2), MOPT_ERR_NOT_FOUND);
    int64_t v;
    assert_int_equal(mopt_generator_get_stat(g, "nope", &v), MOPT_ERR_NOT_FOUND);
    int64_t many[65] = {0};
    assert_int_equal(mopt_generator_set_stop_tokens(g, many, 65), MOPT_ERR_INVALID_ARGUMENT);
    assert_null(mopt_generator_logits(NULL));
    mopt_generator_destroy(g);
    mopt_generator_destroy(NULL);
    mopt_generator_reset(NULL);
}

/* ---- kv_cache_dtype=bf16 ---- */

#define BF_STEPS 256
#define BF_SEQ 288 /* a multiple of the tiles' 32 keys: bf16 bytes are half of f32's */

typedef struct trace {
    int64_t tok[BF_STEPS];
    float *logits; /* BF_STEPS x VOCAB */
    size_t n;
    mopt_generator *gen;
} trace;

static int trace_token(void *user, int64_t token, size_t index) {
    trace *t = user;
    (void)index;
    if (t->n < BF_STEPS) {
        t->tok[t->n] = token;
        memcpy(t->logits + t->n * VOCAB, mopt_generator_logits(t->gen), VOCAB * sizeof(float));
        t->n++;
    }
    return 0;
}

static int64_t stat_of(const mopt_generator *g, const char *key) {
    int64_t v = -1;
    assert_int_equal(mopt_generator_get_stat(g, key, &v), MOPT_OK);
    return v;
}

/* Over 8 prompts x 256 greedy tokens, the bf16 tiles give the f32 cache's
 * tokens, and logits whose cosine with the f32 ones is above 0.9999 at
 * every step (printed: the smallest, and the largest logit difference). */
MOPT_TEST(generator_kv_bf16_greedy_equals_f32) {
    static const char *const prompts[] = {
        "In the beginning",    "And God said",     "The LORD is my shepherd", "Blessed are the",
        "And it came to pass", "For God so loved", "Thou shalt not",          "Let there be"};
    mopt_generator *gf = make_dtype(g_model_kv, "f32", BF_SEQ);
    mopt_generator *gb = make_dtype(g_model_kv, "bf16", BF_SEQ);
    assert_int_equal(stat_of(gf, "kv_cache_bf16"), 0);
    assert_int_equal(stat_of(gb, "kv_cache_bf16"), 1);
    /* 2 layers x (K, V), 4 heads of 24 */
    assert_int_equal(stat_of(gf, "kv_cache_bytes"), 4 * BF_SEQ * 4 * 24 * 4);
    assert_int_equal(stat_of(gb, "kv_cache_bytes"), 4 * BF_SEQ * 4 * 24 * 2);
    assert_int_equal(stat_of(gb, "capacity_planned"), 1);
    trace tf = {.logits = malloc(BF_STEPS * VOCAB * sizeof(float)), .gen = gf};
    trace tb = {.logits = malloc(BF_STEPS * VOCAB * sizeof(float)), .gen = gb};
    double min_cos = 1.0, max_diff = 0.0;
    size_t steps = 0;
    for (size_t i = 0; i < sizeof prompts / sizeof *prompts; i++) {
        int64_t p[64];
        size_t n = encode(prompts[i], p), got_f = 0, got_b = 0;
        tf.n = tb.n = 0;
        mopt_generator_reset(gf);
        mopt_generator_reset(gb);
        assert_int_equal(mopt_generator_generate(gf, p, n, BF_STEPS, trace_token, &tf, &got_f),
                         MOPT_OK);
        assert_int_equal(mopt_generator_generate(gb, p, n, BF_STEPS, trace_token, &tb, &got_b),
                         MOPT_OK);
        assert_int_equal(got_f, BF_STEPS);
        assert_int_equal(got_b, BF_STEPS);
        assert_memory_equal(tf.tok, tb.tok, sizeof tf.tok);
        for (size_t s = 0; s < BF_STEPS; s++) {
            const float *a = tf.logits + s * VOCAB, *b = tb.logits + s * VOCAB;
            double ab = 0, aa = 0, bb = 0;
            for (int v = 0; v < VOCAB; v++) {
                ab += (double)a[v] * b[v], aa += (double)a[v] * a[v], bb += (double)b[v] * b[v];
                max_diff = fmax(max_diff, fabs((double)a[v] - b[v]));
            }
            const double c = ab / sqrt(aa * bb);
            min_cos = fmin(min_cos, c);
            if (!(c > 0.9999)) fail_msg("prompt %zu step %zu: logits cosine %.7f", i, s, c);
            steps++;
        }
        /* the bf16 steps make no plan and allocate nothing either */
        assert_int_equal(stat_of(gb, "last_step_plans"), 0);
        assert_int_equal(stat_of(gb, "last_step_heap_tensors"), 0);
    }
    /* the caches are bf16: some logits differ from the f32 cache's */
    assert_true(max_diff > 0.0);
    printf("kv_cache_dtype=bf16: %zu greedy steps, same tokens; logits cosine >= %.7f, max |diff| "
           "%.3g\n",
           steps, min_cos, max_diff);
    free(tf.logits);
    free(tb.logits);
    mopt_generator_destroy(gf);
    mopt_generator_destroy(gb);
}

/* Prefix reuse over the tiles: a prompt extending the cached one, and one
 * diverging from it, equal a fresh bf16 generator's run. */
MOPT_TEST(generator_kv_bf16_prefix_reuse) {
    mopt_generator *g = make_dtype(g_model_kv, "bf16", 128);
    int64_t a[64], b[64], c[64];
    size_t na = encode("And God said, Let there", a), nb = encode("And God said, Let there be", b);
    size_t nc = encode("And God saw the light", c);
    static seen s1, s2;
    s1.stop_at = s1.cancel_at = s2.stop_at = s2.cancel_at = SIZE_MAX;
    run(g, a, na, 8, &s1);
    for (int k = 0; k < 2; k++) {
        const int64_t *p = k ? c : b;
        size_t n = k ? nc : nb;
        run(g, p, n, 24, &s1);
        assert_true(stat_of(g, "reused_tokens") > 0);
        mopt_generator *f = make_dtype(g_model_kv, "bf16", 128);
        run(f, p, n, 24, &s2);
        assert_int_equal(s1.n, s2.n);
        assert_memory_equal(s1.tok, s2.tok, s1.n * sizeof *s1.tok);
        mopt_generator_destroy(f);
    }
    mopt_generator_destroy(g);
}

/* Bad values: a dtype other than f32 / bf16, the wrong kind, and bf16 on a
 * model whose caches are as exported (no kv_cache=1). */
MOPT_TEST(generator_kv_bf16_refused) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    const char *v = NULL;
    assert_int_equal(mopt_options_get_string(o, "kv_cache_dtype", &v), MOPT_OK);
    assert_string_equal(v, "f32"); /* the default */
    assert_int_equal(mopt_options_set_string(o, "kv_cache_dtype", "fp16"),
                     MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "kv_cache_dtype"));
    assert_non_null(strstr(mopt_last_error(), "f32, bf16"));
    assert_int_equal(mopt_options_set_string(o, "kv_cache_dtype", ""), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_options_set_int(o, "kv_cache_dtype", 1), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_options_set_string(o, "kv_cache_dtype", "bf16"), MOPT_OK);
    mopt_generator *g = NULL;
    assert_int_equal(mopt_generator_create(g_model, o, 64, &g), MOPT_ERR_UNSUPPORTED);
    assert_null(g);
    assert_non_null(strstr(mopt_last_error(), "kv_cache_dtype=bf16"));
    assert_non_null(strstr(mopt_last_error(), "kv_cache=1"));
    mopt_options_destroy(o);
}

/* The session refuses tiles for caches something else reads: the model as
 * exported (a Concat reads past), and K and V given the other way round (a
 * DecodeAttention reads the K cache at input 1, not as V). */
MOPT_TEST(generator_kv_tiles_refused_by_the_session) {
    static uint16_t buf[2][64 * 4 * 24];
    void *bufs[2] = {buf[0], buf[1]};
    const char *past[2] = {"past_key_values.0.key", "past_key_values.0.value"};
    const char *present[2] = {"present.0.key", "present.0.value"};
    const bool kv[2] = {false, true}, vk[2] = {true, false};
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(g_model, NULL, &s), MOPT_OK);
    assert_int_equal(rt_session_kv_tiles(s, 2, past, present, bufs, kv, 64, 4, 24),
                     MOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(mopt_last_error(), "mopt.KVAppend"));
    mopt_session_destroy(s);
    assert_int_equal(mopt_session_create(g_model_kv, NULL, &s), MOPT_OK);
    assert_int_equal(rt_session_kv_tiles(s, 2, past, present, bufs, vk, 64, 4, 24),
                     MOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(mopt_last_error(), "DecodeAttention"));
    assert_int_equal(rt_session_kv_tiles(s, 2, past, present, bufs, kv, 60, 4, 24),
                     MOPT_ERR_INVALID_ARGUMENT); /* not whole tiles */
    assert_int_equal(rt_session_kv_tiles(s, 2, past, present, bufs, kv, 64, 4, 24), MOPT_OK);
    assert_int_equal(s->n_kv_tiles, 2);
    mopt_session_destroy(s);
}

MOPT_TEST_MAIN_WITH(setup, teardown, cmocka_unit_test(generator_cache_equals_recompute),
                    cmocka_unit_test(generator_kv_cache_in_place),
                    cmocka_unit_test(generator_kv_cache_rewrite_is_exact),
                    cmocka_unit_test(generator_decode_steps_allocate_nothing),
                    cmocka_unit_test(generator_seeded_sampling_repeats),
                    cmocka_unit_test(generator_sampler_support),
                    cmocka_unit_test(generator_callback_stop_and_stop_tokens),
                    cmocka_unit_test(generator_cancellation),
                    cmocka_unit_test(generator_prefix_reuse),
                    cmocka_unit_test(generator_argument_errors),
                    cmocka_unit_test(generator_kv_bf16_greedy_equals_f32),
                    cmocka_unit_test(generator_kv_bf16_prefix_reuse),
                    cmocka_unit_test(generator_kv_bf16_refused),
                    cmocka_unit_test(generator_kv_tiles_refused_by_the_session))
