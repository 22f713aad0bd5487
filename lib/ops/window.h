/*
 * window.h — the sliding-window attributes of Conv, MaxPool and AveragePool
 * (kernel_shape, strides, dilations, pads, auto_pad), and those of
 * ConvTranspose and LpPool, parsed once into the ops' params. Values are range-checked when parsed
 * (op_window_ints); how many there must be depends on the input's spatial rank, so the counts are
 * checked when the rank is known (op_window_get), with the messages
 * op_window_ints gives.
 */
#ifndef MOPT_OPS_WINDOW_H
#define MOPT_OPS_WINDOW_H

#include "kernels/ref/ref_conv.h"
#include "ops/ops.h"

/* One ints attribute: n values in v (n <= 2 * REF_WIN_MAX), or n < 0 when
 * absent (v then holds the default). A count above 2 * REF_WIN_MAX is kept
 * in n without values: it fits no spatial rank. */
typedef struct op_window_list {
    int64_t n;
    int64_t v[2 * REF_WIN_MAX];
} op_window_list;

typedef struct op_window_attrs {
    op_window_list kernel_shape, strides, dilations, pads;
    ref_auto_pad auto_pad;
} op_window_attrs;

/* Parse time: reads the four lists (kernel_shape required when
 * kernel_required) and auto_pad, failing like op_window_ints and
 * op_window_auto_pad. */
mopt_status op_window_parse(const op_ctx *ctx, bool kernel_required, op_window_attrs *w);

/* The list's `want` values (want <= 2 * REF_WIN_MAX) into out: its default
 * when absent; fails (INVALID_MODEL) when it has another count. *present
 * (may be NULL) tells whether it was given. */
mopt_status op_window_get(const op_ctx *ctx, const op_window_list *l, const char *name,
                          int32_t want, int64_t *out, bool *present);

/* An ints attribute kept as given, for ConvTranspose and LpPool (which check
 * counts only, with their own message): the node's values. */
typedef struct op_ints_attr {
    const int64_t *v;
    int64_t n;    /* -1 when of another type than ints */
    bool present; /* given at all */
} op_ints_attr;

/* Parse time: the attribute `name` of ctx's node. */
void op_ints_attr_parse(const op_ctx *ctx, const char *name, op_ints_attr *a);
/* Its nd values into out (def when absent); fails (INVALID_MODEL) when it
 * has another count. */
mopt_status op_ints_attr_get(const op_ctx *ctx, const op_ints_attr *a, const char *name, int nd,
                             int64_t def, int64_t *out);
/* Parse time: auto_pad where an unknown value counts as NOTSET (ConvTranspose,
 * LpPool). */
ref_auto_pad op_window_auto_pad_lenient(const op_ctx *ctx);

#endif
