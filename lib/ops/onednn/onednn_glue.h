/*
 * onednn_glue.h — private glue shared by the oneDNN operator impls
 * (matmul_onednn.c, conv_onednn.c, fused_onednn.c): the precision test, the
 * per-node state holding packed B, the prepare steps common to the matmul
 * family ("-packed" stepping aside, int8 needing quantized B), the fallback
 * to the reference run, and the op_impl table every variant fills alike.
 * Only built with MOPT_HAVE_ONEDNN.
 */
#ifndef MOPT_OPS_ONEDNN_GLUE_H
#define MOPT_OPS_ONEDNN_GLUE_H

#include "kernels/onednn/onednn.h"
#include "ops/impls.h"

/* What a matmul-family prepare leaves for run. */
typedef struct onednn_glue_mm_state {
    onednn_weights *w; /* NULL: B is used as it is */
} onednn_glue_mm_state;

/* ctx->precision equals p. */
bool onednn_glue_prec_is(const op_ctx *ctx, op_precision p);

/* Releases an onednn_glue_mm_state (NULL is fine). */
void onednn_glue_mm_state_release(void *state);

/* Releases a state that is the onednn_weights themselves (Conv's). */
void onednn_glue_weights_release(void *state);

/* Releases the per-session primitive cache. */
void onednn_glue_scratch_release(void *scratch);

/* Packs constant B for the representative problem d (prec and plain_w set
 * here): into oneDNN's layout, or with plain only converted (bf16) in its
 * stored layout. *state: an onednn_glue_mm_state, or NULL when there is
 * nothing to keep. */
mopt_status onednn_glue_pack_b(onednn_matmul_desc *d, const op_tensor *b, onednn_prec prec,
                               bool plain, void **state);

/* A "-packed" matmul-family prepare keeps the node only when B really was
 * reordered into another layout; otherwise the plain impl (next in the list)
 * runs it. */
mopt_status onednn_glue_mm_packed_or_step_aside(mopt_status st, void **state);

/* An int8 matmul-family prepare keeps the node only when B was quantized. */
mopt_status onednn_glue_mm_int8_or_step_aside(mopt_status st, void **state);

/* A kernel status: MOPT_ERR_UNSUPPORTED (oneDNN refused) goes to the
 * reference run of the node. */
mopt_status onednn_glue_or_ref(mopt_status st, const op_ctx *ctx, const op_tensor *in, int n_in,
                               op_tensor *out, int n_out);

/* Defines the impl ops_impl_<ident> from <ident>_supports, <ident>_prepare
 * and <ident>_run, with the given state release. */
#define ONEDNN_GLUE_IMPL_TABLE(ident, iname, release_fn)                                           \
    const op_impl ops_impl_##ident = {                                                             \
        .name = iname,                                                                             \
        .backend = "onednn",                                                                       \
        .supports = ident##_supports,                                                              \
        .prepare = ident##_prepare,                                                                \
        .release = release_fn,                                                                     \
        .run = ident##_run,                                                                        \
        .release_scratch = onednn_glue_scratch_release,                                            \
    };

#endif
