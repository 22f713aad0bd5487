/*
 * onednn.h — a thin C layer over the oneDNN C API (dnnl.h) for the ops that
 * oneDNN runs for us: matmul (batch dims with broadcasting, strided operands
 * for transposes), convolution (1-3 spatial axes, groups/depthwise,
 * strides, dilations, pads) and transposed convolution (deconvolution), with
 * fused epilogues (bias, residual add, one activation).
 *
 * Weights are either reordered once into the layout oneDNN prefers
 * (onednn_weights, built at model load: "weight prepacking", opt_level 3) or,
 * with plain_w set in a descriptor, kept in their stored layout (row-major B,
 * [O, I, k...] W): f32 weights are then read straight from the model's
 * buffer, bf16 ones are converted once, still in that layout (opt_level <= 2).
 * Primitives live in a per-session cache keyed by the run-time shapes
 * (onednn_cache). Callers see plain row-major f32 tensors only; layouts,
 * reorders and scratchpads stay inside.
 *
 * The library references oneDNN weakly: in a fully static program (there is
 * no static libdnnl) the backend is simply unavailable (onednn_available()
 * returns false) and every op falls back to the next implementation.
 */
#ifndef MOPT_KERNELS_ONEDNN_ONEDNN_H
#define MOPT_KERNELS_ONEDNN_ONEDNN_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"

#define ONEDNN_MAX_DIMS 12

/* Compute precision of the product. Inputs and outputs stay f32 in memory:
 * BF16 converts activations on each run and weights once (f32 accumulation).
 * INT8 (matmul only, constant B): B is quantized once per output column
 * (symmetric s8, scale max|B[:,n]| / 127, or / 63 without VNNI), A on each
 * run per row
 * (asymmetric u8, kernels/cpu/rowquant.h); s32 accumulation, the product
 * dequantized per row and column (times alpha), then bias, residual (Y's
 * dims, dense) and the activation in f32. */
typedef enum onednn_prec { ONEDNN_F32 = 0, ONEDNN_BF16 = 1, ONEDNN_INT8 = 2 } onednn_prec;

/* A strided f32 tensor: dims and strides in elements. */
typedef struct onednn_td {
    int32_t ndims;
    int64_t dims[ONEDNN_MAX_DIMS];
    int64_t strides[ONEDNN_MAX_DIMS];
} onednn_td;

/* Fills a contiguous row-major td. */
void onednn_td_dense(onednn_td *t, int32_t ndims, const int64_t *dims);

/* Y = act(alpha * (A @ B) + bias + residual + sum_beta * Y_in)
 * a: [batch..., M, K], b: [batch..., K, N], y: [batch..., M, N] (dense), all
 * with the same ndims (>= 2); batch dims of a and b are 1 or y's. bias and
 * residual: dims 1 or y's, any strides. sum_beta != 0 reads Y's initial
 * content (Gemm's C, already broadcast there by the caller).
 * Zero-fill the struct before filling it: it is also the cache key. */
typedef struct onednn_matmul_desc {
    onednn_td a, b, y;
    bool has_bias, has_residual;
    onednn_td bias, residual;
    float alpha;
    float sum_beta;
    kn_act act;
    float act_alpha, act_beta;
    onednn_prec prec;
    bool b_const; /* B never changes: a layout change may be done once */
    bool plain_w; /* B keeps its stored layout (strides of b), only its type
                     may change (bf16); ignored by INT8, which always packs */
    /* BF16 only: A, the residual, Y stored as bf16 (same strides; the float
     * pointers of onednn_matmul_run then hold bf16 data), so a tensor that
     * stays bf16 between ops (the runtime's storage plan) needs no reorder */
    bool a_bf16, res_bf16, y_bf16;
    /* INT8 only: A, or Y, is a u8 rows block (kernels/cpu/rowquant.h: the
     * runtime keeps it quantized between int8 ops); the pointers of
     * onednn_matmul_run then hold that block. A's rows come in with their
     * scales (no quantization here); Y's rows are quantized by the epilogue,
     * after bias, residual and activation. */
    bool a_u8, y_u8;
} onednn_matmul_desc;

/* The oneDNN provider of kernels.h's batched GEMM: fills d's a, b, y and
 * alpha from g (oneDNN runs the batch itself, broadcasting by dims of 1).
 * Operands keep their strides; an axis of size 1 gets the stride a dense
 * layout of the stored operand gives it, so equal problems make equal cache
 * keys. False when g has more than ONEDNN_MAX_DIMS - 2 batch axes. */
bool onednn_matmul_geometry(const kn_gemm *g, onednn_matmul_desc *d);

/* Convolution, NC[D]HW f32 in and out, W is [c_out, c_in / group, k...].
 * Zero-fill before filling (cache key). */
typedef struct onednn_conv_desc {
    int32_t S; /* spatial axes, 1..3 */
    int64_t batch, c_in, c_out, group;
    int64_t in[3], out[3], k[3], stride[3], dilation[3], pad_l[3], pad_r[3];
    bool has_bias, has_residual; /* residual: same shape as Y, dense */
    kn_act act;
    float act_alpha, act_beta;
    /* has_post: Y = post_scale * act(...) + post_shift (a scalar affine after
     * the activation, mopt.FusedConv's post_scale/post_shift) */
    bool has_post;
    float post_scale, post_shift;
    onednn_prec prec;
    bool plain_w; /* W keeps its stored [O, I, k...] layout, only its type
                     may change (bf16) */
    /* Channels-last (N, spatial..., C: "nhwc") instead of NC[D]HW in memory,
     * for X and for Y (and the residual): the layout pass (pass_layout.c)
     * keeps conv-chain activations so. The primitive is then asked for that
     * layout first (no reorder), else for the one it prefers. */
    bool x_nhwc, y_nhwc;
    /* oneDNN's blocked layout (nC[d|h]w16c) instead, channel counts
     * multiples of 16 (no padding): at most one of x_nhwc/x_blk, one of
     * y_nhwc/y_blk. Asked for first like channels-last. */
    bool x_blk, y_blk;
    /* Try oneDNN's Winograd convolution first (f32, 3x3, stride 1, one
     * group, >= 16 channels in and out: its jit_wino_4x3 / jit_fp32_wino_2x3
     * on avx512_core). Less exact than the direct one (about 1e-6 of the
     * output's scale), so only opt_level 3 asks for it. An activation
     * those kernels cannot fuse (they take relu and the residual's sum) then
     * runs on Y after the primitive. */
    bool wino;
    /* BF16 only: X, Y, the residual stored as bf16 (in their layouts above;
     * the float pointers of onednn_conv_run then hold bf16 data), so a
     * tensor that stays bf16 between convolutions (the runtime's storage
     * plan) needs no conversion. Not with a post affine run after the
     * primitive (after a HardSigmoid: post_in_prim). On an AMX CPU a BF16
     * convolution with channels-last (or blocked) X is offered bf16 X in
     * that layout, and counts toward onednn_conv_bf16_counts. */
    bool x_bf16, y_bf16, res_bf16;
} onednn_conv_desc;

/* Whether an op descriptor of oneDNN's C API (a dnnl_convolution_desc_t,
 * dnnl_deconvolution_desc_t, dnnl_pooling_v2_desc_t, dnnl_matmul_desc_t, ...:
 * whatever dnnl_primitive_desc_create takes) is within the sizes oneDNN is
 * trusted with (kernels/limits.h): every tensor, and the window of a
 * convolution, deconvolution or pooling. False with the reason in why (n
 * bytes; why may be NULL). Every primitive descriptor of this backend is
 * created only after this check (issue 17): a primitive added in another
 * file calls it before dnnl_primitive_desc_create and declines on false. */
bool onednn_desc_fits(const void *op_desc, char *why, size_t n);

/* Whether an f32 3x3 stride-1 one-group convolution with c_in -> c_out
 * channels would run on oneDNN's Winograd kernels when d->wino asks for
 * them: an AVX-512 CPU and the channel rule of wino_pays (onednn.c). Those
 * kernels take X and Y only in the blocked layout (nChw16c), so the layout
 * pass keeps such convs' activations blocked (pass_layout.c). */
bool onednn_conv_wino_likely(int64_t c_in, int64_t c_out);

/* Weights reordered once for a shape family. */
typedef struct onednn_weights onednn_weights;

/* Per-session state: a stream and the primitive cache. */
typedef struct onednn_cache onednn_cache;

/* Whether oneDNN is linked in and a CPU engine could be created. */
bool onednn_available(void);
/* "oneDNN 2.6.3" or "" */
const char *onednn_version(void);

/* Reorders the constant B of d (a representative shape: only b's dims and
 * strides must equal those at run time) into oneDNN's preferred layout
 * (quantizing it first for INT8: then B must have no batch dims > 1), or with
 * d->plain_w converts it to bf16 in its own layout (BF16) / leaves it (F32).
 * *out may be NULL on success when the plain f32 layout is already the one
 * to use. UNSUPPORTED when oneDNN cannot do this problem. */
mopt_status onednn_matmul_pack(const onednn_matmul_desc *d, const float *b, int threads,
                               onednn_weights **out);
/* Reorders conv weights for d (representative batch/spatial sizes); with
 * d->plain_w as onednn_matmul_pack. With d->wino, W is reordered for the
 * Winograd convolution, or UNSUPPORTED when oneDNN has none for d. */
mopt_status onednn_conv_pack(const onednn_conv_desc *d, const float *w, int threads,
                             onednn_weights **out);
/* Whether w keeps the weights' stored layout (only their type changed): false
 * for a blocked layout (and for INT8's quantized B); true for NULL. */
bool onednn_weights_plain(const onednn_weights *w);
void onednn_weights_free(onednn_weights *w);

/* Runs a matmul. w (may be NULL) is B prepacked by onednn_matmul_pack; when
 * it does not fit d, the plain b is used. UNSUPPORTED (without side effects
 * on y) when oneDNN refuses the problem, so the caller can run its
 * reference instead. */
mopt_status onednn_matmul_run(onednn_cache **cache, const onednn_matmul_desc *d,
                              const onednn_weights *w, const float *a, const float *b,
                              const float *bias, const float *residual, float *y, int threads);

/* INT8 matmuls run their product in blocks of rows whose f32 Y takes at
 * most this many bytes per thread, each block's epilogue while it is in L2
 * (default 256 KiB, or MOPT_INT8_ROW_BLOCK=KiB; 0: one product, then the
 * epilogue). Read when a primitive is built; for tests. */
void onednn_set_int8_block_bytes(int64_t bytes);
/* Runs a convolution; residual (if any) is added before the activation, and
 * may be y itself (in place: then it is not copied into y first; same
 * storage type). x, residual and y hold bf16 where d says so. */
mopt_status onednn_conv_run(onednn_cache **cache, const onednn_conv_desc *d,
                            const onednn_weights *w, const float *x, const float *wplain,
                            const float *bias, const float *residual, float *y, int threads);

/* Transposed convolution (ONNX ConvTranspose) with the conv descriptor:
 * X [batch, c_in, in...], W as ONNX stores it, [c_in, c_out / group, k...],
 * Y [batch, c_out, out...] with out[i] = (in[i] - 1) * stride[i] +
 * (k[i] - 1) * dilation[i] + 1 - pad_l[i] - pad_r[i] (output_padding is a
 * smaller pad_r, which may go below 0; pad_l >= 0). No residual; act as for conv. Pack and
 * run as onednn_conv_pack / onednn_conv_run. */
mopt_status onednn_deconv_pack(const onednn_conv_desc *d, const float *w, int threads,
                               onednn_weights **out);
mopt_status onednn_deconv_run(onednn_cache **cache, const onednn_conv_desc *d,
                              const onednn_weights *w, const float *x, const float *wplain,
                              const float *bias, float *y, int threads);

/* Max or average pooling, NC[D]HW f32 in and out: out[i] = (in[i] + pad_l[i]
 * + pad_r[i] - (k[i] - 1) * dilation[i] - 1) / stride[i] + 1 (pad_r covers a
 * ceil_mode overhang). Average: include_pad divides by the taps inside the
 * padded input, else by those inside the input. Zero-fill before filling
 * (cache key). */
typedef struct onednn_pool_desc {
    int32_t S; /* spatial axes, 1..3 */
    int64_t batch, c;
    int64_t in[3], out[3], k[3], stride[3], dilation[3], pad_l[3], pad_r[3];
    bool max, include_pad;
    bool nhwc; /* X and Y channels-last ([N, spatial..., C] in memory) */
    bool blk;  /* X and Y blocked (nC[d]hw16c), c a multiple of 16; not with nhwc */
} onednn_pool_desc;

/* Runs a pooling; UNSUPPORTED (y untouched) when oneDNN refuses it or
 * would use its reference kernel. */
mopt_status onednn_pool_run(onednn_cache **cache, const onednn_pool_desc *d, const float *x,
                            float *y, int threads);

void onednn_cache_free(onednn_cache *c);

/* How many times oneDNN chose one of its reference implementations
 * ("ref:any", ...) for a primitive we then declined, since the process
 * started (all sessions). A given weights layout never counts: when the
 * prepacked (or stored) layout would make oneDNN fall back to a reference
 * implementation for a run-time shape, the weights are reordered for that
 * shape instead. With MOPT_FAIL_ON_REF=1 in the environment such a choice
 * fails the run (MOPT_ERR_INTERNAL) instead of being declined: the `noref`
 * test suite runs with it. */
long long onednn_ref_count(void);
/* How many Winograd convolution primitives this process made (tests). */
long long onednn_wino_count(void);

/* What oneDNN's effective ISA offers (dnnl_get_effective_cpu_isa, which
 * ONEDNN_MAX_CPU_ISA caps; false when oneDNN is absent): its AVX-512 kernels
 * (avx512_core: blocked matmul weights, bf16 convolution and matmul), and
 * exact u8 x s8 products (VNNI; without it pairs of products saturate in
 * s16, so INT8 weights keep 7 bits). */
bool onednn_isa_avx512(void);
bool onednn_int8_exact(void);
/* Whether oneDNN's effective ISA has its AMX bf16 kernels
 * (avx512_core_amx: brgconv, brgemm on tiles). */
bool onednn_isa_amx(void);

/* BF16 convolution primitives this process made on an AMX machine
 * (onednn_isa_amx): *amx those oneDNN answered with an AMX kernel
 * ("..._amx_bf16"), *other those it did not (MOPT_VERBOSE says which: a
 * slow path). Depthwise ones are not counted (oneDNN 2.6 has no AMX
 * depthwise kernel). For tests. */
void onednn_conv_bf16_counts(long long *amx, long long *other);

/* ---- static INT8 convolution (mopt.StaticQConv; onednn_qconv.c) --------- */

/* u8 X (zero point x_zp) times s8 W (symmetric, per output channel), exact
 * s32 sums, then Y = act(scale[c] * sum + bias[c] + residual) in f32, or
 * with y_u8 quantized to u8: clamp(round(Y / y_scale) + y_zp). residual:
 * f32, Y's shape. Layouts: NC[D]HW, or channels-last X / Y
 * (x_nhwc, y_nhwc; the residual follows Y). Needs exact u8 x s8 products
 * (onednn_int8_exact()), else UNSUPPORTED. Zero-fill before filling (cache
 * key). */
typedef struct onednn_qconv_desc {
    int32_t S; /* spatial axes, 1..3 */
    int64_t batch, c_in, c_out, group;
    int64_t in[3], out[3], k[3], stride[3], dilation[3], pad_l[3], pad_r[3];
    bool has_bias, has_residual;
    kn_act act;
    float act_alpha, act_beta;
    bool has_post; /* y = post_scale * act(...) + post_shift (FusedConv's post affine) */
    float post_scale, post_shift;
    int32_t x_zp;
    bool y_u8;
    float y_scale;
    int32_t y_zp;
    bool x_nhwc, y_nhwc;
} onednn_qconv_desc;

/* W [c_out, c_in / group, k...] s8 reordered once for d (a representative
 * shape), with the per-channel scales and bias it runs with. */
typedef struct onednn_qweights onednn_qweights;
mopt_status onednn_qconv_pack(const onednn_qconv_desc *d, const int8_t *w, const float *scale,
                              const float *bias, int threads, onednn_qweights **out);
void onednn_qweights_free(onednn_qweights *w);

/* Per-session primitives of the INT8 convolution. */
typedef struct onednn_qcache onednn_qcache;
void onednn_qcache_free(onednn_qcache *c);

/* Runs it: x u8, y u8 or f32 (d->y_u8); wplain: W as stored, reordered
 * into this entry when the packed layout does not fit this shape.
 * UNSUPPORTED (y untouched) when oneDNN refuses the problem, would run a
 * reference or gemm kernel. */
mopt_status onednn_qconv_run(onednn_qcache **cache, const onednn_qconv_desc *d,
                             const onednn_qweights *w, const uint8_t *x, const int8_t *wplain,
                             const float *residual, void *y, int threads);

#endif
