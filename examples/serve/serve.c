/* serve.c — examples/serve: an HTTP embeddings and generation server on
 * libmicrohttpd and libmopt. POST /v1/embeddings (batched across clients),
 * POST /v1/generate (a pool of mopt_generator; whole JSON or token streaming
 * over Server-Sent Events), GET /metrics (Prometheus text),
 * GET /healthz. Bounded queue (429), per-request timeout (504), LRU response
 * cache, strict request validation (4xx with a JSON message), graceful
 * shutdown on SIGINT/SIGTERM that drains in-flight requests. See README.md. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "engine.h"
#include "genpool.h"
#include "json.h"

/* ---- options ----------------------------------------------------------- */

typedef struct serve_opts {
    const char *model;
    const char *host;
    int port;
    int batch;
    int max_batch;
    int64_t max_delay_us;
    int64_t seq_buckets[32];
    size_t n_seq_buckets;
    int no_padding;
    size_t queue_capacity;
    int workers, threads;
    int64_t timeout_ms;
    size_t cache_entries, cache_max_bytes;
    size_t max_body_bytes;
    size_t max_inputs;
    unsigned max_connections;
    int64_t vocab, max_tokens;
    int64_t drain_timeout_ms;
    const char *generate_model;
    int generators;
    int64_t gen_max_seq, gen_max_tokens, gen_max_prompt;
    size_t gen_queue;
} serve_opts;

static void usage(FILE *f) {
    fprintf(f, "usage: serve [options]\n"
               "  --model PATH            BERT-like ONNX/.mopt model (default "
               "examples/models/bert_tiny.onnx); none = no embeddings\n"
               "  --host ADDR             IPv4/IPv6 address to bind (default 127.0.0.1)\n"
               "  --port N                TCP port, 0 = ephemeral (default 8080)\n"
               "  --batch on|off          dynamic batching across requests (default on)\n"
               "  --max-batch N           most requests per batch (default 32)\n"
               "  --max-delay-us N        longest wait for company (default 2000)\n"
               "  --seq-buckets L1,L2,.. pad batched sequences to these lengths (default: to the "
               "longest)\n"
               "  --padding on|off        off: only inputs of equal length share a batch "
               "(default on)\n"
               "  --queue-capacity N      pending inference requests; beyond: 429 (default 256)\n"
               "  --workers N             sessions running batches concurrently (default 1)\n"
               "  --threads N             threads per session (default 1)\n"
               "  --timeout-ms N          a request not started within N ms: 504; 0 = none "
               "(default 10000)\n"
               "  --cache-entries N       LRU embedding cache entries, 0 = off (default 4096)\n"
               "  --cache-max-bytes N     memory bound of the cache (default 64 MiB)\n"
               "  --max-body-bytes N      larger request bodies: 413 (default 1 MiB)\n"
               "  --max-inputs N          inputs per request (default 64)\n"
               "  --max-connections N     concurrent connections (default 512)\n"
               "  --vocab N               token ids must be < N (default 1000)\n"
               "  --max-tokens N          longest input in tokens (default 128)\n"
               "  --drain-timeout-ms N    on SIGINT/SIGTERM, wait this long for in-flight requests "
               "(default 30000)\n"
               "  --generate-model PATH   byte-level decoder for POST /v1/generate (default: "
               "none, 501)\n"
               "  --generators N          generators (concurrent generations) (default 1)\n"
               "  --generate-queue N      requests waiting for a generator; beyond: 429 "
               "(default 64)\n"
               "  --generate-max-seq N    cache positions per generator (default 1024)\n"
               "  --generate-max-tokens N largest max_tokens of a request (default 512)\n"
               "  --generate-max-prompt N longest prompt in bytes (default 512)\n");
}

static int parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* "on" (1) or "off" (0) into *out; -1 for anything else (*out unchanged). */
static int parse_on_off(const char *s, int *out) {
    if (strcmp(s, "on") && strcmp(s, "off")) return -1;
    *out = !strcmp(s, "on");
    return 0;
}

static int parse_args(int argc, char **argv, serve_opts *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "serve: %s needs a value\n", a);
            return -1;
        }
        const char *v = argv[++i];
        int64_t x = 0;
        int bad = 0;
#define NUM(flag, lo, hi, field)                                                                   \
    else if (!strcmp(a, flag)) {                                                                   \
        bad = parse_i64(v, lo, hi, &x);                                                            \
        o->field = x;                                                                              \
    }
        if (!strcmp(a, "--model"))
            o->model = v;
        else if (!strcmp(a, "--generate-model"))
            o->generate_model = v;
        else if (!strcmp(a, "--host"))
            o->host = v;
        else if (!strcmp(a, "--seq-buckets")) {
            const char *q = v;
            o->n_seq_buckets = 0;
            while (*q && !bad) {
                char *end;
                long long b = strtoll(q, &end, 10);
                if (end == q || b < 1 || b > (1 << 20) || o->n_seq_buckets == 32 ||
                    (o->n_seq_buckets && b <= o->seq_buckets[o->n_seq_buckets - 1]) ||
                    (*end && *end != ','))
                    bad = 1;
                else
                    o->seq_buckets[o->n_seq_buckets++] = b;
                q = *end ? end + 1 : end;
            }
        } else if (!strcmp(a, "--padding")) {
            int on = 0;
            if (!(bad = parse_on_off(v, &on))) o->no_padding = !on;
        } else if (!strcmp(a, "--batch")) {
            bad = parse_on_off(v, &o->batch);
        }
        NUM("--port", 0, 65535, port)
        NUM("--max-batch", 1, 64, max_batch)
        NUM("--max-delay-us", 0, 10000000, max_delay_us)
        NUM("--queue-capacity", 1, 1 << 20, queue_capacity)
        NUM("--workers", 1, 64, workers)
        NUM("--threads", 1, 256, threads)
        NUM("--timeout-ms", 0, 86400000, timeout_ms)
        NUM("--cache-entries", 0, 1 << 24, cache_entries)
        NUM("--cache-max-bytes", 0, (int64_t)1 << 40, cache_max_bytes)
        NUM("--max-body-bytes", 16, (int64_t)1 << 30, max_body_bytes)
        NUM("--max-inputs", 1, 4096, max_inputs)
        NUM("--max-connections", 1, 65536, max_connections)
        NUM("--vocab", 4, (int64_t)1 << 40, vocab)
        NUM("--max-tokens", 2, 1 << 20, max_tokens)
        NUM("--drain-timeout-ms", 0, 3600000, drain_timeout_ms)
        NUM("--generators", 1, 64, generators)
        NUM("--generate-queue", 0, 1 << 20, gen_queue)
        NUM("--generate-max-seq", 2, 1 << 20, gen_max_seq)
        NUM("--generate-max-tokens", 1, 1 << 20, gen_max_tokens)
        NUM("--generate-max-prompt", 1, 1 << 20, gen_max_prompt)
        else {
            fprintf(stderr, "serve: unknown option %s (see --help)\n", a);
            return -1;
        }
#undef NUM
        if (bad) {
            fprintf(stderr, "serve: bad value '%s' for %s\n", v, a);
            return -1;
        }
    }
    return 0;
}

/* ---- metrics ----------------------------------------------------------- */

enum { EP_EMBEDDINGS, EP_GENERATE, EP_METRICS, EP_HEALTHZ, EP_OTHER, N_EP };
static const char *const ep_names[N_EP] = {"/v1/embeddings", "/v1/generate", "/metrics", "/healthz",
                                           "other"};
static const unsigned status_codes[] = {200, 400, 404, 405, 413, 415, 429, 500, 501, 503, 504};
enum { N_CODES = sizeof status_codes / sizeof status_codes[0] };
static const double lat_bounds[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                    0.1,    0.25,  0.5,    1,     2.5,  5,     10};
enum { N_LAT = sizeof lat_bounds / sizeof lat_bounds[0] };

/* The histogram bucket of a latency of sec seconds: the first bound it does
 * not exceed, N_LAT (the +Inf bucket) past the last. */
static int lat_bucket_of(double sec) {
    for (int i = 0; i < N_LAT; i++)
        if (sec <= lat_bounds[i]) return i;
    return N_LAT;
}

typedef struct metrics {
    atomic_uint_fast64_t requests[N_EP][N_CODES + 1]; /* last: any other code */
    atomic_uint_fast64_t lat_bucket[N_EP][N_LAT + 1];
    atomic_uint_fast64_t lat_sum_us[N_EP];
    atomic_uint_fast64_t lat_count[N_EP];
    atomic_uint_fast64_t inputs_embedded;
    /* generation */
    atomic_uint_fast64_t gen_requests[2]; /* started: [0] whole, [1] streamed */
    atomic_uint_fast64_t gen_tokens, gen_prompt_tokens;
    atomic_uint_fast64_t gen_finish[4];         /* length, stop, timeout, cancelled */
    atomic_uint_fast64_t tok_bucket[N_LAT + 1]; /* time per token after the first */
    atomic_uint_fast64_t tok_sum_ns, tok_count;
    atomic_uint_fast64_t ttft_sum_ns, ttft_count; /* to the first token */
} metrics;

/* ---- server state ------------------------------------------------------ */

typedef struct server {
    serve_opts o;
    engine *eng;
    emb_cache *cache;
    gen_pool *gp;
    metrics m;
    atomic_int draining;
    atomic_long inflight;
    pthread_mutex_t idle_mu;
    pthread_cond_t idle_cv;
} server;

typedef struct req_ctx {
    int endpoint;
    int64_t start_ns;
    char *body;
    size_t len, cap;
    int too_large;
    int responded;
} req_ctx;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- a growable string ------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra) {
    if (b->oom || b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sb_reserve(b, (size_t)n);
    if (b->oom) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void sb_json_string(sbuf *b, const char *s) {
    sb_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7F)
            sb_printf(b, "\\u%04x", c); /* messages are ASCII; escape anything else bytewise */
        else
            sb_printf(b, "%c", c);
    }
    sb_printf(b, "\"");
}

/* ---- responses --------------------------------------------------------- */

static void count_response(server *s, req_ctx *c, unsigned code) {
    int k = N_CODES;
    for (int i = 0; i < N_CODES; i++)
        if (status_codes[i] == code) k = i;
    atomic_fetch_add(&s->m.requests[c->endpoint][k], 1);
    int64_t us = (now_ns() - c->start_ns) / 1000;
    atomic_fetch_add(&s->m.lat_bucket[c->endpoint][lat_bucket_of((double)us / 1e6)], 1);
    atomic_fetch_add(&s->m.lat_sum_us[c->endpoint], (uint64_t)us);
    atomic_fetch_add(&s->m.lat_count[c->endpoint], 1);
}

/* Queues body (taking ownership of a malloc'ed buffer) with status code. */
static enum MHD_Result respond(server *s, struct MHD_Connection *conn, req_ctx *c, unsigned code,
                               const char *ctype, char *body, size_t len, const char *allow) {
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, body, body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", ctype);
    if (allow) MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (code == 429 || code == 503) MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (atomic_load(&s->draining) || c->too_large || code == 413)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(conn, code, r);
    MHD_destroy_response(r);
    c->responded = 1;
    count_response(s, c, code);
    return ret;
}

static const char *error_type(unsigned code) {
    switch (code) {
    case 429: return "overloaded";
    case 500: return "server_error";
    case 501: return "not_implemented";
    case 503: return "unavailable";
    case 504: return "timeout";
    default: return "invalid_request_error";
    }
}

static enum MHD_Result respond_error(server *s, struct MHD_Connection *conn, req_ctx *c,
                                     unsigned code, const char *allow, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sbuf b = {0};
    sb_printf(&b, "{\"error\":{\"message\":");
    sb_json_string(&b, msg);
    sb_printf(&b, ",\"type\":\"%s\",\"code\":%u}}\n", error_type(code), code);
    if (b.oom) {
        free(b.p);
        return MHD_NO;
    }
    return respond(s, conn, c, code, "application/json", b.p, b.len, allow);
}

/* A 200 with the body built in b (of this content type), or a 500 when
 * building it ran out of memory. */
static enum MHD_Result respond_built(server *s, struct MHD_Connection *conn, req_ctx *c, sbuf *b,
                                     const char *type) {
    if (b->oom) {
        free(b->p);
        return respond_error(s, conn, c, 500, NULL, "out of memory");
    }
    return respond(s, conn, c, 200, type, b->p, b->len, NULL);
}

/* A member name equal to word (the whole name: "input\u0000x" is not "input"). */
static int key_is(const json_node *m, const char *word) {
    return m->key_len == strlen(word) && !memcmp(m->key, word, m->key_len);
}

/* ---- /v1/embeddings ---------------------------------------------------- */

typedef struct item {
    int64_t *ids;
    size_t n;
    size_t same_as; /* index of an earlier identical input, or SIZE_MAX */
} item;

static void free_items(item *it, size_t n) {
    for (size_t k = 0; it && k < n; k++)
        free(it[k].ids);
    free(it);
}

typedef struct fanout {
    server *s;
    req_ctx *c;
    item *items;
    float *vecs;
    size_t n, dim;
    atomic_size_t next;
    atomic_int status; /* the first failure (MOPT_OK: none) */
} fanout;

/* Embeds items until none is left or one failed: the cache first, then the
 * model with what is left of the request's time. */
static void embed_items(fanout *f) {
    server *s = f->s;
    for (;;) {
        size_t k = atomic_fetch_add(&f->next, 1);
        if (k >= f->n || atomic_load(&f->status) != MOPT_OK) return;
        const item *it = &f->items[k];
        float *v = f->vecs + k * f->dim;
        if (it->same_as != SIZE_MAX) continue; /* copied from its twin afterwards */
        if (emb_cache_get(s->cache, it->ids, it->n, v)) continue;
        int64_t timeout_us = 0;
        mopt_status st = MOPT_OK;
        if (s->o.timeout_ms > 0) {
            timeout_us = s->o.timeout_ms * 1000 - (now_ns() - f->c->start_ns) / 1000;
            if (timeout_us <= 0) st = MOPT_ERR_CANCELLED;
        }
        if (st == MOPT_OK) st = engine_embed(s->eng, it->ids, it->n, v, timeout_us);
        if (st != MOPT_OK) {
            int expected = MOPT_OK;
            atomic_compare_exchange_strong(&f->status, &expected, (int)st);
            return;
        }
        atomic_fetch_add(&s->m.inputs_embedded, 1);
        emb_cache_put(s->cache, it->ids, it->n, v);
    }
}

static void *fanout_thread(void *arg) {
    embed_items(arg);
    return NULL;
}

static enum MHD_Result handle_embeddings(server *s, struct MHD_Connection *conn, req_ctx *c) {
    const serve_opts *o = &s->o;
    if (!s->eng)
        return respond_error(s, conn, c, 501, NULL,
                             "embeddings are off: the server was started with --model none");
    char err[256];
    json_node *root = NULL;
    json_limits lim = {.max_depth = 8,
                       .max_nodes = o->max_inputs * ((size_t)o->max_tokens + 1) + 64};
    if (c->len == 0)
        return respond_error(s, conn, c, 400, NULL, "empty request body: expected a JSON object");
    json_doc *doc = json_parse(c->body, c->len, &lim, &root, err, sizeof err);
    if (!doc) return respond_error(s, conn, c, 400, NULL, "malformed JSON: %s", err);
    enum MHD_Result ret;
    item *items = NULL;
    size_t n_items = 0;
    float *vecs = NULL;
    size_t dim = engine_dim(s->eng);
    int64_t vocab = engine_vocab(s->eng), max_tokens = engine_max_tokens(s->eng);
    uint64_t total_tokens = 0;

    if (root->type != JSON_OBJECT) {
        ret = respond_error(s, conn, c, 400, NULL, "the body must be a JSON object, not %s",
                            json_type_name(root->type));
        goto done;
    }
    const json_node *input = NULL, *input_ids = NULL;
    for (const json_node *m = root->child; m; m = m->next) {
        if ((key_is(m, "input") && input) || (key_is(m, "input_ids") && input_ids)) {
            ret = respond_error(s, conn, c, 400, NULL, "member \"%s\" given twice", m->key);
            goto done;
        }
        if (key_is(m, "input"))
            input = m;
        else if (key_is(m, "input_ids"))
            input_ids = m;
        else if (key_is(m, "model") || key_is(m, "user")) {
            if (m->type != JSON_STRING) {
                ret = respond_error(s, conn, c, 400, NULL, "\"%s\" must be a string", m->key);
                goto done;
            }
        } else if (key_is(m, "encoding_format")) {
            if (m->type != JSON_STRING || m->len != 5 || memcmp(m->str, "float", 5) != 0) {
                ret = respond_error(s, conn, c, 400, NULL,
                                    "\"encoding_format\" must be \"float\" (the only one served)");
                goto done;
            }
        } else {
            ret = respond_error(s, conn, c, 400, NULL,
                                "unknown member \"%.64s\" (expected input or input_ids, and "
                                "optionally model, encoding_format, user)",
                                m->key);
            goto done;
        }
    }
    if (!!input == !!input_ids) {
        ret = respond_error(s, conn, c, 400, NULL,
                            "give exactly one of \"input\" (text) and \"input_ids\" (token ids)");
        goto done;
    }
    const json_node *list = input ? input : input_ids;
    const json_node *first;
    int single;
    if (input) {
        if (input->type != JSON_STRING && input->type != JSON_ARRAY) {
            ret = respond_error(s, conn, c, 400, NULL,
                                "\"input\" must be a string or an array of strings, not %s",
                                json_type_name(input->type));
            goto done;
        }
        single = input->type == JSON_STRING;
    } else {
        if (input_ids->type != JSON_ARRAY) {
            ret = respond_error(s, conn, c, 400, NULL,
                                "\"input_ids\" must be an array of arrays of token ids, not %s",
                                json_type_name(input_ids->type));
            goto done;
        }
        /* [[...], ...] or one flat sequence [...] */
        single = !input_ids->child || input_ids->child->type != JSON_ARRAY;
    }
    n_items = single ? 1 : list->len;
    first = single ? list : list->child;
    if (n_items == 0) {
        ret = respond_error(s, conn, c, 400, NULL, "no inputs");
        goto done;
    }
    if (n_items > o->max_inputs) {
        ret = respond_error(s, conn, c, 400, NULL, "%zu inputs: at most %zu per request", n_items,
                            o->max_inputs);
        goto done;
    }
    items = calloc(n_items, sizeof *items);
    if (!items) {
        ret = respond_error(s, conn, c, 500, NULL, "out of memory");
        goto done;
    }
    const json_node *it = first;
    for (size_t k = 0; k < n_items; k++, it = single ? NULL : it->next) {
        if (input) {
            if (it->type != JSON_STRING) {
                ret = respond_error(s, conn, c, 400, NULL, "input[%zu] must be a string, not %s", k,
                                    json_type_name(it->type));
                goto done;
            }
            size_t need = engine_tokenize(s->eng, it->str, it->len, NULL, 0);
            if (need > (size_t)max_tokens) {
                ret =
                    respond_error(s, conn, c, 400, NULL,
                                  "input[%zu] is %zu tokens long: the model takes at most %" PRId64,
                                  k, need, max_tokens);
                goto done;
            }
            items[k].ids = malloc(need * sizeof *items[k].ids);
            if (!items[k].ids) {
                ret = respond_error(s, conn, c, 500, NULL, "out of memory");
                goto done;
            }
            items[k].n = engine_tokenize(s->eng, it->str, it->len, items[k].ids, need);
        } else {
            const json_node *seq = single ? input_ids : it;
            if (seq->type != JSON_ARRAY) {
                ret = respond_error(s, conn, c, 400, NULL,
                                    "input_ids[%zu] must be an array of token ids, not %s", k,
                                    json_type_name(seq->type));
                goto done;
            }
            if (seq->len == 0 || seq->len > (size_t)max_tokens) {
                ret = respond_error(s, conn, c, 400, NULL,
                                    "input_ids[%zu] has %zu ids: give 1 to %" PRId64, k, seq->len,
                                    max_tokens);
                goto done;
            }
            items[k].ids = malloc(seq->len * sizeof *items[k].ids);
            if (!items[k].ids) {
                ret = respond_error(s, conn, c, 500, NULL, "out of memory");
                goto done;
            }
            size_t j = 0;
            for (const json_node *t = seq->child; t; t = t->next, j++) {
                if (t->type != JSON_NUMBER || !t->is_int) {
                    ret = respond_error(s, conn, c, 400, NULL,
                                        "input_ids[%zu][%zu] must be an integer token id, not %s",
                                        k, j,
                                        t->type == JSON_NUMBER ? "a fraction or a huge number"
                                                               : json_type_name(t->type));
                    goto done;
                }
                if (t->i < 0 || t->i >= vocab) {
                    ret = respond_error(s, conn, c, 400, NULL,
                                        "input_ids[%zu][%zu] = %" PRId64
                                        " is outside the vocabulary [0, %" PRId64 ")",
                                        k, j, t->i, vocab);
                    goto done;
                }
                items[k].ids[j] = t->i;
            }
            items[k].n = seq->len;
        }
        total_tokens += items[k].n;
    }
    /* identical inputs of one request (after normalization) run once */
    for (size_t k = 0; k < n_items; k++) {
        items[k].same_as = SIZE_MAX;
        for (size_t j = 0; j < k; j++)
            if (items[j].same_as == SIZE_MAX && items[j].n == items[k].n &&
                !memcmp(items[j].ids, items[k].ids, items[k].n * sizeof *items[k].ids)) {
                items[k].same_as = j;
                break;
            }
    }
    vecs = malloc(n_items * dim * sizeof *vecs);
    if (!vecs) {
        ret = respond_error(s, conn, c, 500, NULL, "out of memory");
        goto done;
    }
    /* The inputs of one request are submitted concurrently (up to 16
     * threads), so the batcher can put them into one batch. */
    fanout f = {.s = s, .c = c, .items = items, .vecs = vecs, .n = n_items, .dim = dim};
    pthread_t helpers[15];
    size_t n_helpers = 0;
    while (n_helpers + 1 < n_items && n_helpers < 15 &&
           pthread_create(&helpers[n_helpers], NULL, fanout_thread, &f) == 0)
        n_helpers++;
    embed_items(&f);
    for (size_t k = 0; k < n_helpers; k++)
        pthread_join(helpers[k], NULL);
    mopt_status st = (mopt_status)atomic_load(&f.status);
    for (size_t k = 0; k < n_items; k++)
        if (items[k].same_as != SIZE_MAX)
            memcpy(vecs + k * dim, vecs + items[k].same_as * dim, dim * sizeof *vecs);
    if (st == MOPT_ERR_BUSY) {
        ret = respond_error(s, conn, c, 429, NULL,
                            "overloaded: the inference queue (capacity %zu) is full; retry",
                            o->queue_capacity);
        goto done;
    }
    if (st == MOPT_ERR_CANCELLED) {
        ret = respond_error(s, conn, c, 504, NULL, "timed out: not started within %" PRId64 " ms",
                            o->timeout_ms);
        goto done;
    }
    if (st != MOPT_OK) {
        ret = respond_error(s, conn, c, 500, NULL, "inference failed: %s", mopt_status_string(st));
        goto done;
    }
    sbuf b = {0};
    sb_printf(&b, "{\"object\":\"list\",\"data\":[");
    for (size_t k = 0; k < n_items; k++) {
        sb_printf(&b, "%s{\"object\":\"embedding\",\"index\":%zu,\"embedding\":[", k ? "," : "", k);
        for (size_t d = 0; d < dim; d++) {
            float x = vecs[k * dim + d];
            sb_printf(&b, d ? ",%.9g" : "%.9g", isfinite(x) ? (double)x : 0.0);
        }
        sb_printf(&b, "]}");
    }
    sb_printf(&b, "],\"model\":");
    sb_json_string(&b, engine_model_name(s->eng));
    sb_printf(&b, ",\"usage\":{\"prompt_tokens\":%" PRIu64 ",\"total_tokens\":%" PRIu64 "}}\n",
              total_tokens, total_tokens);
    ret = respond_built(s, conn, c, &b, "application/json");
done:
    free(vecs);
    free_items(items, n_items);
    json_free(doc);
    return ret;
}

/* ---- /v1/generate ------------------------------------------------------ */

enum { FIN_LENGTH, FIN_STOP, FIN_TIMEOUT, FIN_CANCELLED };
static const char *const finish_names[4] = {"length", "stop", "timeout", "cancelled"};

enum { MAX_STOPS = 4, MAX_STOP_LEN = 64 };

/* One generation request. Whole answers use it on the handler's thread;
 * streamed ones share it between a producer thread (which runs the
 * generator and appends SSE events to out) and libmicrohttpd's content
 * reader (which sends them), until the response's free callback joins the
 * producer and frees it. */
typedef struct gen_req {
    server *s;
    mopt_generator *gen;
    int64_t *ids;
    size_t n_ids, max_tokens;
    char stops[MAX_STOPS][MAX_STOP_LEN + 1];
    size_t stop_len[MAX_STOPS], n_stops;
    int stream;
    int64_t deadline_ns, last_ns;
    sbuf text; /* the generated text so far (valid UTF-8) */
    sbuf toks; /* the token ids as a JSON list body */
    size_t n_tokens;
    utf8_asm u;
    int finish;
    mopt_status st;
    /* streaming */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sbuf out;
    size_t out_pos;
    int done, client_gone, thread_started;
    pthread_t thread;
} gen_req;

/* A JSON string of UTF-8 text (escapes only what JSON requires). */
static void sb_json_utf8(sbuf *b, const char *p, size_t n) {
    sb_reserve(b, n + 2);
    sb_printf(b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c == '\n')
            sb_printf(b, "\\n");
        else if (c < 0x20 || c == 0x7F)
            sb_printf(b, "\\u%04x", c);
        else {
            sb_reserve(b, 1);
            if (b->oom) return;
            b->p[b->len++] = (char)c;
            b->p[b->len] = '\0';
        }
    }
    sb_printf(b, "\"");
}

static void record_token_time(server *s, gen_req *r) {
    int64_t now = now_ns(), dt = now - r->last_ns;
    r->last_ns = now;
    if (r->n_tokens == 0) {
        atomic_fetch_add(&s->m.ttft_sum_ns, (uint64_t)dt);
        atomic_fetch_add(&s->m.ttft_count, 1);
        return;
    }
    atomic_fetch_add(&s->m.tok_bucket[lat_bucket_of((double)dt / 1e9)], 1);
    atomic_fetch_add(&s->m.tok_sum_ns, (uint64_t)dt);
    atomic_fetch_add(&s->m.tok_count, 1);
}

/* Appends an SSE event and wakes the reader. */
static void emit(gen_req *r, const sbuf *ev) {
    pthread_mutex_lock(&r->mu);
    if (r->out_pos == r->out.len) r->out.len = r->out_pos = 0; /* all sent: reuse */
    sb_reserve(&r->out, ev->len);
    if (!r->out.oom) {
        memcpy(r->out.p + r->out.len, ev->p, ev->len);
        r->out.len += ev->len;
    }
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int on_gen_token(void *user, int64_t token, size_t index) {
    gen_req *r = user;
    server *s = r->s;
    (void)index;
    record_token_time(s, r);
    atomic_fetch_add(&s->m.gen_tokens, 1);
    char piece[8];
    size_t n = utf8_push(&r->u, (unsigned char)token, piece);
    size_t before = r->text.len;
    sb_reserve(&r->text, n);
    if (!r->text.oom) {
        memcpy(r->text.p + r->text.len, piece, n);
        r->text.len += n;
        r->text.p[r->text.len] = '\0';
    }
    sb_printf(&r->toks, r->n_tokens ? ",%" PRId64 : "%" PRId64, token);
    r->n_tokens++;
    if (r->stream) {
        sbuf ev = {0};
        sb_printf(&ev, "data: {\"token\":%" PRId64 ",\"text\":", token);
        sb_json_utf8(&ev, r->text.p ? r->text.p + before : "", n);
        sb_printf(&ev, "}\n\n");
        emit(r, &ev);
        free(ev.p);
    }
    for (size_t k = 0; k < r->n_stops; k++)
        if (r->text.len >= r->stop_len[k] &&
            !memcmp(r->text.p + r->text.len - r->stop_len[k], r->stops[k], r->stop_len[k])) {
            r->finish = FIN_STOP;
            return 1;
        }
    if (r->deadline_ns > 0 && now_ns() > r->deadline_ns) {
        r->finish = FIN_TIMEOUT;
        return 1;
    }
    if (r->text.oom || r->toks.oom) {
        r->st = MOPT_ERR_OUT_OF_MEMORY;
        return 1;
    }
    return 0;
}

/* Runs the generation (generator already acquired), then gives the
 * generator back. */
static void run_generation(gen_req *r) {
    server *s = r->s;
    r->last_ns = now_ns();
    size_t n_gen = 0;
    mopt_status st =
        mopt_generator_generate(r->gen, r->ids, r->n_ids, r->max_tokens, on_gen_token, r, &n_gen);
    if (r->st == MOPT_OK) r->st = st;
    /* After done is set (under the lock) nobody cancels this generator any
     * more: clear the flag, then hand it to the next request. */
    pthread_mutex_lock(&r->mu);
    if (r->client_gone || st == MOPT_ERR_CANCELLED) r->finish = FIN_CANCELLED;
    mopt_generator *g = r->gen;
    r->gen = NULL;
    pthread_mutex_unlock(&r->mu);
    if (st == MOPT_ERR_CANCELLED && r->finish == FIN_CANCELLED) r->st = MOPT_OK;
    if (mopt_generator_set_cancel(g, 0) != MOPT_OK) abort(); /* only fails for NULL */
    gen_pool_release(s->gp, g);
    atomic_fetch_add(&s->m.gen_finish[r->finish], 1);
    char tail[8];
    size_t n = utf8_flush(&r->u, tail);
    sb_reserve(&r->text, n);
    if (!r->text.oom && n) {
        memcpy(r->text.p + r->text.len, tail, n);
        r->text.len += n;
        r->text.p[r->text.len] = '\0';
    }
    if (r->stream) {
        sbuf ev = {0};
        sb_printf(&ev, "data: {\"text\":");
        sb_json_utf8(&ev, tail, n);
        sb_printf(&ev, ",\"finish_reason\":\"%s\"", finish_names[r->finish]);
        if (r->st != MOPT_OK)
            sb_printf(&ev, ",\"error\":{\"message\":\"generation failed: %s\"}",
                      mopt_status_string(r->st));
        else if (r->finish == FIN_TIMEOUT)
            sb_printf(&ev, ",\"error\":{\"message\":\"timed out after %" PRId64 " ms\"}",
                      s->o.timeout_ms);
        sb_printf(&ev,
                  ",\"usage\":{\"prompt_tokens\":%zu,\"completion_tokens\":%zu,"
                  "\"total_tokens\":%zu}}\n\ndata: [DONE]\n\n",
                  r->n_ids, r->n_tokens, r->n_ids + r->n_tokens);
        emit(r, &ev);
        free(ev.p);
    }
    pthread_mutex_lock(&r->mu);
    r->done = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void *gen_thread(void *arg) {
    run_generation(arg);
    return NULL;
}

static void gen_req_free(gen_req *r) {
    if (!r) return;
    if (r->gen) {                                                     /* never started */
        if (mopt_generator_set_cancel(r->gen, 0) != MOPT_OK) abort(); /* only fails for NULL */
        gen_pool_release(r->s->gp, r->gen);
        r->gen = NULL;
    }
    free(r->ids);
    free(r->text.p);
    free(r->toks.p);
    free(r->out.p);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}

/* libmicrohttpd's content reader of a streamed answer: blocks (one thread
 * per connection) until the producer has appended events. */
static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max) {
    gen_req *r = cls;
    (void)pos;
    pthread_mutex_lock(&r->mu);
    while (r->out_pos == r->out.len && !r->done)
        pthread_cond_wait(&r->cv, &r->mu);
    ssize_t n;
    if (r->out_pos == r->out.len) {
        n = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        size_t k = r->out.len - r->out_pos;
        if (k > max) k = max;
        memcpy(buf, r->out.p + r->out_pos, k);
        r->out_pos += k;
        n = (ssize_t)k;
    }
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* The response is gone: sent, or the client went away mid-stream. Cancels
 * a generation still running, waits for its thread, frees the request. */
static void sse_free(void *cls) {
    gen_req *r = cls;
    pthread_mutex_lock(&r->mu);
    if (!r->done && r->gen) {
        r->client_gone = 1;
        if (mopt_generator_set_cancel(r->gen, 1) != MOPT_OK) abort(); /* only fails for NULL */
    }
    pthread_mutex_unlock(&r->mu);
    if (r->thread_started) pthread_join(r->thread, NULL);
    gen_req_free(r);
}

static int get_number(const json_node *m, double lo, double hi, int lo_open, double *out) {
    if (m->type != JSON_NUMBER || !isfinite(m->d)) return -1;
    if (m->d < lo || (lo_open && m->d == lo) || m->d > hi) return -1;
    *out = m->d;
    return 0;
}

/* The integer member m, from lo to hi, into *out: 0; else -1. */
static int get_int(const json_node *m, int64_t lo, int64_t hi, int64_t *out) {
    if (m->type != JSON_NUMBER || !m->is_int || m->i < lo || m->i > hi) return -1;
    *out = m->i;
    return 0;
}

static enum MHD_Result handle_generate(server *s, struct MHD_Connection *conn, req_ctx *c) {
    const serve_opts *o = &s->o;
    if (!s->gp)
        return respond_error(s, conn, c, 501, NULL,
                             "text generation is off: start the server with --generate-model "
                             "PATH (a byte-level decoder such as examples/generate/kjv-tiny.onnx)");
    char err[256];
    json_node *root = NULL;
    json_limits lim = {.max_depth = 4, .max_nodes = 64};
    if (c->len == 0)
        return respond_error(s, conn, c, 400, NULL, "empty request body: expected a JSON object");
    json_doc *doc = json_parse(c->body, c->len, &lim, &root, err, sizeof err);
    if (!doc) return respond_error(s, conn, c, 400, NULL, "malformed JSON: %s", err);
    enum MHD_Result ret;
    gen_req *r = calloc(1, sizeof *r);
    if (!r) {
        json_free(doc);
        return respond_error(s, conn, c, 500, NULL, "out of memory");
    }
    r->s = s;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    double temperature = 0, top_p = 1, rep = 1;
    int64_t top_k = 0, seed = 0, max_tokens = o->gen_max_tokens < 128 ? o->gen_max_tokens : 128;
    const json_node *prompt = NULL;
    static const char *const known[] = {
        "prompt", "max_tokens", "temperature", "top_k", "top_p", "repetition_penalty",
        "seed",   "stream",     "stop",        "model", "user"};
    enum { N_KNOWN = sizeof known / sizeof known[0] };
    int seen[N_KNOWN] = {0};

    if (root->type != JSON_OBJECT) {
        ret = respond_error(s, conn, c, 400, NULL, "the body must be a JSON object, not %s",
                            json_type_name(root->type));
        goto done;
    }
    for (const json_node *m = root->child; m; m = m->next) {
        int k = 0;
        while (k < N_KNOWN && !key_is(m, known[k]))
            k++;
        if (k == N_KNOWN) {
            ret = respond_error(s, conn, c, 400, NULL,
                                "unknown member \"%.64s\" (expected prompt, and optionally "
                                "max_tokens, temperature, top_k, top_p, repetition_penalty, "
                                "seed, stream, stop, model, user)",
                                m->key);
            goto done;
        }
        if (seen[k]++) {
            ret = respond_error(s, conn, c, 400, NULL, "member \"%s\" given twice", known[k]);
            goto done;
        }
        int bad = 0;
        const char *want = "";
        if (key_is(m, "prompt")) {
            prompt = m;
            bad = m->type != JSON_STRING;
            want = "a string";
        } else if (key_is(m, "max_tokens")) {
            bad = get_int(m, 1, o->gen_max_tokens, &max_tokens);
            want = "an integer from 1 to --generate-max-tokens";
        } else if (key_is(m, "temperature")) {
            bad = get_number(m, 0, 100, 0, &temperature);
            want = "a number in [0, 100]";
        } else if (key_is(m, "top_k")) {
            bad = get_int(m, 0, gen_pool_vocab(s->gp), &top_k);
            want = "an integer from 0 to the vocabulary size";
        } else if (key_is(m, "top_p")) {
            bad = get_number(m, 0, 1, 1, &top_p);
            want = "a number in (0, 1]";
        } else if (key_is(m, "repetition_penalty")) {
            bad = get_number(m, 0, 100, 1, &rep);
            want = "a number in (0, 100]";
        } else if (key_is(m, "seed")) {
            bad = get_int(m, INT64_MIN, INT64_MAX, &seed);
            want = "an integer";
        } else if (key_is(m, "stream")) {
            bad = m->type != JSON_TRUE && m->type != JSON_FALSE;
            want = "true or false";
            r->stream = m->type == JSON_TRUE;
        } else if (key_is(m, "stop")) {
            const json_node *one = m->type == JSON_STRING ? m : NULL;
            bad = m->type != JSON_STRING && (m->type != JSON_ARRAY || m->len > MAX_STOPS);
            want = "a string or an array of at most 4 strings of 1 to 64 bytes";
            for (const json_node *t = one ? one : (bad ? NULL : m->child); t && !bad;
                 t = one ? NULL : t->next) {
                if (t->type != JSON_STRING || t->len < 1 || t->len > MAX_STOP_LEN) {
                    bad = 1;
                    break;
                }
                memcpy(r->stops[r->n_stops], t->str, t->len);
                r->stop_len[r->n_stops++] = t->len;
            }
        } else { /* model, user: not checked beyond their type */
            bad = m->type != JSON_STRING;
            want = "a string";
        }
        if (bad) {
            ret = respond_error(s, conn, c, 400, NULL, "\"%s\" must be %s", known[k], want);
            goto done;
        }
    }
    if (!prompt) {
        ret = respond_error(s, conn, c, 400, NULL, "missing \"prompt\" (a string)");
        goto done;
    }
    if (prompt->len < 1 || prompt->len > (size_t)o->gen_max_prompt) {
        ret = respond_error(s, conn, c, 400, NULL,
                            "\"prompt\" is %zu bytes (tokens): give 1 to %" PRId64, prompt->len,
                            o->gen_max_prompt);
        goto done;
    }
    if ((int64_t)prompt->len + max_tokens > o->gen_max_seq) {
        ret = respond_error(s, conn, c, 400, NULL,
                            "prompt (%zu tokens) + max_tokens (%" PRId64
                            ") exceed the context of %" PRId64 " positions",
                            prompt->len, max_tokens, o->gen_max_seq);
        goto done;
    }
    r->n_ids = prompt->len;
    r->max_tokens = (size_t)max_tokens;
    r->ids = malloc(r->n_ids * sizeof *r->ids);
    if (!r->ids) {
        ret = respond_error(s, conn, c, 500, NULL, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < r->n_ids; i++)
        r->ids[i] = (unsigned char)prompt->str[i]; /* the byte tokenizer */
    if (o->timeout_ms > 0) r->deadline_ns = c->start_ns + o->timeout_ms * 1000000;
    int why = 0;
    r->gen = gen_pool_acquire(s->gp, o->gen_queue, r->deadline_ns, &why);
    if (!r->gen) {
        if (why == 429)
            ret = respond_error(s, conn, c, 429, NULL,
                                "overloaded: all %d generators are busy and %zu requests wait; "
                                "retry",
                                o->generators, o->gen_queue);
        else
            ret =
                respond_error(s, conn, c, 504, NULL,
                              "timed out: no generator free within %" PRId64 " ms", o->timeout_ms);
        goto done;
    }
    mopt_status st = mopt_generator_set_double(r->gen, "temperature", temperature);
    if (st == MOPT_OK) st = mopt_generator_set_int(r->gen, "top_k", top_k);
    if (st == MOPT_OK) st = mopt_generator_set_double(r->gen, "top_p", top_p);
    if (st == MOPT_OK) st = mopt_generator_set_double(r->gen, "repetition_penalty", rep);
    if (st == MOPT_OK) st = mopt_generator_set_int(r->gen, "seed", seed);
    if (st == MOPT_OK) st = mopt_generator_set_stop_tokens(r->gen, NULL, 0);
    if (st != MOPT_OK) {
        ret = respond_error(s, conn, c, 400, NULL, "sampling settings refused: %s",
                            mopt_last_error());
        goto done;
    }
    atomic_fetch_add(&s->m.gen_requests[r->stream], 1);
    atomic_fetch_add(&s->m.gen_prompt_tokens, r->n_ids);
    if (r->stream) {
        struct MHD_Response *resp =
            MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, r, sse_free);
        if (!resp) {
            ret = respond_error(s, conn, c, 500, NULL, "out of memory");
            goto done;
        }
        if (pthread_create(&r->thread, NULL, gen_thread, r) != 0) {
            MHD_destroy_response(resp); /* sse_free frees r (and gives back its generator) */
            json_free(doc);
            return respond_error(s, conn, c, 500, NULL, "cannot start a thread");
        }
        r->thread_started = 1;
        MHD_add_response_header(resp, "Content-Type", "text/event-stream");
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        if (atomic_load(&s->draining))
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
        ret = MHD_queue_response(conn, 200, resp);
        MHD_destroy_response(resp); /* from now on libmicrohttpd owns r (sse_free) */
        c->responded = 1;
        count_response(s, c, 200);
        json_free(doc);
        return ret;
    }
    run_generation(r);
    if (r->st != MOPT_OK) {
        ret = respond_error(s, conn, c, 500, NULL, "generation failed: %s",
                            mopt_status_string(r->st));
        goto done;
    }
    if (r->finish == FIN_TIMEOUT) {
        ret = respond_error(s, conn, c, 504, NULL,
                            "timed out: generation did not finish within %" PRId64
                            " ms (%zu tokens generated)",
                            o->timeout_ms, r->n_tokens);
        goto done;
    }
    sbuf b = {0};
    sb_printf(&b, "{\"object\":\"text_completion\",\"model\":");
    sb_json_string(&b, gen_pool_model_name(s->gp));
    sb_printf(&b, ",\"text\":");
    sb_json_utf8(&b, r->text.p ? r->text.p : "", r->text.len);
    sb_printf(&b, ",\"tokens\":[%s],\"finish_reason\":\"%s\",", r->toks.p ? r->toks.p : "",
              finish_names[r->finish]);
    sb_printf(&b,
              "\"usage\":{\"prompt_tokens\":%zu,\"completion_tokens\":%zu,\"total_tokens\":%zu}}"
              "\n",
              r->n_ids, r->n_tokens, r->n_ids + r->n_tokens);
    ret = respond_built(s, conn, c, &b, "application/json");
done:
    gen_req_free(r);
    json_free(doc);
    return ret;
}

/* ---- /metrics ---------------------------------------------------------- */

static enum MHD_Result handle_metrics(server *s, struct MHD_Connection *conn, req_ctx *c) {
    sbuf b = {0};
    sb_printf(&b, "# HELP serve_requests_total HTTP requests by endpoint and status code.\n"
                  "# TYPE serve_requests_total counter\n");
    for (int e = 0; e < N_EP; e++)
        for (int k = 0; k <= N_CODES; k++) {
            uint64_t v = atomic_load(&s->m.requests[e][k]);
            if (!v) continue;
            if (k < N_CODES)
                sb_printf(&b, "serve_requests_total{endpoint=\"%s\",code=\"%u\"} %" PRIu64 "\n",
                          ep_names[e], status_codes[k], v);
            else
                sb_printf(&b, "serve_requests_total{endpoint=\"%s\",code=\"other\"} %" PRIu64 "\n",
                          ep_names[e], v);
        }
    sb_printf(&b, "# HELP serve_request_duration_seconds Time from the request's headers to its "
                  "response, by endpoint.\n# TYPE serve_request_duration_seconds histogram\n");
    for (int e = 0; e < N_EP; e++) {
        uint64_t cum = 0;
        for (int i = 0; i < N_LAT; i++) {
            cum += atomic_load(&s->m.lat_bucket[e][i]);
            sb_printf(&b,
                      "serve_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %" PRIu64
                      "\n",
                      ep_names[e], lat_bounds[i], cum);
        }
        cum += atomic_load(&s->m.lat_bucket[e][N_LAT]);
        sb_printf(&b,
                  "serve_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %" PRIu64 "\n"
                  "serve_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n"
                  "serve_request_duration_seconds_count{endpoint=\"%s\"} %" PRIu64 "\n",
                  ep_names[e], cum, ep_names[e], (double)atomic_load(&s->m.lat_sum_us[e]) / 1e6,
                  ep_names[e], (uint64_t)atomic_load(&s->m.lat_count[e]));
    }
    engine_stats es;
    memset(&es, 0, sizeof es);
    if (s->eng) engine_get_stats(s->eng, &es);
    sb_printf(&b, "# HELP serve_batch_size Requests per model run (from mopt_batcher_get_stats).\n"
                  "# TYPE serve_batch_size histogram\n");
    uint64_t cum = 0, sum = 0;
    for (int k = 0; k < 64; k++) {
        cum += es.batch_size_hist[k];
        sum += es.batch_size_hist[k] * (uint64_t)(k + 1);
        if (k < 63) sb_printf(&b, "serve_batch_size_bucket{le=\"%d\"} %" PRIu64 "\n", k + 1, cum);
    }
    sb_printf(&b,
              "serve_batch_size_bucket{le=\"+Inf\"} %" PRIu64 "\nserve_batch_size_sum %" PRIu64
              "\nserve_batch_size_count %" PRIu64 "\n",
              cum, sum, es.batches);
    sb_printf(&b,
              "# HELP serve_queue_depth Inference requests waiting in the batcher's queue.\n"
              "# TYPE serve_queue_depth gauge\nserve_queue_depth %zu\n"
              "# HELP serve_queue_capacity Capacity of the batcher's queue.\n"
              "# TYPE serve_queue_capacity gauge\nserve_queue_capacity %zu\n"
              "# HELP serve_batcher_requests_total Batcher requests by outcome.\n"
              "# TYPE serve_batcher_requests_total counter\n"
              "serve_batcher_requests_total{outcome=\"completed\"} %" PRIu64 "\n"
              "serve_batcher_requests_total{outcome=\"failed\"} %" PRIu64 "\n"
              "serve_batcher_requests_total{outcome=\"rejected_full\"} %" PRIu64 "\n"
              "serve_batcher_requests_total{outcome=\"timed_out\"} %" PRIu64 "\n",
              es.queue_depth, s->o.queue_capacity, es.completed, es.failed, es.rejected_full,
              es.timed_out);
    sb_printf(&b,
              "# HELP serve_batcher_reruns_total Batches whose run failed and were rerun request "
              "by request.\n# TYPE serve_batcher_reruns_total counter\n"
              "serve_batcher_reruns_total %" PRIu64 "\n"
              "# HELP serve_batcher_input_elements_total Input elements run, padding included.\n"
              "# TYPE serve_batcher_input_elements_total counter\n"
              "serve_batcher_input_elements_total %" PRIu64 "\n"
              "# HELP serve_batcher_padded_elements_total Input elements added by padding.\n"
              "# TYPE serve_batcher_padded_elements_total counter\n"
              "serve_batcher_padded_elements_total %" PRIu64 "\n",
              es.reruns, es.input_elements, es.padded_elements);
    emb_cache_stats cs;
    emb_cache_get_stats(s->cache, &cs);
    sb_printf(
        &b,
        "# HELP serve_cache_hits_total Embedding cache hits (per input).\n"
        "# TYPE serve_cache_hits_total counter\nserve_cache_hits_total %" PRIu64 "\n"
        "# HELP serve_cache_misses_total Embedding cache misses (per input).\n"
        "# TYPE serve_cache_misses_total counter\nserve_cache_misses_total %" PRIu64 "\n"
        "# HELP serve_cache_evictions_total Embedding cache evictions.\n"
        "# TYPE serve_cache_evictions_total counter\nserve_cache_evictions_total %" PRIu64 "\n"
        "# HELP serve_cache_entries Entries in the embedding cache.\n"
        "# TYPE serve_cache_entries gauge\nserve_cache_entries %zu\n"
        "# HELP serve_cache_bytes Bytes held by the embedding cache.\n"
        "# TYPE serve_cache_bytes gauge\nserve_cache_bytes %zu\n"
        "# HELP serve_inflight_requests HTTP requests being handled.\n"
        "# TYPE serve_inflight_requests gauge\nserve_inflight_requests %ld\n",
        cs.hits, cs.misses, cs.evictions, cs.entries, cs.bytes, (long)atomic_load(&s->inflight));
    gen_pool_stats gs;
    gen_pool_get_stats(s->gp, &gs);
    sb_printf(&b,
              "# HELP serve_generate_requests_total Generations started, by mode.\n"
              "# TYPE serve_generate_requests_total counter\n"
              "serve_generate_requests_total{stream=\"false\"} %" PRIu64 "\n"
              "serve_generate_requests_total{stream=\"true\"} %" PRIu64 "\n"
              "# HELP serve_generate_finished_total Generations ended, by reason (cancelled: the "
              "client went away mid-stream).\n"
              "# TYPE serve_generate_finished_total counter\n",
              (uint64_t)atomic_load(&s->m.gen_requests[0]),
              (uint64_t)atomic_load(&s->m.gen_requests[1]));
    for (int k = 0; k < 4; k++)
        sb_printf(&b, "serve_generate_finished_total{reason=\"%s\"} %" PRIu64 "\n", finish_names[k],
                  (uint64_t)atomic_load(&s->m.gen_finish[k]));
    sb_printf(
        &b,
        "# HELP serve_generate_tokens_total Tokens generated.\n"
        "# TYPE serve_generate_tokens_total counter\nserve_generate_tokens_total %" PRIu64
        "\n# HELP serve_generate_prompt_tokens_total Prompt tokens of started "
        "generations.\n# TYPE serve_generate_prompt_tokens_total counter\n"
        "serve_generate_prompt_tokens_total %" PRIu64 "\n"
        "# HELP serve_generate_time_to_first_token_seconds Prefill and first sampling.\n"
        "# TYPE serve_generate_time_to_first_token_seconds summary\n"
        "serve_generate_time_to_first_token_seconds_sum %.9f\n"
        "serve_generate_time_to_first_token_seconds_count %" PRIu64 "\n"
        "# HELP serve_generate_time_per_token_seconds Time between consecutive tokens.\n"
        "# TYPE serve_generate_time_per_token_seconds histogram\n",
        (uint64_t)atomic_load(&s->m.gen_tokens), (uint64_t)atomic_load(&s->m.gen_prompt_tokens),
        (double)atomic_load(&s->m.ttft_sum_ns) / 1e9, (uint64_t)atomic_load(&s->m.ttft_count));
    uint64_t tcum = 0;
    for (int i = 0; i <= N_LAT; i++) {
        tcum += atomic_load(&s->m.tok_bucket[i]);
        if (i < N_LAT)
            sb_printf(&b, "serve_generate_time_per_token_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
                      lat_bounds[i], tcum);
        else
            sb_printf(&b, "serve_generate_time_per_token_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
                      tcum);
    }
    sb_printf(&b,
              "serve_generate_time_per_token_seconds_sum %.9f\n"
              "serve_generate_time_per_token_seconds_count %" PRIu64 "\n"
              "# HELP serve_generators Generators in the pool.\n# TYPE serve_generators gauge\n"
              "serve_generators %zu\n"
              "# HELP serve_generators_busy Generators running a request.\n"
              "# TYPE serve_generators_busy gauge\nserve_generators_busy %zu\n"
              "# HELP serve_generate_waiting Requests waiting for a generator.\n"
              "# TYPE serve_generate_waiting gauge\nserve_generate_waiting %zu\n",
              (double)atomic_load(&s->m.tok_sum_ns) / 1e9, (uint64_t)atomic_load(&s->m.tok_count),
              gs.size, gs.busy, gs.waiting);
    return respond_built(s, conn, c, &b, "text/plain; version=0.0.4; charset=utf-8");
}

/* ---- routing ----------------------------------------------------------- */

static int endpoint_of(const char *url) {
    for (int e = 0; e < EP_OTHER; e++)
        if (!strcmp(url, ep_names[e])) return e;
    return EP_OTHER;
}

static int is_post_endpoint(int ep) { return ep == EP_EMBEDDINGS || ep == EP_GENERATE; }

static int json_content_type(const char *ct) {
    static const char want[] = "application/json";
    if (!ct || strncasecmp(ct, want, sizeof want - 1) != 0) return 0;
    char next = ct[sizeof want - 1];
    return next == '\0' || next == ';' || next == ' ' || next == '\t';
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    server *s = cls;
    req_ctx *c = *con_cls;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c) return MHD_NO;
        *con_cls = c;
        c->start_ns = now_ns();
        c->endpoint = endpoint_of(url);
        atomic_fetch_add(&s->inflight, 1);
        int ep = c->endpoint;
        if (ep == EP_OTHER)
            return respond_error(s, conn, c, 404, NULL, "no such endpoint: %s %.200s", method, url);
        int post = is_post_endpoint(ep);
        if (post ? strcmp(method, "POST") != 0
                 : (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0))
            return respond_error(s, conn, c, 405, post ? "POST" : "GET, HEAD",
                                 "%s takes %s, not %s", url, post ? "POST" : "GET", method);
        if (atomic_load(&s->draining) && ep != EP_METRICS)
            return respond_error(s, conn, c, 503, NULL, "shutting down");
        if (post) {
            const char *cl =
                MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
            if (cl) {
                char *end;
                errno = 0;
                unsigned long long v = strtoull(cl, &end, 10);
                if (errno || end == cl || v > s->o.max_body_bytes) {
                    c->too_large = 1;
                    return respond_error(s, conn, c, 413, NULL,
                                         "request body of %.40s bytes: the limit is %zu", cl,
                                         s->o.max_body_bytes);
                }
            }
            if (!json_content_type(
                    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type")))
                return respond_error(s, conn, c, 415, NULL,
                                     "Content-Type must be application/json");
        }
        return MHD_YES;
    }
    if (c->responded) { /* an early response: discard the rest of the body */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (c->too_large || c->len + n > s->o.max_body_bytes) {
            /* libmicrohttpd cannot answer in the middle of a body: drop the
             * rest and answer 413 at its end, or close the connection once
             * a client has sent 4 times the limit. */
            c->too_large = 1;
            c->len += n;
            return c->len / 4 > s->o.max_body_bytes ? MHD_NO : MHD_YES;
        }
        if (c->len + n > c->cap) {
            size_t cap = c->cap ? c->cap : 4096;
            while (cap < c->len + n)
                cap *= 2;
            if (cap > s->o.max_body_bytes) cap = s->o.max_body_bytes;
            char *p = realloc(c->body, cap);
            if (!p) return respond_error(s, conn, c, 500, NULL, "out of memory");
            c->body = p;
            c->cap = cap;
        }
        memcpy(c->body + c->len, upload_data, n);
        c->len += n;
        return MHD_YES;
    }
    if (c->too_large)
        return respond_error(s, conn, c, 413, NULL, "request body over the limit of %zu bytes",
                             s->o.max_body_bytes);
    switch (c->endpoint) {
    case EP_EMBEDDINGS: return handle_embeddings(s, conn, c);
    case EP_GENERATE: return handle_generate(s, conn, c);
    case EP_METRICS: return handle_metrics(s, conn, c);
    case EP_HEALTHZ: {
        char *ok = strdup("{\"status\":\"ok\"}\n");
        if (!ok) return MHD_NO;
        return respond(s, conn, c, 200, "application/json", ok, strlen(ok), NULL);
    }
    default: return respond_error(s, conn, c, 404, NULL, "no such endpoint");
    }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    server *s = cls;
    req_ctx *c = *con_cls;
    if (!c) return;
    free(c->body);
    free(c);
    *con_cls = NULL;
    pthread_mutex_lock(&s->idle_mu);
    if (atomic_fetch_sub(&s->inflight, 1) == 1) pthread_cond_broadcast(&s->idle_cv);
    pthread_mutex_unlock(&s->idle_mu);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    fprintf(stderr, "serve: libmicrohttpd: ");
    vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv) {
    static server s; /* large (atomic counters); static storage */
    s.o = (serve_opts){.model = "examples/models/bert_tiny.onnx",
                       .host = "127.0.0.1",
                       .port = 8080,
                       .batch = 1,
                       .max_batch = 32,
                       .max_delay_us = 2000,
                       .queue_capacity = 256,
                       .workers = 1,
                       .threads = 1,
                       .timeout_ms = 10000,
                       .cache_entries = 4096,
                       .cache_max_bytes = (size_t)64 << 20,
                       .max_body_bytes = (size_t)1 << 20,
                       .max_inputs = 64,
                       .max_connections = 512,
                       .vocab = 1000,
                       .max_tokens = 128,
                       .drain_timeout_ms = 30000,
                       .generators = 1,
                       .gen_queue = 64,
                       .gen_max_seq = 1024,
                       .gen_max_tokens = 512,
                       .gen_max_prompt = 512};
    if (parse_args(argc, argv, &s.o)) return 2;
    pthread_mutex_init(&s.idle_mu, NULL);
    pthread_cond_init(&s.idle_cv, NULL);

    /* Signals are taken by sigwait in this thread only: block them before
     * any thread starts (they inherit the mask). */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);

    engine_config ec = {.model_path = s.o.model,
                        .batch = s.o.batch,
                        .max_batch = s.o.max_batch,
                        .max_delay_us = s.o.max_delay_us,
                        .seq_buckets = s.o.n_seq_buckets ? s.o.seq_buckets : NULL,
                        .n_seq_buckets = s.o.n_seq_buckets,
                        .no_padding = s.o.no_padding,
                        .queue_capacity = s.o.queue_capacity,
                        .workers = s.o.workers,
                        .threads = s.o.threads,
                        .vocab = s.o.vocab,
                        .max_tokens = s.o.max_tokens};
    char err[512];
    int embeddings = strcmp(s.o.model, "none") != 0;
    if (!embeddings && !s.o.generate_model) {
        fprintf(stderr, "serve: --model none needs --generate-model: nothing to serve\n");
        return 2;
    }
    if (s.o.generate_model && s.o.gen_max_prompt + 1 > s.o.gen_max_seq) {
        fprintf(stderr, "serve: --generate-max-prompt must be below --generate-max-seq\n");
        return 2;
    }
    if (embeddings) {
        s.eng = engine_create(&ec, err, sizeof err);
        if (!s.eng) {
            fprintf(stderr, "serve: %s\n", err);
            return 1;
        }
        s.cache = emb_cache_create(s.o.cache_entries, s.o.cache_max_bytes, engine_dim(s.eng));
        if (!s.cache) {
            fprintf(stderr, "serve: out of memory\n");
            return 1;
        }
    }
    if (s.o.generate_model) {
        s.gp = gen_pool_create(s.o.generate_model, s.o.generators, s.o.threads, s.o.gen_max_seq,
                               err, sizeof err);
        if (!s.gp) {
            fprintf(stderr, "serve: %s\n", err);
            return 1;
        }
        if (gen_pool_vocab(s.gp) != 256) {
            fprintf(stderr,
                    "serve: %s has a vocabulary of %" PRId64
                    ": /v1/generate serves byte-level models (256) only\n",
                    s.o.generate_model, gen_pool_vocab(s.gp));
            return 1;
        }
    }

    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t sl;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, s.o.host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)s.o.port);
        sl = sizeof *a4;
    } else if (inet_pton(AF_INET6, s.o.host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)s.o.port);
        sl = sizeof *a6;
        flags |= MHD_USE_IPv6;
    } else {
        fprintf(stderr, "serve: --host %s is not an IPv4 or IPv6 address\n", s.o.host);
        return 2;
    }
    (void)sl;
    struct MHD_Daemon *d =
        MHD_start_daemon(flags, (uint16_t)s.o.port, NULL, NULL, on_request, &s,
                         MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL, MHD_OPTION_SOCK_ADDR, &ss,
                         MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s, MHD_OPTION_CONNECTION_LIMIT,
                         s.o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "serve: cannot listen on %s port %d: %s\n", s.o.host, s.o.port,
                strerror(errno));
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : (unsigned)s.o.port;
    printf("serve: listening on http://%s%s%s:%u/ (model %s, batching %s, max_batch %d, "
           "max_delay_us %" PRId64 ", queue %zu, workers %d x %d threads; generate: %s, %d "
           "generators)\n",
           strchr(s.o.host, ':') ? "[" : "", s.o.host, strchr(s.o.host, ':') ? "]" : "", port,
           s.eng ? engine_model_name(s.eng) : "none", s.o.batch ? "on" : "off",
           s.o.batch ? s.o.max_batch : 1, s.o.batch ? s.o.max_delay_us : 0, s.o.queue_capacity,
           s.o.workers, s.o.threads, s.gp ? gen_pool_model_name(s.gp) : "off",
           s.gp ? s.o.generators : 0);
    fflush(stdout);

    int sig = 0;
    sigwait(&sigs, &sig);

    /* Graceful shutdown: stop accepting, answer 503 to new requests on open
     * connections, wait for the in-flight ones, then stop. */
    int64_t t0 = now_ns();
    atomic_store(&s.draining, 1);
    MHD_socket lfd = MHD_quiesce_daemon(d);
    if (lfd != MHD_INVALID_SOCKET) close(lfd);
    long left = 0;
    pthread_mutex_lock(&s.idle_mu);
    int64_t deadline = now_ns() + s.o.drain_timeout_ms * 1000000;
    while ((left = atomic_load(&s.inflight)) > 0 && now_ns() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s.idle_cv, &s.idle_mu, &ts);
    }
    pthread_mutex_unlock(&s.idle_mu);
    MHD_stop_daemon(d);
    engine_stats es;
    memset(&es, 0, sizeof es);
    if (s.eng) engine_get_stats(s.eng, &es);
    engine_destroy(s.eng);
    emb_cache_destroy(s.cache);
    uint64_t gens = atomic_load(&s.m.gen_requests[0]) + atomic_load(&s.m.gen_requests[1]);
    gen_pool_destroy(s.gp);
    fprintf(stderr,
            "serve: %s: drained in %.1f ms (%ld requests still in flight at the deadline); "
            "%" PRIu64 " inference requests completed, %" PRIu64 " generations\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", (double)(now_ns() - t0) / 1e6, left, es.completed,
            gens);
    return 0;
}
