/*
 * loss.c — the "loss" operator family: NegativeLogLikelihoodLoss and
 * SoftmaxCrossEntropyLoss (opset 12/13; reduction none/sum/mean,
 * ignore_index, optional class weights, SCE's optional log_prob output).
 * Inputs [N, C, d1...] f32 (f16/bf16/f64 through the dtype bridge), targets
 * int32/int64 [N, d1...]. Math in kernels/ref/loss.c.
 */
#include <inttypes.h>
#include <string.h>

#include "kernels/ref/ref_loss.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static int reduction_of(const op_ctx *ctx, ref_reduction *r) {
    static const op_name_value k_reductions[] = {
        {"none", REF_RED_NONE}, {"sum", REF_RED_SUM}, {"mean", REF_RED_MEAN}};
    int v;
    if (!op_name_lookup(k_reductions, OP_COUNT(k_reductions),
                        ir_node_attr_string(ctx->node, "reduction", "mean"), &v))
        return -1;
    *r = (ref_reduction)v;
    return 0;
}

typedef struct loss_params {
    bool sce; /* SoftmaxCrossEntropyLoss; else NegativeLogLikelihoodLoss */
    ref_reduction reduction;
    bool has_ignore;
    int64_t ignore_index;
} loss_params;

static mopt_status loss_parse(const op_ctx *ctx, void *params) {
    loss_params *p = params;
    p->sce = strcmp(ctx->node->op_type, "SoftmaxCrossEntropyLoss") == 0;
    if (reduction_of(ctx, &p->reduction))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "reduction must be none, sum or mean");
    p->has_ignore = op_attr_int_opt(ctx, "ignore_index", &p->ignore_index);
    return MOPT_OK;
}

static mopt_status loss_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    mopt_status st;
    if ((st = op_expect_f32(ctx, &in[0], 0)) || (st = op_expect_index(ctx, &in[1], 1))) return st;
    if (op_has_input(in, n_in, 2) &&
        ((st = op_expect_f32(ctx, &in[2], 2)) || (st = op_same_dtype(ctx, in, 0, 2))))
        return st;
    ref_reduction r = ((const loss_params *)ctx->params)->reduction;
    const ir_shape *x = &in[0].shape, *t = &in[1].shape;
    if (x->rank >= 0 && x->rank < 2)
        return op_fail(ctx, MOPT_ERR_SHAPE, "input must have rank >= 2 ([N, C, ...])");
    if (x->rank >= 0 && t->rank >= 0) {
        bool ok = t->rank == x->rank - 1;
        for (int32_t a = 0; ok && a < t->rank; a++) {
            int32_t xa = a == 0 ? 0 : a + 1;
            if (x->syms[xa] == 0 && t->syms[a] == 0 && x->dims[xa] != t->dims[a]) ok = false;
        }
        if (!ok) {
            char a[IR_SHAPE_STR_CAP], b[IR_SHAPE_STR_CAP];
            return op_fail(ctx, MOPT_ERR_SHAPE, "target %s does not fit input %s [N, C, ...]",
                           op_shape_str(ctx, t, b), op_shape_str(ctx, x, a));
        }
    }
    out[0].dtype = in[0].dtype;
    if (r == REF_RED_NONE)
        out[0].shape = *t;
    else
        ir_shape_set_scalar(&out[0].shape);
    if (n_out > 1) {
        out[1].dtype = in[0].dtype;
        out[1].shape = *x;
    }
    return MOPT_OK;
}

static mopt_status loss_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const loss_params *lpar = ctx->params;
    bool sce = lpar->sce;
    ref_nll_params p;
    memset(&p, 0, sizeof p);
    p.reduction = lpar->reduction;
    p.has_ignore = lpar->has_ignore;
    p.ignore_index = lpar->ignore_index;
    const ir_shape *x = &in[0].shape;
    p.n = x->dims[0];
    p.c = x->dims[1];
    p.d = 1;
    for (int32_t a = 2; a < x->rank; a++)
        p.d *= x->dims[a];
    int64_t nt = op_numel(&in[1]), nx = op_numel(&in[0]);
    if (op_has_input(in, n_in, 2) && op_numel(&in[2]) != p.c)
        return op_fail(ctx, MOPT_ERR_SHAPE, "weight must have C = %" PRId64 " values", p.c);
    int64_t *t = op_work_get(ctx, 0, (size_t)(nt > 0 ? nt : 1) * sizeof(int64_t));
    float *lp = NULL;
    if (sce)
        lp = n_out > 1 ? out[1].data
                       : op_work_get(ctx, 1, (size_t)(nx > 0 ? nx : 1) * sizeof(float));
    if (!t || (sce && !lp)) {
        op_work_put(ctx, t);
        if (sce && n_out <= 1) op_work_put(ctx, lp);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory");
    }
    for (int64_t i = 0; i < nt; i++)
        t[i] = in[1].dtype == MOPT_DTYPE_I64 ? ((const int64_t *)in[1].data)[i]
                                             : ((const int32_t *)in[1].data)[i];
    const float *xs = in[0].data;
    if (sce) {
        ref_log_softmax_axis1(p.n, p.c, p.d, in[0].data, lp);
        xs = lp;
    }
    int64_t bad = 0;
    int rc =
        ref_nll_loss(&p, xs, t, op_has_input(in, n_in, 2) ? in[2].data : NULL, out[0].data, &bad);
    op_work_put(ctx, t);
    if (sce && n_out <= 1) op_work_put(ctx, lp);
    if (rc)
        return op_fail(ctx, MOPT_ERR_INVALID_ARGUMENT,
                       "target %" PRId64 " is outside [0, %" PRId64 ") and not ignore_index", bad,
                       p.c);
    return MOPT_OK;
}

static const op_def k_ops[] = {
    {"NegativeLogLikelihoodLoss", "", 2, 3, 1, 1, loss_infer, loss_run, NULL,
     OP_PARAMS(loss_params, loss_parse), .bridge = &ops_bridge_float},
    {"SoftmaxCrossEntropyLoss", "", 2, 3, 1, 2, loss_infer, loss_run, NULL,
     OP_PARAMS(loss_params, loss_parse), .bridge = &ops_bridge_float},
};

OP_FAMILY(loss, k_ops)
