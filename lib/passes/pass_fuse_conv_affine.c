/*
 * pass_fuse_conv_affine.c — folds a constant per-channel (or scalar) Mul or
 * Add that follows a Conv into the convolution's weights and bias:
 *   Conv(x, W, B) -> Mul(., s)  =>  Conv(x, W * s[o], B * s[o])
 *   Conv(x, W, B) -> Add(., t)  =>  Conv(x, W, B + t[o])      (B = 0 if absent)
 * s and t are f32 constants with one value, or one per output channel laid
 * out along the channel axis ([C, 1, 1], [1, C, 1, 1], ...). This is how
 * exporters write an inference BatchNormalization or a learnable affine
 * (PP-LCNet's "lab" blocks, paddle2onnx). Needs constant W (and B), a Conv
 * output read only by the Mul/Add, and runs to a fixed point in one sweep
 * (a folded Mul's new Conv is seen by the Add after it).
 */
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

/* Tries one Mul/Add node; *done tells whether it was folded. */
static mopt_status fold_one(fu_graph *f, ir_node *op, bool mul, bool *done) {
    ir_graph *g = f->g;
    *done = false;
    if (op->n_inputs != 2 || op->n_outputs != 1 || op->outputs[0] < 0) return MOPT_OK;
    int k = -1;
    ir_node *conv = NULL;
    for (int i = 0; i < 2 && !conv; i++) {
        conv = fu_producer_is(f, op->inputs[i], "Conv");
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
    int64_t c = wv->shape.dims[0];
    if (c <= 0 || wn % c != 0) return MOPT_OK;
    const float *b = NULL;
    if (conv->n_inputs > 2 && conv->inputs[2] >= 0) {
        int64_t bn = 0;
        b = fu_const_f32(g, conv->inputs[2], &bn);
        if (!b || bn != c) return MOPT_OK;
    }
    float *cv = mopt_malloc((size_t)c * sizeof *cv);
    float *nb = mopt_malloc((size_t)c * sizeof *nb);
    float *nw = mul ? mopt_malloc((size_t)wn * sizeof *nw) : NULL;
    mopt_status st = MOPT_OK;
    if (!cv || !nb || (mul && !nw)) {
        st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory folding '%s' into a Conv", op->name);
        goto out;
    }
    if (!channel_values(g, op->inputs[1 - k], wv->shape.rank, c, cv)) goto out;
    int64_t per = wn / c;
    for (int64_t o = 0; o < c; o++) {
        float bo = b ? b[o] : 0.0f;
        nb[o] = mul ? bo * cv[o] : bo + cv[o];
        for (int64_t i = 0; mul && i < per; i++)
            nw[o * per + i] = w[o * per + i] * cv[o];
    }
    char base[256];
    int32_t wnew = conv->inputs[1];
    if (mul) {
        snprintf(base, sizeof base, "%.200s_scaled", wv->name);
        wnew = fu_add_f32_weight(g, base, wv->shape.rank, wv->shape.dims, nw);
    }
    snprintf(base, sizeof base, "%.200s_bias_folded", op->name);
    int32_t bnew = wnew >= 0 ? fu_add_f32_weight(g, base, 1, &c, nb) : -1;
    if (bnew < 0) {
        st = mopt_fail_context(MOPT_ERR_OUT_OF_MEMORY, "folding '%s'", op->name);
        goto out;
    }
    ir_node *n = fu_replace_node(f, op, "Conv", "", conv->name, 3, op->outputs[0]);
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
    mopt_free(cv);
    mopt_free(nb);
    mopt_free(nw);
    return st;
}

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    bool mul = fu_is(n, "Mul");
    if (!mul && !fu_is(n, "Add")) return MOPT_OK;
    bool done = false;
    mopt_status st = fold_one(f, n, mul, &done);
    if (done) c[mul ? 0 : 1]++;
    return st;
}

mopt_status pass_fuse_conv_affine(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {
        visit, NULL, {"Conv+Mul(constant) folded", "Conv+Add(constant) folded"}, 3u};
    return fu_run_pass(g, r, &pass);
}
