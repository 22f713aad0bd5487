/*
 * limits.c — the sizes the external backends are trusted with (limits.h).
 * Every product is checked before it is formed, so nothing here overflows
 * whatever the input.
 */
#include <stdarg.h>
#include <stdio.h>

#include "kernels/limits.h"

static bool refuse(char *why, size_t n, const char *fmt, ...) {
    if (why && n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, n, fmt, ap);
        va_end(ap);
    }
    return false;
}

static bool in_range(int64_t v, int64_t lo) { return v >= lo && v < KN_LIMIT; }

bool kn_limits_tensor(int32_t ndims, const int64_t *dims, const int64_t *strides, char *why,
                      size_t n) {
    if (ndims < 0 || ndims > 16) return refuse(why, n, "rank %d", (int)ndims);
    int64_t count = 1, last = 0;
    for (int32_t i = 0; i < ndims; i++) {
        if (!in_range(dims[i], 1))
            return refuse(why, n, "dim %d is %lld (backend limit [1, 2^31))", (int)i,
                          (long long)dims[i]);
        if (count > (KN_LIMIT - 1) / dims[i]) return refuse(why, n, "more than 2^31 elements");
        count *= dims[i];
        int64_t s = strides ? strides[i] : 0;
        if (s < 0 || s >= KN_LIMIT)
            return refuse(why, n, "stride %d is %lld", (int)i, (long long)s);
        /* (dims - 1) * stride, both below 2^31: no overflow in int64 */
        last += (dims[i] - 1) * s;
        if (last >= KN_LIMIT) return refuse(why, n, "an element offset reaches 2^31");
    }
    return true;
}

bool kn_limits_window(int32_t S, const int64_t *in, const int64_t *k, const int64_t *stride,
                      const int64_t *dilation, const int64_t *pad_l, const int64_t *pad_r,
                      char *why, size_t n) {
    for (int32_t i = 0; i < S; i++) {
        if (!in_range(in[i], 1) || !in_range(k[i], 1))
            return refuse(why, n, "axis %d: input %lld, kernel %lld", (int)i, (long long)in[i],
                          (long long)k[i]);
        if (!in_range(stride[i], 1) || !in_range(dilation[i], 1))
            return refuse(why, n, "axis %d: stride %lld, dilation %lld", (int)i,
                          (long long)stride[i], (long long)dilation[i]);
        if (k[i] - 1 > (KN_LIMIT - 1) / dilation[i])
            return refuse(why, n, "axis %d: window extent beyond 2^31", (int)i);
        int64_t extent = (k[i] - 1) * dilation[i] + 1;
        if (extent >= KN_LIMIT) return refuse(why, n, "axis %d: window extent beyond 2^31", (int)i);
        int64_t max_pad = in[i] + extent; /* < 2^32 */
        if (pad_l[i] < 0 || pad_r[i] < 0 || pad_l[i] > max_pad || pad_r[i] > max_pad)
            return refuse(why, n, "axis %d: pads %lld, %lld for input %lld and window %lld", (int)i,
                          (long long)pad_l[i], (long long)pad_r[i], (long long)in[i],
                          (long long)extent);
    }
    return true;
}
