/*
 * impls.h — the fast implementations (op_impl, see ops.h) of ops whose
 * reference lives in lib/ops/<family>.c, and the ordered lists the op_defs
 * point at (lib/ops/impls.c). Each impl sits in its own file
 * (matmul_onednn.c, matmul_openblas.c, conv_onednn.c), compiled empty when
 * its backend was not found at build time (MOPT_HAVE_ONEDNN,
 * MOPT_HAVE_OPENBLAS).
 */
#ifndef MOPT_OPS_IMPLS_H
#define MOPT_OPS_IMPLS_H

#include "kernels/ref/ref_conv.h"
#include "mopt_config.h"
#include "ops/ops.h"

/* NULL-terminated preference lists, for the op_defs. */
extern const op_impl *const ops_matmul_impls[];
extern const op_impl *const ops_gemm_impls[];
extern const op_impl *const ops_conv_impls[];
extern const op_impl *const ops_fused_matmul_impls[];
extern const op_impl *const ops_fused_conv_impls[];

extern const op_impl ops_impl_matmul_onednn;
extern const op_impl ops_impl_gemm_onednn;
extern const op_impl ops_impl_conv_onednn;
extern const op_impl ops_impl_matmul_onednn_bf16;
extern const op_impl ops_impl_gemm_onednn_bf16;
extern const op_impl ops_impl_conv_onednn_bf16;
extern const op_impl ops_impl_matmul_onednn_int8;
extern const op_impl ops_impl_gemm_onednn_int8;
extern const op_impl ops_impl_fused_matmul_onednn;
extern const op_impl ops_impl_fused_matmul_onednn_bf16;
extern const op_impl ops_impl_fused_matmul_onednn_int8;
extern const op_impl ops_impl_fused_conv_onednn;
extern const op_impl ops_impl_fused_conv_onednn_bf16;
/* opt_level >= 3: weights prepacked into oneDNN's layout at build */
extern const op_impl ops_impl_matmul_onednn_packed;
extern const op_impl ops_impl_gemm_onednn_packed;
extern const op_impl ops_impl_conv_onednn_packed;
extern const op_impl ops_impl_matmul_onednn_bf16_packed;
extern const op_impl ops_impl_gemm_onednn_bf16_packed;
extern const op_impl ops_impl_conv_onednn_bf16_packed;
extern const op_impl ops_impl_fused_matmul_onednn_packed;
extern const op_impl ops_impl_fused_matmul_onednn_bf16_packed;
extern const op_impl ops_impl_fused_conv_onednn_packed;
extern const op_impl ops_impl_fused_conv_onednn_bf16_packed;
extern const op_impl ops_impl_matmul_openblas;
extern const op_impl ops_impl_fused_matmul_openblas;
extern const op_impl ops_impl_gemm_openblas;

/* Window geometry of a Conv node (conv.c) for concrete X [N, C, spatial...]
 * and W [M, C/group, k...]: filled like the reference kernel wants it (the
 * S spatial axes are the last S of REF_WIN_MAX, leading ones are 1), with
 * the end pads in pad_end. Fails when no output position exists. Reads the
 * attributes from ctx->params, a conv_params (conv.h) or params starting
 * with one (FusedConv). */
mopt_status ops_conv_geometry(const op_ctx *ctx, const ir_shape *x, const ir_shape *w,
                              ref_conv_params *p, int64_t *pad_end);

/* Floating-point work of a matmul with A (transposed when trans_a) giving
 * y (matmul.c), and of a Conv/FusedConv node (conv.c). */
int64_t ops_matmul_flops(const op_tensor *a, bool trans_a, const op_tensor *y);
int64_t ops_conv_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                       int n_out);

/* Gemm's C (broadcastable to y [M, N]) copied into y, for the backends that
 * compute Y = alpha A B + beta Y (impls.c). */
void ops_gemm_fill_c(const op_tensor *c, const ir_shape *y, float *out);

#ifdef MOPT_HAVE_ONEDNN
#include "kernels/onednn/onednn.h"
/* The oneDNN convolution problem of a Conv or FusedConv node (conv_onednn.c)
 * for concrete X and W; the epilogue fields are left zero. */
mopt_status ops_conv_onednn_desc(const op_ctx *ctx, const ir_shape *x, const ir_shape *w,
                                 bool has_b, onednn_conv_desc *d);
#endif

#endif
