/*
 * warp.h — the OCR example's own image geometry on ex_image (RGB, 8-bit):
 * cutting a text box out of the page with a perspective warp, and the 90°
 * and 180° rotations of a crop.
 */
#ifndef OCR_WARP_H
#define OCR_WARP_H

#include "image.h"

/* Warps the quadrilateral quad (8 floats: x, y of tl, tr, br, bl in img pixels) to an
 * upright dst_w x dst_h image: destination pixel (u, v) samples the source
 * at H(u, v), H the homography taking (0,0), (w,0), (w,h), (0,h) to the
 * corners; bilinear, edges replicated. Returns 0, or -1 (degenerate quad,
 * bad size, out of memory). */
int ocr_warp_quad(const ex_image *img, const float *quad, int dst_w, int dst_h, ex_image *dst);

/* dst = src turned 90° counter-clockwise (numpy's rot90): dst is src.h wide
 * and src.w high. Returns 0 or -1 (out of memory). */
int ocr_rot90(const ex_image *src, ex_image *dst);

/* Turns img 180° in place. */
void ocr_rot180(ex_image *img);

#endif
