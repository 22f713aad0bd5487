/*
 * model.c (api) — public model loading, saving and introspection: argument
 * checks, then the ONNX importer and rt_model_build, or for .mopt files
 * (told apart by their first bytes) the .mopt reader and
 * rt_model_build_optimized.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/calib_table.h"
#include "core/alloc.h"
#include "core/error.h"
#include "io/file.h"
#include "io/mopt_format.h"
#include "io/onnx_import.h"
#include "ir/ir_subgraph.h"
#include "passes/passes.h"
#include "runtime/runtime.h"

#define MOPT_MAX_MODEL_BYTES ((size_t)4 << 30)

/* int8_exclude (issue 13): needs precision=int8; every entry must name a
 * node of the model's main graph. */
static mopt_status check_int8_exclude(const rt_config *cfg, const ir_graph *g) {
    if (strcmp(cfg->precision, "int8") != 0)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "option int8_exclude needs precision=int8 (got precision=%s)",
                         cfg->precision);
    const char *at = cfg->int8_exclude, *item;
    size_t len;
    while (pass_list_next(&at, &item, &len)) {
        bool found = false;
        for (int32_t i = 0; i < g->n_nodes && !found; i++)
            found = strlen(g->nodes[i]->name) == len && memcmp(g->nodes[i]->name, item, len) == 0;
        if (!found)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "option int8_exclude: '%.*s' is not a node of this model",
                             (int)(len > 200 ? 200 : len), item);
    }
    return MOPT_OK;
}

static mopt_status load_buffer(const uint8_t *buf, size_t len, const char *base_dir,
                               const rt_config *cfg, mopt_model **out) {
    ir_graph *g = NULL;
    mopt_status st = onnx_import_model(buf, len, base_dir, &g);
    if (st) return st;
    rt_config c = *cfg;
    uint64_t hash = mfmt_hash64(buf, len); /* a calibration table names it */
    /* static INT8: calibration=FILE with precision=int8 (opt_level >= 2) */
    pass_qtable qt = {0};
    if (cfg->calibration[0]) {
        if (strcmp(cfg->precision, "int8") != 0 || cfg->opt_level < 2)
            st = mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                           "option calibration needs precision=int8 and opt_level >= 2 (got "
                           "precision=%s, opt_level=%d)",
                           cfg->precision, cfg->opt_level);
        else if (!(st = rt_calib_load(cfg->calibration, hash, &qt)))
            st = rt_calib_check_names(&qt, g);
        c.qtable = &qt;
    }
    if (!st && cfg->int8_exclude[0]) st = check_int8_exclude(cfg, g);
    qt.exclude = cfg->int8_exclude;
    qt.int8_depthwise = cfg->int8_depthwise != 0;
    if (st) {
        rt_calib_free(&qt);
        ir_graph_destroy(g);
        return st;
    }
    st = rt_model_build(g, &c, out);
    rt_calib_free(&qt);
    if (st) return st;
    (*out)->source_checksum = hash;
    (*out)->source_bytes = len;
    return MOPT_OK;
}

/* A .mopt image (handed over: see mfmt_load) into a model. The graph was
 * optimized when it was saved: the file's opt_level and precision apply. */
static mopt_status load_mopt(void *base, size_t size, void (*release)(void *, size_t),
                             const rt_config *cfg, mopt_model **out) {
    ir_graph *g = NULL;
    mfmt_meta meta;
    mopt_status st = mfmt_load(base, size, release, cfg->verify_weights != 0, &g, &meta);
    if (st) return st;
    rt_config c = *cfg;
    c.opt_level = meta.opt_level;
    snprintf(c.precision, sizeof c.precision, "%s", meta.precision);
    snprintf(c.int8_exclude, sizeof c.int8_exclude, "%s", meta.int8_exclude);
    c.int8_fallback_bf16 = strcmp(meta.int8_fallback, "bf16") == 0;
    st = rt_model_build_optimized(g, &c, &meta.report, out);
    if (st) return st;
    (*out)->source_checksum = meta.source_checksum;
    (*out)->source_bytes = meta.source_bytes;
    return MOPT_OK;
}

/* Loading is charged to a budget of memory_limit bytes (none without a
 * limit): the file read, import, constant folding, prepacking. load_begin
 * installs it; load_end reinstalls the previous one and turns a refused
 * allocation's OUT_OF_MEMORY into LIMIT. The model's blocks keep the budget
 * alive after the load (they credit it when freed). */
static mopt_status load_begin(const rt_config *cfg, mopt_budget **b, mopt_budget **prev) {
    *b = NULL;
    *prev = mopt_budget_current();
    if (!cfg->memory_limit || *prev) return MOPT_OK;
    *b = mopt_budget_create(cfg->memory_limit);
    if (!*b) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    mopt_budget_swap(*b);
    return MOPT_OK;
}

static mopt_status load_end(mopt_budget *b, mopt_budget *prev, mopt_status st) {
    if (!b) return st;
    mopt_budget_swap(prev);
    size_t size;
    int64_t in_use;
    if (st && st != MOPT_ERR_LIMIT && mopt_budget_refused(b, &size, &in_use)) {
        char why[256];
        snprintf(why, sizeof why, "%s", mopt_error_message());
        st = mopt_fail(MOPT_ERR_LIMIT,
                       "%s%s%zu more bytes would exceed memory_limit %" PRId64 " (%" PRId64
                       " in use by the load)",
                       why, why[0] ? " (refused by the budget, not the system): " : "", size,
                       mopt_budget_limit(b), in_use);
    }
    mopt_budget_release(b);
    return st;
}

static void release_aligned(void *base, size_t size) {
    (void)size;
    mopt_aligned_free(base);
}

#define LOAD_FLAGS_KNOWN ((uint32_t)(MOPT_LOAD_NO_MMAP | MOPT_LOAD_VERIFY_WEIGHTS))

/* A .mopt file read into aligned memory the model owns (MOPT_LOAD_NO_MMAP):
 * map it, copy it, unmap it, so the file is no longer needed. */
static mopt_status copy_mapping(void **map, size_t size) {
    void *copy = mopt_aligned_alloc(size ? size : 1);
    if (!copy) {
        mfmt_unmap(*map, size);
        *map = NULL;
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the model (%zu bytes)",
                         size);
    }
    memcpy(copy, *map, size);
    mfmt_unmap(*map, size);
    *map = copy;
    return MOPT_OK;
}

static mopt_status load_path_budgeted(const char *path, const rt_config *cfgp, uint32_t flags,
                                      mopt_model **out);

static mopt_status load_path(const char *path, const mopt_options *opts, uint32_t flags,
                             const char *fn, mopt_model **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!path) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    if (flags & ~LOAD_FLAGS_KNOWN)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "%s: unknown flags 0x%x (this libmopt %s knows MOPT_LOAD_NO_MMAP and "
                         "MOPT_LOAD_VERIFY_WEIGHTS)",
                         fn, (unsigned)(flags & ~LOAD_FLAGS_KNOWN), mopt_version());
    rt_config cfg;
    mopt_status st = rt_config_read(opts, &cfg);
    if (st) return st;
    if (flags & MOPT_LOAD_VERIFY_WEIGHTS) cfg.verify_weights = 1;
    mopt_budget *b, *prev;
    if ((st = load_begin(&cfg, &b, &prev))) return st;
    st = load_path_budgeted(path, &cfg, flags, out);
    return load_end(b, prev, st);
}

static mopt_status load_path_budgeted(const char *path, const rt_config *cfgp, uint32_t flags,
                                      mopt_model **out) {
    rt_config cfg = *cfgp;
    mopt_status st;
    void *map = NULL;
    size_t map_size = 0;
    st = mfmt_map_file(path, &map, &map_size);
    if (!st && map && (flags & MOPT_LOAD_NO_MMAP)) {
        st = copy_mapping(&map, map_size);
        if (!st) st = load_mopt(map, map_size, release_aligned, &cfg, out);
    } else if (!st && map) {
        st = load_mopt(map, map_size, mfmt_unmap, &cfg, out);
    }
    if (st || map) {
        if (st) mopt_fail_context(st, "loading '%s'", path);
        return st;
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    st = file_read_all(path, MOPT_MAX_MODEL_BYTES, &buf, &len);
    if (st) return st;
    char *dir = file_dirname(path);
    if (!dir) {
        mopt_free(buf);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    st = load_buffer(buf, len, dir, &cfg, out);
    mopt_free(dir);
    mopt_free(buf);
    if (st) mopt_fail_context(st, "loading '%s'", path);
    return st;
}

mopt_status mopt_model_load(const char *path, const mopt_options *opts, mopt_model **out) {
    return load_path(path, opts, 0, "mopt_model_load", out);
}

mopt_status mopt_model_load_v2(const char *path, const mopt_options *opts, uint32_t flags,
                               mopt_model **out) {
    return load_path(path, opts, flags, "mopt_model_load_v2", out);
}

static mopt_status load_memory_budgeted(const void *data, size_t size, const rt_config *cfgp,
                                        mopt_model **out);

mopt_status mopt_model_load_from_memory(const void *data, size_t size, const mopt_options *opts,
                                        mopt_model **out) {
    mopt_clear_error();
    if (!out)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_load_from_memory: out is NULL");
    *out = NULL;
    if (!data && size)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_load_from_memory: data is NULL");
    rt_config cfg;
    mopt_status st = rt_config_read(opts, &cfg);
    if (st) return st;
    mopt_budget *b, *prev;
    if ((st = load_begin(&cfg, &b, &prev))) return st;
    st = load_memory_budgeted(data, size, &cfg, out);
    return load_end(b, prev, st);
}

static mopt_status load_memory_budgeted(const void *data, size_t size, const rt_config *cfgp,
                                        mopt_model **out) {
    rt_config cfg = *cfgp;
    mopt_status st;
    if (mfmt_detect(data, size)) {
        /* the caller's buffer is only borrowed for the call: the weights get
         * one aligned copy, which the model owns */
        void *copy = mopt_aligned_alloc(size);
        if (!copy) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory copying the model");
        memcpy(copy, data, size);
        st = load_mopt(copy, size, release_aligned, &cfg, out);
    } else {
        st = load_buffer(data ? data : (const void *)"", size,
                         cfg.external_data_dir[0] ? cfg.external_data_dir : NULL, &cfg, out);
    }
    if (st) mopt_fail_context(st, "loading model from memory");
    return st;
}

/* Drops the caller's reference; the last session holding one frees it. */
void mopt_model_destroy(mopt_model *m) {
    if (m && atomic_fetch_sub(&m->refs, 1) == 1) rt_model_destroy(m);
}

mopt_status mopt_model_save(const mopt_model *m, const char *path) {
    mopt_clear_error();
    if (!m) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_save: model is NULL");
    if (!path || !*path)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_save: path is NULL or empty");
    if (m->n_problems)
        return mopt_fail(MOPT_ERR_UNSUPPORTED,
                         "mopt_model_save: the model was loaded for inspection only (%zu node%s "
                         "cannot run)",
                         m->n_problems, m->n_problems == 1 ? "" : "s");
    mfmt_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.source_checksum = m->source_checksum;
    meta.source_bytes = m->source_bytes;
    meta.opt_level = m->config.opt_level;
    snprintf(meta.precision, sizeof meta.precision, "%s", m->config.precision);
    if (strcmp(m->config.precision, "int8") == 0 && m->config.int8_exclude[0]) {
        snprintf(meta.int8_exclude, sizeof meta.int8_exclude, "%s", m->config.int8_exclude);
        snprintf(meta.int8_fallback, sizeof meta.int8_fallback, "%s",
                 m->config.int8_fallback_bf16 ? "bf16" : "fp32");
    }
    meta.report = m->report;
    mopt_status st = mfmt_save(m->graph, &meta, path);
    if (st) mopt_fail_context(st, "saving '%s'", path);
    return st;
}

const char *mopt_model_pass_report(const mopt_model *m) {
    return m && m->report_text ? m->report_text : "";
}

static const pass_report_entry *pass_at(const mopt_model *m, size_t i) {
    return m && i < (size_t)m->report.n ? &m->report.entries[i] : NULL;
}

size_t mopt_model_pass_count(const mopt_model *m) { return m ? (size_t)m->report.n : 0; }

/* mopt_model_pass_name, _ms, _nodes_before, _nodes_after, _rewrites and
 * _note: one field of report entry i, or `none` for a NULL model or an i
 * past the end. */
#define PASS_FIELD(type, field, none)                                                              \
    type mopt_model_pass_##field(const mopt_model *m, size_t i) {                                  \
        const pass_report_entry *e = pass_at(m, i);                                                \
        return e ? e->field : none;                                                                \
    }
PASS_FIELD(const char *, name, NULL)
PASS_FIELD(double, ms, -1.0)
PASS_FIELD(int64_t, nodes_before, -1)
PASS_FIELD(int64_t, nodes_after, -1)
PASS_FIELD(int64_t, rewrites, -1)
PASS_FIELD(const char *, note, NULL)
#undef PASS_FIELD

/* ---- metadata ---------------------------------------------------------- */

const char *mopt_model_info(const mopt_model *m, mopt_info field) {
    if (!m) return NULL;
    const ir_graph *g = m->graph;
    const char *s;
    switch (field) {
    case MOPT_INFO_PRODUCER_NAME: s = g->producer_name; break;
    case MOPT_INFO_PRODUCER_VERSION: s = g->producer_version; break;
    case MOPT_INFO_DOMAIN: s = g->domain; break;
    case MOPT_INFO_DOC_STRING: s = g->doc_string; break;
    case MOPT_INFO_GRAPH_NAME: s = g->name; break;
    case MOPT_INFO_GRAPH_DOC_STRING: s = g->graph_doc_string; break;
    default: return NULL;
    }
    return s ? s : "";
}

int64_t mopt_model_version(const mopt_model *m) { return m ? m->graph->model_version : 0; }

size_t mopt_model_metadata_count(const mopt_model *m) { return m ? (size_t)m->graph->n_props : 0; }

const char *mopt_model_metadata_key(const mopt_model *m, size_t i) {
    return m && i < (size_t)m->graph->n_props ? m->graph->props[i].key : NULL;
}

const char *mopt_model_metadata_value(const mopt_model *m, size_t i) {
    return m && i < (size_t)m->graph->n_props ? m->graph->props[i].value : NULL;
}

mopt_status mopt_model_metadata(const mopt_model *m, const char *key, const char **value) {
    mopt_clear_error();
    if (value) *value = NULL;
    if (!m || !key || !value)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_metadata: NULL argument");
    for (int32_t i = 0; i < m->graph->n_props; i++)
        if (strcmp(m->graph->props[i].key, key) == 0) {
            *value = m->graph->props[i].value;
            return MOPT_OK;
        }
    return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no metadata '%s'", key);
}

static const ir_value *io_value(const mopt_model *m, mopt_io_kind kind, size_t index) {
    if (!m) return NULL;
    const ir_graph *g = m->graph;
    if (kind == MOPT_INPUT && index < (size_t)g->n_inputs) return g->values[g->inputs[index]];
    if (kind == MOPT_OUTPUT && index < (size_t)g->n_outputs) return g->values[g->outputs[index]];
    return NULL;
}

size_t mopt_model_io_count(const mopt_model *m, mopt_io_kind kind) {
    if (!m) return 0;
    if (kind == MOPT_INPUT) return (size_t)m->graph->n_inputs;
    if (kind == MOPT_OUTPUT) return (size_t)m->graph->n_outputs;
    return 0;
}

const char *mopt_model_io_name(const mopt_model *m, mopt_io_kind kind, size_t index) {
    const ir_value *v = io_value(m, kind, index);
    return v ? v->name : NULL;
}

mopt_dtype mopt_model_io_dtype(const mopt_model *m, mopt_io_kind kind, size_t index) {
    const ir_value *v = io_value(m, kind, index);
    return v ? v->dtype : MOPT_DTYPE_UNDEFINED;
}

int mopt_model_io_rank(const mopt_model *m, mopt_io_kind kind, size_t index) {
    const ir_value *v = io_value(m, kind, index);
    return v ? v->shape.rank : -1;
}

int64_t mopt_model_io_dim(const mopt_model *m, mopt_io_kind kind, size_t index, int axis) {
    const ir_value *v = io_value(m, kind, index);
    if (!v || axis < 0 || axis >= v->shape.rank || v->shape.syms[axis] != 0) return -1;
    return v->shape.dims[axis];
}

const char *mopt_model_io_dim_name(const mopt_model *m, mopt_io_kind kind, size_t index, int axis) {
    const ir_value *v = io_value(m, kind, index);
    if (!v || axis < 0 || axis >= v->shape.rank) return NULL;
    int32_t sy = v->shape.syms[axis];
    if (sy <= 0 || sy > m->graph->n_symbols) return NULL;
    return m->graph->symbols[sy - 1];
}

mopt_status mopt_model_io_find(const mopt_model *m, mopt_io_kind kind, const char *name,
                               size_t *index_out) {
    mopt_clear_error();
    if (!m || !name || !index_out)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_io_find: NULL argument");
    size_t n = mopt_model_io_count(m, kind);
    for (size_t i = 0; i < n; i++)
        if (strcmp(mopt_model_io_name(m, kind, i), name) == 0) {
            *index_out = i;
            return MOPT_OK;
        }
    return mopt_fail(MOPT_ERR_NOT_FOUND, "the model has no %s named '%s'",
                     kind == MOPT_INPUT ? "input" : "output", name);
}

size_t mopt_model_node_count(const mopt_model *m) { return m ? (size_t)m->graph->n_nodes : 0; }

const char *mopt_model_node_op_type(const mopt_model *m, size_t index) {
    if (!m || index >= (size_t)m->graph->n_nodes) return NULL;
    if (m->op_names && m->op_names[index]) return m->op_names[index];
    return m->graph->nodes[index]->op_type;
}

const char *mopt_model_node_name(const mopt_model *m, size_t index) {
    if (!m || index >= (size_t)m->graph->n_nodes) return NULL;
    return m->graph->nodes[index]->name;
}

const char *mopt_model_node_value(const mopt_model *m, size_t index, mopt_io_kind kind, size_t k) {
    if (!m || index >= (size_t)m->graph->n_nodes) return NULL;
    const ir_node *n = m->graph->nodes[index];
    int32_t count = kind == MOPT_INPUT ? n->n_inputs : n->n_outputs;
    if (k >= (size_t)count) return NULL;
    int32_t v = kind == MOPT_INPUT ? n->inputs[k] : n->outputs[k];
    return v >= 0 ? m->graph->values[v]->name : NULL;
}

int64_t mopt_model_opset(const mopt_model *m, const char *domain) {
    if (!m) return -1;
    return ir_graph_opset(m->graph, domain ? domain : "");
}

int64_t mopt_model_parameter_count(const mopt_model *m) { return m ? m->parameter_count : 0; }
int64_t mopt_model_parameter_bytes(const mopt_model *m) { return m ? m->parameter_bytes : 0; }

/* ---- mopt_model_check ------------------------------------------------------ */

typedef struct check_state {
    mopt_check_callback cb;
    void *user;
    mopt_status first_other; /* first status that is not UNSUPPORTED */
    size_t n;
    char summary[512];
    size_t summary_len;
} check_state;

static void check_report(check_state *cs, const ir_node *n, mopt_status st, const char *msg) {
    char op[256];
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        snprintf(op, sizeof op, "%s.%s", n->domain, n->op_type);
    else
        snprintf(op, sizeof op, "%s", n->op_type);
    if (cs->cb) cs->cb(cs->user, n->name, op, st, msg);
    if (st == MOPT_OK) return; /* a warning: the model still loads */
    if (st != MOPT_ERR_UNSUPPORTED && cs->first_other == MOPT_OK) cs->first_other = st;
    if (cs->summary_len < sizeof cs->summary - 64)
        cs->summary_len +=
            (size_t)snprintf(cs->summary + cs->summary_len, sizeof cs->summary - cs->summary_len,
                             "%s'%s' (%s)", cs->n ? ", " : "", n->name, op);
    cs->n++;
}

static void check_problem(void *user, const ir_node *n, mopt_status st, const char *msg) {
    check_report(user, n, st, msg);
}

mopt_status mopt_model_check(const char *path, const mopt_options *opts,
                             mopt_check_callback callback, void *user, size_t *n_problems) {
    mopt_clear_error();
    if (n_problems) *n_problems = 0;
    if (!path) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_check: path is NULL");
    rt_config cfg;
    mopt_status st = rt_config_read(opts, &cfg);
    if (st) return st;
    /* a .mopt file was checked when it was made: loading it is the check */
    void *map = NULL;
    size_t map_size = 0;
    st = mfmt_map_file(path, &map, &map_size);
    if (!st && map) {
        mopt_model *m = NULL;
        st = load_mopt(map, map_size, mfmt_unmap, &cfg, &m);
        mopt_model_destroy(m);
        if (st) mopt_fail_context(st, "checking '%s'", path);
        if (st && n_problems) *n_problems = 1;
        return st;
    }
    if (st) return st;
    uint8_t *buf = NULL;
    size_t len = 0;
    st = file_read_all(path, MOPT_MAX_MODEL_BYTES, &buf, &len);
    if (st) return st;
    char *dir = file_dirname(path);
    ir_graph *g = NULL;
    if (!dir)
        st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    else
        st = onnx_import_model(buf, len, dir, &g);
    mopt_free(dir);
    mopt_free(buf);
    if (!st) st = ir_graph_bind_captures(g);
    if (!st) st = ir_graph_check(g);
    if (st) {
        ir_graph_destroy(g);
        return mopt_fail_context(st, "checking '%s'", path);
    }
    check_state cs = {.cb = callback, .user = user};
    st = passes_resolve_ops(g, check_problem, &cs, NULL);
    if (!st) st = passes_infer_graph_checked(g, check_problem, &cs, NULL);
    /* the sizes model build checks before any backend sees a shape
     * (rt_node_sizes): beyond the backends' limits is a warning */
    for (int32_t i = 0; !st && i < g->n_nodes; i++) {
        bool backends_ok;
        char why[512], msg[640];
        mopt_status ss = rt_node_sizes(g, g->nodes[i], &backends_ok, why, sizeof why);
        if (ss) {
            snprintf(msg, sizeof msg, "%s", why);
            check_report(&cs, g->nodes[i], ss, msg);
        } else if (!backends_ok) {
            snprintf(msg, sizeof msg,
                     "no oneDNN/OpenBLAS kernel: sizes beyond their limits (%s); the reference "
                     "kernel runs",
                     why);
            check_report(&cs, g->nodes[i], MOPT_OK, msg);
        }
    }
    ir_graph_destroy(g);
    if (st) return mopt_fail_context(st, "checking '%s'", path);
    if (n_problems) *n_problems = cs.n;
    if (cs.n == 0) return MOPT_OK;
    st = cs.first_other != MOPT_OK ? cs.first_other : MOPT_ERR_UNSUPPORTED;
    return mopt_fail(st, "'%s': %zu node%s cannot run: %s", path, cs.n, cs.n == 1 ? "" : "s",
                     cs.summary);
}
