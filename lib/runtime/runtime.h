/*
 * runtime.h — the internal layout of the public handles (model, session,
 * tensor, options) and the runtime's entry points. Only lib/api and
 * lib/runtime include it.
 */
#ifndef MOPT_RUNTIME_RUNTIME_H
#define MOPT_RUNTIME_RUNTIME_H

#include <mopt/mopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "ir/ir.h"
#include "kernels/cpu/cpu_meter.h"
#include "ops/bridge.h"
#include "ops/node_view.h"
#include "ops/ops.h"
#include "passes/passes.h"

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

#define OPT_MAX_KEYS 24
/* Free-dimension overrides ("dim.<name>" options). */
#define OPT_MAX_DIMS 64
#define OPT_DIM_NAME_CAP 64
typedef struct opt_dim {
    char name[OPT_DIM_NAME_CAP];
    int64_t value;
} opt_dim;

struct mopt_options {
    opt_entry entries[OPT_MAX_KEYS];
    int n;
    opt_dim dims[OPT_MAX_DIMS];
    int n_dims;
    struct mopt_threadpool *pool; /* a reference, or NULL (mopt_options_set_threadpool) */
};

/* ---- thread pool (threadpool.c) ---- */
typedef struct mopt_threadpool mopt_threadpool; /* also in mopt.h's experimental section */
struct mopt_threadpool {
    pthread_mutex_t mu;
    pthread_cond_t seat_free;  /* a run waiting for a seat (mu) */
    int threads;               /* T, the cores the pool hands out */
    int free_cores;            /* (mu) */
    uint64_t tickets, granted; /* seats asked for while none was free, and handed
                                  over: runs waiting = tickets - granted (mu) */
    uint64_t runs, waited_runs, wait_ns, parallel_nodes, narrowed_nodes; /* (mu) */
    atomic_int refs;     /* the creator's, each session's, each options' */
    atomic_int sessions; /* sessions holding it */
    cpu_meter meter;     /* threads at work for the pool's runs */
};

typedef struct rt_pool_counts {
    uint64_t runs, waited_runs, wait_ns, parallel_nodes, narrowed_nodes;
    int cores_in_use, active_threads, peak_threads, sessions;
} rt_pool_counts;

/* A pool of `threads` cores with one reference, or NULL (out of memory). */
mopt_threadpool *rt_pool_create(int threads);
void rt_pool_retain(mopt_threadpool *p);
void rt_pool_release(mopt_threadpool *p); /* frees it with its last reference */
/* Takes a seat for the calling thread's run (waits while all cores are
 * held) and binds the thread to the pool's meter; returns the pool to give
 * to rt_pool_leave. A run nested inside another on the same thread keeps
 * the enclosing seat (and pool). NULL p outside a run: NULL, no-op. */
mopt_threadpool *rt_pool_enter(mopt_threadpool *p);
void rt_pool_leave(mopt_threadpool *p);
/* Takes up to `want` more cores without waiting (none while a run waits for
 * a seat); returns how many, to give back with rt_pool_narrow. */
int rt_pool_widen(mopt_threadpool *p, int want);
void rt_pool_narrow(mopt_threadpool *p, int got);
void rt_pool_stats(mopt_threadpool *p, rt_pool_counts *c);

/* ---- run options ---- */
#define RT_TAG_CAP 128
struct mopt_run_options {
    atomic_int terminate; /* set by any thread; runs read it before each node */
    int profiling;        /* -1: as the session says, 0 off, 1 on */
    char tag[RT_TAG_CAP];
};

/* Whether loading a .mopt checks every weight's checksum by default (the
 * "verify_weights" option); the header's checksum is always checked. */
#define MOPT_VERIFY_WEIGHTS_DEFAULT 0

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
    int verify_weights;         /* .mopt loads: 1 = check every weight's checksum */
    opt_dim dims[OPT_MAX_DIMS]; /* free dimensions fixed at load */
    int n_dims;
    char outputs[1024];      /* "outputs" option: the graph outputs to keep ("" = all) */
    int inspect_only;        /* 1 = a model that cannot run still loads, for queries */
    char calibration[512];   /* static INT8: the calibration table (YAML), "" = none */
    int calibration_capture; /* 1 = inputs of MatMul/Gemm/Conv become extra outputs */
    pass_qtable *qtable;     /* the table read by api/calib_table.c, or NULL */
    int expose_values;       /* 1 = after the passes, intermediate values become outputs */
    char int8_exclude[4096]; /* precision=int8: comma-separated nodes kept in FP32 */
    int kv_cache;            /* 1 = the kv_cache pass (token-major caches, in place) */
    int int8_fallback_bf16;  /* 1 = the int8_exclude nodes run BF16 instead of FP32 */
    int int8_depthwise;      /* 1 = static INT8 quantizes depthwise Convs too */
} rt_config;

mopt_status rt_config_read(const mopt_options *opts, rt_config *cfg);
/* The precision option as the ops' enum; bf16 (the option, or the int8
 * fallback's) is FP32 where bf16 products are no faster than f32 ones
 * (cpu_features.bf16_compute). */
op_precision rt_config_precision(const rt_config *cfg);
op_precision rt_bf16_or_fp32(void);
/* Whether the float convolutions of a model run bf16 on AMX (ops_conv_bf16_amx):
 * at precision=bf16, and at dynamic precision=int8 (no calibration table),
 * whose convolutions have no int8 kernel; then the layout pass keeps conv
 * chains channels-last. Static INT8 keeps its float convolutions FP32. */
bool rt_float_convs_bf16(const rt_config *cfg);

/* ---- tensors ---- */
struct mopt_tensor {
    mopt_dtype dtype;
    int32_t rank;
    int64_t dims[MOPT_MAX_RANK];
    void *data;
    size_t nbytes;
    bool owned;     /* data from mopt_aligned_alloc, freed with the tensor */
    bool read_only; /* mopt_tensor_wrap_const: an input only */
};

/* Makes a tensor around an already-allocated (owned=true: aligned-alloc'd)
 * buffer. On failure the buffer is NOT freed. */
mopt_status rt_tensor_new(mopt_dtype dtype, int32_t rank, const int64_t *dims, void *data,
                          size_t nbytes, bool owned, mopt_tensor **out);

/* ---- model ---- */
#define RT_PASS_NAME_CAP 48
/* Most stateless fallbacks kept per node (dispatch.c). */
#define RT_FALLBACKS_MAX 4

/* A graph input's axis whose symbolic dimension a "dim.<name>" option fixed
 * at load (so a run's error can name it). */
typedef struct rt_fixed_dim {
    int32_t input; /* index among the graph inputs */
    int32_t axis;
    int64_t value;
    char name[OPT_DIM_NAME_CAP];
} rt_fixed_dim;

/* What dispatch decided for one node, once, at model build. */
typedef struct rt_node_plan {
    const op_impl *impl; /* NULL: the op's reference run */
    void *state;         /* impl->prepare's product */
    const char *kernel;  /* the name MOPT_VERBOSE and profiles show */
    /* tried in order when impl's run declines (MOPT_ERR_UNSUPPORTED), then
     * the reference */
    const op_impl *next[RT_FALLBACKS_MAX];
    int n_next;
    const void *params;             /* the op's parsed params (NULL: none) */
    op_bridge_plan *bridge;         /* runs through the dtype bridge (NULL: native) */
    bool bridge_per_run;            /* dtypes unknown at build: bridge decided per run */
    struct rt_subgraphs *subgraphs; /* nested models of its subgraphs (subgraph.c) */
    op_precision precision;         /* the model's, FP32 for an int8_exclude node */
    uint32_t bf16_in, bf16_out;     /* inputs / outputs impl may keep in bf16 (bit k) */
    uint32_t u8_in, u8_out;         /* ... as u8 rows blocks (op_impl.u8_io) */
    int8_t inplace_in;              /* the input output 0 may share (impl->inplace), -1: none */
} rt_node_plan;

struct mopt_model {
    ir_graph *graph;
    bool graph_borrowed; /* a subgraph's model: the graph is its node's */
    size_t n_problems;   /* loaded with inspect_only: nodes that cannot run (then no
                            pass ran, no kernel is planned, no session can be made) */
    rt_config config;
    rt_node_plan *plans; /* one per node */
    /* The storage plan (dispatch.c, rt_plan_storage): per value, true when
     * the graph's f32 tensor is kept as bf16 between the ops that produce
     * and consume it (NULL: none is). */
    bool *bf16_store;
    /* ... true when it is kept as a u8 rows block between int8 ops
     * (kernels/cpu/rowquant.h; NULL: none is). */
    bool *u8_store;
    void *params_block; /* every node's params (plans[i].params point here) */
    char **op_names;    /* per node: "domain.Op" outside the default domain, else NULL */
    int64_t parameter_count;
    int64_t parameter_bytes;
    /* What saving a .mopt needs (lib/io/mopt_format.c): */
    uint64_t source_checksum; /* mfmt_hash64 of the source ONNX bytes */
    uint64_t source_bytes;
    pass_report report; /* passes applied at build (or read from a .mopt);
                           entry names point into report_names */
    char report_names[PASS_REPORT_CAP][RT_PASS_NAME_CAP];
    char *report_text;   /* the report as a table (mopt_model_pass_report), or NULL */
    rt_fixed_dim *fixed; /* input axes fixed by "dim.<name>" at load */
    int32_t n_fixed;
    atomic_int refs; /* the caller's handle + one per public session (api) */
};

/* Takes ownership of graph (destroyed on failure too): checks it, resolves
 * every op (listing all unsupported nodes at once), runs load-time inference
 * and the passes the options ask for. */
mopt_status rt_model_build(ir_graph *graph, const rt_config *cfg, mopt_model **out);
/* As rt_model_build for a graph optimized earlier (a .mopt file): checks,
 * resolves ops, runs load-time inference and kernel dispatch, but no pass;
 * `applied` (may be NULL) is recorded as the model's pass report. */
mopt_status rt_model_build_optimized(ir_graph *graph, const rt_config *cfg,
                                     const pass_report *applied, mopt_model **out);

/* The model of a subgraph (subgraph.c): built as rt_model_build (passes
 * when run_passes) from a graph that stays owned by its node. */
mopt_status rt_model_build_nested(ir_graph *sub, const rt_config *cfg, bool run_passes,
                                  mopt_model **out);

/* Destroys a model (NULL is fine). */
void rt_model_destroy(mopt_model *m);

/* Releases m->op_names. */
void rt_model_free_names(mopt_model *m);

/* Sizes of node n's concrete tensors and window, checked before any backend
 * sees them (issue 17): LIMIT (reason in why) for a tensor that can never be
 * allocated; otherwise OK, *backends_ok false (reason in why) when a tensor or
 * the window is beyond what oneDNN/OpenBLAS are trusted with
 * (kernels/limits.h): the node then gets no kernel of theirs. Model build and
 * mopt_model_check run it on every node. */
mopt_status rt_node_sizes(const ir_graph *g, const ir_node *n, bool *backends_ok, char *why,
                          size_t cap);

/* Chooses an implementation for every node (see op_impl). */
mopt_status rt_plan_kernels(mopt_model *m);
void rt_release_kernels(mopt_model *m);
/* precision=bf16 at opt_level 3: which f32 intermediates stay bf16 between
 * ops (m->bf16_store), from what each node's impl accepts (op_impl.bf16_io):
 * a tensor is kept bf16 when its producer writes bf16 and every consumer
 * reads it so; graph inputs, outputs and weights stay as the graph says.
 * Run by rt_plan_kernels. */
mopt_status rt_plan_storage(mopt_model *m);
/* Tensors the storage plan keeps as u8 rows blocks (precision=int8). */
int32_t rt_storage_u8_count(const mopt_model *m);
/* The storage plan's conversions: *stored gets the number of tensors kept
 * bf16, *to_bf16 the f32 tensors a bf16-capable consumer still reads (each
 * converted inside that op), *to_f32 the bf16 outputs a node could write
 * that stay f32 for a consumer that needs them so. */
void rt_storage_counts(const mopt_model *m, int32_t *stored, int32_t *to_bf16, int32_t *to_f32);
/* The kernel name of node i ("ref" or the impl's name). */
const char *rt_node_kernel_name(const mopt_model *m, int32_t i);

/* ---- session ---- */
/* The run-time bookkeeping of one value (its tensor is in session->vals). */
typedef struct rt_slot {
    bool owned;   /* the data was allocated by the session for this run */
    int32_t refs; /* remaining consumers in this run */
} rt_slot;

/* The memory plan of one input-shape signature: every value's shape and
 * dtype as the first run with that signature computed them, and its arena
 * offset. Later runs with the same signature use the arena and allocate
 * nothing; a value whose shape turns out different (data-dependent shapes)
 * falls back to the heap for that run and the plan is rebuilt. */
typedef struct rt_mem_plan {
    int64_t *sig; /* the signature: per input, dtype, rank, dims */
    size_t sig_len;
    int64_t *offsets; /* per value, -1 if not in the arena */
    ir_shape *shapes; /* per value */
    mopt_dtype *dtypes;
    uint8_t *shapes_fixed; /* per node: bit 0, its output shapes follow from
                              the signature alone, so runs skip its inference;
                              RT_SHAPES_ELASTIC_STABLE, also whatever the
                              elastic dims are (runs of an elastic plan skip
                              it too) */
    uint8_t *sig_elastic;  /* per signature entry: a dim of an elastic symbol */
    size_t arena_size;
    size_t intermediate_bytes; /* sum of all planned tensors, for comparison */
    int32_t n_inplace;         /* outputs given their input's bytes (memplan.c) */
    uint64_t last_used;
} rt_mem_plan;

#define RT_SHAPES_ELASTIC_STABLE 2
#define RT_MAX_PLANS 8
#define RT_SIG_CAP 1024

typedef struct rt_prof_entry {
    int64_t start_ns; /* since the session was created */
    int64_t ns;
    int64_t flops;
} rt_prof_entry;

typedef struct rt_trace_event {
    int32_t node;
    int32_t run;
    int32_t tag; /* index into session->tags, -1 for none */
    int64_t start_ns;
    int64_t ns;
} rt_trace_event;

struct mopt_session {
    const mopt_model *model;
    rt_config config;
    op_tensor *vals;                   /* one per graph value: this run's tensors */
    rt_slot *slots;                    /* one per graph value */
    op_view *view;                     /* the node view the executor fills */
    void **scratch;                    /* one per node, for op_impl scratch */
    op_work *work;                     /* one per node, for any run's work buffers */
    op_bridge_scratch *bridge_scratch; /* one per node, for bridged nodes */
    rt_mem_plan plans[RT_MAX_PLANS];
    int n_plans;
    uint64_t plan_clock;
    rt_mem_plan *plan;       /* the plan of the current run, or NULL */
    int64_t sig[RT_SIG_CAP]; /* this run's input-shape signature */
    size_t sig_len;
    bool plan_broken; /* a shape differed from the plan during this run */
    /* Elastic dims (rt_session_elastic_dim): a run whose input shapes differ
     * from a plan's only in dims of these symbols, none above the plan's,
     * uses that plan's arena (each value in its planned slot, which is at
     * least as large): no allocation and no re-plan, but every node infers
     * its shapes. */
    uint8_t *elastic_sym;            /* per graph symbol, NULL: none */
    uint8_t sig_elastic[RT_SIG_CAP]; /* this run's signature entries of elastic symbols */
    bool plan_elastic;               /* this run uses a plan of larger elastic dims */
    int64_t plans_recorded;          /* memory plans made so far */
    int64_t heap_tensors;            /* intermediates placed on the heap so far */
    int32_t run_inferred;            /* nodes whose shapes the last run inferred */
    uint8_t *arena;                  /* 64-byte aligned */
    size_t arena_cap;
    const mopt_tensor **user_out; /* per value: caller's output buffer this run */
    ir_shape *run_shapes;         /* per value: shapes produced by this run */
    mopt_dtype *run_dtypes;
    int threads;               /* resolved thread count (>= 1) */
    mopt_threadpool *pool;     /* a reference to the shared pool, or NULL */
    mopt_threadpool *run_pool; /* the pool of the run in progress (the enclosing
                                  run's for a nested session), or NULL */
    int64_t par_min_flops;     /* nodes with less work run on 1 thread (MOPT_PARALLEL_MIN_FLOPS) */
    struct rt_thread_tune *tune; /* per node, unless MOPT_ADAPTIVE_THREADS=0; else NULL */
    int32_t *consumers;          /* static consumer count per value (+1 for outputs) */
    int64_t live_bytes;
    int64_t peak_bytes;
    int64_t runs;
    int64_t last_run_ns;
    int64_t t0_ns;        /* creation time, origin of trace timestamps */
    bool profiling;       /* this run is profiled */
    bool profile_session; /* the "profile" option: runs are profiled by default */
    rt_prof_entry *prof;  /* one per node, last run; NULL until a run is profiled */
    bool prof_valid;
    rt_trace_event *trace; /* every node of every run, when writing a trace */
    size_t n_trace, cap_trace;
    const mopt_run_options *run_opts; /* of the run in progress, or NULL */
    int32_t run_tag;                  /* this run's tag in tags, -1 for none */
    char **tags;                      /* the distinct run tags the trace names */
    int32_t n_tags, cap_tags;
    struct rt_sub_state **subs; /* per node with subgraphs: nested sessions
                                   (subgraph.c); NULL when the model has none */
    atomic_bool busy;           /* a public run is in progress (MOPT_ERR_BUSY) */
    mopt_budget *budget;        /* memory_limit: charged with every block the session
                                   makes (creation, runs); NULL for a nested session,
                                   whose blocks go to the enclosing one's */
    int64_t budget_peak;        /* the budget's peak during the last run */
    op_kv_tiles *kv_tiles;      /* caches the caller keeps as bf16 tiles (rt_session_kv_tiles) */
    int n_kv_tiles;
};

/* ---- subgraphs (subgraph.c) ---- */
/* Builds the nested model of every subgraph of m's nodes. */
mopt_status rt_subgraphs_build(mopt_model *m, bool run_passes);
void rt_subgraphs_release(mopt_model *m);
/* Makes / frees a session's nested sessions. */
mopt_status rt_subgraphs_session_create(mopt_session *s);
void rt_subgraphs_session_destroy(mopt_session *s);
/* The run service for node i of s's model (NULL when it has no subgraphs). */
const op_subgraphs *rt_subgraphs_service(const mopt_session *s, int32_t node);

/* Places the values with sizes[v] > 0 (bytes; node outputs only) in one
 * arena by liveness: offsets[v] gets the byte offset (or -1), *arena_size the
 * total. share (NULL: none) is per node the input whose buffer the node's
 * output 0 may take (-1: none); it is honoured when safe (memplan.c), and
 * *n_shared (may be NULL) gets how many outputs share their input's bytes. */
mopt_status rt_memplan(const ir_graph *g, const size_t *sizes, const int8_t *share,
                       int64_t *offsets, size_t *arena_size, int32_t *n_shared);

/* Number of cores available to this process (>= 1). */
int rt_default_threads(void);

/* The work below which a node runs on 1 thread: MOPT_PARALLEL_MIN_FLOPS
 * (a number >= 0, e.g. "1e6"; 0 parallelizes every node), else 1e6. */
int64_t rt_parallel_min_flops(void);

/* Adaptive threads (default; MOPT_ADAPTIVE_THREADS=0 turns it off): each node that would
 * run on the session's N > 1 threads keeps the recent time of its runs at
 * 1 and at N threads and takes the faster; the other is tried again after
 * 16 runs, an interval that doubles each time it is still slower. So a node whose fork-join loses
 * to a busy machine drops to 1 thread, and comes back when the cores are free. The interval is also
 * multiplied by how much slower the other arm was (a try costs that much),
 * capped at 1024 runs. */
typedef struct rt_thread_tune {
    int64_t ns[2];    /* recent time: [0] at 1 thread, [1] at the session's */
    int64_t next_try; /* the run at which the other arm is tried again */
    int32_t backoff;  /* the current interval between tries (runs) */
    uint8_t seen;     /* bit k: arm k measured */
} rt_thread_tune;
bool rt_adaptive_threads(void);

/* In-place outputs (op_impl.inplace) in memory plans: on unless
 * MOPT_INPLACE=0. */
bool rt_inplace_enabled(void);

/* Writes the session's trace as Chrome trace JSON. */
mopt_status rt_trace_write(const mopt_session *s, const char *path);

/* Creates a session of model (arguments already checked) / destroys one
 * (NULL is fine). */
mopt_status rt_session_create(const mopt_model *model, const mopt_options *opts,
                              mopt_session **out);
void rt_session_destroy(mopt_session *s);
/* Binds the model's weights to the session's value tensors (once, at
 * creation: runs never unbind them). */
void rt_session_bind_weights(mopt_session *s);
void rt_session_release_plans(mopt_session *s);
/* Marks the symbol of graph input `input`'s axis as elastic for s (see
 * mopt_session.elastic_sym): a plan made at a large value of it (a KV
 * cache's capacity) then serves every smaller one. NOT_FOUND for an unknown
 * input, INVALID_ARGUMENT for an axis out of range or not symbolic. */
mopt_status rt_session_elastic_dim(mopt_session *s, const char *input, int axis);
/* Tells s that the caller binds graph input past[i] and output present[i]
 * (i < n) to one buffer bufs[i] holding bf16 tiles of capacity cap keys
 * (kernels.h, kn_kvt_*; V tiles when value[i]), not the f32 rows the
 * tensors' shapes describe. Refused (UNSUPPORTED, with the reason) unless
 * each past input feeds only a mopt.KVAppend whose output is present[i]
 * and feeds only mopt.DecodeAttention nodes, as their K (value[i] false)
 * or V cache. With verbose, logs which tiles kernel each DecodeAttention
 * node runs. */
mopt_status rt_session_kv_tiles(mopt_session *s, int n, const char *const *past,
                                const char *const *present, void *const *bufs, const bool *value,
                                int64_t cap, int64_t heads, int64_t head_dim);
mopt_status rt_session_run(mopt_session *s, const mopt_run_options *ro, size_t n_inputs,
                           const char *const *input_names, const mopt_tensor *const *inputs,
                           size_t n_outputs, const char *const *output_names,
                           mopt_tensor **outputs);

#endif
