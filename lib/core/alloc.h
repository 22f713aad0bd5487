/*
 * alloc.h — the library's allocation entry points. Everything in lib/ and
 * kernels/ allocates through these, so the caller's hooks
 * (mopt_set_allocator) see every allocation, tests can inject failures
 * (fail the N-th allocation) and count allocations in a steady-state run.
 */
#ifndef MOPT_CORE_ALLOC_H
#define MOPT_CORE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

void *mopt_malloc(size_t size);
void *mopt_calloc(size_t count, size_t size);
void *mopt_realloc(void *ptr, size_t size);
void mopt_free(void *ptr);
/* 64-byte aligned; release with mopt_aligned_free. */
void *mopt_aligned_alloc(size_t size);
void mopt_aligned_free(void *ptr);
char *mopt_strdup(const char *s);
char *mopt_strndup(const char *s, size_t n);

/* size = a * b, returning 0 (and leaving *out untouched) on overflow. */
int mopt_mul_overflow(size_t a, size_t b, size_t *out);

/* Test hooks (internal): fail every allocation after `countdown` more
 * succeed (-1 disables), and the number of allocations made so far. */
void mopt_alloc_fail_after(int64_t countdown);
uint64_t mopt_alloc_count(void);
/* Blocks handed out and not yet released (mopt_set_allocator refuses to
 * swap hooks while any is). */
int64_t mopt_alloc_live(void);

#endif
