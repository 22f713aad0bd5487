/*
 * ref_signal.h — reference kernels of the "signal" op family
 * (lib/ops/signal.c): window functions.
 */
#ifndef MOPT_KERNELS_REF_SIGNAL_H
#define MOPT_KERNELS_REF_SIGNAL_H

#include <stdint.h>

typedef enum ref_window { REF_WIN_HANN, REF_WIN_HAMMING, REF_WIN_BLACKMAN } ref_window;

/* n values of the window in double (periodic: N = n, else n - 1). */
void ref_window_fn(ref_window w, int64_t n, int periodic, double *y);

#endif
