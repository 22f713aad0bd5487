/*
 * crop.c — reference kernel of the "crop" op family (ref_crop.h): zero the
 * output where it pads, then copy the common region one contiguous run of
 * the last dim at a time. Never sees the IR.
 */
#include "kernels/ref/ref_crop.h"

#include <stdbool.h>
#include <string.h>

#define MAXR 16

void ref_center_crop_pad(size_t es, int rank, const int64_t *xdims, const int64_t *ydims,
                         const void *x, void *y) {
    int64_t reg[MAXR], xo[MAXR], yo[MAXR], xs[MAXR], ys[MAXR], ytotal = 1, xt = 1;
    bool pads = false, empty = false;
    for (int d = rank - 1; d >= 0; d--) {
        xs[d] = xt;
        ys[d] = ytotal;
        xt *= xdims[d];
        ytotal *= ydims[d];
        bool crop = xdims[d] > ydims[d];
        reg[d] = crop ? ydims[d] : xdims[d];
        xo[d] = crop ? (xdims[d] - ydims[d]) / 2 : 0;
        yo[d] = crop ? 0 : (ydims[d] - xdims[d]) / 2;
        pads |= !crop && ydims[d] > xdims[d];
        empty |= reg[d] == 0;
    }
    if (pads) memset(y, 0, (size_t)ytotal * es);
    if (empty || ytotal == 0) return;
    if (rank == 0) {
        memcpy(y, x, es);
        return;
    }
    /* odometer over the region's dims but the last */
    int64_t idx[MAXR] = {0}, rows = 1;
    for (int d = 0; d < rank - 1; d++)
        rows *= reg[d];
    size_t run = (size_t)reg[rank - 1] * es;
    for (int64_t r = 0; r < rows; r++) {
        int64_t xoff = xo[rank - 1], yoff = yo[rank - 1];
        for (int d = 0; d < rank - 1; d++) {
            xoff += (idx[d] + xo[d]) * xs[d];
            yoff += (idx[d] + yo[d]) * ys[d];
        }
        memcpy((char *)y + (size_t)yoff * es, (const char *)x + (size_t)xoff * es, run);
        for (int d = rank - 2; d >= 0; d--) {
            if (++idx[d] < reg[d]) break;
            idx[d] = 0;
        }
    }
}
