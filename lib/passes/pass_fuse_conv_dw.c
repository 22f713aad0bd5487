/*
 * pass_fuse_conv_dw.c — a 1x1 conv whose output only a depthwise conv
 * reads, as one mopt.FusedConvDw (issue 10; docs/fused_ops.md):
 *   FusedConv(X, W1, B1; 1x1, layout X_BLK16|Y_BLK16)  -> T
 *   FusedConv(T, W2, B2; group == C, layout X_BLK16|Y_BLK16) -> Y
 *   =>  FusedConvDw(X, W1, B1, W2, B2) -> Y
 * so its oneDNN impl runs the pair in bands of rows, the depthwise conv
 * reading T from L2 (lib/ops/onednn/conv_dw_onednn.c). Only where that pays:
 * f32, X with 16 channels, C a multiple of 16, no residual or post affine,
 * 2-D, the depthwise conv not dilated, and T larger than the L2 per image
 * (MobileNetV3-like's 16 -> 64 at 112x112: 0.80x of the pair; at 56x56, T
 * in L2, the bands lost 1-10%). Runs after the layout pass, which sets the
 * layouts it needs.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "ops/conv.h"
#include "passes/fusion.h"

/* The per-core L2 of the CPUs measured (Emerald Rapids: 2 MiB); the
 * library does not read the cache size. */
#define FUSE_DW_L2_BYTES (2 << 20)

/* n is an f32 blocked FusedConv with bias, no residual, no post affine, on a
 * constant 4-D W, dilations 1, not auto-padded. */
static bool plain_conv(const ir_graph *g, const ir_node *n) {
    if (!n || n->dead || strcmp(n->op_type, "FusedConv") != 0 || strcmp(n->domain, "mopt") != 0 ||
        n->n_inputs != 3 || n->n_outputs != 1 || n->inputs[2] < 0 ||
        !fu_is_const(g, n->inputs[1]) || !fu_is_const(g, n->inputs[2]))
        return false;
    const ir_value *w = g->values[n->inputs[1]];
    if (w->dtype != MOPT_DTYPE_F32 || g->values[n->inputs[0]]->dtype != MOPT_DTYPE_F32 ||
        w->shape.rank != 4 || ir_node_attr(n, "post_scale") || ir_node_attr(n, "post_shift") ||
        strcmp(ir_node_attr_string(n, "auto_pad", "NOTSET"), "NOTSET") != 0 ||
        ir_node_attr_int(n, "layout", 0) != (CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16))
        return false;
    const int64_t *v;
    int64_t k = ir_node_attr_ints(n, "dilations", &v);
    for (int64_t i = 0; i < k; i++)
        if (v[i] != 1) return false;
    return true;
}

static bool all_is(const ir_node *n, const char *name, int64_t want) {
    const int64_t *v;
    int64_t k = ir_node_attr_ints(n, name, &v);
    for (int64_t i = 0; i < k; i++)
        if (v[i] != want) return false;
    return true;
}

static mopt_status visit(fu_graph *f, ir_node *pw, int32_t *c) {
    ir_graph *g = f->g;
    if (pw->dead || !plain_conv(g, pw) || ir_node_attr_int(pw, "group", 1) != 1 ||
        !all_is(pw, "strides", 1) || !all_is(pw, "pads", 0))
        return MOPT_OK;
    const ir_value *w1 = g->values[pw->inputs[1]], *t = g->values[pw->outputs[0]];
    if (w1->shape.dims[1] != 16 || w1->shape.dims[2] != 1 || w1->shape.dims[3] != 1 ||
        t->shape.rank != 4)
        return MOPT_OK;
    for (int32_t i = 1; i < 4; i++)
        if (t->shape.syms[i] != 0) return MOPT_OK;
    int64_t C = t->shape.dims[1];
    if (C % 16 != 0 || C * t->shape.dims[2] * t->shape.dims[3] * 4 <= FUSE_DW_L2_BYTES)
        return MOPT_OK;
    ir_node *dw = fu_sole_consumer(f, pw->outputs[0], NULL);
    if (!dw || !plain_conv(g, dw) || dw->inputs[0] != pw->outputs[0] ||
        ir_node_attr_int(dw, "group", 1) != C || !fu_attrs_copyable(dw))
        return MOPT_OK;
    const ir_value *w2 = g->values[dw->inputs[1]];
    if (w2->shape.dims[0] != C || w2->shape.dims[1] != 1) return MOPT_OK;
    if (!fu_use_mopt_domain(g)) return MOPT_ERR_OUT_OF_MEMORY;
    int32_t x = pw->inputs[0], wv1 = pw->inputs[1], b1 = pw->inputs[2];
    int32_t wv2 = dw->inputs[1], b2 = dw->inputs[2];
    char name[256];
    snprintf(name, sizeof name, "%.240s", dw->name);
    const char *act = ir_node_attr_string(pw, "activation", "");
    const ir_attr *aa = ir_node_attr(pw, "activation_alpha");
    const ir_attr *ab = ir_node_attr(pw, "activation_beta");
    float alpha = ir_node_attr_float(pw, "activation_alpha", 0.f);
    float beta = ir_node_attr_float(pw, "activation_beta", 0.f);
    char act_copy[64];
    snprintf(act_copy, sizeof act_copy, "%s", act);
    ir_node *n = fu_replace_node(f, dw, "FusedConvDw", "mopt", name, 5, dw->outputs[0]);
    if (!n || !fu_copy_attrs(n, dw)) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = x;
    n->inputs[1] = wv1;
    n->inputs[2] = b1;
    n->inputs[3] = wv2;
    n->inputs[4] = b2;
    if ((act_copy[0] && !fu_set_string(n, "pw_activation", act_copy)) ||
        (aa && !fu_set_float(n, "pw_activation_alpha", alpha)) ||
        (ab && !fu_set_float(n, "pw_activation_beta", beta)))
        return MOPT_ERR_OUT_OF_MEMORY;
    pw->dead = true;
    c[0]++;
    return fu_refresh(f);
}

mopt_status pass_fuse_conv_dw(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"1x1 conv -> depthwise conv as FusedConvDw"}, 1u};
    return fu_run_pass(g, r, &pass);
}
