/*
 * reduce.h — private to the reduce family (reduce.c) and its cpu
 * implementations (cpu/reduce_cpu.c): the params a Reduce* node's
 * attributes are parsed into once, when the node is planned.
 */
#ifndef MOPT_OPS_REDUCE_H
#define MOPT_OPS_REDUCE_H

#include "kernels/ref/ref_reduce.h"
#include "ops/ops.h"

typedef struct reduce_params {
    ref_reduce_op op;
    bool ints;           /* int64/int32 supported */
    bool axes_input;     /* axes come from input 1 (ReduceSum from opset 13, the others 18) */
    bool keep;           /* keepdims */
    bool noop_empty;     /* noop_with_empty_axes */
    const int64_t *axes; /* the axes attribute (before axes_input; NULL when absent) */
    int64_t n_axes;      /* its length; -1 for all axes (absent or empty) */
} reduce_params;

#endif
