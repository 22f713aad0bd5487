/*
 * runtime.h — the internal layout of the public handles (model, session,
 * tensor, options) and the runtime's entry points. Only lib/api and
 * lib/runtime include it.
 */
#ifndef MOPT_RUNTIME_RUNTIME_H
#define MOPT_RUNTIME_RUNTIME_H

#include <mopt/mopt.h>
#include <stdbool.h>

#include "ir/ir.h"
#include "ops/ops.h"

/* ---- options ---- */
typedef enum opt_kind { OPT_INT, OPT_DOUBLE, OPT_STRING } opt_kind;

typedef struct opt_entry {
    const char *key;
    opt_kind kind;
    bool set;
    int64_t i;
    double d;
    char *s;
} opt_entry;

#define OPT_MAX_KEYS 16
struct mopt_options {
    opt_entry entries[OPT_MAX_KEYS];
    int n;
};

/* Resolved settings, read once from an option set (NULL = defaults). */
typedef struct rt_config {
    int threads;
    int opt_level;
    char backend[16];
    char precision[8];
    char profile[512];
    int64_t memory_limit;
    int verbose;
    char external_data_dir[512];
} rt_config;

mopt_status rt_config_read(const mopt_options *opts, rt_config *cfg);

/* ---- tensors ---- */
struct mopt_tensor {
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[MOPT_MAX_RANK];
    void *data;
    size_t nbytes;
    bool owned; /* data from mopt_aligned_alloc, freed with the tensor */
};

/* Makes a tensor around an already-allocated (owned=true: aligned-alloc'd)
 * buffer. On failure the buffer is NOT freed. */
mopt_status rt_tensor_new(mopt_dtype dtype, int32_t rank, const int64_t *dims, void *data,
                          size_t nbytes, bool owned, mopt_tensor **out);

/* ---- model ---- */
typedef struct rt_node_plan {
    const op_impl *impl; /* NULL: the op's reference run */
    void *state;         /* impl->prepare's product */
} rt_node_plan;

struct mopt_model {
    ir_graph *graph;
    rt_config config;
    rt_node_plan *plans; /* one per node */
    int64_t parameter_count;
    int64_t parameter_bytes;
};

/* Takes ownership of graph (destroyed on failure too): checks it, resolves
 * every op (listing all unsupported nodes at once), runs load-time inference
 * and the passes the options ask for. */
mopt_status rt_model_build(ir_graph *graph, const rt_config *cfg, mopt_model **out);

/* Chooses an implementation for every node (see op_impl). */
mopt_status rt_plan_kernels(mopt_model *m);
void rt_release_kernels(mopt_model *m);
/* The kernel name of node i ("ref" or the impl's name). */
const char *rt_node_kernel_name(const mopt_model *m, int32_t i);

/* Load-time shape and type inference over the whole graph. */
mopt_status rt_infer_graph(ir_graph *graph);

/* ---- session ---- */
typedef struct rt_slot {
    op_tensor t;
    bool owned;     /* t.data allocated by the session for this run */
    int32_t refs;   /* remaining consumers in this run */
} rt_slot;

typedef struct rt_prof_entry {
    int64_t start_ns; /* since the session was created */
    int64_t ns;
    int64_t flops;
} rt_prof_entry;

typedef struct rt_trace_event {
    int32_t node;
    int32_t run;
    int64_t start_ns;
    int64_t ns;
} rt_trace_event;

struct mopt_session {
    const mopt_model *model;
    rt_config config;
    rt_slot *slots;      /* one per graph value */
    void **scratch;      /* one per node, for op_impl scratch */
    int threads;         /* resolved thread count (>= 1) */
    int32_t *consumers;  /* static consumer count per value (+1 for outputs) */
    int64_t live_bytes;
    int64_t peak_bytes;
    int64_t runs;
    int64_t last_run_ns;
    int64_t t0_ns;          /* creation time, origin of trace timestamps */
    bool profiling;
    rt_prof_entry *prof;    /* one per node, last run; NULL when not profiling */
    bool prof_valid;
    rt_trace_event *trace;  /* every node of every run, when writing a trace */
    size_t n_trace, cap_trace;
};

/* Number of cores available to this process (>= 1). */
int rt_default_threads(void);

/* Monotonic clock in nanoseconds. */
int64_t rt_now_ns(void);
/* Floating-point operations of one node execution (0 if not meaningful). */
int64_t rt_node_flops(const ir_node *n, const op_tensor *in, int n_in, const op_tensor *out,
                      int n_out);
/* Writes the session's trace as Chrome trace JSON. */
mopt_status rt_trace_write(const mopt_session *s, const char *path);

mopt_status rt_session_run(mopt_session *s, size_t n_inputs, const char *const *input_names,
                           const mopt_tensor *const *inputs, size_t n_outputs,
                           const char *const *output_names, mopt_tensor **outputs);

#endif
