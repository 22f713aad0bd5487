/*
 * test_header_example.c — compiles and runs the worked example from the
 * comment at the top of include/mopt/mopt.h. The example is extracted
 * mechanically at build time (extract_header_example.py -> header_example.c,
 * linked into this test) so the header can never show code that does not
 * build. Links the public library only.
 *
 * usage: test_header_example [MODEL.onnx]
 *   Always: run_model() on a missing file returns 1, leaves the caller's
 *   buffers alone and does not crash.
 *   With MODEL (tests/unit/data/header_example.onnx, from
 *   gen_header_example_model.py: f32 [1,3,8,8] -> f32 [1,10] with
 *   scores[j] = j + sum of pixels[i] over i % 10 == j): run_model() returns 0
 *   and writes exactly those scores into the caller's buffer.
 */
#include <mopt/mopt.h>

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../test_main.h"
#include <cmocka.h>

/* Defined by the extracted example. */
int run_model(const char *path, const float *pixels, float *scores);

static const char *g_model_path;

static void fill(float *pixels, float *scores) {
    for (int i = 0; i < 3 * 8 * 8; i++)
        pixels[i] = (float)((i * 37) % 17) / 17.0f - 0.5f;
    for (int i = 0; i < 10; i++)
        scores[i] = NAN;
}

MOPT_TEST(header_example_missing_model_fails) {
    float pixels[3 * 8 * 8], scores[10];
    fill(pixels, scores);
    assert_int_equal(run_model("tests/unit/data/no_such_model.onnx", pixels, scores), 1);
    for (int i = 0; i < 10; i++)
        assert_true(isnan(scores[i])); /* untouched */
    assert_int_equal(run_model("", pixels, scores), 1);
}

MOPT_TEST(header_example_runs_model) {
    if (!g_model_path) skip();
    mopt_model *probe = NULL; /* skip only while the importer is a placeholder */
    mopt_status st = mopt_model_load(g_model_path, NULL, &probe);
    mopt_model_destroy(probe);
    if (st == MOPT_ERR_UNSUPPORTED && strstr(mopt_last_error(), "import not implemented")) skip();
    float pixels[3 * 8 * 8], scores[10];
    fill(pixels, scores);
    assert_int_equal(run_model(g_model_path, pixels, scores), 0);
    for (int j = 0; j < 10; j++) {
        double want = j;
        for (int i = j; i < 3 * 8 * 8; i += 10)
            want += pixels[i];
        if (fabs(scores[j] - want) > 1e-4)
            fail_msg("scores[%d] = %g, want %g", j, (double)scores[j], want);
    }
}

int main(int argc, char **argv) {
    if (argc > 1) g_model_path = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_example_missing_model_fails),
        cmocka_unit_test(header_example_runs_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
