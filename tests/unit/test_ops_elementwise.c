/*
 * test_ops_elementwise.c — unit tests of the elementwise and logic op
 * families that the numpy-checked cases cannot reach: error paths (type
 * mismatches, bad shapes, bad attributes, each naming the node), load-time
 * inference with symbols and unknowns, integer division by zero, the
 * attention-mask broadcast rule (op_mask_bad_axis, op_attn_mask_bind), and
 * exhaustive f16/bf16 conversion properties.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/error.h"
#include "core/half.h"
#include "ir/ir.h"
#include "kernels/kernels.h"
#include "kernels/ref/ref_logic.h"
#include "ops/node_view.h"
#include "ops/ops.h"

typedef struct fixture {
    ir_graph *g;
    ir_node *n;
    int64_t opset;
    bool runtime;
    op_view v; /* the op's view of n (its ctx and params), rebuilt per call */
} fixture;

static void fx_init(fixture *f, const char *op_type, int n_in, int64_t opset) {
    f->g = ir_graph_create();
    assert_non_null(f->g);
    f->n = ir_graph_add_node(f->g, op_type, "", "node_under_test", n_in, 1);
    assert_non_null(f->n);
    f->n->op = ops_find(op_type, "");
    assert_non_null(f->n->op);
    f->opset = opset;
    f->runtime = false;
}

/* Builds f->v from the node as it is now (attributes parsed, opset set). */
static mopt_status view(fixture *f) {
    assert_int_equal(ir_graph_set_opset(f->g, "", f->opset), 0);
    op_view_src src = {.graph = f->g, .runtime = f->runtime};
    return op_view_init(&f->v, &src, f->n, NULL);
}

static op_tensor tensor(mopt_dtype t, int32_t rank, const int64_t *dims, void *data) {
    op_tensor x;
    memset(&x, 0, sizeof x);
    x.dtype = t;
    if (rank < 0)
        ir_shape_set_unknown(&x.shape);
    else
        ir_shape_set(&x.shape, rank, dims);
    x.data = data;
    return x;
}

/* Runs inference of op_type and returns its status; *out gets the output. */
static mopt_status infer(fixture *f, const op_tensor *in, int n_in, op_tensor *out) {
    const op_def *d = ops_find(f->n->op_type, "");
    assert_non_null(d);
    memset(out, 0, sizeof *out);
    ir_shape_set_unknown(&out->shape);
    mopt_status st = view(f);
    if (st) return st; /* an attribute rejected when parsed */
    return d->infer(&f->v.ctx, in, n_in, out, 1);
}

static void expect_error(mopt_status got, mopt_status want, const char *needle) {
    assert_int_equal(got, want);
    const char *msg = mopt_error_message();
    if (!strstr(msg, "node_under_test") || (needle && !strstr(msg, needle)))
        fail_msg("message '%s' should name the node and mention '%s'", msg, needle ? needle : "");
}

/* One inference case: the node's inputs (rank -1: unknown shape), the
 * status (and a word of the message) wanted, and an optional int attribute. */
typedef struct infer_case {
    const char *op;
    int64_t opset;
    int n_in;
    struct {
        mopt_dtype t;
        int32_t rank;
        int64_t dims[2];
    } in[3];
    mopt_status want;
    const char *needle;
    const char *attr;
    int64_t attr_value;
} infer_case;

#define X(type, rank, ...)                                                                         \
    {                                                                                              \
        MOPT_DTYPE_##type, rank, { __VA_ARGS__ }                                                   \
    }
#define UNKNOWN                                                                                    \
    {                                                                                              \
        MOPT_DTYPE_UNDEFINED, -1, { 0 }                                                            \
    }
static const infer_case infer_cases[] = {
    {"Add", 17, 2, {X(F32, 1, 3), X(I64, 1, 3)}, MOPT_ERR_TYPE, "i64"},
    {"Min", 17, 3, {X(I32, 1, 3), X(I32, 1, 3), X(I64, 1, 3)}, MOPT_ERR_TYPE, "input 2"},
    {"Mul", 17, 2, {X(F32, 2, 2, 3), X(F32, 1, 4)}, MOPT_ERR_SHAPE, "[2,3]"},
    {"Pow", 17, 2, {X(F32, 1, 3), X(BOOL, 1, 3)}, MOPT_ERR_TYPE, "bool"},
    /* an 8-bit integer base: not supported */
    {"Pow", 17, 2, {X(U8, 1, 3), X(I64, 1, 3)}, MOPT_ERR_TYPE, "u8"},
    {"Sqrt", 17, 1, {X(I64, 1, 3)}, MOPT_ERR_TYPE, "i64"},
    {"Clip", 13, 3, {X(F32, 1, 4), X(F32, 1, 2), UNKNOWN}, MOPT_ERR_SHAPE, "min"},
    {"Clip", 13, 3, {X(F32, 1, 4), X(F64, 0, 0), UNKNOWN}, MOPT_ERR_TYPE, "f64"},
    {"Clip", 13, 3, {X(F32, 1, 4), X(F32, 0, 0), UNKNOWN}, MOPT_OK, NULL},
    /* inputs are not allowed before opset 11 */
    {"Clip", 6, 3, {X(F32, 1, 4), X(F32, 0, 0), UNKNOWN}, MOPT_ERR_INVALID_MODEL, "opset 11"},
    {"Mod", 17, 2, {X(I64, 1, 3), X(I64, 1, 3)}, MOPT_ERR_INVALID_MODEL, "fmod", "fmod", 2},
    {"Where", 17, 3, {X(F32, 1, 3), X(F32, 1, 3), X(F32, 1, 3)}, MOPT_ERR_TYPE, "bool"},
    {"Where", 17, 3, {X(BOOL, 1, 3), X(F32, 1, 3), X(I32, 1, 3)}, MOPT_ERR_TYPE, "i32"},
    {"Less", 17, 2, {X(I64, 2, 4, 1), X(F32, 1, 5)}, MOPT_ERR_TYPE, "f32"},
    {"Cast", 17, 1, {X(F32, 1, 3)}, MOPT_ERR_INVALID_MODEL, "to"},
    {"Cast", 17, 1, {X(F32, 1, 3)}, MOPT_ERR_UNSUPPORTED, "string", "to", MOPT_DTYPE_STRING},
    {"Cast", 17, 1, {X(F32, 1, 3)}, MOPT_ERR_UNSUPPORTED, "12345", "to", 12345},
};
#undef X
#undef UNKNOWN

/* Type mismatches, bad shapes, bad attributes and opset limits: each is
 * refused with the status wanted and a message that names the node. */
MOPT_TEST(ops_infer_errors_name_the_node) {
    for (size_t i = 0; i < sizeof infer_cases / sizeof infer_cases[0]; i++) {
        const infer_case *c = &infer_cases[i];
        fixture f;
        fx_init(&f, c->op, c->n_in, c->opset);
        if (c->attr) {
            ir_attr *a = ir_node_add_attr(f.n, c->attr, IR_ATTR_INT);
            assert_non_null(a);
            a->i = c->attr_value;
        }
        op_tensor in[3], out;
        for (int k = 0; k < c->n_in; k++)
            in[k] = tensor(c->in[k].t, c->in[k].rank, c->in[k].dims, NULL);
        mopt_status st = infer(&f, in, c->n_in, &out);
        if (st != c->want)
            fail_msg("case %zu (%s): status %d, wanted %d", i, c->op, (int)st, (int)c->want);
        if (c->want != MOPT_OK) expect_error(st, c->want, c->needle);
        ir_graph_destroy(f.g);
    }
}

MOPT_TEST(ops_add_symbolic_and_unknown) {
    fixture f;
    fx_init(&f, "Add", 2, 17);
    int32_t batch = ir_graph_symbol(f.g, "batch");
    int64_t a[2] = {0, 3}, b[1] = {3};
    op_tensor in[2] = {tensor(MOPT_DTYPE_UNDEFINED, 2, a, NULL),
                       tensor(MOPT_DTYPE_F32, 1, b, NULL)};
    in[0].shape.syms[0] = batch;
    op_tensor out;
    assert_int_equal(infer(&f, in, 2, &out), MOPT_OK);
    assert_int_equal(out.dtype, MOPT_DTYPE_F32); /* the known input decides */
    assert_int_equal(out.shape.rank, 2);
    assert_int_equal(out.shape.syms[0], batch);
    assert_int_equal(out.shape.syms[1], 0);
    assert_int_equal(out.shape.dims[1], 3);
    in[1] = tensor(MOPT_DTYPE_F32, -1, NULL, NULL);
    assert_int_equal(infer(&f, in, 2, &out), MOPT_OK);
    assert_true(out.shape.rank < 0);
    ir_graph_destroy(f.g);
}

MOPT_TEST(ops_div_int_by_zero) {
    fixture f;
    fx_init(&f, "Div", 2, 17);
    f.runtime = true;
    int32_t a[5] = {INT32_MIN, 7, -7, 5, 0}, b[5] = {-1, 0, 2, -1, 0}, y[5] = {9, 9, 9, 9, 9};
    int64_t d[1] = {5};
    op_tensor in[2] = {tensor(MOPT_DTYPE_I32, 1, d, a), tensor(MOPT_DTYPE_I32, 1, d, b)}, out;
    assert_int_equal(infer(&f, in, 2, &out), MOPT_OK);
    out.data = y;
    assert_int_equal(ops_run_reference(ops_find("Div", ""), &f.v.ctx, in, 2, &out, 1), MOPT_OK);
    /* C/ONNX truncation; x / 0 = 0 by libmopt's documented choice; MIN / -1 wraps */
    assert_int_equal(y[0], INT32_MIN);
    assert_int_equal(y[1], 0);
    assert_int_equal(y[2], -3);
    assert_int_equal(y[3], -5);
    assert_int_equal(y[4], 0);
    ir_graph_destroy(f.g);
}

MOPT_TEST(ops_compare_output_is_bool) {
    fixture f;
    fx_init(&f, "Less", 2, 17);
    int64_t a[2] = {4, 1}, b[1] = {5};
    op_tensor in[2] = {tensor(MOPT_DTYPE_I64, 2, a, NULL), tensor(MOPT_DTYPE_I64, 1, b, NULL)}, out;
    assert_int_equal(infer(&f, in, 2, &out), MOPT_OK);
    assert_int_equal(out.dtype, MOPT_DTYPE_BOOL);
    assert_int_equal(out.shape.rank, 2);
    assert_int_equal(out.shape.dims[0], 4);
    assert_int_equal(out.shape.dims[1], 5);
    ir_graph_destroy(f.g);
}

MOPT_TEST(ops_cast_to_f16) {
    fixture f;
    fx_init(&f, "Cast", 1, 17);
    ir_attr *a = ir_node_add_attr(f.n, "to", IR_ATTR_INT);
    assert_non_null(a);
    a->i = MOPT_DTYPE_F16;
    int64_t d[1] = {3};
    op_tensor in[1] = {tensor(MOPT_DTYPE_F32, 1, d, NULL)}, out;
    assert_int_equal(infer(&f, in, 1, &out), MOPT_OK);
    assert_int_equal(out.dtype, MOPT_DTYPE_F16);
    ir_graph_destroy(f.g);
}

/* An attention mask broadcasts to the scores [B, H, Sq, Sk] without growing
 * them; symbolic or unknown dims fit; a rank above 4 is refused. */
MOPT_TEST(ops_attention_mask_fits_scores) {
    ir_shape scores, mask;
    ir_shape_set(&scores, 4, (const int64_t[]){2, 3, 5, 7});
    ir_shape_set(&mask, 2, (const int64_t[]){5, 7});
    assert_int_equal(op_mask_bad_axis(&mask, &scores), -1);
    ir_shape_set(&mask, 4, (const int64_t[]){2, 1, 1, 7});
    assert_int_equal(op_mask_bad_axis(&mask, &scores), -1);
    float add[14];
    op_tensor m = {.dtype = MOPT_DTYPE_F32, .shape = mask, .data = add};
    kn_attn_mask bound = {0};
    op_attn_mask_bind(&m, (const int64_t[]){2, 3, 5, 7}, &bound);
    assert_int_equal(bound.sb, 7);
    assert_int_equal(bound.sh, 0);
    assert_int_equal(bound.sq, 0);
    assert_int_equal(bound.sk, 1);
    assert_ptr_equal(bound.add, add);
    assert_null(bound.keep);
    uint8_t keep[14];
    m.dtype = MOPT_DTYPE_BOOL, m.data = keep;
    bound = (kn_attn_mask){0};
    op_attn_mask_bind(&m, (const int64_t[]){2, 3, 5, 7}, &bound);
    assert_ptr_equal(bound.keep, keep);
    assert_null(bound.add);
    ir_shape_set(&mask, 3, (const int64_t[]){3, 6, 7}); /* 6 query rows for 5 */
    assert_int_equal(op_mask_bad_axis(&mask, &scores), 1);
    ir_shape_set(&mask, 4, (const int64_t[]){4, 3, 5, 7}); /* grows the batch */
    assert_int_equal(op_mask_bad_axis(&mask, &scores), 0);
    scores.syms[0] = 1; /* a symbolic batch: any mask batch fits at load time */
    scores.dims[0] = 0;
    assert_int_equal(op_mask_bad_axis(&mask, &scores), -1);
    ir_shape_set(&mask, 5, (const int64_t[]){1, 1, 1, 1, 1});
    assert_int_equal(op_mask_bad_axis(&mask, &scores), -2);
    ir_shape_set_unknown(&mask);
    assert_int_equal(op_mask_bad_axis(&mask, &scores), -1);
}

/* Every finite f16 / bf16 value survives a round trip through f32 and f64;
 * NaN stays NaN. */
MOPT_TEST(ops_half_roundtrip_exhaustive) {
    for (uint32_t h = 0; h < 65536; h++) {
        float f = half_to_f32((uint16_t)h);
        bool nan = ((h >> 10) & 31) == 31 && (h & 1023);
        if (nan) {
            assert_true(isnan(f));
            assert_true(isnan(half_to_f32(half_from_f32(f))));
            continue;
        }
        if (half_from_f32(f) != h || half_from_f64((double)f) != h)
            fail_msg("f16 0x%04x -> %g -> 0x%04x", h, (double)f, half_from_f32(f));
        float b = bf16_to_f32((uint16_t)h);
        if (isnan(b)) {
            assert_true(isnan(bf16_to_f32(bf16_from_f32(b))));
            assert_true(isnan(bf16_to_f32(bf16_from_f64((double)b))));
        } else if (bf16_from_f32(b) != h || bf16_from_f64((double)b) != h) {
            fail_msg("bf16 0x%04x -> %g -> 0x%04x", h, (double)b, bf16_from_f32(b));
        }
    }
}

/* The exact midpoint between two neighbouring finite f16 values rounds to
 * the one with an even mantissa; anything above it rounds up. */
MOPT_TEST(ops_half_midpoints_round_to_even) {
    for (uint32_t h = 0; h < 0x7bff; h++) {
        double lo = half_to_f32((uint16_t)h), hi = half_to_f32((uint16_t)(h + 1));
        double mid = (lo + hi) / 2; /* exact in double */
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        if (half_from_f64(mid) != even || half_from_f32((float)mid) != even)
            fail_msg("midpoint of 0x%04x and 0x%04x rounds to 0x%04x", h, h + 1,
                     half_from_f64(mid));
        if (half_from_f64(nextafter(mid, INFINITY)) != h + 1) fail_msg("above mid 0x%04x", h);
        if (half_from_f64(-nextafter(mid, 0)) != (0x8000 | h)) fail_msg("below -mid 0x%04x", h);
    }
    /* beyond the largest finite value: 65520 is the midpoint to "65536" -> inf */
    assert_int_equal(half_from_f64(65519.99), 0x7bff);
    assert_int_equal(half_from_f64(65520.0), 0x7c00);
    assert_int_equal(half_from_f64(-1e300), 0xfc00);
    assert_int_equal(half_from_f64(1e-300), 0x0000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ops_infer_errors_name_the_node),
        cmocka_unit_test(ops_add_symbolic_and_unknown),
        cmocka_unit_test(ops_div_int_by_zero),
        cmocka_unit_test(ops_compare_output_is_bool),
        cmocka_unit_test(ops_cast_to_f16),
        cmocka_unit_test(ops_attention_mask_fits_scores),
        cmocka_unit_test(ops_half_roundtrip_exhaustive),
        cmocka_unit_test(ops_half_midpoints_round_to_even),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
