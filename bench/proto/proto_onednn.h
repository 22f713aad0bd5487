/*
 * proto_onednn.h — what the stand-alone oneDNN timing programs of
 * bench/proto share: a check of a oneDNN call that prints the failing call
 * and then does what the program asks (exit, or return a "refused" NULL),
 * and process CPU time. Not library code.
 */
#ifndef MOPT_BENCH_PROTO_ONEDNN_H
#define MOPT_BENCH_PROTO_ONEDNN_H

#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <time.h>

#define PROTO_CHECK(x, on_error)                                                                   \
    do {                                                                                           \
        dnnl_status_t s_ = (x);                                                                    \
        if (s_ != dnnl_success) {                                                                  \
            fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #x, (int)s_);                  \
            on_error;                                                                              \
        }                                                                                          \
    } while (0)

/* Process CPU time in seconds. */
static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#endif
