/*
 * registry.c — the table of supported operators, assembled from the op
 * families. Lookup is by (op_type, domain); "ai.onnx" equals "".
 */
#include <string.h>

#include "ops/ops.h"

typedef const op_def *(*family_fn)(size_t *count);

static const family_fn k_families[] = {
    ops_family_elementwise, ops_family_logic,  ops_family_matmul,
    ops_family_conv,        ops_family_pool,   ops_family_normalization,
    ops_family_reduce,      ops_family_shape,  ops_family_movement,
    ops_family_fused,
    ops_family_attention,
    ops_family_bitwise, ops_family_attention_onnx,
    ops_family_loss,
    ops_family_tensor_ops,
    ops_family_quant,
    ops_family_resize,
    ops_family_misc,
    ops_family_conv_transpose,
};

#define N_FAMILIES (sizeof k_families / sizeof k_families[0])

static int domain_is_default(const char *d) { return !d || !*d || strcmp(d, "ai.onnx") == 0; }

const op_def *ops_find(const char *op_type, const char *domain) {
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        const op_def *defs = k_families[f](&n);
        for (size_t i = 0; i < n; i++) {
            if (strcmp(defs[i].op_type, op_type) != 0) continue;
            if (domain_is_default(defs[i].domain) ? domain_is_default(domain)
                                                  : (domain && strcmp(defs[i].domain, domain) == 0))
                return &defs[i];
        }
    }
    return NULL;
}

size_t ops_count(void) {
    size_t total = 0;
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        k_families[f](&n);
        total += n;
    }
    return total;
}

const op_def *ops_at(size_t index) {
    for (size_t f = 0; f < N_FAMILIES; f++) {
        size_t n = 0;
        const op_def *defs = k_families[f](&n);
        if (index < n) return &defs[index];
        index -= n;
    }
    return NULL;
}
