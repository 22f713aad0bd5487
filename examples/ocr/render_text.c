/*
 * render_text.c — draws lines of text with FreeType into a PNG or JPEG, the
 * OCR test's input images (examples/ocr/test_ocr.py).
 *
 *   ocr_render OUT.png|OUT.jpg|OUT.ppm W H < SPEC
 *
 * SPEC: one text line per line, "FONT X Y SIZE ANGLE TEXT": FONT a font
 * file, (X, Y) the start of the baseline in pixels (y down), SIZE the pixel
 * height, ANGLE the baseline's rotation in degrees, counter-clockwise,
 * TEXT the rest of the line (UTF-8). Black text on white, anti-aliased.
 * JPEG at quality 85 (libjpeg); PNG through examples/common/image.h;
 * binary PPM (P6) for the test's numpy side, which reads no PNG.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ft2build.h>
#include FT_FREETYPE_H
#include <jpeglib.h>

#include "image.h"

static int fail(const char *a, const char *b) {
    fprintf(stderr, "ocr_render: %s%s%s\n", a, b ? ": " : "", b ? b : "");
    return 1;
}

/* Next code point of UTF-8 s (advances *s); U+FFFD for a bad sequence. */
static unsigned long utf8_next(const unsigned char **s) {
    const unsigned char *p = *s;
    unsigned long c = *p++;
    int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
    if (c >= 0x80 && extra == 0) c = 0xfffd;
    if (extra) c &= 0x3fu >> extra;
    for (int i = 0; i < extra; i++) {
        if ((*p & 0xc0) != 0x80) {
            c = 0xfffd;
            break;
        }
        c = (c << 6) | (*p++ & 0x3f);
    }
    *s = p;
    return c;
}

static void blit(ex_image *img, const FT_Bitmap *bm, int left, int top) {
    for (unsigned r = 0; r < bm->rows; r++) {
        int y = top + (int)r;
        if (y < 0 || y >= img->h) continue;
        for (unsigned c = 0; c < bm->width; c++) {
            int x = left + (int)c;
            if (x < 0 || x >= img->w) continue;
            unsigned a = bm->buffer[r * (unsigned)bm->pitch + c];
            unsigned char *p = img->px + ((size_t)y * img->w + x) * 3;
            for (int k = 0; k < 3; k++)
                p[k] = (unsigned char)(p[k] * (255 - a) / 255);
        }
    }
}

static int draw_line(FT_Library lib, ex_image *img, const char *font, double x, double y,
                     double size, double angle, const char *text) {
    FT_Face face;
    if (FT_New_Face(lib, font, 0, &face)) return fail("cannot open the font", font);
    if (FT_Set_Pixel_Sizes(face, 0, (FT_UInt)size)) {
        FT_Done_Face(face);
        return fail("cannot set the size for", font);
    }
    double t = angle * M_PI / 180.0;
    FT_Matrix m = {(FT_Fixed)(cos(t) * 0x10000), (FT_Fixed)(-sin(t) * 0x10000),
                   (FT_Fixed)(sin(t) * 0x10000), (FT_Fixed)(cos(t) * 0x10000)};
    /* FreeType's y axis points up: the pen lives in (x, H - y), 26.6 */
    FT_Vector pen = {(FT_Pos)(x * 64), (FT_Pos)((img->h - y) * 64)};
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        unsigned long cp = utf8_next(&s);
        FT_Set_Transform(face, &m, &pen);
        if (FT_Load_Char(face, cp, FT_LOAD_RENDER)) continue;
        FT_GlyphSlot g = face->glyph;
        blit(img, &g->bitmap, g->bitmap_left, img->h - g->bitmap_top);
        pen.x += g->advance.x;
        pen.y += g->advance.y;
    }
    FT_Done_Face(face);
    return 0;
}

static int save_ppm(const char *path, const ex_image *img) {
    FILE *f = fopen(path, "wb");
    if (!f) return fail(path, strerror(errno));
    fprintf(f, "P6\n%d %d\n255\n", img->w, img->h);
    size_t n = (size_t)img->w * img->h * 3;
    int bad = fwrite(img->px, 1, n, f) != n;
    if (fclose(f) || bad) return fail(path, "write failed");
    return 0;
}

static int save_jpeg(const char *path, const ex_image *img) {
    FILE *f = fopen(path, "wb");
    if (!f) return fail(path, strerror(errno));
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = (JDIMENSION)img->w;
    c.image_height = (JDIMENSION)img->h;
    c.input_components = 3;
    c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 85, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = img->px + (size_t)c.next_scanline * img->w * 3;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return fclose(f) ? fail(path, strerror(errno)) : 0;
}

int main(int argc, char **argv) {
    if (argc != 4) return fail("usage", "ocr_render OUT.png|OUT.jpg|OUT.ppm W H < SPEC");
    int w = atoi(argv[2]), h = atoi(argv[3]);
    if (w <= 0 || h <= 0 || w > 8192 || h > 8192) return fail("bad size", NULL);
    ex_image img;
    if (ex_image_alloc(&img, w, h, 3)) return fail("out of memory", NULL);
    memset(img.px, 255, (size_t)w * h * 3);
    FT_Library lib;
    if (FT_Init_FreeType(&lib)) return fail("FreeType does not start", NULL);
    char buf[4096], font[1024];
    int rc = 0, n = 0;
    while (!rc && fgets(buf, sizeof buf, stdin)) {
        buf[strcspn(buf, "\r\n")] = 0;
        if (!buf[0]) continue;
        double x, y, size, angle;
        int used = 0;
        if (sscanf(buf, "%1023s %lf %lf %lf %lf %n", font, &x, &y, &size, &angle, &used) != 5 ||
            !used || size < 4 || size > 1000)
            rc = fail("bad spec line", buf);
        else
            rc = draw_line(lib, &img, font, x, y, size, angle, buf + used);
        n++;
    }
    FT_Done_FreeType(lib);
    if (!rc) {
        size_t len = strlen(argv[1]);
        char err[256];
        if (len > 4 && (!strcmp(argv[1] + len - 4, ".jpg") || !strcmp(argv[1] + len - 5, ".jpeg")))
            rc = save_jpeg(argv[1], &img);
        else if (len > 4 && !strcmp(argv[1] + len - 4, ".ppm"))
            rc = save_ppm(argv[1], &img);
        else if (ex_image_save_png(argv[1], &img, err, sizeof err))
            rc = fail(argv[1], err);
    }
    ex_image_free(&img);
    return rc;
}
