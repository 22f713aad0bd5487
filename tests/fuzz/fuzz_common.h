/*
 * fuzz_common.h — small helpers shared by the libFuzzer targets: reading
 * every byte of a decoded tensor (so ASan sees an undersized buffer),
 * aborting when a failure leaves no message, and checking what a tensor
 * decoder returned. Header-only; targets only.
 */
#ifndef MOPT_FUZZ_COMMON_H
#define MOPT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <mopt/mopt.h>

#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A failing call must say why (mopt_last_error() non-empty), and no input
 * may make libmopt report a bug in itself (MOPT_ERR_INTERNAL, issue 17). */
static inline void fuzz_check_failure(mopt_status st, const char *what) {
    if (st == MOPT_ERR_INTERNAL) {
        fprintf(stderr, "%s returned INTERNAL: %s\n", what, mopt_last_error());
        abort();
    }
    if (st != MOPT_OK && mopt_last_error()[0] == '\0') {
        fprintf(stderr, "%s failed with status %d (%s) but left no message\n", what, (int)st,
                mopt_status_string(st));
        abort();
    }
}

/* Touches every byte of a buffer, so a buffer shorter than it claims to be
 * is caught by ASan right here. */
static inline void fuzz_touch(const void *data, size_t n) {
    const volatile uint8_t *p = data;
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc ^= p[i];
    (void)acc;
}

/* A decoded tensor must be self-consistent: rank in range, no negative dim,
 * nbytes = element count * element size, data present when non-empty. */
static inline void fuzz_check_tensor(mopt_dtype dtype, int rank, const int64_t *dims,
                                     const void *data, size_t nbytes, const char *what) {
    size_t esz = mopt_dtype_size(dtype);
    int ok = esz > 0 && rank >= 0 && rank <= MOPT_MAX_RANK;
    uint64_t n = 1;
    for (int i = 0; ok && i < rank; i++) {
        if (dims[i] < 0)
            ok = 0;
        else if (dims[i] && n > UINT64_MAX / (uint64_t)dims[i])
            ok = 0;
        else
            n *= (uint64_t)dims[i];
    }
    if (ok && n > SIZE_MAX / esz) ok = 0;
    if (ok && (size_t)n * esz != nbytes) ok = 0;
    if (ok && nbytes && !data) ok = 0;
    if (!ok) {
        fprintf(stderr, "%s returned an inconsistent tensor (dtype %d rank %d nbytes %zu)\n", what,
                (int)dtype, rank, nbytes);
        abort();
    }
    fuzz_touch(data, nbytes);
}

/* What a tensor decoder (`what`) returned: OK with a consistent tensor
 * (checked, then destroyed), or a failure with a message and no tensor
 * handed over. */
static inline void fuzz_check_decoded(mopt_status st, ir_tensor *t, const char *what) {
    fuzz_check_failure(st, what);
    if (st != MOPT_OK) {
        if (t) abort();
        return;
    }
    if (!t) abort();
    fuzz_check_tensor(t->dtype, t->rank, t->dims, t->data, t->nbytes, what);
    ir_tensor_destroy(t);
}

#endif
