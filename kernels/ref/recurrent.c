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
