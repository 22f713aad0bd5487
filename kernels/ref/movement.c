/*
 * movement.c — portable reference kernels for the "movement" op family
 * (declared in ref_movement.h): strided copies, block copies, gather, pad,
 * trilu. Element-size generic; obvious and correct; the oracle for faster
 * backends. Never sees the IR.
 */
#include <string.h>

#include "kernels/ref/ref_movement.h"

/* One row: n elements at element stride st (0 = broadcast one element). */
static void copy_row(char *dst, const char *src, size_t esz, int64_t n, int64_t st) {
    if (st == 1) {
        memcpy(dst, src, (size_t)n * esz);
        return;
    }
    switch (esz) {
    case 1:
        for (int64_t i = 0; i < n; i++)
            dst[i] = src[i * st];
        break;
    case 2:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * 2, src + i * st * 2, 2);
        break;
    case 4:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * 4, src + i * st * 4, 4);
        break;
    case 8:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * 8, src + i * st * 8, 8);
        break;
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + (size_t)i * esz, src + i * st * (int64_t)esz, esz);
        break;
    }
}

void ref_copy_strided(void *dst, const void *src, size_t esz, int32_t rank, const int64_t *dims,
                      const int64_t *src_strides) {
    int64_t d[REF_COPY_MAX_RANK], s[REF_COPY_MAX_RANK], cnt[REF_COPY_MAX_RANK];
    int32_t r = 0;
    int64_t total = 1;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        total *= dims[i];
    }
    /* drop unit axes, merge axes that are contiguous in the source */
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 1) continue;
        if (r > 0 && s[r - 1] == src_strides[i] * dims[i]) {
            d[r - 1] *= dims[i];
            s[r - 1] = src_strides[i];
        } else {
            d[r] = dims[i];
            s[r] = src_strides[i];
            r++;
        }
    }
    if (r == 0) {
        memcpy(dst, src, esz);
        return;
    }
    int64_t n = d[r - 1], st = s[r - 1];
    int64_t n_rows = total / n;
    char *o = dst;
    const char *base = src;
    int64_t off = 0;
    for (int32_t a = 0; a < r; a++)
        cnt[a] = 0;
    for (int64_t row = 0; row < n_rows; row++) {
        copy_row(o, base + off * (int64_t)esz, esz, n, st);
        o += (size_t)n * esz;
        for (int32_t a = r - 2; a >= 0; a--) {
            off += s[a];
            if (++cnt[a] < d[a]) break;
            off -= s[a] * d[a];
            cnt[a] = 0;
        }
    }
}

void ref_copy_blocks(void *dst, size_t dst_step, const void *src, size_t src_step, int64_t n_blocks,
                     size_t block) {
    char *o = dst;
    const char *p = src;
    if (block == 0) return;
    for (int64_t b = 0; b < n_blocks; b++) {
        memcpy(o, p, block);
        o += dst_step;
        p += src_step;
    }
}

void ref_gather(void *dst, const void *src, size_t esz, int64_t outer, int64_t axis_dim,
                int64_t inner, const int64_t *idx, int64_t n_idx) {
    char *o = dst;
    const char *p = src;
    size_t chunk = (size_t)inner * esz;
    if (chunk == 0) return;
    for (int64_t b = 0; b < outer; b++) {
        const char *blk = p + (size_t)(b * axis_dim) * chunk;
        for (int64_t j = 0; j < n_idx; j++) {
            memcpy(o, blk + (size_t)idx[j] * chunk, chunk);
            o += chunk;
        }
    }
}

void ref_fill(void *dst, size_t esz, int64_t n, const void *value) {
    char *o = dst;
    if (esz == 1) {
        memset(dst, *(const unsigned char *)value, (size_t)n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(o + (size_t)i * esz, value, esz);
}

/* Source index of padded position i (already shifted by -begin), or -1. */
static int64_t pad_map(int64_t i, int64_t n, ref_pad_mode mode, int64_t begin, int64_t out) {
    if (mode == REF_PAD_WRAP) {
        /* the kept part [lo, hi) of the axis, after negative pads crop it */
        int64_t end = out - n - begin;
        int64_t lo = begin < 0 ? -begin : 0, hi = end < 0 ? n + end : n;
        if (i >= lo && i < hi) return i;
        int64_t m = (i - lo) % (hi - lo);
        return lo + (m < 0 ? m + (hi - lo) : m);
    }
    if (i >= 0 && i < n) return i;
    switch (mode) {
    case REF_PAD_EDGE: return i < 0 ? 0 : n - 1;
    case REF_PAD_REFLECT: {
        if (n == 1) return 0;
        int64_t period = 2 * (n - 1);
        int64_t m = i % period;
        if (m < 0) m += period;
        return m >= n ? period - m : m;
    }
    default: return -1;
    }
}

void ref_pad(void *dst, const void *src, size_t esz, int32_t rank, const int64_t *in_dims,
             const int64_t *out_dims, const int64_t *begin, ref_pad_mode mode, const void *value) {
    int64_t total = 1, in_st[REF_COPY_MAX_RANK], cnt[REF_COPY_MAX_RANK];
    for (int32_t a = 0; a < rank; a++)
        total *= out_dims[a];
    if (total == 0) return;
    if (rank == 0) {
        memcpy(dst, src, esz);
        return;
    }
    int64_t st = 1;
    for (int32_t a = rank - 1; a >= 0; a--) {
        in_st[a] = st;
        st *= in_dims[a];
        cnt[a] = 0;
    }
    const int32_t last = rank - 1;
    const int64_t n_out = out_dims[last], n_in = in_dims[last], b = begin[last];
    const int64_t n_rows = total / n_out;
    char *o = dst;
    const char *p = src;
    for (int64_t row = 0; row < n_rows; row++) {
        int64_t off = 0;
        int outside = 0;
        for (int32_t a = 0; a < last; a++) {
            int64_t si = pad_map(cnt[a] - begin[a], in_dims[a], mode, begin[a], out_dims[a]);
            if (si < 0) {
                outside = 1;
                break;
            }
            off += si * in_st[a];
        }
        if (outside) {
            ref_fill(o, esz, n_out, value);
        } else {
            const char *rowp = p + (size_t)off * esz;
            /* the inside part [lo, hi) of the output row maps to a contiguous run */
            int64_t lo = b > 0 ? b : 0, hi = b + n_in < n_out ? b + n_in : n_out;
            if (lo > n_out) lo = n_out;
            if (hi < lo) hi = lo;
            for (int64_t j = 0; j < lo; j++) {
                int64_t si = pad_map(j - b, n_in, mode, b, n_out);
                if (si < 0)
                    memcpy(o + (size_t)j * esz, value, esz);
                else
                    memcpy(o + (size_t)j * esz, rowp + (size_t)si * esz, esz);
            }
            if (hi > lo)
                memcpy(o + (size_t)lo * esz, rowp + (size_t)(lo - b) * esz,
                       (size_t)(hi - lo) * esz);
            for (int64_t j = hi; j < n_out; j++) {
                int64_t si = pad_map(j - b, n_in, mode, b, n_out);
                if (si < 0)
                    memcpy(o + (size_t)j * esz, value, esz);
                else
                    memcpy(o + (size_t)j * esz, rowp + (size_t)si * esz, esz);
            }
        }
        o += (size_t)n_out * esz;
        for (int32_t a = last - 1; a >= 0; a--) {
            if (++cnt[a] < out_dims[a]) break;
            cnt[a] = 0;
        }
    }
}

void ref_trilu(void *dst, const void *src, size_t esz, int64_t batch, int64_t rows, int64_t cols,
               int64_t k, int upper) {
    char *o = dst;
    const char *p = src;
    size_t row_bytes = (size_t)cols * esz;
    for (int64_t b = 0; b < batch; b++) {
        for (int64_t i = 0; i < rows; i++) {
            /* keep j in [j0, j1) */
            int64_t j0, j1;
            if (upper) {
                j0 = i + k < 0 ? 0 : (i + k > cols ? cols : i + k);
                j1 = cols;
            } else {
                j0 = 0;
                j1 = i + k + 1 < 0 ? 0 : (i + k + 1 > cols ? cols : i + k + 1);
            }
            memset(o, 0, row_bytes);
            if (j1 > j0)
                memcpy(o + (size_t)j0 * esz, p + (size_t)j0 * esz, (size_t)(j1 - j0) * esz);
            o += row_bytes;
            p += row_bytes;
        }
    }
}

void ref_gather_elements(void *dst, const void *src, size_t esz, int32_t rank,
                         const int64_t *src_dims, const int64_t *idx_dims, int32_t axis,
                         const int64_t *idx) {
    int64_t st[REF_COPY_MAX_RANK], cnt[REF_COPY_MAX_RANK], total = 1, s = 1;
    for (int32_t a = rank - 1; a >= 0; a--) {
        st[a] = s;
        s *= src_dims[a];
        cnt[a] = 0;
        total *= idx_dims[a];
    }
    char *o = dst;
    const char *p = src;
    for (int64_t e = 0; e < total; e++) {
        int64_t off = 0;
        for (int32_t a = 0; a < rank; a++)
            off += (a == axis ? idx[e] : cnt[a]) * st[a];
        memcpy(o + (size_t)e * esz, p + (size_t)off * esz, esz);
        for (int32_t a = rank - 1; a >= 0; a--) {
            if (++cnt[a] < idx_dims[a]) break;
            cnt[a] = 0;
        }
    }
}

void ref_scatter_copy(void *dst, size_t esz, const int64_t *off, int64_t n, const void *updates,
                      int64_t chunk) {
    char *o = dst;
    const char *u = updates;
    size_t bytes = (size_t)chunk * esz;
    for (int64_t j = 0; j < n; j++)
        memcpy(o + (size_t)off[j] * esz, u + (size_t)j * bytes, bytes);
}

/* Reductions; integer add/mul wrap (unsigned arithmetic). */
#define DEFINE_SCATTER(NAME, T, UT)                                                                \
    void NAME(T *dst, const int64_t *off, int64_t n, const T *updates, int64_t chunk,              \
              ref_scatter_op op) {                                                                 \
        for (int64_t j = 0; j < n; j++) {                                                          \
            T *d = dst + off[j];                                                                   \
            const T *u = updates + j * chunk;                                                      \
            for (int64_t e = 0; e < chunk; e++) {                                                  \
                switch (op) {                                                                      \
                case REF_SCATTER_ADD: d[e] = (T)((UT)d[e] + (UT)u[e]); break;                      \
                case REF_SCATTER_MUL: d[e] = (T)((UT)d[e] * (UT)u[e]); break;                      \
                case REF_SCATTER_MAX: d[e] = u[e] > d[e] ? u[e] : d[e]; break;                     \
                case REF_SCATTER_MIN: d[e] = u[e] < d[e] ? u[e] : d[e]; break;                     \
                default: d[e] = u[e]; break;                                                       \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }

DEFINE_SCATTER(ref_scatter_f32, float, float)
DEFINE_SCATTER(ref_scatter_i64, int64_t, uint64_t)
DEFINE_SCATTER(ref_scatter_i32, int32_t, uint32_t)

void ref_depth_space(bool to_space, bool crd, int64_t b, int64_t n, int64_t c, int64_t h, int64_t w,
                     size_t es, const void *x, void *y) {
    const char *xs = x;
    char *ys = y;
    /* Walk the space side [n, cs, hs, ws] (y for DepthToSpace, x for
     * SpaceToDepth); its element sits in the depth side [n, cd, hs/b, ws/b]
     * at channel cd_i. DepthToSpace: [n, c, h, w] -> [n, c/b², h*b, w*b];
     * SpaceToDepth: [n, c, h, w] -> [n, c*b², h/b, w/b]. */
    const int64_t cs = to_space ? c / (b * b) : c, cd = to_space ? c : c * b * b;
    const int64_t hs = to_space ? h * b : h, ws = to_space ? w * b : w;
    const int64_t hd = hs / b, wd = ws / b;
    for (int64_t in = 0; in < n; in++)
        for (int64_t cs_i = 0; cs_i < cs; cs_i++)
            for (int64_t sh = 0; sh < hs; sh++)
                for (int64_t sw = 0; sw < ws; sw++) {
                    int64_t i = sh % b, j = sw % b;
                    int64_t cd_i = crd ? cs_i * b * b + i * b + j : (i * b + j) * cs + cs_i;
                    int64_t space = ((in * cs + cs_i) * hs + sh) * ws + sw;
                    int64_t depth = ((in * cd + cd_i) * hd + sh / b) * wd + sw / b;
                    int64_t dst = to_space ? space : depth, src = to_space ? depth : space;
                    memcpy(ys + (size_t)dst * es, xs + (size_t)src * es, es);
                }
}
