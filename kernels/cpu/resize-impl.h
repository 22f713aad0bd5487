/*
 * resize-impl.h — body of cpu_resize_f32_<tier> (resize-<tier>.c includes a
 * simd-<tier>.h, then this): nearest and bilinear resize of the last two
 * axes of f32 planes over index/weight tables built by the caller once per
 * shape (cpu_resize_plan, cpu_kernels.h). Nearest copies an output row that
 * repeats the previous one's source row, and doubles the 2x upscale with
 * lane permutes instead of gathers. Linear interpolates each needed input
 * row horizontally once (two rows kept in `work`), then blends two of them
 * per output row. No coordinate math here: the tables hold it.
 */
#include <string.h>

#include "kernels/cpu/cpu_kernels.h"

/* VW floats of base at the VW indices idx (a gather where the ISA has one). */
static inline vf rs_gather(const float *base, const int32_t *idx) {
#if VW == 16
    return _mm512_i32gather_ps(_mm512_loadu_si512((const void *)idx), base, 4);
#elif VW == 8
    return _mm256_i32gather_ps(base, _mm256_loadu_si256((const __m256i *)idx), 4);
#else
    float t[VW];
    for (int k = 0; k < VW; k++)
        t[k] = base[idx[k]];
    return v_load(t);
#endif
}

/* y[2k] = y[2k + 1] = x[k] for k < n. */
static void rs_dup2(const float *x, float *y, int64_t n) {
    int64_t k = 0;
#if VW == 16
    const __m512i lo = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    const __m512i hi =
        _mm512_setr_epi32(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    for (; k + VW <= n; k += VW) {
        vf v = v_load(x + k);
        v_store(y + 2 * k, _mm512_permutexvar_ps(lo, v));
        v_store(y + 2 * k + VW, _mm512_permutexvar_ps(hi, v));
    }
#elif VW == 8
    const __m256i lo = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    const __m256i hi = _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7);
    for (; k + VW <= n; k += VW) {
        vf v = v_load(x + k);
        v_store(y + 2 * k, _mm256_permutevar8x32_ps(v, lo));
        v_store(y + 2 * k + VW, _mm256_permutevar8x32_ps(v, hi));
    }
#endif
    for (; k < n; k++)
        y[2 * k] = y[2 * k + 1] = x[k];
}

/* y[c] = src[idx[c]] for c < n. */
static void rs_gather_row(const float *src, const int32_t *idx, float *y, int64_t n) {
    int64_t c = 0;
    for (; c + VW <= n; c += VW)
        v_store(y + c, rs_gather(src, idx + c));
    for (; c < n; c++)
        y[c] = src[idx[c]];
}

static void rs_nearest(const cpu_resize_plan *p, const float *x, float *y) {
    for (int64_t r = 0; r < p->oh; r++) {
        float *dst = y + r * p->ow;
        if (r > 0 && p->y0[r] == p->y0[r - 1]) {
            memcpy(dst, dst - p->ow, (size_t)p->ow * sizeof(float));
            continue;
        }
        const float *src = x + (int64_t)p->y0[r] * p->iw;
        if (p->x2)
            rs_dup2(src, dst, p->iw);
        else
            rs_gather_row(src, p->x0, dst, p->ow);
    }
}

/* h[c] = src[x0[c]] * w0[c] + src[x1[c]] * w1[c]: input row src resized
 * horizontally. */
static void rs_hrow(const cpu_resize_plan *p, const float *src, float *h) {
    const float *w0 = p->wx, *w1 = p->wx + p->ow;
    int64_t c = 0;
    for (; c + VW <= p->ow; c += VW) {
        vf a = rs_gather(src, p->x0 + c), b = rs_gather(src, p->x1 + c);
        v_store(h + c, v_fmadd(a, v_load(w0 + c), v_mul(b, v_load(w1 + c))));
    }
    for (; c < p->ow; c++)
        h[c] = src[p->x0[c]] * w0[c] + src[p->x1[c]] * w1[c];
}

static void rs_linear(const cpu_resize_plan *p, const float *x, float *y, float *work) {
    float *slot[2] = {work, work + p->ow};
    int64_t held[2] = {-1, -1}; /* input row in each slot */
    const float *wy0 = p->wy, *wy1 = p->wy + p->oh;
    for (int64_t r = 0; r < p->oh; r++) {
        int64_t need[2] = {p->y0[r], p->y1[r]};
        const float *row[2];
        for (int t = 0; t < 2; t++) {
            int s = held[0] == need[t] ? 0 : held[1] == need[t] ? 1 : -1;
            if (s < 0) {
                /* the slot that does not hold the other tap's row */
                s = held[0] == need[1 - t] ? 1 : 0;
                rs_hrow(p, x + need[t] * p->iw, slot[s]);
                held[s] = need[t];
            }
            row[t] = slot[s];
        }
        float *dst = y + r * p->ow;
        const vf a = v_set1(wy0[r]), b = v_set1(wy1[r]);
        const float as = wy0[r], bs = wy1[r];
        int64_t c = 0;
        for (; c + VW <= p->ow; c += VW)
            v_store(dst + c, v_fmadd(v_load(row[0] + c), a, v_mul(v_load(row[1] + c), b)));
        for (; c < p->ow; c++)
            dst[c] = row[0][c] * as + row[1][c] * bs;
    }
}

void CPU_FN(cpu_resize_f32)(const cpu_resize_plan *p, const float *x, float *y, int64_t planes,
                            float *work) {
    const int64_t in_plane = p->ih * p->iw, out_plane = p->oh * p->ow;
    for (int64_t k = 0; k < planes; k++) {
        if (p->linear)
            rs_linear(p, x + k * in_plane, y + k * out_plane, work);
        else
            rs_nearest(p, x + k * in_plane, y + k * out_plane);
    }
}
