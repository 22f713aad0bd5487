/*
 * pass_fuse_gelu.c — recognizes the GELU formulas exporters emit before
 * opset 20 and replaces them by one Gelu node:
 *
 *   erf form   0.5 * x * (1 + Erf(x / sqrt(2)))         -> Gelu approximate "none"
 *              (Div by 1.4142135 or Mul by 0.70710678)
 *   tanh form  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
 *              (0.044715 * x^3 as any tree of Mul over x, x, x (or Pow(x, 3))
 *              and the constant, e.g. Mul(c, Mul(x, Mul(x, x))), ((c * x) * x) * x)
 *                                                       -> Gelu approximate "tanh"
 *
 * The final "0.5 * x * s" (s = 1 + Erf/Tanh) is accepted as Mul(Mul(x, s), 0.5),
 * Mul(Mul(x, 0.5), s) or Mul(Mul(s, 0.5), x), operands in either order.
 * Every intermediate value must be read only inside the pattern and not be a
 * graph output; x itself may have other readers.
 */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "passes/fusion.h"

#define REL 1e-4 /* relative tolerance on the formula's constants */

typedef struct gelu_match {
    int32_t x;
    ir_node *nodes[16];
    int n_nodes;
} gelu_match;

static void add_node(gelu_match *m, ir_node *n) { m->nodes[m->n_nodes++] = n; }

/* Mul/Div/Add node n reads v and a scalar constant near ref; returns the
 * node or NULL. */
static ir_node *with_scalar(const fu_graph *f, ir_node *n, const char *op, int32_t v, double ref) {
    if (!fu_is(n, op)) return NULL;
    int k = fu_scalar_input(f->g, n, ref, REL);
    if (k < 0 || n->inputs[1 - k] != v) return NULL;
    if (!strcmp(op, "Div") && k != 1) return NULL; /* x / c, not c / x */
    return n;
}

/* The tail shared by both forms: s = Add(t, 1) (t: Erf/Tanh output) and
 * 0.5 * x * s in one of its three shapes. Fills m (appending nodes). */
static bool match_tail(const fu_graph *f, int32_t t, int32_t x, gelu_match *m) {
    ir_node *add = with_scalar(f, fu_sole_consumer(f, t, NULL), "Add", t, 1.0);
    if (!add) return false;
    add_node(m, add);
    int32_t s = add->outputs[0];
    ir_node *m1 = fu_sole_consumer(f, s, NULL);
    if (!fu_is(m1, "Mul")) return false;
    int o = fu_other_input(m1, s);
    if (o < 0) return false;
    int32_t other = m1->inputs[o];
    add_node(m, m1);
    if (other == x) { /* Mul(Mul(x, s), 0.5) */
        ir_node *m2 =
            with_scalar(f, fu_sole_consumer(f, m1->outputs[0], NULL), "Mul", m1->outputs[0], 0.5);
        if (!m2) return false;
        add_node(m, m2);
        return true;
    }
    double c;
    if (fu_const_scalar(f->g, other, &c) && fu_near(c, 0.5, REL)) { /* Mul(Mul(s, 0.5), x) */
        ir_node *m2 = fu_sole_consumer(f, m1->outputs[0], NULL);
        if (!fu_is(m2, "Mul") || fu_other_input(m2, m1->outputs[0]) < 0 ||
            m2->inputs[fu_other_input(m2, m1->outputs[0])] != x)
            return false;
        add_node(m, m2);
        return true;
    }
    /* Mul(Mul(x, 0.5), s): the half must be read only here */
    ir_node *h = with_scalar(f, fu_producer(f, other), "Mul", x, 0.5);
    if (!h || fu_sole_consumer(f, other, NULL) != m1) return false;
    add_node(m, h);
    /* m1 is the last node; keep it last */
    m->nodes[m->n_nodes - 1] = m1;
    m->nodes[m->n_nodes - 2] = h;
    return true;
}

/* Erf node e: its input is x / sqrt(2) or x * (1 / sqrt(2)). */
static bool match_erf(const fu_graph *f, ir_node *e, gelu_match *m) {
    memset(m, 0, sizeof *m);
    int32_t u = e->inputs[0];
    ir_node *p = fu_producer(f, u);
    if (!p || fu_sole_consumer(f, u, NULL) != e || p->n_inputs != 2) return false;
    int k = -1;
    if (fu_is(p, "Div")) {
        k = fu_scalar_input(f->g, p, sqrt(2.0), REL);
        if (k != 1) return false;
    } else if (fu_is(p, "Mul")) {
        k = fu_scalar_input(f->g, p, sqrt(0.5), REL);
        if (k < 0) return false;
    } else {
        return false;
    }
    m->x = p->inputs[1 - k];
    add_node(m, p);
    add_node(m, e);
    return match_tail(f, e->outputs[0], m->x, m);
}

/* Leaves of the product tree rooted at v: Mul nodes whose output is read
 * once (the root always) are expanded, Pow(x, 3) read once counts as three
 * x; every other value is a leaf. Returns false when the tree is too big. */
typedef struct mul_tree {
    int32_t leaves[8];
    int n_leaves, n_x;
} mul_tree;

static bool mul_leaves(const fu_graph *f, int32_t v, int32_t x, bool root, mul_tree *t,
                       gelu_match *m, int depth) {
    ir_node *p = fu_producer(f, v);
    double e;
    if (v != x && p && (root || f->uses[v] == 1) && depth < 5 && m->n_nodes < 9) {
        if (fu_is(p, "Mul") && p->n_inputs == 2) {
            add_node(m, p);
            return mul_leaves(f, p->inputs[0], x, false, t, m, depth + 1) &&
                   mul_leaves(f, p->inputs[1], x, false, t, m, depth + 1);
        }
        if (fu_is(p, "Pow") && p->inputs[0] == x && fu_const_scalar(f->g, p->inputs[1], &e) &&
            e == 3.0) {
            add_node(m, p);
            t->n_x += 3;
            return true;
        }
    }
    if (v == x) {
        t->n_x++;
        return true;
    }
    if (t->n_leaves == 8) return false;
    t->leaves[t->n_leaves++] = v;
    return true;
}

/* v is 0.044715 * x^3 as any product tree of x, x, x (or Pow(x, 3)) and the
 * constant; appends its nodes to m. */
static bool is_cubic_term(const fu_graph *f, int32_t v, int32_t x, gelu_match *m) {
    mul_tree t;
    memset(&t, 0, sizeof t);
    if (f->uses[v] != 1 || !mul_leaves(f, v, x, true, &t, m, 0)) return false;
    double c;
    return t.n_x == 3 && t.n_leaves == 1 && fu_const_scalar(f->g, t.leaves[0], &c) &&
           fu_near(c, 0.044715, REL);
}

/* Tanh node t: its input is sqrt(2/pi) * (x + 0.044715 * x^3). */
static bool match_tanh(const fu_graph *f, ir_node *t, gelu_match *m) {
    memset(m, 0, sizeof *m);
    int32_t u = t->inputs[0];
    ir_node *scale = fu_producer(f, u);
    if (!fu_is(scale, "Mul") || fu_sole_consumer(f, u, NULL) != t) return false;
    int k = fu_scalar_input(f->g, scale, 0.79788456080286535588 /* sqrt(2 / pi) */, REL);
    if (k < 0) return false;
    int32_t inner = scale->inputs[1 - k];
    ir_node *add = fu_producer(f, inner);
    if (!fu_is(add, "Add") || add->n_inputs != 2 || f->uses[inner] != 1) return false;
    for (int j = 0; j < 2; j++) {
        int32_t x = add->inputs[j], p = add->inputs[1 - j];
        gelu_match tmp;
        memset(&tmp, 0, sizeof tmp);
        if (!is_cubic_term(f, p, x, &tmp)) continue;
        *m = tmp;
        m->x = x;
        add_node(m, add);
        add_node(m, scale);
        add_node(m, t);
        return match_tail(f, t->outputs[0], x, m);
    }
    return false;
}

static mopt_status fuse_one(fu_graph *f, const gelu_match *m, bool tanh_form) {
    ir_node *last = m->nodes[m->n_nodes - 1];
    if (f->g->values[m->x]->dtype != MOPT_DTYPE_F32) return MOPT_OK;
    ir_node *n = fu_replace_node(f, last, "Gelu", "", last->name, 1, last->outputs[0]);
    if (!n) return MOPT_ERR_OUT_OF_MEMORY;
    n->inputs[0] = m->x;
    if (!fu_set_string(n, "approximate", tanh_form ? "tanh" : "none"))
        return MOPT_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < m->n_nodes; i++)
        m->nodes[i]->dead = true;
    return fu_refresh(f);
}

static mopt_status visit(fu_graph *f, ir_node *n, int32_t *c) {
    const ir_graph *g = f->g;
    gelu_match m;
    if (fu_is(n, "Erf") && n->n_inputs == 1 && match_erf(f, n, &m) &&
        g->values[m.x]->dtype == MOPT_DTYPE_F32) {
        c[0]++;
        return fuse_one(f, &m, false);
    }
    if (fu_is(n, "Tanh") && n->n_inputs == 1 && match_tanh(f, n, &m) &&
        g->values[m.x]->dtype == MOPT_DTYPE_F32) {
        c[1]++;
        return fuse_one(f, &m, true);
    }
    return MOPT_OK;
}

mopt_status pass_fuse_gelu(ir_graph *g, pass_result *r) {
    static const fu_pass pass = {visit, NULL, {"erf GELU", "tanh GELU"}, 3u};
    return fu_run_pass(g, r, &pass);
}
