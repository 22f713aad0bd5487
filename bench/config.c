/*
 * config.c — building, copying and freeing bench_config, and parsing the
 * small value syntaxes shared by the command line and scenarios (integers,
 * numbers, dims lists).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_config_init(bench_config *c) {
    memset(c, 0, sizeof *c);
    c->threads = -1;
    c->opt_level = -1;
    c->batch = -1;
    c->seq = -1;
    c->warmup = BENCH_DEFAULT_WARMUP;
    c->iterations = BENCH_DEFAULT_ITERATIONS;
    c->duration_s = 0.0;
    c->int_lo = 0;
    c->int_hi = 100;
    c->seed = BENCH_DEFAULT_SEED;
    c->top = BENCH_DEFAULT_TOP;
}

static char *dup_or_null(const char *s, int *bad) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *bad = 1;
    return d;
}

/* ---- lists of named strings (inputs, options) ---- */

static void kv_free(bench_kv *kv, size_t n) {
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

/* A deep copy of src[0..n) in *dst (*dst_n entries); sets *bad when out of memory. */
static void kv_copy(bench_kv **dst, size_t *dst_n, const bench_kv *src, size_t n, int *bad) {
    *dst = NULL;
    *dst_n = 0;
    if (!n) return;
    if (!(*dst = calloc(n, sizeof **dst))) {
        *bad = 1;
        return;
    }
    *dst_n = n;
    for (size_t i = 0; i < n; i++) {
        (*dst)[i].key = dup_or_null(src[i].key, bad);
        (*dst)[i].value = dup_or_null(src[i].value, bad);
    }
}

/* Sets the value of key in *kv (*n entries), or appends key=value. */
static int kv_set(bench_kv **kv, size_t *n, const char *key, const char *value) {
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*kv)[i].key, key) == 0) return bench_config_set_str(&(*kv)[i].value, value);
    bench_kv *grown = realloc(*kv, (*n + 1) * sizeof *grown);
    if (!grown) return -1;
    *kv = grown;
    char *k = strdup(key), *v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    grown[*n] = (bench_kv){k, v};
    (*n)++;
    return 0;
}

void bench_shape_free(bench_shape *s) {
    free(s->name);
    for (int i = 0; i < BENCH_MAX_RANK; i++)
        free(s->syms[i]);
    memset(s, 0, sizeof *s);
}

int bench_shape_copy(bench_shape *dst, const bench_shape *src) {
    *dst = *src;
    int bad = 0;
    dst->name = dup_or_null(src->name, &bad);
    for (int k = 0; k < BENCH_MAX_RANK; k++)
        dst->syms[k] = dup_or_null(src->syms[k], &bad);
    if (bad) bench_shape_free(dst);
    return bad ? -1 : 0;
}

void bench_config_free(bench_config *c) {
    free(c->name);
    free(c->model);
    kv_free(c->inputs, c->n_inputs);
    for (size_t i = 0; i < c->n_shapes; i++)
        bench_shape_free(&c->shapes[i]);
    free(c->shapes);
    for (size_t i = 0; i < c->n_dims; i++)
        free(c->dims[i].name);
    free(c->dims);
    free(c->precision);
    free(c->backend);
    free(c->profile);
    kv_free(c->options, c->n_options);
    bench_config_init(c);
}

int bench_config_copy(bench_config *dst, const bench_config *src) {
    int bad = 0;
    bench_config c = *src;
    c.name = dup_or_null(src->name, &bad);
    c.model = dup_or_null(src->model, &bad);
    c.precision = dup_or_null(src->precision, &bad);
    c.backend = dup_or_null(src->backend, &bad);
    c.profile = dup_or_null(src->profile, &bad);
    kv_copy(&c.inputs, &c.n_inputs, src->inputs, src->n_inputs, &bad);
    kv_copy(&c.options, &c.n_options, src->options, src->n_options, &bad);
    c.shapes = NULL;
    c.dims = NULL;
    c.n_shapes = c.n_dims = 0;
    if (src->n_shapes && (c.shapes = calloc(src->n_shapes, sizeof *c.shapes)) != NULL) {
        c.n_shapes = src->n_shapes;
        for (size_t i = 0; i < src->n_shapes; i++)
            if (bench_shape_copy(&c.shapes[i], &src->shapes[i]) != 0) bad = 1;
    } else if (src->n_shapes) {
        bad = 1;
    }
    if (src->n_dims && (c.dims = calloc(src->n_dims, sizeof *c.dims)) != NULL) {
        c.n_dims = src->n_dims;
        for (size_t i = 0; i < src->n_dims; i++) {
            c.dims[i].name = dup_or_null(src->dims[i].name, &bad);
            c.dims[i].value = src->dims[i].value;
        }
    } else if (src->n_dims) {
        bad = 1;
    }
    *dst = c;
    if (bad) {
        bench_config_free(dst);
        return -1;
    }
    return 0;
}

int bench_config_set_str(char **field, const char *value) {
    char *d = NULL;
    if (value && !(d = strdup(value))) return -1;
    free(*field);
    *field = d;
    return 0;
}

int bench_config_add_option(bench_config *c, const char *key, const char *value) {
    return kv_set(&c->options, &c->n_options, key, value);
}

int bench_config_add_input(bench_config *c, const char *name, const char *path) {
    return kv_set(&c->inputs, &c->n_inputs, name, path);
}

int bench_config_add_dim(bench_config *c, const char *name, int64_t value) {
    for (size_t i = 0; i < c->n_dims; i++)
        if (strcmp(c->dims[i].name, name) == 0) {
            c->dims[i].value = value;
            return 0;
        }
    bench_dim *n = realloc(c->dims, (c->n_dims + 1) * sizeof *n);
    if (!n) return -1;
    c->dims = n;
    char *nm = strdup(name);
    if (!nm) return -1;
    n[c->n_dims].name = nm;
    n[c->n_dims].value = value;
    c->n_dims++;
    return 0;
}

int bench_config_add_shape(bench_config *c, bench_shape *s) {
    for (size_t i = 0; i < c->n_shapes; i++)
        if (strcmp(c->shapes[i].name, s->name) == 0) {
            bench_shape_free(&c->shapes[i]);
            c->shapes[i] = *s;
            memset(s, 0, sizeof *s);
            return 0;
        }
    bench_shape *n = realloc(c->shapes, (c->n_shapes + 1) * sizeof *n);
    if (!n) {
        bench_shape_free(s);
        return -1;
    }
    c->shapes = n;
    n[c->n_shapes++] = *s;
    memset(s, 0, sizeof *s);
    return 0;
}

int bench_parse_int(const char *text, int64_t *out) {
    if (!text || !*text || isspace((unsigned char)*text)) return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) return -1;
    *out = (int64_t)v;
    return 0;
}

int bench_parse_double(const char *text, double *out) {
    if (!text || !*text || isspace((unsigned char)*text)) return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

/* Trims spaces in place: returns the first non-space, cuts trailing ones. */
static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static int is_sym_char(int ch) { return isalnum(ch) || ch == '_' || ch == '.' || ch == '-'; }

int bench_shape_parse_dims(const char *text, bench_shape *s, char *err, size_t errlen) {
    for (int i = 0; i < BENCH_MAX_RANK; i++) {
        free(s->syms[i]);
        s->syms[i] = NULL;
        s->dims[i] = 0;
    }
    s->rank = 0;
    /* Trim, strip optional brackets, then decide the separator: ',' if present,
     * else 'x' between numbers ("1x3x32x32"). Tokens are trimmed one by one. */
    char *buf = strdup(text);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *b = trim(buf);
    size_t bl = strlen(b);
    if (bl >= 2 && b[0] == '[' && b[bl - 1] == ']') {
        b[bl - 1] = '\0';
        b = trim(b + 1);
    }
    char sep = ',';
    if (!strchr(b, ',')) {
        int all_num_x = isdigit((unsigned char)*b) != 0;
        for (const char *p = b; *p; p++)
            if (!isdigit((unsigned char)*p) && *p != 'x') all_num_x = 0;
        if (all_num_x) sep = 'x';
    }
    int rc = 0;
    if (*b == '\0') goto done; /* a scalar: rank 0 */
    for (char *tok = b;;) {
        char *next = strchr(tok, sep);
        if (next) *next = '\0';
        tok = trim(tok);
        if (s->rank >= BENCH_MAX_RANK) {
            snprintf(err, errlen, "shape '%s' has more than %d dims", text, BENCH_MAX_RANK);
            rc = -1;
            goto done;
        }
        int64_t v;
        if (*tok == '\0') {
            snprintf(err, errlen, "shape '%s' has an empty dim", text);
            rc = -1;
            goto done;
        }
        if (isdigit((unsigned char)*tok) || *tok == '-') {
            if (bench_parse_int(tok, &v) != 0 || v < 0) {
                snprintf(err, errlen, "shape '%s': bad dim '%s' (want a number >= 0 or a symbol)",
                         text, tok);
                rc = -1;
                goto done;
            }
            s->dims[s->rank] = v;
        } else {
            for (const char *p = tok; *p; p++)
                if (!is_sym_char((unsigned char)*p)) {
                    snprintf(err, errlen, "shape '%s': bad dim '%s' (want a number or a symbol)",
                             text, tok);
                    rc = -1;
                    goto done;
                }
            if (!(s->syms[s->rank] = strdup(tok))) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                goto done;
            }
            s->dims[s->rank] = -1;
        }
        s->rank++;
        if (!next) break;
        tok = next + 1;
    }
done:
    free(buf);
    return rc;
}

void bench_config_label(const bench_config *c, char *buf, size_t len) {
    size_t n = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (n < len) {                                                                             \
            int k_ = snprintf(buf + n, len - n, __VA_ARGS__);                                      \
            if (k_ > 0) n += (size_t)k_;                                                           \
        }                                                                                          \
    } while (0)
    if (len) buf[0] = '\0';
    if (c->name)
        ADD("%s", c->name);
    else {
        const char *m = c->model ? c->model : "?";
        const char *slash = strrchr(m, '/');
        /* "bert/model.onnx" reads better than "model.onnx" */
        if (slash && slash > m) {
            const char *p = slash - 1;
            while (p > m && p[-1] != '/')
                p--;
            m = p;
        }
        ADD("%s", m);
    }
    if (c->batch >= 0) ADD(" batch=%" PRId64, c->batch);
    if (c->seq >= 0) ADD(" seq=%" PRId64, c->seq);
    for (size_t i = 0; i < c->n_dims; i++)
        ADD(" %s=%" PRId64, c->dims[i].name, c->dims[i].value);
    if (c->threads >= 0) ADD(" threads=%" PRId64, c->threads);
    if (c->opt_level >= 0) ADD(" O%" PRId64, c->opt_level);
    if (c->precision) ADD(" %s", c->precision);
    if (c->backend) ADD(" %s", c->backend);
#undef ADD
}
