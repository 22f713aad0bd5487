//! error.rs — libmopt's statuses as a Rust enum, each variant carrying the
//! message of mopt_last_error() read right after the failing call.
use std::ffi::CStr;
use std::fmt;

use mopt_sys as sys;

/// A failed libmopt call: the variant is the `mopt_status`, the string the
/// library's message (naming the node, tensor, file offset or option at
/// fault), or the wrapper's own message for errors it detects itself.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    InvalidArgument(String),
    OutOfMemory(String),
    Io(String),
    Parse(String),
    InvalidModel(String),
    Unsupported(String),
    Shape(String),
    Type(String),
    NotFound(String),
    Limit(String),
    Internal(String),
    /// The run was cancelled (its run options' terminate flag).
    Cancelled(String),
    /// The session is running on another thread (use one session per thread).
    Busy(String),
    /// A status this crate does not know yet (the C enum only grows).
    Other {
        status: i32,
        message: String,
    },
}

/// `std::result::Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error for a C status and message.
    pub fn from_status(status: sys::mopt_status, message: String) -> Error {
        match status {
            sys::MOPT_ERR_INVALID_ARGUMENT => Error::InvalidArgument(message),
            sys::MOPT_ERR_OUT_OF_MEMORY => Error::OutOfMemory(message),
            sys::MOPT_ERR_IO => Error::Io(message),
            sys::MOPT_ERR_PARSE => Error::Parse(message),
            sys::MOPT_ERR_INVALID_MODEL => Error::InvalidModel(message),
            sys::MOPT_ERR_UNSUPPORTED => Error::Unsupported(message),
            sys::MOPT_ERR_SHAPE => Error::Shape(message),
            sys::MOPT_ERR_TYPE => Error::Type(message),
            sys::MOPT_ERR_NOT_FOUND => Error::NotFound(message),
            sys::MOPT_ERR_LIMIT => Error::Limit(message),
            sys::MOPT_ERR_INTERNAL => Error::Internal(message),
            sys::MOPT_ERR_CANCELLED => Error::Cancelled(message),
            sys::MOPT_ERR_BUSY => Error::Busy(message),
            status => Error::Other { status, message },
        }
    }

    /// The C `mopt_status` value.
    pub fn status(&self) -> sys::mopt_status {
        match self {
            Error::InvalidArgument(_) => sys::MOPT_ERR_INVALID_ARGUMENT,
            Error::OutOfMemory(_) => sys::MOPT_ERR_OUT_OF_MEMORY,
            Error::Io(_) => sys::MOPT_ERR_IO,
            Error::Parse(_) => sys::MOPT_ERR_PARSE,
            Error::InvalidModel(_) => sys::MOPT_ERR_INVALID_MODEL,
            Error::Unsupported(_) => sys::MOPT_ERR_UNSUPPORTED,
            Error::Shape(_) => sys::MOPT_ERR_SHAPE,
            Error::Type(_) => sys::MOPT_ERR_TYPE,
            Error::NotFound(_) => sys::MOPT_ERR_NOT_FOUND,
            Error::Limit(_) => sys::MOPT_ERR_LIMIT,
            Error::Internal(_) => sys::MOPT_ERR_INTERNAL,
            Error::Cancelled(_) => sys::MOPT_ERR_CANCELLED,
            Error::Busy(_) => sys::MOPT_ERR_BUSY,
            Error::Other { status, .. } => *status,
        }
    }

    /// The detailed message.
    pub fn message(&self) -> &str {
        match self {
            Error::InvalidArgument(m)
            | Error::OutOfMemory(m)
            | Error::Io(m)
            | Error::Parse(m)
            | Error::InvalidModel(m)
            | Error::Unsupported(m)
            | Error::Shape(m)
            | Error::Type(m)
            | Error::NotFound(m)
            | Error::Limit(m)
            | Error::Internal(m)
            | Error::Cancelled(m)
            | Error::Busy(m) => m,
            Error::Other { message, .. } => message,
        }
    }
}

impl fmt::Display for Error {
    /// "<status name>: <message>", e.g. "i/o error: cannot open ...".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = unsafe { cstr(sys::mopt_status_string(self.status())) };
        write!(f, "{}: {}", name, self.message())
    }
}

impl std::error::Error for Error {}

/// A copy of a C string owned by the library ("" for NULL).
pub(crate) unsafe fn cstr(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

/// Ok for MOPT_OK, else the error with this thread's last message.
pub(crate) fn check(status: sys::mopt_status) -> Result<()> {
    if status == sys::MOPT_OK {
        Ok(())
    } else {
        Err(Error::from_status(status, unsafe {
            cstr(sys::mopt_last_error())
        }))
    }
}
