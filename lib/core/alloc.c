/*
 * alloc.c — the library's allocation entry points: the caller's hooks
 * (mopt_set_allocator) or the C library, a count of the blocks held (so that
 * hooks are only swapped while none is), and a failure-injection hook for
 * tests.
 */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MOPT_ALIGN 64

static _Atomic int64_t g_fail_countdown = -1;
static _Atomic uint64_t g_count = 0;
static _Atomic int64_t g_live = 0; /* blocks handed out and not yet released */

/* The hooks in use; NULL members mean the C library. Changed only while no
 * block is held (and, by contract, no other thread is in the library). */
static mopt_allocator g_hooks;
static _Atomic int g_have_hooks = 0;

static int should_fail(void) {
    atomic_fetch_add(&g_count, 1);
    int64_t c = atomic_load(&g_fail_countdown);
    if (c < 0) return 0;
    if (c == 0) return 1;
    atomic_fetch_sub(&g_fail_countdown, 1);
    return 0;
}

void mopt_alloc_fail_after(int64_t countdown) { atomic_store(&g_fail_countdown, countdown); }
uint64_t mopt_alloc_count(void) { return atomic_load(&g_count); }
int64_t mopt_alloc_live(void) { return atomic_load(&g_live); }

static void *counted(void *p) {
    if (p) atomic_fetch_add(&g_live, 1);
    return p;
}

static void *raw_malloc(size_t size) {
    if (atomic_load_explicit(&g_have_hooks, memory_order_relaxed))
        return g_hooks.allocate(g_hooks.user, size);
    return malloc(size);
}

void *mopt_malloc(size_t size) {
    if (should_fail()) return NULL;
    return counted(raw_malloc(size ? size : 1));
}

void *mopt_calloc(size_t count, size_t size) {
    if (should_fail()) return NULL;
    size_t n;
    if (!mopt_mul_overflow(count, size, &n)) return NULL;
    if (n == 0) n = 1;
    if (!atomic_load_explicit(&g_have_hooks, memory_order_relaxed)) return counted(calloc(1, n));
    void *p = raw_malloc(n);
    if (p) memset(p, 0, n);
    return counted(p);
}

void *mopt_realloc(void *ptr, size_t size) {
    if (should_fail()) return NULL;
    if (!ptr) return counted(raw_malloc(size ? size : 1));
    if (atomic_load_explicit(&g_have_hooks, memory_order_relaxed))
        return g_hooks.reallocate(g_hooks.user, ptr, size ? size : 1);
    return realloc(ptr, size ? size : 1);
}

void mopt_free(void *ptr) {
    if (!ptr) return;
    atomic_fetch_sub(&g_live, 1);
    if (atomic_load_explicit(&g_have_hooks, memory_order_relaxed))
        g_hooks.release(g_hooks.user, ptr);
    else
        free(ptr);
}

void *mopt_aligned_alloc(size_t size) {
    if (should_fail()) return NULL;
    size_t rounded = (size + MOPT_ALIGN - 1) & ~(size_t)(MOPT_ALIGN - 1);
    if (rounded < size) return NULL;
    if (!rounded) rounded = MOPT_ALIGN;
    if (atomic_load_explicit(&g_have_hooks, memory_order_relaxed))
        return counted(g_hooks.allocate_aligned(g_hooks.user, MOPT_ALIGN, rounded));
    return counted(aligned_alloc(MOPT_ALIGN, rounded));
}

void mopt_aligned_free(void *ptr) {
    if (!ptr) return;
    atomic_fetch_sub(&g_live, 1);
    if (atomic_load_explicit(&g_have_hooks, memory_order_relaxed))
        g_hooks.release_aligned(g_hooks.user, ptr);
    else
        free(ptr);
}

mopt_status mopt_set_allocator(const mopt_allocator *a) {
    mopt_clear_error();
    if (a) {
        if (a->version != MOPT_ALLOCATOR_VERSION)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_set_allocator: version %d is not MOPT_ALLOCATOR_VERSION (%d)",
                             a->version, MOPT_ALLOCATOR_VERSION);
        if (!a->allocate || !a->reallocate || !a->release || !a->allocate_aligned ||
            !a->release_aligned)
            return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                             "mopt_set_allocator: every function of the allocator must be set");
    }
    int64_t live = atomic_load(&g_live);
    if (live != 0)
        return mopt_fail(MOPT_ERR_INVALID_ARGUMENT,
                         "mopt_set_allocator: the library still holds %lld block%s of memory; "
                         "destroy every options set, model, session, tensor and run options "
                         "first",
                         (long long)live, live == 1 ? "" : "s");
    if (a) {
        g_hooks = *a;
        atomic_store(&g_have_hooks, 1);
    } else {
        atomic_store(&g_have_hooks, 0);
        memset(&g_hooks, 0, sizeof g_hooks);
    }
    return MOPT_OK;
}

char *mopt_strdup(const char *s) { return s ? mopt_strndup(s, strlen(s)) : NULL; }

char *mopt_strndup(const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *p = mopt_malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

int mopt_mul_overflow(size_t a, size_t b, size_t *out) {
    if (a && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}
