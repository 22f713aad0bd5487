/*
 * vmath.h — vectorized float math for kernels/cpu, written once against the
 * simd-*.h vocabulary (include one of those first): exp, sigmoid, tanh, erf,
 * and the two GELU forms. Polynomial coefficients come from fit_poly.py
 * (near-minimax relative-error fits); measured float32 error bounds are in
 * kernels/README.md and checked by tests/kernels/test_cpu_kernels.c.
 *
 * Special values follow libm: NaN in gives NaN out, exp(+inf) = +inf,
 * exp(-inf) = 0, tanh/erf(+-inf) = +-1, sigmoid(+-inf) = 1/0.
 */
#ifndef MOPT_KERNELS_CPU_VMATH_H
#define MOPT_KERNELS_CPU_VMATH_H

#include <math.h>

/* exp(x): x = n ln2 + r, |r| <= ln2/2, degree-7 Taylor polynomial for e^r
 * (truncation 5e-9), and 2^n applied as two factors 2^(n/2) so that results
 * in the subnormal range and overflow to +inf come out right. */
static inline vf v_exp(vf x) {
    const vm nan = v_isnan(x);
    x = v_sel(nan, v_zero(), x);
    x = v_min(v_set1(89.0f), x);   /* e^89 overflows: +inf below */
    x = v_max(v_set1(-104.0f), x); /* e^-104 rounds to 0 */
    const vf n = v_round(v_mul(x, v_set1(1.44269504088896341f)));
    vf r = v_fnmadd(n, v_set1(0.693145751953125f), x);
    r = v_fnmadd(n, v_set1(1.428606765330187045e-06f), r);
    vf p = v_set1(1.0f / 5040.0f);
    p = v_fmadd(p, r, v_set1(1.0f / 720.0f));
    p = v_fmadd(p, r, v_set1(1.0f / 120.0f));
    p = v_fmadd(p, r, v_set1(1.0f / 24.0f));
    p = v_fmadd(p, r, v_set1(1.0f / 6.0f));
    p = v_fmadd(p, r, v_set1(0.5f));
    p = v_fmadd(p, r, v_set1(1.0f));
    p = v_fmadd(p, r, v_set1(1.0f));
    const vi ni = v_cvt(n);
    const vi a = v_ihalf(ni), b = v_isub(ni, a);
    const vi bias = v_iset1(127);
    p = v_mul(p, v_asf(v_ishl23(v_iadd(a, bias))));
    p = v_mul(p, v_asf(v_ishl23(v_iadd(b, bias))));
    return v_sel(nan, v_set1(NAN), p);
}

/* e^x for a softmax weight, x = score - max <= 0 (x > 0 is taken as 0):
 * v_exp's reduction with the degree-5 polynomial of Cephes' expf, and 2^n
 * applied as one factor, so that below about -87.7 (n = -127, e^x < 2^-126
 * relative to the row's largest weight, 1) the result is 0 exactly, as for
 * -inf; NaN gives NaN. Two thirds of v_exp's operations; measured relative
 * error 8.4e-8 on every float of [-87, 0] (avx2), asserted below 2e-7 on
 * a grid by tests/kernels/test_decode_attn.c. */
static inline vf v_exp_weight(vf x) {
    const vm nan = v_isnan(x);
    /* v_max's second operand wins on NaN: xc is a number, so is n */
    const vf xc = v_min(v_zero(), v_max(x, v_set1(-88.0f)));
    const vf n = v_round(v_mul(xc, v_set1(1.44269504088896341f))); /* -127 .. 0 */
    vf r = v_fnmadd(n, v_set1(0.693359375f), xc);
    r = v_fnmadd(n, v_set1(-2.12194440e-4f), r);
    vf p = v_set1(1.9875691500e-4f);
    p = v_fmadd(p, r, v_set1(1.3981999507e-3f));
    p = v_fmadd(p, r, v_set1(8.3334519073e-3f));
    p = v_fmadd(p, r, v_set1(4.1665795894e-2f));
    p = v_fmadd(p, r, v_set1(1.6666665459e-1f));
    p = v_fmadd(p, r, v_set1(5.0000001201e-1f));
    const vf y = v_add(v_fmadd(p, v_mul(r, r), r), v_set1(1.0f));
    /* 2^n from its exponent field: n = -127 gives the bits of +0 */
    const vf e = v_mul(y, v_asf(v_ishl23(v_iadd(v_cvt(n), v_iset1(127)))));
    return v_sel(nan, x, e);
}

static inline vf v_abs(vf x) { return v_andnot(v_set1(-0.0f), x); }
static inline vf v_neg(vf x) { return v_xor(v_set1(-0.0f), x); }
/* |m| with the sign of s */
static inline vf v_copysign(vf m, vf s) {
    const vf sign = v_set1(-0.0f);
    return v_or(v_andnot(sign, m), v_and(sign, s));
}

/* 1 / (1 + e^-x) computed from e = e^-|x| (never overflows): 1/(1+e) for
 * x >= 0, e/(1+e) below, so tiny results keep their relative accuracy. */
static inline vf v_sigmoid(vf x) {
    const vf e = v_exp(v_neg(v_abs(x)));
    const vf d = v_add(v_set1(1.0f), e);
    return v_div(v_sel(v_lt(x, v_zero()), e, v_set1(1.0f)), d);
}

/* tanh: x + x^3 P(x^2) for |x| < 0.9, else 1 - 2/(e^2|x| + 1) with x's sign. */
static inline vf v_tanh(vf x) {
    const vf ax = v_abs(x);
    const vf x2 = v_mul(x, x);
    vf p = v_set1(-4.554604509e-04f);
    p = v_fmadd(p, x2, v_set1(2.582669292e-03f));
    p = v_fmadd(p, x2, v_set1(-8.264545597e-03f));
    p = v_fmadd(p, x2, v_set1(2.166354354e-02f));
    p = v_fmadd(p, x2, v_set1(-5.392930192e-02f));
    p = v_fmadd(p, x2, v_set1(1.333297827e-01f));
    p = v_fmadd(p, x2, v_set1(-3.333332226e-01f));
    const vf small = v_fmadd(v_mul(p, x2), x, x);
    const vf e = v_exp(v_add(ax, ax));
    const vf big = v_sub(v_set1(1.0f), v_div(v_set1(2.0f), v_add(e, v_set1(1.0f))));
    return v_sel(v_lt(ax, v_set1(0.9f)), small, v_copysign(big, x));
}

/* The two pieces of erf for a = |x|:
 *   a < 1:          erf(a) = a P(a^2)
 *   1 <= a < 3.92:  erfc(a) = e^(-a^2) Q(a - 2.5)  (Q fits erfcx = e^(a^2) erfc(a))
 *   a >= 3.92:      erfc(a) < 2^-25, erf(a) rounds to 1 (erfc taken as 0). */
static inline vf v_erf_small(vf a) {
    const vf a2 = v_mul(a, a);
    vf p = v_set1(7.854023522e-05f);
    p = v_fmadd(p, a2, v_set1(-8.010246807e-04f));
    p = v_fmadd(p, a2, v_set1(5.188334403e-03f));
    p = v_fmadd(p, a2, v_set1(-2.685381602e-02f));
    p = v_fmadd(p, a2, v_set1(1.128358527e-01f));
    p = v_fmadd(p, a2, v_set1(-3.761262584e-01f));
    p = v_fmadd(p, a2, v_set1(1.128379166e+00f));
    return v_mul(p, a);
}
static inline vf v_erfc_big(vf a) {
    const vf t = v_sub(v_min(v_set1(3.92f), v_max(v_set1(1.0f), a)), v_set1(2.5f));
    vf q = v_set1(-4.402464791e-07f);
    q = v_fmadd(q, t, v_set1(1.634872770e-06f));
    q = v_fmadd(q, t, v_set1(-3.690598736e-06f));
    q = v_fmadd(q, t, v_set1(1.453461951e-05f));
    q = v_fmadd(q, t, v_set1(-5.959348594e-05f));
    q = v_fmadd(q, t, v_set1(2.126638815e-04f));
    q = v_fmadd(q, t, v_set1(-7.331335272e-04f));
    q = v_fmadd(q, t, v_set1(2.466194714e-03f));
    q = v_fmadd(q, t, v_set1(-8.001684209e-03f));
    q = v_fmadd(q, t, v_set1(2.493815312e-02f));
    q = v_fmadd(q, t, v_set1(-7.434733951e-02f));
    q = v_fmadd(q, t, v_set1(2.108063594e-01f));
    const vf e = v_exp(v_neg(v_mul(a, a)));
    const vf r = v_mul(q, e);
    return v_sel(v_lt(a, v_set1(3.92f)), r, v_zero());
}

static inline vf v_erf(vf x) {
    const vf a = v_abs(x);
    const vf big = v_sub(v_set1(1.0f), v_erfc_big(a));
    const vf r = v_sel(v_lt(a, v_set1(1.0f)), v_erf_small(a), big);
    return v_sel(v_isnan(x), x, v_copysign(r, x));
}

/* GELU, exact form: x/2 (1 + erf(x/sqrt2)). For x/sqrt2 <= -1 the factor
 * 1 + erf = erfc(|x|/sqrt2) is computed directly (no cancellation). */
static inline vf v_gelu_erf(vf x) {
    const vf z = v_mul(x, v_set1(0.70710678118654752440f));
    const vf a = v_abs(z);
    const vf tail = v_erfc_big(a); /* erfc(|z|) for |z| >= 1 */
    const vf small = v_add(v_set1(1.0f), v_copysign(v_erf_small(a), z));
    const vf big = v_sel(v_lt(z, v_zero()), tail, v_sub(v_set1(2.0f), tail));
    const vf f = v_sel(v_lt(a, v_set1(1.0f)), small, big);
    return v_sel(v_isnan(x), x, v_mul(v_mul(v_set1(0.5f), x), f));
}

/* GELU, tanh form: x/2 (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi)(x + 0.044715 x^3). */
static inline vf v_gelu_tanh(vf x) {
    const vf x2 = v_mul(x, x);
    const vf u =
        v_mul(v_fmadd(v_mul(x2, v_set1(0.044715f)), x, x), v_set1(2.0f * 0.79788456080286535588f));
    return v_mul(x, v_sigmoid(u));
}

#endif
