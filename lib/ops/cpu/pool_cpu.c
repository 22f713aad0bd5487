/*
 * pool_cpu.c — the "cpu" backend for GlobalAveragePool on f32: X [N, C,
 * spatial...] is N*C rows of prod(spatial) floats, each averaged by
 * kernels/cpu's reduce (float accumulation, as ReduceMean's cpu impl), rows
 * split over threads. Empty tensors use the reference run. GlobalMaxPool
 * stays on the reference: its reference skips NaN where the cpu max
 * propagates it.
 *
 * mopt.ChannelsLastMaxPool (the layout pass's; channels-last or blocked
 * nChw16c X and Y) over 2 spatial axes: kernels/cpu's maxpool, vectorized
 * along the channels contiguous in each pixel, output rows split over
 * threads; the same result as the reference bit for bit (the taps in its
 * order, NaN skipped alike). Other MaxPools (plain layout: no channel
 * vectors; 1 or 3 spatial axes; the Indices output) go to oneDNN.
 */
#include "ops/cpu/ops_cpu.h"

static bool gpool_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    return in[0].dtype == MOPT_DTYPE_F32;
}

static mopt_status gpool_run_op(const op_ctx *ctx, const op_tensor *in, op_tensor *out,
                                cpu_reduce_op op) {
    const ir_shape *x = &in[0].shape;
    if (x->rank < 3 || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    int64_t red = 1;
    for (int32_t a = 2; a < x->rank; a++)
        red *= x->dims[a];
    ops_cpu_reduce_rows(ctx->state, op, in[0].data, out[0].data, x->dims[0] * x->dims[1], red, 1,
                        ctx->threads);
    return MOPT_OK;
}

static mopt_status gavgpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    return gpool_run_op(ctx, in, out, CPU_RED_MEAN);
}

#define gavgpool_supports gpool_supports
OPS_CPU_IMPLS(gavgpool)

/* ---- mopt.ChannelsLastMaxPool ---------------------------------------------- */

#define MP_GRAIN 16384 /* output floats per thread below which splitting does not pay */

static bool clmaxpool_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out) {
    bool indices = n_out > 1 && ctx->node && ctx->node->outputs[1] >= 0;
    return in[0].dtype == MOPT_DTYPE_F32 && !indices && ops_pool_channels_last(ctx) &&
           (in[0].shape.rank < 0 || in[0].shape.rank == 4);
}

typedef struct mp_job {
    const cpu_kernels *k;
    const cpu_maxpool_plan *p;
    const float *x;
    float *y;
} mp_job;

static void mp_rows(void *arg, int64_t lo, int64_t hi) {
    const mp_job *j = arg;
    j->k->maxpool_f32(j->p, j->x, j->y, lo, hi);
}

static mopt_status clmaxpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    const ir_shape *x = &in[0].shape;
    if (x->rank != 4 || op_numel(&in[0]) == 0 || op_numel(&out[0]) == 0)
        return MOPT_ERR_UNSUPPORTED;
    ref_pool_params g;
    mopt_status st = ops_pool_geometry(ctx, x, &out[0].shape, &g);
    if (st) return st;
    const bool blk = ops_pool_blocked(ctx);
    const int64_t n = x->dims[0], c = x->dims[1];
    if (blk && c % 16) return MOPT_ERR_UNSUPPORTED;
    const int32_t h = REF_WIN_MAX - 2, w = REF_WIN_MAX - 1; /* the spatial axes in g */
    cpu_maxpool_plan p = {.h = g.in[h],
                          .w = g.in[w],
                          .c = blk ? 16 : c,
                          .oh = g.out[h],
                          .ow = g.out[w],
                          .kh = g.k[h],
                          .kw = g.k[w],
                          .sh = g.stride[h],
                          .sw = g.stride[w],
                          .dh = g.dilation[h],
                          .dw = g.dilation[w],
                          .pt = g.pad[h],
                          .pl = g.pad[w]};
    const int64_t images = blk ? n * (c / 16) : n, rows = images * p.oh;
    const int64_t per = p.ow * p.c > 0 ? p.ow * p.c : 1;
    mp_job j = {.k = ctx->state, .p = &p, .x = in[0].data, .y = out[0].data};
    cpu_parallel_for(ctx->threads, rows, per >= MP_GRAIN ? 1 : MP_GRAIN / per, mp_rows, &j);
    return MOPT_OK;
}

OPS_CPU_IMPLS(clmaxpool)
