/*
 * test_ocr_geometry.c — unit tests of examples/ocr's own geometry, without
 * models: DB post-processing (dbpost.c) on synthetic probability maps, the
 * perspective crop and the rotations (warp.c).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../tests/test_main.h"

#include "dbpost.h"
#include "warp.h"

#define MW 200
#define MH 100

static float *blank_map(void) { return calloc((size_t)MW * MH, sizeof(float)); }

static void paint(float *m, int x0, int y0, int x1, int y1, float v) {
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            m[y * MW + x] = v;
}

/* ocr_db_boxes with the default parameters over an MW x MH map, boxes
 * scaled to out_w x out_h; asserts that it succeeds. */
static ocr_box *db_boxes(const float *m, int out_w, int out_h, int *n) {
    ocr_db_params p;
    ocr_db_defaults(&p);
    ocr_box *b = NULL;
    *n = -1;
    assert_int_equal(ocr_db_boxes(m, MH, MW, out_w, out_h, &p, &b, n), 0);
    return b;
}

/* An axis-aligned region: one box, pushed out by area * 1.6 / perimeter. */
MOPT_TEST(test_db_one_rectangle) {
    float *m = blank_map();
    paint(m, 40, 30, 160, 50, 0.9f);
    int n;
    ocr_box *b = db_boxes(m, MW, MH, &n);
    assert_int_equal(n, 1);
    /* after the 2x2 dilation the region's pixel centres span x 40..160,
     * y 30..50: 120 x 20, d = 2400 * 1.6 / 280 = 13.71 */
    const float want[4][2] = {{26, 16}, {174, 16}, {174, 64}, {26, 64}};
    for (int i = 0; i < 4; i++) {
        assert_true(fabsf(b[0].pt[i][0] - want[i][0]) <= 1);
        assert_true(fabsf(b[0].pt[i][1] - want[i][1]) <= 1);
    }
    assert_true(b[0].score > 0.8f && b[0].score <= 0.9f);
    free(b);
    free(m);
}

/* Order: top row first, left to right within a row (tops within 10 px). */
MOPT_TEST(test_db_order_and_filters) {
    float *m = blank_map();
    paint(m, 120, 10, 180, 25, 0.95f); /* top right */
    paint(m, 10, 14, 80, 28, 0.95f);   /* top left, 4 px lower */
    paint(m, 20, 60, 100, 80, 0.95f);  /* bottom */
    paint(m, 150, 60, 190, 80, 0.4f);  /* above thresh, score below 0.5 */
    paint(m, 120, 90, 122, 92, 1.0f);  /* too small */
    int n;
    ocr_box *b = db_boxes(m, 2 * MW, 2 * MH, &n);
    assert_int_equal(n, 3);
    assert_true(b[0].pt[0][0] < b[1].pt[0][0]); /* same row: left first */
    assert_true(b[0].pt[0][0] < 60 && b[1].pt[0][0] > 200);
    assert_true(b[2].pt[0][1] > 80); /* scaled x2 */
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            assert_true(b[i].pt[k][0] >= 0 && b[i].pt[k][0] <= 2 * MW - 1);
            assert_true(b[i].pt[k][1] >= 0 && b[i].pt[k][1] <= 2 * MH - 1);
        }
    free(b);
    free(m);
}

/* A region turned by 10 degrees gives a box along it. */
MOPT_TEST(test_db_rotated) {
    float *m = blank_map();
    double a = 10 * M_PI / 180, c = cos(a), s = sin(a);
    for (int y = 0; y < MH; y++)
        for (int x = 0; x < MW; x++) {
            double u = (x - 100) * c - (y - 50) * s, v = (x - 100) * s + (y - 50) * c;
            if (fabs(u) < 60 && fabs(v) < 8) m[y * MW + x] = 0.9f;
        }
    int n;
    ocr_box *b = db_boxes(m, MW, MH, &n);
    assert_int_equal(n, 1);
    /* the top edge tl -> tr rises by tan(10 deg) in the image's y-down axes */
    double ang = atan2(b[0].pt[0][1] - b[0].pt[1][1], b[0].pt[1][0] - b[0].pt[0][0]) * 180 / M_PI;
    assert_true(fabs(ang - 10) < 2);
    free(b);
    free(m);
}

MOPT_TEST(test_db_empty) {
    float *m = blank_map();
    int n;
    ocr_box *b = db_boxes(m, MW, MH, &n);
    assert_int_equal(n, 0);
    free(b);
    free(m);
}

static void fill_gradient(ex_image *im, int w, int h) {
    im->w = w;
    im->h = h;
    im->c = 3;
    im->px = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = im->px + ((size_t)y * w + x) * 3;
            p[0] = (unsigned char)(x * 5);
            p[1] = (unsigned char)(y * 7);
            p[2] = (unsigned char)(x + y);
        }
}

/* An axis-aligned quad is an exact copy of that part of the image. */
MOPT_TEST(test_warp_axis_aligned) {
    ex_image src, dst;
    fill_gradient(&src, 40, 30);
    const float q[8] = {10, 5, 30, 5, 30, 15, 10, 15};
    assert_int_equal(ocr_warp_quad(&src, q, 20, 10, &dst), 0);
    assert_int_equal(dst.w, 20);
    assert_int_equal(dst.h, 10);
    for (int v = 0; v < 10; v++)
        for (int u = 0; u < 20; u++)
            assert_memory_equal(dst.px + ((size_t)v * 20 + u) * 3,
                                src.px + ((size_t)(5 + v) * 40 + 10 + u) * 3, 3);
    ex_image_free(&dst);
    const float flat[8] = {1, 1, 5, 1, 9, 1, 13, 1}; /* a line: no homography */
    assert_int_equal(ocr_warp_quad(&src, flat, 4, 4, &dst), -1);
    ex_image_free(&src);
}

MOPT_TEST(test_rotations) {
    ex_image src, r, copy;
    fill_gradient(&src, 5, 3);
    assert_int_equal(ocr_rot90(&src, &r), 0);
    assert_int_equal(r.w, 3);
    assert_int_equal(r.h, 5);
    /* counter-clockwise: the top-right pixel becomes the top-left one */
    assert_memory_equal(r.px, src.px + 4 * 3, 3);
    assert_memory_equal(r.px + ((size_t)4 * 3 + 2) * 3, src.px + ((size_t)2 * 5) * 3, 3);
    copy = src;
    copy.px = malloc(5 * 3 * 3);
    memcpy(copy.px, src.px, 5 * 3 * 3);
    ocr_rot180(&copy);
    assert_memory_equal(copy.px, src.px + ((size_t)2 * 5 + 4) * 3, 3);
    ocr_rot180(&copy);
    assert_memory_equal(copy.px, src.px, 5 * 3 * 3);
    ex_image_free(&copy);
    ex_image_free(&r);
    ex_image_free(&src);
}

MOPT_TEST_MAIN(cmocka_unit_test(test_db_one_rectangle), cmocka_unit_test(test_db_order_and_filters),
               cmocka_unit_test(test_db_rotated), cmocka_unit_test(test_db_empty),
               cmocka_unit_test(test_warp_axis_aligned), cmocka_unit_test(test_rotations))
