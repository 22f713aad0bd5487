//! mopt-sys — raw `extern "C"` declarations for libmopt's public API
//! (`include/mopt/mopt.h`), one for one, with no safety added (the function
//! declarations are generated from the header by build.rs): see the
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

// The functions: written by build.rs from the MOPT_API declarations of
// mopt.h, so that they cannot drift from the header.
include!(concat!(env!("OUT_DIR"), "/functions.rs"));
