/* engine.h — the embedding model behind examples/serve: loads the model,
 * tokenizes text with a toy hashing tokenizer, and computes mean-pooled
 * embeddings through a dynamic batcher. engine_embed is the one inference
 * call of the server. */
#ifndef SERVE_ENGINE_H
#define SERVE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

typedef struct engine_config {
    const char *model_path;
    int batch; /* 0: every request runs alone (max_batch 1, no delay) */
    int max_batch;
    int64_t max_delay_us;
    const int64_t *seq_buckets; /* ascending padded lengths (NULL: pad to the longest) */
    size_t n_seq_buckets;
    int no_padding; /* 1: only inputs of equal length share a batch */
    size_t queue_capacity;
    int workers;        /* sessions running batches concurrently */
    int threads;        /* threads per session */
    int64_t vocab;      /* token ids must be in [0, vocab) */
    int64_t max_tokens; /* longest sequence the model takes */
} engine_config;

typedef struct engine engine;

typedef struct engine_stats {
    uint64_t requests, completed, failed, rejected_full, timed_out, batches;
    uint64_t batch_size_hist[64];
    size_t queue_depth;
    uint64_t reruns, padded_elements, input_elements;
} engine_stats;

/* NULL on failure, with a message in err. */
engine *engine_create(const engine_config *cfg, char *err, size_t errsz);
/* Finishes every queued request (drain), then releases everything. */
void engine_destroy(engine *e);
size_t engine_dim(const engine *e);
const char *engine_model_name(const engine *e);
int64_t engine_vocab(const engine *e);
int64_t engine_max_tokens(const engine *e);

/* The toy tokenizer (see README): [1] + one id per word or punctuation
 * character (3 + FNV-1a of the lowercased word mod vocab-3) + [2]. Writes at
 * most max ids and returns how many the text needs (may exceed max). */
size_t engine_tokenize(const engine *e, const char *text, size_t len, int64_t *ids, size_t max);

/* Mean-pooled last_hidden_state of ids[0..n) (attention mask all ones) into
 * out[engine_dim]. timeout_us > 0: fails with MOPT_ERR_CANCELLED when not
 * started within it. MOPT_ERR_BUSY when the queue is full. */
mopt_status engine_embed(engine *e, const int64_t *ids, size_t n, float *out, int64_t timeout_us);

void engine_get_stats(engine *e, engine_stats *s);

#endif
