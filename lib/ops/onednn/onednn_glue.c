/*
 * onednn_glue.c — private glue shared by the oneDNN operator impls (see
 * onednn_glue.h).
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <string.h>

#include "core/alloc.h"
#include "ops/onednn/onednn_glue.h"

bool onednn_glue_prec_is(const op_ctx *ctx, op_precision p) { return ctx->precision == p; }

void onednn_glue_mm_state_release(void *state) {
    onednn_glue_mm_state *s = state;
    if (!s) return;
    onednn_weights_free(s->w);
    mopt_free(s);
}

void onednn_glue_weights_release(void *state) { onednn_weights_free(state); }

void onednn_glue_scratch_release(void *scratch) { onednn_cache_free(scratch); }

mopt_status onednn_glue_pack_b(onednn_matmul_desc *d, const op_tensor *b, onednn_prec prec,
                               bool plain, void **state) {
    d->prec = prec;
    d->plain_w = plain && prec != ONEDNN_INT8;
    *state = NULL;
    if (!b->data) return MOPT_OK;
    onednn_weights *w = NULL;
    mopt_status st = onednn_matmul_pack(d, b->data, 1, &w);
    if (st) return st;
    if (!w && d->plain_w) return MOPT_OK; /* f32 B is read as stored: nothing to keep */
    onednn_glue_mm_state *s = mopt_calloc(1, sizeof *s);
    if (!s) {
        onednn_weights_free(w);
        return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory preparing a oneDNN matmul");
    }
    s->w = w;
    *state = s;
    return MOPT_OK;
}

mopt_status onednn_glue_mm_packed_or_step_aside(mopt_status st, void **state) {
    if (st) return st;
    const onednn_glue_mm_state *s = *state;
    if (s && !onednn_weights_plain(s->w)) return MOPT_OK;
    onednn_glue_mm_state_release(*state);
    *state = NULL;
    mopt_clear_error();
    return MOPT_ERR_UNSUPPORTED;
}

mopt_status onednn_glue_mm_int8_or_step_aside(mopt_status st, void **state) {
    if (!st && (!*state || !((onednn_glue_mm_state *)*state)->w)) { /* nothing quantized */
        onednn_glue_mm_state_release(*state);
        *state = NULL;
        return MOPT_ERR_UNSUPPORTED;
    }
    return st;
}

mopt_status onednn_glue_or_ref(mopt_status st, const op_ctx *ctx, const op_tensor *in, int n_in,
                               op_tensor *out, int n_out) {
    if (st == MOPT_ERR_UNSUPPORTED) return ctx->node->op->run(ctx, in, n_in, out, n_out);
    return st;
}

#else
typedef int onednn_glue_unused; /* ISO C forbids an empty translation unit */
#endif
