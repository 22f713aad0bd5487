/*
 * cpu_kernels.h — the project's own vectorized kernels for memory-bound ops
 * (kernels/cpu): elementwise binary/unary f32, softmax, layer norm, row and
 * column reductions, 32-bit transposes, nearest/bilinear resize, the M = 1
 * matrix product, the ConvTranspose whose kernel equals its stride. Each
 * kernel exists once per tier —
 * _avx512, _avx2 (files compiled with those flags) and _portable (GCC/Clang
 * vector extensions) — and is reached through a cpu_kernels table.
 *
 * Callers (lib/ops/<family>_cpu.c) must only use cpu_kernels_avx512/_avx2
 * when cpu_get() reports the tier (CPU and OS support): the code in those
 * tables faults on other machines. Kernels see only pointers and sizes,
 * never the IR, and never allocate.
 */
#ifndef MOPT_KERNELS_CPU_CPU_KERNELS_H
#define MOPT_KERNELS_CPU_CPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"

typedef enum cpu_binop {
    CPU_BIN_ADD,
    CPU_BIN_SUB,
    CPU_BIN_MUL,
    CPU_BIN_DIV,
    CPU_BIN_MAX, /* NaN propagates (numpy.maximum) */
    CPU_BIN_MIN, /* NaN propagates (numpy.minimum) */
    CPU_BIN_COUNT
} cpu_binop;

/* Unary ops: the activations of kernels.h under the same values (so a
 * kn_act other than NONE is a cpu_unop), then more math. */
typedef enum cpu_unop {
    CPU_UN_RELU = KN_ACT_RELU,
    CPU_UN_LEAKY_RELU = KN_ACT_LEAKY_RELU, /* alpha */
    CPU_UN_CLIP = KN_ACT_CLIP,             /* alpha = low bound, beta = high bound (+-inf: none) */
    CPU_UN_HARD_SWISH = KN_ACT_HARD_SWISH,
    CPU_UN_HARD_SIGMOID = KN_ACT_HARD_SIGMOID, /* alpha, beta */
    CPU_UN_SIGMOID = KN_ACT_SIGMOID,
    CPU_UN_TANH = KN_ACT_TANH,
    CPU_UN_GELU = KN_ACT_GELU,           /* exact (erf) form */
    CPU_UN_GELU_TANH = KN_ACT_GELU_TANH, /* tanh approximation */
    CPU_UN_SWISH = KN_ACT_SWISH,         /* x * sigmoid(x) */
    CPU_UN_ERF = KN_ACT_COUNT,
    CPU_UN_EXP,
    CPU_UN_SQRT,
    CPU_UN_NEG,
    CPU_UN_ABS,
    CPU_UN_RECIPROCAL,
    CPU_UN_COUNT
} cpu_unop;

typedef struct cpu_unary_params {
    float alpha, beta;
} cpu_unary_params;

typedef enum cpu_reduce_op {
    CPU_RED_SUM,
    CPU_RED_MEAN,
    CPU_RED_MAX, /* NaN propagates */
    CPU_RED_MIN, /* NaN propagates */
    CPU_RED_COUNT
} cpu_reduce_op;

/* y[i] = a[i*sa] op b[i*sb] for i < n, with sa and sb each 0 or 1. y may be a. */
typedef void (*cpu_binary_fn)(cpu_binop op, const float *a, int64_t sa, const float *b, int64_t sb,
                              float *y, int64_t n);
/* Row r (r < rows) of x (rows x len, contiguous) against the scalar s[r]:
 * y[r*len + i] = x[r*len + i] op s[r] when row_first, else s[r] op x[...]. */
typedef void (*cpu_binary_rows_fn)(cpu_binop op, const float *x, const float *s, float *y,
                                   int64_t rows, int64_t len, bool row_first);
/* y[i] = op(x[i]) for i < n; y may be x. p may be NULL when op takes none. */
typedef void (*cpu_unary_fn)(cpu_unop op, const float *x, float *y, int64_t n,
                             const cpu_unary_params *p);
/* Softmax (or log-softmax) of each of `rows` rows of `len` (>= 1) floats. */
typedef void (*cpu_softmax_fn)(const float *x, float *y, int64_t rows, int64_t len, bool log);
/* Softmax (or log-softmax) along a strided axis: for each column c < cols,
 * over the len values x[r * stride + c] (r < len, len >= 1), into y alike. */
typedef void (*cpu_softmax_cols_fn)(const float *x, float *y, int64_t len, int64_t stride,
                                    int64_t cols, bool log);
/* y = x * a + b on `rows` contiguous rows of `len` floats: per_row, the
 * scalars a[r], b[r] for row r (plain [N, C, spatial] data); else the
 * vectors a[i], b[i] along each row (channels-last data). b may be NULL
 * (no shift). y may be x. The product is rounded before the sum (no fma),
 * bit for bit as the reference kernels. */
typedef void (*cpu_affine_fn)(const float *x, const float *a, const float *b, float *y,
                              int64_t rows, int64_t len, bool per_row);
/* The ConvTranspose whose kernel equals its stride (2-D, no pads, dilation 1,
 * group 1; deconv-impl.h): each input pixel writes its own kh x kw block.
 * x [C][H][W] and y [M][H kh][W kw] are one image; w is ONNX's [C][M][kh][kw],
 * b [M] or NULL; act is applied last. kh * kw <= CPU_DECONV_MAX_TAPS.
 * Writes the output rows of input rows [h0, h1). */
#define CPU_DECONV_MAX_TAPS 16
enum { CPU_DECONV_NONE = 0, CPU_DECONV_RELU, CPU_DECONV_SIGMOID };
typedef struct cpu_deconv_plan {
    int64_t C, M, H, W, kh, kw;
    const float *w, *b;
    int act;
} cpu_deconv_plan;
typedef void (*cpu_deconv_fn)(const cpu_deconv_plan *p, const float *x, float *y, int64_t h0,
                              int64_t h1);
/* Layer norm of each of `rows` rows of `len` (>= 1) floats: (x - mean) /
 * sqrt(var + eps) * scale + bias (bias may be NULL); mean and inv_std (each
 * may be NULL) receive one value per row. */
typedef void (*cpu_layernorm_fn)(const float *x, const float *scale, const float *bias, float eps,
                                 float *y, float *mean, float *inv_std, int64_t rows, int64_t len);
/* x is [outer, red, inner] (red >= 1); y[o*inner + i] reduces over red.
 * inner == 1 is the row case. */
typedef void (*cpu_reduce_fn)(cpu_reduce_op op, const float *x, float *y, int64_t outer,
                              int64_t red, int64_t inner);
/* MaxPool over 2 spatial axes of images stored [H, W, c] (c channels
 * contiguous per pixel: channels-last with c = C, or one 16-channel block
 * of oneDNN's blocked nChw16c with c = 16); y is [OH, OW, c] per image.
 * Each output is the maximum over its taps inside the input (pads never
 * count), taken as v > acc ? v : acc from -inf in tap order, as
 * ref_maxpool_f32 (so NaN taps are skipped alike). */
typedef struct cpu_maxpool_plan {
    int64_t h, w, c, oh, ow;
    int64_t kh, kw, sh, sw, dh, dw, pt, pl;
} cpu_maxpool_plan;
/* Output rows [r0, r1) of images * oh (row r: image r / oh, row r % oh). */
typedef void (*cpu_maxpool_fn)(const cpu_maxpool_plan *p, const float *x, float *y, int64_t r0,
                               int64_t r1);
/* y (cols x rows) = transpose of x (rows x cols), 32-bit elements, one matrix;
 * only output rows [c0, c1) (input columns) are written. */
typedef void (*cpu_transpose_fn)(const uint32_t *x, uint32_t *y, int64_t rows, int64_t cols,
                                 int64_t c0, int64_t c1);

/* Resize of the last two axes of planes [ih, iw] -> [oh, ow], from tables
 * the caller builds once per shape (lib/ops/cpu/resize_cpu.c). Nearest:
 * y[r][c] = x[y0[r]][x0[c]] (wy, wx, y1, x1 unused); x2 says x0[c] == c / 2
 * and ow == 2 iw (the integer 2x upscale, duplicated without gathers).
 * Linear: y[r][c] = sum over the taps (y0|y1, x0|x1) of x times the tap
 * weights: wy[r] weighs row y0[r], wy[oh + r] row y1[r]; wx likewise. */
typedef struct cpu_resize_plan {
    int64_t ih, iw, oh, ow;
    bool linear, x2;
    const int32_t *y0, *y1, *x0, *x1;
    const float *wy, *wx; /* linear: 2 * oh and 2 * ow weights */
} cpu_resize_plan;
/* Resizes `planes` planes of x into y. work: 2 * ow floats (linear only). */
typedef void (*cpu_resize_fn)(const cpu_resize_plan *p, const float *x, float *y, int64_t planes,
                              float *work);

/* y (1 x width) = x (1 x K) @ b (K rows of width floats, row stride ld >= width). */
typedef void (*cpu_gemv_fn)(const float *x, const float *b, int64_t K, int64_t ld, int64_t width,
                            float *y);
/* y (M x width, row stride ldy) = x (M x K, row stride ldx) @ b (as
 * cpu_gemv_fn's), b read once per 4 rows; for small M (a batch of GEMVs). */
#define CPU_GEMV_MAX_ROWS 8
typedef void (*cpu_gemv_rows_fn)(const float *x, int64_t ldx, int64_t M, const float *b, int64_t K,
                                 int64_t ld, int64_t width, float *y, int64_t ldy);

/* mopt.DecodeAttention (kn_decode_attn, kernels.h) for rows [lo, hi) of
 * B * H * M; 1 <= D, Dv <= CPU_DECODE_ATTN_MAX_D. */
#define CPU_DECODE_ATTN_MAX_D 512
typedef void (*cpu_decode_attn_fn)(const kn_decode_attn *p, int64_t lo, int64_t hi);

typedef struct cpu_kernels {
    const char *isa; /* "avx512", "avx2", "portable" */
    cpu_binary_fn binary_f32;
    cpu_binary_rows_fn binary_rows_f32;
    cpu_unary_fn unary_f32;
    cpu_softmax_fn softmax_f32;
    cpu_layernorm_fn layernorm_f32;
    cpu_reduce_fn reduce_f32;
    cpu_transpose_fn transpose_x32;
    cpu_resize_fn resize_f32;
    cpu_gemv_fn gemv_f32;
    cpu_gemv_rows_fn gemv_rows_f32;
    cpu_decode_attn_fn decode_attn_f32;
    cpu_decode_attn_fn decode_attn_tiles; /* K and V as bf16 tiles (kt, vt), B == 1 */
    cpu_softmax_cols_fn softmax_cols_f32;
    cpu_affine_fn affine_f32;
    cpu_deconv_fn deconv_f32;
    cpu_maxpool_fn maxpool_f32;
} cpu_kernels;

extern const cpu_kernels cpu_kernels_avx512;
extern const cpu_kernels cpu_kernels_avx2;
extern const cpu_kernels cpu_kernels_portable;

/* The table for tier isa ("avx512", "avx2", "portable"), or NULL when this
 * machine (cpu_get(), capped by MOPT_ISA) cannot run it. */
const cpu_kernels *cpu_kernels_for(const char *isa);

/* Runs fn(arg, lo, hi) over [0, n) split into contiguous chunks on up to
 * `threads` threads (the calling thread and the library's own workers, see
 * cpu_pool.c), each chunk at least `grain` items (so small work stays on
 * the calling thread). Up to 8 chunks per thread, claimed one by one, so a
 * descheduled thread stalls at most its chunk; the caller never waits for
 * a worker to start. fn must not depend on which thread runs a range. */
typedef void (*cpu_range_fn)(void *arg, int64_t lo, int64_t hi);
void cpu_parallel_for(int threads, int64_t n, int64_t grain, cpu_range_fn fn, void *arg);

/* As cpu_parallel_for, the same chunks, on the OpenMP team that oneDNN and
 * OpenBLAS run on (built with OpenMP; else cpu_parallel_for). For kernels
 * that run between oneDNN nodes: oneDNN's OpenMP workers keep spinning on
 * the other cores after each oneDNN node, and a worker of the library's
 * pool woken beside one gets little of its core (MobileNetV3-like b1 at 2
 * threads: the pointwise GEMM's nodes ran no faster than at 1 thread). The
 * chunks are claimed dynamically; the caller waits for the team at the end
 * (a fork-join, so under contention the runtime's adaptive threads choose
 * 1 thread for such nodes when 2 lose). */
void cpu_parallel_for_omp(int threads, int64_t n, int64_t grain, cpu_range_fn fn, void *arg);

#define CPU_DECLARE_TIER(SFX)                                                                      \
    void cpu_binary_f32_##SFX(cpu_binop op, const float *a, int64_t sa, const float *b,            \
                              int64_t sb, float *y, int64_t n);                                    \
    void cpu_binary_rows_f32_##SFX(cpu_binop op, const float *x, const float *s, float *y,         \
                                   int64_t rows, int64_t len, bool row_first);                     \
    void cpu_unary_f32_##SFX(cpu_unop op, const float *x, float *y, int64_t n,                     \
                             const cpu_unary_params *p);                                           \
    void cpu_softmax_f32_##SFX(const float *x, float *y, int64_t rows, int64_t len, bool log);     \
    void cpu_layernorm_f32_##SFX(const float *x, const float *scale, const float *bias, float eps, \
                                 float *y, float *mean, float *inv_std, int64_t rows,              \
                                 int64_t len);                                                     \
    void cpu_reduce_f32_##SFX(cpu_reduce_op op, const float *x, float *y, int64_t outer,           \
                              int64_t red, int64_t inner);                                         \
    void cpu_transpose_x32_##SFX(const uint32_t *x, uint32_t *y, int64_t rows, int64_t cols,       \
                                 int64_t c0, int64_t c1);                                          \
    void cpu_resize_f32_##SFX(const cpu_resize_plan *p, const float *x, float *y, int64_t planes,  \
                              float *work);                                                        \
    void cpu_gemv_f32_##SFX(const float *x, const float *b, int64_t K, int64_t ld, int64_t width,  \
                            float *y);                                                             \
    void cpu_gemv_rows_f32_##SFX(const float *x, int64_t ldx, int64_t M, const float *b,           \
                                 int64_t K, int64_t ld, int64_t width, float *y, int64_t ldy);     \
    void cpu_decode_attn_f32_##SFX(const kn_decode_attn *p, int64_t lo, int64_t hi);               \
    void cpu_decode_attn_tiles_##SFX(const kn_decode_attn *p, int64_t lo, int64_t hi);             \
    void cpu_softmax_cols_f32_##SFX(const float *x, float *y, int64_t len, int64_t stride,         \
                                    int64_t cols, bool log);                                       \
    void cpu_affine_f32_##SFX(const float *x, const float *a, const float *b, float *y,            \
                              int64_t rows, int64_t len, bool per_row);                            \
    void cpu_deconv_f32_##SFX(const cpu_deconv_plan *p, const float *x, float *y, int64_t h0,      \
                              int64_t h1);                                                         \
    void cpu_maxpool_f32_##SFX(const cpu_maxpool_plan *p, const float *x, float *y, int64_t r0,    \
                               int64_t r1);

CPU_DECLARE_TIER(avx512)
CPU_DECLARE_TIER(avx2)
CPU_DECLARE_TIER(portable)

#endif
