/*
 * simd-avx512.h — the vector vocabulary of kernels/cpu (see simd-portable.h
 * for the contract every tier implements), for AVX-512F/BW/VL/DQ: 16 float
 * lanes, __mmask16 masks. Only for files compiled with the AVX-512 flags
 * (kernels/meson.build), whose functions run only when cpu_get() says so.
 */
#ifndef MOPT_KERNELS_CPU_SIMD_AVX512_H
#define MOPT_KERNELS_CPU_SIMD_AVX512_H

#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#define VW 16
#define CPU_CAT_(a, b) a##b
#define CPU_CAT(a, b) CPU_CAT_(a, b)
#define CPU_FN(base) CPU_CAT(base, _avx512)
#define CPU_HAVE_AVX2_TILE 1

typedef __m512 vf;
typedef __m512i vi;
typedef __mmask16 vm;

#define SIMD_X86 _mm512
#define SIMD_X86_CMP _mm512_cmp_ps_mask /* a compare giving a vm */
#include "kernels/cpu/simd-x86.h"

/* 16 vectors -> the vector of their 16 horizontal sums: pairs interleaved
 * and added (two sums per 128-bit lane each), then four per lane, then the
 * lanes folded (45 shuffles and adds) */
static inline vf v_hsums16(const vf *x) {
    __m512 t[8], u[4];
    for (int i = 0; i < 8; i++)
        t[i] = _mm512_add_ps(_mm512_unpacklo_ps(x[2 * i], x[2 * i + 1]),
                             _mm512_unpackhi_ps(x[2 * i], x[2 * i + 1]));
    for (int i = 0; i < 4; i++)
        u[i] = _mm512_add_ps(_mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0x44),
                             _mm512_shuffle_ps(t[2 * i], t[2 * i + 1], 0xee));
    const __m512 w01 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x88),
                                     _mm512_shuffle_f32x4(u[0], u[1], 0xdd));
    const __m512 w23 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x88),
                                     _mm512_shuffle_f32x4(u[2], u[3], 0xdd));
    return _mm512_add_ps(_mm512_shuffle_f32x4(w01, w23, 0x88),
                         _mm512_shuffle_f32x4(w01, w23, 0xdd));
}

static inline vm v_tail(int64_t n) { return (vm)((1u << n) - 1u); }
static inline vf v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void v_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline vf v_load_n(const float *p, int64_t n) { return _mm512_maskz_loadu_ps(v_tail(n), p); }
static inline void v_store_n(float *p, vf v, int64_t n) { _mm512_mask_storeu_ps(p, v_tail(n), v); }
static inline vf v_load_fill(const float *p, int64_t n, float fill) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), v_tail(n), p);
}
static inline vf v_round(vf a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
static inline vf v_asf(vi a) { return _mm512_castsi512_ps(a); }
static inline vm v_mor(vm a, vm b) { return (vm)(a | b); }
static inline vm v_mnone(void) { return (vm)0; }
static inline bool v_any(vm m) { return m != 0; }
static inline vf v_sel(vm m, vf t, vf f) { return _mm512_mask_blend_ps(m, f, t); }
static inline float v_hsum(vf a) { return _mm512_reduce_add_ps(a); }
static inline float v_hmax(vf a) { return _mm512_reduce_max_ps(a); }
static inline float v_hmin(vf a) { return _mm512_reduce_min_ps(a); }

#endif
