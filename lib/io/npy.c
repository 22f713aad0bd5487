/*
 * npy.c — placeholder until the .npy reader lands.
 */
#include "io/npy.h"

#include "core/error.h"

mopt_status npy_read_memory(const uint8_t *buf, size_t len, ir_tensor **out) {
    (void)buf, (void)len;
    *out = NULL;
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "npy not implemented yet");
}

mopt_status npy_read_file(const char *path, ir_tensor **out) {
    (void)path;
    *out = NULL;
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "npy not implemented yet");
}

mopt_status npy_write_file(const char *path, mopt_dtype dtype, int32_t rank, const int64_t *dims,
                           const void *data) {
    (void)path, (void)dtype, (void)rank, (void)dims, (void)data;
    return mopt_fail(MOPT_ERR_UNSUPPORTED, "npy not implemented yet");
}
