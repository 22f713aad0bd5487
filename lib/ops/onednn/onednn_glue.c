/*
 * onednn_glue.c — private glue shared by the oneDNN op impls (see
 * onednn_glue.h): the variant choice, the per-node state, packing B.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/bf16cvt.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/onednn/onednn_glue.h"
#include "ops/op_common.h"

int onednn_glue_variants(const op_ctx *ctx, bool int8_ok, bool pack_ok, onednn_glue_variant *out) {
    int n = 0;
    bool packs = pack_ok && ctx->opt_level >= 3;
    if (ctx->precision == OP_PREC_INT8 && int8_ok)
        out[n++] = (onednn_glue_variant){ONEDNN_INT8, false, "onednn-int8"};
    /* oneDNN 2.6 has bf16 kernels only for AVX-512 (else its reference or
     * nothing): below that, precision=bf16 runs the f32 variants */
    if (ctx->precision == OP_PREC_BF16 && onednn_isa_avx512()) {
        if (packs) out[n++] = (onednn_glue_variant){ONEDNN_BF16, false, "onednn-bf16-packed"};
        out[n++] = (onednn_glue_variant){ONEDNN_BF16, true, "onednn-bf16"};
    }
    if (packs) out[n++] = (onednn_glue_variant){ONEDNN_F32, false, "onednn-packed"};
    out[n++] = (onednn_glue_variant){ONEDNN_F32, true, "onednn"};
    return n;
}

mopt_status onednn_glue_choose(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, const onednn_glue_variant *cands, int n,
                               onednn_glue_try_fn fn, void **state) {
    *state = NULL;
    for (int i = 0; i < n; i++) {
        onednn_weights *w = NULL;
        mopt_status st = fn(ctx, in, n_in, out, &cands[i], &w);
        if (st == MOPT_ERR_UNSUPPORTED) {
            onednn_weights_free(w);
            mopt_clear_error();
            continue;
        }
        if (st) {
            onednn_weights_free(w);
            return st;
        }
        onednn_glue_state *s = mopt_calloc(1, sizeof *s);
        if (!s) {
            onednn_weights_free(w);
            return mopt_fail(MOPT_ERR_OUT_OF_MEMORY, "out of memory preparing a oneDNN kernel");
        }
        s->v = cands[i];
        s->w = w;
        *state = s;
        return MOPT_OK;
    }
    return MOPT_ERR_UNSUPPORTED;
}

mopt_status onednn_glue_pack_b(onednn_matmul_desc *d, const op_tensor *b,
                               const onednn_glue_variant *v, onednn_weights **w) {
    d->prec = v->prec;
    d->plain_w = v->plain && v->prec != ONEDNN_INT8;
    *w = NULL;
    if (!b->data) return MOPT_OK;
    return onednn_matmul_pack(d, b->data, 1, w);
}

mopt_status onednn_glue_mm_keep(const onednn_glue_variant *v, mopt_status st, onednn_weights **w) {
    if (st) return st;
    if (v->prec == ONEDNN_INT8) return *w ? MOPT_OK : MOPT_ERR_UNSUPPORTED; /* nothing quantized */
    if (!v->plain && onednn_weights_plain(*w)) return MOPT_ERR_UNSUPPORTED; /* same layout */
    return MOPT_OK;
}

void onednn_glue_guess_x(const ir_shape *x, const ir_shape *w, int64_t channels, ir_shape *out) {
    memset(out, 0, sizeof *out);
    out->rank = w->rank;
    out->dims[0] = 1;
    out->dims[1] = channels;
    for (int32_t i = 2; i < out->rank; i++)
        out->dims[i] = x->rank == out->rank && x->syms[i] == 0 ? x->dims[i] : 32;
}

mopt_status onednn_glue_conv_keep(const onednn_glue_variant *v, mopt_status st,
                                  onednn_weights **w) {
    if (st == MOPT_ERR_UNSUPPORTED) {
        /* f32: layouts are then chosen per run; bf16: let f32 take over */
        mopt_clear_error();
        return v->prec == ONEDNN_BF16 ? MOPT_ERR_UNSUPPORTED : MOPT_OK;
    }
    if (st) return st;
    /* a packed variant keeps the node only when W really was reordered into
     * another layout (or will be, per run-time shape, when the guess did not
     * fit); otherwise the plain one runs it */
    if (!v->plain && *w && onednn_weights_plain(*w)) return MOPT_ERR_UNSUPPORTED;
    return MOPT_OK;
}

void onednn_glue_mm_desc(const op_ctx *ctx, onednn_matmul_desc *d) {
    const onednn_glue_state *s = ctx->state;
    d->prec = s->v.prec;
    d->plain_w = s->v.plain && s->v.prec != ONEDNN_INT8;
    d->b_const = s->w != NULL;
}

bool onednn_glue_mm_bf16(const op_ctx *ctx, const op_tensor *a, const op_tensor *res,
                         const op_tensor *y, onednn_matmul_desc *d) {
    d->a_bf16 = a->dtype == MOPT_DTYPE_BF16;
    d->res_bf16 = res && res->dtype == MOPT_DTYPE_BF16;
    d->y_bf16 = y->dtype == MOPT_DTYPE_BF16;
    return d->prec == ONEDNN_BF16 || (d->prec == ONEDNN_INT8 && !d->res_bf16) ||
           !(d->a_bf16 || d->res_bf16 || d->y_bf16);
}

bool onednn_glue_mm_bf16_io(const op_ctx *ctx, bool output, int k, int res) {
    const onednn_glue_state *s = ctx->state;
    /* int8: A (quantized from it) and Y (the epilogue's last step) */
    if (s && s->v.prec == ONEDNN_INT8) return k == 0 && cpu_bf16cvt_fast();
    if (!s || s->v.prec != ONEDNN_BF16) return false;
    return k == 0 || (!output && k == res);
}

const onednn_weights *onednn_glue_weights(const op_ctx *ctx) {
    const onednn_glue_state *s = ctx->state;
    return s->w;
}

mopt_status onednn_glue_gemv_pack(const op_ctx *ctx, onednn_glue_state *s, const float *w,
                                  int64_t K, int64_t N, bool trans) {
    const cpu_kernels *k = cpu_kernels_for("avx512");
    if (!s || !w || s->v.prec != ONEDNN_F32 || ctx->precision != OP_PREC_FP32 || !k || K <= 0 ||
        N <= 0)
        return MOPT_OK;
    s->gemv = ops_gemv_pack(w, K, N, trans);
    if (!s->gemv) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the GEMV weights");
    s->gemv_k = k;
    s->gemv_K = K;
    s->gemv_N = N;
    snprintf(s->name, sizeof s->name, "%s+gemv-%s", s->v.name, k->isa);
    return MOPT_OK;
}

void onednn_glue_gemv(const op_ctx *ctx, const float *x, float *y) {
    const onednn_glue_state *s = ctx->state;
    ops_gemv_panels(s->gemv_k, s->gemv, s->gemv_K, s->gemv_N, x, y, ctx->threads);
}

void onednn_glue_gemv_rows(const op_ctx *ctx, const float *x, int64_t M, float *y) {
    const onednn_glue_state *s = ctx->state;
    ops_gemv_panels_rows(s->gemv_k, s->gemv, s->gemv_K, s->gemv_N, x, M, y, ctx->threads);
}

void onednn_glue_release(void *state) {
    onednn_glue_state *s = state;
    if (!s) return;
    onednn_weights_free(s->w);
    mopt_aligned_free(s->gemv);
    mopt_free(s);
}

void onednn_glue_scratch_release(void *scratch) { onednn_cache_free(scratch); }

const char *onednn_glue_variant_name(const void *state) {
    const onednn_glue_state *s = state;
    return !s ? "onednn" : s->gemv ? s->name : s->v.name;
}

#else
typedef int onednn_glue_unused; /* ISO C forbids an empty translation unit */
#endif
