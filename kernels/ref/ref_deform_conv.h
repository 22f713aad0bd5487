/*
 * ref_deform_conv.h — reference kernel of the "deform_conv" op family
 * (lib/ops/deform_conv.c): deformable convolution (DeformConv), 1-D to 3-D.
 * Each kernel tap samples X at its regular position plus a learned offset
 * (multilinear interpolation, zero outside), optionally scaled by a mask,
 * then the taps are summed as in a grouped convolution. Kernels never see
 * the IR.
 */
#ifndef MOPT_KERNELS_REF_DEFORM_CONV_H
#define MOPT_KERNELS_REF_DEFORM_CONV_H

#include <stdint.h>

#include "kernels/ref/ref_conv.h"

/* conv: the window geometry as for ref_conv_f32 (the S spatial axes are the
 * last S of REF_WIN_MAX, leading ones of size 1). offset is
 * [batch, offset_group * K * S, out...] (per group and kernel tap, S
 * displacements in axis order), mask [batch, offset_group * K, out...] or
 * NULL (ones), bias [c_out] or NULL. */
typedef struct ref_deform_conv_params {
    ref_conv_params conv;
    int32_t S;
    int64_t offset_group;
} ref_deform_conv_params;

/* Scratch floats ref_deform_conv_f32 needs: c_in * K * out_plane. */
int64_t ref_deform_conv_work(const ref_deform_conv_params *p);

void ref_deform_conv_f32(const ref_deform_conv_params *p, const float *x, const float *w,
                         const float *offset, const float *mask, const float *bias, float *y,
                         float *col);

#endif
