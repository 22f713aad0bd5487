/*
 * test_layout.c — the layout pass (lib/passes/pass_layout.c, opt_level 3):
 * for every case folder under DATA_DIR (written by gen_layout_cases.py),
 * loads model.onnx at opt_level 3 and checks the pass's report against the
 * case's `expect` ("values N": values kept channels-last, "convs N":
 * convolutions given a layout, "se N": squeeze-excitation ops rewritten, "pools N", "affine N":
 * BatchNormalizations as mopt.ChannelsLastAffine, "flex N": Concat/Split as
 * mopt.ChannelsLastConcat/Split, "blocked N": convolutions reading or writing oneDNN's blocked
 * layout; "blocked_avx512 N" instead of "blocked N" on a CPU with AVX-512 (F, BW, VL, DQ in
 * /proc/cpuinfo, MOPT_ISA not capping it), where oneDNN's Winograd kernels exist; "resizes N":
 * nearest Resizes as mopt.ChannelsLastResize), then runs each test_data_set_K (different batch
 * and spatial sizes, H and W unknown to inference) and compares with ONNX Runtime's outputs and
 * with opt_level 0. Each is also run with backend=ref (FusedConv's reference run converts
 * channels-last and blocked data), after a save and reload as a .mopt file (the layouts are
 * attributes of the graph) and on 2 threads.
 *
 * usage: test_layout DATA_DIR TMP_DIR
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

#include <cmocka.h>
#define MOPT_EXPERIMENTAL_API /* the pass report entries */
#include <mopt/mopt.h>

#include "../test_paths.h"
#include "../test_sets.h"

#define MAX_CASES 16
#define MAX_IO 8
#define TOL 1e-4

typedef test_case_dir lcase;

/* every sub-folder of the data folder is a case */
static lcase g_cases[MAX_CASES];
static test_case_list g_list = {g_cases, 0, MAX_CASES, is_dir};
static const char *g_tmp;

static mopt_model *load_threads(const char *path, int level, const char *backend, int threads) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "opt_level", level), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", threads), MOPT_OK);
    if (backend) assert_int_equal(mopt_options_set_string(o, "backend", backend), MOPT_OK);
    mopt_model *m = NULL;
    mopt_status st = mopt_model_load(path, o, &m);
    mopt_options_destroy(o);
    if (st != MOPT_OK)
        fail_msg("%s: load at opt_level %d failed: %s: %s", path, level, mopt_status_string(st),
                 mopt_last_error());
    return m;
}

static mopt_model *load(const char *path, int level, const char *backend) {
    return load_threads(path, level, backend, 1);
}

/* The count before `phrase` in the `layout` pass's note (0 when the note
 * does not say), or -1 when the pass did not run. */
static int64_t layout_note(const mopt_model *m, const char *phrase) {
    for (size_t i = 0; i < mopt_model_pass_count(m); i++) {
        if (strcmp(mopt_model_pass_name(m, i), "layout") != 0) continue;
        const char *note = mopt_model_pass_note(m, i);
        const char *v = strstr(note, phrase);
        if (!v) return 0;
        while (v > note && v[-1] == ' ')
            v--;
        while (v > note && v[-1] >= '0' && v[-1] <= '9')
            v--;
        return strtoll(v, NULL, 10);
    }
    return -1;
}

/* Whether the CPU has the AVX-512 subset oneDNN's avx512_core kernels need
 * and MOPT_ISA does not cap it below. */
static bool has_avx512(void) {
    const char *cap = getenv("MOPT_ISA");
    if (cap && *cap && strcmp(cap, "avx512") != 0) return false;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    static char line[8192];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0)
            found = strstr(line, " avx512f") && strstr(line, " avx512bw") &&
                    strstr(line, " avx512vl") && strstr(line, " avx512dq");
    fclose(f);
    return found;
}

/* Whether the case's expect file has a "blocked_avx512" rule. */
static bool has_avx512_rule(FILE *f) {
    char line[128];
    bool found = false;
    while (fgets(line, sizeof line, f))
        found = found || strncmp(line, "blocked_avx512 ", 15) == 0;
    rewind(f);
    return found;
}

static void check_expect(const lcase *c, const mopt_model *m) {
    static const char *const keys[][2] = {{"values", "values channels-last"},
                                          {"convs", "convolutions"},
                                          {"se", "squeeze-excitation ops"},
                                          {"pools", "pools"},
                                          {"affine", "batch-norm affines"},
                                          {"flex", "concats/splits"},
                                          {"blocked", "blocked convolutions"},
                                          {"blocked_avx512", "blocked convolutions"},
                                          {"resizes", "resizes"}};
    char p[1100], line[128];
    snprintf(p, sizeof p, "%s/expect", c->path);
    FILE *f = fopen(p, "r");
    if (!f) fail_msg("%s: no expect file", c->name);
    int rules = 0;
    /* with a blocked_avx512 rule, which of the two applies */
    bool alt = has_avx512_rule(f), avx512 = alt && has_avx512();
    while (fgets(line, sizeof line, f)) {
        char kind[32];
        long long n;
        if (sscanf(line, "%31s %lld", kind, &n) != 2) continue;
        const int n_keys = (int)(sizeof keys / sizeof keys[0]);
        int k = 0;
        while (k < n_keys && strcmp(kind, keys[k][0]) != 0)
            k++;
        if (k == n_keys) fail_msg("%s: bad rule '%s'", c->name, line);
        if (alt && (k == 6 || k == 7) && (k == 7) != avx512) continue;
        int64_t have = layout_note(m, keys[k][1]);
        if (have < 0) fail_msg("%s: no layout pass at opt_level 3", c->name);
        if (have != n)
            fail_msg("%s: %s: the layout pass reports %lld, expected %lld (%s)", c->name, kind,
                     (long long)have, n, mopt_model_pass_report(m));
        rules++;
    }
    fclose(f);
    assert_true(rules >= 3);
}

static void run(const lcase *c, mopt_model *m, mopt_tensor **in, int n_in, mopt_tensor **out,
                int n_out) {
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    /* twice: the second run reuses the cached primitives and memory plan */
    for (int r = 0; r < 2; r++) {
        for (int k = 0; r && k < n_out; k++) {
            mopt_tensor_destroy(out[k]);
            out[k] = NULL;
        }
        mopt_status st = mopt_session_run(s, (size_t)n_in, NULL, (const mopt_tensor *const *)in,
                                          (size_t)n_out, NULL, out);
        if (st != MOPT_OK)
            fail_msg("%s: run failed: %s: %s", c->name, mopt_status_string(st), mopt_last_error());
    }
    mopt_session_destroy(s);
}

static void compare(const lcase *c, const char *run, const char *what, int set, int k,
                    const mopt_tensor *got, const mopt_tensor *want) {
    assert_true(mopt_tensor_element_count(want) > 0);
    int64_t i = test_f32_mismatch(got, want, TOL);
    if (i >= 0)
        fail_msg("%s set %d, %s: output %d element %lld is %.9g, %s gives %.9g", c->name, set, run,
                 k, (long long)i, ((const float *)mopt_tensor_data_const(got))[i], what,
                 ((const float *)mopt_tensor_data_const(want))[i]);
}

static void free_all(mopt_tensor **t, int n) {
    for (int k = 0; k < n; k++) {
        mopt_tensor_destroy(t[k]);
        t[k] = NULL;
    }
}

static void test_case(void **state) {
    const lcase *c = *state;
    char model[1100], saved[1400];
    snprintf(model, sizeof model, "%s/model.onnx", c->path);
    snprintf(saved, sizeof saved, "%s/layout_%s.mopt", g_tmp, c->name);
    mopt_model *m3 = load(model, 3, NULL), *m0 = load(model, 0, NULL);
    mopt_model *mref = load(model, 3, "ref");
    check_expect(c, m3);
    check_expect(c, mref);
    assert_int_equal(mopt_model_save(m3, saved), MOPT_OK);
    mopt_model *msaved = load(saved, 3, NULL);
    remove(saved);
    mopt_model *m3t2 = load_threads(model, 3, NULL, 2);
    check_expect(c, m3t2);
    mopt_model *ms[4] = {m3, mref, msaved, m3t2};
    const char *names[4] = {"opt_level 3", "opt_level 3 backend=ref", "opt_level 3 saved",
                            "opt_level 3 threads=2"};
    int sets = 0;
    for (int set = 0;; set++) {
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/test_data_set_%d", c->path, set);
        if (!is_dir(dir)) break;
        mopt_tensor *in[MAX_IO] = {0}, *ref[MAX_IO] = {0}, *o0[MAX_IO] = {0}, *o[MAX_IO] = {0};
        int n_in = test_load_set(dir, "input", 0, in, MAX_IO);
        int n_out = test_load_set(dir, "output", 0, ref, MAX_IO);
        assert_true(n_in == 1 && n_out > 0);
        run(c, m0, in, n_in, o0, n_out);
        for (int k = 0; k < n_out; k++)
            compare(c, "opt_level 0", "ONNX Runtime", set, k, o0[k], ref[k]);
        for (int v = 0; v < 4; v++) {
            run(c, ms[v], in, n_in, o, n_out);
            for (int k = 0; k < n_out; k++) {
                compare(c, names[v], "ONNX Runtime", set, k, o[k], ref[k]);
                compare(c, names[v], "opt_level 0", set, k, o[k], o0[k]);
            }
            free_all(o, n_out);
        }
        free_all(in, n_in);
        free_all(ref, n_out);
        free_all(o0, n_out);
        sets++;
    }
    assert_true(sets >= 2);
    for (int v = 0; v < 4; v++)
        mopt_model_destroy(ms[v]);
    mopt_model_destroy(m0);
}

/* The fpn case's Add reads a Resize's output: the layout pass keeps it
 * channels-last with a run-time check (mopt_same_shape). An input 1 pixel
 * high makes ONNX broadcast the Add ([1, 16, 1, 10] + [1, 16, 2, 10]; the
 * model's Concat then fails anyway): at opt_level 3 the Add refuses it with
 * a clear error, never a wrong result. */
static mopt_status run_status(mopt_model *m, mopt_tensor *x) {
    mopt_session *s = NULL;
    assert_int_equal(mopt_session_create(m, NULL, &s), MOPT_OK);
    mopt_tensor *out[2] = {0};
    mopt_status st = mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&x, 2, NULL, out);
    free_all(out, 2);
    mopt_session_destroy(s);
    return st;
}

static void fpn_broadcast_refused(void **state) {
    const lcase *c = *state;
    char model[1100];
    snprintf(model, sizeof model, "%s/model.onnx", c->path);
    const int64_t dims[4] = {1, 3, 1, 10};
    mopt_tensor *x = NULL;
    assert_int_equal(mopt_tensor_create(MOPT_DTYPE_F32, 4, dims, &x), MOPT_OK);
    mopt_model *m3 = load(model, 3, NULL);
    assert_int_equal(run_status(m3, x), MOPT_ERR_SHAPE);
    assert_non_null(strstr(mopt_last_error(), "mopt_same_shape"));
    mopt_model_destroy(m3);
    mopt_tensor_destroy(x);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_layout DATA_DIR TMP_DIR\n");
        return 2;
    }
    g_tmp = argv[2];
    if (list_dir("test_layout", argv[1], NULL, test_case_add, &g_list)) return 1;
    if (g_list.n < 3) {
        fprintf(stderr, "test_layout: fewer than 3 cases in %s\n", argv[1]);
        return 1;
    }
    qsort(g_cases, (size_t)g_list.n, sizeof g_cases[0], test_case_cmp);
    struct CMUnitTest tests[MAX_CASES + 1];
    int n = 0, fpn = -1;
    for (int i = 0; i < g_list.n; i++) {
        tests[n++] = (struct CMUnitTest){g_cases[i].name, test_case, NULL, NULL, &g_cases[i]};
        if (strcmp(g_cases[i].name, "fpn") == 0) fpn = i;
    }
    if (fpn < 0) {
        fprintf(stderr, "test_layout: no fpn case in %s\n", argv[1]);
        return 1;
    }
    tests[n++] = (struct CMUnitTest){"fpn_broadcast_refused", fpn_broadcast_refused, NULL, NULL,
                                     &g_cases[fpn]};
    return _cmocka_run_group_tests("layout pass", tests, (size_t)n, NULL, NULL);
}
