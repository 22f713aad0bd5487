/*
 * control.c — the "control" op family: ONNX If (opset 1+), Loop (1+) and
 * Scan (8, and 9+), whose bodies are subgraphs. The ops hold the semantics
 * (which branch, how many iterations, what is carried, sliced and stacked);
 * inferring or running a subgraph is the service in ctx->subgraphs (ops.h),
 * given by the passes at load and by the runtime at run time. Captured
 * outer-scope values are the node's last inputs (ir_subgraph.h) and are
 * passed to every subgraph after its formal inputs.
 *
 * Output shapes depend on data (the branch taken, the trip count), so at run
 * time inference does the work and keeps the outputs (service keep); run
 * then copies them into the buffers the executor placed. Control nodes are
 * never bridged: a subgraph must see the dtypes it was written for.
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "ir/ir_subgraph.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- params ------------------------------------------------------------------ */

typedef struct if_params {
    ir_graph *branch[2]; /* then, else */
    int32_t n_caps;
} if_params;

typedef struct loop_params {
    ir_graph *body;
    int32_t n_caps;
    int32_t n_carried, n_scan;
} loop_params;

typedef struct scan_params {
    ir_graph *body;
    int32_t n_caps;
    int32_t n_state, n_in, n_out; /* N states, M scan inputs, K scan outputs */
    bool batched;                 /* opset 8: batch axis 0 and sequence_lens */
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs; /* NULL: all 0 */
} scan_params;

static mopt_status graph_attr(const op_ctx *ctx, const char *name, ir_graph **out) {
    const ir_attr *a = ir_node_attr(ctx->node, name);
    if (!a || a->type != IR_ATTR_GRAPH || !a->g)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute '%s' (a graph) is missing", name);
    *out = a->g;
    return MOPT_OK;
}

/* The number of inputs of sub besides the captured ones must be `want`. */
static mopt_status formal_inputs(const op_ctx *ctx, const char *what, const ir_graph *sub,
                                 int32_t n_caps, int32_t want) {
    if (sub->n_inputs - n_caps != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s has %d inputs; expected %d", what,
                       (int)(sub->n_inputs - n_caps), (int)want);
    return MOPT_OK;
}

static mopt_status if_parse(const op_ctx *ctx, void *params) {
    if_params *p = params;
    const ir_node *n = ctx->node;
    mopt_status st = op_formal_inputs(ctx, 1, "cond", &p->n_caps);
    if (st) return st;
    static const char *const names[2] = {"then_branch", "else_branch"};
    for (int b = 0; b < 2; b++) {
        st = graph_attr(ctx, names[b], &p->branch[b]);
        if (!st) st = formal_inputs(ctx, names[b], p->branch[b], p->n_caps, 0);
        if (st) return st;
        if (p->branch[b]->n_outputs != n->n_outputs)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s has %d outputs but the node has %d",
                           names[b], (int)p->branch[b]->n_outputs, (int)n->n_outputs);
    }
    return MOPT_OK;
}

static mopt_status loop_parse(const op_ctx *ctx, void *params) {
    loop_params *p = params;
    const ir_node *n = ctx->node;
    p->n_caps = ir_node_captures(n);
    int32_t formal = n->n_inputs - p->n_caps;
    if (formal < 2)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "takes M, cond and the loop-carried values");
    p->n_carried = formal - 2;
    mopt_status st = graph_attr(ctx, "body", &p->body);
    if (!st) st = formal_inputs(ctx, "body", p->body, p->n_caps, 2 + p->n_carried);
    if (st) return st;
    p->n_scan = p->body->n_outputs - 1 - p->n_carried;
    if (p->n_scan < 0 || n->n_outputs != p->n_carried + p->n_scan)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "body has %d outputs and the node %d; with %d loop-carried values they must "
                       "be 1 + %d + K and %d + K",
                       (int)p->body->n_outputs, (int)n->n_outputs, (int)p->n_carried,
                       (int)p->n_carried, (int)p->n_carried);
    return MOPT_OK;
}

/* Reads an optional ints attribute of exactly `want` values (NULL when absent). */
static mopt_status scan_list(const op_ctx *ctx, const char *name, int32_t want, bool directions,
                             const int64_t **out) {
    *out = NULL;
    if (!ir_node_attr(ctx->node, name)) return MOPT_OK;
    const int64_t *v = NULL;
    int64_t n = ir_node_attr_ints(ctx->node, name, &v);
    if (n != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s has %" PRId64 " values; expected %d", name,
                       n, (int)want);
    for (int64_t i = 0; directions && i < n; i++)
        if (v[i] != 0 && v[i] != 1)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "%s[%" PRId64 "] is %" PRId64 "; must be 0 or 1", name, i, v[i]);
    *out = v;
    return MOPT_OK;
}

static mopt_status scan_parse(const op_ctx *ctx, void *params) {
    scan_params *p = params;
    const ir_node *n = ctx->node;
    p->n_caps = ir_node_captures(n);
    p->batched = ctx->opset < 9;
    int64_t m = ir_node_attr_int(n, "num_scan_inputs", -1);
    int32_t formal = n->n_inputs - p->n_caps - (p->batched ? 1 : 0);
    if (m < 1 || m > formal)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "num_scan_inputs is %" PRId64 "; must be in [1, %d] (the node's inputs)", m,
                       (int)formal);
    p->n_in = (int32_t)m;
    p->n_state = formal - p->n_in;
    mopt_status st = graph_attr(ctx, "body", &p->body);
    if (!st) st = formal_inputs(ctx, "body", p->body, p->n_caps, p->n_state + p->n_in);
    if (st) return st;
    p->n_out = p->body->n_outputs - p->n_state;
    if (p->n_out < 0 || n->n_outputs != p->body->n_outputs)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "body has %d outputs and the node %d; they must be equal and at least the "
                       "%d state values",
                       (int)p->body->n_outputs, (int)n->n_outputs, (int)p->n_state);
    if (p->batched) return scan_list(ctx, "directions", p->n_in, true, &p->in_dirs);
    st = scan_list(ctx, "scan_input_directions", p->n_in, true, &p->in_dirs);
    if (!st) st = scan_list(ctx, "scan_input_axes", p->n_in, false, &p->in_axes);
    if (!st) st = scan_list(ctx, "scan_output_directions", p->n_out, true, &p->out_dirs);
    if (!st) st = scan_list(ctx, "scan_output_axes", p->n_out, false, &p->out_axes);
    return st;
}

/* ---- shapes -------------------------------------------------------------------- */

/* What both shapes have in common: a dim that differs becomes unknown, a
 * rank that differs makes the rank unknown. */
static void shape_merge(const ir_shape *a, const ir_shape *b, ir_shape *out) {
    if (a->rank < 0 || b->rank < 0 || a->rank != b->rank) {
        ir_shape_set_unknown(out);
        return;
    }
    ir_shape r = *a;
    for (int32_t d = 0; d < r.rank; d++) {
        bool same = a->syms[d] == b->syms[d] &&
                    (a->syms[d] > 0 || (a->syms[d] == 0 && a->dims[d] == b->dims[d]));
        if (!same) {
            r.syms[d] = -1;
            r.dims[d] = 0;
        }
    }
    *out = r;
}

static bool shape_equal(const ir_shape *a, const ir_shape *b) {
    if (a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->syms[d] != b->syms[d] || (a->syms[d] == 0 && a->dims[d] != b->dims[d])) return false;
    return true;
}

/* s without axis `axis` (unknown rank stays unknown). */
static void shape_drop(const ir_shape *s, int32_t axis, ir_shape *out) {
    if (s->rank < 0 || axis >= s->rank) {
        ir_shape_set_unknown(out);
        return;
    }
    ir_shape r = *s;
    r.rank = s->rank - 1;
    for (int32_t d = axis; d < r.rank; d++) {
        r.dims[d] = s->dims[d + 1];
        r.syms[d] = s->syms[d + 1];
    }
    *out = r;
}

/* s with a new axis at `axis` of size (dim, sym). */
static void shape_insert(const ir_shape *s, int32_t axis, int64_t dim, int32_t sym, ir_shape *out) {
    if (s->rank < 0 || s->rank >= IR_MAX_RANK || axis > s->rank) {
        ir_shape_set_unknown(out);
        return;
    }
    ir_shape r;
    r.rank = s->rank + 1;
    for (int32_t d = 0, j = 0; d < r.rank; d++) {
        if (d == axis) {
            r.dims[d] = dim;
            r.syms[d] = sym;
        } else {
            r.dims[d] = s->dims[j];
            r.syms[d] = s->syms[j];
            j++;
        }
    }
    *out = r;
}

/* ---- the service ----------------------------------------------------------------- */

static mopt_status need_service(const op_ctx *ctx, bool run) {
    const op_subgraphs *s = ctx->subgraphs;
    if (!s || !(run ? (s->fn->run && s->fn->keep && s->fn->take) : s->fn->infer != NULL))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "its subgraphs cannot be %s here",
                       run ? "run" : "inferred");
    return MOPT_OK;
}

static mopt_status sub_infer(const op_ctx *ctx, ir_graph *sub, const op_tensor *in, int n_in,
                             op_tensor *out) {
    for (int32_t k = 0; k < sub->n_outputs; k++) {
        out[k].dtype = MOPT_DTYPE_UNDEFINED;
        out[k].data = NULL;
        ir_shape_set_unknown(&out[k].shape);
    }
    return ctx->subgraphs->fn->infer(ctx->subgraphs->self, ctx, sub, in, n_in, out,
                                     (int)sub->n_outputs);
}

static mopt_status sub_run(const op_ctx *ctx, const ir_graph *sub, const op_tensor *in, int n_in,
                           op_tensor *out) {
    for (int32_t k = 0; k < sub->n_outputs; k++)
        out[k].data = NULL;
    return ctx->subgraphs->fn->run(ctx->subgraphs->self, ctx, sub, in, n_in, out,
                                   (int)sub->n_outputs);
}

static void free_data(op_tensor *t, int n) {
    for (int k = 0; k < n; k++) {
        mopt_aligned_free(t[k].data);
        t[k].data = NULL;
    }
}

/* Computes every output of the node into buffers of its own (mopt_aligned_alloc). */
typedef mopt_status (*compute_fn)(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *res,
                                  int n_out);

/* Run-time inference: computes, keeps the results and gives their shapes. */
static mopt_status infer_by_running(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out, compute_fn compute) {
    mopt_status st = need_service(ctx, true);
    if (st) return st;
    op_tensor *res = mopt_calloc((size_t)(n_out ? n_out : 1), sizeof *res);
    if (!res) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    st = compute(ctx, in, n_in, res, n_out);
    if (st) {
        free_data(res, n_out);
        mopt_free(res);
        return st;
    }
    for (int k = 0; k < n_out; k++) {
        out[k].dtype = res[k].dtype;
        out[k].shape = res[k].shape;
        out[k].data = NULL;
    }
    ctx->subgraphs->fn->keep(ctx->subgraphs->self, res, n_out);
    mopt_free(res);
    return MOPT_OK;
}

/* Run: the results kept by inference (or computed now) into out[]. */
static mopt_status run_from_kept(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out, compute_fn compute) {
    mopt_status st = need_service(ctx, true);
    if (st) return st;
    op_tensor *res = mopt_calloc((size_t)(n_out ? n_out : 1), sizeof *res);
    if (!res) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    if (!ctx->subgraphs->fn->take(ctx->subgraphs->self, res, n_out))
        st = compute(ctx, in, n_in, res, n_out);
    for (int k = 0; k < n_out && !st; k++) {
        char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
        if (res[k].dtype != out[k].dtype || !shape_equal(&res[k].shape, &out[k].shape)) {
            st = op_fail(ctx, MOPT_ERR_SHAPE, "output %d is %s %s; %s %s was planned", k,
                         mopt_dtype_name(res[k].dtype), op_shape_str(ctx, &res[k].shape, a),
                         mopt_dtype_name(out[k].dtype), op_shape_str(ctx, &out[k].shape, b));
            break;
        }
        size_t nb = op_nbytes(&out[k]);
        if (nb) memcpy(out[k].data, res[k].data, nb);
    }
    free_data(res, n_out);
    mopt_free(res);
    return st;
}

/* A scalar's value (bool or any integer dtype) from a concrete tensor. */
static mopt_status read_scalar_i64(const op_ctx *ctx, const op_tensor *t, const char *what,
                                   int64_t *out) {
    if (op_numel(t) != 1) return op_fail(ctx, MOPT_ERR_SHAPE, "%s must have one element", what);
    switch (t->dtype) {
    case MOPT_DTYPE_BOOL: *out = *(const uint8_t *)t->data != 0; break;
    case MOPT_DTYPE_I64: *out = *(const int64_t *)t->data; break;
    case MOPT_DTYPE_I32: *out = *(const int32_t *)t->data; break;
    default:
        return op_fail(ctx, MOPT_ERR_TYPE, "%s must be bool or int64, not %s", what,
                       mopt_dtype_name(t->dtype));
    }
    return MOPT_OK;
}

/* A new buffer holding a copy of t (the result of zero iterations). */
static mopt_status copy_tensor(const op_ctx *ctx, const op_tensor *t, op_tensor *out) {
    size_t nb = op_nbytes(t);
    out->dtype = t->dtype;
    out->shape = t->shape;
    out->data = mopt_aligned_alloc(nb ? nb : 1);
    if (!out->data) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes)", nb);
    if (nb) memcpy(out->data, t->data, nb);
    return MOPT_OK;
}

/* An empty stack of slices shaped like the subgraph output `v` (dims that
 * are not fixed count 0), with an axis of 0 at `axis` (of rank + 1). */
static mopt_status empty_stack(const op_ctx *ctx, const ir_graph *sub, int32_t v, int64_t axis,
                               op_tensor *out) {
    const ir_value *iv = sub->values[v];
    ir_shape e = iv->shape;
    if (e.rank < 0) ir_shape_set_scalar(&e);
    for (int32_t d = 0; d < e.rank; d++)
        if (e.syms[d] != 0) e.syms[d] = 0, e.dims[d] = 0;
    if (axis < 0) axis += e.rank + 1;
    if (axis < 0 || axis > e.rank) axis = 0;
    shape_insert(&e, (int32_t)axis, 0, 0, &out->shape);
    out->dtype = iv->dtype;
    out->data = mopt_aligned_alloc(1);
    if (!out->data) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    return MOPT_OK;
}

/* ---- If ---------------------------------------------------------------------------- */

static mopt_status if_check_cond(const op_ctx *ctx, const op_tensor *c) {
    static const mopt_dtype k_bool[] = {MOPT_DTYPE_BOOL};
    mopt_status st = op_expect_dtype(ctx, c, 0, k_bool, 1);
    if (st) return st;
    if (ir_shape_is_concrete(&c->shape) && ir_shape_numel(&c->shape) != 1) {
        char b[IR_SHAPE_STR_CAP];
        return op_fail(ctx, MOPT_ERR_SHAPE, "cond must have one element, not %s",
                       op_shape_str(ctx, &c->shape, b));
    }
    return MOPT_OK;
}

static mopt_status if_compute(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *res,
                              int n_out) {
    (void)n_out;
    const if_params *p = ctx->params;
    int64_t cond = 0;
    mopt_status st = op_require_inputs(ctx, in, 1);
    if (!st) st = read_scalar_i64(ctx, &in[0], "cond", &cond);
    if (st) return st;
    return sub_run(ctx, p->branch[cond ? 0 : 1], in + 1, n_in - 1, res);
}

static mopt_status if_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const if_params *p = ctx->params;
    mopt_status st = if_check_cond(ctx, &in[0]);
    if (st) return st;
    if (ctx->runtime) return infer_by_running(ctx, in, n_in, out, n_out, if_compute);
    if ((st = need_service(ctx, false))) return st;
    op_tensor *br = mopt_calloc((size_t)(2 * n_out + 1), sizeof *br);
    if (!br) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    /* A branch that cannot be inferred for these inputs is not an error
     * while the other can: the condition may never select it (exporters
     * guard rank-specific code so). Its outputs are unknown then; taking it
     * at run time fails there. */
    int taken = -1;
    if (in[0].data && ir_shape_numel(&in[0].shape) == 1)
        taken = *(const uint8_t *)in[0].data ? 0 : 1;
    mopt_status bst[2];
    for (int b = 0; b < 2; b++) {
        bst[b] = sub_infer(ctx, p->branch[b], in + 1, n_in - 1, br + b * n_out);
        if (bst[b] == MOPT_ERR_OUT_OF_MEMORY || (bst[b] && b == taken)) {
            mopt_free(br);
            return bst[b];
        }
        if (bst[b] && b == 1 && bst[0]) {
            mopt_free(br);
            return bst[1];
        }
        if (bst[b]) {
            mopt_clear_error();
            for (int k = 0; k < n_out; k++) {
                br[b * n_out + k].dtype = MOPT_DTYPE_UNDEFINED;
                ir_shape_set_unknown(&br[b * n_out + k].shape);
            }
        }
    }
    for (int k = 0; k < n_out && !st; k++) {
        const op_tensor *t = &br[k], *e = &br[n_out + k];
        if (taken >= 0) {
            out[k].dtype = br[taken * n_out + k].dtype;
            out[k].shape = br[taken * n_out + k].shape;
            continue;
        }
        if (t->dtype != MOPT_DTYPE_UNDEFINED && e->dtype != MOPT_DTYPE_UNDEFINED &&
            t->dtype != e->dtype) {
            st = op_fail(ctx, MOPT_ERR_TYPE, "output %d is %s in then_branch but %s in else_branch",
                         k, mopt_dtype_name(t->dtype), mopt_dtype_name(e->dtype));
            break;
        }
        out[k].dtype = t->dtype != MOPT_DTYPE_UNDEFINED ? t->dtype : e->dtype;
        shape_merge(&t->shape, &e->shape, &out[k].shape);
    }
    mopt_free(br);
    return st;
}

static mopt_status if_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    return run_from_kept(ctx, in, n_in, out, n_out, if_compute);
}

/* ---- Loop ---------------------------------------------------------------------------- */

/* Inputs from `from` on feed a subgraph: none may be omitted (an empty
 * name), the subgraph would see a value of no type or shape. */
static mopt_status no_omitted(const op_ctx *ctx, int32_t from) {
    for (int32_t k = from; k < ctx->node->n_inputs; k++)
        if (ctx->node->inputs[k] < 0)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input %d is empty (it is not optional)",
                           (int)k);
    return MOPT_OK;
}

static mopt_status loop_check(const op_ctx *ctx, const op_tensor *in) {
    static const mopt_dtype k_i64[] = {MOPT_DTYPE_I64};
    static const mopt_dtype k_bool[] = {MOPT_DTYPE_BOOL};
    mopt_status st = op_expect_dtype(ctx, &in[0], 0, k_i64, 1);
    if (!st) st = op_expect_dtype(ctx, &in[1], 1, k_bool, 1);
    if (!st) st = no_omitted(ctx, 2);
    return st;
}

/* Stacks slices of one shape along a new axis 0: a growing buffer. */
typedef struct stack_buf {
    op_tensor first; /* dtype and shape of the slices (data unused) */
    uint8_t *data;
    size_t used, cap, slice;
    int64_t count;
} stack_buf;

static mopt_status stack_push(const op_ctx *ctx, stack_buf *s, const op_tensor *t, int k) {
    char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
    if (s->count == 0) {
        s->first = *t;
        s->slice = op_nbytes(t);
    } else if (t->dtype != s->first.dtype || !shape_equal(&t->shape, &s->first.shape)) {
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "scan output %d is %s in one iteration and %s in another", k,
                       op_shape_str(ctx, &s->first.shape, a), op_shape_str(ctx, &t->shape, b));
    }
    if (s->used + s->slice > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : s->slice * 8;
        if (cap < s->used + s->slice) cap = s->used + s->slice;
        uint8_t *nd = mopt_aligned_alloc(cap ? cap : 1);
        if (!nd) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory stacking output %d", k);
        if (s->used) memcpy(nd, s->data, s->used);
        mopt_aligned_free(s->data);
        s->data = nd;
        s->cap = cap;
    }
    if (s->slice) memcpy(s->data + s->used, t->data, s->slice);
    s->used += s->slice;
    s->count++;
    return MOPT_OK;
}

static mopt_status loop_compute(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *res,
                                int n_out) {
    (void)n_out;
    const loop_params *p = ctx->params;
    const int32_t N = p->n_carried, K = p->n_scan, nb_in = 2 + N + p->n_caps;
    bool has_m = op_has_input(in, n_in, 0), has_cond = op_has_input(in, n_in, 1);
    int64_t max_trip = INT64_MAX, cond = 1;
    mopt_status st = MOPT_OK;
    if (has_m) st = read_scalar_i64(ctx, &in[0], "M", &max_trip);
    if (!st && has_cond) st = read_scalar_i64(ctx, &in[1], "cond", &cond);
    if (st) return st;
    op_tensor *bin = mopt_calloc((size_t)nb_in, sizeof *bin);
    op_tensor *bout = mopt_calloc((size_t)(1 + N + K), sizeof *bout);
    stack_buf *stk = mopt_calloc((size_t)(K ? K : 1), sizeof *stk);
    if (!bin || !bout || !stk) {
        mopt_free(bin);
        mopt_free(bout);
        mopt_free(stk);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    int64_t iter = 0;
    uint8_t cond_in = 1;
    bin[0].dtype = MOPT_DTYPE_I64;
    ir_shape_set_scalar(&bin[0].shape);
    bin[0].data = &iter;
    bin[1].dtype = MOPT_DTYPE_BOOL;
    ir_shape_set_scalar(&bin[1].shape);
    bin[1].data = &cond_in;
    for (int32_t k = 0; k < N; k++)
        bin[2 + k] = in[2 + k];
    for (int32_t k = 0; k < p->n_caps; k++)
        bin[2 + N + k] = in[n_in - p->n_caps + k];
    bool owned = false; /* bin[2..2+N) are buffers of ours (not the node's inputs) */
    for (iter = 0; !st && iter < max_trip && (!has_cond || cond); iter++) {
        cond_in = (uint8_t)(cond != 0);
        st = sub_run(ctx, p->body, bin, nb_in, bout);
        if (st) break;
        if (has_cond) st = read_scalar_i64(ctx, &bout[0], "the body's cond output", &cond);
        mopt_aligned_free(bout[0].data);
        for (int32_t k = 0; k < N; k++) {
            if (owned) mopt_aligned_free(bin[2 + k].data);
            bin[2 + k] = bout[1 + k];
        }
        owned = true;
        for (int32_t k = 0; k < K; k++) {
            if (!st) st = stack_push(ctx, &stk[k], &bout[1 + N + k], k);
            mopt_aligned_free(bout[1 + N + k].data);
        }
    }
    for (int32_t k = 0; k < N; k++) {
        if (st) {
            if (owned) mopt_aligned_free(bin[2 + k].data);
        } else if (owned) {
            res[k] = bin[2 + k];
        } else {
            st = copy_tensor(ctx, &in[2 + k], &res[k]);
        }
    }
    for (int32_t k = 0; k < K; k++) {
        stack_buf *s = &stk[k];
        if (st) {
            mopt_aligned_free(s->data);
            continue;
        }
        if (s->count == 0) {
            mopt_aligned_free(s->data);
            st = empty_stack(ctx, p->body, p->body->outputs[1 + N + k], 0, &res[N + k]);
            continue;
        }
        res[N + k].dtype = s->first.dtype;
        shape_insert(&s->first.shape, 0, s->count, 0, &res[N + k].shape);
        res[N + k].data = s->data ? s->data : mopt_aligned_alloc(1);
        if (!res[N + k].data) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    mopt_free(bin);
    mopt_free(bout);
    mopt_free(stk);
    return st;
}

/* The n values a body carries from one iteration to the next, bin[c0 + k]
 * in and bout[o0 + k] out (what names one in errors): their dtypes and
 * what the initial values and every iteration's results have in common,
 * by running the body's inference to a fixpoint (dims only ever become
 * unknown; from the fourth round on the shapes are left unknown). */
static mopt_status carried_fixpoint(const op_ctx *ctx, ir_graph *body, op_tensor *bin,
                                    int32_t nb_in, op_tensor *bout, int32_t c0, int32_t o0,
                                    int32_t n, const char *what) {
    mopt_status st = MOPT_OK;
    for (int round = 0; !st; round++) {
        st = sub_infer(ctx, body, bin, nb_in, bout);
        if (st) break;
        bool changed = false;
        for (int32_t k = 0; k < n && !st; k++) {
            op_tensor *c = &bin[c0 + k];
            const op_tensor *o = &bout[o0 + k];
            if (c->dtype != MOPT_DTYPE_UNDEFINED && o->dtype != MOPT_DTYPE_UNDEFINED &&
                c->dtype != o->dtype) {
                st = op_fail(ctx, MOPT_ERR_TYPE, "%s %d is %s but the body computes %s", what,
                             (int)k, mopt_dtype_name(c->dtype), mopt_dtype_name(o->dtype));
                break;
            }
            if (c->dtype == MOPT_DTYPE_UNDEFINED) c->dtype = o->dtype;
            ir_shape m;
            shape_merge(&c->shape, &o->shape, &m);
            if (round >= 3) ir_shape_set_unknown(&m);
            if (!shape_equal(&m, &c->shape)) {
                c->shape = m;
                changed = true;
            }
        }
        if (!changed) break;
    }
    return st;
}

static mopt_status loop_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const loop_params *p = ctx->params;
    const int32_t N = p->n_carried, K = p->n_scan, nb_in = 2 + N + p->n_caps;
    mopt_status st = loop_check(ctx, in);
    if (st) return st;
    if (ctx->runtime) return infer_by_running(ctx, in, n_in, out, n_out, loop_compute);
    if ((st = need_service(ctx, false))) return st;
    op_tensor *bin = mopt_calloc((size_t)nb_in, sizeof *bin);
    op_tensor *bout = mopt_calloc((size_t)(1 + N + K), sizeof *bout);
    if (!bin || !bout) {
        mopt_free(bin);
        mopt_free(bout);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    bin[0].dtype = MOPT_DTYPE_I64;
    ir_shape_set_scalar(&bin[0].shape);
    bin[1].dtype = MOPT_DTYPE_BOOL;
    ir_shape_set_scalar(&bin[1].shape);
    for (int32_t k = 0; k < N; k++) {
        bin[2 + k] = in[2 + k];
        bin[2 + k].data = NULL;
    }
    for (int32_t k = 0; k < p->n_caps; k++)
        bin[2 + N + k] = in[n_in - p->n_caps + k];
    /* loop-carried shapes: after M and cond in, after cond out */
    if (!st) st = carried_fixpoint(ctx, p->body, bin, nb_in, bout, 2, 1, N, "loop-carried value");
    /* the trip count is known when M is and no condition can end the loop */
    int64_t trips = -1;
    if (!st && in[0].data && !op_wired(ctx, 1) && ir_shape_numel(&in[0].shape) == 1)
        trips = *(const int64_t *)in[0].data;
    for (int32_t k = 0; k < N && !st; k++) {
        out[k].dtype = bin[2 + k].dtype;
        out[k].shape = bin[2 + k].shape;
    }
    for (int32_t k = 0; k < K && !st; k++) {
        out[N + k].dtype = bout[1 + N + k].dtype;
        shape_insert(&bout[1 + N + k].shape, 0, trips < 0 ? 0 : trips, trips < 0 ? -1 : 0,
                     &out[N + k].shape);
    }
    mopt_free(bin);
    mopt_free(bout);
    return st;
}

static mopt_status loop_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    return run_from_kept(ctx, in, n_in, out, n_out, loop_compute);
}

/* ---- Scan ---------------------------------------------------------------------------- */

/* Where the inputs of a Scan node are: opset 8 has sequence_lens first. */
static int32_t scan_first(const scan_params *p) { return p->batched ? 1 : 0; }

/* Axis of scan input j (input rank r) or output k (slice rank r). */
static mopt_status scan_axis(const op_ctx *ctx, const int64_t *axes, int32_t j, int32_t rank,
                             const char *what, int32_t *out) {
    int64_t a = axes ? axes[j] : 0;
    if (a < -rank || a >= rank)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%s[%d] is %" PRId64 "; the rank is %d", what,
                       (int)j, a, (int)rank);
    *out = (int32_t)(a < 0 ? a + rank : a);
    return MOPT_OK;
}

/* One scan over L steps (the whole of Scan 9+, one batch row of Scan 8).
 * xs[j] are the scan inputs with their axes xaxis[j]; states and outputs as
 * the body's. res[0..N) get the final states, res[N..N+K) the stacked
 * outputs (buffers of their own). */
static mopt_status scan_steps(const op_ctx *ctx, const op_tensor *st0, const op_tensor *xs,
                              const int32_t *xaxis, int64_t L, const op_tensor *caps,
                              op_tensor *res) {
    const scan_params *p = ctx->params;
    const int32_t N = p->n_state, M = p->n_in, K = p->n_out, nb_in = N + M + p->n_caps;
    mopt_status st = MOPT_OK;
    op_tensor *bin = mopt_calloc((size_t)nb_in, sizeof *bin);
    op_tensor *bout = mopt_calloc((size_t)(N + K ? N + K : 1), sizeof *bout);
    uint8_t **tmp = mopt_calloc((size_t)M, sizeof *tmp);
    ir_shape *elem = mopt_calloc((size_t)(K ? K : 1), sizeof *elem);
    int32_t *oaxis = mopt_calloc((size_t)(K ? K : 1), sizeof *oaxis);
    if (!bin || !bout || !tmp || !elem || !oaxis) {
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int32_t k = 0; k < N; k++)
        bin[k] = st0[k];
    for (int32_t k = 0; k < p->n_caps; k++)
        bin[N + M + k] = caps[k];
    for (int32_t j = 0; j < M && !st; j++) {
        op_tensor *x = &bin[N + j];
        x->dtype = xs[j].dtype;
        shape_drop(&xs[j].shape, xaxis[j], &x->shape);
        if (xaxis[j] > 0) {
            size_t nb = op_nbytes(x);
            tmp[j] = mopt_aligned_alloc(nb ? nb : 1);
            if (!tmp[j]) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    bool owned = false;
    for (int64_t t = 0; t < L && !st; t++) {
        for (int32_t j = 0; j < M; j++) {
            int64_t idx = p->in_dirs && p->in_dirs[j] ? L - 1 - t : t;
            int64_t outer, len, inner;
            op_axis_split(&xs[j].shape, xaxis[j], &outer, &len, &inner);
            size_t es = op_esize(&xs[j]);
            const uint8_t *src = xs[j].data;
            if (xaxis[j] == 0) {
                bin[N + j].data = (void *)(src + (size_t)(idx * inner) * es);
                continue;
            }
            for (int64_t o = 0; o < outer; o++)
                memcpy(tmp[j] + (size_t)(o * inner) * es,
                       src + (size_t)((o * len + idx) * inner) * es, (size_t)inner * es);
            bin[N + j].data = tmp[j];
        }
        st = sub_run(ctx, p->body, bin, nb_in, bout);
        if (st) break;
        for (int32_t k = 0; k < N; k++) {
            if (owned) mopt_aligned_free(bin[k].data);
            bin[k] = bout[k];
        }
        owned = true;
        for (int32_t k = 0; k < K && !st; k++) {
            op_tensor *o = &bout[N + k], *r = &res[N + k];
            char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
            if (t == 0) {
                elem[k] = o->shape;
                st = scan_axis(ctx, p->out_axes, k, o->shape.rank + 1, "scan_output_axes",
                               &oaxis[k]);
                if (st) break;
                r->dtype = o->dtype;
                shape_insert(&o->shape, oaxis[k], L, 0, &r->shape);
                size_t nb = op_nbytes(r);
                r->data = mopt_aligned_alloc(nb ? nb : 1);
                if (!r->data) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
            } else if (o->dtype != r->dtype || !shape_equal(&o->shape, &elem[k])) {
                st = op_fail(ctx, MOPT_ERR_SHAPE,
                             "scan output %d is %s in one iteration and %s in another", (int)k,
                             op_shape_str(ctx, &elem[k], a), op_shape_str(ctx, &o->shape, b));
            }
            if (st) break;
            int64_t pos = p->out_dirs && p->out_dirs[k] ? L - 1 - t : t;
            int64_t outer, inner;
            op_axis_split(&r->shape, oaxis[k], &outer, NULL, &inner);
            size_t es = op_esize(r);
            for (int64_t q = 0; q < outer; q++)
                memcpy((uint8_t *)r->data + (size_t)((q * L + pos) * inner) * es,
                       (const uint8_t *)o->data + (size_t)(q * inner) * es, (size_t)inner * es);
        }
        for (int32_t k = 0; k < K; k++)
            mopt_aligned_free(bout[N + k].data);
    }
    for (int32_t k = 0; k < N; k++) {
        if (st) {
            if (owned) mopt_aligned_free(bin[k].data);
        } else if (owned) {
            res[k] = bin[k];
        } else {
            st = copy_tensor(ctx, &st0[k], &res[k]);
        }
    }
    for (int32_t k = 0; k < K && !st && L == 0; k++)
        st = empty_stack(ctx, p->body, p->body->outputs[N + k], p->out_axes ? p->out_axes[k] : 0,
                         &res[N + k]);
done:
    if (tmp)
        for (int32_t j = 0; j < M; j++)
            mopt_aligned_free(tmp[j]);
    mopt_free(tmp);
    mopt_free(bin);
    mopt_free(bout);
    mopt_free(elem);
    mopt_free(oaxis);
    return st;
}

/* Scan 9+: one scan over the whole inputs. */
static mopt_status scan9_compute(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *res) {
    const scan_params *p = ctx->params;
    const int32_t N = p->n_state, M = p->n_in;
    int32_t xaxis[OP_MAX_IO];
    int64_t L = -1;
    mopt_status st = op_require_inputs(ctx, in, N + M);
    for (int32_t j = 0; j < M && !st; j++) {
        const op_tensor *x = &in[N + j];
        st = scan_axis(ctx, p->in_axes, j, x->shape.rank, "scan_input_axes", &xaxis[j]);
        if (st) break;
        int64_t len = x->shape.dims[xaxis[j]];
        if (L >= 0 && len != L)
            st = op_fail(ctx, MOPT_ERR_SHAPE,
                         "scan input %d has %" PRId64 " steps but scan input 0 has %" PRId64,
                         (int)j, len, L);
        L = len;
    }
    if (st) return st;
    return scan_steps(ctx, in, in + N, xaxis, L, in + (n_in - p->n_caps), res);
}

/* Scan 8: a scan per batch row (axis 0), the sequence on axis 1, each row
 * as long as sequence_lens says (the rest of its outputs zero). */
static mopt_status scan8_compute(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *res) {
    const scan_params *p = ctx->params;
    const int32_t N = p->n_state, M = p->n_in, K = p->n_out;
    const op_tensor *st_in = in + 1, *x_in = in + 1 + N;
    mopt_status st = op_require_inputs(ctx, in + 1, N + M);
    if (st) return st;
    if (x_in[0].shape.rank < 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "scan inputs need a batch and a sequence axis");
    int64_t B = x_in[0].shape.dims[0], S = x_in[0].shape.dims[1];
    for (int32_t j = 0; j < M; j++)
        if (x_in[j].shape.rank < 2 || x_in[j].shape.dims[0] != B || x_in[j].shape.dims[1] != S)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "scan input %d is not [%" PRId64 ", %" PRId64 ", ...]", (int)j, B, S);
    for (int32_t k = 0; k < N; k++)
        if (st_in[k].shape.rank < 1 || st_in[k].shape.dims[0] != B)
            return op_fail(ctx, MOPT_ERR_SHAPE, "state %d does not have the batch size %" PRId64,
                           (int)k, B);
    const int64_t *lens = NULL;
    if (op_has_input(in, n_in, 0)) {
        if (in[0].dtype != MOPT_DTYPE_I64 || op_numel(&in[0]) != B)
            return op_fail(ctx, MOPT_ERR_SHAPE, "sequence_lens must be int64 [%" PRId64 "]", B);
        lens = in[0].data;
    }
    op_tensor *rs = mopt_calloc((size_t)(N + K ? N + K : 1), sizeof *rs);
    op_tensor *row = mopt_calloc((size_t)(N + M ? N + M : 1), sizeof *row);
    int32_t xaxis[OP_MAX_IO] = {0};
    if (!rs || !row) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int64_t b = 0; b < B && !st; b++) {
        for (int32_t k = 0; k < N + M; k++) {
            const op_tensor *t = &in[1 + k];
            row[k].dtype = t->dtype;
            shape_drop(&t->shape, 0, &row[k].shape);
            row[k].data = (uint8_t *)t->data + (size_t)b * op_nbytes(&row[k]);
        }
        int64_t L = lens ? lens[b] : S;
        if (L < 0 || L > S) {
            st = op_fail(ctx, MOPT_ERR_SHAPE,
                         "sequence_lens[%" PRId64 "] is %" PRId64 "; the sequence has %" PRId64, b,
                         L, S);
            break;
        }
        for (int32_t j = 0; j < M; j++) /* the row's first L steps */
            row[N + j].shape.dims[0] = L;
        st = scan_steps(ctx, row, row + N, xaxis, L, in + (n_in - p->n_caps), rs);
        if (st) break;
        for (int32_t k = 0; k < N + K && !st; k++) {
            op_tensor *r = &res[k];
            ir_shape want = rs[k].shape;
            if (k >= N) want.dims[0] = S; /* padded to the full sequence */
            if (b == 0) {
                r->dtype = rs[k].dtype;
                shape_insert(&want, 0, B, 0, &r->shape);
                size_t nb = op_nbytes(r);
                r->data = mopt_aligned_alloc(nb ? nb : 1);
                if (!r->data) {
                    st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
                    break;
                }
                memset(r->data, 0, nb);
            } else {
                ir_shape have;
                shape_drop(&r->shape, 0, &have);
                if (rs[k].dtype != r->dtype || !shape_equal(&want, &have)) {
                    st = op_fail(ctx, MOPT_ERR_SHAPE, "output %d differs between batch rows",
                                 (int)k);
                    break;
                }
            }
            size_t row_bytes = op_nbytes(r) / (size_t)B;
            if (op_nbytes(&rs[k]))
                memcpy((uint8_t *)r->data + (size_t)b * row_bytes, rs[k].data, op_nbytes(&rs[k]));
        }
        free_data(rs, N + K);
    }
    mopt_free(rs);
    mopt_free(row);
    return st;
}

static mopt_status scan_compute(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *res,
                                int n_out) {
    (void)n_out;
    const scan_params *p = ctx->params;
    return p->batched ? scan8_compute(ctx, in, n_in, res) : scan9_compute(ctx, in, n_in, res);
}

static mopt_status scan_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const scan_params *p = ctx->params;
    const int32_t N = p->n_state, M = p->n_in, K = p->n_out, nb_in = N + M + p->n_caps;
    const int32_t first = scan_first(p), drop = p->batched ? 1 : 0;
    if (p->batched && op_has_input(in, n_in, 0)) {
        mopt_status st = op_expect_i64(ctx, &in[0], 0);
        if (st) return st;
    }
    mopt_status omitted = no_omitted(ctx, first);
    if (omitted) return omitted;
    if (ctx->runtime) return infer_by_running(ctx, in, n_in, out, n_out, scan_compute);
    mopt_status st = need_service(ctx, false);
    if (st) return st;
    op_tensor *bin = mopt_calloc((size_t)nb_in, sizeof *bin);
    op_tensor *bout = mopt_calloc((size_t)(N + K ? N + K : 1), sizeof *bout);
    if (!bin || !bout) {
        mopt_free(bin);
        mopt_free(bout);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* the number of steps and the batch: from the first scan input */
    int64_t L = 0, B = 0;
    int32_t Lsym = -1, Bsym = -1;
    for (int32_t k = 0; k < N; k++) {
        bin[k].dtype = in[first + k].dtype;
        if (p->batched)
            shape_drop(&in[first + k].shape, 0, &bin[k].shape);
        else
            bin[k].shape = in[first + k].shape;
    }
    for (int32_t j = 0; j < M && !st; j++) {
        const op_tensor *x = &in[first + N + j];
        op_tensor *s = &bin[N + j];
        s->dtype = x->dtype;
        if (x->shape.rank < 0) {
            ir_shape_set_unknown(&s->shape);
            continue;
        }
        int32_t ax = 0;
        if (p->batched) {
            if (x->shape.rank < 2) {
                st = op_fail(ctx, MOPT_ERR_SHAPE, "scan inputs need a batch and a sequence axis");
                break;
            }
            ax = 1;
        } else {
            st = scan_axis(ctx, p->in_axes, j, x->shape.rank, "scan_input_axes", &ax);
            if (st) break;
        }
        ir_shape tmp;
        shape_drop(&x->shape, ax, &tmp);
        if (p->batched)
            shape_drop(&tmp, 0, &s->shape);
        else
            s->shape = tmp;
        if (j == 0) {
            L = x->shape.dims[ax];
            Lsym = x->shape.syms[ax];
            if (p->batched) B = x->shape.dims[0], Bsym = x->shape.syms[0];
        }
    }
    for (int32_t k = 0; k < p->n_caps; k++)
        bin[N + M + k] = in[n_in - p->n_caps + k];
    /* states keep what every step agrees on (as Loop's carried values) */
    if (!st) st = carried_fixpoint(ctx, p->body, bin, nb_in, bout, 0, 0, N, "state");
    for (int32_t k = 0; k < N + K && !st; k++) {
        const op_tensor *o = k < N ? &bin[k] : &bout[k];
        out[k].dtype = o->dtype;
        if (k < N) {
            if (p->batched)
                shape_insert(&o->shape, 0, B, Bsym, &out[k].shape);
            else
                out[k].shape = o->shape;
            continue;
        }
        if (o->shape.rank < 0) {
            ir_shape_set_unknown(&out[k].shape);
            continue;
        }
        int32_t ax = 1 - drop;
        if (!p->batched) {
            st = scan_axis(ctx, p->out_axes, k - N, o->shape.rank + 1, "scan_output_axes", &ax);
            if (st) break;
        }
        ir_shape tmp;
        shape_insert(&o->shape, ax, L, Lsym, &tmp);
        if (p->batched)
            shape_insert(&tmp, 0, B, Bsym, &out[k].shape);
        else
            out[k].shape = tmp;
    }
    mopt_free(bin);
    mopt_free(bout);
    return st;
}

static mopt_status scan_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    return run_from_kept(ctx, in, n_in, out, n_out, scan_compute);
}

/* ---- table ----------------------------------------------------------------------- */

static const op_def k_control[] = {
    {"If", "", 1, OP_MAX_IO, 1, OP_MAX_IO, if_infer, if_run, NULL, .params_size = sizeof(if_params),
     .parse = if_parse},
    {"Loop", "", 0, OP_MAX_IO, 0, OP_MAX_IO, loop_infer, loop_run, NULL,
     .params_size = sizeof(loop_params), .parse = loop_parse},
    {"Scan", "", 0, OP_MAX_IO, 1, OP_MAX_IO, scan_infer, scan_run, NULL,
     .params_size = sizeof(scan_params), .parse = scan_parse},
};

const op_def *ops_family_control(size_t *count) {
    *count = OP_COUNT(k_control);
    return k_control;
}
