/*
 * test_onnx_import.c — unit tests of the ONNX importer (lib/io/onnx_import.c)
 * on the tiny models that tests/unit/gen_import_models.py writes with the
 * `onnx` package into tests/unit/data/: nodes, attributes of every type with
 * subgraphs, initializers in every encoding, symbolic dims, omitted inputs,
 * external data (and its confinement to the model folder), TensorProto files,
 * and the public loader reaching operator resolution. The expected values
 * are the generator's inputs, which it verifies by reading them back with onnx.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../test_main.h"
#include "../test_oom.h"
#include "core/alloc.h"
#include "core/error.h"
#include "io/file.h"
#include "io/onnx_import.h"

#define DATA "tests/unit/data/"

static mopt_status import_file(const char *path, ir_graph **g) {
    uint8_t *buf = NULL;
    size_t len = 0;
    mopt_status st = file_read_all(path, (size_t)1 << 30, &buf, &len);
    if (st) return st;
    char *dir = file_dirname(path);
    st = onnx_import_model(buf, len, dir, g);
    mopt_free(dir);
    mopt_free(buf);
    return st;
}

static ir_graph *must_import(const char *path) {
    ir_graph *g = NULL;
    mopt_status st = import_file(path, &g);
    if (st) fprintf(stderr, "import of %s failed: %s\n", path, mopt_error_message());
    assert_int_equal(st, MOPT_OK);
    assert_non_null(g);
    return g;
}

static ir_node *find_node(ir_graph *g, const char *name) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0) return g->nodes[i];
    fail_msg("node '%s' not found", name);
    return NULL;
}

static ir_value *find_value(ir_graph *g, const char *name) {
    int32_t i = ir_graph_find_value(g, name);
    if (i < 0) fail_msg("value '%s' not found", name);
    return g->values[i];
}

static void check_identity_subgraph(const ir_graph *sg, const char *tag) {
    char buf[64];
    assert_non_null(sg);
    snprintf(buf, sizeof buf, "%s_graph", tag);
    assert_string_equal(sg->name, buf);
    assert_int_equal(sg->n_nodes, 1);
    assert_string_equal(sg->nodes[0]->op_type, "Identity");
    assert_int_equal(sg->n_inputs, 1);
    assert_int_equal(sg->n_outputs, 1);
    snprintf(buf, sizeof buf, "%s_in", tag);
    assert_string_equal(sg->values[sg->inputs[0]]->name, buf);
    assert_int_equal(sg->values[sg->inputs[0]]->dtype, MOPT_DTYPE_F32);
    /* subgraphs see the model's opsets */
    assert_int_equal(ir_graph_opset(sg, ""), 17);
}

/* n's list attribute name, asserting its type and length. */
static const ir_attr *list_attr(const ir_node *n, const char *name, ir_attr_type type, size_t len) {
    const ir_attr *a = ir_node_attr(n, name);
    assert_non_null(a);
    assert_int_equal(a->type, type);
    assert_int_equal(a->n, len);
    return a;
}

MOPT_TEST(onnx_import_every_attribute_type) {
    ir_graph *g = must_import(DATA "import_attrs.onnx");
    assert_int_equal(g->n_nodes, 3);
    assert_int_equal(g->ir_version, 8);
    assert_int_equal(ir_graph_opset(g, ""), 17);
    assert_int_equal(ir_graph_opset(g, "test.domain"), 1);
    ir_node *n = find_node(g, "every_attr");
    assert_string_equal(n->op_type, "AllAttrs");
    assert_string_equal(n->domain, "test.domain");
    assert_int_equal(n->n_inputs, 1);
    assert_int_equal(n->inputs[0], ir_graph_find_value(g, "x"));
    assert_int_equal(n->outputs[0], ir_graph_find_value(g, "mid"));

    assert_true(ir_node_attr_float(n, "alpha", 0) == 0.5f);
    assert_int_equal(ir_node_attr_int(n, "count", 0), -7);
    assert_string_equal(ir_node_attr_string(n, "mode", ""), "hello");
    assert_int_equal(ir_node_attr(n, "mode")->s_len, 5);
    const ir_tensor *t = ir_node_attr_tensor(n, "value");
    assert_non_null(t);
    assert_string_equal(t->name, "value_t");
    assert_int_equal(t->dtype, MOPT_DTYPE_I64);
    assert_int_equal(t->rank, 1);
    assert_int_equal(t->dims[0], 2);
    assert_int_equal(t->nbytes, 16);
    assert_int_equal(((int64_t *)t->data)[0], 3);
    assert_int_equal(((int64_t *)t->data)[1], -4);

    const ir_attr *a = ir_node_attr(n, "body");
    assert_int_equal(a->type, IR_ATTR_GRAPH);
    check_identity_subgraph(a->g, "body");

    const float *fl;
    assert_int_equal(ir_node_attr_floats(n, "scales", &fl), 2);
    assert_true(fl[0] == 1.5f && fl[1] == -2.25f);
    const int64_t *in;
    assert_int_equal(ir_node_attr_ints(n, "axes", &in), 3);
    assert_int_equal(in[0], 0);
    assert_int_equal(in[1], -1);
    assert_int_equal(in[2], 9000000000LL);

    a = list_attr(n, "names", IR_ATTR_STRINGS, 2);
    assert_string_equal(a->strings[0], "a");
    assert_string_equal(a->strings[1], "bc");

    a = list_attr(n, "tlist", IR_ATTR_TENSORS, 2);
    assert_int_equal(a->tensors[0]->dtype, MOPT_DTYPE_F32);
    assert_true(((float *)a->tensors[0]->data)[0] == 2.0f);
    assert_int_equal(a->tensors[1]->dtype, MOPT_DTYPE_I32);
    assert_int_equal(((int32_t *)a->tensors[1]->data)[1], 2);

    a = list_attr(n, "glist", IR_ATTR_GRAPHS, 2);
    check_identity_subgraph(a->graphs[0], "g0");
    check_identity_subgraph(a->graphs[1], "g1");

    a = ir_node_attr(n, "tp");
    assert_non_null(a);
    assert_int_equal(a->type, IR_ATTR_TYPE_PROTO);

    /* attributes without a `type` field get it from their value */
    ir_node *old = find_node(g, "old_style");
    assert_int_equal(ir_node_attr_ints(old, "k", &in), 2);
    assert_int_equal(in[1], 2);
    assert_true(ir_node_attr_float(old, "eps", 0) == 0.25f);

    /* two levels of nesting */
    ir_node *outer = find_node(g, "outer_if");
    const ir_graph *then1 = ir_node_attr(outer, "then_branch")->g;
    assert_non_null(then1);
    assert_int_equal(then1->n_nodes, 1);
    const ir_node *inner = then1->nodes[0];
    assert_string_equal(inner->name, "inner_if");
    check_identity_subgraph(ir_node_attr(inner, "then_branch")->g, "then2");
    check_identity_subgraph(ir_node_attr(inner, "else_branch")->g, "else2");
    /* the branch refers to the outer "cond" by name */
    assert_int_equal(ir_graph_find_value(then1, "cond") >= 0, 1);

    assert_int_equal(g->n_inputs, 2);
    assert_int_equal(g->values[g->inputs[1]]->dtype, MOPT_DTYPE_BOOL);
    assert_int_equal(g->values[g->inputs[1]]->shape.rank, 0);
    assert_int_equal(g->n_outputs, 2);
    assert_true(find_value(g, "y")->flags & IR_VALUE_OUTPUT);
    ir_graph_destroy(g);
}

static const void *init_data(ir_graph *g, const char *name, mopt_dtype dtype, int rank,
                             size_t nbytes) {
    ir_value *v = find_value(g, name);
    assert_true(v->flags & IR_VALUE_INITIALIZER);
    assert_false(v->flags & IR_VALUE_INPUT);
    assert_int_equal(v->dtype, dtype);
    assert_int_equal(v->shape.rank, rank);
    assert_int_equal(v->nbytes, nbytes);
    assert_non_null(v->data);
    return v->data;
}

MOPT_TEST(onnx_import_initializers_every_encoding) {
    ir_graph *g = must_import(DATA "import_inits.onnx");
    const float *f = init_data(g, "w_raw", MOPT_DTYPE_F32, 2, 24);
    for (int i = 0; i < 6; i++)
        assert_true(f[i] == 0.5f * (float)i);
    assert_int_equal(find_value(g, "w_raw")->shape.dims[1], 3);
    /* an initializer listed among the inputs is not a graph input */
    assert_int_equal(g->n_inputs, 1);
    assert_string_equal(g->values[g->inputs[0]]->name, "x");

    f = init_data(g, "w_float_packed", MOPT_DTYPE_F32, 1, 12);
    assert_true(f[0] == 1.0f && f[1] == -2.0f && f[2] == 3.5f);
    f = init_data(g, "w_float_unpacked", MOPT_DTYPE_F32, 1, 8);
    assert_true(f[0] == 4.25f && f[1] == -1.0f);
    const int64_t *l = init_data(g, "w_i64_packed", MOPT_DTYPE_I64, 1, 24);
    assert_true(l[0] == -1 && l[1] == 0 && l[2] == (int64_t)1 << 40);
    l = init_data(g, "w_i64_unpacked", MOPT_DTYPE_I64, 1, 16);
    assert_true(l[0] == -9 && l[1] == 123456789012LL);
    l = init_data(g, "w_raw_i64", MOPT_DTYPE_I64, 1, 16);
    assert_true(l[0] == -3 && l[1] == 5);
    const int32_t *i32 = init_data(g, "w_i32_unpacked", MOPT_DTYPE_I32, 1, 8);
    assert_true(i32[0] == -5 && i32[1] == 7);
    const int8_t *i8 = init_data(g, "w_i8", MOPT_DTYPE_I8, 1, 3);
    assert_true(i8[0] == -128 && i8[1] == 0 && i8[2] == 127);
    const uint8_t *u8 = init_data(g, "w_u8", MOPT_DTYPE_U8, 1, 2);
    assert_true(u8[0] == 0 && u8[1] == 255);
    u8 = init_data(g, "w_bool", MOPT_DTYPE_BOOL, 1, 2);
    assert_true(u8[0] == 1 && u8[1] == 0);
    const uint16_t *h = init_data(g, "w_f16", MOPT_DTYPE_F16, 1, 4);
    assert_true(h[0] == 0x3c00 && h[1] == 0xc000); /* IEEE half 1.0, -2.0 */
    h = init_data(g, "w_bf16_raw", MOPT_DTYPE_BF16, 1, 4);
    assert_true(h[0] == 0x3f80 && h[1] == 0xc000);
    const double *d = init_data(g, "w_f64", MOPT_DTYPE_F64, 1, 16);
    assert_true(d[0] == 1.5 && d[1] == -0.25);
    d = init_data(g, "w_f64_unpacked", MOPT_DTYPE_F64, 1, 8);
    assert_true(d[0] == 6.5);
    const uint64_t *u64 = init_data(g, "w_u64", MOPT_DTYPE_U64, 1, 8);
    assert_true(u64[0] == ((uint64_t)1 << 63) + 1);
    const uint32_t *u32 = init_data(g, "w_u32", MOPT_DTYPE_U32, 1, 4);
    assert_true(u32[0] == 4000000000u);
    f = init_data(g, "w_scalar", MOPT_DTYPE_F32, 0, 4);
    assert_true(f[0] == 42.0f);
    init_data(g, "w_empty", MOPT_DTYPE_F32, 2, 0);
    assert_int_equal(find_value(g, "w_empty")->shape.dims[0], 0);
    ir_graph_destroy(g);
}

MOPT_TEST(onnx_import_symbolic_dims_and_omitted_inputs) {
    ir_graph *g = must_import(DATA "import_shapes.onnx");
    ir_value *x = find_value(g, "x");
    assert_true(x->flags & IR_VALUE_INPUT);
    assert_int_equal(x->shape.rank, 3);
    assert_true(x->shape.syms[0] > 0 && x->shape.syms[1] > 0);
    assert_string_equal(g->symbols[x->shape.syms[0] - 1], "batch");
    assert_string_equal(g->symbols[x->shape.syms[1] - 1], "seq");
    assert_int_equal(x->shape.syms[2], 0);
    assert_int_equal(x->shape.dims[2], 4);
    ir_value *y = find_value(g, "y");
    assert_int_equal(y->shape.syms[0], x->shape.syms[0]); /* same symbol, same id */
    ir_value *mid = find_value(g, "mid");
    assert_int_equal(mid->dtype, MOPT_DTYPE_F32);
    assert_int_equal(mid->shape.rank, 3);
    assert_int_equal(mid->shape.syms[0], x->shape.syms[0]);
    assert_true(mid->shape.syms[1] < 0); /* neither dim_value nor dim_param */
    assert_int_equal(mid->shape.dims[2], 4);
    /* value_info without a shape: dtype known, rank unknown */
    int32_t ns = ir_graph_find_value(g, "noshape");
    assert_true(ns >= 0);
    assert_int_equal(g->values[ns]->dtype, MOPT_DTYPE_F32);
    assert_int_equal(g->values[ns]->shape.rank, -1);
    /* omitted inputs are -1, trailing ones kept as slots */
    ir_node *n = find_node(g, "omit");
    assert_int_equal(n->n_inputs, 4);
    assert_int_equal(n->inputs[0], ir_graph_find_value(g, "x"));
    assert_int_equal(n->inputs[1], -1);
    assert_int_equal(n->inputs[2], ir_graph_find_value(g, "starts"));
    assert_int_equal(n->inputs[3], -1);
    assert_int_equal(n->n_outputs, 2);
    assert_int_equal(n->outputs[1], -1);
    assert_int_equal(ir_graph_check(g), MOPT_OK);
    ir_graph_destroy(g);
}

MOPT_TEST(onnx_import_external_data) {
    ir_graph *g = must_import(DATA "ext/model.onnx");
    const float *f = init_data(g, "w_ext", MOPT_DTYPE_F32, 1, 16);
    assert_true(f[0] == 1.0f && f[1] == 2.0f && f[2] == -3.0f && f[3] == 0.125f);
    ir_graph_destroy(g);
    g = must_import(DATA "ext/model_nolen.onnx");
    f = init_data(g, "w_ext", MOPT_DTYPE_F32, 1, 8);
    assert_true(f[0] == 7.0f && f[1] == 8.0f);
    ir_graph_destroy(g);
}

static void expect_refused(const char *path, mopt_status want, const char *needle) {
    ir_graph *g = NULL;
    mopt_status st = import_file(path, &g);
    if (st != want || !strstr(mopt_error_message(), needle))
        fail_msg("%s: status %d (want %d), message '%s' (want '%s')", path, st, want,
                 mopt_error_message(), needle);
    assert_null(g);
}

MOPT_TEST(onnx_import_external_data_confined) {
    expect_refused(DATA "ext_escape/model.onnx", MOPT_ERR_INVALID_MODEL, "'..'");
    expect_refused(DATA "ext_abs/model.onnx", MOPT_ERR_INVALID_MODEL, "absolute path");
    expect_refused(DATA "ext_link/model.onnx", MOPT_ERR_INVALID_MODEL, "outside the model");
    expect_refused(DATA "ext/model_past_end.onnx", MOPT_ERR_INVALID_MODEL, "outside the file");
    /* from memory without a folder: refused with a clear message */
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(DATA "ext/model.onnx", 1 << 20, &buf, &len), MOPT_OK);
    ir_graph *g = NULL;
    assert_int_equal(onnx_import_model(buf, len, NULL, &g), MOPT_ERR_IO);
    assert_null(g);
    assert_non_null(strstr(mopt_error_message(), "w_ext"));
    assert_non_null(strstr(mopt_error_message(), "external_data_dir"));
    mopt_free(buf);
}

/* A FIFO planted where the weights should be must be refused, not opened
 * (opening it would block forever). */
MOPT_TEST(onnx_import_external_data_refuses_fifo) {
    char dir[] = "/tmp/mopt_fifo_XXXXXX", sub[64], fifo[96];
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/weights", dir);
    snprintf(fifo, sizeof fifo, "%s/w.bin", sub);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(DATA "ext/model.onnx", 1 << 20, &buf, &len), MOPT_OK);
    ir_graph *g = NULL;
    mopt_status st = onnx_import_model(buf, len, dir, &g);
    unlink(fifo);
    rmdir(sub);
    rmdir(dir);
    mopt_free(buf);
    assert_int_equal(st, MOPT_ERR_IO);
    assert_null(g);
    assert_non_null(strstr(mopt_error_message(), "not a regular file"));
}

MOPT_TEST(onnx_import_tensor_files) {
    uint8_t *buf = NULL;
    size_t len = 0;
    assert_int_equal(file_read_all(DATA "tensor_f32.pb", 1 << 20, &buf, &len), MOPT_OK);
    ir_tensor *t = NULL;
    assert_int_equal(onnx_import_tensor(buf, len, &t), MOPT_OK);
    assert_string_equal(t->name, "tensor_a");
    assert_int_equal(t->dtype, MOPT_DTYPE_F32);
    assert_int_equal(t->rank, 2);
    const float *f = t->data;
    assert_true(f[0] == 1.5f && f[1] == -2.0f && f[2] == 0.0f && f[3] == 8.0f);
    ir_tensor_destroy(t);
    /* every proper prefix is rejected or, when it ends between fields, has
     * too little data for its dims */
    for (size_t cut = 0; cut < len; cut++) {
        t = NULL;
        assert_int_not_equal(onnx_import_tensor(buf, cut, &t), MOPT_OK);
        assert_null(t);
        assert_true(mopt_error_message()[0] != '\0');
    }
    mopt_free(buf);

    mopt_tensor *mt = NULL;
    assert_int_equal(mopt_tensor_load(DATA "tensor_i64.pb", &mt), MOPT_OK);
    assert_int_equal(mopt_tensor_dtype(mt), MOPT_DTYPE_I64);
    assert_int_equal(mopt_tensor_element_count(mt), 3);
    const int64_t *l = mopt_tensor_data_const(mt);
    assert_true(l[0] == 5 && l[1] == -6 && l[2] == 7);
    mopt_tensor_destroy(mt);
}

/* Hand-assembled TensorProtos that must be refused, with the reason. */
MOPT_TEST(onnx_import_tensor_errors) {
    static const struct {
        const char *what;
        uint8_t bytes[40];
        size_t len;
        mopt_status st;
        const char *needle;
    } cases[] = {
        /* dims [2], FLOAT, raw_data of 4 bytes */
        {"size mismatch",
         {0x08, 2, 0x10, 1, 0x4a, 4, 0, 0, 0, 0},
         10,
         MOPT_ERR_INVALID_MODEL,
         "need 8 bytes but raw_data has 4"},
        /* dims [-1] */
        {"negative dim",
         {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x10, 1},
         13,
         MOPT_ERR_INVALID_MODEL,
         "negative"},
        /* nine dims */
        {"rank",
         {0x08, 1, 0x08, 1, 0x08, 1, 0x08, 1, 0x08, 1, 0x08, 1, 0x08, 1, 0x08, 1, 0x08, 1, 0x10, 1},
         20,
         MOPT_ERR_LIMIT,
         "rank 9"},
        /* dims [2^40, 2^40], FLOAT: too large */
        {"huge",
         {0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x10,
          1},
         16,
         MOPT_ERR_LIMIT,
         "too large"},
        /* no data_type */
        {"no type", {0x08, 1}, 2, MOPT_ERR_INVALID_MODEL, "missing"},
        /* COMPLEX64 */
        {"complex", {0x08, 1, 0x10, 14}, 4, MOPT_ERR_UNSUPPORTED, "COMPLEX64"},
        /* dims [2] FLOAT with int64_data */
        {"wrong field",
         {0x08, 2, 0x10, 1, 0x38, 1, 0x38, 2},
         8,
         MOPT_ERR_INVALID_MODEL,
         "int64_data"},
        /* INT8 with int32_data 300 */
        {"range", {0x08, 1, 0x10, 3, 0x28, 0xac, 0x02}, 7, MOPT_ERR_INVALID_MODEL, "out of range"},
        /* dims [3] FLOAT with 2 packed floats */
        {"count",
         {0x08, 3, 0x10, 1, 0x22, 8, 0, 0, 0, 0, 0, 0, 0, 0},
         14,
         MOPT_ERR_INVALID_MODEL,
         "imply 3 elements but float_data holds 2"},
        /* dims [1] FLOAT, no data */
        {"no data", {0x08, 1, 0x10, 1}, 4, MOPT_ERR_INVALID_MODEL, "no data"},
        /* external with no folder */
        {"external",
         {0x10, 1, 0x6a, 7, 0x0a, 1, 'k', 0x12, 2, 'v', 'v', 0x70, 1},
         13,
         MOPT_ERR_INVALID_MODEL,
         "no location"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ir_tensor *t = NULL;
        mopt_status st = onnx_import_tensor(cases[i].bytes, cases[i].len, &t);
        if (st != cases[i].st || !strstr(mopt_error_message(), cases[i].needle))
            fail_msg("case '%s': status %d (want %d), message '%s'", cases[i].what, st, cases[i].st,
                     mopt_error_message());
        assert_null(t);
    }
}

MOPT_TEST(onnx_import_model_load_reaches_operators) {
    mopt_model *m = NULL;
    /* a custom-domain operator nobody implements: the loader lists it */
    assert_int_equal(mopt_model_load(DATA "custom_op.onnx", NULL, &m), MOPT_ERR_UNSUPPORTED);
    assert_null(m);
    assert_non_null(strstr(mopt_last_error(), "Frobnicate"));
    assert_non_null(strstr(mopt_last_error(), "frob"));
    /* standard operators: either they exist, or the message lists them */
    mopt_status st = mopt_model_load(DATA "relu_add.onnx", NULL, &m);
    if (st == MOPT_OK) {
        assert_int_equal(mopt_model_io_count(m, MOPT_INPUT), 1);
        assert_string_equal(mopt_model_io_dim_name(m, MOPT_INPUT, 0, 0), "batch");
        mopt_model_destroy(m);
    } else {
        assert_int_equal(st, MOPT_ERR_UNSUPPORTED);
        assert_true(strstr(mopt_last_error(), "Relu") || strstr(mopt_last_error(), "Add"));
    }
}

typedef struct onnx_bytes {
    uint8_t *buf;
    size_t len;
} onnx_bytes;

static mopt_status import_bytes(void *ctx) {
    const onnx_bytes *b = ctx;
    ir_graph *g = NULL;
    mopt_status st = onnx_import_model(b->buf, b->len, NULL, &g);
    if (st == MOPT_OK)
        ir_graph_destroy(g);
    else
        assert_null(g);
    return st;
}

MOPT_TEST(onnx_import_survives_allocation_failures) {
    onnx_bytes b = {NULL, 0};
    assert_int_equal(file_read_all(DATA "import_attrs.onnx", 1 << 20, &b.buf, &b.len), MOPT_OK);
    assert_true(oom_sweep(import_bytes, &b, 2000) > 50);
    mopt_free(b.buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(onnx_import_every_attribute_type),
        cmocka_unit_test(onnx_import_initializers_every_encoding),
        cmocka_unit_test(onnx_import_symbolic_dims_and_omitted_inputs),
        cmocka_unit_test(onnx_import_external_data),
        cmocka_unit_test(onnx_import_external_data_confined),
        cmocka_unit_test(onnx_import_external_data_refuses_fifo),
        cmocka_unit_test(onnx_import_tensor_files),
        cmocka_unit_test(onnx_import_tensor_errors),
        cmocka_unit_test(onnx_import_model_load_reaches_operators),
        cmocka_unit_test(onnx_import_survives_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
