/*
 * dq_lstm_cpu.c — the "cpu" backend's com.microsoft DynamicQuantizeLSTM:
 * cpu_dq_lstm_f32 (kernels/cpu/qlstm.h), the reference's steps with its
 * integer projections on the u8 x s8 rows GEMM, bit-identical to
 * ref_dq_lstm_f32. W and R are packed once at load (opt_level 3, constant
 * W and R), else at each run. Impls "cpu-vnni" (vpdpbusd; prepare refuses
 * machines without AVX512-VNNI) and "cpu-portable" (plain C).
 */
#include "core/alloc.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/qlstm.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/op_common.h"
#include "ops/recurrent.h"

static void dq_release(void *state) { mopt_aligned_free(state); }

static bool dq_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)ctx, (void)out, (void)n_out;
    return n_in > RNN_IN_R && in[RNN_IN_W].shape.rank == 3 && in[RNN_IN_R].shape.rank == 3;
}

static mopt_status dq_prepare(const op_ctx *ctx, const op_tensor *in, int n_in, void **state) {
    *state = NULL;
    const op_tensor *W = &in[RNN_IN_W], *R = &in[RNN_IN_R];
    if (ctx->opt_level < 3 || n_in <= RNN_IN_R || !W->data || !R->data ||
        !ir_shape_is_concrete(&W->shape) || !ir_shape_is_concrete(&R->shape))
        return MOPT_OK; /* packed at each run */
    const int64_t dirs = W->shape.dims[0], I = W->shape.dims[1], H = R->shape.dims[1];
    if (op_numel(W) == 0 || op_numel(R) == 0 || R->shape.dims[2] != 4 * H) return MOPT_OK;
    void *pack = mopt_aligned_alloc(cpu_dq_lstm_pack_bytes(dirs, I, H));
    if (!pack) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed weights");
    ref_dq_weights w = {.w = W->data, .is_signed = W->dtype == MOPT_DTYPE_I8};
    ref_dq_weights r = {.w = R->data, .is_signed = R->dtype == MOPT_DTYPE_I8};
    cpu_dq_lstm_pack(dirs, I, H, &w, &r, pack);
    *state = pack;
    return MOPT_OK;
}

static mopt_status prepare_portable(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    const op_tensor *out, int n_out, void **state) {
    (void)out, (void)n_out;
    return dq_prepare(ctx, in, n_in, state);
}

static mopt_status prepare_vnni(const op_ctx *ctx, const op_tensor *in, int n_in,
                                const op_tensor *out, int n_out, void **state) {
    (void)out, (void)n_out;
    *state = NULL;
    return ops_cpu_has_vnni() ? dq_prepare(ctx, in, n_in, state) : MOPT_ERR_UNSUPPORTED;
}

static mopt_status run_portable(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    return ops_dq_lstm_run_with(ctx, in, n_in, out, n_out, ctx->state, cpu_qrows_u8s8_portable,
                                NULL);
}

static mopt_status run_vnni(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
#if defined(__x86_64__)
    return ops_dq_lstm_run_with(ctx, in, n_in, out, n_out, ctx->state, cpu_qrows_u8s8_vnni,
                                cpu_dq_lstm_gates_avx512);
#else
    (void)ctx, (void)in, (void)n_in, (void)out, (void)n_out;
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

static const op_impl k_vnni = OPS_CPU_STATE_IMPL("cpu-vnni", dq_supports, prepare_vnni, dq_release,
                                                 run_vnni, ops_cpu_variant_vnni);
static const op_impl k_portable =
    OPS_CPU_STATE_IMPL("cpu-portable", dq_supports, prepare_portable, dq_release, run_portable,
                       ops_cpu_variant_portable);

const op_impl *const ops_cpu_dq_lstm_impls[] = {&k_vnni, &k_portable, NULL};
