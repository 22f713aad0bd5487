/*
 * rnn-portable.c — the recurrent fast path's GEMM and gate kernels (cpu_rnn.h) for
 * the portable tier; the body is rnn-impl.h, shared by all tiers.
 */
#include "kernels/cpu/simd-portable.h"

#include "kernels/cpu/rnn-impl.h"
