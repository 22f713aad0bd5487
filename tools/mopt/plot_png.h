/*
 * plot_png.h — the PNG charts of `mopt tune` (latency CDFs, per-op time bars,
 * quality vs speed): a small RGB rasterizer (lines, rectangles, points, a
 * 5x7 bitmap font) and a PNG writer on zlib. No libmopt calls.
 */
#ifndef MOPT_TOOLS_PLOT_PNG_H
#define MOPT_TOOLS_PLOT_PNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct plot_canvas {
    int w, h;
    uint8_t *rgb; /* w * h * 3 bytes, row-major from the top */
} plot_canvas;

/* A white canvas; 0 or -1 (out of memory or a bad size). */
int plot_canvas_init(plot_canvas *c, int w, int h);
void plot_canvas_free(plot_canvas *c);
/* Drawing clips to the canvas. color is 0xRRGGBB. */
void plot_line(plot_canvas *c, int x0, int y0, int x1, int y1, uint32_t color);
void plot_rect(plot_canvas *c, int x0, int y0, int x1, int y1, uint32_t color); /* filled */
void plot_dot(plot_canvas *c, int x, int y, int radius, uint32_t color);        /* filled square */
/* Text in the 5x7 font scaled by `scale` (lower case drawn as upper case,
 * unknown characters as '?'); returns the width drawn in pixels. */
int plot_text(plot_canvas *c, int x, int y, const char *s, int scale, uint32_t color);
int plot_text_width(const char *s, int scale);
/* Writes c as an 8-bit RGB PNG; 0 or -1 (cannot write, out of memory). */
int plot_write_png(const plot_canvas *c, const char *path);

/* The i-th color of the series palette. */
uint32_t plot_color(size_t i);

/* One series of the CDF chart: n latencies (any order). */
typedef struct plot_series {
    const char *label;
    const double *values;
    size_t n;
} plot_series;

/* Charts, written as PNG files of PLOT_W x PLOT_H pixels; 0 or -1. */
#define PLOT_W 960
#define PLOT_H 600
/* Empirical CDF of each series: x the value, y the fraction <= it. */
int plot_cdf_png(const char *path, const char *title, const char *xlabel, const plot_series *s,
                 size_t n);
/* Horizontal bars, two per row (a above b), rows as given. */
int plot_bars_png(const char *path, const char *title, const char *xlabel, const char *const *rows,
                  const double *a, const double *b, size_t n, const char *a_label,
                  const char *b_label);
/* Points (x[i], y[i]) labelled with labels[i]; ok[i] == 0 draws a cross
 * (dropped) instead of a dot. */
int plot_scatter_png(const char *path, const char *title, const char *xlabel, const char *ylabel,
                     const double *x, const double *y, const char *const *labels, const int *ok,
                     size_t n);

#endif
