/*
 * layout_cpu.c — the "cpu" backend for the layout pass's channels-last ops
 * (f32; lib/ops/layout.c, and ChannelsLastConcat/Split in movement.c):
 *  - ChannelsLastConcat / ChannelsLastSplit: a walk over blocks of pixels,
 *    each part copied as contiguous runs (memcpy of a part's channels per
 *    pixel when both sides are channels-last, of a channel's pixels when
 *    both are plain) or, when one side is plain and the other channels-last,
 *    transposed channel by channel over a block of 256 pixels (the plain
 *    side walked contiguously, the channels-last block kept in cache);
 *    pixels split over threads. A channels-last part of a plain big tensor
 *    (a Concat's input, a Split's output) is contiguous on both sides for
 *    a whole image: it goes to the kernels' blocked transpose instead. CPU time against the
 * reference, 1 thread, PP-OCRv4 det's concat of 4 x [1, 24, 160, 160]: channels-last parts into a
 * plain output 0.84x, plain parts into a channels-last output 0.63x; same-layout concats are
 * memcpy-bound either way (1.0x);
 *  - ChannelsLastGlobalAveragePool: kernels/cpu's reduce over [S, C] per
 *    image (vectorized along the channels);
 *  - ChannelsLastScale / ChannelsLastAffine: kernels/cpu's affine (or a
 *    scalar multiply) on the pixel rows, pixels split over threads.
 * Shapes the impls do not cover (empty tensors, inconsistent channel sums)
 * go to the reference run.
 */
#include <string.h>

#include "ops/cpu/ops_cpu.h"
#include "ops/layout.h"

#define GRAIN 32768   /* floats per thread below which splitting does not pay */
#define PIX_BLOCK 256 /* pixels per block of the concat/split walk */

static int64_t pixels(const ir_shape *s) {
    int64_t p = 1;
    for (int32_t i = 2; i < s->rank; i++)
        p *= s->dims[i];
    return p;
}

static int64_t grain_rows(int64_t len) { return len >= GRAIN ? 1 : GRAIN / (len > 0 ? len : 1); }

static bool all_f32(const op_tensor *t, int n) {
    for (int k = 0; k < n; k++)
        if (t[k].dtype != MOPT_DTYPE_F32) return false;
    return true;
}

/* ---- ChannelsLastConcat, ChannelsLastSplit ------------------------------- */

/* One input of the concat (output of the split): its data, channel count,
 * first channel in the big tensor, and layout. */
typedef struct cl_part {
    float *data;
    int64_t ch, off;
    bool cl;
    bool whole; /* channels-last with a plain big tensor: one transpose per image */
} cl_part;

typedef struct cl_job {
    const cpu_kernels *k;
    float *big; /* the concatenated tensor: Concat's output, Split's input */
    bool big_cl, split;
    int64_t C, S;
    int n;
    cl_part parts[32];
} cl_job;

/* Element (c, i) of a cnt x npix block: d[c * dcs + i * dis] = s[c * scs +
 * i * sis]; contiguous runs as memcpy, else a transposing loop. */
static void copy2d(float *d, int64_t dcs, int64_t dis, const float *s, int64_t scs, int64_t sis,
                   int64_t cnt, int64_t npix) {
    if (dis == 1 && sis == 1) {
        for (int64_t c = 0; c < cnt; c++)
            memcpy(d + c * dcs, s + c * scs, (size_t)npix * sizeof(float));
    } else if (dcs == 1 && scs == 1) {
        for (int64_t i = 0; i < npix; i++)
            memcpy(d + i * dis, s + i * sis, (size_t)cnt * sizeof(float));
    } else {
        /* channel by channel, so the plain side is walked contiguously: its
         * channel rows are S floats apart, often a multiple of 4 KiB, and
         * touching many at once thrashes one set of the L1 cache; the
         * channels-last side (npix rows of cnt floats) stays in cache */
        for (int64_t c = 0; c < cnt; c++)
            for (int64_t i = 0; i < npix; i++)
                d[c * dcs + i * dis] = s[c * scs + i * sis];
    }
}

/* Pixels [lo, hi) of all N * S. */
static void cl_pixels(void *arg, int64_t lo, int64_t hi) {
    const cl_job *j = arg;
    const int64_t C = j->C, S = j->S;
    /* plain parts of a plain big tensor: one run of pixels per channel */
    for (int64_t p = lo; !j->big_cl && p < hi;) {
        int64_t n = p / S, i0 = p % S;
        int64_t np = S - i0 < hi - p ? S - i0 : hi - p;
        for (int k = 0; k < j->n; k++) {
            const cl_part *q = &j->parts[k];
            if (q->cl) continue;
            float *q0 = q->data + n * q->ch * S + i0, *bk = j->big + (n * C + q->off) * S + i0;
            if (j->split)
                copy2d(q0, S, 1, bk, S, 1, q->ch, np);
            else
                copy2d(bk, S, 1, q0, S, 1, q->ch, np);
        }
        p += np;
    }
    for (int64_t p = lo; p < hi;) {
        int64_t n = p / S, i0 = p % S;
        int64_t np = S - i0 < hi - p ? S - i0 : hi - p;
        if (np > PIX_BLOCK) np = PIX_BLOCK;
        /* the big tensor at (n, channel 0, pixel i0): channel and pixel strides */
        float *b0 = j->big + (j->big_cl ? (n * S + i0) * C : n * C * S + i0);
        int64_t bcs = j->big_cl ? 1 : S, bis = j->big_cl ? C : 1;
        for (int k = 0; k < j->n; k++) {
            const cl_part *q = &j->parts[k];
            if ((!q->cl && !j->big_cl) || q->whole) continue; /* done above, or by cl_whole */
            float *q0 = q->data + (q->cl ? (n * S + i0) * q->ch : n * q->ch * S + i0);
            int64_t qcs = q->cl ? 1 : S, qis = q->cl ? q->ch : 1;
            float *bk = b0 + q->off * bcs;
            if (j->split)
                copy2d(q0, qcs, qis, bk, bcs, bis, q->ch, np);
            else
                copy2d(bk, bcs, bis, q0, qcs, qis, q->ch, np);
        }
        p += np;
    }
}

/* Units [lo, hi) of images x whole parts: a channels-last part [S, ch] and
 * its channels [ch, S] of a plain big tensor, which are contiguous in both:
 * the kernels' blocked transpose (8x8 register tiles) instead of the
 * channel-by-channel walk (YOLOv8's head: the box and class convs'
 * channels-last outputs concatenated into the plain tensor its Reshape
 * reads). */
static void cl_whole(void *arg, int64_t lo, int64_t hi) {
    const cl_job *j = arg;
    int n_whole = 0;
    for (int k = 0; k < j->n; k++)
        n_whole += j->parts[k].whole;
    for (int64_t u = lo; u < hi; u++) {
        int64_t n = u / n_whole, w = u % n_whole;
        int k = 0;
        for (;; k++)
            if (j->parts[k].whole && w-- == 0) break;
        const cl_part *q = &j->parts[k];
        uint32_t *cl = (uint32_t *)(void *)(q->data + n * j->S * q->ch);
        uint32_t *plain = (uint32_t *)(void *)(j->big + (n * j->C + q->off) * j->S);
        if (j->split) /* plain [ch, S] -> channels-last [S, ch] */
            j->k->transpose_x32(plain, cl, q->ch, j->S, 0, j->S);
        else /* channels-last [S, ch] -> plain [ch, S] */
            j->k->transpose_x32(cl, plain, j->S, q->ch, 0, q->ch);
    }
}

/* The parts' channel counts must add up to C (else the reference reports). */
static mopt_status cl_run(const op_ctx *ctx, cl_job *j, const ir_shape *big) {
    if (big->rank < 3 || j->n > 32) return MOPT_ERR_UNSUPPORTED;
    int64_t sum = 0;
    for (int k = 0; k < j->n; k++) {
        j->parts[k].off = sum;
        sum += j->parts[k].ch;
    }
    j->C = big->dims[1];
    j->S = pixels(big);
    if (sum != j->C) return MOPT_ERR_UNSUPPORTED;
    int64_t total = big->dims[0] * j->S;
    if (total == 0 || j->C == 0) return MOPT_OK;
    int n_whole = 0;
    for (int k = 0; k < j->n; k++) {
        j->parts[k].whole = j->parts[k].cl && !j->big_cl && j->parts[k].ch > 0;
        n_whole += j->parts[k].whole;
    }
    if (n_whole) cpu_parallel_for(ctx->threads, big->dims[0] * n_whole, 1, cl_whole, j);
    cpu_parallel_for(ctx->threads, total, grain_rows(j->C), cl_pixels, j);
    return MOPT_OK;
}

static bool clconcat_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out) {
    return n_in <= 32 && all_f32(in, n_in) && out[0].dtype == MOPT_DTYPE_F32;
}

static mopt_status clconcat_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const cl_params *p = ctx->params;
    cl_job j = {.k = ctx->state,
                .big = out[0].data,
                .big_cl = p->out_layout & 1,
                .split = false,
                .n = n_in};
    if (n_in > 32) return MOPT_ERR_UNSUPPORTED;
    for (int k = 0; k < n_in; k++) {
        if (in[k].shape.rank != out[0].shape.rank || pixels(&in[k].shape) != pixels(&out[0].shape))
            return MOPT_ERR_UNSUPPORTED;
        j.parts[k] =
            (cl_part){(float *)in[k].data, in[k].shape.dims[1], 0, (p->in_layout >> k) & 1};
    }
    return cl_run(ctx, &j, &out[0].shape);
}

OPS_CPU_IMPLS(clconcat)

static bool clsplit_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                             int n_out) {
    return n_out <= 32 && in[0].dtype == MOPT_DTYPE_F32 && all_f32(out, n_out);
}

static mopt_status clsplit_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const cl_params *p = ctx->params;
    cl_job j = {
        .k = ctx->state, .big = in[0].data, .big_cl = p->in_layout & 1, .split = true, .n = n_out};
    if (n_out > 32) return MOPT_ERR_UNSUPPORTED;
    for (int k = 0; k < n_out; k++) {
        if (out[k].shape.rank != in[0].shape.rank || pixels(&out[k].shape) != pixels(&in[0].shape))
            return MOPT_ERR_UNSUPPORTED;
        j.parts[k] = (cl_part){out[k].data, out[k].shape.dims[1], 0, (p->out_layout >> k) & 1};
    }
    return cl_run(ctx, &j, &in[0].shape);
}

OPS_CPU_IMPLS(clsplit)

/* ---- ChannelsLastGlobalAveragePool ----------------------------------------- */

static bool clgap_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    return in[0].dtype == MOPT_DTYPE_F32;
}

static mopt_status clgap_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const ir_shape *x = &in[0].shape;
    if (x->rank < 3 || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    /* each image: the mean over its pixel rows of C channels (blocked: each
     * block of 16 channels an image) */
    int64_t n, c;
    ops_clgap_rows(ctx, x, &n, &c);
    ops_cpu_reduce_rows(ctx->state, CPU_RED_MEAN, in[0].data, out[0].data, n, pixels(x), c,
                        ctx->threads);
    return MOPT_OK;
}

OPS_CPU_IMPLS(clgap)

/* ---- ChannelsLastScale, ChannelsLastAffine -------------------------------- */

/* Pixel rows of C floats; the per-channel vectors a (and b) of each image:
 * a + (image * a_batch), a NULL b means none; a_chan false: a is a scalar. */
typedef struct aff_job {
    const cpu_kernels *k;
    const float *x, *a, *b;
    float *y;
    int64_t C, S, a_batch;
    bool a_chan;
} aff_job;

static void aff_rows(void *arg, int64_t lo, int64_t hi) {
    const aff_job *j = arg;
    for (int64_t p = lo; p < hi;) {
        int64_t n = p / j->S, np = (n + 1) * j->S - p < hi - p ? (n + 1) * j->S - p : hi - p;
        const float *a = j->a + n * j->a_batch;
        if (j->a_chan)
            j->k->affine_f32(j->x + p * j->C, a, j->b, j->y + p * j->C, np, j->C, false);
        else
            j->k->binary_f32(CPU_BIN_MUL, j->x + p * j->C, 1, a, 0, j->y + p * j->C, np * j->C);
        p += np;
    }
}

static mopt_status aff_start(const op_ctx *ctx, aff_job *j, const op_tensor *x) {
    if (x->shape.rank < 3 || op_numel(x) == 0) return MOPT_ERR_UNSUPPORTED;
    j->k = ctx->state;
    j->x = x->data;
    j->C = x->shape.dims[1];
    j->S = pixels(&x->shape);
    cpu_parallel_for(ctx->threads, x->shape.dims[0] * j->S, grain_rows(j->C), aff_rows, j);
    return MOPT_OK;
}

static bool clscale_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                             int n_out) {
    return all_f32(in, 2);
}

static mopt_status clscale_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const ir_shape *x = &in[0].shape, *s = &in[1].shape;
    if (s->rank != x->rank || x->rank < 3) return MOPT_ERR_UNSUPPORTED;
    bool s_batch = s->dims[0] != 1, s_chan = s->dims[1] != 1;
    if ((s_batch && s->dims[0] != x->dims[0]) || (s_chan && s->dims[1] != x->dims[1]) ||
        op_numel(&in[1]) != s->dims[0] * s->dims[1])
        return MOPT_ERR_UNSUPPORTED; /* the reference reports it */
    aff_job j = {.a = in[1].data, .y = out[0].data, .a_chan = s_chan};
    j.a_batch = s_batch ? (s_chan ? x->dims[1] : 1) : 0;
    return aff_start(ctx, &j, &in[0]);
}

OPS_CPU_IMPLS(clscale)

static bool claffine_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out) {
    return all_f32(in, 3);
}

static mopt_status claffine_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    const ir_shape *x = &in[0].shape;
    if (x->rank < 3 || op_numel(&in[1]) != x->dims[1] || op_numel(&in[2]) != x->dims[1])
        return MOPT_ERR_UNSUPPORTED;
    aff_job j = {.a = in[1].data, .b = in[2].data, .y = out[0].data, .a_chan = true};
    return aff_start(ctx, &j, &in[0]);
}

OPS_CPU_IMPLS(claffine)
