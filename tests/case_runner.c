/*
 * case_runner.c — runs test cases laid out like the ONNX backend node tests:
 * CASE/model.onnx and CASE/test_data_set_N/{input_K,output_K}.{npy,pb}, with
 * an optional CASE/tolerance file ("atol rtol"). Each case becomes one cmocka
 * test that loads the model through the public API, feeds every data set and
 * compares every output with the expected one (dtype, shape, values).
 * A case with a CASE/expect_error file (line 1: the status as
 * mopt_status_string names it, line 2: text the message must contain) must
 * instead fail, at load or when run on test_data_set_0's inputs.
 *
 * usage: case_runner [--opt-level N] [--backend B] [--threads T] [--precision P]
 *                    [--atol A] [--rtol R] [--min-cosine C] PATH...
 *   --min-cosine also fails a float output whose cosine similarity with the
 *   expected one is below C (for the bf16/int8 precisions).
 *   PATH is a case folder, or a folder whose sub-folders (two levels deep at
 *   most) are cases. Used by the "ops" and "models" suites.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <mopt/mopt.h>

#include "test_elem.h"
#include "test_paths.h"
#include "test_sets.h"

#define MAX_CASES 4096
#define MAX_IO 64

typedef struct test_case {
    char path[1024];
    char name[256];
} test_case;

static test_case g_cases[MAX_CASES];
static int g_n_cases;
static int g_opt_level = 0;
static const char *g_backend = NULL; /* NULL: the library default */
static int g_threads = 0;            /* 0: the library default */
static const char *g_precision;      /* NULL: the library default */
static double g_min_cosine = -2;     /* --min-cosine: fail below it */
static double g_last_cosine;         /* of the last compare() of floats */
static double g_atol = 1e-5, g_rtol = 1e-4;
static int g_atol_set, g_rtol_set;

static int cmp_str(const void *a, const void *b) {
    return strcmp(((const test_case *)a)->path, ((const test_case *)b)->path);
}

static void add_cases(const char *path, int depth) {
    char model[1100];
    snprintf(model, sizeof model, "%s/model.onnx", path);
    if (file_exists(model)) {
        if (g_n_cases == MAX_CASES) return;
        test_case *c = &g_cases[g_n_cases++];
        snprintf(c->path, sizeof c->path, "%s", path);
        const char *base = strrchr(path, '/');
        snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : path);
        return;
    }
    if (depth == 0) return;
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[1100];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (is_dir(sub)) add_cases(sub, depth - 1);
    }
    closedir(d);
}

static double elem(const mopt_tensor *t, int64_t i) {
    return test_elem(mopt_tensor_data_const(t), mopt_tensor_dtype(t), i);
}

/* Compares got with want; on mismatch fails the test with a precise message. */
static double compare(const char *what, const mopt_tensor *got, const mopt_tensor *want,
                      double atol, double rtol) {
    if (mopt_tensor_dtype(got) != mopt_tensor_dtype(want))
        fail_msg("%s: dtype %s, expected %s", what, mopt_dtype_name(mopt_tensor_dtype(got)),
                 mopt_dtype_name(mopt_tensor_dtype(want)));
    int rank = mopt_tensor_rank(got);
    int same = rank == mopt_tensor_rank(want);
    for (int i = 0; same && i < rank; i++)
        same = mopt_tensor_dim(got, i) == mopt_tensor_dim(want, i);
    if (!same) {
        char a[256] = "", b[256] = "";
        size_t la = 0, lb = 0;
        for (int i = 0; i < rank; i++)
            la += (size_t)snprintf(a + la, sizeof a - la, "%s%lld", i ? "," : "",
                                   (long long)mopt_tensor_dim(got, i));
        for (int i = 0; i < mopt_tensor_rank(want); i++)
            lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%lld", i ? "," : "",
                                   (long long)mopt_tensor_dim(want, i));
        fail_msg("%s: shape [%s], expected [%s]", what, a, b);
    }
    int64_t n = mopt_tensor_element_count(want);
    int fl = test_is_float(mopt_tensor_dtype(want));
    double max_err = 0, dot = 0, ng = 0, nw = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = elem(got, i), w = elem(want, i);
        if (fl) {
            if (isnan(w) && isnan(g)) continue;
            if (isinf(w) && g == w) continue;
            dot += g * w;
            ng += g * g;
            nw += w * w;
            double err = fabs(g - w);
            if (!(err <= atol + rtol * fabs(w)))
                fail_msg("%s: element %lld is %.9g, expected %.9g (|diff| %.3g > atol %.3g + "
                         "rtol %.3g * |expected|)",
                         what, (long long)i, g, w, err, atol, rtol);
            if (err > max_err) max_err = err;
        } else if (g != w) {
            fail_msg("%s: element %lld is %.17g, expected %.17g", what, (long long)i, g, w);
        }
    }
    /* cosine similarity of the flattened tensors (1 when both are zero) */
    g_last_cosine = ng > 0 && nw > 0 ? dot / sqrt(ng * nw) : (ng == nw ? 1.0 : 0.0);
    if (fl && g_last_cosine < g_min_cosine)
        fail_msg("%s: cosine similarity %.6f < %.6f", what, g_last_cosine, g_min_cosine);
    return max_err;
}

/* Strips the trailing newline of a line read by fgets. */
static void chomp(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
}

/* Checks a failure against the case's expect_error file. */
static void check_error(const test_case *c, const char *when, mopt_status st, const char *status,
                        const char *text) {
    const char *msg = mopt_last_error();
    if (strcmp(mopt_status_string(st), status) != 0 || !strstr(msg, text))
        fail_msg("%s: %s failed with \"%s: %s\", expected \"%s\" and a message containing "
                 "\"%s\"",
                 c->name, when, mopt_status_string(st), msg, status, text);
    printf("[ CASE     ] %s: %s fails as expected: %s: %s\n", c->name, when, mopt_status_string(st),
           msg);
}

/* A refused case in the "<status number> text" spelling. */
static void run_error_case_numeric(const test_case *c, mopt_options *opts, int want,
                                   const char *text) {
    char p[1200];
    mopt_model *model = NULL;
    snprintf(p, sizeof p, "%s/model.onnx", c->path);
    mopt_status st = mopt_model_load(p, opts, &model);
    if (st == MOPT_OK) {
        mopt_session *sess = NULL;
        assert_int_equal(mopt_session_create(model, opts, &sess), MOPT_OK);
        mopt_tensor *inputs[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
        snprintf(p, sizeof p, "%s/test_data_set_0", c->path);
        int ni = test_load_set(p, "input", 1, inputs, MAX_IO);
        size_t n_out = mopt_model_io_count(model, MOPT_OUTPUT);
        st = mopt_session_run(sess, (size_t)ni, NULL, (const mopt_tensor *const *)inputs, n_out,
                              NULL, outputs);
        for (int k = 0; k < ni; k++)
            mopt_tensor_destroy(inputs[k]);
        for (size_t k = 0; k < n_out && k < MAX_IO; k++)
            mopt_tensor_destroy(outputs[k]);
        mopt_session_destroy(sess);
        mopt_model_destroy(model);
    }
    const char *msg = mopt_last_error();
    printf("[ CASE     ] %s: %s: %s\n", c->name, mopt_status_string(st), msg);
    if ((int)st != want)
        fail_msg("%s: status %s, expected %s (%s)", c->name, mopt_status_string(st),
                 mopt_status_string((mopt_status)want), msg);
    if (!strstr(msg, text)) fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, msg, text);
}

/* A case whose model must be refused (expect_error): at load, or when run. */
static void run_error_case(const test_case *c, FILE *ef, mopt_options *opts) {
    char status[128] = "", text[512] = "", p[1200];
    if (!fgets(status, sizeof status, ef) || !fgets(text, sizeof text, ef))
        fail_msg("%s: expect_error needs two lines (status, message text)", c->name);
    chomp(status);
    chomp(text);
    mopt_model *model = NULL;
    snprintf(p, sizeof p, "%s/model.onnx", c->path);
    mopt_status st = mopt_model_load(p, opts, &model);
    if (st != MOPT_OK) {
        check_error(c, "load", st, status, text);
        return;
    }
    mopt_session *sess = NULL;
    assert_int_equal(mopt_session_create(model, opts, &sess), MOPT_OK);
    size_t n_in = mopt_model_io_count(model, MOPT_INPUT);
    size_t n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    mopt_tensor *inputs[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
    snprintf(p, sizeof p, "%s/test_data_set_0", c->path);
    int ni = test_load_set(p, "input", 1, inputs, MAX_IO);
    if ((size_t)ni != n_in || n_out > MAX_IO)
        fail_msg("%s: data set 0 has %d inputs, the model %zu", c->name, ni, n_in);
    st = mopt_session_run(sess, n_in, NULL, (const mopt_tensor *const *)inputs, n_out, NULL,
                          outputs);
    if (st == MOPT_OK)
        fail_msg("%s: the model loaded and ran, expected \"%s\" (%s)", c->name, status, text);
    check_error(c, "run", st, status, text);
    for (int k = 0; k < ni; k++)
        mopt_tensor_destroy(inputs[k]);
    for (size_t k = 0; k < n_out; k++)
        mopt_tensor_destroy(outputs[k]);
    mopt_session_destroy(sess);
    mopt_model_destroy(model);
}

static void run_case(void **state) {
    const test_case *c = *state;
    double atol = g_atol, rtol = g_rtol;
    char p[1200];
    snprintf(p, sizeof p, "%s/tolerance", c->path);
    FILE *tf = fopen(p, "r");
    if (tf) {
        double a, r;
        if (fscanf(tf, "%lf %lf", &a, &r) == 2) {
            if (!g_atol_set) atol = a;
            if (!g_rtol_set) rtol = r;
        }
        fclose(tf);
    }
    mopt_options *opts = NULL;
    assert_int_equal(mopt_options_create(&opts), MOPT_OK);
    assert_int_equal(mopt_options_set_int(opts, "opt_level", g_opt_level), MOPT_OK);
    if (g_backend) assert_int_equal(mopt_options_set_string(opts, "backend", g_backend), MOPT_OK);
    if (g_threads > 0) assert_int_equal(mopt_options_set_int(opts, "threads", g_threads), MOPT_OK);
    if (g_precision)
        assert_int_equal(mopt_options_set_string(opts, "precision", g_precision), MOPT_OK);
    snprintf(p, sizeof p, "%s/expect_error", c->path);
    FILE *ef = fopen(p, "r");
    if (ef) {
        /* two spellings: "STATUS_NAME\ntext" or "<status number> text" */
        int c0 = fgetc(ef);
        if (c0 != EOF) ungetc(c0, ef);
        if (c0 >= '0' && c0 <= '9') {
            int want = -1;
            char text[512] = "";
            int ok = fscanf(ef, "%d %511[^\n]", &want, text) == 2;
            fclose(ef);
            if (!ok) fail_msg("%s: expect_error must read \"STATUS TEXT\"", c->name);
            run_error_case_numeric(c, opts, want, text);
        } else {
            run_error_case(c, ef, opts);
            fclose(ef);
        }
        mopt_options_destroy(opts);
        return;
    }
    mopt_model *model = NULL;
    snprintf(p, sizeof p, "%s/model.onnx", c->path);
    mopt_status st = mopt_model_load(p, opts, &model);
    if (st != MOPT_OK) {
        mopt_options_destroy(opts);
        fail_msg("%s: load failed: %s: %s", c->name, mopt_status_string(st), mopt_last_error());
    }
    mopt_session *sess = NULL;
    assert_int_equal(mopt_session_create(model, opts, &sess), MOPT_OK);
    size_t n_in = mopt_model_io_count(model, MOPT_INPUT);
    size_t n_out = mopt_model_io_count(model, MOPT_OUTPUT);
    double case_max = 0, case_cos = 1;
    int n_sets = 0;
    for (int set = 0; set < 1000; set++) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s/test_data_set_%d", c->path, set);
        if (!is_dir(dir)) break;
        n_sets++;
        mopt_tensor *inputs[MAX_IO] = {0}, *expected[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
        int ni = test_load_set(dir, "input", 1, inputs, MAX_IO);
        int no = test_load_set(dir, "output", 1, expected, MAX_IO);
        if ((size_t)ni != n_in)
            fail_msg("%s: data set %d has %d inputs, the model %zu", c->name, set, ni, n_in);
        if (no == 0 || (size_t)no > n_out)
            fail_msg("%s: data set %d has %d outputs, the model %zu", c->name, set, no, n_out);
        /* Twice: the first run of a shape signature plans memory, the second
         * runs from the plan (arena, outputs written in place). */
        for (int rep = 0; rep < 2; rep++) {
            st = mopt_session_run(sess, n_in, NULL, (const mopt_tensor *const *)inputs, (size_t)no,
                                  NULL, outputs);
            if (st != MOPT_OK)
                fail_msg("%s: run %d of data set %d failed: %s: %s", c->name, rep + 1, set,
                         mopt_status_string(st), mopt_last_error());
            for (int k = 0; k < no; k++) {
                char what[512];
                snprintf(what, sizeof what, "%s set %d run %d output %d '%s'", c->name, set,
                         rep + 1, k, mopt_model_io_name(model, MOPT_OUTPUT, (size_t)k));
                double e = compare(what, outputs[k], expected[k], atol, rtol);
                if (e > case_max) case_max = e;
                if (test_is_float(mopt_tensor_dtype(expected[k])) && g_last_cosine < case_cos)
                    case_cos = g_last_cosine;
                if (rep == 0)
                    memset(mopt_tensor_data(outputs[k]), 0xff, mopt_tensor_size_bytes(outputs[k]));
            }
        }
        for (int k = 0; k < ni; k++)
            mopt_tensor_destroy(inputs[k]);
        for (int k = 0; k < no; k++) {
            mopt_tensor_destroy(expected[k]);
            mopt_tensor_destroy(outputs[k]);
        }
    }
    if (n_sets == 0) fail_msg("%s: no test_data_set_* folder", c->name);
    printf("[ CASE     ] %s: %d data set%s, max abs error %.3g (atol %.3g, rtol %.3g), "
           "min cosine %.7f\n",
           c->name, n_sets, n_sets == 1 ? "" : "s", case_max, atol, rtol, case_cos);
    mopt_session_destroy(sess);
    mopt_model_destroy(model);
    mopt_options_destroy(opts);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--opt-level") == 0 && i + 1 < argc) {
            g_opt_level = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            g_backend = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            g_threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--precision") == 0 && i + 1 < argc) {
            g_precision = argv[++i];
        } else if (strcmp(argv[i], "--min-cosine") == 0 && i + 1 < argc) {
            g_min_cosine = atof(argv[++i]);
        } else if (strcmp(argv[i], "--atol") == 0 && i + 1 < argc) {
            g_atol = atof(argv[++i]);
            g_atol_set = 1;
        } else if (strcmp(argv[i], "--rtol") == 0 && i + 1 < argc) {
            g_rtol = atof(argv[++i]);
            g_rtol_set = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: case_runner [--opt-level N] [--backend B] [--threads T] "
                            "[--precision P] [--atol A] [--rtol R] [--min-cosine C] PATH...\n");
            return 2;
        } else {
            add_cases(argv[i], 2);
        }
    }
    if (g_n_cases == 0) {
        fprintf(stderr, "case_runner: no cases found (a case folder holds model.onnx)\n");
        return 1;
    }
    qsort(g_cases, (size_t)g_n_cases, sizeof g_cases[0], cmp_str);
    struct CMUnitTest *tests = calloc((size_t)g_n_cases, sizeof *tests);
    if (!tests) return 1;
    for (int i = 0; i < g_n_cases; i++) {
        tests[i].name = g_cases[i].name;
        tests[i].test_func = run_case;
        tests[i].initial_state = &g_cases[i];
    }
    int rc = _cmocka_run_group_tests("cases", tests, (size_t)g_n_cases, NULL, NULL);
    free(tests);
    return rc;
}
