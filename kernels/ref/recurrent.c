/*
 * recurrent.c — reference kernels of the "recurrent" op family (ref_recurrent.h):
 * LSTM, GRU and RNN cells written out one batch row and one time step at a
 * time, straight from the ONNX equations. Slow and obvious on purpose.
 */
#include "kernels/ref/ref_recurrent.h"

#include <math.h>
#include <string.h>

int ref_rnn_gates(ref_rnn_cell cell) {
    return cell == REF_RNN_CELL_LSTM ? 4 : cell == REF_RNN_CELL_GRU ? 3 : 1;
}

int ref_rnn_dirs(ref_rnn_direction d) { return d == REF_RNN_BIDIRECTIONAL ? 2 : 1; }

float ref_rnn_act_apply(const ref_rnn_act *a, float xf) {
    double x = xf, al = a->alpha, be = a->beta;
    switch (a->kind) {
    case REF_RNN_ACT_SIGMOID: return (float)(1.0 / (1.0 + exp(-x)));
    case REF_RNN_ACT_TANH: return (float)tanh(x);
    case REF_RNN_ACT_RELU: return xf > 0 ? xf : 0.0f;
    case REF_RNN_ACT_AFFINE: return (float)(al * x + be);
    case REF_RNN_ACT_LEAKY_RELU: return (float)(x >= 0 ? x : al * x);
    case REF_RNN_ACT_THRESHOLDED_RELU: return x > al ? xf : 0.0f;
    case REF_RNN_ACT_SCALED_TANH: return (float)(al * tanh(be * x));
    case REF_RNN_ACT_HARD_SIGMOID: {
        double v = al * x + be;
        return (float)(v < 0 ? 0 : v > 1 ? 1 : v);
    }
    case REF_RNN_ACT_ELU: return (float)(x >= 0 ? x : al * (exp(x) - 1.0));
    case REF_RNN_ACT_SOFTSIGN: return (float)(x / (1.0 + fabs(x)));
    case REF_RNN_ACT_SOFTPLUS: return (float)(x > 30 ? x : log1p(exp(x)));
    }
    return xf;
}

size_t ref_rnn_work_floats(const ref_rnn_params *p) {
    return (size_t)(ref_rnn_gates(p->cell) + 4) * (size_t)p->hidden;
}

static float clip_to(const ref_rnn_params *p, float v) {
    if (!p->has_clip) return v;
    return v < -p->clip ? -p->clip : v > p->clip ? p->clip : v;
}

static float act(const ref_rnn_params *p, const ref_rnn_act *a, float v) {
    return ref_rnn_act_apply(a, clip_to(p, v));
}

/* Offsets of X (t, b), Y (t, d, b) and a state (d, b) rows, per layout. */
static int64_t x_at(const ref_rnn_params *p, int64_t t, int64_t b) {
    return (p->layout_batch_first ? b * p->seq + t : t * p->batch + b) * p->input;
}
static int64_t y_at(const ref_rnn_params *p, int dirs, int64_t t, int d, int64_t b) {
    return (p->layout_batch_first ? (b * p->seq + t) * dirs + d : (t * dirs + d) * p->batch + b) *
           p->hidden;
}
static int64_t s_at(const ref_rnn_params *p, int dirs, int d, int64_t b) {
    return (p->layout_batch_first ? b * dirs + d : d * p->batch + b) * p->hidden;
}

/* dot of n floats, in double */
static double dot(const float *a, const float *b, int64_t n) {
    double s = 0;
    for (int64_t k = 0; k < n; k++)
        s += (double)a[k] * b[k];
    return s;
}

/* One step of one batch row: h (and c) updated in place from x. */
static void step(const ref_rnn_params *p, const ref_rnn_act *a, const float *x, const float *W,
                 const float *R, const float *B, const float *P, float *h, float *c, float *g,
                 float *tmp) {
    const int64_t H = p->hidden, I = p->input;
    const int G = ref_rnn_gates(p->cell);
    /* g[r] = x W[r]^T + Wb[r], for every gate row; recurrent parts below */
    for (int64_t r = 0; r < G * H; r++)
        g[r] = (float)(dot(x, W + r * I, I) + (B ? B[r] : 0.0f));
    const float *Rb = B ? B + G * H : NULL;
    switch (p->cell) {
    case REF_RNN_CELL_RNN:
        for (int64_t j = 0; j < H; j++)
            tmp[j] = act(p, &a[0], (float)(g[j] + dot(h, R + j * H, H) + (Rb ? Rb[j] : 0.0f)));
        memcpy(h, tmp, (size_t)H * sizeof(float));
        break;
    case REF_RNN_CELL_LSTM: {
        /* pre-activations of i o f c with the recurrent term and Rb */
        for (int64_t r = 0; r < 4 * H; r++)
            g[r] = (float)(g[r] + dot(h, R + r * H, H) + (Rb ? Rb[r] : 0.0f));
        float *gi = g, *go = g + H, *gf = g + 2 * H, *gc = g + 3 * H;
        for (int64_t j = 0; j < H; j++) {
            float i = act(p, &a[0], gi[j] + (P ? P[j] * c[j] : 0.0f));
            float f = p->input_forget ? 1.0f - i
                                      : act(p, &a[0], gf[j] + (P ? P[2 * H + j] * c[j] : 0.0f));
            float cc = act(p, &a[1], gc[j]);
            float cn = f * c[j] + i * cc;
            float o = act(p, &a[0], go[j] + (P ? P[H + j] * cn : 0.0f));
            c[j] = cn;
            h[j] = o * ref_rnn_act_apply(&a[2], cn); /* Ct unclipped, as ORT */
        }
        break;
    }
    case REF_RNN_CELL_GRU: {
        float *gz = g, *gr = g + H, *gh = g + 2 * H;
        float *z = tmp, *rh = tmp + H;
        for (int64_t j = 0; j < H; j++) {
            z[j] = act(p, &a[0], (float)(gz[j] + dot(h, R + j * H, H) + (Rb ? Rb[j] : 0.0f)));
            float r = act(p, &a[0],
                          (float)(gr[j] + dot(h, R + (H + j) * H, H) + (Rb ? Rb[H + j] : 0.0f)));
            if (p->linear_before_reset)
                gh[j] = (float)(gh[j] +
                                r * (dot(h, R + (2 * H + j) * H, H) + (Rb ? Rb[2 * H + j] : 0.0f)));
            else
                rh[j] = r * h[j];
        }
        for (int64_t j = 0; j < H; j++) {
            float pre = p->linear_before_reset ? gh[j]
                                               : (float)(gh[j] + dot(rh, R + (2 * H + j) * H, H) +
                                                         (Rb ? Rb[2 * H + j] : 0.0f));
            float hh = act(p, &a[1], pre);
            /* h[j] is still H(t-1) here: column j is only read by its own row */
            gh[j] = (1.0f - z[j]) * hh + z[j] * h[j];
        }
        memcpy(h, gh, (size_t)H * sizeof(float));
        break;
    }
    }
}

void ref_rnn_f32(const ref_rnn_params *p, const float *X, const float *W, const float *R,
                 const float *B, const int32_t *seq_lens, const float *h0, const float *c0,
                 const float *P, float *Y, float *Yh, float *Yc, float *work) {
    const int64_t H = p->hidden, I = p->input;
    const int G = ref_rnn_gates(p->cell), dirs = ref_rnn_dirs(p->direction);
    /* work: gates [G*H], tmp [2H] (RNN: the new h; GRU: z and r (.) h), h, c */
    float *g = work, *tmp = g + G * H, *h = tmp + 2 * H, *c = h + H;
    for (int d = 0; d < dirs; d++) {
        bool rev = p->direction == REF_RNN_REVERSE || d == 1;
        const float *Wd = W + (int64_t)d * G * H * I, *Rd = R + (int64_t)d * G * H * H;
        const float *Bd = B ? B + (int64_t)d * 2 * G * H : NULL;
        const float *Pd = P ? P + (int64_t)d * 3 * H : NULL;
        for (int64_t b = 0; b < p->batch; b++) {
            int64_t len = seq_lens ? seq_lens[b] : p->seq;
            int64_t so = s_at(p, dirs, d, b);
            for (int64_t j = 0; j < H; j++) {
                h[j] = h0 ? h0[so + j] : 0.0f;
                c[j] = c0 ? c0[so + j] : 0.0f;
            }
            for (int64_t s = 0; s < len; s++) {
                int64_t t = rev ? len - 1 - s : s;
                step(p, p->act[d], X + x_at(p, t, b), Wd, Rd, Bd, Pd, h, c, g, tmp);
                if (Y) memcpy(Y + y_at(p, dirs, t, d, b), h, (size_t)H * sizeof(float));
            }
            if (Y)
                for (int64_t t = len; t < p->seq; t++)
                    memset(Y + y_at(p, dirs, t, d, b), 0, (size_t)H * sizeof(float));
            if (Yh)
                for (int64_t j = 0; j < H; j++)
                    Yh[so + j] = len > 0 ? h[j] : 0.0f;
            if (Yc)
                for (int64_t j = 0; j < H; j++)
                    Yc[so + j] = len > 0 ? c[j] : 0.0f;
        }
    }
}

/* ---- DynamicQuantizeLSTM ------------------------------------------------------------------ */

void ref_dq_quantize_u8(const float *x, int64_t n, uint8_t *q, float *scale, uint8_t *zp) {
    float lo = 0.0f, hi = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    float s = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    float z = 0.0f - lo / s;
    z = z > 255.0f ? 255.0f : z > 0.0f ? z : 0.0f; /* NaN (an infinite range) -> 0 */
    uint8_t zi = (uint8_t)nearbyintf(z);           /* the default rounding: half to even */
    for (int64_t i = 0; i < n; i++) {
        float v = nearbyintf(x[i] / s) + (float)zi;
        q[i] = (uint8_t)(v > 255.0f ? 255.0f : v > 0.0f ? v : 0.0f); /* NaN -> 0, not UB */
    }
    *scale = s;
    *zp = zi;
}

/* c[0] * v2^(n-1) + ... + c[n-1] in fused multiply-adds, highest power
 * first. */
static float dq_poly(float v2, const float *c, int n) {
    float p = fmaf(v2, c[0], c[1]);
    for (int k = 2; k < n; k++)
        p = fmaf(p, v2, c[k]);
    return p;
}

/* ONNX Runtime computes this op's default activations with MLAS's rational
 * approximations (the coefficients Eigen publishes for f32), evaluated with
 * fused multiply-adds on x86-64 CPUs with FMA. The quantization of H(t)
 * at the next step turns a 1-ulp difference into a whole quantum now and
 * then, so the op follows that arithmetic to agree with ONNX Runtime. The
 * approximations are within 2e-7 absolute of the exact functions. */
static float dq_logistic(float x) {
    static const float num[] = {4.37031012579801e-11f, 1.15627324459942e-07f, 6.08574864600143e-05f,
                                8.51377133304701e-03f, 2.48287947061529e-01f};
    static const float den[] = {6.10247389755681e-13f, 5.76102136993427e-09f,
                                6.29106785017040e-06f, 1.70198817374094e-03f,
                                1.16817656904453e-01f, 9.93151921023180e-01f};
    float v = x < -18.0f ? -18.0f : x > 18.0f ? 18.0f : x, v2 = v * v;
    float p = dq_poly(v2, num, 5) * v;
    return p / dq_poly(v2, den, 6) + 0.5f;
}

static float dq_tanh(float x) {
    static const float num[] = {-2.76076847742355e-16f, 2.00018790482477e-13f,
                                -8.60467152213735e-11f, 5.12229709037114e-08f,
                                1.48572235717979e-05f,  6.37261928875436e-04f,
                                4.89352455891786e-03f};
    static const float den[] = {1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
                                4.89352518554385e-03f};
    float v = x < -9.0f ? -9.0f : x > 9.0f ? 9.0f : x, v2 = v * v;
    float p = dq_poly(v2, num, 7) * v;
    return p / dq_poly(v2, den, 4);
}

/* An activation of the op: Sigmoid and Tanh as ONNX Runtime computes them,
 * the others as the ONNX LSTM; dq_act clips first. */
static float dq_act_raw(const ref_rnn_act *a, float v) {
    if (a->kind == REF_RNN_ACT_SIGMOID) return dq_logistic(v);
    if (a->kind == REF_RNN_ACT_TANH) return dq_tanh(v);
    return ref_rnn_act_apply(a, v);
}

static float dq_act(const ref_rnn_params *p, const ref_rnn_act *a, float v) {
    return dq_act_raw(a, clip_to(p, v));
}

size_t ref_dq_lstm_work_bytes(const ref_rnn_params *p) {
    size_t rows = (size_t)(p->seq * p->batch), G4 = (size_t)(4 * p->hidden);
    size_t bh = (size_t)(p->batch * p->hidden);
    /* xg [rows, 4H] f32, h and c [batch, H] f32, col_scale [4H] f32, acc [4H] i32,
     * wc [input + hidden, 4H] i16, xq [rows, input] and hq [batch, H] u8 */
    return (rows * G4 + 2 * bh + G4) * sizeof(float) + G4 * sizeof(int32_t) +
           (size_t)(p->input + p->hidden) * G4 * sizeof(int16_t) + rows * (size_t)p->input + bh +
           64;
}

/* wc [K, cols] = w[d] - its zero point (per direction or per column). */
static void dq_center(const ref_dq_weights *w, int d, int64_t K, int64_t cols, int16_t *wc) {
    const int64_t base = (int64_t)d * K * cols;
    for (int64_t k = 0; k < K; k++)
        for (int64_t col = 0; col < cols; col++) {
            int64_t zat = w->n_zp == 1 ? d : (int64_t)d * cols + col, at = base + k * cols + col;
            int32_t z = w->is_signed ? ((const int8_t *)w->zp)[zat] : ((const uint8_t *)w->zp)[zat];
            int32_t v = w->is_signed ? ((const int8_t *)w->w)[at] : ((const uint8_t *)w->w)[at];
            wc[k * cols + col] = (int16_t)(v - z);
        }
}

/* out[r, col] (+)= (sum_k (a[r, k] - azp) * wc[k, col]) * (ascale * wscale[col]) for
 * the m rows of the uint8 matrix a [m, K]: the exact integer product, then one
 * f32 scale (ascale * wscale rounded to f32 first). */
static void dq_gemm(const uint8_t *a, uint8_t azp, float ascale, int64_t m, int64_t K,
                    const int16_t *wc, const ref_dq_weights *w, int d, int64_t cols,
                    bool accumulate, float *scale, int32_t *acc, float *out) {
    for (int64_t col = 0; col < cols; col++)
        scale[col] = ascale * w->scale[w->n_scale == 1 ? d : (int64_t)d * cols + col];
    for (int64_t r = 0; r < m; r++) {
        for (int64_t col = 0; col < cols; col++)
            acc[col] = 0;
        /* |a - azp| and |wc| are <= 255, and K <= REF_DQ_MAX_K: no int32 overflow */
        for (int64_t k = 0; k < K; k++) {
            int32_t av = (int32_t)a[r * K + k] - azp;
            if (av == 0) continue;
            const int16_t *wr = wc + k * cols;
            for (int64_t col = 0; col < cols; col++)
                acc[col] += av * wr[col];
        }
        float *o = out + r * cols;
        for (int64_t col = 0; col < cols; col++) {
            float v = (float)acc[col] * scale[col];
            o[col] = accumulate ? o[col] + v : v;
        }
    }
}

void ref_dq_lstm_f32(const ref_rnn_params *p, const float *X, const ref_dq_weights *W,
                     const ref_dq_weights *R, const float *B, const float *h0, const float *c0,
                     const float *P, float *Y, float *Yh, float *Yc, void *work) {
    ref_dq_lstm_f32_proj(p, X, W, R, B, h0, c0, P, Y, Yh, Yc, work, NULL, NULL, NULL);
}

void ref_dq_lstm_f32_proj(const ref_rnn_params *p, const float *X, const ref_dq_weights *W,
                          const ref_dq_weights *R, const float *B, const float *h0, const float *c0,
                          const float *P, float *Y, float *Yh, float *Yc, void *work,
                          ref_dq_proj_fn proj, void *proj_ctx, ref_dq_gates_fn gates) {
    const int64_t H = p->hidden, I = p->input, N = p->batch, T = p->seq, G4 = 4 * H;
    const int dirs = ref_rnn_dirs(p->direction);
    float *xg = work, *h = xg + T * N * G4, *c = h + N * H, *scale = c + N * H;
    int32_t *acc = (int32_t *)(scale + G4);
    int16_t *wc = (int16_t *)(acc + G4), *rc = wc + I * G4;
    uint8_t *xq = (uint8_t *)(rc + H * G4), *hq = xq + T * N * I;
    for (int d = 0; d < dirs; d++) {
        const bool rev = p->direction == REF_RNN_REVERSE || d == 1;
        const ref_rnn_act *a = p->act[d];
        const float *Bd = B ? B + (int64_t)d * 2 * G4 : NULL;
        const float *Pd = P ? P + (int64_t)d * 3 * H : NULL;
        float xs;
        uint8_t xzp;
        ref_dq_quantize_u8(X, T * N * I, xq, &xs, &xzp);
        if (proj) {
            proj(proj_ctx, 0, d, xq, xzp, xs, T * N, xg, false);
        } else {
            dq_center(W, d, I, G4, wc);
            dq_center(R, d, H, G4, rc);
            dq_gemm(xq, xzp, xs, T * N, I, wc, W, d, G4, false, scale, acc, xg);
        }
        for (int64_t b = 0; b < N; b++)
            for (int64_t j = 0; j < H; j++) {
                int64_t so = ((int64_t)d * N + b) * H + j;
                h[b * H + j] = h0 ? h0[so] : 0.0f;
                c[b * H + j] = c0 ? c0[so] : 0.0f;
            }
        for (int64_t s = 0; s < T; s++) {
            int64_t t = rev ? T - 1 - s : s;
            float *g = xg + t * N * G4; /* [N, 4H]: the input projection of step t */
            float hs;
            uint8_t hzp;
            ref_dq_quantize_u8(h, N * H, hq, &hs, &hzp);
            if (proj)
                proj(proj_ctx, 1, d, hq, hzp, hs, N, g, true);
            else
                dq_gemm(hq, hzp, hs, N, H, rc, R, d, G4, true, scale, acc, g);
            for (int64_t b = 0; b < N; b++) {
                float *gb = g + b * G4, *hb = h + b * H, *cb = c + b * H;
                if (Bd)
                    for (int64_t r = 0; r < G4; r++)
                        gb[r] += Bd[r] + Bd[G4 + r];
                const float *gi = gb, *go = gb + H, *gf = gb + 2 * H, *gc = gb + 3 * H;
                if (gates) gates(p, H, gb, Pd, cb, hb);
                for (int64_t j = 0; !gates && j < H; j++) {
                    /* one rounding per product and per sum, in ORT's order: each in
                     * its own statement, so that no compiler contracts a*b+c */
                    float pi = Pd ? Pd[j] * cb[j] : 0.0f, pf = Pd ? Pd[2 * H + j] * cb[j] : 0.0f;
                    float i = dq_act(p, &a[0], gi[j] + pi);
                    float f = p->input_forget ? 1.0f - i : dq_act(p, &a[0], gf[j] + pf);
                    float cc = dq_act(p, &a[1], gc[j]);
                    float keep = cb[j] * f, add = i * cc;
                    float cn = keep + add;
                    float po = Pd ? Pd[H + j] * cn : 0.0f;
                    float o = dq_act(p, &a[0], go[j] + po);
                    cb[j] = cn;
                    hb[j] = o * dq_act_raw(&a[2], cn); /* Ct unclipped */
                }
                if (Y) memcpy(Y + ((t * dirs + d) * N + b) * H, hb, (size_t)H * sizeof(float));
            }
        }
        for (int64_t i = 0; i < N * H; i++) {
            if (Yh) Yh[(int64_t)d * N * H + i] = T > 0 ? h[i] : 0.0f;
            if (Yc) Yc[(int64_t)d * N * H + i] = T > 0 ? c[i] : 0.0f;
        }
    }
}
