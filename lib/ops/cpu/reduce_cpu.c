/*
 * reduce_cpu.c — the "cpu" backend for ReduceSum, ReduceMean, ReduceMax and
 * ReduceMin on f32 when the reduced axes (ignoring those of size 1) form one
 * contiguous block: x is then [outer, red, inner] and kernels/cpu reduces
 * rows (inner == 1) or folds rows (inner > 1), outer split over threads.
 * Scattered axes, empty tensors and no-op reductions use the reference run.
 */
#include <string.h>

#include "ops/cpu/ops_cpu.h"
#include "ops/reduce.h"

#define GRAIN 32768

/* The kernels/cpu op of a node's params; false when not covered. */
static bool red_op_of(const op_ctx *ctx, cpu_reduce_op *op) {
    switch (((const reduce_params *)ctx->params)->op) {
    case REF_REDUCE_SUM: *op = CPU_RED_SUM; return true;
    case REF_REDUCE_MEAN: *op = CPU_RED_MEAN; return true;
    case REF_REDUCE_MAX: *op = CPU_RED_MAX; return true;
    case REF_REDUCE_MIN: *op = CPU_RED_MIN; return true;
    default: return false;
    }
}

static bool reduce_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    cpu_reduce_op op;
    return red_op_of(ctx, &op) && in[0].dtype == MOPT_DTYPE_F32;
}

typedef struct red_job {
    const cpu_kernels *k;
    cpu_reduce_op op;
    const float *x;
    float *y;
    int64_t red, inner;
} red_job;

static void red_rows(void *arg, int64_t lo, int64_t hi) {
    const red_job *j = arg;
    j->k->reduce_f32(j->op, j->x + lo * j->red * j->inner, j->y + lo * j->inner, hi - lo, j->red,
                     j->inner);
}

void ops_cpu_reduce_rows(const cpu_kernels *k, cpu_reduce_op op, const float *x, float *y,
                         int64_t outer, int64_t red, int64_t inner, int threads) {
    red_job j = {k, op, x, y, red, inner};
    int64_t per = red * inner > 0 ? red * inner : 1;
    cpu_parallel_for(threads, outer, per >= GRAIN ? 1 : GRAIN / per, red_rows, &j);
}

static mopt_status reduce_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const ir_shape *x = &in[0].shape;
    cpu_reduce_op op;
    uint8_t mask[IR_MAX_RANK];
    bool noop;
    mopt_status st;
    if (!red_op_of(ctx, &op) || x->rank > IR_MAX_RANK ||
        ops_reduce_mask(ctx, in, n_in, x->rank, mask, &noop, &st) != 1 || noop ||
        op_numel(&in[0]) == 0)
        return MOPT_ERR_UNSUPPORTED;
    int32_t first = -1, last = -1;
    for (int32_t a = 0; a < x->rank; a++) {
        if (!mask[a] || x->dims[a] == 1) continue;
        if (first < 0) first = a;
        last = a;
    }
    int64_t outer = 1, red = 1, inner = 1;
    for (int32_t a = 0; a < x->rank; a++) {
        bool reduced = mask[a] && x->dims[a] != 1;
        if (first >= 0 && a > first && a < last && !reduced && x->dims[a] != 1)
            return MOPT_ERR_UNSUPPORTED; /* a kept axis in between */
        if (reduced)
            red *= x->dims[a];
        else if (first < 0 || a < first)
            outer *= x->dims[a];
        else
            inner *= x->dims[a];
    }
    ops_cpu_reduce_rows(ctx->state, op, in[0].data, out[0].data, outer, red, inner, ctx->threads);
    return MOPT_OK;
}

OPS_CPU_IMPLS(reduce)
