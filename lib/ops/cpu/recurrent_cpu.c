/*
 * recurrent_cpu.c — the "cpu" fast path of LSTM, GRU and RNN (impls
 * cpu-avx512, cpu-avx2, cpu-portable; kernels in kernels/cpu/rnn-impl.h):
 *   1. the input projection of every time step at once: one GEMM
 *      X[T*N, I] · W^T[I, G*H] on top of the folded biases;
 *   2. per step, the recurrent GEMM h[N, H] · R^T[H, G*H];
 *   3. per batch row, one fused gate kernel (sigmoid/tanh, peepholes, clip,
 *      cell and hidden update).
 * W^T, R^T and the folded biases are packed once at load when W, R and B
 * are initializers (else per run, into the session's scratch). Nodes with
 * non-default activations or non-f32 tensors are not taken (supports says
 * no): the reference runs them. Single-threaded: the sizes it is for
 * (batch 1, hidden <= 256) are latency-bound per step.
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/cpu_rnn.h"
#include "ops/recurrent.h"

typedef struct rnn_tier {
    const char *isa;
    void (*gemm)(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float *C, int64_t ldc, bool acc);
    void (*lstm_cell)(int64_t H, const float *gx, const float *gh, const float *P, float clip,
                      bool input_forget, float *c, float *h);
    void (*gru_zr)(int64_t H, const float *gx, const float *gh, float clip, float *zr);
    void (*gru_out)(int64_t H, const float *gxh, const float *ghh, const float *rbh, const float *r,
                    const float *z, float clip, float *h);
    void (*rnn_tanh)(int64_t H, const float *gx, const float *gh, float clip, float *h);
} rnn_tier;

#define RNN_TIER(SFX)                                                                              \
    {                                                                                              \
#SFX, cpu_rnn_gemm_f32_##SFX, cpu_lstm_cell_f32_##SFX, cpu_gru_zr_f32_##SFX,               \
            cpu_gru_out_f32_##SFX, cpu_rnn_tanh_f32_##SFX                                          \
    }
static const rnn_tier k_avx512 = RNN_TIER(avx512);
static const rnn_tier k_avx2 = RNN_TIER(avx2);
static const rnn_tier k_portable = RNN_TIER(portable);

/* Weights in the kernels' layout, per direction: W^T [I][G*H], R^T [H][G*H],
 * the input-side bias [G*H] (Wb + Rb; GRU's h gate: Wb only) and GRU's Rbh
 * [H]. Each is NULL when its input is not constant at load. */
typedef struct rnn_state {
    const rnn_tier *tier;
    float *wt, *rt, *bias;
} rnn_state;

/* Grow-only per-session buffer, and the packing of weights that were not
 * constant at load (e.g. a subgraph's weights captured from its enclosing
 * graph): `raw` keeps the bytes that were packed last, so a run whose W, R
 * and B are byte-for-byte the same reuses `packed` instead of transposing
 * them again. The check is exact (memcmp), so changed weights are always
 * repacked. */
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

/* dst[c][r] = src[r][c] for a rows x cols matrix, per direction */
static void pack_t(const float *src, int64_t dirs, int64_t rows, int64_t cols, float *dst) {
    for (int64_t d = 0; d < dirs; d++, src += rows * cols, dst += rows * cols)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                dst[c * rows + r] = src[r * cols + c];
}

/* bias [dirs][G*H + H]: the input-side sum, then GRU's Rbh (0 without B) */
static void pack_bias(const float *B, ref_rnn_cell cell, int64_t dirs, int64_t H, float *dst) {
    const int64_t G = ref_rnn_gates(cell), GH = G * H;
    for (int64_t d = 0; d < dirs; d++, dst += GH + H) {
        const float *Wb = B ? B + d * 2 * GH : NULL, *Rb = Wb ? Wb + GH : NULL;
        for (int64_t r = 0; r < GH; r++) {
            bool gru_h = cell == REF_RNN_CELL_GRU && r >= 2 * H;
            dst[r] = B ? Wb[r] + (gru_h ? 0.0f : Rb[r]) : 0.0f;
        }
        for (int64_t j = 0; j < H; j++)
            dst[GH + j] = B && cell == REF_RNN_CELL_GRU ? Rb[2 * H + j] : 0.0f;
    }
}

static void rnn_release(void *state) {
    rnn_state *s = state;
    if (!s) return;
    mopt_free(s->wt);
    mopt_free(s->rt);
    mopt_free(s->bias);
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
                                    int n_in, void **state) {
    if (!cpu_kernels_for(tier->isa)) return MOPT_ERR_UNSUPPORTED;
    const ops_rnn_params *p = ctx->params;
    rnn_state *s = mopt_calloc(1, sizeof *s);
    if (!s) return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for packed weights");
    s->tier = tier;
    int64_t I, H;
    const int64_t G = ref_rnn_gates(p->k.cell), D = ref_rnn_dirs(p->k.direction);
    if (load_sizes(ctx, in, &I, &H)) {
        const float *W = in[RNN_IN_W].data, *R = in[RNN_IN_R].data;
        const float *B = ops_rnn_input(in, n_in, RNN_IN_B);
        bool b_const = !op_wired(ctx, RNN_IN_B) || B;
        if (W && (s->wt = mopt_malloc((size_t)(D * G * H * I) * sizeof(float) + 1)))
            pack_t(W, D, G * H, I, s->wt);
        if (R && (s->rt = mopt_malloc((size_t)(D * G * H * H) * sizeof(float) + 1)))
            pack_t(R, D, G * H, H, s->rt);
        if (b_const && (s->bias = mopt_malloc((size_t)(D * (G + 1) * H) * sizeof(float) + 1)))
            pack_bias(B, p->k.cell, D, H, s->bias);
        if ((W && !s->wt) || (R && !s->rt) || (b_const && !s->bias)) {
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

/* The packed W, R and bias of this run for those the state lacks (written
 * into *wt, *rt, *bias), reusing the last packing when the raw weights are
 * unchanged. NULL when out of memory. */
static bool packed_weights(const op_ctx *ctx, const op_tensor *in, int n_in,
                           const ref_rnn_params *k, float **wt, float **rt, float **bias) {
    const rnn_state *st = ctx->state;
    rnn_scratch *sc = *ctx->scratch;
    const int64_t G = ref_rnn_gates(k->cell), GH = G * k->hidden, D = ref_rnn_dirs(k->direction);
    const float *W = in[RNN_IN_W].data, *R = in[RNN_IN_R].data;
    const float *B = ops_rnn_input(in, n_in, RNN_IN_B);
    size_t nw = st->wt ? 0 : (size_t)(D * GH * k->input);
    size_t nr = st->rt ? 0 : (size_t)(D * GH * k->hidden);
    size_t nb = (!st->bias && B) ? (size_t)(D * 2 * GH) : 0;
    size_t pw = nw, pr = nr, pb = st->bias ? 0 : (size_t)(D * (GH + k->hidden));
    size_t n_raw = nw + nr + nb, n_packed = pw + pr + pb;
    bool same = sc->memo_ok && sc->n_raw == n_raw && sc->n_packed == n_packed &&
                (!nw || memcmp(sc->raw, W, nw * sizeof(float)) == 0) &&
                (!nr || memcmp(sc->raw + nw, R, nr * sizeof(float)) == 0) &&
                (!nb || memcmp(sc->raw + nw + nr, B, nb * sizeof(float)) == 0);
    if (!same) {
        sc->memo_ok = false;
        if (sc->n_raw < n_raw || !sc->raw) {
            mopt_aligned_free(sc->raw);
            sc->raw = mopt_aligned_alloc(n_raw * sizeof(float) + 64);
            sc->n_raw = sc->raw ? n_raw : 0;
        }
        if (sc->n_packed < n_packed || !sc->packed) {
            mopt_aligned_free(sc->packed);
            sc->packed = mopt_aligned_alloc(n_packed * sizeof(float) + 64);
            sc->n_packed = sc->packed ? n_packed : 0;
        }
        if (!sc->raw || !sc->packed) return false;
        if (nw) memcpy(sc->raw, W, nw * sizeof(float));
        if (nr) memcpy(sc->raw + nw, R, nr * sizeof(float));
        if (nb) memcpy(sc->raw + nw + nr, B, nb * sizeof(float));
        if (pw) pack_t(W, D, GH, k->input, sc->packed);
        if (pr) pack_t(R, D, GH, k->hidden, sc->packed + pw);
        if (pb) pack_bias(B, k->cell, D, k->hidden, sc->packed + pw + pr);
        sc->n_raw = n_raw;
        sc->n_packed = n_packed;
        sc->memo_ok = true;
    }
    *wt = st->wt ? st->wt : sc->packed;
    *rt = st->rt ? st->rt : sc->packed + pw;
    *bias = st->bias ? st->bias : sc->packed + pw + pr;
    return true;
}

/* One direction d over the whole sequence. */
typedef struct rnn_dir_args {
    const ref_rnn_params *k;
    const rnn_tier *t;
    int d, dirs;
    const float *X, *wt, *rt, *bias, *P, *h0, *c0;
    const int32_t *lens;
    float *Y, *Yh, *Yc;
    float *gx, *gh, *h, *c, *zr, *rh, *ghh; /* work */
} rnn_dir_args;

static int64_t state_at(const ref_rnn_params *k, int dirs, int d, int64_t b) {
    return (k->layout_batch_first ? b * dirs + d : d * k->batch + b) * k->hidden;
}

static void run_direction(const rnn_dir_args *a) {
    const ref_rnn_params *k = a->k;
    const rnn_tier *t = a->t;
    const int64_t T = k->seq, N = k->batch, I = k->input, H = k->hidden;
    const int64_t G = ref_rnn_gates(k->cell), GH = G * H;
    const bool rev = k->direction == REF_RNN_REVERSE || a->d == 1;
    const bool bf = k->layout_batch_first;
    const float clip = k->has_clip ? k->clip : INFINITY;
    const float *rbh = a->bias + GH;
    /* 1. input projection of every step (rows in X's order) on the biases */
    for (int64_t r = 0; r < T * N; r++)
        memcpy(a->gx + r * GH, a->bias, (size_t)GH * sizeof(float));
    t->gemm(T * N, GH, I, a->X, I, a->wt, GH, a->gx, GH, true);
    int64_t max_len = 0;
    for (int64_t b = 0; b < N; b++) {
        int64_t len = a->lens ? a->lens[b] : T;
        if (len > max_len) max_len = len;
        int64_t so = state_at(k, a->dirs, a->d, b);
        for (int64_t j = 0; j < H; j++) {
            a->h[b * H + j] = a->h0 ? a->h0[so + j] : 0.0f;
            a->c[b * H + j] = a->c0 ? a->c0[so + j] : 0.0f;
        }
    }
    const bool gru = k->cell == REF_RNN_CELL_GRU, lbr0 = gru && !k->linear_before_reset;
    for (int64_t s = 0; s < max_len; s++) {
        /* 2. the recurrent product (GRU without linear_before_reset: z, r only) */
        t->gemm(N, lbr0 ? 2 * H : GH, H, a->h, H, a->rt, GH, a->gh, GH, false);
        /* 3. gates per active row */
        for (int64_t b = 0; b < N; b++) {
            int64_t len = a->lens ? a->lens[b] : T;
            if (s >= len) continue;
            int64_t tt = rev ? len - 1 - s : s;
            const float *gx = a->gx + (bf ? b * T + tt : tt * N + b) * GH;
            const float *gh = a->gh + b * GH;
            float *h = a->h + b * H;
            switch (k->cell) {
            case REF_RNN_CELL_LSTM:
                t->lstm_cell(H, gx, gh, a->P, clip, k->input_forget, a->c + b * H, h);
                break;
            case REF_RNN_CELL_RNN: t->rnn_tanh(H, gx, gh, clip, h); break;
            case REF_RNN_CELL_GRU: {
                float *zr = a->zr + b * 2 * H;
                t->gru_zr(H, gx, gh, clip, zr);
                if (lbr0)
                    for (int64_t j = 0; j < H; j++)
                        a->rh[b * H + j] = zr[H + j] * h[j];
                else
                    t->gru_out(H, gx + 2 * H, gh + 2 * H, rbh, zr + H, zr, clip, h);
                break;
            }
            }
        }
        if (lbr0) {
            /* (r (.) h) Rh^T for every row (inactive rows: unused), then the output */
            for (int64_t b = 0; b < N; b++)
                if (s >= (a->lens ? a->lens[b] : T))
                    memset(a->rh + b * H, 0, (size_t)H * sizeof(float));
            t->gemm(N, H, H, a->rh, H, a->rt + 2 * H, GH, a->ghh, H, false);
            for (int64_t b = 0; b < N; b++) {
                int64_t len = a->lens ? a->lens[b] : T;
                if (s >= len) continue;
                int64_t tt = rev ? len - 1 - s : s;
                const float *gx = a->gx + (bf ? b * T + tt : tt * N + b) * GH;
                t->gru_out(H, gx + 2 * H, a->ghh + b * H, rbh, NULL, a->zr + b * 2 * H, clip,
                           a->h + b * H);
            }
        }
        if (a->Y)
            for (int64_t b = 0; b < N; b++) {
                int64_t len = a->lens ? a->lens[b] : T;
                if (s >= len) continue;
                int64_t tt = rev ? len - 1 - s : s;
                int64_t yo = (bf ? (b * T + tt) * a->dirs + a->d : (tt * a->dirs + a->d) * N + b);
                memcpy(a->Y + yo * H, a->h + b * H, (size_t)H * sizeof(float));
            }
    }
    for (int64_t b = 0; b < N; b++) {
        bool empty = (a->lens ? a->lens[b] : T) == 0;
        int64_t so = state_at(k, a->dirs, a->d, b);
        for (int64_t j = 0; j < H; j++) {
            if (a->Yh) a->Yh[so + j] = empty ? 0.0f : a->h[b * H + j];
            if (a->Yc) a->Yc[so + j] = empty ? 0.0f : a->c[b * H + j];
        }
    }
}

static mopt_status rnn_run_cpu(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                               int n_out) {
    const rnn_state *st = ctx->state;
    ref_rnn_params k;
    mopt_status s = ops_rnn_setup(ctx, in, n_in, &k);
    if (s) return s;
    const int64_t T = k.seq, N = k.batch, I = k.input, H = k.hidden;
    const int64_t G = ref_rnn_gates(k.cell), GH = G * H, D = ref_rnn_dirs(k.direction);
    /* work: gx gh h c zr rh ghh; weights the state lacks are packed into
     * the scratch's memo (packed_weights) */
    size_t work = (size_t)(T * N * GH + N * GH + 2 * N * H + 2 * N * H + 2 * N * H);
    float *mem = scratch_get(ctx, work + 16);
    float *wt = st->wt, *rt = st->rt, *bias = st->bias, *at = mem;
    if (!mem || ((!wt || !rt || !bias) && !packed_weights(ctx, in, n_in, &k, &wt, &rt, &bias)))
        return op_fail(ctx, MOPT_ERR_OUT_OF_MEMORY, "no memory for the recurrent state");
    rnn_dir_args a = {.k = &k,
                      .t = st->tier,
                      .dirs = (int)D,
                      .X = in[RNN_IN_X].data,
                      .h0 = ops_rnn_input(in, n_in, RNN_IN_H0),
                      .lens = ops_rnn_input(in, n_in, RNN_IN_SEQ_LENS),
                      .Y = n_out > 0 ? out[0].data : NULL,
                      .Yh = n_out > 1 ? out[1].data : NULL};
    if (k.cell == REF_RNN_CELL_LSTM) {
        a.c0 = ops_rnn_input(in, n_in, RNN_IN_C0);
        a.Yc = n_out > 2 ? out[2].data : NULL;
    }
    const float *P = k.cell == REF_RNN_CELL_LSTM ? ops_rnn_input(in, n_in, RNN_IN_P) : NULL;
    a.gx = at, at += T * N * GH;
    a.gh = at, at += N * GH;
    a.h = at, at += N * H;
    a.c = at, at += N * H;
    a.zr = at, at += 2 * N * H;
    a.rh = at, at += N * H;
    a.ghh = at;
    if (a.Y) memset(a.Y, 0, (size_t)(T * D * N * H) * sizeof(float));
    for (int d = 0; d < (int)D; d++) {
        a.d = d;
        a.wt = wt + (int64_t)d * GH * I;
        a.rt = rt + (int64_t)d * GH * H;
        a.bias = bias + (int64_t)d * (GH + H);
        a.P = P ? P + (int64_t)d * 3 * H : NULL;
        run_direction(&a);
    }
    return MOPT_OK;
}

#define RNN_IMPL(SFX)                                                                              \
    static mopt_status prepare_##SFX(const op_ctx *ctx, const op_tensor *in, int n_in,             \
                                     const op_tensor *out, int n_out, void **state) {              \
        (void)out, (void)n_out;                                                                    \
        return rnn_prepare_tier(&k_##SFX, ctx, in, n_in, state);                                   \
    }                                                                                              \
    static const op_impl k_impl_##SFX = {.name = "cpu-" #SFX,                                      \
                                         .backend = "cpu",                                         \
                                         .supports = rnn_supports,                                 \
                                         .prepare = prepare_##SFX,                                 \
                                         .release = rnn_release,                                   \
                                         .run = rnn_run_cpu,                                       \
                                         .release_scratch = rnn_release_scratch};
RNN_IMPL(avx512)
RNN_IMPL(avx2)
RNN_IMPL(portable)

const op_impl *const ops_cpu_recurrent_impls[] = {&k_impl_avx512, &k_impl_avx2, &k_impl_portable,
                                                  NULL};
