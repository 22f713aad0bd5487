/*
 * rowquant.h — per-row dynamic asymmetric quantization of the int8 matmul
 * (precision=int8, kernels/onednn): each row of A [rows, K] gets its own
 * scale and zero point, q = clamp(rint(a / s) + z, 0, qmax) as u8, from
 * min(0, row) and max(0, row) over the row's finite values; then the u8 x
 * s8 sums acc = sum_k q[m,k] w[k,n] come back to float as
 * y[m,n] = s[m] * (acc[m,n] * sw[n] - z[m] * cw[n]) + bias[n], with
 * cw[n] = sw[n] * sum_k w[k,n] (the zero point's share, exact in integers).
 * qmax is 255 for the int8 matmul (where u8 x s8 pairs would saturate in
 * s16 without VNNI, the weights keep 7 bits instead: kernels/onednn); 127
 * is also supported.
 * Tiers: scalar C, and AVX-512 for both passes when cpu_kernels_for("avx512")
 * reports it (the same results: a / s taken as a * (1 / s), the reciprocal
 * rounded once per row, or a true division where 1 / s overflows; round
 * half to even).
 */
#ifndef MOPT_KERNELS_CPU_ROWQUANT_H
#define MOPT_KERNELS_CPU_ROWQUANT_H

#include <stdbool.h>
#include <stdint.h>

/* q[m * K + k] for rows m < rows (row stride lda of a), scale[m], zp[m].
 * avx512: use the AVX-512 passes (only where the CPU has them). */
void cpu_quant_rows_u8(const float *a, int64_t rows, int64_t K, int64_t lda, int qmax, bool avx512,
                       uint8_t *q, float *scale, int32_t *zp);

/* y[i] = clamp(round_half_even(x[i] / scale) + zp, 0, 255), NaN -> 0: one
 * scale and zero point for all of x (the static INT8 ops' quantization,
 * lib/ops/qstatic.c), AVX-512 where cpu_kernels_for("avx512") has it. */
void cpu_quantize_u8(const float *x, int64_t n, float scale, float zp, uint8_t *y);

/* Channels-last x [rows, C], one scale per channel and one zero point
 * (a depthwise convolution's input, lib/ops/qstatic.h): y[r * C + c] =
 * clamp(round_half_even(x[r * C + c] / scale[c]) + zp, 0, 255), NaN -> 0.
 * avx512: the AVX-512 loop (only where the CPU has it; the same bytes). */
void cpu_quantize_u8_cl(const float *x, int64_t rows, int64_t C, const float *scale, float zp,
                        bool avx512, uint8_t *y);

/* Row m's u8 quantization (as cpu_quant_rows_u8's) from its min(0, x) and
 * max(0, x) already known (mn, mx; non-finite ones are recomputed over the
 * finite values): q [K], *scale, *zp. */
void cpu_quant_row_u8_mm(const float *x, int64_t K, float mn, float mx, int qmax, bool avx512,
                         uint8_t *q, float *scale, int32_t *zp);

/* In place on y [rows, N] (row stride ldy) that holds acc * sw[n]:
 * y = scale[m] * (y - zp[m] * cw[n]) + (bias ? bias[n] : 0). */
void cpu_dequant_rows(float *y, int64_t rows, int64_t N, int64_t ldy, const float *scale,
                      const int32_t *zp, const float *cw, const float *bias, bool avx512);

/* ---- the u8 rows block ---------------------------------------------------
 * A tensor the runtime keeps quantized between int8 ops (its storage plan,
 * lib/runtime/dispatch.c; precision=int8): logical f32 [..., K] with
 * rows = numel / K, stored as one byte block of rows * (K + CPU_ROWQ_EXTRA)
 * bytes: q [rows, K] (u8, dense, as cpu_quant_rows_u8 writes it), then
 * float scale[rows], then int32 zp[rows] (no alignment promised: read and
 * write them with these helpers). Its op_tensor says dtype u8 and the
 * logical shape with the last dim + CPU_ROWQ_EXTRA, so byte sizes stay
 * numel * dtype size everywhere. */
#define CPU_ROWQ_EXTRA 8

/* scale[rows] and zp[rows] out of (get) or into (put) block blk. */
void cpu_rowq_get(const uint8_t *blk, int64_t rows, int64_t K, float *scale, int32_t *zp);
void cpu_rowq_put(uint8_t *blk, int64_t rows, int64_t K, const float *scale, const int32_t *zp);

/* The whole block from f32 a [rows, K] (dense); scale/zp: rows each of
 * scratch. */
void cpu_rowq_from_f32(const float *a, int64_t rows, int64_t K, bool avx512, uint8_t *blk,
                       float *scale, int32_t *zp);

/* y [rows, K] = the block's values dequantized: scale * (q - zp). */
void cpu_rowq_to_f32(const uint8_t *blk, int64_t rows, int64_t K, float *y);

#if defined(__x86_64__)
/* y = GELU(y) (erf form) in place, with erf as a rational function of x
 * clamped to [-4, 4]: error below 1e-6 max(1, |x|) against the exact GELU
 * (measured, tests/kernels/test_rowquant.c), ~3x faster than
 * cpu_unary_f32's (which keeps relative accuracy in the far negative tail).
 * The int8 matmul's epilogue uses it: its f32 product already carries the
 * quantization error of A and B (~1e-3 relative). NaN stays NaN. */
void cpu_gelu_erf_fast_avx512(float *y, int64_t n);

/* The int8 matmul's epilogue of one row in one pass (the row stays in L1):
 * y = s * (y - zs * cw[n]) + bias[n] (cpu_dequant_row_avx512's operations
 * in its order), + res[n] (res may be NULL), then GELU (gelu:
 * cpu_gelu_erf_fast_avx512's), the same bits as those passes one after the
 * other; mn/mx (unless NULL): min(0, y...) and max(0, y...) over the
 * result, NaN skipped (an infinity stays: check them). */
void cpu_epilogue_row_avx512(float *y, int64_t N, float s, float zs, const float *cw,
                             const float *bias, const float *res, bool gelu, float *mn, float *mx);

/* AVX-512 body of cpu_quant_row_u8_mm: q[i] = clamp(round_half_even(x[i] *
 * inv) + z, 0, qmax), NaN -> 0 (rowquant-avx512.c). */
void cpu_quant_row_u8_avx512(const float *x, int64_t n, float inv, float z, float qmax, uint8_t *q);

/* AVX-512 body of cpu_dequant_rows for one row (rowquant-avx512.c). */
void cpu_dequant_row_avx512(float *y, int64_t N, float s, float zs, const float *cw,
                            const float *bias);
#endif

#endif
