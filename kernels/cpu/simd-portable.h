/*
 * simd-portable.h — the vector vocabulary of kernels/cpu for any CPU, with
 * GCC/Clang vector extensions (4 float lanes: SSE2 on x86-64, NEON on arm64),
 * and the contract the AVX2 and AVX-512 tiers implement alike:
 *
 *   VW lanes; vf floats, vi int32s, vm lane masks; CPU_FN(name) appends the
 *   tier suffix (_portable, _avx2, _avx512).
 *   v_load/v_store (unaligned), v_load_n/v_store_n (n < VW lanes; the others
 *   read as 0 and are not written), v_load_fill (the others read as fill),
 *   v_set1, v_zero, arithmetic, v_fmadd(a,b,c) = a*b+c, v_fnmadd(a,b,c) =
 *   c-a*b, v_max(a,b) = a > b ? a : b and v_min(a,b) = a < b ? a : b exactly (so the second operand
 * wins when either is NaN: callers order operands for the NaN rule they need), v_round (to nearest
 *   even; here valid for |x| < 2^22, which is all vmath.h asks), v_cvt (of
 *   integral values), masks from v_lt/v_gt/v_isnan, v_sel(m, t, f), horizontal
 *   v_hsum/v_hmax/v_hmin (NaN-unaware).
 */
#ifndef MOPT_KERNELS_CPU_SIMD_PORTABLE_H
#define MOPT_KERNELS_CPU_SIMD_PORTABLE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define VW 4
#define CPU_CAT_(a, b) a##b
#define CPU_CAT(a, b) CPU_CAT_(a, b)
#define CPU_FN(base) CPU_CAT(base, _portable)

typedef float vf __attribute__((vector_size(16)));
typedef int32_t vi __attribute__((vector_size(16)));
typedef vi vm;

static inline vf v_load(const float *p) {
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void v_store(float *p, vf v) { memcpy(p, &v, sizeof v); }
static inline vf v_load_n(const float *p, int64_t n) {
    vf v = {0, 0, 0, 0};
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}
static inline vf v_load_fill(const float *p, int64_t n, float fill) {
    vf v = {fill, fill, fill, fill};
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}
static inline void v_store_n(float *p, vf v, int64_t n) {
    memcpy(p, &v, (size_t)n * sizeof(float));
}
static inline vf v_set1(float x) { return (vf){x, x, x, x}; }
static inline vf v_zero(void) { return v_set1(0.0f); }
static inline vf v_add(vf a, vf b) { return a + b; }
static inline vf v_sub(vf a, vf b) { return a - b; }
static inline vf v_mul(vf a, vf b) { return a * b; }
static inline vf v_div(vf a, vf b) { return a / b; }
static inline vf v_fmadd(vf a, vf b, vf c) { return a * b + c; }
static inline vf v_fnmadd(vf a, vf b, vf c) { return c - a * b; }
static inline vi v_asi(vf a) { return (vi)a; }
static inline vf v_asf(vi a) { return (vf)a; }
static inline vf v_sel(vm m, vf t, vf f) { return v_asf((v_asi(t) & m) | (v_asi(f) & ~m)); }
static inline vm v_lt(vf a, vf b) { return (vm)(a < b); }
static inline vm v_gt(vf a, vf b) { return (vm)(a > b); }
static inline vm v_isnan(vf a) { return (vm)(a != a); }
static inline vm v_mor(vm a, vm b) { return a | b; }
static inline vm v_mnone(void) { return (vm){0, 0, 0, 0}; }
static inline bool v_any(vm m) { return (m[0] | m[1] | m[2] | m[3]) != 0; }
static inline vf v_max(vf a, vf b) { return v_sel(v_gt(a, b), a, b); }
static inline vf v_min(vf a, vf b) { return v_sel(v_lt(a, b), a, b); }
static inline vf v_sqrt(vf a) { return (vf){sqrtf(a[0]), sqrtf(a[1]), sqrtf(a[2]), sqrtf(a[3])}; }
static inline vf v_and(vf a, vf b) { return v_asf(v_asi(a) & v_asi(b)); }
static inline vf v_andnot(vf a, vf b) { return v_asf(~v_asi(a) & v_asi(b)); }
static inline vf v_or(vf a, vf b) { return v_asf(v_asi(a) | v_asi(b)); }
static inline vf v_xor(vf a, vf b) { return v_asf(v_asi(a) ^ v_asi(b)); }
static inline vf v_round(vf a) {
    const vf magic = v_set1(12582912.0f); /* 1.5 * 2^23 */
    return (a + magic) - magic;
}
static inline vi v_cvt(vf a) { return __builtin_convertvector(a, vi); }
static inline vi v_iadd(vi a, vi b) { return a + b; }
static inline vi v_isub(vi a, vi b) { return a - b; }
static inline vi v_iset1(int32_t x) { return (vi){x, x, x, x}; }
static inline vi v_ihalf(vi a) { return a >> 1; }
static inline vi v_ishl23(vi a) { return a << 23; }
static inline float v_hsum(vf a) { return (a[0] + a[1]) + (a[2] + a[3]); }
static inline float v_hmax(vf a) {
    float x = a[0] > a[1] ? a[0] : a[1], y = a[2] > a[3] ? a[2] : a[3];
    return x > y ? x : y;
}
static inline float v_hmin(vf a) {
    float x = a[0] < a[1] ? a[0] : a[1], y = a[2] < a[3] ? a[2] : a[3];
    return x < y ? x : y;
}

#endif
