/*
 * scenario.c — scenario YAML -> list of bench_config, with libyaml's document
 * API (nodes carry their line). Keys are checked strictly: an unknown key, a
 * wrong kind of value or malformed YAML is an error naming the line.
 */
#include "scenario.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Values that may be given as lists, expanded into their product. */
typedef struct axis {
    size_t n;   /* 0: not given, use the base config's value */
    char **s;   /* string values (precision, backend) */
    int64_t *v; /* integer values (threads, opt_level, batch, seq) */
} axis;

enum { AX_PRECISION, AX_BACKEND, AX_OPT_LEVEL, AX_THREADS, AX_BATCH, AX_SEQ, AX_COUNT };
static const char *const k_axis_names[AX_COUNT] = {"precision", "backend", "opt_level",
                                                   "threads",   "batch",   "seq"};

typedef struct tmpl {
    bench_config base;
    axis ax[AX_COUNT];
} tmpl;

typedef struct ctx {
    yaml_document_t *doc;
    const char *origin;
    const char *base_dir;
    char *err;
    size_t errlen;
} ctx;

static const char *const k_config_keys =
    "name, model, inputs, shapes, dims, precision, backend, threads, opt_level, batch, seq, "
    "warmup, iterations, duration, int_range, seed, profile, top";

static int fail(ctx *c, const yaml_node_t *n, const char *fmt, ...) {
    int k = snprintf(c->err, c->errlen, "%s:%lu: ", c->origin,
                     n ? (unsigned long)n->start_mark.line + 1 : 1ul);
    if (k < 0 || (size_t)k >= c->errlen) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static void axis_free(axis *a) {
    if (a->s)
        for (size_t i = 0; i < a->n; i++)
            free(a->s[i]);
    free(a->s);
    free(a->v);
    memset(a, 0, sizeof *a);
}

static void tmpl_free(tmpl *t) {
    bench_config_free(&t->base);
    for (int i = 0; i < AX_COUNT; i++)
        axis_free(&t->ax[i]);
}

static int axis_copy(axis *dst, const axis *src) {
    memset(dst, 0, sizeof *dst);
    if (!src->n) return 0;
    if (src->s) {
        if (!(dst->s = calloc(src->n, sizeof *dst->s))) return -1;
        dst->n = src->n;
        for (size_t i = 0; i < src->n; i++)
            if (!(dst->s[i] = strdup(src->s[i]))) return -1;
    } else {
        if (!(dst->v = malloc(src->n * sizeof *dst->v))) return -1;
        dst->n = src->n;
        memcpy(dst->v, src->v, src->n * sizeof *dst->v);
    }
    return 0;
}

static int tmpl_copy(tmpl *dst, const tmpl *src) {
    memset(dst, 0, sizeof *dst);
    bench_config_init(&dst->base);
    if (bench_config_copy(&dst->base, &src->base) != 0) return -1;
    for (int i = 0; i < AX_COUNT; i++)
        if (axis_copy(&dst->ax[i], &src->ax[i]) != 0) {
            tmpl_free(dst);
            return -1;
        }
    return 0;
}

static yaml_node_t *node_at(ctx *c, int id) { return yaml_document_get_node(c->doc, id); }

static const char *scalar(const yaml_node_t *n) {
    return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int oom(ctx *c, const yaml_node_t *n) { return fail(c, n, "out of memory"); }

static int want_scalar(ctx *c, const char *key, const yaml_node_t *v, const char **out) {
    if (!(*out = scalar(v)))
        return fail(c, v, "'%s' wants a single value, not a list or mapping", key);
    return 0;
}

static int get_int(ctx *c, const char *key, const yaml_node_t *v, int64_t lo, int64_t *out) {
    const char *s;
    if (want_scalar(c, key, v, &s)) return -1;
    if (bench_parse_int(s, out) != 0) return fail(c, v, "'%s' wants an integer, got '%s'", key, s);
    if (*out < lo) return fail(c, v, "'%s' must be >= %" PRId64 ", got %" PRId64, key, lo, *out);
    return 0;
}

static char *resolve_path(ctx *c, const char *p) {
    if (!c->base_dir || !*c->base_dir || p[0] == '/') return strdup(p);
    size_t n = strlen(c->base_dir) + strlen(p) + 2;
    char *r = malloc(n);
    if (r) snprintf(r, n, "%s/%s", c->base_dir, p);
    return r;
}

/* A value that may be one scalar or a list of scalars. */
static int get_axis(ctx *c, const char *key, const yaml_node_t *v, int is_int, int64_t lo,
                    axis *a) {
    axis_free(a);
    size_t n = 1;
    yaml_node_item_t *items = NULL;
    if (v->type == YAML_SEQUENCE_NODE) {
        items = v->data.sequence.items.start;
        n = (size_t)(v->data.sequence.items.top - items);
        if (n == 0) return fail(c, v, "'%s' is an empty list", key);
    } else if (v->type != YAML_SCALAR_NODE) {
        return fail(c, v, "'%s' wants a value or a list of values, not a mapping", key);
    }
    if (is_int)
        a->v = calloc(n, sizeof *a->v);
    else
        a->s = calloc(n, sizeof *a->s);
    if (!a->v && !a->s) return oom(c, v);
    a->n = n;
    for (size_t i = 0; i < n; i++) {
        const yaml_node_t *e = items ? node_at(c, items[i]) : v;
        if (!e) return fail(c, v, "'%s': bad list item", key);
        if (is_int) {
            if (get_int(c, key, e, lo, &a->v[i])) return -1;
        } else {
            const char *s;
            if (want_scalar(c, key, e, &s)) return -1;
            if (!(a->s[i] = strdup(s))) return oom(c, e);
        }
    }
    return 0;
}

static int get_shapes(ctx *c, const yaml_node_t *v, bench_config *b) {
    if (v->type != YAML_MAPPING_NODE)
        return fail(c, v,
                    "'shapes' wants a mapping of input name to dims, e.g. "
                    "{input: [batch, 3, 32, 32]}");
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = node_at(c, p->key), *d = node_at(c, p->value);
        const char *name = k ? scalar(k) : NULL;
        if (!name || !d) return fail(c, k ? k : v, "'shapes': input names must be plain values");
        bench_shape s;
        memset(&s, 0, sizeof s);
        char msg[256];
        if (d->type == YAML_SCALAR_NODE) {
            if (bench_shape_parse_dims(scalar(d), &s, msg, sizeof msg) != 0) {
                bench_shape_free(&s);
                return fail(c, d, "input '%s': %s", name, msg);
            }
        } else if (d->type == YAML_SEQUENCE_NODE) {
            size_t n = (size_t)(d->data.sequence.items.top - d->data.sequence.items.start);
            if (n > BENCH_MAX_RANK)
                return fail(c, d, "input '%s': more than %d dims", name, BENCH_MAX_RANK);
            char joined[1024];
            size_t len = 0;
            joined[0] = '\0';
            for (size_t i = 0; i < n; i++) {
                const yaml_node_t *e = node_at(c, d->data.sequence.items.start[i]);
                const char *es = e ? scalar(e) : NULL;
                if (!es || !*es || strchr(es, ','))
                    return fail(c, e ? e : d, "input '%s': each dim must be a number or a symbol",
                                name);
                int k2 = snprintf(joined + len, sizeof joined - len, "%s%s", i ? "," : "", es);
                if (k2 < 0 || (size_t)k2 >= sizeof joined - len)
                    return fail(c, d, "input '%s': dims too long", name);
                len += (size_t)k2;
            }
            if (n && bench_shape_parse_dims(joined, &s, msg, sizeof msg) != 0) {
                bench_shape_free(&s);
                return fail(c, d, "input '%s': %s", name, msg);
            }
        } else {
            return fail(c, d, "input '%s': dims must be a list like [batch, 3, 32, 32]", name);
        }
        if (!(s.name = strdup(name))) {
            bench_shape_free(&s);
            return oom(c, d);
        }
        if (bench_config_add_shape(b, &s) != 0) return oom(c, d);
    }
    return 0;
}

static int get_string_map(ctx *c, const char *key, const yaml_node_t *v, bench_config *b) {
    if (v->type != YAML_MAPPING_NODE) return fail(c, v, "'%s' wants a mapping", key);
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = node_at(c, p->key), *d = node_at(c, p->value);
        const char *name = k ? scalar(k) : NULL;
        if (!name || !d) return fail(c, k ? k : v, "'%s': names must be plain values", key);
        if (strcmp(key, "dims") == 0) {
            int64_t val;
            if (get_int(c, name, d, 0, &val)) return -1;
            if (bench_config_add_dim(b, name, val) != 0) return oom(c, d);
        } else {
            const char *path;
            if (want_scalar(c, name, d, &path)) return -1;
            char *r = resolve_path(c, path);
            int rc = r ? bench_config_add_input(b, name, r) : -1;
            free(r);
            if (rc) return oom(c, d);
        }
    }
    return 0;
}

static int is_false(const char *s) {
    return !strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off") || !strcmp(s, "0") || !*s;
}
static int is_true(const char *s) {
    return !strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on") || !strcmp(s, "1");
}

/* Applies one mapping of configuration keys on top of t. */
static int apply_mapping(ctx *c, const yaml_node_t *m, tmpl *t, int allow_model) {
    if (m->type != YAML_MAPPING_NODE)
        return fail(c, m, "a configuration must be a mapping of keys (%s)", k_config_keys);
    bench_config *b = &t->base;
    const yaml_node_t *iter_node = NULL, *dur_node = NULL;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const yaml_node_t *kn = node_at(c, p->key), *v = node_at(c, p->value);
        const char *key = kn ? scalar(kn) : NULL;
        if (!key || !v) return fail(c, kn ? kn : m, "keys must be plain values");
        const char *s = NULL;
        int64_t iv;
        int ax = -1;
        for (int i = 0; i < AX_COUNT; i++)
            if (strcmp(key, k_axis_names[i]) == 0) ax = i;
        if (ax >= 0) {
            int is_int = ax != AX_PRECISION && ax != AX_BACKEND;
            int64_t lo = (ax == AX_BATCH || ax == AX_SEQ) ? 1 : 0;
            if (get_axis(c, key, v, is_int, lo, &t->ax[ax])) return -1;
        } else if (strcmp(key, "name") == 0) {
            if (want_scalar(c, key, v, &s)) return -1;
            if (bench_config_set_str(&b->name, s)) return oom(c, v);
        } else if (strcmp(key, "model") == 0) {
            if (!allow_model) return fail(c, kn, "'model' belongs in each configuration");
            if (want_scalar(c, key, v, &s)) return -1;
            char *r = resolve_path(c, s);
            if (!r || bench_config_set_str(&b->model, r)) {
                free(r);
                return oom(c, v);
            }
            free(r);
        } else if (strcmp(key, "inputs") == 0 || strcmp(key, "dims") == 0) {
            if (get_string_map(c, key, v, b)) return -1;
        } else if (strcmp(key, "shapes") == 0) {
            if (get_shapes(c, v, b)) return -1;
        } else if (strcmp(key, "warmup") == 0) {
            if (get_int(c, key, v, 0, &b->warmup)) return -1;
        } else if (strcmp(key, "iterations") == 0) {
            if (get_int(c, key, v, 1, &b->iterations)) return -1;
            b->duration_s = 0.0;
            iter_node = v;
        } else if (strcmp(key, "duration") == 0) {
            if (want_scalar(c, key, v, &s)) return -1;
            if (bench_parse_double(s, &b->duration_s) != 0 || !(b->duration_s > 0.0))
                return fail(c, v, "'duration' wants a number of seconds > 0, got '%s'", s);
            dur_node = v;
        } else if (strcmp(key, "int_range") == 0) {
            axis tmp;
            memset(&tmp, 0, sizeof tmp);
            if (get_axis(c, key, v, 1, INT64_MIN, &tmp)) {
                axis_free(&tmp);
                return -1;
            }
            int okr = tmp.n == 2 && tmp.v[0] < tmp.v[1];
            if (okr) {
                b->int_lo = tmp.v[0];
                b->int_hi = tmp.v[1];
            }
            axis_free(&tmp);
            if (!okr) return fail(c, v, "'int_range' wants [LO, HI] with LO < HI");
        } else if (strcmp(key, "seed") == 0) {
            if (get_int(c, key, v, 0, &iv)) return -1;
            b->seed = (uint64_t)iv;
        } else if (strcmp(key, "profile") == 0) {
            if (want_scalar(c, key, v, &s)) return -1;
            const char *val = is_false(s) ? NULL : is_true(s) ? "1" : s;
            if (bench_config_set_str(&b->profile, val)) return oom(c, v);
        } else if (strcmp(key, "top") == 0) {
            if (get_int(c, key, v, 1, &b->top)) return -1;
        } else {
            return fail(c, kn, "unknown key '%s' (known: %s)", key, k_config_keys);
        }
    }
    if (iter_node && dur_node)
        return fail(c, dur_node, "give 'iterations' or 'duration', not both");
    return 0;
}

static int list_push(bench_config_list *l, bench_config *cfg) {
    bench_config *n = realloc(l->items, (l->count + 1) * sizeof *n);
    if (!n) return -1;
    l->items = n;
    n[l->count++] = *cfg;
    bench_config_init(cfg);
    return 0;
}

/* Appends the cartesian product of t's axes to out. */
static int expand(ctx *c, const yaml_node_t *where, const tmpl *t, bench_config_list *out) {
    size_t total = 1;
    for (int i = 0; i < AX_COUNT; i++) {
        size_t n = t->ax[i].n ? t->ax[i].n : 1;
        if (total > 100000 / n) return fail(c, where, "more than 100000 configurations");
        total *= n;
    }
    for (size_t k = 0; k < total; k++) {
        bench_config cfg;
        bench_config_init(&cfg);
        if (bench_config_copy(&cfg, &t->base) != 0) return oom(c, where);
        /* The last axis (seq) varies fastest. */
        size_t rest = k;
        int bad = 0;
        for (int i = AX_COUNT - 1; i >= 0; i--) {
            const axis *a = &t->ax[i];
            if (!a->n) continue;
            size_t j = rest % a->n;
            rest /= a->n;
            switch (i) {
            case AX_PRECISION: bad |= bench_config_set_str(&cfg.precision, a->s[j]); break;
            case AX_BACKEND: bad |= bench_config_set_str(&cfg.backend, a->s[j]); break;
            case AX_OPT_LEVEL: cfg.opt_level = a->v[j]; break;
            case AX_THREADS: cfg.threads = a->v[j]; break;
            case AX_BATCH: cfg.batch = a->v[j]; break;
            case AX_SEQ: cfg.seq = a->v[j]; break;
            default: break;
            }
        }
        if (bad || list_push(out, &cfg) != 0) {
            bench_config_free(&cfg);
            return oom(c, where);
        }
    }
    return 0;
}

void bench_config_list_free(bench_config_list *l) {
    for (size_t i = 0; i < l->count; i++)
        bench_config_free(&l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

static int parse_doc(ctx *c, const bench_config *defaults, bench_config_list *out) {
    yaml_node_t *root = yaml_document_get_root_node(c->doc);
    if (!root) return fail(c, NULL, "empty scenario (want a 'configs:' list)");
    tmpl base;
    memset(&base, 0, sizeof base);
    bench_config_init(&base.base);
    if (defaults && bench_config_copy(&base.base, defaults) != 0) return oom(c, root);
    const yaml_node_t *configs = NULL;
    int rc = 0;
    if (root->type == YAML_SEQUENCE_NODE) {
        configs = root;
    } else if (root->type == YAML_MAPPING_NODE) {
        const yaml_node_t *defs = NULL;
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) {
            const yaml_node_t *kn = node_at(c, p->key), *v = node_at(c, p->value);
            const char *key = kn ? scalar(kn) : NULL;
            if (key && v && strcmp(key, "configs") == 0)
                configs = v;
            else if (key && v && strcmp(key, "defaults") == 0)
                defs = v;
            else {
                rc = fail(c, kn ? kn : root,
                          "unknown top-level key '%s' (known: defaults, configs)", key ? key : "?");
                goto done;
            }
        }
        if (defs && (rc = apply_mapping(c, defs, &base, 1)) != 0) goto done;
        if (!configs) {
            rc = fail(c, root, "no 'configs:' list");
            goto done;
        }
    } else {
        rc = fail(c, root, "a scenario is a mapping with 'configs:' (or a list of configurations)");
        goto done;
    }
    if (configs->type != YAML_SEQUENCE_NODE ||
        configs->data.sequence.items.top == configs->data.sequence.items.start) {
        rc = fail(c, configs, "'configs' wants a non-empty list of configurations");
        goto done;
    }
    for (yaml_node_item_t *it = configs->data.sequence.items.start;
         it < configs->data.sequence.items.top; it++) {
        const yaml_node_t *m = node_at(c, *it);
        if (!m) {
            rc = fail(c, configs, "bad configuration entry");
            goto done;
        }
        tmpl t;
        if (tmpl_copy(&t, &base) != 0) {
            rc = oom(c, m);
            goto done;
        }
        rc = apply_mapping(c, m, &t, 1);
        if (!rc && !t.base.model)
            rc = fail(c, m, "configuration %d has no 'model'",
                      (int)(it - configs->data.sequence.items.start) + 1);
        if (!rc) rc = expand(c, m, &t, out);
        tmpl_free(&t);
        if (rc) goto done;
    }
done:
    tmpl_free(&base);
    if (rc) bench_config_list_free(out);
    return rc;
}

int bench_scenario_parse(const char *text, size_t len, const char *origin, const char *base_dir,
                         const bench_config *defaults, bench_config_list *out, char *err,
                         size_t errlen) {
    out->items = NULL;
    out->count = 0;
    if (errlen) err[0] = '\0';
    ctx c = {NULL, origin ? origin : "<scenario>", base_dir, err, errlen};
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return fail(&c, NULL, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_document_t doc;
    int rc;
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_mark_t mk = parser.problem_mark;
        if (parser.error == YAML_READER_ERROR) mk.line = 0;
        int k = snprintf(err, errlen, "%s:%lu: bad YAML: %s", c.origin, (unsigned long)mk.line + 1,
                         parser.problem ? parser.problem : "parse error");
        if (k >= 0 && (size_t)k < errlen && parser.context)
            snprintf(err + k, errlen - (size_t)k, " (%s, line %lu)", parser.context,
                     (unsigned long)parser.context_mark.line + 1);
        yaml_parser_delete(&parser);
        return -1;
    }
    c.doc = &doc;
    rc = parse_doc(&c, defaults, out);
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

int bench_scenario_load(const char *path, const bench_config *defaults, bench_config_list *out,
                        char *err, size_t errlen) {
    out->items = NULL;
    out->count = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open scenario '%s': %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                fclose(f);
                snprintf(err, errlen, "out of memory reading '%s'", path);
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errlen, "error reading scenario '%s'", path);
        return -1;
    }
    char *dir = strdup(path);
    if (!dir) {
        free(buf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
    if (slash == dir) strcpy(dir, "/");
    int rc = bench_scenario_parse(buf, len, path, dir, defaults, out, err, errlen);
    free(dir);
    free(buf);
    return rc;
}

int bench_is_scenario_path(const char *path) {
    size_t n = strlen(path);
    return (n > 5 && strcmp(path + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(path + n - 4, ".yml") == 0);
}
