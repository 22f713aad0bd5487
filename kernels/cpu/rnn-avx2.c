/*
 * rnn-avx2.c — the recurrent fast path's GEMM and gate kernels (cpu_rnn.h) for
 * the avx2 tier; the body is rnn-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-avx2.h"

#include "kernels/cpu/rnn-impl.h"
