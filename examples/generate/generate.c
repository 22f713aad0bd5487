/*
 * generate.c — examples/generate: streams text from a byte-level decoder
 * (kjv-tiny.onnx, made by train.py) with mopt_generator: the prompt is
 * tokenized in C (byte_tokenizer.h), every token is printed from the
 * per-token callback as it comes, and per-token latency statistics are
 * printed to stderr at the end. Uses the public (experimental) API only.
 *
 *   generate [--model PATH] [--prompt TEXT] [--max-tokens N] [--max-seq N]
 *            [--temperature T] [--top-k K] [--top-p P]
 *            [--repetition-penalty R] [--seed S] [--stop-byte B]
 *            [--threads N] [--repeat N] [--kv-cache-dtype f32|bf16] [--quiet]
 */
#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "byte_tokenizer.h"

typedef struct stream {
    int quiet;
    size_t cap, n;
    double *ms; /* time since the previous token (the first: since the start) */
    struct timespec last;
} stream;

static double ms_since(struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double d = (double)(now.tv_sec - t->tv_sec) * 1e3 + (double)(now.tv_nsec - t->tv_nsec) / 1e6;
    *t = now;
    return d;
}

static int on_token(void *user, int64_t token, size_t index) {
    stream *s = user;
    (void)index;
    if (s->n < s->cap) s->ms[s->n++] = ms_since(&s->last);
    if (!s->quiet) {
        if (byte_decode_put(token, stdout) != 0) return 1;
        fflush(stdout);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *sorted, size_t n, double p) {
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

static void usage(void) {
    fprintf(stderr, "usage: generate [--model PATH] [--prompt TEXT] [--max-tokens N] "
                    "[--max-seq N] [--temperature T] [--top-k K] [--top-p P] "
                    "[--repetition-penalty R] [--seed S] [--stop-byte B] [--threads N] "
                    "[--repeat N] [--kv-cache-dtype f32|bf16] [--quiet]\n");
}

int main(int argc, char **argv) {
    const char *model_path = "kjv-tiny.onnx", *prompt = "In the beginning", *kv_dtype = "f32";
    long max_tokens = 200, max_seq = 512, top_k = 0, threads = 1, repeat = 1, stop_byte = -1;
    double temperature = 0.8, top_p = 1.0, rep = 1.0;
    long long seed = 1;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
            continue;
        }
        if (!v) {
            usage();
            return 2;
        }
        i++;
        if (strcmp(a, "--model") == 0)
            model_path = v;
        else if (strcmp(a, "--prompt") == 0)
            prompt = v;
        else if (strcmp(a, "--max-tokens") == 0)
            max_tokens = strtol(v, NULL, 10);
        else if (strcmp(a, "--max-seq") == 0)
            max_seq = strtol(v, NULL, 10);
        else if (strcmp(a, "--temperature") == 0)
            temperature = strtod(v, NULL);
        else if (strcmp(a, "--top-k") == 0)
            top_k = strtol(v, NULL, 10);
        else if (strcmp(a, "--top-p") == 0)
            top_p = strtod(v, NULL);
        else if (strcmp(a, "--repetition-penalty") == 0)
            rep = strtod(v, NULL);
        else if (strcmp(a, "--seed") == 0)
            seed = strtoll(v, NULL, 10);
        else if (strcmp(a, "--stop-byte") == 0)
            stop_byte = strtol(v, NULL, 10);
        else if (strcmp(a, "--threads") == 0)
            threads = strtol(v, NULL, 10);
        else if (strcmp(a, "--repeat") == 0)
            repeat = strtol(v, NULL, 10);
        else if (strcmp(a, "--kv-cache-dtype") == 0)
            kv_dtype = v;
        else {
            usage();
            return 2;
        }
    }
    if (max_tokens < 1 || repeat < 1) {
        usage();
        return 2;
    }
    size_t n_prompt = strlen(prompt);
    int64_t *ids = malloc((n_prompt ? n_prompt : 1) * sizeof *ids);
    stream s = {.quiet = quiet, .cap = (size_t)max_tokens};
    s.ms = malloc(s.cap * sizeof *s.ms);
    double *all = malloc(s.cap * (size_t)repeat * sizeof *all);
    double *first = malloc((size_t)repeat * sizeof *first);
    if (!ids || !s.ms || !all || !first) return 1;
    byte_encode(prompt, n_prompt, ids);

    mopt_options *opts = NULL;
    mopt_model *model = NULL;
    mopt_generator *gen = NULL;
    mopt_status st = mopt_options_create(&opts);
    if (st == MOPT_OK) st = mopt_options_set_int(opts, "threads", threads);
    /* token-major caches appended in place (the kv_cache pass) */
    if (st == MOPT_OK) st = mopt_options_set_int(opts, "kv_cache", 1);
    /* the cache as f32 rows or bf16 tiles (read by the generator only) */
    if (st == MOPT_OK) st = mopt_options_set_string(opts, "kv_cache_dtype", kv_dtype);
    if (st == MOPT_OK) st = mopt_model_load(model_path, opts, &model);
    if (st == MOPT_OK) st = mopt_generator_create(model, opts, max_seq, &gen);
    if (st == MOPT_OK) st = mopt_generator_set_double(gen, "temperature", temperature);
    if (st == MOPT_OK) st = mopt_generator_set_int(gen, "top_k", top_k);
    if (st == MOPT_OK) st = mopt_generator_set_double(gen, "top_p", top_p);
    if (st == MOPT_OK) st = mopt_generator_set_double(gen, "repetition_penalty", rep);
    if (st == MOPT_OK) st = mopt_generator_set_int(gen, "seed", seed);
    if (st == MOPT_OK && stop_byte >= 0) {
        int64_t stop = stop_byte;
        st = mopt_generator_set_stop_tokens(gen, &stop, 1);
    }
    size_t n_all = 0, n_first = 0, n_gen = 0;
    for (long r = 0; r < repeat && st == MOPT_OK; r++) {
        mopt_generator_reset(gen); /* time the whole prefill every time */
        s.n = 0;
        if (!quiet) printf("%s", prompt);
        ms_since(&s.last);
        st = mopt_generator_generate(gen, ids, n_prompt, (size_t)max_tokens, on_token, &s, &n_gen);
        if (!quiet) printf("\n");
        if (s.n > 0) first[n_first++] = s.ms[0];
        for (size_t i = 1; i < s.n; i++)
            all[n_all++] = s.ms[i];
    }
    if (st != MOPT_OK) {
        fprintf(stderr, "generate: %s: %s\n", mopt_status_string(st), mopt_last_error());
    } else {
        int64_t cached = 0;
        if (mopt_generator_get_stat(gen, "cached_tokens", &cached) != MOPT_OK) cached = -1;
        qsort(all, n_all, sizeof *all, cmp_double);
        qsort(first, n_first, sizeof *first, cmp_double);
        double sum = 0;
        for (size_t i = 0; i < n_all; i++)
            sum += all[i];
        fprintf(stderr,
                "\n%zu prompt tokens, %zu generated (x%ld runs), %" PRId64 " positions cached\n",
                n_prompt, n_gen, repeat, cached);
        if (n_first)
            fprintf(stderr, "first token (prefill + sampling): p50 %.3f ms\n",
                    pct(first, n_first, 0.5));
        if (n_all)
            fprintf(stderr,
                    "per token (decode step + sampling + print): mean %.3f ms, p50 %.3f, p90 "
                    "%.3f, p99 %.3f, min %.3f, max %.3f  (%.0f tokens/s)\n",
                    sum / (double)n_all, pct(all, n_all, 0.5), pct(all, n_all, 0.9),
                    pct(all, n_all, 0.99), all[0], all[n_all - 1], 1e3 * (double)n_all / sum);
    }
    mopt_generator_destroy(gen);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
    free(ids);
    free(s.ms);
    free(all);
    free(first);
    return st == MOPT_OK ? 0 : 1;
}
