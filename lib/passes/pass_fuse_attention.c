/*
 * pass_fuse_attention.c — rewrites the multi-head attention that torch
 * exports into one mopt.Attention node (layout "bsh", docs/fused_ops.md):
 *
 *   q/k/v = projections [B,S,H*D]            (kept: the node reads them)
 *   Reshape(x, [B,S,H,D]) -> Transpose [0,2,1,3]          (Q, V)
 *   Reshape(k, [B,S,H,D]) -> Transpose [0,2,3,1]          (K^T directly,
 *       or Transpose [0,2,1,3] then Transpose [0,1,3,2])
 *   MatMul(Qh, K^T) -> [Div c | Mul c] -> {Add mask, Where causal} -> Softmax(-1)
 *   MatMul(P, Vh) -> Transpose [0,2,1,3] -> Reshape [B,S,H*D]
 *
 * The last Reshape becomes the Attention node (same output value, same place
 * in the topological order); everything else of the block dies by DCE.
 * Conservative: it fires only when every piece is verified — perms, axes,
 * scalar constants, single consumers of every intermediate, and the Reshape
 * targets provably [B,S,H,D] / [B,S,H*D] (constants, or Concat chains of
 * Shape(t)[i] whose dims equal B and S symbolically). The mask of an Add
 * becomes the additive mask input when it broadcasts to [B,H,Sq,Sk] without
 * growing it; a Where(Equal(Trilu(ConstantOfShape([S,S], 1), k=0), 0),
 * very negative fill, scores) — or a constant condition of the same pattern
 * — becomes causal=1 (equivalent: the diagonal is never masked, and
 * exp(fill - max) is 0 in float).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "ops/ops.h"
#include "passes/passes.h"

typedef struct fctx {
    ir_graph *g;
    int32_t *uses;
    int64_t opset;
} fctx;

/* A dim known at load time: concrete (sym 0), symbol (sym > 0), else
 * unknown; and its root (rv, ri): the (value, axis) it provably copies,
 * found through shape-preserving producers, or rv -1. Two dims are equal
 * when their roots are, or they are the same number or symbol. */
typedef struct pdim {
    int64_t d;
    int32_t sym;
    int32_t rv, ri;
} pdim;

static bool pdim_known(pdim a) { return a.sym >= 0 || a.rv >= 0; }
static bool pdim_eq(pdim a, pdim b) {
    if (a.rv >= 0 && a.rv == b.rv && a.ri == b.ri) return true;
    if (a.sym == 0) return b.sym == 0 && a.d == b.d;
    return a.sym > 0 && a.sym == b.sym;
}
static pdim pdim_const(int64_t d) { return (pdim){d, 0, -1, 0}; }

static bool op_is(const ir_node *n, const char *op) {
    return n && !n->dead && n->domain[0] == '\0' && strcmp(n->op_type, op) == 0;
}

static ir_node *producer(const fctx *c, int32_t v) {
    if (v < 0 || v >= c->g->n_values) return NULL;
    int32_t p = c->g->values[v]->producer;
    if (p < 0 || p >= c->g->n_nodes) return NULL;
    ir_node *n = c->g->nodes[p];
    return n->dead ? NULL : n;
}

static int32_t rank_of(const fctx *c, int32_t v) {
    return v >= 0 ? c->g->values[v]->shape.rank : -1;
}

/* Follows (v, i) back to the (value, axis) it copies: through MatMul by a
 * 2-D matrix (all axes but the last), elementwise ops whose other operand
 * does not reach axis i (e.g. a bias), LayerNormalization and unary ops, and
 * mopt.FusedMatMul with a 2-D B and low-rank bias/residual. */
static void dim_root(const fctx *c, int32_t v, int32_t i, int32_t *rv, int32_t *ri) {
    static const char *const unary[] = {
        "Cast", "Relu", "Tanh", "Erf", "Sigmoid", "Sqrt", "Identity", "Gelu", "LayerNormalization"};
    static const char *const binary[] = {"Add", "Sub", "Mul", "Div"};
    for (int depth = 0; depth < 64; depth++) {
        *rv = v, *ri = i;
        ir_node *n = producer(c, v);
        int32_t r = rank_of(c, v);
        if (!n || r < 0 || n->n_outputs < 1 || n->outputs[0] != v) return;
        int32_t next = -1;
        if (op_is(n, "MatMul") && n->n_inputs == 2) {
            if (rank_of(c, n->inputs[1]) == 2 && rank_of(c, n->inputs[0]) == r && r >= 2 &&
                i < r - 1)
                next = n->inputs[0];
        } else if (strcmp(n->op_type, "FusedMatMul") == 0 && strcmp(n->domain, "mopt") == 0 &&
                   n->n_inputs >= 2) {
            bool ok = ir_node_attr_int(n, "transA", 0) == 0 && rank_of(c, n->inputs[1]) == 2 &&
                      rank_of(c, n->inputs[0]) == r && r >= 2 && i < r - 1;
            for (int32_t k = 2; k < n->n_inputs && ok; k++) {
                int32_t rk = rank_of(c, n->inputs[k]);
                ok = n->inputs[k] < 0 || (rk >= 0 && rk < r - i);
            }
            if (ok) next = n->inputs[0];
        } else {
            for (size_t k = 0; k < sizeof binary / sizeof binary[0] && next < 0; k++) {
                if (!op_is(n, binary[k]) || n->n_inputs != 2) continue;
                for (int x = 0; x < 2 && next < 0; x++) {
                    int32_t ry = rank_of(c, n->inputs[1 - x]);
                    if (rank_of(c, n->inputs[x]) == r && ry >= 0 && ry < r - i) next = n->inputs[x];
                }
            }
            for (size_t k = 0; k < sizeof unary / sizeof unary[0] && next < 0; k++)
                if (op_is(n, unary[k]) && n->n_inputs >= 1 && rank_of(c, n->inputs[0]) == r)
                    next = n->inputs[0];
        }
        if (next < 0) return;
        v = next;
    }
}

static pdim pdim_of(const fctx *c, int32_t v, int32_t axis) {
    pdim p = {0, -1, -1, 0};
    const ir_value *val = c->g->values[v];
    if (axis >= 0 && axis < val->shape.rank) {
        p.sym = val->shape.syms[axis];
        p.d = p.sym == 0 ? val->shape.dims[axis] : 0;
        dim_root(c, v, axis, &p.rv, &p.ri);
    }
    return p;
}

/* The producer of v, if it has op type `op` and v is used exactly once
 * (and is no graph output). */
static ir_node *single_use_producer(const fctx *c, int32_t v, const char *op) {
    if (v < 0 || c->uses[v] != 1) return NULL;
    if (c->g->values[v]->flags & IR_VALUE_OUTPUT) return NULL;
    ir_node *n = producer(c, v);
    return op_is(n, op) ? n : NULL;
}

static bool is_const(const fctx *c, int32_t v) {
    if (v < 0) return false;
    const ir_value *val = c->g->values[v];
    return (val->flags & IR_VALUE_INITIALIZER) && (val->data || val->nbytes == 0);
}

/* A one-element float constant (f32 or f64) of rank <= 4 (so that as an
 * operand it never grows a [B,H,Sq,Sk] result). */
static bool const_scalar_f(const fctx *c, int32_t v, double *out) {
    if (!is_const(c, v)) return false;
    const ir_value *val = c->g->values[v];
    if (val->shape.rank > 4) return false;
    if (val->dtype == MOPT_DTYPE_F32 && val->nbytes == 4)
        *out = *(const float *)val->data;
    else if (val->dtype == MOPT_DTYPE_F64 && val->nbytes == 8)
        *out = *(const double *)val->data;
    else
        return false;
    return true;
}

/* A one-element integer constant. */
static bool const_scalar_i(const fctx *c, int32_t v, int64_t *out) {
    if (!is_const(c, v)) return false;
    const ir_value *val = c->g->values[v];
    if (val->dtype == MOPT_DTYPE_I64 && val->nbytes == 8)
        *out = *(const int64_t *)val->data;
    else if (val->dtype == MOPT_DTYPE_I32 && val->nbytes == 4)
        *out = *(const int32_t *)val->data;
    else
        return false;
    return true;
}

static bool perm_is(const ir_node *t, const int64_t *want, int64_t n) {
    const int64_t *p = NULL;
    if (ir_node_attr_ints(t, "perm", &p) != n) return false;
    return memcmp(p, want, (size_t)n * sizeof *p) == 0;
}

/* Unsqueeze/axes (attribute before opset 13, input since) == [0]. */
static bool unsqueeze_axes_zero(const fctx *c, const ir_node *u) {
    if (u->n_inputs >= 2 && u->inputs[1] >= 0) {
        int64_t a;
        return const_scalar_i(c, u->inputs[1], &a) && a == 0;
    }
    const int64_t *ax = NULL;
    return ir_node_attr_ints(u, "axes", &ax) == 1 && ax[0] == 0;
}

/* v == Gather(Shape(t), idx, axis 0), scalar idx (scalar_out) or [idx]:
 * the load-time dim t.shape[idx]. */
static bool shape_dim(const fctx *c, int32_t v, bool scalar_out, pdim *out) {
    ir_node *ga = producer(c, v);
    if (!op_is(ga, "Gather") || ga->n_inputs != 2 || ir_node_attr_int(ga, "axis", 0) != 0)
        return false;
    int32_t iv = ga->inputs[1];
    if (!is_const(c, iv)) return false;
    const ir_value *idx = c->g->values[iv];
    if ((idx->shape.rank == 0) != scalar_out) return false;
    if (!scalar_out &&
        !(idx->shape.rank == 1 && idx->shape.dims[0] == 1 && idx->shape.syms[0] == 0))
        return false;
    int64_t i;
    if (!const_scalar_i(c, iv, &i)) return false;
    ir_node *sh = producer(c, ga->inputs[0]);
    if (!op_is(sh, "Shape") || sh->n_inputs != 1 || ir_node_attr(sh, "start") ||
        ir_node_attr(sh, "end"))
        return false;
    int32_t tr = rank_of(c, sh->inputs[0]);
    if (tr < 0) return false;
    if (i < 0) i += tr;
    if (i < 0 || i >= tr) return false;
    *out = pdim_of(c, sh->inputs[0], (int32_t)i);
    return pdim_known(*out);
}

/* Reads a 1-D int64 shape vector as load-time dims: an int64 constant, or a
 * Concat(axis 0) of constants, Unsqueeze([0]) of Gather(Shape(t), scalar)
 * and Gather(Shape(t), [i]). Returns the element count or -1. */
static int32_t shape_vector(const fctx *c, int32_t v, pdim *out, int32_t cap) {
    if (v < 0) return -1;
    if (is_const(c, v)) {
        const ir_value *val = c->g->values[v];
        if (val->dtype != MOPT_DTYPE_I64 || val->shape.rank != 1) return -1;
        int64_t n = (int64_t)(val->nbytes / 8);
        if (n > cap) return -1;
        for (int64_t k = 0; k < n; k++)
            out[k] = pdim_const(((const int64_t *)val->data)[k]);
        return (int32_t)n;
    }
    ir_node *cc = producer(c, v);
    if (!op_is(cc, "Concat")) return -1;
    int64_t axis = ir_node_attr_int(cc, "axis", 1);
    if (axis != 0 && axis != -1) return -1;
    int32_t n = 0;
    for (int32_t k = 0; k < cc->n_inputs; k++) {
        int32_t e = cc->inputs[k];
        if (e < 0) return -1;
        if (is_const(c, e)) {
            int32_t m = shape_vector(c, e, out + n, cap - n);
            if (m < 0) return -1;
            n += m;
            continue;
        }
        if (n >= cap) return -1;
        ir_node *u = producer(c, e);
        if (op_is(u, "Unsqueeze")) {
            if (!unsqueeze_axes_zero(c, u) || !shape_dim(c, u->inputs[0], true, &out[n])) return -1;
        } else if (!shape_dim(c, e, false, &out[n])) {
            return -1;
        }
        n++;
    }
    return n;
}

/* x -> Reshape(proj, [B,S,H,D]) where proj is [B,S,H*D]: returns proj, and
 * H, D (concrete). B, S are checked against b, s. */
static int32_t match_split_heads(const fctx *c, int32_t x, pdim b, pdim s, int64_t *H, int64_t *D) {
    ir_node *r = single_use_producer(c, x, "Reshape");
    if (!r || r->n_inputs != 2) return -1;
    bool allowzero = ir_node_attr_int(r, "allowzero", 0) != 0;
    int32_t proj = r->inputs[0];
    const ir_value *pv = c->g->values[proj];
    if (pv->shape.rank != 3) return -1;
    pdim hd = pdim_of(c, proj, 2);
    if (hd.sym != 0 || hd.d <= 0) return -1;
    pdim t[4];
    if (shape_vector(c, r->inputs[1], t, 4) != 4) return -1;
    for (int k = 0; k < 2; k++) /* 0 copies the input dim */
        if (!allowzero && t[k].sym == 0 && t[k].d == 0) t[k] = pdim_of(c, proj, k);
    if (!pdim_eq(t[0], b) || !pdim_eq(t[1], s) || !pdim_eq(pdim_of(c, proj, 0), b) ||
        !pdim_eq(pdim_of(c, proj, 1), s))
        return -1;
    if (t[2].sym != 0 || t[2].d <= 0 || t[3].sym != 0) return -1;
    int64_t h = t[2].d, d = t[3].d;
    if (d == -1 && hd.d % h == 0) d = hd.d / h;
    if (d <= 0 || h * d != hd.d) return -1;
    *H = h;
    *D = d;
    return proj;
}

/* True when v's shape equals [S, S'] of the causal pattern: dims a, b. */
static bool is_causal_ones(const fctx *c, int32_t v, pdim sq, pdim sk) {
    ir_node *cs = producer(c, v);
    if (!op_is(cs, "ConstantOfShape")) return false;
    const ir_tensor *val = ir_node_attr_tensor(cs, "value");
    if (!val || val->nbytes == 0 || !val->data) return false; /* default 0: all masked */
    bool nonzero = false;
    for (size_t k = 0; k < val->nbytes; k++)
        nonzero |= ((const uint8_t *)val->data)[k] != 0;
    if (!nonzero || ir_numel(val->rank, val->dims) != 1) return false;
    if (val->dtype != MOPT_DTYPE_F32 && val->dtype != MOPT_DTYPE_I64 &&
        val->dtype != MOPT_DTYPE_BOOL && val->dtype != MOPT_DTYPE_F64 &&
        val->dtype != MOPT_DTYPE_I32)
        return false;
    pdim d[2];
    return shape_vector(c, cs->inputs[0], d, 2) == 2 && pdim_eq(d[0], sq) && pdim_eq(d[1], sk);
}

/* cond (true = masked out) is the exporter's causal mask for [Sq, Sk]:
 * [Cast(bool)] Equal(Trilu(ones [Sq,Sk], upper=0, k=0), 0), or a constant
 * bool [..., Sq, Sk] equal to j > i with Sq == Sk. */
static bool is_causal_cond(const fctx *c, int32_t cond, pdim sq, pdim sk) {
    if (is_const(c, cond)) {
        const ir_value *v = c->g->values[cond];
        if (v->dtype != MOPT_DTYPE_BOOL || v->shape.rank < 2 || v->shape.rank > 4) return false;
        if (!ir_shape_is_concrete(&v->shape)) return false;
        for (int32_t k = 0; k + 2 < v->shape.rank; k++)
            if (v->shape.dims[k] != 1) return false;
        int64_t n = v->shape.dims[v->shape.rank - 2], m = v->shape.dims[v->shape.rank - 1];
        if (n != m || !pdim_eq(sq, pdim_const(n)) || !pdim_eq(sk, pdim_const(m))) return false;
        const uint8_t *b = v->data;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < m; j++)
                if ((b[i * m + j] != 0) != (j > i)) return false;
        return true;
    }
    if (!pdim_eq(sq, sk)) return false;
    ir_node *n = producer(c, cond);
    if (op_is(n, "Cast")) {
        if (ir_node_attr_int(n, "to", -1) != MOPT_DTYPE_BOOL) return false;
        n = producer(c, n->inputs[0]);
    }
    if (!op_is(n, "Equal") || n->n_inputs != 2) return false;
    int32_t tri_v = -1;
    for (int k = 0; k < 2; k++) {
        double z;
        int64_t zi;
        int32_t other = n->inputs[1 - k];
        bool zero = (const_scalar_f(c, other, &z) && z == 0.0) ||
                    (const_scalar_i(c, other, &zi) && zi == 0);
        if (zero) tri_v = n->inputs[k];
    }
    ir_node *tri = producer(c, tri_v);
    if (!op_is(tri, "Trilu") || ir_node_attr_int(tri, "upper", 1) != 0) return false;
    if (tri->n_inputs >= 2 && tri->inputs[1] >= 0) {
        int64_t k;
        if (!const_scalar_i(c, tri->inputs[1], &k) || k != 0) return false;
    }
    return is_causal_ones(c, tri->inputs[0], sq, sk);
}

/* Does v lead, through single-use Where (input 2) / Div / Mul by a
 * constant, to a single-use MatMul of two Transposes (the Q K^T)? */
static bool leads_to_qk(const fctx *c, int32_t v, int depth) {
    if (v < 0 || c->uses[v] != 1 || depth > 3) return false;
    ir_node *n = producer(c, v);
    if (op_is(n, "MatMul")) {
        return n->n_inputs == 2 && op_is(producer(c, n->inputs[0]), "Transpose") &&
               op_is(producer(c, n->inputs[1]), "Transpose");
    }
    if (op_is(n, "Where") && n->n_inputs == 3) return leads_to_qk(c, n->inputs[2], depth + 1);
    if ((op_is(n, "Div") || op_is(n, "Mul")) && n->n_inputs == 2) {
        double s;
        if (const_scalar_f(c, n->inputs[1], &s)) return leads_to_qk(c, n->inputs[0], depth + 1);
        if (op_is(n, "Mul") && const_scalar_f(c, n->inputs[0], &s))
            return leads_to_qk(c, n->inputs[1], depth + 1);
    }
    return false;
}

/* What the match found. */
typedef struct attn_match {
    ir_node *out_reshape;
    int32_t q, k, v, mask;
    int64_t H, D, Dv;
    double scale;
    bool causal;
} attn_match;

/* May the mask (an Add operand) become the node's additive mask? f32, rank
 * <= 4, and no axis provably incompatible with [B,H,Sq,Sk]. An axis that is
 * unknown here is checked at run time by the node (it fails unless the mask
 * broadcasts without growing the scores); where the unfused graph would
 * instead grow them, it fails too: along B or Sq at the output Reshape (its
 * B, S are proven equal to Q's), along H at the same Reshape (H*Dv is a
 * constant), along Sk at MatMul(P, V). So both fail on the same inputs. */
static bool mask_fits(const fctx *c, int32_t m, const pdim t[4]) {
    const ir_value *v = c->g->values[m];
    if (v->dtype != MOPT_DTYPE_F32 || v->shape.rank < 0 || v->shape.rank > 4) return false;
    for (int32_t i = 0; i < v->shape.rank; i++) {
        pdim d = pdim_of(c, m, i), want = t[4 - v->shape.rank + i];
        if (d.sym == 0 && d.d == 1) continue;
        if (d.sym == 0 && want.sym == 0 && d.d != want.d) return false;
    }
    return true;
}

static bool match_softmax(const fctx *c, ir_node *sm, attn_match *m) {
    memset(m, 0, sizeof *m);
    m->mask = -1;
    /* Softmax over the last axis (opset < 13: axis must say so explicitly) */
    const ir_attr *ax = ir_node_attr(sm, "axis");
    int64_t axis = ax ? ir_node_attr_int(sm, "axis", 0) : (c->opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) return false;
    if (sm->n_inputs != 1 || sm->n_outputs != 1) return false;
    /* P -> MatMul(P, Vh) -> Transpose [0,2,1,3] -> Reshape [B,S,H*Dv] */
    int32_t p = sm->outputs[0];
    if (p < 0 || c->uses[p] != 1 || (c->g->values[p]->flags & IR_VALUE_OUTPUT)) return false;
    ir_node *mm2 = NULL;
    for (int32_t i = 0; i < c->g->n_nodes && !mm2; i++) {
        ir_node *n = c->g->nodes[i];
        if (!n->dead && n->n_inputs >= 1 && n->inputs[0] == p) mm2 = n;
    }
    if (!op_is(mm2, "MatMul") || mm2->inputs[1] == p) return false;
    ir_node *t_out = NULL, *r_out = NULL;
    for (int32_t i = 0; i < c->g->n_nodes; i++) {
        ir_node *n = c->g->nodes[i];
        if (n->dead || n->n_inputs < 1) continue;
        if (n->inputs[0] == mm2->outputs[0]) t_out = n;
    }
    static const int64_t p0213[4] = {0, 2, 1, 3}, p0231[4] = {0, 2, 3, 1}, p0132[4] = {0, 1, 3, 2};
    if (!op_is(t_out, "Transpose") || !perm_is(t_out, p0213, 4) || c->uses[mm2->outputs[0]] != 1)
        return false;
    for (int32_t i = 0; i < c->g->n_nodes; i++) {
        ir_node *n = c->g->nodes[i];
        if (!n->dead && n->n_inputs >= 1 && n->inputs[0] == t_out->outputs[0]) r_out = n;
    }
    if (!op_is(r_out, "Reshape") || r_out->n_inputs != 2 || c->uses[t_out->outputs[0]] != 1 ||
        (c->g->values[mm2->outputs[0]]->flags & IR_VALUE_OUTPUT) ||
        (c->g->values[t_out->outputs[0]]->flags & IR_VALUE_OUTPUT))
        return false;
    /* scores: walk back through {Add mask, Where causal}, scale, MatMul */
    int32_t x = sm->inputs[0];
    bool have_add = false, have_where = false;
    int32_t add_mask = -1, where_cond = -1;
    for (int step = 0; step < 2; step++) {
        ir_node *n = single_use_producer(c, x, "Add");
        if (n && !have_add && n->n_inputs == 2) {
            /* which operand continues the chain? exactly one may lead to Q K^T */
            bool l0 = leads_to_qk(c, n->inputs[0], 0), l1 = leads_to_qk(c, n->inputs[1], 0);
            if (l0 == l1) return false;
            int chain = l0 ? 0 : 1;
            add_mask = n->inputs[1 - chain];
            x = n->inputs[chain];
            have_add = true;
            continue;
        }
        n = single_use_producer(c, x, "Where");
        if (n && !have_where && n->n_inputs == 3) {
            double fill;
            if (!const_scalar_f(c, n->inputs[1], &fill) || !(fill <= -1e30)) return false;
            where_cond = n->inputs[0];
            x = n->inputs[2];
            have_where = true;
            continue;
        }
        break;
    }
    m->scale = 1.0;
    ir_node *sc = single_use_producer(c, x, "Div");
    if (!sc) sc = single_use_producer(c, x, "Mul");
    if (sc) {
        if (sc->n_inputs != 2) return false;
        double v;
        int k = const_scalar_f(c, sc->inputs[1], &v) ? 0 : -1;
        if (k < 0 && op_is(sc, "Mul") && const_scalar_f(c, sc->inputs[0], &v)) k = 1;
        if (k < 0 || !isfinite(v) || v == 0.0) return false;
        m->scale = op_is(sc, "Div") ? 1.0 / v : v;
        x = sc->inputs[k];
    }
    ir_node *mm1 = single_use_producer(c, x, "MatMul");
    if (!mm1) return false;
    /* Qh = Transpose[0,2,1,3](Reshape(q)); K^T = Transpose[0,2,3,1](Reshape(k))
     * or Transpose[0,1,3,2](Transpose[0,2,1,3](Reshape(k))) */
    ir_node *tq = single_use_producer(c, mm1->inputs[0], "Transpose");
    ir_node *tk = single_use_producer(c, mm1->inputs[1], "Transpose");
    ir_node *tv = single_use_producer(c, mm2->inputs[1], "Transpose");
    if (!tq || !tk || !tv || !perm_is(tq, p0213, 4) || !perm_is(tv, p0213, 4)) return false;
    int32_t k_heads = -1;
    if (perm_is(tk, p0231, 4)) {
        k_heads = tk->inputs[0];
    } else if (perm_is(tk, p0132, 4)) {
        ir_node *tk2 = single_use_producer(c, tk->inputs[0], "Transpose");
        if (!tk2 || !perm_is(tk2, p0213, 4)) return false;
        k_heads = tk2->inputs[0];
    } else {
        return false;
    }
    /* B, Sq from the Q reshape's input; Sk from K's */
    ir_node *rq = single_use_producer(c, tq->inputs[0], "Reshape");
    ir_node *rk = single_use_producer(c, k_heads, "Reshape");
    if (!rq || !rk) return false;
    const ir_value *qp = c->g->values[rq->inputs[0]], *kp = c->g->values[rk->inputs[0]];
    if (qp->dtype != MOPT_DTYPE_F32 || kp->dtype != MOPT_DTYPE_F32) return false;
    pdim b = pdim_of(c, rq->inputs[0], 0), sq = pdim_of(c, rq->inputs[0], 1);
    pdim sk = pdim_of(c, rk->inputs[0], 1);
    if (!pdim_known(b) || !pdim_known(sq) || !pdim_known(sk)) return false;
    int64_t Hq, Hk, Hv, Dk;
    m->q = match_split_heads(c, tq->inputs[0], b, sq, &Hq, &m->D);
    m->k = match_split_heads(c, k_heads, b, sk, &Hk, &Dk);
    m->v = match_split_heads(c, tv->inputs[0], b, sk, &Hv, &m->Dv);
    if (m->q < 0 || m->k < 0 || m->v < 0 || Hq != Hk || Hq != Hv || m->D != Dk) return false;
    if (c->g->values[m->v]->dtype != MOPT_DTYPE_F32) return false;
    m->H = Hq;
    /* the output Reshape: [B, Sq, H*Dv] (0 copies, -1 infers the last) */
    pdim t[3];
    if (shape_vector(c, r_out->inputs[1], t, 3) != 3) return false;
    bool allowzero = ir_node_attr_int(r_out, "allowzero", 0) != 0;
    for (int k = 0; k < 2; k++)
        if (!allowzero && t[k].sym == 0 && t[k].d == 0) t[k] = k == 0 ? b : sq;
    if (!pdim_eq(t[0], b) || !pdim_eq(t[1], sq)) return false;
    if (!(t[2].sym == 0 && (t[2].d == m->H * m->Dv || t[2].d == -1))) return false;
    /* mask and causality */
    const pdim target[4] = {b, pdim_const(m->H), sq, sk};
    if (have_add) {
        if (!mask_fits(c, add_mask, target)) return false;
        m->mask = add_mask;
    }
    if (have_where) {
        if (!is_causal_cond(c, where_cond, sq, sk)) return false;
        m->causal = true;
    }
    m->out_reshape = r_out;
    return true;
}

static char *dup_or_null(const char *s) { return mopt_strdup(s); }

/* Turns the output Reshape node into the Attention node in place. */
static mopt_status rewrite(fctx *c, const attn_match *m, const ir_node *sm) {
    ir_node *n = m->out_reshape;
    int32_t n_in = m->mask >= 0 ? 4 : 3;
    int32_t *inputs = mopt_malloc((size_t)n_in * sizeof *inputs);
    char *op = dup_or_null("Attention"), *dom = dup_or_null("mopt");
    char name[256];
    snprintf(name, sizeof name, "%.200s/fused_attention", sm->name);
    char *nm = dup_or_null(name);
    if (!inputs || !op || !dom || !nm) {
        mopt_free(inputs), mopt_free(op), mopt_free(dom), mopt_free(nm);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory fusing attention");
    }
    inputs[0] = m->q, inputs[1] = m->k, inputs[2] = m->v;
    if (n_in == 4) inputs[3] = m->mask;
    mopt_free(n->inputs);
    n->inputs = inputs, n->n_inputs = n_in;
    ir_node_set_str(n, &n->op_type, op);
    ir_node_set_str(n, &n->domain, dom);
    ir_node_set_str(n, &n->name, nm);
    for (int32_t i = 0; i < n->n_attrs; i++)
        ir_attr_clear(&n->attrs[i]);
    mopt_free(n->attrs);
    n->attrs = NULL, n->n_attrs = 0;
    n->op = ops_find("Attention", "mopt");
    ir_attr *a = ir_node_add_attr(n, "layout", IR_ATTR_STRING);
    if (!a || !(a->s = mopt_strdup("bsh")))
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory fusing attention");
    a->s_len = 3;
    if (!(a = ir_node_add_attr(n, "num_heads", IR_ATTR_INT))) return MOPT_ERR_OUT_OF_MEMORY;
    a->i = m->H;
    if (!(a = ir_node_add_attr(n, "scale", IR_ATTR_FLOAT))) return MOPT_ERR_OUT_OF_MEMORY;
    a->f = (float)m->scale;
    if (!(a = ir_node_add_attr(n, "causal", IR_ATTR_INT))) return MOPT_ERR_OUT_OF_MEMORY;
    a->i = m->causal ? 1 : 0;
    if (!n->op) return mopt_fail(MOPT_ERR_INTERNAL, "mopt.Attention is not registered");
    return MOPT_OK;
}

mopt_status pass_fuse_attention(ir_graph *g, pass_result *r) {
    fctx c = {.g = g, .opset = ir_graph_opset(g, "")};
    c.uses = mopt_malloc((size_t)(g->n_values ? g->n_values : 1) * sizeof *c.uses);
    if (!c.uses) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in fuse_attention");
    int32_t fused = 0, causal = 0, masked = 0;
    mopt_status st = MOPT_OK;
    ir_graph_use_counts(g, c.uses);
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *sm = g->nodes[i];
        if (!op_is(sm, "Softmax")) continue;
        attn_match m;
        if (!match_softmax(&c, sm, &m)) continue;
        if (ir_graph_opset(g, "mopt") < 0 && ir_graph_set_opset(g, "mopt", 1) != 0) {
            st = mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory in fuse_attention");
            break;
        }
        st = rewrite(&c, &m, sm);
        if (st) break;
        fused++;
        causal += m.causal;
        masked += m.mask >= 0;
        ir_graph_mark_dead_code(g);
        ir_graph_use_counts(g, c.uses);
    }
    mopt_free(c.uses);
    if (st) return st;
    r->rewrites = fused;
    pass_note_add(r, fused, "attention blocks");
    pass_note_add(r, masked, "with additive mask");
    pass_note_add(r, causal, "causal");
    return MOPT_OK;
}
