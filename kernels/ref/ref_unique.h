/*
 * ref_unique.h — reference kernel of the "unique" op family: the distinct
 * items of a tensor (single elements, or slices along an axis), in sorted
 * order or in order of first occurrence, with their first indices, every
 * item's index among them and their counts. Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_UNIQUE_H
#define MOPT_KERNELS_REF_UNIQUE_H

#include <stdbool.h>
#include <stdint.h>

/* How elements compare: floats in numeric order with every NaN equal and
 * after all numbers (as numpy.unique), integers in their own order (bool as
 * u8). */
typedef enum ref_unique_kind {
    REF_UNIQUE_F32,
    REF_UNIQUE_F64,
    REF_UNIQUE_I8,
    REF_UNIQUE_I16,
    REF_UNIQUE_I32,
    REF_UNIQUE_I64,
    REF_UNIQUE_U8,
    REF_UNIQUE_U16,
    REF_UNIQUE_U32,
    REF_UNIQUE_U64,
} ref_unique_kind;

/* x is [outer, n, inner]: item i is the outer x inner slice x[:, i, :],
 * compared lexicographically. Finds the U distinct items, ordered
 * ascending (sorted) or by first occurrence, and writes (each array may be
 * NULL; first and counts need room for n values, inverse for n):
 * first[u] the index of item u's first occurrence, counts[u] its count,
 * inverse[i] the position of item i among the distinct ones.
 * Returns U, or -1 when out of memory. */
int64_t ref_unique(ref_unique_kind kind, const void *x, int64_t outer, int64_t n, int64_t inner,
                   bool sorted, int64_t *first, int64_t *inverse, int64_t *counts);

#endif
