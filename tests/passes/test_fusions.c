/*
 * test_fusions.c — proves that the fusion passes fire on the patterns torch
 * exports and change nothing numerically. For every case folder under
 * tests/passes/data (written by export_patterns.py): load model.onnx through
 * the public API at opt_level 2, check the graph against the case's
 * `expect` rules (node op types after optimization), then run
 * test_data_set_0 and compare with ONNX Runtime's outputs and with the same
 * model run at opt_level 0, within 1e-4; and the outputs at opt_level 3
 * (layouts, Winograd) against ONNX Runtime's.
 *
 * With BAD_DIR, also loads every BAD_DIR/<status>_<what>.onnx (malformed
 * fused nodes, from gen_fused_ops.py) and expects the load to fail with that
 * status ("shape" or "invalid") and a message naming the node.
 *
 * usage: test_fusions DATA_DIR [BAD_DIR]
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <mopt/mopt.h>

#include "../test_paths.h"
#include "../test_sets.h"

#define MAX_CASES 256
#define MAX_IO 16
#define TOL 1e-4

typedef test_case_dir fcase;

/* A case folder holds model.onnx. */
static int has_model(const char *path) {
    char p[1100];
    snprintf(p, sizeof p, "%s/model.onnx", path);
    return file_exists(p);
}

static fcase g_cases[MAX_CASES];
static test_case_list g_list = {g_cases, 0, MAX_CASES, has_model};

/* Nodes of op type `op` ("FusedConv" also matches "mopt.FusedConv"). */
static int count_op(const mopt_model *m, const char *op) {
    int n = 0;
    for (size_t i = 0; i < mopt_model_node_count(m); i++) {
        const char *t = mopt_model_node_op_type(m, i);
        if (!t) continue;
        if (strncmp(t, "mopt.", 5) == 0) t += 5;
        n += strcmp(t, op) == 0;
    }
    return n;
}

static void histogram(const mopt_model *m, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < mopt_model_node_count(m) && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " " : "",
                                mopt_model_node_op_type(m, i));
}

static mopt_model *load(const fcase *c, int level) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", level), MOPT_OK);
    char p[1100];
    snprintf(p, sizeof p, "%s/model.onnx", c->path);
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(p, o, &m);
    mopt_options_destroy(o);
    if (st != MOPT_OK)
        fail_msg("%s: load at opt_level %d failed: %s: %s", c->name, level, mopt_status_string(st),
                 mopt_last_error());
    return m;
}

static void check_rules(const fcase *c, const mopt_model *m) {
    char p[1100], line[256], hist[4096];
    snprintf(p, sizeof p, "%s/expect", c->path);
    FILE *f = fopen(p, "r");
    if (!f) fail_msg("%s: no expect file", c->name);
    histogram(m, hist, sizeof hist);
    int rules = 0;
    while (fgets(line, sizeof line, f)) {
        char kind[32], op[128];
        int n = 0;
        int got = sscanf(line, "%31s %127s %d", kind, op, &n);
        if (got < 2) continue;
        int have = count_op(m, op);
        bool ok = false;
        if (strcmp(kind, "absent") == 0)
            ok = have == 0, n = 0;
        else if (strcmp(kind, "count") == 0 && got == 3)
            ok = have == n;
        else if (strcmp(kind, "min") == 0 && got == 3)
            ok = have >= n;
        else {
            fclose(f);
            fail_msg("%s: bad rule '%s'", c->name, line);
        }
        if (!ok) {
            fclose(f);
            fail_msg("%s: rule '%s %s %d' fails: %d %s node(s) after optimization: %s", c->name,
                     kind, op, n, have, op, hist);
        }
        rules++;
    }
    fclose(f);
    assert_true(rules > 0);
}

static void run(const fcase *c, mopt_model *m, mopt_tensor **in, int n_in, mopt_tensor **out,
                int n_out) {
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    mopt_status st = mopt_session_run(s, (size_t)n_in, NULL, (const mopt_tensor *const *)in,
                                      (size_t)n_out, NULL, out);
    if (st != MOPT_OK)
        fail_msg("%s: run failed: %s: %s", c->name, mopt_status_string(st), mopt_last_error());
    mopt_session_destroy(s);
}

static void compare(const fcase *c, const char *what, int k, const mopt_tensor *got,
                    const mopt_tensor *want) {
    assert_int_equal(mopt_tensor_dtype(want), MOPT_DTYPE_F32);
    int64_t i = test_f32_mismatch(got, want, TOL);
    if (i >= 0)
        fail_msg("%s: output %d element %lld is %.9g, %s gives %.9g", c->name, k, (long long)i,
                 ((const float *)mopt_tensor_data_const(got))[i], what,
                 ((const float *)mopt_tensor_data_const(want))[i]);
}

static void test_case(void **state) {
    const fcase *c = *state;
    mopt_model *m2 = load(c, 2), *m0 = load(c, 0);
    check_rules(c, m2);
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/test_data_set_0", c->path);
    mopt_tensor *in[MAX_IO] = {0}, *ref[MAX_IO] = {0}, *o2[MAX_IO] = {0}, *o0[MAX_IO] = {0};
    int n_in = test_load_set(dir, "input", 0, in, MAX_IO);
    int n_out = test_load_set(dir, "output", 0, ref, MAX_IO);
    assert_int_equal((size_t)n_in, mopt_model_io_count(m2, MOPT_INPUT));
    assert_true(n_out > 0);
    run(c, m2, in, n_in, o2, n_out);
    run(c, m0, in, n_in, o0, n_out);
    for (int k = 0; k < n_out; k++) {
        compare(c, "ONNX Runtime", k, o2[k], ref[k]);
        compare(c, "opt_level 0", k, o2[k], o0[k]);
    }
    /* opt_level 3 (layouts, Winograd, prepacked weights): outputs only */
    mopt_model *m3 = load(c, 3);
    mopt_tensor *o3[MAX_IO] = {0};
    run(c, m3, in, n_in, o3, n_out);
    for (int k = 0; k < n_out; k++) {
        compare(c, "ONNX Runtime (opt_level 3)", k, o3[k], ref[k]);
        mopt_tensor_destroy(o3[k]);
    }
    mopt_model_destroy(m3);
    for (int k = 0; k < n_in; k++)
        mopt_tensor_destroy(in[k]);
    for (int k = 0; k < n_out; k++) {
        mopt_tensor_destroy(ref[k]);
        mopt_tensor_destroy(o2[k]);
        mopt_tensor_destroy(o0[k]);
    }
    printf("[ CASE     ] %s: %zu nodes at opt_level 2, %zu at 0\n", c->name,
           mopt_model_node_count(m2), mopt_model_node_count(m0));
    mopt_model_destroy(m2);
    mopt_model_destroy(m0);
}

static void test_bad(void **state) {
    const fcase *c = *state;
    mopt_status want = strncmp(c->name, "shape_", 6) == 0 ? MOPT_ERR_SHAPE : MOPT_ERR_INVALID_MODEL;
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", 0), MOPT_OK);
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(c->path, o, &m);
    mopt_options_destroy(o);
    if (st == MOPT_OK) {
        mopt_model_destroy(m);
        fail_msg("%s: loaded, expected %s", c->name, mopt_status_string(want));
    }
    if (st != want)
        fail_msg("%s: %s (%s), expected %s", c->name, mopt_status_string(st), mopt_last_error(),
                 mopt_status_string(want));
    if (!strstr(mopt_last_error(), "bad_node"))
        fail_msg("%s: message does not name the node: %s", c->name, mopt_last_error());
    printf("[ BAD      ] %s: %s\n", c->name, mopt_last_error());
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: test_fusions DATA_DIR [BAD_DIR]\n");
        return 2;
    }
    if (list_dir("test_fusions", argv[1], NULL, test_case_add, &g_list)) return 1;
    if (g_list.n == 0) {
        fprintf(stderr, "test_fusions: no cases in %s\n", argv[1]);
        return 1;
    }
    qsort(g_cases, (size_t)g_list.n, sizeof g_cases[0], test_case_cmp);
    int n_good = g_list.n;
    if (argc == 3) {
        g_list.keep = NULL; /* every bad model file */
        if (g_list.n < MAX_CASES &&
            list_dir("test_fusions", argv[2], ".onnx", test_case_add, &g_list))
            return 1;
        qsort(g_cases + n_good, (size_t)(g_list.n - n_good), sizeof g_cases[0], test_case_cmp);
    }
    struct CMUnitTest *tests = calloc((size_t)g_list.n, sizeof *tests);
    if (!tests) return 1;
    for (int i = 0; i < g_list.n; i++) {
        tests[i].name = g_cases[i].name;
        tests[i].test_func = i < n_good ? test_case : test_bad;
        tests[i].initial_state = &g_cases[i];
    }
    int rc = _cmocka_run_group_tests("fusions", tests, (size_t)g_list.n, NULL, NULL);
    free(tests);
    return rc;
}
