/*
 * conv.c — the "conv" operator family (placeholder until implemented).
 */
#include "ops/ops.h"

const op_def *ops_family_conv(size_t *count) {
    *count = 0;
    return NULL;
}
