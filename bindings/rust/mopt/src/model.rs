//! model.rs — a loaded, optimized, immutable model: loading, saving and
//! introspection. Shared by reference across threads and sessions.
use std::path::Path;
use std::ptr::{self, NonNull};

use mopt_sys as sys;

use crate::dtype::DType;
use crate::error::{check, cstr, Result};
use crate::options::{opts_ptr, Options};
use crate::session::Session;
use crate::{c_path, c_string};

/// One dimension of a declared input or output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    Fixed(i64),
    /// Symbolic or unknown; its name ("batch", "seq") when it has one.
    Symbolic(Option<String>),
}

/// A graph input or output as the model declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoInfo {
    pub name: String,
    /// None when the model does not say or the type is unknown to this crate.
    pub dtype: Option<DType>,
    /// None when the rank is unknown.
    pub dims: Option<Vec<Dim>>,
}

/// A node of the graph as it runs (after optimization).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// "Conv", "mopt.FusedConv", "com.microsoft.Foo".
    pub op_type: String,
    pub name: String,
}

/// A loaded model. Immutable: Send and Sync, as mopt.h allows any number of
/// threads and sessions to share a model. Sessions borrow it, so it cannot
/// be dropped while one is alive.
pub struct Model {
    raw: NonNull<sys::mopt_model>,
}

unsafe impl Send for Model {}
unsafe impl Sync for Model {}

#[derive(Clone, Copy)]
enum Side {
    Input,
    Output,
}

impl Side {
    fn raw(self) -> sys::mopt_io_kind {
        match self {
            Side::Input => sys::MOPT_INPUT,
            Side::Output => sys::MOPT_OUTPUT,
        }
    }
}

impl Model {
    /// Loads and optimizes an ONNX (or .mopt) file. `opts` is read during
    /// the call only.
    pub fn load(path: impl AsRef<Path>, opts: Option<&Options>) -> Result<Model> {
        let path = c_path(path.as_ref())?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mopt_model_load(path.as_ptr(), opts_ptr(opts), &mut raw) })?;
        Ok(Model {
            raw: NonNull::new(raw).expect("mopt_model_load returned NULL"),
        })
    }

    /// As load, from the bytes of a model file (read during the call only).
    pub fn from_bytes(bytes: &[u8], opts: Option<&Options>) -> Result<Model> {
        let mut raw = ptr::null_mut();
        check(unsafe {
            sys::mopt_model_load_from_memory(
                bytes.as_ptr().cast(),
                bytes.len(),
                opts_ptr(opts),
                &mut raw,
            )
        })?;
        Ok(Model {
            raw: NonNull::new(raw).expect("mopt_model_load_from_memory returned NULL"),
        })
    }

    /// A session for this model (per-caller state; see [`Session`]).
    pub fn session(&self, opts: Option<&Options>) -> Result<Session<'_>> {
        Session::new(self, opts)
    }

    /// Saves the optimized model as a .mopt file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = c_path(path.as_ref())?;
        check(unsafe { sys::mopt_model_save(self.raw.as_ptr(), path.as_ptr()) })
    }

    /// The optimization passes' report, as text.
    pub fn pass_report(&self) -> String {
        unsafe { cstr(sys::mopt_model_pass_report(self.raw.as_ptr())) }
    }

    pub fn input_count(&self) -> usize {
        unsafe { sys::mopt_model_io_count(self.raw.as_ptr(), sys::MOPT_INPUT) }
    }
    pub fn output_count(&self) -> usize {
        unsafe { sys::mopt_model_io_count(self.raw.as_ptr(), sys::MOPT_OUTPUT) }
    }
    pub fn inputs(&self) -> Vec<IoInfo> {
        (0..self.input_count())
            .map(|i| self.io(Side::Input, i))
            .collect()
    }
    pub fn outputs(&self) -> Vec<IoInfo> {
        (0..self.output_count())
            .map(|i| self.io(Side::Output, i))
            .collect()
    }
    /// Index of the input of that name; Error::NotFound otherwise.
    pub fn find_input(&self, name: &str) -> Result<usize> {
        self.find(Side::Input, name)
    }
    pub fn find_output(&self, name: &str) -> Result<usize> {
        self.find(Side::Output, name)
    }

    pub fn nodes(&self) -> Vec<Node> {
        let m = self.raw.as_ptr();
        (0..unsafe { sys::mopt_model_node_count(m) })
            .map(|i| Node {
                op_type: unsafe { cstr(sys::mopt_model_node_op_type(m, i)) },
                name: unsafe { cstr(sys::mopt_model_node_name(m, i)) },
            })
            .collect()
    }
    /// The opset imported for a domain ("" is the default ONNX domain).
    pub fn opset(&self, domain: &str) -> Option<i64> {
        let domain = c_string("domain", domain).ok()?;
        let v = unsafe { sys::mopt_model_opset(self.raw.as_ptr(), domain.as_ptr()) };
        if v < 0 {
            None
        } else {
            Some(v)
        }
    }
    pub fn parameter_count(&self) -> i64 {
        unsafe { sys::mopt_model_parameter_count(self.raw.as_ptr()) }
    }
    pub fn parameter_bytes(&self) -> i64 {
        unsafe { sys::mopt_model_parameter_bytes(self.raw.as_ptr()) }
    }

    pub fn as_ptr(&self) -> *const sys::mopt_model {
        self.raw.as_ptr()
    }

    fn io(&self, side: Side, i: usize) -> IoInfo {
        let (m, k) = (self.raw.as_ptr() as *const sys::mopt_model, side.raw());
        unsafe {
            let rank = sys::mopt_model_io_rank(m, k, i);
            let dims = if rank < 0 {
                None
            } else {
                Some(
                    (0..rank)
                        .map(|a| match sys::mopt_model_io_dim(m, k, i, a) {
                            d if d >= 0 => Dim::Fixed(d),
                            _ => {
                                let n = sys::mopt_model_io_dim_name(m, k, i, a);
                                Dim::Symbolic(if n.is_null() { None } else { Some(cstr(n)) })
                            }
                        })
                        .collect(),
                )
            };
            IoInfo {
                name: cstr(sys::mopt_model_io_name(m, k, i)),
                dtype: DType::from_raw(sys::mopt_model_io_dtype(m, k, i)),
                dims,
            }
        }
    }

    fn find(&self, side: Side, name: &str) -> Result<usize> {
        let name = c_string("name", name)?;
        let mut index = 0;
        check(unsafe {
            sys::mopt_model_io_find(self.raw.as_ptr(), side.raw(), name.as_ptr(), &mut index)
        })?;
        Ok(index)
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        unsafe { sys::mopt_model_destroy(self.raw.as_ptr()) }
    }
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("inputs", &self.inputs())
            .field("outputs", &self.outputs())
            .finish()
    }
}
