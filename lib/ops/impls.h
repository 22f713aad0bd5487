/*
 * impls.h — the backend implementations (op_impl, see ops.h) of the ops, and
 * the one ordered list per op that the op_defs point at, all defined in
 * lib/ops/impls.c. Each impl sits in its backend's folder:
 *   lib/ops/cpu/      the project's own kernels (kernels/cpu), one impl per
 *                     ISA tier ("cpu-avx512", "cpu-avx2", "cpu-portable");
 *                     prepare refuses a tier the CPU lacks
 *   lib/ops/onednn/   one impl per op; prepare picks precision and weight
 *                     layout, `variant` names the choice ("onednn-bf16-packed")
 *   lib/ops/openblas/ stateless sgemm impls
 * A backend missing at build time (MOPT_HAVE_ONEDNN, MOPT_HAVE_OPENBLAS)
 * compiles its files empty and is left out of the lists. A run that cannot
 * serve a call returns MOPT_ERR_UNSUPPORTED; the executor then runs the
 * stateless impls after it, then the op's reference run.
 */
#ifndef MOPT_OPS_IMPLS_H
#define MOPT_OPS_IMPLS_H

#include "kernels/ref/ref_conv.h"
#include "kernels/ref/ref_conv_quant.h"
#include "kernels/ref/ref_pool.h"
#include "mopt_config.h"
#include "ops/ops.h"

/* ---- the lists (NULL-terminated, preference order) ---------------------- */

extern const op_impl *const ops_matmul_impls[];
extern const op_impl *const ops_gemm_impls[];
extern const op_impl *const ops_conv_impls[];
extern const op_impl *const ops_conv_transpose_impls[];
extern const op_impl *const ops_maxpool_impls[];
extern const op_impl *const ops_avgpool_impls[];
extern const op_impl *const ops_fused_matmul_impls[];
extern const op_impl *const ops_cache_matmul_impls[]; /* mopt.CacheMatMul (kvcache.c) */
extern const op_impl *const ops_fused_conv_impls[];
extern const op_impl *const ops_fused_conv_dw_impls[];
extern const op_impl *const ops_attention_impls[];
extern const op_impl *const ops_decode_attn_impls[];   /* mopt.DecodeAttention (kvcache.c) */
extern const op_impl *const ops_cpu_binary_impls[];    /* Add Sub Mul Div Max Min (2 inputs) */
extern const op_impl *const ops_cpu_unary_impls[];     /* Relu ... Reciprocal, Gelu, Clip */
extern const op_impl *const ops_cpu_softmax_impls[];   /* Softmax LogSoftmax */
extern const op_impl *const ops_cpu_layernorm_impls[]; /* LayerNormalization */
extern const op_impl *const ops_cpu_reduce_impls[];    /* ReduceSum Mean Max Min */
extern const op_impl *const ops_cpu_transpose_impls[]; /* Transpose */
extern const op_impl *const ops_cpu_gavgpool_impls[];  /* GlobalAveragePool */
extern const op_impl *const ops_cpu_resize_impls[];    /* Resize Upsample (4-D, last two axes) */
/* the layout pass's mopt.ChannelsLast* ops (cpu/layout_cpu.c) */
extern const op_impl *const ops_cpu_batchnorm_impls[];  /* BatchNormalization (inference) */
extern const op_impl *const ops_cpu_slice_impls[];      /* Slice (4-byte elements) */
extern const op_impl *const ops_cpu_pad_impls[];        /* Pad (constant mode) */
extern const op_impl *const ops_cpu_clconcat_impls[];   /* ChannelsLastConcat */
extern const op_impl *const ops_cpu_clsplit_impls[];    /* ChannelsLastSplit */
extern const op_impl *const ops_cpu_clgap_impls[];      /* ChannelsLastGlobalAveragePool */
extern const op_impl *const ops_cpu_clscale_impls[];    /* ChannelsLastScale */
extern const op_impl *const ops_cpu_claffine_impls[];   /* ChannelsLastAffine */
extern const op_impl *const ops_dyn_quant_impls[];      /* DynamicQuantizeLinear */
extern const op_impl *const ops_conv_quant_impls[];     /* ConvInteger QLinearConv */
extern const op_impl *const ops_matmul_int_impls[];     /* MatMulInteger */
extern const op_impl *const ops_qlinear_matmul_impls[]; /* QLinearMatMul */
extern const op_impl *const ops_qstatic_impls[];        /* mopt.StaticQMatMul StaticQConv */

/* ---- the impls ----------------------------------------------------------- */

/* cpu: the integer convolution (lib/ops/cpu/conv_quant_cpu.c) */
extern const op_impl ops_impl_cpu_dyn_quant_avx512; /* cpu/dyn_quant_cpu.c */
extern const op_impl ops_impl_cpu_qconv_vnni;
extern const op_impl ops_impl_cpu_qconv_portable;
extern const op_impl ops_impl_cpu_matmul_int_vnni;
extern const op_impl ops_impl_cpu_matmul_int_portable;
extern const op_impl ops_impl_cpu_qstatic_vnni;        /* cpu/qstatic_cpu.c */
extern const op_impl ops_impl_cpu_qlinear_matmul_vnni; /* cpu/qlinear_matmul_cpu.c */

/* oneDNN (lib/ops/onednn) */
extern const op_impl ops_impl_matmul_onednn;
extern const op_impl ops_impl_gemm_onednn;
extern const op_impl ops_impl_conv_onednn;
extern const op_impl ops_impl_conv_transpose_onednn;
/* cpu: the ConvTranspose whose kernel equals its stride (cpu/deconv_cpu.c) */
extern const op_impl ops_impl_cpu_deconv_avx512;
extern const op_impl ops_impl_cpu_deconv_avx2;
extern const op_impl ops_impl_cpu_deconv_portable;
extern const op_impl ops_impl_maxpool_onednn;
extern const op_impl ops_impl_avgpool_onednn;
extern const op_impl ops_impl_fused_matmul_onednn;
extern const op_impl ops_impl_fused_conv_onednn;
extern const op_impl ops_impl_fused_conv_dw_onednn;
extern const op_impl ops_impl_onednn_qstatic; /* StaticQConv, StaticQMatMul: qstatic_onednn.c */
/* OpenBLAS (lib/ops/openblas) */
extern const op_impl ops_impl_matmul_openblas;
extern const op_impl ops_impl_gemm_openblas;
extern const op_impl ops_impl_fused_matmul_openblas;
extern const op_impl ops_impl_cache_matmul_openblas;
/* MOPT_VERBOSE: the kernels OpenBLAS picked for the n_nodes it runs, as a
 * warning when they are SSE-era ones on an AVX2/AVX-512 CPU. */
void ops_openblas_log_core(int n_nodes);
/* cpu (lib/ops/cpu): ops_impl_cpu_<family>_<tier> */
#define OPS_CPU_DECLARE(FAM)                                                                       \
    extern const op_impl ops_impl_cpu_##FAM##_avx512;                                              \
    extern const op_impl ops_impl_cpu_##FAM##_avx2;                                                \
    extern const op_impl ops_impl_cpu_##FAM##_portable;
OPS_CPU_DECLARE(binary)
OPS_CPU_DECLARE(unary)
OPS_CPU_DECLARE(softmax)
OPS_CPU_DECLARE(layernorm)
OPS_CPU_DECLARE(reduce)
OPS_CPU_DECLARE(transpose)
OPS_CPU_DECLARE(attention)
OPS_CPU_DECLARE(decode_attn)
/* The kernel a mopt.DecodeAttention node planned as `kernel` (rt_node_plan's
 * name: "cpu-avx512", ..., "ref") runs over bf16 KV tiles (decode_attn_cpu.c). */
const char *ops_decode_attn_tiles_kernel(const char *kernel);
OPS_CPU_DECLARE(gavgpool)
OPS_CPU_DECLARE(resize)
OPS_CPU_DECLARE(pad)
OPS_CPU_DECLARE(batchnorm)
OPS_CPU_DECLARE(slice)
OPS_CPU_DECLARE(clconcat)
OPS_CPU_DECLARE(clsplit)
OPS_CPU_DECLARE(clgap)
OPS_CPU_DECLARE(clmaxpool) /* mopt.ChannelsLastMaxPool, 2-D (pool_cpu.c) */
OPS_CPU_DECLARE(clscale)
OPS_CPU_DECLARE(claffine)
OPS_CPU_DECLARE(gemv_matmul) /* M = 1 with a constant weight (gemv_cpu.c) */
OPS_CPU_DECLARE(gemv_gemm)
OPS_CPU_DECLARE(gemv_fused_matmul)
/* MatMul and mopt.FusedMatMul at precision=bf16 on AMX tiles, constant 2-D
 * B (amxgemm_cpu.c) */
extern const op_impl ops_impl_cpu_amx_matmul;
extern const op_impl ops_impl_cpu_amx_fused_matmul;
/* mopt.FusedConv 1x1 at precision=bf16 on the same GEMM (amxgemm_cpu.c) */
extern const op_impl ops_impl_cpu_amx_fused_conv;
/* mopt.FusedConv 1x1 as the own GEMM, AVX-512 only (pwconv_cpu.c) */
extern const op_impl ops_impl_cpu_pwconv_avx512;

/* ---- helpers the impls share with the families -------------------------- */

/* Window geometry of a Conv node (conv.c) for concrete X [N, C, spatial...]
 * and W [M, C/group, k...]: filled like the reference kernel wants it (the
 * S spatial axes are the last S of REF_WIN_MAX, leading ones are 1), with
 * the end pads in pad_end. Fails when no output position exists. Reads the
 * attributes from ctx->params, a conv_params (conv.h) or params starting
 * with one (FusedConv). */
mopt_status ops_conv_geometry(const op_ctx *ctx, const ir_shape *x, const ir_shape *w,
                              ref_conv_params *p, int64_t *pad_end);

/* Whether ctx's ConvTranspose (its W of shape w) is 2-D with its kernel
 * equal to its strides, no pads or output_padding, dilations 1, group 1 and
 * no output_shape: each input pixel then writes its own kh x kw output block
 * (conv_transpose.c; run by cpu/deconv_cpu.c). */
bool ops_conv_transpose_unpool(const op_ctx *ctx, const ir_shape *w, int64_t *kh, int64_t *kw);
/* Window geometry of a ConvTranspose node (conv_transpose.c) for concrete X
 * and W (in[0], in[1]): g's first g->nd axes are the spatial ones (begin pads
 * in g->pad), *c_out the output channels, *group the group attribute. */
mopt_status ops_conv_transpose_geometry(const op_ctx *ctx, const op_tensor *in, ref_window_nd *g,
                                        int64_t *c_out, int64_t *group);

/* Window geometry of a MaxPool/AveragePool node (pool.c) for concrete X and
 * Y, as the reference kernel takes it (the S spatial axes are the last S of
 * REF_WIN_MAX; pad_end as the output size needs it, ceil_mode included). */
mopt_status ops_pool_geometry(const op_ctx *ctx, const ir_shape *x, const ir_shape *y,
                              ref_pool_params *p);
/* Whether a MaxPool/AveragePool node is the channels-last variant
 * (mopt.ChannelsLast*Pool: X and Y stored [N, spatial..., C]). */
bool ops_pool_channels_last(const op_ctx *ctx);
/* ... and, of those, whether X and Y are blocked (nC[d]hw16c; attribute blocked=1) */
bool ops_pool_blocked(const op_ctx *ctx);
/* mopt.ChannelsLastGlobalAveragePool (layout.c): the images *n and channels
 * *c its X is read as (blocked: N * C/16 images of 16 channels) */
void ops_clgap_rows(const op_ctx *ctx, const ir_shape *x, int64_t *n, int64_t *c);

/* ConvInteger / QLinearConv (conv_quant.c) with the integer convolution
 * (y = conv(x - x_zp, w - w_zp) + bias in int32, as ref_conv_s32 computes
 * it) done by conv: the reference's run is this with ref_conv_s32, the
 * cpu impls' (cpu/conv_quant_cpu.c) with their kernel. */
typedef mopt_status (*ops_qconv_s32_fn)(const op_ctx *ctx, const ref_conv_params *g,
                                        const ref_qconv_args *a, int32_t *acc);
/* The work buffer (op_work_get) an ops_qconv_s32_fn uses; its callers use
 * the others. */
#define OPS_QCONV_WORK (OP_WORK_BUFS - 1)
mopt_status ops_conv_quant_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               ops_qconv_s32_fn conv);
/* The reference integer convolution (an ops_qconv_s32_fn): ref_conv_s32 with
 * its work buffer in OPS_QCONV_WORK. Shared by conv_quant.c's reference
 * run and the static INT8 conv's reference kernels (qstatic.c). */
mopt_status ops_qconv_ref_s32(const op_ctx *ctx, const ref_conv_params *g, const ref_qconv_args *a,
                              int32_t *acc);

/* DynamicQuantizeLinear (quant.c) with its two passes done by minmax
 * (min and max of 0 and x, NaN skipped) and quant (y = clamp(rint(x /
 * scale) + zp, 0, 255), NaN -> 0); NULL: the scalar loops (the reference). */
typedef void (*ops_dyn_minmax_fn)(const float *x, int64_t n, float *mn, float *mx);
typedef void (*ops_dyn_quant_fn)(const float *x, int64_t n, float scale, float zp, uint8_t *y);
mopt_status ops_dyn_quant_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out, ops_dyn_minmax_fn minmax, ops_dyn_quant_fn quant);

/* Floating-point work of a Conv/FusedConv node (conv.c). */
int64_t ops_conv_flops(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                       int n_out);

/* Whether convolutions can keep channels-last activations (a backend that
 * takes them is available: oneDNN); the layout pass runs only then. */
bool ops_conv_channels_last_ok(void);
/* Whether an f32 3x3 stride-1 one-group Conv with c_in -> c_out channels
 * runs on oneDNN's Winograd kernels at opt_level 3 (they take X and Y only
 * blocked, nChw16c: the layout pass keeps them so). */
bool ops_conv_wino_blocked(int64_t c_in, int64_t c_out);
/* Whether precision=bf16 runs convolutions on AMX here: bf16 compute
 * (cpu_get()->bf16_compute) with AMX tiles, and oneDNN's AMX kernels. Then
 * the layout pass keeps conv chains channels-last (never blocked: oneDNN
 * 2.6's AMX convolutions take channels-last bf16) and the conv impls read
 * and write bf16 activations (op_impl.bf16_io). */
bool ops_conv_bf16_amx(void);

#ifdef MOPT_HAVE_ONEDNN
#include "kernels/onednn/onednn.h"
/* The oneDNN convolution problem of a Conv or FusedConv node (conv_onednn.c)
 * for concrete X and W; the epilogue fields are left zero. */
mopt_status ops_conv_onednn_desc(const op_ctx *ctx, const ir_shape *x, const ir_shape *w,
                                 bool has_b, onednn_conv_desc *d);
/* Conv's oneDNN support test and prepare (W, bias), shared with FusedConv (and
 * the support test with ConvTranspose). */
bool ops_conv_onednn_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out);
mopt_status ops_conv_onednn_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    const op_tensor *out, int n_out, void **state);
#endif

#endif
