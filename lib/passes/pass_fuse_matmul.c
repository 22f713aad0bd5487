/*
 * pass_fuse_matmul.c — turns matrix products and their epilogues into
 * mopt.FusedMatMul (docs/fused_ops.md), Y = act(alpha * op(A) @ op(B) + bias
 * + residual):
 *   - MatMul whose B (or A) is a Transpose swapping only the last two axes
 *     reads the Transpose's input with transB (transA) instead;
 *   - MatMul -> [Add(constant bias)] -> [Add(residual)] -> [activation];
 *   - Gemm (transA, transB, alpha, beta * C as the bias) when an activation
 *     or a residual Add follows.
 * The bias must broadcast to Y without growing it; the residual is a
 * non-constant tensor of Y's shape. Each intermediate value must have a
 * single consumer and not be a graph output. Activations: Relu, LeakyRelu,
 * Clip, HardSwish, HardSigmoid, Sigmoid, Tanh, Gelu (both forms).
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

typedef struct mm_match {
    int32_t a, b, bias, residual;
    bool ta, tb, gemm;
    float alpha, beta; /* beta: Gemm's scale of C */
    int n_transposes;  /* absorbed Transpose nodes */
    ir_node *bias_add, *res_add, *act;
    fu_act act_p;
} mm_match;

/* Transpose producing v that swaps exactly the last two axes: returns its
 * input, else -1. */
static int32_t swapped_source(const fu_graph *f, int32_t v) {
    const ir_graph *g = f->g;
    ir_node *t = fu_producer_is(f, v, "Transpose");
    if (!t || t->n_inputs != 1 || t->inputs[0] < 0) return -1;
    int32_t r = g->values[t->inputs[0]]->shape.rank;
    if (r < 2 || g->values[t->inputs[0]]->dtype != MOPT_DTYPE_F32) return -1;
    const int64_t *perm = NULL;
    int64_t np = ir_node_attr_ints(t, "perm", &perm);
    if (np < 0) return r == 2 ? t->inputs[0] : -1; /* default: reversed */
    if (np != r) return -1;
    for (int32_t i = 0; i < r - 2; i++)
        if (perm[i] != i) return -1;
    return perm[r - 2] == r - 1 && perm[r - 1] == r - 2 ? t->inputs[0] : -1;
}

/* bias (a shape) broadcasts to y without growing it, checked on known dims. */
static bool bias_fits(const ir_shape *y, const ir_shape *b) {
    if (b->rank < 0 || y->rank < 0 || b->rank > y->rank) return false;
    for (int32_t i = 0; i < b->rank; i++) {
        int32_t j = y->rank - b->rank + i;
        if (b->syms[i] == 0 && b->dims[i] == 1) continue;
        if (b->syms[i] != 0 || y->syms[j] != 0 || b->dims[i] != y->dims[j]) return false;
    }
    return true;
}

static bool match(const fu_graph *f, ir_node *mm, mm_match *m) {
    const ir_graph *g = f->g;
    memset(m, 0, sizeof *m);
    m->bias = m->residual = -1;
    m->alpha = m->beta = 1.0f;
    if (mm->n_outputs != 1 || mm->outputs[0] < 0 || mm->n_inputs < 2) return false;
    m->a = mm->inputs[0];
    m->b = mm->inputs[1];
    if (m->a < 0 || m->b < 0) return false;
    int32_t y = mm->outputs[0];
    const ir_value *yv = g->values[y];
    if (yv->dtype != MOPT_DTYPE_F32) return false;
    if (fu_is(mm, "Gemm")) {
        m->gemm = true;
        m->ta = ir_node_attr_int(mm, "transA", 0) != 0;
        m->tb = ir_node_attr_int(mm, "transB", 0) != 0;
        m->alpha = ir_node_attr_float(mm, "alpha", 1.0f);
        m->beta = ir_node_attr_float(mm, "beta", 1.0f);
        if (mm->n_inputs > 2 && mm->inputs[2] >= 0) {
            m->bias = mm->inputs[2];
            if (m->beta != 1.0f && !fu_const_f32(g, m->bias, &(int64_t){0})) return false;
        }
    } else {
        if (g->values[m->a]->shape.rank < 2 || g->values[m->b]->shape.rank < 2) return false;
        int32_t src = swapped_source(f, m->b);
        if (src >= 0) m->b = src, m->tb = true, m->n_transposes++;
        src = swapped_source(f, m->a);
        if (src >= 0) m->a = src, m->ta = true, m->n_transposes++;
    }
    int32_t cur = y;
    ir_node *next = fu_sole_consumer(f, cur, NULL);
    if (!m->gemm && fu_is(next, "Add")) {
        int o = fu_other_input(next, cur);
        if (o >= 0 && fu_const_f32(g, next->inputs[o], &(int64_t){0}) &&
            bias_fits(&yv->shape, &g->values[next->inputs[o]]->shape)) {
            m->bias = next->inputs[o];
            m->bias_add = next;
            cur = next->outputs[0];
            next = fu_sole_consumer(f, cur, NULL);
        }
    }
    if (fu_is(next, "Add")) {
        int o = fu_other_input(next, cur);
        int32_t r = o >= 0 ? next->inputs[o] : -1;
        if (r >= 0 && !fu_is_const(g, r) && g->values[r]->dtype == MOPT_DTYPE_F32 &&
            fu_same_shape(&g->values[r]->shape, &yv->shape)) {
            m->residual = r;
            m->res_add = next;
            cur = next->outputs[0];
            next = fu_sole_consumer(f, cur, NULL);
        }
    }
    if (next && next->inputs[0] == cur && fu_activation(g, next, &m->act_p)) m->act = next;
    if (m->gemm) return m->act || m->res_add;
    return m->n_transposes || m->bias_add || m->res_add || m->act;
}

static mopt_status fuse_one(fu_graph *f, ir_node *mm, mm_match *m) {
    ir_graph *g = f->g;
    ir_node *last = m->act ? m->act : m->res_add ? m->res_add : m->bias_add ? m->bias_add : mm;
    int32_t out = last->outputs[0];
    int32_t bias = m->bias;
    if (m->gemm && bias >= 0 && m->beta != 1.0f) { /* scale the constant C by beta */
        const ir_value *cv = g->values[bias];
        int64_t n = 0;
        const float *c = fu_const_f32(g, bias, &n);
        float *sc = mopt_malloc((size_t)(n > 0 ? n : 1) * sizeof *sc);
        if (!sc) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory fusing '%s'", mm->name);
        for (int64_t i = 0; i < n; i++)
            sc[i] = c[i] * m->beta;
        char base[256];
        snprintf(base, sizeof base, "%.200s_scaled", cv->name);
        bias = fu_add_f32_weight(g, base, cv->shape.rank, cv->shape.dims, sc);
        mopt_free(sc);
        if (bias < 0) return MOPT_ERR_OUT_OF_MEMORY;
    }
    int32_t n_in = m->residual >= 0 ? 4 : (bias >= 0 ? 3 : 2);
    if (!fu_use_mopt_domain(g)) return MOPT_ERR_OUT_OF_MEMORY;
    /* when nothing follows, the product node itself is replaced */
    ir_node *n = fu_replace_node(f, last, "FusedMatMul", "mopt", mm->name, n_in, out);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = m->a;
    n->inputs[1] = m->b;
    if (n_in > 2) n->inputs[2] = bias;
    if (n_in > 3) n->inputs[3] = m->residual;
    if ((m->ta && !fu_set_int(n, "transA", 1)) || (m->tb && !fu_set_int(n, "transB", 1)) ||
        (m->alpha != 1.0f && !fu_set_float(n, "alpha", m->alpha)) ||
        (m->act && !fu_set_activation(n, &m->act_p)))
        return MOPT_ERR_OUT_OF_MEMORY;
    mm->dead = true;
    if (m->bias_add) m->bias_add->dead = true;
    if (m->res_add) m->res_add->dead = true;
    /* absorbed Transposes die in DCE when nothing else reads them */
    return fu_refresh(f);
}

enum { N_FUSED, N_GEMM, N_BIAS, N_RES, N_ACT, N_TRANS };

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    mm_match m;
    if (!(fu_is(n, "MatMul") || fu_is(n, "Gemm")) || !match(f, n, &m)) return MOPT_OK;
    mopt_status st = fuse_one(f, n, &m);
    c[N_FUSED]++;
    c[N_BIAS] += m.bias_add != NULL;
    c[N_RES] += m.res_add != NULL;
    c[N_ACT] += m.act != NULL;
    c[N_TRANS] += m.n_transposes;
    c[N_GEMM] += m.gemm;
    return st;
}

static mopt_status finish(ir_graph *g, int32_t *c) {
    if (c[N_TRANS]) ir_graph_mark_dead_code(g);
    return MOPT_OK;
}

mopt_status pass_fuse_matmul(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit,
                                 finish,
                                 {"FusedMatMul", "from Gemm", "with bias", "with residual",
                                  "with activation", "transposes absorbed"},
                                 1u};
    return fu_run_pass(g, r, &pass);
}
