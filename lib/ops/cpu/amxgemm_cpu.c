/*
 * amxgemm_cpu.c — the "cpu" backend's bf16 GEMM on AMX tiles
 * (kernels/cpu/amxgemm.h, issue 11) for mopt.FusedMatMul and MatMul at
 * precision=bf16: A [..., K] (not transposed, dense rows) times a constant
 * 2-D B (transB allowed), packed at prepare into the tile layout, with
 * FusedMatMul's alpha, bias (N values along Y's last axis), Y-shaped
 * residual and activation in the kernel's epilogue. A, the residual and Y
 * may be stored bf16 (the runtime's bf16 storage plan, as for
 * onednn-bf16). Listed before oneDNN (impls.c); prepare declines whatever
 * it does not cover (no AMX, other precisions, a non-constant or batched
 * B, a transposed A, other bias shapes, K or N below AMX_MIN_KN), which
 * then runs oneDNN as before.
 * The same GEMM runs mopt.FusedConv's pointwise convs at precision=bf16
 * (1x1 kernel, strides 1, no padding, one group, channels-last X and Y:
 * Y [M = batch x positions, C_out] = X [M, C_in] W^T, with bias, a
 * Y-shaped residual, the activation and the post affine in the epilogue;
 * pwc_* below), listed before oneDNN for FusedConv (impls.c).
 * Work units (an M block and a panel of 32 columns) are split over the
 * call's threads on oneDNN's OpenMP team (cpu_parallel_for_omp), one
 * scratch per thread slot; K is never split, so the bits do not depend on
 * the thread count.
 */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/amxgemm.h"
#include "mopt_config.h"
#include "ops/conv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/fused.h"
#include "ops/op_common.h"

/* Rows of the A block that stays in L2 while every panel passes over it:
 * the most (multiple of 32, at most 256) whose bf16 rows fit in AMX_A_BYTES.
 * Measured on BERT-like shapes (M = 1024; K, N in {768, 3072}), Xeon model
 * 207, best of 25 alternating rounds on the shared (noisy) machine: 768 -> 3072 mb 256 (384
 * KB) 6.1-6.5 ms, mb 64 7.0 ms, mb 1024 8.0 ms; 3072 -> 768 mb 128 (768 KB) 5.0 ms, mb 256 6.0-7.0,
 * mb 512 8.1. K in chunks of AMX_KC: a panel's chunk (16 KB) stays in L1 over the block's rows
 * while A streams past it from L2: the whole h768 b8 encoder (bench/proto/env_ab.py
 * MOPT_AMX_GEMM=1,0, 15 rounds, variants alternating in one process) ran 0.86-0.88x of oneDNN's CPU
 * time with 256, 0.94-1.00x with 512, 1.02x with all of K, 0.99x with 128 (and mb 128); mb 128
 * instead of 256 at K = 768: 0.92x. */
#define AMX_A_BYTES (1 << 20)
#define AMX_MB 256
#define AMX_KC 256
/* The smallest K and N it takes (else oneDNN): with K or N = 256 (BERT-like
 * h256) oneDNN was as fast or faster: 1024 x 256 x 256 + residual 1.22x,
 * 256 -> 1024 + GELU 1.22x, 256 -> 768 0.97x, 1024 -> 256 0.92x per node
 * (amxgemm_ab.c, weights cold), the whole h256 encoder 1.13-1.14x
 * (env_ab.py); with K, N >= 768 0.65-0.9x per node. */
#define AMX_MIN_KN 512

typedef enum amx_kind { AMX_MATMUL, AMX_FUSED } amx_kind;

typedef struct amx_state {
    cpu_amx_plan plan; /* bias, alpha and activation set per run */
    uint16_t *bp;
} amx_state;

/* The per-session scratch: one slice of `slice` bytes per thread slot. */
typedef struct amx_scratch {
    size_t slice;
    int slots;
    unsigned char *buf;
} amx_scratch;

/* MOPT_AMX_GEMM in the environment, read at each node's prepare: 0 leaves
 * every node to oneDNN (an A/B switch within one process,
 * bench/proto/env_ab.py), "all" takes every size (tests). */
static bool amx_available(void) {
#ifdef MOPT_HAVE_AMX
    const cpu_features *f = cpu_get();
    const char *off = getenv("MOPT_AMX_GEMM");
    if (off && strcmp(off, "0") == 0) return false;
    return f->amx_kernels && f->avx512f && f->avx512bw && f->avx512vl; /* MOPT_AMX=0: off */
#else
    return false;
#endif
}

/* K and N of the node when it is a product this impl covers (A's leading
 * dims may be symbolic: they only make M). */
static bool amx_geometry(const op_ctx *ctx, amx_kind kind, const op_tensor *in, int n_in,
                         int64_t *K, int64_t *N, bool *trans_b) {
    const ir_shape *a = &in[0].shape, *b = &in[1].shape;
    if (ctx->precision != OP_PREC_BF16 || in[0].dtype != MOPT_DTYPE_F32 ||
        in[1].dtype != MOPT_DTYPE_F32 || !in[1].data || b->rank != 2 || a->rank < 2 ||
        !ir_shape_is_concrete(b) || a->syms[a->rank - 1])
        return false;
    *trans_b = false;
    if (kind == AMX_FUSED) {
        const fused_matmul_params *p = ctx->params;
        if (p->trans_a || !cpu_amx_act_ok(p->act.act)) return false;
        *trans_b = p->trans_b;
        for (int k = 2; k < n_in && k < 4; k++)
            if (op_has_input(in, n_in, k) && in[k].dtype != MOPT_DTYPE_F32) return false;
    } else if (n_in > 2) {
        return false;
    }
    *K = a->dims[a->rank - 1];
    *N = *trans_b ? b->dims[0] : b->dims[1];
    int64_t kb = *trans_b ? b->dims[1] : b->dims[0];
    if (kb != *K || *K <= 0 || *N <= 0) return false;
    if (kind == AMX_FUSED && op_has_input(in, n_in, 2)) {
        /* the bias: N values along Y's last axis */
        const ir_shape *s = &in[2].shape;
        if (!ir_shape_is_concrete(s) || ir_shape_numel(s) != *N || s->rank < 1 ||
            s->dims[s->rank - 1] != *N)
            return false;
    }
    if (kind == AMX_FUSED && op_has_input(in, n_in, 3)) {
        /* the residual: Y's shape (A's leading dims, N), else every run
         * would decline (oneDNN broadcasts it) */
        const ir_shape *r = &in[3].shape;
        if (r->rank != a->rank || r->syms[r->rank - 1] || r->dims[r->rank - 1] != *N) return false;
        for (int32_t i = 0; i < r->rank - 1; i++)
            if (r->dims[i] != a->dims[i] || r->syms[i] != a->syms[i]) return false;
    }
    return true;
}

static bool amx_supports(const op_ctx *ctx, amx_kind kind, const op_tensor *in, int n_in) {
    int64_t K, N;
    bool tb;
    return amx_available() && amx_geometry(ctx, kind, in, n_in, &K, &N, &tb);
}

/* The state of a node whose constant B (f32 W; [K, N], or [N, K] when
 * trans) is packed for the kernel, and the plan's blocking for K and N. */
static mopt_status amx_pack_state(const op_ctx *ctx, const float *w, int64_t K, int64_t N,
                                  bool trans, void **state) {
    amx_state *s = mopt_calloc(1, sizeof *s);
    if (s) s->bp = mopt_aligned_alloc(cpu_amx_packed_elems(K, N) * sizeof(uint16_t));
    if (!s || !s->bp) {
        if (s) mopt_free(s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed bf16 weights");
    }
    cpu_amx_pack(w, K, N, trans, s->bp);
    cpu_amx_plan *p = &s->plan;
    p->K = K;
    p->N = N;
    p->Kp = (K + CPU_AMX_KS - 1) / CPU_AMX_KS * CPU_AMX_KS;
    p->Np = (N + CPU_AMX_NR - 1) / CPU_AMX_NR * CPU_AMX_NR;
    int64_t mb = AMX_A_BYTES / (p->Kp * (int64_t)sizeof(uint16_t)) / CPU_AMX_MR * CPU_AMX_MR;
    p->mb = (int)(mb < CPU_AMX_MR ? CPU_AMX_MR : mb > AMX_MB ? AMX_MB : mb);
    p->kc = AMX_KC;
    p->pg = 1;
    p->bp = s->bp;
    p->alpha = 1.f;
    *state = s;
    return MOPT_OK;
}

static mopt_status amx_prepare(const op_ctx *ctx, amx_kind kind, const op_tensor *in, int n_in,
                               void **state) {
    *state = NULL;
    int64_t K, N;
    bool tb;
    const char *env = getenv("MOPT_AMX_GEMM");
    bool all = env && strcmp(env, "all") == 0;
    if (!amx_available() || !amx_geometry(ctx, kind, in, n_in, &K, &N, &tb) ||
        (!all && (K < AMX_MIN_KN || N < AMX_MIN_KN)))
        return MOPT_ERR_UNSUPPORTED;
    return amx_pack_state(ctx, in[1].data, K, N, tb, state);
}

static void amx_release(void *state) {
    amx_state *s = state;
    if (!s) return;
    mopt_aligned_free(s->bp);
    mopt_free(s);
}

static void amx_release_scratch(void *scratch) {
    amx_scratch *sc = scratch;
    if (!sc) return;
    mopt_aligned_free(sc->buf);
    mopt_free(sc);
}

/* The session's scratch for `slots` slices of `slice` bytes (grown once). */
static amx_scratch *amx_get_scratch(const op_ctx *ctx, size_t slice, int slots) {
    amx_scratch *sc = *ctx->scratch;
    if (sc && sc->slice >= slice && sc->slots >= slots) return sc;
    if (!sc) {
        sc = mopt_calloc(1, sizeof *sc);
        if (!sc) return NULL;
        *ctx->scratch = sc;
    }
    mopt_aligned_free(sc->buf);
    sc->slice = (slice + 63) / 64 * 64;
    sc->slots = slots;
    sc->buf = mopt_aligned_alloc(sc->slice * (size_t)slots);
    if (!sc->buf) sc->slice = 0, sc->slots = 0;
    return sc->buf ? sc : NULL;
}

typedef struct amx_job {
    const cpu_amx_plan *plan;
    const cpu_amx_io *io;
    const amx_scratch *sc;
    int64_t units;
    int slots;
} amx_job;

/* Thread slots [lo, hi): slot i computes units [i U / T, (i + 1) U / T)
 * with its own scratch slice. */
static void amx_slots(void *arg, int64_t lo, int64_t hi) {
#ifdef MOPT_HAVE_AMX
    const amx_job *j = arg;
    for (int64_t i = lo; i < hi; i++)
        cpu_amx_run(j->plan, j->io, i * j->units / j->slots, (i + 1) * j->units / j->slots,
                    j->sc->buf + (size_t)i * j->sc->slice);
#else
    (void)arg, (void)lo, (void)hi; /* prepare never takes a node */
#endif
}

/* Y = the plan's product of io, its units split over the call's threads. */
static mopt_status amx_exec(const op_ctx *ctx, const cpu_amx_plan *plan, const cpu_amx_io *io) {
    if (io->M == 0) return MOPT_OK;
    int64_t units = cpu_amx_units(plan, io->M);
    int slots = ctx->threads < units ? ctx->threads : (int)units;
    if (slots < 1) slots = 1;
    const amx_scratch *sc = amx_get_scratch(ctx, cpu_amx_scratch_bytes(plan), slots);
    if (!sc) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the AMX GEMM's scratch");
    amx_job j = {plan, io, sc, units, slots};
    cpu_parallel_for_omp(slots, slots, 1, amx_slots, &j);
    return MOPT_OK;
}

static mopt_status amx_run(const op_ctx *ctx, amx_kind kind, const op_tensor *in, int n_in,
                           op_tensor *out) {
    const amx_state *s = ctx->state;
    const ir_shape *a = &in[0].shape;
    if (!s || a->rank < 2 || a->dims[a->rank - 1] != s->plan.K) return MOPT_ERR_UNSUPPORTED;
    int64_t M = ir_shape_numel(a) / s->plan.K;
    if (ir_shape_numel(&out[0].shape) != M * s->plan.N ||
        out[0].shape.dims[out[0].shape.rank - 1] != s->plan.N)
        return MOPT_ERR_UNSUPPORTED;
    cpu_amx_plan plan = s->plan;
    cpu_amx_io io = {in[0].data,  plan.K,
                     M,           NULL,
                     out[0].data, in[0].dtype == MOPT_DTYPE_BF16,
                     false,       out[0].dtype == MOPT_DTYPE_BF16};
    if (kind == AMX_FUSED) {
        const fused_matmul_params *p = ctx->params;
        plan.alpha = p->alpha;
        plan.act = p->act.act;
        plan.act_alpha = p->act.alpha;
        plan.act_beta = p->act.beta;
        if (op_has_input(in, n_in, 2)) plan.bias = in[2].data;
        if (op_has_input(in, n_in, 3)) {
            /* a residual of Y's shape (others: oneDNN's broadcasts) */
            if (!op_same_dims(&in[3].shape, &out[0].shape)) return MOPT_ERR_UNSUPPORTED;
            io.res = in[3].data;
            io.res_bf16 = in[3].dtype == MOPT_DTYPE_BF16;
        }
    }
    return amx_exec(ctx, &plan, &io);
}

/* bf16 storage: A, the residual (input 3) and Y */
static bool amx_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    (void)ctx, (void)in, (void)n_in;
    return k == 0 || (!output && k == 3);
}

#define AMX_IMPL(OP, KIND, INPLACE)                                                                \
    static bool OP##_amx_supports(const op_ctx *ctx, const op_tensor *in, int n_in,                \
                                  const op_tensor *out, int n_out) {                               \
        (void)out, (void)n_out;                                                                    \
        return amx_supports(ctx, KIND, in, n_in);                                                  \
    }                                                                                              \
    static mopt_status OP##_amx_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,          \
                                        const op_tensor *out, int n_out, void **state) {           \
        (void)out, (void)n_out;                                                                    \
        return amx_prepare(ctx, KIND, in, n_in, state);                                            \
    }                                                                                              \
    static mopt_status OP##_amx_run(const op_ctx *ctx, const op_tensor *in, int n_in,              \
                                    op_tensor *out, int n_out) {                                   \
        (void)n_out;                                                                               \
        return amx_run(ctx, KIND, in, n_in, out);                                                  \
    }                                                                                              \
    const op_impl ops_impl_cpu_amx_##OP = {                                                        \
        .name = "cpu-amx-bf16",                                                                    \
        .backend = "cpu",                                                                          \
        .supports = OP##_amx_supports,                                                             \
        .prepare = OP##_amx_prepare,                                                               \
        .release = amx_release,                                                                    \
        .run = OP##_amx_run,                                                                       \
        .release_scratch = amx_release_scratch,                                                    \
        .bf16_io = amx_bf16_io,                                                                    \
        .inplace = INPLACE,                                                                        \
    };

AMX_IMPL(matmul, AMX_MATMUL, NULL)
/* Y may take the residual's buffer: each element is read before its store */
AMX_IMPL(fused_matmul, AMX_FUSED, op_inplace_residual3)

/* ---- mopt.FusedConv 1x1 at precision=bf16 (cpu-amx-bf16) ---------------- */

/* A pointwise conv (1x1 kernel, strides 1, no padding, one group) on
 * channels-last X and Y is the GEMM Y [M, N] = X [M, K] W^T with M = batch
 * x positions, K = C_in, N = C_out: W [C_out, C_in, 1, 1] is packed as B
 * transposed, bias, residual (Y-shaped, channels-last) and activation are
 * the GEMM's epilogue. X, the residual and Y are read / written bf16 where
 * the storage plan keeps them so (the bf16 nhwc chains of pass_layout). */

/* Whether the node's operands are what this impl takes, as the model
 * gives them (graph dtypes: f32; run time may see bf16 storage instead):
 * precision bf16, constant W, an activation the epilogue has, a bias of
 * C_out values, a residual of Y's shape. */
static bool pwc_operands_ok(const op_ctx *ctx, const op_tensor *in, int n_in,
                            const op_tensor *out) {
    const fused_conv_params *fp = ctx->params;
    const ir_shape *ws = &in[1].shape;
    if (ctx->precision != OP_PREC_BF16 || in[0].dtype != MOPT_DTYPE_F32 ||
        in[1].dtype != MOPT_DTYPE_F32 || !in[1].data || !cpu_amx_act_ok(fp->act.act) ||
        ws->rank < 1 || !ir_shape_is_concrete(ws))
        return false;
    if (op_has_input(in, n_in, 2) &&
        (in[2].dtype != MOPT_DTYPE_F32 || ir_shape_numel(&in[2].shape) != ws->dims[0] ||
         in[2].shape.syms[in[2].shape.rank - 1]))
        return false;
    return !op_has_input(in, n_in, 3) ||
           (in[3].dtype == MOPT_DTYPE_F32 && (!out || op_residual_fits(&in[3], &out[0].shape)));
}

/* For X's shape xs and W's ws: K, N and the positions per image (a
 * symbolic batch is left out; 0 when a spatial size is symbolic) when the
 * conv is one this impl computes, else false. */
static bool pwc_geometry(const op_ctx *ctx, const ir_shape *xs, const ir_shape *ws, int64_t *K,
                         int64_t *N, int64_t *hw) {
    const fused_conv_params *fp = ctx->params;
    if (xs->rank < 3 || xs->rank > 2 + REF_WIN_MAX || ws->rank != xs->rank ||
        !ir_shape_is_concrete(ws))
        return false;
    /* channels-last X and Y (the residual is Y's layout) */
    if (fp->conv.layout != (CONV_LAYOUT_X_NHWC | CONV_LAYOUT_Y_NHWC)) return false;
    /* batch 1 for the geometry (it only scales M); unknown spatial sizes
     * (PP-OCR's) taken as 8 at load time: a 1x1 window with strides 1 and
     * no padding keeps any size, checked again per run */
    ir_shape x = *xs;
    bool sym_hw = false;
    x.dims[0] = 1;
    x.syms[0] = 0;
    for (int32_t i = 2; i < x.rank; i++)
        if (x.syms[i]) sym_hw = true, x.dims[i] = 8, x.syms[i] = 0;
    if (x.syms[1]) return false;
    ref_conv_params p;
    int64_t pad_end[REF_WIN_MAX];
    if (ops_conv_geometry(ctx, &x, ws, &p, pad_end)) {
        mopt_clear_error();
        return false;
    }
    if (p.group != 1 || p.c_in <= 0 || p.c_out <= 0) return false;
    *hw = 1;
    for (int i = REF_WIN_MAX - (xs->rank - 2); i < REF_WIN_MAX; i++) {
        if (p.k[i] != 1 || p.stride[i] != 1 || p.pad[i] || pad_end[i] || p.in[i] != p.out[i])
            return false;
        *hw *= p.out[i];
    }
    if (sym_hw) *hw = 0; /* unknown until run time */
    *K = p.c_in;
    *N = p.c_out;
    return true;
}

/* Whether to take the node from oneDNN: every pointwise conv but those of
 * 1x1 images (the squeeze-excitation convs: oneDNN glue's GEMV,
 * conv_onednn.c). Measured per node against oneDNN 2.6's
 * brgconv_1x1:avx512_core_amx_bf16 (onednn-bf16-packed), the same model
 * with MOPT_AMX_CONV=0 and =all, `mopt-bench --precision bf16 --threads 1`,
 * Xeon model 207, shared machine (two runs each, sequential, so noisy):
 * MobileNetV3-like b1, all 30 of its 1x1 convs (K, N in 16..960, 7x7 to
 * 112x112) 0.20-1.0x, the sum 0.50x and 0.19x (oneDNN's 2nd run was slow);
 * e.g. 16 -> 64 at 112x112 0.53 / 0.89x, 24 -> 72 at 56x56 0.47 / 0.78x
 * (1.13-1.51x before the one-chunk epilogue, amxgemm-amx.c), 160 -> 960
 * at 7x7 0.72 / 0.54x, 960 -> 160 0.48 / 0.43x; PP-OCRv4 rec (1x3x48x320),
 * its 14 1x1 convs (with HardSwish and the post affine) 0.30-1.12x, the sum
 * 0.59x. No shape lost on both runs, hence no size rule.
 * MOPT_AMX_CONV=0 leaves every node to oneDNN, "all" takes the 1x1
 * images too (A/B and tests). */
static bool pwc_rule(int64_t K, int64_t N, int64_t hw) {
    const char *env = getenv("MOPT_AMX_CONV");
    if (env && strcmp(env, "all") == 0) return true;
    if (env && strcmp(env, "0") == 0) return false;
    (void)K, (void)N;
    return hw != 1; /* 0: unknown at load time (PP-OCR's) */
}

static bool pwc_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    (void)n_out;
    int64_t K, N, hw;
    return amx_available() && pwc_operands_ok(ctx, in, n_in, out) &&
           pwc_geometry(ctx, &in[0].shape, &in[1].shape, &K, &N, &hw);
}

static mopt_status pwc_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                               const op_tensor *out, int n_out, void **state) {
    (void)n_out;
    *state = NULL;
    int64_t K, N, hw;
    if (!amx_available() || !pwc_operands_ok(ctx, in, n_in, out) ||
        !pwc_geometry(ctx, &in[0].shape, &in[1].shape, &K, &N, &hw) || !pwc_rule(K, N, hw))
        return MOPT_ERR_UNSUPPORTED;
    return amx_pack_state(ctx, in[1].data, K, N, true, state); /* W [N, K] */
}

static mopt_status pwc_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                           int n_out) {
    (void)n_out;
    const amx_state *s = ctx->state;
    const fused_conv_params *fp = ctx->params;
    int64_t K, N, hw;
    /* the planned K and N for this run's shapes (the operands were checked
     * at prepare; X and the residual may now be stored bf16) */
    if (!s || !pwc_geometry(ctx, &in[0].shape, &in[1].shape, &K, &N, &hw) || K != s->plan.K ||
        N != s->plan.N)
        return MOPT_ERR_UNSUPPORTED;
    int64_t M = ir_shape_numel(&in[0].shape) / K;
    if (ir_shape_numel(&out[0].shape) != M * N) return MOPT_ERR_UNSUPPORTED;
    cpu_amx_plan plan = s->plan;
    plan.act = fp->act.act;
    plan.act_alpha = fp->act.alpha;
    plan.act_beta = fp->act.beta;
    plan.post = fp->has_post;
    plan.post_scale = fp->post_scale;
    plan.post_shift = fp->post_shift;
    if (op_has_input(in, n_in, 2)) plan.bias = in[2].data;
    cpu_amx_io io = {in[0].data,  K,
                     M,           NULL,
                     out[0].data, in[0].dtype == MOPT_DTYPE_BF16,
                     false,       out[0].dtype == MOPT_DTYPE_BF16};
    if (op_has_input(in, n_in, 3)) {
        if (ir_shape_numel(&in[3].shape) != M * N) return MOPT_ERR_UNSUPPORTED;
        io.res = in[3].data;
        io.res_bf16 = in[3].dtype == MOPT_DTYPE_BF16;
    }
    return amx_exec(ctx, &plan, &io);
}

const op_impl ops_impl_cpu_amx_fused_conv = {
    .name = "cpu-amx-bf16",
    .backend = "cpu",
    .supports = pwc_supports,
    .prepare = pwc_prepare,
    .release = amx_release,
    .run = pwc_run,
    .release_scratch = amx_release_scratch,
    .bf16_io = amx_bf16_io,          /* X, the residual (input 3) and Y */
    .inplace = op_inplace_residual3, /* as FusedMatMul's */
};
