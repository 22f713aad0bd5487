/*
 * pass_fuse_se_residual.c — a squeeze-excitation scale with its input added
 * back, as one scale of the large tensor:
 *   Add(x, Mul(x, s))  =>  Mul(x, Add(s, 1))
 * where s is one value per channel or a scalar (every axis from 2 on, and
 * any axis s has beyond x's, of size 1): PP-OCRv4 det's RSE blocks (x +
 * x * HardSigmoid(...)). The large tensor is then read once and written
 * once, by a Mul the layout pass keeps channels-last (ChannelsLastScale);
 * the Add runs on the small s (or becomes the post_shift of the conv and
 * activation that make s: this pass runs before fuse_conv_act). The Mul's
 * output must have the Add as its only reader. Rounding: x * (1 + s)
 * instead of x + x * s (one rounding of x's scale apart).
 */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "passes/fusion.h"

/* s is 1 on every axis of x from 2 on, and 1 or x's own size on the batch
 * and channel axes: x * s never grows x, and s is small. */
static bool channel_scale(const ir_shape *s, const ir_shape *x) {
    if (s->rank < 0 || x->rank < 3 || s->rank > x->rank) return false;
    for (int32_t i = 0; i < s->rank; i++) {
        int32_t j = x->rank - s->rank + i; /* x's axis under s's axis i */
        bool one = s->syms[i] == 0 && s->dims[i] == 1;
        bool same = (s->syms[i] > 0 && s->syms[i] == x->syms[j]) ||
                    (s->syms[i] == 0 && x->syms[j] == 0 && s->dims[i] == x->dims[j]);
        if (!one && (j > 1 || !same)) return false;
    }
    return true;
}

static mopt_status visit(fu_graph *f, ir_node *add, int32_t *c) {
    ir_graph *g = f->g;
    if (!fu_is(add, "Add") || add->n_inputs != 2 || add->n_outputs != 1) return MOPT_OK;
    for (int k = 0; k < 2; k++) {
        ir_node *mul = fu_producer_is(f, add->inputs[1 - k], "Mul");
        int32_t x = add->inputs[k];
        if (!mul || mul->n_inputs != 2 || mul->n_outputs != 1 ||
            fu_sole_consumer(f, mul->outputs[0], NULL) != add)
            continue;
        int o = fu_other_input(mul, x);
        if (o < 0) continue;
        int32_t s = mul->inputs[o];
        const ir_value *xv = g->values[x], *sv = g->values[s];
        if (xv->dtype != MOPT_DTYPE_F32 || sv->dtype != MOPT_DTYPE_F32 ||
            !channel_scale(&sv->shape, &xv->shape))
            continue;
        const float one = 1.0f;
        const int64_t dim1 = 1;
        char base[256];
        snprintf(base, sizeof base, "%.200s_one", mul->name);
        int32_t one_v = fu_add_f32_weight(g, base, 1, &dim1, &one);
        snprintf(base, sizeof base, "%.200s_plus_one", mul->name);
        int32_t s1 = one_v >= 0 ? ir_graph_new_value(g, base) : -1;
        if (s1 < 0) return mopt_fail_context(MOPT_ERR_OUT_OF_MEMORY, "rewriting '%s'", add->name);
        /* s + 1 has s's shape (a scalar s: [1]) */
        g->values[s1]->dtype = MOPT_DTYPE_F32;
        g->values[s1]->shape = sv->shape;
        if (sv->shape.rank == 0) {
            g->values[s1]->shape.rank = 1;
            g->values[s1]->shape.dims[0] = 1;
            g->values[s1]->shape.syms[0] = 0;
        }
        /* the pass's producer and use tables cover the new values */
        mopt_status st = fu_refresh(f);
        if (st) return st;
        char name[256];
        snprintf(name, sizeof name, "%.240s", mul->name);
        ir_node *a1 = fu_replace_node(f, mul, "Add", "", name, 2, s1);
        if (!a1) return MOPT_ERR_OUT_OF_MEMORY;
        a1->inputs[0] = s;
        a1->inputs[1] = one_v;
        snprintf(name, sizeof name, "%.240s", add->name);
        ir_node *m1 = fu_replace_node(f, add, "Mul", "", name, 2, add->outputs[0]);
        if (!m1) return MOPT_ERR_OUT_OF_MEMORY;
        m1->inputs[0] = x;
        m1->inputs[1] = s1;
        c[0]++;
        return fu_refresh(f);
    }
    return MOPT_OK;
}

mopt_status pass_fuse_se_residual(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"Add(x, Mul(x, s)) as Mul(x, s + 1)"}, 1u};
    return fu_run_pass(g, r, &pass);
}
