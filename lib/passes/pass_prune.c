/*
 * pass_prune.c — load-time pruning that cannot change what the kept outputs
 * compute:
 *  - passes_prune_outputs (the "outputs" option): keeps only the graph
 *    outputs asked for and removes the nodes that fed only the others;
 *  - pass_prune_channels (opt_level >= 1): structured sparsity left by
 *    training-time pruning. A Conv output channel whose filter and bias are
 *    all exactly zero computes zeros; when every reader of that output is a
 *    Conv (group 1) taking it as its data input, directly or through one
 *    Relu, the channel is removed from the producer and the matching input
 *    channel from every reader's filter. Likewise a MatMul column of a
 *    constant [K, N] weight that is all zero (with a zero entry in a
 *    following constant bias Add, if any), read only by MatMuls as their
 *    left operand (directly, or through the Add and/or one Relu): the column
 *    goes, and the matching row of every reader's weight.
 * Zero times a finite input is zero, so the kept outputs are unchanged for
 * finite inputs (an Inf or NaN that reached only a pruned channel no longer
 * propagates).
 *  - pass_prune_heads (opt_level >= 2, after fuse_attention): a head of a
 *    mopt.Attention (layout bsh) whose V projection columns and V bias are
 *    all exactly zero outputs zeros (a weighted mean of zero rows); so does
 *    one whose rows in every reader of the attention output (MatMuls with a
 *    constant weight) are zero. When Q, K and V each come from a MatMul with
 *    a constant weight (and an optional constant bias Add) read only by the
 *    attention, and the mask (if any) has no head axis, the head's Q, K and
 *    V columns, biases and output-projection rows go and num_heads drops.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "passes/fusion.h"

#define PRUNE_MAX_READERS 16

/* ---- outputs -------------------------------------------------------------- */

mopt_status passes_prune_outputs(ir_graph *g, const char *list, pass_result *r) {
    /* every listed name must be an output */
    const char *p;
    size_t n;
    for (const char *at = list; pass_list_next(&at, &p, &n);) {
        bool found = false;
        for (int32_t i = 0; i < g->n_outputs && !found; i++) {
            const char *nm = g->values[g->outputs[i]]->name;
            found = strlen(nm) == n && strncmp(nm, p, n) == 0;
        }
        if (!found) {
            char names[512];
            size_t len = 0;
            names[0] = '\0';
            for (int32_t i = 0; i < g->n_outputs && len < sizeof names; i++)
                len += (size_t)snprintf(names + len, sizeof names - len, "%s'%s'", i ? ", " : "",
                                        g->values[g->outputs[i]]->name);
            return mopt_fail(MOPT_ERR_NOT_FOUND,
                             "option 'outputs': the model has no output named '%.*s' (its "
                             "outputs: %s)",
                             (int)n, p, names);
        }
    }
    int32_t kept = 0, dropped = 0;
    for (int32_t i = 0; i < g->n_outputs; i++) {
        ir_value *v = g->values[g->outputs[i]];
        if (pass_name_listed(list, v->name)) {
            g->outputs[kept++] = g->outputs[i];
        } else {
            dropped++;
        }
    }
    if (kept == 0) return mopt_fail(MOPT_ERR_INVALID_ARGUMENT, "option 'outputs' names no output");
    if (dropped == 0) return MOPT_OK;
    for (int32_t i = 0; i < g->n_values; i++)
        g->values[i]->flags &= ~(uint32_t)IR_VALUE_OUTPUT;
    g->n_outputs = kept;
    for (int32_t i = 0; i < kept; i++)
        g->values[g->outputs[i]]->flags |= IR_VALUE_OUTPUT;
    int32_t nodes = ir_graph_mark_dead_code(g);
    r->rewrites = dropped + nodes;
    pass_note_add(r, dropped, dropped == 1 ? "output" : "outputs");
    pass_note_add(r, nodes, nodes == 1 ? "node" : "nodes");
    return MOPT_OK;
}

/* ---- zero channels -------------------------------------------------------- */

static bool all_zero(const float *p, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &p[i * stride], 4);
        if (u << 1) return false; /* +0 and -0 only */
    }
    return true;
}

/* The live readers of v, when all are `op` taking v as input 0 (only), with
 * a constant f32 input 1, at most PRUNE_MAX_READERS, and they are all its
 * uses (as fu_init counted them, so not a graph output either): fills
 * readers and returns their count; 0 when that does not hold. */
static int const_readers(const fu_graph *f, int32_t v, const char *op, ir_node **readers) {
    const ir_graph *g = f->g;
    int n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *c = g->nodes[i];
        if (c->dead) continue;
        for (int32_t k = 0; k < c->n_inputs; k++) {
            if (c->inputs[k] != v) continue;
            if (k != 0 || !fu_is(c, op) || c->n_inputs < 2 || n >= PRUNE_MAX_READERS) return 0;
            int64_t wn = 0;
            if (!fu_const_f32(g, c->inputs[1], &wn)) return 0;
            readers[n++] = c;
        }
    }
    return n > 0 && f->uses[v] == n ? n : 0;
}

/* The readers of v (through at most one Relu, and for MatMul first through a
 * bias Add whose constant is `bias_out`): all must be `op` taking the
 * value as input 0, with a constant f32 input 1. Fills readers; returns
 * their count, or 0 when the pattern does not hold. *mid_relu and *mid_add
 * receive the Relu and Add passed through (or NULL). */
static int readers_of(fu_graph *f, int32_t v, const char *op, bool allow_add, int64_t n_ch,
                      ir_node **mid_add, ir_node **mid_relu, ir_node **readers) {
    ir_graph *g = f->g;
    *mid_add = *mid_relu = NULL;
    if (v < 0 || (g->values[v]->flags & IR_VALUE_OUTPUT)) return 0;
    ir_node *one = fu_sole_consumer(f, v, NULL);
    if (allow_add && one && fu_is(one, "Add") && one->n_inputs == 2) {
        int k = fu_other_input(one, v);
        int64_t nb = 0;
        if (k < 0 || !fu_const_f32(g, one->inputs[k], &nb) || nb != n_ch ||
            g->values[one->inputs[k]]->shape.rank != 1)
            return 0;
        *mid_add = one;
        v = one->outputs[0];
        one = fu_sole_consumer(f, v, NULL);
    }
    if (one && fu_is(one, "Relu") && one->n_outputs == 1) {
        *mid_relu = one;
        v = one->outputs[0];
    }
    if (v < 0 || (g->values[v]->flags & IR_VALUE_OUTPUT)) return 0;
    int n = const_readers(f, v, op, readers);
    for (int i = 0; i < n; i++)
        if (strcmp(op, "Conv") == 0 && ir_node_attr_int(readers[i], "group", 1) != 1) return 0;
    return n;
}

/* Copies src (rows x cols, row-major) keeping the rows with keep_row[r] and
 * the columns with keep_col[c] (NULL: all), with `inner` floats per element. */
static void select_copy(const float *src, int64_t rows, int64_t cols, int64_t inner,
                        const bool *keep_row, const bool *keep_col, float *dst) {
    for (int64_t r = 0; r < rows; r++) {
        if (keep_row && !keep_row[r]) continue;
        for (int64_t c = 0; c < cols; c++) {
            if (keep_col && !keep_col[c]) continue;
            memcpy(dst, src + (r * cols + c) * inner, (size_t)inner * sizeof *dst);
            dst += inner;
        }
    }
}

/* Replaces input k of node n by a new weight made of the kept parts of its
 * current one, viewed as [rows, cols, inner] floats: axis `axis` of its
 * shape shrinks to new_size. */
static mopt_status rewrite_weight(ir_graph *g, ir_node *n, int32_t k, int64_t rows, int64_t cols,
                                  int64_t inner, const bool *keep_row, const bool *keep_col,
                                  int32_t axis, int64_t new_size) {
    const ir_value *wv = g->values[n->inputs[k]];
    int64_t wn = 0, dims[IR_MAX_RANK];
    const float *w = fu_const_f32(g, n->inputs[k], &wn);
    int32_t rank = wv->shape.rank;
    if (!w || axis >= rank) return mopt_fail(MOPT_ERR_INTERNAL, "pruning '%s'", n->name);
    for (int32_t a = 0; a < rank; a++)
        dims[a] = wv->shape.dims[a];
    dims[axis] = new_size;
    int64_t total = ir_numel(rank, dims);
    float *nw = mopt_malloc((size_t)(total > 0 ? total : 1) * sizeof *nw);
    if (!nw) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory pruning '%s'", n->name);
    select_copy(w, rows, cols, inner, keep_row, keep_col, nw);
    char base[256];
    snprintf(base, sizeof base, "%.200s_pruned", wv->name);
    int32_t v = fu_add_f32_weight(g, base, rank, dims, nw);
    mopt_free(nw);
    if (v < 0) return mopt_fail_context(MOPT_ERR_OUT_OF_MEMORY, "pruning '%s'", n->name);
    n->inputs[k] = v;
    return MOPT_OK;
}

/* Tries one Conv or MatMul producer; *removed gets the channels pruned. */
static mopt_status try_node(fu_graph *f, ir_node *a, bool conv, int32_t *removed) {
    ir_graph *g = f->g;
    *removed = 0;
    if (a->n_inputs < 2 || a->n_outputs != 1 || a->outputs[0] < 0) return MOPT_OK;
    if (conv && ir_node_attr_int(a, "group", 1) != 1) return MOPT_OK;
    const ir_value *wv = g->values[a->inputs[1]];
    int64_t wn = 0;
    const float *w = fu_const_f32(g, a->inputs[1], &wn);
    if (!w || !ir_shape_is_concrete(&wv->shape) || wn == 0) return MOPT_OK;
    if (conv ? wv->shape.rank < 3 : wv->shape.rank != 2) return MOPT_OK;
    /* channels: Conv filter [M, C, k...] rows; MatMul weight [K, N] columns */
    int64_t m = conv ? wv->shape.dims[0] : wv->shape.dims[1];
    int64_t per = wn / m; /* Conv: C * k...; MatMul: K */
    const float *bias = NULL;
    if (conv && a->n_inputs > 2 && a->inputs[2] >= 0) {
        int64_t bn = 0;
        bias = fu_const_f32(g, a->inputs[2], &bn);
        if (!bias || bn != m) return MOPT_OK;
    }
    bool *keep = mopt_calloc((size_t)m, sizeof *keep);
    if (!keep) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    int64_t zeros = 0;
    for (int64_t c = 0; c < m; c++) {
        bool z = conv ? all_zero(w + c * per, per, 1) : all_zero(w + c, per, m);
        if (z && bias && !all_zero(bias + c, 1, 1)) z = false;
        keep[c] = !z;
        zeros += z;
    }
    ir_node *add = NULL, *relu = NULL, *readers[PRUNE_MAX_READERS];
    int n_readers = zeros && zeros < m ? readers_of(f, a->outputs[0], conv ? "Conv" : "MatMul",
                                                    !conv, m, &add, &relu, readers)
                                       : 0;
    const float *add_bias = NULL;
    if (n_readers && add) {
        int64_t bn = 0;
        add_bias = fu_const_f32(g, add->inputs[fu_other_input(add, a->outputs[0])], &bn);
        for (int64_t c = 0; c < m; c++)
            if (!keep[c] && !all_zero(add_bias + c, 1, 1)) {
                keep[c] = true;
                zeros--;
            }
    }
    /* readers' weights must have m input channels: Conv [N, m, k...], MatMul [m, P] */
    for (int i = 0; i < n_readers; i++) {
        const ir_value *rv = g->values[readers[i]->inputs[1]];
        bool ok = ir_shape_is_concrete(&rv->shape) &&
                  (conv ? rv->shape.rank >= 3 && rv->shape.dims[1] == m
                        : rv->shape.rank == 2 && rv->shape.dims[0] == m);
        if (!ok) n_readers = 0;
    }
    mopt_status st = MOPT_OK;
    if (n_readers && zeros > 0) {
        int64_t kept = m - zeros;
        /* the producer */
        if (conv) {
            st = rewrite_weight(g, a, 1, m, 1, per, keep, NULL, 0, kept);
            if (!st && bias) st = rewrite_weight(g, a, 2, m, 1, 1, keep, NULL, 0, kept);
        } else {
            st = rewrite_weight(g, a, 1, per, m, 1, NULL, keep, 1, kept);
        }
        if (!st && add) {
            int k = fu_other_input(add, a->outputs[0]);
            st = rewrite_weight(g, add, k, 1, m, 1, NULL, keep, 0, kept);
        }
        /* the readers */
        for (int i = 0; !st && i < n_readers; i++) {
            const ir_value *rv = g->values[readers[i]->inputs[1]];
            if (conv) {
                int64_t nout = rv->shape.dims[0], inner = 1;
                for (int32_t d = 2; d < rv->shape.rank; d++)
                    inner *= rv->shape.dims[d];
                st = rewrite_weight(g, readers[i], 1, nout, m, inner, NULL, keep, 1, kept);
            } else {
                int64_t p = rv->shape.dims[1];
                st = rewrite_weight(g, readers[i], 1, m, p, 1, keep, NULL, 0, kept);
            }
        }
        if (!st) *removed = (int32_t)zeros;
    }
    mopt_free(keep);
    return st;
}

mopt_status pass_prune_channels(ir_graph *g, pass_result *r) {
    fu_graph f;
    mopt_status st = fu_init(&f, g);
    if (st) return st;
    int32_t conv_ch = 0, mm_cols = 0;
    int32_t n_nodes = g->n_nodes;
    for (int32_t i = 0; i < n_nodes && !st; i++) {
        ir_node *n = g->nodes[i];
        bool conv = fu_is(n, "Conv");
        if (!conv && !fu_is(n, "MatMul")) continue;
        int32_t removed = 0;
        st = try_node(&f, n, conv, &removed);
        if (!st && removed) {
            if (conv)
                conv_ch += removed;
            else
                mm_cols += removed;
            st = fu_refresh(&f); /* new weights were added */
        }
    }
    fu_free(&f);
    if (st) return st;
    r->rewrites = conv_ch + mm_cols;
    pass_note_add(r, conv_ch, "zero conv channels");
    pass_note_add(r, mm_cols, "zero matmul columns");
    return MOPT_OK;
}

/* ---- attention heads ------------------------------------------------------ */

/* One projection feeding a mopt.Attention input: MatMul(x, W [K, N]) and
 * an optional bias Add of a constant [N], each read once. */
typedef struct proj {
    ir_node *mm, *add;
    const float *w, *b;
    int64_t k, n;
} proj;

static bool find_proj(fu_graph *f, int32_t v, proj *p) {
    ir_graph *g = f->g;
    memset(p, 0, sizeof *p);
    if (v < 0 || f->uses[v] != 1) return false;
    ir_node *n = fu_producer(f, v);
    if (n && fu_is(n, "Add") && n->n_inputs == 2) {
        int32_t other = -1;
        for (int k = 0; k < 2 && other < 0; k++) {
            ir_node *m = fu_producer_is(f, n->inputs[k], "MatMul");
            if (m && f->uses[n->inputs[k]] == 1) other = k;
        }
        if (other < 0) return false;
        int64_t bn = 0;
        p->b = fu_const_f32(g, n->inputs[1 - other], &bn);
        if (!p->b || g->values[n->inputs[1 - other]]->shape.rank != 1) return false;
        p->add = n;
        n = fu_producer(f, n->inputs[other]);
        p->n = bn;
    }
    if (!n || !fu_is(n, "MatMul") || n->n_inputs != 2 || n->n_outputs != 1) return false;
    const ir_value *wv = g->values[n->inputs[1]];
    int64_t wn = 0;
    p->w = fu_const_f32(g, n->inputs[1], &wn);
    if (!p->w || wv->shape.rank != 2 || !ir_shape_is_concrete(&wv->shape)) return false;
    if (p->add && wv->shape.dims[1] != p->n) return false;
    p->mm = n;
    p->k = wv->shape.dims[0];
    p->n = wv->shape.dims[1];
    return true;
}

/* Removes whole heads h from a projection: columns h*d .. h*d+d-1 of W and
 * of its bias. */
static mopt_status drop_proj_heads(ir_graph *g, const proj *p, const bool *keep_col, int64_t kept) {
    mopt_status st = rewrite_weight(g, p->mm, 1, p->k, p->n, 1, NULL, keep_col, 1, kept);
    if (!st && p->add) {
        int k = p->add->inputs[0] == p->mm->outputs[0] ? 1 : 0;
        st = rewrite_weight(g, p->add, k, 1, p->n, 1, NULL, keep_col, 0, kept);
    }
    return st;
}

static void head_mask(const bool *keep_head, int64_t heads, int64_t d, bool *keep_col) {
    for (int64_t h = 0; h < heads; h++)
        for (int64_t j = 0; j < d; j++)
            keep_col[h * d + j] = keep_head[h];
}

/* One mopt.Attention (layout bsh); *removed gets the heads pruned. */
static mopt_status try_attention(fu_graph *f, ir_node *a, int32_t *removed) {
    ir_graph *g = f->g;
    *removed = 0;
    if (strcmp(ir_node_attr_string(a, "layout", "bhsd"), "bsh") != 0) return MOPT_OK;
    int64_t heads = ir_node_attr_int(a, "num_heads", 0);
    if (heads < 2 || a->n_inputs < 3 || a->n_outputs != 1 || a->outputs[0] < 0) return MOPT_OK;
    if (a->inputs[0] == a->inputs[1] || a->inputs[0] == a->inputs[2] ||
        a->inputs[1] == a->inputs[2])
        return MOPT_OK;
    proj q, k, v;
    if (!find_proj(f, a->inputs[0], &q) || !find_proj(f, a->inputs[1], &k) ||
        !find_proj(f, a->inputs[2], &v))
        return MOPT_OK;
    if (q.n != k.n || q.n % heads || v.n % heads) return MOPT_OK;
    int64_t d = q.n / heads, dv = v.n / heads;
    /* a mask with its own head axis would need slicing too */
    if (a->n_inputs > 3 && a->inputs[3] >= 0) {
        const ir_shape *ms = &g->values[a->inputs[3]]->shape;
        if (ms->rank < 0) return MOPT_OK;
        if (ms->rank >= 3 && (ms->syms[ms->rank - 3] || ms->dims[ms->rank - 3] != 1))
            return MOPT_OK;
    }
    /* the output's readers: MatMuls taking it as input 0, constant [H*Dv, P] */
    int32_t o = a->outputs[0];
    if (g->values[o]->flags & IR_VALUE_OUTPUT) return MOPT_OK;
    ir_node *readers[PRUNE_MAX_READERS];
    int n_readers = const_readers(f, o, "MatMul", readers);
    if (n_readers == 0) return MOPT_OK;
    for (int i = 0; i < n_readers; i++) {
        const ir_value *rv = g->values[readers[i]->inputs[1]];
        if (readers[i]->n_inputs != 2 || rv->shape.rank != 2 || !ir_shape_is_concrete(&rv->shape) ||
            rv->shape.dims[0] != v.n)
            return MOPT_OK;
    }
    /* a head computes nothing when its V columns and V bias are zero (its
     * output is a weighted mean of zero rows), or when every reader's rows
     * for it are zero */
    int64_t ncols = q.n > v.n ? q.n : v.n;
    bool *keep_head = mopt_malloc((size_t)(heads + ncols) * sizeof *keep_head);
    if (!keep_head) return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory pruning '%s'", a->name);
    bool *cols = keep_head + heads;
    int64_t dead = 0;
    for (int64_t h = 0; h < heads; h++) {
        bool zero_v = true;
        for (int64_t j = 0; j < dv && zero_v; j++)
            zero_v =
                all_zero(v.w + h * dv + j, v.k, v.n) && (!v.b || all_zero(v.b + h * dv + j, 1, 1));
        bool zero_o = true;
        for (int r = 0; r < n_readers && zero_o; r++) {
            int64_t rn = 0;
            const float *w = fu_const_f32(g, readers[r]->inputs[1], &rn);
            int64_t p = g->values[readers[r]->inputs[1]]->shape.dims[1];
            zero_o = all_zero(w + h * dv * p, dv * p, 1);
        }
        keep_head[h] = !(zero_v || zero_o);
        dead += !keep_head[h];
    }
    if (dead == 0 || dead == heads) {
        mopt_free(keep_head);
        return MOPT_OK;
    }
    int64_t kept = heads - dead;
    head_mask(keep_head, heads, d, cols);
    mopt_status st = drop_proj_heads(g, &q, cols, kept * d);
    if (!st) st = drop_proj_heads(g, &k, cols, kept * d);
    head_mask(keep_head, heads, dv, cols);
    if (!st) st = drop_proj_heads(g, &v, cols, kept * dv);
    for (int r = 0; !st && r < n_readers; r++) {
        int64_t p = g->values[readers[r]->inputs[1]]->shape.dims[1];
        st = rewrite_weight(g, readers[r], 1, v.n, p, 1, cols, NULL, 0, kept * dv);
    }
    mopt_free(keep_head);
    if (st) return st;
    /* the scale stays 1/sqrt(D): D is unchanged */
    for (int32_t i = 0; i < a->n_attrs; i++)
        if (strcmp(a->attrs[i].name, "num_heads") == 0) a->attrs[i].i = kept;
    *removed = (int32_t)dead;
    return MOPT_OK;
}

mopt_status pass_prune_heads(ir_graph *g, pass_result *r) {
    fu_graph f;
    mopt_status st = fu_init(&f, g);
    if (st) return st;
    int32_t total = 0;
    for (int32_t i = 0; i < g->n_nodes && !st; i++) {
        ir_node *n = g->nodes[i];
        if (n->dead || strcmp(n->domain, "mopt") != 0 || strcmp(n->op_type, "Attention") != 0)
            continue;
        int32_t removed = 0;
        st = try_attention(&f, n, &removed);
        if (!st && removed) {
            total += removed;
            st = fu_refresh(&f);
        }
    }
    fu_free(&f);
    if (st) return st;
    r->rewrites = total;
    pass_note_add(r, total, total == 1 ? "attention head" : "attention heads");
    return MOPT_OK;
}
