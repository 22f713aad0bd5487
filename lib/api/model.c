/*
 * model.c (api) — public model loading and introspection: argument checks,
 * then the importer and rt_model_build.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/file.h"
#include "io/onnx_import.h"
#include "runtime/runtime.h"

#define MOPT_MAX_MODEL_BYTES ((size_t)4 << 30)

static mopt_status load_buffer(const uint8_t *buf, size_t len, const char *base_dir,
                               const rt_config *cfg, mopt_model **out) {
    ir_graph *g = NULL;
    mopt_status st = onnx_import_model(buf, len, base_dir, &g);
    if (st) return st;
    return rt_model_build(g, cfg, out);
}

mopt_status mopt_model_load(const char *path, const mopt_options *opts, mopt_model **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_load: out is NULL");
    *out = NULL;
    if (!path) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_load: path is NULL");
    rt_config cfg;
    mopt_status st = rt_config_read(opts, &cfg);
    if (st) return st;
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

mopt_status mopt_model_load_from_memory(const void *data, size_t size, const mopt_options *opts,
                                        mopt_model **out) {
    mopt_clear_error();
    if (!out) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_load_from_memory: out is NULL");
    *out = NULL;
    if (!data && size)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "mopt_model_load_from_memory: data is NULL");
    rt_config cfg;
    mopt_status st = rt_config_read(opts, &cfg);
    if (st) return st;
    st = load_buffer(data ? data : (const void *)"", size,
                     cfg.external_data_dir[0] ? cfg.external_data_dir : NULL, &cfg, out);
    if (st) mopt_fail_context(st, "loading model from memory");
    return st;
}

void mopt_model_destroy(mopt_model *m) {
    if (!m) return;
    rt_release_kernels(m);
    rt_model_free_names(m);
    ir_graph_destroy(m->graph);
    mopt_free(m);
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

const char *mopt_model_io_dim_name(const mopt_model *m, mopt_io_kind kind, size_t index,
                                   int axis) {
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

int64_t mopt_model_opset(const mopt_model *m, const char *domain) {
    if (!m) return -1;
    return ir_graph_opset(m->graph, domain ? domain : "");
}

int64_t mopt_model_parameter_count(const mopt_model *m) { return m ? m->parameter_count : 0; }
int64_t mopt_model_parameter_bytes(const mopt_model *m) { return m ? m->parameter_bytes : 0; }
