/*
 * recurrent.h — private to the "recurrent" op family (lib/ops/recurrent.c)
 * and its fast path (lib/ops/cpu/recurrent_cpu.c): the parsed params of an
 * LSTM, GRU or RNN node, and the run-time setup both runs share. Never read
 * attributes here: parse did.
 */
#ifndef MOPT_OPS_RECURRENT_H
#define MOPT_OPS_RECURRENT_H

#include "kernels/cpu/qlstm.h"
#include "kernels/ref/ref_recurrent.h"
#include "ops/ops.h"

/* Input slots. */
enum { RNN_IN_X, RNN_IN_W, RNN_IN_R, RNN_IN_B, RNN_IN_SEQ_LENS, RNN_IN_H0, RNN_IN_C0, RNN_IN_P };

typedef struct ops_rnn_params {
    ref_rnn_params k;    /* attributes; sizes are 0 (ops_rnn_setup fills a copy) */
    int64_t hidden_size; /* the attribute, 0 when absent (then from R's shape) */
} ops_rnn_params;

/* The kernel params of a run: the node's params with the concrete sizes of
 * in[], after checking that sequence_lens (when given) lies in [0, seq].
 * Fails (INVALID_ARGUMENT) naming the bad length. */
mopt_status ops_rnn_setup(const op_ctx *ctx, const op_tensor *in, int n_in, void *geom);

/* Input k when given, else NULL. */
const void *ops_rnn_input(const op_tensor *in, int n_in, int k);

/* The "cpu" fast path (recurrent_cpu.c), NULL-terminated. */
extern const op_impl *const ops_cpu_recurrent_impls[];

/* DynamicQuantizeLSTM's DQ_IN_* inputs (8..11): W's and R's scale and zero point. */
enum { DQ_IN_W_SCALE = 8, DQ_IN_W_ZP, DQ_IN_R_SCALE, DQ_IN_R_ZP };

/* DynamicQuantizeLSTM's run (checks, work memory): ref_dq_lstm_f32 when
 * rows is NULL, else cpu_dq_lstm_f32 on rows and gates (NULL: scalar)
 * with W and R from pack (cpu_dq_lstm_pack; NULL: packed here for this run). */
mopt_status ops_dq_lstm_run_with(const op_ctx *ctx, const op_tensor *in, int n_in, op_tensor *out,
                                 int n_out, const void *pack, cpu_qrows_fn rows,
                                 ref_dq_gates_fn gates);

/* DynamicQuantizeLSTM's "cpu" fast path (dq_lstm_cpu.c), NULL-terminated. */
extern const op_impl *const ops_cpu_dq_lstm_impls[];

#endif
