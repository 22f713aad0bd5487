/*
 * test_cnn_bf16.c — CNNs at precision=bf16 on AMX (issue 11): on the CNN
 * and MobileNet test models and on the layout pass's `blocked` and `wino`
 * cases, opt_level 3, every convolution keeps channels-last X and Y (never
 * oneDNN's blocked layout, whose bf16 kernel is not an AMX one), every
 * non-depthwise convolution runs a bf16 variant on oneDNN's AMX kernels
 * (onednn_conv_bf16_counts: none answered otherwise) with activations kept
 * bf16 between convolutions (the storage plan), depthwise ones run f32, and
 * the outputs match precision=fp32 (cosine >= 0.999). At fp32 the `blocked`
 * case still gets its blocked convolutions. Skipped (visibly) where bf16
 * convolutions do not run on AMX (ops_conv_bf16_amx: no AMX, no oneDNN, or
 * MOPT_ISA / ONEDNN_MAX_CPU_ISA capping it). The same at precision=int8
 * without a calibration table (no int8 convolution kernel: bf16 on AMX).
 * The 1x1 stride-1 channels-last convs run our own AMX GEMM (cpu-amx-bf16,
 * amxgemm_cpu.c) instead of oneDNN: every eligible one, none with
 * MOPT_AMX_CONV=0 (skipped with a message without AMX tiles).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"
#include "core/cpu.h"
#include "ir/ir.h"
#include "mopt_config.h"
#include "ops/conv.h"
#include "ops/impls.h"
#include "runtime/runtime.h"
#ifdef MOPT_HAVE_ONEDNN
#include "kernels/onednn/onednn.h"
#endif

#define CNN "tests/models/cnn/model.onnx"
#define MOBILENET "tests/models/mobilenet/model.onnx"
#define BLOCKED "tests/passes/layout_data/blocked/model.onnx"
#define WINO "tests/passes/layout_data/wino/model.onnx"

static mopt_model *load(const char *path, const char *precision) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "precision", precision), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", 3), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    if (mopt_model_load(path, o, &m) != MOPT_OK) fail_msg("%s: %s", path, mopt_last_error());
    mopt_options_destroy(o);
    return m;
}

static bool is_conv(const ir_node *n) {
    return strcmp(n->op_type, "FusedConv") == 0 || strcmp(n->op_type, "Conv") == 0;
}

static bool depthwise(const ir_node *n) { return ir_node_attr_int(n, "group", 1) > 1; }

/* A FusedConv of g with a 1x1 kernel (W [O, I, 1, 1]: the own AMX GEMM's,
 * amxgemm_cpu.c). */
static bool pointwise(const ir_graph *g, const ir_node *n) {
    if (strcmp(n->op_type, "FusedConv") != 0 || depthwise(n) || n->n_inputs < 2) return false;
    const ir_shape *w = &g->values[n->inputs[1]]->shape;
    for (int32_t i = 2; i < w->rank; i++)
        if (w->syms[i] || w->dims[i] != 1) return false;
    return w->rank > 2;
}

/* Whether the ints attribute `name` of n is absent or all `v`. */
static bool ints_all(const ir_node *n, const char *name, int64_t v) {
    const ir_attr *a = ir_node_attr(n, name);
    for (size_t i = 0; a && i < a->n; i++)
        if (a->ints[i] != v) return false;
    return true;
}

/* A 1x1 FusedConv the AMX GEMM's rule takes: channels-last X and Y,
 * strides 1, no padding, an image larger than 1x1 (1x1 ones are the
 * GEMV's). */
static bool amx_pointwise(const ir_graph *g, const ir_node *n) {
    if (!pointwise(g, n) || !ints_all(n, "strides", 1) || !ints_all(n, "pads", 0) ||
        ir_node_attr_int(n, "layout", 0) != (CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC))
        return false;
    const ir_shape *x = &g->values[n->inputs[0]]->shape;
    int64_t hw = 1;
    for (int32_t i = 2; i < x->rank; i++)
        hw *= x->syms[i] ? 2 : x->dims[i];
    return hw > 1;
}

/* Convolutions reading or writing the blocked layout. */
static int blocked_convs(const mopt_model *m) {
    int n_blk = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++) {
        const ir_node *n = m->graph->nodes[i];
        int64_t layout = is_conv(n) ? ir_node_attr_int(n, "layout", 0) : 0;
        n_blk += (layout & (CONV_LAYOUT_X_BLK16 | CONV_LAYOUT_Y_BLK16)) != 0;
    }
    return n_blk;
}

/* One run on a fixed input (batch 1; the models' other dims are known):
 * output 0 as a new f32 buffer of *n elements. */
static float *run_once(const mopt_model *m, int64_t *n) {
    int rank = mopt_model_io_rank(m, MOPT_INPUT, 0);
    int64_t dims[8];
    for (int k = 0; k < rank; k++) {
        dims[k] = mopt_model_io_dim(m, MOPT_INPUT, 0, k);
        if (dims[k] <= 0) dims[k] = 1;
    }
    mopt_tensor *x = NULL, *y = NULL;
    assert_int_equal(mopt_tensor_create(MOPT_DTYPE_F32, rank, dims, &x), MOPT_OK);
    float *xd = mopt_tensor_data(x);
    for (int64_t i = 0; i < mopt_tensor_element_count(x); i++)
        xd[i] = (float)((i * 7919) % 1000) / 500.f - 1.f;
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    const char *in_name = mopt_model_io_name(m, MOPT_INPUT, 0);
    const char *out_name = mopt_model_io_name(m, MOPT_OUTPUT, 0);
    if (mopt_session_run(s, 1, &in_name, (const mopt_tensor *const *)&x, 1, &out_name, &y))
        fail_msg("run: %s", mopt_last_error());
    *n = mopt_tensor_element_count(y);
    float *out = malloc((size_t)*n * sizeof *out);
    assert_non_null(out);
    memcpy(out, mopt_tensor_data_const(y), (size_t)*n * sizeof *out);
    mopt_tensor_destroy(y);
    mopt_tensor_destroy(x);
    mopt_session_destroy(s);
    return out;
}

static double cosine(const float *a, const float *b, int64_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (int64_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return ab / (sqrt(aa * bb) + 1e-30);
}

static void amx_counts(long long *amx, long long *other) {
#ifdef MOPT_HAVE_ONEDNN
    onednn_conv_bf16_counts(amx, other);
#else
    *amx = *other = 0;
#endif
}

/* The model at `precision` (bf16, or int8 without a calibration table,
 * whose convolutions have no int8 kernel and run bf16 on AMX): no blocked
 * convolution; each convolution's kernel variant bf16 (f32 when depthwise);
 * at least min_stored tensors kept bf16; a run makes AMX convolution
 * primitives and no other bf16 one; the output within cosine min_cos of
 * fp32's. */
static void check_model_at(const char *path, const char *precision, int32_t min_stored,
                           double min_cos) {
    mopt_model *m = load(path, precision);
    assert_int_equal(blocked_convs(m), 0);
    int convs = 0, own = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++) {
        const ir_node *n = m->graph->nodes[i];
        if (!is_conv(n)) continue;
        const char *k = rt_node_kernel_name(m, i);
        bool bf16 = strncmp(k, "onednn-bf16", 11) == 0, amx = strcmp(k, "cpu-amx-bf16") == 0;
        if ((bf16 || amx) == depthwise(n) || (amx && !pointwise(m->graph, n)))
            fail_msg("%s: node '%s' (group %lld) runs %s", path, n->name,
                     (long long)ir_node_attr_int(n, "group", 1), k);
        convs += bf16;
        own += amx;
    }
    assert_true(convs + own > 0);
    int32_t stored, to_bf16, to_f32;
    rt_storage_counts(m, &stored, &to_bf16, &to_f32);
    if (stored < min_stored) fail_msg("%s: %d tensors kept bf16", path, (int)stored);
    long long amx0, other0, amx1, other1;
    amx_counts(&amx0, &other0);
    int64_t n_bf = 0, n_fp = 0;
    float *y_bf = run_once(m, &n_bf);
    amx_counts(&amx1, &other1);
    mopt_model_destroy(m);
    if (amx1 - amx0 < convs || other1 != other0)
        fail_msg("%s: %lld AMX bf16 convolutions made for %d bf16 nodes, %lld not AMX", path,
                 amx1 - amx0, convs, other1 - other0);
    m = load(path, "fp32");
    float *y_fp = run_once(m, &n_fp);
    mopt_model_destroy(m);
    assert_int_equal(n_bf, n_fp);
    double c = cosine(y_bf, y_fp, n_bf);
    printf("%s at %s: %d bf16 convolutions on oneDNN, %d on cpu-amx-bf16, %d tensors kept bf16, "
           "cosine vs fp32 %.6f\n",
           path, precision, convs, own, (int)stored, c);
    if (!(c >= min_cos)) fail_msg("%s: cosine vs fp32 %.6f", path, c);
    free(y_bf);
    free(y_fp);
}

static void check_model(const char *path, int32_t min_stored) {
    check_model_at(path, "bf16", min_stored, 0.999);
}

MOPT_TEST(cnn_amx_bf16) {
    if (!ops_conv_bf16_amx()) skip(); /* bf16 convolutions do not run on AMX here */
    check_model(CNN, 5);
}

MOPT_TEST(mobilenet_amx_bf16) {
    if (!ops_conv_bf16_amx()) skip();
    check_model(MOBILENET, 8);
}

/* the layout pass's blocked cases: blocked at fp32, channels-last at bf16 */
MOPT_TEST(blocked_cases_channels_last) {
    if (!ops_conv_bf16_amx()) skip();
    mopt_model *m = load(BLOCKED, "fp32");
    int blk = blocked_convs(m);
    mopt_model_destroy(m);
    assert_true(blk > 0); /* else this test checks nothing */
    check_model(BLOCKED, 1);
    check_model(WINO, 1);
}

/* precision=int8 without a calibration table quantizes the matmuls only: its
 * convolutions run as at bf16 (dispatch.c float_conv), not f32 */
MOPT_TEST(dynamic_int8_convs_bf16) {
    if (!ops_conv_bf16_amx()) skip();
    check_model_at(CNN, "int8", 5, 0.99);
    check_model_at(MOBILENET, "int8", 8, 0.99);
}

/* The 1x1 FusedConvs of MobileNet (and of the CNN) at bf16 run the own AMX
 * GEMM (cpu-amx-bf16, amxgemm_cpu.c), their X and Y kept bf16; with
 * MOPT_AMX_CONV=0 every one is left to oneDNN. Skipped (with a message)
 * where the AMX GEMM cannot run (no AMX tiles granted, MOPT_AMX=0). */
static int own_pointwise(const char *path, int *pw) {
    mopt_model *m = load(path, "bf16");
    int own = 0;
    *pw = 0;
    for (int32_t i = 0; i < m->graph->n_nodes; i++) {
        const ir_node *n = m->graph->nodes[i];
        bool amx = strcmp(rt_node_kernel_name(m, i), "cpu-amx-bf16") == 0;
        if (!amx_pointwise(m->graph, n)) {
            if (amx) fail_msg("%s: node '%s' runs cpu-amx-bf16", path, n->name);
            continue;
        }
        (*pw)++;
        own += amx;
    }
    mopt_model_destroy(m);
    return own;
}

MOPT_TEST(pointwise_on_own_amx_gemm) {
    if (!ops_conv_bf16_amx() || !cpu_get()->amx_kernels) {
        print_message("no AMX bf16 tiles here (or MOPT_AMX=0): cpu-amx-bf16 convs not checked\n");
        skip();
    }
    int pw = 0, own = own_pointwise(MOBILENET, &pw);
    printf("%s: %d of %d 1x1 stride-1 convolutions on cpu-amx-bf16\n", MOBILENET, own, pw);
    assert_true(pw > 0);
    assert_int_equal(own, pw); /* the rule takes every one (amxgemm_cpu.c) */
    own = own_pointwise(BLOCKED, &pw);
    assert_true(pw > 0);
    assert_int_equal(own, pw);
    check_model(MOBILENET, 8); /* kept bf16, cosine vs fp32 */
    setenv("MOPT_AMX_CONV", "0", 1);
    own = own_pointwise(MOBILENET, &pw);
    unsetenv("MOPT_AMX_CONV");
    assert_int_equal(own, 0);
}

MOPT_TEST_MAIN(cmocka_unit_test(cnn_amx_bf16), cmocka_unit_test(mobilenet_amx_bf16),
               cmocka_unit_test(pointwise_on_own_amx_gemm),
               cmocka_unit_test(blocked_cases_channels_last),
               cmocka_unit_test(dynamic_int8_convs_bf16))
