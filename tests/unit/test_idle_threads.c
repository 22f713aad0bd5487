/*
 * test_idle_threads.c — after a run, libmopt's worker threads (OpenMP, used
 * by oneDNN, OpenBLAS and the own kernels) must go to sleep rather than spin:
 * the process's CPU time while it sleeps after a 2-thread run must stay near
 * zero. Measured with getrusage over a 400 ms idle window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <cmocka.h>

#include <mopt/mopt.h>

#include "../test_main.h"

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static void idle(double seconds) {
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void run_then_idle(const char *model_path, const int64_t *dims, int rank, mopt_dtype dt) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_tensor *in = NULL, *out = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 2), MOPT_OK);
    if (mopt_model_load(model_path, o, &m) != MOPT_OK) fail_msg("%s", mopt_last_error());
    assert_int_equal(mopt_session_create(m, o, &s), MOPT_OK);
    assert_int_equal(mopt_tensor_create(dt, rank, dims, &in), MOPT_OK);
    double t0 = cpu_seconds();
    for (int i = 0; i < 20; i++) {
        mopt_status st =
            mopt_session_run(s, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out);
        if (st != MOPT_OK) fail_msg("run: %s", mopt_last_error());
    }
    double busy = cpu_seconds() - t0;
    idle(0.1); /* let spinning workers give up */
    double before = cpu_seconds();
    idle(0.4);
    double used = cpu_seconds() - before;
    printf("[ INFO     ] %s: 20 runs took %.1f ms of CPU; 400 ms idle afterwards used %.2f ms\n",
           model_path, busy * 1e3, used * 1e3);
    /* a spinning worker would use ~400 ms; allow 5% for timer noise */
    if (used > 0.02) fail_msg("idle threads burned %.1f ms of CPU in 400 ms", used * 1e3);
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
}

MOPT_TEST(idle_threads_sleep_after_cnn) {
    int64_t dims[4] = {2, 3, 32, 32};
    run_then_idle("tests/models/cnn/model.onnx", dims, 4, MOPT_DTYPE_F32);
}

MOPT_TEST_MAIN(cmocka_unit_test(idle_threads_sleep_after_cnn))
