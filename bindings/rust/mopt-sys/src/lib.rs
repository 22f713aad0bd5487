//! mopt-sys — raw `extern "C"` declarations for libmopt's public API
//! (`include/mopt/mopt.h`), one for one, with no safety added: see the
//! `mopt` crate for the safe wrapper. The comments of mopt.h (ownership,
//! thread-safety, status codes) apply unchanged.
//!
//! C enums are passed as `c_int` with their values as constants, so a value
//! this crate does not know yet (the header only ever appends) is still
//! representable. Linking: see build.rs (MOPT_LIB_DIR or pkg-config).
#![allow(non_camel_case_types)]

use std::marker::{PhantomData, PhantomPinned};
use std::os::raw::{c_char, c_int, c_void};

macro_rules! opaque {
    ($($name:ident),*) => {$(
        /// An opaque libmopt handle: only ever used behind a pointer.
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _marker: PhantomData<(*mut u8, PhantomPinned)>,
        }
    )*};
}
opaque!(
    mopt_options,
    mopt_model,
    mopt_session,
    mopt_batcher,
    mopt_generator,
    mopt_threadpool,
    mopt_tensor,
    mopt_run_options
);

pub const MOPT_VERSION_MAJOR: c_int = 0;
pub const MOPT_VERSION_MINOR: c_int = 2;
pub const MOPT_VERSION_PATCH: c_int = 0;
pub const MOPT_VERSION_NUMBER: c_int =
    MOPT_VERSION_MAJOR * 10000 + MOPT_VERSION_MINOR * 100 + MOPT_VERSION_PATCH;
pub const MOPT_MAX_RANK: c_int = 8;

pub type mopt_status = c_int;
pub const MOPT_OK: mopt_status = 0;
pub const MOPT_ERR_INVALID_ARGUMENT: mopt_status = 1;
pub const MOPT_ERR_OUT_OF_MEMORY: mopt_status = 2;
pub const MOPT_ERR_IO: mopt_status = 3;
pub const MOPT_ERR_PARSE: mopt_status = 4;
pub const MOPT_ERR_INVALID_MODEL: mopt_status = 5;
pub const MOPT_ERR_UNSUPPORTED: mopt_status = 6;
pub const MOPT_ERR_SHAPE: mopt_status = 7;
pub const MOPT_ERR_TYPE: mopt_status = 8;
pub const MOPT_ERR_NOT_FOUND: mopt_status = 9;
pub const MOPT_ERR_LIMIT: mopt_status = 10;
pub const MOPT_ERR_INTERNAL: mopt_status = 11;
pub const MOPT_ERR_CANCELLED: mopt_status = 12;
pub const MOPT_ERR_BUSY: mopt_status = 13;

pub type mopt_log_level = c_int;
pub const MOPT_LOG_ERROR: mopt_log_level = 0;
pub const MOPT_LOG_WARNING: mopt_log_level = 1;
pub const MOPT_LOG_INFO: mopt_log_level = 2;
pub const MOPT_LOG_DEBUG: mopt_log_level = 3;

/// Receives one log message (valid during the call only).
pub type mopt_log_callback =
    Option<unsafe extern "C" fn(user: *mut c_void, level: mopt_log_level, message: *const c_char)>;

pub const MOPT_ALLOCATOR_VERSION: c_int = 1;

/// Allocation hooks (`mopt_set_allocator`); layout as in mopt.h.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mopt_allocator {
    pub version: c_int,
    pub user: *mut c_void,
    pub allocate: Option<unsafe extern "C" fn(user: *mut c_void, size: usize) -> *mut c_void>,
    pub reallocate: Option<
        unsafe extern "C" fn(user: *mut c_void, ptr: *mut c_void, size: usize) -> *mut c_void,
    >,
    pub release: Option<unsafe extern "C" fn(user: *mut c_void, ptr: *mut c_void)>,
    pub allocate_aligned: Option<
        unsafe extern "C" fn(user: *mut c_void, alignment: usize, size: usize) -> *mut c_void,
    >,
    pub release_aligned: Option<unsafe extern "C" fn(user: *mut c_void, ptr: *mut c_void)>,
}

pub const MOPT_LOAD_NO_MMAP: u32 = 1;
pub const MOPT_LOAD_VERIFY_WEIGHTS: u32 = 2;

pub type mopt_info = c_int;
pub const MOPT_INFO_PRODUCER_NAME: mopt_info = 0;
pub const MOPT_INFO_PRODUCER_VERSION: mopt_info = 1;
pub const MOPT_INFO_DOMAIN: mopt_info = 2;
pub const MOPT_INFO_DOC_STRING: mopt_info = 3;
pub const MOPT_INFO_GRAPH_NAME: mopt_info = 4;
pub const MOPT_INFO_GRAPH_DOC_STRING: mopt_info = 5;

pub type mopt_dtype = c_int;
pub const MOPT_DTYPE_UNDEFINED: mopt_dtype = 0;
pub const MOPT_DTYPE_F32: mopt_dtype = 1;
pub const MOPT_DTYPE_U8: mopt_dtype = 2;
pub const MOPT_DTYPE_I8: mopt_dtype = 3;
pub const MOPT_DTYPE_U16: mopt_dtype = 4;
pub const MOPT_DTYPE_I16: mopt_dtype = 5;
pub const MOPT_DTYPE_I32: mopt_dtype = 6;
pub const MOPT_DTYPE_I64: mopt_dtype = 7;
pub const MOPT_DTYPE_STRING: mopt_dtype = 8;
pub const MOPT_DTYPE_BOOL: mopt_dtype = 9;
pub const MOPT_DTYPE_F16: mopt_dtype = 10;
pub const MOPT_DTYPE_F64: mopt_dtype = 11;
pub const MOPT_DTYPE_U32: mopt_dtype = 12;
pub const MOPT_DTYPE_U64: mopt_dtype = 13;
pub const MOPT_DTYPE_BF16: mopt_dtype = 16;
pub const MOPT_DTYPE_F8E4M3FN: mopt_dtype = 17;
pub const MOPT_DTYPE_F8E4M3FNUZ: mopt_dtype = 18;
pub const MOPT_DTYPE_F8E5M2: mopt_dtype = 19;
pub const MOPT_DTYPE_F8E5M2FNUZ: mopt_dtype = 20;
pub const MOPT_DTYPE_U4: mopt_dtype = 21;
pub const MOPT_DTYPE_I4: mopt_dtype = 22;
pub const MOPT_DTYPE_F4E2M1: mopt_dtype = 23;
pub const MOPT_DTYPE_F8E8M0: mopt_dtype = 24;
pub const MOPT_DTYPE_U2: mopt_dtype = 25;
pub const MOPT_DTYPE_I2: mopt_dtype = 26;

pub type mopt_io_kind = c_int;
pub const MOPT_INPUT: mopt_io_kind = 0;
pub const MOPT_OUTPUT: mopt_io_kind = 1;

/// Called by `mopt_model_check` once per problem node; the strings are
/// valid during the call only.
pub type mopt_check_callback = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        node_name: *const c_char,
        op_type: *const c_char,
        status: mopt_status,
        message: *const c_char,
    ),
>;

/// `mopt_batcher_config` (experimental): see mopt.h. Set `struct_size` to
/// `size_of::<mopt_batcher_config>()`; 0 in max_batch, queue_capacity or
/// workers means the default.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mopt_batcher_config {
    pub struct_size: usize,
    pub max_batch: c_int,
    pub max_delay_us: i64,
    pub queue_capacity: usize,
    pub workers: c_int,
    pub seq_buckets: *const i64,
    pub n_seq_buckets: usize,
    pub no_padding: c_int,
}

/// `mopt_batcher_stats` (experimental): see mopt.h. Set `struct_size` before
/// calling `mopt_batcher_get_stats`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mopt_batcher_stats {
    pub struct_size: usize,
    pub requests: u64,
    pub completed: u64,
    pub failed: u64,
    pub rejected_full: u64,
    pub timed_out: u64,
    pub batches: u64,
    pub batch_size_hist: [u64; 64],
    pub queue_depth: usize,
    pub rejected_invalid: u64,
    pub reruns: u64,
    pub padded_elements: u64,
    pub input_elements: u64,
    pub effective_max_batch: c_int,
}

/// `mopt_threadpool_stats` (experimental): see mopt.h. Set `struct_size` to
/// `size_of::<mopt_threadpool_stats>()` before calling `mopt_threadpool_get_stats`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct mopt_threadpool_stats {
    pub struct_size: usize,
    pub threads: c_int,
    pub sessions: c_int,
    pub cores_in_use: c_int,
    pub active_threads: c_int,
    pub peak_threads: c_int,
    pub runs: u64,
    pub waited_runs: u64,
    pub wait_ns: u64,
    pub parallel_nodes: u64,
    pub narrowed_nodes: u64,
}

/// Called by `mopt_generator_generate` once per generated token (experimental).
pub type mopt_token_callback =
    Option<unsafe extern "C" fn(user: *mut c_void, token: i64, index: usize) -> c_int>;

extern "C" {
    // Version
    pub fn mopt_version_number() -> c_int;
    pub fn mopt_version() -> *const c_char;

    // Status and errors
    pub fn mopt_status_string(status: mopt_status) -> *const c_char;
    pub fn mopt_last_error() -> *const c_char;

    // Logging and memory
    pub fn mopt_set_log_callback(callback: mopt_log_callback, user: *mut c_void);
    pub fn mopt_set_allocator(allocator: *const mopt_allocator) -> mopt_status;

    // Element types
    pub fn mopt_dtype_name(dtype: mopt_dtype) -> *const c_char;
    pub fn mopt_dtype_size(dtype: mopt_dtype) -> usize;

    // Options
    pub fn mopt_options_create(out: *mut *mut mopt_options) -> mopt_status;
    pub fn mopt_options_destroy(opts: *mut mopt_options);
    pub fn mopt_options_set_int(
        opts: *mut mopt_options,
        key: *const c_char,
        value: i64,
    ) -> mopt_status;
    pub fn mopt_options_set_double(
        opts: *mut mopt_options,
        key: *const c_char,
        value: f64,
    ) -> mopt_status;
    pub fn mopt_options_set_string(
        opts: *mut mopt_options,
        key: *const c_char,
        value: *const c_char,
    ) -> mopt_status;
    pub fn mopt_options_get_int(
        opts: *const mopt_options,
        key: *const c_char,
        value: *mut i64,
    ) -> mopt_status;
    pub fn mopt_options_get_double(
        opts: *const mopt_options,
        key: *const c_char,
        value: *mut f64,
    ) -> mopt_status;
    pub fn mopt_options_get_string(
        opts: *const mopt_options,
        key: *const c_char,
        value: *mut *const c_char,
    ) -> mopt_status;
    pub fn mopt_options_load_yaml(opts: *mut mopt_options, path: *const c_char) -> mopt_status;
    pub fn mopt_options_set_dim(
        opts: *mut mopt_options,
        name: *const c_char,
        value: i64,
    ) -> mopt_status;
    pub fn mopt_options_load_yaml_string(
        opts: *mut mopt_options,
        text: *const c_char,
        length: usize,
    ) -> mopt_status;

    // Models
    pub fn mopt_model_load(
        path: *const c_char,
        opts: *const mopt_options,
        out: *mut *mut mopt_model,
    ) -> mopt_status;
    pub fn mopt_model_load_v2(
        path: *const c_char,
        opts: *const mopt_options,
        flags: u32,
        out: *mut *mut mopt_model,
    ) -> mopt_status;
    pub fn mopt_model_info(model: *const mopt_model, field: mopt_info) -> *const c_char;
    pub fn mopt_model_version(model: *const mopt_model) -> i64;
    pub fn mopt_model_metadata_count(model: *const mopt_model) -> usize;
    pub fn mopt_model_metadata_key(model: *const mopt_model, index: usize) -> *const c_char;
    pub fn mopt_model_metadata_value(model: *const mopt_model, index: usize) -> *const c_char;
    pub fn mopt_model_metadata(
        model: *const mopt_model,
        key: *const c_char,
        value: *mut *const c_char,
    ) -> mopt_status;
    pub fn mopt_model_pass_count(model: *const mopt_model) -> usize;
    pub fn mopt_model_pass_name(model: *const mopt_model, index: usize) -> *const c_char;
    pub fn mopt_model_pass_ms(model: *const mopt_model, index: usize) -> f64;
    pub fn mopt_model_pass_nodes_before(model: *const mopt_model, index: usize) -> i64;
    pub fn mopt_model_pass_nodes_after(model: *const mopt_model, index: usize) -> i64;
    pub fn mopt_model_pass_rewrites(model: *const mopt_model, index: usize) -> i64;
    pub fn mopt_model_pass_note(model: *const mopt_model, index: usize) -> *const c_char;
    pub fn mopt_model_load_from_memory(
        data: *const c_void,
        size: usize,
        opts: *const mopt_options,
        out: *mut *mut mopt_model,
    ) -> mopt_status;
    pub fn mopt_model_check(
        path: *const c_char,
        opts: *const mopt_options,
        callback: mopt_check_callback,
        user: *mut c_void,
        n_problems: *mut usize,
    ) -> mopt_status;
    pub fn mopt_model_destroy(model: *mut mopt_model);
    pub fn mopt_model_save(model: *const mopt_model, path: *const c_char) -> mopt_status;
    pub fn mopt_model_pass_report(model: *const mopt_model) -> *const c_char;
    pub fn mopt_model_io_count(model: *const mopt_model, kind: mopt_io_kind) -> usize;
    pub fn mopt_model_io_name(
        model: *const mopt_model,
        kind: mopt_io_kind,
        index: usize,
    ) -> *const c_char;
    pub fn mopt_model_io_dtype(
        model: *const mopt_model,
        kind: mopt_io_kind,
        index: usize,
    ) -> mopt_dtype;
    pub fn mopt_model_io_rank(model: *const mopt_model, kind: mopt_io_kind, index: usize) -> c_int;
    pub fn mopt_model_io_dim(
        model: *const mopt_model,
        kind: mopt_io_kind,
        index: usize,
        axis: c_int,
    ) -> i64;
    pub fn mopt_model_io_dim_name(
        model: *const mopt_model,
        kind: mopt_io_kind,
        index: usize,
        axis: c_int,
    ) -> *const c_char;
    pub fn mopt_model_io_find(
        model: *const mopt_model,
        kind: mopt_io_kind,
        name: *const c_char,
        index_out: *mut usize,
    ) -> mopt_status;
    pub fn mopt_model_node_count(model: *const mopt_model) -> usize;
    pub fn mopt_model_node_op_type(model: *const mopt_model, index: usize) -> *const c_char;
    pub fn mopt_model_node_name(model: *const mopt_model, index: usize) -> *const c_char;
    pub fn mopt_model_opset(model: *const mopt_model, domain: *const c_char) -> i64;
    pub fn mopt_model_parameter_count(model: *const mopt_model) -> i64;
    pub fn mopt_model_parameter_bytes(model: *const mopt_model) -> i64;
    pub fn mopt_supported_op_count() -> usize;
    pub fn mopt_supported_op_name(index: usize) -> *const c_char;

    // Tensors
    pub fn mopt_tensor_create(
        dtype: mopt_dtype,
        rank: c_int,
        dims: *const i64,
        out: *mut *mut mopt_tensor,
    ) -> mopt_status;
    pub fn mopt_tensor_wrap(
        dtype: mopt_dtype,
        rank: c_int,
        dims: *const i64,
        data: *mut c_void,
        size: usize,
        out: *mut *mut mopt_tensor,
    ) -> mopt_status;
    pub fn mopt_tensor_wrap_const(
        dtype: mopt_dtype,
        rank: c_int,
        dims: *const i64,
        data: *const c_void,
        size: usize,
        out: *mut *mut mopt_tensor,
    ) -> mopt_status;
    pub fn mopt_tensor_destroy(tensor: *mut mopt_tensor);
    pub fn mopt_tensor_dtype(tensor: *const mopt_tensor) -> mopt_dtype;
    pub fn mopt_tensor_rank(tensor: *const mopt_tensor) -> c_int;
    pub fn mopt_tensor_dim(tensor: *const mopt_tensor, axis: c_int) -> i64;
    pub fn mopt_tensor_dims(tensor: *const mopt_tensor) -> *const i64;
    pub fn mopt_tensor_element_count(tensor: *const mopt_tensor) -> i64;
    pub fn mopt_tensor_size_bytes(tensor: *const mopt_tensor) -> usize;
    pub fn mopt_tensor_data(tensor: *mut mopt_tensor) -> *mut c_void;
    pub fn mopt_tensor_data_const(tensor: *const mopt_tensor) -> *const c_void;
    pub fn mopt_tensor_load(path: *const c_char, out: *mut *mut mopt_tensor) -> mopt_status;
    pub fn mopt_tensor_save_npy(tensor: *const mopt_tensor, path: *const c_char) -> mopt_status;

    // Run options
    pub fn mopt_run_options_create(out: *mut *mut mopt_run_options) -> mopt_status;
    pub fn mopt_run_options_destroy(run_options: *mut mopt_run_options);
    pub fn mopt_run_options_set_tag(
        run_options: *mut mopt_run_options,
        tag: *const c_char,
    ) -> mopt_status;
    pub fn mopt_run_options_tag(run_options: *const mopt_run_options) -> *const c_char;
    pub fn mopt_run_options_set_profiling(
        run_options: *mut mopt_run_options,
        profiling: c_int,
    ) -> mopt_status;
    pub fn mopt_run_options_set_terminate(
        run_options: *mut mopt_run_options,
        terminate: c_int,
    ) -> mopt_status;

    // Sessions
    pub fn mopt_session_create(
        model: *const mopt_model,
        opts: *const mopt_options,
        out: *mut *mut mopt_session,
    ) -> mopt_status;
    pub fn mopt_session_destroy(session: *mut mopt_session);
    pub fn mopt_session_run(
        session: *mut mopt_session,
        n_inputs: usize,
        input_names: *const *const c_char,
        inputs: *const *const mopt_tensor,
        n_outputs: usize,
        output_names: *const *const c_char,
        outputs: *mut *mut mopt_tensor,
    ) -> mopt_status;
    pub fn mopt_session_run_v2(
        session: *mut mopt_session,
        run_options: *const mopt_run_options,
        n_inputs: usize,
        input_names: *const *const c_char,
        inputs: *const *const mopt_tensor,
        n_outputs: usize,
        output_names: *const *const c_char,
        outputs: *mut *mut mopt_tensor,
    ) -> mopt_status;
    pub fn mopt_session_get_stat(
        session: *const mopt_session,
        key: *const c_char,
        value: *mut i64,
    ) -> mopt_status;
    pub fn mopt_session_profile_count(session: *const mopt_session) -> usize;
    pub fn mopt_session_profile_node(session: *const mopt_session, index: usize) -> *const c_char;
    pub fn mopt_session_profile_op(session: *const mopt_session, index: usize) -> *const c_char;
    pub fn mopt_session_profile_kernel(session: *const mopt_session, index: usize)
        -> *const c_char;
    pub fn mopt_session_profile_ns(session: *const mopt_session, index: usize) -> i64;
    pub fn mopt_session_profile_flops(session: *const mopt_session, index: usize) -> i64;

    // Dynamic batching (experimental in mopt.h).
    pub fn mopt_batcher_create(
        model: *const mopt_model,
        opts: *const mopt_options,
        config: *const mopt_batcher_config,
        out: *mut *mut mopt_batcher,
    ) -> mopt_status;
    pub fn mopt_batcher_destroy(batcher: *mut mopt_batcher);
    pub fn mopt_batcher_run(
        batcher: *mut mopt_batcher,
        n_inputs: usize,
        input_names: *const *const c_char,
        inputs: *const *const mopt_tensor,
        n_outputs: usize,
        output_names: *const *const c_char,
        outputs: *mut *mut mopt_tensor,
        timeout_us: i64,
    ) -> mopt_status;
    pub fn mopt_batcher_get_stats(
        batcher: *const mopt_batcher,
        stats: *mut mopt_batcher_stats,
    ) -> mopt_status;

    // Generation with a KV cache (experimental in mopt.h).
    pub fn mopt_generator_create(
        model: *const mopt_model,
        opts: *const mopt_options,
        max_seq: i64,
        out: *mut *mut mopt_generator,
    ) -> mopt_status;
    pub fn mopt_generator_destroy(gen: *mut mopt_generator);
    pub fn mopt_generator_set_int(
        gen: *mut mopt_generator,
        key: *const c_char,
        value: i64,
    ) -> mopt_status;
    pub fn mopt_generator_set_double(
        gen: *mut mopt_generator,
        key: *const c_char,
        value: f64,
    ) -> mopt_status;
    pub fn mopt_generator_set_stop_tokens(
        gen: *mut mopt_generator,
        tokens: *const i64,
        n: usize,
    ) -> mopt_status;
    pub fn mopt_generator_set_cancel(gen: *mut mopt_generator, cancel: c_int) -> mopt_status;
    pub fn mopt_generator_generate(
        gen: *mut mopt_generator,
        prompt: *const i64,
        n_prompt: usize,
        max_new_tokens: usize,
        callback: mopt_token_callback,
        user: *mut c_void,
        n_generated: *mut usize,
    ) -> mopt_status;
    pub fn mopt_generator_logits(gen: *const mopt_generator) -> *const f32;
    pub fn mopt_generator_reset(gen: *mut mopt_generator);
    pub fn mopt_generator_get_stat(
        gen: *const mopt_generator,
        key: *const c_char,
        value: *mut i64,
    ) -> mopt_status;

    // Shared thread pool (experimental in mopt.h).
    pub fn mopt_threadpool_create(
        threads: c_int,
        reserved: *const c_void,
        out: *mut *mut mopt_threadpool,
    ) -> mopt_status;
    pub fn mopt_threadpool_destroy(pool: *mut mopt_threadpool);
    pub fn mopt_options_set_threadpool(
        opts: *mut mopt_options,
        pool: *mut mopt_threadpool,
    ) -> mopt_status;
    pub fn mopt_threadpool_get_stats(
        pool: *const mopt_threadpool,
        stats: *mut mopt_threadpool_stats,
    ) -> mopt_status;

    // Node values (experimental in mopt.h; mopt quantize-check ranks layers).
    pub fn mopt_model_node_value(
        model: *const mopt_model,
        index: usize,
        kind: mopt_io_kind,
        k: usize,
    ) -> *const c_char;
}
