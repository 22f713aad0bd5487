/*
 * simd-avx2.h — the vector vocabulary of kernels/cpu (see simd-portable.h
 * for the contract every tier implements), for AVX2 + FMA: 8 float lanes,
 * masks as all-ones/all-zeros lanes. Only for files compiled with the AVX2
 * flags (kernels/meson.build), whose functions run only when cpu_get() says so.
 */
#ifndef MOPT_KERNELS_CPU_SIMD_AVX2_H
#define MOPT_KERNELS_CPU_SIMD_AVX2_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#define VW 8
#define CPU_CAT_(a, b) a##b
#define CPU_CAT(a, b) CPU_CAT_(a, b)
#define CPU_FN(base) CPU_CAT(base, _avx2)
#define CPU_HAVE_AVX2_TILE 1

typedef __m256 vf;
typedef __m256i vi;
typedef __m256 vm;

#define SIMD_X86 _mm256
#define SIMD_X86_CMP _mm256_cmp_ps /* a compare giving a vm */
#include "kernels/cpu/simd-x86.h"

static const int32_t k_tail_bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
static inline __m256i v_tail(int64_t n) {
    return _mm256_loadu_si256((const __m256i *)(const void *)(k_tail_bits + 8 - n));
}
static inline vf v_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void v_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
static inline vf v_load_n(const float *p, int64_t n) { return _mm256_maskload_ps(p, v_tail(n)); }
static inline void v_store_n(float *p, vf v, int64_t n) { _mm256_maskstore_ps(p, v_tail(n), v); }
static inline vf v_load_fill(const float *p, int64_t n, float fill) {
    const __m256i m = v_tail(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
static inline vf v_round(vf a) {
    return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vf v_asf(vi a) { return _mm256_castsi256_ps(a); }
static inline vm v_mor(vm a, vm b) { return _mm256_or_ps(a, b); }
static inline vm v_mnone(void) { return _mm256_setzero_ps(); }
static inline bool v_any(vm m) { return _mm256_movemask_ps(m) != 0; }
static inline vf v_sel(vm m, vf t, vf f) { return _mm256_blendv_ps(f, t, m); }
static inline __m128 v_half_fold(vf a, int op) {
    __m128 lo = _mm256_castps256_ps128(a), hi = _mm256_extractf128_ps(a, 1);
    return op == 0 ? _mm_add_ps(lo, hi) : op == 1 ? _mm_max_ps(lo, hi) : _mm_min_ps(lo, hi);
}
static inline float v_hsum(vf a) {
    __m128 s = v_half_fold(a, 0);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float v_hmax(vf a) {
    __m128 s = v_half_fold(a, 1);
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float v_hmin(vf a) {
    __m128 s = v_half_fold(a, 2);
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#endif
