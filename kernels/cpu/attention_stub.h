/*
 * attention_stub.h — what an attention-<isa>.c defines instead of
 * attention_impl.h's kernel when the compiler was not given that ISA (not
 * x86-64): ATTN_FN declining every call and ATTN_SCRATCH_FN needing nothing.
 * Never called, since cpu_get() cannot report the ISA there. Define ATTN_FN
 * and ATTN_SCRATCH_FN before including it.
 */
#include "kernels/cpu/cpu_attention.h"

bool ATTN_FN(const attn_params *p, const float *Q, const float *K, const float *V, float *O,
             int threads) {
    (void)p, (void)Q, (void)K, (void)V, (void)O, (void)threads;
    return false;
}

size_t ATTN_SCRATCH_FN(const attn_params *p, size_t *tile_bytes) {
    (void)p;
    if (tile_bytes) *tile_bytes = 0;
    return 0;
}
