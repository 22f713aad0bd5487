/*
 * decode_attn_cpu.c — the "cpu" backend for mopt.DecodeAttention (attention
 * of query rows over the token-major KV caches, lib/ops/kvcache.c): the
 * tier's kernel (kernels/cpu/decode_attn-impl.h) over the rows b, h, m,
 * split over ctx->threads when there is enough work. Head dims outside
 * 1..CPU_DECODE_ATTN_MAX_D go to the op's reference run. The avx512 impl
 * runs the avx2 kernel for head dims of 1..8 and 17..24 (a last zmm at
 * most half used; 256-bit vectors waste nothing there): on Zen 4, whose
 * 512-bit ops take two 256-bit slots, 4 heads of 24 over 256 keys went
 * from 3.7 to 3.0 ns per key and head, head dim 8 from 2.4 to 2.0 (head
 * dim 16: 2.5 vs 2.6, 64: 6.8 vs 9.8 for avx2).
 * Caches kept as bf16 tiles (the generator's kv_cache_dtype=bf16; p.kt,
 * p.vt) go to the tiles kernels: vdpbf16ps (decode_attn_tiles.h) when the
 * tier is avx512 and the CPU has AVX512-BF16, else the tier's own
 * (cpu_kernels.decode_attn_tiles, bf16 widened to f32).
 */
#include <string.h>

#include "kernels/cpu/decode_attn_tiles.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/impls.h"
#include "ops/kvcache.h"

/* Multiply-adds per thread below which splitting does not pay. */
#define GRAIN 32768

static bool decode_attn_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                                 const op_tensor *out, int n_out) {
    (void)ctx, (void)n_out;
    for (int k = 0; k < 3; k++)
        if (in[k].dtype != MOPT_DTYPE_F32) return false;
    return out[0].dtype == MOPT_DTYPE_F32 &&
           (!op_has_input(in, n_in, 3) || in[3].dtype == MOPT_DTYPE_BOOL ||
            in[3].dtype == MOPT_DTYPE_F32);
}

typedef struct da_job {
    cpu_decode_attn_fn rows; /* chosen once per run */
    kn_decode_attn p;
} da_job;

static void da_rows(void *arg, int64_t lo, int64_t hi) {
    const da_job *j = arg;
    j->rows(&j->p, lo, hi);
}

const char *ops_decode_attn_tiles_kernel(const char *kernel) {
    if (strcmp(kernel, "cpu-avx512") == 0)
        return cpu_decode_attn_tiles_bf16_ok() ? "cpu-avx512bf16 (vdpbf16ps)"
                                               : "cpu-avx512 (bf16 widened to f32)";
    if (strcmp(kernel, "cpu-avx2") == 0) return "cpu-avx2 (bf16 widened to f32)";
    if (strcmp(kernel, "cpu-portable") == 0) return "cpu-portable (bf16 widened to f32)";
    return "ref (bf16 widened to f32)";
}

/* A head dim whose last 512-bit vector would be at most half used, small
 * enough for the 256-bit kernel's registers. */
static bool half_zmm(int64_t d) { return d <= 24 && d % 16 >= 1 && d % 16 <= 8; }

static mopt_status decode_attn_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                   int n_out) {
    (void)n_out;
    const cpu_kernels *k = ctx->state;
    da_job j = {.rows = k->decode_attn_f32};
    mopt_status st = op_require_inputs(ctx, in, 3);
    if (!st) st = ops_decode_attn_problem(ctx, in, n_in, out, &j.p);
    if (st) return st;
    const kn_decode_attn *p = &j.p;
    if (p->D < 1 || p->Dv < 1 || p->D > CPU_DECODE_ATTN_MAX_D || p->Dv > CPU_DECODE_ATTN_MAX_D)
        return MOPT_ERR_UNSUPPORTED;
    int64_t rows = p->B * p->H * p->M, per_row = p->T * (p->D + p->Dv) + 1;
    int64_t grain = per_row >= GRAIN ? 1 : GRAIN / per_row;
    const bool avx512 = strcmp(k->isa, "avx512") == 0;
    if (p->kt) {
        j.rows = avx512 && cpu_decode_attn_tiles_bf16_ok() ? cpu_decode_attn_tiles_avx512bf16
                                                           : k->decode_attn_tiles;
    } else if (avx512 && half_zmm(p->D) && half_zmm(p->Dv)) {
        const cpu_kernels *a2 = cpu_kernels_for("avx2");
        if (a2) j.rows = a2->decode_attn_f32;
    }
    cpu_parallel_for(ctx->threads, rows, grain, da_rows, &j);
    return MOPT_OK;
}

OPS_CPU_IMPLS(decode_attn)
