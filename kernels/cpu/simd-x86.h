/*
 * simd-x86.h — the part of the vector vocabulary that AVX2 and AVX-512 spell
 * alike but for the intrinsic prefix: simd-avx2.h and simd-avx512.h define
 * vf, vi, vm, CPU_CAT, SIMD_X86 (_mm256 or _mm512) and SIMD_X86_CMP (the
 * compare that gives a vm), then include this file.
 */
#ifndef MOPT_KERNELS_CPU_SIMD_X86_H
#define MOPT_KERNELS_CPU_SIMD_X86_H

/* The intrinsic of this width: X86_OP(add_ps) is _mm256_add_ps or _mm512_add_ps. */
#define X86_OP(op) CPU_CAT(SIMD_X86, CPU_CAT(_, op))

/* 8 vectors of 8 -> the vector of their 8 horizontal sums (256-bit at either
 * width: AVX-512 code sums 8 half-width accumulators with it too) */
static inline __m256 v256_hsums8(const __m256 *h) {
    const __m256 t0 = _mm256_hadd_ps(h[0], h[1]), t1 = _mm256_hadd_ps(h[2], h[3]);
    const __m256 t2 = _mm256_hadd_ps(h[4], h[5]), t3 = _mm256_hadd_ps(h[6], h[7]);
    const __m256 u0 = _mm256_hadd_ps(t0, t1), u1 = _mm256_hadd_ps(t2, t3);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                         _mm256_permute2f128_ps(u0, u1, 0x31));
}

static inline vf v_set1(float x) { return X86_OP(set1_ps)(x); }
static inline vf v_zero(void) { return X86_OP(setzero_ps)(); }
static inline vf v_add(vf a, vf b) { return X86_OP(add_ps)(a, b); }
static inline vf v_sub(vf a, vf b) { return X86_OP(sub_ps)(a, b); }
static inline vf v_mul(vf a, vf b) { return X86_OP(mul_ps)(a, b); }
static inline vf v_div(vf a, vf b) { return X86_OP(div_ps)(a, b); }
static inline vf v_fmadd(vf a, vf b, vf c) { return X86_OP(fmadd_ps)(a, b, c); }
static inline vf v_fnmadd(vf a, vf b, vf c) { return X86_OP(fnmadd_ps)(a, b, c); }
static inline vf v_max(vf a, vf b) { return X86_OP(max_ps)(a, b); }
static inline vf v_min(vf a, vf b) { return X86_OP(min_ps)(a, b); }
static inline vf v_sqrt(vf a) { return X86_OP(sqrt_ps)(a); }
static inline vf v_and(vf a, vf b) { return X86_OP(and_ps)(a, b); }
static inline vf v_andnot(vf a, vf b) { return X86_OP(andnot_ps)(a, b); }
static inline vf v_or(vf a, vf b) { return X86_OP(or_ps)(a, b); }
static inline vf v_xor(vf a, vf b) { return X86_OP(xor_ps)(a, b); }
static inline vi v_cvt(vf a) { return X86_OP(cvtps_epi32)(a); }
static inline vi v_iadd(vi a, vi b) { return X86_OP(add_epi32)(a, b); }
static inline vi v_isub(vi a, vi b) { return X86_OP(sub_epi32)(a, b); }
static inline vi v_iset1(int32_t x) { return X86_OP(set1_epi32)(x); }
static inline vi v_ihalf(vi a) { return X86_OP(srai_epi32)(a, 1); }
static inline vi v_ishl23(vi a) { return X86_OP(slli_epi32)(a, 23); }
static inline vm v_lt(vf a, vf b) { return SIMD_X86_CMP(a, b, _CMP_LT_OQ); }
static inline vm v_gt(vf a, vf b) { return SIMD_X86_CMP(a, b, _CMP_GT_OQ); }
static inline vm v_isnan(vf a) { return SIMD_X86_CMP(a, a, _CMP_UNORD_Q); }

#endif
