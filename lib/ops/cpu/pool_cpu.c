/*
 * pool_cpu.c — the "cpu" backend for GlobalAveragePool on f32: X [N, C,
 * spatial...] is N*C rows of prod(spatial) floats, each averaged by
 * kernels/cpu's reduce (float accumulation, as ReduceMean's cpu impl), rows
 * split over threads. Empty tensors use the reference run. GlobalMaxPool
 * stays on the reference: its reference skips NaN where the cpu max
 * propagates it.
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
