/*
 * test_alloc_hooks.c — mopt_set_allocator: a counting allocator sees every
 * allocation of a load, a session and its runs (as many calls as the
 * library's own allocation counter, core/alloc.h), every block comes back
 * to it (balanced counts, and each pointer it is handed carries its own
 * header, so a block from elsewhere would be caught), hooks cannot change
 * while the library holds memory, a hook returning NULL is a clean
 * OUT_OF_MEMORY, and a hook may cancel the run it serves (the cancellation
 * check between nodes, deterministically in the middle of a run).
 */
#include <mopt/mopt.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../test_expect.h"
#include "../test_main.h"

#include "core/alloc.h"

#define CHAIN_MODEL "tests/unit/data/chain.onnx"
#define CHAIN_NODES 400
#define MAGIC 0x6d6f7074616c6c63ull   /* "moptallc": a plain block */
#define MAGIC_A 0x6d6f7074616c6741ull /* "moptalgA": an aligned block */
#define HDR 64                        /* keeps the user block 16-byte aligned */

typedef struct counting {
    long allocs, frees, reallocs, aligned_allocs, aligned_frees;
    long fail_after;          /* < 0: never fail; else fail once this many calls succeeded */
    mopt_run_options *cancel; /* set the terminate flag at aligned call cancel_at */
    long cancel_at;
} counting;

typedef struct hdr {
    uint64_t magic;
    size_t size;
    void *base; /* what malloc returned */
} hdr;

static bool give(counting *c) {
    if (c->fail_after < 0) return true;
    if (c->fail_after == 0) return false;
    c->fail_after--;
    return true;
}

static hdr *check_hdr(void *p, uint64_t magic) {
    hdr *h = (hdr *)((char *)p - HDR);
    if (h->magic != magic) {
        fprintf(stderr, "test_alloc_hooks: a block not from the hooks was handed back\n");
        abort();
    }
    return h;
}

static void *c_allocate(void *user, size_t size) {
    counting *c = user;
    if (size == 0) abort(); /* the header promises size > 0 */
    if (!give(c)) return NULL;
    char *b = malloc(HDR + size);
    if (!b) return NULL;
    hdr *h = (hdr *)b;
    *h = (hdr){MAGIC, size, b};
    c->allocs++;
    return b + HDR;
}

static void *c_reallocate(void *user, void *ptr, size_t size) {
    counting *c = user;
    if (!give(c)) return NULL;
    hdr *h = check_hdr(ptr, MAGIC); /* not an aligned block, nor a foreign one */
    h->magic = 0;
    char *b = realloc(h, HDR + size);
    if (!b) {
        h->magic = MAGIC;
        return NULL;
    }
    hdr *nh = (hdr *)b;
    *nh = (hdr){MAGIC, size, b};
    c->reallocs++;
    return b + HDR;
}

static void c_release(void *user, void *ptr) {
    counting *c = user;
    if (!ptr) abort(); /* the header promises no NULL */
    hdr *h = check_hdr(ptr, MAGIC);
    h->magic = 0;
    free(h);
    c->frees++;
}

static void *c_allocate_aligned(void *user, size_t alignment, size_t size) {
    counting *c = user;
    if (alignment != 64 || size % alignment != 0 || size == 0) abort();
    if (!give(c)) return NULL;
    c->aligned_allocs++;
    if (c->cancel && c->aligned_allocs == c->cancel_at &&
        mopt_run_options_set_terminate(c->cancel, 1) != MOPT_OK)
        abort();
    char *b = malloc(size + alignment + HDR);
    if (!b) return NULL;
    uintptr_t u = ((uintptr_t)b + HDR + alignment - 1) & ~(uintptr_t)(alignment - 1);
    hdr *h = (hdr *)(u - HDR);
    *h = (hdr){MAGIC_A, size, b};
    return (void *)u;
}

static void c_release_aligned(void *user, void *ptr) {
    counting *c = user;
    if (!ptr) abort();
    hdr *h = check_hdr(ptr, MAGIC_A);
    h->magic = 0;
    free(h->base);
    c->aligned_frees++;
}

static mopt_allocator counting_allocator(counting *c) {
    memset(c, 0, sizeof *c);
    c->fail_after = -1;
    return (mopt_allocator){MOPT_ALLOCATOR_VERSION, c,         c_allocate,
                            c_reallocate,           c_release, c_allocate_aligned,
                            c_release_aligned};
}

MOPT_TEST(hooks_refused_while_memory_is_held) {
    counting c;
    mopt_allocator a = counting_allocator(&c);
    mopt_options *o = NULL;
    EXPECT_OK(mopt_options_create(&o));
    assert_int_equal(mopt_set_allocator(&a), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "1 block"));
    assert_int_equal(mopt_set_allocator(NULL), MOPT_ERR_INVALID_ARGUMENT);
    mopt_options_destroy(o);
    mopt_allocator bad = a;
    bad.version = 2;
    assert_int_equal(mopt_set_allocator(&bad), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "version 2"));
    bad = a;
    bad.release_aligned = NULL;
    assert_int_equal(mopt_set_allocator(&bad), MOPT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mopt_last_error(), "every function"));
    /* nothing held now: both directions work */
    EXPECT_OK(mopt_set_allocator(&a));
    EXPECT_OK(mopt_set_allocator(NULL));
    assert_int_equal(c.allocs + c.aligned_allocs, 0);
}

/* Loads the chain model and runs it `runs` times (opt_level 0: the first
 * run puts intermediates on the heap, later ones use the planned arena).
 * ro may be NULL. Returns the first failing status. */
static mopt_status load_and_run(int runs, mopt_run_options *ro, float *y0) {
    mopt_options *o = NULL;
    mopt_model *m = NULL;
    mopt_session *s = NULL;
    mopt_tensor *in = NULL, *out = NULL;
    const int64_t dims[2] = {256, 256};
    mopt_status st = mopt_options_create(&o);
    if (!st) st = mopt_options_set_int(o, "opt_level", 0);
    if (!st) st = mopt_options_set_int(o, "threads", 1);
    if (!st) st = mopt_model_load(CHAIN_MODEL, o, &m);
    if (!st) st = mopt_session_create(m, o, &s);
    if (!st) st = mopt_tensor_create(MOPT_DTYPE_F32, 2, dims, &in);
    for (int r = 0; r < runs && !st; r++) {
        mopt_tensor_destroy(out);
        out = NULL;
        st = mopt_session_run_v2(s, ro, 1, NULL, (const mopt_tensor *const *)&in, 1, NULL, &out);
        if (!st) *y0 = ((const float *)mopt_tensor_data_const(out))[0];
    }
    mopt_tensor_destroy(out);
    mopt_tensor_destroy(in);
    mopt_session_destroy(s);
    mopt_model_destroy(m);
    mopt_options_destroy(o);
    return st;
}

MOPT_TEST(hooks_see_every_allocation) {
    counting c;
    mopt_allocator a = counting_allocator(&c);
    EXPECT_OK(mopt_set_allocator(&a));
    uint64_t calls0 = mopt_alloc_count();
    float y0 = -1;
    EXPECT_OK(load_and_run(3, NULL, &y0));
    assert_float_equal(y0, 200.0f, 0); /* 0 + 200 * (+1) */
    uint64_t calls = mopt_alloc_count() - calls0;
    assert_true(c.allocs > 10 && c.aligned_allocs > 3);
    /* every allocation the library made went through the hooks */
    assert_int_equal((uint64_t)(c.allocs + c.reallocs + c.aligned_allocs), calls);
    /* and every block came back */
    assert_int_equal(c.allocs, c.frees);
    assert_int_equal(c.aligned_allocs, c.aligned_frees);
    assert_int_equal(mopt_alloc_live(), 0);
    EXPECT_OK(mopt_set_allocator(NULL));
}

MOPT_TEST(hook_returning_null_is_out_of_memory) {
    counting c;
    mopt_allocator a = counting_allocator(&c);
    EXPECT_OK(mopt_set_allocator(&a));
    float y0;
    /* fail at a few points of load, session creation and the first run */
    const long points[] = {0, 5, 40, 200};
    for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
        c.fail_after = points[i];
        mopt_status st = load_and_run(1, NULL, &y0);
        assert_int_equal(st, MOPT_ERR_OUT_OF_MEMORY);
        assert_int_equal(c.allocs, c.frees); /* nothing leaked on the way out */
        assert_int_equal(c.aligned_allocs, c.aligned_frees);
    }
    c.fail_after = -1;
    EXPECT_OK(mopt_set_allocator(NULL));
}

/* The allocator sets the run's terminate flag while the executor places the
 * output of a node in the middle of the first run: the next node boundary
 * stops the run. */
MOPT_TEST(cancelled_in_the_middle_of_a_run) {
    counting c;
    mopt_allocator a = counting_allocator(&c);
    mopt_run_options *ro = NULL;
    EXPECT_OK(mopt_set_allocator(&a));
    /* count the aligned allocations of loading and the first run's start */
    float y0;
    EXPECT_OK(load_and_run(0, NULL, &y0));
    long before_run = c.aligned_allocs;
    c.aligned_allocs = c.aligned_frees = 0;
    EXPECT_OK(mopt_run_options_create(&ro));
    c.cancel = ro;
    c.cancel_at = before_run + 1 /* the input tensor */ + 100; /* ~100 nodes in */
    assert_int_equal(load_and_run(1, ro, &y0), MOPT_ERR_CANCELLED);
    int node = -1;
    const char *at = strstr(mopt_last_error(), "before node ");
    assert_non_null(at);
    assert_int_equal(sscanf(at, "before node %d", &node), 1);
    assert_true(node > 10 && node < CHAIN_NODES);
    c.cancel = NULL;
    mopt_run_options_destroy(ro);
    assert_int_equal(c.aligned_allocs, c.aligned_frees);
    EXPECT_OK(mopt_set_allocator(NULL));
}

MOPT_TEST_MAIN(cmocka_unit_test(hooks_refused_while_memory_is_held),
               cmocka_unit_test(hooks_see_every_allocation),
               cmocka_unit_test(hook_returning_null_is_out_of_memory),
               cmocka_unit_test(cancelled_in_the_middle_of_a_run))
