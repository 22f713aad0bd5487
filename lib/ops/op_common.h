/*
 * op_common.h — small helpers that several operator families had each
 * written for themselves: shared inference functions for ops whose output
 * is shaped like input 0, reading a one-value integer input and an optional integer attribute
 * (defined in op_util.c beside the helpers ops.h declares), and the family accessor.
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

/* An optional integer attribute: *v = its value (0 when absent); returns
 * whether the node has it. */
bool op_attr_int_opt(const op_ctx *ctx, const char *name, int64_t *v);

/* Defines the family accessor ops_family_<name> (declared in ops.h) over
 * the family's static op_def table. */
#define OP_FAMILY(name, table)                                                                     \
    const op_def *ops_family_##name(size_t *count) {                                               \
        *count = sizeof table / sizeof table[0];                                                   \
        return table;                                                                              \
    }

#endif
