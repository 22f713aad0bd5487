/* cache.c — LRU embedding cache: an open hash table of chains plus a doubly
 * linked recency list, under one mutex (see cache.h). */
#include "cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *hnext;       /* hash chain */
    struct entry *prev, *next; /* recency list, head = most recent */
    uint64_t hash;
    size_t n;
    int64_t *ids;
    float *vec;
    size_t bytes;
} entry;

struct emb_cache {
    pthread_mutex_t mu;
    size_t max_entries, max_bytes, dim;
    entry **table;
    size_t nbuckets;
    entry *head, *tail;
    size_t entries, bytes;
    uint64_t hits, misses, evictions;
};

static uint64_t hash_ids(const int64_t *ids, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the ids' bytes */
    const unsigned char *b = (const unsigned char *)ids;
    for (size_t k = 0; k < n * sizeof *ids; k++) {
        h ^= b[k];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

emb_cache *emb_cache_create(size_t max_entries, size_t max_bytes, size_t dim) {
    emb_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->max_entries = max_entries;
    c->max_bytes = max_bytes;
    c->dim = dim;
    size_t nb = 16;
    while (nb < max_entries && nb < ((size_t)1 << 24))
        nb <<= 1;
    c->nbuckets = nb;
    c->table = calloc(nb, sizeof *c->table);
    if (!c->table) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

static void unlink_lru(emb_cache *c, entry *e) {
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(emb_cache *c, entry *e) {
    e->prev = NULL;
    e->next = c->head;
    if (c->head) c->head->prev = e;
    c->head = e;
    if (!c->tail) c->tail = e;
}

static void remove_entry(emb_cache *c, entry *e) {
    entry **pp = &c->table[e->hash & (c->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    unlink_lru(c, e);
    c->entries--;
    c->bytes -= e->bytes;
    free(e->ids);
    free(e->vec);
    free(e);
}

void emb_cache_destroy(emb_cache *c) {
    if (!c) return;
    while (c->head)
        remove_entry(c, c->head);
    free(c->table);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static entry *find(emb_cache *c, uint64_t h, const int64_t *ids, size_t n) {
    for (entry *e = c->table[h & (c->nbuckets - 1)]; e; e = e->hnext)
        if (e->hash == h && e->n == n && memcmp(e->ids, ids, n * sizeof *ids) == 0) return e;
    return NULL;
}

int emb_cache_get(emb_cache *c, const int64_t *ids, size_t n, float *out) {
    if (!c) return 0;
    uint64_t h = hash_ids(ids, n);
    pthread_mutex_lock(&c->mu);
    entry *e = c->max_entries ? find(c, h, ids, n) : NULL;
    if (e) {
        memcpy(out, e->vec, c->dim * sizeof *out);
        unlink_lru(c, e);
        push_front(c, e);
        c->hits++;
    } else {
        c->misses++;
    }
    pthread_mutex_unlock(&c->mu);
    return e != NULL;
}

void emb_cache_put(emb_cache *c, const int64_t *ids, size_t n, const float *vec) {
    if (!c || !c->max_entries) return;
    size_t bytes = sizeof(entry) + n * sizeof *ids + c->dim * sizeof *vec;
    if (bytes > c->max_bytes) return;
    uint64_t h = hash_ids(ids, n);
    entry *e = calloc(1, sizeof *e);
    if (!e) return;
    e->ids = malloc(n * sizeof *ids + 1);
    e->vec = malloc(c->dim * sizeof *vec);
    if (!e->ids || !e->vec) {
        free(e->ids);
        free(e->vec);
        free(e);
        return;
    }
    memcpy(e->ids, ids, n * sizeof *ids);
    memcpy(e->vec, vec, c->dim * sizeof *vec);
    e->n = n;
    e->hash = h;
    e->bytes = bytes;
    pthread_mutex_lock(&c->mu);
    entry *old = find(c, h, ids, n);
    if (old) remove_entry(c, old);
    while (c->tail && (c->entries + 1 > c->max_entries || c->bytes + bytes > c->max_bytes)) {
        remove_entry(c, c->tail);
        c->evictions++;
    }
    entry **slot = &c->table[h & (c->nbuckets - 1)];
    e->hnext = *slot;
    *slot = e;
    push_front(c, e);
    c->entries++;
    c->bytes += bytes;
    pthread_mutex_unlock(&c->mu);
}

void emb_cache_get_stats(emb_cache *c, emb_cache_stats *s) {
    memset(s, 0, sizeof *s);
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    s->hits = c->hits;
    s->misses = c->misses;
    s->evictions = c->evictions;
    s->entries = c->entries;
    s->bytes = c->bytes;
    pthread_mutex_unlock(&c->mu);
}
