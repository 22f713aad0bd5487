/*
 * dyn_quant_cpu.c — the "cpu" backend's DynamicQuantizeLinear: the
 * reference's run (quant.c) with its min/max and quantization passes on
 * AVX-512 (kernels/cpu/dynquant.h), bit-identical to the scalar loops.
 * One impl, "cpu-avx512"; prepare refuses machines without AVX-512 (they
 * run the reference).
 */
#include "core/cpu.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/dynquant.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/op_common.h"

static bool dq_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)ctx, (void)out, (void)n_out;
    return n_in >= 1 && in[0].dtype == MOPT_DTYPE_F32;
}

static mopt_status dq_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out, void **state) {
    (void)ctx, (void)in, (void)n_in, (void)out, (void)n_out;
    *state = NULL;
#if defined(__x86_64__)
    if (cpu_kernels_for("avx512")) return MOPT_OK;
#endif
    return MOPT_ERR_UNSUPPORTED;
}

static mopt_status dq_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
#if defined(__x86_64__)
    return ops_dyn_quant_run(ctx, in, n_in, out, n_out, cpu_dyn_minmax_f32_avx512,
                             cpu_dyn_quantize_u8_avx512);
#else
    (void)ctx, (void)in, (void)n_in, (void)out, (void)n_out;
    return MOPT_ERR_UNSUPPORTED; /* prepare never takes it */
#endif
}

const op_impl ops_impl_cpu_dyn_quant_avx512 =
    OPS_CPU_STATE_IMPL("cpu-avx512", dq_supports, dq_prepare, NULL, dq_run, NULL);
