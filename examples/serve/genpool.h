/* genpool.h — the generation side of examples/serve: a fixed pool of
 * mopt_generator objects over one decoder model (each used by one request at
 * a time, a bounded number of requests waiting for one), and an incremental
 * UTF-8 assembler that turns a byte-token stream into valid UTF-8 pieces. */
#ifndef SERVE_GENPOOL_H
#define SERVE_GENPOOL_H

#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

#include <stddef.h>
#include <stdint.h>

typedef struct gen_pool gen_pool;

/* Loads model_path and creates n generators of max_seq positions, threads
 * threads each. NULL with a message in err on failure. */
gen_pool *gen_pool_create(const char *model_path, int n, int threads, int64_t max_seq, char *err,
                          size_t errsz);
void gen_pool_destroy(gen_pool *p);
int64_t gen_pool_vocab(const gen_pool *p);
const char *gen_pool_model_name(const gen_pool *p);

/* A free generator, waiting until deadline_ns (CLOCK_MONOTONIC; 0 = no
 * limit) when all are busy. NULL when max_waiters requests already wait
 * (*why = 429) or at the deadline (*why = 504). */
mopt_generator *gen_pool_acquire(gen_pool *p, size_t max_waiters, int64_t deadline_ns, int *why);
void gen_pool_release(gen_pool *p, mopt_generator *g);

typedef struct gen_pool_stats {
    size_t size, busy, waiting;
} gen_pool_stats;
void gen_pool_get_stats(gen_pool *p, gen_pool_stats *s);

/* Byte tokens to UTF-8: utf8_push appends to out (room for 8 bytes) the
 * text that byte b completes and returns its length (0 while a character is
 * incomplete). An invalid sequence becomes U+FFFD. utf8_flush ends the
 * stream (an incomplete tail becomes U+FFFD). */
typedef struct utf8_asm {
    unsigned char pend[4];
    int n, need;
} utf8_asm;
size_t utf8_push(utf8_asm *u, unsigned char b, char *out);
size_t utf8_flush(utf8_asm *u, char *out);

#endif
