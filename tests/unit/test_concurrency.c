/*
 * test_concurrency.c — sessions on threads (suites unit and tsan): N threads,
 * each with its own session on one shared model, give outputs bitwise equal
 * to serial runs; a session entered by a second thread answers
 * MOPT_ERR_BUSY and is not disturbed; a model destroyed before its sessions
 * stays alive until the last one is gone (ASan/TSan would see a use after
 * free or a race). Public API only. Every session runs with 1 thread, so the
 * only concurrency is the callers' (what TSan can check without an
 * instrumented OpenMP runtime).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include <mopt/mopt.h>
#include <pthread.h>

#include "../test_main.h"
#include "test_model_case.h"

#define N_THREADS 4
#define N_SETS 3

/* each test model: its file and its committed input sets, loaded with
 * threads=1 */
static void load_case_1t(model_case *c, const char *dir) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    load_case(c, dir, N_SETS, o);
    mopt_options_destroy(o);
}

static mopt_session *new_session(const mopt_model *m) {
    mopt_options *o = NULL;
    assert_int_equal(mopt_options_create(&o), MOPT_OK);
    assert_int_equal(mopt_options_set_int(o, "threads", 1), MOPT_OK);
    mopt_session *s = NULL;
    mopt_status st = mopt_session_create(m, o, &s);
    mopt_options_destroy(o);
    if (st) fail_msg("session: %s", mopt_last_error());
    return s;
}

static void serial_reference(model_case *c) { case_serial(c, new_session(c->model)); }

static void threads_match_serial(const char *dir, int runs) {
    model_case c;
    load_case_1t(&c, dir);
    serial_reference(&c);
    case_worker w[N_THREADS];
    for (int t = 0; t < N_THREADS; t++)
        w[t] = (case_worker){.c = &c, .runs = runs};
    case_run_workers(w, N_THREADS);
    free_case(&c);
}

MOPT_TEST(sessions_cnn) { threads_match_serial("tests/models/cnn", 12); }

MOPT_TEST(sessions_mobilenet) { threads_match_serial("tests/models/mobilenet", 12); }

MOPT_TEST(sessions_bert) { threads_match_serial("tests/models/bert", 12); }

/* --- one session, two threads: the second is told BUSY ------------------ */

typedef struct {
    model_case *c;
    mopt_session *s;
    atomic_int stop;
    int ok, busy, other, mismatches;
} busy_arg;

static void *hammer(void *p) {
    busy_arg *b = p;
    while (!atomic_load(&b->stop)) {
        mopt_status st;
        mopt_tensor *y = run_set(b->s, b->c, 0, &st);
        if (st == MOPT_OK) {
            b->ok++;
            if (!same_bits(y, b->c->serial[0])) b->mismatches++;
        } else if (st == MOPT_ERR_BUSY) {
            b->busy++;
            /* the status comes with a message (thread-local, like all errors) */
            if (!strstr(mopt_last_error(), "another thread")) b->other++;
        } else {
            b->other++;
        }
        mopt_tensor_destroy(y);
    }
    return NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

MOPT_TEST(shared_session_is_busy) {
    model_case c;
    load_case_1t(&c, "tests/models/bert");
    serial_reference(&c);
    busy_arg a = {.c = &c, .s = new_session(c.model)}, b = a;
    atomic_init(&a.stop, 0);
    atomic_init(&b.stop, 0);
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, hammer, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, hammer, &b), 0);
    /* until both saw BUSY at least once and ran at least once (bounded: a
     * loaded machine may serialize the two threads for a while) */
    double t0 = now_s();
    struct timespec ms = {0, 1000000};
    while (now_s() - t0 < 20.0 && !(a.busy + b.busy >= 2 && a.ok && b.ok))
        nanosleep(&ms, NULL);
    atomic_store(&a.stop, 1);
    atomic_store(&b.stop, 1);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    print_message("shared session: %d+%d runs ok, %d+%d BUSY\n", a.ok, b.ok, a.busy, b.busy);
    assert_int_equal(a.other + b.other, 0);
    assert_int_equal(a.mismatches + b.mismatches, 0);
    assert_true(a.ok + b.ok > 0);
    assert_true(a.busy + b.busy > 0);
    /* the session is idle again and still correct */
    mopt_status st;
    mopt_tensor *y = run_set(a.s, &c, 1, &st);
    assert_int_equal(st, MOPT_OK);
    assert_true(same_bits(y, c.serial[1]));
    mopt_tensor_destroy(y);
    mopt_session_destroy(a.s);
    free_case(&c);
}

/* --- the model goes before its sessions ---------------------------------- */

MOPT_TEST(model_destroyed_before_sessions) {
    model_case c;
    load_case_1t(&c, "tests/models/cnn");
    serial_reference(&c);
    /* each session is destroyed on its thread: the last of them frees the model */
    case_worker w[2];
    for (int t = 0; t < 2; t++)
        w[t] = (case_worker){.c = &c, .s = new_session(c.model), .runs = 4, .destroy = true};
    mopt_model_destroy(c.model); /* the caller lets go first */
    c.model = NULL;
    case_run_workers(w, 2);
    free_case(&c); /* destroys the inputs; mopt_model_destroy(NULL) is a no-op */
}

MOPT_TEST_MAIN(cmocka_unit_test(sessions_cnn), cmocka_unit_test(sessions_mobilenet),
               cmocka_unit_test(sessions_bert), cmocka_unit_test(shared_session_is_busy),
               cmocka_unit_test(model_destroyed_before_sessions))
