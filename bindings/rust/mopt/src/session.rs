//! session.rs — per-caller execution state for a model: runs with borrowed
//! inputs and library-allocated or caller-provided outputs, stats, profile.
use std::ffi::CString;
use std::ptr::{self, NonNull};

use mopt_sys as sys;

use crate::c_string;
use crate::error::{check, cstr, Result};
use crate::model::Model;
use crate::options::{opts_ptr, Options};
use crate::tensor::{AsTensor, AsTensorMut, Tensor};

/// One node's entry in the profile of the last run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileEntry {
    pub node: String,
    pub op: String,
    /// The implementation that ran the node ("ref", "onednn", "cpu-avx512"...).
    pub kernel: String,
    pub ns: i64,
    pub flops: i64,
}

/// A session over a model it borrows (so the model outlives it). Send but not
/// Sync: mopt.h lets a session move between threads but be driven by one at a
/// time, and every run takes `&mut self`.
pub struct Session<'m> {
    raw: NonNull<sys::mopt_session>,
    model: &'m Model,
}

unsafe impl Send for Session<'_> {}

impl<'m> Session<'m> {
    /// As [`Model::session`].
    pub fn new(model: &'m Model, opts: Option<&Options>) -> Result<Session<'m>> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mopt_session_create(model.as_ptr(), opts_ptr(opts), &mut raw) })?;
        Ok(Session {
            raw: NonNull::new(raw).expect("mopt_session_create returned NULL"),
            model,
        })
    }

    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// Runs with the inputs in model order; returns every output, in model
    /// order, in tensors the library allocated.
    pub fn run(&mut self, inputs: &[&dyn AsTensor]) -> Result<Vec<Tensor>> {
        let mut outs = vec![ptr::null_mut(); self.model.output_count()];
        self.run_raw(None, inputs, None, &mut outs)
    }

    /// Runs with named inputs (any order) and returns the named outputs in the
    /// order asked.
    pub fn run_named(
        &mut self,
        inputs: &[(&str, &dyn AsTensor)],
        outputs: &[&str],
    ) -> Result<Vec<Tensor>> {
        let in_names = names(inputs.iter().map(|i| i.0))?;
        let ins: Vec<&dyn AsTensor> = inputs.iter().map(|i| i.1).collect();
        let out_names = names(outputs.iter().copied())?;
        let mut outs = vec![ptr::null_mut(); outputs.len()];
        self.run_raw(Some(&in_names), &ins, Some(&out_names), &mut outs)
    }

    /// Runs writing every output, in model order, into caller tensors (owned,
    /// or TensorMut over caller slices: zero copy) whose type and shape must
    /// match the result exactly.
    pub fn run_into(
        &mut self,
        inputs: &[&dyn AsTensor],
        outputs: &mut [&mut dyn AsTensorMut],
    ) -> Result<()> {
        let mut outs: Vec<*mut sys::mopt_tensor> =
            outputs.iter_mut().map(|o| o.as_tensor_mut_ptr()).collect();
        self.run_raw(None, inputs, None, &mut outs).map(|_| ())
    }

    /// As run_into, with names on both sides.
    pub fn run_named_into(
        &mut self,
        inputs: &[(&str, &dyn AsTensor)],
        outputs: &mut [(&str, &mut dyn AsTensorMut)],
    ) -> Result<()> {
        let in_names = names(inputs.iter().map(|i| i.0))?;
        let ins: Vec<&dyn AsTensor> = inputs.iter().map(|i| i.1).collect();
        let out_names = names(outputs.iter().map(|o| o.0))?;
        let mut outs: Vec<*mut sys::mopt_tensor> = outputs
            .iter_mut()
            .map(|o| o.1.as_tensor_mut_ptr())
            .collect();
        self.run_raw(Some(&in_names), &ins, Some(&out_names), &mut outs)
            .map(|_| ())
    }

    /// A statistic: "runs", "peak_bytes", "arena_bytes", "last_run_ns".
    pub fn stat(&self, key: &str) -> Result<i64> {
        let key = c_string("stat key", key)?;
        let mut v = 0;
        check(unsafe { sys::mopt_session_get_stat(self.raw.as_ptr(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    /// The per-node profile of the last run (empty unless the session was
    /// created with the "profile" option).
    pub fn profile(&self) -> Vec<ProfileEntry> {
        let s = self.raw.as_ptr() as *const sys::mopt_session;
        (0..unsafe { sys::mopt_session_profile_count(s) })
            .map(|i| unsafe {
                ProfileEntry {
                    node: cstr(sys::mopt_session_profile_node(s, i)),
                    op: cstr(sys::mopt_session_profile_op(s, i)),
                    kernel: cstr(sys::mopt_session_profile_kernel(s, i)),
                    ns: sys::mopt_session_profile_ns(s, i),
                    flops: sys::mopt_session_profile_flops(s, i),
                }
            })
            .collect()
    }

    pub fn as_ptr(&self) -> *const sys::mopt_session {
        self.raw.as_ptr()
    }

    fn run_raw(
        &mut self,
        in_names: Option<&[CString]>,
        inputs: &[&dyn AsTensor],
        out_names: Option<&[CString]>,
        outs: &mut [*mut sys::mopt_tensor],
    ) -> Result<Vec<Tensor>> {
        let ins: Vec<*const sys::mopt_tensor> = inputs.iter().map(|t| t.as_tensor_ptr()).collect();
        let in_ptrs: Option<Vec<*const std::os::raw::c_char>> =
            in_names.map(|n| n.iter().map(|s| s.as_ptr()).collect());
        let out_ptrs: Option<Vec<*const std::os::raw::c_char>> =
            out_names.map(|n| n.iter().map(|s| s.as_ptr()).collect());
        let handed: Vec<bool> = outs.iter().map(|p| p.is_null()).collect();
        let mut result = Vec::with_capacity(outs.len());
        check(unsafe {
            sys::mopt_session_run(
                self.raw.as_ptr(),
                ins.len(),
                in_ptrs.as_ref().map_or(ptr::null(), |v| v.as_ptr()),
                ins.as_ptr(),
                outs.len(),
                out_ptrs.as_ref().map_or(ptr::null(), |v| v.as_ptr()),
                outs.as_mut_ptr(),
            )
        })?;
        for (p, was_null) in outs.iter().zip(handed) {
            if was_null {
                let raw = NonNull::new(*p).expect("mopt_session_run handed over a NULL output");
                result.push(unsafe { Tensor::from_raw(raw) });
            }
        }
        Ok(result)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        unsafe { sys::mopt_session_destroy(self.raw.as_ptr()) }
    }
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> Result<Vec<CString>> {
    it.map(|n| c_string("name", n)).collect()
}
