/*
 * pass_fuse_layernorm.c — recognizes the decomposed layer normalization that
 * exporters emit before opset 17 and replaces it by LayerNormalization:
 *
 *   m = ReduceMean(x, last axis)        d = Sub(x, m)
 *   v = ReduceMean(Pow(d, 2) | Mul(d, d), last axis)
 *   y = Div(d, Sqrt(Add(v, eps)))       [Mul(y, gamma)] [Add(., beta)]
 *
 * ReduceMean takes its axes as an attribute before opset 18 and as an input
 * from 18; both must reduce only the last axis with keepdims=1. gamma and
 * beta are constants of rank <= 1 (a missing gamma becomes ones). Every
 * intermediate value must be read only inside the pattern and not be a
 * graph output.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

/* n is a ReduceMean of input `x` (of rank `rank`) over exactly its last
 * axis, keeping dims. */
static bool reduces_last_axis(const ir_graph *g, const ir_node *n, int32_t x, int32_t rank) {
    if (!fu_is(n, "ReduceMean") || n->inputs[0] != x || n->n_outputs != 1) return false;
    if (ir_node_attr_int(n, "keepdims", 1) != 1) return false;
    int64_t axis;
    if (ir_graph_opset(g, "") >= 18) {
        if (n->n_inputs != 2 || !fu_is_const(g, n->inputs[1])) return false;
        const ir_value *a = g->values[n->inputs[1]];
        if (a->dtype != MOPT_DTYPE_I64 || a->nbytes != sizeof(int64_t)) return false;
        axis = *(const int64_t *)a->data;
    } else {
        const int64_t *axes = NULL;
        if (n->n_inputs != 1 || ir_node_attr_ints(n, "axes", &axes) != 1) return false;
        axis = axes[0];
    }
    return axis == -1 || axis == rank - 1;
}

/* A constant f32 affine parameter of rank <= 1 whose size is 1 or d (d < 0:
 * unknown). */
static bool affine_param(const ir_graph *g, int32_t v, int64_t d) {
    int64_t n = 0;
    if (!fu_const_f32(g, v, &n)) return false;
    const ir_value *p = g->values[v];
    if (p->shape.rank > 1) return false;
    return n == 1 || d < 0 || n == d;
}

typedef struct ln_match {
    int32_t x, gamma, beta;
    float eps;
    ir_node *nodes[9]; /* the pattern's nodes; the last non-NULL one is replaced */
    int n_nodes;
} ln_match;

static bool match(const fu_graph *f, ir_node *m1, ln_match *m) {
    const ir_graph *g = f->g;
    memset(m, 0, sizeof *m);
    m->gamma = m->beta = -1;
    int32_t x = m1->inputs[0];
    if (x < 0) return false;
    const ir_value *xv = g->values[x];
    int32_t rank = xv->shape.rank;
    if (xv->dtype != MOPT_DTYPE_F32 || rank < 1 || !reduces_last_axis(g, m1, x, rank)) return false;
    int64_t d_last = xv->shape.syms[rank - 1] == 0 ? xv->shape.dims[rank - 1] : -1;
    ir_node *sub = fu_sole_consumer(f, m1->outputs[0], NULL);
    if (!fu_is(sub, "Sub") || sub->inputs[0] != x || sub->inputs[1] != m1->outputs[0]) return false;
    int32_t d = sub->outputs[0];
    if (d < 0 || (g->values[d]->flags & IR_VALUE_OUTPUT)) return false;
    /* the readers of d: one squaring node and the Div */
    ir_node *sq = NULL, *div = NULL;
    int32_t reads = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead) continue;
        bool reads_d = false;
        for (int32_t k = 0; k < n->n_inputs; k++)
            reads_d |= n->inputs[k] == d;
        if (!reads_d) continue;
        double e;
        if (fu_is(n, "Pow") && n->inputs[0] == d && fu_const_scalar(g, n->inputs[1], &e) &&
            e == 2.0 && !sq) {
            sq = n;
            reads += 1;
        } else if (fu_is(n, "Mul") && n->inputs[0] == d && n->inputs[1] == d && !sq) {
            sq = n;
            reads += 2;
        } else if (fu_is(n, "Div") && n->inputs[0] == d && n->inputs[1] != d && !div) {
            div = n;
            reads += 1;
        } else {
            return false;
        }
    }
    if (!sq || !div || reads != f->uses[d]) return false;
    ir_node *m2 = fu_sole_consumer(f, sq->outputs[0], NULL);
    if (!m2 || !reduces_last_axis(g, m2, sq->outputs[0], rank)) return false;
    ir_node *add = fu_sole_consumer(f, m2->outputs[0], NULL);
    int o = add && fu_is(add, "Add") ? fu_other_input(add, m2->outputs[0]) : -1;
    double eps;
    if (o < 0 || !fu_const_scalar(g, add->inputs[o], &eps) || !(eps >= 0.0)) return false;
    ir_node *sqrt_n = fu_sole_consumer(f, add->outputs[0], NULL);
    if (!fu_is(sqrt_n, "Sqrt")) return false;
    if (fu_sole_consumer(f, sqrt_n->outputs[0], NULL) != div ||
        div->inputs[1] != sqrt_n->outputs[0])
        return false;
    m->x = x;
    m->eps = (float)eps;
    ir_node *seq[] = {m1, sub, sq, m2, add, sqrt_n, div};
    memcpy(m->nodes, seq, sizeof seq);
    m->n_nodes = 7;
    int32_t cur = div->outputs[0];
    ir_node *mul = fu_sole_consumer(f, cur, NULL);
    o = fu_is(mul, "Mul") ? fu_other_input(mul, cur) : -1;
    if (o >= 0 && affine_param(g, mul->inputs[o], d_last)) {
        m->gamma = mul->inputs[o];
        m->nodes[m->n_nodes++] = mul;
        cur = mul->outputs[0];
        ir_node *addb = fu_sole_consumer(f, cur, NULL);
        o = fu_is(addb, "Add") ? fu_other_input(addb, cur) : -1;
        if (o >= 0 && affine_param(g, addb->inputs[o], d_last)) {
            m->beta = addb->inputs[o];
            m->nodes[m->n_nodes++] = addb;
        }
    } else if (d_last < 0) {
        return false; /* a ones gamma needs the size of the last axis */
    }
    return true;
}

static mopt_status fuse_one(fu_graph *f, const ln_match *m) {
    ir_graph *g = f->g;
    ir_node *last = m->nodes[m->n_nodes - 1];
    int32_t gamma = m->gamma;
    if (gamma < 0) {
        const ir_shape *xs = &g->values[m->x]->shape;
        int64_t dl = xs->dims[xs->rank - 1];
        float *ones = mopt_malloc((size_t)(dl > 0 ? dl : 1) * sizeof *ones);
        if (!ones) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory fusing LayerNorm");
        for (int64_t i = 0; i < dl; i++)
            ones[i] = 1.0f;
        char base[256];
        snprintf(base, sizeof base, "%.200s_ones", last->name);
        gamma = fu_add_f32_weight(g, base, 1, &dl, ones);
        mopt_free(ones);
        if (gamma < 0) return MOPT_ERR_OUT_OF_MEMORY;
    }
    ir_node *n = fu_replace_node(f, last, "LayerNormalization", "", m->nodes[0]->name,
                                 m->beta >= 0 ? 3 : 2, last->outputs[0]);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = m->x;
    n->inputs[1] = gamma;
    if (m->beta >= 0) n->inputs[2] = m->beta;
    if (!fu_set_int(n, "axis", -1) || !fu_set_float(n, "epsilon", m->eps))
        return MOPT_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < m->n_nodes; i++)
        m->nodes[i]->dead = true;
    return fu_refresh(f);
}

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    ln_match m;
    if (!fu_is(n, "ReduceMean") || !match(f, n, &m)) return MOPT_OK;
    c[0]++;
    return fuse_one(f, &m);
}

mopt_status pass_fuse_layernorm(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"LayerNorm patterns"}, 1u};
    return fu_run_pass(g, r, &pass);
}
