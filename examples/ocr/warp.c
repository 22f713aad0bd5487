/*
 * warp.c — perspective crop and rotations for examples/ocr (see warp.h).
 */
#include "warp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Solves the 8x8 system a x = b (Gaussian elimination, partial pivoting).
 * Returns -1 when singular. */
static int solve8(double a[8][8], double b[8], double x[8]) {
    for (int c = 0; c < 8; c++) {
        int piv = c;
        for (int r = c + 1; r < 8; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        if (fabs(a[piv][c]) < 1e-12) return -1;
        if (piv != c) {
            for (int k = 0; k < 8; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int r = c + 1; r < 8; r++) {
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 8; k++)
                a[r][k] -= f * a[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int r = 7; r >= 0; r--) {
        double s = b[r];
        for (int k = r + 1; k < 8; k++)
            s -= a[r][k] * x[k];
        x[r] = s / a[r][r];
    }
    return 0;
}

int ocr_warp_quad(const ex_image *img, const float *quad, int dst_w, int dst_h, ex_image *dst) {
    memset(dst, 0, sizeof *dst);
    if (dst_w <= 0 || dst_h <= 0 || img->w <= 0 || img->h <= 0) return -1;
    const double uv[4][2] = {{0, 0}, {dst_w, 0}, {dst_w, dst_h}, {0, dst_h}};
    double a[8][8], b[8], m[8];
    for (int i = 0; i < 4; i++) {
        double u = uv[i][0], v = uv[i][1], x = quad[2 * i], y = quad[2 * i + 1];
        double r0[8] = {u, v, 1, 0, 0, 0, -u * x, -v * x};
        double r1[8] = {0, 0, 0, u, v, 1, -u * y, -v * y};
        memcpy(a[2 * i], r0, sizeof r0);
        memcpy(a[2 * i + 1], r1, sizeof r1);
        b[2 * i] = x;
        b[2 * i + 1] = y;
    }
    if (solve8(a, b, m) != 0) return -1;
    dst->px = malloc((size_t)dst_w * (size_t)dst_h * 3);
    if (!dst->px) return -1;
    dst->w = dst_w;
    dst->h = dst_h;
    dst->c = 3;
    const int W = img->w, H = img->h;
    for (int v = 0; v < dst_h; v++) {
        unsigned char *o = dst->px + (size_t)v * (size_t)dst_w * 3;
        for (int u = 0; u < dst_w; u++, o += 3) {
            double d = m[6] * u + m[7] * v + 1;
            double sx = (m[0] * u + m[1] * v + m[2]) / d, sy = (m[3] * u + m[4] * v + m[5]) / d;
            if (!isfinite(sx) || !isfinite(sy)) sx = sy = 0;
            sx = fmin(fmax(sx, -1), W);
            sy = fmin(fmax(sy, -1), H);
            int x0 = (int)floor(sx), y0 = (int)floor(sy);
            double fx = sx - x0, fy = sy - y0;
            int xa = x0 < 0 ? 0 : (x0 >= W ? W - 1 : x0),
                xb = x0 + 1 < 0 ? 0 : (x0 + 1 >= W ? W - 1 : x0 + 1);
            int ya = y0 < 0 ? 0 : (y0 >= H ? H - 1 : y0),
                yb = y0 + 1 < 0 ? 0 : (y0 + 1 >= H ? H - 1 : y0 + 1);
            const unsigned char *p00 = img->px + ((size_t)ya * W + xa) * 3;
            const unsigned char *p01 = img->px + ((size_t)ya * W + xb) * 3;
            const unsigned char *p10 = img->px + ((size_t)yb * W + xa) * 3;
            const unsigned char *p11 = img->px + ((size_t)yb * W + xb) * 3;
            for (int c = 0; c < 3; c++) {
                double t = (1 - fy) * ((1 - fx) * p00[c] + fx * p01[c]) +
                           fy * ((1 - fx) * p10[c] + fx * p11[c]);
                o[c] = (unsigned char)(t + 0.5);
            }
        }
    }
    return 0;
}

int ocr_rot90(const ex_image *src, ex_image *dst) {
    memset(dst, 0, sizeof *dst);
    dst->px = malloc((size_t)src->w * (size_t)src->h * 3);
    if (!dst->px) return -1;
    dst->w = src->h;
    dst->h = src->w;
    dst->c = 3;
    for (int i = 0; i < dst->h; i++)
        for (int j = 0; j < dst->w; j++)
            memcpy(dst->px + ((size_t)i * dst->w + j) * 3,
                   src->px + ((size_t)j * src->w + (src->w - 1 - i)) * 3, 3);
    return 0;
}

void ocr_rot180(ex_image *img) {
    size_t n = (size_t)img->w * (size_t)img->h;
    for (size_t i = 0, j = n - 1; n && i < j; i++, j--)
        for (int c = 0; c < 3; c++) {
            unsigned char t = img->px[i * 3 + c];
            img->px[i * 3 + c] = img->px[j * 3 + c];
            img->px[j * 3 + c] = t;
        }
}
