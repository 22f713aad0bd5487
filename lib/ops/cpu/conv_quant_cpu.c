/*
 * conv_quant_cpu.c — the "cpu" backend's ConvInteger, QLinearConv and
 * MatMulInteger (as a 1x1 convolution, see below): the
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
                             const void *xpack, int32_t *acc, cpu_qgemm_fn gemm) {
    size_t bytes = cpu_qconv_work_bytes(g, ctx->threads);
    void *work = op_work_get(ctx, OPS_QCONV_WORK, bytes);
    if (!work) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the integer convolution");
    cpu_qconv_s32_packed(g, a, xpack, gemm, ctx->threads, work, acc);
    op_work_put(ctx, work);
    return MOPT_OK;
}

static mopt_status portable_s32(const op_ctx *ctx, const ref_conv_params *g,
                                const ref_qconv_args *a, int32_t *acc) {
    return qconv_s32(ctx, g, a, NULL, acc, cpu_qgemm_u8s8_portable);
}

static mopt_status portable_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    return ops_conv_quant_run(ctx, in, n_in, out, portable_s32);
}

#if defined(__x86_64__)
static mopt_status vnni_s32(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                            int32_t *acc) {
    return qconv_s32(ctx, g, a, NULL, acc, cpu_qgemm_u8s8_vnni);
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
    *state = NULL;
    return ops_cpu_has_vnni() ? MOPT_OK : MOPT_ERR_UNSUPPORTED;
}

/* ---- MatMulInteger: a 1x1 convolution ------------------------------------------
 * Y[i][j] = sum_k (A[i][k] - za) (B[k][j] - zb) is the 1x1 convolution of x = B
 * ([K channels, N pixels]) by w = A ([M output channels, K]); A's zero point
 * (scalar or one per row) is w's (scalar or per channel), B's must be a scalar:
 * one per column of B is declined (the reference runs it, MOPT_VERBOSE says so).
 * Sums wrap like the reference's int64 sum cast to int32. */

static bool mmi_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    return int8_dtype(in[0].dtype) && int8_dtype(in[1].dtype);
}

/* A constant B (with a constant or absent scalar zero point) packed once
 * at load (opt_level 3), as every run would pack it. */
typedef struct mmi_state {
    void *xpack;
    int64_t k, n;
} mmi_state;

static void mmi_release(void *state) {
    mmi_state *s = state;
    if (s) mopt_aligned_free(s->xpack);
    mopt_free(s);
}

static void mmi_geometry(int64_t k, int64_t m, int64_t n, ref_conv_params *g) {
    *g = (ref_conv_params){.batch = 1, .c_in = k, .c_out = m, .group = 1};
    for (int d = 0; d < REF_WIN_MAX; d++) {
        g->in[d] = g->out[d] = d == REF_WIN_MAX - 1 ? n : 1;
        g->k[d] = g->stride[d] = g->dilation[d] = 1;
    }
}

static int32_t zp_value(const op_tensor *z, int64_t i) {
    if (!z) return 0;
    return z->dtype == MOPT_DTYPE_I8 ? ((const int8_t *)z->data)[i] : ((const uint8_t *)z->data)[i];
}

static mopt_status mmi_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out, void **state, bool vnni) {
    *state = NULL;
    if (vnni) {
        void *unused;
        if (vnni_prepare(ctx, in, n_in, out, n_out, &unused)) return MOPT_ERR_UNSUPPORTED;
    }
    const op_tensor *B = &in[1];
    const op_tensor *ZB = op_has_input(in, n_in, 3) ? &in[3] : NULL;
    if (ctx->opt_level < 3 || !B->data || B->shape.rank != 2 || !ir_shape_is_concrete(&B->shape) ||
        (ZB && (!ZB->data || !ir_shape_is_concrete(&ZB->shape) || op_numel(ZB) != 1)) ||
        op_numel(B) == 0)
        return MOPT_OK; /* packed at each run */
    mmi_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    s->k = B->shape.dims[0], s->n = B->shape.dims[1];
    ref_conv_params g;
    mmi_geometry(s->k, 1, s->n, &g);
    s->xpack = mopt_aligned_alloc(cpu_qconv_xpack_bytes(&g));
    if (!s->xpack) {
        mopt_free(s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed B");
    }
    ref_qconv_args a = {.x = B->data, .x_s8 = B->dtype == MOPT_DTYPE_I8, .x_zp = zp_value(ZB, 0)};
    cpu_qconv_pack_x(&g, &a, s->xpack);
    *state = s;
    return MOPT_OK;
}

static mopt_status mmi_prepare_vnni(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    const op_tensor *out, int n_out, void **state) {
    return mmi_prepare(ctx, in, n_in, out, n_out, state, true);
}

static mopt_status mmi_prepare_portable(const op_ctx *ctx, const op_tensor *in, int n_in,
                                        const op_tensor *out, int n_out, void **state) {
    return mmi_prepare(ctx, in, n_in, out, n_out, state, false);
}

static mopt_status mmi_run_with(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                cpu_qgemm_fn gemm) {
    const mmi_state *state = ctx->state;
    const op_tensor *A = &in[0], *B = &in[1];
    const op_tensor *ZA = op_has_input(in, n_in, 2) ? &in[2] : NULL;
    const op_tensor *ZB = op_has_input(in, n_in, 3) ? &in[3] : NULL;
    const ir_shape *ys = &out[0].shape;
    if (op_numel(&out[0]) == 0 || A->shape.rank < 2 || B->shape.rank < 2)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: empty or 1-D operands");
    int64_t m = ys->dims[ys->rank - 2], n = ys->dims[ys->rank - 1];
    int64_t k = A->shape.dims[A->shape.rank - 1];
    int64_t batch = op_numel(&out[0]) / (m * n);
    int64_t a_batch = m * k > 0 ? op_numel(A) / (m * k) : 0;
    int64_t b_batch = k * n > 0 ? op_numel(B) / (k * n) : 0;
    if (k <= 0 || (a_batch != batch && a_batch != 1) || (b_batch != batch && b_batch != 1))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: K = 0 or a batch broadcast");
    if (ZB && op_numel(ZB) != 1)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED,
                       "cpu: B's zero point has %lld values (one per column: reference only)",
                       (long long)op_numel(ZB));
    if (ZA && op_numel(ZA) != 1 && op_numel(ZA) != m)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cpu: A's zero point count");
    int32_t *za = op_work_get(ctx, 0, (size_t)m * sizeof(int32_t));
    if (!za) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for MatMulInteger");
    int64_t nza = ZA ? op_numel(ZA) : 1;
    for (int64_t i = 0; i < nza; i++)
        za[i] = zp_value(ZA, i);
    int32_t zb = zp_value(ZB, 0);
    ref_conv_params g;
    mmi_geometry(k, m, n, &g);
    /* the packed B, when prepare made it (B constant: these are its dims) */
    const void *xpack =
        state && state->k == k && state->n == n && b_batch == 1 ? state->xpack : NULL;
    mopt_status st = MOPT_OK;
    for (int64_t p = 0; p < batch && !st; p++) {
        ref_qconv_args a = {.x = (const uint8_t *)B->data + (b_batch > 1 ? p * k * n : 0),
                            .x_s8 = B->dtype == MOPT_DTYPE_I8,
                            .x_zp = zb,
                            .w = (const uint8_t *)A->data + (a_batch > 1 ? p * m * k : 0),
                            .w_s8 = A->dtype == MOPT_DTYPE_I8,
                            .w_zp = za,
                            .w_zp_per_channel = nza > 1};
        st = qconv_s32(ctx, &g, &a, xpack, (int32_t *)out[0].data + p * m * n, gemm);
    }
    op_work_put(ctx, za);
    return st;
}

static mopt_status mmi_portable_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    return mmi_run_with(ctx, in, n_in, out, cpu_qgemm_u8s8_portable);
}

static mopt_status mmi_vnni_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
#if defined(__x86_64__)
    return mmi_run_with(ctx, in, n_in, out, cpu_qgemm_u8s8_vnni);
#else
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

const op_impl ops_impl_cpu_matmul_int_vnni = OPS_CPU_STATE_IMPL(
    "cpu-vnni", mmi_supports, mmi_prepare_vnni, mmi_release, mmi_vnni_run, ops_cpu_variant_vnni);
const op_impl ops_impl_cpu_matmul_int_portable =
    OPS_CPU_STATE_IMPL("cpu-portable", mmi_supports, mmi_prepare_portable, mmi_release,
                       mmi_portable_run, ops_cpu_variant_portable);

const op_impl ops_impl_cpu_qconv_vnni =
    OPS_CPU_STATE_IMPL("cpu-vnni", qconv_supports, vnni_prepare, NULL, vnni_run, NULL);
const op_impl ops_impl_cpu_qconv_portable =
    OPS_CPU_STATE_IMPL("cpu-portable", qconv_supports, NULL, NULL, portable_run, NULL);
