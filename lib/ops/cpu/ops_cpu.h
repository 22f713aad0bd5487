/*
 * ops_cpu.h — the "cpu" backend's op implementations (lib/ops/cpu/<family>_cpu.c):
 * one op_impl per ISA tier, ops_impl_cpu_<family>_{avx512,avx2,portable},
 * listed best first in lib/ops/impls.c (the lists the op tables of
 * elementwise.c, normalization.c, reduce.c and movement.c point to). Each
 * impl's prepare refuses (UNSUPPORTED) a tier that cpu_get() does not
 * report, so the dispatcher moves on to the next one, and keeps the tier's
 * kernel table as state; its run declines (MOPT_ERR_UNSUPPORTED, nothing
 * written) run-time shapes the kernel does not cover (e.g. a Softmax axis
 * that is not the last): the executor then runs the op's reference.
 *
 * Why one impl per tier rather than one whose prepare picks the tier: the
 * tiers are distinct kernels that tests/kernels and bench/eltwise_bench run
 * side by side by name, and the list order already makes the choice.
 */
#ifndef MOPT_OPS_OPS_CPU_H
#define MOPT_OPS_OPS_CPU_H

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/ref/ref_resize.h"
#include "ops/impls.h"
#include "ops/ops.h"

/* prepare for tier isa: the tier's kernel table as state, or UNSUPPORTED. */
mopt_status ops_cpu_prepare(const char *isa, void **state);

/* An op_impl of the cpu backend whose prepare may keep state (packed
 * weights) for release; variant_ (NULL: the name) names what it chose. */
#define OPS_CPU_STATE_IMPL(name_, supports_, prepare_, release_, run_, variant_)                   \
    {                                                                                              \
        .name = name_, .backend = "cpu", .supports = supports_, .prepare = prepare_,               \
        .release = release_, .run = run_, .variant = variant_,                                     \
    }

/* A constant s8 weight W [K, N] packed once for the VNNI rows kernel
 * (cpu_qrows_*; QLinearMatMul, StaticQMatMul): wp (aligned) and, when asked
 * for, its column sums wsum (else NULL). */
typedef struct ops_cpu_qrows {
    int8_t *wp;
    int32_t *wsum;
    int64_t K, N;
} ops_cpu_qrows;
/* Does this machine run the VNNI integer kernels (AVX-512 tier and
 * AVX512-VNNI)? The int8 impls' prepare refuses it otherwise. */
bool ops_cpu_has_vnni(void);
/* Packs w (K, N from its shape) into *q, with the column sums when
 * with_sums; OUT_OF_MEMORY (reported) leaves *q for ops_cpu_qrows_free. */
mopt_status ops_cpu_qrows_pack(const op_ctx *ctx, const op_tensor *w, bool with_sums,
                               ops_cpu_qrows *q);
void ops_cpu_qrows_free(ops_cpu_qrows *q);
/* acc [m, ldy] = a [m, K] (u8 rows) x W on the VNNI rows kernel, as a
 * cpu_parallel_for job: ops_cpu_qrows_range computes rows lo..hi-1. */
typedef struct ops_cpu_qrows_job {
    const ops_cpu_qrows *w;
    const uint8_t *a;
    int32_t *acc;
    int64_t ldy;
} ops_cpu_qrows_job;
#if defined(__x86_64__)
void ops_cpu_qrows_range(void *job, int64_t lo, int64_t hi);
#endif
/* Rows per parallel chunk of an [m, K] x [K, N] rows-kernel product: about
 * 1 MFLOP, at least 4. */
int64_t ops_cpu_qrows_grain(int64_t K, int64_t N);

/* y [outer, inner] = op over the middle axis of x [outer, red, inner] with
 * tier k's reduce, the outer rows split over the threads in chunks of about
 * 32768 floats (reduce_cpu.c; the Reduce* ops, GlobalAveragePool and
 * ChannelsLastGlobalAveragePool). */
void ops_cpu_reduce_rows(const cpu_kernels *k, cpu_reduce_op op, const float *x, float *y,
                         int64_t outer, int64_t red, int64_t inner, int threads);

/* op_impl.variant of the integer impls whose prepare may pack weights
 * (state non-NULL): "cpu-vnni-packed" / "cpu-vnni", and the portable tier's. */
const char *ops_cpu_variant_vnni(const void *state);
const char *ops_cpu_variant_portable(const void *state);

/* The M = 1 product's weight layout (gemv_cpu.c), shared with the oneDNN
 * impls' batch-1 path (a 1x1 Conv on a 1x1 image): W [K, N] (trans: [N, K])
 * packed into column panels that each stream sequentially; NULL when out of
 * memory (free with mopt_aligned_free). ops_gemv_panels: y[N] = x[K] * W
 * on such panels with tier k's kernel; ops_gemv_panels_rows the same for M
 * rows (1..CPU_GEMV_MAX_ROWS) of x [M, K] and y [M, N], the panels read once
 * per 4 rows. */
float *ops_gemv_pack(const float *w, int64_t K, int64_t N, bool trans);
void ops_gemv_panels(const cpu_kernels *k, const float *packed, int64_t K, int64_t N,
                     const float *x, float *y, int threads);
void ops_gemv_panels_rows(const cpu_kernels *k, const float *packed, int64_t K, int64_t N,
                          const float *x, int64_t M, float *y, int threads);
/* Gemm's y[N] = alpha * y + beta * C after an M = 1 product (C of N or 1
 * values, or absent). */
struct gemm_params;
void ops_gemv_gemm_epilogue(const struct gemm_params *p, const op_tensor *in, int n_in, float *y,
                            int64_t N);

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

/* Pad (movement.c) in constant mode: the pads of each axis (begin, end; may
 * be negative) and the pad value's bytes (16) for this run. Returns 1 when
 * known, else 0 (another mode, or *st set: the reference run reports it). */
int ops_pad_plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *begin, int64_t *end,
                 unsigned char *value, mopt_status *st);

/* Slice (movement.c): the source offset of the first element and the
 * source stride of each output axis (elements; negative for negative
 * steps) for this run. Returns 1 when known, else 0 (*st may be set: the
 * reference run reports it). */
int ops_slice_plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *off, int64_t *src_st,
                   mopt_status *st);

/* Resize/Upsample (resize.c): the output dims, per-axis scales and roi
 * (2 * rank values) of the node for these inputs. Returns 1 when they are
 * not known yet (sizes or scales without data), else 0 with *st set
 * (MOPT_OK or the failure). */
int ops_resize_plan(const op_ctx *ctx, const op_tensor *in, int n_in, int64_t *out_dims,
                    double *scales, double *roi, mopt_status *st);
/* The node's mode, coordinate and nearest rules (resize.c's params). */
const ref_resize_params *ops_resize_kernel_params(const op_ctx *ctx);
/* Whether the node is mopt.ChannelsLastResize: X and Y [N, H, W, C] in memory. */
bool ops_resize_channels_last(const op_ctx *ctx);

/* Defines ops_impl_cpu_FAM_<TIER> (FAM_supports and FAM_run must exist),
 * with op_impl.bf16_io = BF16_IO and op_impl.u8_io = U8_IO. */
#define OPS_CPU_TIER_IO(FAM, TIER, BF16_IO, U8_IO)                                                 \
    static mopt_status FAM##_prepare_##TIER(const op_ctx *ctx, const op_tensor *in, int n_in,      \
                                            const op_tensor *out, int n_out, void **state) {       \
        return ops_cpu_prepare(#TIER, state);                                                      \
    }                                                                                              \
    const op_impl ops_impl_cpu_##FAM##_##TIER = {.name = "cpu-" #TIER,                             \
                                                 .backend = "cpu",                                 \
                                                 .supports = FAM##_supports,                       \
                                                 .prepare = FAM##_prepare_##TIER,                  \
                                                 .run = FAM##_run,                                 \
                                                 .bf16_io = BF16_IO,                               \
                                                 .u8_io = U8_IO};
/* As OPS_CPU_TIER_IO with f32 inputs and outputs only. */
#define OPS_CPU_TIER(FAM, TIER) OPS_CPU_TIER_IO(FAM, TIER, 0, 0)
/* As OPS_CPU_TIER_IO with op_impl.bf16_io = BF16_IO only. */
#define OPS_CPU_TIER_BF16(FAM, TIER, BF16_IO) OPS_CPU_TIER_IO(FAM, TIER, BF16_IO, 0)
/* The three tiers of FAM; lib/ops/impls.c lists them. */
#define OPS_CPU_IMPLS(FAM)                                                                         \
    OPS_CPU_TIER(FAM, avx512)                                                                      \
    OPS_CPU_TIER(FAM, avx2)                                                                        \
    OPS_CPU_TIER(FAM, portable)

#endif
