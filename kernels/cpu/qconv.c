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
    int nt;
    uint8_t xflip; /* 0x80 for s8 x */
    uint8_t xzp;   /* the zero point as u8 */
    int32_t *y;
} qc_job;

/* Packs the output pixels [t0, t0 + np) of image n, group g into a (see
 * qconv.h) and their sums of packed values into sx. */
static void qc_pack_x(const qc_job *j, int64_t n, int64_t g, int64_t t0, int64_t np, uint8_t *a,
                      int32_t *sx) {
    const ref_conv_params *p = j->p;
    const qc_geom *q = j->q;
    const uint8_t *x = (const uint8_t *)j->a->x + (n * p->c_in + g * q->cin_g) * q->in_plane;
    int32_t bd[CPU_QCONV_TILE], bh[CPU_QCONV_TILE], bw[CPU_QCONV_TILE];
    const int64_t npad = (np + CPU_QGEMM_NR - 1) / CPU_QGEMM_NR * CPU_QGEMM_NR;
    for (int64_t i = 0; i < np; i++) {
        int64_t o = t0 + i, ow = o % p->out[2], oh = (o / p->out[2]) % p->out[1],
                od = o / (p->out[2] * p->out[1]);
        bd[i] = (int32_t)(od * p->stride[0] - p->pad[0]);
        bh[i] = (int32_t)(oh * p->stride[1] - p->pad[1]);
        bw[i] = (int32_t)(ow * p->stride[2] - p->pad[2]);
        sx[i] = 0;
    }
    for (int64_t i = np; i < npad; i++)
        sx[i] = 0;
    const uint8_t flip = j->xflip, zp = j->xzp;
    const int32_t D = (int32_t)p->in[0], H = (int32_t)p->in[1], W = (int32_t)p->in[2];
    for (int64_t k = 0; k < q->K; k++) {
        const int64_t ic = k / q->k_size, r = k % q->k_size;
        const int32_t kw = (int32_t)(r % p->k[2] * p->dilation[2]);
        const int32_t kh = (int32_t)(r / p->k[2] % p->k[1] * p->dilation[1]);
        const int32_t kd = (int32_t)(r / (p->k[2] * p->k[1]) * p->dilation[0]);
        const uint8_t *xc = x + ic * q->in_plane;
        uint8_t *ak = a + (k >> 2) * CPU_QCONV_TILE * 4 + (k & 3);
        for (int64_t i = 0; i < np; i++) {
            const int32_t id = bd[i] + kd, ih = bh[i] + kh, iw = bw[i] + kw;
            uint8_t v = zp;
            if ((uint32_t)id < (uint32_t)D && (uint32_t)ih < (uint32_t)H &&
                (uint32_t)iw < (uint32_t)W)
                v = xc[((int64_t)id * H + ih) * W + iw] ^ flip;
            ak[i * 4] = v;
            sx[i] += v;
        }
        for (int64_t i = np; i < npad; i++)
            ak[i * 4] = 0;
    }
    for (int64_t k = q->K; k < q->k4 * 4; k++) {
        uint8_t *ak = a + (k >> 2) * CPU_QCONV_TILE * 4 + (k & 3);
        for (int64_t i = 0; i < npad; i++)
            ak[i * 4] = 0;
    }
}

/* Thread slot lo (of j->nt) runs items lo, lo + nt, ... */
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
            qc_pack_x(j, n, g, t0, np, a, sx);
            const int64_t m0 = g * q->cout_g;
            j->gemm(a, j->w + g * q->nmb * q->k4 * CPU_QGEMM_MR, q->k4, np, q->cout_g, j->rowc + m0,
                    j->zw + m0, sx, j->y + (n * p->c_out + m0) * q->out_plane + t0, q->out_plane);
        }
    }
}

void cpu_qconv_s32(const ref_conv_params *p, const ref_qconv_args *a, cpu_qgemm_fn gemm,
                   int threads, void *work, int32_t *y) {
    qc_geom q;
    qc_geometry(p, &q);
    if (q.items == 0) return;
    uint8_t *base = work;
    int8_t *wp = (int8_t *)base;
    uint32_t *rowc = (uint32_t *)(base + qc_wbytes(p, &q));
    int32_t *zw = (int32_t *)(base + qc_wbytes(p, &q) + qc_cbytes(p));
    uint8_t *slots = base + qc_wbytes(p, &q) + 2 * qc_cbytes(p);
    /* x as u8: X = zp (+ 128 for s8) */
    const uint32_t X = (uint32_t)(a->x_s8 ? a->x_zp + 128 : a->x_zp);
    memset(wp, 0, qc_wbytes(p, &q));
    for (int64_t m = 0; m < p->c_out; m++) {
        const int64_t g = m / q.cout_g, r = m % q.cout_g;
        int8_t *blk = wp + ((g * q.nmb + r / CPU_QGEMM_MR) * q.k4 * CPU_QGEMM_MR) * 4 +
                      (r % CPU_QGEMM_MR) * 4;
        const int32_t zp = a->w_zp_per_channel ? a->w_zp[m] : a->w_zp[0];
        /* w as s8: Z = zp (- 128 for u8) */
        const int32_t Z = a->w_s8 ? zp : zp - 128;
        uint32_t sw = 0;
        for (int64_t k = 0; k < q.K; k++) {
            int32_t v = a->w_s8 ? ((const int8_t *)a->w)[m * q.K + k]
                                : (int32_t)((const uint8_t *)a->w)[m * q.K + k] - 128;
            blk[(k >> 2) * CPU_QGEMM_MR * 4 + (k & 3)] = (int8_t)v;
            sw += (uint32_t)v;
        }
        zw[m] = Z;
        rowc[m] = (a->bias ? (uint32_t)a->bias[m] : 0u) - X * sw + (uint32_t)q.K * X * (uint32_t)Z;
    }
    qc_job j = {.p = p,
                .a = a,
                .q = &q,
                .gemm = gemm,
                .w = (const int32_t *)wp,
                .rowc = (const int32_t *)rowc,
                .zw = zw,
                .slots = slots,
                .nt = qc_threads(&q, threads),
                .xflip = a->x_s8 ? 0x80 : 0,
                .xzp = (uint8_t)X,
                .y = y};
    cpu_parallel_for(j.nt, j.nt, 1, qc_slot, &j);
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
