/*
 * generate_bench.c — per-token latency of mopt_generator (run by hand, not a
 * timed test): (1) the decode step time of token t with the KV cache, for t
 * from 16 to 256, median over repeats; (2) what the same token costs when
 * the whole prefix is recomputed without a cache (one run over prompt + t
 * positions with empty past), at t = 128; (3) the share of a decode step
 * spent in the graph's Concat(past, new) nodes (profiled session). Beside
 * the wall time of each step, the thread CPU time between two tokens (the
 * step plus sampling), which time slices lost to other processes do not
 * inflate.
 *
 *   generate_bench [--model PATH] [--threads N] [--repeats R] [--prompt N]
 *                  [--kv-cache 0|1] [--max-seq N] [--kv-dtype f32|bf16]
 *
 * --kv-dtype sets the generator's kv_cache_dtype (bf16: caches as bf16
 * tiles); (2) and (3) run sessions over f32 rows either way.
 */
#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_bench.h"

static int TOKENS = 256;

static int64_t median(int64_t *v, size_t n) {
    qsort(v, n, sizeof *v, bench_cmp_i64);
    return v[n / 2];
}

static int64_t cpu_ns(void) { /* this thread's CPU time */
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

typedef struct rec {
    mopt_generator *gen;
    int64_t *step_ns; /* [TOKENS]: the run that produced token i's logits */
    int64_t *cpu;     /* [TOKENS]: thread CPU time since the previous token (step + sampling) */
    int64_t last_cpu;
} rec;

static int on_token(void *user, int64_t token, size_t i) {
    rec *r = user;
    (void)token;
    int64_t ns = 0, c = cpu_ns();
    if (mopt_generator_get_stat(r->gen, "last_step_ns", &ns) != MOPT_OK) return 1;
    if (i < (size_t)TOKENS) r->step_ns[i] = ns, r->cpu[i] = c - r->last_cpu;
    r->last_cpu = c;
    return 0;
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        mopt_status st_ = (x);                                                                     \
        if (st_ != MOPT_OK) {                                                                      \
            fprintf(stderr, "%s: %s: %s\n", #x, mopt_status_string(st_), mopt_last_error());       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* One run of the model over n new tokens after `past` cached positions
 * (small values written into every page, so that the caches are real
 * memory as a generator's are, not the shared zero page), as a generator
 * step or a recomputation (past = 0) does; returns its wall time, and the
 * time of the Concat (KVAppend) nodes when profiling. Token-major caches
 * (kv_cache=1) are bound as the generator binds them: present.N.* to
 * past_key_values.N.*'s buffer (in place). */
static int64_t run_once(const mopt_model *model, mopt_session *s, int64_t past, int64_t n,
                        int64_t *concat_ns) {
    size_t n_in = mopt_model_io_count(model, MOPT_INPUT);
    const char *names[64];
    mopt_tensor *ins[64];
    float *cache[64] = {0};
    size_t n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    mopt_tensor *outs[64] = {0};
    int64_t total = past + n;
    int64_t *ids = calloc((size_t)total, 8), *mask = calloc((size_t)total, 8);
    for (int64_t i = 0; i < total; i++) {
        ids[i] = 'a' + i % 26;
        mask[i] = 1;
    }
    for (size_t i = 0; i < n_in && i < 64; i++) {
        names[i] = mopt_model_io_name(model, MOPT_INPUT, i);
        int64_t d2[2] = {1, n}, dm[2] = {1, total};
        if (strcmp(names[i], "attention_mask") == 0) {
            CHECK(mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, dm, mask, (size_t)total * 8, &ins[i]));
        } else if (strcmp(names[i], "position_ids") == 0) {
            CHECK(mopt_tensor_create(MOPT_DTYPE_I64, 2, d2, &ins[i]));
            int64_t *p = mopt_tensor_data(ins[i]);
            for (int64_t k = 0; k < n; k++)
                p[k] = past + k;
        } else if (strncmp(names[i], "past_key_values.", 16) == 0) {
            int64_t d4[4] = {1, mopt_model_io_dim(model, MOPT_INPUT, i, 1), past,
                             mopt_model_io_dim(model, MOPT_INPUT, i, 3)};
            if (d4[1] <= 0) { /* token-major (kv_cache=1): in place */
                int64_t H = mopt_model_io_dim(model, MOPT_INPUT, i, 2), D = d4[3];
                int64_t dp[4] = {1, past, H, D}, dn[4] = {1, total, H, D};
                size_t o = 0;
                char oname[128];
                snprintf(oname, sizeof oname, "present.%s", names[i] + 16);
                CHECK(mopt_model_io_find(model, MOPT_OUTPUT, oname, &o));
                cache[i] = calloc((size_t)(total * H * D), sizeof(float));
                for (int64_t e = 0; e < total * H * D; e++) /* real pages, as a step reads */
                    cache[i][e] = 0.01f * (float)(e % 7);
                CHECK(mopt_tensor_wrap(MOPT_DTYPE_F32, 4, dp, cache[i],
                                       (size_t)(past * H * D) * sizeof(float), &ins[i]));
                CHECK(mopt_tensor_wrap(MOPT_DTYPE_F32, 4, dn, cache[i],
                                       (size_t)(total * H * D) * sizeof(float), &outs[o]));
            } else {
                CHECK(mopt_tensor_create(MOPT_DTYPE_F32, 4, d4, &ins[i]));
            }
        } else {
            CHECK(
                mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, d2, ids + past, (size_t)n * 8, &ins[i]));
        }
    }
    int64_t t0 = bench_now_ns();
    CHECK(mopt_session_run(s, n_in, names, (const mopt_tensor *const *)ins, n_out, NULL, outs));
    int64_t dt = bench_now_ns() - t0;
    if (concat_ns) {
        *concat_ns = 0;
        for (size_t k = 0; k < mopt_session_profile_count(s); k++)
            if (strcmp(mopt_session_profile_op(s, k), "Concat") == 0 ||
                strstr(mopt_session_profile_op(s, k), "KVAppend"))
                *concat_ns += mopt_session_profile_ns(s, k);
    }
    if (getenv("GENERATE_BENCH_OPS") && concat_ns) { /* per-op-type breakdown */
        const char *seen[64];
        int64_t ns[64];
        size_t n_seen = 0;
        for (size_t k = 0; k < mopt_session_profile_count(s); k++) {
            const char *op = mopt_session_profile_op(s, k);
            size_t j = 0;
            while (j < n_seen && strcmp(seen[j], op) != 0)
                j++;
            if (j == n_seen && n_seen < 64) seen[n_seen] = op, ns[n_seen++] = 0;
            if (j < n_seen) ns[j] += mopt_session_profile_ns(s, k);
        }
        fprintf(stderr, "past %" PRId64 ":", past);
        for (size_t j = 0; j < n_seen; j++)
            fprintf(stderr, " %s %.1f", seen[j], (double)ns[j] / 1e3);
        fprintf(stderr, "\n");
    }
    for (size_t k = 0; k < n_out; k++)
        mopt_tensor_destroy(outs[k]);
    for (size_t i = 0; i < n_in; i++) {
        mopt_tensor_destroy(ins[i]);
        free(cache[i]);
    }
    free(ids);
    free(mask);
    return dt;
}

int main(int argc, char **argv) {
    const char *path = "examples/generate/kjv-tiny.onnx";
    int threads = 1, repeats = 9, n_prompt = 16, kv_cache = 1, max_seq = 1024;
    const char *kv_dtype = "f32";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--model") == 0)
            path = argv[i + 1];
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--repeats") == 0)
            repeats = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--prompt") == 0)
            n_prompt = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--kv-cache") == 0)
            kv_cache = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--max-seq") == 0)
            max_seq = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--kv-dtype") == 0)
            kv_dtype = argv[i + 1];
        else {
            fprintf(stderr, "usage: generate_bench [--model PATH] [--threads N] [--repeats R] "
                            "[--prompt N] [--kv-cache 0|1] [--max-seq N] [--kv-dtype f32|bf16]\n");
            return 2;
        }
    }
    if (repeats < 1 || n_prompt < 1 || max_seq < n_prompt + 260) return 2;
    TOKENS = max_seq - n_prompt; /* up to the cache's (the model's) last position */
    mopt_options *o = NULL, *okv = NULL;
    mopt_model *model = NULL, *gmodel = NULL;
    mopt_generator *gen = NULL;
    CHECK(mopt_options_create(&o));
    CHECK(mopt_options_set_int(o, "threads", threads));
    CHECK(mopt_options_create(&okv));
    CHECK(mopt_options_set_int(okv, "threads", threads));
    CHECK(mopt_options_set_int(okv, "kv_cache", kv_cache));
    CHECK(mopt_model_load(path, o, &model));    /* as exported: recomputation */
    CHECK(mopt_model_load(path, okv, &gmodel)); /* what the generator runs */
    mopt_options *og = NULL;                    /* the generator's: the cache's dtype */
    CHECK(mopt_options_create(&og));
    CHECK(mopt_options_set_int(og, "threads", threads));
    CHECK(mopt_options_set_string(og, "kv_cache_dtype", kv_dtype));
    CHECK(mopt_generator_create(gmodel, og, max_seq, &gen));
    int64_t *prompt = malloc((size_t)n_prompt * sizeof *prompt);
    for (int i = 0; i < n_prompt; i++)
        prompt[i] = "And God said, Let there be light"[i % 32];
    /* (1) cached decode: R generations of TOKENS tokens, greedy */
    int64_t *steps = calloc((size_t)repeats * TOKENS, sizeof *steps);
    int64_t *cpus = calloc((size_t)repeats * TOKENS, sizeof *cpus);
    rec r = {.gen = gen};
    for (int k = -1; k < repeats; k++) { /* k = -1: warm-up */
        r.step_ns = steps + (size_t)(k < 0 ? 0 : k) * TOKENS;
        r.cpu = cpus + (size_t)(k < 0 ? 0 : k) * TOKENS;
        r.last_cpu = cpu_ns();
        mopt_generator_reset(gen);
        size_t got = 0;
        CHECK(mopt_generator_generate(gen, prompt, (size_t)n_prompt, TOKENS, on_token, &r, &got));
        if (got != (size_t)TOKENS) {
            fprintf(stderr, "generated %zu tokens, wanted %d\n", got, TOKENS);
            return 1;
        }
    }
    int marks[] = {16, 64, 128, 192, 256, 512, TOKENS - 4};
    const int n_marks = (int)(sizeof marks / sizeof *marks);
    int64_t med[8], col[512], cmed[8];
    printf("model %s (kv_cache=%d, kv_cache_dtype=%s), %d threads, prompt %d tokens, max_seq %d, "
           "%d repeats (median of 8 steps around the token x repeats)\n\n",
           path, kv_cache, kv_dtype, threads, n_prompt, max_seq, repeats);
    printf("| token | cache positions | KV-cache step (us) | vs token 16 | CPU per token (us) | "
           "vs token 16 |\n|---|---|---|---|---|---|\n");
    for (int m = 0; m < n_marks; m++) {
        size_t c = 0;
        for (int k = 0; k < repeats; k++)
            for (int d = -4; d < 4; d++) {
                int t = marks[m] + d - 1; /* token t is index t - 1 */
                if (t >= 1 && t < TOKENS) col[c++] = steps[(size_t)k * TOKENS + (size_t)t];
            }
        med[m] = median(col, c);
        c = 0;
        for (int k = 0; k < repeats; k++)
            for (int d = -4; d < 4; d++) {
                int t = marks[m] + d - 1;
                if (t >= 1 && t < TOKENS) col[c++] = cpus[(size_t)k * TOKENS + (size_t)t];
            }
        cmed[m] = median(col, c);
        printf("| %d | %d | %.1f | %+.1f%% | %.1f | %+.1f%% |\n", marks[m], n_prompt + marks[m] - 1,
               (double)med[m] / 1e3, 100.0 * ((double)med[m] / (double)med[0] - 1),
               (double)cmed[m] / 1e3, 100.0 * ((double)cmed[m] / (double)cmed[0] - 1));
    }
    int64_t lo = med[0], hi = med[0];
    for (int m = 0; m < n_marks; m++) {
        if (med[m] < lo) lo = med[m];
        if (med[m] > hi) hi = med[m];
    }
    /* (2) recomputation at token 128: one run over prompt + 127 positions */
    mopt_session *s = NULL;
    CHECK(mopt_session_create(model, o, &s));
    int64_t rc[64];
    int nr = repeats < 64 ? repeats : 64;
    run_once(model, s, 0, n_prompt + 127, NULL);
    for (int k = 0; k < nr; k++)
        rc[k] = run_once(model, s, 0, n_prompt + 127, NULL);
    int64_t recompute = median(rc, (size_t)nr);
    /* the same decode step (143 cached positions, zeros) repeated: its
     * shapes repeat, so the session's plan for them is reused, which a
     * generator's steps (a new past length each) never get */
    run_once(model, s, n_prompt + 127, 1, NULL);
    for (int k = 0; k < nr; k++)
        rc[k] = run_once(model, s, n_prompt + 127, 1, NULL);
    int64_t same_shape = median(rc, (size_t)nr);
    printf("\nflatness: token 16..%d within %+.1f%% .. %+.1f%% of token 16\n", marks[n_marks - 1],
           100.0 * ((double)lo / (double)med[0] - 1), 100.0 * ((double)hi / (double)med[0] - 1));
    /* the same ratio paired within each generation (its steps at 256 and 16
     * are ~10 ms apart, so a change of the machine's load between repeats
     * does not enter it): median, and the range, over the repeats */
    double pr[64];
    int np = 0;
    for (int k = 0; k < repeats && np < 64; k++) {
        int64_t a[8], b[8];
        for (int d = -4; d < 4; d++) {
            a[d + 4] = steps[(size_t)k * TOKENS + (size_t)(16 + d - 1)];
            b[d + 4] = steps[(size_t)k * TOKENS + (size_t)(256 + d - 1)];
        }
        pr[np++] = (double)median(b, 8) / (double)median(a, 8);
    }
    for (int i = 1; i < np; i++) /* insertion sort */
        for (int j = i; j > 0 && pr[j] < pr[j - 1]; j--) {
            double t = pr[j];
            pr[j] = pr[j - 1], pr[j - 1] = t;
        }
    printf("token 256 / token 16 within each generation: median %+.1f%% (repeats %+.1f%% .. "
           "%+.1f%%)\n",
           100.0 * (pr[np / 2] - 1), 100.0 * (pr[0] - 1), 100.0 * (pr[np - 1] - 1));
    printf("token 128: recomputing the %d-position prefix %.1f us vs KV cache %.1f us: %.1fx\n",
           n_prompt + 127, (double)recompute / 1e3, (double)med[2] / 1e3,
           (double)recompute / (double)med[2]);
    printf("token 128: the same step rerun with unchanged shapes (cached plan, tensors made by "
           "the caller): %.1f us\n",
           (double)same_shape / 1e3);
    mopt_session_destroy(s);
    /* (3) the cache's append (the graph's Concat, or KVAppend with kv_cache=1)
     * in one decode step */
    CHECK(mopt_options_set_string(okv, "profile", "1"));
    CHECK(mopt_session_create(gmodel, okv, &s));
    printf("\n| cache positions | decode step, profiled (us) | Concat/KVAppend nodes (us) | "
           "share |\n|---|---|---|---|\n");
    static const int pasts[] = {16, 128, 256, 512};
    for (int p = 0; p < 4; p++) {
        int64_t tot[64], cat[64];
        run_once(gmodel, s, pasts[p], 1, NULL);
        for (int k = 0; k < nr; k++)
            tot[k] = run_once(gmodel, s, pasts[p], 1, &cat[k]);
        int64_t mt = median(tot, (size_t)nr), mc = median(cat, (size_t)nr);
        printf("| %d | %.1f | %.2f | %.1f%% |\n", pasts[p], (double)mt / 1e3, (double)mc / 1e3,
               100.0 * (double)mc / (double)mt);
    }
    mopt_session_destroy(s);
    mopt_generator_destroy(gen);
    mopt_model_destroy(model);
    mopt_model_destroy(gmodel);
    mopt_options_destroy(o);
    mopt_options_destroy(okv);
    mopt_options_destroy(og);
    free(prompt);
    free(steps);
    free(cpus);
    return 0;
}
