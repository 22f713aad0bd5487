/*
 * test_qlstm.c — cpu_dq_lstm_f32 (kernels/cpu/qlstm.h: DynamicQuantizeLSTM
 * on the u8 x s8 rows GEMM) against ref_dq_lstm_f32, bit for bit: random
 * sizes (across the 4-byte K groups and the 16/64-column blocks), every
 * direction, int8 and uint8 weights, per-direction and per-column scales and
 * zero points, optional bias, states and peepholes, clip and input_forget,
 * extreme weights, now and then a non-default activation; the portable
 * GEMM with the scalar gates always, with the AVX-512 gates and the VNNI
 * GEMM when cpu_get() reports them (MOPT_ISA caps them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../test_main.h"

#include "core/alloc.h"
#include "core/cpu.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/qlstm.h"

#define TEST_RNG_SEED 0x2545F4914F6CDD1Dull
#include "test_rng.h"
static float frand(float lo, float hi) {
    return lo + (hi - lo) * (float)(rnd() % 65536) / 65535.0f;
}

static float *floats(int64_t n, float lo, float hi) {
    float *v = mopt_malloc((size_t)n * sizeof(float) + 4);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = frand(lo, hi);
    return v;
}

static uint8_t *bytes(int64_t n, bool extreme) {
    uint8_t *v = mopt_malloc((size_t)n + 1);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = extreme ? (rnd() & 1 ? 255 : 0) : (uint8_t)rnd();
    return v;
}

typedef struct qfn {
    const char *name;
    cpu_qrows_fn rows;
    ref_dq_gates_fn gates;
} qfn;

static int n_fns(qfn *f) {
    int n = 0;
    f[n++] = (qfn){"portable", cpu_qrows_u8s8_portable, NULL};
#if defined(__x86_64__)
    if (cpu_kernels_for("avx512"))
        f[n++] = (qfn){"portable+avx512 gates", cpu_qrows_u8s8_portable, cpu_dq_lstm_gates_avx512};
    if (cpu_kernels_for("avx512") && cpu_get()->avx512_vnni)
        f[n++] = (qfn){"vnni+avx512 gates", cpu_qrows_u8s8_vnni, cpu_dq_lstm_gates_avx512};
#endif
    return n;
}

static void one_case(int it, int *runs) {
    ref_rnn_params p = {.cell = REF_RNN_CELL_LSTM};
    p.direction = (ref_rnn_direction)pick(0, 2);
    p.seq = pick(1, 9), p.batch = pick(1, 5), p.input = pick(1, 70), p.hidden = pick(1, 40);
    p.has_clip = pick(0, 3) == 0, p.clip = frand(0.5f, 4.0f);
    p.input_forget = pick(0, 3) == 0;
    for (int d = 0; d < 2; d++) {
        p.act[d][0] = (ref_rnn_act){.kind = REF_RNN_ACT_SIGMOID};
        p.act[d][1] = (ref_rnn_act){.kind = REF_RNN_ACT_TANH};
        p.act[d][2] = (ref_rnn_act){.kind = REF_RNN_ACT_TANH};
    }
    /* now and then a non-default activation: the scalar gates must run */
    if (it % 8 == 7) p.act[pick(0, 1)][pick(0, 2)] = (ref_rnn_act){.kind = REF_RNN_ACT_RELU};
    const int64_t D = ref_rnn_dirs(p.direction), H = p.hidden, G4 = 4 * H, I = p.input;
    const int64_t T = p.seq, N = p.batch;
    const bool extreme = it % 10 == 9;
    ref_dq_weights wq[2];
    void *mem[8];
    for (int i = 0; i < 2; i++) {
        const int64_t K = i == 0 ? I : H;
        const bool per_col_s = pick(0, 1), per_col_z = pick(0, 1);
        const int64_t ns = per_col_s ? G4 : 1, nz = per_col_z ? G4 : 1;
        mem[4 * i] = bytes(D * K * G4, extreme);
        mem[4 * i + 1] = floats(D * ns, 0.001f, 0.05f);
        mem[4 * i + 2] = bytes(D * nz, false);
        wq[i] = (ref_dq_weights){.w = mem[4 * i],
                                 .is_signed = pick(0, 1),
                                 .scale = mem[4 * i + 1],
                                 .n_scale = ns,
                                 .zp = mem[4 * i + 2],
                                 .n_zp = nz};
    }
    float *X = floats(T * N * I, -3.0f, pick(0, 4) == 0 ? 0.0f : 3.0f);
    float *B = pick(0, 1) ? floats(D * 2 * G4, -1.0f, 1.0f) : NULL;
    float *h0 = pick(0, 1) ? floats(D * N * H, -1.0f, 1.0f) : NULL;
    float *c0 = pick(0, 1) ? floats(D * N * H, -1.0f, 1.0f) : NULL;
    float *P = pick(0, 2) == 0 ? floats(D * 3 * H, -0.5f, 0.5f) : NULL;
    const size_t ny = (size_t)(T * D * N * H), ns = (size_t)(D * N * H);
    float *want = mopt_malloc((ny + 2 * ns) * sizeof(float));
    float *got = mopt_malloc((ny + 2 * ns) * sizeof(float));
    void *rwork = mopt_aligned_alloc(ref_dq_lstm_work_bytes(&p));
    void *work = mopt_aligned_alloc(cpu_dq_lstm_work_bytes(&p));
    void *pack = mopt_aligned_alloc(cpu_dq_lstm_pack_bytes(D, I, H));
    assert_true(want && got && rwork && work && pack);
    ref_dq_lstm_f32(&p, X, &wq[0], &wq[1], B, h0, c0, P, want, want + ny, want + ny + ns, rwork);
    cpu_dq_lstm_pack(D, I, H, &wq[0], &wq[1], pack);
    qfn fns[3];
    for (int f = 0, nf = n_fns(fns); f < nf; f++) {
        memset(got, 0xA5, (ny + 2 * ns) * sizeof(float));
        cpu_dq_lstm_f32(&p, X, &wq[0], &wq[1], pack, fns[f].rows, fns[f].gates, B, h0, c0, P, got,
                        got + ny, got + ny + ns, work);
        if (memcmp(want, got, (ny + 2 * ns) * sizeof(float)) != 0)
            fail_msg("case %d (%s): T %lld N %lld I %lld H %lld dir %d differs from the reference",
                     it, fns[f].name, (long long)T, (long long)N, (long long)I, (long long)H,
                     (int)p.direction);
        (*runs)++;
    }
    for (int i = 0; i < 8; i++)
        if (i % 4 < 3) mopt_free(mem[i]);
    mopt_free(X), mopt_free(B), mopt_free(h0), mopt_free(c0), mopt_free(P);
    mopt_free(want), mopt_free(got);
    mopt_aligned_free(rwork), mopt_aligned_free(work), mopt_aligned_free(pack);
}

MOPT_TEST(test_random_bitwise) {
    int runs = 0;
    for (int it = 0; it < 300; it++)
        one_case(it, &runs);
    assert_true(runs >= 300);
}

/* The rows GEMM alone on the sizes of a real model (I = H = 512, 2048
 * columns, 40 rows and 1 row) against a direct sum. */
MOPT_TEST(test_rows_large) {
    const int64_t K = 512, n = 2048, m = 40;
    uint8_t *a = bytes(m * K, false), *w = bytes(K * n, false);
    int8_t *wp = mopt_aligned_alloc(cpu_qrows_pack_bytes(K, n));
    int32_t *wsum = mopt_malloc((size_t)n * 4), *y = mopt_malloc((size_t)(m * n) * 4);
    assert_true(wp && wsum && y);
    cpu_qrows_pack(w, true, K, n, n, wp, wsum);
    qfn fns[3];
    for (int f = 0, nf = n_fns(fns); f < nf; f++)
        for (int64_t rows = 1; rows <= m; rows += m - 1) {
            memset(y, 0, (size_t)(m * n) * 4);
            fns[f].rows(a, K, rows, K, wp, n, y, n);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < n; c += 7) {
                    int32_t s = 0;
                    for (int64_t k = 0; k < K; k++)
                        s += (int32_t)a[r * K + k] * (int8_t)w[k * n + c];
                    assert_int_equal(y[r * n + c], s);
                }
        }
    mopt_free(a), mopt_free(w), mopt_aligned_free(wp), mopt_free(wsum), mopt_free(y);
}

MOPT_TEST_MAIN(cmocka_unit_test(test_random_bitwise), cmocka_unit_test(test_rows_large))
