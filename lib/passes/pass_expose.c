/*
 * pass_expose.c — the "expose_values" option (`mopt compare --per-layer`):
 * after the passes, the values the optimized graph computes become extra
 * graph outputs, after the model's own, in node order (a topological
 * order), so one run hands back every intermediate tensor that survived the
 * optimizations under its ONNX name. Values fused into a node are gone and
 * cannot be exposed.
 *
 * Exposed: every value a live node of the main graph writes that is f32, and
 * the u8 values kept between static INT8 nodes (their writer carries
 * y_scale / y_zero_point): such a value is renamed "<name>:u8" and an added
 * DequantizeLinear writes the f32 value under the original name. The nodes
 * that were there compute what they computed before; only the added
 * DequantizeLinears are new, and they feed nothing but outputs.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/ops.h"
#include "passes/fusion.h"

#define EXPOSE_NAME_CAP 512

static mopt_status push_output(ir_graph *g, int32_t v) {
    int32_t *o = mopt_realloc(g->outputs, (size_t)(g->n_outputs + 1) * sizeof(int32_t));
    if (!o) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    g->outputs = o;
    g->outputs[g->n_outputs++] = v;
    g->values[v]->flags |= IR_VALUE_OUTPUT;
    return MOPT_OK;
}

/* u8 value v written by node n with y_scale/y_zero_point: renames v to
 * "<name>:u8" and adds DequantizeLinear(v) -> f32 value named as v was.
 * Returns the new value's index in *out. */
static mopt_status add_dequantize(ir_graph *g, const ir_node *n, int32_t v, int32_t *out) {
    char name[EXPOSE_NAME_CAP];
    ir_value *val = g->values[v];
    size_t len = strlen(val->name);
    if (len + 4 > sizeof name) {
        *out = -1; /* a name this long is not exposed */
        return MOPT_OK;
    }
    float scale = ir_node_attr_float(n, "y_scale", 0.f);
    uint8_t zp = (uint8_t)ir_node_attr_int(n, "y_zero_point", 0);
    char *renamed = mopt_malloc(len + 4);
    if (!renamed) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    snprintf(renamed, len + 4, "%s:u8", val->name);
    snprintf(name, sizeof name, "%s", val->name);
    ir_value_set_name(val, renamed);
    if (ir_graph_reindex(g) != 0) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t vs = fu_add_weight(g, "expose_scale", MOPT_DTYPE_F32, 0, NULL, &scale);
    int32_t vz = vs < 0 ? -1 : fu_add_weight(g, "expose_zero_point", MOPT_DTYPE_U8, 0, NULL, &zp);
    int32_t y = vz < 0 ? -1 : ir_graph_value(g, name);
    if (y < 0) return MOPT_ERR_OUT_OF_MEMORY;
    char node_name[EXPOSE_NAME_CAP + 16];
    snprintf(node_name, sizeof node_name, "expose/%s", name);
    ir_node *dq = ir_graph_add_node(g, "DequantizeLinear", "", node_name, 3, 1);
    if (!dq) return MOPT_ERR_OUT_OF_MEMORY;
    dq->op = ops_find("DequantizeLinear", "");
    if (!dq->op)
        return mopt_fail(MOPT_ERR_INTERNAL, "expose_values: DequantizeLinear is not registered");
    dq->inputs[0] = v;
    dq->inputs[1] = vs;
    dq->inputs[2] = vz;
    dq->outputs[0] = y;
    g->values[y]->producer = g->n_nodes - 1;
    g->values[y]->dtype = MOPT_DTYPE_F32;
    g->values[y]->shape = g->values[v]->shape;
    *out = y;
    return MOPT_OK;
}

mopt_status passes_expose_values(ir_graph *g, int32_t *n_exposed) {
    *n_exposed = 0;
    int32_t n_nodes = g->n_nodes; /* the DequantizeLinears added go after */
    for (int32_t i = 0; i < n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (n->dead) continue;
        for (int32_t k = 0; k < n->n_outputs; k++) {
            int32_t v = n->outputs[k];
            if (v < 0) continue;
            ir_value *val = g->values[v];
            if ((val->flags & (IR_VALUE_OUTPUT | IR_VALUE_INPUT)) || val->data || !val->name[0])
                continue;
            int32_t e = -1;
            if (val->dtype == MOPT_DTYPE_F32) {
                e = v;
            } else if (val->dtype == MOPT_DTYPE_U8 && n->n_outputs == 1 &&
                       ir_node_attr(n, "y_scale") && ir_node_attr(n, "y_zero_point")) {
                mopt_status st = add_dequantize(g, g->nodes[i], v, &e);
                if (st) return st;
            }
            if (e < 0) continue;
            mopt_status st = push_output(g, e);
            if (st) return st;
            (*n_exposed)++;
        }
    }
    return MOPT_OK;
}
