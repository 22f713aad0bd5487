/*
 * qstatic.c — the "qstatic" operator family (domain "mopt"): the static
 * INT8 matrix product and convolution that pass_quant_static.c makes from
 * MatMul/Gemm/Conv (and their fused forms) with a calibration table
 * (issue 13); qstatic.h says what they compute. The reference run quantizes
 * X, sums in exact int32 (ref_conv_s32, a plain loop for the product), and
 * applies the per-channel scale, bias, activation and (u8 output) the
 * requantization; the cpu impls (cpu/qstatic_cpu.c) swap in the AVX-512
 * quantizer and the VNNI kernels.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kernels/ref/ref_epilogue.h"
#include "ops/fused.h"
#include "ops/impls.h"
#include "ops/matmul.h"
#include "ops/op_common.h"
#include "ops/qstatic.h"

static mopt_status qs_parse(const op_ctx *ctx, void *params) {
    qstatic_params *p = params;
    p->is_conv = strcmp(ctx->node->op_type, "StaticQConv") == 0;
    if (p->is_conv) {
        mopt_status st = ops_conv_parse(ctx, &p->conv);
        if (st) return st;
        int64_t layout = ir_node_attr_int(ctx->node, "layout", 0);
        if (layout < 0 || layout > (CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC))
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "layout %" PRId64 " is not 0..3", layout);
        p->conv.layout = (int32_t)layout;
    }
    p->x_scale = ir_node_attr_float(ctx->node, "x_scale", 0.f);
    p->x_zp = (int32_t)ir_node_attr_int(ctx->node, "x_zero_point", 0);
    p->y_scale = ir_node_attr_float(ctx->node, "y_scale", 0.f);
    p->y_zp = (int32_t)ir_node_attr_int(ctx->node, "y_zero_point", 0);
    mopt_status st = ops_fused_read_activation(ctx, &p->act);
    if (st) return st;
    p->has_post = ir_node_attr(ctx->node, "post_scale") != NULL ||
                  ir_node_attr(ctx->node, "post_shift") != NULL;
    p->post_scale = ir_node_attr_float(ctx->node, "post_scale", 1.f);
    p->post_shift = ir_node_attr_float(ctx->node, "post_shift", 0.f);
    if (p->has_post && !p->is_conv)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "post_scale/post_shift are for StaticQConv only");
    if (!isfinite(p->post_scale) || !isfinite(p->post_shift))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "post_scale %g and post_shift %g must be finite", (double)p->post_scale,
                       (double)p->post_shift);
    p->x_cs = NULL;
    p->n_cs = ir_node_attr_floats(ctx->node, "x_channel_scales", &p->x_cs);
    if (p->n_cs < 0) p->n_cs = 0, p->x_cs = NULL;
    if (p->n_cs && !p->is_conv)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "x_channel_scales is for StaticQConv only");
    for (int64_t c = 0; c < p->n_cs; c++)
        if (!(p->x_cs[c] > 0) || !isfinite(p->x_cs[c]))
            return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                           "x_channel_scales[%" PRId64 "] %g must be > 0 and finite", c,
                           (double)p->x_cs[c]);
    if (!(p->x_scale > 0) || !isfinite(p->x_scale) || !(p->y_scale >= 0) || !isfinite(p->y_scale))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "x_scale %g must be > 0 and y_scale %g >= 0",
                       (double)p->x_scale, (double)p->y_scale);
    if (p->x_zp < 0 || p->x_zp > 255 || p->y_zp < 0 || p->y_zp > 255)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "zero points must be in 0..255 (u8)");
    return MOPT_OK;
}

static mopt_status qs_check_inputs(const op_ctx *ctx, const op_tensor *in, int n_in, int w_rank) {
    static const mopt_dtype x_types[] = {MOPT_DTYPE_F32, MOPT_DTYPE_U8};
    static const mopt_dtype s8[] = {MOPT_DTYPE_I8};
    mopt_status st = op_expect_dtype(ctx, &in[0], 0, x_types, 2);
    if (!st) st = op_expect_dtype(ctx, &in[1], 1, s8, 1);
    if (!st) st = op_expect_f32(ctx, &in[2], 2);
    if (!st && op_has_input(in, n_in, 3)) st = op_expect_f32(ctx, &in[3], 3);
    if (!st && op_has_input(in, n_in, 4)) st = op_expect_f32(ctx, &in[4], 4);
    if (st) return st;
    const ir_shape *w = &in[1].shape;
    if (w->rank >= 0 && w_rank > 0 && w->rank != w_rank)
        return op_fail(ctx, MOPT_ERR_SHAPE, "W must have rank %d", w_rank);
    return MOPT_OK;
}

static void qs_out_dtype(const op_ctx *ctx, op_tensor *out) {
    const qstatic_params *p = ctx->params;
    out[0].dtype = p->y_scale > 0 ? MOPT_DTYPE_U8 : MOPT_DTYPE_F32;
}

static mopt_status qmm_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_out;
    mopt_status st = qs_check_inputs(ctx, in, n_in, 2);
    if (st) return st;
    qs_out_dtype(ctx, out);
    const ir_shape *x = &in[0].shape, *w = &in[1].shape;
    if (x->rank < 0 || w->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    if (x->rank < 2) return op_fail(ctx, MOPT_ERR_SHAPE, "X must have rank >= 2");
    if (x->syms[x->rank - 1] == 0 && w->syms[0] == 0 && x->dims[x->rank - 1] != w->dims[0])
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "X's last dimension %" PRId64 " is not W's first %" PRId64,
                       x->dims[x->rank - 1], w->dims[0]);
    out[0].shape = *x;
    ops_copy_dim(&out[0].shape, x->rank - 1, w, 1);
    return MOPT_OK;
}

static mopt_status qconv_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st = qs_check_inputs(ctx, in, n_in, 0);
    if (st) return st;
    op_tensor fin[2] = {{MOPT_DTYPE_F32, in[0].shape, NULL}, {MOPT_DTYPE_F32, in[1].shape, NULL}};
    op_tensor fout[1];
    memset(fout, 0, sizeof fout);
    if ((st = ops_conv_infer(ctx, fin, 2, fout, n_out))) return st;
    const qstatic_params *p = ctx->params;
    if (p->n_cs && in[0].dtype != MOPT_DTYPE_F32)
        return op_fail(ctx, MOPT_ERR_TYPE, "X must be f32 with x_channel_scales");
    if (p->n_cs && in[0].shape.rank >= 2 && in[0].shape.syms[1] == 0 &&
        in[0].shape.dims[1] != p->n_cs)
        return op_fail(ctx, MOPT_ERR_SHAPE,
                       "x_channel_scales has %" PRId64 " scales for %" PRId64 " channels", p->n_cs,
                       in[0].shape.dims[1]);
    qs_out_dtype(ctx, out);
    out[0].shape = fout[0].shape;
    return MOPT_OK;
}

/* ---- the run ------------------------------------------------------------ */

/* One output row of n values (one channel's plane, or one matrix row):
 * v = (acc - corr) * scale + bias + res, then the activation (and the post
 * affine), then f32 or
 * u8 (k->quantize). Branch-free loops per case, so they vectorize. */
static void qs_row(const qstatic_params *p, const qstatic_kernels *k, const int32_t *acc, int64_t n,
                   const int32_t *corr, const float *scale, const float *bias, const float *res,
                   bool per_elem, float *tmp, void *y) {
    float *v = p->y_scale > 0 ? tmp : y;
    if (per_elem) {
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)(acc[i] - corr[i]) * scale[i];
        if (bias)
            for (int64_t i = 0; i < n; i++)
                v[i] += bias[i];
    } else {
        const float s = scale[0], b = bias ? bias[0] : 0.f;
        for (int64_t i = 0; i < n; i++)
            v[i] = (float)acc[i] * s + b;
    }
    if (res)
        for (int64_t i = 0; i < n; i++)
            v[i] += res[i];
    if (p->act.act != KN_ACT_NONE) k->act(v, n, &p->act);
    if (p->has_post) {
        const float a = p->post_scale, b = p->post_shift;
        for (int64_t i = 0; i < n; i++)
            v[i] = v[i] * a + b;
    }
    if (p->y_scale > 0) k->quantize(v, n, p->y_scale, (float)p->y_zp, y);
}

/* Work buffers (op_work_get): 3 the quantized X, 4 the accumulators, 5 and
 * 6 a row's values and zero-point corrections; ops_qstatic_run's copies
 * take 0..2, k->conv takes OPS_QCONV_WORK. */
static mopt_status qs_run_plain(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                const qstatic_kernels *k) {
    const qstatic_params *p = ctx->params;
    bool conv = p->is_conv;
    int64_t nx = op_numel(&in[0]), ny = op_numel(&out[0]);
    if (ny == 0) return MOPT_OK;
    if (!conv && in[1].shape.dims[0] <= 0) return op_fail(ctx, MOPT_ERR_SHAPE, "K is 0");
    const float *scale = in[2].data;
    const float *bias = op_has_input(in, n_in, 3) ? in[3].data : NULL;
    const float *res = op_has_input(in, n_in, 4) ? in[4].data : NULL;
    const int8_t *w = in[1].data;
    const uint8_t *qx = in[0].data;
    uint8_t *qbuf = NULL;
    if (in[0].dtype == MOPT_DTYPE_F32) {
        qbuf = op_work_get(ctx, 3, (size_t)nx);
        if (!qbuf) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory to quantize X");
        if (p->n_cs) { /* plain [N, C, spatial]: one scale per channel's plane */
            int64_t C = in[0].shape.dims[1], N = in[0].shape.dims[0];
            int64_t sp = N && C ? nx / (N * C) : 0;
            if (C != p->n_cs) {
                op_work_put(ctx, qbuf);
                return op_fail(ctx, MOPT_ERR_SHAPE,
                               "x_channel_scales: %" PRId64 " for %" PRId64 " channels", p->n_cs,
                               C);
            }
            for (int64_t b = 0; b < N; b++)
                for (int64_t c = 0; c < C; c++)
                    k->quantize((const float *)in[0].data + (b * C + c) * sp, sp, p->x_cs[c],
                                (float)p->x_zp, qbuf + (b * C + c) * sp);
        } else {
            k->quantize(in[0].data, nx, p->x_scale, (float)p->x_zp, qbuf);
        }
        qx = qbuf;
    }
    int64_t ldy = 0, nacc = ny;
    if (!conv) { /* the product's rows padded to 16 columns */
        ldy = (in[1].shape.dims[1] + 15) / 16 * 16;
        nacc = nx / in[1].shape.dims[0] * ldy;
    }
    int32_t *acc = op_work_get(ctx, 4, (size_t)nacc * sizeof(int32_t));
    mopt_status st = acc ? MOPT_OK : op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    size_t osz = out[0].dtype == MOPT_DTYPE_U8 ? 1 : sizeof(float);
    if (!st && conv) {
        ref_conv_params g;
        int64_t pad_end[REF_WIN_MAX];
        st = ops_conv_geometry(ctx, &in[0].shape, &in[1].shape, &g, pad_end);
        int32_t wzp = 0;
        ref_qconv_args a = {
            .x = qx, .x_s8 = false, .x_zp = p->x_zp, .w = w, .w_s8 = true, .w_zp = &wzp};
        if (!st) st = k->conv(ctx, &g, &a, acc);
        int64_t plane = ny / (g.batch * g.c_out);
        float *tmp = st ? NULL : op_work_get(ctx, 5, (size_t)plane * sizeof(float));
        if (!st && !tmp) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
        for (int64_t b = 0; !st && b < g.batch; b++)
            for (int64_t c = 0; c < g.c_out; c++) {
                int64_t o = (b * g.c_out + c) * plane;
                qs_row(p, k, acc + o, plane, NULL, scale + c, bias ? bias + c : NULL,
                       res ? res + o : NULL, false, tmp, (char *)out[0].data + (size_t)o * osz);
            }
        op_work_put(ctx, tmp);
    } else if (!st) {
        int64_t K = in[1].shape.dims[0], N = in[1].shape.dims[1], m = nx / K;
        k->rows(ctx, qx, m, K, w, N, acc, ldy);
        /* the zero point: sum_k (q - zp) w = sum_k q w - zp * sum_k w */
        int32_t *corr = op_work_get(ctx, 6, (size_t)N * sizeof(int32_t));
        float *tmp = op_work_get(ctx, 5, (size_t)N * sizeof(float));
        if (!corr || !tmp) st = op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
        if (corr) memset(corr, 0, (size_t)N * sizeof(int32_t));
        for (int64_t kk = 0; !st && kk < K; kk++)
            for (int64_t n = 0; n < N; n++)
                corr[n] += w[kk * N + n];
        for (int64_t n = 0; !st && n < N; n++)
            corr[n] *= p->x_zp;
        for (int64_t r = 0; !st && r < m; r++)
            qs_row(p, k, acc + r * ldy, N, corr, scale, bias, res ? res + r * N : NULL, true, tmp,
                   (char *)out[0].data + (size_t)(r * N) * osz);
        op_work_put(ctx, corr);
        op_work_put(ctx, tmp);
    }
    op_work_put(ctx, acc);
    op_work_put(ctx, qbuf);
    return st;
}

/* [n, c, sp] <-> [n, sp, c] (to_nhwc: plain -> channels-last), elements of
 * esz bytes (u8 or f32). */
static void relayout(const void *src, void *dst, size_t esz, const ir_shape *s, bool to_nhwc) {
    int64_t n = s->dims[0], c = s->dims[1], sp = 1;
    for (int32_t i = 2; i < s->rank; i++)
        sp *= s->dims[i];
    for (int64_t b = 0; b < n; b++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t i = 0; i < sp; i++) {
                size_t pl = (size_t)((b * c + ch) * sp + i), cl = (size_t)((b * sp + i) * c + ch);
                memcpy((char *)dst + (to_nhwc ? cl : pl) * esz,
                       (const char *)src + (to_nhwc ? pl : cl) * esz, esz);
            }
}

/* A StaticQConv with channels-last X and/or Y (and residual; the layout
 * pass sets `layout`, ops/conv.h) runs plain between copies. */
mopt_status ops_qstatic_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            const qstatic_kernels *k) {
    const qstatic_params *p = ctx->params;
    int32_t layout = p->is_conv ? p->conv.layout : 0;
    if (!layout) return qs_run_plain(ctx, in, n_in, out, k);
    op_tensor lin[5], lout = out[0];
    int n = n_in < 5 ? n_in : 5;
    for (int i = 0; i < n; i++)
        lin[i] = in[i];
    void *tmp[3] = {NULL, NULL, NULL};
    size_t xsz = in[0].dtype == MOPT_DTYPE_U8 ? 1 : sizeof(float);
    size_t ysz = out[0].dtype == MOPT_DTYPE_U8 ? 1 : sizeof(float);
    size_t nx = (size_t)op_numel(&in[0]), ny = (size_t)op_numel(&out[0]);
    mopt_status st = MOPT_OK;
    if (layout & CONV_LAYOUT_X_NHWC) {
        if (!(tmp[0] = op_work_get(ctx, 0, nx * xsz))) st = MOPT_ERR_OUT_OF_MEMORY;
        if (!st) relayout(in[0].data, tmp[0], xsz, &in[0].shape, false);
        lin[0].data = tmp[0];
    }
    if (!st && (layout & CONV_LAYOUT_Y_NHWC)) {
        if (!(tmp[1] = op_work_get(ctx, 1, ny * ysz))) st = MOPT_ERR_OUT_OF_MEMORY;
        lout.data = tmp[1];
        if (!st && op_has_input(in, n_in, 4)) {
            if (!(tmp[2] = op_work_get(ctx, 2, ny * sizeof(float)))) st = MOPT_ERR_OUT_OF_MEMORY;
            if (!st) relayout(in[4].data, tmp[2], sizeof(float), &out[0].shape, false);
            lin[4].data = tmp[2];
        }
    }
    if (!st) st = qs_run_plain(ctx, lin, n, &lout, k);
    if (!st && (layout & CONV_LAYOUT_Y_NHWC))
        relayout(tmp[1], out[0].data, ysz, &out[0].shape, true);
    for (int i = 0; i < 3; i++)
        op_work_put(ctx, tmp[i]);
    if (st == MOPT_ERR_OUT_OF_MEMORY)
        return op_fail(ctx, st, "out of memory for a channels-last copy");
    return st;
}

/* ---- the reference kernels ------------------------------------------------ */

static void ref_quantize(const float *x, int64_t n, float scale, float zp, uint8_t *y) {
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / scale) + zp;
        y[i] = (uint8_t)(v != v ? 0.f : fminf(fmaxf(v, 0.f), 255.f));
    }
}

static void ref_rows(const op_ctx *ctx, const uint8_t *a, int64_t m, int64_t K, const int8_t *w,
                     int64_t N, int32_t *y, int64_t ldy) {
    (void)ctx;
    for (int64_t r = 0; r < m; r++) {
        int32_t *yr = y + r * ldy;
        memset(yr, 0, (size_t)N * sizeof(int32_t));
        for (int64_t k = 0; k < K; k++) {
            int32_t av = a[r * K + k];
            for (int64_t n = 0; n < N; n++)
                yr[n] += av * w[k * N + n];
        }
    }
}

static const qstatic_kernels k_ref = {ref_quantize, ops_qconv_ref_s32, ref_rows,
                                      ref_activation_f32};

static mopt_status qs_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_out;
    return ops_qstatic_run(ctx, in, n_in, out, &k_ref);
}

static int64_t qmm_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    (void)ctx, (void)n_in, (void)n_out;
    if (in[1].shape.rank != 2) return 0;
    return 2 * op_numel(&out[0]) * in[1].shape.dims[0];
}

/* Domain "mopt": never bridged. */
static const op_def k_ops[] = {
    {"StaticQMatMul", "mopt", 3, 5, 1, 1, qmm_infer, qs_run, ops_qstatic_impls,
     OP_PARAMS(qstatic_params, qs_parse), .flops = qmm_flops},
    {"StaticQConv", "mopt", 3, 5, 1, 1, qconv_infer, qs_run, ops_qstatic_impls,
     OP_PARAMS(qstatic_params, qs_parse), .flops = ops_conv_flops},
};

OP_FAMILY(qstatic, k_ops)
