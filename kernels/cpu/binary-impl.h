/*
 * binary-impl.h — body of cpu_binary_f32_<tier> (binary-<tier>.c includes a
 * simd-<tier>.h, then this): y[i] = a[i*sa] op b[i*sb] with sa, sb in {0, 1}
 * (same shape, scalar on either side). The broadcasting driver that walks
 * outer axes lives in lib/ops/elementwise_cpu.c. Also cpu_binary_rows_f32:
 * rows of contiguous elements against one scalar per row (the per-channel
 * broadcast of [N,C,H,W] op [N|1,C,1,1]), the op chosen once per call.
 * And cpu_affine_f32: y = x * a + b per channel, channels along the rows
 * (channels-last data) or one channel per row (plain [N, C, spatial]).
 */
#include "kernels/cpu/cpu_kernels.h"

/* numpy.maximum/minimum: a NaN in either operand gives NaN. v_max(a, b)
 * returns b when either is NaN; a NaN a is then re-selected. */
static inline vf bin_max(vf a, vf b) { return v_sel(v_isnan(a), a, v_max(a, b)); }
static inline vf bin_min(vf a, vf b) { return v_sel(v_isnan(a), a, v_min(a, b)); }

/* One loop over n elements: LOADA/LOADB give the operands at offset i (a
 * vector load, or the broadcast scalar), LOADA_N/LOADB_N those of the tail. */
#define BIN_LOOP(LOADA, LOADB, LOADA_N, LOADB_N, EXPR)                                             \
    do {                                                                                           \
        int64_t i = 0;                                                                             \
        for (; i + 2 * VW <= n; i += 2 * VW) {                                                     \
            vf va = LOADA(i), vb = LOADB(i);                                                       \
            vf va2 = LOADA(i + VW), vb2 = LOADB(i + VW);                                           \
            v_store(y + i, EXPR(va, vb));                                                          \
            v_store(y + i + VW, EXPR(va2, vb2));                                                   \
        }                                                                                          \
        for (; i + VW <= n; i += VW) {                                                             \
            vf va = LOADA(i), vb = LOADB(i);                                                       \
            v_store(y + i, EXPR(va, vb));                                                          \
        }                                                                                          \
        if (i < n) {                                                                               \
            vf va = LOADA_N(i, n - i), vb = LOADB_N(i, n - i);                                     \
            v_store_n(y + i, EXPR(va, vb), n - i);                                                 \
        }                                                                                          \
    } while (0)

/* PATTERNS(EXPR) with the vector expression of op: one switch for every
 * entry point, so an op added to cpu_binop is added to all of them. */
#define BIN_SWITCH(op, PATTERNS)                                                                   \
    do {                                                                                           \
        switch (op) {                                                                              \
        case CPU_BIN_ADD: PATTERNS(v_add); break;                                                  \
        case CPU_BIN_SUB: PATTERNS(v_sub); break;                                                  \
        case CPU_BIN_MUL: PATTERNS(v_mul); break;                                                  \
        case CPU_BIN_DIV: PATTERNS(v_div); break;                                                  \
        case CPU_BIN_MAX: PATTERNS(bin_max); break;                                                \
        case CPU_BIN_MIN: PATTERNS(bin_min); break;                                                \
        case CPU_BIN_COUNT: break;                                                                 \
        }                                                                                          \
    } while (0)

#define LD_A(i) v_load(a + (i))
#define LD_B(i) v_load(b + (i))
#define LD_A_N(i, k) v_load_n(a + (i), (k))
#define LD_B_N(i, k) v_load_n(b + (i), (k))
#define SC_A(i) sa_v
#define SC_B(i) sb_v
#define SC_A_N(i, k) sa_v
#define SC_B_N(i, k) sb_v

#define BIN_PATTERNS(EXPR)                                                                         \
    do {                                                                                           \
        if (sa && sb)                                                                              \
            BIN_LOOP(LD_A, LD_B, LD_A_N, LD_B_N, EXPR);                                            \
        else if (sa)                                                                               \
            BIN_LOOP(LD_A, SC_B, LD_A_N, SC_B_N, EXPR);                                            \
        else if (sb)                                                                               \
            BIN_LOOP(SC_A, LD_B, SC_A_N, LD_B_N, EXPR);                                            \
        else                                                                                       \
            BIN_LOOP(SC_A, SC_B, SC_A_N, SC_B_N, EXPR);                                            \
    } while (0)

void CPU_FN(cpu_binary_f32)(cpu_binop op, const float *a, int64_t sa, const float *b, int64_t sb,
                            float *y, int64_t n) {
    if (n <= 0) return;
    const vf sa_v = v_set1(a[0]), sb_v = v_set1(b[0]);
    BIN_SWITCH(op, BIN_PATTERNS);
}

/* One row of n: y[i] = a[i] op s (row_a) or s op b[i]. */
#define ROW_PATTERNS(EXPR)                                                                         \
    do {                                                                                           \
        for (int64_t r = 0; r < rows; r++, a += len, y += len) {                                   \
            const vf sv = v_set1(b[r]);                                                            \
            if (row_a)                                                                             \
                BIN_LOOP(LD_A, SC_S, LD_A_N, SC_S_N, EXPR);                                        \
            else                                                                                   \
                BIN_LOOP(SC_S, LD_A, SC_S_N, LD_A_N, EXPR);                                        \
        }                                                                                          \
    } while (0)
#define SC_S(i) sv
#define SC_S_N(i, k) sv

void CPU_FN(cpu_binary_rows_f32)(cpu_binop op, const float *x, const float *s, float *y,
                                 int64_t rows, int64_t len, bool row_first) {
    if (rows <= 0 || len <= 0) return;
    /* a: the rows, b: the per-row scalars; row_a: the rows are the left operand */
    const float *a = x, *b = s;
    const bool row_a = row_first;
    const int64_t n = len;
    BIN_SWITCH(op, ROW_PATTERNS);
}

/* x * a + b rounded twice (no fma), as the reference kernels compute it. */
void CPU_FN(cpu_affine_f32)(const float *x, const float *a, const float *b, float *y, int64_t rows,
                            int64_t len, bool per_row) {
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * len;
        float *yr = y + r * len;
        int64_t i = 0;
        if (per_row) {
            const vf va = v_set1(a[r]), vb = v_set1(b ? b[r] : 0.0f);
            for (; i + VW <= len; i += VW)
                v_store(yr + i, v_add(v_mul(v_load(xr + i), va), vb));
            if (i < len)
                v_store_n(yr + i, v_add(v_mul(v_load_n(xr + i, len - i), va), vb), len - i);
        } else if (b) {
            for (; i + VW <= len; i += VW)
                v_store(yr + i, v_add(v_mul(v_load(xr + i), v_load(a + i)), v_load(b + i)));
            if (i < len)
                v_store_n(yr + i,
                          v_add(v_mul(v_load_n(xr + i, len - i), v_load_n(a + i, len - i)),
                                v_load_n(b + i, len - i)),
                          len - i);
        } else {
            for (; i + VW <= len; i += VW)
                v_store(yr + i, v_mul(v_load(xr + i), v_load(a + i)));
            if (i < len)
                v_store_n(yr + i, v_mul(v_load_n(xr + i, len - i), v_load_n(a + i, len - i)),
                          len - i);
        }
    }
}
