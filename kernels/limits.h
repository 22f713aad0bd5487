/*
 * limits.h — the sizes the external backends (oneDNN, OpenBLAS) are trusted
 * with (issue 17). Their APIs take 64-bit dims, but some of their
 * implementations index, multiply or divide in 32 bits (oneDNN's JIT
 * convolutions, cblas' int): a problem outside these limits must never reach
 * them (a 159-byte Conv with pads of 1e9 killed the process with SIGFPE
 * inside dnnl_primitive_desc_create). The caller declines instead and our
 * own 64-bit kernel runs. Pure functions with no backend in sight, so the
 * layers above (model build, `mopt check`) ask the same questions.
 *
 * The limits, conservative on purpose: every dim, stride, dilation and pad in
 * [0, 2^31) (dims, strides, dilations >= 1); a tensor's element count and its
 * largest element offset below 2^31; a window's extent (k - 1) * dilation + 1
 * below 2^31; each pad at most the input size plus the window extent (a pad
 * beyond that only adds positions that see padding alone).
 */
#ifndef MOPT_KERNELS_LIMITS_H
#define MOPT_KERNELS_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KN_LIMIT ((int64_t)1 << 31) /* exclusive bound of every size above */

/* A tensor of ndims dims (strides may be NULL: dense). False with a reason
 * in why (n bytes, may be NULL) when it is out of limits. */
bool kn_limits_tensor(int32_t ndims, const int64_t *dims, const int64_t *strides, char *why,
                      size_t n);

/* A sliding window over S spatial axes: input sizes, kernel sizes, strides,
 * dilations (1 = dense) and pads at both ends. */
bool kn_limits_window(int32_t S, const int64_t *in, const int64_t *k, const int64_t *stride,
                      const int64_t *dilation, const int64_t *pad_l, const int64_t *pad_r,
                      char *why, size_t n);

#endif
