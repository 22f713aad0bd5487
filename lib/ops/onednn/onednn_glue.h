/*
 * onednn_glue.h — private glue shared by the oneDNN op impls
 * (matmul_onednn.c, conv_onednn.c, fused_onednn.c): the per-node state
 * every one of them keeps (the precision and weight layout that prepare
 * chose, the weights it prepared), the choice itself, and the op_impl fields
 * they share. Only built with MOPT_HAVE_ONEDNN.
 *
 * One impl per op: its prepare tries the variants the model's precision and
 * opt_level allow, in order, and keeps the first that takes the node:
 *   onednn-int8         precision=int8 (matmul family, constant 2-D B)
 *   onednn-bf16-packed  precision=bf16, opt_level >= 3, constant weights
 *                       that oneDNN wants in another layout
 *   onednn-bf16         precision=bf16, weights in their stored layout
 *                       (both bf16 only with oneDNN's AVX-512 kernels)
 *   onednn-wino         conv only: precision=fp32, opt_level >= 3, a 3x3
 *                       stride-1 conv oneDNN has a Winograd kernel for
 *                       (W prepacked for it; onednn_conv_desc.wino)
 *   onednn-packed       opt_level >= 3, as bf16-packed in f32
 *   onednn              f32, weights read as stored
 * The variant's name is what MOPT_VERBOSE and profiles show.
 */
#ifndef MOPT_OPS_ONEDNN_GLUE_H
#define MOPT_OPS_ONEDNN_GLUE_H

#include "kernels/onednn/onednn.h"
#include "ops/impls.h"

/* One candidate way to run a node. */
typedef struct onednn_glue_variant {
    onednn_prec prec;
    bool plain; /* weights keep their stored layout (else prepacked) */
    const char *name;
    bool wino; /* conv: oneDNN's Winograd kernels first (onednn_conv_desc.wino) */
} onednn_glue_variant;

/* What prepare chose and made (the impl's state). */
typedef struct onednn_glue_state {
    onednn_glue_variant v;
    onednn_weights *w; /* prepared weights; NULL: read from the model's buffer
                          (or layouts chosen per run) */
    /* f32 products that are a GEMV at batch 1 (a 1x1 Conv on a 1x1 image
     * as in squeeze-excitation and classifier heads, Gemm with M = 1 at
     * run time), which oneDNN 2.6's brgemm runs at half the memory speed:
     * W as GEMV panels (ops_gemv_pack) and the kernels, NULL otherwise. */
    float *gemv;
    const struct cpu_kernels *gemv_k;
    int64_t gemv_K, gemv_N;
    char name[48]; /* with GEMV panels: the variant's name + "+gemv-<tier>" (MOPT_VERBOSE) */
} onednn_glue_state;

/* Makes s's GEMV panels of constant W [K, N] (trans: [N, K]) when s runs in
 * f32 and the CPU has the AVX-512 GEMV kernel (else leaves s as it is);
 * fails only when out of memory. */
mopt_status onednn_glue_gemv_pack(const op_ctx *ctx, onednn_glue_state *s, const float *w,
                                  int64_t K, int64_t N, bool trans);
/* y[gemv_N] = x[gemv_K] * W on the panels (ctx->state's). */
void onednn_glue_gemv(const op_ctx *ctx, const float *x, float *y);
/* The same for M rows (1..CPU_GEMV_MAX_ROWS): y [M, gemv_N] = x [M, gemv_K] * W. */
void onednn_glue_gemv_rows(const op_ctx *ctx, const float *x, int64_t M, float *y);

/* Prepares candidate v for the node: *w gets the weights it made (or stays
 * NULL). UNSUPPORTED: the variant steps aside (the next one is tried); any
 * other failure fails the load. */
typedef mopt_status (*onednn_glue_try_fn)(const op_ctx *ctx, const op_tensor *in, int n_in,
                                          const op_tensor *out, const onednn_glue_variant *v,
                                          onednn_weights **w);

/* The candidates for this node, in order: int8 when `int8_ok` and
 * precision=int8, the bf16 ones with precision=bf16, the packed ones when
 * `pack_ok` (opt_level >= 3 and constant weights), then f32. Returns the
 * count (at most 5). */
int onednn_glue_variants(const op_ctx *ctx, bool int8_ok, bool pack_ok, onednn_glue_variant *out);

/* Tries the candidates with fn, keeping the first that takes the node in a
 * new onednn_glue_state; UNSUPPORTED when every one steps aside. */
mopt_status onednn_glue_choose(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, const onednn_glue_variant *cands, int n,
                               onednn_glue_try_fn fn, void **state);

/* Packs constant B for the representative problem d, as variant v asks
 * (d->prec and d->plain_w set here); *w stays NULL when there is nothing to
 * keep (f32 B read as stored, or B not constant). */
mopt_status onednn_glue_pack_b(onednn_matmul_desc *d, const op_tensor *b,
                               const onednn_glue_variant *v, onednn_weights **w);

/* The step-aside rules of the matmul family for what onednn_glue_pack_b
 * returned: int8 needs B quantized, a packed variant B in another layout. */
mopt_status onednn_glue_mm_keep(const onednn_glue_variant *v, mopt_status st, onednn_weights **w);

/* A representative X for packing a convolution's W at load: W's rank,
 * batch 1, `channels`, x's spatial sizes where they are fixed, else 32. */
void onednn_glue_guess_x(const ir_shape *x, const ir_shape *w, int64_t channels, ir_shape *out);

/* The step-aside rules of the conv family for what onednn_conv_pack or
 * onednn_deconv_pack returned: UNSUPPORTED leaves f32 to choose layouts per
 * run and steps bf16 aside; a packed variant needs W in another layout. */
mopt_status onednn_glue_conv_keep(const onednn_glue_variant *v, mopt_status st, onednn_weights **w);

/* Sets d's precision and weight layout from the node's state. */
void onednn_glue_mm_desc(const op_ctx *ctx, onednn_matmul_desc *d);
const onednn_weights *onednn_glue_weights(const op_ctx *ctx);

/* Conv/FusedConv's batch-1 GEMV (conv_onednn.c): prepare makes s->gemv for
 * a qualifying node (W [O, I, 1...], see above); run computes Y = act(W x +
 * bias + residual) when this run is batch 1, else says UNSUPPORTED (nothing
 * written: oneDNN runs it). residual and act may be NULL. */
mopt_status ops_conv_onednn_gemv_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         onednn_glue_state *s);
mopt_status ops_conv_onednn_gemv_run(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, const float *residual,
                                     const kn_act_params *act);

/* op_impl.bf16_io of Conv/FusedConv (conv_onednn.c): X (input 0), the
 * residual (input `res`, -1: none) and Y (when y_ok), when the node's
 * variant is BF16 and bf16 convolutions run on AMX here
 * (ops_conv_bf16_amx). */
bool ops_conv_onednn_bf16_io(const op_ctx *ctx, bool output, int k, int res, bool y_ok);
/* d's x_bf16, y_bf16 and res_bf16 from the run-time dtypes (res may be NULL). */
void ops_conv_onednn_bf16_desc(const op_tensor *x, const op_tensor *res, const op_tensor *y,
                               onednn_conv_desc *d);

void onednn_glue_release(void *state);
void onednn_glue_scratch_release(void *scratch);
const char *onednn_glue_variant_name(const void *state);

/* The bf16 storage of a matmul's A, residual (may be NULL) and Y, from
 * their run-time dtypes (op_impl.bf16_io); false when one is bf16 but the
 * node does not run in BF16 (the caller declines). */
bool onednn_glue_mm_bf16(const op_ctx *ctx, const op_tensor *a, const op_tensor *res,
                         const op_tensor *y, onednn_matmul_desc *d);
/* op_impl.bf16_io of the matmul family: A (input 0), the residual (input
 * `res`, -1: none) and Y, when the node's variant is BF16. */
bool onednn_glue_mm_bf16_io(const op_ctx *ctx, bool output, int k, int res);

/* The op_impl fields every oneDNN impl shares. */
#define ONEDNN_GLUE_IMPL(supports_fn, prepare_fn, run_fn)                                          \
    ONEDNN_GLUE_IMPL_BF16(supports_fn, prepare_fn, run_fn, NULL)
#define ONEDNN_GLUE_IMPL_BF16(supports_fn, prepare_fn, run_fn, bf16_io_fn)                         \
    ONEDNN_GLUE_IMPL_IO(supports_fn, prepare_fn, run_fn, bf16_io_fn, NULL)
/* ... with an op_impl.inplace too */
#define ONEDNN_GLUE_IMPL_IO(supports_fn, prepare_fn, run_fn, bf16_io_fn, inplace_fn)               \
    ONEDNN_GLUE_IMPL_WITH(supports_fn, prepare_fn, run_fn, bf16_io_fn, .inplace = inplace_fn)
/* ... with an op_impl.u8_io (int8 storage) instead of inplace */
#define ONEDNN_GLUE_IMPL_U8(supports_fn, prepare_fn, run_fn, bf16_io_fn, u8_io_fn)                 \
    ONEDNN_GLUE_IMPL_WITH(supports_fn, prepare_fn, run_fn, bf16_io_fn, .u8_io = u8_io_fn)
/* The shared fields and one more designated initializer (`extra`). */
#define ONEDNN_GLUE_IMPL_WITH(supports_fn, prepare_fn, run_fn, bf16_io_fn, extra)                  \
    {                                                                                              \
        .name = "onednn", .backend = "onednn", .supports = supports_fn, .prepare = prepare_fn,     \
        .release = onednn_glue_release, .run = run_fn,                                             \
        .release_scratch = onednn_glue_scratch_release, .variant = onednn_glue_variant_name,       \
        .bf16_io = bf16_io_fn, extra,                                                              \
    }

#endif
