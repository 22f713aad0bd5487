/*
 * embed.c — semantic search with all-MiniLM-L6-v2 on libmopt, the whole
 * pipeline in one C program (issue 15): read lines, tokenize (wordpiece.c,
 * reading vocab.txt), infer (the ONNX model's last_hidden_state), pool
 * (mean over the attention mask, L2 normalisation), and print the time of
 * each stage.
 *
 *   embed index CORPUS -o INDEX --model M.onnx --vocab vocab.txt
 *         [--precision fp32|bf16|int8] [--threads N] [--batch N]
 *   embed query INDEX "text" [--top K] [--threads N]
 *   embed tokenize --vocab vocab.txt [--max-len N]   (stdin lines -> ids)
 *
 * INDEX: "MOPTEMB1", u32 dim, u32 count, then the model path, vocab path
 * and precision (u32 length + bytes each), count x dim f32 embeddings,
 * then the lines (u32 length + bytes each). Little-endian, as written.
 */
#define _POSIX_C_SOURCE 200809L /* getline, clock_gettime */

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mopt/mopt.h>

#define EX_PROG "embed"
#include "ex_cli.h"

#include "wordpiece.h"

#define MAX_LEN 128
#define MAGIC "MOPTEMB1"

/* ---- lines ---------------------------------------------------------------- */

typedef struct lines {
    char **s;
    size_t *len;
    size_t n, cap;
} lines;

static void lines_free(lines *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s), free(l->len);
    memset(l, 0, sizeof *l);
}

/* Reads f's lines split on '\n' only ('\r' before it dropped); skips empty
 * lines when skip_empty. */
static bool read_lines(FILE *f, lines *l, bool skip_empty) {
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&buf, &cap, f)) >= 0) {
        size_t n = (size_t)got;
        if (n && buf[n - 1] == '\n') n--;
        if (n && buf[n - 1] == '\r') n--;
        if (skip_empty && n == 0) continue;
        if (l->n == l->cap) {
            size_t c = l->cap ? 2 * l->cap : 1024;
            char **s = realloc(l->s, c * sizeof *s);
            if (s) l->s = s;
            size_t *len = realloc(l->len, c * sizeof *len);
            if (len) l->len = len;
            if (!s || !len) {
                free(buf);
                return false;
            }
            l->cap = c;
        }
        l->s[l->n] = malloc(n + 1);
        if (!l->s[l->n]) {
            free(buf);
            return false;
        }
        memcpy(l->s[l->n], buf, n);
        l->s[l->n][n] = 0;
        l->len[l->n++] = n;
    }
    free(buf);
    return true;
}

/* ---- the model ------------------------------------------------------------ */

typedef struct encoder {
    mopt_model *model;
    mopt_session *session;
    wp_vocab *vocab;
    double t_tokenize, t_infer, t_pool;
} encoder;

static void encoder_free(encoder *e) {
    mopt_session_destroy(e->session);
    mopt_model_destroy(e->model);
    wp_free(e->vocab);
}

static int encoder_open(encoder *e, const char *model, const char *vocab, const char *precision,
                        int threads) {
    memset(e, 0, sizeof *e);
    e->vocab = wp_load(vocab);
    if (!e->vocab) return fail("cannot read the vocabulary", vocab);
    mopt_options *o = NULL;
    mopt_status st = mopt_options_create(&o);
    if (!st) st = mopt_options_set_string(o, "precision", precision);
    if (!st) st = mopt_options_set_int(o, "threads", threads);
    if (!st) st = mopt_model_load(model, o, &e->model);
    if (!st) st = mopt_session_create(e->model, o, &e->session);
    mopt_options_destroy(o);
    return st ? fail_mopt(model, st) : 0;
}

/* Embeddings of lines [first, first + n) into out (row i at out + i * 1024,
 * dim floats used): tokenize, run
 * padded to the batch's longest, mean-pool over the mask, L2-normalise. */
static int encode(encoder *e, const lines *l, size_t first, size_t n, float *out, int64_t *dim) {
    double t0 = now_ms();
    int64_t *tok = malloc(n * MAX_LEN * sizeof *tok);
    int *count = malloc(n * sizeof *count);
    if (!tok || !count) {
        free(tok), free(count);
        return fail("out of memory", NULL);
    }
    int seq = 1;
    for (size_t i = 0; i < n; i++) {
        count[i] =
            wp_encode(e->vocab, l->s[first + i], l->len[first + i], tok + i * MAX_LEN, MAX_LEN);
        if (count[i] < 0) {
            free(tok), free(count);
            return fail("out of memory", NULL);
        }
        if (count[i] > seq) seq = count[i];
    }
    size_t cells = n * (size_t)seq;
    int64_t *ids = calloc(cells, sizeof *ids), *mask = calloc(cells, sizeof *mask),
            *types = calloc(cells, sizeof *types);
    int rc = 0;
    if (!ids || !mask || !types) rc = fail("out of memory", NULL);
    for (size_t i = 0; !rc && i < n; i++)
        for (int j = 0; j < count[i]; j++) {
            ids[i * (size_t)seq + (size_t)j] = tok[i * MAX_LEN + (size_t)j];
            mask[i * (size_t)seq + (size_t)j] = 1;
        }
    double t1 = now_ms();
    e->t_tokenize += t1 - t0;
    int64_t dims[2] = {(int64_t)n, seq};
    mopt_tensor *in[3] = {NULL, NULL, NULL}, *hidden = NULL;
    mopt_status st = MOPT_OK;
    int64_t *bufs[3] = {ids, mask, types};
    for (int i = 0; !rc && !st && i < 3; i++)
        st = mopt_tensor_wrap_const(MOPT_DTYPE_I64, 2, dims, bufs[i], cells * sizeof(int64_t),
                                    &in[i]);
    const char *in_names[3] = {"input_ids", "attention_mask", "token_type_ids"};
    const char *out_names[1] = {"last_hidden_state"};
    if (!rc && !st)
        st = mopt_session_run(e->session, 3, in_names, (const mopt_tensor *const *)in, 1, out_names,
                              &hidden);
    if (!rc && st) rc = fail_mopt("inference", st);
    double t2 = now_ms();
    e->t_infer += t2 - t1;
    if (!rc) { /* mean over the kept tokens, then x / max(||x||, 1e-12) */
        int64_t D = mopt_tensor_dim(hidden, 2);
        const float *h = mopt_tensor_data_const(hidden);
        *dim = D;
        for (size_t i = 0; i < n; i++) {
            float *o = out + i * 1024;
            double acc[1024] = {0};
            if (D > 1024) {
                rc = fail("hidden size above 1024", NULL);
                break;
            }
            for (int j = 0; j < count[i]; j++)
                for (int64_t d = 0; d < D; d++)
                    acc[d] += h[(i * (size_t)seq + (size_t)j) * (size_t)D + (size_t)d];
            double norm = 0;
            for (int64_t d = 0; d < D; d++) {
                acc[d] /= count[i];
                norm += acc[d] * acc[d];
            }
            norm = fmax(sqrt(norm), 1e-12);
            for (int64_t d = 0; d < D; d++)
                o[d] = (float)(acc[d] / norm);
        }
    }
    e->t_pool += now_ms() - t2;
    for (int i = 0; i < 3; i++)
        mopt_tensor_destroy(in[i]);
    mopt_tensor_destroy(hidden);
    free(ids), free(mask), free(types), free(tok), free(count);
    return rc;
}

/* ---- index file ----------------------------------------------------------- */

static bool put_u32(FILE *f, uint32_t v) { return fwrite(&v, 4, 1, f) == 1; }
static bool put_str(FILE *f, const char *s, size_t n) {
    return put_u32(f, (uint32_t)n) && fwrite(s, 1, n, f) == n;
}
static bool get_u32(FILE *f, uint32_t *v) { return fread(v, 4, 1, f) == 1; }
static char *get_str(FILE *f, size_t *len) {
    uint32_t n;
    if (!get_u32(f, &n) || n > (1u << 30)) return NULL;
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, n, f) != n) {
        free(s);
        return NULL;
    }
    if (s) s[n] = 0;
    if (s && len) *len = n;
    return s;
}

static const char *arg_value(int argc, char **argv, const char *key, const char *def) {
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], key) == 0) return argv[i + 1];
    return def;
}

static int cmd_index(int argc, char **argv) {
    const char *corpus = argc > 2 ? argv[2] : NULL, *out = arg_value(argc, argv, "-o", NULL);
    const char *model = arg_value(argc, argv, "--model", NULL);
    const char *vocab = arg_value(argc, argv, "--vocab", NULL);
    const char *precision = arg_value(argc, argv, "--precision", "fp32");
    int threads = atoi(arg_value(argc, argv, "--threads", "1"));
    int batch = atoi(arg_value(argc, argv, "--batch", "16"));
    if (!corpus || !out || !model || !vocab || batch < 1)
        return fail("usage: embed index CORPUS -o INDEX --model M.onnx --vocab vocab.txt "
                    "[--precision P] [--threads N] [--batch N]",
                    NULL);
    double t0 = now_ms();
    FILE *f = fopen(corpus, "rb");
    lines l = {0};
    if (!f) return fail(corpus, strerror(errno));
    bool ok = read_lines(f, &l, true);
    fclose(f);
    if (!ok) return fail("out of memory reading", corpus);
    double t_read = now_ms() - t0;
    encoder e;
    double t1 = now_ms();
    int rc = encoder_open(&e, model, vocab, precision, threads);
    double t_load = now_ms() - t1;
    float *emb = rc ? NULL : malloc(l.n * 1024 * sizeof *emb);
    if (!rc && !emb) rc = fail("out of memory", NULL);
    int64_t dim = 0;
    for (size_t i = 0; !rc && i < l.n; i += (size_t)batch) {
        size_t n = l.n - i < (size_t)batch ? l.n - i : (size_t)batch;
        int64_t d;
        rc = encode(&e, &l, i, n, emb + i * 1024, &d);
        dim = d;
    }
    double t2 = now_ms();
    FILE *o = rc ? NULL : fopen(out, "wb");
    if (!rc && !o) rc = fail(out, strerror(errno));
    if (!rc) {
        ok = fwrite(MAGIC, 1, 8, o) == 8 && put_u32(o, (uint32_t)dim) &&
             put_u32(o, (uint32_t)l.n) && put_str(o, model, strlen(model)) &&
             put_str(o, vocab, strlen(vocab)) && put_str(o, precision, strlen(precision));
        for (size_t i = 0; ok && i < l.n; i++)
            ok = fwrite(emb + i * 1024, sizeof(float), (size_t)dim, o) == (size_t)dim;
        for (size_t i = 0; ok && i < l.n; i++)
            ok = put_str(o, l.s[i], l.len[i]);
        if (fclose(o) != 0) ok = false;
        if (!ok) rc = fail("cannot write", out);
    }
    if (!rc) {
        printf("indexed %zu lines (dim %lld, precision %s, %d thread(s), batch %d) into %s\n", l.n,
               (long long)dim, precision, threads, batch, out);
        printf("stage times (ms): read %.2f  load model %.1f  tokenize %.2f  infer %.1f  "
               "pool %.2f  write %.2f\n",
               t_read, t_load, e.t_tokenize, e.t_infer, e.t_pool, now_ms() - t2);
    }
    if (!rc || e.vocab) encoder_free(&e);
    free(emb);
    lines_free(&l);
    return rc;
}

static int cmd_query(int argc, char **argv) {
    const char *index = argc > 2 ? argv[2] : NULL, *text = argc > 3 ? argv[3] : NULL;
    int top = atoi(arg_value(argc, argv, "--top", "5"));
    int threads = atoi(arg_value(argc, argv, "--threads", "1"));
    if (!index || !text || top < 1)
        return fail("usage: embed query INDEX \"text\" [--top K] [--threads N]", NULL);
    double t0 = now_ms();
    FILE *f = fopen(index, "rb");
    if (!f) return fail(index, strerror(errno));
    char magic[8];
    uint32_t dim = 0, count = 0;
    char *model = NULL, *vocab = NULL, *precision = NULL;
    bool ok = fread(magic, 1, 8, f) == 8 && memcmp(magic, MAGIC, 8) == 0 && get_u32(f, &dim) &&
              get_u32(f, &count) && dim > 0 && dim <= 1024 && (model = get_str(f, NULL)) &&
              (vocab = get_str(f, NULL)) && (precision = get_str(f, NULL));
    float *emb = ok ? malloc((size_t)count * dim * sizeof *emb + 1) : NULL;
    ok = ok && emb && fread(emb, sizeof(float), (size_t)count * dim, f) == (size_t)count * dim;
    lines texts = {0};
    texts.s = ok ? calloc(count + 1, sizeof *texts.s) : NULL;
    texts.len = ok ? calloc(count + 1, sizeof *texts.len) : NULL;
    ok = ok && texts.s && texts.len;
    for (uint32_t i = 0; ok && i < count; i++, texts.n++)
        ok = (texts.s[i] = get_str(f, &texts.len[i])) != NULL;
    fclose(f);
    double t_read = now_ms() - t0;
    int rc = ok ? 0 : fail("not an index file (or truncated)", index);
    encoder e;
    memset(&e, 0, sizeof e);
    double t1 = now_ms();
    if (!rc) rc = encoder_open(&e, model, vocab, precision, threads);
    double t_load = now_ms() - t1;
    lines q = {.s = (char **)&text, .len = &(size_t){strlen(text)}, .n = 1};
    float qv[1024];
    int64_t d = 0;
    if (!rc) rc = encode(&e, &q, 0, 1, qv, &d);
    if (!rc && d != (int64_t)dim) rc = fail("the model's size differs from the index's", NULL);
    double t2 = now_ms();
    if (!rc) {
        if ((uint32_t)top > count) top = (int)count;
        int *best = calloc((size_t)top + 1, sizeof *best);
        float *score = calloc((size_t)top + 1, sizeof *score);
        int have = 0;
        for (uint32_t i = 0; best && score && i < count; i++) {
            float s = 0;
            for (uint32_t k = 0; k < dim; k++)
                s += qv[k] * emb[(size_t)i * dim + k];
            int at = have < top ? have++ : top;
            while (at > 0 && score[at - 1] < s) {
                if (at < top) best[at] = best[at - 1], score[at] = score[at - 1];
                at--;
            }
            if (at < top) best[at] = (int)i, score[at] = s;
        }
        double t_search = now_ms() - t2;
        for (int i = 0; best && score && i < have; i++)
            printf("%.4f  %s\n", score[i], texts.s[best[i]]);
        printf("stage times (ms): read index %.2f  load model %.1f  tokenize %.3f  infer %.2f  "
               "pool %.3f  search %.3f (%u lines)\n",
               t_read, t_load, e.t_tokenize, e.t_infer, e.t_pool, t_search, count);
        free(best), free(score);
    }
    encoder_free(&e);
    free(model), free(vocab), free(precision), free(emb);
    lines_free(&texts);
    return rc;
}

static int cmd_tokenize(int argc, char **argv) {
    const char *vocab = arg_value(argc, argv, "--vocab", NULL);
    int max_len = atoi(arg_value(argc, argv, "--max-len", "128"));
    if (!vocab || max_len < 2)
        return fail("usage: embed tokenize --vocab vocab.txt [--max-len N] < lines", NULL);
    wp_vocab *v = wp_load(vocab);
    if (!v) return fail("cannot read the vocabulary", vocab);
    lines l = {0};
    int64_t *ids = malloc((size_t)max_len * sizeof *ids);
    double t0 = now_ms();
    bool ok = ids && read_lines(stdin, &l, false);
    double t1 = now_ms();
    size_t tokens = 0;
    for (size_t i = 0; ok && i < l.n; i++) {
        int n = wp_encode(v, l.s[i], l.len[i], ids, max_len);
        if (n < 0) ok = false;
        for (int k = 0; ok && k < n; k++)
            printf(k ? " %lld" : "%lld", (long long)ids[k]);
        printf("\n");
        tokens += n > 0 ? (size_t)n : 0;
    }
    fprintf(stderr, "tokenized %zu lines, %zu tokens: read %.2f ms, tokenize+print %.2f ms\n", l.n,
            tokens, t1 - t0, now_ms() - t1);
    free(ids);
    lines_free(&l);
    wp_free(v);
    return ok ? 0 : fail("out of memory", NULL);
}

int main(int argc, char **argv) {
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "index") == 0) return cmd_index(argc, argv);
    if (strcmp(cmd, "query") == 0) return cmd_query(argc, argv);
    if (strcmp(cmd, "tokenize") == 0) return cmd_tokenize(argc, argv);
    fprintf(stderr, "usage: embed index CORPUS -o INDEX --model M.onnx --vocab vocab.txt "
                    "[--precision P] [--threads N] [--batch N]\n"
                    "       embed query INDEX \"text\" [--top K] [--threads N]\n"
                    "       embed tokenize --vocab vocab.txt [--max-len N] < lines\n");
    return 2;
}
