/*
 * options.c — the public option set: typed keys with validation, reading
 * them into an rt_config, and loading a flat YAML mapping (read by io/yaml_tree).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/yaml_tree.h"
#include "mopt_config.h"
#include "runtime/runtime.h"
#ifdef MOPT_HAVE_ONEDNN
#include "kernels/onednn/onednn.h"
#endif

typedef struct opt_spec {
    const char *key;
    opt_kind kind;
    int64_t imin, imax, idef;
    const char *sdef;
    const char *const *choices; /* NULL-terminated, or NULL for free text */
} opt_spec;

static const char *const k_backends[] = {"auto", "ref", "cpu", "onednn", "openblas", NULL};
static const char *const k_precisions[] = {"fp32", "bf16", "int8", NULL};
static const char *const k_fallbacks[] = {"fp32", "bf16", NULL};
static const char *const k_kv_dtypes[] = {"f32", "bf16", NULL};
static const char *const k_dw_modes[] = {"fp32", "int8", NULL};

static const opt_spec k_specs[] = {
    {"threads", OPT_INT, 0, 1024, 0, NULL, NULL},
    {"opt_level", OPT_INT, 0, 3, 3, NULL, NULL},
    {"backend", OPT_STRING, 0, 0, 0, "auto", k_backends},
    {"precision", OPT_STRING, 0, 0, 0, "fp32", k_precisions},
    {"profile", OPT_STRING, 0, 0, 0, "", NULL},
    {"memory_limit", OPT_INT, 0, INT64_MAX, 0, NULL, NULL},
    {"verbose", OPT_INT, 0, 3, 0, NULL, NULL},
    {"external_data_dir", OPT_STRING, 0, 0, 0, "", NULL},
    {"verify_weights", OPT_INT, 0, 1, MOPT_VERIFY_WEIGHTS_DEFAULT, NULL, NULL},
    {"inspect_only", OPT_INT, 0, 1, 0, NULL, NULL},
    {"outputs", OPT_STRING, 0, 0, 0, "", NULL},
    /* static INT8 (issue 13): a calibration table, and the capture `mopt
     * calibrate` uses (experimental) */
    {"calibration", OPT_STRING, 0, 0, 0, "", NULL},
    {"calibration_capture", OPT_INT, 0, 1, 0, NULL, NULL},
    /* per-layer fallback (issue 13): nodes kept in FP32 under precision=int8 */
    {"int8_exclude", OPT_STRING, 0, 0, 0, "", NULL},
    /* generation (issue 14): token-major KV caches appended in place */
    {"kv_cache", OPT_INT, 0, 1, 0, NULL, NULL},
    /* ... and the precision they run in instead: fp32 or bf16 */
    {"int8_fallback", OPT_STRING, 0, 0, 0, "fp32", k_fallbacks},
    /* mopt compare --per-layer (issue 13, experimental): the optimized
     * graph's intermediate values become extra outputs */
    {"expose_values", OPT_INT, 0, 1, 0, NULL, NULL},
    /* generation (issue 14): the generator's KV cache as f32 rows or bf16
     * tiles (read by mopt_generator_create only) */
    {"kv_cache_dtype", OPT_STRING, 0, 0, 0, "f32", k_kv_dtypes},
    /* static INT8 (issues 11/13): depthwise Convs stay FP32 (their int8 form
     * is slower) unless "int8" */
    {"int8_depthwise", OPT_STRING, 0, 0, 0, "fp32", k_dw_modes},
};
#define N_SPECS (int)(sizeof k_specs / sizeof k_specs[0])
_Static_assert(sizeof k_specs / sizeof k_specs[0] <= OPT_MAX_KEYS, "raise OPT_MAX_KEYS");

static const opt_spec *spec_find(const char *key) {
    for (int i = 0; i < N_SPECS; i++)
        if (strcmp(k_specs[i].key, key) == 0) return &k_specs[i];
    return NULL;
}

static mopt_status unknown_key(const char *key) {
    char list[512];
    size_t len = 0;
    for (int i = 0; i < N_SPECS; i++)
        len +=
            (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", k_specs[i].key);
    return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "unknown option '%s' (known: %s, dim.<name>)", key,
                     list);
}

mopt_status mopt_options_create(mopt_options **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_options_create: out is NULL");
    *out = NULL;
    mopt_options *o = mopt_calloc(1, sizeof *o);
    if (!o) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory creating options");
    for (int i = 0; i < N_SPECS; i++) {
        o->entries[i].key = k_specs[i].key;
        o->entries[i].kind = k_specs[i].kind;
    }
    o->n = N_SPECS;
    *out = o;
    return MOPT_OK;
}

void mopt_options_destroy(mopt_options *opts) {
    if (!opts) return;
    for (int i = 0; i < opts->n; i++)
        mopt_free(opts->entries[i].s);
    rt_pool_release(opts->pool);
    mopt_free(opts);
}

static opt_entry *entry_find(const mopt_options *o, const char *key) {
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->entries[i].key, key) == 0) return (opt_entry *)&o->entries[i];
    return NULL;
}

static mopt_status check_args(const mopt_options *o, const char *key, const char *fn) {
    if (!o) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "%s: options is NULL", fn);
    if (!key) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "%s: key is NULL", fn);
    return MOPT_OK;
}

/* ---- free dimensions ("dim.<name>") ---- */

#define DIM_PREFIX "dim."
#define DIM_MAX ((int64_t)1 << 40)

static const char *dim_name(const char *key) {
    return strncmp(key, DIM_PREFIX, strlen(DIM_PREFIX)) == 0 ? key + strlen(DIM_PREFIX) : NULL;
}

static mopt_status set_dim(mopt_options *o, const char *name, int64_t v) {
    size_t len = strlen(name);
    if (len == 0 || len >= OPT_DIM_NAME_CAP)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "option 'dim.%.80s': a dimension name has 1 to %d characters", name,
                         OPT_DIM_NAME_CAP - 1);
    if (v < 0 || v > DIM_MAX)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "option 'dim.%s' = %" PRId64 " is out of range [0, %" PRId64 "]", name, v,
                         DIM_MAX);
    for (int i = 0; i < o->n_dims; i++)
        if (strcmp(o->dims[i].name, name) == 0) {
            o->dims[i].value = v;
            return MOPT_OK;
        }
    if (o->n_dims == OPT_MAX_DIMS)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "option 'dim.%s': at most %d dimensions can be fixed", name, OPT_MAX_DIMS);
    opt_dim *d = &o->dims[o->n_dims++];
    memcpy(d->name, name, len + 1);
    d->value = v;
    return MOPT_OK;
}

mopt_status mopt_options_set_dim(mopt_options *opts, const char *name, int64_t value) {
    mopt_clear_error();
    if (!opts) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_options_set_dim: options is NULL");
    if (!name) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_options_set_dim: name is NULL");
    return set_dim(opts, name, value);
}

static mopt_status set_int(mopt_options *o, const opt_spec *sp, int64_t v) {
    if (v < sp->imin || v > sp->imax)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "option '%s' = %" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]",
                         sp->key, v, sp->imin, sp->imax);
    opt_entry *e = entry_find(o, sp->key);
    e->i = v;
    e->set = true;
    return MOPT_OK;
}

mopt_status mopt_options_set_int(mopt_options *opts, const char *key, int64_t value) {
    mopt_clear_error();
    mopt_status st = check_args(opts, key, "mopt_options_set_int");
    if (st) return st;
    if (dim_name(key)) return set_dim(opts, dim_name(key), value);
    const opt_spec *sp = spec_find(key);
    if (!sp) return unknown_key(key);
    if (sp->kind == OPT_DOUBLE) return mopt_options_set_double(opts, key, (double)value);
    if (sp->kind != OPT_INT)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' takes a string, not an integer",
                         key);
    return set_int(opts, sp, value);
}

mopt_status mopt_options_set_double(mopt_options *opts, const char *key, double value) {
    mopt_clear_error();
    mopt_status st = check_args(opts, key, "mopt_options_set_double");
    if (st) return st;
    const opt_spec *sp = spec_find(key);
    if (!sp && !dim_name(key)) return unknown_key(key);
    if (!sp || sp->kind == OPT_INT) {
        if (!isfinite(value) || value != floor(value) || fabs(value) > 9e18)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' takes an integer, not %g", key,
                             value);
        return sp ? set_int(opts, sp, (int64_t)value)
                  : set_dim(opts, dim_name(key), (int64_t)value);
    }
    if (sp->kind != OPT_DOUBLE)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' takes a string, not a number",
                         key);
    if (!isfinite(value))
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' must be finite", key);
    opt_entry *e = entry_find(opts, key);
    e->d = value;
    e->set = true;
    return MOPT_OK;
}

mopt_status mopt_options_set_string(mopt_options *opts, const char *key, const char *value) {
    mopt_clear_error();
    mopt_status st = check_args(opts, key, "mopt_options_set_string");
    if (st) return st;
    if (!value) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s': value is NULL", key);
    const opt_spec *sp = spec_find(key);
    if (!sp && !dim_name(key)) return unknown_key(key);
    if (!sp || sp->kind == OPT_INT) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end != '\0')
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' takes an integer, not '%s'",
                             key, value);
        return sp ? set_int(opts, sp, (int64_t)v) : set_dim(opts, dim_name(key), (int64_t)v);
    }
    if (sp->kind == OPT_DOUBLE) {
        char *end = NULL;
        double v = strtod(value, &end);
        if (end == value || *end != '\0')
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' takes a number, not '%s'", key,
                             value);
        return mopt_options_set_double(opts, key, v);
    }
    if (sp->choices) {
        int ok = 0;
        char list[256];
        size_t len = 0;
        for (int i = 0; sp->choices[i]; i++) {
            if (strcmp(sp->choices[i], value) == 0) ok = 1;
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                    sp->choices[i]);
        }
        if (!ok)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' = '%s' is not one of: %s", key,
                             value, list);
    }
    /* int8_exclude lists node names: as long as rt_config holds it */
    size_t cap = strcmp(key, "int8_exclude") == 0 ? sizeof(((rt_config *)0)->int8_exclude) : 512;
    if (strlen(value) >= cap)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "option '%s' value is too long (%zu bytes at most)", key, cap - 1);
    char *copy = mopt_strdup(value);
    if (!copy) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory setting '%s'", key);
    opt_entry *e = entry_find(opts, key);
    mopt_free(e->s);
    e->s = copy;
    e->set = true;
    return MOPT_OK;
}

static mopt_status get_common(const mopt_options *opts, const char *key, const void *value,
                              opt_kind want, const opt_spec **sp, const char *fn) {
    mopt_clear_error();
    mopt_status st = check_args(opts, key, fn);
    if (st) return st;
    if (!value) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "%s: value is NULL", fn);
    *sp = spec_find(key);
    if (!*sp) return mopt_fail(MOPT_ERR_NOT_FOUND, "unknown option '%s'", key);
    if ((*sp)->kind != want)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option '%s' is not of the requested kind",
                         key);
    return MOPT_OK;
}

mopt_status mopt_options_get_int(const mopt_options *opts, const char *key, int64_t *value) {
    if (opts && key && value && dim_name(key)) {
        mopt_clear_error();
        for (int i = 0; i < opts->n_dims; i++)
            if (strcmp(opts->dims[i].name, dim_name(key)) == 0) {
                *value = opts->dims[i].value;
                return MOPT_OK;
            }
        return mopt_fail(MOPT_ERR_NOT_FOUND, "option '%s' is not set", key);
    }
    const opt_spec *sp;
    mopt_status st = get_common(opts, key, value, OPT_INT, &sp, "mopt_options_get_int");
    if (st) return st;
    const opt_entry *e = entry_find(opts, key);
    *value = e->set ? e->i : sp->idef;
    return MOPT_OK;
}

mopt_status mopt_options_get_double(const mopt_options *opts, const char *key, double *value) {
    const opt_spec *sp;
    mopt_status st = get_common(opts, key, value, OPT_DOUBLE, &sp, "mopt_options_get_double");
    if (st) return st;
    const opt_entry *e = entry_find(opts, key);
    *value = e->set ? e->d : 0.0;
    return MOPT_OK;
}

mopt_status mopt_options_get_string(const mopt_options *opts, const char *key, const char **value) {
    const opt_spec *sp;
    mopt_status st = get_common(opts, key, value, OPT_STRING, &sp, "mopt_options_get_string");
    if (st) return st;
    const opt_entry *e = entry_find(opts, key);
    *value = e->set ? e->s : sp->sdef;
    return MOPT_OK;
}

/* A backend asked for by name must be there: never a silent substitute.
 * oneDNN is referenced weakly, so a program linked with libmopt.a but
 * without -ldnnl (a -static link: Debian ships no libdnnl.a) lacks it. */
static mopt_status backend_check(const char *name) {
    if (strcmp(name, "onednn") == 0) {
#ifdef MOPT_HAVE_ONEDNN
        if (onednn_available()) return MOPT_OK;
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "option backend=onednn: oneDNN is not available in this program "
                         "(libdnnl is not linked in, e.g. a -static link, or its CPU engine "
                         "failed); link with `pkg-config --static --libs mopt` or use "
                         "backend=auto");
#else
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "option backend=onednn: this libmopt was built without oneDNN");
#endif
    }
#ifndef MOPT_HAVE_OPENBLAS
    if (strcmp(name, "openblas") == 0)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "option backend=openblas: this libmopt was built without OpenBLAS");
#endif
    return MOPT_OK;
}

mopt_status rt_config_read(const mopt_options *opts, rt_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->opt_level = 3;
    snprintf(cfg->backend, sizeof cfg->backend, "auto");
    snprintf(cfg->precision, sizeof cfg->precision, "fp32");
    cfg->verify_weights = MOPT_VERIFY_WEIGHTS_DEFAULT;
    const char *env = getenv("MOPT_VERBOSE");
    if (env && *env && strcmp(env, "0") != 0) /* "1" (any other text too) .. "3" */
        cfg->verbose = env[0] >= '2' && env[0] <= '3' && !env[1] ? env[0] - '0' : 1;
    if (!opts) return MOPT_OK;
    memcpy(cfg->dims, opts->dims, (size_t)opts->n_dims * sizeof cfg->dims[0]);
    cfg->n_dims = opts->n_dims;
    int64_t v;
    const char *s;
    if (mopt_options_get_int(opts, "threads", &v) == MOPT_OK) cfg->threads = (int)v;
    if (mopt_options_get_int(opts, "opt_level", &v) == MOPT_OK) cfg->opt_level = (int)v;
    if (mopt_options_get_int(opts, "memory_limit", &v) == MOPT_OK) cfg->memory_limit = v;
    if (mopt_options_get_int(opts, "verbose", &v) == MOPT_OK && v > cfg->verbose)
        cfg->verbose = (int)v;
    if (mopt_options_get_int(opts, "verify_weights", &v) == MOPT_OK) cfg->verify_weights = (int)v;
    if (mopt_options_get_int(opts, "inspect_only", &v) == MOPT_OK) cfg->inspect_only = (int)v;
    if (mopt_options_get_string(opts, "backend", &s) == MOPT_OK) {
        mopt_status st = backend_check(s);
        if (st) return st;
        snprintf(cfg->backend, sizeof cfg->backend, "%s", s);
    }
    if (mopt_options_get_string(opts, "precision", &s) == MOPT_OK)
        snprintf(cfg->precision, sizeof cfg->precision, "%s", s);
    if (mopt_options_get_string(opts, "profile", &s) == MOPT_OK)
        snprintf(cfg->profile, sizeof cfg->profile, "%s", s);
    if (mopt_options_get_string(opts, "outputs", &s) == MOPT_OK) {
        if (strlen(s) >= sizeof cfg->outputs)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option 'outputs': longer than %zu bytes",
                             sizeof cfg->outputs - 1);
        snprintf(cfg->outputs, sizeof cfg->outputs, "%s", s);
    }
    if (mopt_options_get_string(opts, "external_data_dir", &s) == MOPT_OK)
        snprintf(cfg->external_data_dir, sizeof cfg->external_data_dir, "%s", s);
    if (mopt_options_get_string(opts, "calibration", &s) == MOPT_OK)
        snprintf(cfg->calibration, sizeof cfg->calibration, "%s", s);
    if (mopt_options_get_int(opts, "calibration_capture", &v) == MOPT_OK)
        cfg->calibration_capture = (int)v;
    if (mopt_options_get_int(opts, "kv_cache", &v) == MOPT_OK) cfg->kv_cache = (int)v;
    if (mopt_options_get_int(opts, "expose_values", &v) == MOPT_OK) cfg->expose_values = (int)v;
    if (mopt_options_get_string(opts, "int8_fallback", &s) == MOPT_OK)
        cfg->int8_fallback_bf16 = strcmp(s, "bf16") == 0;
    if (mopt_options_get_string(opts, "int8_depthwise", &s) == MOPT_OK)
        cfg->int8_depthwise = strcmp(s, "int8") == 0;
    if (mopt_options_get_string(opts, "int8_exclude", &s) == MOPT_OK) {
        if (strlen(s) >= sizeof cfg->int8_exclude)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "option 'int8_exclude': longer than %zu bytes",
                             sizeof cfg->int8_exclude - 1);
        snprintf(cfg->int8_exclude, sizeof cfg->int8_exclude, "%s", s);
    }
    mopt_clear_error();
    return MOPT_OK;
}

/* ---- YAML ---------------------------------------------------------------- */

/* An options file is a few lines; this bounds what a hostile one can make the
 * reader hold (about ten thousand entries). */
#define OPTIONS_YAML_MAX_BYTES ((size_t)1 << 20)

static mopt_status lists_refused(const char *origin, size_t line) {
    return mopt_fail(MOPT_ERR_PARSE, "%s: line %zu: lists are not allowed in options", origin,
                     line);
}

/* Sets one document's options in order and stops at the first bad entry, so
 * the entries before it stay set, as when the file is read line by line. */
static mopt_status apply_document(mopt_options *opts, const ytree_node *doc, const char *origin) {
    if (doc->kind == YTREE_SCALAR)
        return mopt_fail(MOPT_ERR_PARSE,
                         "%s: line %zu: expected a mapping of options, found a scalar", origin,
                         doc->line);
    if (doc->kind == YTREE_SEQ) return lists_refused(origin, doc->line);
    char key[128];
    for (size_t i = 0; i < doc->n; i++) {
        const ytree_node *n = doc->kids[i];
        bool is_key = i % 2 == 0;
        if (n->kind == YTREE_MAP)
            return mopt_fail(MOPT_ERR_PARSE,
                             "%s: line %zu: nested mappings are not allowed; "
                             "options are a flat 'key: value' mapping",
                             origin, n->line);
        if (n->kind == YTREE_SEQ) return lists_refused(origin, n->line);
        if (memchr(n->s, 0, n->len)) /* "\0" escapes: the key or value would be cut short */
            return mopt_fail(MOPT_ERR_PARSE, "%s: line %zu: a NUL character in an option %s",
                             origin, n->line, is_key ? "key" : "value");
        if (is_key && n->len >= sizeof key)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "%s: line %zu: unknown option '%.40s...' (%zu characters)", origin,
                             n->line, n->s, n->len);
        if (is_key) {
            memcpy(key, n->s, n->len + 1);
            continue;
        }
        mopt_status st = mopt_options_set_string(opts, key, n->s);
        if (st) return mopt_fail_context(st, "%s: line %zu", origin, n->line);
    }
    return MOPT_OK;
}

/* Reads the YAML text (or the open file f) and applies it. A stream may hold
 * several documents; what was read before a YAML error is applied first, so
 * the error reported is the first one in the text. */
static mopt_status yaml_apply(mopt_options *opts, const char *text, size_t length, FILE *f,
                              const char *origin) {
    const ytree_limits lim = {.first_line = 1, .max_depth = 8, .max_bytes = OPTIONS_YAML_MAX_BYTES};
    ytree tree = {0};
    ytree_error e;
    mopt_status rst =
        f ? ytree_read_file(&tree, &lim, f, &e) : ytree_read_string(&tree, &lim, text, length, &e);
    mopt_status st = MOPT_OK;
    for (size_t i = 0; !st && i < tree.n_docs; i++)
        st = apply_document(opts, tree.docs[i], origin);
    ytree_free(&tree);
    if (st || !rst) return st;
    switch (e.problem) {
    case YTREE_PARSER_MEMORY: return mopt_fail(rst, "out of memory creating YAML parser");
    case YTREE_MEMORY: return mopt_fail(rst, "%s: out of memory reading the options", origin);
    case YTREE_SYNTAX:
        return mopt_fail(rst, "%s: line %zu: %s", origin, e.line, e.what ? e.what : "YAML error");
    case YTREE_ALIAS:
        return mopt_fail(rst, "%s: line %zu: aliases are not allowed", origin, e.line);
    case YTREE_SIZE:
        return mopt_fail(rst, "%s: line %zu: more YAML than an options file holds (over %zu bytes)",
                         origin, e.line, OPTIONS_YAML_MAX_BYTES);
    default: return mopt_fail(rst, "%s: line %zu: malformed options YAML", origin, e.line);
    }
}

mopt_status mopt_options_load_yaml_string(mopt_options *opts, const char *text, size_t length) {
    mopt_clear_error();
    if (!opts || !text)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_options_load_yaml_string: NULL argument");
    return yaml_apply(opts, text, length, NULL, "<string>");
}

mopt_status mopt_options_load_yaml(mopt_options *opts, const char *path) {
    mopt_clear_error();
    if (!opts || !path)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_options_load_yaml: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return mopt_fail(MOPT_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    mopt_status st = yaml_apply(opts, NULL, 0, f, path);
    fclose(f);
    return st;
}
