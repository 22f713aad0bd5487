/*
 * layout.h — private to the channels-last operators (mopt.ChannelsLastConcat
 * and mopt.ChannelsLastSplit in movement.c) and their cpu implementations
 * (cpu/layout_cpu.c): the params each node's attributes are parsed into.
 */
#ifndef MOPT_OPS_LAYOUT_H
#define MOPT_OPS_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* Concat and Split along the channel axis (axis 1 of [N, C, spatial...]) of
 * f32 tensors each stored plain or channels-last ([N, spatial..., C]), as
 * the layout pass (lib/passes/pass_layout.c) sets them: `in_layout` and
 * `out_layout` hold one bit per input and output, 1 = channels-last.
 * Split's output channel counts are its `sizes` attribute. Shapes are the
 * logical ones, as for Concat and Split. */
typedef struct cl_params {
    int64_t axis; /* first: read by params_axis */
    int64_t in_layout, out_layout;
    const int64_t *sizes;
    int64_t n_sizes;
} cl_params;

/* mopt.ChannelsLastGlobalAveragePool: X channels-last, or with blocked=1
 * in oneDNN's blocked layout nC[d]hw16c (C a known multiple of 16): Y
 * [N, C, 1...] is the same bytes in any layout. */
typedef struct clgap_params {
    bool blocked;
} clgap_params;

#endif
