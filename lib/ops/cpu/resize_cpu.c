/*
 * resize_cpu.c — the "cpu" backend of Resize and Upsample: nearest (every
 * nearest_mode) and linear/bilinear resize of the last two axes of a 4-D
 * f32 tensor (N and C unscaled), for every coordinate_transformation_mode
 * except tf_crop_and_resize, without exclude_outside. Index and weight
 * tables are built per input/output shape with the reference's own
 * coordinate and tap rules (ref_resize_source/ref_resize_taps), kept in the
 * per-session scratch and rebuilt only when the shape changes; the kernels
 * (kernels/cpu/resize-*.c) then only gather and blend. Other modes (cubic,
 * tf_crop_and_resize, exclude_outside, other ranks, a scaled N or C) are
 * declined: prepare keeps the reason, every run declines and the executor
 * runs the reference; MOPT_VERBOSE=1 lists such a node as
 * kernel=ref(cpu-resize declines: <reason>).
 * mopt.ChannelsLastResize (the layout pass; X and Y [N, H, W, C] in
 * memory), nearest only: each output pixel copies its source pixel's C
 * contiguous channels, and an output row whose source row is the previous
 * output row's copies that whole row.
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/op_common.h"

/* One input/output shape's tables (ctx->scratch). */
typedef struct rs_cache {
    int64_t ih, iw, oh, ow;
    double sh, sw;
    cpu_resize_plan plan;
    void *mem;
} rs_cache;

static bool rs_mode_ok(const ref_resize_params *p) {
    return (p->mode == REF_RESIZE_NEAREST || p->mode == REF_RESIZE_LINEAR) &&
           p->coord != REF_COORD_TF_CROP_AND_RESIZE && !p->exclude_outside &&
           (!p->antialias || p->mode == REF_RESIZE_NEAREST);
}

/* Output dims and scales when known; 1 when covered (N, C unscaled), 0 when
 * not, -1 when unknown yet. */
static int rs_geometry(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *od, double *sc) {
    double roi[2 * IR_MAX_RANK];
    mopt_status st;
    if (in[0].shape.rank != 4) return 0;
    if (ops_resize_plan(ctx, in, n_in, od, sc, roi, &st)) return -1;
    if (st) return 0;
    return od[0] == in[0].shape.dims[0] && od[1] == in[0].shape.dims[1] && sc[0] == 1.0 &&
           sc[1] == 1.0;
}

/* Why the node is left to the reference, or NULL (covered, or only known
 * at run time). */
static const char *rs_why_not(const op_ctx *ctx, const op_tensor *in, int n_in) {
    const ref_resize_params *p = ops_resize_kernel_params(ctx);
    if (p->mode == REF_RESIZE_CUBIC) return "mode cubic";
    if (p->coord == REF_COORD_TF_CROP_AND_RESIZE) return "tf_crop_and_resize";
    if (p->exclude_outside) return "exclude_outside";
    if (p->antialias && p->mode != REF_RESIZE_NEAREST) return "antialias";
    if (ops_resize_channels_last(ctx) && p->mode != REF_RESIZE_NEAREST)
        return "channels-last and not nearest";
    if (in[0].shape.rank >= 0 && in[0].shape.rank != 4) return "rank is not 4";
    int64_t od[IR_MAX_RANK];
    double sc[IR_MAX_RANK];
    if (in[0].shape.rank == 4 && rs_geometry(ctx, in, n_in, od, sc) == 0) return "N or C resized";
    return NULL;
}

/* Every f32 node: prepare either takes it or records why it declines. */
static bool resize_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    return in[0].dtype == MOPT_DTYPE_F32;
}

typedef struct rs_state {
    const cpu_kernels *k;
    const char *declined; /* NULL: runs here */
    char name[80];        /* what MOPT_VERBOSE and profiles show */
} rs_state;

static mopt_status rs_prepare(const char *isa, const op_ctx *ctx, const op_tensor *in, int n_in,
                              void **state) {
    const cpu_kernels *k = cpu_kernels_for(isa);
    if (!k) return MOPT_ERR_UNSUPPORTED;
    rs_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    s->k = k;
    s->declined = rs_why_not(ctx, in, n_in);
    if (s->declined)
        snprintf(s->name, sizeof s->name, "ref(cpu-resize declines: %s)", s->declined);
    else
        snprintf(s->name, sizeof s->name, "cpu-%s", isa);
    *state = s;
    return MOPT_OK;
}

static void rs_release(void *state) { mopt_free(state); }

static const char *rs_variant(const void *state) { return ((const rs_state *)state)->name; }

/* Fills one axis' tables: first tap, second tap, their weights. */
static void rs_axis(const ref_resize_params *p, int64_t in_len, int64_t out_len, double scale,
                    int32_t *t0, int32_t *t1, float *w0, float *w1) {
    for (int64_t j = 0; j < out_len; j++) {
        bool extra;
        int64_t idx[4];
        double c[4];
        double xo = ref_resize_source(p, j, in_len, out_len, scale, 0.0, 1.0, &extra);
        ref_resize_taps(p, xo, in_len, idx, c);
        if (p->mode == REF_RESIZE_NEAREST) {
            t0[j] = (int32_t)(c[1] != 0 ? idx[1] : idx[0]);
            continue;
        }
        /* a tap of weight 0 reads its partner's element */
        t0[j] = (int32_t)(c[0] != 0 ? idx[0] : idx[1]);
        t1[j] = (int32_t)(c[1] != 0 ? idx[1] : idx[0]);
        w0[j] = (float)c[0];
        w1[j] = (float)c[1];
    }
}

/* The tables for this shape, from the cache or built now; NULL on no memory. */
static const cpu_resize_plan *rs_tables(const op_ctx *ctx, const ref_resize_params *p, int64_t ih,
                                        int64_t iw, int64_t oh, int64_t ow, double sh, double sw) {
    rs_cache *c = ctx->scratch ? *ctx->scratch : NULL;
    if (c && c->ih == ih && c->iw == iw && c->oh == oh && c->ow == ow && c->sh == sh && c->sw == sw)
        return &c->plan;
    if (!c) {
        c = mopt_calloc(1, sizeof *c);
        if (!c) return NULL;
        if (ctx->scratch) *ctx->scratch = c;
    }
    mopt_free(c->mem);
    c->mem = NULL;
    c->ih = -1;
    bool linear = p->mode == REF_RESIZE_LINEAR;
    size_t n = (size_t)(oh + ow) * (linear ? 2 : 1);
    c->mem = mopt_malloc(n * (sizeof(int32_t) + (linear ? sizeof(float) : 0)));
    if (!c->mem) {
        if (!ctx->scratch) mopt_free(c);
        return NULL;
    }
    int32_t *ti = c->mem;
    float *tw = (float *)(ti + n);
    cpu_resize_plan *pl = &c->plan;
    memset(pl, 0, sizeof *pl);
    pl->ih = ih, pl->iw = iw, pl->oh = oh, pl->ow = ow, pl->linear = linear;
    pl->y0 = ti, pl->x0 = ti + oh;
    if (linear) {
        pl->y1 = ti + oh + ow, pl->x1 = ti + 2 * oh + ow;
        pl->wy = tw, pl->wx = tw + 2 * oh;
    }
    rs_axis(p, ih, oh, sh, ti, ti + oh + ow, tw, tw + oh);
    rs_axis(p, iw, ow, sw, ti + oh, ti + 2 * oh + ow, tw + 2 * oh, tw + 2 * oh + ow);
    if (!linear && ow == 2 * iw) {
        pl->x2 = true;
        for (int64_t j = 0; j < ow && pl->x2; j++)
            pl->x2 = pl->x0[j] == j / 2;
    }
    c->ih = ih, c->iw = iw, c->oh = oh, c->ow = ow, c->sh = sh, c->sw = sw;
    return pl;
}

static void rs_release_scratch(void *s) {
    rs_cache *c = s;
    if (c) mopt_free(c->mem);
    mopt_free(c);
}

/* One job of resize_run: planes (rs_planes) or channels-last rows of c
 * channels (rs_cl_rows). */
typedef struct rs_job {
    const cpu_kernels *k;
    const cpu_resize_plan *p;
    const float *x;
    float *y;
    int64_t c;
    bool failed;
} rs_job;

/* Planes [lo, hi). */
static void rs_planes(void *arg, int64_t lo, int64_t hi) {
    rs_job *j = arg;
    const cpu_resize_plan *p = j->p;
    float stack[2 * 1024], *work = stack;
    if (p->linear && p->ow > 1024) {
        work = mopt_malloc((size_t)p->ow * 2 * sizeof(float));
        if (!work) {
            j->failed = true; /* a benign race: any writer stores true */
            return;
        }
    }
    j->k->resize_f32(p, j->x + lo * p->ih * p->iw, j->y + lo * p->oh * p->ow, hi - lo, work);
    if (work != stack) mopt_free(work);
}

/* Output rows [lo, hi) of all N * oh, channels-last, nearest. */
static void rs_cl_rows(void *arg, int64_t lo, int64_t hi) {
    const rs_job *j = arg;
    const cpu_resize_plan *p = j->p;
    const int64_t c = j->c, orow = p->ow * c;
    const size_t bytes = (size_t)c * sizeof(float);
    for (int64_t r = lo; r < hi; r++) {
        int64_t n = r / p->oh, oy = r % p->oh;
        float *d = j->y + r * orow;
        if (r > lo && oy > 0 && p->y0[oy] == p->y0[oy - 1]) {
            memcpy(d, d - orow, (size_t)orow * sizeof(float));
            continue;
        }
        const float *srow = j->x + (n * p->ih + p->y0[oy]) * p->iw * c;
        for (int64_t ox = 0; ox < p->ow; ox++)
            memcpy(d + ox * c, srow + p->x0[ox] * c, bytes);
    }
}

static mopt_status resize_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ref_resize_params *p = ops_resize_kernel_params(ctx);
    const rs_state *s = ctx->state;
    int64_t od[IR_MAX_RANK];
    double sc[IR_MAX_RANK];
    if (s->declined || !rs_mode_ok(p) || rs_geometry(ctx, in, n_in, od, sc) != 1)
        return MOPT_ERR_UNSUPPORTED;
    const int64_t *xd = in[0].shape.dims;
    if (op_numel(&out[0]) == 0 || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    if (xd[2] > INT32_MAX || xd[3] > INT32_MAX) return MOPT_ERR_UNSUPPORTED;
    const cpu_resize_plan *pl = rs_tables(ctx, p, xd[2], xd[3], od[2], od[3], sc[2], sc[3]);
    if (!pl) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the resize tables");
    rs_job j = {s->k, pl, in[0].data, out[0].data, xd[1], false};
    /* channels-last: N * oh rows of ow * C floats; else N * C planes */
    const bool cl = ops_resize_channels_last(ctx);
    const int64_t n = cl ? xd[0] * od[2] : xd[0] * xd[1], per = cl ? od[3] * xd[1] : od[2] * od[3];
    cpu_parallel_for(ctx->threads, n, per >= 32768 ? 1 : 32768 / per, cl ? rs_cl_rows : rs_planes,
                     &j);
    if (!ctx->scratch) rs_release_scratch((void *)((char *)pl - offsetof(rs_cache, plan)));
    if (j.failed) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for a resize row");
    return MOPT_OK;
}

#define RS_TIER(TIER)                                                                              \
    static mopt_status resize_prepare_##TIER(const op_ctx *ctx, const op_tensor *in, int n_in,     \
                                             const op_tensor *out, int n_out, void **state) {      \
        return rs_prepare(#TIER, ctx, in, n_in, state);                                            \
    }                                                                                              \
    const op_impl ops_impl_cpu_resize_##TIER = {                                                   \
        "cpu-" #TIER, "cpu",      resize_supports,    resize_prepare_##TIER,                       \
        rs_release,   resize_run, rs_release_scratch, rs_variant};
RS_TIER(avx512)
RS_TIER(avx2)
RS_TIER(portable)
