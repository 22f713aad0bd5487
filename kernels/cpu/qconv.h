/*
 * qconv.h — the exact integer convolution of ConvInteger / QLinearConv
 * (int8/uint8 x and w with zero points, int32 sums) as im2col + an int8
 * GEMM, the fast path of lib/ops/cpu/conv_quant_cpu.c. Bit-identical to
 * ref_conv_s32: every sum wraps modulo 2^32 like the reference's.
 *
 * The GEMM multiplies u8 by s8 (what AVX512-VNNI's vpdpbusd does, without
 * saturation). x is made u8 (s8 x: x + 128, and its zero point too) and w
 * s8 (u8 w: w - 128, and its zero point too); the zero points come back
 * exactly through sum (xu - X)(ws - Z) = sum xu*ws - Z*sum xu - X*sum ws
 * + K*X*Z, with the pixel sums of xu taken while packing x and the rest
 * folded into one constant per output channel. Padding reads X, so it
 * contributes 0, as in the reference.
 *
 * Layouts: a tile of CPU_QCONV_TILE output pixels of x is packed k-major in
 * groups of 4 (a[k4][CPU_QCONV_TILE][4] u8); weights are packed in blocks
 * of CPU_QGEMM_MR output channels (w[block][k4][CPU_QGEMM_MR] of 4 s8).
 * Kernels never allocate: the caller gives cpu_qconv_work_bytes().
 */
#ifndef MOPT_KERNELS_CPU_QCONV_H
#define MOPT_KERNELS_CPU_QCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/ref/ref_conv_quant.h"

#define CPU_QGEMM_MR 12    /* output channels per micro-tile */
#define CPU_QGEMM_NR 32    /* pixels per micro-tile */
#define CPU_QCONV_TILE 192 /* pixels per packed tile (a multiple of CPU_QGEMM_NR) */

/* y[r * ldy + p] = sum_k a[k][p] * w[r][k] + rowc[r] - zw[r] * sx[p]
 * (modulo 2^32) for r < m, p < np (np <= CPU_QCONV_TILE); a's pixels from
 * np up to the next multiple of CPU_QGEMM_NR must be zero. */
typedef void (*cpu_qgemm_fn)(const uint8_t *a, const int32_t *w, int64_t k4, int64_t np, int64_t m,
                             const int32_t *rowc, const int32_t *zw, const int32_t *sx, int32_t *y,
                             int64_t ldy);

void cpu_qgemm_u8s8_portable(const uint8_t *a, const int32_t *w, int64_t k4, int64_t np, int64_t m,
                             const int32_t *rowc, const int32_t *zw, const int32_t *sx, int32_t *y,
                             int64_t ldy);
#if defined(__x86_64__)
/* x86-64 builds: AVX512F + AVX512-VNNI; call only when cpu_get() reports them. */
void cpu_qgemm_u8s8_vnni(const uint8_t *a, const int32_t *w, int64_t k4, int64_t np, int64_t m,
                         const int32_t *rowc, const int32_t *zw, const int32_t *sx, int32_t *y,
                         int64_t ldy);
#endif

/* Bytes of scratch cpu_qconv_s32 needs for p on up to `threads` threads. */
size_t cpu_qconv_work_bytes(const ref_conv_params *p, int threads);

/* y = ref_conv_s32(p, a) (same layouts), computed with gemm on up to
 * `threads` threads; work holds cpu_qconv_work_bytes(p, threads) bytes,
 * 64-byte aligned. */
void cpu_qconv_s32(const ref_conv_params *p, const ref_qconv_args *a, cpu_qgemm_fn gemm,
                   int threads, void *work, int32_t *y);

/* x packed once for every tile, for an x that does not change (MatMulInteger's
 * constant B): bytes (64-byte aligned) for p (c_out does not matter), the
 * packing of a's x, and cpu_qconv_s32 reading it instead of packing. */
size_t cpu_qconv_xpack_bytes(const ref_conv_params *p);
void cpu_qconv_pack_x(const ref_conv_params *p, const ref_qconv_args *a, void *xpack);
void cpu_qconv_s32_packed(const ref_conv_params *p, const ref_qconv_args *a, const void *xpack,
                          cpu_qgemm_fn gemm, int threads, void *work, int32_t *y);

/* w packed once for every call, for a constant w with a fixed x zero
 * point (the static INT8 convolution, lib/ops/cpu/qstatic_cpu.c): bytes
 * for p (only c_out, group and the window matter), the packing of a's w
 * (and bias, x zero point), the scratch the run then needs on up to
 * `threads` threads, and cpu_qconv_s32 reading the packed w. */
size_t cpu_qconv_wpack_bytes(const ref_conv_params *p);
void cpu_qconv_pack_w(const ref_conv_params *p, const ref_qconv_args *a, void *wpack);
size_t cpu_qconv_slots_bytes(const ref_conv_params *p, int threads);
void cpu_qconv_s32_wpacked(const ref_conv_params *p, const ref_qconv_args *a, const void *wpack,
                           cpu_qgemm_fn gemm, int threads, void *work, int32_t *y);

/* ---- rows x packed weights (DynamicQuantizeLSTM's projections) ----------------
 * y[r * ldy + c] = sum_k a[r * lda + k] * w[k][c] (modulo 2^32) for r < m and
 * c below n rounded up to CPU_QROWS_NB (pad columns give 0): a is u8 rows,
 * w s8 packed by cpu_qrows_pack as wp[c / NB][k4][NB][4]. The rows are
 * broadcast, the columns are the vector lanes, so one row (a GEMV) wastes
 * nothing. */
#define CPU_QROWS_NB 16

typedef void (*cpu_qrows_fn)(const uint8_t *a, int64_t lda, int64_t m, int64_t K, const int8_t *wp,
                             int64_t n, int32_t *y, int64_t ldy);

/* Bytes of wp for w [K, n]. */
size_t cpu_qrows_pack_bytes(int64_t K, int64_t n);
/* Packs w [K, n] (row stride ldw; s8, or u8 made s8 as w - 128) into wp
 * and wsum[c] = sum_k of the packed (s8) values of column c. */
void cpu_qrows_pack(const void *w, bool w_s8, int64_t K, int64_t n, int64_t ldw, int8_t *wp,
                    int32_t *wsum);
void cpu_qrows_u8s8_portable(const uint8_t *a, int64_t lda, int64_t m, int64_t K, const int8_t *wp,
                             int64_t n, int32_t *y, int64_t ldy);
#if defined(__x86_64__)
void cpu_qrows_u8s8_vnni(const uint8_t *a, int64_t lda, int64_t m, int64_t K, const int8_t *wp,
                         int64_t n, int32_t *y, int64_t ldy);
#endif

#endif
