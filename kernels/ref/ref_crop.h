/*
 * ref_crop.h — reference kernel of the "crop" op family: CenterCropPad's
 * centred copy (crop where the input is larger, zero padding where it is
 * smaller), on elements of any size. Never sees the IR.
 */
#ifndef MOPT_KERNELS_REF_CROP_H
#define MOPT_KERNELS_REF_CROP_H

#include <stddef.h>
#include <stdint.h>

/* y [ydims] = x [xdims] centred along every dim: where x is larger it is
 * cropped from offset (x - y) / 2, where smaller it lands at offset
 * (y - x) / 2 and the rest of y is zero (rounding down: an odd difference
 * leaves the extra element at the end). es is the element size in bytes. */
void ref_center_crop_pad(size_t es, int rank, const int64_t *xdims, const int64_t *ydims,
                         const void *x, void *y);

#endif
