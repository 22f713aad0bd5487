/*
 * image.h — the examples' small image library (issue 15): PNG and JPEG
 * decoding to interleaved RGB8 (libpng, libjpeg), PNG writing, bilinear
 * resize and rectangle drawing. Shared by examples/detect and examples/ocr;
 * no libmopt dependency.
 */
#ifndef EX_IMAGE_H
#define EX_IMAGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Decoders refuse images whose declared size exceeds this many pixels (or
 * either side above EX_IMAGE_MAX_SIDE) before allocating anything. */
#define EX_IMAGE_MAX_PIXELS (64L * 1024 * 1024)
#define EX_IMAGE_MAX_SIDE 65535

/* interleaved 8-bit, row-major, c==3 (RGB) */
typedef struct ex_image {
    int w, h, c;
    unsigned char *px;
} ex_image;

/* PNG or JPEG by magic bytes; grey/alpha/palette/16-bit converted to RGB8
 * (alpha dropped). 0 ok, -1 error with a message in err (img zeroed). */
int ex_image_load(const char *path, ex_image *img, char *err, size_t errlen);
/* 0 ok, -1 error with message (a partly written file is removed). */
int ex_image_save_png(const char *path, const ex_image *img, char *err, size_t errlen);
void ex_image_free(ex_image *img);
/* Allocates a w x h x c image (zeroed); 0 ok, -1 out of memory/bad size. */
int ex_image_alloc(ex_image *img, int w, int h, int c);
/* Bilinear, pixel centres aligned (OpenCV INTER_LINEAR / ONNX Resize
 * half_pixel); no antialiasing. 0 ok, -1 out of memory/bad size. */
int ex_image_resize_bilinear(const ex_image *src, int w, int h, ex_image *dst);
/* Outline of the rectangle with corners (x0,y0), (x1,y1) inclusive, drawn
 * inwards `thickness` pixels; clipped to the image. */
void ex_image_draw_rect(ex_image *img, int x0, int y0, int x1, int y1, unsigned char r,
                        unsigned char g, unsigned char b, int thickness);

#ifdef __cplusplus
}
#endif

#endif
