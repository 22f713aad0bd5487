/*
 * op_common.h — small helpers that several operator families had each
 * written for themselves: shared inference functions for ops whose output
 * is shaped like input 0, and reading a one-value integer input. Defined in
 * op_util.c beside the helpers ops.h declares.
 */
#ifndef MOPT_OPS_OP_COMMON_H
#define MOPT_OPS_OP_COMMON_H

#include "ops/ops.h"

/* Input 0 must be f32; output 0 gets its dtype and shape (Shrink, Swish,
 * Hardmax). */
mopt_status op_infer_f32_like_input0(const op_ctx *ctx, const op_tensor *in, int n_in,
                                     op_tensor *out, int n_out);

/* Every input must be f32; output 0 gets input 0's dtype and shape (SwiGLU,
 * LRN). */
mopt_status op_infer_all_f32_like_input0(const op_ctx *ctx, const op_tensor *in, int n_in,
                                         op_tensor *out, int n_out);

/* Reads the single value of integer tensor t (i32 or i64) into *v; fails
 * naming `what` when t holds more or fewer than one value. */
mopt_status op_read_one_int(const op_ctx *ctx, const op_tensor *t, const char *what, int64_t *v);

#endif
