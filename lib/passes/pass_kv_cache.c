/*
 * pass_kv_cache.c — token-major KV caches for decoders exported "with
 * past" (run when the load option kv_cache=1 asks: it changes the model's
 * I/O shapes). Per cache, the exporter's
 *
 *   past [b, H, P, D] (graph input) ──┐
 *   new = Transpose(x [b, S, H, D], perm 0,2,1,3) ──┴─ Concat(axis 2) ─ present [b, H, P+S, D]
 *   present ─ MatMul(A, present) | FusedMatMul(A, present, transB) |
 *             Transpose(present, perm 0,1,3,2) ─ MatMul(A, ·)
 *
 * becomes
 *
 *   past [b, P, H, D] ── KVAppend(past, x) ── present [b, P+S, H, D]
 *   present ─ CacheMatMul(A, present, transB, alpha)
 *
 * (lib/ops/kvcache.c). The cache then grows at its end: a caller that binds
 * present to past's buffer (mopt_generator) has the past rows in place and
 * KVAppend writes only the new ones; the attention products read each head
 * at a row stride of H * D. Nothing proportional to the past is copied per
 * step. A Concat whose present feeds anything else (or whose new rows do
 * not come from the [b, S, H, D] -> [b, H, S, D] transpose, or whose past
 * is read elsewhere) is left as it is.
 *
 * Then each attention over the caches,
 *
 *   CacheMatMul(Q, Kc, transB=1, alpha) [-> Mul|Div(scalar c)]
 *     [-> Where(cond, ·, scalar fill) | Add(·, mask)] -> Softmax(last axis)
 *     -> CacheMatMul(·, Vc, transB=0, alpha 1)
 *
 * every intermediate read once, becomes one mopt.DecodeAttention(Q, Kc, Vc
 * [, cond | mask]) with scale = alpha * c (or alpha / c) and the fill: the
 * scores, softmax and weighted sum of V in one pass over the cache rows,
 * none of the [b, h, m, t] intermediates written. The mask must broadcast
 * to the scores without growing them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

/* A consumer of present that becomes a CacheMatMul: node, A, transB, alpha. */
typedef struct kv_use {
    ir_node *node;
    int32_t a;
    bool trans_b;
    float alpha;
} kv_use;

#define KV_MAX_USES 16

static bool rank4(const ir_graph *g, int32_t v) { return v >= 0 && g->values[v]->shape.rank == 4; }

static bool perm_is(const ir_node *n, const int64_t *want) {
    const int64_t *p;
    if (ir_node_attr_ints(n, "perm", &p) != 4) return false;
    for (int i = 0; i < 4; i++)
        if (p[i] != want[i]) return false;
    return true;
}

/* Is n a product reading v as its B, and if so how? */
static bool product_of(const ir_graph *g, const ir_node *n, int32_t v, bool transposed, kv_use *u) {
    if (n->n_inputs < 2 || n->inputs[1] != v || n->inputs[0] == v || !rank4(g, n->inputs[0]))
        return false;
    u->node = (ir_node *)n;
    u->a = n->inputs[0];
    u->alpha = 1.0f;
    if (fu_is(n, "MatMul")) {
        u->trans_b = transposed;
        return true;
    }
    if (transposed || n->dead || strcmp(n->domain, "mopt") != 0 ||
        strcmp(n->op_type, "FusedMatMul") != 0)
        return false;
    for (int32_t k = 2; k < n->n_inputs; k++)
        if (n->inputs[k] >= 0) return false; /* bias or residual */
    const char *act = ir_node_attr_string(n, "activation", "");
    if (ir_node_attr_int(n, "transA", 0) != 0 || act[0]) return false;
    u->trans_b = ir_node_attr_int(n, "transB", 0) != 0;
    u->alpha = ir_node_attr_float(n, "alpha", 1.0f);
    return true;
}

/* n is live and reads v (as any input). */
static bool live_reader(const ir_node *n, int32_t v) {
    for (int32_t k = 0; k < n->n_inputs && !n->dead; k++)
        if (n->inputs[k] == v) return true;
    return false;
}

/* Every live reader of present as a product (through at most one
 * Transpose(0,1,3,2), which then dies); false when another reader exists. */
static bool collect_uses(const fu_graph *f, int32_t present, kv_use *uses, int *n_uses,
                         ir_node **dead_t, int *n_dead) {
    static const int64_t k_swap_last[4] = {0, 1, 3, 2};
    const ir_graph *g = f->g;
    *n_uses = *n_dead = 0;
    int32_t seen = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = g->nodes[i];
        if (!live_reader(n, present)) continue;
        seen++;
        if (*n_uses == KV_MAX_USES) return false;
        if (product_of(g, n, present, false, &uses[*n_uses])) {
            (*n_uses)++;
            continue;
        }
        if (!fu_is(n, "Transpose") || !perm_is(n, k_swap_last) || n->outputs[0] < 0 ||
            (g->values[n->outputs[0]]->flags & IR_VALUE_OUTPUT) || *n_dead == KV_MAX_USES)
            return false;
        int32_t t = n->outputs[0];
        int32_t readers = 0;
        for (int32_t j = 0; j < g->n_nodes; j++) {
            const ir_node *m = g->nodes[j];
            if (!live_reader(m, t)) continue;
            readers++;
            if (*n_uses == KV_MAX_USES || !product_of(g, m, t, true, &uses[*n_uses]) ||
                !fu_is(m, "MatMul"))
                return false;
            uses[*n_uses].trans_b = true;
            (*n_uses)++;
        }
        if (readers != f->uses[t]) return false;
        dead_t[(*n_dead)++] = (ir_node *)n;
    }
    /* present is a graph output (one use) plus its readers */
    return seen + 1 == f->uses[present] && *n_uses > 0;
}

static void swap_axes_12(ir_shape *s) {
    int64_t d = s->dims[1];
    int32_t y = s->syms[1];
    s->dims[1] = s->dims[2];
    s->syms[1] = s->syms[2];
    s->dims[2] = d;
    s->syms[2] = y;
}

/* Counts (kv_pass's notes): c[0] caches rewritten, c[1] CacheMatMul
 * products (finish subtracts the two of each fused attention), c[2]
 * attentions fused, c[3] causal masks folded. */
enum { KV_CACHES, KV_PRODUCTS, KV_FUSED, KV_CAUSAL };

/* One Concat: rewritten or left alone. */
static mopt_status try_cache(fu_graph *f, ir_node *c, int32_t *counts) {
    static const int64_t k_to_heads[4] = {0, 2, 1, 3};
    ir_graph *g = f->g;
    if (!fu_is(c, "Concat") || c->n_inputs != 2 || c->outputs[0] < 0) return MOPT_OK;
    int32_t past = c->inputs[0], nw = c->inputs[1], present = c->outputs[0];
    int64_t axis = ir_node_attr_int(c, "axis", 0);
    if ((axis != 2 && axis != -2) || !rank4(g, past) || !rank4(g, nw) || !rank4(g, present))
        return MOPT_OK;
    const ir_value *pv = g->values[past];
    if (!(pv->flags & IR_VALUE_INPUT) || (pv->flags & IR_VALUE_INITIALIZER) ||
        !(g->values[present]->flags & IR_VALUE_OUTPUT) || f->uses[past] != 1 ||
        pv->dtype != MOPT_DTYPE_F32 || pv->shape.syms[1] != 0 || pv->shape.syms[3] != 0 ||
        pv->shape.syms[2] == 0)
        return MOPT_OK;
    ir_node *t = fu_producer_is(f, nw, "Transpose");
    if (!t || !perm_is(t, k_to_heads) || !rank4(g, t->inputs[0])) return MOPT_OK;
    int32_t x = t->inputs[0];
    kv_use uses[KV_MAX_USES];
    ir_node *dead_t[KV_MAX_USES];
    int n_uses, n_dead;
    if (!collect_uses(f, present, uses, &n_uses, dead_t, &n_dead)) return MOPT_OK;
    /* the rewrite: no failure may leave it half done except out of memory,
     * which fails the load */
    if (!fu_use_mopt_domain(g)) return MOPT_ERR_OUT_OF_MEMORY;
    ir_node *kva = fu_replace_node(f, c, "KVAppend", "mopt", c->name, 2, present);
    if (!kva) return MOPT_ERR_OUT_OF_MEMORY;
    kva->inputs[0] = past;
    kva->inputs[1] = x;
    swap_axes_12(&g->values[past]->shape);
    swap_axes_12(&g->values[present]->shape);
    for (int i = 0; i < n_uses; i++) {
        ir_node *u = uses[i].node;
        int32_t out = u->outputs[0];
        ir_node *m = fu_replace_node(f, u, "CacheMatMul", "mopt", u->name, 2, out);
        if (!m) return MOPT_ERR_OUT_OF_MEMORY;
        m->inputs[0] = uses[i].a;
        m->inputs[1] = present;
        if (!fu_set_int(m, "transB", uses[i].trans_b) || !fu_set_float(m, "alpha", uses[i].alpha))
            return MOPT_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < n_dead; i++)
        dead_t[i]->dead = true;
    counts[KV_PRODUCTS] += n_uses;
    counts[KV_CACHES]++;
    return fu_refresh(f);
}

/* v's producer when it is live, op_type in the default domain, and v is
 * read only once (by the pattern's next node). */
static ir_node *single_from(const fu_graph *f, int32_t v, const char *op_type) {
    ir_node *n = fu_producer_is(f, v, op_type);
    return n && f->uses[v] == 1 && n->n_outputs == 1 ? n : NULL;
}

static bool is_cmm(const ir_node *n, bool trans_b) {
    return n && !n->dead && strcmp(n->domain, "mopt") == 0 &&
           strcmp(n->op_type, "CacheMatMul") == 0 &&
           (ir_node_attr_int(n, "transB", 0) != 0) == trans_b;
}

/* Softmax over the last axis of a rank-4 value. */
static bool last_axis_softmax(const ir_graph *g, const ir_node *n) {
    if (n->n_inputs != 1 || g->values[n->inputs[0]]->shape.rank != 4) return false;
    int64_t def = ir_graph_opset(g, "") >= 13 ? -1 : 1;
    int64_t axis = ir_node_attr_int(n, "axis", def);
    return axis == -1 || axis == 3;
}

/* The scores chain ending at v: [Mul(·, c) | Mul(c, ·) | Div(·, c)] over
 * CacheMatMul(Q, Kc, transB=1), each read once; its nodes go to dead[]
 * (*n_dead grows) and the product of the scale factors to *scale. NULL when
 * v is not such a chain. */
static ir_node *scores_from(const fu_graph *f, int32_t v, double *scale, ir_node **dead,
                            int *n_dead) {
    const ir_graph *g = f->g;
    *scale = 1.0;
    ir_node *m = single_from(f, v, "Mul"), *d = m ? NULL : single_from(f, v, "Div");
    ir_node *sc = m ? m : d;
    double c = 0.0;
    if (sc) {
        if (sc->n_inputs != 2 ||
            !fu_same_shape(&g->values[sc->outputs[0]]->shape, &g->values[sc->inputs[0]]->shape))
            return NULL;
        int k = fu_const_scalar(g, sc->inputs[1], &c) ? 1 : -1;
        if (k < 0 && m && fu_const_scalar(g, sc->inputs[0], &c)) k = 0;
        if (k < 0 || c == 0.0 || !isfinite(c)) return NULL;
        *scale = m ? c : 1.0 / c;
        v = sc->inputs[1 - k];
    }
    ir_node *qk = fu_producer(f, v);
    if (!is_cmm(qk, true) || f->uses[v] != 1) return NULL;
    if (sc) dead[(*n_dead)++] = sc;
    dead[(*n_dead)++] = qk;
    *scale *= ir_node_attr_float(qk, "alpha", 1.0f);
    return qk;
}

/* The source of v through Unsqueeze nodes (v itself when none). */
static int32_t through_unsqueeze(const fu_graph *f, int32_t v) {
    for (ir_node *u; (u = fu_producer_is(f, v, "Unsqueeze")) != NULL;)
        v = u->inputs[0];
    return v;
}

/* An i64 value of shape [batch, n], n the symbol sym when sym != 0. */
static bool i64_bn(const ir_graph *g, int32_t v, int32_t sym) {
    const ir_value *x = g->values[v];
    return x->dtype == MOPT_DTYPE_I64 && x->shape.rank == 2 &&
           (sym == 0 || x->shape.syms[1] == sym);
}

/* Does v hold 0, 1, ..., T - 1 for the T positions of the cache kc:
 * Range(0, Gather(Shape(A), 1 or -1), 1) with A [batch, T]? */
static bool key_positions(const fu_graph *f, int32_t v, int32_t kc) {
    const ir_graph *g = f->g;
    const int32_t t_sym = g->values[kc]->shape.syms[1];
    ir_node *r = fu_producer_is(f, v, "Range"), *ga, *sh;
    double start, delta, idx;
    if (!r || r->n_inputs != 3 || t_sym == 0 || !fu_const_scalar(g, r->inputs[0], &start) ||
        !fu_const_scalar(g, r->inputs[2], &delta) || start != 0.0 || delta != 1.0 ||
        g->values[v]->dtype != MOPT_DTYPE_I64 ||
        !(ga = fu_producer_is(f, r->inputs[1], "Gather")) || ga->n_inputs != 2 ||
        ir_node_attr_int(ga, "axis", 0) != 0 || !fu_const_scalar(g, ga->inputs[1], &idx) ||
        (idx != 1.0 && idx != -1.0) || !(sh = fu_producer_is(f, ga->inputs[0], "Shape")) ||
        sh->n_inputs != 1 || ir_node_attr_int(sh, "start", 0) != 0 ||
        ir_node_attr_int(sh, "end", INT64_MAX) != INT64_MAX)
        return false;
    const ir_shape *a = &g->values[sh->inputs[0]]->shape;
    return a->rank == 2 && a->syms[1] == t_sym;
}

/* Is mask a decoder's causal mask over the cache kc,
 *   LessOrEqual(Range(0, T, 1), Unsqueeze..(P))   [And Unsqueeze..(Cast(A, bool))]
 * (either order of And; GreaterOrEqual with its operands swapped), with P
 * the i64 query positions [batch, m] and A the i64 key mask [batch, T]? Its
 * sources go to *qpos and *kpad (-1: none). The mask's nodes are left to
 * dead-code elimination (both layers' attention read one mask). */
static bool causal_mask(const fu_graph *f, int32_t mask, int32_t kc, int32_t *qpos, int32_t *kpad) {
    const ir_graph *g = f->g;
    *qpos = *kpad = -1;
    const ir_shape *ms = &g->values[mask]->shape;
    if (ms->rank != 4 || ms->syms[1] != 0 || ms->dims[1] != 1) return false;
    int32_t cmp = mask;
    ir_node *and = fu_producer_is(f, mask, "And");
    if (and) {
        if (and->n_inputs != 2) return false;
        for (int k = 0; k < 2 && *kpad < 0; k++) {
            ir_node *c = fu_producer_is(f, through_unsqueeze(f, and->inputs[k]), "Cast");
            if (!c || g->values[c->outputs[0]]->dtype != MOPT_DTYPE_BOOL ||
                !i64_bn(g, c->inputs[0], g->values[kc]->shape.syms[1]))
                continue;
            const ir_shape *u = &g->values[ and->inputs[k]]->shape; /* [batch, 1, 1, T] */
            if (u->rank != 4 || u->syms[1] || u->dims[1] != 1 || u->syms[2] || u->dims[2] != 1)
                continue;
            *kpad = c->inputs[0];
            cmp = and->inputs[1 - k];
        }
        if (*kpad < 0) return false;
    }
    ir_node *le = fu_producer_is(f, cmp, "LessOrEqual");
    ir_node *ge = le ? NULL : fu_producer_is(f, cmp, "GreaterOrEqual");
    ir_node *c = le ? le : ge;
    if (!c || c->n_inputs != 2) return false;
    int32_t keys = c->inputs[le ? 0 : 1], pos = c->inputs[le ? 1 : 0];
    const ir_shape *ps = &g->values[pos]->shape; /* [batch, 1, m, 1] */
    int32_t src = through_unsqueeze(f, pos);
    if (!key_positions(f, keys, kc) || ps->rank != 4 || ps->syms[1] || ps->dims[1] != 1 ||
        ps->syms[3] || ps->dims[3] != 1 || src == pos || !i64_bn(g, src, 0))
        return false;
    /* P's two axes are the mask's batch and query axes, in that order */
    const ir_shape *s2 = &g->values[src]->shape;
    for (int a = 0; a < 2; a++)
        if (s2->syms[a] != ps->syms[2 * a] || (!s2->syms[a] && s2->dims[a] != ps->dims[2 * a]))
            return false;
    *qpos = src;
    return true;
}

/* One attention ending in the context product pv: fused or left (looked
 * at only when a cache was rewritten). */
static mopt_status try_attention(fu_graph *f, ir_node *pv, int32_t *counts) {
    ir_graph *g = f->g;
    if (!counts[KV_CACHES] || !is_cmm(pv, false) || ir_node_attr_float(pv, "alpha", 1.0f) != 1.0f)
        return MOPT_OK;
    ir_node *sm = single_from(f, pv->inputs[0], "Softmax");
    if (!sm || !last_axis_softmax(g, sm)) return MOPT_OK;
    int32_t s = sm->inputs[0], mask = -1;
    ir_node *dead[4] = {sm, NULL, NULL, NULL};
    int n_dead = 1;
    double scale = 1.0, fill = -INFINITY;
    ir_node *qk = scores_from(f, s, &scale, dead, &n_dead);
    ir_node *w = qk ? NULL : single_from(f, s, "Where");
    ir_node *add = qk || w ? NULL : single_from(f, s, "Add");
    if (w && w->n_inputs == 3 && fu_const_scalar(g, w->inputs[2], &fill) &&
        g->values[w->inputs[0]]->dtype == MOPT_DTYPE_BOOL &&
        fu_same_shape(&g->values[s]->shape, &g->values[w->inputs[1]]->shape)) {
        qk = scores_from(f, w->inputs[1], &scale, dead, &n_dead);
        mask = w->inputs[0];
    }
    for (int k = 0; add && add->n_inputs == 2 && !qk && k < 2; k++) {
        int32_t other = add->inputs[1 - k];
        if (g->values[other]->dtype != MOPT_DTYPE_F32 ||
            !fu_same_shape(&g->values[s]->shape, &g->values[add->inputs[k]]->shape))
            continue;
        qk = scores_from(f, add->inputs[k], &scale, dead, &n_dead);
        mask = other;
    }
    if (!qk) return MOPT_OK;
    if (w || add) dead[n_dead++] = w ? w : add;
    int32_t q = qk->inputs[0], kc = qk->inputs[1], vc = pv->inputs[1], out = pv->outputs[0];
    if (g->values[q]->shape.rank != 4) return MOPT_OK;
    int32_t qpos = -1, kpad = -1;
    if (w && causal_mask(f, mask, kc, &qpos, &kpad)) mask = -1;
    int32_t n_in = qpos >= 0 ? (kpad >= 0 ? 6 : 5) : mask >= 0 ? 4 : 3;
    ir_node *da = fu_replace_node(f, pv, "DecodeAttention", "mopt", pv->name, n_in, out);
    if (!da) return MOPT_ERR_OUT_OF_MEMORY;
    da->inputs[0] = q;
    da->inputs[1] = kc;
    da->inputs[2] = vc;
    if (n_in > 3) da->inputs[3] = mask;
    if (n_in > 4) da->inputs[4] = qpos;
    if (n_in > 5) da->inputs[5] = kpad;
    counts[KV_CAUSAL] += qpos >= 0;
    if (!fu_set_float(da, "scale", (float)scale) || (w && !fu_set_float(da, "fill", (float)fill)))
        return MOPT_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < n_dead; i++)
        dead[i]->dead = true;
    counts[KV_FUSED]++;
    return fu_refresh(f);
}

static mopt_status finish(ir_graph *g, int32_t *counts) {
    counts[KV_PRODUCTS] -= 2 * counts[KV_FUSED];       /* the products left as CacheMatMul */
    if (counts[KV_CACHES]) ir_graph_mark_dead_code(g); /* the transposes to heads */
    return MOPT_OK;
}

static const fu_pass kv_pass = {
    .visit = try_cache,
    .then_visit = try_attention,
    .finish = finish,
    .notes = {"caches token-major (Concat -> KVAppend in place)", "CacheMatMul",
              "DecodeAttention (scores, softmax, weighted V in one pass)",
              "causal masks folded (key positions read, no mask tensor)"},
    .rewrites = 1u << KV_CACHES,
};

mopt_status pass_kv_cache(ir_graph *g, pass_result *r) { return fu_run_pass(g, r, &kv_pass); }
