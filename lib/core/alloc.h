/*
 * alloc.h — the library's allocation entry points. Everything in lib/ and
 * kernels/ allocates through these, so the caller's hooks
 * (mopt_set_allocator) see every allocation, tests can inject failures
 * (fail the N-th allocation) and count allocations in a steady-state run,
 * and a memory budget (the "memory_limit" option) is charged for every block
 * a model load or a session's run makes.
 */
#ifndef MOPT_CORE_ALLOC_H
#define MOPT_CORE_ALLOC_H

#include <stdbool.h>
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

/* ---- memory budgets -----------------------------------------------------
 * A budget counts the bytes of the blocks charged to it (used, peak) and
 * refuses a block that would take `used` past its limit (0 = no limit): the
 * allocation returns NULL and the budget records the refusal, so that the
 * code in charge (the executor for a node, the API for a load) can turn the
 * caller's OUT_OF_MEMORY into MOPT_ERR_LIMIT naming what was allocated.
 *
 * Charging is per thread: while a budget is installed on a thread
 * (mopt_budget_swap), every mopt_* allocation made there is charged to it.
 * Each block remembers its budget (16 bytes in front of every block), so a
 * free made anywhere, later or on another thread, credits the right one. A
 * budget lives until its owner released it and every block charged to it
 * is freed. Cost: a thread-local read per allocation, and three atomic
 * operations when a budget is installed; nothing per element.
 * Allocations on threads without a budget (OpenMP workers inside a kernel)
 * are not charged. */
typedef struct mopt_budget mopt_budget;

/* A budget of `limit` bytes (0 = none, only counting); NULL when out of
 * memory. The caller owns one reference (mopt_budget_release). */
mopt_budget *mopt_budget_create(int64_t limit);
/* Drops the owner's reference (NULL is fine). */
void mopt_budget_release(mopt_budget *b);
/* Installs b (may be NULL) as this thread's budget; returns the previous one,
 * which the caller reinstalls when done. */
mopt_budget *mopt_budget_swap(mopt_budget *b);
mopt_budget *mopt_budget_current(void);

int64_t mopt_budget_limit(const mopt_budget *b);
int64_t mopt_budget_used(const mopt_budget *b);
/* Highest `used` since creation or the last reset (to `used`). */
int64_t mopt_budget_peak(const mopt_budget *b);
void mopt_budget_reset_peak(mopt_budget *b);
/* Would `size` more bytes fit under the limit (true without a budget)? */
bool mopt_budget_fits(const mopt_budget *b, size_t size);

/* The last refusal since mopt_budget_clear_refusal: true and the refused
 * size and the bytes in use at that moment, or false. */
bool mopt_budget_refused(const mopt_budget *b, size_t *size, int64_t *in_use);
void mopt_budget_clear_refusal(mopt_budget *b);

/* Stops charging block p (from any mopt_* allocation; NULL is fine) to its
 * budget: a block handed over to the caller, such as a run's output. */
void mopt_alloc_detach(void *p);

#endif
