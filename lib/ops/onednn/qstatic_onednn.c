/*
 * qstatic_onednn.c — mopt.StaticQConv (lib/ops/qstatic.h) on oneDNN's JIT
 * int8 convolution (kernels/onednn/onednn_qconv.c; issue 11), and
 * mopt.StaticQMatMul as its 1x1 case (X [..., M, K] as M channels-last
 * positions, W [K, N] transposed once to [N, K]): u8 X with its
 * calibrated zero point, s8 W reordered once at load into oneDNN's blocked
 * layout (for the load-time shape: batch 1, unknown sizes 32), the scale,
 * bias, residual, activation and the u8 requantization as post-ops of the
 * one primitive. An f32 X is quantized on entry (AVX-512 where there is
 * one; per channel, plain or channels-last, with x_channel_scales). Impl "onednn-int8"; its prepare
 * steps aside (the cpu-vnni impl or the reference runs) when oneDNN lacks VNNI (u8 x s8 pairs would
 * saturate with our 8-bit weights), refuses the problem, or would run its reference or gemm kernel.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/rowquant.h"
#include "kernels/onednn/onednn.h"
#include "ops/op_common.h"
#include "ops/qstatic.h"

/* Per-session: the primitives and the buffer X is quantized into. */
typedef struct qs_scratch {
    onednn_qcache *cache;
    uint8_t *qx;
    size_t qx_cap;
} qs_scratch;

static void qs_scratch_release(void *scratch) {
    qs_scratch *s = scratch;
    if (!s) return;
    onednn_qcache_free(s->cache);
    mopt_aligned_free(s->qx);
    mopt_free(s);
}

/* The packed W; for StaticQMatMul also W [K, N] transposed to the 1x1
 * convolution's [N, K] (the plain copy a shape the packing does not fit
 * reorders from). */
typedef struct qs_state {
    onednn_qweights *w;
    int8_t *wt;
} qs_state;

static void qs_release(void *state) {
    qs_state *s = state;
    if (!s) return;
    onednn_qweights_free(s->w);
    mopt_aligned_free(s->wt);
    mopt_free(s);
}

static const char *qs_variant(const void *state) {
    (void)state;
    return "onednn-int8";
}

static bool qs_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)n_out;
    const qstatic_params *p = ctx->params;
    if (!onednn_available() || !onednn_int8_exact()) return false;
    const ir_shape *w = &in[1].shape;
    /* StaticQMatMul: X [..., M, K] x W [K, N] as a 1x1 convolution over M
     * positions, channels-last */
    int32_t lo = p->is_conv ? 3 : 2, hi = p->is_conv ? 5 : 2;
    if (in[1].dtype != MOPT_DTYPE_I8 || !in[1].data || w->rank < lo || w->rank > hi ||
        !ir_shape_is_concrete(w) || !op_has_input(in, n_in, 2) || !in[2].data)
        return false;
    if (!p->is_conv) {
        const ir_shape *x = &in[0].shape;
        if (x->rank < 2 || x->syms[x->rank - 1] != 0 || x->dims[x->rank - 1] != w->dims[0])
            return false;
        if (op_has_input(in, n_in, 4) && !op_residual_fits(&in[4], &out[0].shape))
            return false; /* a residual of Y's shape */
    }
    if (op_has_input(in, n_in, 3) && !in[3].data) return false; /* bias folded at load */
    return out[0].dtype == (p->y_scale > 0 ? MOPT_DTYPE_U8 : MOPT_DTYPE_F32);
}

/* StaticQMatMul's product of M rows as a 1x1 convolution: batch 1, K
 * channels in, N out, M positions along one axis, channels-last. */
static void matmul_geom(int64_t M, int64_t K, int64_t N, onednn_qconv_desc *q) {
    q->S = 1;
    q->batch = 1, q->c_in = K, q->c_out = N, q->group = 1;
    for (int32_t i = 0; i < 3; i++) {
        q->in[i] = q->out[i] = i == 0 ? M : 1;
        q->k[i] = q->stride[i] = q->dilation[i] = 1;
    }
    q->x_nhwc = q->y_nhwc = true;
}

/* The problem for concrete X and W shapes. */
static mopt_status qs_desc(const op_ctx *ctx, const ir_shape *x, const ir_shape *w, bool has_b,
                           bool has_res, onednn_qconv_desc *q) {
    const qstatic_params *p = ctx->params;
    onednn_conv_desc d;
    memset(q, 0, sizeof *q);
    if (!p->is_conv) {
        int64_t M = x->rank >= 2 ? ir_shape_numel(x) / w->dims[0] : 0;
        if (M <= 0) return MOPT_ERR_UNSUPPORTED;
        matmul_geom(M, w->dims[0], w->dims[1], q);
        d.x_nhwc = d.y_nhwc = true;
    } else {
        mopt_status st = ops_conv_onednn_desc(ctx, x, w, has_b, &d);
        if (st) return st;
        q->S = d.S;
        q->batch = d.batch, q->c_in = d.c_in, q->c_out = d.c_out, q->group = d.group;
        for (int32_t i = 0; i < 3; i++) {
            q->in[i] = d.in[i], q->out[i] = d.out[i], q->k[i] = d.k[i];
            q->stride[i] = d.stride[i], q->dilation[i] = d.dilation[i];
            q->pad_l[i] = d.pad_l[i], q->pad_r[i] = d.pad_r[i];
        }
    }
    q->has_bias = has_b;
    q->has_residual = has_res;
    q->act = p->act.act;
    q->act_alpha = p->act.alpha;
    q->act_beta = p->act.beta;
    q->has_post = p->has_post;
    q->post_scale = p->post_scale;
    q->post_shift = p->post_shift;
    q->x_zp = p->x_zp;
    q->y_u8 = p->y_scale > 0;
    q->y_scale = p->y_scale;
    q->y_zp = p->y_zp;
    q->x_nhwc = d.x_nhwc;
    q->y_nhwc = d.y_nhwc;
    return MOPT_OK;
}

static mopt_status qs_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out, void **state) {
    (void)out, (void)n_out;
    *state = NULL;
    const qstatic_params *p = ctx->params;
    const ir_shape *ws = &in[1].shape;
    ir_shape x;
    memset(&x, 0, sizeof x);
    if (p->is_conv) {
        x.rank = ws->rank;
        x.dims[0] = 1;
        x.dims[1] = ws->dims[1] * p->conv.group;
        for (int32_t i = 2; i < x.rank; i++) {
            const ir_shape *s = &in[0].shape;
            x.dims[i] = s->rank == x.rank && s->syms[i] == 0 ? s->dims[i] : 32;
        }
    } else { /* representative rows: 128 */
        x.rank = 2;
        x.dims[0] = 128;
        x.dims[1] = ws->dims[0];
    }
    bool has_b = op_has_input(in, n_in, 3);
    onednn_qconv_desc d;
    mopt_status st = qs_desc(ctx, &x, ws, has_b, op_has_input(in, n_in, 4), &d);
    if (st) {
        mopt_clear_error();
        return MOPT_ERR_UNSUPPORTED;
    }
    qs_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    const int8_t *w = in[1].data;
    if (!p->is_conv) { /* W [K, N] -> [N, K] */
        int64_t K = ws->dims[0], N = ws->dims[1];
        s->wt = mopt_aligned_alloc((size_t)(K * N));
        if (!s->wt) {
            qs_release(s);
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for W");
        }
        for (int64_t k = 0; k < K; k++)
            for (int64_t n = 0; n < N; n++)
                s->wt[n * K + k] = w[k * N + n];
        w = s->wt;
    }
    st = onednn_qconv_pack(&d, w, in[2].data, has_b ? in[3].data : NULL, 1, &s->w);
    if (st == MOPT_ERR_UNSUPPORTED) mopt_clear_error();
    if (st) {
        qs_release(s);
        return st;
    }
    *state = s;
    return MOPT_OK;
}

static mopt_status qs_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_out;
    const qstatic_params *p = ctx->params;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    bool has_b = op_has_input(in, n_in, 3), has_res = op_has_input(in, n_in, 4);
    onednn_qconv_desc d;
    mopt_status st = qs_desc(ctx, &in[0].shape, &in[1].shape, has_b, has_res, &d);
    if (st) return st;
    qs_scratch **sp = (qs_scratch **)ctx->scratch;
    if (!*sp && !(*sp = mopt_calloc(1, sizeof **sp)))
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    qs_scratch *s = *sp;
    const uint8_t *qx = in[0].data;
    if (in[0].dtype == MOPT_DTYPE_F32) {
        size_t n = (size_t)op_numel(&in[0]);
        if (s->qx_cap < n) {
            mopt_aligned_free(s->qx);
            s->qx_cap = 0;
            if (!(s->qx = mopt_aligned_alloc(n)))
                return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory to quantize X");
            s->qx_cap = n;
        }
        const float *x = in[0].data;
        if (p->n_cs && p->n_cs == d.c_in && d.x_nhwc) {
            cpu_quantize_u8_cl(x, (int64_t)n / d.c_in, d.c_in, p->x_cs, (float)p->x_zp,
                               cpu_kernels_for("avx512"), s->qx);
        } else if (p->n_cs && p->n_cs == d.c_in) {
            int64_t pl = (int64_t)n / (d.batch * d.c_in);
            for (int64_t c = 0; c < d.batch * d.c_in; c++)
                cpu_quantize_u8(x + c * pl, pl, p->x_cs[c % d.c_in], (float)p->x_zp,
                                s->qx + c * pl);
        } else if (p->n_cs) {
            return op_fail(ctx, MOPT_ERR_SHAPE, "x_channel_scales: %lld for %lld channels",
                           (long long)p->n_cs, (long long)d.c_in);
        } else {
            cpu_quantize_u8(x, (int64_t)n, p->x_scale, (float)p->x_zp, s->qx);
        }
        qx = s->qx;
    }
    const qs_state *st8 = ctx->state;
    return onednn_qconv_run(&s->cache, &d, st8->w, qx, st8->wt ? st8->wt : in[1].data,
                            has_res ? in[4].data : NULL, out[0].data, ctx->threads);
}

/* An f32 Y may take the f32 residual's buffer (its sum post-op accumulates
 * into Y: the copy is then skipped); a u8 Y never matches its byte size */
static int qs_inplace(const op_ctx *ctx, const op_tensor *in, int n_in) {
    (void)ctx;
    return op_has_input(in, n_in, 4) ? 4 : -1;
}

const op_impl ops_impl_onednn_qstatic = {.name = "onednn-int8",
                                         .backend = "onednn",
                                         .supports = qs_supports,
                                         .prepare = qs_prepare,
                                         .release = qs_release,
                                         .run = qs_run,
                                         .release_scratch = qs_scratch_release,
                                         .variant = qs_variant,
                                         .inplace = qs_inplace};

#else
typedef int qstatic_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
