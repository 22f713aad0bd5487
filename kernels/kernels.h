/*
 * kernels.h — the kernel contract: the descriptions every backend under
 * kernels/ (ref, cpu, onednn, openblas) shares with the op layer (lib/ops),
 * so that one problem is described once whoever computes it:
 *   - kn_act, kn_act_params: the activations a fused epilogue (or the cpu
 *     unary kernels) apply, one enum for every backend;
 *   - kn_addend: an operand added to an output with broadcast strides;
 *   - kn_gemm: one batched, strided GEMM problem, and kn_gemm_each, the one
 *     walk over its batch; its providers are ref_gemm_batched_f32/_f64
 *     (kernels/ref/ref_matmul.h), oblas_gemm_batched (kernels/openblas) and
 *     onednn_matmul_geometry (kernels/onednn, which runs the batch itself);
 *   - attn_params: the attention kernels' parameter block (ref and cpu);
 *   - kn_decode_attn: attention of query rows over a token-major KV cache,
 *     or over the same cache kept as bf16 tiles (kn_kvt_*).
 * Kernels see only pointers, shapes and these structs, never the IR; nothing
 * under kernels/ includes lib/.
 */
#ifndef MOPT_KERNELS_KERNELS_H
#define MOPT_KERNELS_KERNELS_H

#include <mopt/mopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- activations and epilogues ------------------------------------------ */

/* Activations an epilogue applies (docs/fused_ops.md). The values are shared
 * by every backend (cpu_unop extends them with more math). */
typedef enum kn_act {
    KN_ACT_NONE = 0,
    KN_ACT_RELU = 1,
    KN_ACT_LEAKY_RELU = 2,   /* alpha: slope */
    KN_ACT_CLIP = 3,         /* alpha: min, beta: max */
    KN_ACT_HARD_SWISH = 4,   /* x * clamp(x / 6 + 1/2, 0, 1) */
    KN_ACT_HARD_SIGMOID = 5, /* clamp(alpha * x + beta, 0, 1) */
    KN_ACT_SIGMOID = 6,
    KN_ACT_TANH = 7,
    KN_ACT_GELU = 8,      /* erf form */
    KN_ACT_GELU_TANH = 9, /* tanh approximation */
    KN_ACT_SWISH = 10,    /* x * sigmoid(x) (SiLU) */
    KN_ACT_COUNT = 11
} kn_act;

typedef struct kn_act_params {
    kn_act act;
    float alpha, beta;
} kn_act_params;

/* An operand added to an output: data read at the element strides given per
 * output axis (0 on broadcast axes). */
typedef struct kn_addend {
    const float *data; /* NULL: absent */
    int64_t strides[MOPT_MAX_RANK];
} kn_addend;

/* ---- batched, strided GEMM ----------------------------------------------- */

/* For every batch index t (row-major over batch[0..batch_rank)):
 *   C_t[M,N] = alpha * op(A_t)[M,K] * op(B_t)[K,N] + beta * C_t
 * with X_t = X + sum_i t_i * x_bs[i] (element strides, 0 on an axis the
 * operand broadcasts over). A_t is M x K with row stride lda (>= K), or
 * stored K x M (lda >= M) when trans_a; likewise B_t is K x N (ldb) or
 * stored N x K when trans_b; C_t is M x N with row stride ldc. beta == 0:
 * C is not read. C never overlaps A or B. */
typedef struct kn_gemm {
    int64_t M, N, K;
    bool trans_a, trans_b;
    int64_t lda, ldb, ldc;
    float alpha, beta;
    int32_t batch_rank; /* 0 .. MOPT_MAX_RANK - 2 */
    int64_t batch[MOPT_MAX_RANK];
    int64_t a_bs[MOPT_MAX_RANK], b_bs[MOPT_MAX_RANK], c_bs[MOPT_MAX_RANK];
} kn_gemm;

/* Number of products of g (the batch's element count; 1 without batch). */
int64_t kn_gemm_count(const kn_gemm *g);

/* Calls fn once per batch index, in row-major order, with the element
 * offsets of that product's A, B and C. */
typedef void (*kn_gemm_one_fn)(void *arg, const kn_gemm *g, int64_t off_a, int64_t off_b,
                               int64_t off_c);
void kn_gemm_each(const kn_gemm *g, kn_gemm_one_fn fn, void *arg);

/* ---- attention ----------------------------------------------------------- */

/* An attention mask over [B, H, query rows, keys]: at most one of add
 * (additive) and keep (nonzero = attend), or neither, read at element
 * strides sb, sh, sq, sk (0 on broadcast axes). Both attention parameter
 * blocks below hold one. */
typedef struct kn_attn_mask {
    const float *add;
    const uint8_t *keep;
    int64_t sb, sh, sq, sk;
} kn_attn_mask;

/* mopt.Attention: O = softmax(scale * Q @ K^T + mask) @ V per batch and head.
 * Layouts are element strides, so one kernel serves both "bhsd" ([B,H,S,D])
 * and "bsh" ([B,S,H*D]) tensors. Semantics shared by every attention kernel:
 * scores of keys excluded by the bool mask or causality are dropped; a row
 * left with no key, or whose every score is -inf, gives zeros. Otherwise it
 * is the exact unfused sequence (a finite additive mask never empties a row). */
typedef struct attn_params {
    int64_t B, H, Sq, Sk, D, Dv;
    /* element strides (batch, head, sequence) of Q, K, V and O; the last
     * (feature) axis is contiguous */
    int64_t q_sb, q_sh, q_ss;
    int64_t k_sb, k_sh, k_ss;
    int64_t v_sb, v_sh, v_ss;
    int64_t o_sb, o_sh, o_ss;
    float scale;
    bool causal;       /* query i sees keys j <= i + (Sk - Sq) */
    kn_attn_mask mask; /* optional, over [B, H, Sq, Sk] */
    /* optional workspace for the fused kernels: `threads` blocks of
     * work_per_thread bytes, 64-byte aligned (see cpu_attention_*_scratch);
     * NULL: the kernel allocates its own */
    void *work;
    size_t work_per_thread;
} attn_params;

/* ---- decode attention over a token-major KV cache ------------------------ */

/* mopt.DecodeAttention (lib/ops/kvcache.c, made by the kv_cache pass): per
 * row (b, h, m),
 *   s[t] = scale * q[b, h, m, :] . K[b, t, h, :]          t < T
 *   s[t] = keep[b, h, m, t] ? s[t] : fill   (Where)   or   s[t] + add[...]
 *   y[b, h, m, :] = sum_t softmax(s)[t] V[b, t, h, :]
 * q [B, H, M, D] and y [B, H, M, Dv] contiguous; K [B, T, H, D] and V
 * [B, T, H, Dv] the token-major caches (a key's row stride H * D). The mask
 * (mask: at most one of keep/add) is read at element strides over [B, H, M, T], 0
 * on broadcast axes. A causal mask may come as positions instead (a
 * decoder's mask folded by the kv_cache pass): with qpos, key t is hidden
 * from row (b, h, m) when t > qpos[b * qp_sb + m * qp_sm]; with kpad, when
 * kpad[b * kp_sb + t] == 0 (a padding mask); a hidden key's score is fill,
 * as keep's. The kernels read only the keys up to the row's position
 * (a hidden key's weight e^(fill - max) is 0 in f32 unless the visible
 * scores are within ~104 of fill, when they take part as well). As the
 * unfused softmax: a row whose every score is -inf gives NaN; the fill
 * takes part like any score (a row masked whole with a finite fill averages
 * V). */
typedef struct kn_decode_attn {
    int64_t B, H, M, T, D, Dv;
    const float *q, *k, *v;
    float *y;
    float scale, fill;
    kn_attn_mask mask;          /* optional, over [B, H, M, T] */
    const int64_t *qpos, *kpad; /* optional: query positions [B, M], key mask [B, T] */
    int64_t qp_sb, qp_sm, kp_sb;
    /* When set (B == 1), K and V are not the rows k and v but bf16 tiles
     * (kn_kvt_k_index / kn_kvt_v_index); k and v are then unused. */
    const uint16_t *kt, *vt;
} kn_decode_attn;

/* The bf16 tiles of a KV cache (the generator's kv_cache_dtype=bf16, one
 * batch): the token-major rows [T, H, D] of K regrouped so that a 512-bit
 * load holds 16 keys of a head, each 32-bit lane the pair of dims (2r,
 * 2r + 1) of one key: [T / 16][H][Dp / 2][16 keys][2 dims], Dp = D rounded
 * up to even (the odd dim's pad is 0); and V so that a lane holds a pair of
 * keys (2j, 2j + 1) of one dim: [T / 32][H][Dv][16 key pairs][2 keys].
 * vdpbf16ps then does two products per lane with no horizontal sums over
 * the head dim. A buffer of capacity cap keys (a multiple of
 * KN_KVT_ALIGN) holds kn_kvt_elems(cap, H, D) bf16 values. */
#define KN_KVT_ALIGN 32
static inline int64_t kn_kvt_dpad(int64_t d) { return (d + 1) & ~(int64_t)1; }
static inline int64_t kn_kvt_elems(int64_t cap, int64_t H, int64_t D) {
    return (cap + KN_KVT_ALIGN - 1) / KN_KVT_ALIGN * KN_KVT_ALIGN * H * kn_kvt_dpad(D);
}
static inline int64_t kn_kvt_k_index(int64_t H, int64_t D, int64_t t, int64_t h, int64_t d) {
    return (((t / 16 * H + h) * (kn_kvt_dpad(D) / 2) + d / 2) * 16 + t % 16) * 2 + d % 2;
}
static inline int64_t kn_kvt_v_index(int64_t H, int64_t Dv, int64_t t, int64_t h, int64_t d) {
    return (((t / 32 * H + h) * Dv + d) * 16 + t % 32 / 2) * 2 + t % 2;
}

/* Keys visible to row (b, m) from its position: qpos[b, m] + 1 clamped to
 * [0, T], or T without qpos. */
static inline int64_t kn_decode_attn_visible(const kn_decode_attn *p, int64_t b, int64_t m) {
    if (!p->qpos) return p->T;
    const int64_t pos = p->qpos[b * p->qp_sb + m * p->qp_sm];
    return pos < 0 ? 0 : pos >= p->T ? p->T : pos + 1;
}

#endif
