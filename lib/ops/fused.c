/*
 * fused.c — the "fused" operator family (domain "mopt"), produced by the
 * load-time fusion passes (docs/fused_ops.md):
 *   mopt.FusedMatMul  Y = act(alpha * (op(A) @ op(B)) + bias + residual)
 *   mopt.FusedConv    Y = act(conv(X, W) + B + residual)
 * Shape/type inference (symbolic dims) and reference runs: the products are
 * ref_gemm_f32 and the Conv operator's own reference run, the epilogue is
 * ref_epilogue_f32 (kernels/ref/epilogue.c). Faster backends list their
 * implementations in the `impls` field of the entries below.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_matmul.h"
#include "ops/conv.h"
#include "ops/fused.h"
#include "ops/impls.h"

/* ---- activation attributes ---------------------------------------------- */

static const struct {
    const char *name;
    ref_act act;
    float alpha, beta; /* defaults */
} k_acts[] = {
    {"", REF_ACT_NONE, 0.0f, 0.0f},
    {"Relu", REF_ACT_RELU, 0.0f, 0.0f},
    {"LeakyRelu", REF_ACT_LEAKY_RELU, 0.01f, 0.0f},
    {"Clip", REF_ACT_CLIP, -INFINITY, INFINITY},
    {"HardSwish", REF_ACT_HARD_SWISH, 0.0f, 0.0f},
    {"HardSigmoid", REF_ACT_HARD_SIGMOID, 0.2f, 0.5f},
    {"Sigmoid", REF_ACT_SIGMOID, 0.0f, 0.0f},
    {"Tanh", REF_ACT_TANH, 0.0f, 0.0f},
    {"Gelu", REF_ACT_GELU, 0.0f, 0.0f},
    {"GeluTanh", REF_ACT_GELU_TANH, 0.0f, 0.0f},
};
#define N_ACTS (int)(sizeof k_acts / sizeof k_acts[0])

mopt_status fused_read_activation(const op_ctx *ctx, ref_act_params *p) {
    const char *name = ir_node_attr_string(ctx->node, "activation", "");
    for (int i = 0; i < N_ACTS; i++) {
        if (strcmp(k_acts[i].name, name) != 0) continue;
        p->act = k_acts[i].act;
        p->alpha = ir_node_attr_float(ctx->node, "activation_alpha", k_acts[i].alpha);
        p->beta = ir_node_attr_float(ctx->node, "activation_beta", k_acts[i].beta);
        return MOPT_OK;
    }
    return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "unknown activation '%s'", name);
}

const char *fused_activation_name(ref_act act) {
    for (int i = 0; i < N_ACTS; i++)
        if (k_acts[i].act == act) return k_acts[i].name;
    return "";
}

/* ---- shared checks ------------------------------------------------------- */

/* Checks that addend p (bias, residual) broadcasts to y without growing it. */
static mopt_status check_addend(const op_ctx *ctx, const ir_shape *y, const op_tensor *p, int index,
                                const char *what) {
    mopt_status st = op_expect_f32(ctx, p, index);
    if (st) return st;
    const ir_shape *s = &p->shape;
    if (s->rank < 0 || y->rank < 0) return MOPT_OK;
    bool ok = s->rank <= y->rank;
    for (int32_t i = 0; ok && i < s->rank; i++) {
        int32_t j = y->rank - s->rank + i;
        if (s->syms[i] == 0 && s->dims[i] == 1) continue;
        if (s->syms[i] == 0 && y->syms[j] == 0 && s->dims[i] != y->dims[j]) ok = false;
        if (s->syms[i] > 0 && y->syms[j] > 0 && s->syms[i] != y->syms[j]) ok = false;
        if (s->syms[i] > 0 && y->syms[j] == 0 && y->dims[j] != 1) ok = false;
    }
    if (ok) return MOPT_OK;
    char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
    return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s does not broadcast to the output %s", what,
                   op_shape_str(ctx, s, a), op_shape_str(ctx, y, b));
}

static void addend_of(const op_tensor *in, int n_in, int k, const ir_shape *y, ref_addend *a) {
    memset(a, 0, sizeof *a);
    if (!op_has_input(in, n_in, k)) return;
    a->data = in[k].data;
    op_broadcast_strides(&in[k].shape, y, a->strides);
}

/* ---- mopt.FusedMatMul ----------------------------------------------------- */

static void copy_dim(ir_shape *dst, int32_t j, const ir_shape *src, int32_t i) {
    dst->dims[j] = src->dims[i];
    dst->syms[j] = src->syms[i];
}

static void batch_shape(const ir_shape *s, ir_shape *b) {
    memset(b, 0, sizeof *b);
    b->rank = s->rank - 2;
    for (int32_t i = 0; i < b->rank; i++)
        copy_dim(b, i, s, i);
}

static mopt_status fmm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_out;
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (!st) st = op_expect_f32(ctx, &in[1], 1);
    ref_act_params act;
    if (!st) st = fused_read_activation(ctx, &act);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_F32;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    char sa[IR_SHAPE_STR_CAP], sb[IR_SHAPE_STR_CAP];
    if ((a->rank >= 0 && a->rank < 2) || (b->rank >= 0 && b->rank < 2))
        return op_fail(ctx, MOPT_ERR_SHAPE, "operands must have rank >= 2; A is %s and B is %s",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    if (a->rank < 0 || b->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    int32_t am = ta ? a->rank - 1 : a->rank - 2, ak = ta ? a->rank - 2 : a->rank - 1;
    int32_t bk = tb ? b->rank - 1 : b->rank - 2, bn = tb ? b->rank - 2 : b->rank - 1;
    if (a->syms[ak] == 0 && b->syms[bk] == 0 && a->dims[ak] != b->dims[bk])
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "inner dimensions differ: A %s (transA=%d) has K=%" PRId64
                       " but B %s (transB=%d) has K=%" PRId64,
                       op_shape_str(ctx, a, sa), (int)ta, a->dims[ak], op_shape_str(ctx, b, sb),
                       (int)tb, b->dims[bk]);
    ir_shape ba, bb, y;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    st = op_broadcast(ctx, &ba, &bb, &y);
    if (st)
        return op_fail(ctx, MOPT_ERR_SHAPE, "batch dimensions of A %s and B %s do not broadcast",
                       op_shape_str(ctx, a, sa), op_shape_str(ctx, b, sb));
    if (y.rank + 2 > IR_MAX_RANK)
        return op_fail(ctx, MOPT_ERR_LIMIT, "output rank above %d", IR_MAX_RANK);
    copy_dim(&y, y.rank++, a, am);
    copy_dim(&y, y.rank++, b, bn);
    if (op_has_input(in, n_in, 2) && (st = check_addend(ctx, &y, &in[2], 2, "bias"))) return st;
    if (op_has_input(in, n_in, 3) && (st = check_addend(ctx, &y, &in[3], 3, "residual"))) return st;
    out[0].shape = y;
    return MOPT_OK;
}

static mopt_status fmm_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_out;
    ref_act_params act;
    mopt_status st = fused_read_activation(ctx, &act);
    if (st) return st;
    bool ta = ir_node_attr_int(ctx->node, "transA", 0) != 0;
    bool tb = ir_node_attr_int(ctx->node, "transB", 0) != 0;
    float alpha = ir_node_attr_float(ctx->node, "alpha", 1.0f);
    const ir_shape *a = &in[0].shape, *b = &in[1].shape, *y = &out[0].shape;
    int64_t M = y->dims[y->rank - 2], N = y->dims[y->rank - 1];
    int64_t K = ta ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    int64_t lda = ta ? M : K, ldb = tb ? K : N;
    ir_shape ba, bb, bo;
    batch_shape(a, &ba);
    batch_shape(b, &bb);
    batch_shape(y, &bo);
    int64_t st_a[IR_MAX_RANK], st_b[IR_MAX_RANK], idx[IR_MAX_RANK] = {0};
    op_broadcast_strides(&ba, &bo, st_a);
    op_broadcast_strides(&bb, &bo, st_b);
    int64_t n_batch = ir_shape_numel(&bo);
    if (n_batch < 0) return op_fail(ctx, MOPT_ERR_INTERNAL, "batch shape is not concrete");
    int64_t off_a = 0, off_b = 0;
    for (int64_t t = 0; t < n_batch && M > 0 && N > 0; t++) {
        const float *pa = (const float *)in[0].data + off_a * M * K;
        const float *pb = (const float *)in[1].data + off_b * K * N;
        float *pc = (float *)out[0].data + t * M * N;
        ref_gemm_f32(M, N, K, pa, lda, ta, pb, ldb, tb, pc, N, alpha, 0.0f);
        for (int32_t d = bo.rank - 1; d >= 0; d--) {
            off_a += st_a[d];
            off_b += st_b[d];
            if (++idx[d] < bo.dims[d]) break;
            off_a -= st_a[d] * bo.dims[d];
            off_b -= st_b[d] * bo.dims[d];
            idx[d] = 0;
        }
    }
    ref_addend bias, res;
    addend_of(in, n_in, 2, y, &bias);
    addend_of(in, n_in, 3, y, &res);
    ref_epilogue_f32(y->rank, y->dims, out[0].data, &bias, &res, &act);
    return MOPT_OK;
}

/* ---- mopt.FusedConv ------------------------------------------------------- */

/* The convolution itself is the Conv operator's (same attributes). */
static const op_def *conv_def(const op_ctx *ctx, mopt_status *st) {
    const op_def *d = ops_find("Conv", "");
    *st = d ? MOPT_OK : op_fail(ctx, MOPT_ERR_INTERNAL, "the Conv operator is not registered");
    return d;
}

static mopt_status fconv_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st;
    const op_def *conv = conv_def(ctx, &st);
    if (st) return st;
    ref_act_params act;
    if ((st = fused_read_activation(ctx, &act))) return st;
    if ((st = conv->infer(ctx, in, n_in < 3 ? n_in : 3, out, n_out))) return st;
    if (op_has_input(in, n_in, 3)) st = check_addend(ctx, &out[0].shape, &in[3], 3, "residual");
    return st;
}

static mopt_status fconv_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st;
    const op_def *conv = conv_def(ctx, &st);
    if (st) return st;
    ref_act_params act;
    if ((st = fused_read_activation(ctx, &act))) return st;
    if ((st = conv->run(ctx, in, n_in < 3 ? n_in : 3, out, n_out))) return st;
    ref_addend res;
    addend_of(in, n_in, 3, &out[0].shape, &res);
    ref_epilogue_f32(out[0].shape.rank, out[0].shape.dims, out[0].data, NULL, &res, &act);
    return MOPT_OK;
}

static int64_t fmm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    return ops_matmul_flops(&in[0], ir_node_attr_int(ctx->node, "transA", 0) != 0, &out[0]);
}

/* impls: faster backends (e.g. oneDNN) add their NULL-terminated op_impl
 * lists here. */
static const op_def k_ops[] = {
    {"FusedMatMul", "mopt", 2, 4, 1, 1, fmm_infer, fmm_run, ops_fused_matmul_impls,
     .flops = fmm_flops},
    {"FusedConv", "mopt", 2, 4, 1, 1, fconv_infer, fconv_run, ops_fused_conv_impls,
     .params_size = sizeof(conv_params), .parse = ops_conv_parse, .flops = ops_conv_flops},
};

const op_def *ops_family_fused(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
