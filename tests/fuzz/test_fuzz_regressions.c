/*
 * test_fuzz_regressions.c — replays the fuzzers' past findings
 * (tests/fuzz/regressions/) through the same code paths as the fuzz targets,
 * in every build (the ASan/UBSan build makes "no crash" strict): each file
 * must be handled without a crash, leak, or broken API promise (a failure
 * without a message, an output handed over on failure, an inconsistent
 * tensor). The file name's prefix picks the path (see regressions/README.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_file.h"
#include "../test_main.h"
#include "fuzz_model_path.h"
#include "io/npy.h"
#include "io/onnx_import.h"

#define REGRESSIONS "tests/fuzz/regressions"

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* A decoded tensor must be consistent: nbytes matches the shape. */
static void check_ir_tensor(const char *file, mopt_status st, ir_tensor *t) {
    if (st != MOPT_OK) {
        if (mopt_last_error()[0] == '\0') fail_msg("%s: status %d without a message", file, st);
        assert_null(t);
        return;
    }
    assert_non_null(t);
    int64_t n = ir_numel(t->rank, t->dims);
    if (n < 0 || (size_t)n * mopt_dtype_size(t->dtype) != t->nbytes)
        fail_msg("%s: tensor of %zu bytes does not match its shape", file, t->nbytes);
    ir_tensor_destroy(t);
}

static int replay(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", REGRESSIONS, name);
    size_t len = 0;
    uint8_t *buf = test_read_file(path, &len);
    int replayed = 1;
    if (has_prefix(name, "model_") || has_prefix(name, "mopt_")) {
        fuzz_model_result r;
        fuzz_model_exercise(buf, len, &r);
        print_message("%-40s load %s, %s\n", name, mopt_status_string(r.load),
                      r.ran ? mopt_status_string(r.run[0]) : "not run");
        if (r.defect) fail_msg("%s: an API promise was broken (see above)", name);
    } else if (has_prefix(name, "tensor_")) {
        ir_tensor *t = NULL;
        check_ir_tensor(name, onnx_import_tensor(buf, len, &t), t);
    } else if (has_prefix(name, "npy_")) {
        ir_tensor *t = NULL;
        check_ir_tensor(name, npy_read_memory(buf, len, &t), t);
    } else if (has_prefix(name, "options_")) {
        mopt_options *o = NULL;
        assert_int_equal(mopt_options_create(&o), MOPT_OK);
        mopt_status st = mopt_options_load_yaml_string(o, (const char *)buf, len);
        if (st != MOPT_OK && mopt_last_error()[0] == '\0')
            fail_msg("%s: status %d without a message", name, st);
        mopt_options_destroy(o);
    } else {
        replayed = 0; /* README.md and the like */
    }
    free(buf);
    return replayed;
}

MOPT_TEST(fuzz_regressions_replay_cleanly) {
    size_t n = 0;
    char **names = test_list_dir(REGRESSIONS, NULL, &n);
    int replayed = 0;
    for (size_t i = 0; i < n; i++) {
        replayed += replay(names[i]);
        free(names[i]);
    }
    free(names);
    print_message("%d regression inputs replayed\n", replayed);
}

/* 24 ConstantOfShape nodes of 16 MB each from a 2 KB file: load-time
 * folding stops at its budget (64 MB per sweep for a model with no weights
 * of its own, two sweeps), and the rest is refused at run time by the
 * memory_limit instead of being allocated. */
MOPT_TEST(fuzz_fold_constants_budget_bounds_load) {
    size_t len = 0;
    uint8_t *buf = test_read_file(REGRESSIONS "/model_fold_constants_blowup.onnx", &len);
    mopt_model *m = NULL;
    assert_int_equal(mopt_model_load_from_memory(buf, len, NULL, &m), MOPT_OK);
    int64_t bytes = mopt_model_parameter_bytes(m);
    print_message("weights after folding: %lld bytes\n", (long long)bytes);
    assert_true(bytes <= ((int64_t)128 << 20) + 4096); /* + the 16-byte shape */
    mopt_model_destroy(m);
    fuzz_model_result r;
    fuzz_model_exercise(buf, len, &r);
    assert_false(r.defect);
    assert_int_equal(r.load, MOPT_OK);
    assert_true(r.ran);
    assert_int_equal(r.run[0], MOPT_ERR_LIMIT);
    free(buf);
}

/* A "\0" escape in an option key or value is refused, not cut short:
 * 'backend: "ref\0junk"' used to set backend "ref" silently. */
MOPT_TEST(fuzz_options_nul_is_refused) {
    static const char *const files[] = {"options_nul_in_key.yaml", "options_nul_in_value.yaml"};
    for (size_t i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", REGRESSIONS, files[i]);
        size_t len = 0;
        uint8_t *buf = test_read_file(path, &len);
        mopt_options *o = NULL;
        assert_int_equal(mopt_options_create(&o), MOPT_OK);
        mopt_status st = mopt_options_load_yaml_string(o, (const char *)buf, len);
        print_message("%s: %s: %s\n", files[i], mopt_status_string(st), mopt_last_error());
        assert_int_equal(st, MOPT_ERR_PARSE);
        assert_non_null(strstr(mopt_last_error(), "NUL"));
        const char *backend = NULL;
        assert_int_equal(mopt_options_get_string(o, "backend", &backend), MOPT_OK);
        assert_string_equal(backend, "auto");
        mopt_options_destroy(o);
        free(buf);
    }
}

MOPT_TEST_MAIN(cmocka_unit_test(fuzz_regressions_replay_cleanly),
               cmocka_unit_test(fuzz_fold_constants_budget_bounds_load),
               cmocka_unit_test(fuzz_options_nul_is_refused))
