/*
 * ref_quant.h — reference kernels of the "quant" op family: linear
 * (de)quantization with per-tensor, per-axis or blocked scales, dynamic
 * u8 quantization and integer matrix products.
 */
#ifndef MOPT_KERNELS_REF_QUANT_H
#define MOPT_KERNELS_REF_QUANT_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stdint.h>

/* Where the scale/zero point of element (o, a, i) of x viewed as
 * [outer, len, inner] lives: mode 0 per tensor, 1 per axis (index a),
 * 2 blocked (index (o * ceil(len/block) + a/block) * inner + i). */
typedef struct ref_qlayout {
    int64_t outer, len, inner, block;
    int mode;
} ref_qlayout;

int64_t ref_qindex(const ref_qlayout *l, int64_t o, int64_t a, int64_t i);

/* q = clamp(rint(x / scale) + zp, qmin, qmax); the quotient is rounded to
 * f16 first when half is set (the reference divides in f16). zp may be
 * NULL. */
void ref_quantize(const ref_qlayout *l, const float *x, const float *scale, const int32_t *zp,
                  bool half, int32_t qmin, int32_t qmax, int32_t *q);
/* y = (x - zp) * scale, in f32 */
void ref_dequantize(const ref_qlayout *l, const int32_t *x, const float *scale, const int32_t *zp,
                    float *y);

/* q = float8 (or f4e2m1) `to` of x / scale (rounded to f16 first when half
 * is set), ties to even, overflow per `saturate` (core/float8.h; f4e2m1
 * always saturates). zp (may be NULL) is added before the conversion (a
 * zero zero point only turns -0 into +0, as ONNX's reference for f4e2m1). */
void ref_quantize_f8(const ref_qlayout *l, const float *x, const float *scale, const float *zp,
                     bool half, mopt_dtype to, bool saturate, uint8_t *q);
/* y = x * scale for float x (float8 dequantization: no zero point) */
void ref_dequantize_f(const ref_qlayout *l, const float *x, const float *scale, float *y);

/* y[m, n] = sum_k (a[m,k] - za[m]) * (b[k,n] - zb[n]) in int32 (za per row
 * or one value: za_n 1 or m; zb per column or one). */
void ref_matmul_int(int64_t m, int64_t k, int64_t n, const int32_t *a, const int32_t *b,
                    const int32_t *za, int64_t za_n, const int32_t *zb, int64_t zb_n, int32_t *y);

#endif
