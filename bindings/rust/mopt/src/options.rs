//! options.rs — the key/value option set (threads, opt_level, backend,
//! precision, profile, ...): see mopt.h for the keys.
use std::ffi::CString;
use std::path::Path;
use std::ptr::{self, NonNull};

use mopt_sys as sys;

use crate::error::{check, cstr, Result};
use crate::{c_path, c_string};

/// A set of options, read by [`Model::load`](crate::Model::load) and
/// [`Model::session`](crate::Model::session). Send but not Sync: one thread
/// at a time, as mopt.h says of `mopt_options`.
pub struct Options {
    raw: NonNull<sys::mopt_options>,
}

unsafe impl Send for Options {}

impl Options {
    /// An empty set: every option at its default.
    pub fn new() -> Result<Options> {
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mopt_options_create(&mut raw) })?;
        Ok(Options {
            raw: NonNull::new(raw).expect("mopt_options_create returned NULL"),
        })
    }

    pub fn set_int(&mut self, key: &str, value: i64) -> Result<&mut Options> {
        let key = c_string("option key", key)?;
        check(unsafe { sys::mopt_options_set_int(self.raw.as_ptr(), key.as_ptr(), value) })?;
        Ok(self)
    }

    pub fn set_double(&mut self, key: &str, value: f64) -> Result<&mut Options> {
        let key = c_string("option key", key)?;
        check(unsafe { sys::mopt_options_set_double(self.raw.as_ptr(), key.as_ptr(), value) })?;
        Ok(self)
    }

    pub fn set_str(&mut self, key: &str, value: &str) -> Result<&mut Options> {
        let key = c_string("option key", key)?;
        let value = c_string("option value", value)?;
        check(unsafe {
            sys::mopt_options_set_string(self.raw.as_ptr(), key.as_ptr(), value.as_ptr())
        })?;
        Ok(self)
    }

    /// The value of an int option (its default when not set).
    pub fn get_int(&self, key: &str) -> Result<i64> {
        let key = c_string("option key", key)?;
        let mut v = 0;
        check(unsafe { sys::mopt_options_get_int(self.raw.as_ptr(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    pub fn get_double(&self, key: &str) -> Result<f64> {
        let key = c_string("option key", key)?;
        let mut v = 0.0;
        check(unsafe { sys::mopt_options_get_double(self.raw.as_ptr(), key.as_ptr(), &mut v) })?;
        Ok(v)
    }

    pub fn get_str(&self, key: &str) -> Result<String> {
        let key = c_string("option key", key)?;
        let mut v = ptr::null();
        check(unsafe { sys::mopt_options_get_string(self.raw.as_ptr(), key.as_ptr(), &mut v) })?;
        Ok(unsafe { cstr(v) })
    }

    /// Sets every key of a flat YAML mapping read from a file.
    pub fn load_yaml(&mut self, path: impl AsRef<Path>) -> Result<&mut Options> {
        let path: CString = c_path(path.as_ref())?;
        check(unsafe { sys::mopt_options_load_yaml(self.raw.as_ptr(), path.as_ptr()) })?;
        Ok(self)
    }

    /// Sets every key of a flat YAML mapping ("threads: 2\nbackend: ref\n").
    pub fn load_yaml_str(&mut self, text: &str) -> Result<&mut Options> {
        check(unsafe {
            sys::mopt_options_load_yaml_string(self.raw.as_ptr(), text.as_ptr().cast(), text.len())
        })?;
        Ok(self)
    }

    pub fn as_ptr(&self) -> *const sys::mopt_options {
        self.raw.as_ptr()
    }
}

impl Drop for Options {
    fn drop(&mut self) {
        unsafe { sys::mopt_options_destroy(self.raw.as_ptr()) }
    }
}

pub(crate) fn opts_ptr(opts: Option<&Options>) -> *const sys::mopt_options {
    opts.map_or(ptr::null(), |o| o.as_ptr())
}
