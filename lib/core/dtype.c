/*
 * dtype.c — element type names and sizes (public mopt_dtype_* functions).
 */
#include <mopt/mopt.h>
#include <string.h>

const char *mopt_dtype_name(mopt_dtype dtype) {
    switch (dtype) {
    case MOPT_DTYPE_F32: return "f32";
    case MOPT_DTYPE_U8: return "u8";
    case MOPT_DTYPE_I8: return "i8";
    case MOPT_DTYPE_U16: return "u16";
    case MOPT_DTYPE_I16: return "i16";
    case MOPT_DTYPE_I32: return "i32";
    case MOPT_DTYPE_I64: return "i64";
    case MOPT_DTYPE_STRING: return "string";
    case MOPT_DTYPE_BOOL: return "bool";
    case MOPT_DTYPE_F16: return "f16";
    case MOPT_DTYPE_F64: return "f64";
    case MOPT_DTYPE_U32: return "u32";
    case MOPT_DTYPE_U64: return "u64";
    case MOPT_DTYPE_BF16: return "bf16";
    case MOPT_DTYPE_F8E4M3FN: return "f8e4m3fn";
    case MOPT_DTYPE_F8E4M3FNUZ: return "f8e4m3fnuz";
    case MOPT_DTYPE_F8E5M2: return "f8e5m2";
    case MOPT_DTYPE_F8E5M2FNUZ: return "f8e5m2fnuz";
    case MOPT_DTYPE_U4: return "u4";
    case MOPT_DTYPE_I4: return "i4";
    case MOPT_DTYPE_F4E2M1: return "f4e2m1";
    case MOPT_DTYPE_F8E8M0: return "f8e8m0";
    case MOPT_DTYPE_U2: return "u2";
    case MOPT_DTYPE_I2: return "i2";
    case MOPT_DTYPE_UNDEFINED: break;
    }
    return "undefined";
}

size_t mopt_dtype_size(mopt_dtype dtype) {
    switch (dtype) {
    case MOPT_DTYPE_U8:
    case MOPT_DTYPE_I8:
    case MOPT_DTYPE_BOOL:
    case MOPT_DTYPE_F8E4M3FN:
    case MOPT_DTYPE_F8E4M3FNUZ:
    case MOPT_DTYPE_F8E5M2:
    case MOPT_DTYPE_F8E5M2FNUZ:
    case MOPT_DTYPE_U4:
    case MOPT_DTYPE_I4:
    case MOPT_DTYPE_F4E2M1:
    case MOPT_DTYPE_F8E8M0:
    case MOPT_DTYPE_U2:
    case MOPT_DTYPE_I2: return 1;
    case MOPT_DTYPE_U16:
    case MOPT_DTYPE_I16:
    case MOPT_DTYPE_F16:
    case MOPT_DTYPE_BF16: return 2;
    case MOPT_DTYPE_F32:
    case MOPT_DTYPE_I32:
    case MOPT_DTYPE_U32: return 4;
    case MOPT_DTYPE_I64:
    case MOPT_DTYPE_F64:
    case MOPT_DTYPE_U64: return 8;
    case MOPT_DTYPE_STRING:
    case MOPT_DTYPE_UNDEFINED: break;
    }
    return 0;
}
