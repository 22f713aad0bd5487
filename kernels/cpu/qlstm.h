/*
 * qlstm.h — com.microsoft DynamicQuantizeLSTM on the u8 x s8 rows GEMM
 * (cpu_qrows_*, qconv.h): ref_dq_lstm_f32's steps (quantization, scalar
 * gates) with its two integer projections computed by the GEMM, X of all
 * steps at once and H(t-1) at each step. Bit-identical to ref_dq_lstm_f32:
 * the int32 sums are exact (they wrap modulo 2^32 and the reference's fit
 * int32; u8 weights become s8 w - 128 and the zero points are folded back
 * with per-row and per-column sums), then the same f32 scale and add.
 */
#ifndef MOPT_KERNELS_CPU_QLSTM_H
#define MOPT_KERNELS_CPU_QLSTM_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/qconv.h"
#include "kernels/ref/ref_recurrent.h"

/* Bytes (64-byte aligned) of the packed W [dirs, input, 4*hidden] and
 * R [dirs, hidden, 4*hidden], and their packing (zero points and scales are
 * read at run time, so only w matters). */
size_t cpu_dq_lstm_pack_bytes(int64_t dirs, int64_t input, int64_t hidden);
void cpu_dq_lstm_pack(int64_t dirs, int64_t input, int64_t hidden, const ref_dq_weights *W,
                      const ref_dq_weights *R, void *pack);

/* Bytes of work memory cpu_dq_lstm_f32 needs (64-byte aligned). */
size_t cpu_dq_lstm_work_bytes(const ref_rnn_params *p);

/* ref_dq_lstm_f32 (same arguments and results, bit for bit) with W and R
 * read from pack (cpu_dq_lstm_pack of the same W and R), the products on
 * rows (cpu_qrows_u8s8_portable or _vnni) and, when not NULL and every
 * activation is the default (Sigmoid, Tanh, Tanh), the gates by gates. */
void cpu_dq_lstm_f32(const ref_rnn_params *p, const float *X, const ref_dq_weights *W,
                     const ref_dq_weights *R, const void *pack, cpu_qrows_fn rows,
                     ref_dq_gates_fn gates, const float *B, const float *h0, const float *c0,
                     const float *P, float *Y, float *Yh, float *Yc, void *work);

/* The gates with AVX-512 (qlstm-avx512.c; call only when
 * cpu_kernels_for("avx512")), a ref_dq_gates_fn bit-identical to the
 * reference's scalar gates. */
#if defined(__x86_64__)
void cpu_dq_lstm_gates_avx512(const ref_rnn_params *p, int64_t H, const float *g, const float *P,
                              float *c, float *h);
#endif

#endif
