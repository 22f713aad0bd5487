//! tensor.rs — tensors: owned (Tensor), borrowed read-only caller data
//! (TensorRef: zero-copy inputs) and borrowed writable caller data
//! (TensorMut: zero-copy outputs). The borrow checker keeps a wrapped slice
//! alive, and unaliased, for as long as the library may touch it.
use std::marker::PhantomData;
use std::os::raw::{c_int, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use mopt_sys as sys;

use crate::c_path;
use crate::dtype::{DType, Element};
use crate::error::{check, Error, Result};

mod sealed {
    pub trait Sealed {}
}

/// Anything a session can read an input from: [`Tensor`], [`TensorRef`],
/// [`TensorMut`]. Sealed.
pub trait AsTensor: sealed::Sealed {
    fn as_tensor_ptr(&self) -> *const sys::mopt_tensor;
}

/// Anything a session can write an output into: [`Tensor`], [`TensorMut`].
/// Sealed.
pub trait AsTensorMut: AsTensor {
    fn as_tensor_mut_ptr(&mut self) -> *mut sys::mopt_tensor;
}

fn rank_of(dims: &[i64]) -> Result<c_int> {
    c_int::try_from(dims.len())
        .map_err(|_| Error::InvalidArgument(format!("tensor rank {} is too large", dims.len())))
}

fn wrap(
    dtype: DType,
    dims: &[i64],
    data: *mut c_void,
    size: usize,
) -> Result<NonNull<sys::mopt_tensor>> {
    let mut raw = ptr::null_mut();
    check(unsafe {
        sys::mopt_tensor_wrap(
            dtype.to_raw(),
            rank_of(dims)?,
            dims.as_ptr(),
            data,
            size,
            &mut raw,
        )
    })?;
    Ok(NonNull::new(raw).expect("mopt_tensor_wrap returned NULL"))
}

fn check_aligned(dtype: DType, data: *const u8) -> Result<()> {
    let align = dtype.size().max(1);
    if (data as usize) % align != 0 {
        return Err(Error::InvalidArgument(format!(
            "a {} buffer must be aligned to {} bytes",
            dtype.name(),
            align
        )));
    }
    Ok(())
}

// The read accessors every tensor kind has.
macro_rules! reader {
    ($t:ident $(<$l:lifetime>)?) => {
        impl$(<$l>)? $t$(<$l>)? {
            fn raw_const(&self) -> *const sys::mopt_tensor {
                self.raw.as_ptr()
            }
            /// The element type (None for a type this crate does not know).
            pub fn dtype(&self) -> Option<DType> {
                DType::from_raw(unsafe { sys::mopt_tensor_dtype(self.raw_const()) })
            }
            /// The shape, one entry per axis (empty for a scalar).
            pub fn dims(&self) -> &[i64] {
                let rank = unsafe { sys::mopt_tensor_rank(self.raw_const()) };
                let d = unsafe { sys::mopt_tensor_dims(self.raw_const()) };
                if rank <= 0 || d.is_null() {
                    &[]
                } else {
                    unsafe { std::slice::from_raw_parts(d, rank as usize) }
                }
            }
            /// Number of elements.
            pub fn len(&self) -> usize {
                unsafe { sys::mopt_tensor_element_count(self.raw_const()) as usize }
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            pub fn size_bytes(&self) -> usize {
                unsafe { sys::mopt_tensor_size_bytes(self.raw_const()) }
            }
            /// The raw bytes of the data, whatever the element type.
            pub fn as_bytes(&self) -> &[u8] {
                let p = unsafe { sys::mopt_tensor_data_const(self.raw_const()) };
                let n = self.size_bytes();
                if p.is_null() || n == 0 {
                    &[]
                } else {
                    unsafe { std::slice::from_raw_parts(p.cast(), n) }
                }
            }
            /// The elements as T; Error::Type when T is not the element type.
            pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
                self.check_element::<T>()?;
                let p = unsafe { sys::mopt_tensor_data_const(self.raw_const()) };
                let n = self.len();
                if p.is_null() || n == 0 {
                    return Ok(&[]);
                }
                check_aligned(T::DTYPE, p.cast())?;
                Ok(unsafe { std::slice::from_raw_parts(p.cast::<T>(), n) })
            }
            pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
                self.as_slice::<T>().map(|s| s.to_vec())
            }
            /// Writes the tensor as a NumPy .npy file.
            pub fn save_npy(&self, path: impl AsRef<Path>) -> Result<()> {
                let path = c_path(path.as_ref())?;
                check(unsafe { sys::mopt_tensor_save_npy(self.raw_const(), path.as_ptr()) })
            }
            fn check_element<T: Element>(&self) -> Result<()> {
                match self.dtype() {
                    Some(d) if d == T::DTYPE => Ok(()),
                    d => Err(Error::Type(format!(
                        "tensor holds {}, not {}",
                        d.map_or("an unknown type".to_string(), |d| d.name()),
                        T::DTYPE.name()
                    ))),
                }
            }
        }
        impl$(<$l>)? sealed::Sealed for $t$(<$l>)? {}
        impl$(<$l>)? AsTensor for $t$(<$l>)? {
            fn as_tensor_ptr(&self) -> *const sys::mopt_tensor {
                self.raw.as_ptr()
            }
        }
        impl$(<$l>)? Drop for $t$(<$l>)? {
            fn drop(&mut self) {
                unsafe { sys::mopt_tensor_destroy(self.raw.as_ptr()) }
            }
        }
        impl$(<$l>)? std::fmt::Debug for $t$(<$l>)? {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t))
                    .field("dtype", &self.dtype())
                    .field("dims", &self.dims())
                    .finish()
            }
        }
    };
}

/// A tensor that owns its buffer (64-byte aligned): zero-filled, a copy of a
/// slice, read from a file, or handed over by a session run. Send but not
/// Sync (one thread at a time, as mopt.h says of `mopt_tensor`).
pub struct Tensor {
    raw: NonNull<sys::mopt_tensor>,
}
unsafe impl Send for Tensor {}
reader!(Tensor);

impl Tensor {
    /// A zero-filled tensor.
    pub fn zeros(dtype: DType, dims: &[i64]) -> Result<Tensor> {
        let mut raw = ptr::null_mut();
        check(unsafe {
            sys::mopt_tensor_create(dtype.to_raw(), rank_of(dims)?, dims.as_ptr(), &mut raw)
        })?;
        Ok(Tensor {
            raw: NonNull::new(raw).expect("mopt_tensor_create returned NULL"),
        })
    }

    /// An owned copy of `data` with this shape.
    pub fn from_slice<T: Element>(data: &[T], dims: &[i64]) -> Result<Tensor> {
        let mut t = Tensor::zeros(T::DTYPE, dims)?;
        if t.len() != data.len() {
            return Err(Error::InvalidArgument(format!(
                "{} values for a shape of {} elements",
                data.len(),
                t.len()
            )));
        }
        t.as_mut_slice::<T>()?.copy_from_slice(data);
        Ok(t)
    }

    /// Reads a NumPy .npy or ONNX TensorProto file.
    pub fn load(path: impl AsRef<Path>) -> Result<Tensor> {
        let path = c_path(path.as_ref())?;
        let mut raw = ptr::null_mut();
        check(unsafe { sys::mopt_tensor_load(path.as_ptr(), &mut raw) })?;
        Ok(Tensor {
            raw: NonNull::new(raw).expect("mopt_tensor_load returned NULL"),
        })
    }

    /// The elements as T, writable.
    pub fn as_mut_slice<T: Element>(&mut self) -> Result<&mut [T]> {
        self.check_element::<T>()?;
        let p = unsafe { sys::mopt_tensor_data(self.raw.as_ptr()) };
        let n = self.len();
        if p.is_null() || n == 0 {
            return Ok(&mut []);
        }
        check_aligned(T::DTYPE, p.cast())?;
        Ok(unsafe { std::slice::from_raw_parts_mut(p.cast::<T>(), n) })
    }

    /// Takes ownership of a tensor handed out by the C API.
    ///
    /// # Safety
    /// `raw` must be a valid tensor that nothing else will destroy.
    pub unsafe fn from_raw(raw: NonNull<sys::mopt_tensor>) -> Tensor {
        Tensor { raw }
    }

    /// Gives the handle up; the caller must call mopt_tensor_destroy.
    pub fn into_raw(self) -> NonNull<sys::mopt_tensor> {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }
}

impl AsTensorMut for Tensor {
    fn as_tensor_mut_ptr(&mut self) -> *mut sys::mopt_tensor {
        self.raw.as_ptr()
    }
}

/// A read-only tensor over a caller's slice, without copying: a zero-copy
/// input. The slice stays borrowed while the TensorRef lives.
pub struct TensorRef<'a> {
    raw: NonNull<sys::mopt_tensor>,
    _data: PhantomData<&'a [u8]>,
}
unsafe impl Send for TensorRef<'_> {}
reader!(TensorRef<'a>);

impl<'a> TensorRef<'a> {
    /// Borrows `data` as a tensor of this shape (the element count must match).
    pub fn new<T: Element>(data: &'a [T], dims: &[i64]) -> Result<TensorRef<'a>> {
        // The library never writes through a tensor passed as an input, and
        // TensorRef offers no way to write: the *mut is only the C signature.
        let raw = wrap(
            T::DTYPE,
            dims,
            data.as_ptr() as *mut c_void,
            std::mem::size_of_val(data),
        )?;
        Ok(TensorRef {
            raw,
            _data: PhantomData,
        })
    }

    /// Borrows raw bytes as a tensor of any element type (bool, f16, bf16...);
    /// they must be aligned to the element size.
    pub fn from_bytes(dtype: DType, dims: &[i64], data: &'a [u8]) -> Result<TensorRef<'a>> {
        check_aligned(dtype, data.as_ptr())?;
        let raw = wrap(dtype, dims, data.as_ptr() as *mut c_void, data.len())?;
        Ok(TensorRef {
            raw,
            _data: PhantomData,
        })
    }
}

/// A writable tensor over a caller's slice, without copying: a zero-copy
/// output. The slice stays mutably borrowed while the TensorMut lives; drop
/// it (or use as_slice) to read the result.
pub struct TensorMut<'a> {
    raw: NonNull<sys::mopt_tensor>,
    _data: PhantomData<&'a mut [u8]>,
}
unsafe impl Send for TensorMut<'_> {}
reader!(TensorMut<'a>);

impl<'a> TensorMut<'a> {
    pub fn new<T: Element>(data: &'a mut [T], dims: &[i64]) -> Result<TensorMut<'a>> {
        let raw = wrap(
            T::DTYPE,
            dims,
            data.as_mut_ptr().cast(),
            std::mem::size_of_val(data),
        )?;
        Ok(TensorMut {
            raw,
            _data: PhantomData,
        })
    }

    pub fn from_bytes(dtype: DType, dims: &[i64], data: &'a mut [u8]) -> Result<TensorMut<'a>> {
        check_aligned(dtype, data.as_ptr())?;
        let raw = wrap(dtype, dims, data.as_mut_ptr().cast(), data.len())?;
        Ok(TensorMut {
            raw,
            _data: PhantomData,
        })
    }
}

impl AsTensorMut for TensorMut<'_> {
    fn as_tensor_mut_ptr(&mut self) -> *mut sys::mopt_tensor {
        self.raw.as_ptr()
    }
}
