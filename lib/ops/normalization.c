/*
 * normalization.c — the "normalization" operator family (placeholder until implemented).
 */
#include "ops/ops.h"

const op_def *ops_family_normalization(size_t *count) {
    *count = 0;
    return NULL;
}
