/*
 * elementwise.c — the "elementwise" operator family (placeholder until implemented).
 */
#include "ops/ops.h"

const op_def *ops_family_elementwise(size_t *count) {
    *count = 0;
    return NULL;
}
