/*
 * plot_png.c — a small rasterizer and PNG writer for the charts of
 * `mopt tune` (plot_png.h). Pixels are plain RGB bytes; the PNG is one IDAT
 * chunk of zlib-compressed rows with filter type 0, CRCs from zlib.
 */
#include "plot_png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* 5x7 glyphs, one byte per row, bit 4 the leftmost column. */
static const char k_glyph_chars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.,-_=%/():+#<>[]'?;|";
static const uint8_t k_glyphs[][7] = {
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}, /* 0 */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 1 */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}, /* 2 */
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}, /* 3 */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}, /* 4 */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}, /* 5 */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}, /* 6 */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* 7 */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}, /* 8 */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}, /* 9 */
    {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* A */
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}, /* B */
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* C */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c}, /* D */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}, /* E */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}, /* F */
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}, /* G */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* H */
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* I */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}, /* J */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, /* K */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}, /* L */
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}, /* M */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}, /* N */
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* O */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}, /* P */
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}, /* Q */
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}, /* R */
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}, /* S */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* T */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* U */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* V */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}, /* W */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}, /* X */
    {0x11, 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04}, /* Y */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}, /* Z */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}, /* . */
    {0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08}, /* , */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}, /* - */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}, /* _ */
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00}, /* = */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}, /* % */
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}, /* / */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, /* ( */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}, /* ) */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}, /* : */
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}, /* + */
    {0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a}, /* # */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}, /* < */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}, /* > */
    {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e}, /* [ */
    {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e}, /* ] */
    {0x0c, 0x04, 0x08, 0x00, 0x00, 0x00, 0x00}, /* ' */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* ? */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08}, /* ; */
    {0x04, 0x04, 0x04, 0x00, 0x00, 0x00, 0x00}, /* | */
};

int plot_canvas_init(plot_canvas *c, int w, int h) {
    c->w = c->h = 0;
    c->rgb = NULL;
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) return -1;
    c->rgb = malloc((size_t)w * (size_t)h * 3);
    if (!c->rgb) return -1;
    memset(c->rgb, 0xff, (size_t)w * (size_t)h * 3);
    c->w = w;
    c->h = h;
    return 0;
}

void plot_canvas_free(plot_canvas *c) {
    free(c->rgb);
    c->rgb = NULL;
    c->w = c->h = 0;
}

static void put(plot_canvas *c, int x, int y, uint32_t color) {
    if (x < 0 || y < 0 || x >= c->w || y >= c->h) return;
    uint8_t *p = c->rgb + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = (uint8_t)(color >> 16);
    p[1] = (uint8_t)(color >> 8);
    p[2] = (uint8_t)color;
}

void plot_line(plot_canvas *c, int x0, int y0, int x1, int y1, uint32_t color) {
    /* Bresenham */
    int dx = abs(x1 - x0), sx = x0 < x1 ? 1 : -1;
    int dy = -abs(y1 - y0), sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (int guard = 0; guard < 4 * 16384; guard++) {
        put(c, x0, y0, color);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

void plot_rect(plot_canvas *c, int x0, int y0, int x1, int y1, uint32_t color) {
    if (x0 > x1) {
        int t = x0;
        x0 = x1;
        x1 = t;
    }
    if (y0 > y1) {
        int t = y0;
        y0 = y1;
        y1 = t;
    }
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 >= c->w) x1 = c->w - 1;
    if (y1 >= c->h) y1 = c->h - 1;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++)
            put(c, x, y, color);
}

void plot_dot(plot_canvas *c, int x, int y, int r, uint32_t color) {
    plot_rect(c, x - r, y - r, x + r, y + r, color);
}

static const uint8_t *glyph(char ch) {
    if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
    const char *p = strchr(k_glyph_chars, ch);
    if (!p || ch == '\0') p = strchr(k_glyph_chars, '?');
    return k_glyphs[p - k_glyph_chars];
}

int plot_text_width(const char *s, int scale) { return (int)strlen(s) * 6 * scale; }

int plot_text(plot_canvas *c, int x, int y, const char *s, int scale, uint32_t color) {
    int x0 = x;
    for (; *s; s++, x += 6 * scale) {
        if (*s == ' ') continue;
        const uint8_t *g = glyph(*s);
        for (int row = 0; row < 7; row++)
            for (int col = 0; col < 5; col++)
                if (g[row] & (0x10 >> col))
                    plot_rect(c, x + col * scale, y + row * scale, x + col * scale + scale - 1,
                              y + row * scale + scale - 1, color);
    }
    return x - x0;
}

static void be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int chunk(FILE *f, const char *type, const uint8_t *data, uint32_t len) {
    uint8_t head[8];
    be32(head, len);
    memcpy(head + 4, type, 4);
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (len) crc = crc32(crc, data, len);
    uint8_t tail[4];
    be32(tail, (uint32_t)crc);
    return fwrite(head, 1, 8, f) == 8 && (len == 0 || fwrite(data, 1, len, f) == len) &&
                   fwrite(tail, 1, 4, f) == 4
               ? 0
               : -1;
}

int plot_write_png(const plot_canvas *c, const char *path) {
    size_t row = (size_t)c->w * 3 + 1, raw_n = row * (size_t)c->h;
    uint8_t *raw = malloc(raw_n);
    uLongf zn = compressBound((uLong)raw_n);
    uint8_t *z = malloc(zn);
    int rc = -1;
    FILE *f = NULL;
    if (!raw || !z) goto done;
    for (int y = 0; y < c->h; y++) {
        raw[(size_t)y * row] = 0; /* filter: none */
        memcpy(raw + (size_t)y * row + 1, c->rgb + (size_t)y * (size_t)c->w * 3, row - 1);
    }
    if (compress2(z, &zn, raw, (uLong)raw_n, 9) != Z_OK) goto done;
    f = fopen(path, "wb");
    if (!f) goto done;
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t ihdr[13];
    be32(ihdr, (uint32_t)c->w);
    be32(ihdr + 4, (uint32_t)c->h);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering (type 0 on every row) */
    ihdr[12] = 0; /* no interlace */
    if (fwrite(sig, 1, 8, f) != 8 || chunk(f, "IHDR", ihdr, 13) ||
        chunk(f, "IDAT", z, (uint32_t)zn) || chunk(f, "IEND", NULL, 0))
        goto done;
    rc = 0;
done:
    if (f && fclose(f) != 0) rc = -1;
    free(raw);
    free(z);
    return rc;
}

uint32_t plot_color(size_t i) {
    static const uint32_t k[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
                                 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf, 0x393b79, 0xad494a};
    return k[i % (sizeof k / sizeof k[0])];
}

/* ---- axes ----------------------------------------------------------------- */

#define TEXT 0x202020u
#define GRID 0xe0e0e0u
#define LEFT 110
#define RIGHT 30
#define TOP 50
#define BOTTOM 70

typedef struct axes {
    int x0, y0, x1, y1; /* plot area in pixels: left, top, right, bottom */
    double lo_x, hi_x, lo_y, hi_y;
} axes;

static int px(const axes *a, double v) {
    double t = a->hi_x > a->lo_x ? (v - a->lo_x) / (a->hi_x - a->lo_x) : 0.5;
    return a->x0 + (int)lround(t * (a->x1 - a->x0));
}

static int py(const axes *a, double v) {
    double t = a->hi_y > a->lo_y ? (v - a->lo_y) / (a->hi_y - a->lo_y) : 0.5;
    return a->y1 - (int)lround(t * (a->y1 - a->y0));
}

/* Widens [lo, hi] a little so points do not sit on the frame. */
static void pad_range(double *lo, double *hi) {
    if (!(*hi > *lo)) {
        double m = fabs(*lo) > 0 ? fabs(*lo) * 0.05 : 1.0;
        *lo -= m;
        *hi += m;
        return;
    }
    double m = (*hi - *lo) * 0.05;
    *lo -= m;
    *hi += m;
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) for about 5 ticks. */
static double nice_step(double range) {
    if (!(range > 0)) return 1;
    double raw = range / 5.0, p = pow(10.0, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static void draw_axes(plot_canvas *c, const axes *a, const char *title, const char *xlabel,
                      const char *ylabel, int y_ticks) {
    char buf[32];
    double sx = nice_step(a->hi_x - a->lo_x);
    for (double v = ceil(a->lo_x / sx) * sx; v <= a->hi_x + sx * 1e-9; v += sx) {
        int x = px(a, v);
        plot_line(c, x, a->y0, x, a->y1, GRID);
        snprintf(buf, sizeof buf, "%.6g", fabs(v) < sx * 1e-6 ? 0.0 : v);
        plot_text(c, x - plot_text_width(buf, 2) / 2, a->y1 + 8, buf, 2, TEXT);
    }
    double sy = nice_step(a->hi_y - a->lo_y);
    for (double v = ceil(a->lo_y / sy) * sy; y_ticks && v <= a->hi_y + sy * 1e-9; v += sy) {
        int y = py(a, v);
        plot_line(c, a->x0, y, a->x1, y, GRID);
        snprintf(buf, sizeof buf, "%.6g", fabs(v) < sy * 1e-6 ? 0.0 : v);
        plot_text(c, a->x0 - 8 - plot_text_width(buf, 2), y - 7, buf, 2, TEXT);
    }
    plot_line(c, a->x0, a->y1, a->x1, a->y1, TEXT);
    plot_line(c, a->x0, a->y0, a->x0, a->y1, TEXT);
    plot_text(c, (c->w - plot_text_width(title, 2)) / 2, 14, title, 2, TEXT);
    if (xlabel)
        plot_text(c, (a->x0 + a->x1 - plot_text_width(xlabel, 2)) / 2, a->y1 + 36, xlabel, 2, TEXT);
    if (ylabel) plot_text(c, 8, a->y0 - 24, ylabel, 2, TEXT);
}

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

int plot_cdf_png(const char *path, const char *title, const char *xlabel, const plot_series *s,
                 size_t n) {
    plot_canvas c;
    if (plot_canvas_init(&c, PLOT_W, PLOT_H)) return -1;
    axes a = {LEFT, TOP, PLOT_W - RIGHT - 260, PLOT_H - BOTTOM, 0, 0, 0, 1};
    /* x from the smallest value to the 99th percentile of all of them: the
     * tail beyond is cut at the frame (the lines end there) */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += s[i].n;
    double *all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        plot_canvas_free(&c);
        return -1;
    }
    size_t m_all = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < s[i].n; k++)
            if (isfinite(s[i].values[k])) all[m_all++] = s[i].values[k];
    qsort(all, m_all, sizeof *all, cmp_double);
    if (m_all) {
        a.lo_x = all[0];
        a.hi_x = all[(size_t)((double)(m_all - 1) * 0.99)];
    }
    free(all);
    pad_range(&a.lo_x, &a.hi_x);
    draw_axes(&c, &a, title, xlabel, "fraction", 1);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        uint32_t col = plot_color(i);
        double *v = malloc((s[i].n ? s[i].n : 1) * sizeof *v);
        if (!v) {
            rc = -1;
            break;
        }
        size_t m = 0;
        for (size_t k = 0; k < s[i].n; k++)
            if (isfinite(s[i].values[k])) v[m++] = s[i].values[k];
        qsort(v, m, sizeof *v, cmp_double);
        int lx = px(&a, m ? v[0] : 0), ly = py(&a, 0);
        for (size_t k = 0; k < m; k++) {
            int x = px(&a, v[k] < a.hi_x ? v[k] : a.hi_x), y = py(&a, (double)(k + 1) / (double)m);
            plot_line(&c, lx, ly, x, ly, col); /* a step */
            plot_line(&c, x, ly, x, y, col);
            lx = x;
            ly = y;
        }
        free(v);
        int ly0 = TOP + 10 + (int)i * 22;
        plot_rect(&c, a.x1 + 20, ly0 + 2, a.x1 + 36, ly0 + 12, col);
        plot_text(&c, a.x1 + 44, ly0, s[i].label, 2, TEXT);
    }
    if (!rc) rc = plot_write_png(&c, path);
    plot_canvas_free(&c);
    return rc;
}

int plot_bars_png(const char *path, const char *title, const char *xlabel, const char *const *rows,
                  const double *va, const double *vb, size_t n, const char *a_label,
                  const char *b_label) {
    plot_canvas c;
    if (plot_canvas_init(&c, PLOT_W, PLOT_H)) return -1;
    axes a = {250, TOP + 30, PLOT_W - RIGHT - 60, PLOT_H - BOTTOM, 0, 0, 0, 1};
    for (size_t i = 0; i < n; i++) {
        if (va[i] > a.hi_x) a.hi_x = va[i];
        if (vb[i] > a.hi_x) a.hi_x = vb[i];
    }
    if (!(a.hi_x > 0)) a.hi_x = 1;
    a.hi_x *= 1.05;
    draw_axes(&c, &a, title, xlabel, NULL, 0);
    double slot = n ? (double)(a.y1 - a.y0) / (double)n : 0;
    int bar = (int)(slot * 0.38);
    if (bar < 1) bar = 1;
    for (size_t i = 0; i < n; i++) {
        int y = a.y0 + (int)(slot * (double)i + slot * 0.1);
        plot_rect(&c, a.x0 + 1, y, px(&a, va[i]), y + bar - 1, plot_color(0));
        plot_rect(&c, a.x0 + 1, y + bar, px(&a, vb[i]), y + 2 * bar - 1, plot_color(1));
        char name[40];
        snprintf(name, sizeof name, "%.19s", rows[i]);
        plot_text(&c, a.x0 - 8 - plot_text_width(name, 2), y + bar - 7, name, 2, TEXT);
    }
    plot_rect(&c, a.x0, TOP + 2, a.x0 + 16, TOP + 12, plot_color(0));
    int w = plot_text(&c, a.x0 + 24, TOP, a_label, 2, TEXT);
    plot_rect(&c, a.x0 + 48 + w, TOP + 2, a.x0 + 64 + w, TOP + 12, plot_color(1));
    plot_text(&c, a.x0 + 72 + w, TOP, b_label, 2, TEXT);
    int rc = plot_write_png(&c, path);
    plot_canvas_free(&c);
    return rc;
}

int plot_scatter_png(const char *path, const char *title, const char *xlabel, const char *ylabel,
                     const double *x, const double *y, const char *const *labels, const int *ok,
                     size_t n) {
    plot_canvas c;
    if (plot_canvas_init(&c, PLOT_W, PLOT_H)) return -1;
    axes a = {LEFT + 30, TOP + 10, PLOT_W - RIGHT, PLOT_H - BOTTOM, 0, 0, 0, 0};
    int have = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        if (!have || x[i] < a.lo_x) a.lo_x = x[i];
        if (!have || x[i] > a.hi_x) a.hi_x = x[i];
        if (!have || y[i] < a.lo_y) a.lo_y = y[i];
        if (!have || y[i] > a.hi_y) a.hi_y = y[i];
        have = 1;
    }
    pad_range(&a.lo_x, &a.hi_x);
    pad_range(&a.lo_y, &a.hi_y);
    draw_axes(&c, &a, title, xlabel, ylabel, 1);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        int X = px(&a, x[i]), Y = py(&a, y[i]);
        if (ok[i]) {
            plot_dot(&c, X, Y, 4, plot_color(0));
        } else {
            uint32_t red = 0xd62728;
            plot_line(&c, X - 5, Y - 5, X + 5, Y + 5, red);
            plot_line(&c, X - 5, Y + 5, X + 5, Y - 5, red);
        }
        if (labels && labels[i]) plot_text(&c, X + 8, Y - 16, labels[i], 2, TEXT);
    }
    int rc = plot_write_png(&c, path);
    plot_canvas_free(&c);
    return rc;
}
