/*
 * node_view.c — builds an op's view of a node (see node_view.h).
 */
#include "ops/node_view.h"

#include <string.h>

#include "ops/bridge.h"
#include "ops/op_common.h"

static void omitted(op_tensor *t) {
    t->dtype = MOPT_DTYPE_UNDEFINED;
    t->data = NULL;
    ir_shape_set_unknown(&t->shape);
}

/* Fills buf from the rows of an op's attribute table (ops.h). */
static mopt_status parse_attrs(const op_ctx *ctx, const op_attr_spec *t, int n, char *buf) {
    for (int i = 0; i < n; i++) {
        const op_attr_spec *a = &t[i];
        void *f = buf + a->offset;
        mopt_status st = MOPT_OK;
        switch (a->kind) {
        case OP_ATTR_INT: *(int64_t *)f = ir_node_attr_int(ctx->node, a->name, a->def_i); break;
        case OP_ATTR_FLOAT: *(float *)f = ir_node_attr_float(ctx->node, a->name, a->def_f); break;
        case OP_ATTR_BOOL01: st = op_attr_bool(ctx, a->name, a->def_i, f); break;
        case OP_ATTR_NONZERO:
            *(bool *)f = ir_node_attr_int(ctx->node, a->name, a->def_i) != 0;
            break;
        case OP_ATTR_INT_OPT:
            *(bool *)(buf + a->has_offset) = op_attr_int_opt(ctx, a->name, f);
            break;
        default: st = op_fail(ctx, MOPT_ERR_INTERNAL, "attribute '%s' of unknown kind", a->name);
        }
        if (st) return st;
    }
    return MOPT_OK;
}

mopt_status op_parse_params(const op_ctx *ctx, void *buf) {
    const op_def *d = ctx->def;
    if (!d->params_size) return MOPT_OK;
    if (d->params_size > OP_PARAMS_CAP || (!d->parse && !d->attrs))
        return op_fail(ctx, MOPT_ERR_INTERNAL, "params of %zu bytes (cap %d) or no parse",
                       d->params_size, OP_PARAMS_CAP);
    memset(buf, 0, d->params_size);
    mopt_status st = parse_attrs(ctx, d->attrs, d->n_attrs, buf);
    if (!st && d->parse) st = d->parse(ctx, buf);
    return st;
}

mopt_status op_view_init(op_view *v, const op_view_src *src, const ir_node *n, const void *params) {
    const ir_graph *g = src->graph;
    const op_def *d = n->op;
    if (n->n_inputs > OP_MAX_IO || n->n_outputs > OP_MAX_IO)
        return mopt_fail(MOPT_ERR_LIMIT, "node '%s' (%s) has more than %d inputs or outputs",
                         n->name, n->op_type, OP_MAX_IO);
    v->n_in = n->n_inputs;
    v->n_out = n->n_outputs;
    op_ctx *c = &v->ctx;
    c->node = n;
    c->def = d;
    c->graph = src->graph;
    c->opset = ir_graph_opset(g, n->domain);
    c->runtime = src->runtime;
    c->params = NULL;
    c->state = NULL;
    c->scratch = NULL;
    c->work = NULL;
    c->threads = src->threads > 0 ? src->threads : 1;
    c->precision = src->precision;
    c->opt_level = src->opt_level;
    c->subgraphs = src->subgraphs;
    c->kv_tiles = src->kv_tiles;
    c->n_kv_tiles = src->n_kv_tiles;
    for (int32_t k = 0; k < n->n_inputs; k++) {
        int32_t val = n->inputs[k];
        op_tensor *t = &v->in[k];
        if (val < 0) {
            omitted(t);
        } else if (src->values) {
            *t = src->values[val];
        } else {
            const ir_value *iv = g->values[val];
            t->dtype = iv->dtype;
            t->shape = iv->shape;
            t->data = src->data                            ? (void *)src->data[val]
                      : (iv->flags & IR_VALUE_INITIALIZER) ? iv->data
                                                           : NULL;
        }
    }
    /* an op may look at optional inputs up to its max_inputs: past the
     * node's count they are omitted */
    int tail = d && d->max_inputs < OP_MAX_IO ? d->max_inputs : OP_MAX_IO;
    for (int k = n->n_inputs; k < tail; k++)
        omitted(&v->in[k]);
    for (int32_t k = 0; k < n->n_outputs; k++) {
        op_tensor *t = &v->out[k];
        int32_t val = n->outputs[k];
        omitted(t);
        if (src->outputs_from_ir && val >= 0) {
            t->dtype = g->values[val]->dtype;
            t->shape = g->values[val]->shape;
        }
    }
    if (params || !d || !d->params_size) {
        c->params = params;
        return MOPT_OK;
    }
    c->params = v->params_buf;
    return op_parse_params(c, v->params_buf);
}

mopt_status op_view_infer(op_view *v) {
    return ops_bridge_infer(&v->ctx, v->in, v->n_in, v->out, v->n_out);
}
