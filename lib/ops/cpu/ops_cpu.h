/*
 * ops_cpu.h — the "cpu" backend's op implementations (lib/ops/<family>_cpu.c):
 * NULL-terminated op_impl lists, cpu-avx512 then cpu-avx2 then cpu-portable,
 * that the op tables of elementwise.c, normalization.c, reduce.c and
 * movement.c point to. Each impl's prepare refuses (UNSUPPORTED) a tier that
 * cpu_get() does not report, so the dispatcher moves on to the next one; its
 * run falls back to the op's reference run for run-time shapes the kernel
 * does not cover (e.g. a Softmax axis that is not the last).
 */
#ifndef MOPT_OPS_OPS_CPU_H
#define MOPT_OPS_OPS_CPU_H

#include "kernels/cpu/cpu_kernels.h"
#include "ops/ops.h"

extern const op_impl *const ops_cpu_binary_impls[];    /* Add Sub Mul Div Max Min (2 inputs) */
extern const op_impl *const ops_cpu_unary_impls[];     /* Relu ... Reciprocal, Gelu, Clip */
extern const op_impl *const ops_cpu_softmax_impls[];   /* Softmax LogSoftmax */
extern const op_impl *const ops_cpu_layernorm_impls[]; /* LayerNormalization */
extern const op_impl *const ops_cpu_reduce_impls[];    /* ReduceSum Mean Max Min */
extern const op_impl *const ops_cpu_transpose_impls[]; /* Transpose */

/* prepare for tier isa: the tier's kernel table as state, or UNSUPPORTED. */
mopt_status ops_cpu_prepare(const char *isa, void **state);

/* Which axes a Reduce* node reduces (reduce.c): mask[a] for a < rank.
 * Returns 1 (known), 0 (axes input unknown at load time), -1 (error, *st
 * set). *noop: identity (empty axes with noop_with_empty_axes). */
int ops_reduce_mask(const op_ctx *ctx, const op_tensor *in, int n_in, int32_t rank, uint8_t *mask,
                    bool *noop, mopt_status *st);

/* Transpose's perm attribute (movement.c; default: the axes reversed) for
 * rank. Fails (INVALID_MODEL) when it is not a permutation of 0..rank-1,
 * setting the error message only when `report` (an impl's supports passes
 * false: the reference run reports it). */
mopt_status ops_transpose_perm(const op_ctx *ctx, int32_t rank, bool report, int32_t *perm);

/* Defines FAM_impl_<tier> for the three tiers (FAM_supports and FAM_run must
 * exist) and the list ops_cpu_FAM_impls. */
#define OPS_CPU_TIER(FAM, TIER)                                                                    \
    static mopt_status FAM##_prepare_##TIER(const op_ctx *ctx, const op_tensor *in, int n_in,      \
                                            const op_tensor *out, int n_out, void **state) {       \
        return ops_cpu_prepare(#TIER, state);                                                      \
    }                                                                                              \
    static const op_impl FAM##_impl_##TIER = {                                                     \
        "cpu-" #TIER, "cpu", FAM##_supports, FAM##_prepare_##TIER, NULL, FAM##_run, NULL};
#define OPS_CPU_IMPLS(FAM)                                                                         \
    OPS_CPU_TIER(FAM, avx512)                                                                      \
    OPS_CPU_TIER(FAM, avx2)                                                                        \
    OPS_CPU_TIER(FAM, portable)                                                                    \
    const op_impl *const ops_cpu_##FAM##_impls[] = {&FAM##_impl_avx512, &FAM##_impl_avx2,          \
                                                    &FAM##_impl_portable, NULL};

#endif
