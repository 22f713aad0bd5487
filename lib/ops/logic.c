/*
 * logic.c — the "logic" operator family: comparisons (Equal Less Greater
 * LessOrEqual GreaterOrEqual) and boolean ops (And Or Xor Not) with numpy
 * broadcasting, Where (3-way broadcast, any dtype by element size), IsNaN,
 * IsInf, Cast, CastLike and BitCast (the same bytes as another type).
 *
 * Attributes (and which op of a shared row a node is) are parsed once into
 * params; inference checks types and broadcasts shapes; run calls
 * kernels/ref/logic.c. Cast semantics (rounding, saturation, NaN) are
 * documented in ref_logic.h.
 */
#include <inttypes.h>
#include <string.h>

#include "core/float8.h"
#include "kernels/ref/ref_logic.h"
#include "ops/bridge.h"
#include "ops/op_common.h"
#include "ops/ops.h"

static const mopt_dtype k_cmp_types[] = {
    MOPT_DTYPE_F32, MOPT_DTYPE_F64, MOPT_DTYPE_I8,  MOPT_DTYPE_U8,  MOPT_DTYPE_I16, MOPT_DTYPE_U16,
    MOPT_DTYPE_I32, MOPT_DTYPE_U32, MOPT_DTYPE_I64, MOPT_DTYPE_U64, MOPT_DTYPE_BOOL};
static const mopt_dtype k_bool_type[] = {MOPT_DTYPE_BOOL};

static mopt_status check_count(const op_ctx *ctx, int n_in, int want) {
    if (n_in != want)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "takes %d input%s, not %d", want,
                       want == 1 ? "" : "s", n_in);
    return MOPT_OK;
}

/* ---- comparisons and boolean binary ops --------------------------------- */

typedef struct cmp_desc {
    const char *op_type;
    bool logical; /* And/Or/Xor: bool inputs */
    int op;       /* ref_cmpop or ref_boolop */
} cmp_desc;

static const cmp_desc k_cmps[] = {
    {"Equal", false, REF_CMP_EQ},
    {"Less", false, REF_CMP_LT},
    {"Greater", false, REF_CMP_GT},
    {"LessOrEqual", false, REF_CMP_LE},
    {"GreaterOrEqual", false, REF_CMP_GE},
    {"And", true, REF_BOOL_AND},
    {"Or", true, REF_BOOL_OR},
    {"Xor", true, REF_BOOL_XOR},
};

/* params: the node's row of k_cmps */
typedef struct cmp_params {
    const cmp_desc *d;
} cmp_params;

static mopt_status parse_cmp(const op_ctx *ctx, void *params) {
    cmp_params *p = params;
    p->d = OP_ROW(k_cmps, ctx->node->op_type);
    if (!p->d) return op_fail(ctx, MOPT_ERR_INTERNAL, "not a comparison op");
    return MOPT_OK;
}

static mopt_status infer_cmp(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    const cmp_desc *d = ((const cmp_params *)ctx->params)->d;
    mopt_status st;
    if ((st = check_count(ctx, n_in, 2)) || (st = op_require_inputs(ctx, in, 2))) return st;
    const mopt_dtype *allowed = d->logical ? k_bool_type : k_cmp_types;
    int n_allowed = d->logical ? OP_COUNT(k_bool_type) : OP_COUNT(k_cmp_types);
    for (int k = 0; k < 2; k++)
        if ((st = op_expect_dtype(ctx, &in[k], k, allowed, n_allowed))) return st;
    if ((st = op_same_dtype(ctx, in, 0, 1))) return st;
    ir_shape shape;
    if ((st = op_broadcast(ctx, &in[0].shape, &in[1].shape, &shape))) return st;
    op_set_outputs(out, n_out, MOPT_DTYPE_BOOL, &shape);
    return MOPT_OK;
}

static mopt_status run_cmp(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    const cmp_desc *d = ((const cmp_params *)ctx->params)->d;
    if (n_in < 2 || n_out < 1) return op_fail(ctx, MOPT_ERR_INTERNAL, "bad call");
    ref_row2_fn row = d->logical ? ref_logical_row((ref_boolop)d->op)
                                 : ref_compare_row((ref_cmpop)d->op, in[0].dtype);
    if (!row)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    const ir_shape *ys = &out[0].shape;
    int64_t sa[IR_MAX_RANK], sb[IR_MAX_RANK];
    op_broadcast_strides(&in[0].shape, ys, sa);
    op_broadcast_strides(&in[1].shape, ys, sb);
    size_t esz = mopt_dtype_size(in[0].dtype);
    ref_broadcast2(row, ys->rank, ys->dims, in[0].data, esz, sa, in[1].data, esz, sb, out[0].data,
                   1);
    return MOPT_OK;
}

/* ---- Not, IsNaN, IsInf -------------------------------------------------- */

typedef enum bool_unary_kind { BU_NOT, BU_ISNAN, BU_ISINF } bool_unary_kind;

typedef struct bool_unary_params {
    bool_unary_kind kind;
    bool pos, neg; /* IsInf: detect_positive, detect_negative */
} bool_unary_params;

static mopt_status parse_bool_unary(const op_ctx *ctx, void *params) {
    bool_unary_params *p = params;
    const char *t = ctx->node->op_type;
    p->kind = strcmp(t, "Not") == 0 ? BU_NOT : strcmp(t, "IsNaN") == 0 ? BU_ISNAN : BU_ISINF;
    if (p->kind == BU_ISINF) {
        p->pos = ir_node_attr_int(ctx->node, "detect_positive", 1) != 0;
        p->neg = ir_node_attr_int(ctx->node, "detect_negative", 1) != 0;
    }
    return MOPT_OK;
}

static mopt_status infer_bool_unary(const op_ctx *ctx, const op_tensor *in, int n_in,
                                    op_tensor *out, int n_out) {
    mopt_status st;
    if ((st = check_count(ctx, n_in, 1)) || (st = op_require_inputs(ctx, in, 1))) return st;
    if (((const bool_unary_params *)ctx->params)->kind == BU_NOT)
        st = op_expect_dtype(ctx, &in[0], 0, k_bool_type, OP_COUNT(k_bool_type));
    else
        st = op_expect_float(ctx, &in[0], 0);
    if (st) return st;
    op_set_outputs(out, n_out, MOPT_DTYPE_BOOL, &in[0].shape);
    return MOPT_OK;
}

static mopt_status run_bool_unary(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                  int n_out) {
    const bool_unary_params *p = ctx->params;
    int64_t n = op_numel(&in[0]);
    int rc = 0;
    if (p->kind == BU_NOT) {
        ref_not(in[0].data, out[0].data, n);
    } else if (p->kind == BU_ISNAN) {
        rc = ref_isnan(in[0].dtype, in[0].data, out[0].data, n);
    } else {
        rc = ref_isinf(in[0].dtype, in[0].data, out[0].data, n, p->pos, p->neg);
    }
    if (rc)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "not implemented for %s",
                       mopt_dtype_name(in[0].dtype));
    return MOPT_OK;
}

/* ---- Where -------------------------------------------------------------- */

static mopt_status infer_where(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    mopt_status st;
    if ((st = check_count(ctx, n_in, 3)) || (st = op_require_inputs(ctx, in, 3))) return st;
    if ((st = op_expect_dtype(ctx, &in[0], 0, k_bool_type, OP_COUNT(k_bool_type)))) return st;
    if ((st = op_same_dtype(ctx, in, 1, 2))) return st;
    mopt_dtype t = in[1].dtype != MOPT_DTYPE_UNDEFINED ? in[1].dtype : in[2].dtype;
    if (t != MOPT_DTYPE_UNDEFINED && !ref_where_row(mopt_dtype_size(t)))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "type %s is not supported", mopt_dtype_name(t));
    ir_shape shape;
    if ((st = op_broadcast(ctx, &in[0].shape, &in[1].shape, &shape)) ||
        (st = op_broadcast(ctx, &shape, &in[2].shape, &shape)))
        return st;
    op_set_outputs(out, n_out, t, &shape);
    return MOPT_OK;
}

static mopt_status run_where(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             int n_out) {
    if (n_in < 3 || n_out < 1) return op_fail(ctx, MOPT_ERR_INTERNAL, "bad call");
    size_t esz = mopt_dtype_size(out[0].dtype);
    ref_row3_fn row = ref_where_row(esz);
    if (!row)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "type %s is not supported",
                       mopt_dtype_name(out[0].dtype));
    const ir_shape *ys = &out[0].shape;
    int64_t sc[IR_MAX_RANK], sx[IR_MAX_RANK], sy[IR_MAX_RANK];
    op_broadcast_strides(&in[0].shape, ys, sc);
    op_broadcast_strides(&in[1].shape, ys, sx);
    op_broadcast_strides(&in[2].shape, ys, sy);
    ref_broadcast3(row, ys->rank, ys->dims, in[0].data, 1, sc, in[1].data, esz, sx, in[2].data, esz,
                   sy, out[0].data, esz);
    return MOPT_OK;
}

/* ---- Cast, CastLike ----------------------------------------------------- */

typedef struct cast_params {
    bool like;      /* CastLike: the target is input 1's type */
    mopt_dtype to;  /* Cast */
    bool saturate;  /* float8 targets: overflow to the largest value (default) */
    int round_mode; /* f8e8m0 targets: F8E8M0_UP (default), _DOWN, _NEAREST */
} cast_params;

/* The target type: Cast's `to` attribute (TensorProto.DataType values equal
 * mopt_dtype values); CastLike's comes from its second input. */
static mopt_status parse_cast(const op_ctx *ctx, void *params) {
    cast_params *p = params;
    const ir_attr *sat = ir_node_attr(ctx->node, "saturate");
    if (sat && (sat->type != IR_ATTR_INT || (sat->i != 0 && sat->i != 1)))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute 'saturate' must be the integer 0 or 1");
    p->saturate = !sat || sat->i != 0;
    static const op_name_value k_round[] = {
        {"up", F8E8M0_UP}, {"down", F8E8M0_DOWN}, {"nearest", F8E8M0_NEAREST}};
    const char *rm = ir_node_attr_string(ctx->node, "round_mode", "up");
    if (!op_name_lookup(k_round, OP_COUNT(k_round), rm, &p->round_mode))
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL,
                       "attribute 'round_mode' is '%s', not 'up', 'down' or 'nearest'", rm);
    if (strcmp(ctx->node->op_type, "CastLike") == 0) {
        p->like = true;
        return MOPT_OK;
    }
    mopt_dtype *to = &p->to;
    const ir_attr *a = ir_node_attr(ctx->node, "to");
    if (!a || a->type != IR_ATTR_INT)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "integer attribute 'to' is missing");
    if (a->i < 0 || a->i > 64 || !ref_cast_supported((mopt_dtype)a->i))
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cannot cast to type %" PRId64 " (%s)", a->i,
                       a->i >= 0 && a->i <= 64 ? mopt_dtype_name((mopt_dtype)a->i) : "unknown");
    *to = (mopt_dtype)a->i;
    return MOPT_OK;
}

static mopt_status infer_cast(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    const cast_params *p = ctx->params;
    bool like = p->like;
    mopt_status st;
    if ((st = check_count(ctx, n_in, like ? 2 : 1)) || (st = op_require_inputs(ctx, in, 1)))
        return st;
    if (like && ctx->runtime && in[1].dtype == MOPT_DTYPE_UNDEFINED)
        return op_fail(ctx, MOPT_ERR_INVALID_MODEL, "input 1 is missing");
    mopt_dtype to = like ? in[1].dtype : p->to;
    for (int k = 0; k < n_in; k++)
        if (in[k].dtype != MOPT_DTYPE_UNDEFINED && !ref_cast_supported(in[k].dtype))
            return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cannot cast %s input %d",
                           mopt_dtype_name(in[k].dtype), k);
    op_set_outputs(out, n_out, to, &in[0].shape);
    return MOPT_OK;
}

static mopt_status run_cast(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    const cast_params *p = ctx->params;
    if (ref_cast_sat(in[0].dtype, in[0].data, out[0].dtype, out[0].data, op_numel(&in[0]),
                     p->saturate, p->round_mode) != 0)
        return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "cannot cast %s to %s",
                       mopt_dtype_name(in[0].dtype), mopt_dtype_name(out[0].dtype));
    return MOPT_OK;
}

/* ---- BitCast ---------------------------------------------------------------------- */

static mopt_status bitcast_parse(const op_ctx *ctx, void *params) {
    ((cast_params *)params)->to = (mopt_dtype)ir_node_attr_int(ctx->node, "to", 0);
    return MOPT_OK;
}

static mopt_status bitcast_infer(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out) {
    mopt_dtype to = ((const cast_params *)ctx->params)->to;
    size_t a = mopt_dtype_size(in[0].dtype), b = mopt_dtype_size(to);
    if (b == 0) return op_fail(ctx, MOPT_ERR_UNSUPPORTED, "target type %d is not supported", to);
    if (in[0].dtype != MOPT_DTYPE_UNDEFINED && a != b)
        return op_fail(ctx, MOPT_ERR_TYPE, "%s and %s differ in size", mopt_dtype_name(in[0].dtype),
                       mopt_dtype_name(to));
    out[0].dtype = to;
    out[0].shape = in[0].shape;
    return MOPT_OK;
}

static mopt_status bitcast_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    size_t n = (size_t)op_numel(&in[0]) * mopt_dtype_size(in[0].dtype);
    if (n) memcpy(out[0].data, in[0].data, n);
    if (out[0].dtype == MOPT_DTYPE_BOOL) /* keep bools 0/1 */
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)out[0].data)[i] = ((uint8_t *)out[0].data)[i] != 0;
    return MOPT_OK;
}

/* ---- registry ----------------------------------------------------------- */

/* BR: the op's dtype bridging rule (ops_bridge_<BR>, bridge.h) */
#define CMP(name, BR)                                                                              \
    {                                                                                              \
        name, "", 2, 2, 1, 1, infer_cmp, run_cmp, NULL, OP_PARAMS(cmp_params, parse_cmp),          \
            .bridge = &ops_bridge_##BR                                                             \
    }
#define BOOL_UN(name)                                                                              \
    {                                                                                              \
        name, "", 1, 1, 1, 1, infer_bool_unary, run_bool_unary, NULL,                              \
            OP_PARAMS(bool_unary_params, parse_bool_unary), .bridge = &ops_bridge_float            \
    }
/* Cast and CastLike name their output type: never bridged */
#define CAST(name, n)                                                                              \
    { name, "", n, n, 1, 1, infer_cast, run_cast, NULL, OP_PARAMS(cast_params, parse_cast) }

static const op_def k_ops[] = {
    CMP("Equal", compare_wrap),
    CMP("Less", compare),
    CMP("Greater", compare),
    CMP("LessOrEqual", compare),
    CMP("GreaterOrEqual", compare),
    CMP("And", float),
    CMP("Or", float),
    CMP("Xor", float),
    BOOL_UN("Not"),
    BOOL_UN("IsNaN"),
    BOOL_UN("IsInf"),
    {"Where", "", 3, 3, 1, 1, infer_where, run_where, NULL, .bridge = &ops_bridge_float},
    CAST("Cast", 1),
    CAST("CastLike", 2),
    {"BitCast", "", 1, 1, 1, 1, bitcast_infer, bitcast_run, NULL,
     OP_PARAMS(cast_params, bitcast_parse), .bridge = &ops_bridge_float},
};

OP_FAMILY(logic, k_ops)
