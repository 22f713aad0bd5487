/*
 * mopt_write_graph.c — an IR graph as YAML for the .mopt header: opsets,
 * symbols, values (dtype, symbolic shape, flags, weight's table index),
 * inputs, outputs, and nodes with every attribute, subgraphs included.
 * Weights and attribute tensors over MFMT_INLINE_MAX bytes go to the tensor
 * table; smaller attribute tensors are written inline in hex.
 */
#include <stdio.h>

#include "core/error.h"
#include "io/mopt_spelling.h"
#include "io/mopt_write.h"

static void emit_tensor(mfmt_emitter *e, const ir_tensor *t, const char *what) {
    if (!mfmt_dtype_storable(t->dtype) || t->rank < 0 || t->rank > IR_MAX_RANK) {
        if (!e->st)
            e->st = mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: a %s tensor cannot be saved", what,
                              mopt_dtype_name(t->dtype));
        return;
    }
    mfmt_emit_map(e, true);
    mfmt_emit_key_str(e, "name", t->name ? t->name : "");
    mfmt_emit_key_str(e, "dtype", mopt_dtype_name(t->dtype));
    mfmt_emit_plain(e, "dims");
    mfmt_emit_dims(e, t->rank, t->dims);
    if (t->nbytes <= MFMT_INLINE_MAX) {
        char hex[2 * MFMT_INLINE_MAX + 1];
        mfmt_hex_encode(t->data ? t->data : (const uint8_t *)"", t->data ? t->nbytes : 0, hex);
        mfmt_emit_key_str(e, "data", hex);
    } else {
        int64_t k = mfmt_table_take(e, t->name ? t->name : "", t->dtype, t->rank, t->dims, t->data,
                                    t->nbytes);
        mfmt_emit_key_int(e, "tensor", k);
    }
    mfmt_emit_map_end(e);
}

/* Item i of a list attribute; null for a missing tensor or graph. */
static void emit_attr_item(mfmt_emitter *e, const ir_attr *a, size_t i, const char *what,
                           int depth) {
    switch (a->type) {
    case IR_ATTR_FLOATS: mfmt_emit_float(e, a->floats[i]); break;
    case IR_ATTR_INTS: mfmt_emit_int(e, a->ints[i]); break;
    case IR_ATTR_STRINGS: mfmt_emit_str(e, a->strings[i] ? a->strings[i] : ""); break;
    case IR_ATTR_TENSORS:
        if (a->tensors[i])
            emit_tensor(e, a->tensors[i], what);
        else
            mfmt_emit_plain(e, "null");
        break;
    default:
        if (a->graphs[i])
            mfmt_emit_graph(e, a->graphs[i], depth + 1);
        else
            mfmt_emit_plain(e, "null");
        break;
    }
}

static void emit_attr(mfmt_emitter *e, const ir_node *n, const ir_attr *a, int depth) {
    const char *tn = mfmt_attr_type_name(a->type);
    char what[320];
    snprintf(what, sizeof what, "attribute '%s' of node '%s' (%s)", a->name, n->name, n->op_type);
    if (!tn) {
        if (!e->st)
            e->st = mopt_fail(MOPT_ERR_UNSUPPORTED, "%s: attributes of type %d cannot be saved",
                              what, (int)a->type);
        return;
    }
    bool graphs = a->type == IR_ATTR_GRAPH || a->type == IR_ATTR_GRAPHS;
    mfmt_emit_map(e, !graphs);
    mfmt_emit_key_str(e, "name", a->name);
    mfmt_emit_key_str(e, "type", tn);
    mfmt_emit_plain(e, "value");
    switch (a->type) {
    case IR_ATTR_FLOAT: mfmt_emit_float(e, a->f); break;
    case IR_ATTR_INT: mfmt_emit_int(e, a->i); break;
    case IR_ATTR_STRING: mfmt_emit_str_n(e, a->s, a->s ? a->s_len : 0); break;
    case IR_ATTR_TENSOR:
        if (a->t)
            emit_tensor(e, a->t, what);
        else
            mfmt_emit_plain(e, "null");
        break;
    case IR_ATTR_GRAPH:
        if (a->g)
            mfmt_emit_graph(e, a->g, depth + 1);
        else
            mfmt_emit_plain(e, "null");
        break;
    case IR_ATTR_FLOATS:
    case IR_ATTR_INTS:
    case IR_ATTR_STRINGS:
    case IR_ATTR_TENSORS:
    case IR_ATTR_GRAPHS:
        mfmt_emit_seq(e, a->type != IR_ATTR_GRAPHS);
        for (size_t i = 0; i < a->n; i++)
            emit_attr_item(e, a, i, what, depth);
        mfmt_emit_seq_end(e);
        break;
    case IR_ATTR_TYPE_PROTO: mfmt_emit_plain(e, "null"); break; /* not kept by the importer */
    case IR_ATTR_TYPE_PROTOS: mfmt_emit_int(e, (int64_t)a->n); break;
    default: break;
    }
    mfmt_emit_map_end(e);
}

static void emit_shape(mfmt_emitter *e, const ir_graph *g, const ir_shape *s) {
    if (s->rank < 0) {
        mfmt_emit_plain(e, "null");
        return;
    }
    mfmt_emit_seq(e, true);
    for (int32_t i = 0; i < s->rank && i < IR_MAX_RANK; i++) {
        if (s->syms[i] == 0)
            mfmt_emit_int(e, s->dims[i]);
        else if (s->syms[i] > 0 && s->syms[i] <= g->n_symbols)
            mfmt_emit_str(e, g->symbols[s->syms[i] - 1]);
        else
            mfmt_emit_int(e, -1);
    }
    mfmt_emit_seq_end(e);
}

/* key: [i, j, ...] for a list of value indices. */
static void emit_key_indices(mfmt_emitter *e, const char *key, const int32_t *idx, int32_t n) {
    mfmt_emit_plain(e, key);
    mfmt_emit_seq(e, true);
    for (int32_t i = 0; i < n; i++)
        mfmt_emit_int(e, idx[i]);
    mfmt_emit_seq_end(e);
}

/* One value: name, dtype, shape, flags, and a weight's table index. */
static void emit_value(mfmt_emitter *e, const ir_graph *g, const ir_value *v) {
    mfmt_emit_map(e, true);
    mfmt_emit_key_str(e, "name", v->name);
    mfmt_emit_key_str(e, "dtype", mopt_dtype_name(v->dtype));
    mfmt_emit_plain(e, "shape");
    emit_shape(e, g, &v->shape);
    mfmt_emit_plain(e, "flags");
    mfmt_emit_seq(e, true);
    if (v->flags & IR_VALUE_INPUT) mfmt_emit_plain(e, "input");
    if (v->flags & IR_VALUE_OUTPUT) mfmt_emit_plain(e, "output");
    if (v->flags & IR_VALUE_INITIALIZER) mfmt_emit_plain(e, "initializer");
    mfmt_emit_seq_end(e);
    if (v->flags & IR_VALUE_INITIALIZER) {
        if (!mfmt_dtype_storable(v->dtype) || v->shape.rank < 0 ||
            !ir_shape_is_concrete(&v->shape)) {
            char sb[IR_SHAPE_STR_CAP];
            if (!e->st)
                e->st = mopt_fail(MOPT_ERR_UNSUPPORTED,
                                  "initializer '%s' (%s %s) cannot be saved: only "
                                  "numeric tensors of known shape can",
                                  v->name, mopt_dtype_name(v->dtype),
                                  ir_shape_str(&v->shape, g, sb, sizeof sb));
        } else {
            mfmt_emit_key_int(e, "tensor",
                              mfmt_table_take(e, v->name, v->dtype, v->shape.rank, v->shape.dims,
                                              v->data, v->data ? v->nbytes : 0));
        }
    }
    mfmt_emit_map_end(e);
}

/* One node: name, op, domain, value indices and attributes. */
static void emit_node(mfmt_emitter *e, const ir_node *n, int depth) {
    mfmt_emit_map(e, false);
    mfmt_emit_key_str(e, "name", n->name);
    mfmt_emit_key_str(e, "op_type", n->op_type);
    mfmt_emit_key_str(e, "domain", n->domain);
    emit_key_indices(e, "inputs", n->inputs, n->n_inputs);
    emit_key_indices(e, "outputs", n->outputs, n->n_outputs);
    mfmt_emit_plain(e, "attributes");
    mfmt_emit_seq(e, false);
    for (int32_t k = 0; k < n->n_attrs; k++)
        emit_attr(e, n, &n->attrs[k], depth);
    mfmt_emit_seq_end(e);
    mfmt_emit_map_end(e);
}

void mfmt_emit_graph(mfmt_emitter *e, const ir_graph *g, int depth) {
    if (depth > MFMT_MAX_GRAPH_DEPTH) {
        if (!e->st)
            e->st = mopt_fail(MOPT_ERR_LIMIT, "subgraphs nest more than %d levels",
                              MFMT_MAX_GRAPH_DEPTH);
        return;
    }
    mfmt_emit_map(e, false);
    mfmt_emit_key_str(e, "name", g->name ? g->name : "");
    mfmt_emit_key_int(e, "ir_version", g->ir_version);
    mfmt_emit_plain(e, "producer_name");
    if (g->producer_name)
        mfmt_emit_str(e, g->producer_name);
    else
        mfmt_emit_plain(e, "null");
    mfmt_emit_plain(e, "opsets");
    mfmt_emit_seq(e, true);
    for (int32_t i = 0; i < g->n_opsets; i++) {
        mfmt_emit_map(e, true);
        mfmt_emit_key_str(e, "domain", g->opsets[i].domain);
        mfmt_emit_key_int(e, "version", g->opsets[i].version);
        mfmt_emit_map_end(e);
    }
    mfmt_emit_seq_end(e);
    mfmt_emit_plain(e, "symbols");
    mfmt_emit_seq(e, true);
    for (int32_t i = 0; i < g->n_symbols; i++)
        mfmt_emit_str(e, g->symbols[i]);
    mfmt_emit_seq_end(e);
    mfmt_emit_plain(e, "values");
    mfmt_emit_seq(e, false);
    for (int32_t i = 0; i < g->n_values; i++) {
        emit_value(e, g, g->values[i]);
    }
    mfmt_emit_seq_end(e);
    emit_key_indices(e, "inputs", g->inputs, g->n_inputs);
    emit_key_indices(e, "outputs", g->outputs, g->n_outputs);
    mfmt_emit_plain(e, "nodes");
    mfmt_emit_seq(e, false);
    for (int32_t i = 0; i < g->n_nodes; i++) {
        emit_node(e, g->nodes[i], depth);
    }
    mfmt_emit_seq_end(e);
    mfmt_emit_map_end(e);
}
