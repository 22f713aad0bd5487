/*
 * ops.h — the operator contract: what each supported operator provides, and
 * the registry that maps an (op_type, domain) pair to it.
 *
 * An op is one row (op_def) in its family file (lib/ops/<family>.c):
 *   infer   shape/type inference (load time, symbolic; run time, concrete)
 *   attrs   its attributes declared (name, kind, params field, default),
 *           read into a small params struct once when the node is planned
 *           (kernels read ctx->params, never the IR)
 *   parse   what the table cannot say, after it: checks, derived values,
 *           attributes of other kinds (or all of them, with no table)
 *   geom    what run needs from the concrete inputs (sizes, validated
 *           shapes), computed before run and given as ctx->geom (optional)
 *   run     the reference implementation (kernels/ref), always available
 *   flops   floating-point work of one execution, for profiles (optional)
 *   bridge  which dtypes it may run through f32/i64 (lib/ops/bridge.c)
 *   impls   faster implementations in preference order (lib/ops/<backend>/)
 * A family file ends with an ops_family_<name>() accessor; registry.c lists
 * the families. Ops never allocate their outputs (the runtime does),
 * every caller builds an op's view of a node with op_view_init (node_view.h),
 * and every caller of the reference run goes through ops_run_reference.
 */
#ifndef MOPT_OPS_OPS_H
#define MOPT_OPS_OPS_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "ir/ir.h"

/* One input or output of a node, as an op sees it.
 *  - dtype MOPT_DTYPE_UNDEFINED marks an omitted optional input (or, during
 *    load-time inference, an input whose type is not known).
 *  - During load-time inference `shape` may contain symbols or be of unknown
 *    rank, and `data` is non-NULL only for initializers and constants.
 *  - At run time every shape is concrete and `data` is always set (for empty
 *    tensors it may point to a dummy byte). */
typedef struct op_tensor {
    mopt_dtype dtype;
    ir_shape shape;
    void *data;
} op_tensor;

/* The most inputs (and outputs) a node may have; a node view holds this
 * many slots, those past the node's count marked omitted. */
#define OP_MAX_IO 64

/* The compute precision a model was built for (the "precision" option). */
typedef enum op_precision {
    OP_PREC_FP32 = 0,
    OP_PREC_BF16 = 1,
    OP_PREC_INT8 = 2,
} op_precision;

struct op_def;
struct op_subgraphs;

/* A KV cache that a session's caller keeps as bf16 tiles (kernels.h,
 * kn_kvt_*) instead of the f32 rows its tensor's shape describes: the
 * generator's kv_cache_dtype=bf16, registered with rt_session_kv_tiles.
 * mopt.KVAppend writes tiles into it and mopt.DecodeAttention reads them
 * when their tensor's data is buf. */
typedef struct op_kv_tiles {
    const void *buf;
    int64_t cap; /* keys it holds, a multiple of KN_KVT_ALIGN */
    int64_t heads, head_dim;
    bool value; /* V tiles, else K tiles */
} op_kv_tiles;

/* Work memory a run needs only while it runs (a converted copy of an input,
 * accumulators), kept per session and node so that a steady-state run
 * allocates nothing (tests/unit/test_steady_state.c): op_work_get(ctx, k,
 * bytes) gives buffer k, grown when a run needs more. */
#define OP_WORK_BUFS 8
typedef struct op_work {
    void *buf[OP_WORK_BUFS];
    size_t cap[OP_WORK_BUFS];
} op_work;

typedef struct op_ctx {
    const ir_node *node;      /* for messages (name, op type) and parse only */
    const struct op_def *def; /* the node's op */
    ir_graph *graph;          /* the node's graph: symbol names; may be NULL at run time */
    int64_t opset;            /* opset version of the node's domain */
    bool runtime;             /* false during load-time inference */
    const void *params;       /* def->parse's product for this node (NULL when the op
                                 has no params) */
    const void *geom;         /* def->geom's product for this call: the reference
                                 run only (ops_run_reference sets it) */
    /* Set for an op_impl's run only: */
    const void *state; /* what impl->prepare made at model load (immutable) */
    void **scratch;    /* per-session, per-node slot the impl may fill lazily
                          (e.g. a primitive cache); freed by release_scratch */
    /* Set for any run in a session (impl or reference; NULL elsewhere, e.g.
     * constant folding): the node's work buffers, see op_work_get. */
    op_work *work;
    int threads;            /* the session's thread count (>= 1) */
    op_precision precision; /* the model's precision (supports/prepare/run) */
    int opt_level;          /* the model's opt_level (0..3); >= 3 lets impls
                               prepack weights into their kernel's own layout */
    /* For nodes with subgraphs (If, Loop, Scan): what infers or runs them,
     * given by the caller that built the view (NULL when it gives none). */
    const struct op_subgraphs *subgraphs;
    /* The session's KV caches kept as bf16 tiles (run time only; n 0: none). */
    const op_kv_tiles *kv_tiles;
    int n_kv_tiles;
} op_ctx;

/* Buffer k (< OP_WORK_BUFS) of at least bytes (64-byte aligned,
 * uninitialized) for this run, or NULL when out of memory: the node's
 * buffer k in ctx->work, or without ctx->work a new block. Give it back with
 * op_work_put (which frees only such a new block). A function and what it
 * calls with the same ctx use distinct k. */
void *op_work_get(const op_ctx *ctx, int k, size_t bytes);
void op_work_put(const op_ctx *ctx, void *p);
/* Frees w's buffers (the session, at destruction). */
void op_work_free(op_work *w);

/* The registered tiles whose buffer is data, or NULL. */
static inline const op_kv_tiles *op_kv_tiles_find(const op_ctx *ctx, const void *data) {
    for (int i = 0; i < ctx->n_kv_tiles; i++)
        if (ctx->kv_tiles[i].buf == data) return &ctx->kv_tiles[i];
    return NULL;
}

/* Shape and type inference. Reads in[0..n_in) (n_in == node->n_inputs) and
 * sets dtype and shape of out[0..n_out). Must validate attributes, input
 * count, dtypes and shapes, failing with op_fail(). When an input's rank or
 * dims are unknown it produces what it can (unknown rank or dims, sym < 0);
 * it never fails merely because something is unknown. When it needs an
 * input's data (e.g. Reshape's shape) and data is NULL (load time), the
 * output shape is unknown. It may set out->data only to memory owned by the
 * node or graph (e.g. Constant's attribute tensor) to expose a load-time
 * constant; at run time out->data is ignored and replaced by the runtime. */
typedef mopt_status (*op_infer_fn)(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out);

/* Computes outputs. in[] and out[] have concrete shapes (those inference
 * produced) and allocated data; out buffers never alias inputs, except the
 * one an op_impl declares with `inplace` (and only for that impl's run). An op_impl's
 * run may decline a call it cannot serve (a shape its kernel does not cover,
 * a library that refuses the problem) by returning MOPT_ERR_UNSUPPORTED
 * before writing anything: the executor then runs the node's next
 * implementation, finally the reference. The reference run never declines. */
typedef mopt_status (*op_run_fn)(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out);

/* Turns the node's attributes (ctx->node; ctx->opset is set) into the op's
 * params struct (def->params_size bytes, zeroed). Validates them, failing
 * with op_fail(). Params may point into the node's attributes: the graph
 * outlives them. */
typedef mopt_status (*op_parse_fn)(const op_ctx *ctx, void *params);

/* How one row of an op's attribute table fills its params field. */
typedef enum op_attr_kind {
    OP_ATTR_INT,     /* int64_t: the INT attribute, or def_i */
    OP_ATTR_FLOAT,   /* float: the FLOAT attribute, or def_f */
    OP_ATTR_BOOL01,  /* bool: a 0/1 INT attribute (def_i when absent); any other
                      * value fails ("NAME must be 0 or 1, not V") */
    OP_ATTR_NONZERO, /* bool: the INT attribute (or def_i) != 0 */
    OP_ATTR_INT_OPT, /* int64_t (0 when absent) and, at has_offset, a bool saying
                      * whether the node has the attribute */
} op_attr_kind;

/* One attribute of an op, declared: its name, kind, where it goes in the
 * params struct and its default. Write rows with the OP_ATTR_* macros below,
 * which check the field's C type at compile time. */
typedef struct op_attr_spec {
    const char *name;
    op_attr_kind kind;
    size_t offset, has_offset;
    int64_t def_i;
    float def_f;
} op_attr_spec;

/* offsetof(type, field), a compile error unless the field is of C type T. */
#define OP_FIELD_(type, field, T) _Generic(((type *)0)->field, T : offsetof(type, field))

#define OP_ATTR_I64(type, field, name, def)                                                        \
    { name, OP_ATTR_INT, OP_FIELD_(type, field, int64_t), 0, def, 0.0f }
#define OP_ATTR_F32(type, field, name, def)                                                        \
    { name, OP_ATTR_FLOAT, OP_FIELD_(type, field, float), 0, 0, def }
#define OP_ATTR_BOOL(type, field, name, def)                                                       \
    { name, OP_ATTR_BOOL01, OP_FIELD_(type, field, bool), 0, def, 0.0f }
#define OP_ATTR_NZ(type, field, name, def)                                                         \
    { name, OP_ATTR_NONZERO, OP_FIELD_(type, field, bool), 0, def, 0.0f }
#define OP_ATTR_I64_OPT(type, has, field, name)                                                    \
    { name, OP_ATTR_INT_OPT, OP_FIELD_(type, field, int64_t), OP_FIELD_(type, has, bool), 0, 0.0f }

/* What the reference run needs from its concrete inputs (sizes, strides,
 * checked shapes), into geom (def->geom_size bytes, zeroed). Fails with
 * op_fail() on inputs the run cannot take. Ops may call the same function
 * from infer (load time: unknown dims allowed) with a typed pointer. */
typedef mopt_status (*op_geom_fn)(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom);

/* Floating-point operations of one execution with these concrete shapes. */
typedef int64_t (*op_flops_fn)(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out);

/* Which dtypes an op may run through a wider one (bridge.c):
 *  - float: f16, bf16 and f64 inputs computed in f32, outputs rounded back;
 *  - ints: the narrow integers (i8 i16 u8 u16 u32; u64 when u64_ok; bool
 *    when bool_ok) computed in i64 (or f32 when via_f32), the outputs named
 *    by out_mask converted back. */
typedef struct op_bridge {
    bool float_ok;
    bool ints;
    bool u64_ok;
    bool bool_ok;
    bool via_f32;
    unsigned out_mask;
} op_bridge;

/* A faster implementation of an op on some backend. An op_def lists its
 * implementations in preference order; the reference `run` of the op_def is
 * always the last resort. The choice is made once per node when the model
 * is built (after the passes), from the `backend` option, the CPU's features
 * and what `supports` says for the node's load-time shapes and dtypes. */
typedef struct op_impl {
    const char *name;    /* shown by MOPT_VERBOSE and profiles: "onednn", "cpu-avx512" */
    const char *backend; /* "cpu", "onednn" or "openblas" */
    /* May this impl run this node? in[k].data is set for weights. Symbolic
     * dims may be present: an impl must then handle any size at run time. */
    bool (*supports)(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                     int n_out);
    /* Optional: builds immutable per-node state at model load (e.g. weights
     * reordered for the kernel). UNSUPPORTED makes the builder try the next
     * impl; any other failure fails the load. */
    mopt_status (*prepare)(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                           int n_out, void **state);
    void (*release)(void *state);           /* optional */
    op_run_fn run;                          /* ctx->state, ctx->scratch are set */
    void (*release_scratch)(void *scratch); /* optional */
    /* Optional: the name of what prepare chose for this node, for
     * MOPT_VERBOSE and profiles ("onednn-bf16-packed"); default `name`. */
    const char *(*variant)(const void *state);
    /* Optional (precision=bf16): whether this impl, as prepare chose it for
     * the node (ctx->state set), reads input k (output false) or writes
     * output k (output true) stored as bf16 where the graph says f32. The
     * runtime's storage plan (dispatch.c) keeps an f32 tensor in bf16 when
     * its producer and every consumer say yes; run then sees that op_tensor
     * with dtype MOPT_DTYPE_BF16. NULL: f32 only. */
    bool (*bf16_io)(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k);
    /* Optional (precision=int8): as bf16_io, for input k / output k stored
     * as a u8 rows block (kernels/cpu/rowquant.h: u8 per row with its own
     * scale and zero point, dynamic asymmetric) where the graph says f32:
     * a producer that says yes quantizes its output itself, a consumer reads
     * the rows as they are. The storage plan keeps a tensor so when its
     * producer and every consumer say yes; run then sees dtype
     * MOPT_DTYPE_U8 and the logical shape with the last dim +
     * CPU_ROWQ_EXTRA. NULL: never. */
    bool (*u8_io)(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k);
    /* Optional: the input whose buffer output 0 may take, as prepare chose
     * the impl for the node (ctx->state set), or -1. The memory plan gives
     * output 0 that input's buffer only when it is safe (runtime/memplan.c:
     * the input dies at this node, same byte size, an arena intermediate);
     * run then sees out[0].data == in[k].data, same dtype and byte size,
     * and must read what it needs of in[k] before overwriting it. Fallbacks
     * and the reference never see the shared buffer (the executor copies). */
    int (*inplace)(const op_ctx *ctx, const op_tensor *in, int n_in);
} op_impl;

typedef struct op_def {
    const char *op_type;
    const char *domain; /* "" = default ONNX domain */
    int min_inputs, max_inputs;
    int min_outputs, max_outputs;
    op_infer_fn infer;
    op_run_fn run;               /* the reference implementation */
    const op_impl *const *impls; /* NULL-terminated, preference order; may be NULL */
    size_t params_size;          /* 0: no params */
    /* The declared attributes, read into the params (zeroed) in order before
     * parse runs; parse may then be NULL or only validate and derive. */
    const op_attr_spec *attrs;
    int n_attrs;
    op_parse_fn parse;       /* set when params_size > 0 and there is no attrs table */
    size_t geom_size;        /* 0: no geometry */
    op_geom_fn geom;         /* set when geom_size > 0 */
    op_flops_fn flops;       /* NULL: not counted */
    const op_bridge *bridge; /* NULL: never bridged */
} op_def;

/* ---- subgraphs (If, Loop, Scan: lib/ops/control.c) ----------------------
 * A node's subgraphs are its GRAPH attributes. ir_subgraph.h makes every
 * outer-scope value a subgraph reads explicit: the node's last inputs (its
 * captures) feed the subgraph's last inputs, in the same order, after its
 * formal ones. Ops cannot infer or run a graph themselves (the passes and the
 * runtime sit above them), so whoever builds a view of such a node hands the
 * op this service: load-time inference (lib/passes/pass_subgraphs.c) or
 * execution (lib/runtime/subgraph.c). `sub` is one of the node's subgraphs;
 * in[] are its inputs in order (formal inputs, then captures). */
typedef struct op_subgraph_service {
    /* Load time: sets out[0..n_out) (n_out == sub->n_outputs) to the dtypes
     * and shapes (in ctx->graph's symbols) of sub's outputs for inputs of
     * in[]'s dtypes and shapes. NULL at run time. */
    mopt_status (*infer)(void *self, const op_ctx *ctx, ir_graph *sub, const op_tensor *in,
                         int n_in, op_tensor *out, int n_out);
    /* Run time: runs sub on in[] (concrete, with data). Every out[k] gets a
     * concrete dtype, shape and a buffer from mopt_aligned_alloc that the
     * caller owns from then on. NULL at load time. */
    mopt_status (*run)(void *self, const op_ctx *ctx, const ir_graph *sub, const op_tensor *in,
                       int n_in, op_tensor *out, int n_out);
    /* Run time: an op whose output shapes are known only once it has run
     * does the work while inferring and keeps the outputs (their buffers
     * handed over) until its run takes them back (false: nothing kept). */
    void (*keep)(void *self, const op_tensor *out, int n_out);
    bool (*take)(void *self, op_tensor *out, int n_out);
} op_subgraph_service;

typedef struct op_subgraphs {
    const op_subgraph_service *fn;
    void *self;
} op_subgraphs;

/* Params structs are at most this large (checked by the registry test). */
#define OP_PARAMS_CAP 512

/* An op_def's params fields in a table row: OP_PARAMS(my_params, my_parse). */
#define OP_PARAMS(type, parse_fn) .params_size = sizeof(type), .parse = parse_fn

/* An op_def's params read from an attribute table of OP_ATTR_* rows:
 * OP_ATTRS(my_params, k_my_attrs); add `.parse = my_check` for what a table
 * cannot say (ranges, values derived from the op type or opset). */
#define OP_ATTRS(type, table)                                                                      \
    .params_size = sizeof(type), .attrs = table, .n_attrs = (int)(sizeof table / sizeof table[0])

/* Geometry structs are at most this large (OP_GEOM checks at compile time). */
#define OP_GEOM_CAP 2048

/* An op_def's geometry fields in a table row: OP_GEOM(my_geom, my_geom_fn). */
#define OP_GEOM(type, geom_fn)                                                                     \
    .geom_size = sizeof(type) +                                                                    \
                 0 * sizeof(struct {                                                               \
                     int unused;                                                                   \
                     _Static_assert(sizeof(type) <= OP_GEOM_CAP, #type " exceeds OP_GEOM_CAP");    \
                 }),                                                                               \
    .geom = geom_fn

/* The reference implementation of op d (ctx->def, or the op a dtype bridge
 * wraps) on in/out: when d declares a geometry, computes it first and runs
 * with ctx->geom pointing at it (a failure of the geometry is the run's).
 * The executor, the dtype bridge, constant folding and tests call this,
 * never d->run. */
mopt_status ops_run_reference(const op_def *d, const op_ctx *ctx, const op_tensor *in, int n_in,
                              op_tensor *out, int n_out);

/* Finds an op; NULL when unsupported. */
const op_def *ops_find(const char *op_type, const char *domain);
/* Every registered op, for listings (`mopt ops`) and counts. */
size_t ops_count(void);
const op_def *ops_at(size_t index);

/* Family accessors (one per lib/ops/<family>.c). */
const op_def *ops_family_elementwise(size_t *count);
const op_def *ops_family_logic(size_t *count);
const op_def *ops_family_matmul(size_t *count);
const op_def *ops_family_conv(size_t *count);
const op_def *ops_family_pool(size_t *count);
const op_def *ops_family_normalization(size_t *count);
const op_def *ops_family_reduce(size_t *count);
const op_def *ops_family_shape(size_t *count);
const op_def *ops_family_movement(size_t *count);
const op_def *ops_family_fused(size_t *count);     /* domain "mopt" */
const op_def *ops_family_kvcache(size_t *count);   /* mopt.KVAppend, mopt.CacheMatMul */
const op_def *ops_family_attention(size_t *count); /* mopt.Attention */
const op_def *ops_family_bitwise(size_t *count);
const op_def *ops_family_attention_onnx(size_t *count);
const op_def *ops_family_loss(size_t *count);
const op_def *ops_family_cumulative(size_t *count);
const op_def *ops_family_sort(size_t *count);
const op_def *ops_family_index(size_t *count);
const op_def *ops_family_quant(size_t *count);
const op_def *ops_family_resize(size_t *count);
const op_def *ops_family_signal(size_t *count);
const op_def *ops_family_linalg(size_t *count);
const op_def *ops_family_lrn(size_t *count);
const op_def *ops_family_conv_transpose(size_t *count);
const op_def *ops_family_recurrent(size_t *count); /* LSTM GRU RNN */
const op_def *ops_family_einsum(size_t *count);
const op_def *ops_family_detection(size_t *count); /* NonMaxSuppression RoiAlign */
const op_def *ops_family_unique(size_t *count);
const op_def *ops_family_fold(size_t *count);        /* Col2Im MaxUnpool */
const op_def *ops_family_crop(size_t *count);        /* CenterCropPad */
const op_def *ops_family_grid(size_t *count);        /* GridSample AffineGrid */
const op_def *ops_family_spectral(size_t *count);    /* DFT STFT MelWeightMatrix */
const op_def *ops_family_conv_quant(size_t *count);  /* ConvInteger QLinearConv */
const op_def *ops_family_qstatic(size_t *count);     /* mopt.StaticQMatMul StaticQConv */
const op_def *ops_family_deform_conv(size_t *count); /* DeformConv */
const op_def *ops_family_control(size_t *count);     /* If Loop Scan */
const op_def *ops_family_rotary(size_t *count);      /* RotaryEmbedding */
const op_def *ops_family_state_space(size_t *count); /* LinearAttention CausalConvWithState */
/* ml: Binarizer ArrayFeatureExtractor TreeEnsemble TfIdfVectorizer */
const op_def *ops_family_ml(size_t *count);
const op_def *ops_family_flex_attention(size_t *count); /* ai.onnx.preview FlexAttention */
const op_def *ops_family_layout(size_t *count);         /* mopt.ChannelsLast* */

/* ---- helpers for op implementations (op_util.c) ------------------------- */

/* Number of elements of a static array, as int. */
#define OP_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Fails with "node 'NAME' (OpType): <message>". */
mopt_status op_fail(const op_ctx *ctx, mopt_status status, const char *fmt, ...) MOPT_PRINTF(3, 4);

/* Formats a shape for messages (symbol names resolved via ctx->graph). */
const char *op_shape_str(const op_ctx *ctx, const ir_shape *s, char buf[IR_SHAPE_STR_CAP]);

/* numpy broadcasting of a and b into out. Symbols: equal symbols stay, a
 * symbol against 1 or against an unknown dim stays, a symbol against n > 1
 * becomes n, two different symbols become unknown. Fails (SHAPE) on
 * incompatible fixed dims. */
mopt_status op_broadcast(const op_ctx *ctx, const ir_shape *a, const ir_shape *b, ir_shape *out);

/* Normalizes axis into [0, rank) (negative counts from the end). Fails with
 * a message naming the attribute when out of range. */
mopt_status op_axis(const op_ctx *ctx, int64_t axis, int32_t rank, const char *what, int32_t *out);

/* op_axis on the node's "axis" attribute (def when absent). */
mopt_status op_attr_axis(const op_ctx *ctx, int64_t def, int32_t rank, int32_t *out);

/* Checks the dtype of input i against an allowed set; fails with TYPE.
 * UNDEFINED (unknown at load) passes. */
mopt_status op_expect_dtype(const op_ctx *ctx, const op_tensor *t, int index,
                            const mopt_dtype *allowed, int n_allowed);
/* Checks that inputs i and j have the same dtype (if both known). */
mopt_status op_same_dtype(const op_ctx *ctx, const op_tensor *in, int i, int j);
/* op_expect_dtype with the common sets: float32 only; float32 or float64;
 * an index type (int64 or int32); int64 only. */
mopt_status op_expect_f32(const op_ctx *ctx, const op_tensor *t, int index);
mopt_status op_expect_float(const op_ctx *ctx, const op_tensor *t, int index);
mopt_status op_expect_index(const op_ctx *ctx, const op_tensor *t, int index);
mopt_status op_expect_i64(const op_ctx *ctx, const op_tensor *t, int index);
/* Any dtype with a fixed element size (for ops that move bytes); strings
 * and unknown type codes fail with UNSUPPORTED. UNDEFINED passes. */
mopt_status op_expect_any(const op_ctx *ctx, const op_tensor *t, int index);
/* True for a dtype with a fixed element size (not string, not unknown). */
bool op_dtype_sized(mopt_dtype t);

/* Is optional input k given (k < n_in and its dtype known)? */
bool op_has_input(const op_tensor *in, int n_in, int k);
/* Is input k wired in the node (it may still be of unknown type at load)? */
bool op_wired(const op_ctx *ctx, int k);
/* At run time every one of in[0..n) must be present with data; fails with
 * INVALID_MODEL naming the first missing input. Passes at load time. */
mopt_status op_require_inputs(const op_ctx *ctx, const op_tensor *in, int n);
/* Sets every output to (dtype, *shape). */
void op_set_outputs(op_tensor *out, int n_out, mopt_dtype dtype, const ir_shape *shape);

/* Reads an integer tensor (i32 or i64, any shape) into int64 values.
 * Returns the element count, or -1 with an error set (wrong dtype, too many
 * elements for cap). */
int64_t op_read_ints(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t *out,
                     int64_t cap);
/* Reads a small integer tensor when its values are known: returns 1 (read,
 * *n set), 0 (unknown at load time) or -1 (error set). A tensor whose
 * concrete shape has no elements is known (empty) even without data. */
int op_known_ints(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t *buf,
                  int64_t cap, int64_t *n);
/* Window attributes (Conv, MaxPool, AveragePool). Values are kept below
 * OP_WINDOW_ATTR_LIMIT so that window arithmetic stays far from overflow. */
#define OP_WINDOW_ATTR_LIMIT ((int64_t)1 << 31)
/* Reads an ints attribute of exactly `want` values, each in
 * [lo, OP_WINDOW_ATTR_LIMIT). When absent: fails if `required`, else fills
 * out with `def`. *present (may be NULL) tells whether it was given. */
mopt_status op_window_ints(const op_ctx *ctx, const char *name, int32_t want, int64_t lo,
                           int64_t def, bool required, int64_t *out, bool *present);
/* Reads the auto_pad attribute (default NOTSET) as a ref_auto_pad value:
 * 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID. */
mopt_status op_window_auto_pad(const op_ctx *ctx, int *out);

/* Reads a scalar (or 1-element tensor) of any numeric dtype as double.
 * Returns 0 on success, -1 with an error set. */
int op_read_scalar(const op_ctx *ctx, const op_tensor *t, const char *what, double *out);

/* Element count of a concrete tensor. */
int64_t op_numel(const op_tensor *t);
/* Element size of t's dtype in bytes (0 for strings / unknown). */
size_t op_esize(const op_tensor *t);
/* Byte size of a concrete tensor's data (0 when empty). */
size_t op_nbytes(const op_tensor *t);
/* Splits a concrete shape around `axis`: *outer = product of the dims before
 * it, *len = its size (1 for rank 0; len may be NULL), *inner = product of
 * the dims after it. */
void op_axis_split(const ir_shape *s, int32_t axis, int64_t *outer, int64_t *len, int64_t *inner);
/* Sets s to rank `rank` with every dim unknown. */
void op_set_unknown_dims(ir_shape *s, int32_t rank);
/* Row-major strides (in elements) of a concrete shape. */
void op_strides(const ir_shape *s, int64_t *strides);
/* Strides of `in` as seen from the broadcast `out` shape: 0 on broadcast axes,
 * aligned to the right. */
void op_broadcast_strides(const ir_shape *in, const ir_shape *out, int64_t *strides);
/* The attention masks (mopt.Attention, mopt.DecodeAttention): a mask of rank
 * <= 4 applies to the scores [B, H, Sq, Sk] by broadcasting without growing
 * them. Returns -1 when mask fits scores (a symbolic or unknown dim on
 * either side fits), else the first mask axis that does not (-2 for a rank
 * above 4). */
int32_t op_mask_bad_axis(const ir_shape *mask, const ir_shape *scores);
/* Binds a fitting concrete mask (bool: keys to keep, else f32 to add) to
 * the kernels' mask description over the scores [B, H, Sq, Sk]: its data
 * and element strides (0 on broadcast axes). */
struct kn_attn_mask;
void op_attn_mask_bind(const op_tensor *mask, const int64_t scores[4], struct kn_attn_mask *m);

#endif
