/*
 * ref_einsum.h — reference kernel of the "einsum" op family: an Einstein
 * summation over any number of operands whose dims carry integer labels
 * (repeated labels in one operand are its diagonal, labels absent from the
 * output are summed, a dim of 1 broadcasts against its label's size).
 * Operands are contracted left to right, each step a strided gather into
 * [batch, M, K] / [batch, K, N] and a batched GEMM. Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_EINSUM_H
#define MOPT_KERNELS_REF_EINSUM_H

#include <stdint.h>

/* Label ids are < REF_EIN_LABELS. */
#define REF_EIN_LABELS 64

typedef enum ref_ein_type {
    REF_EIN_F32 = 0,
    REF_EIN_F64 = 1,
    REF_EIN_I32 = 2, /* integer sums and products wrap (two's complement) */
    REF_EIN_I64 = 3,
} ref_ein_type;

/* One operand: rank dims, dims[d] labelled labels[d]. A label repeated in
 * one operand must have the same size at each place; across operands a
 * label's sizes are equal or 1. */
typedef struct ref_ein_operand {
    int rank;
    const uint8_t *labels;
    const int64_t *dims;
    const void *data; /* row-major, contiguous */
} ref_ein_operand;

/* out (row-major, out_rank dims out_dims, labelled out_labels, no label
 * twice) = sum over every label not in the output of the product of the
 * operands. out_dims[d] is its label's size (the largest of the operands').
 * Returns 0, -1 when out of memory, -2 when an intermediate would exceed
 * 2^62 elements. */
int ref_einsum(ref_ein_type type, int n, const ref_ein_operand *ops, int out_rank,
               const uint8_t *out_labels, const int64_t *out_dims, void *out);

#endif
