/*
 * recurrent_cpu.c — the "cpu" fast path of LSTM, GRU and RNN (impls
 * cpu-avx512, cpu-avx2, cpu-portable; kernels in kernels/cpu/cpu_rnn.h):
 *   1. the input projection of every time step at once (register-tiled GEMM
 *      of X[T*N, I] against W in gate panels, biases folded in);
 *   2. per step, one fused kernel: the recurrent product against R in gate
 *      panels (streamed once, in order) with each block's gates, cell and
 *      hidden update done as soon as its products are in registers; h is
 *      double-buffered and written straight into Y.
 * W and R are packed into gate panels once at load when they are
 * initializers (else per run into the session's scratch, memoized on their
 * bytes). Biases, Rbh and peepholes are packed per run (a few KiB). With 2+
 * threads the two directions of a bidirectional node run in parallel (no
 * barrier per step); a one-direction node splits its input projection.
 * The step-0 product is skipped when the initial h is absent or all zero.
 * Nodes with non-default activations or non-f32 tensors are not taken
 * (supports says no): the reference runs them.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/cpu_rnn.h"
#include "ops/recurrent.h"

typedef struct rnn_tier {
    const char *isa;
    int64_t (*vw)(void);
    size_t (*packed_floats)(int64_t G, int64_t H, int64_t K);
    void (*pack)(const float *src, int64_t G, int64_t H, int64_t K, float *dst);
    void (*xproj)(int64_t M, int64_t K, const float *A, int64_t lda, const float *Wp, int64_t G,
                  int64_t H, const float *bias, float *gx, int64_t p0, int64_t p1);
    void (*step)(const cpu_rnn_step_args *a);
} rnn_tier;

#define RNN_TIER(SFX)                                                                              \
    {                                                                                              \
#SFX, cpu_rnn_vw_##SFX, cpu_rnn_packed_floats_##SFX, cpu_rnn_pack_f32_##SFX,               \
            cpu_rnn_xproj_f32_##SFX, cpu_rnn_step_f32_##SFX                                        \
    }
static const rnn_tier k_avx512 = RNN_TIER(avx512);
static const rnn_tier k_avx2 = RNN_TIER(avx2);
static const rnn_tier k_portable = RNN_TIER(portable);

/* W and R of every direction in gate panels ([D][packed]); each NULL when
 * its input is not constant at load. */
typedef struct rnn_state {
    const rnn_tier *tier;
    float *wp, *rp;
} rnn_state;

/* Grow-only per-session buffer, and the packing of W and R when they were
 * not constant at load (e.g. a subgraph's weights captured from its
 * enclosing graph): `raw` keeps the bytes that were packed last, so a run
 * whose W and R are byte-for-byte the same reuses `packed` instead of
 * packing them again. The check is exact (memcmp). */
typedef struct rnn_scratch {
    float *mem;
    size_t cap; /* floats */
    float *raw, *packed;
    size_t n_raw, n_packed; /* floats held (valid when memo_ok) */
    bool memo_ok;
} rnn_scratch;

static bool default_acts(const ref_rnn_params *k) {
    static const ref_rnn_act_kind want[3][3] = {
        {REF_RNN_ACT_TANH},
        {REF_RNN_ACT_SIGMOID, REF_RNN_ACT_TANH, REF_RNN_ACT_TANH},
        {REF_RNN_ACT_SIGMOID, REF_RNN_ACT_TANH},
    };
    int per = k->cell == REF_RNN_CELL_LSTM ? 3 : k->cell == REF_RNN_CELL_GRU ? 2 : 1;
    for (int d = 0; d < ref_rnn_dirs(k->direction); d++)
        for (int j = 0; j < per; j++)
            if (k->act[d][j].kind != want[k->cell][j]) return false;
    return true;
}

static bool rnn_supports(const op_ctx *ctx, const op_tensor *in, int n_in, const op_tensor *out,
                         int n_out) {
    (void)out, (void)n_out;
    const ops_rnn_params *p = ctx->params;
    if (!p || !default_acts(&p->k)) return false;
    for (int j = 0; j < n_in; j++)
        if (j != RNN_IN_SEQ_LENS && op_has_input(in, n_in, j) && in[j].dtype != MOPT_DTYPE_F32)
            return false;
    return in[RNN_IN_X].dtype == MOPT_DTYPE_F32;
}

/* src [D][G*H][K] (ONNX W or R) into D packed matrices */
static void pack_dirs(const rnn_tier *t, const float *src, int64_t D, int64_t G, int64_t H,
                      int64_t K, float *dst) {
    const size_t n = t->packed_floats(G, H, K);
    for (int64_t d = 0; d < D; d++)
        t->pack(src + d * G * H * K, G, H, K, dst + d * (int64_t)n);
}

static void rnn_release(void *state) {
    rnn_state *s = state;
    if (!s) return;
    mopt_aligned_free(s->wp);
    mopt_aligned_free(s->rp);
    mopt_free(s);
}

/* Sizes known at load: input size from W, hidden from params or R. */
static bool load_sizes(const op_ctx *ctx, const op_tensor *in, int64_t *I, int64_t *H) {
    const ops_rnn_params *p = ctx->params;
    const ir_shape *w = &in[RNN_IN_W].shape, *r = &in[RNN_IN_R].shape;
    if (w->rank != 3 || r->rank != 3 || w->syms[2] || r->syms[2]) return false;
    *I = w->dims[2];
    *H = p->hidden_size ? p->hidden_size : r->dims[2];
    return true;
}

static mopt_status rnn_prepare_tier(const rnn_tier *tier, const op_ctx *ctx, const op_tensor *in,
                                    void **state) {
    if (!cpu_kernels_for(tier->isa)) return MOPT_ERR_UNSUPPORTED;
    const ops_rnn_params *p = ctx->params;
    rnn_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for packed weights");
    s->tier = tier;
    int64_t I, H;
    const int64_t G = ref_rnn_gates(p->k.cell), D = ref_rnn_dirs(p->k.direction);
    if (load_sizes(ctx, in, &I, &H)) {
        const float *W = in[RNN_IN_W].data, *R = in[RNN_IN_R].data;
        const size_t nw = (size_t)D * tier->packed_floats(G, H, I);
        const size_t nr = (size_t)D * tier->packed_floats(G, H, H);
        if (W && (s->wp = mopt_aligned_alloc(nw * sizeof(float) + 64)))
            pack_dirs(tier, W, D, G, H, I, s->wp);
        if (R && (s->rp = mopt_aligned_alloc(nr * sizeof(float) + 64)))
            pack_dirs(tier, R, D, G, H, H, s->rp);
        if ((W && !s->wp) || (R && !s->rp)) {
            rnn_release(s);
            return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for packed weights");
        }
    }
    *state = s;
    return MOPT_OK;
}

static float *scratch_get(const op_ctx *ctx, size_t floats) {
    rnn_scratch *sc = *ctx->scratch;
    if (!sc) {
        sc = mopt_calloc(1, sizeof *sc);
        if (!sc) return NULL;
        *ctx->scratch = sc;
    }
    if (sc->cap < floats) {
        float *m = mopt_aligned_alloc(floats * sizeof(float));
        if (!m) return NULL;
        mopt_aligned_free(sc->mem);
        sc->mem = m;
        sc->cap = floats;
    }
    return sc->mem;
}

static void rnn_release_scratch(void *scratch) {
    rnn_scratch *sc = scratch;
    if (!sc) return;
    mopt_aligned_free(sc->mem);
    mopt_aligned_free(sc->raw);
    mopt_aligned_free(sc->packed);
    mopt_free(sc);
}

/* The packed W and R of this run for those the state lacks, reusing the last
 * packing when the raw weights are unchanged. false when out of memory. */
static bool packed_weights(const op_ctx *ctx, const op_tensor *in, const ref_rnn_params *k,
                           float **wp, float **rp) {
    const rnn_state *st = ctx->state;
    const rnn_tier *t = st->tier;
    rnn_scratch *sc = *ctx->scratch;
    const int64_t G = ref_rnn_gates(k->cell), D = ref_rnn_dirs(k->direction);
    const int64_t H = k->hidden, I = k->input;
    const float *W = in[RNN_IN_W].data, *R = in[RNN_IN_R].data;
    size_t nw = st->wp ? 0 : (size_t)(D * G * H * I);
    size_t nr = st->rp ? 0 : (size_t)(D * G * H * H);
    size_t pw = st->wp ? 0 : (size_t)D * t->packed_floats(G, H, I);
    size_t pr = st->rp ? 0 : (size_t)D * t->packed_floats(G, H, H);
    size_t n_raw = nw + nr, n_packed = pw + pr;
    bool same = sc->memo_ok && sc->n_raw == n_raw && sc->n_packed == n_packed &&
                (!nw || memcmp(sc->raw, W, nw * sizeof(float)) == 0) &&
                (!nr || memcmp(sc->raw + nw, R, nr * sizeof(float)) == 0);
    if (!same) {
        sc->memo_ok = false;
        mopt_aligned_free(sc->raw);
        mopt_aligned_free(sc->packed);
        sc->raw = mopt_aligned_alloc(n_raw * sizeof(float) + 64);
        sc->packed = mopt_aligned_alloc(n_packed * sizeof(float) + 64);
        if (!sc->raw || !sc->packed) return false;
        if (nw) memcpy(sc->raw, W, nw * sizeof(float));
        if (nr) memcpy(sc->raw + nw, R, nr * sizeof(float));
        if (pw) pack_dirs(t, W, D, G, H, I, sc->packed);
        if (pr) pack_dirs(t, R, D, G, H, H, sc->packed + pw);
        sc->n_raw = n_raw;
        sc->n_packed = n_packed;
        sc->memo_ok = true;
    }
    *wp = st->wp ? st->wp : sc->packed;
    *rp = st->rp ? st->rp : sc->packed + pw;
    return true;
}

/* Per-direction work, each part a multiple of 16 floats (64 bytes). */
typedef struct rnn_work {
    float *gx, *h[2], *c, *gwork, *bias, *rbh, *P, *sum;
    const float **gxp;
    float **yp;
} rnn_work;

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

static size_t work_floats(const ref_rnn_params *k, int64_t Hp, int64_t G) {
    const size_t T = (size_t)k->seq, N = (size_t)k->batch, hp = (size_t)Hp;
    const size_t ptr = (sizeof(void *) + sizeof(float) - 1) / sizeof(float);
    return up16(T * N * hp * (size_t)G) + 2 * up16(N * hp) + up16(N * hp) + up16(2 * N * hp) +
           up16(hp * (size_t)G) + up16(hp) + up16(3 * hp) + up16((size_t)(G * k->hidden)) +
           2 * up16(N * ptr);
}

static rnn_work work_at(float *m, const ref_rnn_params *k, int64_t Hp, int64_t G) {
    const size_t T = (size_t)k->seq, N = (size_t)k->batch, hp = (size_t)Hp;
    const size_t ptr = (sizeof(void *) + sizeof(float) - 1) / sizeof(float);
    rnn_work w;
    w.gx = m, m += up16(T * N * hp * (size_t)G);
    w.h[0] = m, m += up16(N * hp);
    w.h[1] = m, m += up16(N * hp);
    w.c = m, m += up16(N * hp);
    w.gwork = m, m += up16(2 * N * hp);
    w.bias = m, m += up16(hp * (size_t)G);
    w.rbh = m, m += up16(hp);
    w.P = m, m += up16(3 * hp);
    w.sum = m, m += up16((size_t)(G * k->hidden));
    w.gxp = (const float **)(void *)m, m += up16(N * ptr);
    w.yp = (float **)(void *)m;
    return w;
}

/* Everything one run shares across directions. */
typedef struct rnn_job {
    const ref_rnn_params *k;
    const rnn_tier *t;
    int64_t D, G, Hp;
    const float *X, *wp, *rp, *B, *P, *h0, *c0;
    const int32_t *lens;
    float *Y, *Yh, *Yc;
    float *mem; /* D * work_floats */
    size_t per_dir;
    int threads; /* for the input projection of a one-direction node */
} rnn_job;

static int64_t state_at(const ref_rnn_params *k, int64_t dirs, int64_t d, int64_t b) {
    return (k->layout_batch_first ? b * dirs + d : d * k->batch + b) * k->hidden;
}

/* bias [G][H] (Wb + Rb; GRU's h gate: Wb only) and GRU's Rbh, then peepholes */
static void pack_small(const rnn_job *j, int64_t d, const rnn_work *w) {
    const ref_rnn_params *k = j->k;
    const int64_t H = k->hidden, G = j->G, GH = G * H;
    const float *Wb = j->B ? j->B + d * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
    float *sum = w->sum;
    for (int64_t r = 0; r < GH; r++) {
        bool gru_h = k->cell == REF_RNN_CELL_GRU && r >= 2 * H;
        sum[r] = Wb ? Wb[r] + (gru_h ? 0.0f : Rb[r]) : 0.0f;
    }
    j->t->pack(sum, G, H, 1, w->bias);
    for (int64_t i = 0; i < j->Hp; i++)
        w->rbh[i] = Rb && k->cell == REF_RNN_CELL_GRU && i < H ? Rb[2 * H + i] : 0.0f;
    if (j->P) j->t->pack(j->P + d * 3 * H, 3, H, 1, w->P);
}

typedef struct xproj_job {
    const rnn_job *j;
    const rnn_work *w;
    const float *wp;
} xproj_job;

static void xproj_range(void *arg, int64_t lo, int64_t hi) {
    const xproj_job *x = arg;
    const ref_rnn_params *k = x->j->k;
    x->j->t->xproj(k->seq * k->batch, k->input, x->j->X, k->input, x->wp, x->j->G, k->hidden,
                   x->w->bias, x->w->gx, lo, hi);
}

static void run_direction(const rnn_job *j, int64_t d) {
    const ref_rnn_params *k = j->k;
    const rnn_tier *t = j->t;
    const int64_t T = k->seq, N = k->batch, I = k->input, H = k->hidden, G = j->G, Hp = j->Hp;
    const int64_t GHp = G * Hp;
    const bool rev = k->direction == REF_RNN_REVERSE || d == 1, bf = k->layout_batch_first;
    const rnn_work w = work_at(j->mem + d * j->per_dir, k, Hp, G);
    pack_small(j, d, &w);
    /* 1. input projection of every step (rows in X's order) on the biases */
    xproj_job xj = {j, &w, j->wp + d * (int64_t)t->packed_floats(G, H, I)};
    const int64_t blocks = Hp / t->vw();
    const int64_t macs = T * N * I * G * t->vw();
    if (j->threads > 1 && j->D == 1)
        cpu_parallel_for(j->threads, blocks, macs >= (1 << 17) ? 1 : blocks, xproj_range, &xj);
    else
        xproj_range(&xj, 0, blocks);
    /* initial state; padding lanes stay 0 */
    int64_t max_len = 0;
    bool h_zero = true;
    memset(w.h[0], 0, (size_t)(N * Hp) * sizeof(float));
    memset(w.c, 0, (size_t)(N * Hp) * sizeof(float));
    for (int64_t b = 0; b < N; b++) {
        int64_t len = j->lens ? j->lens[b] : T;
        if (len > max_len) max_len = len;
        int64_t so = state_at(k, j->D, d, b);
        for (int64_t i = 0; i < H; i++) {
            float h0 = j->h0 ? j->h0[so + i] : 0.0f;
            w.h[0][b * Hp + i] = h0;
            h_zero = h_zero && h0 == 0.0f; /* -0.0 too: the product is then 0 */
            w.c[b * Hp + i] = j->c0 ? j->c0[so + i] : 0.0f;
        }
    }
    cpu_rnn_step_args a = {.cell = k->cell == REF_RNN_CELL_LSTM  ? CPU_RNN_LSTM
                                   : k->cell == REF_RNN_CELL_GRU ? CPU_RNN_GRU
                                                                 : CPU_RNN_RNN,
                           .N = N,
                           .H = H,
                           .R = j->rp + d * (int64_t)t->packed_floats(G, H, H),
                           .c = w.c,
                           .gx = w.gxp,
                           .y = w.yp,
                           .P = j->P ? w.P : NULL,
                           .rbh = w.rbh,
                           .lbr = k->linear_before_reset,
                           .work = w.gwork,
                           .clip = k->has_clip ? k->clip : INFINITY,
                           .input_forget = k->input_forget};
    /* 2. the steps: h ping-pongs between w.h[0] and w.h[1] */
    for (int64_t s = 0; s < max_len; s++) {
        for (int64_t b = 0; b < N; b++) {
            int64_t len = j->lens ? j->lens[b] : T;
            int64_t tt = rev ? len - 1 - s : s;
            w.gxp[b] = s < len ? w.gx + (bf ? b * T + tt : tt * N + b) * GHp : NULL;
            int64_t yo = bf ? (b * T + tt) * j->D + d : (tt * j->D + d) * N + b;
            w.yp[b] = s < len && j->Y ? j->Y + yo * H : NULL;
        }
        a.h = w.h[s & 1];
        a.h_out = w.h[(s + 1) & 1];
        a.h_zero = s == 0 && h_zero;
        t->step(&a);
    }
    const float *hl = w.h[max_len & 1];
    for (int64_t b = 0; b < N; b++) {
        bool empty = (j->lens ? j->lens[b] : T) == 0;
        int64_t so = state_at(k, j->D, d, b);
        for (int64_t i = 0; i < H; i++) {
            if (j->Yh) j->Yh[so + i] = empty ? 0.0f : hl[b * Hp + i];
            if (j->Yc) j->Yc[so + i] = empty ? 0.0f : w.c[b * Hp + i];
        }
    }
}

static void dir_range(void *arg, int64_t lo, int64_t hi) {
    for (int64_t d = lo; d < hi; d++)
        run_direction(arg, d);
}

static mopt_status rnn_run_cpu(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const rnn_state *st = ctx->state;
    ref_rnn_params k;
    mopt_status s = ops_rnn_setup(ctx, in, n_in, &k);
    if (s) return s;
    const rnn_tier *t = st->tier;
    const int64_t T = k.seq, N = k.batch, H = k.hidden, VWt = t->vw();
    const int64_t G = ref_rnn_gates(k.cell), D = ref_rnn_dirs(k.direction);
    const int64_t Hp = (H + VWt - 1) / VWt * VWt;
    rnn_job j = {.k = &k,
                 .t = t,
                 .D = D,
                 .G = G,
                 .Hp = Hp,
                 .X = in[RNN_IN_X].data,
                 .B = ops_rnn_input(in, n_in, RNN_IN_B),
                 .h0 = ops_rnn_input(in, n_in, RNN_IN_H0),
                 .lens = ops_rnn_input(in, n_in, RNN_IN_SEQ_LENS),
                 .Y = n_out > 0 ? out[0].data : NULL,
                 .Yh = n_out > 1 ? out[1].data : NULL,
                 .per_dir = work_floats(&k, Hp, G),
                 .threads = ctx->threads};
    if (k.cell == REF_RNN_CELL_LSTM) {
        j.c0 = ops_rnn_input(in, n_in, RNN_IN_C0);
        j.P = ops_rnn_input(in, n_in, RNN_IN_P);
        j.Yc = n_out > 2 ? out[2].data : NULL;
    }
    float *wp = st->wp, *rp = st->rp;
    j.mem = scratch_get(ctx, (size_t)D * j.per_dir + 16);
    if (!j.mem || ((!wp || !rp) && !packed_weights(ctx, in, &k, &wp, &rp)))
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the recurrent state");
    j.wp = wp;
    j.rp = rp;
    /* positions past a row's length stay 0 */
    if (j.Y && j.lens) memset(j.Y, 0, (size_t)(T * D * N * H) * sizeof(float));
    if (D == 2 && ctx->threads > 1)
        cpu_parallel_for(2, 2, 1, dir_range, &j);
    else
        dir_range(&j, 0, D);
    return MOPT_OK;
}

/* MOPT_VERBOSE / profiles: "-packed" when W and R were packed at load */
#define RNN_VARIANT(SFX)                                                                           \
    static const char *variant_##SFX(const void *state) {                                          \
        const rnn_state *s = state;                                                                \
        return s && s->wp && s->rp ? "cpu-" #SFX "-packed" : "cpu-" #SFX;                          \
    }
RNN_VARIANT(avx512)
RNN_VARIANT(avx2)
RNN_VARIANT(portable)

#define RNN_IMPL(SFX)                                                                              \
    static mopt_status prepare_##SFX(const op_ctx *ctx, const op_tensor *in, int n_in,             \
                                     const op_tensor *out, int n_out, void **state) {              \
        (void)out, (void)n_out;                                                                    \
        (void)n_in;                                                                                \
        return rnn_prepare_tier(&k_##SFX, ctx, in, state);                                         \
    }                                                                                              \
    static const op_impl k_impl_##SFX = {.name = "cpu-" #SFX,                                      \
                                         .backend = "cpu",                                         \
                                         .supports = rnn_supports,                                 \
                                         .prepare = prepare_##SFX,                                 \
                                         .release = rnn_release,                                   \
                                         .run = rnn_run_cpu,                                       \
                                         .release_scratch = rnn_release_scratch,                   \
                                         .variant = variant_##SFX};
RNN_IMPL(avx512)
RNN_IMPL(avx2)
RNN_IMPL(portable)

const op_impl *const ops_cpu_recurrent_impls[] = {&k_impl_avx512, &k_impl_avx2, &k_impl_portable,
                                                  NULL};
