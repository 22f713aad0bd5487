/*
 * linalg.c — the "linalg" operator family: linear algebra on batches of
 * matrices: Det ([..., M, M] f32, LU in double). Math in
 * kernels/ref/linalg.c.
 */
#include "core/alloc.h"
#include "kernels/ref/ref_linalg.h"
#include "kernels/ref/ref_logic.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

/* ---- Det ------------------------------------------------------------------------------- */

static mopt_status det_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    mopt_status st = op_expect_f32(ctx, &in[0], 0);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    const ir_shape *s = &in[0].shape;
    if (s->rank < 0) {
        ir_shape_set_unknown(&out[0].shape);
        return MOPT_OK;
    }
    if (s->rank < 2 || (s->syms[s->rank - 1] == 0 && s->syms[s->rank - 2] == 0 &&
                        s->dims[s->rank - 1] != s->dims[s->rank - 2]))
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must be [..., M, M]");
    out[0].shape = *s;
    out[0].shape.rank -= 2;
    return MOPT_OK;
}

static mopt_status det_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    int64_t m = in[0].shape.dims[in[0].shape.rank - 1], n = op_numel(&in[0]);
    int64_t count = op_numel(&out[0]);
    /* no matrices: nothing to do (and m * m, unbounded by n then, could be
     * huge: a [0, 1e5, 1e5] input asked for 80 GB of scratch) */
    if (count == 0) return MOPT_OK;
    double *x = mopt_malloc((size_t)(n + m * m + count + 1) * sizeof(double));
    if (!x) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    double *scratch = x + n, *y = scratch + m * m;
    ref_cast(MOPT_DTYPE_F32, in[0].data, MOPT_DTYPE_F64, x, n);
    ref_det(count, m, x, y, scratch);
    ref_cast(MOPT_DTYPE_F64, y, MOPT_DTYPE_F32, out[0].data, count);
    mopt_free(x);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"Det", "", 1, 1, 1, 1, det_infer, det_run, .bridge = &ops_bridge_float},
};

OP_FAMILY(linalg, k_ops)
