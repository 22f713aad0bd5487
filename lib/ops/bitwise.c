/*
 * bitwise.c — the "bitwise" operator family: BitShift (direction LEFT or
 * RIGHT; unsigned types, signed too from opset 26), BitwiseAnd, BitwiseOr, BitwiseXor (numpy
 * broadcasting, every integer type) and BitwiseNot. Math in
 * kernels/ref/bitwise.c.
 */
#include <string.h>

#include "kernels/ref/ref_bitwise.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static const mopt_dtype k_uint[] = {MOPT_DTYPE_U8, MOPT_DTYPE_U16, MOPT_DTYPE_U32, MOPT_DTYPE_U64};
static const mopt_dtype k_int[] = {MOPT_DTYPE_U8, MOPT_DTYPE_U16, MOPT_DTYPE_U32, MOPT_DTYPE_U64,
                                   MOPT_DTYPE_I8, MOPT_DTYPE_I16, MOPT_DTYPE_I32, MOPT_DTYPE_I64};

/* params: the kernel op (BitShift's direction resolved) */
typedef struct bitwise_params {
    ref_bitop op;
} bitwise_params;

static const op_name_value k_bit_ops[] = {
    {"BitwiseAnd", REF_BIT_AND}, {"BitwiseOr", REF_BIT_OR}, {"BitwiseXor", REF_BIT_XOR}};

/* BitShift's direction attribute */
static const op_name_value k_directions[] = {{"LEFT", REF_BIT_SHL}, {"RIGHT", REF_BIT_SHR}};

static mopt_status binary_parse(const op_ctx *ctx, void *params) {
    bitwise_params *p = params;
    int op;
    if (!op_name_lookup(k_bit_ops, OP_COUNT(k_bit_ops), ctx->node->op_type, &op) &&
        !op_name_lookup(k_directions, OP_COUNT(k_directions),
                        ir_node_attr_string(ctx->node, "direction", ""), &op))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "attribute direction must be LEFT or RIGHT");
    p->op = (ref_bitop)op;
    return MOPT_OK;
}

static mopt_status binary_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    (void)n_in, (void)n_out;
    ref_bitop op = ((const bitwise_params *)ctx->params)->op;
    bool shift = op == REF_BIT_SHL || op == REF_BIT_SHR;
    mopt_status st;
    for (int k = 0; k < 2; k++)
        if ((st = op_expect_dtype(ctx, &in[k], k, shift && ctx->opset < 26 ? k_uint : k_int,
                                  shift && ctx->opset < 26 ? 4 : 8)))
            return st;
    if ((st = op_same_dtype(ctx, in, 0, 1))) return st;
    out[0].dtype = in[0].dtype != MOPT_DTYPE_UNDEFINED ? in[0].dtype : in[1].dtype;
    return op_broadcast(ctx, &in[0].shape, &in[1].shape, &out[0].shape);
}

static mopt_status binary_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    (void)n_in, (void)n_out;
    ref_bitop op = ((const bitwise_params *)ctx->params)->op;
    ref_row2_fn row = ref_bitwise_row(op, in[0].dtype);
    if (!row)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK];
    op_broadcast_strides(&in[0].shape, &out[0].shape, sa);
    op_broadcast_strides(&in[1].shape, &out[0].shape, sb);
    size_t es = mopt_dtype_size(in[0].dtype);
    ref_broadcast2(row, out[0].shape.rank, out[0].shape.dims, in[0].data, es, sa, in[1].data, es,
                   sb, out[0].data, es);
    return MOPT_OK;
}

static mopt_status not_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    (void)n_in, (void)n_out;
    mopt_status st = op_expect_dtype(ctx, &in[0], 0, k_int, 8);
    if (st) return st;
    out[0].dtype = in[0].dtype;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status not_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_in, (void)n_out;
    if (ref_bitwise_not(in[0].dtype, in[0].data, out[0].data, op_numel(&out[0])))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

#define BITWISE(name)                                                                              \
    {                                                                                              \
        name, "", 2, 2, 1, 1, binary_infer, binary_run, NULL,                                      \
            OP_PARAMS(bitwise_params, binary_parse), .bridge = &ops_bridge_float                   \
    }

static const op_def k_ops[] = {
    BITWISE("BitShift"),
    BITWISE("BitwiseAnd"),
    BITWISE("BitwiseOr"),
    BITWISE("BitwiseXor"),
    {"BitwiseNot", "", 1, 1, 1, 1, not_infer, not_run, NULL, .bridge = &ops_bridge_float},
};

OP_FAMILY(bitwise, k_ops)
