/*
 * quant.c — the "quant" operator family: QuantizeLinear and
 * DequantizeLinear (per-tensor, per-axis and blocked scales; u8 i8 u16 i16
 * u4 i4, the float8 types (zero point 0 only, `saturate`), and i32 for
 * dequantization; f32/f16/bf16 scales), DynamicQuantizeLinear,
 * MatMulInteger and QLinearMatMul. Math in kernels/ref/quant.c.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/float8.h"
#include "core/half.h"
#include "kernels/ref/ref_logic.h"
#include "kernels/ref/ref_quant.h"
#include "ops/bridge.h"
#include "ops/impls.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static bool is_qint(mopt_dtype t) {
    return t == MOPT_DTYPE_U8 || t == MOPT_DTYPE_I8 || t == MOPT_DTYPE_U16 || t == MOPT_DTYPE_I16 ||
           t == MOPT_DTYPE_U4 || t == MOPT_DTYPE_I4 || t == MOPT_DTYPE_U2 || t == MOPT_DTYPE_I2;
}

/* The float quantized types: the float8 ones and f4e2m1 (no zero point) */
static bool is_qfloat(mopt_dtype t) { return f8_is_float8(t) || t == MOPT_DTYPE_F4E2M1; }

static bool is_fscale(mopt_dtype t) {
    return t == MOPT_DTYPE_F32 || t == MOPT_DTYPE_F16 || t == MOPT_DTYPE_BF16;
}

static void qrange(mopt_dtype t, int32_t *lo, int32_t *hi) {
    switch (t) {
    case MOPT_DTYPE_U8: *lo = 0, *hi = 255; break;
    case MOPT_DTYPE_I8: *lo = -128, *hi = 127; break;
    case MOPT_DTYPE_U16: *lo = 0, *hi = 65535; break;
    case MOPT_DTYPE_U4: *lo = 0, *hi = 15; break;
    case MOPT_DTYPE_I4: *lo = -8, *hi = 7; break;
    case MOPT_DTYPE_U2: *lo = 0, *hi = 3; break;
    case MOPT_DTYPE_I2: *lo = -2, *hi = 1; break;
    default: *lo = -32768, *hi = 32767; break;
    }
}

/* Work buffer k of n 4-byte elements (op_work_get), or NULL on no memory. */
static void *work4(const op_ctx *ctx, int k, int64_t n) {
    return op_work_get(ctx, k, (size_t)(n > 0 ? n : 1) * 4);
}

/* A converted copy of t (f32 or i32) in work buffer k, or NULL on no memory. */
static void *conv_copy(const op_ctx *ctx, int k, const op_tensor *t, mopt_dtype to) {
    int64_t n = op_numel(t);
    void *p = work4(ctx, k, n);
    if (p && n > 0) ref_cast(t->dtype, t->data, to, p, n);
    return p;
}

/* Gives back work buffers of conv_copy / work4. */
static void put4(const op_ctx *ctx, void *a, void *b, void *c, void *d) {
    op_work_put(ctx, a), op_work_put(ctx, b), op_work_put(ctx, c), op_work_put(ctx, d);
}

/* QuantizeLinear, DequantizeLinear */
typedef struct q_params {
    bool has_od;   /* output_dtype given */
    int64_t od;    /* its value */
    int64_t block; /* block_size (0: none) */
    int64_t axis;  /* axis (default 1), normalized against x's rank when used */
    bool saturate; /* QuantizeLinear to float8: overflow to the largest value */
} q_params;

static mopt_status q_parse(const op_ctx *ctx, void *params) {
    q_params *p = params;
    p->has_od = op_attr_int_opt(ctx, "output_dtype", &p->od);
    p->block = ir_node_attr_int(ctx->node, "block_size", 0);
    p->axis = ir_node_attr_int(ctx->node, "axis", 1);
    int64_t sat = ir_node_attr_int(ctx->node, "saturate", 1);
    if (sat != 0 && sat != 1)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute 'saturate' must be 0 or 1");
    p->saturate = sat != 0;
    return MOPT_OK;
}

/* A float8 or f4e2m1 zero point must be zero (+0 or -0): ONNX defines
 * their quantization without one. */
static mopt_status f8_zero_point(const op_ctx *ctx, const op_tensor *zp) {
    const uint8_t *z = zp->data;
    unsigned mag = zp->dtype == MOPT_DTYPE_F4E2M1 ? 0x7u : 0x7Fu;
    for (int64_t i = 0; i < op_numel(zp); i++)
        if ((z[i] & mag) != 0) {
            float v;
            ref_cast(zp->dtype, z + i, MOPT_DTYPE_F32, &v, 1);
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                           "a %s zero point must be 0 (element %" PRId64 " is %g)",
                           mopt_dtype_name(zp->dtype), i, (double)v);
        }
    return MOPT_OK;
}

static mopt_status layout_of(const op_ctx *ctx, const op_tensor *x, const op_tensor *scale,
                             ref_qlayout *l) {
    const ir_shape *s = &x->shape, *ss = &scale->shape;
    const q_params *p = ctx->params;
    int64_t block = p->block;
    memset(l, 0, sizeof *l);
    l->outer = op_numel(x);
    l->len = l->inner = 1;
    if (ss->rank == 0 || (ss->rank == 1 && ss->dims[0] == 1 && block <= 0)) return MOPT_OK;
    int32_t ax;
    mopt_status st = op_axis(ctx, p->axis, s->rank, "axis", &ax);
    if (st) return st;
    l->outer = 1;
    for (int32_t a = 0; a < s->rank; a++)
        if (a < ax)
            l->outer *= s->dims[a];
        else if (a > ax)
            l->inner *= s->dims[a];
    l->len = s->dims[ax];
    if (block > 0) {
        l->mode = 2;
        l->block = block;
        bool ok = ss->rank == s->rank;
        for (int32_t a = 0; ok && a < s->rank; a++)
            ok = a == ax ? ss->dims[a] == (s->dims[a] + block - 1) / block
                         : ss->dims[a] == s->dims[a];
        if (!ok) return op_fail(ctx, MOPT_ERR_SHAPE, "blocked scale shape does not fit x");
    } else {
        l->mode = 1;
        if (ss->rank != 1 || ss->dims[0] != l->len)
            return op_fail(ctx, MOPT_ERR_SHAPE, "per-axis scale must have %" PRId64 " values",
                           l->len);
    }
    return MOPT_OK;
}

/* ---- QuantizeLinear --------------------------------------------------------------- */

static mopt_status q_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    mopt_dtype t = MOPT_DTYPE_U8;
    const q_params *p = ctx->params;
    if (p->has_od) t = (mopt_dtype)p->od;
    if (op_has_input(in, n_in, 2)) t = in[2].dtype;
    if (!is_qint(t) && !is_qfloat(t))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "quantized type %s is not supported",
                       mopt_dtype_name(t));
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && !is_fscale(in[0].dtype) &&
        in[0].dtype != MOPT_DTYPE_I32)
        return op_fail(ctx, MOPT_ERR_TYPE, "x has type %s", mopt_dtype_name(in[0].dtype));
    if (in[1].dtype != MOPT_DTYPE_UNDEFINED && !is_fscale(in[1].dtype))
        return op_fail(ctx, MOPT_ERR_TYPE, "y_scale has type %s", mopt_dtype_name(in[1].dtype));
    out[0].dtype = t;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status q_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                         int n_out) {
    ref_qlayout l;
    mopt_status st = layout_of(ctx, &in[0], &in[1], &l);
    if (st) return st;
    int64_t n = op_numel(&in[0]);
    bool f8 = is_qfloat(out[0].dtype);
    if (f8 && op_has_input(in, n_in, 2) && (st = f8_zero_point(ctx, &in[2]))) return st;
    float *x = conv_copy(ctx, 0, &in[0], MOPT_DTYPE_F32);
    float *s = conv_copy(ctx, 1, &in[1], MOPT_DTYPE_F32);
    if (f8) {
        const q_params *p = ctx->params;
        /* ONNX's reference adds f4e2m1's (zero) zero point, ignores float8's */
        bool add_zp = out[0].dtype == MOPT_DTYPE_F4E2M1 && op_has_input(in, n_in, 2);
        float *zf = add_zp ? conv_copy(ctx, 2, &in[2], MOPT_DTYPE_F32) : NULL;
        if (!x || !s || (add_zp && !zf))
            st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
        else
            ref_quantize_f8(&l, x, s, zf, in[0].dtype == MOPT_DTYPE_F16, out[0].dtype, p->saturate,
                            out[0].data);
        put4(ctx, x, s, zf, NULL);
        return st;
    }
    int32_t *zp = op_has_input(in, n_in, 2) ? conv_copy(ctx, 2, &in[2], MOPT_DTYPE_I32) : NULL;
    int32_t *q = work4(ctx, 3, n);
    if (!x || !s || !q || (op_has_input(in, n_in, 2) && !zp)) {
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    } else {
        int32_t lo, hi;
        qrange(out[0].dtype, &lo, &hi);
        ref_quantize(&l, x, s, zp, in[0].dtype == MOPT_DTYPE_F16, lo, hi, q);
        ref_cast(MOPT_DTYPE_I32, q, out[0].dtype, out[0].data, n);
    }
    put4(ctx, x, s, zp, q);
    return st;
}

/* ---- DequantizeLinear --------------------------------------------------------------- */

static mopt_status dq_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && !is_qint(in[0].dtype) && !is_qfloat(in[0].dtype) &&
        in[0].dtype != MOPT_DTYPE_I32)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "x of type %s is not supported",
                       mopt_dtype_name(in[0].dtype));
    if (in[1].dtype != MOPT_DTYPE_UNDEFINED && !is_fscale(in[1].dtype))
        return op_fail(ctx, MOPT_ERR_TYPE, "x_scale has type %s", mopt_dtype_name(in[1].dtype));
    if (op_has_input(in, n_in, 2) && in[0].dtype != MOPT_DTYPE_UNDEFINED &&
        in[2].dtype != in[0].dtype)
        return op_fail(ctx, MOPT_ERR_TYPE, "x_zero_point must have the type of x");
    const q_params *p = ctx->params;
    out[0].dtype = p->has_od && p->od ? (mopt_dtype)p->od : in[1].dtype;
    if (out[0].dtype != MOPT_DTYPE_UNDEFINED && !is_fscale(out[0].dtype))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "output type %s is not supported",
                       mopt_dtype_name(out[0].dtype));
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status dq_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    ref_qlayout l;
    mopt_status st = layout_of(ctx, &in[0], &in[1], &l);
    if (st) return st;
    int64_t n = op_numel(&in[0]);
    if (is_qfloat(in[0].dtype)) {
        if (op_has_input(in, n_in, 2) && (st = f8_zero_point(ctx, &in[2]))) return st;
        float *xf = conv_copy(ctx, 0, &in[0], MOPT_DTYPE_F32);
        float *sf = conv_copy(ctx, 1, &in[1], MOPT_DTYPE_F32), *yf = work4(ctx, 2, n);
        if (!xf || !sf || !yf) {
            st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
        } else {
            ref_dequantize_f(&l, xf, sf, yf);
            ref_cast(MOPT_DTYPE_F32, yf, out[0].dtype, out[0].data, n);
        }
        put4(ctx, xf, sf, yf, NULL);
        return st;
    }
    int32_t *x = conv_copy(ctx, 0, &in[0], MOPT_DTYPE_I32);
    float *s = conv_copy(ctx, 1, &in[1], MOPT_DTYPE_F32), *y = work4(ctx, 2, n);
    int32_t *zp = op_has_input(in, n_in, 2) ? conv_copy(ctx, 3, &in[2], MOPT_DTYPE_I32) : NULL;
    if (!x || !s || !y || (op_has_input(in, n_in, 2) && !zp)) {
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    } else {
        ref_dequantize(&l, x, s, zp, y);
        ref_cast(MOPT_DTYPE_F32, y, out[0].dtype, out[0].data, n);
    }
    put4(ctx, x, s, zp, y);
    return st;
}

/* ---- DynamicQuantizeLinear ---------------------------------------------------------------- */

static mopt_status dyn_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = MOPT_DTYPE_U8;
    out[0].shape = in[0].shape;
    for (int k = 1; k < n_out; k++) {
        out[k].dtype = k == 1 ? MOPT_DTYPE_F32 : MOPT_DTYPE_U8;
        ir_shape_set_scalar(&out[k].shape);
    }
    return MOPT_OK;
}

static mopt_status dyn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    return ops_dyn_quant_run(ctx, in, n_in, out, n_out, NULL, NULL);
}

mopt_status ops_dyn_quant_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out, ops_dyn_minmax_fn minmax, ops_dyn_quant_fn quant) {
    (void)ctx, (void)n_in;
    const float *x = in[0].data;
    int64_t n = op_numel(&in[0]);
    float mx = 0, mn = 0;
    if (minmax)
        minmax(x, n, &mn, &mx);
    else
        for (int64_t i = 0; i < n; i++) {
            if (x[i] > mx) mx = x[i];
            if (x[i] < mn) mn = x[i];
        }
    float scale = (mx == mn ? 1.0f : (mx - mn)) / 255.0f;
    float izp = 0.0f - mn / scale;
    /* a NaN (from a NaN or infinite input) becomes 0: converting it to an
     * integer would be undefined */
    if (!(izp == izp)) izp = 0;
    float zp = nearbyintf(izp < 0 ? 0 : izp > 255 ? 255 : izp);
    uint8_t *y = out[0].data;
    if (quant)
        quant(x, n, scale, zp, y);
    else
        for (int64_t i = 0; i < n; i++) {
            float v = nearbyintf(x[i] / scale) + zp;
            if (!(v == v)) v = 0;
            y[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    if (n_out > 1) *(float *)out[1].data = scale;
    if (n_out > 2) *(uint8_t *)out[2].data = (uint8_t)zp;
    return MOPT_OK;
}

/* ---- MatMulInteger / QLinearMatMul ------------------------------------------------------ */

/* params: QLinearMatMul (else MatMulInteger) */
typedef struct mmi_params {
    bool ql;
} mmi_params;

static mopt_status mmi_parse(const op_ctx *ctx, void *params) {
    ((mmi_params *)params)->ql = strcmp(ctx->node->op_type, "QLinearMatMul") == 0;
    return MOPT_OK;
}

/* [batch..., m, k] x [batch..., k, n] with equal batch dims or a 2-D B. */
static mopt_status mm_shape(const op_ctx *ctx, const ir_shape *a, const ir_shape *b, ir_shape *y) {
    if (a->rank < 0 || b->rank < 0) {
        ir_shape_set_unknown(y);
        return MOPT_OK;
    }
    if (a->rank < 2 || b->rank < 2)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "1-D operands are not supported");
    ir_shape ab = *a, bb = *b;
    ab.rank -= 2, bb.rank -= 2;
    mopt_status st = op_broadcast(ctx, &ab, &bb, y);
    if (st) return st;
    if (y->rank + 2 > IR_MAX_RANK) return op_fail(ctx, MOPT_ERR_SHAPE, "rank too large");
    y->dims[y->rank] = a->dims[a->rank - 2], y->syms[y->rank] = a->syms[a->rank - 2];
    y->dims[y->rank + 1] = b->dims[b->rank - 1], y->syms[y->rank + 1] = b->syms[b->rank - 1];
    y->rank += 2;
    if (a->syms[a->rank - 1] == 0 && b->syms[b->rank - 2] == 0 &&
        a->dims[a->rank - 1] != b->dims[b->rank - 2])
        return op_fail(ctx, MOPT_ERR_SHAPE, "inner dimensions differ (%" PRId64 " vs %" PRId64 ")",
                       a->dims[a->rank - 1], b->dims[b->rank - 2]);
    return MOPT_OK;
}

static mopt_status mmi_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    bool ql = ((const mmi_params *)ctx->params)->ql;
    int ia = 0, ib = ql ? 3 : 1;
    if ((in[ia].dtype && !is_qint(in[ia].dtype)) || (in[ib].dtype && !is_qint(in[ib].dtype)))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "operand types %s, %s are not supported",
                       mopt_dtype_name(in[ia].dtype), mopt_dtype_name(in[ib].dtype));
    out[0].dtype = ql ? (op_has_input(in, n_in, 7) ? in[7].dtype : in[0].dtype) : MOPT_DTYPE_I32;
    return mm_shape(ctx, &in[ia].shape, &in[ib].shape, &out[0].shape);
}

static mopt_status mmi_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    bool ql = ((const mmi_params *)ctx->params)->ql;
    const op_tensor *A = &in[0], *B = &in[ql ? 3 : 1];
    const op_tensor *ZA = ql ? (op_has_input(in, n_in, 2) ? &in[2] : NULL)
                             : (op_has_input(in, n_in, 2) ? &in[2] : NULL);
    const op_tensor *ZB = ql ? (op_has_input(in, n_in, 5) ? &in[5] : NULL)
                             : (op_has_input(in, n_in, 3) ? &in[3] : NULL);
    const ir_shape *ys = &out[0].shape;
    int64_t m = ys->dims[ys->rank - 2], n = ys->dims[ys->rank - 1];
    int64_t k = A->shape.dims[A->shape.rank - 1];
    int64_t batch = 1;
    for (int32_t a = 0; a < ys->rank - 2; a++)
        batch *= ys->dims[a];
    int64_t a_batch = op_numel(A) / (m * k > 0 ? m * k : 1);
    int64_t b_batch = op_numel(B) / (k * n > 0 ? k * n : 1);
    if ((a_batch != batch && a_batch != 1) || (b_batch != batch && b_batch != 1))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "general batch broadcasting is not supported");
    /* a zero point is a scalar, or one per row of A (m) / column of B (n) */
    if (ZA && op_numel(ZA) > 1 && op_numel(ZA) != m)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "A's zero point has %" PRId64 " values; expected 1 or %" PRId64,
                       op_numel(ZA), m);
    if (ZB && op_numel(ZB) > 1 && op_numel(ZB) != n)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "B's zero point has %" PRId64 " values; expected 1 or %" PRId64,
                       op_numel(ZB), n);
    int32_t *a = conv_copy(ctx, 0, A, MOPT_DTYPE_I32), *b = conv_copy(ctx, 1, B, MOPT_DTYPE_I32);
    int32_t *za = ZA ? conv_copy(ctx, 2, ZA, MOPT_DTYPE_I32) : NULL;
    int32_t *zb = ZB ? conv_copy(ctx, 3, ZB, MOPT_DTYPE_I32) : NULL;
    int32_t *acc = ql ? work4(ctx, 4, op_numel(&out[0]) + 1) : out[0].data;
    mopt_status st = MOPT_OK;
    if (!a || !b || !acc || (ZA && !za) || (ZB && !zb)) {
        st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
        goto done;
    }
    for (int64_t p = 0; p < batch; p++)
        ref_matmul_int(m, k, n, a + (a_batch > 1 ? p * m * k : 0),
                       b + (b_batch > 1 ? p * k * n : 0), za, ZA ? op_numel(ZA) : 0, zb,
                       ZB ? op_numel(ZB) : 0, acc + p * m * n);
    if (ql) {
        double as, bs, ysc, yzp = 0;
        float f[3];
        const op_tensor *sc[3] = {&in[1], &in[4], &in[6]};
        for (int i = 0; i < 3; i++) {
            if (op_numel(sc[i]) != 1) {
                st = op_fail(ctx, MOPT_ERR_UNSUPPORTED, "per-axis scales are not supported");
                goto done;
            }
            ref_cast(sc[i]->dtype, sc[i]->data, MOPT_DTYPE_F32, &f[i], 1);
        }
        as = f[0], bs = f[1], ysc = f[2];
        /* the multiplier in the scales' own precision, as the reference does */
        float mul = (float)(as * bs);
        if (in[1].dtype == MOPT_DTYPE_F16) mul = half_to_f32(half_from_f32(mul));
        mul = mul / (float)ysc;
        if (in[1].dtype == MOPT_DTYPE_F16) mul = half_to_f32(half_from_f32(mul));
        if (op_has_input(in, n_in, 7)) {
            int32_t z;
            ref_cast(in[7].dtype, in[7].data, MOPT_DTYPE_I32, &z, 1);
            yzp = z;
        }
        int32_t lo, hi;
        qrange(out[0].dtype, &lo, &hi);
        for (int64_t i = 0, nn = op_numel(&out[0]); i < nn; i++) {
            double v = nearbyint((double)acc[i] * mul + yzp);
            /* a NaN (from NaN or infinite scales) becomes lo, as in the
             * QLinearConv reference and the cpu kernel's fmaxf */
            acc[i] = !(v >= lo) ? lo : v > hi ? hi : (int32_t)v;
        }
        ref_cast(MOPT_DTYPE_I32, acc, out[0].dtype, out[0].data, op_numel(&out[0]));
    }
done:
    put4(ctx, a, b, za, zb);
    if (ql) op_work_put(ctx, acc);
    return st;
}

static const op_def k_ops[] = {
    /* QuantizeLinear and DynamicQuantizeLinear name their output type: never bridged */
    {"QuantizeLinear", "", 2, 3, 1, 1, q_infer, q_run, NULL, OP_PARAMS(q_params, q_parse)},
    {"DequantizeLinear", "", 2, 3, 1, 1, dq_infer, dq_run, NULL, OP_PARAMS(q_params, q_parse),
     .bridge = &ops_bridge_float},
    {"DynamicQuantizeLinear", "", 1, 1, 1, 3, dyn_infer, dyn_run, ops_dyn_quant_impls},
    {"MatMulInteger", "", 2, 4, 1, 1, mmi_infer, mmi_run, ops_matmul_int_impls,
     OP_PARAMS(mmi_params, mmi_parse), .bridge = &ops_bridge_float},
    {"QLinearMatMul", "", 8, 8, 1, 1, mmi_infer, mmi_run, ops_qlinear_matmul_impls,
     OP_PARAMS(mmi_params, mmi_parse), .bridge = &ops_bridge_float},
};

OP_FAMILY(quant, k_ops)
