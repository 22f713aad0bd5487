/*
 * unary-impl.h — body of cpu_unary_f32_<tier> (unary-<tier>.c includes a
 * simd-<tier>.h, then this): activations and math on contiguous f32, with
 * the polynomial approximations of vmath.h. NaN propagates through every op
 * as in the reference kernels (Relu(NaN) = NaN, Clip keeps NaN).
 */
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/vmath.h"

#define UN_LOOP(EXPR)                                                                              \
    do {                                                                                           \
        int64_t i = 0;                                                                             \
        for (; i + VW <= n; i += VW) {                                                             \
            const vf v = v_load(x + i);                                                            \
            v_store(y + i, EXPR);                                                                  \
        }                                                                                          \
        if (i < n) {                                                                               \
            const vf v = v_load_n(x + i, n - i);                                                   \
            v_store_n(y + i, EXPR, n - i);                                                         \
        }                                                                                          \
    } while (0)

/* clamp to [lo, hi] keeping NaN: v_max(lo, v) is v when v is NaN, and so is
 * v_min(hi, .) */
static inline vf un_clamp(vf v, vf lo, vf hi) { return v_min(hi, v_max(lo, v)); }

void CPU_FN(cpu_unary_f32)(cpu_unop op, const float *x, float *y, int64_t n,
                           const cpu_unary_params *p) {
    static const cpu_unary_params none = {0.0f, 0.0f};
    if (!p) p = &none;
    const vf zero = v_zero(), one = v_set1(1.0f);
    const vf al = v_set1(p->alpha), be = v_set1(p->beta);
    switch (op) {
    case CPU_UN_RELU: UN_LOOP(v_max(zero, v)); break;
    case CPU_UN_LEAKY_RELU: UN_LOOP(v_sel(v_lt(v, zero), v_mul(al, v), v)); break;
    case CPU_UN_SIGMOID: UN_LOOP(v_sigmoid(v)); break;
    case CPU_UN_SWISH: UN_LOOP(v_mul(v, v_sigmoid(v))); break;
    case CPU_UN_TANH: UN_LOOP(v_tanh(v)); break;
    case CPU_UN_ERF: UN_LOOP(v_erf(v)); break;
    case CPU_UN_GELU: UN_LOOP(v_gelu_erf(v)); break;
    case CPU_UN_GELU_TANH: UN_LOOP(v_gelu_tanh(v)); break;
    case CPU_UN_EXP: UN_LOOP(v_exp(v)); break;
    case CPU_UN_HARD_SWISH: {
        const vf sixth = v_set1(1.0f / 6.0f), half = v_set1(0.5f);
        UN_LOOP(v_mul(v, un_clamp(v_fmadd(v, sixth, half), zero, one)));
        break;
    }
    case CPU_UN_HARD_SIGMOID: UN_LOOP(un_clamp(v_fmadd(al, v, be), zero, one)); break;
    case CPU_UN_CLIP: UN_LOOP(un_clamp(v, al, be)); break;
    case CPU_UN_SQRT: UN_LOOP(v_sqrt(v)); break;
    case CPU_UN_NEG: UN_LOOP(v_neg(v)); break;
    case CPU_UN_ABS: UN_LOOP(v_abs(v)); break;
    case CPU_UN_RECIPROCAL: UN_LOOP(v_div(one, v)); break;
    case CPU_UN_COUNT: break;
    }
}
