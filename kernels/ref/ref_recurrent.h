/*
 * ref_recurrent.h — reference kernels of the "recurrent" op family (ONNX
 * LSTM, GRU, RNN): one obvious loop per batch row and time step, f32 with
 * double dot products. The oracle for the fast path (lib/ops/cpu/
 * recurrent_cpu.c). Kernels see only pointers, sizes and this parameter
 * struct, never the IR.
 */
#ifndef MOPT_KERNELS_REF_RECURRENT_H
#define MOPT_KERNELS_REF_RECURRENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The activation functions ONNX allows in recurrent ops. */
typedef enum ref_rnn_act_kind {
    REF_RNN_ACT_SIGMOID = 0,
    REF_RNN_ACT_TANH = 1,
    REF_RNN_ACT_RELU = 2,
    REF_RNN_ACT_AFFINE = 3,           /* alpha x + beta */
    REF_RNN_ACT_LEAKY_RELU = 4,       /* x >= 0 ? x : alpha x */
    REF_RNN_ACT_THRESHOLDED_RELU = 5, /* x > alpha ? x : 0 */
    REF_RNN_ACT_SCALED_TANH = 6,      /* alpha tanh(beta x) */
    REF_RNN_ACT_HARD_SIGMOID = 7,     /* clamp(alpha x + beta, 0, 1) */
    REF_RNN_ACT_ELU = 8,              /* x >= 0 ? x : alpha (e^x - 1) */
    REF_RNN_ACT_SOFTSIGN = 9,         /* x / (1 + |x|) */
    REF_RNN_ACT_SOFTPLUS = 10,        /* log(1 + e^x) */
} ref_rnn_act_kind;

typedef struct ref_rnn_act {
    ref_rnn_act_kind kind;
    float alpha, beta;
} ref_rnn_act;

/* The cell: number of gates G and their order in W, R and B. */
typedef enum ref_rnn_cell {
    REF_RNN_CELL_RNN = 0,  /* G 1: Ht = f(X Wi^T + H Ri^T + Wbi + Rbi) */
    REF_RNN_CELL_LSTM = 1, /* G 4, gates i o f c; P holds i o f */
    REF_RNN_CELL_GRU = 2,  /* G 3, gates z r h */
} ref_rnn_cell;

/* Which directions run: forward only, reverse only, or both (forward is
 * direction 0, reverse direction 1 of the outputs). */
typedef enum ref_rnn_direction {
    REF_RNN_FORWARD = 0,
    REF_RNN_REVERSE = 1,
    REF_RNN_BIDIRECTIONAL = 2,
} ref_rnn_direction;

/* act[d][k] of direction d: LSTM f g h, GRU f g, RNN f. */
#define REF_RNN_MAX_ACTS 3

typedef struct ref_rnn_params {
    ref_rnn_cell cell;
    ref_rnn_direction direction;
    int64_t seq, batch, input, hidden;
    bool layout_batch_first; /* layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden],
                                initial/final states [batch, dirs, hidden] */
    bool has_clip;
    /* gate pre-activations clamped to [-clip, clip]; LSTM's Ct is not clipped
     * before h (as ONNX Runtime) */
    float clip;
    bool input_forget;        /* LSTM: f = 1 - i */
    bool linear_before_reset; /* GRU: r (.) (H Rh^T + Rbh) instead of (r (.) H) Rh^T */
    ref_rnn_act act[2][REF_RNN_MAX_ACTS];
} ref_rnn_params;

/* Gates of a cell (1, 4 or 3) and directions (1 or 2). */
int ref_rnn_gates(ref_rnn_cell cell);
int ref_rnn_dirs(ref_rnn_direction d);

/* One activation applied to x. */
float ref_rnn_act_apply(const ref_rnn_act *a, float x);

/* Floats of work memory ref_rnn_f32 needs. */
size_t ref_rnn_work_floats(const ref_rnn_params *p);

/* Runs the recurrent op. X [seq, batch, input] (layout 0), W [dirs, G*hidden,
 * input], R [dirs, G*hidden, hidden]; optional (NULL): B [dirs, 2*G*hidden],
 * seq_lens [batch] (each in [0, seq]; NULL = seq), h0, c0 (initial states,
 * NULL = 0), P [dirs, 3*hidden] (LSTM peepholes). Outputs (each may be NULL):
 * Y, Yh, Yc (LSTM). Steps past a row's length give 0 in Y; a row of length 0
 * gives 0 final states. The reverse direction reads each row's steps from
 * its length - 1 down to 0. work: ref_rnn_work_floats(p) floats. */
void ref_rnn_f32(const ref_rnn_params *p, const float *X, const float *W, const float *R,
                 const float *B, const int32_t *seq_lens, const float *h0, const float *c0,
                 const float *P, float *Y, float *Yh, float *Yc, float *work);

/* ---- com.microsoft DynamicQuantizeLSTM ------------------------------------------------ */

/* 8-bit weights of one matrix, all directions: w [dirs, K, 4*hidden]
 * (already transposed: K = input or hidden size), int8 (is_signed) or
 * uint8, with scale and zero point per direction (n == 1) or per column
 * (n == 4*hidden) of each direction. */
typedef struct ref_dq_weights {
    const void *w;
    bool is_signed;
    const float *scale;
    int64_t n_scale;
    const void *zp;
    int64_t n_zp;
} ref_dq_weights;

/* Dynamic uint8 quantization of n floats, as ONNX Runtime's dynamic
 * quantized kernels do: the range [min(x, 0), max(x, 0)] mapped onto
 * 0..255, scale = range / 255 (1 when the range is empty), zero point the
 * clamped -min/scale rounded half to even, q = clamp(rint(x / scale) + zp). */
void ref_dq_quantize_u8(const float *x, int64_t n, uint8_t *q, float *scale, uint8_t *zp);

/* The largest input or hidden size ref_dq_lstm_f32 takes: its integer sums
 * of up to this many products of 9-bit values fit int32. */
#define REF_DQ_MAX_K 33000

/* Bytes of work memory ref_dq_lstm_f32 needs. */
size_t ref_dq_lstm_work_bytes(const ref_rnn_params *p);

/* DynamicQuantizeLSTM (layout 0, no sequence_lens: every row runs all
 * steps). Per direction, X (all steps and rows at once) and, at every step,
 * H(t-1) (all rows at once) are quantized with ref_dq_quantize_u8; each
 * projection is the exact integer product sum((q - zp) * (w - w_zp))
 * times a_scale * w_scale (one f32 product), the recurrent one added to the
 * input one, then the bias Wb + Rb. The gates are then as ref_rnn_f32's
 * LSTM (clip, input_forget, peepholes, activations). B, h0, c0, P, Y, Yh, Yc
 * as ref_rnn_f32. work: ref_dq_lstm_work_bytes(p) bytes. */
void ref_dq_lstm_f32(const ref_rnn_params *p, const float *X, const ref_dq_weights *W,
                     const ref_dq_weights *R, const float *B, const float *h0, const float *c0,
                     const float *P, float *Y, float *Yh, float *Yc, void *work);

/* One projection of ref_dq_lstm_f32, for a faster integer GEMM: for the m
 * rows of a [m, K] (u8, K = input size for which == 0 (W), hidden size for
 * which == 1 (R)), out[r, col] (+= when accumulate) the exact integer sum
 * sum_k (a[r, k] - azp) * (w[d][k, col] - its zero point), converted to f32
 * and times (ascale * w_scale[col]) rounded to f32, for col < 4*hidden. */
typedef void (*ref_dq_proj_fn)(void *ctx, int which, int d, const uint8_t *a, uint8_t azp,
                               float ascale, int64_t m, float *out, bool accumulate);

/* The gates of one row at one step, for default activations (Sigmoid, Tanh,
 * Tanh) only: g [4H] the pre-activations (i o f c, bias added), P [3H] or
 * NULL, c [H] and h [H] updated in place, exactly as ref_dq_lstm_f32 does
 * (ONNX Runtime's rational Sigmoid and Tanh, p->clip, p->input_forget). */
typedef void (*ref_dq_gates_fn)(const ref_rnn_params *p, int64_t H, const float *g, const float *P,
                                float *c, float *h);

/* ref_dq_lstm_f32 with its projections computed by proj(proj_ctx, ...)
 * and, when gates is not NULL (then every activation must be the
 * default), its gates by gates (NULL: the reference's). Bit-identical
 * when they compute the same. */
void ref_dq_lstm_f32_proj(const ref_rnn_params *p, const float *X, const ref_dq_weights *W,
                          const ref_dq_weights *R, const float *B, const float *h0, const float *c0,
                          const float *P, float *Y, float *Yh, float *Yc, void *work,
                          ref_dq_proj_fn proj, void *proj_ctx, ref_dq_gates_fn gates);

#endif
