/*
 * pool_cpu.c — the "cpu" backend for GlobalAveragePool on f32: X [N, C,
 * spatial...] is N*C rows of prod(spatial) floats, each averaged by
 * kernels/cpu's reduce (float accumulation, as ReduceMean's cpu impl), rows
 * split over threads. Empty tensors use the reference run. GlobalMaxPool
 * stays on the reference: its reference skips NaN where the cpu max
 * propagates it.
 */
#include "ops/cpu/ops_cpu.h"

#define GRAIN 32768

typedef struct gpool_job {
    const cpu_kernels *k;
    cpu_reduce_op op;
    const float *x;
    float *y;
    int64_t red;
} gpool_job;

static void gpool_rows(void *arg, int64_t lo, int64_t hi) {
    const gpool_job *j = arg;
    j->k->reduce_f32(j->op, j->x + lo * j->red, j->y + lo, hi - lo, j->red, 1);
}

static bool gpool_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out) {
    return in[0].dtype == MOPT_DTYPE_F32;
}

static mopt_status gpool_run_op(const op_ctx *ctx, const op_tensor *in, op_tensor *out,
                                cpu_reduce_op op) {
    const ir_shape *x = &in[0].shape;
    if (x->rank < 3 || op_numel(&in[0]) == 0) return MOPT_ERR_UNSUPPORTED;
    gpool_job j = {.k = ctx->state, .op = op, .x = in[0].data, .y = out[0].data, .red = 1};
    for (int32_t a = 2; a < x->rank; a++)
        j.red *= x->dims[a];
    int64_t rows = x->dims[0] * x->dims[1];
    cpu_parallel_for(ctx->threads, rows, j.red >= GRAIN ? 1 : GRAIN / j.red, gpool_rows, &j);
    return MOPT_OK;
}

static mopt_status gavgpool_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    return gpool_run_op(ctx, in, out, CPU_RED_MEAN);
}

#define gavgpool_supports gpool_supports
OPS_CPU_IMPLS(gavgpool)
