/*
 * calib_table.c (api) — reads a calibration table (`mopt calibrate`'s YAML,
 * tools/mopt/README.md) for the option calibration=FILE into the
 * pass_qtable of the static INT8 pass (passes.h). Checks: the format line,
 * the model hash (mfmt_hash64 of the ONNX bytes: a table made for another
 * model is refused), and every entry's scale (> 0, finite) and u8 zero
 * point, and the optional per-channel ranges (channel_min, channel_max:
 * lists of one length, min <= max, finite; older tables have none) and
 * means (channel_mean: as long, finite; needs the ranges; older tables
 * have none) and mean rounding errors (channel_qerr: as long, within 255
 * scale steps);
 * messages name the file and line.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/calib_table.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/log.h"
#include "io/yaml_tree.h"

void rt_calib_free(pass_qtable *t) {
    for (int32_t i = 0; t && i < t->n; i++) {
        mopt_free(t->e[i].name);
        mopt_free(t->e[i].ch_range);
        mopt_free(t->e[i].ch_mean);
        mopt_free(t->e[i].ch_qerr);
    }
    if (t) mopt_free(t->e);
    if (t) memset(t, 0, sizeof *t);
}

static const char *scalar(const ytree_node *map, const char *key) {
    const ytree_node *v = ytree_get(map, key);
    return v && v->kind == YTREE_SCALAR ? v->s : NULL;
}

/* The per-channel list `key` of entry v into *out (absent: *out stays NULL):
 * one finite value per channel of e's ranges, each of magnitude <= bound;
 * `expect` says what a bad value should have been. */
static mopt_status channel_floats(const char *path, const ytree_node *v, const char *key,
                                  double bound, const char *expect, pass_qentry *e, float **out) {
    const ytree_node *l = ytree_get(v, key);
    if (!l) return MOPT_OK;
    size_t n = (size_t)e->n_ch;
    if (l->kind != YTREE_SEQ || l->n != n)
        return mopt_fail(MOPT_ERR_PARSE,
                         "calibration table '%s' line %zu: tensor '%s': %s needs one value per "
                         "channel (%zu)",
                         path, l->line, e->name, key, n);
    *out = mopt_malloc(n * sizeof **out);
    if (!*out) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t c = 0; c < n; c++) {
        const ytree_node *a = l->kids[c];
        char *end = NULL;
        double x = a->kind == YTREE_SCALAR ? strtod(a->s, &end) : NAN;
        if (!end || *end || !isfinite(x) || fabs(x) > bound)
            return mopt_fail(MOPT_ERR_PARSE,
                             "calibration table '%s' line %zu: tensor '%s' channel %zu: "
                             "expected %s",
                             path, l->line, e->name, c, expect);
        (*out)[c] = (float)x;
    }
    return MOPT_OK;
}

/* channel_min / channel_max of entry v (none: MOPT_OK, e->n_ch 0). */
static mopt_status channel_ranges(const char *path, const ytree_node *v, pass_qentry *e) {
    const ytree_node *lo = ytree_get(v, "channel_min"), *hi = ytree_get(v, "channel_max");
    if (!lo && !hi) return MOPT_OK;
    if (!lo || !hi || lo->kind != YTREE_SEQ || hi->kind != YTREE_SEQ || lo->n != hi->n ||
        lo->n == 0)
        return mopt_fail(MOPT_ERR_PARSE,
                         "calibration table '%s' line %zu: tensor '%s' needs channel_min and "
                         "channel_max as lists of one length",
                         path, v->line, e->name);
    e->ch_range = mopt_malloc(2 * lo->n * sizeof *e->ch_range);
    if (!e->ch_range) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t c = 0; c < lo->n; c++) {
        const ytree_node *a = lo->kids[c], *b = hi->kids[c];
        char *end1 = NULL, *end2 = NULL;
        double x = a->kind == YTREE_SCALAR ? strtod(a->s, &end1) : NAN;
        double y = b->kind == YTREE_SCALAR ? strtod(b->s, &end2) : NAN;
        if (!end1 || !end2 || *end1 || *end2 || !isfinite(x) || !isfinite(y) || x > y)
            return mopt_fail(MOPT_ERR_PARSE,
                             "calibration table '%s' line %zu: tensor '%s' channel %zu: "
                             "expected finite channel_min <= channel_max",
                             path, v->line, e->name, c);
        e->ch_range[2 * c] = (float)x, e->ch_range[2 * c + 1] = (float)y;
    }
    e->n_ch = (int64_t)lo->n;
    const ytree_node *dims = ytree_get(v, "dims");
    if (dims && (dims->kind != YTREE_SEQ || dims->n > IR_MAX_RANK))
        return mopt_fail(MOPT_ERR_PARSE,
                         "calibration table '%s' line %zu: tensor '%s': dims must be a list of "
                         "at most %d sizes",
                         path, dims->line, e->name, IR_MAX_RANK);
    for (size_t d = 0; dims && d < dims->n; d++) {
        const ytree_node *a = dims->kids[d];
        char *end = NULL;
        long long x = a->kind == YTREE_SCALAR ? strtoll(a->s, &end, 10) : -2;
        if (!end || *end || x < -1)
            return mopt_fail(MOPT_ERR_PARSE,
                             "calibration table '%s' line %zu: tensor '%s': dims[%zu] must be a "
                             "size or -1",
                             path, dims->line, e->name, d);
        e->dims[d] = x;
    }
    if (dims) e->rank = (int32_t)dims->n;
    /* a mean rounding (and clipping) error: within the u8 range */
    mopt_status st = channel_floats(path, v, "channel_qerr", 255.0 * e->scale,
                                    "a finite channel_qerr within 255 scale steps", e, &e->ch_qerr);
    if (!st)
        st = channel_floats(path, v, "channel_mean", INFINITY, "a finite channel_mean", e,
                            &e->ch_mean);
    for (int64_t c = 0; !st && e->ch_mean && c < e->n_ch; c++) /* within the channel's range */
        e->ch_mean[c] = fminf(fmaxf(e->ch_mean[c], e->ch_range[2 * c]), e->ch_range[2 * c + 1]);
    return st;
}

mopt_status rt_calib_load(const char *path, uint64_t model_hash, pass_qtable *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->path, sizeof t->path, "%s", path);
    FILE *f = fopen(path, "rb");
    if (!f) return mopt_fail(MOPT_ERR_IO, "option calibration: cannot open '%s'", path);
    const ytree_limits lim = {.first_line = 1, .max_depth = 8, .max_bytes = (size_t)64 << 20};
    ytree tree = {0};
    ytree_error e;
    mopt_status st = ytree_read_file(&tree, &lim, f, &e);
    fclose(f);
    if (st) {
        ytree_free(&tree);
        static const char *const why[] = {"",         "out of memory", "out of memory", "syntax",
                                          "an alias", "documents",     "nesting",       "a key",
                                          "size",     "extra"};
        return mopt_fail(st, "calibration table '%s': not valid YAML (%s%s%s, line %zu)", path,
                         e.problem < sizeof why / sizeof why[0] ? why[e.problem] : "?",
                         e.what ? ": " : "", e.what ? e.what : "", e.line);
    }
    const ytree_node *root = tree.n_docs ? tree.docs[0] : NULL;
    const char *fmt = root ? scalar(root, "format") : NULL;
    const ytree_node *tensors = root ? ytree_get(root, "tensors") : NULL;
    if (!fmt || strcmp(fmt, "mopt-calibration/1") != 0 || !tensors || tensors->kind != YTREE_MAP) {
        ytree_free(&tree);
        return mopt_fail(MOPT_ERR_PARSE,
                         "calibration table '%s': expected 'format: mopt-calibration/1' and a "
                         "'tensors' mapping (written by mopt calibrate)",
                         path);
    }
    const char *hash = scalar(root, "model_hash");
    char mine[32];
    snprintf(mine, sizeof mine, "mh64:%016" PRIx64, model_hash);
    if (hash && model_hash && strcmp(hash, mine) != 0) {
        const char *model = scalar(root, "model");
        st = mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                       "calibration table '%s' was made for another model ('%s', %s); this "
                       "model is %s",
                       path, model ? model : "?", hash, mine);
        ytree_free(&tree);
        return st;
    }
    size_t n = tensors->n / 2;
    t->e = mopt_calloc(n ? n : 1, sizeof *t->e);
    if (!t->e) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; !st && i < n; i++) {
        const ytree_node *k = tensors->kids[2 * i], *v = tensors->kids[2 * i + 1];
        const char *sc = v->kind == YTREE_MAP ? scalar(v, "scale") : NULL;
        const char *zp = v->kind == YTREE_MAP ? scalar(v, "zero_point") : NULL;
        const char *dt = v->kind == YTREE_MAP ? scalar(v, "dtype") : NULL;
        char *end1 = NULL, *end2 = NULL;
        double s = sc ? strtod(sc, &end1) : 0;
        long z = zp ? strtol(zp, &end2, 10) : -1;
        if (!sc || !zp || *end1 || *end2 || !(s > 0) || !isfinite(s) || z < 0 || z > 255 ||
            (dt && strcmp(dt, "uint8") != 0)) {
            st = mopt_fail(MOPT_ERR_PARSE,
                           "calibration table '%s' line %zu: tensor '%s' needs scale > 0, "
                           "zero_point 0..255 and dtype uint8",
                           path, v->line, k->s);
            break;
        }
        t->e[t->n].name = mopt_strdup(k->s);
        if (!t->e[t->n].name) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        t->e[t->n].scale = (float)s;
        t->e[t->n].zero_point = (int32_t)z;
        t->n++;
        if (!st) st = channel_ranges(path, v, &t->e[t->n - 1]);
    }
    ytree_free(&tree);
    if (st) rt_calib_free(t);
    return st;
}

mopt_status rt_calib_check_names(const pass_qtable *t, const ir_graph *g) {
    int32_t unknown = 0;
    const char *example = "";
    for (int32_t i = 0; i < t->n; i++)
        if (ir_graph_find_value(g, t->e[i].name) < 0 && unknown++ == 0) example = t->e[i].name;
    if (t->n > 0 && unknown == t->n)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "calibration table '%s': none of its %d tensors (e.g. '%s') is a "
                         "tensor of this model: a table made for another model?",
                         t->path, (int)t->n, example);
    if (unknown)
        mopt_log(MOPT_LOG_WARNING,
                 "mopt: warning: calibration table '%s': %d of its %d tensors (e.g. '%s') are "
                 "not tensors of this model (ignored)",
                 t->path, (int)unknown, (int)t->n, example);
    return MOPT_OK;
}
