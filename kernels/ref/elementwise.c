/*
 * elementwise.c — portable reference kernels for the "elementwise" op family
 * (declared in ref_elementwise.h): the broadcast drivers, binary arithmetic
 * row functions, unary math and Clip. Obvious and correct, but with the
 * cheap fast paths (axis collapsing, contiguous and scalar inner loops) that
 * let whole-model tests run through them. Never sees the IR.
 */
#include "kernels/ref/ref_elementwise.h"

#include <math.h>
#include <string.h>

/* ---- broadcast drivers -------------------------------------------------- */

#define MAXR MOPT_MAX_RANK

/* Collapsed iteration space for up to 3 operands: size-1 axes dropped,
 * neighbouring axes merged when every operand walks them as one (rank >= 1
 * after plan_make, which returns the element count, 0 for empty outputs). */
typedef struct bplan {
    int32_t rank;
    int64_t dims[MAXR];
    int64_t st[3][MAXR];
} bplan;

static int64_t plan_make(bplan *p, int n_ops, int32_t rank, const int64_t *dims,
                         const int64_t *const *strides) {
    int64_t numel = 1;
    int32_t r = 0;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 0) return 0;
        numel *= dims[i];
        if (dims[i] == 1) continue;
        bool merge = r > 0;
        for (int k = 0; k < n_ops && merge; k++)
            if (p->st[k][r - 1] != strides[k][i] * dims[i]) merge = false;
        if (merge) {
            p->dims[r - 1] *= dims[i];
            for (int k = 0; k < n_ops; k++)
                p->st[k][r - 1] = strides[k][i];
        } else {
            p->dims[r] = dims[i];
            for (int k = 0; k < n_ops; k++)
                p->st[k][r] = strides[k][i];
            r++;
        }
    }
    if (r == 0) {
        p->dims[0] = 1;
        for (int k = 0; k < n_ops; k++)
            p->st[k][0] = 0;
        r = 1;
    }
    p->rank = r;
    return numel;
}

/* Advances the outer-axis counter (all axes but the last) and the operands'
 * element offsets. */
static void plan_step(const bplan *p, int n_ops, int64_t *idx, int64_t *off) {
    for (int32_t d = p->rank - 2; d >= 0; d--) {
        idx[d]++;
        for (int k = 0; k < n_ops; k++)
            off[k] += p->st[k][d];
        if (idx[d] < p->dims[d]) return;
        for (int k = 0; k < n_ops; k++)
            off[k] -= p->st[k][d] * p->dims[d];
        idx[d] = 0;
    }
}

void ref_broadcast2(ref_row2_fn row, int32_t rank, const int64_t *dims, const void *a, size_t a_esz,
                    const int64_t *a_strides, const void *b, size_t b_esz, const int64_t *b_strides,
                    void *y, size_t y_esz) {
    bplan p;
    const int64_t *st[2] = {a_strides, b_strides};
    int64_t numel = plan_make(&p, 2, rank, dims, st);
    if (numel == 0) return;
    int64_t inner = p.dims[p.rank - 1];
    int64_t sa = p.st[0][p.rank - 1], sb = p.st[1][p.rank - 1];
    int64_t outer = numel / inner;
    int64_t idx[MAXR] = {0}, off[2] = {0, 0};
    const char *pa = a, *pb = b;
    char *py = y;
    for (int64_t o = 0; o < outer; o++) {
        row(pa + off[0] * (int64_t)a_esz, sa, pb + off[1] * (int64_t)b_esz, sb,
            py + o * inner * (int64_t)y_esz, inner);
        plan_step(&p, 2, idx, off);
    }
}

void ref_broadcast3(ref_row3_fn row, int32_t rank, const int64_t *dims, const void *a, size_t a_esz,
                    const int64_t *a_strides, const void *b, size_t b_esz, const int64_t *b_strides,
                    const void *c, size_t c_esz, const int64_t *c_strides, void *y, size_t y_esz) {
    bplan p;
    const int64_t *st[3] = {a_strides, b_strides, c_strides};
    int64_t numel = plan_make(&p, 3, rank, dims, st);
    if (numel == 0) return;
    int32_t last = p.rank - 1;
    int64_t inner = p.dims[last];
    int64_t outer = numel / inner;
    int64_t idx[MAXR] = {0}, off[3] = {0, 0, 0};
    const char *pa = a, *pb = b, *pc = c;
    char *py = y;
    for (int64_t o = 0; o < outer; o++) {
        row(pa + off[0] * (int64_t)a_esz, p.st[0][last], pb + off[1] * (int64_t)b_esz,
            p.st[1][last], pc + off[2] * (int64_t)c_esz, p.st[2][last],
            py + o * inner * (int64_t)y_esz, inner);
        plan_step(&p, 3, idx, off);
    }
}

/* ---- binary row functions ----------------------------------------------- */

/* NaN-propagating min/max (numpy.minimum / numpy.maximum). */
#define FMIN_NAN(x, z) (((x) < (z) || (x) != (x)) ? (x) : (z))
#define FMAX_NAN(x, z) (((x) > (z) || (x) != (x)) ? (x) : (z))

/* Floating remainder with the sign of the divisor (numpy.mod). */
static float pymod_f32(float x, float z) {
    float r = fmodf(x, z);
    if (r != 0 && ((r < 0) != (z < 0))) r += z;
    return r;
}
static double pymod_f64(double x, double z) {
    double r = fmod(x, z);
    if (r != 0 && ((r < 0) != (z < 0))) r += z;
    return r;
}

#define FLOAT_BINARY_ROWS(T, SFX, FMODFN, POWFN, MODFN)                                            \
    REF_ROW2(add_##SFX, T, T, T, x + z)                                                            \
    REF_ROW2(sub_##SFX, T, T, T, x - z)                                                            \
    REF_ROW2(mul_##SFX, T, T, T, x *z)                                                             \
    REF_ROW2(div_##SFX, T, T, T, x / z)                                                            \
    REF_ROW2(min_##SFX, T, T, T, FMIN_NAN(x, z))                                                   \
    REF_ROW2(max_##SFX, T, T, T, FMAX_NAN(x, z))                                                   \
    REF_ROW2(mod_##SFX, T, T, T, MODFN(x, z))                                                      \
    REF_ROW2(fmod_##SFX, T, T, T, FMODFN(x, z))                                                    \
    REF_ROW2(prelu_##SFX, T, T, T, x < 0 ? x * z : x)                                              \
    REF_ROW2(pow_##SFX, T, T, T, POWFN(x, z))

FLOAT_BINARY_ROWS(float, f32, fmodf, powf, pymod_f32)
FLOAT_BINARY_ROWS(double, f64, fmod, pow, pymod_f64)

/* Pow with an exponent of another type: computed in double, rounded once. */
REF_ROW2(pow_f32_f64, float, double, float, (float)pow((double)x, z))
REF_ROW2(pow_f32_i64, float, int64_t, float, (float)pow((double)x, (double)z))
REF_ROW2(pow_f32_i32, float, int32_t, float, (float)pow((double)x, (double)z))
REF_ROW2(pow_f64_f32, double, float, double, pow(x, (double)z))
REF_ROW2(pow_f64_i64, double, int64_t, double, pow(x, (double)z))
REF_ROW2(pow_f64_i32, double, int32_t, double, pow(x, (double)z))

/* Integer arithmetic goes through the unsigned type so that overflow wraps
 * (as in numpy) instead of being undefined behaviour. Division and
 * remainder by zero give 0 rather than trapping (a documented choice: ONNX
 * leaves it undefined); MIN / -1 wraps to MIN and MIN % -1 is 0. */
#define INT_DIV(T, U, x, z) ((z) == 0 ? (T)0 : (z) == -1 ? (T)(0 - (U)(x)) : (T)((x) / (z)))
#define INT_FMOD(x, z) (((z) == 0 || (z) == -1) ? 0 : (x) % (z))

static int32_t pymod_i32(int32_t x, int32_t z) {
    if (z == 0 || z == -1) return 0;
    int32_t r = x % z;
    if (r != 0 && ((r < 0) != (z < 0))) r += z;
    return r;
}
static int64_t pymod_i64(int64_t x, int64_t z) {
    if (z == 0 || z == -1) return 0;
    int64_t r = x % z;
    if (r != 0 && ((r < 0) != (z < 0))) r += z;
    return r;
}

#define INT_BINARY_ROWS(T, U, SFX)                                                                 \
    REF_ROW2(add_##SFX, T, T, T, (T)((U)x + (U)z))                                                 \
    REF_ROW2(sub_##SFX, T, T, T, (T)((U)x - (U)z))                                                 \
    REF_ROW2(mul_##SFX, T, T, T, (T)((U)x * (U)z))                                                 \
    REF_ROW2(div_##SFX, T, T, T, INT_DIV(T, U, x, z))                                              \
    REF_ROW2(min_##SFX, T, T, T, x < z ? x : z)                                                    \
    REF_ROW2(max_##SFX, T, T, T, x > z ? x : z)                                                    \
    REF_ROW2(mod_##SFX, T, T, T, pymod_##SFX(x, z))                                                \
    REF_ROW2(fmod_##SFX, T, T, T, (T)INT_FMOD(x, z))

INT_BINARY_ROWS(int32_t, uint32_t, i32)
INT_BINARY_ROWS(int64_t, uint64_t, i64)

/* u64 (numpy semantics; x / 0 and x % 0 give 0). */
static uint64_t umod_u64(uint64_t x, uint64_t z) { return z == 0 ? 0 : x % z; }
static uint64_t udiv_u64(uint64_t x, uint64_t z) { return z == 0 ? 0 : x / z; }
REF_ROW2(add_u64, uint64_t, uint64_t, uint64_t, x + z)
REF_ROW2(sub_u64, uint64_t, uint64_t, uint64_t, x - z)
REF_ROW2(mul_u64, uint64_t, uint64_t, uint64_t, x *z)
REF_ROW2(div_u64, uint64_t, uint64_t, uint64_t, udiv_u64(x, z))
REF_ROW2(min_u64, uint64_t, uint64_t, uint64_t, x < z ? x : z)
REF_ROW2(max_u64, uint64_t, uint64_t, uint64_t, x > z ? x : z)
REF_ROW2(mod_u64, uint64_t, uint64_t, uint64_t, umod_u64(x, z))
REF_ROW2(fmod_u64, uint64_t, uint64_t, uint64_t, umod_u64(x, z))

/* Pow with unsigned exponents, and integer bases (computed in double, exact
 * while the result fits 53 bits; then converted like numpy's astype). */
static int64_t ipow_i64(int64_t x, double z) {
    double r = pow((double)x, z);
    if (!(r == r)) return 0;
    if (r >= 9223372036854775807.0) return INT64_MAX;
    if (r <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)r;
}
REF_ROW2(pow_f32_u32, float, uint32_t, float, (float)pow((double)x, (double)z))
REF_ROW2(pow_f32_u64, float, uint64_t, float, (float)pow((double)x, (double)z))
REF_ROW2(pow_i64_i64, int64_t, int64_t, int64_t, ipow_i64(x, (double)z))
REF_ROW2(pow_i64_f32, int64_t, float, int64_t, ipow_i64(x, (double)z))
REF_ROW2(pow_i32_i32, int32_t, int32_t, int32_t, (int32_t)ipow_i64(x, (double)z))
REF_ROW2(pow_i32_f32, int32_t, float, int32_t, (int32_t)ipow_i64(x, (double)z))

ref_row2_fn ref_binary_row(ref_binop op, mopt_dtype a, mopt_dtype b) {
    if (op == REF_BIN_POW) {
        if (a == MOPT_DTYPE_F32) {
            switch (b) {
            case MOPT_DTYPE_F32: return pow_f32;
            case MOPT_DTYPE_F64: return pow_f32_f64;
            case MOPT_DTYPE_I64: return pow_f32_i64;
            case MOPT_DTYPE_I32: return pow_f32_i32;
            case MOPT_DTYPE_U32: return pow_f32_u32;
            case MOPT_DTYPE_U64: return pow_f32_u64;
            default: return NULL;
            }
        }
        if (a == MOPT_DTYPE_I64 && b == MOPT_DTYPE_I64) return pow_i64_i64;
        if (a == MOPT_DTYPE_I64 && b == MOPT_DTYPE_F32) return pow_i64_f32;
        if (a == MOPT_DTYPE_I32 && b == MOPT_DTYPE_I32) return pow_i32_i32;
        if (a == MOPT_DTYPE_I32 && b == MOPT_DTYPE_F32) return pow_i32_f32;
        if (a == MOPT_DTYPE_F64) {
            switch (b) {
            case MOPT_DTYPE_F64: return pow_f64;
            case MOPT_DTYPE_F32: return pow_f64_f32;
            case MOPT_DTYPE_I64: return pow_f64_i64;
            case MOPT_DTYPE_I32: return pow_f64_i32;
            default: return NULL;
            }
        }
        return NULL;
    }
    if (a != b) return NULL;
#define PICK(SFX)                                                                                  \
    switch (op) {                                                                                  \
    case REF_BIN_ADD: return add_##SFX;                                                            \
    case REF_BIN_SUB: return sub_##SFX;                                                            \
    case REF_BIN_MUL: return mul_##SFX;                                                            \
    case REF_BIN_DIV: return div_##SFX;                                                            \
    case REF_BIN_MIN: return min_##SFX;                                                            \
    case REF_BIN_MAX: return max_##SFX;                                                            \
    case REF_BIN_MOD: return mod_##SFX;                                                            \
    case REF_BIN_FMOD: return fmod_##SFX;                                                          \
    default: break;                                                                                \
    }
    switch (a) {
    case MOPT_DTYPE_F32:
        if (op == REF_BIN_PRELU) return prelu_f32;
        PICK(f32)
        return NULL;
    case MOPT_DTYPE_F64:
        if (op == REF_BIN_PRELU) return prelu_f64;
        PICK(f64)
        return NULL;
    case MOPT_DTYPE_I32: PICK(i32) return NULL;
    case MOPT_DTYPE_I64: PICK(i64) return NULL;
    case MOPT_DTYPE_U64: PICK(u64) return NULL;
    default: return NULL;
    }
#undef PICK
}

/* ---- unary -------------------------------------------------------------- */

/* M(fn) picks the float (fnf) or double (fn) libm function. */
#define MF(fn) fn##f
#define MD(fn) fn

/* One unary loop over x[0..n) into y; elem_t is typedef'd by the enclosing
 * function to its element type. */
#define LOOP(EXPR)                                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                              \
        elem_t v = x[i];                                                                           \
        y[i] = (EXPR);                                                                             \
    }                                                                                              \
    return 0

/* Sigmoid without overflow for large |v|. */
#define SIGMOID(M, T, v) ((v) >= 0 ? (T)1 / ((T)1 + M(exp)(-(v))) : M(exp)(v) / ((T)1 + M(exp)(v)))
/* log(1 + exp(v)) without overflow. */
#define SOFTPLUS(M, T, v) ((v) > 0 ? (v) + M(log1p)(M(exp)(-(v))) : M(log1p)(M(exp)(v)))
#define CLAMP01(T, t) ((t) < 0 ? (T)0 : ((t) > 1 ? (T)1 : (t)))

#define FLOAT_UNARY(name, T, M)                                                                    \
    static int name(ref_unop op, const T *x, T *y, int64_t n, const ref_unary_params *p) {         \
        typedef T elem_t;                                                                          \
        const T al = (T)p->alpha, be = (T)p->beta, ga = (T)p->gamma;                               \
        switch (op) {                                                                              \
        case REF_UN_SQRT: LOOP(M(sqrt)(v));                                                        \
        case REF_UN_EXP: LOOP(M(exp)(v));                                                          \
        case REF_UN_LOG: LOOP(M(log)(v));                                                          \
        case REF_UN_NEG: LOOP(-v);                                                                 \
        case REF_UN_ABS: LOOP(M(fabs)(v));                                                         \
        case REF_UN_RECIPROCAL: LOOP((T)1 / v);                                                    \
        case REF_UN_ERF: LOOP(M(erf)(v));                                                          \
        case REF_UN_TANH: LOOP(M(tanh)(v));                                                        \
        case REF_UN_RELU: LOOP(v < 0 ? (T)0 : v);                                                  \
        case REF_UN_LEAKY_RELU: LOOP(v < 0 ? al * v : v);                                          \
        case REF_UN_SIGMOID: LOOP(SIGMOID(M, T, v));                                               \
        case REF_UN_HARD_SIGMOID: LOOP(CLAMP01(T, al *v + be));                                    \
        case REF_UN_HARD_SWISH: LOOP(v *CLAMP01(T, v *(T)(1.0 / 6.0) + (T)0.5));                   \
        case REF_UN_FLOOR: LOOP(M(floor)(v));                                                      \
        case REF_UN_CEIL: LOOP(M(ceil)(v));                                                        \
        case REF_UN_ROUND: LOOP(M(nearbyint)(v));                                                  \
        case REF_UN_SIGN: LOOP(v > 0 ? (T)1 : (v < 0 ? (T)-1 : v));                                \
        case REF_UN_SIN: LOOP(M(sin)(v));                                                          \
        case REF_UN_COS: LOOP(M(cos)(v));                                                          \
        case REF_UN_ELU: LOOP(v < 0 ? al * M(expm1)(v) : v);                                       \
        case REF_UN_SELU: LOOP(v > 0 ? ga * v : ga * al * M(expm1)(v));                            \
        case REF_UN_SOFTPLUS: LOOP(SOFTPLUS(M, T, v));                                             \
        case REF_UN_SOFTSIGN: LOOP(v / ((T)1 + M(fabs)(v)));                                       \
        case REF_UN_CELU: LOOP(v > 0 ? v : al * M(expm1)(v / al));                                 \
        case REF_UN_THRESHOLDED_RELU: LOOP(v > al ? v : (T)0);                                     \
        case REF_UN_GELU: LOOP((T)0.5 * v * ((T)1 + M(erf)(v * (T)0.70710678118654752440)));       \
        case REF_UN_GELU_TANH:                                                                     \
            LOOP((T)0.5 * v *                                                                      \
                 ((T)1 + M(tanh)((T)0.79788456080286535588 * (v + (T)0.044715 * v * v * v))));     \
        case REF_UN_MISH: LOOP(v *M(tanh)(SOFTPLUS(M, T, v)));                                     \
        case REF_UN_TAN: LOOP(M(tan)(v));                                                          \
        case REF_UN_ATAN: LOOP(M(atan)(v));                                                        \
        case REF_UN_ASIN: LOOP(M(asin)(v));                                                        \
        case REF_UN_ACOS: LOOP(M(acos)(v));                                                        \
        case REF_UN_SINH: LOOP(M(sinh)(v));                                                        \
        case REF_UN_COSH: LOOP(M(cosh)(v));                                                        \
        case REF_UN_ASINH: LOOP(M(asinh)(v));                                                      \
        case REF_UN_ACOSH: LOOP(M(acosh)(v));                                                      \
        case REF_UN_ATANH: LOOP(M(atanh)(v));                                                      \
        case REF_UN_COUNT: break;                                                                  \
        }                                                                                          \
        return -1;                                                                                 \
    }

FLOAT_UNARY(unary_f32, float, MF)
FLOAT_UNARY(unary_f64, double, MD)

#define INT_UNARY(name, T, U)                                                                      \
    static int name(ref_unop op, const T *x, T *y, int64_t n) {                                    \
        typedef T elem_t;                                                                          \
        switch (op) {                                                                              \
        case REF_UN_NEG: LOOP((T)(0 - (U)v));                                                      \
        case REF_UN_ABS: LOOP(v < 0 ? (T)(0 - (U)v) : v);                                          \
        case REF_UN_SIGN: LOOP((T)((v > 0) - (v < 0)));                                            \
        case REF_UN_RELU: LOOP(v < 0 ? (T)0 : v);                                                  \
        default: break;                                                                            \
        }                                                                                          \
        return -1;                                                                                 \
    }

INT_UNARY(unary_i32, int32_t, uint32_t)
INT_UNARY(unary_i64, int64_t, uint64_t)

bool ref_unary_supported(ref_unop op, mopt_dtype dtype) {
    if (op < 0 || op >= REF_UN_COUNT) return false;
    switch (dtype) {
    case MOPT_DTYPE_F32:
    case MOPT_DTYPE_F64: return true;
    case MOPT_DTYPE_I32:
    case MOPT_DTYPE_I64:
        return op == REF_UN_NEG || op == REF_UN_ABS || op == REF_UN_SIGN || op == REF_UN_RELU;
    default: return false;
    }
}

int ref_unary(ref_unop op, mopt_dtype dtype, const void *x, void *y, int64_t n,
              const ref_unary_params *p) {
    static const ref_unary_params none = {0.0f, 0.0f, 0.0f};
    if (!p) p = &none;
    if (!ref_unary_supported(op, dtype)) return -1;
    switch (dtype) {
    case MOPT_DTYPE_F32: return unary_f32(op, x, y, n, p);
    case MOPT_DTYPE_F64: return unary_f64(op, x, y, n, p);
    case MOPT_DTYPE_I32: return unary_i32(op, x, y, n);
    case MOPT_DTYPE_I64: return unary_i64(op, x, y, n);
    default: return -1;
    }
}

/* ---- Clip --------------------------------------------------------------- */

#define CLIP_LOOP(T, LO, HI)                                                                       \
    do {                                                                                           \
        const T *x = px;                                                                           \
        T *y = py;                                                                                 \
        const T lo = (LO), hi = (HI);                                                              \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T v = x[i];                                                                            \
            if (p->has_lo && v < lo) v = lo;                                                       \
            if (p->has_hi && v > hi) v = hi;                                                       \
            y[i] = v;                                                                              \
        }                                                                                          \
    } while (0)

/* Integer bounds beyond the type's range clamp to it (a bound of 300 on u8
 * data clips nothing). */
static int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

int ref_clip(mopt_dtype dtype, const void *px, void *py, int64_t n, const ref_clip_params *p) {
    switch (dtype) {
    case MOPT_DTYPE_F32: CLIP_LOOP(float, (float)p->lo, (float)p->hi); return 0;
    case MOPT_DTYPE_F64: CLIP_LOOP(double, p->lo, p->hi); return 0;
    case MOPT_DTYPE_I64: CLIP_LOOP(int64_t, p->ilo, p->ihi); return 0;
    case MOPT_DTYPE_I32:
        CLIP_LOOP(int32_t, (int32_t)clamp_i64(p->ilo, INT32_MIN, INT32_MAX),
                  (int32_t)clamp_i64(p->ihi, INT32_MIN, INT32_MAX));
        return 0;
    case MOPT_DTYPE_I8:
        CLIP_LOOP(int8_t, (int8_t)clamp_i64(p->ilo, INT8_MIN, INT8_MAX),
                  (int8_t)clamp_i64(p->ihi, INT8_MIN, INT8_MAX));
        return 0;
    case MOPT_DTYPE_U8:
        CLIP_LOOP(uint8_t, (uint8_t)clamp_i64(p->ilo, 0, UINT8_MAX),
                  (uint8_t)clamp_i64(p->ihi, 0, UINT8_MAX));
        return 0;
    default: return -1;
    }
}

void ref_swiglu(int64_t n, double alpha, const float *a, const float *b, float *y) {
    for (int64_t i = 0; i < n; i++) {
        float sg = (float)(1.0 / (1.0 + exp(-alpha * a[i])));
        y[i] = (a[i] * sg) * b[i];
    }
}
