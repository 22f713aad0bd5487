/*
 * conv_dw_onednn.c — mopt.FusedConvDw (a 1x1 conv, 16 blocked input
 * channels, then a depthwise conv on its output; docs/fused_ops.md) on
 * oneDNN, in bands of output rows (issue 10; bench/proto/dw_band_onednn.md):
 * per band, the 1x1 on the input rows the band needs and not yet computed,
 * then the depthwise conv on those rows while they are still in L2. A band
 * of a blocked tensor with more than 16 channels is not a dense nChw16c
 * tensor (oneDNN answers ref:any for it), so each 16-channel block runs its
 * own primitives (16 -> 16 for the 1x1, 16 groups for the depthwise conv),
 * each block with its own primitive cache (an entry keeps the weights it
 * reordered). A reference implementation oneDNN picks is declined
 * (kernels/onednn: the executor then runs FusedConvDw's reference, and
 * MOPT_VERBOSE shows it). Banding is a 1-thread schedule: a run given more
 * threads runs the two convs whole, each one primitive on oneDNN's threads
 * (as the unfused graph does). Bands split by oneDNN's own threading lost to
 * the fork/join (1.15-1.97x in the prototype); each thread its own range of
 * bands on the library's pool (branch pwband2) lost to oneDNN's OpenMP
 * worker, which keeps spinning on the second core after every oneDNN node
 * (MobileNetV3-like b1 at 2 threads: 285 us against 139 us for the two
 * whole primitives). A band written
 * before a later band's primitive is declined leaves Y partly written: the
 * reference then writes all of it.
 */
#include "mopt_config.h"
#include "ops/impls.h"

#ifdef MOPT_HAVE_ONEDNN
#include "core/alloc.h"
#include "kernels/onednn/onednn.h"
#include "ops/fused.h"
#include "ops/op_common.h"

#define BAND_ROWS 16  /* depthwise output rows per band (14-20 measured best) */
#define MAX_BLOCKS 64 /* 16-channel blocks (1024 channels) */

/* A row range's primitive caches: one per block and conv (an entry keeps
 * the weights it reordered, so blocks cannot share one). */
typedef struct dw_caches {
    onednn_cache *pw[MAX_BLOCKS], *dw[MAX_BLOCKS];
    onednn_cache *pw_all, *dw_all; /* the whole convs (runs on more threads) */
} dw_caches;

static void caches_free(void *scratch) {
    dw_caches *c = scratch;
    if (!c) return;
    for (int b = 0; b < MAX_BLOCKS; b++) {
        onednn_cache_free(c->pw[b]);
        onednn_cache_free(c->dw[b]);
    }
    onednn_cache_free(c->pw_all);
    onednn_cache_free(c->dw_all);
    mopt_free(c);
}

/* Both convs' problems for concrete shapes; false when this impl cannot run
 * them (then the reference does). */
static bool descs(const op_ctx *ctx, const op_tensor *in, onednn_conv_desc *dp,
                  onednn_conv_desc *dd) {
    const fused_conv_dw_params *p = ctx->params;
    op_ctx pc, dc;
    fused_conv_params pw;
    fused_conv_dw_ctx(ctx, &pw, &pc);
    fused_conv_dw_ctx(ctx, NULL, &dc);
    if (in[0].shape.rank != 4 || ops_conv_onednn_desc(&pc, &in[0].shape, &in[1].shape, true, dp))
        return false;
    ir_shape ms = in[0].shape;
    ms.dims[1] = dp->c_out;
    ms.dims[2] = dp->out[0];
    ms.dims[3] = dp->out[1];
    if (ops_conv_onednn_desc(&dc, &ms, &in[3].shape, true, dd)) return false;
    dp->act = p->pw_act.act;
    dp->act_alpha = p->pw_act.alpha;
    dp->act_beta = p->pw_act.beta;
    dd->act = p->dw.act.act;
    dd->act_alpha = p->dw.act.alpha;
    dd->act_beta = p->dw.act.beta;
    return dp->S == 2 && dp->c_in == CONV_BLK && dp->c_out % CONV_BLK == 0 &&
           dp->c_out / CONV_BLK <= MAX_BLOCKS && dp->k[0] == 1 && dp->k[1] == 1 &&
           dp->stride[0] == 1 && dp->stride[1] == 1 && dp->pad_l[0] == 0 && dp->pad_l[1] == 0 &&
           dp->pad_r[0] == 0 && dp->pad_r[1] == 0 && dp->x_blk && dp->y_blk &&
           dd->group == dd->c_in && dd->c_out == dd->c_in && dd->x_blk && dd->y_blk &&
           dd->dilation[0] == 1 && !p->dw.has_post && dp->batch > 0 && dd->out[0] > 0 &&
           dd->out[1] > 0;
}

static bool fcdw_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    if (!onednn_available() || n_in != 5) return false;
    for (int k = 0; k < 5; k++)
        if (!op_has_input(in, n_in, k) || in[k].dtype != MOPT_DTYPE_F32) return false;
    for (int k = 1; k < 5; k++)
        if (!in[k].data) return false;
    return in[0].shape.rank == 4 && in[1].shape.rank == 4 && in[3].shape.rank == 4;
}

/* The band [o0, o1) of the depthwise conv's output rows of one image: the
 * 1x1 on the rows [*done, r1) it still needs, then the depthwise conv. */
static mopt_status band(dw_caches *c, const onednn_conv_desc *dp, const onednn_conv_desc *dd,
                        const float *x, const op_tensor *in, float *mid, float *y, int64_t o0,
                        int64_t o1, int64_t *done) {
    const int64_t H = dp->out[0], W = dp->out[1], Ho = dd->out[0], Wo = dd->out[1];
    const int64_t kh = dd->k[0], sh = dd->stride[0], pt = dd->pad_l[0];
    const int64_t nb = dp->c_out / CONV_BLK, kk = dd->k[0] * dd->k[1];
    const float *w1 = in[1].data, *b1 = in[2].data, *w2 = in[3].data, *b2 = in[4].data;
    int64_t r0 = o0 * sh - pt, r1 = (o1 - 1) * sh - pt + kh;
    if (r0 < 0) r0 = 0;
    if (r1 > H) r1 = H;
    mopt_status st = MOPT_OK;
    if (r1 > *done) {
        onednn_conv_desc bp = *dp;
        bp.batch = 1;
        bp.c_out = CONV_BLK;
        bp.in[0] = bp.out[0] = r1 - *done;
        for (int64_t b = 0; !st && b < nb; b++)
            st = onednn_conv_run(&c->pw[b], &bp, NULL, x + *done * W * CONV_BLK,
                                 w1 + b * CONV_BLK * CONV_BLK, b1 + b * CONV_BLK, NULL,
                                 mid + (b * H + *done) * W * CONV_BLK, 1);
        *done = r1;
    }
    onednn_conv_desc bd = *dd;
    bd.batch = 1;
    bd.c_in = bd.c_out = bd.group = CONV_BLK;
    bd.in[0] = r1 - r0;
    bd.out[0] = o1 - o0;
    bd.pad_l[0] = pt - o0 * sh > 0 ? pt - o0 * sh : 0;
    bd.pad_r[0] = (o1 - 1) * sh - pt + kh - H > 0 ? (o1 - 1) * sh - pt + kh - H : 0;
    for (int64_t b = 0; !st && b < nb; b++)
        st = onednn_conv_run(&c->dw[b], &bd, NULL, mid + (b * H + r0) * W * CONV_BLK,
                             w2 + b * CONV_BLK * kk, b2 + b * CONV_BLK, NULL,
                             y + (b * Ho + o0) * Wo * CONV_BLK, 1);
    return st;
}

/* One thread: every image band after band, the intermediate (one image's)
 * in mid. */
static mopt_status banded_run(dw_caches *c, const onednn_conv_desc *dp, const onednn_conv_desc *dd,
                              const op_tensor *in, float *mid, float *yall) {
    const int64_t H = dp->out[0], W = dp->out[1], Ho = dd->out[0], Wo = dd->out[1];
    mopt_status st = MOPT_OK;
    for (int64_t n = 0; !st && n < dp->batch; n++) {
        const float *x = (const float *)in[0].data + n * CONV_BLK * H * W;
        float *y = yall + n * dp->c_out * Ho * Wo;
        int64_t done = 0;
        for (int64_t o0 = 0; !st && o0 < Ho; o0 += BAND_ROWS)
            st = band(c, dp, dd, x, in, mid, y, o0, o0 + BAND_ROWS < Ho ? o0 + BAND_ROWS : Ho,
                      &done);
    }
    return st;
}

/* More threads: the 1x1 whole into a scratch intermediate, then the
 * depthwise conv whole, each one primitive on ctx->threads. */
static mopt_status whole_run(const op_ctx *ctx, dw_caches *c, const onednn_conv_desc *dp,
                             const onednn_conv_desc *dd, const op_tensor *in, float *y) {
    size_t bytes = (size_t)(dp->batch * dp->c_out * dp->out[0] * dp->out[1]) * sizeof(float);
    float *mid = op_work_get(ctx, 0, bytes);
    if (!mid) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for the 1x1's output");
    mopt_status st = onednn_conv_run(&c->pw_all, dp, NULL, in[0].data, in[1].data, in[2].data, NULL,
                                     mid, ctx->threads);
    if (!st)
        st = onednn_conv_run(&c->dw_all, dd, NULL, mid, in[3].data, in[4].data, NULL, y,
                             ctx->threads);
    op_work_put(ctx, mid);
    return st;
}

static mopt_status fcdw_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    onednn_conv_desc dp, dd;
    if (!descs(ctx, in, &dp, &dd)) return MOPT_ERR_UNSUPPORTED;
    dw_caches **slot = (dw_caches **)ctx->scratch;
    if (!*slot && !(*slot = mopt_calloc(1, sizeof **slot)))
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for the primitive caches");
    if (ctx->threads > 1) return whole_run(ctx, *slot, &dp, &dd, in, out[0].data);
    size_t bytes = (size_t)(dp.c_out * dp.out[0] * dp.out[1]) * sizeof(float);
    float *mid = op_work_get(ctx, 0, bytes);
    if (!mid) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for the 1x1's output");
    mopt_status st = banded_run(*slot, &dp, &dd, in, mid, out[0].data);
    op_work_put(ctx, mid);
    return st;
}

static const char *fcdw_variant(const void *state) {
    (void)state;
    return "onednn-banded";
}

const op_impl ops_impl_fused_conv_dw_onednn = {
    .name = "onednn-banded",
    .backend = "onednn",
    .supports = fcdw_supports,
    .run = fcdw_run,
    .release_scratch = caches_free,
    .variant = fcdw_variant,
};

#else
typedef int conv_dw_onednn_unused; /* ISO C forbids an empty translation unit */
#endif
