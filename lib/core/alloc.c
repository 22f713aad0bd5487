/*
 * alloc.c — the library's allocation entry points: the caller's hooks
 * (mopt_set_allocator) or the C library, a count of the blocks held (so that
 * hooks are only swapped while none is), a failure-injection hook for tests,
 * and memory budgets (alloc.h): every block carries a 16-byte header just in
 * front of it with its size and the budget it is charged to, so that a free
 * credits that budget wherever it happens. Nothing here looks at the data.
 */
#include "core/alloc.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MOPT_ALIGN 64
#define HDR_SIZE 16 /* keeps plain blocks at malloc's 16-byte alignment */

/* In front of every block (at p - HDR_SIZE, aligned blocks included). */
typedef struct block_hdr {
    uint64_t size;      /* bytes asked for (aligned: rounded), as charged */
    mopt_budget *owner; /* the budget charged, or NULL */
} block_hdr;

_Static_assert(sizeof(block_hdr) == HDR_SIZE, "block header must stay 16 bytes");

struct mopt_budget {
    int64_t limit; /* 0: none */
    _Atomic int64_t used;
    _Atomic int64_t peak;
    _Atomic int64_t refs; /* the owner's, plus one per block charged */
    _Atomic int refused;
    _Atomic int64_t refused_size;
    _Atomic int64_t refused_in_use;
};

static _Thread_local mopt_budget *tl_budget;

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

static int have_hooks(void) { return atomic_load_explicit(&g_have_hooks, memory_order_relaxed); }

/* ---- budgets ---- */

static void budget_unref(mopt_budget *b);

/* Charges size bytes to b; false (and the refusal recorded) when the limit
 * would be passed. */
static bool charge(mopt_budget *b, size_t size) {
    int64_t lim = b->limit;
    if (size > ((size_t)1 << 62) || (lim && (int64_t)size > lim)) {
        if (!lim) return false; /* no allocator can serve it anyway */
        atomic_store(&b->refused_size, size > (size_t)INT64_MAX ? INT64_MAX : (int64_t)size);
        atomic_store(&b->refused_in_use, atomic_load(&b->used));
        atomic_store(&b->refused, 1);
        return false;
    }
    int64_t n = (int64_t)size;
    int64_t used = atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed) + n;
    if (lim && used > lim) {
        atomic_fetch_sub_explicit(&b->used, n, memory_order_relaxed);
        atomic_store(&b->refused_size, n);
        atomic_store(&b->refused_in_use, used - n);
        atomic_store(&b->refused, 1);
        return false;
    }
    int64_t p = atomic_load_explicit(&b->peak, memory_order_relaxed);
    while (used > p && !atomic_compare_exchange_weak_explicit(
                           &b->peak, &p, used, memory_order_relaxed, memory_order_relaxed)) {
    }
    return true;
}

static void credit(mopt_budget *b, size_t size) {
    atomic_fetch_sub_explicit(&b->used, (int64_t)size, memory_order_relaxed);
}

/* ---- blocks ---- */

/* Writes the header at base and returns the user pointer (base + off). */
static void *finish(void *base, size_t off, size_t size, mopt_budget *b) {
    char *p = (char *)base + off;
    block_hdr *h = (block_hdr *)(p - HDR_SIZE);
    h->size = size;
    h->owner = b;
    if (b) atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    atomic_fetch_add(&g_live, 1);
    return p;
}

static block_hdr *hdr_of(void *p) { return (block_hdr *)((char *)p - HDR_SIZE); }

/* A plain block of size bytes (size > 0) charged to b (may be NULL). */
static void *plain_alloc(size_t size, bool zero, mopt_budget *b) {
    if (size > SIZE_MAX - HDR_SIZE) return NULL;
    if (b && !charge(b, size)) return NULL;
    void *base;
    if (have_hooks()) {
        base = g_hooks.allocate(g_hooks.user, size + HDR_SIZE);
        if (base && zero) memset((char *)base + HDR_SIZE, 0, size);
    } else {
        base = zero ? calloc(1, size + HDR_SIZE) : malloc(size + HDR_SIZE);
    }
    if (!base) {
        if (b) credit(b, size);
        return NULL;
    }
    return finish(base, HDR_SIZE, size, b);
}

void *mopt_malloc(size_t size) {
    if (should_fail()) return NULL;
    return plain_alloc(size ? size : 1, false, tl_budget);
}

void *mopt_calloc(size_t count, size_t size) {
    if (should_fail()) return NULL;
    size_t n;
    if (!mopt_mul_overflow(count, size, &n)) return NULL;
    return plain_alloc(n ? n : 1, true, tl_budget);
}

void *mopt_realloc(void *ptr, size_t size) {
    if (should_fail()) return NULL;
    if (size == 0) size = 1;
    if (!ptr) return plain_alloc(size, false, tl_budget);
    if (size > SIZE_MAX - HDR_SIZE) return NULL;
    block_hdr *h = hdr_of(ptr);
    mopt_budget *b = h->owner;
    size_t old = (size_t)h->size;
    if (b && size > old && !charge(b, size - old)) return NULL;
    void *base = have_hooks() ? g_hooks.reallocate(g_hooks.user, h, size + HDR_SIZE)
                              : realloc(h, size + HDR_SIZE);
    if (!base) {
        if (b && size > old) credit(b, size - old);
        return NULL;
    }
    if (b && size < old) credit(b, old - size);
    ((block_hdr *)base)->size = size;
    return (char *)base + HDR_SIZE;
}

/* Credits p's budget (dropping the block's reference on it). */
static void release_charge(block_hdr *h) {
    mopt_budget *b = h->owner;
    if (!b) return;
    h->owner = NULL;
    credit(b, (size_t)h->size);
    budget_unref(b);
}

void mopt_free(void *ptr) {
    if (!ptr) return;
    block_hdr *h = hdr_of(ptr);
    release_charge(h);
    atomic_fetch_sub(&g_live, 1);
    if (have_hooks())
        g_hooks.release(g_hooks.user, h);
    else
        free(h);
}

void *mopt_aligned_alloc(size_t size) {
    if (should_fail()) return NULL;
    size_t rounded = (size + MOPT_ALIGN - 1) & ~(size_t)(MOPT_ALIGN - 1);
    if (rounded < size || rounded > SIZE_MAX - MOPT_ALIGN) return NULL;
    if (!rounded) rounded = MOPT_ALIGN;
    mopt_budget *b = tl_budget;
    if (b && !charge(b, rounded)) return NULL;
    /* one alignment unit in front holds the header (in its last 16 bytes) */
    void *base = have_hooks()
                     ? g_hooks.allocate_aligned(g_hooks.user, MOPT_ALIGN, rounded + MOPT_ALIGN)
                     : aligned_alloc(MOPT_ALIGN, rounded + MOPT_ALIGN);
    if (!base) {
        if (b) credit(b, rounded);
        return NULL;
    }
    return finish(base, MOPT_ALIGN, rounded, b);
}

void mopt_aligned_free(void *ptr) {
    if (!ptr) return;
    release_charge(hdr_of(ptr));
    void *base = (char *)ptr - MOPT_ALIGN;
    atomic_fetch_sub(&g_live, 1);
    if (have_hooks())
        g_hooks.release_aligned(g_hooks.user, base);
    else
        free(base);
}

void mopt_alloc_detach(void *p) {
    if (p) release_charge(hdr_of(p));
}

/* ---- budget objects ---- */

mopt_budget *mopt_budget_create(int64_t limit) {
    /* the budget object itself is never charged to a budget */
    if (should_fail()) return NULL;
    mopt_budget *b = plain_alloc(sizeof *b, true, NULL);
    if (!b) return NULL;
    b->limit = limit > 0 ? limit : 0;
    atomic_store(&b->refs, 1);
    return b;
}

static void budget_unref(mopt_budget *b) {
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) mopt_free(b);
}

void mopt_budget_release(mopt_budget *b) {
    if (b) budget_unref(b);
}

mopt_budget *mopt_budget_swap(mopt_budget *b) {
    mopt_budget *prev = tl_budget;
    tl_budget = b;
    return prev;
}

mopt_budget *mopt_budget_current(void) { return tl_budget; }

int64_t mopt_budget_limit(const mopt_budget *b) { return b ? b->limit : 0; }
int64_t mopt_budget_used(const mopt_budget *b) { return b ? atomic_load(&b->used) : 0; }
int64_t mopt_budget_peak(const mopt_budget *b) { return b ? atomic_load(&b->peak) : 0; }

void mopt_budget_reset_peak(mopt_budget *b) {
    if (b) atomic_store(&b->peak, atomic_load(&b->used));
}

bool mopt_budget_fits(const mopt_budget *b, size_t size) {
    if (!b || !b->limit) return true;
    int64_t used = atomic_load(&b->used);
    return size <= (size_t)b->limit && (int64_t)size <= b->limit - used;
}

bool mopt_budget_refused(const mopt_budget *b, size_t *size, int64_t *in_use) {
    if (!b || !atomic_load(&b->refused)) return false;
    if (size) *size = (size_t)atomic_load(&b->refused_size);
    if (in_use) *in_use = atomic_load(&b->refused_in_use);
    return true;
}

void mopt_budget_clear_refusal(mopt_budget *b) {
    /* once per node: a plain load, and a store only after a refusal */
    if (b && atomic_load_explicit(&b->refused, memory_order_relaxed))
        atomic_store_explicit(&b->refused, 0, memory_order_relaxed);
}

/* ---- hooks ---- */

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
