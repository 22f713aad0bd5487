/* cache.h — a thread-safe LRU cache of embeddings for examples/serve, keyed
 * by the token ids an input normalizes to (a 64-bit hash picks the bucket;
 * the ids themselves are compared, so a hash collision is never a wrong hit).
 * Bounded both in entries and in bytes (keys + values + bookkeeping). */
#ifndef SERVE_CACHE_H
#define SERVE_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct emb_cache emb_cache;

/* max_entries 0 disables the cache (every lookup misses, nothing is stored). */
emb_cache *emb_cache_create(size_t max_entries, size_t max_bytes, size_t dim);
void emb_cache_destroy(emb_cache *c);
/* Copies the cached vector (dim floats) into out and returns 1 on a hit. */
int emb_cache_get(emb_cache *c, const int64_t *ids, size_t n, float *out);
void emb_cache_put(emb_cache *c, const int64_t *ids, size_t n, const float *vec);

typedef struct emb_cache_stats {
    uint64_t hits, misses, evictions;
    size_t entries, bytes;
} emb_cache_stats;
void emb_cache_get_stats(emb_cache *c, emb_cache_stats *s);

#endif
