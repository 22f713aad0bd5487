/*
 * impls.c — every op's backend implementations, in preference order, in one
 * place (see impls.h): oneDNN first (fastest here; its prepare picks the
 * precision and weight layout), then OpenBLAS; the own cpu kernels by ISA
 * tier, best first (a tier the CPU lacks refuses in prepare). MatMul, Gemm
 * and FusedMatMul try the own M = 1 kernel (cpu-gemv) first: it streams the
 * weight at memory speed where the GEMM libraries' per-call setup dominates. The op_def's
 * reference run is always the last resort. Backends missing at build time
 * are left out.
 */
#include "ops/impls.h"

#include "core/cpu.h"
#include "mopt_config.h"

/* &impl followed by a comma when its backend was built, else nothing */
#ifdef MOPT_HAVE_ONEDNN
#define ONEDNN(impl) &impl,
#else
#define ONEDNN(impl)
#endif
#ifdef MOPT_HAVE_OPENBLAS
#define OPENBLAS(impl) &impl,
#else
#define OPENBLAS(impl)
#endif

#define CPU_TIERS(FAM)                                                                             \
    &ops_impl_cpu_##FAM##_avx512, &ops_impl_cpu_##FAM##_avx2, &ops_impl_cpu_##FAM##_portable

/* MatMul, Gemm, FusedMatMul: the M = 1 kernel's SIMD tiers (FP32), oneDNN,
 * OpenBLAS, then the portable M = 1 kernel (clang-format reads ONEDNN(x) &y
 * as an and); MatMul and FusedMatMul at precision=bf16 the own AMX GEMM
 * first (a constant 2-D B with K, N >= 512 on an AMX CPU: 0.65-0.9x the
 * CPU time of oneDNN 2.6's brg:avx512_core_amx_bf16 per BERT-like h768
 * layer, amxgemm_cpu.c) */
/* clang-format off */
#define GEMV_FIRST(FAM)                                                                            \
    &ops_impl_cpu_gemv_##FAM##_avx512, &ops_impl_cpu_gemv_##FAM##_avx2,                            \
    ONEDNN(ops_impl_##FAM##_onednn) OPENBLAS(ops_impl_##FAM##_openblas)                            \
    &ops_impl_cpu_gemv_##FAM##_portable
/* clang-format on */

const op_impl *const ops_matmul_impls[] = {&ops_impl_cpu_amx_matmul, GEMV_FIRST(matmul), NULL};
const op_impl *const ops_gemm_impls[] = {GEMV_FIRST(gemm), NULL};
const op_impl *const ops_fused_matmul_impls[] = {&ops_impl_cpu_amx_fused_matmul,
                                                 GEMV_FIRST(fused_matmul), NULL};
const op_impl *const ops_conv_impls[] = {ONEDNN(ops_impl_conv_onednn) NULL};
/* ConvTranspose: the own SIMD kernel where the kernel equals the stride (oneDNN
 * 2.6's deconvolution ran PP-OCRv4 det's 24 -> 24 k2 s2 at ~3 GFLOP/s), else
 * oneDNN, then the portable one */
/* clang-format off */
const op_impl *const ops_conv_transpose_impls[] = {
    &ops_impl_cpu_deconv_avx512, &ops_impl_cpu_deconv_avx2,
    ONEDNN(ops_impl_conv_transpose_onednn) &ops_impl_cpu_deconv_portable, NULL};
/* clang-format on */
/* MaxPool, mopt.ChannelsLastMaxPool: the cpu tiers take only the latter (2-D);
 * the portable one after oneDNN */
/* clang-format off */
const op_impl *const ops_maxpool_impls[] = {
    &ops_impl_cpu_clmaxpool_avx512, &ops_impl_cpu_clmaxpool_avx2,
    ONEDNN(ops_impl_maxpool_onednn) &ops_impl_cpu_clmaxpool_portable, NULL};
/* clang-format on */
const op_impl *const ops_avgpool_impls[] = {ONEDNN(ops_impl_avgpool_onednn) NULL};
/* mopt.CacheMatMul: OpenBLAS (a GEMV per head for one query row), else
 * the reference batched GEMM */
const op_impl *const ops_cache_matmul_impls[] = {OPENBLAS(ops_impl_cache_matmul_openblas) NULL};
/* mopt.FusedConv: at precision=bf16 the own AMX GEMM (1x1 convs on
 * channels-last data, amxgemm_cpu.c), the own pointwise GEMM where it beats
 * oneDNN (fp32; its prepare takes only those 1x1 convs, pwconv_cpu.c), then
 * oneDNN */
/* clang-format off */
const op_impl *const ops_fused_conv_impls[] = {&ops_impl_cpu_amx_fused_conv,
                                               &ops_impl_cpu_pwconv_avx512,
                                               ONEDNN(ops_impl_fused_conv_onednn) NULL};
const op_impl *const ops_fused_conv_dw_impls[] = {ONEDNN(ops_impl_fused_conv_dw_onednn) NULL};
/* clang-format on */
const op_impl *const ops_attention_impls[] = {CPU_TIERS(attention), NULL};
const op_impl *const ops_decode_attn_impls[] = {CPU_TIERS(decode_attn), NULL};
const op_impl *const ops_cpu_binary_impls[] = {CPU_TIERS(binary), NULL};
const op_impl *const ops_cpu_unary_impls[] = {CPU_TIERS(unary), NULL};
const op_impl *const ops_cpu_softmax_impls[] = {CPU_TIERS(softmax), NULL};
const op_impl *const ops_cpu_layernorm_impls[] = {CPU_TIERS(layernorm), NULL};
const op_impl *const ops_cpu_reduce_impls[] = {CPU_TIERS(reduce), NULL};
const op_impl *const ops_cpu_transpose_impls[] = {CPU_TIERS(transpose), NULL};
const op_impl *const ops_cpu_gavgpool_impls[] = {CPU_TIERS(gavgpool), NULL};
const op_impl *const ops_cpu_resize_impls[] = {CPU_TIERS(resize), NULL};
const op_impl *const ops_cpu_batchnorm_impls[] = {CPU_TIERS(batchnorm), NULL};
const op_impl *const ops_cpu_slice_impls[] = {CPU_TIERS(slice), NULL};
const op_impl *const ops_cpu_pad_impls[] = {CPU_TIERS(pad), NULL};
const op_impl *const ops_cpu_clconcat_impls[] = {CPU_TIERS(clconcat), NULL};
const op_impl *const ops_cpu_clsplit_impls[] = {CPU_TIERS(clsplit), NULL};
const op_impl *const ops_cpu_clgap_impls[] = {CPU_TIERS(clgap), NULL};
const op_impl *const ops_cpu_clscale_impls[] = {CPU_TIERS(clscale), NULL};
const op_impl *const ops_cpu_claffine_impls[] = {CPU_TIERS(claffine), NULL};
const op_impl *const ops_dyn_quant_impls[] = {&ops_impl_cpu_dyn_quant_avx512, NULL};
const op_impl *const ops_conv_quant_impls[] = {&ops_impl_cpu_qconv_vnni,
                                               &ops_impl_cpu_qconv_portable, NULL};
const op_impl *const ops_matmul_int_impls[] = {&ops_impl_cpu_matmul_int_vnni,
                                               &ops_impl_cpu_matmul_int_portable, NULL};
/* clang-format off */
const op_impl *const ops_qstatic_impls[] = {ONEDNN(ops_impl_onednn_qstatic)
                                            &ops_impl_cpu_qstatic_vnni, NULL};
/* clang-format on */
const op_impl *const ops_qlinear_matmul_impls[] = {&ops_impl_cpu_qlinear_matmul_vnni, NULL};

bool ops_conv_wino_blocked(int64_t c_in, int64_t c_out) {
#ifdef MOPT_HAVE_ONEDNN
    return onednn_conv_wino_likely(c_in, c_out);
#else
    (void)c_in;
    (void)c_out;
    return false;
#endif
}

bool ops_conv_bf16_amx(void) {
#ifdef MOPT_HAVE_ONEDNN
    const cpu_features *c = cpu_get();
    return c->bf16_compute && c->amx_bf16 && onednn_isa_amx();
#else
    return false;
#endif
}

bool ops_conv_channels_last_ok(void) {
#ifdef MOPT_HAVE_ONEDNN
    return onednn_available();
#else
    return false;
#endif
}
