/*
 * conv_quant_cpu.c — the "cpu" backend's ConvInteger and QLinearConv: the
 * integer convolution as im2col + an int8 GEMM (kernels/cpu/qconv.h),
 * bit-identical to the reference (same int32 sums modulo 2^32; the zero
 * points, u8 weights and s8 inputs are folded in exactly, see qconv.h), on
 * any group, pads, strides, dilations, 1-3 spatial axes and per-channel
 * weight zero points; QLinearConv's requantization is the reference's.
 * Two impls: "cpu-vnni" (AVX512-VNNI GEMM; prepare refuses machines
 * without it) and "cpu-portable" (the same packing, a plain-C GEMM), so
 * that no machine runs the reference's direct loops.
 *
 * Why not oneDNN: its int8 convolution converts the s32 accumulator to
 * f32 before writing (scales, zero points, post-ops), which is exact only
 * below 2^24, and it needs s8 weights without a zero point; our GEMM is
 * exact for every input.
 */
#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/qconv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/op_common.h"

static bool int8_dtype(mopt_dtype t) { return t == MOPT_DTYPE_I8 || t == MOPT_DTYPE_U8; }

static bool qconv_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    int iw = n_in >= 8 ? 3 : 1; /* QLinearConv's W is input 3 */
    return int8_dtype(in[0].dtype) && int8_dtype(in[iw].dtype);
}

static mopt_status qconv_s32(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                             int32_t *acc, cpu_qgemm_fn gemm) {
    size_t bytes = cpu_qconv_work_bytes(g, ctx->threads);
    void *work = mopt_aligned_alloc(bytes);
    if (!work) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the integer convolution");
    cpu_qconv_s32(g, a, gemm, ctx->threads, work, acc);
    mopt_aligned_free(work);
    return MOPT_OK;
}

static mopt_status portable_s32(const op_ctx *ctx, const ref_conv_params *g,
                                const ref_qconv_args *a, int32_t *acc) {
    return qconv_s32(ctx, g, a, acc, cpu_qgemm_u8s8_portable);
}

static mopt_status portable_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    return ops_conv_quant_run(ctx, in, n_in, out, portable_s32);
}

#if defined(__x86_64__)
static mopt_status vnni_s32(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                            int32_t *acc) {
    return qconv_s32(ctx, g, a, acc, cpu_qgemm_u8s8_vnni);
}
#endif

static mopt_status vnni_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
#if defined(__x86_64__)
    return ops_conv_quant_run(ctx, in, n_in, out, vnni_s32);
#else
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

static mopt_status vnni_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                const op_tensor *out, int n_out, void **state) {
#if defined(__x86_64__)
    const cpu_features *f = cpu_get();
    *state = NULL;
    if (cpu_kernels_for("avx512") && f->avx512_vnni) return MOPT_OK;
#endif
    return MOPT_ERR_UNSUPPORTED;
}

const op_impl ops_impl_cpu_qconv_vnni = {"cpu-vnni", "cpu", qconv_supports, vnni_prepare, NULL,
                                         vnni_run,   NULL};
const op_impl ops_impl_cpu_qconv_portable = {"cpu-portable", "cpu", qconv_supports, NULL, NULL,
                                             portable_run,   NULL};
