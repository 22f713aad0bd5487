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
#include "ops/cpu/ops_cpu.h"
#include "ops/fused.h"
#include "ops/op_common.h"

/* Rows of the A block that stays in L2 while every panel passes over it:
 * the most (multiple of 32, at most 256) whose bf16 rows fit in AMX_A_BYTES.
 * Measured on BERT-like shapes (M = 1024; K, N in {768, 3072}), Xeon model
 * 207, best of 25 alternating rounds on the shared (noisy) machine: 768 -> 3072 mb 256 (384
 * KB) 6.1-6.5 ms, mb 64 7.0 ms, mb 1024 8.0 ms; 3072 -> 768 mb 128 (768 KB) 5.0 ms, mb 256 6.0-7.0,
 * mb 512 8.1. K in chunks of AMX_KC: a panel's chunk (16 KB) stays in L1 over the block's rows
 * while A streams past it from L2: the whole h768 b8 encoder (bench/proto/amxgemm_ab.py, 15 rounds,
 * variants alternating in one process) ran 0.86-0.88x of oneDNN's CPU time with 256, 0.94-1.00x
 * with 512, 1.02x with all of K, 0.99x with 128 (and mb 128); mb 128 instead of 256 at K = 768:
 * 0.92x. */
#define AMX_A_BYTES (1 << 20)
#define AMX_MB 256
#define AMX_KC 256
/* The smallest K and N it takes (else oneDNN): with K or N = 256 (BERT-like
 * h256) oneDNN was as fast or faster: 1024 x 256 x 256 + residual 1.22x,
 * 256 -> 1024 + GELU 1.22x, 256 -> 768 0.97x, 1024 -> 256 0.92x per node
 * (amxgemm_ab.c, weights cold), the whole h256 encoder 1.13-1.14x
 * (amxgemm_ab.py); with K, N >= 768 0.65-0.9x per node. */
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
 * bench/proto/amxgemm_ab.py), "all" takes every size (tests). */
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
    amx_state *s = mopt_calloc(1, sizeof *s);
    if (s) s->bp = mopt_aligned_alloc(cpu_amx_packed_elems(K, N) * sizeof(uint16_t));
    if (!s || !s->bp) {
        if (s) mopt_free(s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed bf16 weights");
    }
    cpu_amx_pack(in[1].data, K, N, tb, s->bp);
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
            const ir_shape *r = &in[3].shape, *y = &out[0].shape;
            bool same = r->rank == y->rank;
            for (int32_t i = 0; same && i < r->rank; i++)
                same = r->dims[i] == y->dims[i];
            if (!same) return MOPT_ERR_UNSUPPORTED;
            io.res = in[3].data;
            io.res_bf16 = in[3].dtype == MOPT_DTYPE_BF16;
        }
    }
    if (M == 0) return MOPT_OK;
    int64_t units = cpu_amx_units(&plan, M);
    int slots = ctx->threads < units ? ctx->threads : (int)units;
    if (slots < 1) slots = 1;
    const amx_scratch *sc = amx_get_scratch(ctx, cpu_amx_scratch_bytes(&plan), slots);
    if (!sc) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the AMX GEMM's scratch");
    amx_job j = {&plan, &io, sc, units, slots};
    cpu_parallel_for_omp(slots, slots, 1, amx_slots, &j);
    return MOPT_OK;
}

/* bf16 storage: A, the residual (input 3) and Y */
static bool amx_bf16_io(const op_ctx *ctx, const op_tensor *in, int n_in, bool output, int k) {
    (void)ctx, (void)in, (void)n_in;
    return k == 0 || (!output && k == 3);
}

/* Y may take the residual's buffer: each element is read before its store */
static int amx_inplace(const op_ctx *ctx, const op_tensor *in, int n_in) {
    (void)ctx;
    return op_has_input(in, n_in, 3) ? 3 : -1;
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
AMX_IMPL(fused_matmul, AMX_FUSED, amx_inplace)
