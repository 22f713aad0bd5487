/*
 * test_hostile_limits.c — models whose sizes reach past what the backends
 * index safely (tests/hostile/limits, from gen_hostile_limits.py; issue 17).
 * Each file is loaded with every backend (auto, onednn, openblas, ref) and
 * precision (fp32, bf16, int8): the load must return the status listed in
 * limits/EXPECTED (never a crash: a Conv with pads of 1e9 used to die with
 * SIGFPE inside oneDNN), mopt_model_check must agree with it, and where a
 * run is listed, one run on a zero input of the given dims (memory_limit
 * 1 GiB) must return its status. Public API only.
 */
#define MOPT_EXPERIMENTAL_API
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_expect.h"
#include "../test_main.h"
#include "../test_run.h"

#define DIR "tests/hostile/limits"

typedef struct limits_case {
    char file[128];
    mopt_status load, run;
    bool has_run;
    int rank;
    int64_t dims[8];
} limits_case;

/* Reads limits/EXPECTED; returns the number of cases. */
static size_t read_cases(limits_case *cases, size_t cap) {
    FILE *f = fopen(DIR "/EXPECTED", "r");
    assert_non_null(f);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        if (line[0] == '#') continue;
        char load[32], run[32], dims[128];
        limits_case *c = &cases[n];
        memset(c, 0, sizeof *c);
        if (sscanf(line, "%127s %31s %31s %127s", c->file, load, run, dims) != 4) continue;
        assert_true(test_status_named(load, &c->load));
        c->has_run = strcmp(run, "-") != 0;
        if (c->has_run) {
            assert_true(test_status_named(run, &c->run));
            for (char *t = strtok(dims, ","); t && c->rank < 8; t = strtok(NULL, ","))
                c->dims[c->rank++] = strtoll(t, NULL, 10);
        }
        n++;
    }
    fclose(f);
    return n;
}

static mopt_options *options(const char *backend, const char *precision) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "backend", backend), MOPT_OK);
    assert_int_equal(mopt_options_set_string(o, "precision", precision), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "memory_limit", (int64_t)1 << 30), MOPT_OK);
    return o;
}

/* One run of m on a zero input of c's dims: its status. */
static mopt_status run_once(const mopt_model *m, const mopt_options *o, const limits_case *c) {
    mopt_tensor *in = NULL, *out = NULL;
    assert_int_equal(mopt_tensor_create(MOPT_DTYPE_F32, c->rank, c->dims, &in), MOPT_OK);
    mopt_status st = test_run_once(m, o, in, &out);
    if (st != MOPT_OK) assert_true(mopt_last_error()[0] != '\0');
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    return st;
}

MOPT_TEST(hostile_limits_clean_statuses) {
    limits_case cases[64];
    size_t n = read_cases(cases, 64);
    assert_true(n >= 15);
    const char *backends[] = {"auto", "onednn", "openblas", "ref"};
    const char *precisions[] = {"fp32", "bf16", "int8"};
    int failures = 0, runs = 0;
    for (size_t i = 0; i < n; i++) {
        const limits_case *c = &cases[i];
        char path[256];
        snprintf(path, sizeof path, "%s/%s", DIR, c->file);
        size_t problems = 0;
        mopt_status cst = mopt_model_check(path, NULL, NULL, NULL, &problems);
        if (cst != c->load) {
            print_error("FAIL %s: mopt_model_check %s, want %s (%s)\n", c->file,
                        mopt_status_string(cst), mopt_status_string(c->load), mopt_last_error());
            failures++;
        }
        for (size_t b = 0; b < 4; b++)
            for (size_t p = 0; p < 3; p++) {
                mopt_options *o = options(backends[b], precisions[p]);
                mopt_model *m = NULL;
                mopt_status st = mopt_model_load(path, o, &m);
                if (st != c->load || (st != MOPT_OK && mopt_last_error()[0] == '\0')) {
                    print_error("FAIL %s (%s, %s): load %s, want %s (%s)\n", c->file, backends[b],
                                precisions[p], mopt_status_string(st), mopt_status_string(c->load),
                                mopt_last_error());
                    failures++;
                }
                if (st == MOPT_OK && c->has_run) {
                    mopt_status rs = run_once(m, o, c);
                    runs++;
                    if (rs != c->run) {
                        print_error("FAIL %s (%s, %s): run %s, want %s (%s)\n", c->file,
                                    backends[b], precisions[p], mopt_status_string(rs),
                                    mopt_status_string(c->run), mopt_last_error());
                        failures++;
                    }
                }
                mopt_model_destroy(m);
                mopt_options_destroy(o);
            }
    }
    print_message("%zu files x 4 backends x 3 precisions, %d runs\n", n, runs);
    assert_true(runs > 0);
    assert_int_equal(failures, 0);
}

MOPT_TEST_MAIN(cmocka_unit_test(hostile_limits_clean_statuses))
