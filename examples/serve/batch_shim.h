/* batch_shim.h — a stand-in for the library's mopt_batcher (the agreed API in
 * the experimental section of mopt.h, being written on another branch), with
 * the same signatures under a serve_ prefix, built on the public session API.
 * Used only while libmopt has no mopt_batcher: engine.c picks the library's
 * when the header declares it (MOPT_BATCHER_API defined by meson). */
#ifndef SERVE_BATCH_SHIM_H
#define SERVE_BATCH_SHIM_H

#include <stddef.h>
#include <stdint.h>

#define MOPT_EXPERIMENTAL_API
#include <mopt/mopt.h>

typedef struct serve_batcher serve_batcher;
typedef struct serve_batcher_config {
    size_t struct_size;
    int max_batch;
    int64_t max_delay_us;
    size_t queue_capacity;
    int workers;
    const int64_t *seq_buckets;
    size_t n_seq_buckets;
} serve_batcher_config;

typedef struct serve_batcher_stats {
    size_t struct_size;
    uint64_t requests, completed, failed, rejected_full, timed_out, batches;
    uint64_t batch_size_hist[64];
    size_t queue_depth;
} serve_batcher_stats;

mopt_status serve_batcher_create(const mopt_model *model, const mopt_options *opts,
                                 const serve_batcher_config *config, serve_batcher **out);
void serve_batcher_destroy(serve_batcher *batcher);
mopt_status serve_batcher_run(serve_batcher *batcher, size_t n_inputs,
                              const char *const *input_names, const mopt_tensor *const *inputs,
                              size_t n_outputs, const char *const *output_names,
                              mopt_tensor **outputs, int64_t timeout_us);
mopt_status serve_batcher_get_stats(const serve_batcher *batcher, serve_batcher_stats *stats);

#endif
