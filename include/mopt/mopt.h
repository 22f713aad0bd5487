/*
 * mopt.h — the public C API of libmopt, and the only installed header.
 *
 * libmopt loads a trained neural network (ONNX), optimizes it once at load
 * time and runs it on the CPU. What is not declared here is not published.
 *
 * A worked example (tests/unit/test_header_example.c compiles and runs it):
 *
 *   #include <mopt/mopt.h>
 *   #include <stdio.h>
 *
 *   int run_model(const char *path, const float *pixels, float *scores) {
 *       mopt_options *opts = NULL;
 *       mopt_model *model = NULL;
 *       mopt_session *session = NULL;
 *       mopt_tensor *in = NULL, *out = NULL;
 *       int64_t in_dims[4] = {1, 3, 8, 8}, out_dims[2] = {1, 10};
 *       mopt_status st = mopt_options_create(&opts);
 *       if (st == MOPT_OK) st = mopt_options_set_int(opts, "threads", 1);
 *       if (st == MOPT_OK) st = mopt_model_load(path, opts, &model);
 *       if (st == MOPT_OK) st = mopt_session_create(model, opts, &session);
 *       if (st == MOPT_OK)   // borrow the caller's buffers: no copies
 *           st = mopt_tensor_wrap_const(MOPT_DTYPE_F32, 4, in_dims, pixels,
 *                                       sizeof(float) * 3 * 8 * 8, &in);
 *       if (st == MOPT_OK)
 *           st = mopt_tensor_wrap(MOPT_DTYPE_F32, 2, out_dims, scores,
 *                                 sizeof(float) * 10, &out);
 *       if (st == MOPT_OK)   // NULL names: inputs and outputs in model order
 *           st = mopt_session_run(session, 1, NULL,
 *                                 (const mopt_tensor *const *)&in, 1, NULL, &out);
 *       if (st != MOPT_OK)
 *           fprintf(stderr, "mopt: %s: %s\n", mopt_status_string(st),
 *                   mopt_last_error());
 *       mopt_tensor_destroy(out);
 *       mopt_tensor_destroy(in);
 *       mopt_session_destroy(session);
 *       mopt_model_destroy(model);
 *       mopt_options_destroy(opts);
 *       return st == MOPT_OK ? 0 : 1;
 *   }
 *
 * Conventions
 *   - Every fallible call returns mopt_status and hands objects back through
 *     its last parameter; on failure that parameter is left NULL and
 *     mopt_last_error() says what went wrong (naming the node, tensor, file
 *     offset or option at fault).
 *   - Every *_create / *_load has a matching *_destroy; destroy(NULL) is a
 *     harmless no-op.
 *   - Pointer parameters are borrowed for the duration of the call unless the
 *     comment says otherwise.
 *   - Enum values are stable and only ever appended.
 *   - Status-returning functions are MOPT_NODISCARD: the compiler warns when
 *     a status is dropped. To ignore one deliberately, test it
 *     (`if (mopt_...(...) != MOPT_OK) { ... }`): gcc does not accept a
 *     (void) cast for this attribute. Define MOPT_NODISCARD empty before
 *     including this header to turn the warning off.
 *   - Stable and experimental: everything declared here is frozen (it keeps
 *     its meaning and ABI until the next major version) except the section
 *     at the end, which is declared only when MOPT_EXPERIMENTAL_API is
 *     defined before this header is included (as zstd's
 *     ZSTD_STATIC_LINKING_ONLY): profiling, statistics, the model check and
 *     the pass report may still change between minor versions.
 *   - Thread-safety: a mopt_model is immutable after load and may be shared by
 *     any number of sessions and threads. A mopt_session, mopt_options or
 *     mopt_tensor must be used by one thread at a time.
 */
#ifndef MOPT_MOPT_H
#define MOPT_MOPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define MOPT_API
#elif defined(__GNUC__) || defined(__clang__)
#define MOPT_API __attribute__((visibility("default")))
#else
#define MOPT_API
#endif

#ifndef MOPT_NODISCARD
#if defined(__cplusplus) && __cplusplus >= 201703L
#define MOPT_NODISCARD [[nodiscard]]
#elif defined(__GNUC__) || defined(__clang__)
#define MOPT_NODISCARD __attribute__((warn_unused_result))
#else
#define MOPT_NODISCARD
#endif
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

#define MOPT_VERSION_MAJOR 0
#define MOPT_VERSION_MINOR 2
#define MOPT_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH */
#define MOPT_VERSION_NUMBER                                                                        \
    (MOPT_VERSION_MAJOR * 10000 + MOPT_VERSION_MINOR * 100 + MOPT_VERSION_PATCH)

/* The library's MOPT_VERSION_NUMBER, so a program can check that the header it
 * was compiled with matches the library it runs with. Thread-safe. */
MOPT_API int mopt_version_number(void);
/* The version as a static string, e.g. "0.2.0". Thread-safe. */
MOPT_API const char *mopt_version(void);

/* ------------------------------------------------------------------------ */
/* Status and errors                                                         */
/* ------------------------------------------------------------------------ */

typedef enum mopt_status {
    MOPT_OK = 0,
    MOPT_ERR_INVALID_ARGUMENT = 1, /* a NULL or out-of-range argument, bad option */
    MOPT_ERR_OUT_OF_MEMORY = 2,    /* an allocation failed */
    MOPT_ERR_IO = 3,               /* a file could not be opened, read or written */
    MOPT_ERR_PARSE = 4,            /* a malformed file: truncation, bad encoding */
    MOPT_ERR_INVALID_MODEL = 5,    /* well-formed but invalid graph (cycle, missing value) */
    MOPT_ERR_UNSUPPORTED = 6,      /* an operator, attribute or dtype not implemented */
    MOPT_ERR_SHAPE = 7,            /* incompatible or invalid shapes */
    MOPT_ERR_TYPE = 8,             /* incompatible element types */
    MOPT_ERR_NOT_FOUND = 9,        /* no input/output/option of that name */
    MOPT_ERR_LIMIT = 10,           /* a configured limit (memory_limit, sizes) exceeded */
    MOPT_ERR_INTERNAL = 11,        /* a bug in libmopt: please report it */
    MOPT_ERR_CANCELLED = 12,       /* the run was cancelled (mopt_run_options_set_terminate) */
    MOPT_ERR_BUSY = 13             /* the session is running on another thread right now */
} mopt_status;

/* A static, human-readable name for a status ("invalid argument"). Needs no
 * handle; never returns NULL (unknown values give "unknown status").
 * Thread-safe. */
MOPT_API const char *mopt_status_string(mopt_status status);

/* The detailed message of the last failing call made by this thread, or ""
 * if none failed. Owned by the library; valid until the next libmopt call on
 * this thread. Thread-safe (the message is thread-local). */
MOPT_API const char *mopt_last_error(void);

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum mopt_log_level {
    MOPT_LOG_ERROR = 0,
    MOPT_LOG_WARNING = 1, /* something the caller should know: e.g. a trace file not written */
    MOPT_LOG_INFO = 2,    /* what "verbose" / MOPT_VERBOSE=1 asks for: kernel choices, passes */
    MOPT_LOG_DEBUG = 3    /* "verbose" 2 and more: every run */
} mopt_log_level;

/* Receives one message (one line, without the newline). message is valid
 * during the call only. May be called from any thread that calls libmopt,
 * possibly from several at once; it must not call libmopt. */
typedef void (*mopt_log_callback)(void *user, mopt_log_level level, const char *message);

/* Sends every message of the library to callback (with user), instead of
 * the default: each message as a line on stderr. NULL restores the default.
 * The library writes nothing to stderr or stdout other than through this.
 * Thread-safe: a call being logged while the callback is replaced gets
 * either the old or the new one. */
MOPT_API void mopt_set_log_callback(mopt_log_callback callback, void *user);

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */
/* ------------------------------------------------------------------------ */

#define MOPT_ALLOCATOR_VERSION 1

/* Allocation hooks. Every allocation of the library (models, weights,
 * sessions, arenas, tensors, options) goes through them; third-party
 * libraries (oneDNN, OpenBLAS, libyaml, the OpenMP runtime) keep their own.
 * version must be MOPT_ALLOCATOR_VERSION; later versions only append
 * members, and the library reads only those of the version given. Every
 * function must be set. allocate/reallocate follow malloc/realloc (size is
 * never 0); allocate_aligned returns size bytes aligned to `alignment` (a
 * power of two, 64 today; size is a multiple of it) and is released with
 * release_aligned; release(user, NULL) need not be handled (never called).
 * Returning NULL makes the call at hand fail with MOPT_ERR_OUT_OF_MEMORY. */
typedef struct mopt_allocator {
    int version;
    void *user;
    void *(*allocate)(void *user, size_t size);
    void *(*reallocate)(void *user, void *ptr, size_t size);
    void (*release)(void *user, void *ptr);
    void *(*allocate_aligned)(void *user, size_t alignment, size_t size);
    void (*release_aligned)(void *user, void *ptr);
} mopt_allocator;

/* Installs allocation hooks (copied; NULL restores the C library's
 * malloc/realloc/free/aligned_alloc). Only while no memory of the library is
 * held, i.e. before the first object is created or after the last one of
 * every kind (options, model, session, tensor, run options) is destroyed.
 * Not thread-safe: call it while no other thread uses libmopt. Returns OK,
 * INVALID_ARGUMENT (wrong version, a NULL function, or objects still alive:
 * the message gives how many blocks are held). */
MOPT_NODISCARD MOPT_API mopt_status mopt_set_allocator(const mopt_allocator *allocator);

/* ------------------------------------------------------------------------ */
/* Element types (values are those of ONNX TensorProto.DataType)             */
/* ------------------------------------------------------------------------ */

typedef enum mopt_dtype {
    MOPT_DTYPE_UNDEFINED = 0,
    MOPT_DTYPE_F32 = 1,
    MOPT_DTYPE_U8 = 2,
    MOPT_DTYPE_I8 = 3,
    MOPT_DTYPE_U16 = 4,
    MOPT_DTYPE_I16 = 5,
    MOPT_DTYPE_I32 = 6,
    MOPT_DTYPE_I64 = 7,
    MOPT_DTYPE_STRING = 8,
    MOPT_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
    MOPT_DTYPE_F16 = 10,
    MOPT_DTYPE_F64 = 11,
    MOPT_DTYPE_U32 = 12,
    MOPT_DTYPE_U64 = 13,
    MOPT_DTYPE_BF16 = 16,
    /* 8-bit floats (ONNX FLOAT8*): one byte per element, ONNX's bit layout */
    MOPT_DTYPE_F8E4M3FN = 17,
    MOPT_DTYPE_F8E4M3FNUZ = 18,
    MOPT_DTYPE_F8E5M2 = 19,
    MOPT_DTYPE_F8E5M2FNUZ = 20,
    /* 4-bit integers: unpacked, one byte per element (U4 0..15, I4 -8..7
     * sign-extended); the .onnx reader unpacks ONNX's packed 4- and 2-bit data */
    MOPT_DTYPE_U4 = 21,
    MOPT_DTYPE_I4 = 22,
    /* FLOAT4E2M1: its 4-bit code in the low bits of one byte per element */
    MOPT_DTYPE_F4E2M1 = 23,
    /* FLOAT8E8M0: an 8-bit exponent, 2^(e - 127); 0xFF is NaN */
    MOPT_DTYPE_F8E8M0 = 24,
    /* 2-bit integers, unpacked like the 4-bit ones (U2 0..3, I2 -2..1) */
    MOPT_DTYPE_U2 = 25,
    MOPT_DTYPE_I2 = 26
} mopt_dtype;

/* Short static name ("f32", "i64", "bool", ...); "undefined" for unknown
 * values. Thread-safe. */
MOPT_API const char *mopt_dtype_name(mopt_dtype dtype);
/* Bytes per element; 0 for UNDEFINED, STRING and unknown values. */
MOPT_API size_t mopt_dtype_size(mopt_dtype dtype);

/* The largest tensor rank libmopt handles. */
#define MOPT_MAX_RANK 8

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

/* A set of key/value options. Keys known today:
 *   "threads"       int    >= 0, 0 = one per core (default 0)
 *   "opt_level"     int    0..3 (default 3): 0 runs the graph as imported;
 *                   1 folds constants and removes dead, duplicate and no-op
 *                   nodes; 2 also fuses; 3 also prepacks weights into the
 *                   kernels' own layouts (oneDNN)
 *   "backend"       string auto | ref | cpu | onednn | openblas (default auto)
 *   "precision"     string fp32 | bf16 | int8 (default fp32)
 *   "profile"       string "" = off (default); "1" = collect per-node
 *                   timings (mopt_session_profile_*); any other value = also
 *                   write a Chrome trace to that path
 *   "memory_limit"  int    bytes, 0 = none (default): the most a session may
 *                   hold (its tables, arena, intermediates, outputs until
 *                   they are handed over, kernel scratch and oneDNN
 *                   scratchpads; allocations made by OpenMP worker threads
 *                   inside a kernel are not counted), and the most loading a
 *                   model may allocate (the file read, import, constant
 *                   folding, prepacking; mapped .mopt weights are not
 *                   allocations). A run or load that would pass it fails
 *                   with LIMIT, naming what was being allocated
 *   "verbose"       int    0 = quiet, 1 = log each node's kernel and the
 *                   pass report at load (MOPT_LOG_INFO, stderr unless a log
 *                   callback is set), 2 = also every run with its tag and
 *                   time (MOPT_LOG_DEBUG); the environment variable
 *                   MOPT_VERBOSE=1 (or 2) sets it for every model and session
 *   "external_data_dir" string  folder for external weights of a model
 *                   loaded from memory (default: external data is refused)
 *   "verify_weights" int   0 or 1: when loading a .mopt file, also check
 *                   the checksum of every weight, reading every page of the
 *                   file (default 0: the header's checksum and the layout
 *                   are always checked; weights are mapped unread, which
 *                   keeps a 90 MB model's load near 0.5 ms instead of ~40)
 *   "dim.<name>"    int    >= 0: fixes the symbolic (free) dimension <name>
 *                   of the model's inputs ("dim.batch" = 1) when it is
 *                   loaded, so that it is optimized for that size; a run
 *                   with another size fails with SHAPE, naming the input
 *                   and the dimension. Loading fails with NOT_FOUND when no
 *                   input has a dimension of that name. See
 *                   mopt_options_set_dim. Reading a "dim.<name>" that was
 *                   never set gives NOT_FOUND.
 *   "inspect_only"  int    0 or 1: a model that cannot run (unsupported
 *                   operators, failing shape inference) still loads, for the
 *                   model queries below (no pass runs then); creating a
 *                   session or saving it fails with UNSUPPORTED, and
 *                   mopt_model_check names its problems (default 0)
 *   "outputs"       string "" = every output (default); else a comma-separated
 *                   list of the graph outputs to keep: the others, and the
 *                   nodes that fed only them, are removed at load (at every
 *                   opt_level; the pass report's "prune_outputs" row says how
 *                   many). Loading fails with NOT_FOUND for a name the model
 *                   does not output
 *   "calibration"   string a calibration table written by `mopt calibrate`
 *                   (YAML; tools/mopt/README.md), default "" = none. With
 *                   precision=int8 (and opt_level >= 2; otherwise loading
 *                   fails with INVALID_ARGUMENT) MatMul, Gemm and Conv
 *                   (fused forms too) whose input is in the table run static
 *                   INT8: the input quantized to u8 with the table's scale
 *                   and zero point (no run-time min/max), weights s8 per
 *                   output channel, u8 kept between consecutive such nodes;
 *                   a node whose input is missing keeps dynamic int8
 *                   (MOPT_VERBOSE=1 says which). A table made for another
 *                   model (its model_hash), or none of whose tensors is in
 *                   the model, fails the load with INVALID_ARGUMENT; some
 *                   unknown names only log a warning; a malformed table
 *                   fails with PARSE naming the line. Read for ONNX models
 *                   only (a .mopt file keeps what it was saved with)
 *   "calibration_capture" int 0 or 1 (experimental, for `mopt calibrate`):
 *                   every f32 input of MatMul, Gemm and Conv becomes an
 *                   extra model output, after the model's own (default 0)
 *   "int8_exclude"  string "" = none (default); else a comma-separated list
 *                   (spaces around names ignored, as for "outputs")
 *                   of ONNX node names (main graph) that stay FP32 under
 *                   precision=int8, dynamic or static (the per-layer
 *                   fallback `mopt quantize-check` chooses). A fused node
 *                   keeps its MatMul/Conv's name. Loading fails with
 *                   INVALID_ARGUMENT naming the first name that is not a
 *                   node of the model, or without precision=int8;
 *                   MOPT_VERBOSE=1 lists the excluded nodes. Read for ONNX
 *                   models; mopt_model_save records it in the .mopt file
 *                   (a .mopt file keeps what it was saved with)
 *   "kv_cache"      int 0 or 1 (experimental, for mopt_generator; default
 *                   0): 1 runs the kv_cache pass on a decoder exported with
 *                   past_key_values (see mopt_generator): each
 *                   past_key_values.N.* input and present.N.* output that
 *                   is a Concat on the sequence axis read only by attention
 *                   products becomes token-major, [batch, seq, heads,
 *                   head_dim] instead of [batch, heads, seq, head_dim], so
 *                   a cache grows at its end: present is written in place
 *                   when it is bound to past's buffer, and the products read
 *                   the cache where it lies. The model's I/O shapes change
 *                   accordingly (mopt_model_io_dim shows them); the pass
 *                   report's kv_cache row counts the caches. Read for ONNX
 *                   models (a .mopt file keeps the rewritten graph)
 *   "int8_fallback" string "fp32" (default) or "bf16": the precision the
 *                   int8_exclude nodes run in (bf16 kernels where the CPU
 *                   has them, as precision=bf16). Not recorded in a .mopt
 *                   file (its excluded nodes run FP32)
 *   "int8_depthwise" string "fp32" (default) or "int8": with a calibration
 *                   table, depthwise Convs (and small RGB stems, always)
 *                   stay FP32, as their int8 form is slower; "int8" makes
 *                   depthwise Convs static INT8 too (one X scale per input
 *                   channel). MOPT_VERBOSE=1 names each float one with the
 *                   reason. No effect without static INT8; any other value
 *                   fails with INVALID_ARGUMENT. Read for ONNX models (a
 *                   .mopt file keeps the graph it was saved with)
 *   "expose_values" int 0 or 1 (experimental, for `mopt compare
 *                   --per-layer`): after the passes, every f32 tensor a
 *                   node computes (and every u8 tensor kept between static
 *                   INT8 nodes, dequantized) becomes an extra model output
 *                   under its ONNX name, after the model's own, in node
 *                   order; the layout pass (channels-last) is left out.
 *                   The model's own outputs are unchanged. ONNX models only
 *                   (INVALID_ARGUMENT for a .mopt file); default 0
 *   "kv_cache_dtype" string "f32" (default) or "bf16" (experimental, read by
 *                   mopt_generator_create only): the generator's KV cache
 *                   as f32 rows, or rounded to bf16 and kept in tiles that
 *                   mopt.DecodeAttention reads with vdpbf16ps (AVX512-BF16;
 *                   other CPUs widen the bf16 to f32): half the cache
 *                   memory and a shorter attention step, at bf16 rounding
 *                   of K and V (and, on AVX512-BF16, of the query and the
 *                   softmax weights). Needs a model loaded with kv_cache=1
 *                   whose every cache is read only by mopt.DecodeAttention;
 *                   mopt_generator_create refuses others (UNSUPPORTED)
 * Setting an unknown key, a value of the wrong kind or out of range fails with
 * MOPT_ERR_INVALID_ARGUMENT and names the key. A string value is accepted for
 * an int or double key when it parses as one. */
typedef struct mopt_options mopt_options;

/* Creates an empty option set (all defaults). *out is owned by the caller and
 * released with mopt_options_destroy. Returns OK, INVALID_ARGUMENT (out NULL)
 * or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_options_create(mopt_options **out);
/* Releases an option set. NULL is a no-op. */
MOPT_API void mopt_options_destroy(mopt_options *opts);
/* Set an option. Returns OK, INVALID_ARGUMENT (NULL argument, unknown key,
 * wrong kind, out of range) or OUT_OF_MEMORY. The key and value are copied. */
MOPT_NODISCARD MOPT_API mopt_status mopt_options_set_int(mopt_options *opts, const char *key,
                                                         int64_t value);
MOPT_NODISCARD MOPT_API mopt_status mopt_options_set_double(mopt_options *opts, const char *key,
                                                            double value);
MOPT_NODISCARD MOPT_API mopt_status mopt_options_set_string(mopt_options *opts, const char *key,
                                                            const char *value);
/* Read an option (its value if set, else its default). Returns OK,
 * INVALID_ARGUMENT (NULL argument, wrong kind) or NOT_FOUND (unknown key).
 * A string is owned by the option set and valid until the key is set again
 * or the set is destroyed. */
MOPT_NODISCARD MOPT_API mopt_status mopt_options_get_int(const mopt_options *opts, const char *key,
                                                         int64_t *value);
MOPT_NODISCARD MOPT_API mopt_status mopt_options_get_double(const mopt_options *opts,
                                                            const char *key, double *value);
MOPT_NODISCARD MOPT_API mopt_status mopt_options_get_string(const mopt_options *opts,
                                                            const char *key, const char **value);
/* Sets every key of a YAML mapping ("threads: 2\nbackend: ref\n"). Stops at
 * the first bad entry; the error names the line. Returns OK, IO (cannot read
 * the file), PARSE (not YAML, or not a flat mapping of scalars),
 * INVALID_ARGUMENT (a bad key or value) or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_options_load_yaml(mopt_options *opts, const char *path);
MOPT_NODISCARD MOPT_API mopt_status mopt_options_load_yaml_string(mopt_options *opts,
                                                                  const char *text, size_t length);
/* Fixes a free dimension: the same as setting the int option "dim.<name>"
 * (see the keys above). name: 1 to 63 characters. Returns OK,
 * INVALID_ARGUMENT (NULL, empty or too long name, value out of range, more
 * than 64 dimensions) or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_options_set_dim(mopt_options *opts, const char *name,
                                                         int64_t value);

/* ------------------------------------------------------------------------ */
/* Models                                                                    */
/* ------------------------------------------------------------------------ */

/* An immutable, loaded and optimized model. Thread-safe to share. */
typedef struct mopt_model mopt_model;

/* Loads an ONNX model from a file. External-data weights are read from
 * files in the model's folder (paths escaping it are refused). opts may be
 * NULL (defaults); it is only read during the call. *out is owned by the
 * caller. Returns OK, INVALID_ARGUMENT, IO, PARSE, INVALID_MODEL,
 * UNSUPPORTED (the message lists every unsupported node), SHAPE, TYPE,
 * OUT_OF_MEMORY.
 * The file may also be a .mopt file written by mopt_model_save, recognized
 * by its content (it starts with "%MOPT-"), whatever its name. Its graph is
 * already optimized: no pass runs, and the opt_level and precision it was
 * saved with apply. Its weights are memory-mapped, not copied (the mapping is
 * released with the model). Its header checksum and structure are always
 * checked, its weights' checksums when the option "verify_weights" is 1;
 * a corrupt or truncated file gives PARSE (bad magic, unknown format version,
 * checksum mismatch, malformed YAML) or INVALID_MODEL (offsets outside the
 * file, misaligned or overlapping tensors, inconsistent graph). */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_load(const char *path, const mopt_options *opts,
                                                    mopt_model **out);

/* Flags of mopt_model_load_v2 (OR them). */
/* A .mopt file is read into memory the model owns instead of being mapped:
 * the file may then change or go away while the model lives (costs one copy
 * of the weights and the time to read them). */
#define MOPT_LOAD_NO_MMAP 1
/* A .mopt file's weights are checked against their checksums, as the
 * option verify_weights=1 does (whatever the option says). */
#define MOPT_LOAD_VERIFY_WEIGHTS 2

/* As mopt_model_load, with a flags word (0 = mopt_model_load exactly). A
 * flag that does not apply (both only concern .mopt files) is accepted and
 * has no effect. Unknown bits give INVALID_ARGUMENT: a program written for a
 * later libmopt fails clearly instead of losing what it asked for.
 * Why a _v2 and not a new name: it is mopt_model_load with the one argument
 * that was missing (SQLite's sqlite3_open_v2 convention); the options set
 * and the flags word grow without new functions, so there will be no _v3. */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_load_v2(const char *path, const mopt_options *opts,
                                                       uint32_t flags, mopt_model **out);
/* As mopt_model_load, from size bytes at data (only read during the call;
 * the weights of a .mopt image are copied once into memory the model owns). */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_load_from_memory(const void *data, size_t size,
                                                                const mopt_options *opts,
                                                                mopt_model **out);
/* Releases the caller's handle on a model. Sessions created from it keep it
 * alive: the memory is freed when the last of them is destroyed, so the
 * order of destruction does not matter. NULL is a no-op. The handle must not
 * be used after this call (except by the sessions that already exist). */
MOPT_API void mopt_model_destroy(mopt_model *model);

/* Saves the model as it runs (its optimized graph and weights, the passes
 * applied with their report, opt_level, precision, and a checksum of the
 * ONNX bytes it came from) as a .mopt file at path, which mopt_model_load
 * reads back without optimizing again. The file is written under a
 * temporary name next to path and then renamed over it, so a model mapped
 * from path stays valid. The model is only read: saving is thread-safe and
 * may overlap sessions running the model. Saving what was loaded from a
 * .mopt file gives the same bytes. Returns OK, INVALID_ARGUMENT (NULL model,
 * NULL or empty path), IO (cannot write the file), UNSUPPORTED (string
 * weights), LIMIT or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_save(const mopt_model *model, const char *path);

/* What the model says about itself (ONNX ModelProto / GraphProto fields,
 * kept through mopt_model_save). */
typedef enum mopt_info {
    MOPT_INFO_PRODUCER_NAME = 0,    /* "pytorch" */
    MOPT_INFO_PRODUCER_VERSION = 1, /* "2.3.0" */
    MOPT_INFO_DOMAIN = 2,           /* the model's domain, "ai.example" */
    MOPT_INFO_DOC_STRING = 3,       /* the model's doc_string */
    MOPT_INFO_GRAPH_NAME = 4,       /* the main graph's name */
    MOPT_INFO_GRAPH_DOC_STRING = 5  /* the main graph's doc_string */
} mopt_info;

/* A metadata string of the model; "" when the file does not set it, NULL
 * for a NULL model or an unknown field. Owned by the model. Thread-safe. */
MOPT_API const char *mopt_model_info(const mopt_model *model, mopt_info field);
/* The model's own version (ONNX model_version); 0 when not set or NULL. */
MOPT_API int64_t mopt_model_version(const mopt_model *model);
/* Custom metadata (ONNX metadata_props), in file order: the count, and the
 * key and value of entry `index` (NULL when out of range). Owned by the
 * model. Thread-safe. */
MOPT_API size_t mopt_model_metadata_count(const mopt_model *model);
MOPT_API const char *mopt_model_metadata_key(const mopt_model *model, size_t index);
MOPT_API const char *mopt_model_metadata_value(const mopt_model *model, size_t index);
/* The value of custom metadata `key` (the first entry of that key). *value
 * is owned by the model. Returns OK, INVALID_ARGUMENT (NULL argument) or
 * NOT_FOUND. */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_metadata(const mopt_model *model, const char *key,
                                                        const char **value);

/* Which side of the model an introspection call refers to. */
typedef enum mopt_io_kind { MOPT_INPUT = 0, MOPT_OUTPUT = 1 } mopt_io_kind;

/* Number of graph inputs (weights excluded) or outputs; 0 if model is NULL. */
MOPT_API size_t mopt_model_io_count(const mopt_model *model, mopt_io_kind kind);
/* Name of input/output `index`; NULL when out of range. Owned by the model. */
MOPT_API const char *mopt_model_io_name(const mopt_model *model, mopt_io_kind kind, size_t index);
/* Element type; MOPT_DTYPE_UNDEFINED when out of range or unknown. */
MOPT_API mopt_dtype mopt_model_io_dtype(const mopt_model *model, mopt_io_kind kind, size_t index);
/* Rank; -1 when unknown or out of range. */
MOPT_API int mopt_model_io_rank(const mopt_model *model, mopt_io_kind kind, size_t index);
/* Size of dimension `axis`; -1 when it is symbolic, unknown or out of range. */
MOPT_API int64_t mopt_model_io_dim(const mopt_model *model, mopt_io_kind kind, size_t index,
                                   int axis);
/* Name of a symbolic dimension ("batch", "seq"); NULL when the dimension is
 * fixed, unnamed or out of range. Owned by the model. */
MOPT_API const char *mopt_model_io_dim_name(const mopt_model *model, mopt_io_kind kind,
                                            size_t index, int axis);
/* Finds an input/output by name. Returns OK, INVALID_ARGUMENT or NOT_FOUND. */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_io_find(const mopt_model *model, mopt_io_kind kind,
                                                       const char *name, size_t *index_out);

/* Nodes of the model graph as it will run (after optimization). */
MOPT_API size_t mopt_model_node_count(const mopt_model *model);
/* Op type and name of node `index`; NULL when out of range. Owned by the
 * model. Operators outside the default ONNX domain carry their domain:
 * "Conv", "mopt.FusedConv", "com.microsoft.Foo". */
MOPT_API const char *mopt_model_node_op_type(const mopt_model *model, size_t index);
MOPT_API const char *mopt_model_node_name(const mopt_model *model, size_t index);
/* Opset version imported for an operator domain ("" or "ai.onnx" for the
 * default domain); -1 when the model does not import it. */
MOPT_API int64_t mopt_model_opset(const mopt_model *model, const char *domain);
/* Number of weight elements and their bytes, over all initializers. */
MOPT_API int64_t mopt_model_parameter_count(const mopt_model *model);
MOPT_API int64_t mopt_model_parameter_bytes(const mopt_model *model);

/* Operators this build supports: the count, and the name of entry `index`
 * ("Conv"; operators outside the default domain as "domain.Op"), NULL when
 * out of range. The string is valid until the next call on this thread.
 * Thread-safe. */
MOPT_API size_t mopt_supported_op_count(void);
MOPT_API const char *mopt_supported_op_name(size_t index);

/* ------------------------------------------------------------------------ */
/* Tensors                                                                   */
/* ------------------------------------------------------------------------ */

/* A dense, row-major tensor: an element type, a shape and a data buffer that
 * is either owned by the tensor or borrowed from the caller. */
typedef struct mopt_tensor mopt_tensor;

/* Creates a tensor that owns a zero-filled, 64-byte aligned buffer. dims may
 * be NULL when rank is 0 (a scalar). Returns OK, INVALID_ARGUMENT (bad dtype,
 * rank outside 0..MOPT_MAX_RANK, negative dim), LIMIT (size overflows) or
 * OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_tensor_create(mopt_dtype dtype, int rank,
                                                       const int64_t *dims, mopt_tensor **out);
/* Wraps a caller's buffer without copying. data is borrowed: it must stay
 * valid, and be at least `size` bytes, until the tensor is destroyed. size
 * must equal the element count times the element size. Returns OK,
 * INVALID_ARGUMENT (as for create, NULL data with a non-empty shape, or a
 * size that does not match) or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_tensor_wrap(mopt_dtype dtype, int rank,
                                                     const int64_t *dims, void *data, size_t size,
                                                     mopt_tensor **out);
/* As mopt_tensor_wrap, for a read-only buffer: the tensor may be an input
 * of a run, never an output (the run fails with INVALID_ARGUMENT naming the
 * output), and mopt_tensor_data gives NULL for it (use
 * mopt_tensor_data_const). */
MOPT_NODISCARD MOPT_API mopt_status mopt_tensor_wrap_const(mopt_dtype dtype, int rank,
                                                           const int64_t *dims, const void *data,
                                                           size_t size, mopt_tensor **out);
/* Releases the tensor, and its buffer if owned. NULL is a no-op. */
MOPT_API void mopt_tensor_destroy(mopt_tensor *tensor);
MOPT_API mopt_dtype mopt_tensor_dtype(const mopt_tensor *tensor);
MOPT_API int mopt_tensor_rank(const mopt_tensor *tensor);
/* Size of dimension `axis`; -1 when out of range. */
MOPT_API int64_t mopt_tensor_dim(const mopt_tensor *tensor, int axis);
/* The rank dims as an array owned by the tensor (NULL for NULL tensor). */
MOPT_API const int64_t *mopt_tensor_dims(const mopt_tensor *tensor);
MOPT_API int64_t mopt_tensor_element_count(const mopt_tensor *tensor);
MOPT_API size_t mopt_tensor_size_bytes(const mopt_tensor *tensor);
/* The data buffer (owned or borrowed); NULL for an empty tensor and for one
 * made by mopt_tensor_wrap_const (read-only). */
MOPT_API void *mopt_tensor_data(mopt_tensor *tensor);
MOPT_API const void *mopt_tensor_data_const(const mopt_tensor *tensor);

/* Reads a tensor file: NumPy .npy (version 1-3, little-endian, C order) or
 * an ONNX TensorProto .pb, told apart by content. *out is owned by the
 * caller. Returns OK, INVALID_ARGUMENT, IO, PARSE (malformed or truncated
 * file, the message gives the offset), UNSUPPORTED (e.g. Fortran order, a
 * dtype libmopt lacks) or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_tensor_load(const char *path, mopt_tensor **out);
/* Writes the tensor as a NumPy .npy file (version 1.0). Returns OK,
 * INVALID_ARGUMENT, UNSUPPORTED or IO. */
MOPT_NODISCARD MOPT_API mopt_status mopt_tensor_save_npy(const mopt_tensor *tensor,
                                                         const char *path);

/* ------------------------------------------------------------------------ */
/* Run options                                                               */
/* ------------------------------------------------------------------------ */

/* Settings of one run (mopt_session_run_v2): a tag, per-run profiling, and a
 * cancellation flag. One set may serve many runs, also of several sessions
 * at once (the runs only read it). */
typedef struct mopt_run_options mopt_run_options;

/* Creates run options (no tag, the session's profiling, not terminated).
 * *out is owned by the caller. Returns OK, INVALID_ARGUMENT or
 * OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_run_options_create(mopt_run_options **out);
/* Releases run options. No run may be using them. NULL is a no-op. */
MOPT_API void mopt_run_options_destroy(mopt_run_options *run_options);
/* A tag naming the runs made with these options (a request id): it appears
 * in log messages and cancellation errors, and in the profile trace (the
 * "tag" of each event). Copied; at most 127 bytes; "" removes it. Not
 * while a run uses the options. Returns OK, INVALID_ARGUMENT (NULL, too
 * long) or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_run_options_set_tag(mopt_run_options *run_options,
                                                             const char *tag);
/* The tag ("" when none or NULL). Owned by the options. */
MOPT_API const char *mopt_run_options_tag(const mopt_run_options *run_options);
/* Per-run profiling: 1 = profile these runs (mopt_session_profile_*), even
 * when the session's "profile" option is off; 0 = do not, even when it is
 * on; -1 = as the session says (default). Returns OK or INVALID_ARGUMENT. */
MOPT_NODISCARD MOPT_API mopt_status mopt_run_options_set_profiling(mopt_run_options *run_options,
                                                                   int profiling);
/* Sets (1) or clears (0) the cancellation flag. Any thread may call it at
 * any time, also during a run: a run using these options checks the flag
 * before each node and stops with MOPT_ERR_CANCELLED, handing no output
 * over; the session stays usable. The flag stays set until cleared, so
 * later runs with these options fail at once too (as ORT's terminate).
 * Thread-safe (atomic). Returns OK or INVALID_ARGUMENT (NULL). */
MOPT_NODISCARD MOPT_API mopt_status mopt_run_options_set_terminate(mopt_run_options *run_options,
                                                                   int terminate);

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */
/* ------------------------------------------------------------------------ */

/* Per-thread execution state for one model. Drive it from one thread at a
 * time; create one session per concurrent caller. Misuse is detected: a run
 * entered while another thread is running the same session returns
 * MOPT_ERR_BUSY at once (and does not touch the session). Sessions of one
 * model may run concurrently; each holds a reference on its model, so
 * mopt_model_destroy before the sessions are destroyed is safe (the model is
 * released with its last session). */
typedef struct mopt_session mopt_session;

/* Creates a session. It holds a reference on model (see above). opts may
 * be NULL (defaults; session keys such as "threads" and "profile" are read
 * here). Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_session_create(const mopt_model *model,
                                                        const mopt_options *opts,
                                                        mopt_session **out);
/* Releases a session. NULL is a no-op. */
MOPT_API void mopt_session_destroy(mopt_session *session);

/* Runs the model once.
 *   inputs[i] feeds the input named input_names[i], or input i in model order
 *   when input_names is NULL. Every model input must be fed exactly once.
 *   Input tensors are borrowed for the call only; they are never modified.
 *   outputs[i] receives the output named output_names[i], or output i in
 *   model order when output_names is NULL. If outputs[i] is NULL on entry, a
 *   new owned tensor is created and handed to the caller (destroy it); if it
 *   is a tensor, the result is written into its buffer, whose dtype and shape
 *   must match exactly.
 * Returns OK, INVALID_ARGUMENT, NOT_FOUND (an unknown name), TYPE, SHAPE
 * (inputs that contradict the model or each other), UNSUPPORTED,
 * OUT_OF_MEMORY, LIMIT, or BUSY (another thread is running this session). On failure no output is
 * handed over. Every error names the input or output at fault (or the node, for a failure inside
 * the graph). */
MOPT_NODISCARD MOPT_API mopt_status mopt_session_run(mopt_session *session, size_t n_inputs,
                                                     const char *const *input_names,
                                                     const mopt_tensor *const *inputs,
                                                     size_t n_outputs,
                                                     const char *const *output_names,
                                                     mopt_tensor **outputs);
/* As mopt_session_run, with run options (NULL: as mopt_session_run). Also
 * returns CANCELLED when the options' terminate flag is set before or during
 * the run. Named _v2 (SQLite's sqlite3_open_v2 convention) because it is
 * mopt_session_run with the one argument that was missing; the run options
 * object grows without new functions, so there will be no _v3. */
MOPT_NODISCARD MOPT_API mopt_status
mopt_session_run_v2(mopt_session *session, const mopt_run_options *run_options, size_t n_inputs,
                    const char *const *input_names, const mopt_tensor *const *inputs,
                    size_t n_outputs, const char *const *output_names, mopt_tensor **outputs);

/* ======================================================================== */
/* Experimental: declared only with MOPT_EXPERIMENTAL_API defined before     */
/* this header is included. These calls work and are tested, but their names */
/* and meaning may still change in a minor version (they are exported, so a  */
/* program built against them keeps linking as long as they exist).          */
/* ======================================================================== */
#ifdef MOPT_EXPERIMENTAL_API

/* Called by mopt_model_check once per problem node: its name, op type
 * ("domain.Op" outside the default domain), the status it would fail with
 * (UNSUPPORTED for an operator, attribute or dtype libmopt lacks; SHAPE,
 * TYPE, INVALID_MODEL for a bad node) and a message. A warning that does not
 * keep the model from loading (a declared output or value_info shape that
 * shape inference contradicts: the inferred shape is used; a node whose
 * sizes are beyond what oneDNN/OpenBLAS are trusted with, which then runs on
 * the reference kernel) comes with status OK, names the value or the size in
 * its message and is not counted as a problem. A tensor too large for any
 * run is a problem with status LIMIT, as at load. The
 * strings are valid during the call only. */
typedef void (*mopt_check_callback)(void *user, const char *node_name, const char *op_type,
                                    mopt_status status, const char *message);

/* Checks a model file without building it: reads it, checks the graph's
 * structure, then resolves every node's operator and runs shape/type
 * inference over the whole graph, reporting EVERY problem node through
 * `callback` (may be NULL) instead of stopping at the first. *n_problems
 * (may be NULL) gets their count. Returns OK when the model would load;
 * otherwise UNSUPPORTED when every problem is unsupported functionality, or
 * the status of the first other problem; and IO, PARSE, INVALID_MODEL
 * (structure) or OUT_OF_MEMORY before any node is checked. opts may be NULL.
 * Thread-safe. */
MOPT_NODISCARD MOPT_API mopt_status mopt_model_check(const char *path, const mopt_options *opts,
                                                     mopt_check_callback callback, void *user,
                                                     size_t *n_problems);
/* The report of the optimization passes the model went through (for a .mopt
 * file, as recorded when it was saved): a table with one line per pass (its
 * time in ms, the node count before and after, the rewrites applied and
 * their details) and a total line. Owned by the model, valid until it is
 * destroyed; "" for NULL. Thread-safe. */
MOPT_API const char *mopt_model_pass_report(const mopt_model *model);

/* The same report, entry by entry: the number of passes run, and per pass
 * (in the order they ran) its name ("fuse_matmul"), time in milliseconds,
 * node counts before and after it, the rewrites it applied and a note on
 * them ("3 Gemm+Relu", may be ""). Out-of-range indices give NULL / -1.
 * Strings are owned by the model. Thread-safe. */
MOPT_API size_t mopt_model_pass_count(const mopt_model *model);
MOPT_API const char *mopt_model_pass_name(const mopt_model *model, size_t index);
MOPT_API double mopt_model_pass_ms(const mopt_model *model, size_t index);
MOPT_API int64_t mopt_model_pass_nodes_before(const mopt_model *model, size_t index);
MOPT_API int64_t mopt_model_pass_nodes_after(const mopt_model *model, size_t index);
MOPT_API int64_t mopt_model_pass_rewrites(const mopt_model *model, size_t index);
MOPT_API const char *mopt_model_pass_note(const mopt_model *model, size_t index);

/* Statistics of a session, by key. Keys known today:
 *   "runs"         number of successful runs so far
 *   "peak_bytes"   peak bytes of intermediate tensors held during the last run
 *   "arena_bytes"  bytes of the planned activation arena (0 until memory
 *                  planning is in place; then the arena of the last run)
 *   "last_run_ns"  wall time of the last run in nanoseconds
 *   "memory_peak_bytes"  peak of everything the session held during the last
 *                  run (what memory_limit bounds: arena, intermediates,
 *                  outputs until handed over, kernel scratch, oneDNN
 *                  scratchpads, the session's own tables)
 *   "memory_bytes" what the session holds now (arena, caches, tables)
 *   "plans_recorded" memory plans made so far (one per new input-shape
 *                  signature; 0 more when a run reuses a plan)
 *   "heap_tensors" intermediates placed on the heap instead of the
 *                  planned arena so far (runs of unplanned shapes)
 *   "last_run_inferred_nodes" nodes whose output shapes the last run
 *                  inferred (the others took them from the memory plan)
 *   "inplace_outputs" outputs the memory plan of the last run writes over
 *                  an input that dies there (e.g. a fused conv's residual;
 *                  MOPT_INPLACE=0 turns this off)
 * Returns OK, INVALID_ARGUMENT (NULL argument) or NOT_FOUND (unknown key). */
MOPT_NODISCARD MOPT_API mopt_status mopt_session_get_stat(const mopt_session *session,
                                                          const char *key, int64_t *value);

/* Per-node profile of the last run. Profiling is on when the "profile"
 * option is set for the session: "1" collects timings only; any other value
 * is a path where a Chrome trace (chrome://tracing, Perfetto) of every run
 * is written when the session is destroyed. Entries are in execution order;
 * the count is 0 when profiling is off or before the first run. Strings are
 * owned by the session and valid until the next run or its destruction.
 * Out-of-range indices give NULL / 0. */
MOPT_API size_t mopt_session_profile_count(const mopt_session *session);
MOPT_API const char *mopt_session_profile_node(const mopt_session *session, size_t index);
MOPT_API const char *mopt_session_profile_op(const mopt_session *session, size_t index);
/* The kernel that ran the node ("ref", later "onednn", "cpu-avx512", ...). */
MOPT_API const char *mopt_session_profile_kernel(const mopt_session *session, size_t index);
/* Wall time of the node in the last run, in nanoseconds. */
MOPT_API int64_t mopt_session_profile_ns(const mopt_session *session, size_t index);
/* Floating-point operations the node performed (multiply-add = 2), or 0
 * when not meaningful for the operator. */
MOPT_API int64_t mopt_session_profile_flops(const mopt_session *session, size_t index);

/* ---- Dynamic batching (mopt_batcher) ---------------------------------------
 * Many threads submit single requests; the batcher coalesces them along axis
 * 0 into one session run and hands every caller its own rows of the outputs.
 *
 * How a batch is formed: workers (one session and one thread each) take the
 * oldest queued request and every later queued request compatible with it,
 * up to max_batch, once max_batch of them are queued or the oldest has
 * waited max_delay_us (or its timeout is due, or the batcher is draining).
 * Compatible: the same dims on every axis but 0 and, for a ragged input, 1.
 * A ragged input is one whose axis 1 is not fixed in the model (rank >= 2,
 * a symbolic sequence axis): requests of different lengths share a batch
 * and are zero-padded at the end of axis 1 to the smallest seq bucket >= the
 * batch's longest (token ids and masks padded with 0, floats with 0.0).
 * Padding is only harmless for models that mask padded positions (an
 * attention mask input); set no_padding for others. An output whose axis 1
 * is not fixed is cropped back to the request's own length when that axis
 * carries the same symbolic name as a ragged input's axis 1 (or, for an
 * unnamed axis, when it equals the only padded length of the batch).
 * A batch of one request runs on the caller's tensors as they are (no
 * copy, no padding), so it gives exactly mopt_session_run's result; in a
 * batch of several, each request's rows equal a single run's up to the
 * floating-point order the kernels use at another batch size (on the BERT
 * test models, padded or not, they are bitwise equal on AVX-512;
 * tests/unit/test_batcher.c asserts 4e-6 at outputs of magnitude ~4).
 * A request with a timeout waits for company at most half its timeout.
 *
 * Failures stay with their request: a request is checked alone before it
 * is queued (input names, dtype, rank, batch dim 1, fixed dims; inputs that
 * share a symbolic dim name must agree) and fails alone with a message
 * naming the input; when a batch's run fails (e.g. a token id out of range
 * in one request), its requests are rerun one at a time, so each gets its
 * own status and only the bad one fails.
 *
 * Models whose batch axis cannot grow (an input or output of rank 0, or
 * with a fixed axis 0) run with max_batch forced to 1 (logged at
 * MOPT_LOG_WARNING, see mopt_set_log_callback); requests are then passed to
 * the session as they are.
 *
 * Thread-safety: mopt_batcher_run and mopt_batcher_get_stats may be called
 * from any number of threads at once. mopt_batcher_destroy must not overlap
 * a call that starts after it (a call already waiting is drained). */
typedef struct mopt_batcher mopt_batcher;

typedef struct mopt_batcher_config {
    size_t struct_size;         /* sizeof(mopt_batcher_config), for growth */
    int max_batch;              /* >= 1: most requests coalesced into one run (0: 8) */
    int64_t max_delay_us;       /* >= 0: longest a request waits for company
                                   before its batch starts */
    size_t queue_capacity;      /* >= 1: pending requests; a submit beyond it
                                   fails at once (0: 256) */
    int workers;                /* >= 1: sessions (threads) running batches
                                   concurrently (0: 1) */
    const int64_t *seq_buckets; /* optional ascending lengths >= 1 (copied):
                                   ragged axis-1 inputs are zero-padded to the
                                   smallest bucket >= the batch's longest;
                                   NULL, or a batch longer than the last
                                   bucket: pad to the longest */
    size_t n_seq_buckets;
    int no_padding; /* 1: never pad; requests of different
                       axis-1 lengths go to different batches
                       (default 0) */
} mopt_batcher_config;

/* Creates a batcher for model: `workers` sessions (each made with opts, so
 * "threads" is per worker) and their threads. config NULL = defaults
 * (max_batch 8, max_delay_us 2000, queue_capacity 256, workers 1, no
 * buckets). A config whose struct_size is smaller than the fields up to
 * n_seq_buckets is refused; fields beyond struct_size take their defaults.
 * The sessions hold references on the model (mopt_model_destroy may come
 * first). *out is owned by the caller (mopt_batcher_destroy). Returns OK,
 * INVALID_ARGUMENT (NULL model or out, a value out of range, buckets not
 * ascending), OUT_OF_MEMORY, or what mopt_session_create returns. */
MOPT_NODISCARD MOPT_API mopt_status mopt_batcher_create(const mopt_model *model,
                                                        const mopt_options *opts,
                                                        const mopt_batcher_config *config,
                                                        mopt_batcher **out);

/* Stops accepting (a run that starts now gets CANCELLED), finishes every
 * queued request without waiting for company (drain), waits until every
 * caller has its answer, joins the workers and releases the sessions. NULL
 * is a no-op. */
MOPT_API void mopt_batcher_destroy(mopt_batcher *batcher);

/* Submits ONE request and waits for its own outputs. Arguments as for
 * mopt_session_run: every input has batch dim 1 on axis 0 (as a
 * single-request run would); outputs[i] NULL -> a new owned tensor (destroy
 * it), else the request's rows are written into it (dtype and shape must
 * match the single-request output exactly).
 * timeout_us > 0: a request not started within it is dropped and returns
 * CANCELLED (a started one always finishes); 0 waits as long as needed.
 * Returns BUSY at once when queue_capacity requests are already queued (the
 * message names the capacity), CANCELLED (timeout, or the batcher is being
 * destroyed), and otherwise the status of its own work: INVALID_ARGUMENT,
 * NOT_FOUND, TYPE, SHAPE for a request that fails the checks above (before
 * it is queued), or what its session run returned. Every error message
 * names the input or output at fault. */
MOPT_NODISCARD MOPT_API mopt_status mopt_batcher_run(mopt_batcher *batcher, size_t n_inputs,
                                                     const char *const *input_names,
                                                     const mopt_tensor *const *inputs,
                                                     size_t n_outputs,
                                                     const char *const *output_names,
                                                     mopt_tensor **outputs, int64_t timeout_us);

/* Counters since creation. When no call is in progress:
 *   requests == completed + failed + rejected_full + timed_out
 *   sum over k of batch_size_hist[k] == batches
 *   sum over k of (k + 1) * batch_size_hist[k] == requests that reached a
 *     worker (completed + failed, less the requests that failed the checks
 *     before being queued, counted in rejected_invalid).
 * Calls refused because the batcher is being destroyed are not counted. */
typedef struct mopt_batcher_stats {
    size_t struct_size;           /* set by the caller: sizeof(mopt_batcher_stats) */
    uint64_t requests;            /* mopt_batcher_run calls */
    uint64_t completed;           /* returned OK */
    uint64_t failed;              /* returned another error than BUSY or CANCELLED */
    uint64_t rejected_full;       /* returned BUSY: the queue was full */
    uint64_t timed_out;           /* returned CANCELLED: not started within timeout_us */
    uint64_t batches;             /* batches formed (session runs, before any rerun) */
    uint64_t batch_size_hist[64]; /* batch_size_hist[k] = batches of k+1 requests
                                     (last bin: >= 64) */
    size_t queue_depth;           /* requests queued now */
    /* added after the first draft: */
    uint64_t rejected_invalid; /* of failed: refused by the checks before queueing */
    uint64_t reruns;           /* batches whose run failed and were rerun request
                                  by request */
    uint64_t padded_elements;  /* input elements added by axis-1 padding */
    uint64_t input_elements;   /* input elements of every batch run, padding included */
    int effective_max_batch;   /* max_batch after the model's constraints */
} mopt_batcher_stats;

/* Fills *stats (up to stats->struct_size, which must be set; at least the
 * fields up to queue_depth). Thread-safe. Returns OK or INVALID_ARGUMENT. */
MOPT_NODISCARD MOPT_API mopt_status mopt_batcher_get_stats(const mopt_batcher *batcher,
                                                           mopt_batcher_stats *stats);
/* ---- end of dynamic batching --------------------------------------------- */
/* ------------------------------------------------------------------------ */
/* Generation with a KV cache (mopt_generator)                               */
/* ------------------------------------------------------------------------ */

/* A stateful text generator over a decoder model exported with a key/value
 * cache, as torch.onnx / optimum export causal LMs ("decoder with past"):
 *
 *   inputs   input_ids                 [batch, seq]              i64 or i32
 *            attention_mask (optional) [batch, past + seq]       i64 or i32
 *            position_ids   (optional) [batch, seq]              i64 or i32
 *            past_key_values.N.key     [batch, heads, past, head_dim]  f32
 *            past_key_values.N.value   (same), N = 0 .. layers-1
 *   outputs  logits                    [batch, seq, vocab]       f32
 *            present.N.key / present.N.value [batch, heads, past + seq,
 *                                       head_dim] f32
 *
 * Naming rules: the logits output is the one named "logits", else the first
 * output; every past input is "past_key_values.N.key" or ".value" with N a
 * decimal layer index, numbered from 0 without gaps, each with its partner
 * (key and value) and an output of the same N named "present.N.key" /
 * "present.N.value" (also accepted: "present_key_values.N.key"). heads and
 * head_dim must be fixed numbers in the model (batch, past, seq symbolic);
 * any other input is refused. Generation runs batch 1. Creating a generator
 * for a model that does not match fails, naming the input or output at
 * fault: UNSUPPORTED (no past inputs, an input the generator cannot feed),
 * NOT_FOUND (no input_ids, a missing partner, a past without its present),
 * SHAPE (ranks, non-fixed or unequal heads/head_dim, logits not
 * [batch, seq, vocab] with a fixed vocab), TYPE (f16/bf16 caches, float
 * input_ids).
 *
 * The past inputs may also be token-major, [batch, past, heads, head_dim]
 * (and present [batch, past + seq, heads, head_dim]): the layout the load
 * option "kv_cache"=1 gives a decoder (its kv_cache pass).
 *
 * The cache is allocated at creation: per past input, heads * max_seq *
 * head_dim floats. What a decode step costs: one run of the model on one
 * token, with no memory planning and no allocation (the generator marks the
 * past length elastic and plans the largest decode shapes once, with a
 * warm-up step at max_seq, when it is created; every later step reuses that
 * plan, and shape inference per node is all that is redone), plus
 * sampling. Token-major (kv_cache=1): past and present are bound to the
 * same buffer and the model writes only the new key/value rows; the
 * attention reads the cache where it lies, so nothing proportional to the
 * past is copied (the attention's own work over the past remains).
 * As exported ([batch, heads, seq, head_dim]): two buffers per input,
 * swapped after each step, and the graph's Concat moves the past once per
 * step and tensor (a dense head-major cache cannot grow in place when
 * heads > 1). examples/generate/README.md measures both.
 *
 * Prefix reuse: the generator keeps the cache of its previous request (the
 * prompt and the tokens it generated). A new prompt that starts with those
 * tokens prefills only its new suffix (at least its last token, for the
 * logits); otherwise the common prefix is kept and the rest dropped.
 *
 * Thread-safety: one thread at a time drives a generator, except
 * mopt_generator_set_cancel, which any thread may call at any time. A
 * generator holds its own session (and a reference on the model). */
typedef struct mopt_generator mopt_generator;

/* Called once per generated token, in order: token, and its index (0 for
 * the first generated token). mopt_generator_logits gives the logits it was
 * sampled from during the call. Return 0 to go on, nonzero to stop: the
 * token counts as generated and mopt_generator_generate returns OK. The
 * callback must not call the generator (except mopt_generator_logits and
 * mopt_generator_set_cancel). */
typedef int (*mopt_token_callback)(void *user, int64_t token, size_t index);

/* Creates a generator for model with a cache of max_seq positions (prompt
 * and generated tokens together; 1 .. 1<<20). opts (may be NULL) are the
 * session's options ("threads", "backend", ...). Holds a reference on the
 * model. Sampling settings start as greedy (temperature 0, top_k 0, top_p 1,
 * repetition_penalty 1, seed 0). Returns OK, INVALID_ARGUMENT, the model
 * statuses above, LIMIT (the cache size overflows size_t) or
 * OUT_OF_MEMORY. The cache is allocated outside memory_limit (which
 * bounds the session). */
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_create(const mopt_model *model,
                                                          const mopt_options *opts, int64_t max_seq,
                                                          mopt_generator **out);
/* Releases a generator, its session and its cache. NULL is a no-op. */
MOPT_API void mopt_generator_destroy(mopt_generator *gen);

/* Sampling settings, by key, kept for every later request:
 *   "temperature"         double >= 0; 0 = greedy (argmax; top_k, top_p and
 *                         seed are then unused) (default 0)
 *   "top_k"               int >= 0: sample among the k most likely tokens
 *                         only; 0 = all (default 0)
 *   "top_p"               double in (0, 1]: sample among the smallest set of
 *                         most likely tokens whose probability reaches top_p
 *                         (nucleus), after top_k; 1 = all (default 1)
 *   "repetition_penalty"  double > 0: the logit of every token already in
 *                         the context (prompt and generated) is divided by it
 *                         when positive, multiplied when negative (CTRL's
 *                         rule); 1 = off (default 1)
 *   "seed"                int: the random generator is reseeded with it at
 *                         the start of every request, so a request is
 *                         deterministic for a seed (default 0)
 * set_int accepts the double keys too. Returns OK, INVALID_ARGUMENT (NULL,
 * out of range, naming the key) or NOT_FOUND (unknown key). */
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_set_int(mopt_generator *gen, const char *key,
                                                           int64_t value);
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_set_double(mopt_generator *gen, const char *key,
                                                              double value);
/* Tokens that end generation when sampled (an end-of-text id): the stop
 * token is neither passed to the callback nor counted. Copied; n = 0 clears
 * them; at most 64. Returns OK or INVALID_ARGUMENT. */
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_set_stop_tokens(mopt_generator *gen,
                                                                   const int64_t *tokens, size_t n);
/* Sets (1) or clears (0) the cancellation flag. Any thread may call it at
 * any time: mopt_generator_generate checks it before every step (and the
 * running step checks it before each node) and returns CANCELLED. The cache
 * keeps every token fed before the cancelled step, so the generator stays
 * usable. The flag stays set until cleared. Thread-safe (atomic). Returns OK
 * or INVALID_ARGUMENT. */
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_set_cancel(mopt_generator *gen, int cancel);

/* Generates up to max_new_tokens tokens after prompt (n_prompt >= 1 token
 * ids, each in [0, vocab)): prefill (of the prompt's part not already
 * cached, see prefix reuse above), then one decode step per token, each
 * token sampled with the settings above and passed to callback (may be
 * NULL). Ends after max_new_tokens, at a stop token, when the callback
 * returns nonzero or when the cache is full (max_seq). *n_generated (may be
 * NULL) gets the number of tokens generated, also on failure. Returns OK,
 * INVALID_ARGUMENT (NULL gen, empty prompt, a token id out of range),
 * LIMIT (the prompt does not fit in max_seq), CANCELLED, or a run's status
 * (SHAPE, OUT_OF_MEMORY, ...). */
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_generate(mopt_generator *gen,
                                                            const int64_t *prompt, size_t n_prompt,
                                                            size_t max_new_tokens,
                                                            mopt_token_callback callback,
                                                            void *user, size_t *n_generated);
/* The logits (vocab floats, as the model gave them, before penalties and
 * temperature) of the last position the generator ran: during a callback,
 * those its token was sampled from. NULL before the first request or for
 * NULL. Owned by the generator; valid until its next step. */
MOPT_API const float *mopt_generator_logits(const mopt_generator *gen);
/* Forgets the cache (the next request prefills its whole prompt). NULL is a
 * no-op. */
MOPT_API void mopt_generator_reset(mopt_generator *gen);
/* Facts and statistics, by key: "layers", "heads", "head_dim", "vocab",
 * "max_seq", "cached_tokens" (positions held in the cache now),
 * "reused_tokens" and "prefill_tokens" (of the last request: prompt tokens
 * served from the cache, and fed to the model), "generated_tokens" (of the
 * last request), "steps" (model runs so far), "prefill_ns" and
 * "last_step_ns" (wall time of the last prefill and of the last decode
 * step), "last_step_plans" and "last_step_heap_tensors" (memory plans the
 * last model run made, intermediates it put on the heap: 0 for a decode
 * step), "last_step_inferred_nodes" (nodes whose shapes it inferred: those
 * whose shapes depend on the past length), "capacity_planned" (1 when the
 * creation's warm-up planned the largest decode step), "kv_cache_bf16" (1
 * when the cache is bf16 tiles: the option kv_cache_dtype) and
 * "kv_cache_bytes" (the cache buffers' size). Returns OK, INVALID_ARGUMENT
 * or NOT_FOUND (unknown key). */
MOPT_NODISCARD MOPT_API mopt_status mopt_generator_get_stat(const mopt_generator *gen,
                                                            const char *key, int64_t *value);

/* ---- Shared thread pool (mopt_threadpool) ------------------------------------
 * A budget of T cores that sessions share, so that N sessions (threads,
 * batcher workers, generators) on one machine never run more than T compute
 * threads at once, across libmopt's own kernels AND the oneDNN/OpenBLAS
 * parallel regions they start (OpenMP teams are counted at their size).
 *
 * How a run uses it: before its first node the run takes one core for its
 * calling thread (waiting while all T are held: that wait is the bound).
 * Each node that would run on more than one thread takes up to threads - 1
 * more cores WITHOUT waiting, and none while another run waits for its
 * first core; it runs on 1 + what it got and gives them back at its end. A
 * node that gets none runs on the calling thread alone, so a run never
 * waits for a busy worker when it can do the work itself. A session's
 * thread count is min("threads" option, T); "threads" unset (0) means T.
 *
 * Attaching: mopt_options_set_threadpool(opts, pool); every session made
 * with those options (mopt_session_create, each mopt_batcher worker,
 * mopt_generator) shares the pool. Model loading ignores it.
 *
 * DEFAULT, when no pool is attached: the behaviour of earlier versions.
 * Each session runs on its own "threads" count (default: the cores of the
 * process's affinity mask) independently of other sessions, so N sessions
 * can run N x threads compute threads at once. Share one pool to bound it.
 * Nothing here changes the host's OpenMP or OpenBLAS settings.
 *
 * Lifetime: reference-counted, like models. The pool lives until
 * mopt_threadpool_destroy has been called AND every session and options
 * object holding it is gone, so destroying it while sessions run is safe
 * (they keep using it); the caller must not use its handle after destroy.
 * All calls are thread-safe. The worker threads that execute parallel
 * chunks are libmopt's process-wide workers and OpenMP's teams; the pool
 * bounds how many of them work for its sessions at once. */
typedef struct mopt_threadpool mopt_threadpool;

/* Creates a pool of `threads` cores (1..1024; 0: the cores of the process's
 * affinity mask). `reserved` must be NULL (for future settings). Returns OK,
 * INVALID_ARGUMENT (out of range, NULL out, non-NULL reserved) or
 * OUT_OF_MEMORY. */
MOPT_NODISCARD MOPT_API mopt_status mopt_threadpool_create(int threads, const void *reserved,
                                                           mopt_threadpool **out);
/* Drops the caller's reference (see Lifetime above). NULL is a no-op. */
MOPT_API void mopt_threadpool_destroy(mopt_threadpool *pool);

/* Sessions made with opts from now on share `pool` (NULL detaches). The
 * options hold a reference until they are destroyed or set again. Returns
 * OK or INVALID_ARGUMENT (NULL opts). */
MOPT_NODISCARD MOPT_API mopt_status mopt_options_set_threadpool(mopt_options *opts,
                                                                mopt_threadpool *pool);

/* Counters since creation. active_threads and peak_threads come from an
 * instrumented count of the threads at work for the pool's runs (calling
 * threads, libmopt workers while in a chunk, OpenMP teams while in a
 * oneDNN/OpenBLAS call): peak_threads <= threads is the pool's promise. */
typedef struct mopt_threadpool_stats {
    size_t struct_size;      /* set by the caller: sizeof(mopt_threadpool_stats) */
    int threads;             /* T */
    int sessions;            /* sessions holding the pool now */
    int cores_in_use;        /* cores taken now (seats + widened nodes) */
    int active_threads;      /* threads at work now */
    int peak_threads;        /* most threads at work at once */
    uint64_t runs;           /* runs that took a seat */
    uint64_t waited_runs;    /* of them, runs that waited because all T were held */
    uint64_t wait_ns;        /* total time runs waited for a seat */
    uint64_t parallel_nodes; /* nodes that asked for more than one thread */
    uint64_t narrowed_nodes; /* of them, nodes that got fewer (pool busy) */
} mopt_threadpool_stats;

/* Fills *stats up to stats->struct_size (at least up to peak_threads).
 * Returns OK or INVALID_ARGUMENT. */
MOPT_NODISCARD MOPT_API mopt_status mopt_threadpool_get_stats(const mopt_threadpool *pool,
                                                              mopt_threadpool_stats *stats);
/* ---- end of shared thread pool -------------------------------------------- */

/* ---- node values (issue 13: mopt quantize-check ranks layers) -------------- */
/* Name of input (kind MOPT_INPUT) or output (MOPT_OUTPUT) k of node `index`
 * of the graph as it runs (mopt_model_node_name's numbering); NULL when out
 * of range or for an absent optional input. Owned by the model. */
MOPT_API const char *mopt_model_node_value(const mopt_model *model, size_t index, mopt_io_kind kind,
                                           size_t k);
/* ---- end of node values ---------------------------------------------------- */

#endif /* MOPT_EXPERIMENTAL_API */

#ifdef __cplusplus
}
#endif

#endif /* MOPT_MOPT_H */
