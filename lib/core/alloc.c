/*
 * alloc.c — allocation wrappers with a failure-injection hook for tests.
 */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic int64_t g_fail_countdown = -1;
static _Atomic uint64_t g_count = 0;

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

void *mopt_malloc(size_t size) {
    if (should_fail()) return NULL;
    return malloc(size ? size : 1);
}

void *mopt_calloc(size_t count, size_t size) {
    if (should_fail()) return NULL;
    if (count == 0 || size == 0) return calloc(1, 1);
    return calloc(count, size);
}

void *mopt_realloc(void *ptr, size_t size) {
    if (should_fail()) return NULL;
    return realloc(ptr, size ? size : 1);
}

void mopt_free(void *ptr) { free(ptr); }

void *mopt_aligned_alloc(size_t size) {
    if (should_fail()) return NULL;
    size_t rounded = (size + 63) & ~(size_t)63;
    if (rounded < size) return NULL;
    return aligned_alloc(64, rounded ? rounded : 64);
}

void mopt_aligned_free(void *ptr) { free(ptr); }

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
