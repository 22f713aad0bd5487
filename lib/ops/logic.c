/*
 * logic.c — the "logic" operator family (placeholder until implemented).
 */
#include "ops/ops.h"

const op_def *ops_family_logic(size_t *count) {
    *count = 0;
    return NULL;
}
