/*
 * bf16cvt.h — f32 <-> bf16 conversion of arrays, for tensors the runtime
 * keeps in bf16 between ops (precision=bf16 storage plan): vcvtneps2bf16
 * (round to nearest even; denormals flush to zero as the instruction does)
 * when the library was built with AVX512-BF16 and the CPU has it, else
 * core/half.h's scalar conversions. Widening is exact.
 */
#ifndef MOPT_KERNELS_CPU_BF16CVT_H
#define MOPT_KERNELS_CPU_BF16CVT_H

#include <stdbool.h>
#include <stdint.h>

/* y[0..n) = bf16(x[0..n)) */
void cpu_f32_to_bf16(const float *x, uint16_t *y, int64_t n);
/* y[0..n) = f32(x[0..n)) */
void cpu_bf16_to_f32(const uint16_t *x, float *y, int64_t n);
/* Whether the vector conversions above are built in and the CPU runs them. */
bool cpu_bf16cvt_fast(void);

#endif
