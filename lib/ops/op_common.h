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

/* One accepted value of a string attribute and what it stands for (an enum
 * value); an op lists them in a table. */
typedef struct op_name_value {
    const char *name;
    int value;
} op_name_value;

/* Looks s up in t[0..n): true and *value set when found. */
bool op_name_lookup(const op_name_value *t, int n, const char *s, int *value);

/* The usual start of a data-movement op's inference: input 0 of any dtype
 * with a fixed element size, inputs 1..n_index index tensors (int64 or
 * int32); output 0 then gets input 0's dtype. */
mopt_status op_infer_moved(const op_ctx *ctx, const op_tensor *in, int n_index, op_tensor *out);

/* A 0/1 integer attribute (def when absent) as a bool; any other value fails
 * with INVALID_MODEL ("NAME must be 0 or 1, not V"). */
mopt_status op_attr_bool(const op_ctx *ctx, const char *name, int64_t def, bool *out);

/* ASCII case-insensitive string equality (attribute values such as
 * activation names and modes). */
bool op_str_eq_ci(const char *a, const char *b);

/* a and b of one rank and the same dims (symbols not compared: concrete
 * shapes). */
bool op_same_dims(const ir_shape *a, const ir_shape *b);

/* Whether r is an f32 residual of Y's shape y as the impls' supports see
 * them (possibly symbolic): same rank, the same symbols, the same known
 * dims. */
bool op_residual_fits(const op_tensor *r, const ir_shape *y);
/* op_impl.inplace of the fused ops whose residual is input 3 (FusedConv,
 * FusedMatMul): 3 when it is present, else -1; for impls that read each
 * residual element before they store Y's (their own comment says how). */
int op_inplace_residual3(const op_ctx *ctx, const op_tensor *in, int n_in);

/* An op whose node may carry subgraph captures (its last inputs, ir_subgraph.h):
 * *n_caps = their count; the node must have `want` formal inputs besides,
 * else fails ("takes 3 inputs (Q, K, V), got 2", names = "Q, K, V"). */
mopt_status op_formal_inputs(const op_ctx *ctx, int want, const char *names, int32_t *n_caps);

/* The rank of an (N, C, spatial...) input X and its companion `what` of the
 * same rank (a conv's W, a sampling grid) from whichever is known: -1 when
 * neither is, else fails unless both agree and the rank is at least 3
 * ("X [..] and W [..] must have the same rank, at least 3 (N, C,
 * spatial...<layout>)"; layout says more of what's layout). */
mopt_status op_spatial_rank(const op_ctx *ctx, const ir_shape *x, const char *what,
                            const ir_shape *w, const char *layout, int32_t *rank);

/* The row of a table of per-op-type rows (n rows of `stride` bytes, each
 * with a const char * op_type at byte `at`) naming op_type; NULL when none.
 * Call it as OP_ROW(table, op_type). */
const void *op_row_of(const void *rows, int n, size_t stride, size_t at, const char *op_type);
#define OP_ROW(table, name)                                                                        \
    op_row_of(table, OP_COUNT(table), sizeof(table)[0],                                            \
              (size_t)((const char *)&(table)[0].op_type - (const char *)(table)), name)

/* Defines the family accessor ops_family_<name> (declared in ops.h) over
 * the family's static op_def table. */
#define OP_FAMILY(name, table)                                                                     \
    const op_def *ops_family_##name(size_t *count) {                                               \
        *count = sizeof table / sizeof table[0];                                                   \
        return table;                                                                              \
    }

#endif
