/*
 * deconv-impl.h — body of cpu_deconv_f32_<tier> (deconv-<tier>.c includes a
 * simd-<tier>.h, then this): the ConvTranspose whose kernel equals its
 * stride (2-D, no pads, dilation 1, group 1; the upsampling head of
 * segmentation models such as PP-OCR det). Each input pixel writes its own
 * kh x kw block of the output, so the operation is a small matrix product per
 * pixel (x[:, h, w] against W [C, M kh kw]) whose results are laid out as a
 * pixel shuffle. Vectorized over VW pixels of an input row: for a block of
 * output channels, the ob * kh * kw accumulators (at most DC_J) take one FMA
 * per input channel each with a broadcast weight; the kw taps of a row are
 * then interleaved into the output row (lane permutes for kw = 2). Bias and
 * the activation (none, Relu, Sigmoid) are applied before the store.
 */
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/vmath.h"

#define DC_J 24 /* accumulators per pass: output channels x kernel taps */

static inline vf dc_act(vf v, int act) {
    if (act == CPU_DECONV_RELU) return v_max(v, v_zero());
    if (act == CPU_DECONV_SIGMOID) return v_sigmoid(v);
    return v;
}

/* y[p * kw + t] = tap t of pixel p, for n <= VW pixels (t[k] holds tap k of
 * the VW pixels). */
static inline void dc_emit(float *y, const vf *t, int64_t kw, int64_t n) {
#if VW == 16
    if (kw == 2 && n == VW) {
        const __m512i lo =
            _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
        const __m512i hi =
            _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        v_store(y, _mm512_permutex2var_ps(t[0], lo, t[1]));
        v_store(y + VW, _mm512_permutex2var_ps(t[0], hi, t[1]));
        return;
    }
#elif VW == 8
    if (kw == 2 && n == VW) {
        const __m256 lo = _mm256_unpacklo_ps(t[0], t[1]), hi = _mm256_unpackhi_ps(t[0], t[1]);
        v_store(y, _mm256_permute2f128_ps(lo, hi, 0x20));
        v_store(y + VW, _mm256_permute2f128_ps(lo, hi, 0x31));
        return;
    }
#endif
    if (kw == 1) {
        v_store_n(y, t[0], n);
        return;
    }
    float tmp[CPU_DECONV_MAX_TAPS][VW];
    for (int64_t k = 0; k < kw; k++)
        v_store(tmp[k], t[k]);
    for (int64_t p = 0; p < n; p++)
        for (int64_t k = 0; k < kw; k++)
            y[p * kw + k] = tmp[k][p];
}

/* The J accumulators of n pixels at x (channel planes `plane` floats apart)
 * for the weights w (row ic of J values at w + ic * ldw), starting from b. */
static inline __attribute__((always_inline)) void dc_block(const float *x, int64_t plane, int64_t C,
                                                           const float *w, int64_t ldw,
                                                           const float *b, int J, int64_t n,
                                                           vf *acc) {
    for (int j = 0; j < J; j++)
        acc[j] = v_set1(b[j]);
    if (n == VW) {
        for (int64_t ic = 0; ic < C; ic++) {
            const vf xv = v_load(x + ic * plane);
            const float *wr = w + ic * ldw;
            for (int j = 0; j < J; j++)
                acc[j] = v_fmadd(xv, v_set1(wr[j]), acc[j]);
        }
    } else {
        for (int64_t ic = 0; ic < C; ic++) {
            const vf xv = v_load_n(x + ic * plane, n);
            const float *wr = w + ic * ldw;
            for (int j = 0; j < J; j++)
                acc[j] = v_fmadd(xv, v_set1(wr[j]), acc[j]);
        }
    }
}

/* Output channels [oc, oc + ob) (J = ob * kh * kw taps) for input row h,
 * pixels [w0, w0 + n). */
static inline __attribute__((always_inline)) void dc_pass(const cpu_deconv_plan *p, const float *x,
                                                          float *y, int64_t h, int64_t w0,
                                                          int64_t n, int64_t oc, const float *bj,
                                                          int J) {
    const int64_t kk = p->kh * p->kw, OW = p->W * p->kw, OH = p->H * p->kh;
    vf acc[DC_J];
    dc_block(x + h * p->W + w0, p->H * p->W, p->C, p->w + oc * kk, p->M * kk, bj, J, n, acc);
    for (int j = 0; j < J; j++)
        acc[j] = dc_act(acc[j], p->act);
    const int64_t ob = J / kk;
    for (int64_t o = 0; o < ob; o++)
        for (int64_t ky = 0; ky < p->kh; ky++) {
            float *yr = y + ((oc + o) * OH + h * p->kh + ky) * OW + w0 * p->kw;
            dc_emit(yr, acc + o * kk + ky * p->kw, p->kw, n);
        }
}

void CPU_FN(cpu_deconv_f32)(const cpu_deconv_plan *p, const float *x, float *y, int64_t h0,
                            int64_t h1) {
    const int64_t kk = p->kh * p->kw;
    const int64_t ob = DC_J / kk; /* kk <= CPU_DECONV_MAX_TAPS <= DC_J */
    float bj[DC_J];               /* the bias of each tap of a block */
    for (int64_t h = h0; h < h1; h++)
        for (int64_t oc = 0; oc < p->M; oc += ob) {
            const int64_t nb = p->M - oc < ob ? p->M - oc : ob;
            const int J = (int)(nb * kk);
            for (int64_t o = 0; o < nb; o++)
                for (int64_t t = 0; t < kk; t++)
                    bj[o * kk + t] = p->b ? p->b[oc + o] : 0.0f;
            for (int64_t w0 = 0; w0 < p->W; w0 += VW) {
                const int64_t n = p->W - w0 < VW ? p->W - w0 : VW;
                /* constant J for the common blocks: the accumulators stay in registers */
                switch (J) {
                case 24: dc_pass(p, x, y, h, w0, n, oc, bj, 24); break;
                case 16: dc_pass(p, x, y, h, w0, n, oc, bj, 16); break;
                case 8: dc_pass(p, x, y, h, w0, n, oc, bj, 8); break;
                case 4: dc_pass(p, x, y, h, w0, n, oc, bj, 4); break;
                default: dc_pass(p, x, y, h, w0, n, oc, bj, J); break;
                }
            }
        }
}
