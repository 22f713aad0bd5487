/*
 * attention_cpu.c — the "cpu" backend for mopt.Attention: the fused kernels
 * of kernels/cpu (online softmax over key tiles), one impl per ISA tier
 * ("cpu-avx512", "cpu-avx2", and "cpu" for portable C), listed best first in
 * lib/ops/impls.c. A tier's supports checks the CPU (cpu_get()); each keeps
 * a per-session workspace (ctx->scratch) grown to the largest shape seen, so
 * that steady-state runs allocate nothing, and the shape part of the kernel
 * parameters for the last input shapes (attention.h's attn_plan), so that
 * they are not worked out again on every run. On a node of precision bf16 or
 * int8 with AVX512-BF16, "cpu-avx512" runs the bf16-product variant of the
 * kernel (on int8 nodes with AVX512-VNNI, with Q K^T and P V in int8);
 * where cpu_get() reports amx_kernels (AMX granted, MOPT_AMX not 0), the
 * AMX-tile variant instead, shown as "cpu-amx" (prepare/variant).
 */
#include <stdint.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_attention.h"
#include "ops/attention.h"
#include "ops/impls.h"

static bool dtypes_ok(const op_tensor *in, int n_in) {
    for (int k = 0; k < 3; k++)
        if (in[k].dtype != MOPT_DTYPE_F32) return false;
    return !op_has_input(in, n_in, 3) || in[3].dtype == MOPT_DTYPE_F32 ||
           in[3].dtype == MOPT_DTYPE_BOOL;
}

static bool avx512_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                            int n_out) {
    const cpu_features *f = cpu_get();
    return f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq && dtypes_ok(in, n_in);
}

static bool avx2_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                          int n_out) {
    const cpu_features *f = cpu_get();
    return f->avx2 && f->fma && dtypes_ok(in, n_in);
}

static bool portable_supports(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out) {
    return dtypes_ok(in, n_in);
}

typedef bool (*fused_fn)(const attn_params *, const float *, const float *, const float *, float *,
                         int);

/* The bf16 kernel on bf16-stored Q, K, V, O (storage plan): which of them */
static unsigned bf16_io_mask(const op_tensor *in, const op_tensor *out) {
    unsigned io = 0;
    for (int k = 0; k < 3; k++)
        if (in[k].dtype == MOPT_DTYPE_BF16) io |= 1u << k;
    if (out[0].dtype == MOPT_DTYPE_BF16) io |= CPU_ATTN_IO_O;
    return io;
}

typedef size_t (*scratch_fn)(const attn_params *p, size_t *tile_bytes);
typedef bool (*io_fn)(const attn_params *, const void *, const void *, const void *, void *,
                      unsigned, int);

/* The per-session workspace (ctx->scratch): the kernels' work buffer and
 * the plan of the last input shapes. */
typedef struct attn_work {
    void *buf;
    size_t cap;
    attn_plan plan;
} attn_work;

static void work_release(void *w) {
    attn_work *aw = w;
    if (!aw) return;
    mopt_aligned_free(aw->buf);
    mopt_free(aw);
}

/* The node's workspace, made on first use; NULL without a scratch slot or
 * memory (the run then plans and allocates on its own). */
static attn_work *work_of(const op_ctx *ctx) {
    if (!ctx->scratch) return NULL;
    if (!*ctx->scratch) *ctx->scratch = mopt_calloc(1, sizeof(attn_work));
    return *ctx->scratch;
}

/* Runs fn, or with io (CPU_ATTN_IO_*) iofn (a bf16 kernel) on bf16-stored tensors. */
static mopt_status fused_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                             fused_fn fn, io_fn iofn, scratch_fn sfn, unsigned io) {
    attn_work *w = work_of(ctx);
    attn_params p;
    mopt_status st = w ? ops_attention_planned_params(ctx, in, n_in, &w->plan, &p)
                       : ops_attention_kernel_params(ctx, in, n_in, &p);
    if (st) return st;
    int threads = ctx->threads > 0 ? ctx->threads : 1;
    size_t per = sfn(&p, NULL), need;
    if (w && per && mopt_mul_overflow(per, (size_t)threads, &need)) {
        if (w->cap < need) {
            void *nb = mopt_aligned_alloc(need);
            if (nb) {
                mopt_aligned_free(w->buf);
                w->buf = nb;
                w->cap = need;
            }
        }
        if (w->cap >= need) {
            p.work = w->buf;
            p.work_per_thread = per;
        }
    }
    const void *qkv[3];
    ops_attention_qkv(ctx, in, &p, qkv);
    if (io ? !iofn(&p, qkv[0], qkv[1], qkv[2], out[0].data, io, threads)
           : !fn(&p, qkv[0], qkv[1], qkv[2], out[0].data, threads))
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "out of memory for attention tiles");
    return MOPT_OK;
}

/* Whether a node of this precision runs the AMX variant (bf16 products):
 * bf16 nodes, and int8 ones, whose VNNI int8 products it beats (issue 11:
 * see kernels/README.md's attention section). */
static bool uses_amx(op_precision prec) {
    return cpu_get()->amx_kernels && (prec == OP_PREC_BF16 || prec == OP_PREC_INT8) &&
           cpu_attention_amx_built();
}

/* state: non-NULL (this tag) when the node runs the AMX variant, for the name */
static const char amx_tag[] = "cpu-amx";

static mopt_status avx512_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                                  const op_tensor *out, int n_out, void **state) {
    *state = uses_amx(ctx->precision) ? (void *)(uintptr_t)amx_tag : NULL;
    return MOPT_OK;
}

static const char *avx512_variant(const void *state) { return state ? amx_tag : "cpu-avx512"; }

static mopt_status avx512_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                              int n_out) {
    if (uses_amx(ctx->precision))
        return fused_run(ctx, in, n_in, out, cpu_attention_bf16_amx, cpu_attention_bf16io_amx,
                         cpu_attention_bf16_amx_scratch, bf16_io_mask(in, out));
    /* int8 nodes too: their matmuls are int8, attention has no int8 kernel
     * and its bf16 products beat f32 (issue 11) */
    if ((ctx->precision == OP_PREC_BF16 || ctx->precision == OP_PREC_INT8) &&
        cpu_get()->avx512_bf16) {
        /* int8 nodes: Q K^T and P V on VNNI */
        unsigned qk8 = ctx->precision == OP_PREC_INT8 && cpu_get()->avx512_vnni
                           ? CPU_ATTN_QK_INT8 | CPU_ATTN_PV_INT8
                           : 0;
        return fused_run(ctx, in, n_in, out, cpu_attention_bf16_avx512, cpu_attention_bf16io_avx512,
                         cpu_attention_bf16_avx512_scratch, bf16_io_mask(in, out) | qk8);
    }
    if (bf16_io_mask(in, out)) return MOPT_ERR_UNSUPPORTED;
    return fused_run(ctx, in, n_in, out, cpu_attention_f32_avx512, NULL,
                     cpu_attention_f32_avx512_scratch, 0);
}

static mopt_status avx2_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                            int n_out) {
    return fused_run(ctx, in, n_in, out, cpu_attention_f32_avx2, NULL,
                     cpu_attention_f32_avx2_scratch, 0);
}

static mopt_status portable_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                int n_out) {
    return fused_run(ctx, in, n_in, out, cpu_attention_f32_portable, NULL,
                     cpu_attention_f32_portable_scratch, 0);
}

/* bf16 storage of Q, K, V and O on nodes of precision bf16 or int8 (which
 * run the bf16 kernel too) (AVX512-BF16) */
static bool avx512_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    return (ctx->precision == OP_PREC_BF16 || ctx->precision == OP_PREC_INT8) &&
           cpu_get()->avx512_bf16 && (output ? k == 0 : k < 3);
}

/* One impl per tier, each with its work buffer as scratch; bf16_io_: which
 * inputs/outputs it takes in bf16 storage (NULL: none). */
#define ATTENTION_IMPL(name_, supports_, run_, bf16_io_)                                           \
    {                                                                                              \
        .name = name_, .backend = "cpu", .supports = supports_, .run = run_,                       \
        .release_scratch = work_release, .bf16_io = bf16_io_                                       \
    }

const op_impl ops_impl_cpu_attention_avx512 = {.name = "cpu-avx512",
                                               .backend = "cpu",
                                               .supports = avx512_supports,
                                               .prepare = avx512_prepare,
                                               .run = avx512_run,
                                               .release_scratch = work_release,
                                               .variant = avx512_variant,
                                               .bf16_io = avx512_bf16_io};
const op_impl ops_impl_cpu_attention_avx2 =
    ATTENTION_IMPL("cpu-avx2", avx2_supports, avx2_run, NULL);
const op_impl ops_impl_cpu_attention_portable =
    ATTENTION_IMPL("cpu", portable_supports, portable_run, NULL);
