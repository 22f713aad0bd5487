/*
 * pass_fuse_conv_act.c — fuses a Conv with what follows it into one
 * mopt.FusedConv (docs/fused_ops.md):
 *   Conv -> [Add(residual)] -> [Relu | Clip | HardSwish | HardSigmoid |
 *                               Sigmoid | LeakyRelu | Tanh | Gelu | Swish]
 *        -> [Mul(scalar)] -> [Add(scalar)]
 * The scalar Mul/Add after the activation (f32 one-element constants: a
 * learnable affine, PP-LCNet's "lab" blocks after HardSwish) become the
 * post_scale/post_shift attributes; they are taken only after an
 * activation (before one, fuse_conv_affine folds them into W and B).
 * Swish (SiLU) is the pair that reads y twice:
 *   y -> Sigmoid -> s;  Mul(y, s) (either order)  =>  activation "Swish"
 * The residual is the Add's other input: not a constant and of exactly the
 * Conv output's shape. Each intermediate value must have a single consumer
 * and not be a graph output. Runs after Conv+BatchNormalization folding.
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "passes/fusion.h"

typedef struct conv_match {
    int32_t residual; /* value, or -1 */
    ir_node *add;     /* the residual Add, or NULL */
    ir_node *act;     /* the activation (Swish: the Mul), or NULL */
    ir_node *sig;     /* Swish: the Sigmoid, else NULL */
    fu_act a;
    ir_node *pmul, *padd; /* the post affine's scalar Mul and Add, or NULL */
    double scale, shift;
} conv_match;

/* n is a Mul (mul) or Add reading v and an f32 one-element constant: its
 * value in *c. */
static bool scalar_op(const ir_graph *g, const ir_node *n, int32_t v, bool mul, double *c) {
    if (!fu_is(n, mul ? "Mul" : "Add") || n->n_inputs != 2 || n->n_outputs != 1) return false;
    int o = fu_other_input(n, v);
    if (o < 0) return false;
    int32_t k = n->inputs[o];
    return g->values[k]->dtype == MOPT_DTYPE_F32 && fu_const_scalar(g, k, c) &&
           g->values[k]->shape.rank >= 0 && g->values[k]->shape.rank <= g->values[v]->shape.rank;
}

/* After the activation's output v: [Mul(scalar)] [Add(scalar)]. */
static void match_post(const fu_graph *f, int32_t v, conv_match *m) {
    const ir_graph *g = f->g;
    m->scale = 1.0;
    m->shift = 0.0;
    ir_node *next = fu_sole_consumer(f, v, NULL);
    if (next && scalar_op(g, next, v, true, &m->scale)) {
        m->pmul = next;
        v = next->outputs[0];
        next = fu_sole_consumer(f, v, NULL);
    }
    if (next && scalar_op(g, next, v, false, &m->shift)) m->padd = next;
}

/* v read only by Sigmoid(v) -> s and Mul(v, s): returns the Mul, *sig the
 * Sigmoid; else NULL. */
static ir_node *match_swish(const fu_graph *f, int32_t v, ir_node **sig) {
    const ir_graph *g = f->g;
    if (v < 0 || f->uses[v] != 2 || (g->values[v]->flags & IR_VALUE_OUTPUT)) return NULL;
    ir_node *s = NULL, *m = NULL;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *n = g->nodes[i];
        bool reads = false;
        for (int32_t k = 0; !n->dead && k < n->n_inputs; k++)
            reads = reads || n->inputs[k] == v;
        if (!reads) continue;
        if (fu_is(n, "Sigmoid") && n->n_inputs == 1 && n->n_outputs == 1 && !s)
            s = n;
        else if (fu_is(n, "Mul") && n->n_inputs == 2 && n->n_outputs == 1 && !m)
            m = n;
        else
            return NULL;
    }
    if (!s || !m || fu_sole_consumer(f, s->outputs[0], NULL) != m) return NULL;
    int o = fu_other_input(m, v);
    if (o < 0 || m->inputs[o] != s->outputs[0]) return NULL;
    *sig = s;
    return m;
}

static bool match(const fu_graph *f, ir_node *conv, conv_match *m) {
    const ir_graph *g = f->g;
    memset(m, 0, sizeof *m);
    m->residual = -1;
    if (conv->n_outputs != 1 || conv->outputs[0] < 0 || conv->n_inputs < 2) return false;
    if (!fu_attrs_copyable(conv)) return false;
    int32_t y = conv->outputs[0];
    const ir_value *yv = g->values[y];
    if (yv->dtype != MOPT_DTYPE_F32) return false;
    int32_t cur = y;
    ir_node *next = fu_sole_consumer(f, cur, NULL);
    if (fu_is(next, "Add")) {
        int o = fu_other_input(next, cur);
        if (o >= 0) {
            int32_t r = next->inputs[o];
            const ir_value *rv = g->values[r];
            if (!fu_is_const(g, r) && rv->dtype == MOPT_DTYPE_F32 &&
                fu_same_shape(&rv->shape, &yv->shape)) {
                m->residual = r;
                m->add = next;
                cur = next->outputs[0];
                next = fu_sole_consumer(f, cur, NULL);
            }
        }
    }
    ir_node *sig = NULL, *mul = NULL;
    if (next && next->inputs[0] == cur && fu_activation(g, next, &m->a)) {
        m->act = next;
    } else if (!next && (mul = match_swish(f, cur, &sig)) != NULL) {
        m->act = mul;
        m->sig = sig;
        m->a.name = "Swish";
    }
    if (m->act) match_post(f, m->act->outputs[0], m);
    return m->add || m->act;
}

static mopt_status fuse_one(fu_graph *f, ir_node *conv, const conv_match *m) {
    ir_node *last = m->padd ? m->padd : m->pmul ? m->pmul : m->act ? m->act : m->add;
    int32_t out = last->outputs[0];
    bool has_b = conv->n_inputs > 2 && conv->inputs[2] >= 0;
    int32_t n_in = m->residual >= 0 ? 4 : (has_b ? 3 : 2);
    if (!fu_use_mopt_domain(f->g)) return MOPT_ERR_OUT_OF_MEMORY;
    ir_node *n = fu_replace_node(f, last, "FusedConv", "mopt", conv->name, n_in, out);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = conv->inputs[0];
    n->inputs[1] = conv->inputs[1];
    if (n_in > 2) n->inputs[2] = has_b ? conv->inputs[2] : -1;
    if (n_in > 3) n->inputs[3] = m->residual;
    if (!fu_copy_attrs(n, conv)) return MOPT_ERR_OUT_OF_MEMORY;
    if (m->act && !fu_set_activation(n, &m->a)) return MOPT_ERR_OUT_OF_MEMORY;
    if ((m->pmul && !fu_set_float(n, "post_scale", (float)m->scale)) ||
        (m->padd && !fu_set_float(n, "post_shift", (float)m->shift)))
        return MOPT_ERR_OUT_OF_MEMORY;
    conv->dead = true;
    if (m->pmul && m->pmul != last) m->pmul->dead = true;
    if (m->act && m->act != last) m->act->dead = true;
    if (m->add) m->add->dead = true;
    if (m->sig) m->sig->dead = true;
    return fu_refresh(f);
}

enum { N_ACT, N_RES, N_BOTH, N_POST };

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    conv_match m;
    if (!fu_is(n, "Conv") || !match(f, n, &m)) return MOPT_OK;
    c[m.add && m.act ? N_BOTH : m.add ? N_RES : N_ACT]++;
    if (m.pmul || m.padd) c[N_POST]++;
    return fuse_one(f, n, &m);
}

mopt_status pass_fuse_conv_act(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit,
                                 NULL,
                                 {"Conv+activation", "Conv+residual", "Conv+residual+activation",
                                  "of them with a scalar affine after the activation"},
                                 7u};
    return fu_run_pass(g, r, &pass);
}
