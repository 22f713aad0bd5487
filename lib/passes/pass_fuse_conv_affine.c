/*
 * pass_fuse_conv_affine.c — folds a constant per-channel (or scalar) Mul or
 * Add that follows a Conv or ConvTranspose into the convolution's weights
 * and bias:
 *   Conv(x, W, B) -> Mul(., s)  =>  Conv(x, W * s[o], B * s[o])
 *   Conv(x, W, B) -> Add(., t)  =>  Conv(x, W, B + t[o])      (B = 0 if absent)
 * s and t are f32 constants with one value, or one per output channel laid
 * out along the channel axis ([C, 1, 1], [1, C, 1, 1], ...). This is how
 * exporters write an inference BatchNormalization or a learnable affine
 * (PP-LCNet's "lab" blocks, paddle2onnx). After a ConvTranspose (W
 * [C_in, C_out / group, k...]) it also folds an inference
 * BatchNormalization (a Conv's is fuse_conv_bn's, which runs first): PP-OCR
 * det's head writes ConvTranspose -> Add(bias) -> BatchNormalization.
 * Needs constant W (and B), a convolution output read only by the
 * Mul/Add/BN, and runs to a fixed point in one sweep (a folded Mul's new
 * Conv is seen by the Add after it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

/* The c per-output-channel values of constant v against a Conv output of
 * rank r, into out; false when v is not such a constant. */
static bool channel_values(const ir_graph *g, int32_t v, int32_t r, int64_t c, float *out) {
    int64_t n = 0;
    const float *p = fu_const_f32(g, v, &n);
    if (!p) return false;
    const ir_shape *s = &g->values[v]->shape;
    if (s->rank < 0 || s->rank > r || !ir_shape_is_concrete(s)) return false;
    if (n == 1) {
        for (int64_t i = 0; i < c; i++)
            out[i] = p[0];
        return true;
    }
    int32_t ch = s->rank - (r - 1); /* the axis of s under the channel axis */
    if (n != c || ch < 0) return false;
    for (int32_t i = 0; i < s->rank; i++)
        if (i != ch && s->dims[i] != 1) return false;
    memcpy(out, p, (size_t)c * sizeof *out);
    return true;
}

/* The inference BatchNormalization bn (constant parameters, c channels) as
 * y * sc + sh; false when it is not one. */
static bool bn_values(const ir_graph *g, const ir_node *bn, int64_t c, float *sc, float *sh) {
    if (bn->n_inputs != 5 || ir_node_attr_int(bn, "training_mode", 0) != 0) return false;
    const float *p[4];
    for (int k = 0; k < 4; k++) {
        int64_t n = 0;
        p[k] = fu_const_f32(g, bn->inputs[1 + k], &n);
        if (!p[k] || n != c) return false;
    }
    float eps = ir_node_attr_float(bn, "epsilon", 1e-5f);
    for (int64_t o = 0; o < c; o++) {
        sc[o] = p[0][o] / sqrtf(p[3][o] + eps);
        sh[o] = p[1][o] - p[2][o] * sc[o];
    }
    return true;
}

/* W * sc per output channel into nw: Conv W [c, ...]; ConvTranspose W
 * [C_in, c / group, k...] (output channel gi * c/group + j at W[i, j, ...],
 * gi = i / (C_in / group)). */
static void scale_weights(const ir_value *wv, const float *w, bool transpose, int64_t group,
                          int64_t c, const float *sc, float *nw) {
    int64_t wn = ir_shape_numel(&wv->shape);
    if (!transpose) {
        int64_t per = wn / c;
        for (int64_t o = 0; o < c; o++)
            for (int64_t i = 0; i < per; i++)
                nw[o * per + i] = w[o * per + i] * sc[o];
        return;
    }
    int64_t cin = wv->shape.dims[0], og = wv->shape.dims[1], k = wn / (cin * og);
    for (int64_t i = 0; i < cin; i++) {
        int64_t gi = i / (cin / group);
        for (int64_t j = 0; j < og; j++)
            for (int64_t t = 0; t < k; t++)
                nw[(i * og + j) * k + t] = w[(i * og + j) * k + t] * sc[gi * og + j];
    }
}

enum { OP_MUL, OP_ADD, OP_BN };

/* Tries one Mul/Add/BatchNormalization node; *done tells whether it was
 * folded. */
static mopt_status fold_one(fu_graph *f, ir_node *op, int kind, bool *done) {
    ir_graph *g = f->g;
    *done = false;
    if (op->n_outputs < 1 || op->outputs[0] < 0) return MOPT_OK;
    if (kind != OP_BN && (op->n_inputs != 2 || op->n_outputs != 1)) return MOPT_OK;
    for (int32_t k = 1; k < op->n_outputs; k++)
        if (op->outputs[k] >= 0 && f->uses[op->outputs[k]] > 0) return MOPT_OK;
    int k = -1;
    ir_node *conv = NULL;
    bool transpose = false;
    for (int i = 0; i < (kind == OP_BN ? 1 : 2) && !conv; i++) {
        conv = fu_producer_is(f, op->inputs[i], "Conv");
        /* a Conv's BatchNormalization is fuse_conv_bn's */
        if (kind == OP_BN && conv) conv = NULL;
        if (!conv) transpose = (conv = fu_producer_is(f, op->inputs[i], "ConvTranspose")) != NULL;
        k = i;
    }
    if (!conv || fu_sole_consumer(f, op->inputs[k], NULL) != op || conv->n_inputs < 2 ||
        conv->n_outputs != 1 || !fu_attrs_copyable(conv))
        return MOPT_OK;
    const ir_value *wv = conv->inputs[1] >= 0 ? g->values[conv->inputs[1]] : NULL;
    int64_t wn = 0;
    const float *w = wv ? fu_const_f32(g, conv->inputs[1], &wn) : NULL;
    if (!w || wv->shape.rank < 3 || !ir_shape_is_concrete(&wv->shape)) return MOPT_OK;
    if (g->values[op->inputs[k]]->dtype != MOPT_DTYPE_F32) return MOPT_OK;
    int64_t group = ir_node_attr_int(conv, "group", 1);
    if (group < 1) return MOPT_OK;
    int64_t c = transpose ? wv->shape.dims[1] * group : wv->shape.dims[0];
    if (c <= 0 || wn % c != 0 || (transpose && wv->shape.dims[0] % group != 0)) return MOPT_OK;
    const float *b = NULL;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0) {
        int64_t bn = 0;
        b = fu_const_f32(g, conv->inputs[2], &bn);
        if (!b || bn != c) return MOPT_OK;
    }
    bool scales = kind != OP_ADD;
    float *sc = mopt_malloc((size_t)c * sizeof *sc);
    float *sh = mopt_malloc((size_t)c * sizeof *sh);
    float *nb = mopt_malloc((size_t)c * sizeof *nb);
    float *nw = scales ? mopt_malloc((size_t)wn * sizeof *nw) : NULL;
    mopt_status st = MOPT_OK;
    if (!sc || !sh || !nb || (scales && !nw)) {
        st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding '%s' into a convolution",
                       op->name);
        goto out;
    }
    if (kind == OP_BN) {
        if (!bn_values(g, op, c, sc, sh)) goto out;
    } else {
        if (!channel_values(g, op->inputs[1 - k], wv->shape.rank, c, kind == OP_MUL ? sc : sh))
            goto out;
        for (int64_t o = 0; o < c; o++) {
            if (kind == OP_MUL) sh[o] = 0.0f;
            if (kind == OP_ADD) sc[o] = 1.0f;
        }
    }
    for (int64_t o = 0; o < c; o++) {
        float bo = b ? b[o] : 0.0f;
        nb[o] = kind == OP_MUL ? bo * sc[o] : kind == OP_ADD ? bo + sh[o] : bo * sc[o] + sh[o];
    }
    if (scales) scale_weights(wv, w, transpose, group, c, sc, nw);
    char base[256];
    int32_t wnew = conv->inputs[1];
    if (scales) {
        snprintf(base, sizeof base, "%.200s_scaled", wv->name);
        wnew = fu_add_f32_weight(g, base, wv->shape.rank, wv->shape.dims, nw);
    }
    snprintf(base, sizeof base, "%.200s_bias_folded", op->name);
    int32_t bnew = wnew >= 0 ? fu_add_f32_weight(g, base, 1, &c, nb) : -1;
    if (bnew < 0) {
        st = mopt_fail_context(MOPT_ERR_OUT_OF_MEMORY, "folding '%s'", op->name);
        goto out;
    }
    ir_node *n = fu_replace_node(f, op, transpose ? "ConvTranspose" : "Conv", "", conv->name, 3,
                                 op->outputs[0]);
    if (!n) {
        st = MOPT_ERR_OUT_OF_MEMORY;
        goto out;
    }
    n->inputs[0] = conv->inputs[0];
    n->inputs[1] = wnew;
    n->inputs[2] = bnew;
    if (!fu_copy_attrs(n, conv)) {
        st = MOPT_ERR_OUT_OF_MEMORY;
        goto out;
    }
    conv->dead = true;
    *done = true;
    st = fu_refresh(f);
out:
    mopt_free(sc);
    mopt_free(sh);
    mopt_free(nb);
    mopt_free(nw);
    return st;
}

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    int kind = fu_is(n, "Mul")                  ? OP_MUL
               : fu_is(n, "Add")                ? OP_ADD
               : fu_is(n, "BatchNormalization") ? OP_BN
                                                : -1;
    if (kind < 0) return MOPT_OK;
    bool done = false;
    mopt_status st = fold_one(f, n, kind, &done);
    if (done) c[kind]++;
    return st;
}

mopt_status pass_fuse_conv_affine(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit,
                                 NULL,
                                 {"Conv+Mul(constant) folded", "Conv+Add(constant) folded",
                                  "ConvTranspose+BatchNormalization folded"},
                                 7u};
    return fu_run_pass(g, r, &pass);
}
