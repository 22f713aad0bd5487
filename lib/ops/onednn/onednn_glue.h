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
} onednn_glue_variant;

/* What prepare chose and made (the impl's state). */
typedef struct onednn_glue_state {
    onednn_glue_variant v;
    onednn_weights *w; /* prepared weights; NULL: read from the model's buffer
                          (or layouts chosen per run) */
} onednn_glue_state;

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

/* Sets d's precision and weight layout from the node's state. */
void onednn_glue_mm_desc(const op_ctx *ctx, onednn_matmul_desc *d);
const onednn_weights *onednn_glue_weights(const op_ctx *ctx);

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
    {                                                                                              \
        .name = "onednn", .backend = "onednn", .supports = supports_fn, .prepare = prepare_fn,     \
        .release = onednn_glue_release, .run = run_fn,                                             \
        .release_scratch = onednn_glue_scratch_release, .variant = onednn_glue_variant_name,       \
        .bf16_io = bf16_io_fn,                                                                     \
    }

#endif
