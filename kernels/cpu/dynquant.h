/*
 * dynquant.h — DynamicQuantizeLinear's two passes on AVX-512 (built with
 * qgemm-vnni.c's flags; call only when cpu_kernels_for("avx512")),
 * bit-identical to the scalar loops of lib/ops/quant.c: the min and max
 * with 0 (strict comparisons, so NaN is skipped and -0 never replaces 0)
 * and q = clamp(rint(x / scale) + zp, 0, 255) with round-half-to-even and
 * NaN -> 0.
 */
#ifndef MOPT_KERNELS_CPU_DYNQUANT_H
#define MOPT_KERNELS_CPU_DYNQUANT_H

#include <stdint.h>

#if defined(__x86_64__)
/* *mn = min(0, x[i]...), *mx = max(0, x[i]...), skipping NaN. */
void cpu_dyn_minmax_f32_avx512(const float *x, int64_t n, float *mn, float *mx);
/* y[i] = clamp(nearbyintf(x[i] / scale) + zp, 0, 255) (NaN: 0). */
void cpu_dyn_quantize_u8_avx512(const float *x, int64_t n, float scale, float zp, uint8_t *y);
/* Channels-last x [rows, C]: y[r * C + c] = clamp(nearbyintf(x / scale[c])
 * + zp, 0, 255) (NaN: 0), as cpu_quantize_u8_cl's scalar loop. */
void cpu_quantize_u8_cl_avx512(const float *x, int64_t rows, int64_t C, const float *scale,
                               float zp, uint8_t *y);
#endif

#endif
