/*
 * reduce-impl.h — body of cpu_reduce_f32_<tier> (reduce-<tier>.c includes a
 * simd-<tier>.h, then this): Sum, Mean, Max, Min of x seen as
 * [outer, red, inner] over the middle axis. inner == 1 reduces contiguous
 * rows (vector accumulators, one horizontal step per row); inner > 1 folds
 * whole rows of `inner` values into y (streaming, vectorized along inner).
 * Float accumulation (the reference uses double); NaN propagates in Max/Min.
 * Also cpu_maxpool_f32_<tier>: windowed MaxPool over 2 spatial axes of
 * images [H, W, c] (channels-last, or a 16-channel block of nChw16c),
 * vectorized along c.
 */
#include <math.h>

#include "kernels/cpu/cpu_kernels.h"

/* NaN-sticky max/min of an accumulator a and new values b. */
static inline vf red_max(vf a, vf b) { return v_sel(v_isnan(a), a, v_max(a, b)); }
static inline vf red_min(vf a, vf b) { return v_sel(v_isnan(a), a, v_min(a, b)); }

static float reduce_row(cpu_reduce_op op, const float *x, int64_t n) {
    const bool mx = op == CPU_RED_MAX, mn = op == CPU_RED_MIN;
    const float fill = mx ? -INFINITY : mn ? INFINITY : 0.0f;
    vf a0 = v_set1(fill), a1 = a0, a2 = a0, a3 = a0;
    vm nan = v_mnone();
    int64_t i = 0;
    if (mx || mn) {
        for (; i + 2 * VW <= n; i += 2 * VW) {
            const vf v0 = v_load(x + i), v1 = v_load(x + i + VW);
            nan = v_mor(nan, v_mor(v_isnan(v0), v_isnan(v1)));
            a0 = mx ? v_max(a0, v0) : v_min(a0, v0);
            a1 = mx ? v_max(a1, v1) : v_min(a1, v1);
        }
        for (; i + VW <= n; i += VW) {
            const vf v = v_load(x + i);
            nan = v_mor(nan, v_isnan(v));
            a0 = mx ? v_max(a0, v) : v_min(a0, v);
        }
        if (i < n) {
            const vf v = v_load_fill(x + i, n - i, fill);
            nan = v_mor(nan, v_isnan(v));
            a1 = mx ? v_max(a1, v) : v_min(a1, v);
        }
        if (v_any(nan)) return NAN;
        return mx ? v_hmax(v_max(a0, a1)) : v_hmin(v_min(a0, a1));
    }
    for (; i + 4 * VW <= n; i += 4 * VW) {
        a0 = v_add(a0, v_load(x + i));
        a1 = v_add(a1, v_load(x + i + VW));
        a2 = v_add(a2, v_load(x + i + 2 * VW));
        a3 = v_add(a3, v_load(x + i + 3 * VW));
    }
    for (; i + VW <= n; i += VW)
        a0 = v_add(a0, v_load(x + i));
    if (i < n) a1 = v_add(a1, v_load_n(x + i, n - i));
    const float s = v_hsum(v_add(v_add(a0, a1), v_add(a2, a3)));
    return op == CPU_RED_MEAN ? s / (float)n : s;
}

/* y[0..n) = op(y, x) elementwise. */
static void fold_row(cpu_reduce_op op, float *y, const float *x, int64_t n) {
    int64_t i = 0;
#define FOLD(EXPR)                                                                                 \
    for (i = 0; i + VW <= n; i += VW) {                                                            \
        const vf a = v_load(y + i), b = v_load(x + i);                                             \
        v_store(y + i, EXPR);                                                                      \
    }                                                                                              \
    if (i < n) {                                                                                   \
        const vf a = v_load_n(y + i, n - i), b = v_load_n(x + i, n - i);                           \
        v_store_n(y + i, EXPR, n - i);                                                             \
    }
    switch (op) {
    case CPU_RED_SUM:
    case CPU_RED_MEAN: FOLD(v_add(a, b)) break;
    case CPU_RED_MAX: FOLD(red_max(a, b)) break;
    case CPU_RED_MIN: FOLD(red_min(a, b)) break;
    case CPU_RED_COUNT: break;
    }
#undef FOLD
}

void CPU_FN(cpu_reduce_f32)(cpu_reduce_op op, const float *x, float *y, int64_t outer, int64_t red,
                            int64_t inner) {
    if (inner == 1) {
        for (int64_t o = 0; o < outer; o++)
            y[o] = reduce_row(op, x + o * red, red);
        return;
    }
    for (int64_t o = 0; o < outer; o++) {
        const float *xo = x + o * red * inner;
        float *yo = y + o * inner;
        int64_t i = 0;
        for (; i + VW <= inner; i += VW)
            v_store(yo + i, v_load(xo + i));
        if (i < inner) v_store_n(yo + i, v_load_n(xo + i, inner - i), inner - i);
        for (int64_t r = 1; r < red; r++)
            fold_row(op, yo, xo + r * inner, inner);
        if (op == CPU_RED_MEAN) {
            const vf inv = v_set1(1.0f / (float)red);
            for (i = 0; i + VW <= inner; i += VW)
                v_store(yo + i, v_mul(v_load(yo + i), inv));
            if (i < inner) v_store_n(yo + i, v_mul(v_load_n(yo + i, inner - i), inv), inner - i);
        }
    }
}

/* ---- MaxPool, channels contiguous per pixel ------------------------------ */

/* Software prefetch of the input rows the next output row adds to the
 * window (ResNet-18-like's stem MaxPool, 64 channels blocked at 112x112,
 * 3x3 stride 2, read from L3 right after the conv wrote it: Xeon model 207,
 * 1 thread, about 260 -> 220 us per node with it; oneDNN's pooling 350). */
static inline void mp_prefetch_rows(const cpu_maxpool_plan *p, const float *xi, int64_t r0,
                                    int64_t ow) {
    const int64_t seg = p->sw * p->c, rowlen = p->w * p->c;
    const int64_t q0 = ow * seg, q1 = q0 + seg < rowlen ? q0 + seg : rowlen;
    for (int64_t r = r0; r < r0 + p->sh && r < p->h; r++)
        for (int64_t q = q0; q < q1; q += 64 / (int64_t)sizeof(float))
            __builtin_prefetch(xi + r * rowlen + q, 0, 3);
}

/* The taps k0 <= k < k1 of a window starting at input index i0 (k taps,
 * dilation d) that fall inside [0, size). */
static inline void mp_taps_inside(int64_t i0, int64_t k, int64_t d, int64_t size, int64_t *k0,
                                  int64_t *k1) {
    int64_t a = 0, b = k;
    while (a < b && i0 + a * d < 0)
        a++;
    while (b > a && i0 + (b - 1) * d >= size)
        b--;
    *k0 = a, *k1 = b;
}

void CPU_FN(cpu_maxpool_f32)(const cpu_maxpool_plan *p, const float *x, float *y, int64_t r0,
                             int64_t r1) {
    const int64_t c = p->c, in_img = p->h * p->w * c, out_img = p->oh * p->ow * c;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t img = r / p->oh, oh = r % p->oh;
        const float *xi = x + img * in_img;
        float *yr = y + img * out_img + oh * p->ow * c;
        /* the taps of this row inside the input: ky0 <= ky < ky1 */
        const int64_t ih0 = oh * p->sh - p->pt;
        int64_t ky0, ky1;
        mp_taps_inside(ih0, p->kh, p->dh, p->h, &ky0, &ky1);
        const int64_t next = ih0 + (p->kh - 1) * p->dh + 1; /* first row past the window */
        for (int64_t ow = 0; ow < p->ow; ow++) {
            if (oh + 1 < p->oh) mp_prefetch_rows(p, xi, next, ow);
            const int64_t iw0 = ow * p->sw - p->pl;
            int64_t kx0, kx1;
            mp_taps_inside(iw0, p->kw, p->dw, p->w, &kx0, &kx1);
            float *yp = yr + ow * c;
            for (int64_t ch = 0; ch < c; ch += VW) {
                const int64_t n = c - ch < VW ? c - ch : VW;
                vf acc = v_set1(-INFINITY);
                for (int64_t ky = ky0; ky < ky1; ky++) {
                    const float *row = xi + (ih0 + ky * p->dh) * p->w * c + ch;
                    for (int64_t kx = kx0; kx < kx1; kx++) {
                        const float *t = row + (iw0 + kx * p->dw) * c;
                        acc = v_max(n == VW ? v_load(t) : v_load_n(t, n), acc);
                    }
                }
                if (n == VW)
                    v_store(yp + ch, acc);
                else
                    v_store_n(yp + ch, acc, n);
            }
        }
    }
}
