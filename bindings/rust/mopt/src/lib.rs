//! mopt — a safe Rust wrapper over libmopt, which loads an ONNX model,
//! optimizes it once and runs it on the CPU. std only; links the C library
//! through the `mopt-sys` crate.
//!
//! ```no_run
//! use mopt::{Model, Options, TensorRef};
//!
//! # fn main() -> mopt::Result<()> {
//! let mut opts = Options::new()?;
//! opts.set_int("threads", 1)?;
//! let model = Model::load("model.onnx", Some(&opts))?;
//! let mut session = model.session(Some(&opts))?;
//! let pixels = vec![0.0f32; 3 * 32 * 32];
//! let input = TensorRef::new(&pixels, &[1, 3, 32, 32])?; // borrowed: no copy
//! let outputs = session.run(&[&input])?;
//! let logits: &[f32] = outputs[0].as_slice()?;
//! # let _ = logits;
//! # Ok(())
//! # }
//! ```
//!
//! The C threading rules, in types:
//! - [`Model`] is immutable, `Send + Sync`: share `&Model` across threads.
//! - [`Session<'m>`] borrows its model (it cannot outlive it) and is `Send`
//!   but not `Sync`; runs take `&mut self`: one thread at a time.
//! - [`Options`] and the tensors are `Send`, not `Sync`.
//!
//! A session cannot outlive its model:
//! ```compile_fail,E0505
//! let model = mopt::Model::load("model.onnx", None).unwrap();
//! let session = model.session(None).unwrap();
//! drop(model);
//! drop(session);
//! ```
//! A session cannot be shared by two threads (it is not Sync):
//! ```compile_fail,E0277
//! fn needs_sync<T: Sync>(_: &T) {}
//! let model = mopt::Model::load("model.onnx", None).unwrap();
//! let session = model.session(None).unwrap();
//! needs_sync(&session);
//! ```
//! A borrowed input cannot outlive its data:
//! ```compile_fail,E0505
//! let data = vec![1.0f32; 4];
//! let t = mopt::TensorRef::new(&data, &[4]).unwrap();
//! drop(data);
//! drop(t);
//! ```
//! ...and a caller's output buffer cannot be read while a session may write it:
//! ```compile_fail,E0502
//! let mut out = vec![0.0f32; 4];
//! let t = mopt::TensorMut::new(&mut out, &[4]).unwrap();
//! let first = out[0];
//! drop(t);
//! ```

mod dtype;
mod error;
mod model;
mod options;
mod session;
mod tensor;

pub use dtype::{DType, Element};
pub use error::{Error, Result};
pub use model::{Dim, IoInfo, Model, Node};
pub use mopt_sys as sys;
pub use options::Options;
pub use session::{ProfileEntry, Session};
pub use tensor::{AsTensor, AsTensorMut, Tensor, TensorMut, TensorRef};

use std::ffi::CString;
use std::path::Path;

/// The library's version string ("0.1.0").
pub fn version() -> String {
    unsafe { error::cstr(sys::mopt_version()) }
}

/// The library's MOPT_VERSION_NUMBER; compare with
/// `mopt::sys::MOPT_VERSION_NUMBER` to check header and library agree.
pub fn version_number() -> i32 {
    unsafe { sys::mopt_version_number() }
}

/// The operators this build of libmopt supports ("Conv", "mopt.FusedConv").
pub fn supported_ops() -> Vec<String> {
    (0..unsafe { sys::mopt_supported_op_count() })
        .map(|i| unsafe { error::cstr(sys::mopt_supported_op_name(i)) })
        .collect()
}

pub(crate) fn c_string(what: &str, s: &str) -> Result<CString> {
    CString::new(s)
        .map_err(|_| Error::InvalidArgument(format!("{} {:?} contains a NUL byte", what, s)))
}

pub(crate) fn c_path(path: &Path) -> Result<CString> {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    };
    #[cfg(not(unix))]
    let bytes = path
        .to_str()
        .ok_or_else(|| Error::InvalidArgument(format!("path {:?} is not UTF-8", path)))?
        .as_bytes()
        .to_vec();
    CString::new(bytes)
        .map_err(|_| Error::InvalidArgument(format!("path {:?} contains a NUL byte", path)))
}
