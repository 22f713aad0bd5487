/*
 * pwconv_cpu.c — the "cpu" backend's pointwise mopt.FusedConv (issue 10):
 * a 1x1, stride-1, unpadded, one-group f32 conv whose X and Y are
 * channels-last or nChw16c (the layout pass's) runs as our own register-
 * tiled GEMM (kernels/cpu/pwgemm.h), W^T packed at prepare into the impl's
 * state, bias, residual and the activation in the tile's registers. It is
 * tried before oneDNN (impls.c) and takes a node only where it beat
 * oneDNN's brgconv_1x1 / jit_1x1 on MobileNetV3-like (pw_rule below);
 * everything else is left to oneDNN at load time (prepare: UNSUPPORTED).
 * AVX-512 only: other machines run oneDNN as before. Tiles are split over
 * the call's threads (cpu_parallel_for_omp: oneDNN's OpenMP team).
 */
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/pwgemm.h"
#include "ops/conv.h"
#include "ops/cpu/ops_cpu.h"
#include "ops/fused.h"
#include "ops/op_common.h"

/* The most output positions per image it takes: beyond 56x56 oneDNN's
 * blocked jit_1x1 kernels were faster (112x112, K = 16: 1.1-1.6x). */
#define PW_MAX_HW 3136

typedef struct pw_state {
    cpu_pw_plan plan; /* hw, K, N, tile, layouts, wp, act (bias set per run) */
    float *wp;
} pw_state;

/* The node's pointwise geometry for X's shape x (batch may be symbolic:
 * taken as 1): false when it is not a pointwise conv this kernel reads. */
static bool pw_geometry(const op_ctx *ctx, const ir_shape *xs, const ir_shape *ws, int64_t *batch,
                        cpu_pw_plan *pl) {
    const fused_conv_params *fp = ctx->params;
    if (xs->rank != 4 || ws->rank != 4 || !ir_shape_is_concrete(ws)) return false;
    ir_shape x = *xs;
    x.dims[0] = 1;
    x.syms[0] = 0;
    if (!ir_shape_is_concrete(&x)) return false;
    ref_conv_params p;
    int64_t pad_end[REF_WIN_MAX];
    if (ops_conv_geometry(ctx, &x, ws, &p, pad_end)) {
        mopt_clear_error();
        return false;
    }
    if (p.group != 1 || p.c_in <= 0 || p.c_out <= 0) return false;
    int64_t hw = 1;
    for (int i = REF_WIN_MAX - 2; i < REF_WIN_MAX; i++) {
        if (p.k[i] != 1 || p.stride[i] != 1 || p.pad[i] || pad_end[i] || p.in[i] != p.out[i])
            return false;
        hw *= p.out[i];
    }
    int32_t lay = fp->conv.layout;
    bool x_blk = lay & CONV_LAYOUT_X_BLK16, y_blk = lay & CONV_LAYOUT_Y_BLK16;
    if (!(lay & CONV_LAYOUT_X) || !(lay & CONV_LAYOUT_Y)) return false; /* NCHW */
    if ((x_blk && p.c_in % 16) || (y_blk && p.c_out % 16)) return false;
    *batch = xs->syms[0] ? 0 : xs->dims[0];
    memset(pl, 0, sizeof *pl);
    pl->hw = hw;
    pl->K = p.c_in;
    pl->N = p.c_out;
    pl->x_blk = x_blk;
    pl->y_blk = y_blk;
    pl->act = fp->act.act;
    pl->alpha = fp->act.alpha;
    pl->beta = fp->act.beta;
    return true;
}

/* Where the kernel beats oneDNN (MobileNetV3-like, Xeon model 207, per node
 * against the same node on oneDNN in one process, bench/proto/pw_ab.py):
 *  - the expansion convs (Cin <= Cout) of 2 to 56x56 positions with Cin >=
 *    64, or with an activation oneDNN's post-ops make costly (hard swish /
 *    hard sigmoid: 40 -> 240 at 28x28 0.84x); with Cin < 64 and ReLU
 *    oneDNN wins (24 -> 72 at 56x56 1.11-1.20x, 40 -> 120 at 28x28
 *    1.05-1.10x);
 *  - those between a blocked and a channels-last value (a chain edge, where
 *    oneDNN reorders one side: 64 -> 24 at 56x56 0.72-0.78x).
 * Not the projections (Cin > Cout: 1.0-1.1x with 6x64, 8x48, 7x32 and
 * 14x32 tiles) nor 1x1 images (the GEMV's, conv_onednn.c), nor fewer than
 * 16 output channels (a tile's vectors mostly masked off: YOLOX's 96 -> 4
 * head conv at 52x52, a chain edge, ran 1.22x). */
static bool pw_rule(const cpu_pw_plan *pl) {
    if (pl->hw < 2 || pl->hw > PW_MAX_HW || pl->N < 16) return false;
    if (pl->x_blk != pl->y_blk) return true;
    bool costly_act = pl->act == KN_ACT_HARD_SWISH || pl->act == KN_ACT_HARD_SIGMOID;
    return pl->K <= pl->N && (pl->K >= 64 || costly_act);
}

/* The tile: 6 rows x 64 columns (24 accumulators); at 7x7 and below 7 x 32
 * (14 accumulators: 49 positions are 7 full tiles, and twice the panels to
 * share among threads; 160 -> 960 at 7x7: 0.92-0.98x of oneDNN, 6x64
 * 1.03-1.06x, 7x48 1.00x, 14x32 0.96-0.98x, 7x16 1.24x). */
static void pw_tile_shape(cpu_pw_plan *pl) {
    bool small = pl->hw <= 64;
    pl->mr = small ? 7 : 6;
    pl->nr = small ? 32 : 64;
}

static bool pw_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                        int n_out) {
    (void)n_out;
    if (ctx->precision != OP_PREC_FP32 || in[0].dtype != MOPT_DTYPE_F32 ||
        in[1].dtype != MOPT_DTYPE_F32 || !in[1].data)
        return false;
    if (op_has_input(in, n_in, 2) && in[2].dtype != MOPT_DTYPE_F32) return false;
    if (op_has_input(in, n_in, 3) && !op_residual_fits(&in[3], &out[0].shape)) return false;
    const fused_conv_params *fp = ctx->params;
    return !fp->has_post && cpu_pw_act_ok(fp->act.act);
}

static mopt_status pw_prepare(const op_ctx *ctx, const op_tensor *in, int n_in,
                              const op_tensor *out, int n_out, void **state) {
    (void)n_in, (void)out, (void)n_out;
    *state = NULL;
    int64_t batch;
    cpu_pw_plan pl;
#if !defined(__x86_64__)
    return MOPT_ERR_UNSUPPORTED; /* the kernel is AVX-512 only */
#endif
    if (!cpu_kernels_for("avx512") || !pw_geometry(ctx, &in[0].shape, &in[1].shape, &batch, &pl) ||
        !pw_rule(&pl))
        return MOPT_ERR_UNSUPPORTED;
    pw_tile_shape(&pl);
    pw_state *s = mopt_calloc(1, sizeof *s);
    if (s) s->wp = mopt_aligned_alloc(cpu_pw_packed_floats(pl.K, pl.N) * sizeof(float));
    if (!s || !s->wp) {
        if (s) mopt_free(s);
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the packed 1x1 weights");
    }
    cpu_pw_pack(in[1].data, pl.K, pl.N, pl.nr, s->wp);
    pl.wp = s->wp;
    s->plan = pl;
    *state = s;
    return MOPT_OK;
}

static void pw_release(void *state) {
    pw_state *s = state;
    if (!s) return;
    mopt_aligned_free(s->wp);
    mopt_free(s);
}

typedef struct pw_job {
    const cpu_pw_plan *plan;
    const float *x, *res;
    float *y;
} pw_job;

static void pw_range(void *arg, int64_t lo, int64_t hi) {
#if defined(__x86_64__)
    const pw_job *j = arg;
    cpu_pw_run_avx512(j->plan, j->x, j->res, j->y, lo, hi);
#else
    (void)arg, (void)lo, (void)hi; /* prepare never takes a node */
#endif
}

static mopt_status pw_run(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                          int n_out) {
    (void)n_out;
    const pw_state *s = ctx->state;
    int64_t batch;
    cpu_pw_plan now;
    /* the planned geometry (only the batch may change), else decline */
    if (!s || !pw_geometry(ctx, &in[0].shape, &in[1].shape, &batch, &now) || now.hw != s->plan.hw ||
        now.K != s->plan.K || now.N != s->plan.N || now.x_blk != s->plan.x_blk ||
        now.y_blk != s->plan.y_blk)
        return MOPT_ERR_UNSUPPORTED;
    bool has_res = op_has_input(in, n_in, 3);
    if (has_res && ir_shape_numel(&in[3].shape) != ir_shape_numel(&out[0].shape))
        return MOPT_ERR_UNSUPPORTED;
    if (batch == 0) return MOPT_OK;
    cpu_pw_plan plan = s->plan;
    plan.bias = op_has_input(in, n_in, 2) ? in[2].data : NULL;
    pw_job j = {&plan, in[0].data, has_res ? in[3].data : NULL, out[0].data};
    /* about 2^17 multiply-adds per chunk at least */
    int64_t per = (int64_t)plan.mr * plan.nr * plan.K;
    cpu_parallel_for_omp(ctx->threads, cpu_pw_units(&plan, batch),
                         per >= (1 << 17) ? 1 : (1 << 17) / per, pw_range, &j);
    return MOPT_OK;
}

const op_impl ops_impl_cpu_pwconv_avx512 = {
    .name = "cpu-pwgemm-avx512",
    .backend = "cpu",
    .supports = pw_supports,
    .prepare = pw_prepare,
    .release = pw_release,
    .run = pw_run,
    /* Y may take the residual's buffer: each tile reads its residual before
     * its one store */
    .inplace = op_inplace_residual3,
};
