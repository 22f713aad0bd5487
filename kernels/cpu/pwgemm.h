/*
 * pwgemm.h — the pointwise (1x1, stride 1, unpadded, one group) convolution
 * as a register-tiled GEMM of our own (issue 10): per image Y [hw, N] =
 * act(X [hw, K] W^T + bias + residual), W^T packed once (at model build)
 * into panels of `nr` columns, each tile of `mr` rows x one panel kept in
 * registers from its first sum (bias + residual loaded into the
 * accumulators) to its one store (the activation applied in registers). X
 * and Y are channels-last or oneDNN's nChw16c (channel blocks of 16), read
 * and written as they are. AVX-512 only (pwgemm-avx512.c; call only when
 * cpu_kernels_for("avx512") returns the tier); the op glue is
 * lib/ops/cpu/pwconv_cpu.c.
 */
#ifndef MOPT_KERNELS_CPU_PWGEMM_H
#define MOPT_KERNELS_CPU_PWGEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"

/* The most rows of a tile (cpu_pw_plan.mr) */
#define CPU_PW_MR_MAX 14

typedef struct cpu_pw_plan {
    int64_t hw;        /* output positions per image (= input positions) */
    int64_t K, N;      /* input and output channels */
    int mr, nr;        /* tile rows (1..CPU_PW_MR_MAX), panel columns (16, 32, 48 or 64) */
    bool x_blk, y_blk; /* X / Y (and the residual) in nChw16c, else channels-last */
    const float *wp;   /* the packed W^T (cpu_pw_pack) */
    const float *bias; /* [N] or NULL */
    kn_act act;        /* NONE, RELU, LEAKY_RELU, CLIP, HARD_SWISH or HARD_SIGMOID */
    float alpha, beta; /* the activation's parameters (kn_act_params) */
} cpu_pw_plan;

/* Whether the kernel computes activation act in registers. */
bool cpu_pw_act_ok(kn_act act);

/* Floats of W^T packed into panels of nr columns (N rounded up to 16). */
size_t cpu_pw_packed_floats(int64_t K, int64_t N);
/* Packs ONNX's W [N, K] (a 1x1 conv's [N, K, 1, 1]) into wp: panel p
 * (columns [p nr, p nr + w), w = nr, the last one N - p nr rounded up to 16,
 * zero-filled) at wp + p nr K, element (k, j) at k w + j. */
void cpu_pw_pack(const float *w, int64_t K, int64_t N, int nr, float *wp);

/* Work units of `batch` images: image-major, then panel, then row tile
 * (consecutive units of a panel reuse its packed columns). */
int64_t cpu_pw_units(const cpu_pw_plan *p, int64_t batch);
/* Computes units [u0, u1) of Y for X, the residual `res` (Y's layout and
 * shape, or NULL; may be Y itself: each element is read before the tile
 * that owns it is stored) into y. */
#if defined(__x86_64__)
void cpu_pw_run_avx512(const cpu_pw_plan *p, const float *x, const float *res, float *y, int64_t u0,
                       int64_t u1);
#endif

#endif
