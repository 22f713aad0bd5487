/*
 * bitwise.c — reference kernels of the "bitwise" op family (ref_bitwise.h).
 */
#include "kernels/ref/ref_bitwise.h"

#include <stdint.h>

/* y = (T)(EXPR) over one type T (REF_ROW2 of ref.h). */
#define ROWB(name, T, EXPR) REF_ROW2(name, T, T, T, (T)(EXPR))

#define BITS(T) ((uint64_t)(sizeof(T) * 8))
#define ROWS(T, SFX)                                                                               \
    ROWB(and_##SFX, T, x &z)                                                                       \
    ROWB(or_##SFX, T, x | z)                                                                       \
    ROWB(xor_##SFX, T, x ^ z)                                                                      \
    ROWB(shl_##SFX, T, (uint64_t)z >= BITS(T) ? 0 : (uint64_t)x << (uint64_t)z)                    \
    ROWB(shr_##SFX, T, (uint64_t)z >= BITS(T) ? 0 : (uint64_t)x >> (uint64_t)z)

ROWS(uint8_t, u8)
ROWS(uint16_t, u16)
ROWS(uint32_t, u32)
ROWS(uint64_t, u64)

/* Signed shifts (BitShift since opset 26 semantics, as numpy): a count < 0
 * or >= the width gives 0, or -1 for a right shift of a negative value;
 * left shifts wrap (done on the unsigned pattern); right shifts are
 * arithmetic. */
#define SROWS(T, U, SFX)                                                                           \
    ROWB(sshl_##SFX, T, (z < 0 || (uint64_t)z >= BITS(T)) ? 0 : (T)(U)((U)x << (U)z))              \
    ROWB(sshr_##SFX, T,                                                                            \
         (z < 0 || (uint64_t)z >= BITS(T)) ? (x < 0 ? -1 : 0)                                      \
                                           : (x < 0 ? (T) ~(T)(~x >> z) : (T)(x >> z)))

SROWS(int8_t, uint8_t, i8)
SROWS(int16_t, uint16_t, i16)
SROWS(int32_t, uint32_t, i32)
SROWS(int64_t, uint64_t, i64)

#define PICK(SFX)                                                                                  \
    switch (op) {                                                                                  \
    case REF_BIT_AND: return and_##SFX;                                                            \
    case REF_BIT_OR: return or_##SFX;                                                              \
    case REF_BIT_XOR: return xor_##SFX;                                                            \
    case REF_BIT_SHL: return shl_##SFX;                                                            \
    case REF_BIT_SHR: return shr_##SFX;                                                            \
    }                                                                                              \
    return NULL

ref_row2_fn ref_bitwise_row(ref_bitop op, mopt_dtype t) {
    /* and/or/xor act on the bit pattern: signed types use the unsigned rows */
    bool sgn =
        t == MOPT_DTYPE_I8 || t == MOPT_DTYPE_I16 || t == MOPT_DTYPE_I32 || t == MOPT_DTYPE_I64;
    if (sgn && (op == REF_BIT_SHL || op == REF_BIT_SHR)) {
        bool l = op == REF_BIT_SHL;
        switch (t) {
        case MOPT_DTYPE_I8: return l ? sshl_i8 : sshr_i8;
        case MOPT_DTYPE_I16: return l ? sshl_i16 : sshr_i16;
        case MOPT_DTYPE_I32: return l ? sshl_i32 : sshr_i32;
        default: return l ? sshl_i64 : sshr_i64;
        }
    }
    switch (t) {
    case MOPT_DTYPE_U8:
    case MOPT_DTYPE_I8:
    case MOPT_DTYPE_BOOL: PICK(u8);
    case MOPT_DTYPE_U16:
    case MOPT_DTYPE_I16: PICK(u16);
    case MOPT_DTYPE_U32:
    case MOPT_DTYPE_I32: PICK(u32);
    case MOPT_DTYPE_U64:
    case MOPT_DTYPE_I64: PICK(u64);
    default: return NULL;
    }
}

#define NOT_LOOP(T)                                                                                \
    for (int64_t i = 0; i < n; i++)                                                                \
        ((T *)y)[i] = (T) ~((const T *)x)[i];                                                      \
    return 0

int ref_bitwise_not(mopt_dtype t, const void *x, void *y, int64_t n) {
    switch (t) {
    case MOPT_DTYPE_U8:
    case MOPT_DTYPE_I8: NOT_LOOP(uint8_t);
    case MOPT_DTYPE_U16:
    case MOPT_DTYPE_I16: NOT_LOOP(uint16_t);
    case MOPT_DTYPE_U32:
    case MOPT_DTYPE_I32: NOT_LOOP(uint32_t);
    case MOPT_DTYPE_U64:
    case MOPT_DTYPE_I64: NOT_LOOP(uint64_t);
    default: return -1;
    }
}
