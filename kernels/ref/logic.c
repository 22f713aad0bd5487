/*
 * logic.c — portable reference kernels for the "logic" op family (declared
 * in ref_logic.h): comparison and boolean row functions for the broadcast
 * drivers, Where, IsNaN/IsInf, and Cast between every numeric type with
 * exact f16/bf16/float8 rounding. Never sees the IR.
 */
#include "core/float8.h"
#include "core/half.h"
#include "kernels/ref/ref_logic.h"

#include <math.h>
#include <string.h>

/* ---- comparisons -------------------------------------------------------- */

#define CMP_ROWS(T, SFX)                                                                           \
    REF_ROW2(eq_##SFX, T, T, uint8_t, (uint8_t)(x == z))                                           \
    REF_ROW2(lt_##SFX, T, T, uint8_t, (uint8_t)(x < z))                                            \
    REF_ROW2(gt_##SFX, T, T, uint8_t, (uint8_t)(x > z))                                            \
    REF_ROW2(le_##SFX, T, T, uint8_t, (uint8_t)(x <= z))                                           \
    REF_ROW2(ge_##SFX, T, T, uint8_t, (uint8_t)(x >= z))

CMP_ROWS(float, f32)
CMP_ROWS(double, f64)
CMP_ROWS(int8_t, i8)
CMP_ROWS(uint8_t, u8)
CMP_ROWS(int16_t, i16)
CMP_ROWS(uint16_t, u16)
CMP_ROWS(int32_t, i32)
CMP_ROWS(uint32_t, u32)
CMP_ROWS(int64_t, i64)
CMP_ROWS(uint64_t, u64)
/* bools: any non-zero byte is true */
REF_ROW2(eq_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) == (z != 0)))
REF_ROW2(lt_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) < (z != 0)))
REF_ROW2(gt_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) > (z != 0)))
REF_ROW2(le_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) <= (z != 0)))
REF_ROW2(ge_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) >= (z != 0)))

ref_row2_fn ref_compare_row(ref_cmpop op, mopt_dtype t) {
#define PICK(SFX)                                                                                  \
    switch (op) {                                                                                  \
    case REF_CMP_EQ: return eq_##SFX;                                                              \
    case REF_CMP_LT: return lt_##SFX;                                                              \
    case REF_CMP_GT: return gt_##SFX;                                                              \
    case REF_CMP_LE: return le_##SFX;                                                              \
    case REF_CMP_GE: return ge_##SFX;                                                              \
    }                                                                                              \
    return NULL
    switch (t) {
    case MOPT_DTYPE_F32: PICK(f32);
    case MOPT_DTYPE_F64: PICK(f64);
    case MOPT_DTYPE_I8: PICK(i8);
    case MOPT_DTYPE_U8: PICK(u8);
    case MOPT_DTYPE_I16: PICK(i16);
    case MOPT_DTYPE_U16: PICK(u16);
    case MOPT_DTYPE_I32: PICK(i32);
    case MOPT_DTYPE_U32: PICK(u32);
    case MOPT_DTYPE_I64: PICK(i64);
    case MOPT_DTYPE_U64: PICK(u64);
    case MOPT_DTYPE_BOOL: PICK(b);
    default: return NULL;
    }
#undef PICK
}

/* ---- boolean logic ------------------------------------------------------ */

REF_ROW2(and_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) & (z != 0)))
REF_ROW2(or_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) | (z != 0)))
REF_ROW2(xor_b, uint8_t, uint8_t, uint8_t, (uint8_t)((x != 0) ^ (z != 0)))

ref_row2_fn ref_logical_row(ref_boolop op) {
    switch (op) {
    case REF_BOOL_AND: return and_b;
    case REF_BOOL_OR: return or_b;
    case REF_BOOL_XOR: return xor_b;
    }
    return NULL;
}

void ref_not(const uint8_t *x, uint8_t *y, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        y[i] = (uint8_t)(x[i] == 0);
}

/* ---- Where -------------------------------------------------------------- */

#define WHERE_ROW(name, T)                                                                         \
    static void name(const void *pc, int64_t sc, const void *px, int64_t sx, const void *py,       \
                     int64_t sy, void *pout, int64_t n) {                                          \
        const uint8_t *c = pc;                                                                     \
        const T *x = px, *y = py;                                                                  \
        T *out = pout;                                                                             \
        if (sc == 1 && sx == 1 && sy == 1) {                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                out[i] = c[i] ? x[i] : y[i];                                                       \
        } else {                                                                                   \
            for (int64_t i = 0; i < n; i++)                                                        \
                out[i] = c[i * sc] ? x[i * sx] : y[i * sy];                                        \
        }                                                                                          \
    }

WHERE_ROW(where_1, uint8_t)
WHERE_ROW(where_2, uint16_t)
WHERE_ROW(where_4, uint32_t)
WHERE_ROW(where_8, uint64_t)

ref_row3_fn ref_where_row(size_t esz) {
    switch (esz) {
    case 1: return where_1;
    case 2: return where_2;
    case 4: return where_4;
    case 8: return where_8;
    default: return NULL;
    }
}

/* ---- IsNaN / IsInf ------------------------------------------------------ */

int ref_isnan(mopt_dtype t, const void *px, uint8_t *y, int64_t n) {
    if (t == MOPT_DTYPE_F32) {
        const float *x = px;
        for (int64_t i = 0; i < n; i++)
            y[i] = (uint8_t)(x[i] != x[i]);
        return 0;
    }
    if (t == MOPT_DTYPE_F64) {
        const double *x = px;
        for (int64_t i = 0; i < n; i++)
            y[i] = (uint8_t)(x[i] != x[i]);
        return 0;
    }
    return -1;
}

int ref_isinf(mopt_dtype t, const void *px, uint8_t *y, int64_t n, bool positive, bool negative) {
    if (t == MOPT_DTYPE_F32) {
        const float *x = px;
        for (int64_t i = 0; i < n; i++)
            y[i] = (uint8_t)((positive && x[i] == INFINITY) || (negative && x[i] == -INFINITY));
        return 0;
    }
    if (t == MOPT_DTYPE_F64) {
        const double *x = px;
        for (int64_t i = 0; i < n; i++)
            y[i] = (uint8_t)((positive && x[i] == (double)INFINITY) ||
                             (negative && x[i] == -(double)INFINITY));
        return 0;
    }
    return -1;
}

/* ---- Cast --------------------------------------------------------------- */

/* Conversion goes through a chunk of an intermediate: double for float
 * sources, int64 (or uint64 bits) for integer and bool sources. */
enum { CHUNK = 256 };
typedef enum mid_kind { MID_F64, MID_I64, MID_U64 } mid_kind;

/* Cast converts between every dtype of fixed size: all but strings (and
 * undefined), the same list as mopt_dtype_size's. */
bool ref_cast_supported(mopt_dtype t) { return mopt_dtype_size(t) != 0; }

/* One case of read_mid: widen T elements, each through CONV, into DST (d
 * as double, or q as int64) and return KIND. */
#define READ(T, CONV, DST, KIND)                                                                   \
    do {                                                                                           \
        const T *s = (const T *)x + off;                                                           \
        for (int64_t i = 0; i < n; i++)                                                            \
            DST[i] = CONV(s[i]);                                                                   \
        return KIND;                                                                               \
    } while (0)
#define TO_F64(T, CONV) READ(T, CONV, d, MID_F64)
#define TO_I64(T, CONV) READ(T, CONV, q, MID_I64)
#define SAME(v) (v)
#define NONZERO(v) ((v) != 0)
#define U4(v) ((v)&15)
#define I4(v) (((v)&15) >= 8 ? ((v)&15) - 16 : ((v)&15))
#define U2(v) ((v)&3)
#define I2(v) (((v)&3) >= 2 ? ((v)&3) - 4 : ((v)&3))

/* Reads n elements starting at off into d (doubles) or q (int64 bits). */
static mid_kind read_mid(mopt_dtype from, const void *x, int64_t off, int64_t n, double *d,
                         int64_t *q) {
    if (f8_is_float8(from)) {
        const uint8_t *s = (const uint8_t *)x + off;
        for (int64_t i = 0; i < n; i++)
            d[i] = f8_to_f32(from, s[i]);
        return MID_F64;
    }
    switch (from) {
    case MOPT_DTYPE_F32: TO_F64(float, (double));
    case MOPT_DTYPE_F64: TO_F64(double, SAME);
    case MOPT_DTYPE_F16: TO_F64(uint16_t, (double)half_to_f32);
    case MOPT_DTYPE_BF16: TO_F64(uint16_t, (double)bf16_to_f32);
    case MOPT_DTYPE_I8: TO_I64(int8_t, SAME);
    case MOPT_DTYPE_I16: TO_I64(int16_t, SAME);
    case MOPT_DTYPE_I32: TO_I64(int32_t, SAME);
    case MOPT_DTYPE_I64: TO_I64(int64_t, SAME);
    case MOPT_DTYPE_BOOL: TO_I64(uint8_t, NONZERO);
    case MOPT_DTYPE_U4: TO_I64(uint8_t, U4);
    case MOPT_DTYPE_I4: TO_I64(uint8_t, I4);
    case MOPT_DTYPE_U2: TO_I64(uint8_t, U2);
    case MOPT_DTYPE_I2: TO_I64(uint8_t, I2);
    case MOPT_DTYPE_F4E2M1: TO_F64(uint8_t, (double)f4e2m1_to_f32);
    case MOPT_DTYPE_F8E8M0: TO_F64(uint8_t, (double)e8m0_to_f32);
    case MOPT_DTYPE_U8: TO_I64(uint8_t, SAME);
    case MOPT_DTYPE_U16: TO_I64(uint16_t, SAME);
    case MOPT_DTYPE_U32: TO_I64(uint32_t, SAME);
    case MOPT_DTYPE_U64: {
        const uint64_t *s = (const uint64_t *)x + off;
        memcpy(q, s, (size_t)n * sizeof *s);
        return MID_U64;
    }
    default: return MID_F64; /* unreachable: checked by the caller */
    }
}

/* float -> integer: truncate toward zero, saturate, NaN -> 0 */
static int64_t f2i(double v, double lo, double hi) {
    if (v != v) return 0;
    v = trunc(v);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (int64_t)v;
}
static int64_t f2i64(double v) {
    if (v != v) return 0;
    if (v >= 0x1p63) return INT64_MAX;
    if (v < -0x1p63) return INT64_MIN;
    return (int64_t)v;
}
/* float -> 4-bit integer: truncate toward zero; NaN and values outside the
 * range become 0 (what the ONNX reference, ml_dtypes, produces) */
static int64_t f2i4(double v, double lo, double hi) {
    if (v != v) return 0;
    v = trunc(v);
    return v < lo || v > hi ? 0 : (int64_t)v;
}
static uint64_t f2u64(double v) {
    if (v != v || v <= -1.0) return 0;
    if (v >= 0x1p64) return UINT64_MAX;
    return v < 0 ? 0 : (uint64_t)v;
}

#define WRITE(T, EXPR)                                                                             \
    do {                                                                                           \
        T *o = (T *)y + off;                                                                       \
        for (int64_t i = 0; i < n; i++)                                                            \
            o[i] = (T)(EXPR);                                                                      \
    } while (0)

static void write_from_f64(mopt_dtype to, const double *d, void *y, int64_t off, int64_t n,
                           bool saturate, int round_mode) {
    if (f8_is_float8(to)) {
        WRITE(uint8_t, f8_from_f64(to, d[i], saturate));
        return;
    }
    switch (to) {
    case MOPT_DTYPE_F32: WRITE(float, d[i]); break;
    case MOPT_DTYPE_F64: WRITE(double, d[i]); break;
    case MOPT_DTYPE_F16: WRITE(uint16_t, half_from_f64(d[i])); break;
    case MOPT_DTYPE_BF16: WRITE(uint16_t, bf16_from_f64(d[i])); break;
    case MOPT_DTYPE_I8: WRITE(int8_t, f2i(d[i], INT8_MIN, INT8_MAX)); break;
    case MOPT_DTYPE_I16: WRITE(int16_t, f2i(d[i], INT16_MIN, INT16_MAX)); break;
    case MOPT_DTYPE_I32: WRITE(int32_t, f2i(d[i], INT32_MIN, INT32_MAX)); break;
    case MOPT_DTYPE_I64: WRITE(int64_t, f2i64(d[i])); break;
    case MOPT_DTYPE_U8: WRITE(uint8_t, f2i(d[i], 0, UINT8_MAX)); break;
    case MOPT_DTYPE_U16: WRITE(uint16_t, f2i(d[i], 0, UINT16_MAX)); break;
    case MOPT_DTYPE_U32: WRITE(uint32_t, f2i(d[i], 0, UINT32_MAX)); break;
    case MOPT_DTYPE_U64: WRITE(uint64_t, f2u64(d[i])); break;
    case MOPT_DTYPE_BOOL: WRITE(uint8_t, d[i] != 0); break;
    case MOPT_DTYPE_U4: WRITE(uint8_t, f2i4(d[i], 0, 15)); break;
    case MOPT_DTYPE_I4: WRITE(int8_t, f2i4(d[i], -8, 7)); break;
    case MOPT_DTYPE_U2: WRITE(uint8_t, f2i4(d[i], 0, 3)); break;
    case MOPT_DTYPE_I2: WRITE(int8_t, f2i4(d[i], -2, 1)); break;
    case MOPT_DTYPE_F4E2M1: WRITE(uint8_t, f4e2m1_from_f64(d[i])); break;
    case MOPT_DTYPE_F8E8M0: WRITE(uint8_t, e8m0_from_f64(d[i], saturate, round_mode)); break;
    default: break;
    }
}

/* integers: q holds int64 values (MID_I64) or uint64 bits (MID_U64);
 * narrowing goes through uint64 so that it wraps. */
static void write_from_int(mopt_dtype to, const int64_t *q, bool is_unsigned, void *y, int64_t off,
                           int64_t n, bool saturate, int round_mode) {
#define AS_DBL(v) (is_unsigned ? (double)(uint64_t)(v) : (double)(v))
    if (f8_is_float8(to)) {
        WRITE(uint8_t, f8_from_f64(to, AS_DBL(q[i]), saturate));
        return;
    }
    if (to == MOPT_DTYPE_F4E2M1) {
        WRITE(uint8_t, f4e2m1_from_f64(AS_DBL(q[i])));
        return;
    }
    if (to == MOPT_DTYPE_F8E8M0) {
        WRITE(uint8_t, e8m0_from_f64(AS_DBL(q[i]), saturate, round_mode));
        return;
    }
    switch (to) {
    case MOPT_DTYPE_F32:
        if (is_unsigned)
            WRITE(float, (float)(uint64_t)q[i]);
        else
            WRITE(float, (float)q[i]);
        break;
    case MOPT_DTYPE_F64: WRITE(double, AS_DBL(q[i])); break;
    case MOPT_DTYPE_F16: WRITE(uint16_t, half_from_f64(AS_DBL(q[i]))); break;
    case MOPT_DTYPE_BF16: WRITE(uint16_t, bf16_from_f64(AS_DBL(q[i]))); break;
    case MOPT_DTYPE_I8: WRITE(int8_t, (uint8_t)(uint64_t)q[i]); break;
    case MOPT_DTYPE_I16: WRITE(int16_t, (uint16_t)(uint64_t)q[i]); break;
    case MOPT_DTYPE_I32: WRITE(int32_t, (uint32_t)(uint64_t)q[i]); break;
    case MOPT_DTYPE_I64: WRITE(int64_t, q[i]); break;
    case MOPT_DTYPE_U8: WRITE(uint8_t, (uint64_t)q[i]); break;
    case MOPT_DTYPE_U16: WRITE(uint16_t, (uint64_t)q[i]); break;
    case MOPT_DTYPE_U32: WRITE(uint32_t, (uint64_t)q[i]); break;
    case MOPT_DTYPE_U64: WRITE(uint64_t, (uint64_t)q[i]); break;
    case MOPT_DTYPE_BOOL: WRITE(uint8_t, q[i] != 0); break;
    case MOPT_DTYPE_U4: WRITE(uint8_t, (uint64_t)q[i] & 15u); break;
    case MOPT_DTYPE_I4: WRITE(int8_t, I4((int64_t)((uint64_t)q[i] & 15u))); break;
    case MOPT_DTYPE_U2: WRITE(uint8_t, (uint64_t)q[i] & 3u); break;
    case MOPT_DTYPE_I2: WRITE(int8_t, I2((int64_t)((uint64_t)q[i] & 3u))); break;
    default: break;
    }
#undef AS_DBL
}

int ref_cast(mopt_dtype from, const void *x, mopt_dtype to, void *y, int64_t n) {
    return ref_cast_sat(from, x, to, y, n, true, F8E8M0_UP);
}

int ref_cast_sat(mopt_dtype from, const void *x, mopt_dtype to, void *y, int64_t n, bool saturate,
                 int round_mode) {
    if (!ref_cast_supported(from) || !ref_cast_supported(to)) return -1;
    if (from == to) {
        if (n > 0 && x != y) memcpy(y, x, (size_t)n * mopt_dtype_size(from));
        return 0;
    }
    if (from == MOPT_DTYPE_F32 && to == MOPT_DTYPE_BF16) { /* common: skip the detour */
        const float *s = x;
        uint16_t *o = y;
        for (int64_t i = 0; i < n; i++)
            o[i] = bf16_from_f32(s[i]);
        return 0;
    }
    double d[CHUNK];
    int64_t q[CHUNK];
    for (int64_t off = 0; off < n; off += CHUNK) {
        int64_t len = n - off < CHUNK ? n - off : CHUNK;
        mid_kind k = read_mid(from, x, off, len, d, q);
        if (k == MID_F64)
            write_from_f64(to, d, y, off, len, saturate, round_mode);
        else
            write_from_int(to, q, k == MID_U64, y, off, len, saturate, round_mode);
    }
    return 0;
}
