/*
 * deconv_cpu.c — the "cpu" backend of ConvTranspose where the kernel equals
 * the stride (2-D, no pads, dilation 1, group 1, f32, constant W; see
 * ops_conv_transpose_unpool): every input pixel writes its own kh x kw
 * output block, a per-pixel matrix product laid out as a pixel shuffle
 * (kernels/cpu/deconv-impl.h). Segmentation heads upsample with it (PP-OCR
 * det: 24 -> 24 and 24 -> 1, k2 s2), where oneDNN 2.6's deconvolution runs
 * its slow generic kernels. Other geometries go to oneDNN (impls.c).
 */
#include <stdio.h>

#include "core/alloc.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/op_common.h"

typedef struct dc_state {
    const cpu_kernels *k;
    int64_t kh, kw;
} dc_state;

static bool dc_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    int64_t kh, kw;
    if (in[0].dtype != MOPT_DTYPE_F32 || in[1].dtype != MOPT_DTYPE_F32 || !in[1].data ||
        (op_has_input(in, n_in, 2) && (in[2].dtype != MOPT_DTYPE_F32 || !in[2].data)))
        return false;
    if (in[0].shape.rank >= 0 && in[0].shape.rank != 4) return false;
    if (!ir_shape_is_concrete(&in[1].shape) ||
        !ops_conv_transpose_unpool(ctx, &in[1].shape, &kh, &kw))
        return false;
    return kh * kw <= CPU_DECONV_MAX_TAPS;
}

static mopt_status dc_prepare(const char *isa, const op_ctx *ctx, const op_tensor *in,
                              void **state) {
    const cpu_kernels *k = cpu_kernels_for(isa);
    if (!k) return MOPT_ERR_UNSUPPORTED;
    dc_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    s->k = k;
    ops_conv_transpose_unpool(ctx, &in[1].shape, &s->kh, &s->kw);
    *state = s;
    return MOPT_OK;
}

static void dc_release(void *state) { mopt_free(state); }

typedef struct dc_job {
    const cpu_kernels *k;
    cpu_deconv_plan p;
    const float *x;
    float *y;
} dc_job;

/* Items are (image, input row) pairs; [lo, hi) split at image ends. */
static void dc_rows(void *arg, int64_t lo, int64_t hi) {
    const dc_job *j = arg;
    const int64_t H = j->p.H, xs = j->p.C * H * j->p.W,
                  ys = j->p.M * H * j->p.kh * j->p.W * j->p.kw;
    while (lo < hi) {
        const int64_t n = lo / H, h0 = lo % H;
        const int64_t h1 = hi - n * H < H ? hi - n * H : H;
        j->k->deconv_f32(&j->p, j->x + n * xs, j->y + n * ys, h0, h1);
        lo = n * H + h1;
    }
}

static mopt_status dc_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    const dc_state *s = ctx->state;
    const int64_t *xd = in[0].shape.dims, *wd = in[1].shape.dims;
    if (in[0].shape.rank != 4 || wd[0] != xd[1]) return MOPT_ERR_UNSUPPORTED; /* ref says why */
    if (op_has_input(in, n_in, 2) && op_numel(&in[2]) != wd[1]) return MOPT_ERR_UNSUPPORTED;
    const int64_t *yd = out[0].shape.dims;
    if (out[0].shape.rank != 4 || yd[0] != xd[0] || yd[1] != wd[1] || yd[2] != xd[2] * s->kh ||
        yd[3] != xd[3] * s->kw)
        return MOPT_ERR_UNSUPPORTED;
    if (op_numel(&out[0]) == 0) return MOPT_OK;
    dc_job j = {s->k,
                {xd[1], wd[1], xd[2], xd[3], s->kh, s->kw, in[1].data,
                 op_has_input(in, n_in, 2) ? in[2].data : NULL, CPU_DECONV_NONE},
                in[0].data,
                out[0].data};
    /* one input row: C * W reads, M * kh * kw * W products of C terms */
    const int64_t per = wd[1] * s->kh * s->kw * xd[3] * xd[1];
    cpu_parallel_for(ctx->threads, xd[0] * xd[2], per >= 65536 ? 1 : 65536 / per, dc_rows, &j);
    return MOPT_OK;
}

#define DC_TIER(TIER)                                                                              \
    static mopt_status dc_prepare_##TIER(const op_ctx *ctx, const op_tensor *in, int n_in,         \
                                         const op_tensor *out, int n_out, void **state) {          \
        return dc_prepare(#TIER, ctx, in, state);                                                  \
    }                                                                                              \
    const op_impl ops_impl_cpu_deconv_##TIER = {"cpu-" #TIER,      "cpu",      dc_supports,        \
                                                dc_prepare_##TIER, dc_release, dc_run};
DC_TIER(avx512)
DC_TIER(avx2)
DC_TIER(portable)
