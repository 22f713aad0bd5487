/*
 * float8.c — 8-bit float conversions (rules in float8.h). Written from the
 * ONNX Cast specification: each format is described by its mantissa width,
 * exponent bias and how it spells NaN and infinity.
 */
#include "core/float8.h"

#include <math.h>

typedef enum f8_kind {
    F8_FN,   /* E4M3FN: no infinity, NaN = S.1111.111, has -0 */
    F8_FNUZ, /* no infinity, no -0, NaN = 0x80 */
    F8_IEEE, /* E5M2: infinities and NaNs as IEEE 754 */
} f8_kind;

typedef struct f8_format {
    int mbits; /* mantissa bits (exponent bits = 7 - mbits) */
    int bias;
    f8_kind kind;
    uint8_t max_code; /* largest finite magnitude, sign bit clear */
} f8_format;

static f8_format format_of(mopt_dtype t) {
    switch (t) {
    case MOPT_DTYPE_F8E4M3FN: return (f8_format){3, 7, F8_FN, 0x7E};
    case MOPT_DTYPE_F8E4M3FNUZ: return (f8_format){3, 8, F8_FNUZ, 0x7F};
    case MOPT_DTYPE_F8E5M2: return (f8_format){2, 15, F8_IEEE, 0x7B};
    default: return (f8_format){2, 16, F8_FNUZ, 0x7F}; /* MOPT_DTYPE_F8E5M2FNUZ */
    }
}

bool f8_is_float8(mopt_dtype t) {
    return t == MOPT_DTYPE_F8E4M3FN || t == MOPT_DTYPE_F8E4M3FNUZ || t == MOPT_DTYPE_F8E5M2 ||
           t == MOPT_DTYPE_F8E5M2FNUZ;
}

/* The magnitude of the code c (sign bit clear, not NaN/inf). */
static double magnitude(const f8_format *f, unsigned c) {
    unsigned e = c >> f->mbits, m = c & ((1u << f->mbits) - 1);
    if (e == 0) return ldexp((double)m, 1 - f->bias - f->mbits);
    return ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits);
}

float f8_to_f32(mopt_dtype t, uint8_t v) {
    f8_format f = format_of(t);
    unsigned mag = v & 0x7Fu;
    bool neg = (v & 0x80u) != 0;
    switch (f.kind) {
    case F8_FN:
        if (mag == 0x7F) return neg ? -NAN : NAN;
        break;
    case F8_FNUZ:
        if (v == 0x80) return NAN;
        break;
    case F8_IEEE:
        if ((mag >> f.mbits) == 31) {
            if ((mag & 3u) == 0) return neg ? -INFINITY : INFINITY;
            return neg ? -NAN : NAN;
        }
        break;
    }
    double a = magnitude(&f, mag);
    return (float)(neg ? -a : a);
}

double f8_max(mopt_dtype t) {
    f8_format f = format_of(t);
    return magnitude(&f, f.max_code);
}

/* a (finite, >= 0) rounded to the format's grid, ties to even; may exceed
 * the largest finite value. */
static double round_to_grid(const f8_format *f, double a) {
    int emin = 1 - f->bias; /* exponent of the smallest normal */
    int e;
    (void)frexp(a, &e); /* a = frac * 2^e, frac in [0.5, 1) */
    int ex = e - 1;     /* a in [2^ex, 2^(ex+1)) */
    if (ex < emin) ex = emin;
    int q = ex - f->mbits; /* the grid step is 2^q */
    double n = ldexp(a, -q), r = floor(n), rest = n - r;
    if (rest > 0.5 || (rest == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
    return ldexp(r, q);
}

/* The code of v, a value on the grid within range (sign bit clear). */
static uint8_t encode(const f8_format *f, double v) {
    int emin = 1 - f->bias;
    if (v < ldexp(1.0, emin)) return (uint8_t)ldexp(v, f->mbits - emin); /* subnormal */
    int e;
    (void)frexp(v, &e);
    int ex = e - 1;
    unsigned m = (unsigned)ldexp(v, f->mbits - ex) - (1u << f->mbits);
    return (uint8_t)(((unsigned)(ex + f->bias) << f->mbits) | m);
}

float f4e2m1_to_f32(uint8_t v) {
    static const f8_format f = {1, 1, F8_FNUZ, 0x7};
    double a = magnitude(&f, v & 7u);
    return (float)((v & 8u) ? -a : a);
}

uint8_t f4e2m1_from_f64(double x) {
    static const f8_format f = {1, 1, F8_FNUZ, 0x7};
    if (isnan(x)) return 0x8;
    uint8_t sign = signbit(x) ? 0x8 : 0;
    double a = fabs(x), r = isinf(a) ? a : round_to_grid(&f, a);
    if (r > 6.0) return (uint8_t)(sign | 0x7);
    if (r == 0) return sign;
    return (uint8_t)(sign | encode(&f, r));
}

float e8m0_to_f32(uint8_t v) { return v == 0xFF ? NAN : ldexpf(1.0f, (int)v - 127); }

uint8_t e8m0_from_f64(double x, bool saturate, int round_mode) {
    if (isnan(x) || x < 0) return 0xFF;
    if (isinf(x)) return saturate ? 0xFE : 0xFF;
    if (x == 0) return 0;
    int e;
    double frac = frexp(x, &e) * 2; /* x = frac * 2^(e-1), frac in [1, 2) */
    int k = e - 1;
    if (frac > 1.0) {
        if (round_mode == F8E8M0_UP)
            k++;
        else if (round_mode == F8E8M0_NEAREST &&
                 (frac > 1.5 || (frac == 1.5 && (k + 127) % 2 != 0)))
            k++;
    }
    int code = k + 127;
    if (code < 0) return 0;
    if (code > 254) return saturate ? 0xFE : 0xFF;
    return (uint8_t)code;
}

uint8_t f8_from_f64(mopt_dtype t, double x, bool saturate) {
    f8_format f = format_of(t);
    uint8_t sign = signbit(x) ? 0x80 : 0;
    if (isnan(x)) {
        if (f.kind == F8_FNUZ) return 0x80;
        return (uint8_t)(sign | (f.kind == F8_FN ? 0x7F : 0x7E));
    }
    double a = fabs(x);
    double r = isinf(a) ? a : round_to_grid(&f, a);
    if (r > magnitude(&f, f.max_code)) {
        if (saturate) return (uint8_t)(sign | f.max_code);
        switch (f.kind) {
        case F8_FN: return (uint8_t)(sign | 0x7F);
        case F8_FNUZ: return 0x80;
        case F8_IEEE: return (uint8_t)(sign | 0x7C);
        }
    }
    if (r == 0) return f.kind == F8_FNUZ ? 0 : sign;
    return (uint8_t)(sign | encode(&f, r));
}
