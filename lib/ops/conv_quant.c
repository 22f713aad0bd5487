/*
 * conv_quant.c — the "conv_quant" operator family: ConvInteger (int8/uint8
 * x and w, optional zero points: x per tensor, w per tensor or per output
 * channel; int32 y) and QLinearConv (scales and zero points per tensor, w's
 * per output channel too, optional int32 bias, int8/uint8 y). The window
 * attributes (group, kernel_shape, strides, dilations, pads, auto_pad) and
 * the output shape are Conv's own (conv.h, impls.h); the integer math is in
 * kernels/ref/conv_quant.c, and the bit-identical fast path (im2col + an
 * int8 GEMM, VNNI or portable) in lib/ops/cpu/conv_quant_cpu.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_conv_quant.h"
#include "ops/bridge.h"
#include "ops/conv.h"
#include "ops/impls.h"
#include "ops/ops.h"

/* Starts with a conv_params so that Conv's inference and geometry read it. */
typedef struct qconv_params {
    conv_params conv;
} qconv_params;

static const mopt_dtype k_int8[] = {MOPT_DTYPE_I8, MOPT_DTYPE_U8};

static bool known(const ir_shape *s, int32_t i) { return s->rank > i && s->syms[i] == 0; }

/* Conv's shape inference on x and w (their shapes, typed as Conv wants). */
static mopt_status conv_shape(const op_ctx *ctx, const op_tensor *x, const op_tensor *w,
                              ir_shape *y) {
    op_tensor in[2] = {{MOPT_DTYPE_F32, x->shape, NULL}, {MOPT_DTYPE_F32, w->shape, NULL}};
    op_tensor out[1];
    memset(out, 0, sizeof out);
    mopt_status st = ops_conv_infer(ctx, in, 2, out, 1);
    if (!st) *y = out[0].shape;
    return st;
}

/* A zero point or scale: a scalar (or one value), or, when per_channel_ok,
 * a 1-D tensor of one value per output channel of W. */
static mopt_status check_param(const op_ctx *ctx, const op_tensor *t, const char *what,
                               bool per_channel_ok, const ir_shape *w) {
    const ir_shape *s = &t->shape;
    char ss[IR_SHAPE_STR_CAP], sw[IR_SHAPE_STR_CAP];
    if (s->rank < 0) return MOPT_OK;
    bool one = s->rank == 0 || (s->rank == 1 && known(s, 0) && s->dims[0] == 1);
    if (one) return MOPT_OK;
    if (!per_channel_ok) {
        if (s->rank <= 1 && !known(s, 0)) return MOPT_OK;
        return op_fail(ctx, MOPT_ERR_SHAPE, "%s %s must be a scalar (per-tensor quantization)",
                       what, op_shape_str(ctx, s, ss));
    }
    if (s->rank != 1)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "%s %s must be a scalar or 1-D with one value per output channel", what,
                       op_shape_str(ctx, s, ss));
    if (known(s, 0) && known(w, 0) && s->dims[0] != w->dims[0])
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "%s %s must have one value per output channel of W %s (%" PRId64 ")", what,
                       op_shape_str(ctx, s, ss), op_shape_str(ctx, w, sw), w->dims[0]);
    return MOPT_OK;
}

/* Zero point of input k as int32 values (1 or c_out); absent: 0. */
static void read_zp(const op_tensor *in, int n_in, int k, int32_t *buf, int64_t cap,
                    bool *per_channel) {
    *per_channel = false;
    buf[0] = 0;
    if (!op_has_input(in, n_in, k)) return;
    int64_t n = op_numel(&in[k]);
    if (n > cap) n = cap;
    for (int64_t i = 0; i < n; i++)
        buf[i] = in[k].dtype == MOPT_DTYPE_I8 ? ((const int8_t *)in[k].data)[i]
                                              : ((const uint8_t *)in[k].data)[i];
    *per_channel = n > 1;
}

mopt_status ops_qconv_ref_s32(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                              int32_t *acc) {
    int64_t nwork = ref_conv_s32_work(g);
    int32_t *work =
        op_work_get(ctx, OPS_QCONV_WORK, (size_t)(nwork > 0 ? nwork : 1) * sizeof(int32_t));
    if (!work) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the integer convolution");
    ref_conv_s32(g, a, acc, work);
    op_work_put(ctx, work);
    return MOPT_OK;
}

/* Runs the integer convolution (conv) of x (input 0), w (input iw) with
 * zero points (inputs izx, izw; < 0: none) and bias into acc. */
static mopt_status conv_s32(const op_ctx *ctx, const op_tensor *in, int n_in, int iw, int izx,
                            int izw, const int32_t *bias, int32_t *acc, ref_conv_params *g,
                            ops_qconv_s32_fn conv) {
    int64_t pad_end[REF_WIN_MAX];
    mopt_status st = ops_conv_geometry(ctx, &in[0].shape, &in[iw].shape, g, pad_end);
    if (st) return st;
    int32_t *wzp = op_work_get(ctx, 2, (size_t)(g->c_out > 0 ? g->c_out : 1) * sizeof(int32_t));
    if (!wzp) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the integer convolution");
    int32_t xzp = 0;
    bool per_channel = false, unused;
    if (izx >= 0) read_zp(in, n_in, izx, &xzp, 1, &unused);
    read_zp(in, n_in, izw, wzp, g->c_out > 0 ? g->c_out : 1, &per_channel);
    ref_qconv_args a = {.x = in[0].data,
                        .x_s8 = in[0].dtype == MOPT_DTYPE_I8,
                        .x_zp = xzp,
                        .w = in[iw].data,
                        .w_s8 = in[iw].dtype == MOPT_DTYPE_I8,
                        .w_zp = wzp,
                        .w_zp_per_channel = per_channel,
                        .bias = bias};
    st = conv(ctx, g, &a, acc);
    op_work_put(ctx, wzp);
    return st;
}

/* ---- ConvInteger -------------------------------------------------------------- */

static mopt_status conv_integer_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      op_tensor *out, int n_out) {
    mopt_status st = op_expect_dtype(ctx, &in[0], 0, k_int8, 2);
    if (!st) st = op_expect_dtype(ctx, &in[1], 1, k_int8, 2);
    if (!st && op_has_input(in, n_in, 2)) st = op_same_dtype(ctx, in, 0, 2);
    if (!st && op_has_input(in, n_in, 3)) st = op_same_dtype(ctx, in, 1, 3);
    if (!st && op_has_input(in, n_in, 2))
        st = check_param(ctx, &in[2], "x_zero_point", false, &in[1].shape);
    if (!st && op_has_input(in, n_in, 3))
        st = check_param(ctx, &in[3], "w_zero_point", true, &in[1].shape);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_I32;
    return conv_shape(ctx, &in[0], &in[1], &out[0].shape);
}

static mopt_status conv_integer_run_with(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         op_tensor *out, ops_qconv_s32_fn conv) {
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    ref_conv_params g;
    return conv_s32(ctx, in, n_in, 1, 2, 3, NULL, out[0].data, &g, conv);
}

static mopt_status conv_integer_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    return conv_integer_run_with(ctx, in, n_in, out, ops_qconv_ref_s32);
}

/* ---- QLinearConv -------------------------------------------------------------- */

enum { QX, QX_SCALE, QX_ZP, QW, QW_SCALE, QW_ZP, QY_SCALE, QY_ZP, QB };

static mopt_status qlinear_conv_infer(const op_ctx *ctx, const op_tensor *in, int n_in,
                                      op_tensor *out, int n_out) {
    static const mopt_dtype i32[] = {MOPT_DTYPE_I32};
    const ir_shape *w = &in[QW].shape;
    mopt_status st = op_expect_dtype(ctx, &in[QX], QX, k_int8, 2);
    if (!st) st = op_expect_dtype(ctx, &in[QW], QW, k_int8, 2);
    if (!st) st = op_expect_dtype(ctx, &in[QY_ZP], QY_ZP, k_int8, 2);
    if (!st) st = op_same_dtype(ctx, in, QX, QX_ZP);
    if (!st) st = op_same_dtype(ctx, in, QW, QW_ZP);
    for (int k = QX_SCALE; !st && k <= QY_SCALE; k += 3)
        st = op_expect_f32(ctx, &in[k], k);
    if (!st && op_has_input(in, n_in, QB)) st = op_expect_dtype(ctx, &in[QB], QB, i32, 1);
    if (!st) st = check_param(ctx, &in[QX_SCALE], "x_scale", false, w);
    if (!st) st = check_param(ctx, &in[QX_ZP], "x_zero_point", false, w);
    if (!st) st = check_param(ctx, &in[QW_SCALE], "w_scale", true, w);
    if (!st) st = check_param(ctx, &in[QW_ZP], "w_zero_point", true, w);
    if (!st) st = check_param(ctx, &in[QY_SCALE], "y_scale", false, w);
    if (!st) st = check_param(ctx, &in[QY_ZP], "y_zero_point", false, w);
    if (!st && op_has_input(in, n_in, QB) && in[QB].shape.rank >= 0) {
        const ir_shape *b = &in[QB].shape;
        char sb[IR_SHAPE_STR_CAP], sw[IR_SHAPE_STR_CAP];
        if (b->rank != 1 || (known(b, 0) && known(w, 0) && b->dims[0] != w->dims[0]))
            st = op_fail(ctx, MOPT_ERR_SHAPE,
                         "B %s must be 1-D with one value per output channel of W %s",
                         op_shape_str(ctx, b, sb), op_shape_str(ctx, w, sw));
    }
    if (st) return st;
    out[0].dtype = in[QY_ZP].dtype != MOPT_DTYPE_UNDEFINED ? in[QY_ZP].dtype : in[QX].dtype;
    return conv_shape(ctx, &in[QX], &in[QW], &out[0].shape);
}

static mopt_status qlinear_conv_run_with(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         op_tensor *out, ops_qconv_s32_fn conv) {
    int64_t numel = op_numel(&out[0]);
    if (numel == 0) return MOPT_OK;
    int64_t c_out = in[QW].shape.dims[0];
    int32_t *acc = op_work_get(ctx, 0, (size_t)numel * sizeof(int32_t));
    float *scale = op_work_get(ctx, 1, (size_t)c_out * sizeof(float));
    if (!acc || !scale) {
        op_work_put(ctx, acc);
        op_work_put(ctx, scale);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for QLinearConv");
    }
    /* the multiplier in f32, as x_scale * w_scale / y_scale is formed in ONNX's reference */
    const float xs = *(const float *)in[QX_SCALE].data, ys = *(const float *)in[QY_SCALE].data;
    const float *ws = in[QW_SCALE].data;
    bool ws_per_channel = op_numel(&in[QW_SCALE]) > 1;
    for (int64_t m = 0; m < c_out; m++) {
        float s = xs * ws[ws_per_channel ? m : 0];
        scale[m] = s / ys;
    }
    const int32_t *bias = op_has_input(in, n_in, QB) ? in[QB].data : NULL;
    ref_conv_params g;
    mopt_status st = conv_s32(ctx, in, n_in, QW, QX_ZP, QW_ZP, bias, acc, &g, conv);
    if (!st) {
        int32_t yzp = out[0].dtype == MOPT_DTYPE_I8 ? *(const int8_t *)in[QY_ZP].data
                                                    : *(const uint8_t *)in[QY_ZP].data;
        int64_t plane = numel / (g.batch * c_out);
        ref_requantize_s32(acc, g.batch, c_out, plane, scale, yzp, out[0].dtype == MOPT_DTYPE_I8,
                           out[0].data);
    }
    op_work_put(ctx, acc);
    op_work_put(ctx, scale);
    return st;
}

static mopt_status qlinear_conv_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    return qlinear_conv_run_with(ctx, in, n_in, out, ops_qconv_ref_s32);
}

mopt_status ops_conv_quant_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               ops_qconv_s32_fn conv) {
    if (strcmp(ctx->def->op_type, "QLinearConv") == 0)
        return qlinear_conv_run_with(ctx, in, n_in, out, conv);
    return conv_integer_run_with(ctx, in, n_in, out, conv);
}

#define PARAMS .params_size = sizeof(qconv_params), .parse = ops_conv_parse

/* The float bridge only ever applies to f16/bf16/f64 scales (the spec's are f32). */
static const op_def k_ops[] = {
    {"ConvInteger", "", 2, 4, 1, 1, conv_integer_infer, conv_integer_run, ops_conv_quant_impls,
     PARAMS, .bridge = &ops_bridge_float},
    {"QLinearConv", "", 8, 9, 1, 1, qlinear_conv_infer, qlinear_conv_run, ops_conv_quant_impls,
     PARAMS, .bridge = &ops_bridge_float},
};

const op_def *ops_family_conv_quant(size_t *count) {
    *count = sizeof k_ops / sizeof k_ops[0];
    return k_ops;
}
