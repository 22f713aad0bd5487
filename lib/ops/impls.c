/*
 * impls.c — the preference order of the fast implementations of each op
 * (see impls.h): oneDNN first (fastest here; its "-packed" impls, which
 * prepack weights, only at opt_level >= 3), then OpenBLAS; the op_def's
 * reference run is always the last resort. Backends missing at build time
 * are left out.
 */
#include "ops/impls.h"

#include "mopt_config.h"

const op_impl *const ops_matmul_impls[] = {
#ifdef MOPT_HAVE_ONEDNN
    &ops_impl_matmul_onednn_int8,        /* precision=int8 only */
    &ops_impl_matmul_onednn_bf16_packed, /* precision=bf16, opt_level >= 3 */
    &ops_impl_matmul_onednn_bf16,        /* precision=bf16 only */
    &ops_impl_matmul_onednn_packed,      /* opt_level >= 3 */
    &ops_impl_matmul_onednn,
#endif
#ifdef MOPT_HAVE_OPENBLAS
    &ops_impl_matmul_openblas,
#endif
    NULL,
};

const op_impl *const ops_gemm_impls[] = {
#ifdef MOPT_HAVE_ONEDNN
    &ops_impl_gemm_onednn_int8,        /* precision=int8 only */
    &ops_impl_gemm_onednn_bf16_packed, /* precision=bf16, opt_level >= 3 */
    &ops_impl_gemm_onednn_bf16,        /* precision=bf16 only */
    &ops_impl_gemm_onednn_packed,      /* opt_level >= 3 */
    &ops_impl_gemm_onednn,
#endif
#ifdef MOPT_HAVE_OPENBLAS
    &ops_impl_gemm_openblas,
#endif
    NULL,
};

const op_impl *const ops_conv_impls[] = {
#ifdef MOPT_HAVE_ONEDNN
    &ops_impl_conv_onednn_bf16_packed, /* precision=bf16, opt_level >= 3 */
    &ops_impl_conv_onednn_bf16,        /* precision=bf16 only */
    &ops_impl_conv_onednn_packed,      /* opt_level >= 3 */
    &ops_impl_conv_onednn,
#endif
    NULL,
};

const op_impl *const ops_fused_matmul_impls[] = {
#ifdef MOPT_HAVE_ONEDNN
    &ops_impl_fused_matmul_onednn_int8,        /* precision=int8 only */
    &ops_impl_fused_matmul_onednn_bf16_packed, /* precision=bf16, opt_level >= 3 */
    &ops_impl_fused_matmul_onednn_bf16,        /* precision=bf16 only */
    &ops_impl_fused_matmul_onednn_packed,      /* opt_level >= 3 */
    &ops_impl_fused_matmul_onednn,
#endif
#ifdef MOPT_HAVE_OPENBLAS
    &ops_impl_fused_matmul_openblas,
#endif
    NULL,
};

const op_impl *const ops_fused_conv_impls[] = {
#ifdef MOPT_HAVE_ONEDNN
    &ops_impl_fused_conv_onednn_bf16_packed, /* precision=bf16, opt_level >= 3 */
    &ops_impl_fused_conv_onednn_bf16,        /* precision=bf16 only */
    &ops_impl_fused_conv_onednn_packed,      /* opt_level >= 3 */
    &ops_impl_fused_conv_onednn,
#endif
    NULL,
};

void ops_gemm_fill_c(const op_tensor *c, const ir_shape *y, float *out) {
    int64_t cs[IR_MAX_RANK];
    op_broadcast_strides(&c->shape, y, cs);
    const float *src = c->data;
    int64_t M = y->dims[0], N = y->dims[1];
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++)
            out[i * N + j] = src[i * cs[0] + j * cs[1]];
}
