/*
 * pass_fuse_qkv.c — merges the Q, K and V projections of a fused attention
 * into one product (opt_level 3): where a mopt.Attention (layout "bsh") reads
 * Q, K and V from three products of the same input A by constant 2-D weights
 * of one shape,
 *
 *   Q = A @ Wq [+ bq],  K = A @ Wk [+ bk],  V = A @ Wv [+ bv]
 *       (MatMul, or mopt.FusedMatMul with at most a bias: no residual,
 *        activation, alpha or transA; transB alike on the three)
 *
 * they become one mopt.FusedMatMul, QKV = A @ [Wq Wk Wv] + [bq bk bv] (a
 * missing bias is zeros when another is present), which the Attention reads
 * as Q, K and V with packed_qkv=1 (docs/fused_ops.md). A is read and, at
 * precision int8, quantized once instead of three times, and the product is
 * three times wider. Each projection's output must be read by the Attention
 * alone (once) and not be a graph output; otherwise nothing changes.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

/* One projection: its node, weight, bias (-1: none) and width N. */
typedef struct proj {
    ir_node *node;
    int32_t w, bias;
    const float *wd, *bd;
    int64_t k, n;
    bool tb;
} proj;

/* A product node that is only A @ B [+ bias] with a constant 2-D f32 B. */
static bool match_proj(const fu_graph *f, int32_t y, proj *p) {
    const ir_graph *g = f->g;
    memset(p, 0, sizeof *p);
    p->bias = -1;
    ir_node *n = fu_producer(f, y);
    if (!n || n->n_outputs != 1 || n->outputs[0] != y || n->n_inputs < 2 || n->inputs[0] < 0 ||
        n->inputs[1] < 0)
        return false;
    if (g->values[y]->dtype != MOPT_DTYPE_F32 || f->uses[y] != 1) return false;
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == y) return false;
    if (fu_is(n, "MatMul")) {
        if (n->n_inputs != 2) return false;
    } else if (!n->dead && strcmp(n->domain, "mopt") == 0 &&
               strcmp(n->op_type, "FusedMatMul") == 0) {
        if (n->n_inputs > 3 || ir_node_attr_int(n, "transA", 0) != 0 ||
            ir_node_attr_float(n, "alpha", 1.0f) != 1.0f ||
            ir_node_attr_string(n, "activation", "")[0] != '\0')
            return false;
        p->tb = ir_node_attr_int(n, "transB", 0) != 0;
        if (n->n_inputs == 3 && n->inputs[2] >= 0) p->bias = n->inputs[2];
    } else {
        return false;
    }
    const ir_value *wv = g->values[n->inputs[1]];
    int64_t numel = 0;
    if (wv->shape.rank != 2 || !(p->wd = fu_const_f32(g, n->inputs[1], &numel))) return false;
    p->k = wv->shape.dims[p->tb ? 1 : 0];
    p->n = wv->shape.dims[p->tb ? 0 : 1];
    if (p->k <= 0 || p->n <= 0) return false;
    if (p->bias >= 0) {
        const ir_value *bv = g->values[p->bias];
        /* [N] or [1, ..., 1, N] */
        if (!(p->bd = fu_const_f32(g, p->bias, &numel)) || numel != p->n || bv->shape.rank < 1 ||
            bv->shape.dims[bv->shape.rank - 1] != p->n)
            return false;
    }
    const ir_value *av = g->values[n->inputs[0]];
    if (av->dtype != MOPT_DTYPE_F32 || av->shape.rank != 3) return false;
    p->node = n;
    p->w = n->inputs[1];
    return true;
}

static mopt_status merge(fu_graph *f, ir_node *attn, proj *p) {
    ir_graph *g = f->g;
    const int64_t K = p[0].k, N = p[0].n, N3 = 3 * N;
    const bool tb = p[0].tb, any_bias = p[0].bias >= 0 || p[1].bias >= 0 || p[2].bias >= 0;
    float *w = mopt_malloc((size_t)(K * N3) * sizeof *w);
    float *b = any_bias ? mopt_calloc((size_t)N3, sizeof *b) : NULL;
    if (!w || (any_bias && !b)) {
        mopt_free(w);
        mopt_free(b);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory merging Q, K, V of '%s'",
                         attn->name);
    }
    for (int j = 0; j < 3; j++) {
        if (tb) /* [N, K] blocks stacked: [3N, K] */
            memcpy(w + (size_t)(j * N * K), p[j].wd, (size_t)(N * K) * sizeof *w);
        else /* [K, N] side by side: [K, 3N] */
            for (int64_t r = 0; r < K; r++)
                memcpy(w + (size_t)(r * N3 + j * N), p[j].wd + (size_t)(r * N),
                       (size_t)N * sizeof *w);
        if (p[j].bias >= 0) memcpy(b + (size_t)(j * N), p[j].bd, (size_t)N * sizeof *b);
    }
    char base[256];
    snprintf(base, sizeof base, "%.200s_qkv", g->values[p[0].w]->name);
    const int64_t wdims[2] = {tb ? N3 : K, tb ? K : N3};
    int32_t wv = fu_add_f32_weight(g, base, 2, wdims, w);
    mopt_free(w);
    int32_t bv = -1;
    if (any_bias) {
        snprintf(base, sizeof base, "%.200s_qkv_bias", g->values[p[0].w]->name);
        bv = fu_add_f32_weight(g, base, 1, &N3, b);
    }
    mopt_free(b);
    if (wv < 0 || (any_bias && bv < 0)) return MOPT_ERR_OUT_OF_MEMORY;
    /* the packed output: Q's shape, last dim 3N */
    snprintf(base, sizeof base, "%.200s_qkv", g->values[attn->inputs[0]]->name);
    int32_t out = ir_graph_new_value(g, base);
    if (out < 0) return MOPT_ERR_OUT_OF_MEMORY;
    ir_value *ov = g->values[out];
    ov->shape = g->values[attn->inputs[0]]->shape;
    ov->shape.dims[2] = N3;
    ov->shape.syms[2] = 0;
    ov->dtype = MOPT_DTYPE_F32;
    if (!fu_use_mopt_domain(g)) return MOPT_ERR_OUT_OF_MEMORY;
    /* f's arrays cover the new values before fu_replace_node writes them */
    mopt_status st = fu_refresh(f);
    if (st) return st;
    int32_t a = p[0].node->inputs[0];
    char name[256];
    snprintf(name, sizeof name, "%.200s_qkv", p[0].node->name);
    /* at Q's place: after A's producer, before the Attention */
    ir_node *n = fu_replace_node(f, p[0].node, "FusedMatMul", "mopt", name, any_bias ? 3 : 2, out);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = a;
    n->inputs[1] = wv;
    if (any_bias) n->inputs[2] = bv;
    if (tb && !fu_set_int(n, "transB", 1)) return MOPT_ERR_OUT_OF_MEMORY;
    p[1].node->dead = p[2].node->dead = true;
    for (int k = 0; k < 3; k++)
        attn->inputs[k] = out;
    if (!fu_set_int(attn, "packed_qkv", 1)) return MOPT_ERR_OUT_OF_MEMORY;
    return fu_refresh(f);
}

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    if (n->dead || strcmp(n->domain, "mopt") != 0 || strcmp(n->op_type, "Attention") != 0 ||
        n->n_inputs < 3 || n->n_outputs != 1)
        return MOPT_OK;
    if (strcmp(ir_node_attr_string(n, "layout", "bhsd"), "bsh") != 0 ||
        ir_node_attr_int(n, "packed_qkv", 0) != 0 || ir_node_attr_int(n, "num_heads", 0) <= 0)
        return MOPT_OK;
    const int32_t q = n->inputs[0], k = n->inputs[1], v = n->inputs[2];
    if (q < 0 || k < 0 || v < 0 || q == k || q == v || k == v) return MOPT_OK;
    proj p[3];
    if (!match_proj(f, q, &p[0]) || !match_proj(f, k, &p[1]) || !match_proj(f, v, &p[2]))
        return MOPT_OK;
    const int32_t a = p[0].node->inputs[0];
    for (int j = 1; j < 3; j++)
        if (p[j].node->inputs[0] != a || p[j].k != p[0].k || p[j].n != p[0].n || p[j].tb != p[0].tb)
            return MOPT_OK;
    if (p[0].n % ir_node_attr_int(n, "num_heads", 1) != 0) return MOPT_OK;
    c[0]++;
    return merge(f, n, p);
}

mopt_status pass_fuse_qkv(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"attentions with Q, K, V as one product"}, 1u};
    return fu_run_pass(g, r, &pass);
}
