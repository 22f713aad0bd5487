/*
 * movement.c — the "movement" operator family: ops that move elements
 * around without arithmetic: Transpose, Concat, Split, Slice, Gather, Tile,
 * Pad, Trilu, GatherElements, GatherND, ScatterND, ScatterElements (and
 * Scatter, its opset 9-10 name), TensorScatter, SpaceToDepth, DepthToSpace
 * and ReverseSequence; and mopt.ChannelsLastConcat/Split (f32, the layout
 * pass's channel-axis Concat and Split on plain or channels-last data).
 * They work on any dtype by element size. Attributes
 * are parsed once into each op's params.
 *
 * Inference propagates symbolic dims where the op keeps an axis whole
 * (Transpose, Concat's other axes, Gather's other axes, full-range Slice);
 * a sliced/tiled/padded symbolic axis becomes unknown. Index checks (Gather)
 * happen at run time and fail with a message, never a crash. The copying
 * itself lives in kernels/ref/movement.c.
 */
#include <inttypes.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/ref/ref_movement.h"
#include "ops/bridge.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/layout.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- helpers ------------------------------------------------------------ */

static void dim_unknown(ir_shape *s, int32_t a) {
    s->dims[a] = 0;
    s->syms[a] = -1;
}

/* Reads integer indices (i32 or i64) into a new int64 buffer, normalizing
 * negatives against dim and failing on out-of-range values. *out is NULL for
 * an empty tensor. */
static mopt_status read_indices(const op_ctx *ctx, const op_tensor *t, int64_t dim, int64_t **out,
                                int64_t *count) {
    *out = NULL;
    int64_t n = op_numel(t);
    *count = n;
    if (n <= 0) return MOPT_OK;
    size_t nb;
    if (!mopt_mul_overflow((size_t)n, sizeof(int64_t), &nb))
        return op_fail(ctx, MOPT_ERR_LIMIT, "too many indices");
    int64_t *idx = op_work_get(ctx, 0, nb);
    if (!idx)
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for %" PRId64 " indices", n);
    for (int64_t i = 0; i < n; i++) {
        int64_t v = t->dtype == MOPT_DTYPE_I64 ? ((const int64_t *)t->data)[i]
                                               : ((const int32_t *)t->data)[i];
        if (v < -dim || v >= dim) {
            op_work_put(ctx, idx);
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                           "index %" PRId64 " (element %" PRId64 " of the indices) is out of "
                           "range for a dimension of size %" PRId64,
                           v, i, dim);
        }
        idx[i] = v < 0 ? v + dim : v;
    }
    *out = idx;
    return MOPT_OK;
}

/* The axis attribute (default 0) of Gather, GatherElements, Split, ... */
typedef struct axis_params {
    int64_t axis; /* normalized against the input's rank when used */
} axis_params;

static const op_attr_spec k_axis_attrs[] = {OP_ATTR_I64(axis_params, axis, "axis", 0)};

static mopt_status params_axis(const op_ctx *ctx, int32_t rank, int32_t *out) {
    return op_axis(ctx, ((const axis_params *)ctx->params)->axis, rank, "axis", out);
}

/* ---- Transpose ------------------------------------------------------------ */

typedef struct transpose_params {
    const int64_t *perm;
    int64_t n_perm; /* -1: absent (the axes reversed) */
} transpose_params;

static mopt_status transpose_parse(const op_ctx *ctx, void *params) {
    transpose_params *p = params;
    p->n_perm = ir_node_attr_ints(ctx->node, "perm", &p->perm);
    return MOPT_OK;
}

mopt_status ops_transpose_perm(const op_ctx *ctx, int32_t rank, bool report, int32_t *perm) {
    const transpose_params *tp = ctx->params;
    const int64_t *p = tp->perm;
    int64_t n = tp->n_perm;
    if (n < 0) {
        for (int32_t i = 0; i < rank; i++)
            perm[i] = rank - 1 - i;
        return MOPT_OK;
    }
    if (n != rank)
        return !report ? MOPT_ERR_INVALID_MODEL
                       : op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                                 "perm has %" PRId64 " entries for rank %d", n, (int)rank);
    bool seen[IR_MAX_RANK] = {false};
    for (int32_t i = 0; i < rank; i++) {
        if (p[i] < 0 || p[i] >= rank || seen[p[i]])
            return !report ? MOPT_ERR_INVALID_MODEL
                           : op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                                     "perm is not a permutation of 0..%d (entry %d is %" PRId64 ")",
                                     (int)rank - 1, (int)i, p[i]);
        seen[p[i]] = true;
        perm[i] = (int32_t)p[i];
    }
    return MOPT_OK;
}

static mopt_status transpose_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 0, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape;
    if (x->rank < 0) {
        int64_t n = ((const transpose_params *)ctx->params)->n_perm;
        if (n >= 0 && n <= IR_MAX_RANK)
            op_set_unknown_dims(&out[0].shape, (int32_t)n);
        else
            ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t perm[IR_MAX_RANK];
    if ((st = ops_transpose_perm(ctx, x->rank, true, perm))) return st;
    ir_shape o;
    memset(&o, 0, sizeof o);
    o.rank = x->rank;
    for (int32_t i = 0; i < o.rank; i++) {
        o.dims[i] = x->dims[perm[i]];
        o.syms[i] = x->syms[perm[i]];
    }
    out[0].shape = o;
    return MOPT_OK;
}

static mopt_status transpose_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    int32_t perm[IR_MAX_RANK];
    int64_t in_st[IR_MAX_RANK], src_st[IR_MAX_RANK];
    const ir_shape *x = &in[0].shape;
    mopt_status st = ops_transpose_perm(ctx, x->rank, true, perm);
    if (st) return st;
    op_strides(x, in_st);
    for (int32_t i = 0; i < x->rank; i++)
        src_st[i] = in_st[perm[i]];
    ref_copy_strided(out[0].data, in[0].data, op_esize(&in[0]), x->rank, out[0].shape.dims, src_st);
    return MOPT_OK;
}

/* ---- Concat ------------------------------------------------------------- */

static mopt_status concat_parse(const op_ctx *ctx, void *params) {
    const ir_attr *aa = ir_node_attr(ctx->node, "axis");
    if (!aa || aa->type != IR_ATTR_INT)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'axis' (int) is required");
    ((axis_params *)params)->axis = aa->i;
    return MOPT_OK;
}

static mopt_status concat_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const axis_params *aa = ctx->params;
    mopt_status st = MOPT_OK;
    out[0].dtype = MOPT_DTYPE_UNDEFINED;
    for (int k = 0; k < n_in; k++) {
        if (k < ctx->node->n_inputs && ctx->node->inputs[k] < 0)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input %d is empty (none is optional)", k);
        if ((st = op_expect_any(ctx, &in[k], k))) return st;
        if (in[k].dtype == MOPT_DTYPE_UNDEFINED) continue;
        if (out[0].dtype != MOPT_DTYPE_UNDEFINED && out[0].dtype != in[k].dtype)
            return op_fail(ctx, MOPT_ERR_TYPE, "input %d has type %s but an earlier input has %s",
                           k, mopt_dtype_name(in[k].dtype), mopt_dtype_name(out[0].dtype));
        out[0].dtype = in[k].dtype;
    }
    int32_t rank = -1;
    for (int k = 0; k < n_in; k++) {
        if (in[k].shape.rank < 0) continue;
        if (rank >= 0 && in[k].shape.rank != rank)
            return op_fail(ctx, MOPT_ERR_SHAPE, "input %d has rank %d but input 0 has rank %d", k,
                           (int)in[k].shape.rank, (int)rank);
        rank = in[k].shape.rank;
    }
    ir_shape_set_unknown(&out[0].shape);
    if (rank < 0) return MOPT_OK;
    if (rank == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "cannot concatenate scalars");
    int32_t axis;
    if ((st = op_axis(ctx, aa->axis, rank, "axis", &axis))) return st;
    ir_shape o;
    op_set_unknown_dims(&o, rank);
    bool sum_known = true;
    int64_t sum = 0;
    char b1[IR_SHAPE_STR_CAP], b2[IR_SHAPE_STR_CAP];
    int first = -1;
    for (int k = 0; k < n_in; k++) {
        const ir_shape *s = &in[k].shape;
        if (s->rank < 0) {
            sum_known = false;
            continue;
        }
        if (first < 0) first = k;
        for (int32_t a = 0; a < rank; a++) {
            if (a == axis) {
                if (s->syms[a] != 0)
                    sum_known = false;
                else if (sum > INT64_MAX - s->dims[a])
                    return op_fail(ctx, MOPT_ERR_LIMIT, "concatenated size overflows");
                else
                    sum += s->dims[a];
                continue;
            }
            if (s->syms[a] == 0) {
                if (o.syms[a] == 0 && o.dims[a] != s->dims[a])
                    return op_fail(ctx, MOPT_ERR_SHAPE,
                                   "input %d has shape %s but input %d has %s (axis %d differs)", k,
                                   op_shape_str(ctx, s, b1), first,
                                   op_shape_str(ctx, &in[first].shape, b2), (int)a);
                o.dims[a] = s->dims[a];
                o.syms[a] = 0;
            } else if (s->syms[a] > 0 && o.syms[a] < 0) {
                o.syms[a] = s->syms[a];
            }
        }
    }
    if (sum_known) {
        o.dims[axis] = sum;
        o.syms[axis] = 0;
    }
    out[0].shape = o;
    return MOPT_OK;
}

/* Concat's and Split's run: the whole tensor is the n parts side by side
 * along the axis; join copies the parts into the whole (Concat), else the
 * whole into the parts (Split). */
static mopt_status axis_parts_run(const op_ctx *ctx, const op_tensor *whole, const op_tensor *parts,
                                  int n, bool join) {
    const ir_shape *w = &whole->shape;
    int32_t axis;
    mopt_status st = params_axis(ctx, w->rank, &axis);
    if (st) return st;
    size_t esz = op_esize(whole);
    int64_t outer, inner;
    op_axis_split(w, axis, &outer, NULL, &inner);
    size_t whole_row = (size_t)(w->dims[axis] * inner) * esz;
    char *at = whole->data;
    for (int k = 0; k < n; k++) {
        size_t block = (size_t)(parts[k].shape.dims[axis] * inner) * esz;
        if (join)
            ref_copy_blocks(at, whole_row, parts[k].data, block, outer, block);
        else
            ref_copy_blocks(parts[k].data, block, at, whole_row, outer, block);
        at += block;
    }
    return MOPT_OK;
}

static mopt_status concat_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    return axis_parts_run(ctx, &out[0], in, n_in, true);
}

/* ---- Split ---------------------------------------------------------------- */

typedef struct split_params {
    int64_t axis;         /* first: read by params_axis */
    const int64_t *split; /* the split attribute (before opset 13) */
    int64_t n_split;      /* -1: absent */
    bool has_num;         /* num_outputs given (opset 18+) */
    int64_t num;
} split_params;

static mopt_status split_parse(const op_ctx *ctx, void *params) {
    split_params *p = params;
    p->axis = ir_node_attr_int(ctx->node, "axis", 0);
    p->n_split = -1;
    if (ctx->opset < 13) {
        p->n_split = ir_node_attr_ints(ctx->node, "split", &p->split);
        if (p->n_split > 64) return op_fail(ctx, MOPT_ERR_LIMIT, "split has too many entries");
    }
    p->has_num = ctx->opset >= 18 && ir_node_attr(ctx->node, "num_outputs");
    p->num = ir_node_attr_int(ctx->node, "num_outputs", 0);
    return MOPT_OK;
}

/* Split sizes: 1 (known, in sizes[0..n_out)), 0 (unknown), -1 (error). dim
 * is the axis size (sym != 0 means not concrete). */
static int split_sizes(const op_ctx *ctx, const op_tensor *in, int n_in, int n_out, int64_t dim,
                       bool dim_known, int64_t *sizes, mopt_status *st) {
    int64_t n = -1;
    int64_t buf[64];
    *st = MOPT_OK;
    const split_params *sp = ctx->params;
    if (ctx->opset < 13) {
        n = sp->n_split;
        if (n > 0) memcpy(buf, sp->split, (size_t)n * sizeof *buf);
    } else if (op_wired(ctx, 1)) {
        int r = op_known_ints(ctx, &in[1], "split", buf, 64, &n);
        if (r < 0) {
            *st = MOPT_ERR_INVALID_MODEL;
            return -1;
        }
        if (r == 0) return 0;
    }
    if (n >= 0) {
        if (n != n_out) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                          "split has %" PRId64 " entries but the node has %d outputs", n, n_out);
            return -1;
        }
        int64_t sum = 0;
        for (int64_t i = 0; i < n; i++) {
            if (buf[i] < 0 || sum > INT64_MAX - buf[i]) {
                *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "split[%d] is %" PRId64, (int)i, buf[i]);
                return -1;
            }
            sum += buf[i];
            sizes[i] = buf[i];
        }
        if (dim_known && sum != dim) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE,
                          "split sizes add up to %" PRId64 " but the axis has size %" PRId64, sum,
                          dim);
            return -1;
        }
        return 1;
    }
    if (!dim_known) return 0;
    if (sp->has_num) {
        int64_t num = sp->num;
        if (num != n_out) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                          "num_outputs is %" PRId64 " but the node has %d outputs", num, n_out);
            return -1;
        }
        int64_t chunk = (dim + n_out - 1) / n_out;
        if (chunk * (n_out - 1) > dim) {
            *st = op_fail(ctx, MOPT_ERR_SHAPE,
                          "an axis of size %" PRId64 " cannot be split into %d chunks", dim, n_out);
            return -1;
        }
        for (int i = 0; i < n_out; i++)
            sizes[i] = i < n_out - 1 ? chunk : dim - chunk * i;
        return 1;
    }
    if (dim % n_out != 0) {
        *st = op_fail(ctx, MOPT_ERR_SHAPE,
                      "an axis of size %" PRId64 " cannot be split evenly into %d outputs", dim,
                      n_out);
        return -1;
    }
    for (int i = 0; i < n_out; i++)
        sizes[i] = dim / n_out;
    return 1;
}

static mopt_status split_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    if (!st && n_in > 1) st = op_expect_index(ctx, &in[1], 1);
    if (st) return st;
    const ir_shape *x = &in[0].shape;
    for (int k = 0; k < n_out; k++) {
        out[k].dtype = in[0].dtype;
        ir_shape_set_unknown(&out[k].shape);
    }
    if (x->rank < 0) return MOPT_OK;
    int32_t axis;
    if ((st = params_axis(ctx, x->rank, &axis))) return st;
    int64_t sizes[64];
    int r = split_sizes(ctx, in, n_in, n_out, x->dims[axis], x->syms[axis] == 0, sizes, &st);
    if (r < 0) return st;
    for (int k = 0; k < n_out; k++) {
        out[k].shape = *x;
        if (r == 1) {
            out[k].shape.dims[axis] = sizes[k];
            out[k].shape.syms[axis] = 0;
        } else {
            dim_unknown(&out[k].shape, axis);
        }
    }
    return MOPT_OK;
}

static mopt_status split_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    return axis_parts_run(ctx, &in[0], out, n_out, false);
}

/* ---- mopt.ChannelsLastConcat, mopt.ChannelsLastSplit ---------------------- */

/* cl_params: ops/layout.h (shared with cpu/layout_cpu.c). */

static mopt_status cl_parse(const op_ctx *ctx, void *params) {
    cl_params *p = params;
    p->axis = ir_node_attr_int(ctx->node, "axis", 1);
    p->in_layout = ir_node_attr_int(ctx->node, "in_layout", 0);
    p->out_layout = ir_node_attr_int(ctx->node, "out_layout", 0);
    p->n_sizes = ir_node_attr_ints(ctx->node, "sizes", &p->sizes);
    return MOPT_OK;
}

/* f32, rank 3-5, the channel axis. */
static mopt_status cl_check(const op_ctx *ctx, const op_tensor *t, int index) {
    mopt_status st = op_expect_f32(ctx, t, index);
    if (st) return st;
    if (t->shape.rank >= 0 && (t->shape.rank < 3 || t->shape.rank > 5))
        return op_fail(ctx, MOPT_ERR_SHAPE, "tensor %d must have rank 3 to 5", index);
    int32_t axis;
    if (t->shape.rank >= 0 && (st = params_axis(ctx, t->shape.rank, &axis))) return st;
    if (t->shape.rank >= 0 && axis != 1)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "only the channel axis (1)");
    return MOPT_OK;
}

/* Channels [soff, soff + cnt) of src (sc channels, channels-last when sn)
 * into channels [doff, ...) of dst (dc channels, dn), N images of S pixels. */
static void cl_copy(float *dst, bool dn, int64_t dc, int64_t doff, const float *src, bool sn,
                    int64_t sc, int64_t soff, int64_t cnt, int64_t N, int64_t S) {
    for (int64_t n = 0; n < N; n++) {
        if (dn && sn) {
            for (int64_t i = 0; i < S; i++)
                memcpy(dst + (n * S + i) * dc + doff, src + (n * S + i) * sc + soff,
                       (size_t)cnt * sizeof(float));
        } else if (!dn && !sn) {
            memcpy(dst + (n * dc + doff) * S, src + (n * sc + soff) * S,
                   (size_t)(cnt * S) * sizeof(float));
        } else if (dn) {
            for (int64_t i = 0; i < S; i++)
                for (int64_t c = 0; c < cnt; c++)
                    dst[(n * S + i) * dc + doff + c] = src[(n * sc + soff + c) * S + i];
        } else {
            for (int64_t c = 0; c < cnt; c++)
                for (int64_t i = 0; i < S; i++)
                    dst[(n * dc + doff + c) * S + i] = src[(n * S + i) * sc + soff + c];
        }
    }
}

static int64_t cl_pixels(const ir_shape *s) {
    int64_t p = 1;
    for (int32_t i = 2; i < s->rank; i++)
        p *= s->dims[i];
    return p;
}

static mopt_status cl_concat_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    mopt_status st = MOPT_OK;
    for (int k = 0; k < n_in && !st; k++)
        st = cl_check(ctx, &in[k], k);
    return st ? st : concat_infer(ctx, in, n_in, out, n_out);
}

static mopt_status cl_concat_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const cl_params *p = ctx->params;
    const ir_shape *o = &out[0].shape;
    int64_t N = o->dims[0], C = o->dims[1], S = cl_pixels(o), off = 0;
    for (int k = 0; k < n_in; k++) {
        int64_t c = in[k].shape.dims[1];
        cl_copy(out[0].data, p->out_layout & 1, C, off, in[k].data, (p->in_layout >> k) & 1, c, 0,
                c, N, S);
        off += c;
    }
    return MOPT_OK;
}

static mopt_status cl_split_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    const cl_params *p = ctx->params;
    mopt_status st = cl_check(ctx, &in[0], 0);
    if (st) return st;
    if (p->n_sizes != n_out)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "sizes has %lld entries for %d outputs",
                       (long long)p->n_sizes, n_out);
    const ir_shape *x = &in[0].shape;
    int64_t sum = 0;
    for (int k = 0; k < n_out; k++) {
        if (p->sizes[k] < 0 || p->sizes[k] > INT64_MAX - sum)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "sizes[%d] is invalid", k);
        sum += p->sizes[k];
        out[k].dtype = MOPT_DTYPE_F32;
        out[k].shape = *x;
        if (x->rank >= 0) {
            out[k].shape.dims[1] = p->sizes[k];
            out[k].shape.syms[1] = 0;
        }
    }
    if (x->rank >= 0 && x->syms[1] == 0 && x->dims[1] >= 0 && x->dims[1] != sum)
        return op_fail(ctx, MOPT_ERR_SHAPE, "sizes add up to %lld, X has %lld channels",
                       (long long)sum, (long long)x->dims[1]);
    return MOPT_OK;
}

static mopt_status cl_split_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const cl_params *p = ctx->params;
    const ir_shape *x = &in[0].shape;
    int64_t N = x->dims[0], C = x->dims[1], S = cl_pixels(x), off = 0;
    for (int k = 0; k < n_out; k++) {
        int64_t c = out[k].shape.dims[1];
        if (off + c > C) return op_fail(ctx, MOPT_ERR_SHAPE, "outputs exceed X's channels");
        cl_copy(out[k].data, (p->out_layout >> k) & 1, c, 0, in[0].data, p->in_layout & 1, C, off,
                c, N, S);
        off += c;
    }
    return MOPT_OK;
}

/* ---- Slice ---------------------------------------------------------------- */

typedef struct slice_params {
    int32_t n;                 /* number of sliced axes */
    int32_t axes[IR_MAX_RANK]; /* normalized */
    int64_t starts[IR_MAX_RANK], ends[IR_MAX_RANK], steps[IR_MAX_RANK];
} slice_params;

/* Slice's attributes (before opset 10) */
typedef struct slice_attr_params {
    const int64_t *starts, *ends, *axes;
    int64_t ns, ne, na; /* -1: absent */
} slice_attr_params;

static mopt_status slice_parse(const op_ctx *ctx, void *params) {
    slice_attr_params *p = params;
    p->ns = p->ne = p->na = -1;
    if (ctx->opset >= 10) return MOPT_OK;
    p->ns = ir_node_attr_ints(ctx->node, "starts", &p->starts);
    if (p->ns > IR_MAX_RANK) goto too_many;
    p->ne = ir_node_attr_ints(ctx->node, "ends", &p->ends);
    if (p->ne > IR_MAX_RANK) goto too_many;
    p->na = ir_node_attr_ints(ctx->node, "axes", &p->axes);
    if (p->na > IR_MAX_RANK) goto too_many;
    if (p->ns < 0 || p->ne < 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attributes 'starts' and 'ends' are required");
    return MOPT_OK;
too_many:
    return op_fail(ctx, MOPT_ERR_LIMIT, "too many slice entries");
}

/* Reads starts/ends/axes/steps (inputs since opset 10, attributes before).
 * Returns 1 (known), 0 (unknown at load; *axes_known tells whether at least
 * the axes are), -1 (error, *st set). rank must be known. */
static int slice_read(const op_ctx *ctx, const op_tensor *in, int n_in, int32_t rank,
                      slice_params *p, bool *axes_known, mopt_status *st) {
    int64_t starts[IR_MAX_RANK], ends[IR_MAX_RANK], axes[IR_MAX_RANK], steps[IR_MAX_RANK];
    int64_t ns = 0, ne = 0, na = -1, nst = -1;
    *st = MOPT_OK;
    *axes_known = false;
    bool values_known = true;
    if (ctx->opset < 10) {
        const slice_attr_params *sa = ctx->params;
        ns = sa->ns, ne = sa->ne, na = sa->na;
        if (ns > 0) memcpy(starts, sa->starts, (size_t)ns * sizeof *starts);
        if (ne > 0) memcpy(ends, sa->ends, (size_t)ne * sizeof *ends);
        if (na > 0) memcpy(axes, sa->axes, (size_t)na * sizeof *axes);
    } else {
        int r;
        if ((r = op_known_ints(ctx, &in[1], "starts", starts, IR_MAX_RANK, &ns)) < 0) goto bad;
        if (r == 0) values_known = false;
        if ((r = op_known_ints(ctx, &in[2], "ends", ends, IR_MAX_RANK, &ne)) < 0) goto bad;
        if (r == 0) values_known = false;
        if (op_wired(ctx, 3)) {
            if ((r = op_known_ints(ctx, &in[3], "axes", axes, IR_MAX_RANK, &na)) < 0) goto bad;
            if (r == 0) {
                *axes_known = false;
                return 0;
            }
        }
        if (op_wired(ctx, 4)) {
            if ((r = op_known_ints(ctx, &in[4], "steps", steps, IR_MAX_RANK, &nst)) < 0) goto bad;
            if (r == 0) values_known = false;
        }
    }
    if (!values_known) {
        /* the axes alone: from the axes input, or all leading axes when
         * absent and the starts length is known */
        if (na < 0) {
            const ir_shape *s = &in[1].shape;
            if (s->rank != 1 || s->syms[0] != 0 || s->dims[0] > rank) return 0;
            na = s->dims[0];
            for (int64_t i = 0; i < na; i++)
                axes[i] = i;
        }
    } else if (ns != ne || (na >= 0 && na != ns) || (nst >= 0 && nst != ns)) {
        *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                      "starts, ends, axes and steps must have equal lengths (%" PRId64 ", %" PRId64
                      ", %" PRId64 ", %" PRId64 ")",
                      ns, ne, na, nst);
        return -1;
    }
    int64_t n = na >= 0 ? na : ns;
    if (n > rank) {
        *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "%" PRId64 " axes sliced but the rank is %d", n,
                      (int)rank);
        return -1;
    }
    bool seen[IR_MAX_RANK] = {false};
    p->n = (int32_t)n;
    for (int32_t i = 0; i < p->n; i++) {
        int32_t a = i;
        if (na >= 0 && (*st = op_axis(ctx, axes[i], rank, "axis", &a))) return -1;
        if (seen[a]) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "axis %d repeats", (int)a);
            return -1;
        }
        seen[a] = true;
        p->axes[i] = a;
        if (!values_known) continue;
        p->starts[i] = starts[i];
        p->ends[i] = ends[i];
        p->steps[i] = nst >= 0 ? steps[i] : 1;
        if (p->steps[i] == 0) {
            *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL, "steps[%d] is 0", (int)i);
            return -1;
        }
    }
    *axes_known = true;
    return values_known ? 1 : 0;
bad:
    *st = MOPT_ERR_INVALID_MODEL;
    return -1;
}

/* ONNX clamping of one sliced axis of size dim: start index and count.
 * Any step is valid, up to INT64_MIN/MAX: the count is computed without
 * adding the step (and the magnitude of a negative step in uint64_t). */
static void slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first,
                       int64_t *count) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : (start > dim ? dim : start);
        end = end < 0 ? 0 : (end > dim ? dim : end);
        *count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
        start = start < 0 ? 0 : (start > dim - 1 ? dim - 1 : start);
        end = end < -1 ? -1 : (end > dim - 1 ? dim - 1 : end);
        uint64_t mag = (uint64_t)(-(step + 1)) + 1;
        *count = start > end ? (int64_t)((uint64_t)(start - end - 1) / mag + 1) : 0;
    }
    *first = start;
}

/* A slice that keeps a whole axis whatever its size (full range, step 1). */
static bool slice_full(int64_t start, int64_t end, int64_t step) {
    return step == 1 && start == 0 && end >= INT32_MAX;
}

static mopt_status slice_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    for (int k = 1; k < n_in && !st; k++)
        st = op_expect_index(ctx, &in[k], k);
    if (st) return st;
    if (ctx->opset >= 10 && (!op_wired(ctx, 1) || !op_wired(ctx, 2)))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "inputs 'starts' and 'ends' are required");
    out[0].dtype = in[0].dtype;
    const ir_shape *x = &in[0].shape;
    ir_shape_set_unknown(&out[0].shape);
    if (x->rank < 0) return MOPT_OK;
    slice_params p;
    bool axes_known;
    int r = slice_read(ctx, in, n_in, x->rank, &p, &axes_known, &st);
    if (r < 0) return st;
    ir_shape o = *x;
    if (r == 0) {
        if (!axes_known)
            op_set_unknown_dims(&o, x->rank);
        else
            for (int32_t i = 0; i < p.n; i++)
                dim_unknown(&o, p.axes[i]);
        out[0].shape = o;
        return MOPT_OK;
    }
    for (int32_t i = 0; i < p.n; i++) {
        int32_t a = p.axes[i];
        if (x->syms[a] != 0) {
            if (!slice_full(p.starts[i], p.ends[i], p.steps[i])) dim_unknown(&o, a);
            continue;
        }
        int64_t first, count;
        slice_axis(x->dims[a], p.starts[i], p.ends[i], p.steps[i], &first, &count);
        o.dims[a] = count;
    }
    out[0].shape = o;
    return MOPT_OK;
}

int ops_slice_plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *off, int64_t *src_st,
                   mopt_status *st) {
    const ir_shape *x = &in[0].shape;
    slice_params p;
    bool axes_known;
    if (slice_read(ctx, in, n_in, x->rank, &p, &axes_known, st) != 1) return 0;
    int64_t in_st[IR_MAX_RANK];
    op_strides(x, in_st);
    *off = 0;
    for (int32_t a = 0; a < x->rank; a++)
        src_st[a] = in_st[a];
    for (int32_t i = 0; i < p.n; i++) {
        int32_t a = p.axes[i];
        int64_t first, count;
        slice_axis(x->dims[a], p.starts[i], p.ends[i], p.steps[i], &first, &count);
        *off += first * in_st[a];
        /* a step is only taken when the axis keeps 2+ elements, and then
         * |step| < dim, so the stride cannot overflow */
        src_st[a] = count > 1 ? in_st[a] * p.steps[i] : in_st[a];
    }
    return 1;
}

static mopt_status slice_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    int64_t src_st[IR_MAX_RANK], off;
    mopt_status st = MOPT_OK;
    if (!ops_slice_plan(ctx, in, n_in, &off, src_st, &st))
        return st ? st : op_fail(ctx, MOPT_ERR_INTERNAL, "slice parameters unknown at run time");
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    size_t esz = op_esize(&in[0]);
    ref_copy_strided(out[0].data, (const char *)in[0].data + (size_t)off * esz, esz,
                     in[0].shape.rank, out[0].shape.dims, src_st);
    return MOPT_OK;
}

/* ---- Gather ----------------------------------------------------------------- */

static mopt_status gather_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 1, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape, *ix = &in[1].shape;
    ir_shape_set_unknown(&out[0].shape);
    if (x->rank < 0) return MOPT_OK;
    if (x->rank == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "cannot gather from a scalar");
    int32_t axis;
    if ((st = params_axis(ctx, x->rank, &axis))) return st;
    if (ix->rank < 0) return MOPT_OK;
    int64_t rank = (int64_t)x->rank - 1 + ix->rank;
    if (rank > IR_MAX_RANK)
        return op_fail(ctx, MOPT_ERR_LIMIT, "output rank %" PRId64 " exceeds %d", rank,
                       IR_MAX_RANK);
    ir_shape o;
    memset(&o, 0, sizeof o);
    o.rank = (int32_t)rank;
    int32_t j = 0;
    for (int32_t a = 0; a < axis; a++, j++)
        o.dims[j] = x->dims[a], o.syms[j] = x->syms[a];
    for (int32_t a = 0; a < ix->rank; a++, j++)
        o.dims[j] = ix->dims[a], o.syms[j] = ix->syms[a];
    for (int32_t a = axis + 1; a < x->rank; a++, j++)
        o.dims[j] = x->dims[a], o.syms[j] = x->syms[a];
    out[0].shape = o;
    return MOPT_OK;
}

static mopt_status gather_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ir_shape *x = &in[0].shape;
    int32_t axis;
    mopt_status st = params_axis(ctx, x->rank, &axis);
    if (st) return st;
    int64_t outer, inner;
    op_axis_split(x, axis, &outer, NULL, &inner);
    /* int64 indices already in [0, dim) are used in place: no allocation in
     * the steady state (embedding lookups, position ids) */
    int64_t n_direct = op_numel(&in[1]);
    if (in[1].dtype == MOPT_DTYPE_I64 && n_direct > 0) {
        const int64_t *d = in[1].data;
        bool direct = true;
        for (int64_t i = 0; i < n_direct && direct; i++)
            direct = d[i] >= 0 && d[i] < x->dims[axis];
        if (direct) {
            if (op_numel(&out[0]) > 0)
                ref_gather(out[0].data, in[0].data, op_esize(&in[0]), outer, x->dims[axis], inner,
                           d, n_direct);
            return MOPT_OK;
        }
    }
    int64_t *idx, n_idx;
    if ((st = read_indices(ctx, &in[1], x->dims[axis], &idx, &n_idx))) return st;
    if (idx && op_numel(&out[0]) > 0)
        ref_gather(out[0].data, in[0].data, op_esize(&in[0]), outer, x->dims[axis], inner, idx,
                   n_idx);
    op_work_put(ctx, idx);
    return MOPT_OK;
}

/* ---- GatherElements --------------------------------------------------------- */

static mopt_status gather_elements_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         op_tensor *out, int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 1, out);
    if (st) return st;
    out[0].shape = in[1].shape;
    const ir_shape *x = &in[0].shape, *ix = &in[1].shape;
    if (x->rank < 0) return MOPT_OK;
    if (x->rank == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "cannot gather from a scalar");
    int32_t axis;
    if ((st = params_axis(ctx, x->rank, &axis))) return st;
    char b1[IR_SHAPE_STR_CAP], b2[IR_SHAPE_STR_CAP];
    if (ix->rank >= 0 && ix->rank != x->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "indices %s and data %s must have the same rank",
                       op_shape_str(ctx, ix, b1), op_shape_str(ctx, x, b2));
    if (ctx->runtime)
        for (int32_t a = 0; a < x->rank; a++)
            if (a != axis && ix->dims[a] > x->dims[a])
                return op_fail(ctx, MOPT_ERR_SHAPE, "indices %s exceed data %s on axis %d",
                               op_shape_str(ctx, ix, b1), op_shape_str(ctx, x, b2), (int)a);
    return MOPT_OK;
}

static mopt_status gather_elements_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                       op_tensor *out, int n_out) {
    const ir_shape *x = &in[0].shape;
    int32_t axis;
    mopt_status st = params_axis(ctx, x->rank, &axis);
    if (st) return st;
    int64_t *idx, n_idx;
    if ((st = read_indices(ctx, &in[1], x->dims[axis], &idx, &n_idx))) return st;
    if (idx)
        ref_gather_elements(out[0].data, in[0].data, op_esize(&in[0]), x->rank, x->dims,
                            in[1].shape.dims, axis, idx);
    op_work_put(ctx, idx);
    return MOPT_OK;
}

/* ---- Tile ------------------------------------------------------------------- */

static mopt_status tile_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st = op_infer_moved(ctx, in, 1, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape;
    ir_shape_set_unknown(&out[0].shape);
    if (x->rank < 0) return MOPT_OK;
    int64_t rep[IR_MAX_RANK], n = 0;
    int r = op_known_ints(ctx, &in[1], "repeats", rep, IR_MAX_RANK, &n);
    if (r < 0) return MOPT_ERR_INVALID_MODEL;
    if (r == 0) {
        op_set_unknown_dims(&out[0].shape, x->rank);
        return MOPT_OK;
    }
    if (n != x->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "repeats has %" PRId64 " entries for rank %d", n,
                       (int)x->rank);
    ir_shape o = *x;
    for (int32_t a = 0; a < x->rank; a++) {
        if (rep[a] < 0)
            return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT, "repeats[%d] is negative", (int)a);
        if (x->syms[a] != 0) {
            if (rep[a] == 0)
                o.dims[a] = 0, o.syms[a] = 0;
            else if (rep[a] != 1)
                dim_unknown(&o, a);
            continue;
        }
        if (x->dims[a] && rep[a] > INT64_MAX / x->dims[a])
            return op_fail(ctx, MOPT_ERR_LIMIT, "tiled size overflows");
        o.dims[a] = x->dims[a] * rep[a];
    }
    if (ir_shape_is_concrete(&o) && ir_shape_numel(&o) < 0)
        return op_fail(ctx, MOPT_ERR_LIMIT, "tiled size overflows");
    out[0].shape = o;
    return MOPT_OK;
}

static mopt_status tile_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const ir_shape *x = &in[0].shape;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    int64_t in_st[IR_MAX_RANK], dims[2 * IR_MAX_RANK], st[2 * IR_MAX_RANK];
    op_strides(x, in_st);
    for (int32_t a = 0; a < x->rank; a++) {
        dims[2 * a] = out[0].shape.dims[a] / x->dims[a]; /* the repeat count */
        st[2 * a] = 0;
        dims[2 * a + 1] = x->dims[a];
        st[2 * a + 1] = in_st[a];
    }
    ref_copy_strided(out[0].data, in[0].data, op_esize(&in[0]), 2 * x->rank, dims, st);
    return MOPT_OK;
}

/* ---- Pad -------------------------------------------------------------------- */

typedef struct pad_params {
    ref_pad_mode mode;
    const int64_t *pads; /* the pads attribute (before opset 11) */
    int64_t n_pads;      /* -1: absent */
    double value;        /* the value attribute (before opset 11) */
} pad_params;

/* Pad's modes; wrap from opset 19 */
static const op_name_value k_pad_modes[] = {{"constant", REF_PAD_CONSTANT},
                                            {"reflect", REF_PAD_REFLECT},
                                            {"edge", REF_PAD_EDGE},
                                            {"wrap", REF_PAD_WRAP}};

static mopt_status pad_parse(const op_ctx *ctx, void *params) {
    pad_params *p = params;
    int mode;
    if (!op_name_lookup(k_pad_modes, OP_COUNT(k_pad_modes),
                        ir_node_attr_string(ctx->node, "mode", "constant"), &mode) ||
        (mode == REF_PAD_WRAP && ctx->opset < 19))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "mode '%s' is not supported",
                       ir_node_attr_string(ctx->node, "mode", ""));
    p->mode = (ref_pad_mode)mode;
    p->n_pads = -1;
    if (ctx->opset < 11) {
        p->n_pads = ir_node_attr_ints(ctx->node, "pads", &p->pads);
        if (p->n_pads < 0)
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'pads' is required");
        p->value = ir_node_attr_float(ctx->node, "value", 0.0f);
    }
    return MOPT_OK;
}

/* Begin/end pads per axis. 1 known, 0 unknown at load, -1 error (*st). */
static int pad_amounts(const op_ctx *ctx, const op_tensor *in, int n_in, int32_t rank,
                       int64_t *begin, int64_t *end, mopt_status *st) {
    int64_t pads[2 * IR_MAX_RANK], n = 0, axes[IR_MAX_RANK], na = -1;
    *st = MOPT_OK;
    if (ctx->opset < 11) {
        const pad_params *pp = ctx->params;
        const int64_t *v = pp->pads;
        n = pp->n_pads;
        if (n > 2 * IR_MAX_RANK)
            n = 2 * IR_MAX_RANK + 1; /* reported below */
        else if (n)
            memcpy(pads, v, (size_t)n * sizeof *v);
    } else {
        int r = op_known_ints(ctx, &in[1], "pads", pads, 2 * IR_MAX_RANK, &n);
        if (r < 0) {
            *st = MOPT_ERR_INVALID_MODEL;
            return -1;
        }
        if (r == 0) return 0;
        if (op_wired(ctx, 3)) {
            r = op_known_ints(ctx, &in[3], "axes", axes, IR_MAX_RANK, &na);
            if (r < 0) {
                *st = MOPT_ERR_INVALID_MODEL;
                return -1;
            }
            if (r == 0) return 0;
        }
    }
    int64_t n_axes = na >= 0 ? na : rank;
    if (n != 2 * n_axes) {
        *st = op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                      "pads has %" PRId64 " entries; expected %" PRId64 " (2 per axis)", n,
                      2 * n_axes);
        return -1;
    }
    for (int32_t a = 0; a < rank; a++)
        begin[a] = end[a] = 0;
    for (int64_t i = 0; i < n_axes; i++) {
        int32_t a = (int32_t)i;
        if (na >= 0 && (*st = op_axis(ctx, axes[i], rank, "axis", &a))) return -1;
        begin[a] = pads[i];
        end[a] = pads[i + n_axes];
    }
    return 1;
}

static mopt_status pad_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    if (!st && ctx->opset >= 11) st = op_expect_index(ctx, &in[1], 1);
    if (!st && ctx->opset >= 11 && n_in > 2) st = op_same_dtype(ctx, in, 0, 2);
    if (!st && n_in > 3) st = op_expect_index(ctx, &in[3], 3);
    if (st) return st;
    if (ctx->opset >= 11 && !op_wired(ctx, 1))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input 'pads' is required");
    ref_pad_mode mode = ((const pad_params *)ctx->params)->mode;
    out[0].dtype = in[0].dtype;
    const ir_shape *x = &in[0].shape;
    ir_shape_set_unknown(&out[0].shape);
    if (x->rank < 0) return MOPT_OK;
    int64_t begin[IR_MAX_RANK], end[IR_MAX_RANK];
    int r = pad_amounts(ctx, in, n_in, x->rank, begin, end, &st);
    if (r < 0) return st;
    if (r == 0) {
        op_set_unknown_dims(&out[0].shape, x->rank);
        return MOPT_OK;
    }
    ir_shape o = *x;
    char b1[IR_SHAPE_STR_CAP];
    for (int32_t a = 0; a < x->rank; a++) {
        if (begin[a] < -(INT64_MAX / 4) || begin[a] > INT64_MAX / 4 || end[a] < -(INT64_MAX / 4) ||
            end[a] > INT64_MAX / 4)
            return op_fail(ctx, MOPT_ERR_LIMIT, "pads on axis %d are too large", (int)a);
        if (x->syms[a] != 0) {
            if (begin[a] != 0 || end[a] != 0) dim_unknown(&o, a);
            continue;
        }
        int64_t d = x->dims[a] + begin[a] + end[a];
        if (d < 0)
            return op_fail(ctx, MOPT_ERR_SHAPE, "pads remove more than axis %d of %s holds", (int)a,
                           op_shape_str(ctx, x, b1));
        int64_t kept = x->dims[a];
        if (mode == REF_PAD_WRAP) /* wrap repeats what the negative pads leave */
            kept += (begin[a] < 0 ? begin[a] : 0) + (end[a] < 0 ? end[a] : 0);
        if (mode != REF_PAD_CONSTANT && (begin[a] > 0 || end[a] > 0) && kept <= 0)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "nothing of axis %d of %s is left to pad in this mode", (int)a,
                           op_shape_str(ctx, x, b1));
        o.dims[a] = d;
    }
    if (ir_shape_is_concrete(&o) && ir_shape_numel(&o) < 0)
        return op_fail(ctx, MOPT_ERR_LIMIT, "padded size overflows");
    out[0].shape = o;
    return MOPT_OK;
}

/* The pad value as one element of dtype dt (opset < 11: the float attribute). */
static mopt_status pad_value(const op_ctx *ctx, const op_tensor *in, int n_in, mopt_dtype dt,
                             unsigned char *value) {
    memset(value, 0, 16);
    if (ctx->opset >= 11) {
        if (op_has_input(in, n_in, 2)) {
            if (op_numel(&in[2]) != 1)
                return op_fail(ctx, MOPT_ERR_SHAPE, "constant_value must have one element");
            memcpy(value, in[2].data, mopt_dtype_size(dt));
        }
        return MOPT_OK;
    }
    double v = ((const pad_params *)ctx->params)->value;
    switch (dt) {
    case MOPT_DTYPE_F32: {
        float f = (float)v;
        memcpy(value, &f, 4);
        break;
    }
    case MOPT_DTYPE_F64: memcpy(value, &v, 8); break;
    case MOPT_DTYPE_I64: {
        int64_t i = (int64_t)v;
        memcpy(value, &i, 8);
        break;
    }
    case MOPT_DTYPE_I32: {
        int32_t i = (int32_t)v;
        memcpy(value, &i, 4);
        break;
    }
    default:
        if (v != 0)
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "a non-zero pad value for type %s",
                           mopt_dtype_name(dt));
    }
    return MOPT_OK;
}

int ops_pad_plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *begin, int64_t *end,
                 unsigned char *value, mopt_status *st) {
    if (((const pad_params *)ctx->params)->mode != REF_PAD_CONSTANT) return 0;
    if (pad_amounts(ctx, in, n_in, in[0].shape.rank, begin, end, st) != 1) return 0;
    if ((*st = pad_value(ctx, in, n_in, in[0].dtype, value))) return 0;
    return 1;
}

static mopt_status pad_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *x = &in[0].shape;
    int64_t begin[IR_MAX_RANK], end[IR_MAX_RANK];
    mopt_status st;
    if (pad_amounts(ctx, in, n_in, x->rank, begin, end, &st) != 1)
        return st ? st : op_fail(ctx, MOPT_ERR_INTERNAL, "pads unknown at run time");
    ref_pad_mode mode = ((const pad_params *)ctx->params)->mode;
    unsigned char value[16];
    if ((st = pad_value(ctx, in, n_in, in[0].dtype, value))) return st;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    ref_pad(out[0].data, in[0].data, op_esize(&in[0]), x->rank, x->dims, out[0].shape.dims, begin,
            mode, value);
    return MOPT_OK;
}

/* ---- Trilu ------------------------------------------------------------------ */

typedef struct trilu_params {
    bool upper;
} trilu_params;

static const op_attr_spec k_trilu_attrs[] = {OP_ATTR_NZ(trilu_params, upper, "upper", 1)};

static mopt_status trilu_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    if (!st && n_in > 1) st = op_expect_i64(ctx, &in[1], 1);
    if (st) return st;
    char b1[IR_SHAPE_STR_CAP];
    if (in[0].shape.rank >= 0 && in[0].shape.rank < 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must have rank >= 2, not %s",
                       op_shape_str(ctx, &in[0].shape, b1));
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status trilu_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const ir_shape *x = &in[0].shape;
    int64_t k = 0;
    if (op_has_input(in, n_in, 1)) {
        if (op_numel(&in[1]) != 1) return op_fail(ctx, MOPT_ERR_SHAPE, "k must be a scalar");
        k = *(const int64_t *)in[1].data;
    }
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t n = op_numel(&in[0]);
    if (n == 0) return MOPT_OK;
    /* keep k within the matrix range so that i + k cannot overflow */
    if (k > cols) k = cols;
    if (k < -rows) k = -rows;
    ref_trilu(out[0].data, in[0].data, op_esize(&in[0]), n / (rows * cols), rows, cols, k,
              ((const trilu_params *)ctx->params)->upper);
    return MOPT_OK;
}

/* ---- ScatterND / ScatterElements ------------------------------------------ */

typedef struct scatter_params {
    int64_t axis; /* first: read by params_axis (ScatterElements) */
    ref_scatter_op op;
    const char *reduction; /* its name, for messages */
} scatter_params;

static mopt_status scatter_parse(const op_ctx *ctx, void *params) {
    scatter_params *p = params;
    p->axis = ir_node_attr_int(ctx->node, "axis", 0);
    const char *r = ctx->opset >= 16 ? ir_node_attr_string(ctx->node, "reduction", "none") : "none";
    ref_scatter_op *op = &p->op;
    p->reduction = r;
    if (!strcmp(r, "none"))
        *op = REF_SCATTER_NONE;
    else if (!strcmp(r, "add"))
        *op = REF_SCATTER_ADD;
    else if (!strcmp(r, "mul"))
        *op = REF_SCATTER_MUL;
    else if (!strcmp(r, "max") && ctx->opset >= 18)
        *op = REF_SCATTER_MAX;
    else if (!strcmp(r, "min") && ctx->opset >= 18)
        *op = REF_SCATTER_MIN;
    else
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "reduction '%s' is not supported", r);
    return MOPT_OK;
}

/* The reduction of the node's params, checked against the data type dt. */
static mopt_status scatter_reduction(const op_ctx *ctx, mopt_dtype dt, ref_scatter_op *op) {
    const scatter_params *p = ctx->params;
    const char *r = p->reduction;
    *op = p->op;
    if (*op != REF_SCATTER_NONE && dt != MOPT_DTYPE_UNDEFINED && dt != MOPT_DTYPE_F32 &&
        dt != MOPT_DTYPE_I64 && dt != MOPT_DTYPE_I32)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "reduction '%s' on type %s is not supported", r,
                       mopt_dtype_name(dt));
    return MOPT_OK;
}

/* Applies the updates at the element offsets off[0..n) (chunk elements each). */
static void scatter_apply(const op_tensor *out, ref_scatter_op op, const int64_t *off, int64_t n,
                          const void *updates, int64_t chunk) {
    if (op == REF_SCATTER_NONE)
        ref_scatter_copy(out->data, op_esize(out), off, n, updates, chunk);
    else if (out->dtype == MOPT_DTYPE_F32)
        ref_scatter_f32(out->data, off, n, updates, chunk, op);
    else if (out->dtype == MOPT_DTYPE_I64)
        ref_scatter_i64(out->data, off, n, updates, chunk, op);
    else
        ref_scatter_i32(out->data, off, n, updates, chunk, op);
}

static mopt_status scatter_common_infer(const op_ctx *ctx, const op_tensor *in, op_tensor *out) {
    mopt_status st = op_expect_any(ctx, &in[0], 0);
    if (!st) st = op_expect_index(ctx, &in[1], 1);
    if (!st) st = op_same_dtype(ctx, in, 0, 2);
    ref_scatter_op op;
    if (!st) st = scatter_reduction(ctx, in[0].dtype, &op);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status scatter_nd_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    mopt_status st = scatter_common_infer(ctx, in, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape, *ix = &in[1].shape, *u = &in[2].shape;
    char b1[IR_SHAPE_STR_CAP], b2[IR_SHAPE_STR_CAP], b3[IR_SHAPE_STR_CAP];
    if (ix->rank == 0) return op_fail(ctx, MOPT_ERR_SHAPE, "indices must have rank >= 1");
    if (x->rank < 0 || ix->rank < 0 || ix->syms[ix->rank - 1] != 0) return MOPT_OK;
    int64_t k = ix->dims[ix->rank - 1];
    if (k < 1 || k > x->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "indices %s address %" PRId64 " axes of data %s",
                       op_shape_str(ctx, ix, b1), k, op_shape_str(ctx, x, b2));
    if (u->rank < 0) return MOPT_OK;
    /* updates = indices.shape[:-1] + data.shape[k:] */
    bool ok = u->rank == ix->rank - 1 + x->rank - (int32_t)k;
    for (int32_t a = 0; ok && a < u->rank; a++) {
        const ir_shape *src = a < ix->rank - 1 ? ix : x;
        int32_t sa = a < ix->rank - 1 ? a : a - (ix->rank - 1) + (int32_t)k;
        if (u->syms[a] == 0 && src->syms[sa] == 0 && u->dims[a] != src->dims[sa]) ok = false;
    }
    if (!ok)
        return op_fail(ctx, MOPT_ERR_SHAPE, "updates %s do not match indices %s and data %s",
                       op_shape_str(ctx, u, b1), op_shape_str(ctx, ix, b2),
                       op_shape_str(ctx, x, b3));
    return MOPT_OK;
}

static mopt_status scatter_nd_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    const ir_shape *x = &in[0].shape, *ix = &in[1].shape;
    ref_scatter_op op;
    mopt_status st = scatter_reduction(ctx, in[0].dtype, &op);
    if (st) return st;
    size_t nb = (size_t)op_numel(&in[0]) * op_esize(&in[0]);
    if (nb) memcpy(out[0].data, in[0].data, nb);
    int32_t k = (int32_t)ix->dims[ix->rank - 1];
    int64_t n_idx = op_numel(&in[1]) / k, chunk = 1, strides[IR_MAX_RANK];
    for (int32_t a = k; a < x->rank; a++)
        chunk *= x->dims[a];
    if (n_idx == 0 || chunk == 0) return MOPT_OK;
    op_strides(x, strides);
    int64_t *off = op_work_get(ctx, 1, (size_t)n_idx * sizeof *off);
    if (!off) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for indices");
    for (int64_t j = 0; j < n_idx; j++) {
        int64_t o = 0;
        for (int32_t a = 0; a < k; a++) {
            int64_t e = j * k + a;
            int64_t v = in[1].dtype == MOPT_DTYPE_I64 ? ((const int64_t *)in[1].data)[e]
                                                      : ((const int32_t *)in[1].data)[e];
            if (v < -x->dims[a] || v >= x->dims[a]) {
                op_work_put(ctx, off);
                return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                               "index %" PRId64 " (row %" PRId64 ", axis %d) is out of range for "
                               "a dimension of size %" PRId64,
                               v, j, (int)a, x->dims[a]);
            }
            o += (v < 0 ? v + x->dims[a] : v) * strides[a];
        }
        off[j] = o;
    }
    scatter_apply(&out[0], op, off, n_idx, in[2].data, chunk);
    op_work_put(ctx, off);
    return MOPT_OK;
}

static mopt_status scatter_el_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    mopt_status st = scatter_common_infer(ctx, in, out);
    if (st) return st;
    const ir_shape *x = &in[0].shape, *ix = &in[1].shape, *u = &in[2].shape;
    char b1[IR_SHAPE_STR_CAP], b2[IR_SHAPE_STR_CAP];
    if (x->rank < 0) return MOPT_OK;
    int32_t axis;
    if ((st = params_axis(ctx, x->rank, &axis))) return st;
    if (ix->rank >= 0 && ix->rank != x->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "indices %s and data %s must have the same rank",
                       op_shape_str(ctx, ix, b1), op_shape_str(ctx, x, b2));
    if (ctx->runtime) {
        bool ok = u->rank == ix->rank;
        for (int32_t a = 0; ok && a < ix->rank; a++)
            ok = u->dims[a] == ix->dims[a] && (a == axis || ix->dims[a] <= x->dims[a]);
        if (!ok)
            return op_fail(ctx, MOPT_ERR_SHAPE,
                           "updates %s must equal indices %s, which must fit in data",
                           op_shape_str(ctx, u, b1), op_shape_str(ctx, ix, b2));
    }
    return MOPT_OK;
}

static mopt_status scatter_el_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    const ir_shape *x = &in[0].shape, *ix = &in[1].shape;
    ref_scatter_op op;
    int32_t axis;
    mopt_status st = scatter_reduction(ctx, in[0].dtype, &op);
    if (!st) st = params_axis(ctx, x->rank, &axis);
    if (st) return st;
    size_t nb = (size_t)op_numel(&in[0]) * op_esize(&in[0]);
    if (nb) memcpy(out[0].data, in[0].data, nb);
    int64_t *idx, n;
    if ((st = read_indices(ctx, &in[1], x->dims[axis], &idx, &n))) return st;
    if (!idx) return MOPT_OK;
    int64_t strides[IR_MAX_RANK], cnt[IR_MAX_RANK] = {0};
    op_strides(x, strides);
    for (int64_t e = 0; e < n; e++) { /* idx[e] becomes the element offset */
        int64_t o = 0;
        for (int32_t a = 0; a < x->rank; a++)
            o += (a == axis ? idx[e] : cnt[a]) * strides[a];
        idx[e] = o;
        for (int32_t a = x->rank - 1; a >= 0; a--) {
            if (++cnt[a] < ix->dims[a]) break;
            cnt[a] = 0;
        }
    }
    scatter_apply(&out[0], op, idx, n, in[2].data, 1);
    op_work_put(ctx, idx);
    return MOPT_OK;
}

/* ---- SpaceToDepth / DepthToSpace ------------------------------------------------------ */

typedef struct ds_params {
    bool to_space; /* DepthToSpace; else SpaceToDepth */
    bool crd;      /* mode CRD; else DCR */
    int64_t b;     /* blocksize */
} ds_params;

static mopt_status ds_parse(const op_ctx *ctx, void *params) {
    ds_params *p = params;
    p->to_space = strcmp(ctx->node->op_type, "DepthToSpace") == 0;
    p->b = ir_node_attr_int(ctx->node, "blocksize", 0);
    if (p->b <= 0 || p->b >= ((int64_t)1 << 31))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "blocksize %" PRId64 " is not in [1, 2^31)",
                       p->b);
    const char *mode = ir_node_attr_string(ctx->node, "mode", "DCR");
    if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "mode must be DCR or CRD");
    p->crd = strcmp(mode, "CRD") == 0;
    return MOPT_OK;
}

static mopt_status ds_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const ds_params *p = ctx->params;
    bool to_space = p->to_space;
    int64_t b = p->b;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0) return MOPT_OK;
    if (s->rank != 4) return op_fail(ctx, MOPT_ERR_SHAPE, "input must be 4-D [N, C, H, W]");
    ir_shape *o = &out[0].shape;
    /* b * b < 2^62 (ds_parse); the grown dims must not overflow */
    for (int a = 1; a < 4; a++)
        if (s->syms[a] == 0 && s->dims[a] > INT64_MAX / (b * b))
            return op_fail(ctx, MOPT_ERR_LIMIT, "dim %d (%" PRId64 ") times blocksize^2 overflows",
                           a, s->dims[a]);
    if (to_space) {
        if (s->syms[1] == 0 && s->dims[1] % (b * b))
            return op_fail(ctx, MOPT_ERR_SHAPE, "C must be a multiple of blocksize^2");
        o->dims[1] /= b * b, o->dims[2] *= b, o->dims[3] *= b;
    } else {
        if ((s->syms[2] == 0 && s->dims[2] % b) || (s->syms[3] == 0 && s->dims[3] % b))
            return op_fail(ctx, MOPT_ERR_SHAPE, "H and W must be multiples of blocksize");
        o->dims[1] *= b * b, o->dims[2] /= b, o->dims[3] /= b;
    }
    for (int a = 1; a < 4; a++)
        if (o->syms[a]) o->syms[a] = -1;
    return MOPT_OK;
}

static mopt_status ds_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    const ds_params *p = ctx->params;
    const int64_t *d = in[0].shape.dims;
    ref_depth_space(p->to_space, p->crd, p->b, d[0], d[1], d[2], d[3], mopt_dtype_size(in[0].dtype),
                    in[0].data, out[0].data);
    return MOPT_OK;
}

/* ---- GatherND ------------------------------------------------------------------------------- */

typedef struct gnd_params {
    int64_t batch_dims;
} gnd_params;

static const op_attr_spec k_gnd_attrs[] = {OP_ATTR_I64(gnd_params, batch_dims, "batch_dims", 0)};

static mopt_status gnd_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = op_expect_i64(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *d = &in[0].shape, *ix = &in[1].shape;
    int64_t b = ((const gnd_params *)ctx->params)->batch_dims;
    if (d->rank < 0 || ix->rank < 0 || ix->syms[ix->rank - 1] != 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int64_t k = ix->dims[ix->rank - 1];
    if (b < 0 || b >= ix->rank || b >= d->rank || k < 1 || b + k > d->rank)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "indices last dim %" PRId64 " and batch_dims %" PRId64
                       " do not fit data of rank %d",
                       k, b, (int)d->rank);
    int32_t r = ix->rank - 1 + d->rank - (int32_t)(b + k);
    if (r > IR_MAX_RANK) return op_fail(ctx, MOPT_ERR_SHAPE, "output rank too large");
    out[0].shape.rank = r;
    int32_t o = 0;
    for (int32_t a = 0; a < ix->rank - 1; a++, o++)
        out[0].shape.dims[o] = ix->dims[a], out[0].shape.syms[o] = ix->syms[a];
    for (int32_t a = (int32_t)(b + k); a < d->rank; a++, o++)
        out[0].shape.dims[o] = d->dims[a], out[0].shape.syms[o] = d->syms[a];
    return MOPT_OK;
}

static mopt_status gnd_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const ir_shape *d = &in[0].shape, *ix = &in[1].shape;
    int64_t b = ((const gnd_params *)ctx->params)->batch_dims;
    int64_t k = ix->dims[ix->rank - 1];
    int64_t ds[IR_MAX_RANK];
    op_strides(d, ds);
    int64_t slice = 1, batch = 1, per_batch = 1;
    for (int32_t a = (int32_t)(b + k); a < d->rank; a++)
        slice *= d->dims[a];
    for (int32_t a = 0; a < b; a++)
        batch *= ix->dims[a];
    for (int32_t a = (int32_t)b; a < ix->rank - 1; a++)
        per_batch *= ix->dims[a];
    size_t es = mopt_dtype_size(in[0].dtype);
    const int64_t *idx = in[1].data;
    char *y = out[0].data;
    for (int64_t p = 0; p < batch * per_batch; p++) {
        int64_t off = (p / per_batch) * (b > 0 ? ds[b - 1] : 0);
        for (int64_t j = 0; j < k; j++) {
            int64_t v = idx[p * k + j], dim = d->dims[b + j];
            if (v < 0) v += dim;
            if (v < 0 || v >= dim)
                return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                               "index %" PRId64 " out of range for axis %d of size %" PRId64,
                               idx[p * k + j], (int)(b + j), dim);
            off += v * ds[b + j];
        }
        memcpy(y + (size_t)(p * slice) * es, (const char *)in[0].data + (size_t)off * es,
               (size_t)slice * es);
    }
    return MOPT_OK;
}

/* ---- ReverseSequence ------------------------------------------------------------------------ */

typedef struct revseq_params {
    int64_t batch_axis, time_axis;
} revseq_params;

static const op_attr_spec k_revseq_attrs[] = {
    OP_ATTR_I64(revseq_params, batch_axis, "batch_axis", 1),
    OP_ATTR_I64(revseq_params, time_axis, "time_axis", 0),
};

static mopt_status revseq_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    mopt_status st = op_expect_index(ctx, &in[1], 1);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    if (in[0].shape.rank >= 0 && in[0].shape.rank < 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must have rank >= 2");
    return MOPT_OK;
}

static mopt_status revseq_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const revseq_params *p = ctx->params;
    int64_t ba = p->batch_axis, ta = p->time_axis;
    if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "batch_axis/time_axis must be 0 and 1");
    const ir_shape *s = &in[0].shape;
    int64_t nb = s->dims[ba], nt = s->dims[ta], inner = 1, lens[4096];
    for (int32_t a = 2; a < s->rank; a++)
        inner *= s->dims[a];
    if (nb > 4096) return op_fail(ctx, MOPT_ERR_LIMIT, "batch too large");
    if (op_read_ints(ctx, &in[1], "sequence_lens", lens, 4096) != nb)
        return op_fail(ctx, MOPT_ERR_SHAPE, "sequence_lens must have %" PRId64 " values", nb);
    size_t es = mopt_dtype_size(in[0].dtype);
    for (int64_t b = 0; b < nb; b++)
        for (int64_t t = 0; t < nt; t++) {
            int64_t len = lens[b] < 0 ? 0 : lens[b] > nt ? nt : lens[b];
            int64_t src_t = t < len ? len - 1 - t : t;
            int64_t dst = ba == 0 ? b * nt + t : t * nb + b;
            int64_t src = ba == 0 ? b * nt + src_t : src_t * nb + b;
            memcpy((char *)out[0].data + (size_t)(dst * inner) * es,
                   (const char *)in[0].data + (size_t)(src * inner) * es, (size_t)inner * es);
        }
    return MOPT_OK;
}

/* ---- TensorScatter (a cache updated in place along an axis) ------------------ */

typedef struct tscatter_params {
    int64_t axis;  /* default -2 */
    bool circular; /* mode circular; else linear */
    bool mode_ok;  /* mode is linear or circular */
} tscatter_params;

static mopt_status tscatter_parse(const op_ctx *ctx, void *params) {
    tscatter_params *p = params;
    const char *mode = ir_node_attr_string(ctx->node, "mode", "linear");
    p->circular = strcmp(mode, "circular") == 0;
    p->mode_ok = p->circular || strcmp(mode, "linear") == 0;
    p->axis = ir_node_attr_int(ctx->node, "axis", -2);
    return MOPT_OK;
}

static mopt_status tscatter_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    mopt_status st = op_same_dtype(ctx, in, 0, 1);
    if (st) return st;
    const tscatter_params *p = ctx->params;
    if (!p->mode_ok) return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "mode must be linear or circular");
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status tscatter_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const ir_shape *c = &in[0].shape, *u = &in[1].shape;
    int32_t ax;
    const tscatter_params *p = ctx->params;
    mopt_status st = op_axis(ctx, p->axis, c->rank, "axis", &ax);
    if (st) return st;
    if (u->rank != c->rank || ax < 1)
        return op_fail(ctx, MOPT_ERR_SHAPE, "update must have the cache's rank; axis > 0");
    for (int32_t a = 0; a < c->rank; a++)
        if (a == ax ? u->dims[a] > c->dims[a] : u->dims[a] != c->dims[a])
            return op_fail(ctx, MOPT_ERR_SHAPE, "update does not fit the cache on axis %d", (int)a);
    bool circ = p->circular;
    size_t es = mopt_dtype_size(in[0].dtype);
    memcpy(out[0].data, in[0].data, (size_t)op_numel(&in[0]) * es);
    int64_t outer, inner, batch = c->dims[0];
    op_axis_split(c, ax, &outer, NULL, &inner);
    int64_t maxlen = c->dims[ax], len = u->dims[ax];
    for (int64_t o = 0; o < outer; o++) {
        int64_t b = o / (outer / (batch > 0 ? batch : 1));
        int64_t w = 0;
        if (op_has_input(in, n_in, 2)) {
            const op_tensor *wi = &in[2];
            w = wi->dtype == MOPT_DTYPE_I64 ? ((const int64_t *)wi->data)[b]
                                            : ((const int32_t *)wi->data)[b];
        }
        for (int64_t s = 0; s < len; s++) {
            int64_t pos = w + s;
            if (circ) pos = ((pos % maxlen) + maxlen) % maxlen;
            if (pos < 0 || pos >= maxlen)
                return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                               "write index %" PRId64 " out of range", pos);
            memcpy((char *)out[0].data + (size_t)((o * maxlen + pos) * inner) * es,
                   (const char *)in[1].data + (size_t)((o * len + s) * inner) * es,
                   (size_t)inner * es);
        }
    }
    return MOPT_OK;
}

/* ---- table ------------------------------------------------------------------ */

#define FLOAT_BRIDGE .bridge = &ops_bridge_float

static const op_def k_movement_ops[] = {
    {"Transpose", "", 1, 1, 1, 1, transpose_infer, transpose_run, ops_cpu_transpose_impls,
     OP_PARAMS(transpose_params, transpose_parse), FLOAT_BRIDGE},
    {"Concat", "", 1, 64, 1, 1, concat_infer, concat_run, NULL,
     OP_PARAMS(axis_params, concat_parse), FLOAT_BRIDGE},
    {"Split", "", 1, 2, 1, 64, split_infer, split_run, NULL, OP_PARAMS(split_params, split_parse),
     FLOAT_BRIDGE},
    {"ChannelsLastConcat", "mopt", 1, 32, 1, 1, cl_concat_infer, cl_concat_run,
     ops_cpu_clconcat_impls, OP_PARAMS(cl_params, cl_parse)},
    {"ChannelsLastSplit", "mopt", 1, 1, 1, 32, cl_split_infer, cl_split_run, ops_cpu_clsplit_impls,
     OP_PARAMS(cl_params, cl_parse)},
    {"Slice", "", 1, 5, 1, 1, slice_infer, slice_run, ops_cpu_slice_impls,
     OP_PARAMS(slice_attr_params, slice_parse), FLOAT_BRIDGE},
    {"Gather", "", 2, 2, 1, 1, gather_infer, gather_run, NULL, OP_ATTRS(axis_params, k_axis_attrs),
     FLOAT_BRIDGE},
    {"GatherElements", "", 2, 2, 1, 1, gather_elements_infer, gather_elements_run, NULL,
     OP_ATTRS(axis_params, k_axis_attrs), FLOAT_BRIDGE},
    {"Tile", "", 2, 2, 1, 1, tile_infer, tile_run, FLOAT_BRIDGE},
    {"Pad", "", 1, 4, 1, 1, pad_infer, pad_run, ops_cpu_pad_impls, OP_PARAMS(pad_params, pad_parse),
     FLOAT_BRIDGE},
    {"Trilu", "", 1, 2, 1, 1, trilu_infer, trilu_run, NULL, OP_ATTRS(trilu_params, k_trilu_attrs),
     FLOAT_BRIDGE},
    {"ScatterND", "", 3, 3, 1, 1, scatter_nd_infer, scatter_nd_run, NULL,
     OP_PARAMS(scatter_params, scatter_parse), FLOAT_BRIDGE},
    {"ScatterElements", "", 3, 3, 1, 1, scatter_el_infer, scatter_el_run, NULL,
     OP_PARAMS(scatter_params, scatter_parse), FLOAT_BRIDGE},
    /* opset 9-10's name of ScatterElements */
    {"Scatter", "", 3, 3, 1, 1, scatter_el_infer, scatter_el_run, NULL,
     OP_PARAMS(scatter_params, scatter_parse), FLOAT_BRIDGE},
    {"GatherND", "", 2, 2, 1, 1, gnd_infer, gnd_run, NULL, OP_ATTRS(gnd_params, k_gnd_attrs),
     FLOAT_BRIDGE},
    {"TensorScatter", "", 2, 3, 1, 1, tscatter_infer, tscatter_run, NULL,
     OP_PARAMS(tscatter_params, tscatter_parse), FLOAT_BRIDGE},
    {"SpaceToDepth", "", 1, 1, 1, 1, ds_infer, ds_run, NULL, OP_PARAMS(ds_params, ds_parse),
     FLOAT_BRIDGE},
    {"DepthToSpace", "", 1, 1, 1, 1, ds_infer, ds_run, NULL, OP_PARAMS(ds_params, ds_parse),
     FLOAT_BRIDGE},
    {"ReverseSequence", "", 2, 2, 1, 1, revseq_infer, revseq_run, NULL,
     OP_ATTRS(revseq_params, k_revseq_attrs), FLOAT_BRIDGE},
};

OP_FAMILY(movement, k_movement_ops)
