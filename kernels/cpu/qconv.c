/*
 * qconv.c — the driver of the exact integer convolution (qconv.h): packs
 * the weights (s8, blocks of CPU_QGEMM_MR channels) and the per-channel
 * constants once, then for each (image, group, tile of output pixels)
 * packs x (u8, with padding read as the zero point) and calls the GEMM.
 * Also the portable GEMM (plain C the compiler vectorizes). Built without
 * ISA flags; the VNNI GEMM is qgemm-vnni.c.
 */
#include "kernels/cpu/qconv.h"

#include <string.h>

#include "kernels/cpu/cpu_kernels.h"

#define ALIGN64(n) (((n) + 63) & ~(size_t)63)

typedef struct qc_geom {
    int64_t cin_g, cout_g, k_size, K, k4, nmb, in_plane, out_plane, ntiles, items;
} qc_geom;

static void qc_geometry(const ref_conv_params *p, qc_geom *q) {
    q->cin_g = p->c_in / p->group;
    q->cout_g = p->c_out / p->group;
    q->k_size = p->k[0] * p->k[1] * p->k[2];
    q->K = q->cin_g * q->k_size;
    q->k4 = (q->K + 3) / 4;
    q->nmb = (q->cout_g + CPU_QGEMM_MR - 1) / CPU_QGEMM_MR;
    q->in_plane = p->in[0] * p->in[1] * p->in[2];
    q->out_plane = p->out[0] * p->out[1] * p->out[2];
    q->ntiles = (q->out_plane + CPU_QCONV_TILE - 1) / CPU_QCONV_TILE;
    q->items = p->batch * p->group * q->ntiles;
}

static size_t qc_wbytes(const ref_conv_params *p, const qc_geom *q) {
    return ALIGN64((size_t)(p->group * q->nmb * q->k4 * CPU_QGEMM_MR) * 4);
}
static size_t qc_cbytes(const ref_conv_params *p) { return ALIGN64((size_t)p->c_out * 4); }
static size_t qc_slot_bytes(const qc_geom *q) {
    return ALIGN64((size_t)(q->k4 * CPU_QCONV_TILE * 4)) + ALIGN64(CPU_QCONV_TILE * 4);
}

static int qc_threads(const qc_geom *q, int threads) {
    if (threads < 1) threads = 1;
    return q->items < threads ? (int)(q->items > 0 ? q->items : 1) : threads;
}

size_t cpu_qconv_work_bytes(const ref_conv_params *p, int threads) {
    qc_geom q;
    qc_geometry(p, &q);
    return qc_wbytes(p, &q) + 2 * qc_cbytes(p) +
           (size_t)qc_threads(&q, threads) * qc_slot_bytes(&q);
}

typedef struct qc_job {
    const ref_conv_params *p;
    const ref_qconv_args *a;
    const qc_geom *q;
    cpu_qgemm_fn gemm;
    const int32_t *w, *rowc, *zw;
    uint8_t *slots;
    const uint8_t *xpack; /* NULL: pack each tile into the slot */
    int nt;
    uint8_t xflip; /* 0x80 for s8 x */
    uint8_t xzp;   /* the zero point as u8 */
    int32_t *y;
} qc_job;

/* ceil(a / b) for b > 0 and any sign of a. */
static int64_t qc_ceil_div(int64_t a, int64_t b) { return a <= 0 ? -((-a) / b) : (a + b - 1) / b; }

/* Row k of the tile (the tap k of output pixels [t0, t0 + np)) into
 * t[0..np), walking it by runs of one output row: out-of-range rows and
 * the pads at either end are the zero point, the rest a (strided) copy. */
static void qc_tap_row(const qc_job *j, const uint8_t *x, int64_t k, int64_t t0, int64_t np,
                       uint8_t *t) {
    const ref_conv_params *p = j->p;
    const qc_geom *q = j->q;
    const uint8_t flip = j->xflip, zp = j->xzp;
    const int64_t D = p->in[0], H = p->in[1], W = p->in[2], OW = p->out[2], OH = p->out[1];
    const int64_t sw = p->stride[2];
    const int64_t ic = k / q->k_size, r = k % q->k_size;
    const int64_t kw = r % p->k[2] * p->dilation[2];
    const int64_t kh = r / p->k[2] % p->k[1] * p->dilation[1];
    const int64_t kd = r / (p->k[2] * p->k[1]) * p->dilation[0];
    const uint8_t *xc = x + ic * q->in_plane;
    const int64_t base = kw - p->pad[2];
    /* output columns whose tap falls inside the row: [w_lo, w_hi) */
    const int64_t w_lo = qc_ceil_div(-base, sw), w_hi = qc_ceil_div(W - base, sw);
    for (int64_t i = 0; i < np;) {
        const int64_t o = t0 + i, ow = o % OW, oh = (o / OW) % OH, od = o / (OW * OH);
        const int64_t len = OW - ow < np - i ? OW - ow : np - i;
        const int64_t id = od * p->stride[0] - p->pad[0] + kd;
        const int64_t ih = oh * p->stride[1] - p->pad[1] + kh;
        uint8_t *dst = t + i - ow; /* dst[c] for output column c */
        int64_t lo = ow, hi = ow;
        if (id >= 0 && id < D && ih >= 0 && ih < H) {
            lo = w_lo > ow ? w_lo : ow;
            hi = w_hi < ow + len ? w_hi : ow + len;
            if (hi < lo) hi = lo = ow;
        }
        for (int64_t c = ow; c < lo; c++)
            dst[c] = zp;
        if (hi > lo) {
            const uint8_t *xr = xc + (id * H + ih) * W + (lo * sw + base); /* tap of lo */
            uint8_t *d = dst + lo;
            if (sw == 1)
                for (int64_t c = 0; c < hi - lo; c++)
                    d[c] = xr[c] ^ flip;
            else
                for (int64_t c = 0; c < hi - lo; c++)
                    d[c] = xr[c * sw] ^ flip;
        }
        for (int64_t c = hi; c < ow + len; c++)
            dst[c] = zp;
        i += len;
    }
}

/* Packs the output pixels [t0, t0 + np) of image n, group g into a (see
 * qconv.h) and their sums of packed values into sx: four tap rows at a
 * time, interleaved into 4-byte groups. */
static void qc_pack_x(const qc_job *j, int64_t n, int64_t g, int64_t t0, int64_t np, uint8_t *a,
                      int32_t *sx) {
    const ref_conv_params *p = j->p;
    const qc_geom *q = j->q;
    const uint8_t *x = (const uint8_t *)j->a->x + (n * p->c_in + g * q->cin_g) * q->in_plane;
    const int64_t npad = (np + CPU_QGEMM_NR - 1) / CPU_QGEMM_NR * CPU_QGEMM_NR;
    uint8_t t[4][CPU_QCONV_TILE];
    for (int64_t i = 0; i < npad; i++)
        sx[i] = 0;
    for (int64_t k4 = 0; k4 < q->k4; k4++) {
        for (int64_t e = 0; e < 4; e++) {
            memset(t[e] + np, 0, (size_t)(npad - np));
            if (k4 * 4 + e < q->K)
                qc_tap_row(j, x, k4 * 4 + e, t0, np, t[e]);
            else
                memset(t[e], 0, (size_t)np);
        }
        uint32_t *ak = (uint32_t *)(a + k4 * CPU_QCONV_TILE * 4);
        for (int64_t i = 0; i < npad; i++) {
            ak[i] = (uint32_t)t[0][i] | (uint32_t)t[1][i] << 8 | (uint32_t)t[2][i] << 16 |
                    (uint32_t)t[3][i] << 24;
            sx[i] += (int32_t)t[0][i] + t[1][i] + t[2][i] + t[3][i];
        }
    }
}

/* Slots [lo, hi) of j->nt: slot t owns scratch t (no two ranges share one,
 * whichever threads run them) and runs items t, t + nt, ... */
static void qc_slot(void *arg, int64_t lo, int64_t hi) {
    const qc_job *j = arg;
    const ref_conv_params *p = j->p;
    const qc_geom *q = j->q;
    for (int64_t t = lo; t < hi; t++) {
        uint8_t *a = j->slots + (size_t)t * qc_slot_bytes(q);
        int32_t *sx = (int32_t *)(a + ALIGN64((size_t)(q->k4 * CPU_QCONV_TILE * 4)));
        for (int64_t it = t; it < q->items; it += j->nt) {
            const int64_t tile = it % q->ntiles, g = (it / q->ntiles) % p->group,
                          n = it / (q->ntiles * p->group);
            const int64_t t0 = tile * CPU_QCONV_TILE;
            const int64_t np =
                q->out_plane - t0 < CPU_QCONV_TILE ? q->out_plane - t0 : CPU_QCONV_TILE;
            const uint8_t *ta = a;
            const int32_t *tsx = sx;
            if (j->xpack) {
                ta = j->xpack + (size_t)it * qc_slot_bytes(q);
                tsx = (const int32_t *)(ta + ALIGN64((size_t)(q->k4 * CPU_QCONV_TILE * 4)));
            } else {
                qc_pack_x(j, n, g, t0, np, a, sx);
            }
            const int64_t m0 = g * q->cout_g;
            j->gemm(ta, j->w + g * q->nmb * q->k4 * CPU_QGEMM_MR, q->k4, np, q->cout_g,
                    j->rowc + m0, j->zw + m0, tsx, j->y + (n * p->c_out + m0) * q->out_plane + t0,
                    q->out_plane);
        }
    }
}

void cpu_qconv_s32(const ref_conv_params *p, const ref_qconv_args *a, cpu_qgemm_fn gemm,
                   int threads, void *work, int32_t *y) {
    cpu_qconv_s32_packed(p, a, NULL, gemm, threads, work, y);
}

/* x's zero point as u8 (+ 128 for s8 x). */
static uint32_t qc_xzp(const ref_qconv_args *a) {
    return (uint32_t)(a->x_s8 ? a->x_zp + 128 : a->x_zp);
}

size_t cpu_qconv_xpack_bytes(const ref_conv_params *p) {
    qc_geom q;
    qc_geometry(p, &q);
    return (size_t)q.items * qc_slot_bytes(&q);
}

void cpu_qconv_pack_x(const ref_conv_params *p, const ref_qconv_args *a, void *xpack) {
    qc_geom q;
    qc_geometry(p, &q);
    qc_job j = {.p = p, .a = a, .q = &q, .xflip = a->x_s8 ? 0x80 : 0, .xzp = (uint8_t)qc_xzp(a)};
    for (int64_t it = 0; it < q.items; it++) {
        const int64_t tile = it % q.ntiles, g = (it / q.ntiles) % p->group,
                      n = it / (q.ntiles * p->group);
        const int64_t t0 = tile * CPU_QCONV_TILE;
        const int64_t np = q.out_plane - t0 < CPU_QCONV_TILE ? q.out_plane - t0 : CPU_QCONV_TILE;
        uint8_t *ta = (uint8_t *)xpack + (size_t)it * qc_slot_bytes(&q);
        qc_pack_x(&j, n, g, t0, np, ta,
                  (int32_t *)(ta + ALIGN64((size_t)(q.k4 * CPU_QCONV_TILE * 4))));
    }
}

/* Packs the weights and the per-channel constants (qconv.h) into base:
 * wp, then rowc, then zw. */
static void qc_pack_w(const ref_conv_params *p, const ref_qconv_args *a, const qc_geom *q,
                      uint8_t *base) {
    int8_t *wp = (int8_t *)base;
    uint32_t *rowc = (uint32_t *)(base + qc_wbytes(p, q));
    int32_t *zw = (int32_t *)(base + qc_wbytes(p, q) + qc_cbytes(p));
    /* x as u8: X = zp (+ 128 for s8) */
    const uint32_t X = qc_xzp(a);
    memset(wp, 0, qc_wbytes(p, q));
    for (int64_t m = 0; m < p->c_out; m++) {
        const int64_t g = m / q->cout_g, r = m % q->cout_g;
        int8_t *blk = wp + ((g * q->nmb + r / CPU_QGEMM_MR) * q->k4 * CPU_QGEMM_MR) * 4 +
                      (r % CPU_QGEMM_MR) * 4;
        const int32_t zp = a->w_zp_per_channel ? a->w_zp[m] : a->w_zp[0];
        /* w as s8: Z = zp (- 128 for u8) */
        const int32_t Z = a->w_s8 ? zp : zp - 128;
        uint32_t sw = 0;
        for (int64_t k = 0; k < q->K; k++) {
            int32_t v = a->w_s8 ? ((const int8_t *)a->w)[m * q->K + k]
                                : (int32_t)((const uint8_t *)a->w)[m * q->K + k] - 128;
            blk[(k >> 2) * CPU_QGEMM_MR * 4 + (k & 3)] = (int8_t)v;
            sw += (uint32_t)v;
        }
        zw[m] = Z;
        rowc[m] = (a->bias ? (uint32_t)a->bias[m] : 0u) - X * sw + (uint32_t)q->K * X * (uint32_t)Z;
    }
}

/* The GEMMs over every item, with the weights packed at wbase. */
static void qc_run(const ref_conv_params *p, const ref_qconv_args *a, const qc_geom *q,
                   const uint8_t *wbase, const void *xpack, cpu_qgemm_fn gemm, int threads,
                   uint8_t *slots, int32_t *y) {
    qc_job j = {.p = p,
                .a = a,
                .q = q,
                .gemm = gemm,
                .w = (const int32_t *)wbase,
                .rowc = (const int32_t *)(wbase + qc_wbytes(p, q)),
                .zw = (const int32_t *)(wbase + qc_wbytes(p, q) + qc_cbytes(p)),
                .slots = slots,
                .xpack = xpack,
                .nt = qc_threads(q, threads),
                .xflip = a->x_s8 ? 0x80 : 0,
                .xzp = (uint8_t)qc_xzp(a),
                .y = y};
    cpu_parallel_for(j.nt, j.nt, 1, qc_slot, &j);
}

void cpu_qconv_s32_packed(const ref_conv_params *p, const ref_qconv_args *a, const void *xpack,
                          cpu_qgemm_fn gemm, int threads, void *work, int32_t *y) {
    qc_geom q;
    qc_geometry(p, &q);
    if (q.items == 0) return;
    uint8_t *base = work;
    qc_pack_w(p, a, &q, base);
    qc_run(p, a, &q, base, xpack, gemm, threads, base + qc_wbytes(p, &q) + 2 * qc_cbytes(p), y);
}

size_t cpu_qconv_wpack_bytes(const ref_conv_params *p) {
    qc_geom q;
    qc_geometry(p, &q);
    return qc_wbytes(p, &q) + 2 * qc_cbytes(p);
}

void cpu_qconv_pack_w(const ref_conv_params *p, const ref_qconv_args *a, void *wpack) {
    qc_geom q;
    qc_geometry(p, &q);
    qc_pack_w(p, a, &q, wpack);
}

size_t cpu_qconv_slots_bytes(const ref_conv_params *p, int threads) {
    qc_geom q;
    qc_geometry(p, &q);
    return (size_t)qc_threads(&q, threads) * qc_slot_bytes(&q);
}

void cpu_qconv_s32_wpacked(const ref_conv_params *p, const ref_qconv_args *a, const void *wpack,
                           cpu_qgemm_fn gemm, int threads, void *work, int32_t *y) {
    qc_geom q;
    qc_geometry(p, &q);
    if (q.items == 0) return;
    qc_run(p, a, &q, wpack, NULL, gemm, threads, work, y);
}

void cpu_qgemm_u8s8_portable(const uint8_t *a, const int32_t *w, int64_t k4, int64_t np, int64_t m,
                             const int32_t *rowc, const int32_t *zw, const int32_t *sx, int32_t *y,
                             int64_t ldy) {
    for (int64_t p0 = 0; p0 < np; p0 += CPU_QGEMM_NR) {
        const int64_t pn = np - p0 < CPU_QGEMM_NR ? np - p0 : CPU_QGEMM_NR;
        for (int64_t m0 = 0; m0 < m; m0 += CPU_QGEMM_MR) {
            const int64_t mn = m - m0 < CPU_QGEMM_MR ? m - m0 : CPU_QGEMM_MR;
            const int8_t *wb = (const int8_t *)(w + (m0 / CPU_QGEMM_MR) * k4 * CPU_QGEMM_MR);
            uint32_t acc[CPU_QGEMM_MR][CPU_QGEMM_NR];
            memset(acc, 0, sizeof acc);
            for (int64_t k = 0; k < k4; k++) {
                const uint8_t *ak = a + (k * CPU_QCONV_TILE + p0) * 4;
                const int8_t *wk = wb + k * CPU_QGEMM_MR * 4;
                for (int64_t r = 0; r < CPU_QGEMM_MR; r++) {
                    const int32_t w0 = wk[r * 4], w1 = wk[r * 4 + 1], w2 = wk[r * 4 + 2],
                                  w3 = wk[r * 4 + 3];
                    for (int64_t i = 0; i < CPU_QGEMM_NR; i++)
                        acc[r][i] += (uint32_t)(ak[i * 4] * w0 + ak[i * 4 + 1] * w1 +
                                                ak[i * 4 + 2] * w2 + ak[i * 4 + 3] * w3);
                }
            }
            for (int64_t r = 0; r < mn; r++) {
                uint32_t *yr = (uint32_t *)y + (m0 + r) * ldy + p0;
                const uint32_t c = (uint32_t)rowc[m0 + r], z = (uint32_t)zw[m0 + r];
                for (int64_t i = 0; i < pn; i++)
                    yr[i] = acc[r][i] + c - z * (uint32_t)sx[p0 + i];
            }
        }
    }
}

/* ---- rows x packed weights ---------------------------------------------------- */

size_t cpu_qrows_pack_bytes(int64_t K, int64_t n) {
    const int64_t nb = (n + CPU_QROWS_NB - 1) / CPU_QROWS_NB, k4 = (K + 3) / 4;
    return (size_t)(nb * k4 * CPU_QROWS_NB * 4);
}

void cpu_qrows_pack(const void *w, bool w_s8, int64_t K, int64_t n, int64_t ldw, int8_t *wp,
                    int32_t *wsum) {
    const int64_t k4 = (K + 3) / 4;
    memset(wp, 0, cpu_qrows_pack_bytes(K, n));
    for (int64_t c = 0; c < n; c++) {
        int8_t *blk = wp + (c / CPU_QROWS_NB) * k4 * CPU_QROWS_NB * 4 + (c % CPU_QROWS_NB) * 4;
        uint32_t s = 0;
        for (int64_t k = 0; k < K; k++) {
            int32_t v = w_s8 ? ((const int8_t *)w)[k * ldw + c]
                             : (int32_t)((const uint8_t *)w)[k * ldw + c] - 128;
            blk[(k >> 2) * CPU_QROWS_NB * 4 + (k & 3)] = (int8_t)v;
            s += (uint32_t)v;
        }
        wsum[c] = (int32_t)s;
    }
}

/* Bytes 4k..4k+3 of row a[0..K) (zeros past K), little-endian. */
static uint32_t qr_quad(const uint8_t *a, int64_t K, int64_t k) {
    uint32_t v = 0;
    for (int64_t e = 0; e < 4; e++)
        if (4 * k + e < K) v |= (uint32_t)a[4 * k + e] << (8 * e);
    return v;
}

void cpu_qrows_u8s8_portable(const uint8_t *a, int64_t lda, int64_t m, int64_t K, const int8_t *wp,
                             int64_t n, int32_t *y, int64_t ldy) {
    const int64_t k4 = (K + 3) / 4, nb = (n + CPU_QROWS_NB - 1) / CPU_QROWS_NB;
    for (int64_t r = 0; r < m; r++)
        for (int64_t b = 0; b < nb; b++) {
            const int8_t *wb = wp + b * k4 * CPU_QROWS_NB * 4;
            uint32_t acc[CPU_QROWS_NB] = {0};
            for (int64_t k = 0; k < k4; k++) {
                const uint32_t q = qr_quad(a + r * lda, K, k);
                const int32_t a0 = q & 255, a1 = q >> 8 & 255, a2 = q >> 16 & 255, a3 = q >> 24;
                const int8_t *wk = wb + k * CPU_QROWS_NB * 4;
                for (int64_t c = 0; c < CPU_QROWS_NB; c++)
                    acc[c] += (uint32_t)(a0 * wk[c * 4] + a1 * wk[c * 4 + 1] + a2 * wk[c * 4 + 2] +
                                         a3 * wk[c * 4 + 3]);
            }
            for (int64_t c = 0; c < CPU_QROWS_NB; c++)
                y[r * ldy + b * CPU_QROWS_NB + c] = (int32_t)acc[c];
        }
}
