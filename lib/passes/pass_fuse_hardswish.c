/*
 * pass_fuse_hardswish.c — the HardSwish that exporters spell out, as one
 * HardSwish node (which fuse_conv_act then folds into a FusedConv):
 *   x -> Add(., 3) -> Clip(., 0, 6) -> Mul(x, .) -> Div(., 6)   (or Mul(., 1/6))
 * (paddle2onnx writes every hardswish of PP-OCR this way). The Add, Clip and
 * Mul outputs must each have one reader and not be graph outputs; x may have
 * others.
 */
#include <string.h>

#include "core/error.h"
#include "passes/fusion.h"

#define REL 1e-6

/* Matches the pattern ending at the Clip c; fills the nodes. */
static bool match(const fu_graph *f, ir_node *clip, ir_node **add, ir_node **mul, ir_node **last,
                  int32_t *x) {
    const ir_graph *g = f->g;
    fu_act a;
    if (!fu_activation(g, clip, &a) || strcmp(a.name, "Clip") != 0 || a.alpha != 0.0f ||
        a.beta != 6.0f)
        return false;
    ir_node *ad = fu_producer_is(f, clip->inputs[0], "Add");
    if (!ad || fu_sole_consumer(f, ad->outputs[0], NULL) != clip) return false;
    int k = fu_scalar_input(g, ad, 3.0, REL);
    if (k < 0) return false;
    int32_t xv = ad->inputs[1 - k];
    ir_node *m = fu_sole_consumer(f, clip->outputs[0], NULL);
    if (!fu_is(m, "Mul") || m->n_outputs != 1) return false;
    int o = fu_other_input(m, clip->outputs[0]);
    if (o < 0 || m->inputs[o] != xv) return false;
    ir_node *d = fu_sole_consumer(f, m->outputs[0], NULL);
    if (fu_is(d, "Div")) {
        if (d->n_inputs != 2 || d->inputs[0] != m->outputs[0] ||
            fu_scalar_input(g, d, 6.0, REL) != 1)
            return false;
    } else if (fu_is(d, "Mul")) {
        int s = fu_scalar_input(g, d, 1.0 / 6.0, REL);
        if (s < 0 || d->inputs[1 - s] != m->outputs[0]) return false;
    } else {
        return false;
    }
    if (d->n_outputs != 1 || g->values[xv]->dtype != MOPT_DTYPE_F32) return false;
    *add = ad;
    *mul = m;
    *last = d;
    *x = xv;
    return true;
}

static mopt_status visit(fu_graph *f, ir_node *clip, int32_t *c) {
    ir_node *add, *mul, *last;
    int32_t x;
    if (!fu_is(clip, "Clip") || !match(f, clip, &add, &mul, &last, &x)) return MOPT_OK;
    ir_node *n = fu_replace_node(f, last, "HardSwish", "", clip->name, 1, last->outputs[0]);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = x;
    add->dead = clip->dead = mul->dead = true;
    c[0]++;
    return fu_refresh(f);
}

mopt_status pass_fuse_hardswish(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"Add+Clip+Mul+Div as HardSwish"}, 1u};
    return fu_run_pass(g, r, &pass);
}
