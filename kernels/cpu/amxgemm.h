/*
 * amxgemm.h — our own bf16 GEMM on AMX tiles (issue 11): Y [M, N] =
 * act(alpha * A [M, K] B [K, N] + bias + residual), B a constant weight
 * packed once (at model build) into the AMX B layout, A read as it is
 * stored (bf16 rows with their stride) or first converted to bf16 (f32 A,
 * K not a multiple of 32, the last rows of a block), f32 accumulation in
 * tiles, the epilogue in zmm registers on the accumulators while they are
 * in L1, Y written f32 or bf16. AMX-BF16 + AVX512-BF16 only
 * (amxgemm-amx.c; call only when cpu_get() reports amx_bf16 and
 * avx512_bf16, and after the OS granted the tile state); packing and the
 * work split are portable (amxgemm.c). The op glue is
 * lib/ops/cpu/amxgemm_cpu.c. Every output element is one sum over K in a
 * fixed order, whichever thread computes it: the bits do not depend on the
 * work split.
 */
#ifndef MOPT_KERNELS_CPU_AMXGEMM_H
#define MOPT_KERNELS_CPU_AMXGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "mopt_config.h"

#define CPU_AMX_NR 32       /* columns per packed panel (two 16-column tiles) */
#define CPU_AMX_KS 32       /* K per tile step (16 pairs of bf16) */
#define CPU_AMX_MR 32       /* rows per register block (two 16-row tiles) */
#define CPU_AMX_MB_MAX 1024 /* the most rows of an M block (cpu_amx_plan.mb) */

typedef struct cpu_amx_plan {
    int64_t K, N;       /* the product's K and N */
    int64_t Kp, Np;     /* K rounded up to CPU_AMX_KS, N to CPU_AMX_NR */
    int mb;             /* rows per M block (multiple of CPU_AMX_MR, <= CPU_AMX_MB_MAX) */
    int kc;             /* K per chunk (multiple of CPU_AMX_KS): a panel's chunk stays in L1 */
    int pg;             /* panels per work unit */
    const uint16_t *bp; /* the packed B (cpu_amx_pack) */
    const float *bias;  /* [N] or NULL */
    float alpha;        /* scales the product */
    kn_act act;         /* any kn_act (cpu_amx_act_ok) */
    float act_alpha, act_beta;
    bool post; /* then Y = post_scale * act(...) + post_shift (mopt.FusedConv's) */
    float post_scale, post_shift;
} cpu_amx_plan;

/* Whether the epilogue computes activation act in registers. */
bool cpu_amx_act_ok(kn_act act);

/* bf16 elements of the packed B: Kp x Np. */
size_t cpu_amx_packed_elems(int64_t K, int64_t N);
/* Packs B (f32; [K, N] row-major, or [N, K] when trans) into bp, rounded
 * to bf16 (nearest even): panel p (columns [32p, 32p + 32), zero beyond N)
 * at bp + p 32 Kp; in it, step s (rows [32s, 32s + 32), zero beyond K) at
 * s 1024, its two tiles (columns 16h..16h+15) at h 512, element
 * (pair r, column j, e) = B[32s + 2r + e][32p + 16h + j] at r 32 + 2j + e. */
void cpu_amx_pack(const float *b, int64_t K, int64_t N, bool trans, uint16_t *bp);

/* Work units for M rows: (M block, group of pg panels), M block major. */
int64_t cpu_amx_units(const cpu_amx_plan *p, int64_t M);

/* The operands of one call: A [M, K] (bf16 when a_bf16, else f32; row
 * stride lda elements), the residual res (Y-shaped dense, f32 or bf16 per
 * res_bf16, or NULL; may be Y itself: each element is read before it is
 * stored), Y [M, N] (row stride N; bf16 when y_bf16, else f32). */
typedef struct cpu_amx_io {
    const void *a;
    int64_t lda, M;
    const void *res;
    void *y;
    bool a_bf16, res_bf16, y_bf16;
} cpu_amx_io;

/* Bytes of the scratch one cpu_amx_run call needs (64-byte aligned): the
 * accumulators of a block and its rows of A packed. */
size_t cpu_amx_scratch_bytes(const cpu_amx_plan *p);

#ifdef MOPT_HAVE_AMX
/* Computes units [u0, u1) of Y. Loads its own tile configuration and
 * releases the tiles at the end. */
void cpu_amx_run(const cpu_amx_plan *p, const cpu_amx_io *io, int64_t u0, int64_t u1,
                 void *scratch);
#endif

#endif
