/*
 * shape.c — the "shape" operator family (placeholder until implemented).
 */
#include "ops/ops.h"

const op_def *ops_family_shape(size_t *count) {
    *count = 0;
    return NULL;
}
