//! dtype.rs — element types: the DType enum and the Rust types that map to
//! them (Element), for typed, checked access to tensor data.
use mopt_sys as sys;

/// A tensor element type (the values of ONNX TensorProto.DataType).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    F32,
    U8,
    I8,
    U16,
    I16,
    I32,
    I64,
    String,
    /// One byte per element, 0 or 1.
    Bool,
    F16,
    F64,
    U32,
    U64,
    BF16,
}

impl DType {
    pub(crate) fn to_raw(self) -> sys::mopt_dtype {
        match self {
            DType::F32 => sys::MOPT_DTYPE_F32,
            DType::U8 => sys::MOPT_DTYPE_U8,
            DType::I8 => sys::MOPT_DTYPE_I8,
            DType::U16 => sys::MOPT_DTYPE_U16,
            DType::I16 => sys::MOPT_DTYPE_I16,
            DType::I32 => sys::MOPT_DTYPE_I32,
            DType::I64 => sys::MOPT_DTYPE_I64,
            DType::String => sys::MOPT_DTYPE_STRING,
            DType::Bool => sys::MOPT_DTYPE_BOOL,
            DType::F16 => sys::MOPT_DTYPE_F16,
            DType::F64 => sys::MOPT_DTYPE_F64,
            DType::U32 => sys::MOPT_DTYPE_U32,
            DType::U64 => sys::MOPT_DTYPE_U64,
            DType::BF16 => sys::MOPT_DTYPE_BF16,
        }
    }

    /// None for MOPT_DTYPE_UNDEFINED and values this crate does not know.
    pub(crate) fn from_raw(raw: sys::mopt_dtype) -> Option<DType> {
        Some(match raw {
            sys::MOPT_DTYPE_F32 => DType::F32,
            sys::MOPT_DTYPE_U8 => DType::U8,
            sys::MOPT_DTYPE_I8 => DType::I8,
            sys::MOPT_DTYPE_U16 => DType::U16,
            sys::MOPT_DTYPE_I16 => DType::I16,
            sys::MOPT_DTYPE_I32 => DType::I32,
            sys::MOPT_DTYPE_I64 => DType::I64,
            sys::MOPT_DTYPE_STRING => DType::String,
            sys::MOPT_DTYPE_BOOL => DType::Bool,
            sys::MOPT_DTYPE_F16 => DType::F16,
            sys::MOPT_DTYPE_F64 => DType::F64,
            sys::MOPT_DTYPE_U32 => DType::U32,
            sys::MOPT_DTYPE_U64 => DType::U64,
            sys::MOPT_DTYPE_BF16 => DType::BF16,
            _ => return None,
        })
    }

    /// Bytes per element (0 for String).
    pub fn size(self) -> usize {
        unsafe { sys::mopt_dtype_size(self.to_raw()) }
    }

    /// The library's short name: "f32", "i64", "bool", ...
    pub fn name(self) -> String {
        unsafe { crate::error::cstr(sys::mopt_dtype_name(self.to_raw())) }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values are laid out exactly as a libmopt element type,
/// and for which every bit pattern is a valid value (so tensors the library
/// fills can be read as slices of it). Sealed: implemented for the integer
/// and float types only. bool is left out on purpose (a byte other than 0/1
/// would be undefined behaviour in Rust); read bool, f16 and bf16 tensors
/// as bytes.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
    )*};
}
element!(f32 => F32, f64 => F64, u8 => U8, i8 => I8, u16 => U16, i16 => I16,
         i32 => I32, u32 => U32, i64 => I64, u64 => U64);
