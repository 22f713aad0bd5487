/*
 * pass_fuse_conv_bn.c — folds an inference BatchNormalization that follows a
 * Conv into the convolution's weights and bias:
 *   a[c] = scale[c] / sqrt(var[c] + eps)
 *   W'[c, ...] = W[c, ...] * a[c]
 *   B'[c] = (B[c] - mean[c]) * a[c] + beta[c]     (B = 0 when absent)
 * Needs constant W, B and BN parameters and a Conv output read only by the
 * BN. The new weights are new initializers (the old ones may be shared).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

/* Constant f32 vector of exactly c elements, or NULL. */
static const float *channel_param(const ir_graph *g, int32_t v, int64_t c) {
    int64_t n = 0;
    const float *p = fu_const_f32(g, v, &n);
    return p && n == c ? p : NULL;
}

/* Tries one BN node; *done tells whether it was folded. */
static mopt_status fold_one(fu_graph *f, ir_node *bn, bool *done) {
    ir_graph *g = f->g;
    *done = false;
    if (bn->n_inputs != 5 || bn->n_outputs < 1 || bn->outputs[0] < 0) return MOPT_OK;
    for (int32_t k = 1; k < bn->n_outputs; k++)
        if (bn->outputs[k] >= 0 && f->uses[bn->outputs[k]] > 0) return MOPT_OK;
    if (ir_node_attr_int(bn, "training_mode", 0) != 0) return MOPT_OK;
    int32_t x = bn->inputs[0];
    ir_node *conv = fu_producer_is(f, x, "Conv");
    if (!conv || fu_sole_consumer(f, x, NULL) != bn || conv->n_inputs < 2 ||
        !fu_attrs_copyable(conv))
        return MOPT_OK;
    const ir_value *wv = conv->inputs[1] >= 0 ? g->values[conv->inputs[1]] : NULL;
    int64_t wn = 0;
    const float *w = wv ? fu_const_f32(g, conv->inputs[1], &wn) : NULL;
    if (!w || wv->shape.rank < 3 || !ir_shape_is_concrete(&wv->shape)) return MOPT_OK;
    int64_t c = wv->shape.dims[0];
    if (c <= 0 || wn % c != 0) return MOPT_OK;
    const float *b = NULL;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0) {
        b = channel_param(g, conv->inputs[2], c);
        if (!b) return MOPT_OK;
    }
    const float *scale = channel_param(g, bn->inputs[1], c);
    const float *beta = channel_param(g, bn->inputs[2], c);
    const float *mean = channel_param(g, bn->inputs[3], c);
    const float *var = channel_param(g, bn->inputs[4], c);
    if (!scale || !beta || !mean || !var) return MOPT_OK;
    float eps = ir_node_attr_float(bn, "epsilon", 1e-5f);

    int64_t per = wn / c;
    float *nw = mopt_malloc((size_t)wn * sizeof *nw);
    float *nb = mopt_malloc((size_t)c * sizeof *nb);
    if (!nw || !nb) {
        mopt_free(nw);
        mopt_free(nb);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding BatchNormalization '%s'",
                         bn->name);
    }
    for (int64_t j = 0; j < c; j++) {
        const float a = scale[j] / sqrtf(var[j] + eps);
        for (int64_t i = 0; i < per; i++)
            nw[j * per + i] = w[j * per + i] * a;
        nb[j] = ((b ? b[j] : 0.0f) - mean[j]) * a + beta[j];
    }
    char base[256];
    snprintf(base, sizeof base, "%.200s_bn_folded", wv->name);
    int32_t wnew = fu_add_f32_weight(g, base, wv->shape.rank, wv->shape.dims, nw);
    snprintf(base, sizeof base, "%.200s_bias_bn_folded", conv->name);
    int32_t bnew = wnew >= 0 ? fu_add_f32_weight(g, base, 1, &c, nb) : -1;
    mopt_free(nw);
    mopt_free(nb);
    if (bnew < 0) return mopt_fail_context(MOPT_ERR_OUT_OF_MEMORY, "folding '%s'", bn->name);
    ir_node *n = fu_replace_node(f, bn, "Conv", "", conv->name, 3, bn->outputs[0]);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = conv->inputs[0];
    n->inputs[1] = wnew;
    n->inputs[2] = bnew;
    if (!fu_copy_attrs(n, conv)) return MOPT_ERR_OUT_OF_MEMORY;
    conv->dead = true;
    *done = true;
    return fu_refresh(f);
}

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    if (!fu_is(n, "BatchNormalization")) return MOPT_OK;
    bool done = false;
    mopt_status st = fold_one(f, n, &done);
    c[0] += done;
    return st;
}

mopt_status pass_fuse_conv_bn(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"Conv+BatchNormalization folded"}, 1u};
    return fu_run_pass(g, r, &pass);
}
