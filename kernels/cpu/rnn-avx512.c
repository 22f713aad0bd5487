/*
 * rnn-avx512.c — the recurrent fast path's GEMM and gate kernels (cpu_rnn.h) for
 * the avx512 tier; the body is rnn-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx512.h"

#include "kernels/cpu/rnn-impl.h"
