/*
 * test_image.c — cmocka tests of examples/common/image.c: PNG round trip
 * and conversions (grey, 16-bit RGBA, palette written here with libpng),
 * JPEG decoding of files written here with libjpeg, bilinear resize of
 * constant and gradient images, rectangle drawing and clipping, and hostile
 * files (truncated, empty, not an image, huge or zero declared sizes).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jpeglib.h>
#include <png.h>

#include "../../tests/test_main.h"
#include "../../tests/test_tmpdir.h"
#include "image.h"

static unsigned lcg(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0xff;
}

static void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static unsigned char *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    rewind(f);
    unsigned char *p = malloc(*n);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, *n, f), *n);
    fclose(f);
    return p;
}

/* libpng writer for the conversion cases: rows of `bpp` bytes per pixel */
static void write_png(const char *path, int w, int h, int depth, int type, const unsigned char *px,
                      size_t rowbytes, const png_color *pal, int npal) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(png))) fail_msg("libpng failed writing the test file");
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (pal) png_set_PLTE(png, info, pal, npal);
    png_write_info(png, info);
    for (int y = 0; y < h; y++)
        png_write_row(png, px + (size_t)y * rowbytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
}

static void write_jpeg(const char *path, int w, int h, int comps, const unsigned char *px, int q) {
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)w, c.image_height = (JDIMENSION)h;
    c.input_components = comps;
    c.in_color_space = comps == 3 ? JCS_RGB : JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, q, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(px + (size_t)c.next_scanline * (size_t)w * (size_t)comps);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(f);
}

static uint32_t crc32_png(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
    }
    return c ^ 0xFFFFFFFFu;
}

static void put_be32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* Sets the IHDR width and height of a PNG in memory (and its CRC). */
static void patch_ihdr(unsigned char *png, uint32_t w, uint32_t h) {
    put_be32(png + 16, w);
    put_be32(png + 20, h);
    put_be32(png + 29, crc32_png(png + 12, 17));
}

static void expect_error(const char *path, const char *needle) {
    ex_image img = {1, 1, 3, (unsigned char *)&img};
    char err[256] = "";
    assert_int_equal(ex_image_load(path, &img, err, sizeof err), -1);
    assert_null(img.px);
    assert_int_equal(img.w, 0);
    if (!strstr(err, needle)) fail_msg("error \"%s\" lacks \"%s\"", err, needle);
    assert_non_null(strstr(err, path)); /* names the file */
}

/* ---- PNG ------------------------------------------------------------------ */

MOPT_TEST(test_png_round_trip) {
    ex_image a, b;
    unsigned s = 7;
    assert_int_equal(ex_image_alloc(&a, 37, 23, 3), 0);
    for (size_t i = 0; i < 37 * 23 * 3; i++)
        a.px[i] = (unsigned char)lcg(&s);
    char err[256];
    assert_int_equal(ex_image_save_png(test_tmp("rt.png"), &a, err, sizeof err), 0);
    assert_int_equal(ex_image_load(test_tmp("rt.png"), &b, err, sizeof err), 0);
    assert_int_equal(b.w, 37);
    assert_int_equal(b.h, 23);
    assert_int_equal(b.c, 3);
    assert_memory_equal(a.px, b.px, 37 * 23 * 3);
    ex_image_free(&a);
    ex_image_free(&b);
    assert_null(b.px);
}

MOPT_TEST(test_png_conversions) {
    char err[256];
    ex_image img;
    /* 8-bit grey -> r = g = b */
    unsigned char grey[5 * 4];
    for (int i = 0; i < 20; i++)
        grey[i] = (unsigned char)(i * 13);
    write_png(test_tmp("grey.png"), 5, 4, 8, PNG_COLOR_TYPE_GRAY, grey, 5, NULL, 0);
    assert_int_equal(ex_image_load(test_tmp("grey.png"), &img, err, sizeof err), 0);
    assert_int_equal(img.c, 3);
    for (int i = 0; i < 20; i++)
        for (int k = 0; k < 3; k++)
            assert_int_equal(img.px[i * 3 + k], grey[i]);
    ex_image_free(&img);
    /* 16-bit RGBA -> high bytes of RGB, alpha dropped */
    unsigned char rgba16[3 * 2 * 8];
    for (int i = 0; i < 48; i++)
        rgba16[i] = (unsigned char)(i * 5 + 1);
    write_png(test_tmp("rgba16.png"), 3, 2, 16, PNG_COLOR_TYPE_RGB_ALPHA, rgba16, 24, NULL, 0);
    assert_int_equal(ex_image_load(test_tmp("rgba16.png"), &img, err, sizeof err), 0);
    assert_int_equal(img.w, 3);
    assert_int_equal(img.h, 2);
    for (int p = 0; p < 6; p++)
        for (int k = 0; k < 3; k++) {
            /* big-endian samples: the high byte, rounded by the low one */
            int hi = rgba16[p * 8 + 2 * k], lo = rgba16[p * 8 + 2 * k + 1];
            int got = img.px[p * 3 + k];
            assert_true(got == hi || got == hi + (lo >= 128));
        }
    ex_image_free(&img);
    /* 4-bit palette */
    png_color pal[3] = {{255, 0, 0}, {0, 255, 0}, {10, 20, 30}};
    unsigned char idx[2 * 3] = {0x01, 0x20, 0x21, 0x10, 0x00, 0x22}; /* 4 x 3, two per byte */
    write_png(test_tmp("pal.png"), 4, 3, 4, PNG_COLOR_TYPE_PALETTE, idx, 2, pal, 3);
    assert_int_equal(ex_image_load(test_tmp("pal.png"), &img, err, sizeof err), 0);
    int want[12] = {0, 1, 2, 0, 2, 1, 1, 0, 0, 0, 2, 2};
    for (int i = 0; i < 12; i++) {
        assert_int_equal(img.px[i * 3 + 0], pal[want[i]].red);
        assert_int_equal(img.px[i * 3 + 1], pal[want[i]].green);
        assert_int_equal(img.px[i * 3 + 2], pal[want[i]].blue);
    }
    ex_image_free(&img);
}

/* ---- JPEG ----------------------------------------------------------------- */

MOPT_TEST(test_jpeg_decode) {
    enum { W = 64, H = 48 };
    unsigned char *px = malloc(W * H * 3);
    assert_non_null(px);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            px[(y * W + x) * 3 + 0] = (unsigned char)(x * 4);
            px[(y * W + x) * 3 + 1] = (unsigned char)(y * 5);
            px[(y * W + x) * 3 + 2] = (unsigned char)(128 + (x - y));
        }
    write_jpeg(test_tmp("g.jpg"), W, H, 3, px, 95);
    ex_image img;
    char err[256];
    assert_int_equal(ex_image_load(test_tmp("g.jpg"), &img, err, sizeof err), 0);
    assert_int_equal(img.w, W);
    assert_int_equal(img.h, H);
    assert_int_equal(img.c, 3);
    double sum = 0;
    int worst = 0;
    for (int i = 0; i < W * H * 3; i++) {
        int d = abs((int)img.px[i] - px[i]);
        sum += d;
        worst = d > worst ? d : worst;
    }
    /* lossy, but a smooth gradient at quality 95 stays close */
    assert_true(sum / (W * H * 3) < 2.0);
    assert_true(worst < 24);
    ex_image_free(&img);
    /* greyscale JPEG -> r = g = b */
    unsigned char g[W * H];
    for (int i = 0; i < W * H; i++)
        g[i] = (unsigned char)(i % W * 3);
    write_jpeg(test_tmp("grey.jpg"), W, H, 1, g, 95);
    assert_int_equal(ex_image_load(test_tmp("grey.jpg"), &img, err, sizeof err), 0);
    for (int i = 0; i < W * H; i++) {
        assert_int_equal(img.px[i * 3], img.px[i * 3 + 1]);
        assert_int_equal(img.px[i * 3], img.px[i * 3 + 2]);
        assert_true(abs((int)img.px[i * 3] - g[i]) < 24);
    }
    ex_image_free(&img);
    free(px);
}

/* ---- resize ----------------------------------------------------------------- */

MOPT_TEST(test_resize_constant) {
    ex_image a, b;
    assert_int_equal(ex_image_alloc(&a, 13, 7, 3), 0);
    for (int i = 0; i < 13 * 7; i++)
        a.px[i * 3] = 10, a.px[i * 3 + 1] = 200, a.px[i * 3 + 2] = 77;
    int sizes[][2] = {{31, 5}, {1, 1}, {13, 7}, {200, 90}};
    for (size_t s = 0; s < 4; s++) {
        assert_int_equal(ex_image_resize_bilinear(&a, sizes[s][0], sizes[s][1], &b), 0);
        assert_int_equal(b.w, sizes[s][0]);
        assert_int_equal(b.h, sizes[s][1]);
        for (int i = 0; i < b.w * b.h; i++) {
            assert_int_equal(b.px[i * 3], 10);
            assert_int_equal(b.px[i * 3 + 1], 200);
            assert_int_equal(b.px[i * 3 + 2], 77);
        }
        ex_image_free(&b);
    }
    assert_int_equal(ex_image_resize_bilinear(&a, 0, 5, &b), -1);
    assert_null(b.px);
    assert_int_equal(ex_image_resize_bilinear(&a, 5, -1, &b), -1);
    assert_int_equal(ex_image_resize_bilinear(&a, 1 << 20, 1 << 20, &b), -1);
    ex_image_free(&a);
}

MOPT_TEST(test_resize_gradient) {
    ex_image a, b;
    assert_int_equal(ex_image_alloc(&a, 64, 3, 3), 0);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 64; x++)
            for (int k = 0; k < 3; k++)
                a.px[(y * 64 + x) * 3 + k] = (unsigned char)(4 * x + k);
    /* halving: output x samples source 2x + 0.5 -> 8x + 2 (+k) exactly */
    assert_int_equal(ex_image_resize_bilinear(&a, 32, 3, &b), 0);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 32; x++)
            for (int k = 0; k < 3; k++)
                assert_int_equal(b.px[(y * 32 + x) * 3 + k], 8 * x + 2 + k);
    ex_image_free(&b);
    /* doubling: output x samples (x + 0.5) / 2 - 0.5, clamped at the edges */
    assert_int_equal(ex_image_resize_bilinear(&a, 128, 6, &b), 0);
    for (int x = 0; x < 128; x++) {
        double sx = (x + 0.5) / 2 - 0.5;
        sx = sx < 0 ? 0 : sx > 63 ? 63 : sx;
        int want = (int)(4 * sx + 0.5);
        for (int y = 0; y < 6; y++)
            assert_true(abs((int)b.px[(y * 128 + x) * 3] - want) <= 1);
    }
    ex_image_free(&b);
    ex_image_free(&a);
}

/* ---- draw ----------------------------------------------------------------- */

static int is_red(const ex_image *m, int x, int y) {
    const unsigned char *p = m->px + (y * m->w + x) * 3;
    return p[0] == 255 && p[1] == 0 && p[2] == 0;
}

MOPT_TEST(test_draw_rect) {
    ex_image m;
    assert_int_equal(ex_image_alloc(&m, 20, 10, 3), 0);
    ex_image_draw_rect(&m, 12, 8, 3, 2, 255, 0, 0, 2); /* corners swapped */
    int n = 0;
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++) {
            int inside = x >= 3 && x <= 12 && y >= 2 && y <= 8;
            int border = inside && (x <= 4 || x >= 11 || y <= 3 || y >= 7);
            assert_int_equal(is_red(&m, x, y), border);
            n += border;
        }
    assert_int_equal(n, 10 * 7 - 6 * 3);
    /* clipped: partly outside, and wholly outside (nothing drawn) */
    memset(m.px, 0, 20 * 10 * 3);
    ex_image_draw_rect(&m, -5, -5, 4, 4, 255, 0, 0, 1);
    ex_image_draw_rect(&m, 100, 100, 200, 200, 255, 0, 0, 3);
    ex_image_draw_rect(&m, -2147483647, 5, 2147483647, 5, 255, 0, 0, 2147483647);
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++)
            assert_int_equal(is_red(&m, x, y), (x == 4 && y <= 4) || (y == 4 && x <= 4) || y == 5);
    ex_image_free(&m);
}

/* ---- hostile -------------------------------------------------------------- */

MOPT_TEST(test_hostile) {
    char err[256];
    expect_error(test_tmp("does-not-exist.png"), "No such file");
    write_bytes(test_tmp("empty.png"), "", 0);
    expect_error(test_tmp("empty.png"), "empty file");
    write_bytes(test_tmp("text.png"), "hello, not an image\n", 20);
    expect_error(test_tmp("text.png"), "not a PNG or JPEG");
    write_bytes(test_tmp("sig.png"), "\x89PNG\r\n\x1a\n", 8);
    expect_error(test_tmp("sig.png"), "PNG");

    /* truncated PNG: half of a noisy image */
    ex_image a;
    unsigned s = 3;
    assert_int_equal(ex_image_alloc(&a, 64, 64, 3), 0);
    for (size_t i = 0; i < 64 * 64 * 3; i++)
        a.px[i] = (unsigned char)lcg(&s);
    assert_int_equal(ex_image_save_png(test_tmp("full.png"), &a, err, sizeof err), 0);
    size_t n;
    unsigned char *bytes = read_bytes(test_tmp("full.png"), &n);
    write_bytes(test_tmp("trunc.png"), bytes, n / 2);
    expect_error(test_tmp("trunc.png"), "truncated PNG");
    free(bytes);

    /* truncated JPEG: libjpeg would pad it; refused here */
    write_jpeg(test_tmp("full.jpg"), 64, 64, 3, a.px, 90);
    bytes = read_bytes(test_tmp("full.jpg"), &n);
    write_bytes(test_tmp("trunc.jpg"), bytes, n / 2);
    expect_error(test_tmp("trunc.jpg"), "truncated JPEG");
    write_bytes(test_tmp("trunc2.jpg"), bytes, 40); /* inside the headers */
    expect_error(test_tmp("trunc2.jpg"), "JPEG");
    /* huge and zero declared sizes in SOF0 (height, width at +5, +7) */
    size_t sof = 0;
    for (size_t i = 2; i + 9 < n; i++)
        if (bytes[i] == 0xFF && bytes[i + 1] == 0xC0) {
            sof = i;
            break;
        }
    assert_true(sof > 0);
    bytes[sof + 5] = 0xFF, bytes[sof + 6] = 0x00, bytes[sof + 7] = 0xFF, bytes[sof + 8] = 0x00;
    write_bytes(test_tmp("huge.jpg"), bytes, n);
    expect_error(test_tmp("huge.jpg"), "too large");
    bytes[sof + 5] = 0x20, bytes[sof + 6] = 0x00, bytes[sof + 7] = 0x20, bytes[sof + 8] = 0x01;
    write_bytes(test_tmp("big.jpg"), bytes, n); /* 8193 x 8192 > 64 Mpixels */
    expect_error(test_tmp("big.jpg"), "too large");
    bytes[sof + 5] = 0, bytes[sof + 6] = 0;
    write_bytes(test_tmp("zero.jpg"), bytes, n);
    expect_error(test_tmp("zero.jpg"), "JPEG");
    free(bytes);
    ex_image_free(&a);

    /* huge and zero declared PNG sizes: a 1 x 1 PNG with its IHDR patched */
    assert_int_equal(ex_image_alloc(&a, 1, 1, 3), 0);
    assert_int_equal(ex_image_save_png(test_tmp("one.png"), &a, err, sizeof err), 0);
    ex_image_free(&a);
    bytes = read_bytes(test_tmp("one.png"), &n);
    assert_memory_equal(bytes + 12, "IHDR", 4);
    patch_ihdr(bytes, 60000, 60000);
    write_bytes(test_tmp("huge.png"), bytes, n);
    expect_error(test_tmp("huge.png"), "too large");
    patch_ihdr(bytes, 70000, 1);
    write_bytes(test_tmp("wide.png"), bytes, n);
    expect_error(test_tmp("wide.png"), "too large");
    patch_ihdr(bytes, 0, 5);
    write_bytes(test_tmp("zero.png"), bytes, n);
    expect_error(test_tmp("zero.png"), "PNG");
    free(bytes);

    /* writing: no such directory, no image */
    assert_int_equal(ex_image_alloc(&a, 2, 2, 3), 0);
    assert_int_equal(ex_image_save_png(test_tmp("no/such/dir.png"), &a, err, sizeof err), -1);
    assert_non_null(strstr(err, "No such file"));
    ex_image_free(&a);
    assert_int_equal(ex_image_save_png(test_tmp("x.png"), &a, err, sizeof err), -1);
    assert_int_equal(access(test_tmp("x.png"), F_OK), -1);
}

MOPT_TEST_MAIN_WITH(test_tmpdir_setup, test_tmpdir_teardown, cmocka_unit_test(test_png_round_trip),
                    cmocka_unit_test(test_png_conversions), cmocka_unit_test(test_jpeg_decode),
                    cmocka_unit_test(test_resize_constant), cmocka_unit_test(test_resize_gradient),
                    cmocka_unit_test(test_draw_rect), cmocka_unit_test(test_hostile))
