/* test_genpool.c — cmocka tests of examples/serve's generator pool (429 when
 * the wait queue is full, 504 at the deadline, a release wakes a waiter) and
 * of its UTF-8 assembler (valid sequences pass whole, invalid ones become
 * U+FFFD). Argument: the path of examples/generate/kjv-tiny.onnx. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../../tests/test_main.h"
#include "genpool.h"

static const char *model_path;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Feeds bytes one by one, returns everything the assembler emitted. */
static size_t feed(const unsigned char *in, size_t n, int flush, char *out) {
    utf8_asm u = {0};
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        o += utf8_push(&u, in[i], out + o);
    if (flush) o += utf8_flush(&u, out + o);
    out[o] = '\0';
    return o;
}

MOPT_TEST(test_utf8_valid) {
    static const unsigned char s[] = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z"; /* a é € 😀 z */
    char out[64];
    size_t n = feed(s, sizeof s - 1, 1, out);
    assert_int_equal(n, sizeof s - 1);
    assert_memory_equal(out, s, n);
    /* the bytes of a character come out with its last byte */
    utf8_asm u = {0};
    char piece[8];
    assert_int_equal(utf8_push(&u, 0xE2, piece), 0);
    assert_int_equal(utf8_push(&u, 0x82, piece), 0);
    assert_int_equal(utf8_push(&u, 0xAC, piece), 3);
    assert_memory_equal(piece, "\xE2\x82\xAC", 3);
}

MOPT_TEST(test_utf8_invalid) {
    char out[64];
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"\x80", "\xEF\xBF\xBD"},                                 /* lone continuation */
        {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},                 /* overlong lead */
        {"\xE0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD"},                 /* overlong 3-byte */
        {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* surrogate */
        {"\xF4\x90", "\xEF\xBF\xBD\xEF\xBF\xBD"},                 /* above U+10FFFF */
        {"\xF5", "\xEF\xBF\xBD"},                                 /* never a lead */
        {"\xC3"
         "A",
         "\xEF\xBF\xBD"
         "A"},                          /* interrupted */
        {"x\xE2\x82", "x\xEF\xBF\xBD"}, /* incomplete at the end */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = feed((const unsigned char *)cases[k].in, strlen(cases[k].in), 1, out);
        assert_int_equal(n, strlen(cases[k].want));
        assert_string_equal(out, cases[k].want);
    }
}

typedef struct waiter {
    gen_pool *p;
    mopt_generator *got;
    int why;
} waiter;

static void *wait_thread(void *arg) {
    waiter *w = arg;
    w->got = gen_pool_acquire(w->p, 4, now_ns() + 10 * 1000000000LL, &w->why);
    return NULL;
}

MOPT_TEST(test_pool) {
    char err[256];
    assert_null(gen_pool_create("/nonexistent.onnx", 1, 1, 64, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent.onnx"));
    gen_pool *p = gen_pool_create(model_path, 1, 1, 64, err, sizeof err);
    assert_non_null(p);
    assert_int_equal(gen_pool_vocab(p), 256);
    assert_string_equal(gen_pool_model_name(p), "kjv-tiny");
    int why = 0;
    mopt_generator *g = gen_pool_acquire(p, 0, 0, &why);
    assert_non_null(g);
    gen_pool_stats st;
    gen_pool_get_stats(p, &st);
    assert_int_equal(st.size, 1);
    assert_int_equal(st.busy, 1);
    /* no room to wait: 429 at once */
    assert_null(gen_pool_acquire(p, 0, 0, &why));
    assert_int_equal(why, 429);
    /* room to wait, but the deadline passes: 504, not before it */
    int64_t t0 = now_ns();
    why = 0;
    assert_null(gen_pool_acquire(p, 1, t0 + 50000000, &why));
    assert_int_equal(why, 504);
    assert_true(now_ns() - t0 >= 45000000);
    /* a waiter gets the generator once it is released */
    waiter w = {.p = p};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_thread, &w), 0);
    for (int i = 0; i < 1000; i++) {
        gen_pool_get_stats(p, &st);
        if (st.waiting == 1) break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    assert_int_equal(st.waiting, 1);
    gen_pool_release(p, g);
    pthread_join(th, NULL);
    assert_ptr_equal(w.got, g);
    gen_pool_get_stats(p, &st);
    assert_int_equal(st.busy, 1);
    assert_int_equal(st.waiting, 0);
    gen_pool_release(p, w.got);
    gen_pool_destroy(p);
}

int main(int argc, char **argv) {
    model_path = argc > 1 ? argv[1] : "examples/generate/kjv-tiny.onnx";
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_valid),
        cmocka_unit_test(test_utf8_invalid),
        cmocka_unit_test(test_pool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
