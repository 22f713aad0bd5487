/*
 * mopt_read_graph.c — an IR graph from the .mopt header's YAML tree, the
 * inverse of mopt_write_graph.c: opsets, symbols, values (weights point into
 * the image through the tensor table), inputs and outputs (which must agree
 * with the values' flags), nodes and attributes, subgraphs to a bounded
 * depth. Every index is range-checked; attribute tensors are copied.
 */
#include <inttypes.h>
#include <stdio.h>

#include "core/alloc.h"
#include "io/mopt_read.h"
#include "io/mopt_spelling.h"

/* An attribute tensor (always copied: attribute tensors own their data). */
static mopt_status load_tensor(mfmt_loader *L, const ytree_node *m, const char *where,
                               ir_tensor **out) {
    *out = NULL;
    if (m->kind != YTREE_MAP)
        return mfmt_fail_at(MOPT_ERR_PARSE, m, where, "expected a tensor mapping");
    ir_tensor *t = mopt_calloc(1, sizeof *t);
    if (!t) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    mopt_status st = mfmt_key_str(m, "name", where, &t->name);
    if (!st) st = mfmt_key_dtype(m, where, &t->dtype);
    if (!st && !mfmt_dtype_storable(t->dtype))
        st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where, "a %s tensor cannot be stored",
                          mopt_dtype_name(t->dtype));
    if (!st) st = mfmt_key_dims(m, where, &t->rank, t->dims);
    uint64_t bytes = 0;
    if (!st && (!mfmt_tensor_bytes(t->dtype, t->rank, t->dims, &bytes) || bytes > SIZE_MAX))
        st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where, "its dims overflow a byte count");
    const ytree_node *data = ytree_get(m, "data");
    const mfmt_ld_tensor *ref = NULL;
    if (!st && !data) {
        st = mfmt_table_ref(L, m, where, &ref);
        if (!st && (ref->dtype != t->dtype || ref->size != bytes || ref->rank != t->rank ||
                    memcmp(ref->dims, t->dims, (size_t)t->rank * sizeof t->dims[0]) != 0))
            st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where,
                              "its dtype and dims differ from those of table entry '%.200s'",
                              ref->name);
    }
    if (!st && data && (data->kind != YTREE_SCALAR || data->len != 2 * bytes))
        st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, data, where,
                          "inline data has %zu hex digits; its dims and dtype need %" PRIu64,
                          data->kind == YTREE_SCALAR ? data->len : 0, 2 * bytes);
    if (!st && bytes) {
        t->data = mopt_aligned_alloc((size_t)bytes);
        if (!t->data) st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading %s", where);
    }
    if (!st && bytes) {
        if (data) {
            if (!mfmt_hex_decode(data->s, data->len, t->data, (size_t)bytes))
                st = mfmt_fail_at(MOPT_ERR_PARSE, data, where, "inline data is not hex");
        } else {
            memcpy(t->data, ref->data, (size_t)bytes);
        }
    }
    t->nbytes = (size_t)bytes;
    if (st) {
        ir_tensor_destroy(t);
        return st;
    }
    *out = t;
    return MOPT_OK;
}

static mopt_status load_attr(mfmt_loader *L, ir_node *node, const ytree_node *m, const char *where,
                             int depth) {
    if (m->kind != YTREE_MAP) return mfmt_fail_at(MOPT_ERR_PARSE, m, where, "expected a mapping");
    char *name = NULL;
    char tn[24];
    mopt_status st = mfmt_key_str(m, "name", where, &name);
    if (!st && !name[0])
        st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where, "the attribute has no name");
    if (!st && ir_node_attr(node, name))
        st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where, "a second attribute named '%.100s'",
                          name);
    if (!st) st = mfmt_key_buf(m, "type", where, tn, sizeof tn);
    ir_attr_type type = IR_ATTR_UNDEFINED;
    if (!st) type = mfmt_attr_type_from_name(tn);
    if (!st && type == IR_ATTR_UNDEFINED)
        st = mfmt_fail_at(MOPT_ERR_PARSE, ytree_get(m, "type"), where,
                          "unknown attribute type '%s'", tn);
    const ytree_node *v = NULL;
    if (!st) {
        v = ytree_get(m, "value");
        if (!v) st = mfmt_fail_at(MOPT_ERR_PARSE, m, where, "missing key 'value'");
    }
    ir_attr *a = NULL;
    if (!st) {
        a = ir_node_add_attr(node, name, type);
        if (!a) st = MOPT_ERR_OUT_OF_MEMORY;
    }
    mopt_free(name);
    if (st) return st;
    char sub[MFMT_WHERE_CAP];
    bool list = type == IR_ATTR_FLOATS || type == IR_ATTR_INTS || type == IR_ATTR_STRINGS ||
                type == IR_ATTR_TENSORS || type == IR_ATTR_GRAPHS;
    if (list && v->kind != YTREE_SEQ)
        return mfmt_fail_at(MOPT_ERR_PARSE, v, where, "a %s attribute needs a sequence", tn);
    size_t n = list ? v->n : 0;
    switch (type) {
    case IR_ATTR_FLOAT: return mfmt_as_float(v, where, "value", &a->f);
    case IR_ATTR_INT: return mfmt_as_int(v, where, "value", INT64_MIN, INT64_MAX, &a->i);
    case IR_ATTR_STRING: return mfmt_as_str(v, where, "value", false, &a->s, &a->s_len);
    case IR_ATTR_TENSOR:
        if (ytree_is_null(v)) return MOPT_OK;
        return load_tensor(L, v, where, &a->t);
    case IR_ATTR_GRAPH:
        if (ytree_is_null(v)) return MOPT_OK;
        snprintf(sub, sizeof sub, "%.300s.value", where);
        return mfmt_load_graph(L, v, sub, depth + 1, &a->g);
    case IR_ATTR_FLOATS:
        a->floats = mopt_malloc((n ? n : 1) * sizeof *a->floats);
        if (!a->floats) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        a->n = n;
        for (size_t i = 0; i < n; i++)
            if ((st = mfmt_as_float(v->kids[i], where, "value", &a->floats[i]))) return st;
        return MOPT_OK;
    case IR_ATTR_INTS:
        a->ints = mopt_malloc((n ? n : 1) * sizeof *a->ints);
        if (!a->ints) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        a->n = n;
        for (size_t i = 0; i < n; i++)
            if ((st = mfmt_as_int(v->kids[i], where, "value", INT64_MIN, INT64_MAX, &a->ints[i])))
                return st;
        return MOPT_OK;
    case IR_ATTR_STRINGS:
    case IR_ATTR_TENSORS:
    case IR_ATTR_GRAPHS: {
        void **arr = mopt_calloc(n ? n : 1, sizeof(void *));
        if (!arr) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        if (type == IR_ATTR_STRINGS) a->strings = (char **)arr;
        if (type == IR_ATTR_TENSORS) a->tensors = (ir_tensor **)arr;
        if (type == IR_ATTR_GRAPHS) a->graphs = (ir_graph **)arr;
        a->n = n;
        for (size_t i = 0; i < n && !st; i++) {
            snprintf(sub, sizeof sub, "%.300s.value[%zu]", where, i);
            if (type == IR_ATTR_STRINGS)
                st = mfmt_as_str(v->kids[i], sub, "value", true, &a->strings[i], NULL);
            else if (ytree_is_null(v->kids[i]))
                continue;
            else if (type == IR_ATTR_TENSORS)
                st = load_tensor(L, v->kids[i], sub, &a->tensors[i]);
            else
                st = mfmt_load_graph(L, v->kids[i], sub, depth + 1, &a->graphs[i]);
        }
        return st;
    }
    case IR_ATTR_TYPE_PROTO: return MOPT_OK;
    case IR_ATTR_TYPE_PROTOS: {
        int64_t c;
        st = mfmt_as_int(v, where, "value", 0, INT32_MAX, &c);
        if (!st) a->n = (size_t)c;
        return st;
    }
    default: return MOPT_OK;
    }
}

/* A value index list (node inputs/outputs, graph inputs/outputs). */
static mopt_status index_list(const ytree_node *map, const char *key, const char *where, int64_t lo,
                              int32_t n_values, int32_t **out, int32_t *count) {
    const ytree_node *s;
    mopt_status st = mfmt_need(map, key, YTREE_SEQ, where, &s);
    if (st) return st;
    if (s->n > INT32_MAX / 8)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, s, where, "'%s' is too long", key);
    int32_t *arr = mopt_malloc((s->n ? s->n : 1) * sizeof *arr);
    if (!arr) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    for (size_t i = 0; i < s->n; i++) {
        int64_t v;
        st = mfmt_as_int(s->kids[i], where, key, lo, (int64_t)n_values - 1, &v);
        if (st) {
            mopt_free(arr);
            return st;
        }
        arr[i] = (int32_t)v;
    }
    *out = arr;
    *count = (int32_t)s->n;
    return MOPT_OK;
}

static mopt_status load_value(mfmt_loader *L, ir_graph *g, const ytree_node *m, int32_t i,
                              const char *where) {
    if (m->kind != YTREE_MAP) return mfmt_fail_at(MOPT_ERR_PARSE, m, where, "expected a mapping");
    char *name = NULL;
    mopt_status st = mfmt_key_str(m, "name", where, &name);
    if (st) return st;
    int32_t idx = ir_graph_value(g, name);
    if (idx < 0) {
        mopt_free(name);
        return MOPT_ERR_OUT_OF_MEMORY;
    }
    if (idx != i) {
        st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where, "value '%.200s' is listed twice", name);
        mopt_free(name);
        return st;
    }
    mopt_free(name);
    ir_value *v = g->values[i];
    char sub[MFMT_WHERE_CAP];
    snprintf(sub, sizeof sub, "%.200s ('%.150s')", where, v->name);
    if ((st = mfmt_key_dtype(m, sub, &v->dtype))) return st;
    const ytree_node *sh = ytree_get(m, "shape");
    if (!sh) return mfmt_fail_at(MOPT_ERR_PARSE, m, sub, "missing key 'shape'");
    if (ytree_is_null(sh)) {
        ir_shape_set_unknown(&v->shape);
    } else {
        if (sh->kind != YTREE_SEQ)
            return mfmt_fail_at(MOPT_ERR_PARSE, sh, sub, "shape must be a sequence or null");
        if (sh->n > IR_MAX_RANK)
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, sh, sub,
                                "rank %zu; at most %d is supported", sh->n, IR_MAX_RANK);
        v->shape.rank = (int32_t)sh->n;
        for (size_t k = 0; k < sh->n; k++) {
            const ytree_node *d = sh->kids[k];
            v->shape.dims[k] = 0;
            v->shape.syms[k] = 0;
            if (d->kind == YTREE_SCALAR && !d->plain) { /* a symbol */
                int32_t id = 0;
                for (int32_t s = 0; s < g->n_symbols && !id; s++)
                    if (strlen(g->symbols[s]) == d->len && memcmp(g->symbols[s], d->s, d->len) == 0)
                        id = s + 1;
                if (!id)
                    return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, d, sub,
                                        "shape names '%.100s', which is not in the graph's symbols",
                                        d->s);
                v->shape.syms[k] = id;
            } else {
                int64_t x;
                if ((st = mfmt_as_int(d, sub, "shape", -1, INT64_MAX, &x))) return st;
                if (x < 0)
                    v->shape.syms[k] = -1;
                else
                    v->shape.dims[k] = x;
            }
        }
    }
    const ytree_node *fl;
    if ((st = mfmt_need(m, "flags", YTREE_SEQ, sub, &fl))) return st;
    for (size_t k = 0; k < fl->n; k++) {
        const ytree_node *f = fl->kids[k];
        const char *s = f->kind == YTREE_SCALAR ? f->s : "";
        if (strcmp(s, "input") == 0)
            v->flags |= IR_VALUE_INPUT;
        else if (strcmp(s, "output") == 0)
            v->flags |= IR_VALUE_OUTPUT;
        else if (strcmp(s, "initializer") == 0)
            v->flags |= IR_VALUE_INITIALIZER;
        else
            return mfmt_fail_at(MOPT_ERR_PARSE, f, sub, "unknown flag '%.40s'", s);
    }
    if ((v->flags & IR_VALUE_INPUT) && (v->flags & IR_VALUE_INITIALIZER))
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, fl, sub,
                            "a value cannot be an input and a weight");
    if (!(v->flags & IR_VALUE_INITIALIZER)) {
        if (ytree_get(m, "tensor"))
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, sub, "only weights refer to a tensor");
        return MOPT_OK;
    }
    const mfmt_ld_tensor *t;
    if ((st = mfmt_table_ref(L, m, sub, &t))) return st;
    if (t->dtype != v->dtype || v->shape.rank != t->rank || !ir_shape_is_concrete(&v->shape) ||
        memcmp(v->shape.dims, t->dims, (size_t)t->rank * sizeof t->dims[0]) != 0) {
        char a[IR_SHAPE_STR_CAP], b[IR_MAX_RANK * 24 + 4];
        mfmt_dims_text(t->rank, t->dims, b, sizeof b);
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, sub,
                            "declared %s %s but its table entry '%.200s' is %s %s",
                            mopt_dtype_name(v->dtype), ir_shape_str(&v->shape, g, a, sizeof a),
                            t->name, mopt_dtype_name(t->dtype), b);
    }
    v->data = t->data;
    v->nbytes = (size_t)t->size;
    if (v->data) v->flags |= IR_VALUE_BORROWED;
    return MOPT_OK;
}

static mopt_status load_graph_into(mfmt_loader *L, ir_graph *g, const ytree_node *m,
                                   const char *where, int depth) {
    char sub[MFMT_WHERE_CAP];
    const ytree_node *n;
    mopt_status st;
    char *s = NULL;
    if ((st = mfmt_key_str(m, "name", where, &s))) return st;
    mopt_free(g->name);
    g->name = s;
    if ((st = mfmt_key_int(m, "ir_version", where, INT64_MIN, INT64_MAX, &g->ir_version)))
        return st;
    n = ytree_get(m, "producer_name");
    if (n && !ytree_is_null(n) &&
        (st = mfmt_as_str(n, where, "producer_name", true, &g->producer_name, NULL)))
        return st;
    const ytree_node *ops;
    if ((st = mfmt_need(m, "opsets", YTREE_SEQ, where, &ops))) return st;
    for (size_t i = 0; i < ops->n; i++) {
        snprintf(sub, sizeof sub, "%.300s.opsets[%zu]", where, i);
        const ytree_node *o;
        if ((st = mfmt_item_map(ops, i, sub, &o))) return st;
        int64_t ver;
        if ((st = mfmt_key_str(o, "domain", sub, &s))) return st;
        st = mfmt_key_int(o, "version", sub, 1, INT64_MAX, &ver);
        for (int32_t k = 0; !st && k < g->n_opsets; k++)
            if (strcmp(g->opsets[k].domain, s) == 0)
                st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, o, sub, "domain '%.100s' is listed twice",
                                  s);
        if (!st && ir_graph_set_opset(g, s, ver))
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
        mopt_free(s);
        if (st) return st;
    }
    const ytree_node *syms;
    if ((st = mfmt_need(m, "symbols", YTREE_SEQ, where, &syms))) return st;
    for (size_t i = 0; i < syms->n; i++) {
        snprintf(sub, sizeof sub, "%.300s.symbols[%zu]", where, i);
        if ((st = mfmt_as_str(syms->kids[i], sub, "symbol", true, &s, NULL))) return st;
        int32_t id = s[0] ? ir_graph_symbol(g, s) : 0;
        if (id < 0)
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
        else if (id != (int32_t)i + 1)
            st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, syms->kids[i], sub,
                              "symbol '%.100s' is empty or listed twice", s);
        mopt_free(s);
        if (st) return st;
    }
    const ytree_node *vals;
    if ((st = mfmt_need(m, "values", YTREE_SEQ, where, &vals))) return st;
    if (vals->n > INT32_MAX / 8)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, vals, where, "too many values");
    for (size_t i = 0; i < vals->n; i++) {
        snprintf(sub, sizeof sub, "%.300s.values[%zu]", where, i);
        if ((st = load_value(L, g, vals->kids[i], (int32_t)i, sub))) return st;
    }
    /* graph inputs and outputs agree with the flags */
    if ((st = index_list(m, "inputs", where, 0, g->n_values, &g->inputs, &g->n_inputs))) return st;
    if ((st = index_list(m, "outputs", where, 0, g->n_values, &g->outputs, &g->n_outputs)))
        return st;
    int32_t flagged_in = 0;
    for (int32_t i = 0; i < g->n_values; i++)
        flagged_in += !!(g->values[i]->flags & IR_VALUE_INPUT);
    for (int32_t i = 0; i < g->n_inputs; i++) {
        const ir_value *v = g->values[g->inputs[i]];
        bool dup = false;
        for (int32_t k = 0; k < i; k++)
            dup |= g->inputs[k] == g->inputs[i];
        if (dup || !(v->flags & IR_VALUE_INPUT))
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, ytree_get(m, "inputs"), where,
                                "input '%.200s' is %s", v->name,
                                dup ? "listed twice" : "not flagged as an input");
    }
    if (flagged_in != g->n_inputs)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, ytree_get(m, "inputs"), where,
                            "%d values are flagged as inputs but %d are listed", (int)flagged_in,
                            (int)g->n_inputs);
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (!(g->values[g->outputs[i]]->flags & IR_VALUE_OUTPUT))
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, ytree_get(m, "outputs"), where,
                                "output '%.200s' is not flagged as an output",
                                g->values[g->outputs[i]]->name);
    for (int32_t i = 0; i < g->n_values; i++) {
        if (!(g->values[i]->flags & IR_VALUE_OUTPUT)) continue;
        bool listed = false;
        for (int32_t k = 0; k < g->n_outputs && !listed; k++)
            listed = g->outputs[k] == i;
        if (!listed)
            return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, ytree_get(m, "outputs"), where,
                                "value '%.200s' is flagged as an output but not listed",
                                g->values[i]->name);
    }
    const ytree_node *nodes;
    if ((st = mfmt_need(m, "nodes", YTREE_SEQ, where, &nodes))) return st;
    if (nodes->n > INT32_MAX / 8)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, nodes, where, "too many nodes");
    for (size_t i = 0; i < nodes->n; i++) {
        const ytree_node *nm;
        snprintf(sub, sizeof sub, "%.300s.nodes[%zu]", where, i);
        if ((st = mfmt_item_map(nodes, i, sub, &nm))) return st;
        char *name = NULL, *op = NULL, *domain = NULL;
        int32_t *ins = NULL, *outs = NULL, n_in = 0, n_out = 0;
        st = mfmt_key_str(nm, "name", sub, &name);
        if (!st) st = mfmt_key_str(nm, "op_type", sub, &op);
        if (!st && !op[0]) st = mfmt_fail_at(MOPT_ERR_INVALID_MODEL, nm, sub, "empty op_type");
        if (!st) st = mfmt_key_str(nm, "domain", sub, &domain);
        if (!st) st = index_list(nm, "inputs", sub, -1, g->n_values, &ins, &n_in);
        if (!st) st = index_list(nm, "outputs", sub, -1, g->n_values, &outs, &n_out);
        ir_node *node = NULL;
        if (!st) {
            node = ir_graph_add_node(g, op, domain, name, n_in, n_out);
            if (!node) st = MOPT_ERR_OUT_OF_MEMORY;
        }
        if (!st) {
            memcpy(node->inputs, ins, (size_t)n_in * sizeof *ins);
            memcpy(node->outputs, outs, (size_t)n_out * sizeof *outs);
        }
        mopt_free(name);
        mopt_free(op);
        mopt_free(domain);
        mopt_free(ins);
        mopt_free(outs);
        if (st) return st;
        snprintf(sub, sizeof sub, "%.250s.nodes[%zu] ('%.60s', %.40s)", where, i, node->name,
                 node->op_type);
        const ytree_node *attrs;
        if ((st = mfmt_need(nm, "attributes", YTREE_SEQ, sub, &attrs))) return st;
        for (size_t k = 0; k < attrs->n; k++) {
            char asub[MFMT_WHERE_CAP + 32];
            snprintf(asub, sizeof asub, "%s.attributes[%zu]", sub, k);
            if ((st = load_attr(L, node, attrs->kids[k], asub, depth))) return st;
        }
    }
    return MOPT_OK;
}

mopt_status mfmt_load_graph(mfmt_loader *L, const ytree_node *m, const char *where, int depth,
                            ir_graph **out) {
    *out = NULL;
    if (depth > MFMT_MAX_GRAPH_DEPTH)
        return mfmt_fail_at(MOPT_ERR_INVALID_MODEL, m, where, "subgraphs nest more than %d levels",
                            MFMT_MAX_GRAPH_DEPTH);
    if (m->kind != YTREE_MAP)
        return mfmt_fail_at(MOPT_ERR_PARSE, m, where, "expected a graph mapping");
    ir_graph *g = ir_graph_create();
    if (!g) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory reading the header");
    mopt_status st = load_graph_into(L, g, m, where, depth);
    if (st) {
        ir_graph_destroy(g);
        return st;
    }
    *out = g;
    return MOPT_OK;
}
