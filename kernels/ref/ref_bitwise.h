/*
 * ref_bitwise.h — reference kernels of the "bitwise" op family: BitShift,
 * BitwiseAnd/Or/Xor (row functions for ref_broadcast2) and BitwiseNot.
 */
#ifndef MOPT_KERNELS_REF_BITWISE_H
#define MOPT_KERNELS_REF_BITWISE_H

#include <mopt/mopt.h>

#include "kernels/ref/ref_elementwise.h"

typedef enum ref_bitop { REF_BIT_AND, REF_BIT_OR, REF_BIT_XOR, REF_BIT_SHL, REF_BIT_SHR } ref_bitop;

/* Row function for op on integer dtype t (both operands t); NULL when
 * unsupported. Shifts by >= the bit width give 0. */
ref_row2_fn ref_bitwise_row(ref_bitop op, mopt_dtype t);
/* y = ~x over n elements of integer dtype t; -1 when unsupported. */
int ref_bitwise_not(mopt_dtype t, const void *x, void *y, int64_t n);

#endif
