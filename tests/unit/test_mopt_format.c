/*
 * test_mopt_format.c — the .mopt format (lib/io/mopt_*.c): a hand-built
 * graph with every attribute type (inline and table tensors, subgraphs, NaN
 * payloads, non-UTF-8 strings) survives save -> load unchanged and saves to
 * the same bytes again; every test model at every opt_level round-trips
 * bit-exactly (file bytes, and outputs equal to the original model's bit for
 * bit, and to the ONNX Runtime references within the model's tolerance);
 * loaded weights are borrowed from the mapping (64-byte aligned) and the
 * passes, compaction and destruction respect that; weight checksums are
 * checked when verify_weights is set; save errors are reported.
 */
#define MOPT_EXPERIMENTAL_API /* profiling, stats, pass report, model check */
#include <math.h>
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
#include "../test_tmpdir.h"
#include "core/alloc.h"
#include "core/error.h"
#include "io/file.h"
#include "io/mopt_format.h"
#include "ir/ir.h"
#include "runtime/runtime.h"

static void tmp_path(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s", test_tmp(name));
}

static uint8_t *read_file(const char *path, size_t *len) {
    uint8_t *buf = NULL;
    assert_int_equal(file_read_all(path, (size_t)1 << 31, &buf, len), MOPT_OK);
    return buf;
}

static void assert_same_file(const char *a, const char *b) {
    size_t la, lb;
    uint8_t *x = read_file(a, &la), *y = read_file(b, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    mopt_free(x);
    mopt_free(y);
}

/* ---- a hand-built graph with everything the format carries --------------- */

static int32_t weight(ir_graph *g, const char *name, mopt_dtype dt, int32_t rank,
                      const int64_t *dims, uint8_t seed) {
    int32_t v = ir_graph_value(g, name);
    ir_value *val = g->values[v];
    val->flags |= IR_VALUE_INITIALIZER;
    val->dtype = dt;
    ir_shape_set(&val->shape, rank, dims);
    size_t n = (size_t)ir_numel(rank, dims) * mopt_dtype_size(dt);
    val->nbytes = n;
    val->data = n ? mopt_aligned_alloc(n) : NULL;
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)val->data)[i] = (uint8_t)(seed + i * 7);
    return v;
}

static ir_tensor *tensor(const char *name, mopt_dtype dt, int32_t rank, const int64_t *dims,
                         uint8_t seed) {
    ir_tensor *t = mopt_calloc(1, sizeof *t);
    t->name = mopt_strdup(name);
    t->dtype = dt;
    t->rank = rank;
    memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    t->nbytes = (size_t)ir_numel(rank, dims) * mopt_dtype_size(dt);
    t->data = t->nbytes ? mopt_aligned_alloc(t->nbytes) : NULL;
    for (size_t i = 0; i < t->nbytes; i++)
        ((uint8_t *)t->data)[i] = (uint8_t)(seed ^ i);
    return t;
}

static ir_graph *make_subgraph(int nest) {
    ir_graph *g = ir_graph_create();
    ir_graph_set_opset(g, "", 13);
    int32_t a = ir_graph_value(g, "outer_value"); /* from the enclosing scope */
    int64_t d3[1] = {3};
    int32_t w = weight(g, "sub_w", MOPT_DTYPE_F32, 1, d3, 11);
    int32_t y = ir_graph_value(g, "sub_y");
    g->values[y]->flags |= IR_VALUE_OUTPUT;
    g->outputs = mopt_malloc(sizeof(int32_t));
    g->outputs[g->n_outputs++] = y;
    ir_node *n = ir_graph_add_node(g, "Add", "", "sub_add", 2, 1);
    n->inputs[0] = a;
    n->inputs[1] = w;
    n->outputs[0] = y;
    if (nest) {
        ir_attr *ga = ir_node_add_attr(n, "body", IR_ATTR_GRAPH);
        ga->g = make_subgraph(nest - 1);
    }
    return g;
}

static ir_graph *make_everything(void) {
    ir_graph *g = ir_graph_create();
    mopt_free(g->name);
    g->name = mopt_strdup("every\tthing \"quoted\" \xc3\xa9");
    g->ir_version = 9;
    g->producer_name = mopt_strdup("hand");
    ir_graph_set_opset(g, "", 17);
    ir_graph_set_opset(g, "com.example", 3);
    int32_t batch = ir_graph_symbol(g, "batch"), num = ir_graph_symbol(g, "7");
    int32_t x = ir_graph_value(g, "x");
    ir_value *xv = g->values[x];
    xv->flags |= IR_VALUE_INPUT;
    xv->dtype = MOPT_DTYPE_F32;
    xv->shape.rank = 4;
    xv->shape.syms[0] = batch;
    xv->shape.syms[1] = num;
    xv->shape.syms[2] = -1;
    xv->shape.dims[3] = 5;
    g->inputs = mopt_malloc(sizeof(int32_t));
    g->inputs[g->n_inputs++] = x;
    int64_t d_big[2] = {17, 9}, d_empty[2] = {0, 3}, d_s[1] = {3}, d_none[1] = {0};
    int32_t w1 = weight(g, "w_f32", MOPT_DTYPE_F32, 2, d_big, 1);
    int32_t w2 = weight(g, "w_i64", MOPT_DTYPE_I64, 1, d_s, 2);
    int32_t w3 = weight(g, "w_bool", MOPT_DTYPE_BOOL, 1, d_s, 3);
    int32_t w4 = weight(g, "w_empty", MOPT_DTYPE_F32, 2, d_empty, 4);
    int32_t w5 = weight(g, "w_scalar_f16", MOPT_DTYPE_F16, 0, d_none, 5);
    int32_t w6 = weight(g, "w_u8_\xff_bytes", MOPT_DTYPE_U8, 1, d_s, 6);
    int32_t y = ir_graph_value(g, "y"), unk = ir_graph_value(g, "unknown_rank");
    g->values[y]->flags |= IR_VALUE_OUTPUT;
    g->outputs = mopt_malloc(2 * sizeof(int32_t));
    g->outputs[g->n_outputs++] = y;
    g->outputs[g->n_outputs++] = w2; /* a weight as a graph output */
    g->values[w2]->flags |= IR_VALUE_OUTPUT;
    ir_node *n = ir_graph_add_node(g, "Everything", "com.example", "node \"one\"", 8, 2);
    int32_t ins[8] = {x, w1, -1, w2, w3, w4, w5, w6};
    memcpy(n->inputs, ins, sizeof ins);
    n->outputs[0] = y;
    n->outputs[1] = unk;
    ir_attr *a;
    a = ir_node_add_attr(n, "f_nan", IR_ATTR_FLOAT);
    uint32_t nan_bits = 0xffc12345u;
    memcpy(&a->f, &nan_bits, 4);
    ir_node_add_attr(n, "f_negzero", IR_ATTR_FLOAT)->f = -0.0f;
    ir_node_add_attr(n, "f_tiny", IR_ATTR_FLOAT)->f = 1.17549435e-38f / 3.0f; /* subnormal */
    ir_node_add_attr(n, "f_inf", IR_ATTR_FLOAT)->f = -INFINITY;
    ir_node_add_attr(n, "i_min", IR_ATTR_INT)->i = INT64_MIN;
    a = ir_node_add_attr(n, "s_bytes", IR_ATTR_STRING);
    static const char sb[] = "a\0b\xff\n%MOPT-END 0\"";
    a->s_len = sizeof sb - 1;
    a->s = mopt_malloc(a->s_len + 1);
    memcpy(a->s, sb, a->s_len + 1);
    a = ir_node_add_attr(n, "s_tricky", IR_ATTR_STRING);
    a->s = mopt_strdup("line\n%MOPT-END 0123456789abcdef\n\"quoted\" \\ tab\t");
    a->s_len = strlen(a->s);
    int64_t dt2[2] = {2, 2}, dt_big[1] = {40};
    ir_node_add_attr(n, "t_inline", IR_ATTR_TENSOR)->t = tensor("ti", MOPT_DTYPE_I32, 2, dt2, 9);
    ir_node_add_attr(n, "t_table", IR_ATTR_TENSOR)->t = tensor("tt", MOPT_DTYPE_F64, 1, dt_big, 10);
    ir_node_add_attr(n, "g_one", IR_ATTR_GRAPH)->g = make_subgraph(2);
    a = ir_node_add_attr(n, "floats", IR_ATTR_FLOATS);
    a->n = 3;
    a->floats = mopt_malloc(3 * sizeof(float));
    a->floats[0] = 0.1f;
    a->floats[1] = INFINITY;
    a->floats[2] = -3.4028235e38f;
    a = ir_node_add_attr(n, "ints_empty", IR_ATTR_INTS);
    a->ints = mopt_malloc(sizeof(int64_t));
    a = ir_node_add_attr(n, "strings", IR_ATTR_STRINGS);
    a->n = 3;
    a->strings = mopt_calloc(3, sizeof(char *));
    a->strings[0] = mopt_strdup("");
    a->strings[1] = mopt_strdup("\xfe\xff not utf-8");
    a->strings[2] = mopt_strdup("plain");
    a = ir_node_add_attr(n, "tensors", IR_ATTR_TENSORS);
    a->n = 2;
    a->tensors = mopt_calloc(2, sizeof(ir_tensor *));
    a->tensors[0] = tensor("small", MOPT_DTYPE_I8, 1, d_s, 12);
    a->tensors[1] = tensor("large", MOPT_DTYPE_F32, 2, d_big, 13);
    a = ir_node_add_attr(n, "graphs", IR_ATTR_GRAPHS);
    a->n = 2;
    a->graphs = mopt_calloc(2, sizeof(ir_graph *));
    a->graphs[0] = make_subgraph(0);
    a->graphs[1] = make_subgraph(1);
    ir_node_add_attr(n, "tp", IR_ATTR_TYPE_PROTO);
    ir_node_add_attr(n, "tps", IR_ATTR_TYPE_PROTOS)->n = 2;
    return g;
}

static void assert_shape_equal(const ir_shape *a, const ir_shape *b) {
    assert_int_equal(a->rank, b->rank);
    for (int32_t i = 0; i < a->rank; i++) {
        assert_int_equal(a->syms[i] < 0, b->syms[i] < 0);
        if (a->syms[i] >= 0) assert_int_equal(a->syms[i], b->syms[i]);
        if (a->syms[i] == 0) assert_int_equal(a->dims[i], b->dims[i]);
    }
}

static void assert_graph_equal(const ir_graph *a, const ir_graph *b);

static void assert_attr_equal(const ir_attr *a, const ir_attr *b) {
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->type, b->type);
    switch (a->type) {
    case IR_ATTR_GRAPH: assert_graph_equal(a->g, b->g); break;
    case IR_ATTR_GRAPHS:
        assert_int_equal(a->n, b->n);
        for (size_t i = 0; i < a->n; i++)
            assert_graph_equal(a->graphs[i], b->graphs[i]);
        break;
    case IR_ATTR_TYPE_PROTO:
    case IR_ATTR_TYPE_PROTOS: assert_int_equal(a->n, b->n); break;
    case IR_ATTR_TENSOR:
        assert_string_equal(a->t->name, b->t->name);
        assert_true(ir_attr_equal(a, b));
        break;
    case IR_ATTR_TENSORS:
        for (size_t i = 0; i < a->n; i++)
            assert_string_equal(a->tensors[i]->name, b->tensors[i]->name);
        assert_true(ir_attr_equal(a, b));
        break;
    default: assert_true(ir_attr_equal(a, b)); break;
    }
}

static void assert_graph_equal(const ir_graph *a, const ir_graph *b) {
    assert_string_equal(a->name, b->name);
    assert_int_equal(a->ir_version, b->ir_version);
    assert_int_equal(a->producer_name == NULL, b->producer_name == NULL);
    if (a->producer_name) assert_string_equal(a->producer_name, b->producer_name);
    assert_int_equal(a->n_opsets, b->n_opsets);
    for (int32_t i = 0; i < a->n_opsets; i++) {
        assert_string_equal(a->opsets[i].domain, b->opsets[i].domain);
        assert_int_equal(a->opsets[i].version, b->opsets[i].version);
    }
    assert_int_equal(a->n_symbols, b->n_symbols);
    for (int32_t i = 0; i < a->n_symbols; i++)
        assert_string_equal(a->symbols[i], b->symbols[i]);
    assert_int_equal(a->n_values, b->n_values);
    for (int32_t i = 0; i < a->n_values; i++) {
        const ir_value *x = a->values[i], *y = b->values[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->dtype, y->dtype);
        assert_shape_equal(&x->shape, &y->shape);
        assert_int_equal(x->flags & ~(uint32_t)IR_VALUE_BORROWED,
                         y->flags & ~(uint32_t)IR_VALUE_BORROWED);
        assert_int_equal(x->nbytes, y->nbytes);
        if (x->nbytes) assert_memory_equal(x->data, y->data, x->nbytes);
    }
    assert_int_equal(a->n_inputs, b->n_inputs);
    assert_memory_equal(a->inputs, b->inputs, (size_t)a->n_inputs * sizeof(int32_t));
    assert_int_equal(a->n_outputs, b->n_outputs);
    assert_memory_equal(a->outputs, b->outputs, (size_t)a->n_outputs * sizeof(int32_t));
    assert_int_equal(a->n_nodes, b->n_nodes);
    for (int32_t i = 0; i < a->n_nodes; i++) {
        const ir_node *x = a->nodes[i], *y = b->nodes[i];
        assert_string_equal(x->name, y->name);
        assert_string_equal(x->op_type, y->op_type);
        assert_string_equal(x->domain, y->domain);
        assert_int_equal(x->n_inputs, y->n_inputs);
        assert_memory_equal(x->inputs, y->inputs, (size_t)x->n_inputs * sizeof(int32_t));
        assert_int_equal(x->n_outputs, y->n_outputs);
        assert_memory_equal(x->outputs, y->outputs, (size_t)x->n_outputs * sizeof(int32_t));
        assert_int_equal(x->n_attrs, y->n_attrs);
        for (int32_t k = 0; k < x->n_attrs; k++)
            assert_attr_equal(&x->attrs[k], &y->attrs[k]);
    }
}

/* Every borrowed weight lies 64-byte aligned inside [base, base + size). */
static int check_borrowed(const ir_graph *g, const uint8_t *base, size_t size) {
    int n = 0;
    for (int32_t i = 0; i < g->n_values; i++) {
        const ir_value *v = g->values[i];
        if (!(v->flags & IR_VALUE_INITIALIZER) || !v->nbytes) continue;
        assert_true(v->flags & IR_VALUE_BORROWED);
        const uint8_t *p = v->data;
        assert_true(p >= base && p + v->nbytes <= base + size);
        assert_int_equal(((uintptr_t)p) % 64, 0);
        n++;
    }
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int32_t k = 0; k < g->nodes[i]->n_attrs; k++) {
            const ir_attr *a = &g->nodes[i]->attrs[k];
            if (a->type == IR_ATTR_GRAPH && a->g) n += check_borrowed(a->g, base, size);
            for (size_t j = 0; a->type == IR_ATTR_GRAPHS && j < a->n; j++)
                n += check_borrowed(a->graphs[j], base, size);
        }
    return n;
}

static void fill_meta(mfmt_meta *m) {
    memset(m, 0, sizeof *m);
    m->source_checksum = 0x0123456789abcdefull;
    m->source_bytes = 12345;
    m->opt_level = 3;
    snprintf(m->precision, sizeof m->precision, "bf16");
    m->report.n = 2;
    m->report.entries[0].name = "first_pass";
    m->report.entries[0].ms = 1.25;
    m->report.entries[0].nodes_before = 10;
    m->report.entries[0].nodes_after = 7;
    m->report.entries[0].rewrites = 3;
    snprintf(m->report.entries[0].note, PASS_NOTE_CAP, "3 things, \"quoted\"");
    m->report.entries[1].name = "second";
    m->report.nodes_before = 10;
    m->report.nodes_after = 7;
    m->report.total_ms = 2.5;
}

MOPT_TEST(format_everything_round_trip) {
    ir_graph *g = make_everything();
    mfmt_meta meta, back;
    fill_meta(&meta);
    char p1[128], p2[128];
    tmp_path(p1, sizeof p1, "everything.mopt");
    tmp_path(p2, sizeof p2, "everything2.mopt");
    assert_int_equal(mfmt_save(g, &meta, p1), MOPT_OK);
    void *base = NULL;
    size_t size = 0;
    assert_int_equal(mfmt_map_file(p1, &base, &size), MOPT_OK);
    assert_non_null(base);
    ir_graph *h = NULL;
    assert_int_equal(mfmt_load(base, size, mfmt_unmap, true, &h, &back), MOPT_OK);
    assert_graph_equal(g, h);
    /* top graph: w_f32, w_i64, w_bool, w_scalar_f16, w_u8 (w_empty has no
     * bytes); subgraphs: 3 + 1 + 2 levels of sub_w */
    assert_int_equal(check_borrowed(h, base, size), 5 + 6);
    assert_int_equal(back.source_checksum, meta.source_checksum);
    assert_int_equal(back.source_bytes, meta.source_bytes);
    assert_int_equal(back.opt_level, 3);
    assert_string_equal(back.precision, "bf16");
    assert_int_equal(back.report.n, 2);
    assert_string_equal(back.report.entries[0].name, "first_pass");
    assert_string_equal(back.report.entries[0].note, "3 things, \"quoted\"");
    assert_true(back.report.entries[0].ms == 1.25);
    assert_int_equal(back.report.entries[0].rewrites, 3);
    assert_int_equal(back.report.nodes_after, 7);
    assert_true(strncmp(back.producer, "libmopt ", 8) == 0);
    /* saving what was loaded gives the same bytes */
    assert_int_equal(mfmt_save(h, &back, p2), MOPT_OK);
    assert_same_file(p1, p2);
    ir_graph_destroy(h); /* unmaps */
    ir_graph_destroy(g);
}

MOPT_TEST(format_rejects_string_weights) {
    ir_graph *g = ir_graph_create();
    int32_t v = ir_graph_value(g, "s");
    g->values[v]->flags |= IR_VALUE_INITIALIZER | IR_VALUE_OUTPUT;
    g->values[v]->dtype = MOPT_DTYPE_STRING;
    ir_shape_set_scalar(&g->values[v]->shape);
    g->outputs = mopt_malloc(sizeof(int32_t));
    g->outputs[g->n_outputs++] = v;
    mfmt_meta meta;
    fill_meta(&meta);
    char p[128];
    tmp_path(p, sizeof p, "strings.mopt");
    assert_int_equal(mfmt_save(g, &meta, p), MOPT_ERR_UNSUPPORTED);
    assert_non_null(strstr(mopt_error_message(), "'s'"));
    assert_int_equal(access(p, F_OK), -1); /* nothing written */
    ir_graph_destroy(g);
}

MOPT_TEST(format_hash_sensitivity) {
    uint8_t buf[300];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 31 + 7);
    /* every prefix length hashes differently, and so does every 1-bit flip */
    uint64_t seen[301];
    for (size_t n = 0; n <= sizeof buf; n++) {
        seen[n] = mfmt_hash64(buf, n);
        for (size_t k = 0; k < n; k++)
            assert_true(seen[k] != seen[n]);
    }
    uint64_t h = mfmt_hash64(buf, sizeof buf);
    for (size_t i = 0; i < sizeof buf; i++)
        for (int b = 0; b < 8; b++) {
            buf[i] ^= (uint8_t)(1u << b);
            assert_true(mfmt_hash64(buf, sizeof buf) != h);
            buf[i] ^= (uint8_t)(1u << b);
        }
    assert_true(mfmt_hash64(buf, sizeof buf) == h);
}

/* ---- the test models, through the public API ------------------------------ */

static mopt_options *opts_for(int level, int verify) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", level), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "verify_weights", verify), MOPT_OK);
    return o;
}

/* Runs m on dir/test_data_set_0 and returns its outputs (caller destroys). */
static size_t run_case(const mopt_model *m, const char *dir, mopt_tensor **outs) {
    size_t n_in = mopt_model_io_count(m, MOPT_INPUT), n_out = mopt_model_io_count(m, MOPT_OUTPUT);
    assert_true(n_in <= 8 && n_out <= 8);
    mopt_tensor *in[8] = {0};
    for (size_t i = 0; i < n_in; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/test_data_set_0/input_%zu.npy", dir, i);
        assert_int_equal(mopt_tensor_load(p, &in[i]), MOPT_OK);
    }
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    for (size_t i = 0; i < n_out; i++)
        outs[i] = NULL;
    mopt_status st =
        mopt_session_run(s, n_in, NULL, (const mopt_tensor *const *)in, n_out, NULL, outs);
    if (st) fprintf(stderr, "%s: %s\n", dir, mopt_last_error());
    assert_int_equal(st, MOPT_OK);
    mopt_session_destroy(s);
    for (size_t i = 0; i < n_in; i++)
        mopt_tensor_destroy(in[i]);
    return n_out;
}

/* The outputs against the ONNX Runtime references, within the tolerance
 * file's atol/rtol. */
static void check_reference(const char *dir, mopt_tensor *const *outs, size_t n) {
    double atol = 1e-5, rtol = 1e-4;
    char p[512];
    snprintf(p, sizeof p, "%s/tolerance", dir);
    FILE *f = fopen(p, "r");
    if (f) {
        assert_int_equal(fscanf(f, "%lf %lf", &atol, &rtol), 2);
        fclose(f);
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/test_data_set_0/output_%zu.npy", dir, i);
        mopt_tensor *ref = NULL;
        assert_int_equal(mopt_tensor_load(p, &ref), MOPT_OK);
        assert_int_equal(mopt_tensor_element_count(ref), mopt_tensor_element_count(outs[i]));
        if (mopt_tensor_dtype(ref) == MOPT_DTYPE_F32) {
            const float *a = mopt_tensor_data_const(outs[i]), *b = mopt_tensor_data_const(ref);
            for (int64_t k = 0; k < mopt_tensor_element_count(ref); k++)
                assert_true(fabs((double)a[k] - b[k]) <= atol + rtol * fabs((double)b[k]));
        }
        mopt_tensor_destroy(ref);
    }
}

MOPT_TEST(models_round_trip) {
    static const char *const models[] = {"bert", "cnn", "gpt", "mobilenet"};
    for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
        char dir[256], onnx[300];
        snprintf(dir, sizeof dir, "tests/models/%s", models[mi]);
        snprintf(onnx, sizeof onnx, "%s/model.onnx", dir);
        if (access(onnx, R_OK) != 0) {
            fprintf(stderr, "skipping %s (no model)\n", models[mi]);
            continue;
        }
        for (int level = 0; level <= 3; level++) {
            mopt_options *o = opts_for(level, 1);
            mopt_model *a = NULL, *b = NULL, *c = NULL;
            assert_int_equal(mopt_model_load(onnx, o, &a), MOPT_OK);
            char p1[128], p2[128], p3[128];
            tmp_path(p1, sizeof p1, "a.mopt");
            tmp_path(p2, sizeof p2, "b.mopt");
            tmp_path(p3, sizeof p3, "c.mopt");
            assert_int_equal(mopt_model_save(a, p1), MOPT_OK);
            /* the file, whatever the options say, loads as saved */
            mopt_options *o2 = opts_for(level ? 0 : 3, 1);
            mopt_status st = mopt_model_load(p1, o2, &b);
            if (st) fprintf(stderr, "%s O%d: %s\n", models[mi], level, mopt_last_error());
            assert_int_equal(st, MOPT_OK);
            assert_int_equal(mopt_model_node_count(a), mopt_model_node_count(b));
            assert_int_equal(mopt_model_parameter_bytes(a), mopt_model_parameter_bytes(b));
            assert_int_equal(b->config.opt_level, level);
            assert_string_equal(mopt_model_pass_report(a), mopt_model_pass_report(b));
            assert_true(b->source_checksum == a->source_checksum);
            check_borrowed(b->graph, b->graph->backing, b->graph->backing_size);
            assert_int_equal(mopt_model_save(b, p2), MOPT_OK);
            assert_same_file(p1, p2);
            /* from memory too */
            size_t len;
            uint8_t *bytes = read_file(p1, &len);
            assert_int_equal(mopt_model_load_from_memory(bytes, len, NULL, &c), MOPT_OK);
            memset(bytes, 0, len); /* the model must not depend on the caller's buffer */
            mopt_free(bytes);
            assert_int_equal(mopt_model_save(c, p3), MOPT_OK);
            assert_same_file(p1, p3);
            /* outputs: bit for bit the original's, and within the references */
            mopt_tensor *oa[8], *ob[8], *oc[8];
            size_t n = run_case(a, dir, oa);
            assert_int_equal(run_case(b, dir, ob), n);
            assert_int_equal(run_case(c, dir, oc), n);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(mopt_tensor_size_bytes(oa[i]), mopt_tensor_size_bytes(ob[i]));
                assert_memory_equal(mopt_tensor_data_const(oa[i]), mopt_tensor_data_const(ob[i]),
                                    mopt_tensor_size_bytes(oa[i]));
                assert_memory_equal(mopt_tensor_data_const(oa[i]), mopt_tensor_data_const(oc[i]),
                                    mopt_tensor_size_bytes(oa[i]));
            }
            check_reference(dir, ob, n);
            for (size_t i = 0; i < n; i++) {
                mopt_tensor_destroy(oa[i]);
                mopt_tensor_destroy(ob[i]);
                mopt_tensor_destroy(oc[i]);
            }
            mopt_model_destroy(c);
            mopt_model_destroy(b);
            mopt_model_destroy(a);
            mopt_options_destroy(o);
            mopt_options_destroy(o2);
        }
    }
}

/* A graph loaded from a .mopt saved at opt_level 0 and then optimized: the
 * passes fold nodes whose inputs are borrowed weights and compaction drops
 * those weights, which must not be freed (ASan checks), and the result
 * still matches the references. */
MOPT_TEST(passes_on_borrowed_weights) {
    const char *dir = "tests/models/bert";
    mopt_options *o = opts_for(0, 1);
    mopt_model *a = NULL, *b = NULL;
    assert_int_equal(mopt_model_load("tests/models/bert/model.onnx", o, &a), MOPT_OK);
    char p[128];
    tmp_path(p, sizeof p, "o0.mopt");
    assert_int_equal(mopt_model_save(a, p), MOPT_OK);
    void *base;
    size_t size;
    assert_int_equal(mfmt_map_file(p, &base, &size), MOPT_OK);
    ir_graph *g = NULL;
    mfmt_meta meta;
    assert_int_equal(mfmt_load(base, size, mfmt_unmap, true, &g, &meta), MOPT_OK);
    int32_t before = g->n_nodes;
    rt_config cfg;
    assert_int_equal(rt_config_read(NULL, &cfg), MOPT_OK);
    cfg.opt_level = 2;
    assert_int_equal(rt_model_build(g, &cfg, &b), MOPT_OK);
    assert_true(b->graph->n_nodes < before);
    assert_true(b->report.n > 0);
    mopt_tensor *out[8];
    size_t n = run_case(b, dir, out);
    check_reference(dir, out, n);
    for (size_t i = 0; i < n; i++)
        mopt_tensor_destroy(out[i]);
    mopt_model_destroy(b);
    mopt_model_destroy(a);
    mopt_options_destroy(o);
}

MOPT_TEST(weight_checksums) {
    mopt_model *a = NULL, *b = NULL;
    assert_int_equal(mopt_model_load("tests/models/cnn/model.onnx", NULL, &a), MOPT_OK);
    char p[128];
    tmp_path(p, sizeof p, "cnn.mopt");
    assert_int_equal(mopt_model_save(a, p), MOPT_OK);
    /* where a weight lies in the file */
    assert_int_equal(mopt_model_load(p, NULL, &b), MOPT_OK);
    size_t at = 0;
    for (int32_t i = 0; i < b->graph->n_values && !at; i++) {
        const ir_value *v = b->graph->values[i];
        if ((v->flags & IR_VALUE_BORROWED) && v->nbytes > 16)
            at = (size_t)((const uint8_t *)v->data - (const uint8_t *)b->graph->backing) + 5;
    }
    mopt_model_destroy(b);
    b = NULL;
    assert_true(at > 0);
    size_t len;
    uint8_t *bytes = read_file(p, &len);
    bytes[at] ^= 0x40;
    mopt_options *on = opts_for(2, 1), *off = opts_for(2, 0);
    assert_int_equal(mopt_model_load_from_memory(bytes, len, on, &b), MOPT_ERR_PARSE);
    assert_null(b);
    assert_non_null(strstr(mopt_last_error(), "checksum mismatch"));
    assert_non_null(strstr(mopt_last_error(), "tensors["));
    /* without verification the layout is still checked, the weights are not */
    assert_int_equal(mopt_model_load_from_memory(bytes, len, off, &b), MOPT_OK);
    mopt_model_destroy(b);
    b = NULL;
    /* the header is always checked */
    bytes[20] ^= 1;
    assert_int_equal(mopt_model_load_from_memory(bytes, len, off, &b), MOPT_ERR_PARSE);
    assert_non_null(strstr(mopt_last_error(), "header checksum mismatch"));
    mopt_free(bytes);
    mopt_model_destroy(a);
    mopt_options_destroy(on);
    mopt_options_destroy(off);
}

MOPT_TEST(save_errors) {
    mopt_model *a = NULL;
    assert_int_equal(mopt_model_load("tests/models/cnn/model.onnx", NULL, &a), MOPT_OK);
    assert_int_equal(mopt_model_save(NULL, "/tmp/x.mopt"), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_model_save(a, NULL), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_model_save(a, ""), MOPT_ERR_INVALID_ARGUMENT);
    assert_int_equal(mopt_model_save(a, "/nonexistent-dir/x/y.mopt"), MOPT_ERR_IO);
    assert_non_null(strstr(mopt_last_error(), "/nonexistent-dir/x/y.mopt"));
    assert_string_equal(mopt_model_pass_report(NULL), "");
    assert_non_null(strstr(mopt_model_pass_report(a), "fold_constants"));
    /* saving over the file a model is mapped from keeps that model valid */
    char p[128];
    tmp_path(p, sizeof p, "self.mopt");
    mopt_model *b = NULL;
    assert_int_equal(mopt_model_save(a, p), MOPT_OK);
    assert_int_equal(mopt_model_load(p, NULL, &b), MOPT_OK);
    assert_int_equal(mopt_model_save(b, p), MOPT_OK);
    mopt_tensor *oa[8], *ob[8];
    size_t n = run_case(a, "tests/models/cnn", oa);
    run_case(b, "tests/models/cnn", ob);
    for (size_t i = 0; i < n; i++) {
        assert_memory_equal(mopt_tensor_data_const(oa[i]), mopt_tensor_data_const(ob[i]),
                            mopt_tensor_size_bytes(oa[i]));
        mopt_tensor_destroy(oa[i]);
        mopt_tensor_destroy(ob[i]);
    }
    mopt_model_destroy(b);
    mopt_model_destroy(a);
}

MOPT_TEST_MAIN_WITH(test_tmpdir_setup, test_tmpdir_teardown,
                    cmocka_unit_test(format_everything_round_trip),
                    cmocka_unit_test(format_rejects_string_weights),
                    cmocka_unit_test(format_hash_sensitivity), cmocka_unit_test(models_round_trip),
                    cmocka_unit_test(passes_on_borrowed_weights),
                    cmocka_unit_test(weight_checksums), cmocka_unit_test(save_errors))
